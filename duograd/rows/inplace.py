"""The rows of the in-place writes: ``assign_p`` (``t.copy_(v)``, ``t[...] = v``: the new
value ignores the old one) and ``setitem_p`` (``t[index] = v``). Both are out-of-place
primitives; ``duograd/inplace.py``, the layer above, records them and writes their result
into the tensor's own memory (``write``).

>>> import duograd as dg
>>> from duograd.rows.inplace import setitem_p
>>> setitem_p(dg.zeros(3), dg.tensor(5.0), index=(1,), basic=True).tolist()
[0.0, 5.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import LINEAR, Primitive, zeros_like_p
from .core import getitem_p


def _assign_fwd(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.array(np.broadcast_to(v, x.shape), dtype=x.dtype)


# The new value ignores the old one: no gradient to x, all of it (summed back) to v.
assign_p = Primitive("assign", _assign_fwd,
                     vjp=(lambda g, out, x, v: zeros_like_p(g), lambda g, out, x, v: g), jvp=LINEAR)


def _setitem_fwd(x: np.ndarray, v: np.ndarray, index: Any, basic: bool) -> np.ndarray:
    out = x.copy()
    out[index] = v
    return out


# x with v written at index: x's cotangent is g with zeros there, v's is g read there
# (the engine sums it back to v's shape when v was broadcast). Linear in (x, v) jointly.
setitem_p = Primitive("setitem", _setitem_fwd,
                      vjp=(lambda g, out, x, v, index, basic: setitem_p(g, 0.0, index=index, basic=basic),
                           lambda g, out, x, v, index, basic: getitem_p(g, index=index, basic=basic)),
                      jvp=LINEAR)

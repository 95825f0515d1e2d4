"""``dg.autograd``, as ``torch.autograd``: the engine (``engine.py``: grad mode,
``Primitive`` and the traversal), ``Function`` (``function.py``) and the graph's node and
saved-tensor hooks (``graph.py``).

>>> import duograd as dg
>>> x = dg.tensor(2.0, requires_grad=True)
>>> dg.autograd.grad(x ** 3, x)[0].item()
12.0
"""

from .engine import (ELEMENTWISE, LINEAR, Primitive, Variadic, WithConstant, _fit, _toposort,  # noqa: F401
                     backpropagate, backward, enable_grad, enter_forward_level, exit_forward_level,
                     grad, host, inputs_of, is_grad_enabled, key_of, make_node, no_grad, ones_like_p,
                     pop_tangent, set_grad_enabled, set_tangent, trace, zeros_like_p)
from .function import Function, FunctionCtx  # noqa: F401
from . import graph  # noqa: F401
from . import forward_ad, functional  # noqa: F401


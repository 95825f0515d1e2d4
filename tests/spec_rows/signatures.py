"""OP_SPECS rows of the signatures family: ``nn.Linear``'s product in torch's layout
(``x @ weight.T`` with weight (out, in), the ``linear`` primitive), for every input rank."""

from __future__ import annotations


from duograd import ops
from specs import _row

for _label, _sx, _sw in (("batch", (5, 3), (4, 3)), ("vector", (3,), (4, 3)),
                         ("batched_3d", (2, 5, 3), (4, 3)), ("square", (4, 4), (4, 4))):
    _row(f"linear.{_label}", lambda x, w: ops.linear_p(x, w), lambda x, w: x @ w.T,
         lambda torch, x, w: torch.nn.functional.linear(x, w), (_sx, _sw))

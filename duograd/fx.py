"""``torch.fx``: importable so that programs which import it at their top load; its entry
points (``symbolic_trace``, ``GraphModule``, ``Tracer``, ...) raise ``NotImplementedError``
naming themselves and the reason (duograd/_inventory). duograd's own graph tools are
``dg.explain`` and ``dg.compile``.

>>> import duograd as dg
>>> dg.fx.symbolic_trace(dg.nn.Linear(2, 2))
Traceback (most recent call last):
NotImplementedError: torch.fx.symbolic_trace is not supported by duograd: not built yet
"""

from __future__ import annotations

__all__: list[str] = []

"""``torch.functional``: the module where torch defines some of its top-level functions
(``einsum``, ``norm``, ``split``, ``meshgrid``, ``stft``, ...). Each name here is the same
object as duograd's top-level function of that name, put in place by duograd/_inventory
(torch's are the same objects too); those duograd lacks raise ``NotImplementedError``.

>>> import duograd as dg
>>> dg.functional.einsum is dg.einsum
True
"""

from __future__ import annotations

__all__: list[str] = []

"""``torch.onnx``: importable; exporting needs torch's graph, so ``export`` raises.

``is_in_onnx_export()`` is False (nothing is ever being exported); every other name raises
``NotImplementedError`` naming itself and the reason (duograd/_inventory).

>>> import duograd as dg
>>> dg.onnx.is_in_onnx_export()
False
"""

from __future__ import annotations

from typing import Any

__all__ = ["export", "is_in_onnx_export"]


def export(model: Any, args: Any = (), f: Any = None, *a: Any, **kwargs: Any) -> Any:
    """Raises ``NotImplementedError``: duograd cannot write an ONNX graph.

    >>> import duograd as dg
    >>> dg.onnx.export(dg.nn.Linear(2, 2), (dg.ones(1, 2),), "m.onnx")
    Traceback (most recent call last):
    NotImplementedError: torch.onnx.export is not supported by duograd: ...
    """
    raise NotImplementedError("torch.onnx.export is not supported by duograd: exporting needs torch's "
                              "traced graph and ONNX's operator set, which duograd does not have")


def is_in_onnx_export() -> bool:
    """False: no export is ever running.

    >>> import duograd as dg
    >>> dg.onnx.is_in_onnx_export()
    False
    """
    return False

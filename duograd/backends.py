"""``torch.backends``: the flags programs set at their top, accepted and recorded.

``dg.backends.cudnn`` (``enabled``, ``benchmark``, ``deterministic``, ``allow_tf32``,
``benchmark_limit``; ``is_available()`` False), ``dg.backends.cuda`` (``matmul.allow_tf32``,
tied to ``dg.set_float32_matmul_precision`` as torch ties them, and the reduced-precision
flags; ``is_built()`` False), ``dg.backends.mps``, ``dg.backends.mkldnn``, ``dg.backends.mkl``,
``dg.backends.openmp`` and ``dg.backends.opt_einsum``. Each is also importable
(``import duograd.backends.cudnn as cudnn``). No flag changes a result: duograd has none of
these libraries and computes with NumPy on the CPU, which is also why every
``is_available()`` here is False (torch's CPU build reports MKL-DNN, MKL and OpenMP, which it
uses; duograd does not).

>>> import duograd as dg
>>> dg.backends.cudnn.benchmark = True
>>> dg.backends.cudnn.benchmark, dg.backends.cudnn.is_available(), dg.backends.mps.is_available()
(True, False, False)
>>> dg.backends.cudnn.benchmark = False
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Any, Iterator

from . import settings

__all__ = ["cudnn", "cuda", "mps", "mkldnn", "mkl", "openmp", "opt_einsum"]


def _false() -> bool:
    return False


def _module(name: str, doc: str, **attrs: Any) -> types.ModuleType:
    mod = types.ModuleType(f"{__name__}.{name}", doc)
    mod.__dict__.update(attrs)
    sys.modules[mod.__name__] = mod
    return mod


def _flags_context(mod: types.ModuleType, names: tuple[str, ...]) -> Any:
    @contextlib.contextmanager
    def flags(**kwargs: Any) -> Iterator[None]:
        """Set some of the flags for a ``with`` block, restored after (as torch's ``flags``)."""
        unknown = set(kwargs) - set(names)
        if unknown:
            raise TypeError(f"flags() got unexpected keyword arguments {sorted(unknown)}")
        before = {k: getattr(mod, k) for k in kwargs}
        for k, v in kwargs.items():
            setattr(mod, k, v)
        try:
            yield
        finally:
            for k, v in before.items():
                setattr(mod, k, v)
    return flags


cudnn = _module("cudnn", "cuDNN's flags (recorded; duograd has no cuDNN).",
                enabled=True, benchmark=False, deterministic=False, allow_tf32=True, benchmark_limit=10,
                is_available=_false, version=lambda: None, is_acceptable=lambda tensor: False)
cudnn.flags = _flags_context(cudnn, ("enabled", "benchmark", "deterministic", "allow_tf32"))

mkldnn = _module("mkldnn", "MKL-DNN's flags (recorded; duograd does not use it).",
                 enabled=True, is_available=_false)
mkldnn.flags = _flags_context(mkldnn, ("enabled",))

mps = _module("mps", "Apple's Metal device: not available here.", is_available=_false, is_built=_false)
mkl = _module("mkl", "Intel MKL: duograd does not call it directly.", is_available=_false)
openmp = _module("openmp", "OpenMP: duograd does not use it.", is_available=_false)
opt_einsum = _module("opt_einsum", "opt_einsum's path optimisation: duograd's einsum is NumPy's.",
                     enabled=False, strategy=None, is_available=_false, get_opt_einsum=lambda: None)


class _Matmul:
    """``torch.backends.cuda.matmul``: the cuBLAS flags; ``allow_tf32`` reads and writes the
    float32 matmul precision, as torch's does; an unknown flag raises ``AttributeError``."""

    _FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
              "allow_fp16_accumulation")

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {"allow_fp16_reduced_precision_reduction": True,
                                            "allow_bf16_reduced_precision_reduction": True,
                                            "allow_fp16_accumulation": False})

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return settings.get_float32_matmul_precision() != "highest"
        if name in self._FLAGS:
            return self._flags[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            settings.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._FLAGS:
            self._flags[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


cuda = _module("cuda", "CUDA's flags (recorded; there is no CUDA device here).",
               matmul=_Matmul(), is_built=_false)

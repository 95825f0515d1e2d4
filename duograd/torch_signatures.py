"""torch's parameter names on duograd's public functions: one thin normaliser of torch's
arguments, applied where ``duograd/__init__.py`` exports them.

The op rows and many public functions name their inputs ``x``, ``y`` (or take them
positionally, as a primitive does); torch calls them ``input``, ``other``, ``mat2``, ...
``with_torch_names(fn, name, params)`` returns ``fn`` accepting torch's leading parameter
names by keyword (they are moved to their positions), ``axis=`` as an alias of ``dim=`` (torch's
argument parser has it), ``out=`` (the result written into a given tensor), and, for the
creation functions, the factory keywords torch has: ``layout=`` (only the strided layout),
``pin_memory=`` (only False), ``memory_format=`` (any: duograd's arrays are row-major),
``device=`` (only the CPU), ``generator=`` where the function draws. Everything else is
passed through unchanged, so the row's own checks and errors stay the single source.

>>> import duograd as dg
>>> dg.matmul(input=dg.ones((2, 3)), other=dg.ones(3)).numpy()
array([3., 3.])
>>> dg.full((2,), 1.5, device="cpu", layout=dg.strided).numpy()
array([1.5, 1.5])
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from . import _tensor
from .shapes import axis_keyword

strided = "torch.strided"  # the one layout duograd has, as torch's ``torch.strided``
contiguous_format = "torch.contiguous_format"  # memory formats are accepted and mean nothing here
preserve_format = "torch.preserve_format"

# name -> torch's leading positional parameter names (as torch 2.13 spells them)
TORCH_PARAMS: dict[str, tuple[str, ...]] = {}
for _names, _params in [
    ("abs acos acosh asin asinh atan atanh ceil cos cosh erf erfc erfinv exp exp2 expm1 floor frac "
     "isfinite isinf isnan log log10 log1p log2 logical_not relu rsqrt sigmoid sign sin sinh sqrt "
     "tan tanh trunc round softplus all any amax amin argmax argmin argsort cummax cummin cumprod "
     "cumsum diag diag_embed diagonal flatten flip kthvalue logcumsumexp logsumexp masked_select max "
     "mean median min mode moveaxis movedim nonzero norm prod repeat_interleave reshape roll sort "
     "squeeze std sum take_along_dim topk trace transpose tril triu unbind unflatten unsqueeze var "
     "chunk broadcast_to clamp clip gather index_select index_add scatter scatter_add "
     "scatter_reduce prelu softmax log_softmax", ("input",)),
    ("atan2 copysign fmod hypot logaddexp logical_and logical_or logical_xor maximum minimum "
     "remainder floor_divide isclose", ("input", "other")),
    ("matmul", ("input", "other")),
    ("mm bmm", ("input", "mat2")),
    ("mv", ("input", "vec")),
    ("dot", ("input", "tensor")),
    ("outer", ("input", "vec2")),
    ("lerp", ("input", "end", "weight")),
    ("pow", ("input", "exponent")),
    ("split", ("tensor",)),
    ("addmm", ("input", "mat1", "mat2")),
    ("set_default_dtype", ("d",)),
    ("from_numpy", ("ndarray",)),
    ("result_type", ("tensor1", "tensor2")),
    # tensor_api's functions have torch's names already: only axis= is added
    ("nansum nanmean count_nonzero aminmax diff var_mean std_mean narrow select cross index_fill "
     "index_copy trapezoid trapz cumulative_trapezoid", ()),
    ("baddbmm", ("input", "batch1", "batch2")),
]:
    for _n in _names.split():
        TORCH_PARAMS[_n] = _params

# the creation functions: the factory keywords torch has that the function itself lacks
FACTORIES = ("zeros ones empty full eye arange linspace zeros_like ones_like full_like empty_like "
             "rand randn randint randperm rand_like randn_like tril_indices triu_indices tensor "
             "normal").split()
_FACTORY_KW = ("dtype", "device", "requires_grad", "layout", "pin_memory", "memory_format", "out",
               "generator")


def _params_of(fn: Callable) -> tuple[set[str], bool]:
    try:
        ps = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return set(), True
    return ({p.name for p in ps if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)},
            any(p.kind == p.VAR_KEYWORD for p in ps))


def _check_factory(op: str, kw: dict, own: set[str]) -> None:
    layout = kw.pop("layout", None) if "layout" not in own else None
    if layout is not None and layout != strided:
        raise NotImplementedError(f"{op}: only the strided layout exists in duograd, got {layout!r}")
    if "pin_memory" not in own and kw.pop("pin_memory", False):
        raise RuntimeError(f"{op}: pin_memory=True needs an accelerator; duograd runs on the CPU only")
    if "memory_format" not in own:
        kw.pop("memory_format", None)
    if "device" not in own and "device" in kw:
        _tensor._check_device(kw.pop("device"))


def with_torch_names(fn: Callable, name: str, params: tuple[str, ...] = (),
                     factory: bool = False) -> Callable:
    """``fn`` accepting torch's names for its leading parameters (``params``), ``axis=`` for
    ``dim=``, ``out=``, and with ``factory`` the creation keywords (see the module's text).

    >>> import duograd as dg
    >>> f = with_torch_names(lambda x, y: x - y, "minus", ("input", "other"))
    >>> float(f(other=dg.tensor(1.0), input=dg.tensor(3.0)))
    2.0
    """
    own, _ = _params_of(fn)
    rename_axis = "dim" in own and "axis" not in own
    takes_out = "out" in own
    direct = frozenset(own)  # keywords fn takes as they are: the fast path passes them on

    @functools.wraps(fn)
    def call(*args: Any, **kw: Any) -> Any:
        if kw and not kw.keys() <= direct:
            out = None if takes_out else kw.pop("out", None)
            if factory:
                _check_factory(name, kw, own)
            if rename_axis:
                axis_keyword(name, kw)
            if params and len(args) < len(params):
                args = list(args)
                for p in params[len(args):]:
                    if p not in kw:
                        break
                    args.append(kw.pop(p))
            res = fn(*args, **kw)
            if out is not None:
                from .tensor_api import _out  # noqa: PLC0415  (tensor_api imports the rows)
                return _out(res, out, name)
            return res
        return fn(*args, **kw)

    call.__wrapped_by_torch_names__ = True  # type: ignore[attr-defined]
    try:
        sig = inspect.signature(fn)
        ps = list(sig.parameters.values())
        renamed = [p.replace(name=params[i]) if i < len(params) and p.kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) else p for i, p in enumerate(ps)]
        if all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in ps):
            raise ValueError("a primitive: its parameters are torch's")
    except (TypeError, ValueError):
        renamed = [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
    names = {p.name for p in renamed}
    extra = [k for k in (_FACTORY_KW if factory else ("out",)) if k not in names]
    if not any(p.kind == p.VAR_KEYWORD for p in renamed):
        at = len(renamed)
        renamed = renamed[:at] + [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None)
                                  for k in extra]
    try:
        call.__signature__ = inspect.Signature(_ordered(renamed))  # type: ignore[attr-defined]
    except ValueError:
        pass
    return call


def _ordered(ps: list[inspect.Parameter]) -> list[inspect.Parameter]:
    """Parameters in the order ``inspect.Signature`` requires (by kind, stable)."""
    return sorted(ps, key=lambda p: p.kind)


def apply(namespace: dict) -> None:
    """Wrap every name of ``TORCH_PARAMS`` and ``FACTORIES`` present in ``namespace``."""
    for n, params in TORCH_PARAMS.items():
        if n in namespace and not getattr(namespace[n], "__wrapped_by_torch_names__", False):
            namespace[n] = with_torch_names(namespace[n], n, params)
    for n in FACTORIES:
        if n in namespace and not getattr(namespace[n], "__wrapped_by_torch_names__", False):
            namespace[n] = with_torch_names(namespace[n], n, ("input",) if n.endswith("_like") else (),
                                            factory=True)


__all__ = ["with_torch_names", "apply", "strided", "contiguous_format", "preserve_format"]

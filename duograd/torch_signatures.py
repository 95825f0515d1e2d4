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
import keyword
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


# names of TORCH_PARAMS and FACTORIES whose torch 2.13 signature has no ``out=``: the layer gives
# them none (``out=`` is then the TypeError torch raises)
NO_OUT = frozenset((
    "broadcast_to chunk count_nonzero cumulative_trapezoid diag_embed diagonal empty_like flatten flip "
    "from_numpy full_like index_fill isclose isfinite isinf isnan moveaxis movedim narrow ones_like prelu "
    "rand_like randn_like relu repeat_interleave reshape result_type roll select set_default_dtype split "
    "squeeze std_mean tensor trace transpose trapezoid trapz tril_indices triu_indices unbind unflatten "
    "unsqueeze var_mean zeros_like").split())


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
    takes_out = "out" in own or name in NO_OUT  # NO_OUT: an out= given reaches fn, which refuses it
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
    extra = [k for k in (_FACTORY_KW if factory else ("out",)) if k not in names
             and not (k == "out" and name in NO_OUT)]
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
    if namespace.get("__name__") == "duograd":
        apply_specs()


__all__ = ["with_torch_names", "apply", "apply_specs", "torch_signature", "strided", "contiguous_format",
           "preserve_format"]


# ====================================================================== torch's whole signature
#
# SPECS (below) gives, for a built name, torch 2.13's parameter list, written as torch's own
# (``input, dim, _stacklevel, dtype``; ``*`` before the keyword-only ones), with these marks:
#   ``input>x``          torch's ``input`` is our ``x`` (renamed, at the same position)
#   ``sections|indices>indices_or_sections``  several names torch accepts at one position
#   ``size>*``           torch's ``size`` is our ``*size`` (a keyword's sequence is spread)
# A torch parameter that the function itself does not take is one of HANDLERS: ``out=``
# written as torch does, a factory keyword checked, a keyword with no effect here accepted,
# a legacy keyword translated, or a value that cannot be honoured refused by name. Positional
# arguments are torch's positions: from the first one that is not ours at the same position,
# they are passed as torch's keywords. A keyword torch does not have (``rng=``, ``axis=``)
# goes to the function unchanged. The wrapper's ``__signature__`` is torch's, followed by
# the function's own extra keywords.

_NO_DEFAULT = inspect.Parameter.empty


def _refuse(op: str, name: str, value: Any, why: str) -> None:
    raise NotImplementedError(f"{op}: {name}={value!r} is not supported in duograd ({why})")


def _only(*allowed: Any, why: str) -> Callable:
    """A handler accepting only the given values (compared with ``==``, or identity for None)."""
    def handle(ctx: "_Call", name: str, value: Any) -> None:
        if not any(value is a or (a is not None and value is not None and value == a) for a in allowed):
            _refuse(ctx.op, name, value, why)
    handle.default = allowed[0]  # type: ignore[attr-defined]
    return handle


def _ignore(default: Any, why: str) -> Callable:
    def handle(ctx: "_Call", name: str, value: Any) -> None:
        pass
    handle.default = default  # type: ignore[attr-defined]
    handle.why = why  # type: ignore[attr-defined]
    return handle


class _Call:
    """One call being translated: the arguments for the function, the work after it."""

    __slots__ = ("op", "args", "kw", "after", "legacy", "call", "first", "pre", "fn")

    def __init__(self, op: str, args: list, kw: dict) -> None:
        self.op, self.args, self.kw, self.after, self.legacy = op, args, kw, [], {}
        self.call: Callable | None = None  # a handler's replacement of the function
        self.first: str | None = None  # the function's first parameter (the input)
        self.pre: list[Callable] = []  # work after every keyword is translated, before the call
        self.fn: Callable | None = None  # the function wrapped

    def get_input(self) -> Any:
        return self.args[0] if self.args else self.kw.get(self.first)

    def set_input(self, value: Any) -> None:
        if self.args:
            self.args[0] = value
        else:
            self.kw[self.first] = value


def _h_out(ctx: _Call, name: str, value: Any) -> None:
    if value is not None:
        from .tensor_api import _out  # noqa: PLC0415  (tensor_api imports the rows)
        ctx.after.append(lambda res: _out(res, value, ctx.op))


def _h_device(ctx: _Call, name: str, value: Any) -> None:
    _tensor._check_device(value)


def _h_layout(ctx: _Call, name: str, value: Any) -> None:
    if value is not None and value != strided and str(value) != "torch.strided":
        raise NotImplementedError(f"{ctx.op}: only the strided layout exists in duograd, got {value!r}")


def _h_pin_memory(ctx: _Call, name: str, value: Any) -> None:
    if value:
        raise RuntimeError(f"{ctx.op}: pin_memory=True needs an accelerator; duograd runs on the CPU only")


def _h_memory_format(ctx: _Call, name: str, value: Any) -> None:
    if value is None or value in (contiguous_format, preserve_format) or \
            str(value) in ("torch.contiguous_format", "torch.preserve_format"):
        return
    _refuse(ctx.op, name, value, "duograd's arrays are row-major: only torch.contiguous_format "
            "and torch.preserve_format")


def _h_generator(ctx: _Call, name: str, value: Any) -> None:
    if value is not None:
        _refuse(ctx.op, name, value, "this function draws from duograd's global generator")


def _h_cast_input(ctx: _Call, name: str, value: Any) -> None:
    """torch's ``dtype=`` of softmax and its kin: the input is cast before the operation."""
    if value is not None:
        from ._tensor import Tensor  # noqa: PLC0415
        x = ctx.get_input()
        x = x if isinstance(x, Tensor) else _tensor.tensor(x)
        ctx.set_input(x.to(value))


def _h_module_dtype(ctx: _Call, name: str, value: Any) -> None:
    """A module's ``dtype=``: its floating parameters and buffers are made in that dtype."""
    if value is not None:
        ctx.after.append(lambda module: module.to(dtype=value))


def _h_out_dtype(ctx: _Call, name: str, value: Any) -> None:
    if value is not None:  # torch 2.13 on the CPU: the dtype overload has no CPU kernel
        raise NotImplementedError(f"{ctx.op}: out_dtype= is not supported on the CPU "
                                  "(torch 2.13 has no CPU kernel for it either)")


def _h_legacy_reduction(ctx: _Call, name: str, value: Any) -> None:
    ctx.legacy[name] = value


def _legacy_reduction(size_average: Any, reduce: Any) -> str:
    """torch's rule for the deprecated ``size_average``/``reduce`` pair."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else ("mean" if size_average else "sum")


HANDLERS: dict[str, Callable] = {
    "out": _h_out,
    "device": _h_device,
    "layout": _h_layout,
    "pin_memory": _h_pin_memory,
    "memory_format": _h_memory_format,
    "generator": _h_generator,
    "out_dtype": _h_out_dtype,
    "size_average": _h_legacy_reduction,
    "reduce": _h_legacy_reduction,
    "non_blocking": _ignore(False, "copies on the CPU are synchronous"),
    "_stacklevel": _ignore(3, "a warning's stack level"),
    "_preallocate_and_copy": _ignore(False, "a memory strategy of torch's jacrev"),
    "foreach": _ignore(None, "the same update, one loop"),
    "nondet_tol": _ignore(0.0, "duograd's backward is deterministic"),
    "sparse_grad": _only(False, why="sparse gradients need a sparse layout"),
    "fused": _only(None, False, why="no fused kernels"),
    "capturable": _only(False, why="no CUDA graphs"),
    "differentiable": _only(False, why="the optimizer step is not recorded"),
    "strict": _only(False, why="strict mode is not implemented"),
    "check_undefined_grad": _ignore(True, "undefined gradients are zeros here"),
    "check_grad_dtypes": _ignore(False, "gradients have their input's dtype here"),
    "check_batched_grad": _only(False, why="batched gradient checks are not implemented"),
    "check_batched_forward_grad": _only(False, why="forward-mode AD is not implemented"),
    "check_forward_ad": _only(False, why="forward-mode AD is not implemented"),
    "check_backward_ad": _only(True, why="only the backward check is implemented"),
    "check_fwd_over_rev": _only(False, why="forward-mode AD is not implemented"),
    "check_rev_over_rev": _only(True, why="only the reverse-over-reverse check is implemented"),
    "fast_mode": _ignore(False, "the full Jacobians are compared, which fast mode approximates"),
    "masked": _only(None, False, why="masked tensors are not built"),
    "gen_non_contig_grad_outputs": _ignore(False, "duograd's arrays are contiguous"),
    "last_epoch": _only(-1, why="resuming a schedule at an epoch is not implemented"),
}


def _parse_spec(spec: str) -> tuple[list[tuple[list[str], str | None]], list[tuple[str, str | None]]]:
    """``"input>x, dim, *, out"`` -> positional [(torch names, our name)], keyword-only."""
    pos: list[tuple[list[str], str | None]] = []
    kwo: list[tuple[str, str | None]] = []
    star = False
    for item in (p.strip() for p in spec.split(",")):
        if not item:
            continue
        if item == "*":
            star = True
            continue
        names, _, ours = item.partition(">")
        alts = names.split("|")
        if star:
            for a in alts:
                kwo.append((a, ours or None))
        else:
            pos.append((alts, ours or None))
    return pos, kwo


def torch_signature(fn: Callable, op: str, spec: str, *, method: bool = False,
                    handlers: dict[str, Callable] | None = None) -> Callable:
    """``fn`` taking torch's parameters as ``spec`` writes them (see SPECS' comment above);
    ``method``: ``fn``'s first parameter is ``self``, outside ``spec``.

    >>> import duograd as dg
    >>> def f(x, k=1):
    ...     return x * k
    >>> g = torch_signature(f, "scale", "input>x, k, *, out")
    >>> o = dg.zeros(2)
    >>> g(input=dg.ones(2), k=3, out=o) is o, o.numpy()
    (True, array([3., 3.]))
    """
    hs = dict(HANDLERS, **(handlers or {}))
    # the function's own parameters: a ``functools.wraps`` wrapper that states its own is read
    # as it is (inspect would show the wrapped function's)
    sig = inspect.signature(fn, follow_wrapped=False)
    if all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        sig = inspect.signature(fn)
    ps = list(sig.parameters.values())
    if method:
        ps = ps[1:]
    ours_pos = [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    ours_var = next((p.name for p in ps if p.kind is p.VAR_POSITIONAL), None)
    ours_kw = {p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    ours_varkw = any(p.kind is p.VAR_KEYWORD for p in ps)
    tpos, tkwo = _parse_spec(spec)

    # each torch name -> ("kw", our keyword) | ("spread", None) | ("handler", name)
    route: dict[str, tuple[str, str | None]] = {}

    def target(tname: str, ours: str | None) -> tuple[str, str | None]:
        if ours == "*":
            return ("spread", None)
        if ours is not None:
            return ("kw", ours)
        if handlers and tname in handlers:  # this name's own handler: before a parameter of ours
            return ("handler", tname)
        if tname in ours_kw:
            return ("kw", tname)
        if tname in hs:
            return ("handler", tname)
        if ours_varkw:
            return ("kw", tname)
        raise ValueError(f"torch_signature({op}): torch's `{tname}` is neither ours nor handled")

    for alts, ours in tpos:
        for a in alts:
            route[a] = target(a, ours)
    for a, ours in tkwo:
        route[a] = target(a, ours)
    # positional arguments: ours at the same position up to ``same``; from there torch's names
    same = 0
    for i, (alts, ours) in enumerate(tpos):
        kind, name = route[alts[0]]
        if kind == "spread" and ours_var is not None:
            same = None  # our *varargs take the rest as they are
            break
        if kind == "kw" and i < len(ours_pos) and ours_pos[i] == name:
            same = i + 1
            continue
        break
    npos = len(tpos)
    renames = {t: r[1] for t, r in route.items() if r[0] == "kw" and r[1] != t}
    special = frozenset(t for t, r in route.items() if r[0] != "kw" or r[1] != t)
    takes_legacy = "reduction" in ours_kw
    first = ([p.name for p in sig.parameters.values()] or [None])[0]
    is_init = method and getattr(fn, "__name__", "") == "__init__"

    def translate(args: tuple, kw: dict) -> tuple[_Call, Any]:
        self_arg = None
        if method:
            self_arg, args = args[0], args[1:]
        ctx = _Call(op, list(args), {})
        spread = None
        if same is not None and len(args) > same:
            if len(args) > npos and ours_var is None and not ours_varkw:
                raise TypeError(f"{op}() takes at most {npos} positional arguments "
                                f"({len(args)} given)")
            for (alts, _), v in zip(tpos[same:], args[same:]):
                if alts[0] in kw:
                    raise TypeError(f"{op}() got multiple values for argument '{alts[0]}'")
                kw = dict(kw)
                kw[alts[0]] = v
            ctx.args = list(args[:same]) + list(args[npos:])
        handled = []
        for k, v in kw.items():
            r = route.get(k)
            if r is None:
                ctx.kw[k] = v
            elif r[0] == "kw":
                if r[1] in ctx.kw:
                    raise TypeError(f"{op}() got multiple values for argument '{r[1]}'")
                ctx.kw[r[1]] = v
            elif r[0] == "spread":
                if len(ctx.args) > len(ours_pos):
                    raise TypeError(f"{op}() got {k}= and positional sizes")
                spread = list(v) if isinstance(v, (tuple, list)) else [v]
            else:
                handled.append((k, v))
        # a keyword naming one of our positional parameters is passed by position
        for i, name in enumerate(ours_pos):
            if name in ctx.kw and i == len(ctx.args) and ours_var is not None:
                ctx.args.append(ctx.kw.pop(name))
        if spread is not None:
            ctx.args.extend(spread)
        if method:
            ctx.args.insert(0, self_arg)
        ctx.first, ctx.fn = first, fn
        for k, v in handled:
            hs[route[k][1]](ctx, k, v)
        if ctx.legacy:
            sa, rd = ctx.legacy.get("size_average"), ctx.legacy.get("reduce")
            if sa is not None or rd is not None:
                if not takes_legacy:
                    raise TypeError(f"{op}: size_average/reduce need a reduction parameter")
                ctx.kw["reduction"] = _legacy_reduction(sa, rd)
        for f in ctx.pre:
            f()
        return ctx, None

    @functools.wraps(fn)
    def call(*args: Any, **kw: Any) -> Any:
        if not kw and (same is None or len(args) - method <= same):
            return fn(*args)
        if (same is None or len(args) - method <= same) and special.isdisjoint(kw):
            if renames and kw.keys() & renames.keys():
                kw = {renames.get(k, k): v for k, v in kw.items()}
            return fn(*args, **kw)
        ctx, _ = translate(args, kw)
        res = (ctx.call or fn)(*ctx.args, **ctx.kw)
        if is_init:  # a class's __init__: the work after it is done on the instance
            for f in ctx.after:
                f(ctx.args[0])
            return res
        for f in ctx.after:
            res = f(res)
        return res

    call.__wrapped_by_torch_names__ = True  # type: ignore[attr-defined]
    call.__torch_spec__ = spec  # type: ignore[attr-defined]
    call.__signature__ = _display(ps, tpos, tkwo, route, hs, method, sig)  # type: ignore[attr-defined]
    # torch's names that are a ``*varargs`` here and also taken by keyword (``ones(size=(2, 3))``)
    call.__varargs_keywords__ = tuple(t for t, r in route.items()  # type: ignore[attr-defined]
                                      if r[0] == "spread")
    return call


def _display(ps: list, tpos: list, tkwo: list, route: dict, hs: dict, method: bool,
             sig: inspect.Signature) -> inspect.Signature:
    """torch's parameters (with our defaults where ours), then our extra keywords."""
    P = inspect.Parameter
    ours = {p.name: p for p in ps}
    out: list[inspect.Parameter] = []
    seen: set[str] = set()

    def default_of(tname: str) -> Any:
        kind, name = route[tname]
        if kind == "kw" and name in ours:
            d = ours[name].default
            return None if d is _NO_DEFAULT and any(o.default is not _NO_DEFAULT for o in out) else d
        if kind == "handler":
            return getattr(hs[name], "default", None)
        return _NO_DEFAULT

    spread = next((p for p in ps if p.kind is p.VAR_POSITIONAL), None)
    # a torch name that is a Python keyword (``from``) is accepted through ``**{...}`` but cannot
    # be a Parameter: the display shows ours there
    route = dict(route)
    shown = []
    for alts, r in tpos:
        new = []
        for a in alts:
            if keyword.iskeyword(a):
                a2 = spread.name if r == "*" and spread is not None else r
                route[a2] = route[a]
                a = a2
            new.append(a)
        shown.append((new, r))
    tpos = shown
    for alts, _ in tpos:
        kind, _n = route[alts[0]]
        if kind == "spread" and spread is not None:
            out.append(P(alts[0], P.VAR_POSITIONAL))
            seen.add(alts[0])
            continue
        d = default_of(alts[0])
        if d is _NO_DEFAULT and out and out[-1].default is not _NO_DEFAULT:
            d = None
        out.append(P(alts[0], P.POSITIONAL_OR_KEYWORD, default=d))
        seen.add(alts[0])
    extra_alts = [a for alts, _ in tpos for a in alts[1:]]
    for a in extra_alts + [a for a, _ in tkwo]:
        if a not in seen and not any(p.name == a for p in out):
            d = default_of(a)
            out.append(P(a, P.KEYWORD_ONLY, default=None if d is _NO_DEFAULT else d))
            seen.add(a)
    if spread is not None and not any(p.kind is P.VAR_POSITIONAL for p in out):
        out.insert(len([p for p in out if p.kind is P.POSITIONAL_OR_KEYWORD]),
                   P(spread.name, P.VAR_POSITIONAL))
    mapped = {r[1] for r in route.values() if r[0] == "kw"}
    for p in ps:
        if p.name in seen or p.name in mapped or p.kind is P.VAR_POSITIONAL:
            continue
        if p.kind is P.VAR_KEYWORD:
            out.append(p)
        else:
            out.append(P(p.name, P.KEYWORD_ONLY,
                         default=p.default if p.default is not _NO_DEFAULT else None))
    if method:
        out.insert(0, P("self", P.POSITIONAL_OR_KEYWORD))
    out = _ordered(out)
    varkw = [p for p in out if p.kind is P.VAR_KEYWORD]
    out = [p for p in out if p.kind is not P.VAR_KEYWORD] + varkw[:1]
    return inspect.Signature(out, return_annotation=sig.return_annotation)


# ---------------------------------------------------------------- handlers of one or a few names

def _h_backward_inputs(ctx: _Call, name: str, value: Any) -> None:
    """``inputs=``: the gradients are accumulated into these tensors' ``.grad`` only."""
    if value is None:
        return
    from . import autograd  # noqa: PLC0415
    from ._tensor import Tensor  # noqa: PLC0415
    inputs = [value] if isinstance(value, Tensor) else list(value)
    if not inputs:
        raise RuntimeError(f"{ctx.op}: 'inputs' argument to backward() cannot be empty.")

    def run(*args: Any, **kw: Any) -> None:
        names = ("tensors", "grad_tensors", "retain_graph", "create_graph")
        bound = dict(zip(names, args))
        bound.update({{"tensor": "tensors", "gradient": "grad_tensors"}.get(k, k): v for k, v in kw.items()})
        outs = bound["tensors"]
        outs = [outs] if isinstance(outs, Tensor) else list(outs)
        grads = bound.get("grad_tensors")
        if grads is not None:
            grads = [grads] if isinstance(grads, Tensor) or not isinstance(grads, (list, tuple)) else list(grads)
        create = bool(bound.get("create_graph", False))
        retain = bound.get("retain_graph")
        gs = autograd.grad(outs, inputs, grad_outputs=grads, retain_graph=create if retain is None else retain,
                           create_graph=create, allow_unused=True)
        for x, g in zip(inputs, gs):
            if g is None:
                continue
            if x.grad is None:
                x.grad = g if create else g.detach()
            else:
                x.grad = x.grad + g if create else (x.grad + g).detach()
        return None
    ctx.call = run


def _h_raise_exception(ctx: _Call, name: str, value: Any) -> None:
    """gradcheck's ``raise_exception=False``: a failed check returns False instead of raising."""
    if value is False:
        from .gradcheck import GradcheckError  # noqa: PLC0415
        inner, fn = ctx.call, ctx.fn

        def run(*args: Any, **kw: Any) -> bool:
            try:
                return bool((inner or fn)(*args, **kw))
            except GradcheckError:
                return False
        ctx.call = run


_h_raise_exception.default = True  # type: ignore[attr-defined]


def _h_tol(ctx: _Call, name: str, value: Any) -> None:
    """matrix_rank's positional ``tol``: an absolute tolerance (``atol=tol, rtol=0``)."""
    if value is not None:
        if "atol" in ctx.kw or "rtol" in ctx.kw:
            raise TypeError(f"{ctx.op}: give tol, or atol/rtol, not both")
        ctx.kw["atol"], ctx.kw["rtol"] = value, 0.0


def _h_rcond(ctx: _Call, name: str, value: Any) -> None:
    """pinv's positional ``rcond``: a relative tolerance (``rtol=rcond``)."""
    if value is not None:
        if "atol" in ctx.kw or "rtol" in ctx.kw:
            raise TypeError(f"{ctx.op}: give rcond, or atol/rtol, not both")
        ctx.kw["rtol"] = value


def _h_to_tensor(ctx: _Call, name: str, value: Any) -> None:
    """``Tensor.to(tensor=other)``: ``other``'s dtype (and device, the CPU)."""
    ctx.kw["dtype"] = value.dtype


def _h_randint_bound(ctx: _Call, name: str, value: Any) -> None:
    ctx.legacy[name] = value
    if name == "high":
        def bounds() -> None:
            low = ctx.legacy.get("low")
            lead = [low] if low is not None else ctx.args[:1]
            ctx.args[:] = [*lead, ctx.legacy["high"]]
        ctx.pre.append(bounds)
    elif "high" not in ctx.legacy:
        ctx.pre.append(lambda: None if "high" in ctx.legacy else (_ for _ in ()).throw(
            TypeError(f"{ctx.op}() got low= without high=")))


def _h_result_type_scalar(ctx: _Call, name: str, value: Any) -> None:
    """``result_type(scalar=2, tensor=t)``: torch's ``tensor`` is then the second operand."""
    if "tensor1" in ctx.kw:
        ctx.kw["tensor2"] = ctx.kw.pop("tensor1")
    ctx.kw["tensor1"] = value


def _h_module_inplace(ctx: _Call, name: str, value: Any) -> None:
    """A module's ``inplace=True``: its forward writes the result into its input."""
    def install(module: Any) -> Any:
        object.__setattr__(module, "inplace", bool(value))
        if value:
            forward = module.forward

            def forward_inplace(x: Any, *a: Any, **k: Any) -> Any:
                return x.copy_(forward(x, *a, **k))
            object.__setattr__(module, "forward", forward_inplace)
        return module
    ctx.after.append(install)


_h_module_inplace.default = False  # type: ignore[attr-defined]


def _h_norm_bias(ctx: _Call, name: str, value: Any) -> None:
    """A normalisation module's ``bias=False``: its affine map has no additive bias."""
    if value is False:
        def drop(module: Any) -> Any:
            if getattr(module, "bias", None) is not None:
                module.bias = None
            return module
        ctx.after.append(drop)


_h_norm_bias.default = True  # type: ignore[attr-defined]


def _h_loss_weight(ctx: _Call, name: str, value: Any) -> None:
    """``l1_loss``/``mse_loss``'s elementwise ``weight=``: the unreduced losses are weighted; the
    mean divides by the sum of the weights (torch 2.13's rule)."""
    if value is None:
        return

    def pre() -> None:
        reduction = ctx.kw.get("reduction", "mean")
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
        x = ctx.get_input()
        if tuple(value.shape) != tuple(x.shape):
            raise ValueError("Weights and input must have the same size.")
        ctx.kw["reduction"] = "none"

        def reduce(res: Any) -> Any:
            w = res * value
            return w if reduction == "none" else (w.sum() if reduction == "sum" else w.sum() / value.sum())
        ctx.after.append(reduce)
    ctx.pre.append(pre)


# the handlers of a few names, by name
_BACKWARD = {"inputs": _h_backward_inputs, "grad_variables": _ignore(None, "")}
_GRADCHECK = {"raise_exception": _h_raise_exception}
_MODULE = {"dtype": _h_module_dtype}
_NORM = {"dtype": _h_module_dtype, "bias": _h_norm_bias}
_CAST = {"dtype": _h_cast_input}
_OPTIM = {"amsgrad": _only(False, why="AMSGrad is not implemented"),
          "decoupled_weight_decay": _only(False, why="use torch.optim.AdamW")}
SPEC_HANDLERS: dict[str, dict[str, Callable]] = {
    "torch.Tensor.backward": _BACKWARD, "torch.autograd.backward": _BACKWARD,
    "torch.autograd.gradcheck": _GRADCHECK, "torch.autograd.gradgradcheck": _GRADCHECK,
    "torch.nn.functional.l1_loss": {"weight": _h_loss_weight, "size_average": _h_legacy_reduction,
                                    "reduce": _h_legacy_reduction},
    "torch.linalg.matrix_rank": {"tol": _h_tol}, "torch.linalg.pinv": {"rcond": _h_rcond},
    "torch.Tensor.to": {"tensor": _h_to_tensor},
    "torch.randint": {"low": _h_randint_bound, "high": _h_randint_bound},
    "torch.result_type": {"scalar": _h_result_type_scalar},
    "torch.nn.ReLU": {"inplace": _h_module_inplace}, "torch.nn.Dropout": {"inplace": _h_module_inplace},
    "torch.nn.functional.mse_loss": {"weight": _h_loss_weight},
    "torch.optim.Adam": _OPTIM, "torch.optim.AdamW": _OPTIM,
}
for _n in ("Tensor.log_softmax", "Tensor.softmax", "log_softmax", "softmax", "nn.functional.log_softmax",
           "nn.functional.softmax", "nn.functional.softmin"):
    SPEC_HANDLERS["torch." + _n] = _CAST
for _n in ("Linear", "Embedding", "LayerNorm"):
    SPEC_HANDLERS["torch.nn." + _n] = _MODULE
for _n in ("BatchNorm1d BatchNorm2d BatchNorm3d GroupNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d "
           "SyncBatchNorm").split():
    SPEC_HANDLERS["torch.nn." + _n] = _NORM


# ---------------------------------------------------------------- the table: torch 2.13's parameters

_OUT_ONLY = {  # torch.* names that lacked only ``out=``: torch's parameters as they are, and out
    "bernoulli": "input, p, *, generator", "cat": "tensors, dim", "concat": "tensors, dim",
    "concatenate": "tensors, dim>axis", "clamp_max": "input, max", "clamp_min": "input, min",
    "hardshrink": "input, lambd",
    "matrix_power": "input, n", "multinomial": "input, num_samples, replacement, *, generator",
    "renorm": "input, p, dim, maxnorm", "slice_scatter": "input, src, dim, start, end, step",
    "stack": "tensors, dim", "take": "input, index", "threshold": "input, threshold, value",
}
_F_OUT_ONLY = {  # the same in torch.nn.functional
    "avg_pool2d": "input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override",
    "avg_pool3d": "input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override",
    "hardshrink": "input, lambd", "linear": "input, weight, bias", "softshrink": "input, lambd",
}
_SPECIAL_X = ("airy_ai scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0").split()
_SPECIAL_XN = ("chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w "
               "hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p "
               "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
               "shifted_chebyshev_polynomial_w").split()
_SELF_OR_INPUT = {  # a number first is torch's ``self=`` (the Scalar overload)
    "bitwise_left_shift": "input|self>input, other, *, out", "bitwise_right_shift": "input|self>input, other, *, out",
    "bucketize": "input|self>input, boundaries, *, out_int32, right, out",
    "float_power": "input|self>input, exponent, *, out", "pow": "input|self>input, exponent, *, out",
    "remainder": "input|self>input, other, *, out", "xlogy": "input|self>input, other, *, out",
    "where": "condition, input|self>input, other, *, out",
    "searchsorted": "sorted_sequence, input|self>input, *, out_int32, right, side, sorter, out",
}
_MEMORY_FORMAT_ONLY = "bool byte char double float half int long short".split()

SPECS: dict[str, str] = {
    **{f"torch.{n}": v + (", *, out" if "*" not in v else ", out") for n, v in _OUT_ONLY.items()},
    **{f"torch.nn.functional.{n}": v + (", *, out" if "*" not in v else ", out") for n, v in _F_OUT_ONLY.items()},
    **{f"torch.special.{n}": "x>input, *, out" for n in _SPECIAL_X},
    **{f"torch.special.{n}": "x>input, n, *, out" for n in _SPECIAL_XN},
    **{f"torch.{n}": v for n, v in _SELF_OR_INPUT.items()},
    **{f"torch.special.{n}": "input|self>input, other, *, out" for n in ("xlog1py", "xlogy", "zeta")},
    **{f"torch.Tensor.{n}": "memory_format" for n in _MEMORY_FORMAT_ONLY},
    # torch.Tensor
    "torch.Tensor.addmm": "mat1, mat2, out_dtype, *, beta, alpha",
    "torch.Tensor.baddbmm": "batch1, batch2, out_dtype, *, beta, alpha",
    "torch.Tensor.bmm": "mat2, out_dtype",
    "torch.Tensor.mm": "mat2, out_dtype",
    "torch.Tensor.backward": "gradient, retain_graph, create_graph, inputs",
    "torch.Tensor.broadcast_to": "size>shape",
    "torch.Tensor.cholesky_solve": "input2>L, upper",
    "torch.Tensor.contiguous": "*, memory_format",
    "torch.Tensor.copy_": "other|src>src, non_blocking",
    "torch.Tensor.dot": "tensor>other",
    "torch.Tensor.dsplit": "sections|indices>indices_or_sections",
    "torch.Tensor.hsplit": "sections|indices>indices_or_sections",
    "torch.Tensor.vsplit": "sections|indices>indices_or_sections",
    "torch.Tensor.tensor_split": "indices|tensor_indices_or_sections|sections>indices_or_sections, dim",
    "torch.Tensor.gather": "dim, index, *, sparse_grad",
    "torch.Tensor.log_softmax": "dim, dtype",
    "torch.Tensor.softmax": "dim, dtype",
    "torch.Tensor.random_": "from>*, to, *, generator",
    "torch.Tensor.resize_": "size>*, *, memory_format",
    "torch.Tensor.subtract": "other, alpha",
    "torch.Tensor.to": "*, device, dtype, non_blocking, copy, memory_format, tensor",
    "torch.Tensor.type": "dtype, non_blocking",
    "torch.Tensor.uniform_": "from>a, to>b, *, generator",
    "torch.Tensor.where": "condition, other>y",
    # torch.*
    "torch.addmm": "input, mat1, mat2, out_dtype, *, beta, alpha, out",
    "torch.baddbmm": "input, batch1, batch2, out_dtype, *, beta, alpha, out",
    "torch.bmm": "input, mat2, out_dtype, *, out",
    "torch.mm": "input, mat2, out_dtype, *, out",
    "torch.broadcast_to": "input, size>shape",
    "torch.celu": "input>x, alpha",
    "torch.selu": "input>x",
    "torch.cholesky_inverse": "input>L, upper, *, out",
    "torch.cholesky_solve": "input>B, input2>L, upper, *, out",
    "torch.det": "input>A",
    "torch.matrix_exp": "input>A",
    "torch.dsplit": "input, sections|indices>indices_or_sections",
    "torch.hsplit": "input, sections|indices>indices_or_sections",
    "torch.vsplit": "input, sections|indices>indices_or_sections",
    "torch.tensor_split": "input, indices|tensor_indices_or_sections|sections>indices_or_sections, dim",
    "torch.functional.norm": "input, p, dim, keepdim, out, dtype",
    "torch.norm": "input, p, dim, keepdim, out, dtype",
    "torch.i0_": "input>self",
    "torch.sinc_": "input>self",
    "torch.isin": "elements|element>elements, test_elements|test_element>test_elements, *, assume_unique, "
                  "invert, out",
    "torch.log_softmax": "input, dim, dtype, *, out",
    "torch.softmax": "input, dim, dtype, *, out",
    "torch.logspace": "start, end, steps, base, *, out, dtype, layout, device, pin_memory, requires_grad",
    "torch.range": "start, end, step, *, out, dtype, layout, device, requires_grad",
    "torch.masked_fill": "input>x, mask, value",
    "torch.max": "input, dim|other>dim, keepdim, *, out",
    "torch.min": "input, dim|other>dim, keepdim, *, out",
    "torch.ones": "size>*, *, dtype, layout, device, pin_memory, out",
    "torch.zeros": "size>*, *, dtype, layout, device, pin_memory, out",
    "torch.empty": "size>*, *, dtype, layout, device, pin_memory, memory_format, out",
    "torch.rand": "size>*, *, generator, out, dtype, layout, device, pin_memory, requires_grad",
    "torch.randn": "size>*, *, generator, out, dtype, layout, device, pin_memory, requires_grad",
    "torch.randint": "*, low, high, size, generator, out, dtype, layout, device, pin_memory, requires_grad",
    "torch.randint_like": "input, low, high, *, generator, memory_format, dtype, layout, device, pin_memory, "
                          "requires_grad",
    "torch.reshape": "input, shape>*",
    "torch.result_type": "tensor|scalar1>tensor1, other|scalar2>tensor2, *, scalar",
    "torch.rsub": "input, other, alpha",
    "torch.subtract": "input, other, alpha, *, out",
    "torch.set_num_interop_threads": "int>n",
    "torch.set_num_threads": "int>n",
    "torch.triangular_solve": "input>b, A, upper, transpose, unitriangular, *, out",
    "torch.true_divide": "input>dividend, other>divisor, *, out",
    # torch.autograd, torch.func
    "torch.autograd.backward": "tensors>tensor, grad_tensors>gradient, retain_graph, create_graph, "
                               "grad_variables, inputs",
    "torch.autograd.gradcheck": "func>f, inputs, *, eps, atol, rtol, raise_exception, nondet_tol, "
                                "check_undefined_grad, check_grad_dtypes, check_batched_grad, "
                                "check_batched_forward_grad, check_forward_ad, check_backward_ad, fast_mode, masked",
    "torch.autograd.gradgradcheck": "func>f, inputs, grad_outputs, *, eps, atol, rtol, gen_non_contig_grad_outputs, "
                                    "raise_exception, nondet_tol, check_undefined_grad, check_grad_dtypes, "
                                    "check_batched_grad, check_fwd_over_rev, check_rev_over_rev, fast_mode, masked",
    "torch.func.grad": "func, argnums, has_aux",
    "torch.func.hessian": "func>f, argnums",
    "torch.func.jacfwd": "func, argnums, has_aux, *, randomness",
    "torch.func.jacrev": "func, argnums, *, has_aux, chunk_size, _preallocate_and_copy",
    "torch.func.jvp": "func, primals, tangents, *, strict, has_aux",
    "torch.func.vjp": "func, primals>*, *, has_aux",
    # torch.linalg
    "torch.linalg.cholesky": "input>A, *, upper, out",
    "torch.linalg.cholesky_ex": "input>A, *, upper, check_errors, out",
    "torch.linalg.cond": "input>A, p, *, out",
    "torch.linalg.eigh": "input>A, UPLO, *, out",
    "torch.linalg.eigvalsh": "input>A, UPLO, *, out",
    "torch.linalg.matrix_exp": "input>A",
    "torch.linalg.matrix_norm": "input>A, ord, dim, keepdim, *, dtype, out",
    "torch.linalg.matrix_power": "input>A, n, *, out",
    "torch.linalg.matrix_rank": "input>A, tol, hermitian, *, atol, rtol, out",
    "torch.linalg.norm": "input>A, ord, dim, keepdim, *, dtype, out",
    "torch.linalg.pinv": "input>A, rcond, hermitian, *, atol, rtol, out",
    "torch.linalg.solve_triangular": "input>A, B, *, upper, left, unitriangular, out",
    "torch.linalg.tensorinv": "input>A, ind, *, out",
    "torch.linalg.tensorsolve": "input>A, other>B, dims, *, out",
    "torch.linalg.vector_norm": "input>x, ord, dim, keepdim, *, dtype, out",
    "torch.special.softmax": "input, dim, dtype",
    # torch.nn.functional
    **{f"torch.nn.functional.{n}": "input>x, inplace" for n in
       "hardsigmoid hardswish mish relu6 relu selu silu".split()},
    **{f"torch.nn.functional.{n}": "input>x" for n in "logsigmoid softsign".split()},
    "torch.nn.functional.celu": "input>x, alpha, inplace",
    "torch.nn.functional.elu": "input>x, alpha, inplace",
    "torch.nn.functional.gelu": "input>x, *, approximate, out",
    "torch.nn.functional.glu": "input>x, dim",
    "torch.nn.functional.hardtanh": "input>x, min_val, max_val, inplace",
    "torch.nn.functional.leaky_relu": "input>x, negative_slope, inplace",
    "torch.nn.functional.prelu": "input>x, weight",
    "torch.nn.functional.softplus": "input>x, beta, threshold, *, out",
    "torch.nn.functional.log_softmax": "input>x, dim, _stacklevel, dtype",
    "torch.nn.functional.softmax": "input>x, dim, _stacklevel, dtype",
    "torch.nn.functional.softmin": "input>x, dim, _stacklevel, dtype",
    "torch.nn.functional.one_hot": "input>tensor_, num_classes",
    "torch.nn.functional.l1_loss": "input, target, size_average, reduce, reduction, weight",
    "torch.nn.functional.mse_loss": "input>pred, target, size_average, reduce, reduction, weight",
    "torch.nn.functional.rrelu_": "input, lower, upper, training, generator",
    # torch.nn modules
    **{f"torch.nn.{n}": "num_features, eps, momentum, affine, track_running_stats, device, dtype, *, bias"
       for n in "BatchNorm1d BatchNorm2d BatchNorm3d InstanceNorm1d InstanceNorm2d InstanceNorm3d".split()},
    **{f"torch.nn.{n}": "eps, momentum, affine, track_running_stats, device, dtype, *, bias" for n in
       "LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d LazyInstanceNorm1d LazyInstanceNorm2d "
       "LazyInstanceNorm3d".split()},
    "torch.nn.SyncBatchNorm": "num_features, eps, momentum, affine, track_running_stats, process_group, "
                              "device, dtype, *, bias",
    "torch.nn.GroupNorm": "num_groups, num_channels, eps, affine, device, dtype, *, bias",
    "torch.nn.LayerNorm": "normalized_shape, eps, elementwise_affine, bias, device, dtype",
    "torch.nn.Linear": "in_features, out_features, bias, device, dtype",
    "torch.nn.Embedding": "num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, "
                          "scale_grad_by_freq, sparse, _weight, _freeze, device, dtype",
    **{f"torch.nn.ConstantPad{d}d": "padding, value>*" for d in (1, 2, 3)},
    "torch.nn.Dropout": "p, inplace",
    "torch.nn.ReLU": "inplace",
    "torch.nn.MSELoss": "size_average, reduce, reduction",
    # torch.optim
    "torch.optim.Adagrad": "params, lr, lr_decay, weight_decay, initial_accumulator_value, eps, foreach, *, "
                           "maximize, differentiable, fused",
    "torch.optim.Adam": "params, lr, betas, eps, weight_decay, amsgrad, *, foreach, maximize, capturable, "
                        "differentiable, fused, decoupled_weight_decay",
    "torch.optim.AdamW": "params, lr, betas, eps, weight_decay, amsgrad, *, maximize, foreach, capturable, "
                         "differentiable, fused",
    "torch.optim.Adamax": "params, lr, betas, eps, weight_decay, foreach, *, maximize, differentiable, capturable",
    "torch.optim.NAdam": "params, lr, betas, eps, weight_decay, momentum_decay, decoupled_weight_decay, *, "
                         "foreach, maximize, capturable, differentiable",
    "torch.optim.RMSprop": "params, lr, alpha, eps, weight_decay, momentum, centered, capturable, foreach, "
                           "maximize, differentiable",
    "torch.optim.SGD": "params, lr, momentum, dampening, weight_decay, nesterov, *, maximize, foreach, "
                       "differentiable, fused",
    "torch.optim.lr_scheduler.CosineAnnealingLR": "optimizer, T_max, eta_min, last_epoch",
    "torch.optim.lr_scheduler.ExponentialLR": "optimizer, gamma, last_epoch",
    "torch.optim.lr_scheduler.LinearLR": "optimizer, start_factor, end_factor, total_iters, last_epoch",
    "torch.optim.lr_scheduler.StepLR": "optimizer, step_size, gamma, last_epoch",
}


def apply_specs() -> int:
    """Give each name of SPECS torch's parameters (in the duograd namespace torch's is in);
    returns how many were wrapped. A name not built is skipped."""
    from ._inventory.stubs import is_stub, resolve  # noqa: PLC0415
    done = 0
    for full, spec in SPECS.items():
        ns, _, name = full.rpartition(".")
        target = resolve(ns, create=False)
        if target is None:
            continue
        obj = inspect.getattr_static(target, name, None) if isinstance(target, type) else \
            vars(target).get(name)
        if obj is None or is_stub(obj) or getattr(obj, "__torch_spec__", None) is not None:
            continue
        hs = SPEC_HANDLERS.get(full)
        if isinstance(obj, type):
            init = obj.__init__
            if getattr(init, "__torch_spec__", None) is not None and "__init__" in vars(obj):
                continue
            obj.__init__ = torch_signature(init, name, spec, method=True, handlers=hs)
        elif ns == "torch.Tensor":
            if isinstance(obj, (staticmethod, classmethod, property)):
                continue
            setattr(target, name, torch_signature(obj, name, spec, method=True, handlers=hs))
        else:
            setattr(target, name, torch_signature(obj, name, spec, handlers=hs))
        done += 1
    return done

"""``torch.func``'s module side: ``functional_call``, ``stack_module_state``, and the
transforms ``grad`` / ``grad_and_value`` / ``vjp`` / ``jvp`` over pytrees of tensors.

``functional_call(module, params, args)`` runs ``module`` with some of its parameters and
buffers replaced by the given tensors, for that one call (they are put back afterwards,
also when the call raises), so a loss becomes a function of a dict of parameters that the
transforms can differentiate. ``stack_module_state(models)`` stacks the parameters and
buffers of same-shaped models along a new leading dimension (an ensemble).

The transforms in ``duograd.func`` take Tensors; ``tree_transforms`` gives them torch's
pytree arguments: an argument selected by ``argnums`` may be a dict, list or tuple of
Tensors (nested), and its gradient comes back in the same structure. A pytree is flattened
into its leaves, the Tensor transform runs on the leaves, and the result is rebuilt.

Until ``func.vmap`` is in, per-sample gradients and ensembles loop over the batch in
Python (``[grad(loss)(params, x[i], y[i]) for i in range(n)]``); with vmap the same
functions batch unchanged.

>>> import duograd as dg
>>> from duograd import nn
>>> from duograd.func import functional_call
>>> lin = nn.Linear(2, 1, rng=0)
>>> functional_call(lin, {"weight": dg.ones(1, 2), "bias": dg.zeros(1)}, (dg.tensor([[1.0, 2.0]]),)).numpy()
array([[3.]])
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._tensor import Tensor
from .nn.modules import Module

__all__ = ["functional_call", "stack_module_state", "tree_transforms"]


# ---------------------------------------------------------------- pytrees

def _flatten(tree: Any) -> tuple[list, Any]:
    """(leaves, spec): dicts, lists and tuples (namedtuples too) are containers; anything
    else is a leaf."""
    if isinstance(tree, dict):
        leaves: list = []
        specs = []
        for k in tree:
            sub, spec = _flatten(tree[k])
            leaves += sub
            specs.append((k, spec, len(sub)))
        return leaves, ("dict", type(tree), specs)
    if isinstance(tree, (list, tuple)):
        leaves = []
        specs = []
        for v in tree:
            sub, spec = _flatten(v)
            leaves += sub
            specs.append((None, spec, len(sub)))
        return leaves, ("seq", type(tree), specs)
    return [tree], None


def _unflatten(leaves: Sequence[Any], spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    kind, typ, specs = spec
    parts, at = [], 0
    for key, sub, n in specs:
        parts.append((key, _unflatten(leaves[at:at + n], sub)))
        at += n
    if kind == "dict":
        return typ((k, v) for k, v in parts) if typ is not dict else {k: v for k, v in parts}
    values = [v for _, v in parts]
    if typ is list:
        return values
    if typ is tuple:
        return tuple(values)
    return typ(*values)  # a namedtuple


def _is_plain(xs: Sequence[Any]) -> bool:
    return all(isinstance(x, Tensor) for x in xs)


def _flatten_args(args: tuple, nums: tuple, fn: str) -> tuple[list, list, list]:
    """The Tensors of the arguments at ``nums`` (each a Tensor or a pytree of them), in
    order, with each argument's tree structure and its number of leaves."""
    flat, specs, counts = [], [], []
    for n in nums:
        leaves, spec = _flatten(args[n])
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f"{fn}: the argument at argnums {n} must be a Tensor or a "
                                   f"pytree of Tensors; it holds a {type(leaf).__name__}")
        flat += leaves
        specs.append(spec)
        counts.append(len(leaves))
    return flat, specs, counts


def _unflatten_args(args: tuple, nums: tuple, specs: list, counts: list, leaves: tuple) -> list:
    """``args`` with the arguments at ``nums`` rebuilt from ``leaves`` (``_flatten_args``'s
    inverse)."""
    full, at = list(args), 0
    for n, spec, c in zip(nums, specs, counts):
        full[n] = _unflatten(leaves[at:at + c], spec)
        at += c
    return full


def tree_transforms(grad_t: Callable, value_and_grad_t: Callable, vjp_t: Callable,
                    jvp_t: Callable) -> tuple[Callable, ...]:
    """``func``'s Tensor transforms given torch's pytree arguments, ``has_aux`` and keyword
    arguments: returns (grad, value_and_grad, grad_and_value, vjp, jvp). Plain Tensor calls
    go straight to the Tensor transforms."""

    def value_and_grad(func: Callable, argnums: int | tuple[int, ...] = 0,
                       has_aux: bool = False) -> Callable:
        """``(value, grads)`` of a scalar ``func`` (``((value, aux), grads)`` with
        ``has_aux``), JAX's order; an argument at ``argnums`` may be a dict or other pytree
        of Tensors.

        >>> import duograd as dg
        >>> v, g = dg.func.value_and_grad(lambda p: (p["w"] ** 2).sum())({"w": dg.tensor([1.0, 2.0])})
        >>> float(v), g["w"].numpy()
        (5.0, array([2., 4.]))
        """
        def fn(*args: Any, **kwargs: Any) -> Any:
            nargs = len(args)
            nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
            if not nums or not all(isinstance(n, int) and -nargs <= n < nargs for n in nums):
                return value_and_grad_t(func, argnums)(*args)  # its error names the argnums
            nums = tuple(n % nargs for n in nums)
            if not has_aux and not kwargs and _is_plain([args[n] for n in nums]):
                return value_and_grad_t(func, argnums)(*args)
            flat, specs, counts = _flatten_args(args, nums, "grad")
            aux: list = []

            def on_leaves(*leaves: Tensor) -> Tensor:
                out = func(*_unflatten_args(args, nums, specs, counts, leaves), **kwargs)
                if has_aux:
                    if not (isinstance(out, tuple) and len(out) == 2):
                        raise RuntimeError("grad_and_value(f)(*args): output of function f should be "
                                           "a tuple: (output, aux) if has_aux is True")
                    out, a = out
                    aux.append(a)
                return out

            if flat:
                value, gs = value_and_grad_t(on_leaves, tuple(range(len(flat))))(*flat)
            else:
                value, gs = on_leaves(), ()
            grads, at = [], 0
            for spec, c in zip(specs, counts):
                grads.append(_unflatten(list(gs[at:at + c]), spec) if c or spec is not None
                             else None)
                at += c
            result = grads[0] if isinstance(argnums, int) else tuple(grads)
            return ((value, _detached(aux[0])) if has_aux else value), result
        return fn

    def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
        """The gradient of a scalar ``func`` (with ``has_aux``: ``(grads, aux)``); an
        argument at ``argnums`` may be a dict or other pytree of Tensors, and its gradient
        has the same structure.

        >>> import duograd as dg
        >>> g = dg.func.grad(lambda p, x: (p["w"] * x).sum())({"w": dg.tensor([1.0, 2.0])}, dg.tensor([3.0, 4.0]))
        >>> g["w"].numpy()
        array([3., 4.])
        """
        if not has_aux:
            plain = grad_t(func, argnums)
        vg = value_and_grad(func, argnums, has_aux)

        def fn(*args: Any, **kwargs: Any) -> Any:
            nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
            ok = bool(nums) and all(isinstance(n, int) and -len(args) <= n < len(args) for n in nums)
            if not has_aux and not kwargs and (not ok or _is_plain([args[n] for n in nums])):
                return plain(*args)
            value, g = vg(*args, **kwargs)
            return (g, value[1]) if has_aux else g
        return fn

    def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
        """``(func(*primals), vjp_fn)`` (and ``aux``), over pytrees of primals and outputs:
        ``vjp_fn`` takes cotangents shaped as the output and returns a tuple with one
        cotangent per primal, each shaped as its primal.

        >>> import duograd as dg
        >>> out, fn = dg.func.vjp(lambda p: {"y": p["a"] * 2}, {"a": dg.tensor([1.0, 2.0])})
        >>> fn({"y": dg.ones(2)})[0]["a"].numpy()
        array([2., 2.])
        """
        if not has_aux and _is_plain(primals):
            out, fn = vjp_t(func, *primals)
            if isinstance(out, Tensor) or isinstance(out, tuple) and _is_plain(out):
                return out, fn
        flat, specs, counts = [], [], []
        for p in primals:
            leaves, spec = _flatten(p)
            flat += leaves
            specs.append(spec)
            counts.append(len(leaves))
        box: dict = {}

        def on_leaves(*leaves: Tensor) -> tuple:
            full, at = [], 0
            for spec, c in zip(specs, counts):
                full.append(_unflatten(leaves[at:at + c], spec))
                at += c
            out = func(*full)
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                out, box["aux"] = out
            outs, box["spec"] = _flatten(out)
            for o in outs:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only "
                                       f"tensors, got unsupported type {type(o).__name__}")
            return tuple(outs)

        outs, fn_flat = vjp_t(on_leaves, *flat)
        out = _unflatten(list(outs), box["spec"])

        def vjp_fn(cotangents: Any) -> tuple:
            cts, spec = _flatten(cotangents)
            if len(cts) != len(outs):
                raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                                   f"pytree structure of outputs to the function: {len(cts)} "
                                   f"cotangents for {len(outs)} outputs")
            gs = fn_flat(tuple(cts))
            res, at = [], 0
            for spec_p, c in zip(specs, counts):
                res.append(_unflatten(list(gs[at:at + c]), spec_p))
                at += c
            return tuple(res)

        return (out, vjp_fn, _detached(box["aux"])) if has_aux else (out, vjp_fn)

    def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
            has_aux: bool = False) -> tuple:
        """``(func(*primals), J·tangents)`` (and ``aux``), over pytrees: ``primals`` and
        ``tangents`` are tuples of the same structure.

        >>> import duograd as dg
        >>> _, t = dg.func.jvp(lambda p: p["a"] ** 2, ({"a": dg.tensor([1.0, 3.0])},), ({"a": dg.ones(2)},))
        >>> t.numpy()
        array([2., 6.])
        """
        if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)) or \
                not has_aux and _is_plain(primals) and _is_plain(tangents):
            return jvp_t(func, primals, tangents)
        flat, spec = _flatten(tuple(primals))
        tflat, tspec = _flatten(tuple(tangents))
        if len(flat) != len(tflat) or repr(spec) != repr(tspec):
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                               "the same python structure")
        box: dict = {}

        def on_leaves(*leaves: Tensor) -> tuple:
            out = func(*_unflatten(list(leaves), spec))
            if has_aux:
                out, box["aux"] = out
            outs, box["spec"] = _flatten(out)
            return tuple(outs)

        outs, ts = jvp_t(on_leaves, tuple(flat), tuple(tflat))
        res = (_unflatten(list(outs), box["spec"]), _unflatten(list(ts), box["spec"]))
        return res + (_detached(box["aux"]),) if has_aux else res

    def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0,
                       has_aux: bool = False) -> Callable:
        """``(grads, value)`` of a scalar ``func``, as ``torch.func.grad_and_value``
        (``(grads, (value, aux))`` with ``has_aux``); pytree arguments as ``grad``.

        >>> import duograd as dg
        >>> g, v = dg.func.grad_and_value(lambda p: (p["w"] ** 2).sum())({"w": dg.tensor([1.0, 2.0])})
        >>> g["w"].numpy(), float(v)
        (array([2., 4.]), 5.0)
        """
        vg = value_and_grad(func, argnums, has_aux)

        def fn(*args: Any, **kwargs: Any) -> Any:
            value, g = vg(*args, **kwargs)
            return g, value
        return fn

    for ours, theirs in ((grad, grad_t), (value_and_grad, value_and_grad_t), (vjp, vjp_t),
                         (jvp, jvp_t)):
        ours.__wrapped__ = theirs  # the Tensor transform (its docstring's examples are tested too)
    return grad, value_and_grad, grad_and_value, vjp, jvp


def _detached(tree: Any) -> Any:
    leaves, spec = _flatten(tree)
    return _unflatten([x.detach() if isinstance(x, Tensor) else x for x in leaves], spec)


# ---------------------------------------------------------------- functional_call

def _child(obj: Any, name: str) -> Any:
    if isinstance(obj, Module):
        members = dict(obj._members())
        if name in members:
            return members[name]
        raise AttributeError(f"{type(obj).__name__} has no member {name!r}")
    if isinstance(obj, (list, tuple)):
        return obj[int(name)]
    raise AttributeError(f"{type(obj).__name__} has no member {name!r}")


_MISSING = object()


def _swap(module: Module, dotted: str, value: Any) -> tuple[Any, str, Any]:
    """Put ``value`` at ``dotted`` inside ``module``; returns what restores it."""
    *path, last = dotted.split(".")
    owner = module
    for p in path:
        owner = _child(owner, p)
    if isinstance(owner, list):
        i = int(last)
        old, owner[i] = owner[i], value
        return owner, last, old
    if isinstance(owner, tuple):
        raise TypeError(f"functional_call: cannot replace {dotted!r}, an entry of a tuple")
    old = owner.__dict__.get(last, _MISSING)
    owner.__dict__[last] = value
    return owner, last, old


def _restore(owner: Any, key: str, old: Any) -> None:
    if isinstance(owner, list):
        owner[int(key)] = old
    elif old is _MISSING:
        owner.__dict__.pop(key, None)
    else:
        owner.__dict__[key] = old


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with its parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a tuple/list of dicts with distinct keys)
    replaced for this call only, as ``torch.func.functional_call``.

    ``tie_weights``: a value given for one name of a tied parameter (one tensor under
    several names) stands for all of them. ``strict``: every parameter and buffer must be
    given, and nothing else.

    >>> import duograd as dg
    >>> from duograd import nn
    >>> from duograd.func import functional_call, grad
    >>> lin = nn.Linear(2, 1, rng=0)
    >>> params = {k: v.detach() for k, v in lin.named_parameters()}
    >>> loss = lambda p, x: functional_call(lin, p, (x,)).sum()
    >>> grad(loss)(params, dg.tensor([[1.0, 2.0]]))["weight"].numpy()
    array([[1., 2.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        given = {}
        seen: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            if not isinstance(d, dict):
                raise ValueError(f"Expected all elements of parameter_and_buffer_dicts to be "
                                 f"dictionaries, got {type(d).__name__}")
            for k in d:
                seen[k] = seen.get(k, 0) + 1
            given.update(d)
        dup = [k for k, c in seen.items() if c > 1]
        if dup:
            raise ValueError(f"{dup} appeared in multiple dictionaries; behavior of functional "
                             "call is ambiguous")
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    for k, v in given.items():
        if not isinstance(v, Tensor):
            raise TypeError(f"functional_call: the value for {k!r} is a {type(v).__name__}, not "
                            "a Tensor")
    named = list(module._walk("")) + list(module._walk("", buffers=True))
    names = [n for n, _ in named]
    groups: dict[int, list[str]] = {}
    for n, t in named:
        groups.setdefault(id(t), []).append(n)
    values = dict(given)
    if tie_weights:
        for group in groups.values():
            if len(group) < 2:
                continue
            hit = [n for n in group if n in given]
            if len({id(given[n]) for n in hit}) > 1:
                raise ValueError(f"functional_call got multiple values for keys {sorted(hit)}, "
                                 "which are tied. Consider using tie_weights=False")
            if hit:
                for n in group:
                    values[n] = given[hit[0]]
    if strict:
        unexpected = sorted(k for k in given if k not in names)
        missing = sorted(n for n in names if n not in values)
        if unexpected or missing:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError("\n".join(lines))
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    undo = []
    try:
        for k, v in values.items():
            undo.append(_swap(module, k, v))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, key, old in reversed(undo):
            _restore(owner, key, old)


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: each parameter and buffer of the same-shaped ``models``,
    stacked along a new leading dimension, as ``torch.func.stack_module_state``. The
    stacked parameters are new leaves (requiring grad as the originals did), detached
    from the models.

    >>> from duograd import nn
    >>> from duograd.func import stack_module_state
    >>> params, buffers = stack_module_state([nn.Linear(3, 2, rng=i) for i in range(4)])
    >>> params["weight"].shape, params["weight"].is_leaf, buffers
    ((4, 2, 3), True, {})
    """
    from .ops import stack
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    kind = type(models[0])
    if any(type(m) is not kind for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(per_model: list[dict[str, Tensor]], leaf: bool) -> dict[str, Tensor]:
        out = {}
        for k, first in per_model[0].items():
            for i, d in enumerate(per_model):
                if k not in d:
                    raise KeyError(k)
                if d[k].shape != first.shape:
                    raise RuntimeError(f"stack_module_state: '{k}' has shape {d[k].shape} in "
                                       f"model {i} but {first.shape} in model 0")
            t = stack([d[k].detach() for d in per_model])
            out[k] = t.requires_grad_(first.requires_grad) if leaf else t
        return out

    params = stacked([dict(m.named_parameters()) for m in models], True)
    buffers = stacked([dict(m.named_buffers()) for m in models], False)
    return params, buffers


# ---------------------------------------------------------------- pytree Jacobians

def tree_jacobians(jacrev_t: Callable, jacfwd_t: Callable) -> tuple[Callable, Callable]:
    """``jacrev`` and ``jacfwd`` given torch's pytree arguments and outputs (a dict of
    parameters, as the neural-tangent-kernel tutorial's ``jacrev(fnet_single)(params, x)``):
    each output leaf's Jacobian is shaped like the selected
    argument's tree, with blocks ``out.shape + leaf.shape``. As torch's, the result takes
    positional arguments only. Plain Tensor calls go straight to the Tensor transforms.

    >>> import duograd as dg
    >>> j = dg.func.jacrev(lambda p, x: p["w"] @ x)({"w": dg.ones(2, 3)}, dg.tensor([1.0, 2.0, 3.0]))
    >>> j["w"].shape
    (2, 2, 3)
    """

    def lift(jac_t: Callable, fn_name: str) -> Callable:
        def transform(func: Callable, argnums: int | tuple[int, ...] = 0, *targs: Any,
                      **tkw: Any) -> Callable:
            has_aux = bool(tkw.get("has_aux", targs[0] if targs else False))

            def fn(*args: Any) -> Any:
                nargs = len(args)
                nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
                if not nums or not all(isinstance(n, int) and -nargs <= n < nargs for n in nums):
                    return jac_t(func, argnums, *targs, **tkw)(*args)  # its error names them
                nums = tuple(n % nargs for n in nums)
                if _is_plain([args[n] for n in nums]):
                    return jac_t(func, argnums, *targs, **tkw)(*args)
                flat, specs, counts = _flatten_args(args, nums, fn_name)
                out_spec: list = []

                def on_leaves(*leaves: Tensor) -> Any:
                    res = func(*_unflatten_args(args, nums, specs, counts, leaves))
                    out, aux = res if has_aux and isinstance(res, tuple) and len(res) == 2 \
                        else (res, None)
                    if has_aux and not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(f"{fn_name}(f, ...)(*args): output of function f "
                                           "should be a tuple: (output, aux) if has_aux is True")
                    outs, spec = _flatten(out)
                    out_spec[:] = [spec]
                    outs = outs[0] if spec is None else tuple(outs)
                    return (outs, aux) if has_aux else outs
                res = jac_t(on_leaves, tuple(range(len(flat))), *targs, **tkw)(*flat)
                jac, aux = res if has_aux else (res, None)
                spec = out_spec[0]
                per_out = [jac] if spec is None else list(jac)
                shaped = []
                for blocks in per_out:  # blocks[k]: this output leaf by input leaf k
                    trees, at = [], 0
                    for s, c in zip(specs, counts):
                        trees.append(_unflatten(list(blocks[at:at + c]), s))
                        at += c
                    shaped.append(trees[0] if isinstance(argnums, int) else tuple(trees))
                result = shaped[0] if spec is None else _unflatten(shaped, spec)
                return (result, aux) if has_aux else result
            return fn
        transform.__doc__ = jac_t.__doc__
        transform.__name__ = transform.__qualname__ = fn_name
        transform.__wrapped__ = jac_t
        return transform

    return lift(jacrev_t, "jacrev"), lift(jacfwd_t, "jacfwd")

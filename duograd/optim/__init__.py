"""Optimizers with ``torch.optim``'s update formulas: ``SGD`` (momentum, Nesterov,
weight decay), ``Adam`` (with PyTorch's L2 ``weight_decay``), ``AdamW`` (decoupled weight
decay) and ``RMSprop``. Each formula is written in the order of operations PyTorch's
CPU kernels use, so float64 trajectories agree with ``torch.optim`` to round-off. Learning-rate schedules live in ``duograd.optim.lr_scheduler``.

Updates are plain NumPy on ``.data`` and nothing is recorded. The new values are written
into the parameter's own array, as ``torch.optim`` steps in place: a parameter made with
``dg.from_numpy`` shows each step in the array it shares. Gradients are never changed.

Inside ``dg.compile``, the steps of ``SGD``, ``Adam``, ``AdamW`` and ``RMSprop`` become part
of the program: their formulas are functions of arrays (``optim.foreach``) that the eager
step calls per parameter and a replay calls once per group on flat buffers, so the two
agree bit for bit; a replay reads each group's lr and other numbers afresh (a schedule
may change them between calls), and a change of the options that shape the update
(momentum or weight decay 0 or not, ``nesterov``, ``centered``, ``maximize``, the groups'
parameters) records again. The other optimizers' steps are host steps: a replay calls
``step()`` itself (``autograd.host``).

>>> import duograd as dg
>>> from duograd import optim
>>> w = dg.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.SGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.detach().numpy()
array([ 0.8, -1.6])
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

import numpy as np

from .. import _context as _ctx
from .._context import Host, Update
from .._versions import bump as _bump
from ..autograd import host
from .._tensor import Tensor, tensor  # public names; not `from .. import` (an import cycle)
from . import foreach
from .foreach import lerp_ as _lerp_

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam",
           "lr_scheduler",
           "Adadelta", "RAdam", "Rprop", "ASGD", "Adafactor", "Muon", "SparseAdam", "LBFGS"]



def _in_program(fn: Callable) -> Callable:
    """Mark an optimizer's ``step`` as one ``dg.compile`` turns into program kernels (an
    ``Update`` effect, ``foreach.FlatUpdate``), rather than a host step."""
    fn._in_program = True
    return fn


def _update(fn: Callable) -> Callable:
    """The wrapper of a ``_in_program`` step: outside a recording it is ``fn``; inside one,
    the call is recorded as an ``Update`` effect (with the gradients it reads and, as a
    guard, the options that shape the update) and runs eagerly, unrecorded."""
    @functools.wraps(fn)
    def step(self: "Optimizer", *args: Any, **kw: Any) -> Any:
        if not _ctx.on_effect:
            return fn(self, *args, **kw)
        if args or kw:  # (a closure): a host step
            _ctx.effect(Host(fn, (self, *args), kw))
        else:
            _ctx.attr(self, "_structure", self._structure)
            _ctx.effect(Update(self, fn, [p._grad for p in self.params]))
        with _ctx.unrecorded():
            return fn(self, *args, **kw)
    return step


@host  # inside dg.compile's fn (``opt.lr = lr``), a replay sets it again
def _set_lr(opt: "Optimizer", value: float) -> None:
    opt.param_groups[0]["lr"] = _check_lr(type(opt).__name__, value)


def _write(p: Tensor, base: np.ndarray, step: np.ndarray) -> None:
    """``p``'s values become ``base - step``, computed straight into ``p``'s own array (no
    temporary; a read-only array is replaced instead). Its version goes up, as torch.optim's
    in-place step bumps it (a graph that saved ``p`` before the step raises on backward)."""
    data = p._data
    if data.flags.writeable:
        np.subtract(base, step, out=data)
    else:
        p.data = base - step
    _bump(p._data)

class Optimizer:
    """What every optimizer shares, as ``torch.optim.Optimizer``: ``param_groups`` (a list
    of dicts, each with its ``"params"`` and its own options; ``params`` may be a list of
    such dicts, missing options taking the constructor's defaults), ``add_param_group``,
    ``state`` (per-parameter state under torch's names), ``state_dict()`` /
    ``load_state_dict()`` in torch's structure, and ``zero_grad(set_to_none=True)``.

    ``opt.lr`` is the first group's ``"lr"`` (read and written; with one group it is
    *the* lr). Every ``step`` reads the options afresh, so a schedule (or you) can change
    them between steps. Parameters whose ``.grad`` is None are skipped by ``step``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> b = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.1}], lr=0.5)
    >>> w.grad = dg.tensor([2.0]); b.grad = dg.tensor([2.0])
    >>> opt.lr = 0.25          # the first group's lr, used at the next step
    >>> opt.step(); opt.zero_grad()
    >>> w.detach().numpy(), b.detach().numpy(), w.grad
    (array([0.5]), array([0.8]), None)
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any] | float) -> None:
        name = type(self).__name__
        if not isinstance(defaults, dict):  # the old form Optimizer(params, lr)
            defaults = {"lr": defaults}
        if isinstance(params, Tensor):
            raise TypeError(f"{name}: params must be an iterable of Tensors (e.g. "
                            "model.parameters()), not a single Tensor")
        self.defaults = dict(defaults)
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError(f"{name}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group: a dict with ``"params"`` and any options (the others take the
        constructor's defaults). A parameter may belong to one group only.

        >>> import duograd as dg
        >>> from duograd import optim
        >>> opt = optim.SGD([dg.zeros(1, requires_grad=True)], lr=0.1)
        >>> opt.add_param_group({"params": [dg.zeros(2, requires_grad=True)], "lr": 0.01})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.01]
        """
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}: a param group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: parameter {i} is a {type(p).__name__}, not a Tensor")
            if id(p) in seen:
                raise ValueError(f"{name}: parameter {i} (shape {p.shape}) appears twice; "
                                 "it would be updated twice per step")
            seen.add(id(p))
        group = dict(param_group)
        group["params"] = params
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        group["lr"] = _check_lr(type(self).__name__, group["lr"])

    @property
    def params(self) -> list[Tensor]:
        """Every parameter of every group, in order."""
        return [p for g in self.param_groups for p in g["params"]]

    @property
    def lr(self) -> float:
        """The first group's learning rate (non-negative). Set inside a ``dg.compile``
        step, it is set again by every replay (a host step)."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        _set_lr(self, value)

    def __init_subclass__(cls, **kw: object) -> None:
        super().__init_subclass__(**kw)
        if "step" in cls.__dict__:  # a dg.compile replay calls step() itself (autograd.host),
            fn = cls.__dict__["step"]  # or runs it as program kernels (_in_program)
            cls.step = _update(fn) if getattr(fn, "_in_program", False) else host(fn)

    # ---------------------------------------------------------------- inside dg.compile
    # (for the optimizers whose step is _in_program; see optim.foreach)
    _counts: str | None = None  # step counts: "shared" in a bucket (Adam), "each", or None

    @property
    def _structure(self) -> tuple:
        """What shapes a compiled update (a replay's guard): per group, its parameters
        and the options that decide which formula runs (``_flags``)."""
        return tuple((tuple(map(id, g["params"])), self._flags(g)) for g in self.param_groups)

    def _flags(self, group: dict[str, Any]) -> tuple:
        return ()

    def _state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        """The state arrays a group's parameters have (flat buffers in a program)."""
        return ()

    def _flat_step(self, group: dict[str, Any], b: Any, t: float | None) -> float | None:
        """The group's update on bucket ``b``'s flat buffers (gradients in ``b.G``, already
        negated for ``maximize``): the step into ``b.S``; returns the factor the parameters
        are multiplied by before the step is subtracted (AdamW's decay), or None.

        Written once against the bucket's array namespace ``b.xp`` (``foreach.NP``: in
        place on the buffers; the XLA backend's: on JAX values, whose results are put back
        in ``b.S`` and ``b.state``), so the NumPy program and the XLA program run the same
        formula; its branches read only what ``_flags`` returns (a guard)."""
        raise NotImplementedError

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Set every parameter's ``.grad`` to None, or with ``set_to_none=False`` to zeros."""
        for p in self.params:
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = tensor(np.zeros_like(p.grad._data))

    def step(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _grads(self) -> list[tuple[dict[str, Any], Tensor, np.ndarray]]:
        """(group, parameter, gradient array) for each parameter that has a gradient, the
        gradient negated where the group says ``maximize``.

        Every gradient's shape is checked before any parameter moves, so a bad one
        leaves all parameters and optimizer state as they were."""
        out = []
        i = 0
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad  # (the fields, not the properties: this runs every step)
                if grad is not None:
                    g = grad._data
                    if g.shape != p._data.shape:
                        raise ValueError(f"{type(self).__name__}.step: parameter {i} has shape "
                                         f"{p.shape} but its .grad has shape {g.shape}")
                    out.append((group, p, -g if group.get("maximize") else g))
                i += 1
        return out

    def _state(self, p: Tensor) -> dict[str, Any]:
        return self.state.setdefault(p, {})

    # ------------------------------------------------------------ state dicts
    # torch's keys of a param group in torch's order, and the values of the ones this
    # library has no option for (what torch's constructor defaults them to)
    _torch_order: tuple[str, ...] = ()
    _torch_extras: dict[str, Any] = {}
    # extras that change no number on the CPU: any value loads
    _ignorable = ("foreach", "differentiable", "capturable")

    def state_dict(self) -> dict[str, Any]:
        """torch's layout: ``{"state": {index: {name: value}}, "param_groups": [{options,
        "params": [indices]}]}``, parameters numbered in group order. Values are Tensors
        (copies); ``step`` (and NAdam's ``mu_product``) is a 0-d Tensor, as torch keeps
        it, float64 under the default float64 (torch's rule: float32 when the default
        dtype is float32). Each group lists torch's options in torch's order, the ones
        this library lacks (``foreach``, ``fused``, ...) with torch's defaults, so
        ``torch.optim``'s ``load_state_dict`` takes it as it is.

        >>> import duograd as dg
        >>> from duograd import optim
        >>> w = dg.tensor([1.0], requires_grad=True)
        >>> opt = optim.Adam([w], lr=0.1)
        >>> w.grad = dg.tensor([1.0]); opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"][0]["step"], sorted(sd["state"][0]), sd["param_groups"][0]["params"]
        (tensor(1.), ['exp_avg', 'exp_avg_sq', 'step'], [0])
        """
        from .._tensor import get_default_dtype
        scalar = np.float64 if get_default_dtype() == np.float64 else np.float32
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed: dict[str, Any] = {}
            for k in self._torch_order:
                packed[k] = g[k] if k in g else self._torch_extras[k]
            for k, v in g.items():
                if k != "params" and k not in packed:
                    packed[k] = v
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {}
        for p in self.params:
            if p in self.state:
                state[index[id(p)]] = {k: _saved_value(k, v, scalar)
                                       for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()`` (this library's, a ``torch.optim`` optimizer's of the
        same kind, or either read back by ``dg.load``): the groups' options and each
        parameter's state, values as Tensors, torch tensors or arrays. The groups must
        match in number and sizes, each state fit its parameter, and torch's options this
        library lacks have a value it computes alike (``amsgrad=True`` or ``fused=True``
        does not): otherwise a ValueError, and nothing changes.

        >>> import duograd as dg
        >>> from duograd import optim
        >>> w = dg.tensor([1.0], requires_grad=True)
        >>> a = optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = dg.tensor([1.0]); a.step()
        >>> b = optim.SGD([w], lr=0.5, momentum=0.9)
        >>> b.load_state_dict(a.state_dict())
        >>> b.lr, b.state[w]["momentum_buffer"]
        (0.1, array([1.]))
        """
        name = type(self).__name__
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: loaded state dict has a different number "
                             f"of parameter groups ({len(groups)}, this optimizer has "
                             f"{len(self.param_groups)})")
        for g, mine in zip(groups, self.param_groups):
            if len(g["params"]) != len(mine["params"]):
                raise ValueError(f"{name}.load_state_dict: loaded state dict contains a parameter "
                                 f"group of {len(g['params'])} parameters where this optimizer's "
                                 f"has {len(mine['params'])}")
            for k, default in self._torch_extras.items():
                if k in g and k not in self._ignorable and g[k] != default:
                    raise ValueError(f"{name}.load_state_dict: the state dict's group has {k}="
                                     f"{g[k]!r}, which duograd's {name} does not implement "
                                     f"(it computes as {k}={default!r})")
        by_index = {}
        for g, mine in zip(groups, self.param_groups):
            for i, p in zip(g["params"], mine["params"]):
                by_index[i] = p
        new_state: dict[Tensor, dict[str, Any]] = {}
        for i, st in state_dict["state"].items():
            p = by_index[int(i)]
            new_state[p] = {k: _state_value(k, v, p) for k, v in st.items()}
        for g, mine in zip(groups, self.param_groups):
            for k, v in g.items():
                if k != "params" and k not in self._torch_extras:
                    mine[k] = tuple(v) if k == "betas" else v
        self.state = new_state


def _saved_value(key: str, value: Any, scalar: type) -> Any:
    """A state entry as ``state_dict`` gives it: arrays as Tensors (copies), the step
    counts as 0-d Tensors of torch's scalar dtype."""
    if key in ("step", "mu_product") and isinstance(value, (int, float)):
        return _leaf(np.array(value, scalar))
    if isinstance(value, np.ndarray):
        return _leaf(value.copy())
    return value


def _leaf(arr: np.ndarray) -> Tensor:
    from .._tensor import from_numpy
    return from_numpy(arr)


def _state_value(key: str, value: Any, p: Tensor) -> Any:
    """A loaded state entry: ``step`` (and NAdam's ``mu_product``) as a float, arrays in
    the parameter's dtype (torch tensors read without importing torch)."""
    if value is None:
        return None
    if isinstance(value, Tensor):
        value = value._data
    elif hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach().cpu().numpy()
    if key in ("step", "mu_product"):
        return float(np.asarray(value))
    arr = np.array(value, dtype=p.dtype)
    if arr.shape != p.shape:
        raise ValueError(f"load_state_dict: state '{key}' of shape {arr.shape} does not fit a "
                         f"parameter of shape {p.shape}")
    return arr


def _check_lr(name: str, value: Any) -> float:
    value = float(value)
    if not value >= 0.0:  # also rejects nan
        raise ValueError(f"{name}: invalid learning rate {value} (must be >= 0)")
    return value


def _check(name: str, label: str, value: float, lo: float, hi: float | None = None) -> float:
    value = float(value)
    ok = value >= lo and (hi is None or value < hi)
    if not ok:
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi})"
        raise ValueError(f"{name}: invalid {label} {value} (must be {rng})")
    return value


class SGD(Optimizer):
    """Stochastic gradient descent, with ``torch.optim.SGD``'s formulas:

    ``d = g + weight_decay * p`` (``g`` negated with ``maximize``); ``buf = d`` on a
    parameter's first step, afterwards ``buf = momentum * buf + (1 - dampening) * d``; the
    step direction is ``d + momentum * buf`` with ``nesterov``, else ``buf`` (or ``d``
    when ``momentum`` is 0); ``p = p - lr * direction``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w.detach().numpy().round(6)      # 1 - 0.2 = 0.8, then 0.8 - 0.1 * (0.9 * 2 + 1.6)
    array([0.46])
    """

    _torch_order = ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
                    "differentiable", "fused")
    _torch_extras = dict(foreach=None, differentiable=False, fused=None)

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 *, maximize: bool = False) -> None:
        if isinstance(dampening, bool):  # the old positional order (params, lr, momentum, nesterov)
            nesterov, dampening = dampening, 0.0
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=bool(nesterov),
                                      maximize=bool(maximize)))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for k in ("momentum", "dampening", "weight_decay"):
            group[k] = _check("SGD", k, group[k], 0.0)
        if group["nesterov"] and (group["momentum"] <= 0.0 or group["dampening"] != 0.0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")

    # (single-group attributes of the old interface, read from the first group)
    momentum = property(lambda self: self.param_groups[0]["momentum"])
    weight_decay = property(lambda self: self.param_groups[0]["weight_decay"])
    nesterov = property(lambda self: self.param_groups[0]["nesterov"])

    @_in_program
    def step(self) -> None:
        state, last = self.state, None
        for group, p, g in self._grads():
            if group is not last:  # (the group's options, read once per group)
                last, lr, mu, wd, damp = (group, group["lr"], group["momentum"],
                                          group["weight_decay"], group["dampening"])
            d = g + wd * p._data if wd != 0.0 else g
            if mu != 0.0:
                if type(d) is not np.ndarray:  # (a 0-d parameter: NumPy gave a scalar)
                    d = np.asarray(d)
                st = state.get(p)
                if st is None:
                    st = state[p] = {}
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = d.copy()
                    d = foreach.nesterov_direction(d, buf, mu) if group["nesterov"] else buf
                else:  # (the buffer is this optimizer's own array: updated in place)
                    d = foreach.sgd_momentum(d, buf, mu, damp, group["nesterov"])
            _write(p, p._data, lr * d)

    def _flags(self, group: dict[str, Any]) -> tuple:
        return (group["momentum"] != 0.0, group["dampening"] != 0.0, group["nesterov"],
                group["weight_decay"] != 0.0, bool(group.get("maximize")))

    def _state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("momentum_buffer",) if group["momentum"] != 0.0 else ()

    def _flat_step(self, group: dict[str, Any], b: Any, t: float | None) -> None:
        xp, lr, mu, wd = b.xp, group["lr"], group["momentum"], group["weight_decay"]
        d = b.G
        if wd != 0.0:
            d = xp.iadd(d, xp.mul(b.gather_params(), wd, b.T))
        if mu != 0.0:
            b.state["momentum_buffer"], d = foreach.sgd_momentum_(
                xp, d, b.state["momentum_buffer"], mu, group["dampening"], group["nesterov"], b.T)
        b.S = xp.mul(d, lr, b.S)
        return None


def _check_adam_group(opt: Optimizer, group: dict[str, Any]) -> None:
    """The options Adam, AdamW, Adamax and NAdam share."""
    group["lr"] = _check_lr(type(opt).__name__, group["lr"])
    name = type(opt).__name__
    b1, b2 = group["betas"]
    group["betas"] = (_check(name, "beta1", b1, 0.0, 1.0), _check(name, "beta2", b2, 0.0, 1.0))
    group["eps"] = _check(name, "eps", group["eps"], 0.0)
    group["weight_decay"] = _check(name, "weight_decay", group["weight_decay"], 0.0)


class Adam(Optimizer):
    """Adam, with ``torch.optim.Adam``'s formulas. At step t of a parameter:

    ``g = g + weight_decay * p`` (PyTorch's L2 form: the decay passes through the moments;
    see ``AdamW`` for the decoupled form), ``m = lerp(m, g, 1 - b1)``,
    ``v = b2 * v + (1 - b2) * g * g``, ``step_size = lr / (1 - b1**t)``,
    ``denom = sqrt(v) / sqrt(1 - b2**t) + eps``, ``p = p - step_size * m / denom``;
    ``maximize`` negates ``g``. State: ``step``, ``exp_avg``, ``exp_avg_sq``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0, -3.0], requires_grad=True)
    >>> opt = optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w.detach().numpy().round(6)      # the first step moves each coordinate by about lr
    array([ 0.9, -2.9])
    """

    _decoupled = False  # AdamW: decay the parameter itself, not the gradient

    _torch_order = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
                    "capturable", "differentiable", "fused", "decoupled_weight_decay")
    _torch_extras = dict(amsgrad=False, foreach=None, capturable=False, differentiable=False,
                         fused=None, decoupled_weight_decay=False)

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=bool(maximize)))

    def _check_group(self, group: dict[str, Any]) -> None:
        _check_adam_group(self, group)

    betas = property(lambda self: self.param_groups[0]["betas"])
    eps = property(lambda self: self.param_groups[0]["eps"])
    weight_decay = property(lambda self: self.param_groups[0]["weight_decay"])

    _counts = "shared"

    @_in_program
    def step(self) -> None:
        state, last = self.state, None
        for group, p, g in self._grads():
            if group is not last:  # (the group's options, read once per group)
                last, lr, (b1, b2), eps, wd = (group, group["lr"], group["betas"], group["eps"],
                                               group["weight_decay"])
            st = state.get(p)
            if not st:
                st = state[p] = dict(step=0.0, exp_avg=np.zeros_like(p._data),
                                     exp_avg_sq=np.zeros_like(p._data))
            t = st["step"] = st["step"] + 1
            param = p._data
            if wd != 0.0:
                if self._decoupled:
                    param = param * (1 - lr * wd)
                else:
                    g = g + wd * param
            # m and v are this optimizer's own arrays (never shared), so they are updated
            # in place (fewer temporaries per step), and so is the parameter.
            step = foreach.adam(st["exp_avg"], st["exp_avg_sq"], g, b1, b2, eps,
                                lr / (1 - b1 ** t), (1 - b2 ** t) ** 0.5)
            _write(p, param, step)

    def _flags(self, group: dict[str, Any]) -> tuple:
        return (group["weight_decay"] != 0.0, bool(group.get("maximize")))

    def _state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("exp_avg", "exp_avg_sq")

    def _flat_step(self, group: dict[str, Any], b: Any, t: float | None) -> float | None:
        xp, st = b.xp, b.state
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        factor = None
        if wd != 0.0:
            if self._decoupled:
                factor = 1 - lr * wd
            else:
                b.G = xp.iadd(b.G, xp.mul(b.gather_params(), wd, b.T))
        st["exp_avg"], st["exp_avg_sq"], b.S = foreach.adam_(
            xp, st["exp_avg"], st["exp_avg_sq"], b.G, b1, b2, eps, lr / (1 - b1 ** t),
            (1 - b2 ** t) ** 0.5, b.T, b.S)
        return factor


class AdamW(Adam):
    """Adam with decoupled weight decay, with ``torch.optim.AdamW``'s formulas: each step
    first shrinks the parameter, ``p = p * (1 - lr * weight_decay)``, then takes Adam's
    step (above) with the undecayed gradient. Note the default ``weight_decay=0.01``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0, -3.0], requires_grad=True)
    >>> opt = optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = dg.tensor([0.0, 0.0])   # no gradient: only the decay acts
    >>> opt.step()
    >>> w.detach().numpy()                           # times 1 - 0.1 * 0.5
    array([ 0.95, -2.85])
    """

    _torch_extras = dict(Adam._torch_extras, decoupled_weight_decay=True)
    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01, *, maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, maximize=maximize)


class RMSprop(Optimizer):
    """RMSprop, with ``torch.optim.RMSprop``'s formulas. At each step of a parameter:

    ``g = g + weight_decay * p``; ``s = alpha * s + (1 - alpha) * g * g``; with
    ``centered``, ``a = lerp(a, g, 1 - alpha)`` and ``avg = sqrt(s - a * a) + eps``, else
    ``avg = sqrt(s) + eps``; with ``momentum``, ``buf = momentum * buf + g / avg`` and
    ``p = p - lr * buf``, else ``p = p - lr * g / avg``. ``s``, ``a`` and ``buf`` start at 0.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.RMSprop([w], lr=0.01, alpha=0.99)
    >>> w.grad = dg.tensor([2.0])
    >>> opt.step()      # s = 0.01 * 4, so the step is 0.01 * 2 / (0.2 + 1e-8)
    >>> w.detach().numpy().round(9)
    array([0.9])
    """

    _torch_order = ("lr", "momentum", "alpha", "eps", "centered", "weight_decay", "capturable",
                    "foreach", "maximize", "differentiable")
    _torch_extras = dict(capturable=False, foreach=None, differentiable=False)

    def __init__(self, params: Iterable[Any], lr: float = 0.01, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=bool(centered),
                                      maximize=bool(maximize)))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for k in ("alpha", "eps", "momentum", "weight_decay"):
            group[k] = _check("RMSprop", k, group[k], 0.0)

    _counts = "each"

    @_in_program
    def step(self) -> None:
        state, last = self.state, None
        for group, p, g in self._grads():
            if group is not last:  # (the group's options, read once per group)
                last, lr, alpha, eps = group, group["lr"], group["alpha"], group["eps"]
                mu, wd, centered = group["momentum"], group["weight_decay"], group["centered"]
            st = state.get(p)
            if not st:
                st = state[p] = dict(step=0.0, square_avg=np.zeros_like(p._data))
                if mu > 0.0:
                    st["momentum_buffer"] = np.zeros_like(p._data)
                if centered:
                    st["grad_avg"] = np.zeros_like(p._data)
            st["step"] += 1
            if wd != 0.0:
                g = g + wd * p._data
            # (the state arrays are this optimizer's own: updated in place)
            step = foreach.rmsprop(st["square_avg"], g, lr, alpha, eps,
                                   st["grad_avg"] if centered else None,
                                   st["momentum_buffer"] if mu > 0.0 else None, mu)
            _write(p, p._data, step)

    def _flags(self, group: dict[str, Any]) -> tuple:
        return (group["centered"], group["momentum"] > 0.0, group["weight_decay"] != 0.0,
                bool(group.get("maximize")))

    def _state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return (("square_avg",) + (("grad_avg",) if group["centered"] else ())
                + (("momentum_buffer",) if group["momentum"] > 0.0 else ()))

    def _flat_step(self, group: dict[str, Any], b: Any, t: float | None) -> None:
        xp, st = b.xp, b.state
        wd, mu, centered = group["weight_decay"], group["momentum"], group["centered"]
        if wd != 0.0:
            b.G = xp.iadd(b.G, xp.mul(b.gather_params(), wd, b.T))
        s, a, buf, b.S = foreach.rmsprop_(
            xp, st["square_avg"], b.G, group["lr"], group["alpha"], group["eps"],
            st["grad_avg"] if centered else None, st["momentum_buffer"] if mu > 0.0 else None,
            mu, b.T, b.S)
        st["square_avg"] = s
        if centered:
            st["grad_avg"] = a
        if mu > 0.0:
            st["momentum_buffer"] = buf
        return None


class Adagrad(Optimizer):
    """Adagrad, with ``torch.optim.Adagrad``'s formulas. At step t of a parameter:
    ``g = g + weight_decay * p``; ``clr = lr / (1 + (t - 1) * lr_decay)``;
    ``sum = sum + g * g`` (starting at ``initial_accumulator_value``);
    ``p = p - clr * g / (sqrt(sum) + eps)``. State: ``step``, ``sum``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.Adagrad([w], lr=0.5)
    >>> w.grad = dg.tensor([2.0]); opt.step()
    >>> w.detach().numpy().round(6)      # 1 - 0.5 * 2 / 2
    array([0.5])
    """

    _torch_order = ("lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value", "foreach",
                    "maximize", "differentiable", "fused")
    _torch_extras = dict(foreach=None, differentiable=False, fused=None)

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps, maximize=bool(maximize)))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for k in ("lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            group[k] = _check("Adagrad", k, group[k], 0.0)

    def step(self) -> None:
        for group, p, g in self._grads():
            st = self._state(p)
            if not st:
                st.update(step=0.0, sum=np.full_like(p._data, group["initial_accumulator_value"]))
            t = st["step"] = st["step"] + 1
            if group["weight_decay"] != 0.0:
                g = g + group["weight_decay"] * p._data
            clr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
            acc = st["sum"]
            acc += g * g
            std = np.sqrt(acc)
            std += group["eps"]
            _write(p, p._data, (clr * g) / std)  # addcdiv's grouping: (value * g) / std


class Adamax(Optimizer):
    """Adamax (Adam with an infinity norm), with ``torch.optim.Adamax``'s formulas:
    ``m = lerp(m, g, 1 - b1)``; ``u = max(b2 * u, |g| + eps)``;
    ``p = p - (lr / (1 - b1**t)) * m / u``. State: ``step``, ``exp_avg``, ``exp_inf``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.Adamax([w], lr=0.1)
    >>> w.grad = dg.tensor([3.0]); opt.step()
    >>> w.detach().numpy().round(6)      # the first step moves by lr
    array([0.9])
    """

    _torch_order = ("lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable",
                    "capturable")
    _torch_extras = dict(foreach=None, differentiable=False, capturable=False)

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=bool(maximize)))

    def _check_group(self, group: dict[str, Any]) -> None:
        _check_adam_group(self, group)

    def step(self) -> None:
        for group, p, g in self._grads():
            (b1, b2), eps, wd = group["betas"], group["eps"], group["weight_decay"]
            st = self._state(p)
            if not st:
                st.update(step=0.0, exp_avg=np.zeros_like(p._data), exp_inf=np.zeros_like(p._data))
            t = st["step"] = st["step"] + 1
            if wd != 0.0:
                g = g + wd * p._data
            _lerp_(st["exp_avg"], g, 1 - b1)
            u = st["exp_inf"]
            u *= b2
            np.maximum(u, np.abs(g) + eps, out=u)
            clr = group["lr"] / (1 - b1 ** t)
            _write(p, p._data, (clr * st["exp_avg"]) / u)


class NAdam(Optimizer):
    """Adam with Nesterov momentum, with ``torch.optim.NAdam``'s formulas (momentum decay
    ``mu_t = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``, the running product of the
    mu's, and ``decoupled_weight_decay`` as AdamW's). State: ``step``, ``mu_product``,
    ``exp_avg``, ``exp_avg_sq``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.NAdam([w], lr=0.1)
    >>> w.grad = dg.tensor([3.0]); opt.step()
    >>> bool(0.85 < w.data[0] < 0.95)
    True
    """

    _torch_order = ("lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay",
                    "maximize", "foreach", "capturable", "differentiable")
    _torch_extras = dict(foreach=None, capturable=False, differentiable=False)

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=bool(decoupled_weight_decay),
                                      maximize=bool(maximize)))

    def _check_group(self, group: dict[str, Any]) -> None:
        _check_adam_group(self, group)
        group["momentum_decay"] = _check("NAdam", "momentum_decay", group["momentum_decay"], 0.0)

    def step(self) -> None:
        for group, p, g in self._grads():
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            st = self._state(p)
            if not st:
                st.update(step=0.0, mu_product=1.0, exp_avg=np.zeros_like(p._data),
                          exp_avg_sq=np.zeros_like(p._data))
            t = st["step"] = st["step"] + 1
            bias_correction2 = 1 - b2 ** t
            if wd != 0.0:
                if group["decoupled_weight_decay"]:
                    _write(p, p._data * (1 - lr * wd), np.zeros((), p.dtype))
                else:
                    g = g + wd * p._data
            md = group["momentum_decay"]
            mu = b1 * (1.0 - 0.5 * (0.96 ** (t * md)))
            mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * md)))
            mu_product = st["mu_product"] = st["mu_product"] * mu
            m, v = st["exp_avg"], st["exp_avg_sq"]
            _lerp_(m, g, 1 - b1)
            v *= b2
            sq = g * (1 - b2)
            sq *= g
            v += sq
            denom = np.sqrt(v / bias_correction2)
            denom += eps
            mu_product_next = mu_product * mu_next
            _write(p, p._data, ((lr * (1.0 - mu) / (1.0 - mu_product)) * g) / denom)
            _write(p, p._data, ((lr * mu_next / (1.0 - mu_product_next)) * m) / denom)


class Adadelta(Optimizer):
    """Adadelta, with ``torch.optim.Adadelta``'s formulas (``optim.foreach.adadelta``):
    ``g = g + weight_decay * p``; ``sq = rho * sq + (1 - rho) g²``; ``delta = sqrt(acc +
    eps) / sqrt(sq + eps) * g``; ``acc = rho * acc + (1 - rho) delta²``; ``p = p - lr *
    delta``. State: ``step``, ``square_avg``, ``acc_delta``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.Adadelta([w], lr=1.0, rho=0.0, eps=1e-6)
    >>> w.grad = dg.tensor([1.0]); opt.step()
    >>> w.detach().numpy().round(6)      # sqrt(1e-6) / sqrt(1 + 1e-6)
    array([0.999])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=bool(maximize), foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        group["rho"] = float(group["rho"])
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Adadelta: invalid rho value {group['rho']} (must be in [0, 1])")
        group["eps"] = _check("Adadelta", "epsilon value", group["eps"], 0.0)
        group["weight_decay"] = _check("Adadelta", "weight_decay value", group["weight_decay"], 0.0)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure(closure)
        for group, p, g in self._grads():
            st = self._state(p)
            if not st:
                st.update(step=0.0, square_avg=np.zeros_like(p._data),
                          acc_delta=np.zeros_like(p._data))
            st["step"] += 1
            if group["weight_decay"] != 0.0:
                g = g + group["weight_decay"] * p._data
            delta = foreach.adadelta(st["square_avg"], st["acc_delta"], g, group["rho"], group["eps"])
            _write(p, p._data, group["lr"] * delta)
        return loss


def _closure(closure: Callable[[], Any] | None) -> Any:
    """torch's ``step(closure)``: the closure (which recomputes the loss and calls
    ``backward``) runs with gradients enabled, before the update; its loss is returned."""
    if closure is None:
        return None
    from .. import enable_grad
    with enable_grad():
        return closure()


class RAdam(Optimizer):
    """Rectified Adam, with ``torch.optim.RAdam``'s formulas (``optim.foreach.radam``):
    Adam's moments, then an Adam step scaled by the variance rectification once
    ``rho_t > 5`` and a momentum-only step before; ``weight_decay`` is L2 (through the
    gradient) or, with ``decoupled_weight_decay``, AdamW's ``p = p * (1 - lr * wd)``.
    State: ``step``, ``exp_avg``, ``exp_avg_sq``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.RAdam([w], lr=0.1)
    >>> w.grad = dg.tensor([3.0]); opt.step()
    >>> w.detach().numpy().round(6)      # the first steps use the momentum alone: 1 - 0.1 * 3
    array([0.7])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=bool(maximize),
                                      decoupled_weight_decay=bool(decoupled_weight_decay),
                                      foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _check_group(self, group: dict[str, Any]) -> None:
        _check_adam_group(self, group)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure(closure)
        for group, p, g in self._grads():
            lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
            st = self._state(p)
            if not st:
                st.update(step=0.0, exp_avg=np.zeros_like(p._data), exp_avg_sq=np.zeros_like(p._data))
            t = st["step"] = st["step"] + 1
            base = p._data
            if wd != 0.0:
                if group["decoupled_weight_decay"]:
                    base = base * (1 - lr * wd)
                else:
                    g = g + wd * base
            _write(p, base, foreach.radam(st["exp_avg"], st["exp_avg_sq"], g, b1, b2,
                                          group["eps"], lr, t))
        return loss


class Rprop(Optimizer):
    """Resilient backpropagation, with ``torch.optim.Rprop``'s formulas
    (``optim.foreach.rprop``): each coordinate has its own step size (starting at ``lr``),
    multiplied by ``etas[1]`` while its gradient keeps its sign and by ``etas[0]`` when it
    flips (the gradient then counting as 0 for that step), kept in ``step_sizes``; the
    parameter moves by ``-sign(g) * size``. State: ``step``, ``prev``, ``step_size``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.Rprop([w], lr=0.1)
    >>> for _ in range(2):
    ...     w.grad = dg.tensor([5.0]); opt.step()
    >>> w.detach().numpy().round(6)      # 1 - 0.1 - 0.12
    array([0.78])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      maximize=bool(maximize), foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        em, ep = (float(e) for e in group["etas"])
        if not 0.0 < em < 1.0 < ep:
            raise ValueError(f"Rprop: invalid eta values {group['etas']} (must be 0 < etaminus "
                             "< 1 < etaplus)")
        group["etas"] = (em, ep)
        group["step_sizes"] = tuple(float(s) for s in group["step_sizes"])

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure(closure)
        for group, p, g in self._grads():
            (em, ep), (smin, smax) = group["etas"], group["step_sizes"]
            st = self._state(p)
            if not st:
                st.update(step=0.0, prev=np.zeros_like(p._data),
                          step_size=np.full_like(p._data, group["lr"]))
            st["step"] += 1
            _write(p, p._data, foreach.rprop(st["prev"], st["step_size"], g, em, ep, smin, smax))
        return loss


class ASGD(Optimizer):
    """Averaged SGD, with ``torch.optim.ASGD``'s formulas: ``g = g + weight_decay * p``;
    ``p = p * (1 - lambd * eta) - eta * g``; the average ``ax`` follows ``p`` (``ax = ax +
    (p - ax) * mu``, or ``ax = p`` while ``mu`` is 1); then ``eta = lr / (1 + lambd * lr *
    t) ** alpha`` and ``mu = 1 / max(1, t - t0)``. State: ``step``, ``eta``, ``mu``, ``ax``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([1.0], requires_grad=True)
    >>> opt = optim.ASGD([w], lr=0.1, lambd=0.0)
    >>> w.grad = dg.tensor([2.0]); opt.step()
    >>> w.detach().numpy().round(6), opt.state[w]["ax"].round(6)
    (array([0.8]), array([0.8]))
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0.0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=bool(maximize),
                                      foreach=foreach, differentiable=differentiable,
                                      capturable=capturable))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        group["weight_decay"] = _check("ASGD", "weight_decay value", group["weight_decay"], 0.0)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure(closure)
        for group, p, g in self._grads():
            lr, lambd, wd = group["lr"], group["lambd"], group["weight_decay"]
            st = self._state(p)
            if not st:
                st.update(step=0.0, eta=float(lr), mu=1.0, ax=np.zeros_like(p._data))
            t = st["step"] = st["step"] + 1
            if wd != 0.0:
                g = g + wd * p._data
            eta = st["eta"]
            _write(p, p._data * (1 - lambd * eta), eta * g)
            ax = st["ax"]
            if st["mu"] != 1:
                ax += (p._data - ax) * st["mu"]
            else:
                ax[...] = p._data
            st["eta"] = lr / ((1 + lambd * lr * t) ** group["alpha"])
            st["mu"] = 1 / max(1, t - group["t0"])
        return loss


class Adafactor(Optimizer):
    """Adafactor, with ``torch.optim.Adafactor``'s formulas (``optim.foreach.adafactor``):
    the second moment of a matrix (or of each matrix of a stack) factored into a row and
    a column average, ``beta2_t = 1 - t ** beta2_decay``, the relative step ``rho_t =
    min(lr, 1 / sqrt(t))`` scaled by the parameter's RMS (at least ``eps[1]``), the update
    clipped to RMS ``d``; ``weight_decay`` is decoupled (``p = p * (1 - lr * wd)``).
    ``eps[0]`` None means the dtype's machine epsilon. State: ``step``, and ``row_var``
    and ``col_var`` or ``variance``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([3.0, 4.0], requires_grad=True)
    >>> opt = optim.Adafactor([w], lr=0.01)
    >>> w.grad = dg.tensor([1.0, -1.0]); opt.step()
    >>> w.detach().numpy().round(6)      # moved by lr * RMS(w) = 0.01 * 3.5355
    array([2.964645, 4.035355])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=tuple(eps), d=d,
                                      weight_decay=weight_decay, maximize=bool(maximize),
                                      foreach=foreach))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        if not 0.0 >= group["beta2_decay"]:
            raise ValueError(f"Adafactor: beta2_decay should be <= 0 but is: {group['beta2_decay']}")
        e1, e2 = group["eps"]
        if e1 is not None and not 0.0 <= e1:
            raise ValueError(f"Adafactor: epsilon1 should be >= 0 but is: {e1}")
        if not 0.0 <= e2:
            raise ValueError(f"Adafactor: epsilon2 should be >= 0 but is: {e2}")
        if not 1.0 <= group["d"]:
            raise ValueError(f"Adafactor: clipping threshold d should be >= 1 but is: {group['d']}")
        group["weight_decay"] = _check("Adafactor", "weight_decay", group["weight_decay"], 0.0)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure(closure)
        for group, p, g in self._grads():
            lr, wd = group["lr"], group["weight_decay"]
            e1, e2 = group["eps"]
            if e1 is None:
                e1 = float(np.finfo(p._data.dtype).eps)
            st = self._state(p)
            if not st:
                st["step"] = 0.0
                if g.ndim > 1:
                    st["row_var"] = np.zeros(g.shape[:-1] + (1,), p._data.dtype)
                    st["col_var"] = np.zeros(g.shape[:-2] + (1, g.shape[-1]), p._data.dtype)
                else:
                    st["variance"] = np.zeros_like(p._data)
            t = st["step"] = st["step"] + 1
            alpha, update = foreach.adafactor(st, p._data, g, lr, group["beta2_decay"], e1, e2,
                                              group["d"], t)
            base = p._data * (1 - lr * wd) if wd != 0.0 else p._data
            _write(p, base, alpha * update)
        return loss


class Muon(Optimizer):
    """Muon (momentum, then an orthogonalised update), with ``torch.optim.Muon``'s
    formulas: ``buf = lerp(buf, g, 1 - momentum)``; the update ``lerp(g, buf, momentum)``
    with ``nesterov`` (else ``buf``) orthogonalised by ``ns_steps`` Newton–Schulz
    iterations in bfloat16 (``optim.foreach.newton_schulz``); ``p = p * (1 - lr * wd) -
    lr' * update``, where ``lr'`` is ``lr`` scaled by ``adjust_lr_fn`` ("original":
    ``sqrt(max(1, rows / cols))``; "match_rms_adamw": ``0.2 * sqrt(max(rows, cols))``).
    Only 2-D parameters. State: ``momentum_buffer``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.zeros((2, 2), requires_grad=True)
    >>> opt = optim.Muon([w], lr=0.1)
    >>> w.grad = dg.eye(2); opt.step()
    >>> w.detach().numpy()   # -lr * 1.125 on the diagonal (bfloat16's Newton–Schulz)
    array([[-0.1125,  0.    ],
           [ 0.    , -0.1125]])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=bool(nesterov),
                                      ns_coefficients=tuple(ns_coefficients), eps=eps,
                                      ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for p in self.params:
            if p.ndim != 2:
                raise ValueError("Muon only supports 2D parameters whereas we found a parameter "
                                 f"with size: {tuple(p.shape)}")

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        group["momentum"] = _check("Muon", "momentum", group["momentum"], 0.0)
        group["weight_decay"] = _check("Muon", "weight decay", group["weight_decay"], 0.0)
        if group["adjust_lr_fn"] not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Muon: adjust learning rate function {group['adjust_lr_fn']} is "
                             "not supported")
        if group["ns_steps"] >= 100:
            raise ValueError("Muon: number of steps must be less than 100")
        if len(group["ns_coefficients"]) != 3:
            raise ValueError("Muon: coefficients must be a tuple of exactly 3 values")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure(closure)
        for group, p, g in self._grads():
            lr, mu = group["lr"], group["momentum"]
            st = self._state(p)
            if not st:
                st["momentum_buffer"] = np.zeros_like(p._data)
            buf = st["momentum_buffer"]
            _lerp_(buf, g, 1 - mu)
            if group["nesterov"]:
                update = g.copy()
                _lerp_(update, buf, mu)
            else:
                update = buf
            update = foreach.newton_schulz(update, group["ns_coefficients"], group["ns_steps"],
                                           group["eps"])
            A, B = p.shape[:2]
            fn = group["adjust_lr_fn"]
            ratio = (max(1, A / B) ** 0.5 if fn in (None, "original")
                     else 0.2 * max(A, B) ** 0.5)
            _write(p, p._data * (1 - lr * group["weight_decay"]),
                   (lr * ratio) * update.astype(p._data.dtype))
        return loss


class SparseAdam(Optimizer):
    """Not supported: ``torch.optim.SparseAdam`` takes sparse gradients (``Embedding(...,
    sparse=True)``), and duograd has no sparse layouts. Building one raises
    ``NotImplementedError``; ``Adam`` gives the same updates on dense gradients.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> optim.SparseAdam([dg.zeros(1, requires_grad=True)])
    Traceback (most recent call last):
    ...
    NotImplementedError: SparseAdam: sparse gradients are not supported (duograd has no sparse layouts); use Adam
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        raise NotImplementedError("SparseAdam: sparse gradients are not supported (duograd has "
                                  "no sparse layouts); use Adam")


# ---------------------------------------------------------------- L-BFGS
# limited-memory BFGS on all parameters as one flat vector, with torch.optim.LBFGS's
# algorithm: the two-loop recursion over the last history_size curvature pairs, a first step
# of min(1, 1 / |g|_1) * lr, its stopping tests and, with line_search_fn="strong_wolfe", the
# cubic-interpolation line search with the strong Wolfe conditions.

def _cubic_min(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
               bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to
    ``bounds`` (default: between the two points); their midpoint if it has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_sq = d1 ** 2 - g1 * g2
    if d2_sq < 0:
        return (lo + hi) / 2.0
    d2 = d2_sq ** 0.5
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def _strong_wolfe(evaluate: Callable[[float], tuple[float, np.ndarray]], t: float,
                  d: np.ndarray, f: float, g: np.ndarray, gtd: float, c1: float = 1e-4,
                  c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, np.ndarray, float, int]:
    """A step ``t`` along ``d`` satisfying the strong Wolfe conditions (bracketing, then
    zooming by cubic interpolation); returns ``(loss, flat gradient, t, evaluations)``."""
    d_norm = float(np.max(np.abs(d)))
    g = g.copy()
    f_new, g_new = evaluate(t)
    evals, gtd_new = 1, float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done, it = False, 0
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            br, br_f, br_g, br_gtd, done = [t], [f_new], [g_new], [gtd_new], True
            break
        if gtd_new >= 0:
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        lo, hi = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new @ d)
        it += 1
    if it == max_ls:
        br, br_f, br_g, br_gtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]
    insufficient = False
    low, high = (0, 1) if br_f[0] <= br_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(br[1] - br[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1])
        top, bottom = max(br), min(br)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new @ d)
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= br_f[low]:
            br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if br_f[0] <= br_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br[high] - br[low]) >= 0:
                br[high], br_f[high], br_g[high], br_gtd[high] = br[low], br_f[low], br_g[low], br_gtd[low]
            br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new.copy(), gtd_new
    return br_f[low], br_g[low], br[low], evals


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS`` (see the module docstring): one parameter group
    only; ``max_eval`` defaults to ``max_iter * 5 // 4``; ``step(closure)`` returns the
    closure's first loss. State (under the first parameter, as torch): ``func_evals``,
    ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``,
    ``prev_flat_grad``, ``prev_loss``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([0.0], requires_grad=True)
    >>> opt = optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 2.0) ** 4).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> bool(abs(w.item() - 2.0) < 0.05)
    True
    """

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p._data.size, p._data.dtype) if p._grad is None
                               else p._grad._data.reshape(-1) for p in self._params])

    def _add(self, t: float, d: np.ndarray) -> None:
        """Every parameter moves by ``t * d`` (its slice), in place."""
        o = 0
        for p in self._params:
            n = p._data.size
            _write(p, p._data, -(t * d[o:o + n]).reshape(p._data.shape))
            o += n

    def _set(self, saved: list[np.ndarray]) -> None:
        for p, x in zip(self._params, saved):
            _write(p, x, np.zeros((), p._data.dtype))

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """One L-BFGS step (up to ``max_iter`` iterations); ``closure`` is required."""
        if closure is None:
            raise RuntimeError("LBFGS.step: a closure that reevaluates the model and returns "
                               "the loss is required")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search, history = group["line_search_fn"], group["history_size"]
        state = self._state(self._params[0])
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = _closure(closure)
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if np.max(np.abs(g)) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        dirs, stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_g = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, dirs, stps, ro, H_diag = -g, [], [], [], 1
            else:
                y, s = g - prev_g, d * t
                ys = float(y @ s)
                if ys > 1e-10:
                    if len(dirs) == history:
                        dirs.pop(0)
                        stps.pop(0)
                        ro.pop(0)
                    dirs.append(y)
                    stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / float(y @ y)
                al = state.setdefault("al", [None] * history)
                q = -g
                for i in range(len(dirs) - 1, -1, -1):
                    al[i] = float(stps[i] @ q) * ro[i]
                    q = q + (-al[i]) * dirs[i]
                d = q * H_diag
                for i in range(len(dirs)):
                    be = float(dirs[i] @ d) * ro[i]
                    d += (al[i] - be) * stps[i]
            prev_g = g.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(np.sum(np.abs(g)))) * lr if state["n_iter"] == 1 else lr
            gtd = float(g @ d)
            if gtd > -tol_change:
                break
            ls_evals = 0
            if line_search is not None:
                if line_search != "strong_wolfe":
                    raise RuntimeError("LBFGS: only 'strong_wolfe' is supported")
                x0 = [p._data.copy() for p in self._params]

                def evaluate(step: float, x0: list = x0, d: np.ndarray = d) -> tuple[float, np.ndarray]:
                    self._add(step, d)
                    value = float(_closure(closure))
                    flat = self._flat_grad()
                    self._set(x0)
                    return value, flat

                loss, g, t, ls_evals = _strong_wolfe(evaluate, t, d, loss, g, gtd,
                                                     max_ls=max_eval - evals)
                self._add(t, d)
                opt_cond = np.max(np.abs(g)) <= tol_grad
            else:
                self._add(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(_closure(closure))
                    g = self._flat_grad()
                    opt_cond = np.max(np.abs(g)) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if np.max(np.abs(d * t)) <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=dirs, old_stps=stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_g, prev_loss=prev_loss)
        return orig_loss

from . import lr_scheduler  # noqa: E402  (it refers to Optimizer)

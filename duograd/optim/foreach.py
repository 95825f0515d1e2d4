"""The update formulas as functions of arrays, and the optimizer inside a ``dg.compile``
program.

Each converted optimizer's arithmetic is one function of NumPy arrays here (``adam``,
``sgd_momentum``, ``rmsprop``), with torch's order of operations. The eager ``step()``
calls it once per parameter, on the parameter's own arrays; a compiled program calls it
once per parameter group and dtype, on flat buffers that hold every parameter of the
group end to end (``FlatUpdate``), as torch's ``foreach`` optimizers take all parameters
at once. The formulas are elementwise, so one call on the flat buffer gives every element
the same bits as the calls per parameter: compiled and eager agree bit for bit by
construction.

``FlatUpdate`` is what ``opt.step()`` becomes in a program (a ``_context.Update`` effect,
lowered by ``capture.lowering.Builder.update``). Per replay it

1. reads each parameter's gradient from the replay's held-back ``.grad`` writes (or the
   ``.grad`` the step did not write), and each group's lr, betas, eps, ... afresh, so a
   schedule that changes them between calls (or inside the step) keeps replaying;
2. checks that the state is where it left it: the optimizer's state arrays are views of
   its flat buffers (``opt.state[p]["exp_avg"]`` *is* a slice of one buffer). State
   replaced since (``load_state_dict``, a recheck's rollback, another program) is copied
   into the buffers and the views put back; state it cannot take over (a missing entry,
   Adam's step counts differing within a group) or a gradient that is missing, of another
   shape or dtype makes this call run the eager ``step()`` instead (a host step);
3. gathers the gradients into the flat buffer (one copy per parameter), runs the formula
   once per buffer, and writes each parameter in place (``p - step``, its version bumped
   per parameter as torch does). Parameters keep their own arrays (``p.data`` is
   unchanged, a ``from_numpy`` parameter keeps sharing its array).

What decides the program's shape (which options are 0, ``nesterov``, ``centered``,
``maximize``, the parameters of each group) is guarded (``Optimizer._structure``): a
change records again.

>>> import numpy as np
>>> m, v = np.zeros(2), np.zeros(2)
>>> adam(m, v, np.array([1.0, -2.0]), 0.9, 0.999, 1e-8, 0.1 / (1 - 0.9), (1 - 0.999) ** 0.5)
array([ 0.1, -0.1])
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._versions import bump as _bump

_MISSING = object()
# (module-level names and positional ``out``: the eager step calls these per parameter,
# and this spelling costs no more than the operators)
_add, _sub, _mul, _div, _sqrt = np.add, np.subtract, np.multiply, np.divide, np.sqrt


def _out(x: Any) -> np.ndarray | None:
    """``x`` as an ``out=`` argument: NumPy gives a scalar, not an array, for the result on
    0-d arrays (a 0-d parameter), and a scalar cannot be written into."""
    return x if type(x) is np.ndarray else None


def lerp_(start: np.ndarray, end: np.ndarray, weight: float, tmp: np.ndarray | None = None) -> None:
    """``torch.lerp`` into ``start``, in place, with its two formulas (the one chosen by
    the weight keeps round-off small); ``tmp``, if given, holds the difference.

    >>> a = np.zeros(2); lerp_(a, np.ones(2), 0.25); a
    array([0.25, 0.25])
    """
    d = _sub(end, start, tmp)
    if abs(weight) < 0.5:
        d *= weight
        start += d
    else:
        d *= 1 - weight
        _sub(end, d, start)


def adam(m: np.ndarray, v: np.ndarray, g: np.ndarray, b1: float, b2: float, eps: float,
         step_size: float, root_bc2: float, tmp: np.ndarray | None = None,
         out: np.ndarray | None = None) -> np.ndarray:
    """Adam's moments updated in place and its step returned: ``m = lerp(m, g, 1 - b1)``,
    ``v = b2 * v + ((1 - b2) * g) * g``, ``step = (step_size * m) / (sqrt(v) / root_bc2 +
    eps)`` (``step_size = lr / (1 - b1**t)``, ``root_bc2 = (1 - b2**t) ** 0.5``), each
    product grouped as PyTorch's kernels group it (lerp, addcmul, addcdiv).

    >>> m, v = np.zeros(1), np.zeros(1)
    >>> adam(m, v, np.array([2.0]), 0.9, 0.999, 0.0, 1.0 / 0.1, 0.001 ** 0.5)
    array([1.])
    """
    lerp_(m, g, 1 - b1, tmp)
    v *= b2
    sq = _mul(g, 1 - b2, tmp)
    sq *= g
    v += sq
    denom = _sqrt(v, tmp)
    denom /= root_bc2
    denom += eps
    step = _mul(m, step_size, out)
    step /= denom
    return step


def sgd_momentum(d: np.ndarray, buf: np.ndarray, mu: float, damp: float, nesterov: bool,
                 tmp: np.ndarray | None = None) -> np.ndarray:
    """SGD's momentum buffer updated in place, ``buf = mu * buf + (1 - damp) * d``, and
    the direction returned: ``d + mu * buf`` with ``nesterov``, else ``buf``.

    >>> buf = np.ones(1); sgd_momentum(np.array([2.0]), buf, 0.5, 0.0, False), buf
    (array([2.5]), array([2.5]))
    """
    buf *= mu
    buf += d if damp == 0.0 else _mul(d, 1 - damp, tmp)
    return nesterov_direction(d, buf, mu, tmp) if nesterov else buf


def nesterov_direction(d: np.ndarray, buf: np.ndarray, mu: float,
                       tmp: np.ndarray | None = None) -> np.ndarray:
    """``d + mu * buf``."""
    t = _mul(buf, mu, tmp)
    return _add(d, t, _out(t))


def rmsprop(s: np.ndarray, g: np.ndarray, lr: float, alpha: float, eps: float,
            a: np.ndarray | None = None, buf: np.ndarray | None = None, mu: float = 0.0,
            tmp: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """RMSprop's state updated in place and its step returned: ``s = alpha * s + ((1 -
    alpha) * g) * g``; with ``a`` (centered) ``a = lerp(a, g, 1 - alpha)`` and ``avg =
    sqrt(s - a * a) + eps``, else ``avg = sqrt(s) + eps``; with ``buf`` (momentum) ``buf =
    mu * buf + g / avg`` and the step ``lr * buf``, else ``(lr * g) / avg``.

    >>> rmsprop(np.zeros(1), np.array([2.0]), 0.01, 0.99, 0.0)
    array([0.1])
    """
    s *= alpha
    sq = _mul(g, 1 - alpha, tmp)
    sq *= g
    s += sq
    if a is not None:
        lerp_(a, g, 1 - alpha, tmp)
        avg = _mul(a, a, tmp)
        avg = _sub(s, avg, _out(avg))
        avg = _sqrt(avg, _out(avg))
    else:
        avg = _sqrt(s, tmp)
    avg += eps
    if buf is not None:
        buf *= mu
        buf += _div(g, avg, _out(avg))
        return _mul(buf, lr, out)
    step = _mul(g, lr, out)
    step /= avg
    return step


class Bucket:
    """The parameters of one group and one dtype that have a gradient: flat buffers for
    the gradients (``G``), two temporaries (``T``, ``S``: the step), each state array
    (``state[name]``) and the parameters (made when a formula reads them:
    ``gather_params``), and the per-parameter views of each."""

    def __init__(self, index: int, params: list, names: tuple[str, ...], dtype: np.dtype) -> None:
        # (the group by its index: a rollback or load_state_dict may replace the dicts)
        self.index, self.params, self.names, self.dtype = index, params, names, dtype
        self.shapes = [p._data.shape for p in params]
        self.spans, o = [], 0
        for p in params:
            self.spans.append((o, o + p._data.size))
            o += p._data.size
        self.G, self.T, self.S = np.empty(o, dtype), np.empty(o, dtype), np.empty(o, dtype)
        self.state = {k: np.empty(o, dtype) for k in names}  # (filled when taken over)
        self.gv, self.sv = self.views(self.G), self.views(self.S)
        self.sts: list = [None] * len(params)  # the parameters' state dicts (prepare)
        self.homes = [self.views(self.state[k]) for k in names]

    def views(self, flat: np.ndarray) -> list[np.ndarray]:
        return [flat[a:b].reshape(shape) for (a, b), shape in zip(self.spans, self.shapes)]

    @functools.cached_property
    def tv(self) -> list[np.ndarray]:
        return self.views(self.T)

    @functools.cached_property
    def pv(self) -> tuple[np.ndarray, list[np.ndarray]]:
        P = np.empty(self.G.size, self.dtype)
        return P, self.views(P)

    def gather_params(self) -> np.ndarray:
        P, views = self.pv
        for v, p in zip(views, self.params):
            np.copyto(v, p._data)
        return P


class FlatUpdate:
    """One optimizer's ``step()`` inside a compiled program (see the module docstring).
    ``prepare(pending)`` gathers the gradients (False: run the eager step instead),
    ``save(replay)`` snapshots what ``run`` writes, ``run()`` updates in place."""

    def __init__(self, opt: Any, specs: list[tuple], write: Any, absent: list) -> None:
        # the buckets' (group index, parameters, state names, dtype); their buffers are
        # made at the first replay (the recording call does not pay for them)
        self.opt, self.specs, self._write = opt, specs, write
        self.buckets: list[Bucket] = []
        self.absent = absent  # the parameters that had no gradient (and must have none)
        # "shared": one step count per bucket (Adam's bias corrections read it); "each": a
        # count per parameter (RMSprop); None: no count (SGD)
        self.counts = opt._counts
        self.stateless = all(not names for _, _, names, _ in specs) and self.counts is None

    @classmethod
    def plan(cls, opt: Any, grads: list, write: Any) -> "FlatUpdate | None":
        """The plan for ``opt``, whose parameters had the gradients ``grads`` (Tensors or
        None, in group order) when the recording stepped it; None when its parameters
        cannot share flat buffers (a gradient of another dtype or shape, a non-float dtype,
        two parameters sharing memory)."""
        buckets, absent = [], []
        it = iter(grads)
        roots: set[int] = set()
        for index, group in enumerate(opt.param_groups):
            names = opt._state_names(group)
            by_dtype: dict = {}
            for p in group["params"]:
                g = next(it)
                if g is None:
                    absent.append(p)
                    continue
                d, gd = p._data, g._data
                if gd.shape != d.shape or gd.dtype != d.dtype or d.dtype.kind != "f":
                    return None
                root = d
                while isinstance(root.base, np.ndarray):
                    root = root.base
                if id(root) in roots:
                    return None
                roots.add(id(root))
                by_dtype.setdefault(d.dtype, []).append(p)
            buckets += [(index, ps, names, dt) for dt, ps in by_dtype.items()]
        return cls(opt, buckets, write, absent)

    def prepare(self, pending: dict) -> bool:
        """Gather each bucket's gradients into its flat buffer and check that the state
        is in the buckets' views (taking over state that was replaced); False when this
        call must run the eager step instead (nothing the user sees has changed then)."""
        state, counts = self.opt.state, self.counts
        if not self.buckets and self.specs:
            self.buckets = [Bucket(*spec) for spec in self.specs]
        for p in self.absent:
            t = pending.get(p, _MISSING)
            if (p._grad if t is _MISSING else t) is not None:
                return False
        for b in self.buckets:
            dt = b.dtype
            for p, shape, v in zip(b.params, b.shapes, b.gv):
                t = pending.get(p, _MISSING)
                if t is _MISSING:
                    t = p._grad
                if t is None:
                    return False
                d = t._data
                if d.shape != shape or (d.dtype is not dt and d.dtype != dt):
                    return False
                np.copyto(v, d)
            if self.stateless:
                continue
            sts = b.sts
            step = _MISSING
            for i, p in enumerate(b.params):
                st = sts[i] = state.get(p)
                if st is None:
                    return False
                if counts is not None:
                    t = st.get("step")
                    if t is None:
                        return False
                    if counts == "shared":
                        if step is _MISSING:
                            step = t
                        elif t != step:
                            return False
                for name, homes in zip(b.names, b.homes):
                    arr = st.get(name)
                    if arr is not homes[i]:
                        if arr is None or np.shape(arr) != b.shapes[i]:
                            return False
                        np.copyto(homes[i], arr)  # taken over: the same values, in the buffer
                        st[name] = homes[i]
        return True

    def save(self, replay: Any) -> None:
        """Snapshot what ``run`` changes into the replay's undo lists (a later failure in
        the replay puts it back): parameter values, the flat state, the state entries."""
        opt = self.opt
        state = opt.state
        entries = [(p, state[p], dict(state[p])) for b in self.buckets for p in b.params if p in state]

        def restore() -> None:
            opt.state = state
            for p, st, saved in entries:
                st.clear()
                st.update(saved)
                state[p] = st
        if replay.snapshots is None:
            replay.snapshots = []
        replay.snapshots.append(restore)
        for b in self.buckets:
            for arr in b.state.values():
                replay.copies.append((arr, arr.copy()))
            for p in b.params:
                d = p._data
                replay.undo.append((p, d))
                replay.copies.append((d, d.copy()))

    def run(self) -> None:
        """The update, once ``prepare`` said yes: the formula on each bucket's flat buffers,
        each parameter written in place (its version bumped), the step counts advanced."""
        opt, write = self.opt, self._write
        counts, groups = self.counts, opt.param_groups
        for b in self.buckets:
            group = groups[b.index]
            if group.get("maximize"):
                np.negative(b.G, out=b.G)
            t = b.sts[0]["step"] + 1 if counts == "shared" else None
            factor = opt._flat_step(group, b, t)  # the step is in b.S
            if factor is None:
                for p, s in zip(b.params, b.sv):
                    d = p._data
                    try:  # (what _write does, without its check of the flags)
                        np.subtract(d, s, out=d)
                    except ValueError:  # a read-only array: replaced
                        write(p, d, s)
                        continue
                    _bump(p._data)
            else:
                for p, s, tv in zip(b.params, b.sv, b.tv):
                    write(p, np.multiply(p._data, factor, out=tv), s)
            if counts == "shared":
                for st in b.sts:
                    st["step"] = t
            elif counts == "each":
                for st in b.sts:
                    st["step"] += 1

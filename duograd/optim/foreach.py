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


# ------------------------------------------------------------------ the array namespaces
# Each formula below is written once, against a namespace ``xp`` of the few operations it
# uses, and returns every value it changes. ``NP`` runs them on NumPy arrays in place
# (``out=`` the buffers given, ``i*``: in place), so the eager step and the NumPy program
# get the same NumPy calls in the same order as ever; the XLA backend's namespace
# (``capture.xla``) runs the same lines on JAX values, functionally, its numbers being
# values of the computation (a schedule changes them without a new compilation).


class NP:
    """The NumPy namespace: in place where the formula says so."""

    mul, add, sub, div, sqrt = staticmethod(_mul), staticmethod(_add), staticmethod(_sub), \
        staticmethod(_div), staticmethod(_sqrt)
    out = staticmethod(_out)

    @staticmethod
    def imul(a: Any, b: Any) -> Any:
        a *= b
        return a

    @staticmethod
    def iadd(a: Any, b: Any) -> Any:
        a += b
        return a

    @staticmethod
    def idiv(a: Any, b: Any) -> Any:
        a /= b
        return a

    @staticmethod
    def lerp(start: Any, end: Any, weight: float, tmp: Any = None) -> Any:
        lerp_(start, end, weight, tmp)
        return start

    @staticmethod
    def damped(d: Any, damp: float, tmp: Any = None) -> Any:
        """``(1 - damp) * d`` (``d`` itself when ``damp`` is 0)."""
        return d if damp == 0.0 else _mul(d, 1 - damp, tmp)


def adam_(xp: Any, m: Any, v: Any, g: Any, b1: Any, b2: Any, eps: Any, step_size: Any,
          root_bc2: Any, tmp: Any = None, out: Any = None) -> tuple:
    """``adam``'s formula against namespace ``xp``: returns (m, v, step)."""
    m = xp.lerp(m, g, 1 - b1, tmp)
    v = xp.imul(v, b2)
    sq = xp.mul(g, 1 - b2, tmp)
    sq = xp.imul(sq, g)
    v = xp.iadd(v, sq)
    denom = xp.sqrt(v, tmp)
    denom = xp.idiv(denom, root_bc2)
    denom = xp.iadd(denom, eps)
    step = xp.mul(m, step_size, out)
    step = xp.idiv(step, denom)
    return m, v, step


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
    return adam_(NP, m, v, g, b1, b2, eps, step_size, root_bc2, tmp, out)[2]


def sgd_momentum_(xp: Any, d: Any, buf: Any, mu: Any, damp: Any, nesterov: bool,
                  tmp: Any = None) -> tuple:
    """``sgd_momentum``'s formula against namespace ``xp``: returns (buf, direction)."""
    buf = xp.imul(buf, mu)
    buf = xp.iadd(buf, xp.damped(d, damp, tmp))
    return buf, nesterov_direction_(xp, d, buf, mu, tmp) if nesterov else buf


def sgd_momentum(d: np.ndarray, buf: np.ndarray, mu: float, damp: float, nesterov: bool,
                 tmp: np.ndarray | None = None) -> np.ndarray:
    """SGD's momentum buffer updated in place, ``buf = mu * buf + (1 - damp) * d``, and
    the direction returned: ``d + mu * buf`` with ``nesterov``, else ``buf``.

    >>> buf = np.ones(1); sgd_momentum(np.array([2.0]), buf, 0.5, 0.0, False), buf
    (array([2.5]), array([2.5]))
    """
    return sgd_momentum_(NP, d, buf, mu, damp, nesterov, tmp)[1]


def nesterov_direction_(xp: Any, d: Any, buf: Any, mu: Any, tmp: Any = None) -> Any:
    """``d + mu * buf`` against namespace ``xp``."""
    t = xp.mul(buf, mu, tmp)
    return xp.add(d, t, xp.out(t))


def nesterov_direction(d: np.ndarray, buf: np.ndarray, mu: float,
                       tmp: np.ndarray | None = None) -> np.ndarray:
    """``d + mu * buf``."""
    return nesterov_direction_(NP, d, buf, mu, tmp)


def rmsprop_(xp: Any, s: Any, g: Any, lr: Any, alpha: Any, eps: Any, a: Any = None,
             buf: Any = None, mu: Any = 0.0, tmp: Any = None, out: Any = None) -> tuple:
    """``rmsprop``'s formula against namespace ``xp``: returns (s, a, buf, step)."""
    s = xp.imul(s, alpha)
    sq = xp.mul(g, 1 - alpha, tmp)
    sq = xp.imul(sq, g)
    s = xp.iadd(s, sq)
    if a is not None:
        a = xp.lerp(a, g, 1 - alpha, tmp)
        avg = xp.mul(a, a, tmp)
        avg = xp.sub(s, avg, xp.out(avg))
        avg = xp.sqrt(avg, xp.out(avg))
    else:
        avg = xp.sqrt(s, tmp)
    avg = xp.iadd(avg, eps)
    if buf is not None:
        buf = xp.imul(buf, mu)
        buf = xp.iadd(buf, xp.div(g, avg, xp.out(avg)))
        return s, a, buf, xp.mul(buf, lr, out)
    step = xp.mul(g, lr, out)
    step = xp.idiv(step, avg)
    return s, a, buf, step


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
    return rmsprop_(NP, s, g, lr, alpha, eps, a, buf, mu, tmp, out)[3]


class Bucket:
    """The parameters of one group and one dtype that have a gradient: flat buffers for
    the gradients (``G``), two temporaries (``T``, ``S``: the step), each state array
    (``state[name]``) and the parameters (made when a formula reads them:
    ``gather_params``), and the per-parameter views of each."""

    xp = NP  # (the namespace the optimizers' ``_flat_step`` computes with)

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


# ------------------------------------------------------------------ formulas of the host steps
# (Adadelta, RAdam, Rprop, ASGD, Adafactor, Muon: the eager step calls each once per
# parameter, on the parameter's own state arrays; the grouping of every product is the one
# torch's single-tensor CPU path uses)


def adadelta(sq: np.ndarray, acc: np.ndarray, g: np.ndarray, rho: float, eps: float) -> np.ndarray:
    """Adadelta's accumulators updated in place and its direction returned (the step is
    ``lr`` times it): ``sq = rho * sq + ((1 - rho) * g) * g``, ``delta = sqrt(acc + eps) /
    sqrt(sq + eps) * g``, ``acc = rho * acc + ((1 - rho) * delta) * delta``.

    >>> sq, acc = np.zeros(1), np.zeros(1)
    >>> float(adadelta(sq, acc, np.array([1.0]), 0.0, 0.0)[0])
    0.0
    """
    sq *= rho
    t = _mul(g, 1 - rho)
    t *= g
    sq += t
    std = _sqrt(sq + eps)
    delta = _sqrt(acc + eps)
    delta /= std
    delta *= g
    acc *= rho
    t = _mul(delta, 1 - rho)
    t *= delta
    acc += t
    return delta


def radam(m: np.ndarray, v: np.ndarray, g: np.ndarray, b1: float, b2: float, eps: float,
          lr: float, t: float) -> np.ndarray:
    """RAdam's moments updated in place and its step returned: Adam's moments; with
    ``rho_inf = 2 / (1 - b2) - 1`` and ``rho_t = rho_inf - 2 t b2**t / (1 - b2**t)``, the
    step is ``((m / (1 - b1**t) * lr) * sqrt(1 - b2**t) / (sqrt(v) + eps)) * rect`` when
    ``rho_t > 5`` (``rect`` the variance rectification), else ``m / (1 - b1**t) * lr``.

    >>> m, v = np.zeros(1), np.zeros(1)
    >>> radam(m, v, np.array([2.0]), 0.9, 0.999, 1e-8, 0.1, 1.0)   # rho_1 = 1: no rectification
    array([0.2])
    """
    lerp_(m, g, 1 - b1)
    v *= b2
    sq = _mul(g, 1 - b2)
    sq *= g
    v += sq
    bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
    corrected = m / bc1
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * (b2 ** t) / bc2
    step = corrected * lr
    if rho_t > 5.0:
        denom = _sqrt(v)
        denom += eps
        step *= bc2 ** 0.5 / denom
        step *= ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
    return step


def rprop(prev: np.ndarray, sizes: np.ndarray, g: np.ndarray, etaminus: float, etaplus: float,
          smin: float, smax: float) -> np.ndarray:
    """Rprop's step sizes and previous gradient updated in place and its step returned:
    where ``g * prev`` is positive the size grows by ``etaplus``, negative shrinks by
    ``etaminus`` (and that coordinate's gradient counts as 0), clipped to ``[smin, smax]``;
    the step is ``sign(g) * size``.

    >>> prev, sizes = np.array([1.0, 1.0]), np.array([0.1, 0.1])
    >>> rprop(prev, sizes, np.array([2.0, -2.0]), 0.5, 1.2, 1e-6, 50.0)
    array([0.12, 0.  ])
    """
    sign = np.sign(g * prev)
    factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0)).astype(sizes.dtype)
    sizes *= factor
    np.clip(sizes, smin, smax, out=sizes)
    g = np.where(factor == etaminus, 0, g).astype(g.dtype)
    prev[...] = g
    return np.sign(g) * sizes


def _norm(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    return np.sqrt(np.sum(x * x, axis=axis, keepdims=axis is not None))


def adafactor(st: dict, param: np.ndarray, g: np.ndarray, lr: float, beta2_decay: float,
              eps1: float, eps2: float, d: float, t: float) -> tuple[float, np.ndarray]:
    """Adafactor's factored second moment (``row_var``/``col_var`` for a matrix or a
    stack of them, ``variance`` for a vector) updated in place; returns ``(alpha,
    update)``, the step being ``alpha * update`` (``param`` is read before any weight decay).

    >>> st = {"variance": np.zeros(2)}
    >>> a, u = adafactor(st, np.array([3.0, 4.0]), np.array([1.0, -1.0]), 0.01, -0.8, 1e-30, 1e-3, 1.0, 1.0)
    >>> round(a, 6), u
    (0.035355, array([ 1., -1.]))
    """
    beta_t = t ** beta2_decay
    rho_t = min(lr, 1 / (t ** 0.5))
    alpha = max(eps2, float(_norm(param)) / (param.size ** 0.5)) * rho_t
    if g.ndim > 1:
        lerp_(st["row_var"], _norm(g, -1) ** 2 / g.shape[-1], beta_t)
        lerp_(st["col_var"], _norm(g, -2) ** 2 / g.shape[-2], beta_t)
        row, col = st["row_var"], st["col_var"]
        est = np.matmul(row, col)
        est /= np.maximum(row.mean(axis=-2, keepdims=True), eps1)
    else:
        lerp_(st["variance"], g * g, beta_t)
        est = st["variance"].copy()
    np.maximum(est, eps1 * eps1, out=est)
    update = 1 / _sqrt(est)
    update *= g
    denom = max(1.0, float(_norm(update)) / ((update.size ** 0.5) * d))
    return alpha / denom, update


def to_bfloat16(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to bfloat16 (nearest, ties to even) and held in float32.

    >>> float(to_bfloat16(np.array([1.0 + 2 ** -9]))[0])
    1.0
    """
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + (np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1)))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def newton_schulz(G: np.ndarray, coefficients: tuple[float, float, float], steps: int,
                  eps: float) -> np.ndarray:
    """Muon's orthogonalisation: ``steps`` quintic Newton–Schulz iterations on ``G /
    ||G||`` (transposed when it has more rows than columns), every intermediate rounded
    to bfloat16 as torch computes it.

    >>> newton_schulz(np.eye(2) * 3, (3.4445, -4.775, 2.0315), 5, 1e-7)
    array([[1.125, 0.   ],
           [0.   , 1.125]], dtype=float32)
    """
    a, b, c = coefficients
    X = to_bfloat16(G)
    tall = G.shape[0] > G.shape[1]
    if tall:
        X = X.T
    norm = to_bfloat16(np.array([max(float(_norm(X.astype(np.float64))), eps)]))[0]
    X = to_bfloat16(X / np.float32(norm))
    for _ in range(steps):
        A = to_bfloat16(X @ X.T)
        B = to_bfloat16(b * A + c * (A @ A))
        X = to_bfloat16(a * X + B @ X)
    return X.T if tall else X

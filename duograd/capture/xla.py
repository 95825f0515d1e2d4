"""``dg.compile(fn, backend="xla")``: the recorded step run as one ``jax.jit`` program.

The recording, the signatures and every guard are the NumPy backend's (``compiled.py``,
``recording.py``); only the lowering and the executor differ. ``XlaBuilder`` turns the
recording into the same draft program as ``lowering.Builder`` (the same slots, constants
folded, what nobody reads dropped), but each instruction holds a *description* (the op
and its keywords, or the effect and its slots) instead of a NumPy kernel. ``XlaProgram``
interprets those descriptions once, inside ``jax.jit``, with ``jax.numpy`` calls: the
forward, duograd's own backward (its VJP rules were recorded as primitive calls: JAX
never differentiates anything, ``jax.grad`` and ``jax.vjp`` are never called), and the
optimizer's update (``opt.step()`` of ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``: the
optimizer's own ``_flat_step``, written once against an array namespace in
``optim/foreach.py``, run here on JAX values through ``_JX``, the group's numbers being
values of the computation, ``_Num``) become one XLA computation, which XLA fuses.

The program is pure: every call passes in the arguments, the tensors the step reads but
was not given, the ``.grad`` values it reads, and the *carry*: the values the step writes
that outlive it (parameters and other tensors written in place, the ``.grad`` of tensors
made outside the step, the optimizer's state), one buffer per dtype. It returns the
results and the new carry in the same layout. The carry stays on the XLA side: each of
its values is left *pending* in the Tensor (or the optimizer's state entry) it belongs to
and written back into the tensor's own NumPy array at the first read from anywhere
(``capture/resident.py``: while pending, the tensor's class is a subclass whose ``_data``
property writes it back and restores the class, so ordinary tensors pay nothing). The
next call passes the last carry straight back in when every value it reads is still
pending in it; otherwise (a value read or written in between, another program's turn, the
first call) it packs the carry from the values as they are on the host. Nothing is written
until the whole computation has succeeded, so a failing call changes nothing; buffers are
not donated (an earlier ``.grad`` or a pending value may still read them). Versions are
bumped at the call, as the eager step bumps them.

What runs on the host, in order, before the XLA call: the arrays derived from the
arguments outside the primitives (``_tensor._derive``: label checks, conversions of a
Python number argument), random draws (``_tensor._draw``: a Dropout mask is drawn from the
same generator as eagerly), and the bounds checks of index arrays (XLA clamps an index out
of range where NumPy raises; the replay raises IndexError as NumPy would).

Not lowered (``Unsupported``): host steps (a scheduler's step or ``clip_grad_norm_``
*inside* ``fn``, the optimizers other than SGD/Adam/AdamW/RMSprop), ops without an entry in
``_lowerings``, an in-place write into a tensor that a view shares, ``.grad`` of a tensor
made inside ``fn``. A program with one of these runs on the NumPy backend instead, with a
``UserWarning`` naming the first one (``program.backend`` says which backend runs it).
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Callable

import numpy as np

from .._context import Accumulate, Derive, Draw, Host, SetGrad, Update
from .._tensor import Tensor, _wrap
from .._versions import bump as _bump
from .instructions import CALLN, EFFECT, Recapture, new
from .lowering import Builder
from .refs import (Arg, Argument, List, Made, Named, Object, ObjectKey, Slot, Tuple, Value,
                   leaf_key, slots_in)
from .program import Program
from .recording import Recorder, Write
from .resident import (Carry, Pending, base_class, host_value, mark_optimizer, old_array, peek,
                       raw_state, set_pending)

_jax: Any = None
_jnp: Any = None


def require_jax() -> Any:
    """Import JAX (x64 enabled, so that float64 stays float64), or raise ImportError
    naming the extra that installs it."""
    global _jax, _jnp
    if _jax is None:
        try:
            import jax
            import jax.numpy as jnp
        except ImportError as e:
            raise ImportError("dg.compile(backend='xla') needs JAX: pip install duograd[xla] "
                              "(or pip install jax)") from e
        jax.config.update("jax_enable_x64", True)
        _jax, _jnp = jax, jnp
    return _jax


class Unsupported(Exception):
    """An instruction the XLA backend cannot lower (its message names it)."""


# ---------------------------------------------------------------- the ops, in jax.numpy
# Each lowering is ``f(xs, kw, dtype, shape)``: the input values, the keyword parameters
# (this call's arrays where a keyword holds one), the recorded result's dtype and shape.

def _keep_shape(axis: Any, shape: tuple) -> tuple:
    ax = (axis,) if isinstance(axis, int) else tuple(range(len(shape))) if axis is None else axis
    ax = {a % len(shape) for a in ax} if shape else set()
    return tuple(1 if i in ax else n for i, n in enumerate(shape))


def _finite_max(x: Any, axis: Any) -> Any:
    j = _jnp
    if x.size == 0:
        return j.zeros(_keep_shape(axis, x.shape), x.dtype)
    m = j.max(x, axis=axis, keepdims=True)
    return j.where(j.isfinite(m), m, j.zeros((), x.dtype))


def _logsumexp(x: Any, axis: Any, keepdims: bool) -> Any:
    j = _jnp
    m = _finite_max(x, axis)
    out = j.log(j.sum(j.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else j.squeeze(out, axis=axis)


def _extremum_weights(x: Any, out: Any, axis: Any, keepdims: bool) -> Any:
    hit = x == (out if keepdims else out.reshape(_keep_shape(axis, x.shape)))
    return (hit / hit.sum(axis=axis, keepdims=True)).astype(x.dtype)


def _ufunc(f: Any) -> Any:
    """The jax.numpy function of a NumPy ufunc handed over as a keyword (``share``'s wins)."""
    g = getattr(_jnp, f.__name__, None) if isinstance(f, np.ufunc) else None
    if g is None:
        raise Unsupported(f"the keyword function {f!r}")
    return g


def _scatter(g: Any, index: Any, shape: tuple, basic: bool) -> Any:
    z = _jnp.zeros(shape, g.dtype)
    return z.at[index].set(g) if basic else z.at[index].add(g)


class _LazyJnp:
    """``jax.numpy``'s functions looked up when called (the table is made without JAX)."""

    def __getattr__(self, name: str) -> Callable:
        def f(*args: Any, **kw: Any) -> Any:
            return getattr(_jnp, name)(*args, **kw)
        f.__name__ = name
        return f


def _lowerings() -> dict:
    """The table: Primitive -> lowering (by identity, so a user's Primitive of the same
    name is never taken for duograd's)."""
    from .. import elementwise as ew, ops
    from ..autograd import engine
    j = _LazyJnp()
    un = lambda f: (lambda xs, kw, dt, sh: f(xs[0]))
    bi = lambda f: (lambda xs, kw, dt, sh: f(xs[0], xs[1]))
    ident = lambda xs, kw, dt, sh: xs[0]
    table = {
        ops.add_p: bi(j.add), ops.sub_p: bi(j.subtract), ops.mul_p: bi(j.multiply),
        ops.div_p: lambda xs, kw, dt, sh: j.true_divide(xs[0], xs[1]).astype(dt),
        ops.pow_p: bi(j.power), ops.neg_p: un(j.negative), ops.exp_p: un(j.exp),
        ops.log_p: un(j.log), ops.sqrt_p: un(j.sqrt), ops.tanh_p: un(j.tanh),
        ops.sigmoid_p: un(lambda x: 0.5 * j.tanh(0.5 * x) + 0.5),
        ops.softplus_p: un(lambda x: j.logaddexp(j.zeros((), x.dtype), x)),
        ops.sin_p: un(j.sin), ops.cos_p: un(j.cos),
        ops.relu_p: un(lambda x: j.maximum(x, j.zeros((), x.dtype))),
        ops.abs_p: un(j.abs), ops.maximum_p: bi(j.maximum), ops.minimum_p: bi(j.minimum),
        ops.clip_p: lambda xs, kw, dt, sh: j.clip(xs[0], kw["lo"], kw["hi"]),
        ops.where_p: lambda xs, kw, dt, sh: j.where(xs[0], xs[1], xs[2]),
        ops.cast_p: lambda xs, kw, dt, sh: xs[0].astype(kw["dtype"]),
        ops.cast_nodiff_p: lambda xs, kw, dt, sh: xs[0].astype(kw["dtype"]),
        ops.identity_p: ident, ops.detach_p: ident, ops.stop_gradient_p: ident, ops.clone_p: ident,
        ops.greater_p: bi(j.greater), ops.greater_equal_p: bi(j.greater_equal),
        ops.less_p: bi(j.less), ops.less_equal_p: bi(j.less_equal), ops.equal_p: bi(j.equal),
        ops.not_equal_p: bi(j.not_equal), ops.sign_p: un(j.sign),
        ops.argmax_p: lambda xs, kw, dt, sh: j.argmax(xs[0], axis=kw["axis"]),
        ops.argmin_p: lambda xs, kw, dt, sh: j.argmin(xs[0], axis=kw["axis"]),
        ops.clip_mask_p: lambda xs, kw, dt, sh: (xs[0] >= (-math.inf if kw["lo"] is None else kw["lo"]))
        & (xs[0] <= (math.inf if kw["hi"] is None else kw["hi"])),
        ops.share_p: lambda xs, kw, dt, sh: (_ufunc(kw["wins"])(xs[0], xs[1])
                                             + 0.5 * (xs[0] == xs[1])).astype(dt),
        ops.extremum_weights_p: lambda xs, kw, dt, sh: _extremum_weights(xs[0], xs[1], **kw),
        ops.row_max_p: lambda xs, kw, dt, sh: _finite_max(xs[0], kw["axis"]),
        ops.sum_p: lambda xs, kw, dt, sh: j.sum(xs[0], axis=kw["axis"], keepdims=kw["keepdims"]),
        ops.max_p: lambda xs, kw, dt, sh: j.max(xs[0], axis=kw["axis"], keepdims=kw["keepdims"]),
        ops.min_p: lambda xs, kw, dt, sh: j.min(xs[0], axis=kw["axis"], keepdims=kw["keepdims"]),
        ops.logsumexp_p: lambda xs, kw, dt, sh: _logsumexp(xs[0], kw["axis"], kw["keepdims"]),
        ops.reshape_p: lambda xs, kw, dt, sh: j.reshape(xs[0], kw["shape"]),
        ops.transpose_p: lambda xs, kw, dt, sh: j.transpose(xs[0], kw["axes"]),
        ops.broadcast_to_p: lambda xs, kw, dt, sh: j.broadcast_to(xs[0], kw["shape"]),
        ops.cumsum_p: lambda xs, kw, dt, sh: j.cumsum(xs[0], axis=kw["axis"]),
        ops.getitem_p: lambda xs, kw, dt, sh: xs[0][kw["index"]],
        ops.scatter_add_p: lambda xs, kw, dt, sh: _scatter(xs[0], kw["index"], kw["shape"], kw["basic"]),
        ops.concatenate_p: lambda xs, kw, dt, sh: j.concatenate(xs, axis=kw["axis"]),
        ops.matmul_p: bi(j.matmul), ops.linear_p: lambda xs, kw, dt, sh: j.matmul(xs[0], xs[1].T),
        ops.std_sqrt_p: un(j.sqrt),
        engine.ones_like_p: un(j.ones_like), engine.zeros_like_p: un(j.zeros_like),
        ew.tan_p: un(j.tan), ew.asin_p: un(j.arcsin), ew.acos_p: un(j.arccos),
        ew.atan_p: un(j.arctan), ew.sinh_p: un(j.sinh), ew.cosh_p: un(j.cosh),
        ew.asinh_p: un(j.arcsinh), ew.acosh_p: un(j.arccosh), ew.atanh_p: un(j.arctanh),
        ew.exp2_p: un(j.exp2), ew.expm1_p: un(j.expm1), ew.log2_p: un(j.log2),
        ew.log10_p: un(j.log10), ew.log1p_p: un(j.log1p), ew.rsqrt_p: un(lambda x: 1 / j.sqrt(x)),
        ew.isnan_p: un(j.isnan), ew.isinf_p: un(j.isinf), ew.isfinite_p: un(j.isfinite),
        ew.logical_not_p: un(j.logical_not), ew.logical_and_p: bi(j.logical_and),
        ew.logical_or_p: bi(j.logical_or), ew.logical_xor_p: bi(j.logical_xor),
    }
    return table


_TABLE: dict | None = None


def lowering_of(op: Any) -> Callable | None:
    """The jax.numpy lowering of primitive ``op``, or None (then the program runs on the
    NumPy backend)."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _lowerings()
    return _TABLE.get(op)


def supported_ops() -> list[str]:
    """The names of the primitives the XLA backend lowers (JAX not needed to list them).

    >>> "matmul" in supported_ops()
    True
    """
    lowering_of(None)
    return sorted({op.name for op in _TABLE})


# ---------------------------------------------------------------- the instructions

# Arrays of at most this many elements are packed into one buffer per dtype; larger ones
# are handed to the XLA call by themselves (JAX copies a large host array in one slow
# piece, and the packing would copy it a second time).
_PACK_MAX = 2048


class _Slot:
    """A keyword value that is this call's array in slot ``s``."""

    __slots__ = ("s",)

    def __init__(self, s: int) -> None:
        self.s = s


def _fill(v: Any, env: dict) -> Any:
    if type(v) is _Slot:
        return env[v.s]
    if isinstance(v, (tuple, list)):
        return type(v)(_fill(x, env) for x in v)
    return v


class XKernel:
    """A primitive call: its lowering, keywords (``_Slot`` where they hold this call's
    arrays), recorded dtype and shape."""

    def __init__(self, op: Any, lower: Callable, kw: dict, dtype: np.dtype, shape: tuple) -> None:
        self.op, self.lower, self.kw, self.dtype, self.shape = op, lower, kw, dtype, shape

    def __call__(self, xs: list, env: dict) -> Any:
        kw = {k: _fill(v, env) for k, v in self.kw.items()}
        out = self.lower(xs, kw, self.dtype, self.shape)
        if out.dtype != self.dtype or tuple(out.shape) != tuple(self.shape):
            raise Unsupported(f"operation {self.op.name!r}: its jax.numpy lowering gives "
                              f"{out.dtype}{tuple(out.shape)}, NumPy {self.dtype}{tuple(self.shape)}")
        return out


class XEffect:
    """An effect, described: one small class per kind, its fields named (see
    ``XlaBuilder``). ``on_host``: it runs on the host before the XLA call (``host``
    computes its value); otherwise ``trace`` adds it to the traced computation (``_Trace``)."""

    __slots__ = ()
    on_host = False

    def __init__(self, *values: Any) -> None:
        for name, v in zip(self.__slots__, values, strict=True):
            setattr(self, name, v)

    def trace(self, ins: Any, env: dict, tr: "_Trace") -> None:  # pragma: no cover (abstract)
        raise NotImplementedError(type(self).__name__)


class HostDerive(XEffect):
    """An array derived from an argument outside the primitives: ``f(env[a])`` on the host."""
    __slots__ = ("f", "a")
    on_host = True

    def host(self, env: dict) -> Any:
        return self.f(env[self.a])


class HostDraw(XEffect):
    """Random numbers, drawn on the host by ``f()`` before every call."""
    __slots__ = ("f",)
    on_host = True

    def host(self, env: dict) -> Any:
        return self.f()


class Copy(XEffect):
    """A derived copy of a value the step computes (a value here)."""
    __slots__ = ("a",)

    def trace(self, ins: Any, env: dict, tr: "_Trace") -> None:
        env[ins.out] = env[self.a]


class Cast(XEffect):
    """A written value cast to the dtype of the tensor made in the step it is written into."""
    __slots__ = ("a", "dtype")

    def trace(self, ins: Any, env: dict, tr: "_Trace") -> None:
        env[ins.out] = env[self.a].astype(self.dtype)


class AccumulateGrad(XEffect):
    """``.grad`` of leaf ``ref`` (dict key ``key``) += slot ``g`` (``fresh``: set, not added)."""
    __slots__ = ("ref", "key", "g", "fresh")

    def trace(self, ins: Any, env: dict, tr: "_Trace") -> None:
        g = env[self.g]
        if not self.fresh:
            old = tr.pending[self.key] if self.key in tr.pending else tr.grads0[self.key]
            if old is not None:
                g = old + g
        tr.pending[self.key] = env[ins.out] = g


class SetGradX(XEffect):
    """``.grad`` of leaf ``ref`` set to slot ``v`` (None: cleared)."""
    __slots__ = ("ref", "key", "v")

    def trace(self, ins: Any, env: dict, tr: "_Trace") -> None:
        tr.pending[self.key] = None if self.v is None else env[self.v]


class UpdateX(XEffect):
    """An optimizer's update of its parameters in ``buckets`` ``(group index, params, state
    names)``, by the optimizer's own formula (``_update_values``)."""
    __slots__ = ("opt", "buckets")

    def trace(self, ins: Any, env: dict, tr: "_Trace") -> None:
        uc = tr.updates
        tr.updates += 1
        prog, inp = tr.program, tr.inp
        nums_all, flags_all, hosts_all = inp["opt"][uc], tr.static[uc], prog._hosts[uc]
        new_states = []
        for (index, ps, names), nums, flags, hosts, bstate in zip(
                self.buckets, nums_all, flags_all, hosts_all, inp["state"][uc]):
            out_states = []
            for p, st in zip(ps, bstate):
                key = ObjectKey(id(p))
                g = tr.pending[key] if key in tr.pending else tr.grads0[key]
                if g is None:
                    raise Unsupported("an optimizer step whose gradient is missing")
                ti = prog._target_index[key]
                cur = tr.written.get(ti)
                if cur is None:
                    cur = env[tr.ext_slots[id(p)][0]] if id(p) in tr.ext_slots else inp["params"][ti]
                value, new = _update_values(self.opt, flags, nums, hosts, cur, g,
                                            dict(zip(names, st)))
                tr.written[ti] = value
                for s in tr.ext_slots.get(id(p), ()):
                    env[s] = value
                out_states.append([new[n] for n in names])
            new_states.append(out_states)
        tr.states_out.append(new_states)


class WriteData(XEffect):
    """``t.data = v`` for the tensor ``ref`` (an argument or an object): a new array."""
    __slots__ = ("ref", "v", "t_slot")

    def trace(self, ins: Any, env: dict, tr: "_Trace") -> None:
        tr.written[tr.program._target_index[leaf_key(self.ref)]] = env[self.v]
        for s in tr.ext_slots.get(id(self.ref.obj), ()) if type(self.ref) is Object else ():
            env[s] = env[self.v]


class WriteInPlace(XEffect):
    """An in-place write of slot ``v`` into ``ref`` (an argument, an object, or ``Slot``:
    a result of the step), whose values were slot ``old``."""
    __slots__ = ("ref", "v", "old", "dtype", "shape")

    def trace(self, ins: Any, env: dict, tr: "_Trace") -> None:
        v = _jnp.broadcast_to(env[self.v].astype(self.dtype), self.shape)
        env[self.old] = v
        if type(self.ref) is not Slot:
            tr.written[tr.program._target_index[leaf_key(self.ref)]] = v


class _Trace:
    """What the effects of one traced call share: the ``.grad`` values pending and as they
    came in, the new values of the tensors written, the optimizers' new states."""

    __slots__ = ("program", "inp", "static", "grads0", "pending", "written", "ext_slots",
                 "states_out", "updates")

    def __init__(self, program: Any, inp: dict, static: tuple) -> None:
        self.program, self.inp, self.static = program, inp, static
        self.grads0 = dict(zip(program._grad_in_keys, inp["grads"]))
        self.pending: dict = {}
        self.written: dict = {}  # target index -> value
        self.ext_slots: dict = {}
        for t, s in program.loads:
            self.ext_slots.setdefault(id(t), []).append(s)
        self.states_out: list = []
        self.updates = 0


# ---------------------------------------------------------------- the builder

class XlaBuilder(Builder):
    """``lowering.Builder`` with descriptions instead of NumPy kernels (see the module
    docstring); raises ``Unsupported`` at the first thing it cannot lower."""

    def __init__(self, rec: Recorder, leaves: list, wrapped: frozenset = frozenset()) -> None:
        super().__init__(rec, leaves, wrapped)
        self.host_slots = {s for s, _ in self.arg_slots}  # known before the XLA call
        self.host_shapes: dict = {}   # slot -> (shape, dtype) of a derived array or a draw
        self.views: set[int] = set()  # slots that are (or read) a view of another slot

    def _kw(self, v: Any, reads: list) -> Any:
        if isinstance(v, np.ndarray) and self.dynamic(v):
            s = self.by_array[id(v)]
            reads.append(s)
            return _Slot(s)
        if isinstance(v, (tuple, list)) and self.dynamic(v):
            return type(v)(self._kw(x, reads) for x in v)
        return v

    def call(self, op: Any, xs: tuple, kw: dict, out: Tensor) -> None:
        ins = []
        folded = True
        for x in xs:
            s = self.by_tensor.get(id(x))
            if s is None:
                s = self.slot(x)
            ins.append(s)
            folded = folded and s in self.const
        dyn = any(self.dynamic(v) for v in kw.values()) if kw else False
        d = out._data
        if len(ins) == 1 and d is xs[0]._data and not dyn:
            self.by_tensor[id(out)] = ins[0]
            return
        o = self.new_slot()
        self.by_tensor[id(out)] = o
        self.by_array[id(d)] = o
        self.shapes[o] = d.shape
        self.dtypes[o] = d.dtype
        if (folded and not dyn) or op.shape_only:
            self.values[o] = d
            self.const.add(o)
            return
        if op.value_shape:
            raise Unsupported(f"operation {op.name!r} (its result's shape depends on the values; "
                              "XLA compiles for fixed shapes)")
        lower = lowering_of(op)
        if lower is None:
            raise Unsupported(f"operation {op.name!r} (no jax.numpy lowering)")
        if op in _float_only() and d.dtype.kind not in "fc":
            raise Unsupported(f"operation {op.name!r} on {d.dtype} (NumPy raises for a negative "
                              "integer power, XLA does not)")
        reads: list = []
        kwt = {k: self._kw(v, reads) for k, v in kw.items()}
        if op.view or any(s in self.views for s in ins):
            self.views.add(o)
            self.views.update(ins)
        if op in (_index_ops()) and reads:
            if any(s not in self.host_slots for s in reads):
                raise Unsupported(f"operation {op.name!r} with an index computed by the step "
                                  "(its bounds cannot be checked before the XLA call)")
        k = XKernel(op, lower, kwt, d.dtype, d.shape)
        k.in_shape = xs[0]._data.shape if xs else ()
        self.code.append(new((CALLN, k, tuple(ins), None, o, ins + reads, op.name, "kernel", op)))

    # ------------------------------------------------------------ effects

    def _effect(self, e: XEffect, reads: list, out: int | None, label: str,
                role: str = "effect") -> None:
        self.code.append(new((EFFECT, e, None, None, out, reads, label, role, None)))

    def derive(self, e: Derive) -> None:
        s = self.by_array.get(id(e.source)) if isinstance(e.source, np.ndarray) else None
        if s is None or s in self.const:
            return
        o = self.new_slot()
        self.by_array[id(e.out)] = o
        f = functools.partial(e.fn, **e.kw) if e.kw else e.fn
        if s in self.host_slots:
            self.host_slots.add(o)
            self.host_shapes[o] = (np.shape(e.out), np.asarray(e.out).dtype)
            self._effect(HostDerive(f, s), [s], o, "derive", "kernel")
        elif e.fn is np.copy or e.out is e.source:
            # a copy (an in-place op keeping its input's values), or a check of the values
            # handing them back (an index's range): a value here (XLA does not raise)
            self._effect(Copy(s), [s], o, "derive", "kernel")
        else:
            raise Unsupported(f"derive {getattr(e.fn, '__qualname__', e.fn)!r} of a value the "
                              "step computes")

    def draw(self, e: Draw) -> None:
        self.draws.append((e.fn, e.args))
        o = self.new_slot()
        self.by_array[id(e.out)] = o
        self.host_slots.add(o)
        self.host_shapes[o] = (np.shape(e.out), np.asarray(e.out).dtype)
        # role "effect": a draw runs on every call, whether read or not (the generator moves)
        self._effect(HostDraw(functools.partial(e.fn, *e.args)), [], o, "draw")

    def _ref(self, t: Tensor) -> Any:
        ref = self.leaf_ref(t)
        if type(ref) is Made:
            raise Unsupported("the .grad of a tensor made inside fn")
        return ref

    def accumulate(self, e: Accumulate) -> None:
        ref, gs = self._ref(e.leaf), self.slot(e.g)
        o = self.new_slot()
        self.by_tensor[id(e.out)] = o
        self.by_array[id(e.out._data)] = o
        key = self._leaf_key(ref)
        cleared = self.cleared.pop(key, None)
        if cleared is not None:
            self.code[cleared] = None
        self._effect(AccumulateGrad(ref, key, gs, cleared is not None), [gs], o, "accumulate .grad")

    def set_grad(self, e: SetGrad) -> None:
        ref = self._ref(e.t)
        key = self._leaf_key(ref)
        v = None if e.value is None else self.slot(e.value)
        if v is None:
            self.cleared[key] = len(self.code)
        else:
            self.cleared.pop(key, None)
        self._effect(SetGradX(ref, key, v), [] if v is None else [v], None, "set .grad")

    def host(self, e: Host) -> None:
        raise Unsupported(f"the host step {getattr(e.fn, '__qualname__', e.fn)!r}")

    def update(self, e: Update) -> None:
        from ..optim import SGD, Adam, _write
        from ..optim.foreach import FlatUpdate

        opt = e.opt
        name = getattr(e.fn, "__qualname__", "step")
        if base_class(type(opt)) not in _optimizers():
            raise Unsupported(f"the optimizer step {name!r} (only SGD, Adam, AdamW and RMSprop "
                              "are lowered)")

        def outlives(p: Tensor) -> bool:
            s = self.by_tensor.get(id(p))
            return id(p) not in self.rec.made and (s is None or type(self.objects.get(s)) is not Arg)
        plan = FlatUpdate.plan(opt, e.grads, _write) if all(map(outlives, opt.params)) else None
        if plan is None or plan.absent:
            raise Unsupported(f"the optimizer step {name!r} (parameters without a gradient, "
                              "arguments, or parameters that cannot be updated together)")
        del SGD, Adam
        self.hosts.append((opt,))
        self.cleared.clear()
        buckets = [(index, list(ps), names) for index, ps, names, _ in plan.specs]
        self._effect(UpdateX(opt, buckets), [], None, name, "update")

    def write(self, e: Write) -> None:
        if e.inplace:
            return self.write_in_place(e)
        s = self.by_array.get(id(e.value))
        if s is None:
            raise RuntimeError(f"dg.compile: {e.what} at {e.line}: the values written are "
                               "unknown to the recording")
        t = e.t
        old = self.by_tensor.get(id(t))
        self.by_tensor[id(t)] = s
        if id(t) in self.rec.made:
            return
        ref = self.objects.get(old) if old is not None else None
        if type(ref) is not Arg:
            ref = Object(t)
        self._effect(WriteData(ref, s, old), [s], None, e.what)

    def write_in_place(self, e: Write) -> None:
        t, v = e.t, e.value
        s = self.slot(v)
        old = self.slot(t)
        arg = self.objects.get(old)
        external = any(old == k for _, k in self.externals)
        if not external and type(arg) is not Arg and old in self.const:
            # a constant of the step written: the written value's slot from now on (as
            # lowering.Builder.write_in_place), with its checks
            if e.before is not None:
                self.values[old] = e.before
            self.check_not_a_view(old, t, e)
            if v._data.dtype != t._data.dtype:
                o = self.new_slot()
                self._effect(Cast(s, t._data.dtype), [s], o, e.what, "kernel")
                s = o
            self.by_tensor[id(t)] = s
            self.by_array[id(t._data)] = s
            return
        if old in self.views:
            raise Unsupported(f"{e.what} at {e.line}: an in-place write into a tensor a view "
                              "of which the step reads (XLA values do not share memory)")
        if type(arg) is Arg:
            ref = arg
        elif external:
            ref = Object(t)
        else:
            ref = Slot(old)
        self._effect(WriteInPlace(ref, s, old, t._data.dtype, t._data.shape), [s, old], None,
                     e.what)


@functools.lru_cache(maxsize=1)
def _index_ops() -> tuple:
    from .. import ops
    return (ops.getitem_p, ops.scatter_add_p)


@functools.lru_cache(maxsize=1)
def _float_only() -> tuple:
    from .. import ops
    return (ops.pow_p,)


@functools.lru_cache(maxsize=1)
def _optimizers() -> tuple:
    from ..optim import SGD, Adam, AdamW, RMSprop
    return (SGD, Adam, AdamW, RMSprop)


# ---------------------------------------------------------------- the optimizer update

# The optimizers' own formulas (``Optimizer._flat_step``, written once against an array
# namespace: ``optim.foreach``) run here on JAX values: ``_JX`` is the namespace, ``_Num``
# a number of the group (lr, betas, ..., the step count) as a value of the computation,
# so that a schedule changing it needs no new compilation.

class _Num:
    """A group's number inside the computation: ``v`` its float64 value there, ``host``
    its value at tracing, which only comparisons read (a formula compares only options
    its optimizer's ``_flags`` returns, which the recording guards)."""

    __slots__ = ("v", "host")

    def __init__(self, v: Any, host: float) -> None:
        self.v, self.host = v, host

    def _op(self, other: Any, f: Callable) -> "_Num":
        if type(other) is _Num:
            return _Num(f(self.v, other.v), f(self.host, other.host))
        return _Num(f(self.v, other), f(self.host, other))

    def __add__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: a + b)
    def __radd__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: b + a)
    def __sub__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: a - b)
    def __rsub__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: b - a)
    def __mul__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: a * b)
    def __rmul__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: b * a)
    def __truediv__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: a / b)
    def __rtruediv__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: b / a)
    def __pow__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: a ** b)
    def __rpow__(self, o: Any) -> "_Num": return self._op(o, lambda a, b: b ** a)
    def __neg__(self) -> "_Num": return _Num(-self.v, -self.host)
    def __abs__(self) -> "_Num": return _Num(abs(self.v), abs(self.host))

    def _host(self, o: Any) -> Any:
        return o.host if type(o) is _Num else o

    def __eq__(self, o: Any) -> bool: return self.host == self._host(o)  # type: ignore[override]
    def __ne__(self, o: Any) -> bool: return self.host != self._host(o)  # type: ignore[override]
    def __lt__(self, o: Any) -> bool: return self.host < self._host(o)
    def __le__(self, o: Any) -> bool: return self.host <= self._host(o)
    def __gt__(self, o: Any) -> bool: return self.host > self._host(o)
    def __ge__(self, o: Any) -> bool: return self.host >= self._host(o)
    __hash__ = None  # type: ignore[assignment]


def _pair(a: Any, b: Any) -> tuple:
    """The operands with a number in the array's dtype (as NumPy converts a Python float)."""
    if type(b) is _Num:
        return a, b.v.astype(a.dtype)
    if type(a) is _Num:
        return a.v.astype(b.dtype), b
    return a, b


class _JX:
    """``optim.foreach.NP``'s operations on JAX values (functional: ``out`` ignored)."""

    @staticmethod
    def mul(a: Any, b: Any, out: Any = None) -> Any:
        a, b = _pair(a, b)
        return a * b

    @staticmethod
    def add(a: Any, b: Any, out: Any = None) -> Any:
        a, b = _pair(a, b)
        return a + b

    @staticmethod
    def sub(a: Any, b: Any, out: Any = None) -> Any:
        a, b = _pair(a, b)
        return a - b

    @staticmethod
    def div(a: Any, b: Any, out: Any = None) -> Any:
        a, b = _pair(a, b)
        return a / b

    @staticmethod
    def sqrt(a: Any, out: Any = None) -> Any:
        return _jnp.sqrt(a)

    @staticmethod
    def out(x: Any) -> None:
        return None

    imul, iadd, idiv = mul, add, div

    @staticmethod
    def lerp(start: Any, end: Any, weight: _Num, tmp: Any = None) -> Any:
        """``foreach.lerp_``'s two formulas, the one its weight picks (a value here: a
        change of betas needs no new compilation)."""
        d = end - start
        small = _jnp.abs(weight.v) < 0.5
        return _jnp.where(small, _JX.add(start, _JX.mul(d, weight)),
                          _JX.sub(end, _JX.mul(d, 1 - weight)))

    @staticmethod
    def damped(d: Any, damp: _Num, tmp: Any = None) -> Any:
        return _JX.mul(d, 1 - damp)  # (times 1 exactly when damp is 0)


class _JBucket:
    """One parameter as ``Optimizer._flat_step`` sees a bucket: its gradient ``G``, state
    ``state`` and value (``gather_params``); the step comes back in ``S``."""

    xp = _JX

    def __init__(self, g: Any, p: Any, state: dict) -> None:
        self.G, self._p, self.state, self.T, self.S = g, p, state, None, None

    def gather_params(self) -> Any:
        return self._p


def _is_number(v: Any) -> bool:
    return type(v) in (int, float) or isinstance(v, np.floating)


def _group_numbers(opt: Any, group: dict, t: float | None) -> tuple[np.ndarray, tuple]:
    """A group's numbers for this call (its options, then ``t``, the step count the
    update reaches, or None), handed to
    the computation as values, and what is static in it: which options are numbers, the
    other options, the optimizer's ``_flags``."""
    spec, nums, consts = [], [], []
    for k, v in group.items():
        if k == "params":
            continue
        if _is_number(v) and type(v) is not bool:
            spec.append((k, None))
            nums.append(float(v))
        elif type(v) is tuple and v and all(_is_number(x) and type(x) is not bool for x in v):
            spec.append((k, len(v)))
            nums.extend(float(x) for x in v)
        else:
            consts.append((k, v))
    if t is not None:
        nums.append(float(t))
    # (one float64 array: one input of the computation, not one per number)
    return np.array(nums, np.float64), (tuple(spec), tuple(consts), opt._flags(group), t is not None)


def _group_values(flags: tuple, nums: list, hosts: list) -> tuple[dict, Any]:
    """The group (numbers as ``_Num``) and the step count, inside the computation."""
    spec, consts, _, has_t = flags
    group, i = dict(consts), 0
    for k, n in spec:
        if n is None:
            group[k] = _Num(nums[i], hosts[i])
            i += 1
        else:
            group[k] = tuple(_Num(nums[i + j], hosts[i + j]) for j in range(n))
            i += n
    return group, (_Num(nums[i], hosts[i]) if has_t else None)


def _update_values(opt: Any, flags: tuple, nums: list, hosts: list, p: Any, g: Any,
                   state: dict) -> tuple[Any, dict]:
    """One parameter's new value and state: the optimizer's ``_flat_step`` on JAX values,
    then ``p - step`` (``p * factor - step`` for AdamW's decay), as ``FlatUpdate.run``."""
    group, t = _group_values(flags, nums, hosts)
    if group.get("maximize"):
        g = -g
    b = _JBucket(g, p, dict(state))
    factor = opt._flat_step(group, b, t)
    base = p if factor is None else _JX.mul(p, factor)
    return _JX.sub(base, b.S), b.state


# ---------------------------------------------------------------- the program

class XlaProgram(Program):
    """A recorded step compiled by XLA (see the module docstring). Same fields and guards
    as ``program.Program``; ``run`` calls one jitted function."""

    backend = "xla"

    def __init__(self, draft: dict, builder: XlaBuilder) -> None:
        super().__init__(draft)
        require_jax()
        externals = builder.externals
        self._shapes, self._host_shapes = builder.shapes, builder.host_shapes
        code = [ins for ins in draft["code"]]
        self.instructions = code
        self.labels = [ins.label for ins in code]
        self._code = code
        self._draft = None
        self.loads = [(ins.f, ins.out) for ins in draft["loads"]]
        self.host_code = [ins for ins in code if isinstance(ins.f, XEffect) and ins.f.on_host]
        self.trace_code = [ins for ins in code if not (isinstance(ins.f, XEffect) and ins.f.on_host)]
        host_outs = {ins.out for ins in self.host_code}
        arg_slots = [s for s, _ in self.arg_slots]
        read = {s for ins in self.trace_code for s in ins.reads} | set(slots_in(self.template))
        # the host values the XLA computation reads: arguments and derived arrays
        self.host_in = sorted(s for s in set(arg_slots) | host_outs if s in read)
        self.index_checks = self._index_checks()
        # the tensors whose .grad the step reads or writes, and those it reads at the start
        self.leaves: dict = {}
        for ins in code:
            f = ins.f
            if type(f) in (AccumulateGrad, SetGradX):
                self.leaves.setdefault(f.key, f.ref)
        self.updates = [ins.f for ins in code if type(ins.f) is UpdateX]
        for u in self.updates:
            for _, ps, _ in u.buckets:
                for p in ps:
                    self.leaves.setdefault(ObjectKey(id(p)), Object(p))
        # tensors written (t.data =, in place, an optimizer's update): by identity
        self.targets: list = []   # refs, in the order the outputs come back
        self._replaced: set = set()  # targets whose array is replaced, not written in place
        self._target_index: dict = {}
        for ins in code:
            f = ins.f
            if type(f) in (WriteData, WriteInPlace) and type(f.ref) is not Slot:
                self._target(f.ref)
                if type(f) is WriteData:  # `t.data = v`: t gets a new array, as eagerly
                    self._replaced.add(self._target_index[leaf_key(f.ref)])
            if type(f) is UpdateX:
                for _, ps, _ in f.buckets:
                    for p in ps:
                        self._target(Object(p))
        self._check_sharing(externals)
        self._bumped = {i for i, r in enumerate(self.targets)
                        if type(r) is Object and any(r.obj is p for u in self.updates
                                                    for _, ps, _ in u.buckets for p in ps)}
        self.consts = {s: self.values[s] for s in self.const if s in read}
        self._leaf_keys = list(self.leaves)
        # the .grad values the computation reads as they were before the call (an
        # accumulation into a .grad the step did not set, an update of a parameter whose
        # gradient the step did not write); the others are not handed over
        written, reads = set(), []
        for ins in self.trace_code:
            f = ins.f
            kind = type(f)
            if kind is AccumulateGrad and not f.fresh and f.key not in written and f.key not in reads:
                reads.append(f.key)
            if kind is AccumulateGrad or kind is SetGradX:
                written.add(f.key)
            if kind is UpdateX:
                for _, ps, _ in f.buckets:
                    for p in ps:
                        k = ObjectKey(id(p))
                        if k not in written and k not in reads:
                            reads.append(k)
        self._grad_in_keys = reads
        # one jitted function per input layout and formula flags, taking only the buffers
        # (static arguments cost a hash and a comparison in every call's dispatch)
        self._jits: dict = {}
        self._out_layouts: dict = {}  # (input key, static) -> how the outputs come packed
        self._load_slots: dict = {}  # id(tensor) -> the slots its value is loaded into
        for t, s in self.loads:
            self._load_slots.setdefault(id(t), []).append(s)
        self._carry: list | None = None  # (laid out by _trial: _layout_carry)
        self._home: Carry | None = None  # the carry the tensors' and the state's values are in
        self._fast: dict = {}  # static -> the last call's layout, jitted function and outputs

    def _target(self, ref: Any) -> None:
        k = leaf_key(ref)
        if k not in self._target_index:
            self._target_index[k] = len(self.targets)
            self.targets.append(ref)

    def _check_sharing(self, externals: list) -> None:
        """An XLA value never shares memory: a tensor written by the step (in place or by
        the optimizer) that shares its array with another tensor the step reads would be
        seen changed through that one by NumPy, not by XLA."""
        written = [r.obj for r in self.targets if type(r) is Object]
        others = [t for t, _ in externals]
        for w in written:
            for t in others:
                if t is not w and np.may_share_memory(t._data, w._data):
                    raise Unsupported("a tensor written by the step shares memory with another "
                                      "tensor it reads")

    def _index_checks(self) -> list:
        """For each getitem/scatter_add whose index holds this call's arrays: (slot, axis
        size) per index array, checked on the host before the call."""
        checks = []
        for ins in self.trace_code:
            f = ins.f
            if type(f) is not XKernel or f.op not in _index_ops():
                continue
            index = f.kw.get("index")
            if not any(type(v) is _Slot for v in (index if isinstance(index, tuple) else (index,))):
                continue
            shape = f.kw["shape"] if f.op.name == "scatter_add" else f.in_shape
            parts = index if isinstance(index, tuple) else (index,)
            if any(p is Ellipsis or p is None for p in parts):
                raise Unsupported(f"operation {f.op.name!r} with an index of this call's arrays "
                                  "beside None or Ellipsis")
            for axis, p in enumerate(parts):
                if type(p) is _Slot:
                    checks.append((p.s, shape[axis], axis, f.op.name))
        return checks

    # ------------------------------------------------------------ the traced function

    def _pure(self, inp: dict, static: tuple) -> dict:
        jnp = _jnp
        env: dict = {s: jnp.asarray(v) for s, v in self.consts.items()}
        env.update(inp["host"])
        env.update(inp["loads"])
        tr = _Trace(self, inp, static)
        for ins in self.trace_code:
            f = ins.f
            if type(f) is XKernel:
                env[ins.out] = f([env[s] for s in ins.a], env)
            else:
                f.trace(ins, env, tr)  # the effect's own
        index = {k: i for i, k in enumerate(self._leaf_keys)}
        return {"out": [env[s] for s in self._out_slots], "written": tr.written,
                "states": tr.states_out, "grads": {index[k]: v for k, v in tr.pending.items()}}

    @property
    def _out_slots(self) -> list:
        return [s for s in slots_in(self.template) if s not in self.const]

    @property
    def code(self) -> list:
        return self._code

    @property
    def kernels(self) -> int:
        """How many primitive calls the XLA computation holds (before XLA fuses them)."""
        return sum(1 for ins in self._code if type(ins.f) is XKernel)

    # ------------------------------------------------------------ a call

    def guard(self) -> bool:
        # (the tensors' shapes from their pending values: a guard never settles one)
        for t, shape, dtype, rg in self.guards:
            d = peek(t)
            if d.shape != shape or d.dtype != dtype or t.requires_grad != rg:
                return False
        guards, self.guards = self.guards, ()
        try:
            if not super().guard():
                return False
        finally:
            self.guards = guards
        for u in self.updates:  # the optimizer's state where the recording left it
            state = raw_state(u.opt)
            for index, ps, names in u.buckets:
                step = None
                if not names and u.opt._counts is None:
                    continue  # (plain SGD: no state)
                for p in ps:
                    st = state.get(p)
                    if st is None:
                        return False
                    shape = peek(p).shape
                    for n in names:
                        a = st.get(n)
                        if not (type(a) is Pending or isinstance(a, np.ndarray)) or a.shape != shape:
                            return False
                    if u.opt._counts == "shared":
                        t = st.get("step")
                        if t is None or (step is not None and t != step):
                            return False
                        step = t
                    elif u.opt._counts == "each" and st.get("step") is None:
                        return False
        return True

    def _inputs(self, leaves: list, trial: bool = False) -> tuple[dict, tuple, list]:
        """The call's inputs: what it reads from the host (the carried values are None
        here unless ``trial``: they come in the carry, ``_carry_in``)."""
        env: dict = {}
        for (s, is_tensor), leaf in zip(self.arg_slots, leaves):
            # (the recording's leaves: an array argument was a Tensor there)
            env[s] = leaf._data if is_tensor or trial and isinstance(leaf, Tensor) else leaf
        for ins in self.host_code:
            f = ins.f
            if trial:  # (shapes only: a draw would move its generator)
                env[ins.out] = _jax.ShapeDtypeStruct(*self._host_shapes[ins.out])
                continue
            out = f.host(env)
            out = env[ins.out] = np.asarray(out) if not isinstance(out, np.ndarray) else out
            if out.shape != self._host_shapes[ins.out][0]:  # (compiled for the recorded one)
                raise Recapture(f"derive: the values give shape {out.shape}, the recording "
                                f"{self._host_shapes[ins.out][0]}")
        for s, n, axis, name in [] if trial else self.index_checks:
            a = env[s]
            if a.size and (a.dtype.kind in "iu") and (a.max() >= n or a.min() < -n):
                bad = a.max() if a.max() >= n else a.min()
                raise IndexError(f"{name}: index {bad} is out of bounds for axis {axis} with "
                                 f"size {n} (in a dg.compile replay)")
        host = {s: env[s] for s in self.host_in}
        carried = self._carried_tensors if self._carry is not None else ()
        loads = {s: None if id(t) in carried else host_value(t) for t, s in self.loads}
        grads = []
        for key in self._grad_in_keys:
            ref = self.leaves[key]
            t = _tensor_of(ref, leaves)
            grads.append(None if t._grad is None else host_value(t._grad))
        params = [None] * len(self.targets)
        opt_nums, opt_flags, opt_state, steps = [], [], [], []
        for u in self.updates:
            nb, fb, sb, tb = [], [], [], []
            state = raw_state(u.opt)
            for index, ps, names in u.buckets:
                group = u.opt.param_groups[index]
                sts = [state.get(p, {}) for p in ps]
                t = sts[0].get("step") if u.opt._counts == "shared" else None
                nums, flags = _group_numbers(u.opt, group, None if t is None else t + 1)
                nb.append(nums)
                fb.append(flags)
                if self._carry is None:
                    sb.append([[_host_entry(st[n]) for n in names] for st in sts])
                else:
                    sb.append([[None] * len(names) for _ in sts])
                for p in ps:
                    ti = self._target_index[ObjectKey(id(p))]
                    if self._carry is None or ti not in self._carried_written:
                        params[ti] = host_value(p)
                tb.append((sts, None if t is None else t + 1))
            opt_nums.append(nb)
            opt_flags.append(tuple(fb))
            opt_state.append(sb)
            steps.append(tb)
        inp = {"host": host, "loads": loads, "grads": grads, "opt": opt_nums, "state": opt_state,
               "params": params}
        return inp, tuple(opt_flags), steps

    # ------------------------------------------------------------ the carry
    # The values that stay on the XLA side between calls (see ``resident``): the new
    # values of the tensors the step writes in place (parameters), the new .grad of the
    # tensors that outlive the call, and the optimizer state. They come out of the
    # computation packed, one buffer per dtype (``_carry``: each value's place), and go
    # back in in the same layout: as the device buffers themselves when every value read
    # is still pending in them, else packed on the host from the values as they are.

    def _layout_carry(self, out: dict) -> None:
        """The carry's layout, from the shapes of a traced call's results ``out``."""
        keys = []
        for ti, v in sorted(out["written"].items()):
            if type(self.targets[ti]) is Object and ti not in self._replaced:
                keys.append(("data", ti, v))
        for uc, ub in enumerate(out["states"]):
            for bi, bs in enumerate(ub):
                for pi, ps in enumerate(bs):
                    for ni, v in enumerate(ps):
                        keys.append(("state", (uc, bi, pi, ni), v))
        for j, v in sorted(out["grads"].items()):
            if v is not None and type(self.leaves[self._leaf_keys[j]]) is Object:
                keys.append(("grad", j, v))
        sizes: dict = {}
        dts = sorted({np.dtype(v.dtype).str for _, _, v in keys})
        carry = []
        for kind, where, v in keys:
            dt = np.dtype(v.dtype)
            g = dts.index(dt.str)
            off = sizes.get(g, 0)
            sizes[g] = off + math.prod(v.shape)
            carry.append((kind, where, g, off, tuple(v.shape), dt))
        self._carry_sizes = [(sizes.get(g, 0), np.dtype(dt)) for g, dt in enumerate(dts)]
        self._carried_written = {w for k, w, *_ in carry if k == "data"}
        self._carried_grads = {w for k, w, *_ in carry if k == "grad"}
        self._carried_tensors = {id(self.targets[w][1]) for w in self._carried_written}
        # the carried values the computation reads: the tensors' values and the state
        self._carry_reads = [c for c in carry if c[0] != "grad"]
        self._carry = carry

    def _holder(self, kind: str, where: Any) -> Any:
        """What holds a carried value now: the tensor's array or Pending, the state entry."""
        if kind == "data":
            return peek(self.targets[where][1])
        uc, bi, pi, ni = where
        u = self.updates[uc]
        _, ps, names = u.buckets[bi]
        st = raw_state(u.opt).get(ps[pi])
        return None if st is None else st.get(names[ni])

    def _carry_in(self) -> tuple[tuple, bool]:
        """The carry to hand in, and whether it is the last call's buffers themselves
        (every value read still pending in this program's home carry)."""
        if self._home is not None:
            for t, pend in self._data_checks:
                if peek(t) is not pend:
                    break
            else:
                for state, p, name, pend in self._state_checks:
                    st = state().get(p)
                    if st is None or st.get(name) is not pend:
                        break
                else:
                    return self._home.dev, True
        bufs = [np.zeros(n, dt) for n, dt in self._carry_sizes]
        for kind, where, g, off, shape, dt in self._carry_reads:
            h = self._holder(kind, where)
            v = h.value() if type(h) is Pending else h
            bufs[g][off:off + math.prod(shape)] = np.reshape(v, -1)
        return tuple(bufs), False

    def _keep(self, carry_out: tuple, same: bool) -> None:
        """Leave the carry's values pending: the tensors' and the state's in this program's
        home carry (``same``: they are pending there already, only the buffers move on),
        the ``.grad``\\s in a carry of this call's own (an earlier ``.grad`` keeps its values)."""
        home = self._home
        if home is None:
            home = self._home = Carry(carry_out)
            self._pends = [None if k == "grad" else Pending(home, g, off, shape, dt, None)
                           for k, w, g, off, shape, dt in self._carry]
            self._data_checks = [(self.targets[c[1]][1], pend) for c, pend in zip(self._carry, self._pends)
                                 if c[0] == "data"]
            self._state_checks = []
            for c, pend in zip(self._carry, self._pends):
                if c[0] == "state":
                    uc, bi, pi, ni = c[1]
                    u = self.updates[uc]
                    _, ps, names = u.buckets[bi]
                    self._state_checks.append((functools.partial(raw_state, u.opt), ps[pi],
                                               names[ni], pend))
            self._bump_pends = [pend for c, pend in zip(self._carry, self._pends)
                                if c[0] == "data" and c[1] in self._bumped]
        else:
            home.reset(carry_out)
        if not same:
            for (kind, where, *_), pend in zip(self._carry, self._pends):
                if kind == "data":
                    t = self.targets[where][1]
                    pend.old = old_array(t)
                    set_pending(t, pend)
                elif kind == "state":
                    uc, bi, pi, ni = where
                    u = self.updates[uc]
                    _, ps, names = u.buckets[bi]
                    st = raw_state(u.opt)[ps[pi]]
                    a = st[names[ni]]
                    pend.old = a.old if type(a) is Pending else a
                    st[names[ni]] = pend
        for pend in self._bump_pends:
            _bump(pend.old)
        grads = None
        for kind, where, g, off, shape, dt in self._carry:
            if kind == "grad":
                if grads is None:
                    grads = Carry(carry_out)
                gt = _wrap(_EMPTY)
                set_pending(gt, Pending(grads, g, off, shape, dt, None))
                self.leaves[self._leaf_keys[where]][1]._grad = gt

    # ------------------------------------------------------------ packing
    # One argument per dtype instead of one per array: each array handed to a jitted
    # function costs a transfer and a few microseconds of dispatch. The host concatenates
    # the host inputs into one flat buffer per dtype; inside the computation they are
    # slices of it (free for XLA). The host results come back the same way, and are views
    # of the buffers here; the carried values come back as the carry's buffers.

    def _packed(self, bufs: tuple, carry: tuple, key: tuple, static: tuple) -> tuple:
        treedef, layout = key
        arrays = []
        for g, off, shape in layout:
            if off is None:  # an array handed over by itself
                arrays.append(bufs[g])
                continue
            n = math.prod(shape)
            arrays.append(bufs[g][off:off + n].reshape(shape))
        inp = _jax.tree_util.tree_unflatten(treedef, arrays)
        slots_of = self._load_slots
        for kind, where, g, off, shape, dt in self._carry_reads:
            v = carry[g][off:off + math.prod(shape)].reshape(shape)
            if kind == "data":
                inp["params"][where] = v
                for s in slots_of.get(id(self.targets[where][1]), ()):
                    inp["loads"][s] = v
            else:
                uc, bi, pi, ni = where
                inp["state"][uc][bi][pi][ni] = v
        out = self._pure(inp, static)
        parts: list = [[] for _ in self._carry_sizes]
        for kind, where, g, off, shape, dt in self._carry:
            if kind == "data":
                v = out["written"].pop(where)
            elif kind == "grad":
                v = out["grads"].pop(where)
            else:
                uc, bi, pi, ni = where
                v = out["states"][uc][bi][pi][ni]
            parts[g].append(v.reshape(-1))
        del out["states"]
        carry_out = tuple(_jnp.concatenate(p) if len(p) > 1 else p[0] for p in parts)
        leaves, out_tree = _jax.tree_util.tree_flatten(out)
        groups: dict = {}
        out_layout = []
        seen: dict = {}  # a value returned twice (a result that is also a .grad) comes back once
        for a in leaves:
            dt = np.dtype(a.dtype).str
            if id(a) in seen:
                out_layout.append(seen[id(a)])
                continue
            members = groups.setdefault(dt, [])
            seen[id(a)] = (dt, sum(math.prod(m.shape) for m in members), tuple(a.shape))
            out_layout.append(seen[id(a)])
            members.append(a)
        dts = sorted(groups)
        self._out_layouts[(key, static)] = (out_tree, [(dts.index(dt), off, shape)
                                                       for dt, off, shape in out_layout])
        return tuple(_jnp.concatenate([m.reshape(-1) for m in groups[dt]]) for dt in dts), carry_out

    def _call(self, inp: dict, static: tuple, carry: tuple) -> tuple[dict, tuple]:
        leaves, treedef = _jax.tree_util.tree_flatten(inp)
        arrays = [a if type(a) is np.ndarray else np.asarray(a) for a in leaves]
        fast = self._fast.get(static)
        if fast is not None and fast[0] == treedef and fast[1] == [(a.dtype, a.shape) for a in arrays]:
            # the layout of the last call (the common case): no key to build and hash
            _, _, groups, own, jit, out_tree, out_plan = fast
            bufs = tuple([arrays[g[0]].reshape(-1) if len(g) == 1 else
                          np.concatenate([arrays[i].reshape(-1) for i in g]) for g in groups]
                         + [arrays[i] for i in own])
        else:
            jit, bufs, groups, own, key = self._prepare(arrays, treedef, static)
            out_tree = out_plan = None
        host_out, carry_out = jit(bufs, carry)
        outs = [np.asarray(o) for o in host_out]
        if out_plan is None:
            out_tree, layout = self._out_layouts[(key, static)]
            out_plan = [(g, off, off + math.prod(shape), shape, math.prod(shape) == outs[g].size)
                        for g, off, shape in layout]
            self._fast[static] = (treedef, [(a.dtype, a.shape) for a in arrays], groups, own, jit,
                                  out_tree, out_plan)
        res = [outs[g].reshape(shape) if whole else outs[g][lo:hi].reshape(shape)
               for g, lo, hi, shape, whole in out_plan]
        return _jax.tree_util.tree_unflatten(out_tree, res), carry_out

    def _prepare(self, arrays: list, treedef: Any, static: tuple) -> tuple:
        """The jitted function for this layout of host inputs (made at its first call),
        the inputs packed, and the packing (per buffer, the arrays in it)."""
        groups: dict = {}
        layout = []
        own = []
        for i, a in enumerate(arrays):
            if a.size > _PACK_MAX:
                layout.append((None, len(own), a.shape, a.dtype.str))
                own.append(i)
                continue
            dt = a.dtype.str
            members = groups.setdefault(dt, [0, []])
            layout.append((dt, members[0], a.shape, None))
            members[0] += a.size
            members[1].append(i)
        dts = sorted(groups)
        ng = len(dts)
        key = (treedef, tuple((ng + off, None, (shape, dt)) if g is None else (dts.index(g), off, shape)
                              for g, off, shape, dt in layout))
        members = [groups[dt][1] for dt in dts]
        bufs = tuple([arrays[g[0]].reshape(-1) if len(g) == 1 else
                      np.concatenate([arrays[i].reshape(-1) for i in g]) for g in members]
                     + [arrays[i] for i in own])
        jit = self._jits.get((key, static))
        if jit is None:
            jit = self._jits[(key, static)] = _jax.jit(functools.partial(self._packed, key=key,
                                                                         static=static))
        return jit, bufs, members, own, key

    def run(self, leaves: list) -> Any:
        inp, static, steps = self._inputs(leaves)
        self._hosts = inp["opt"]  # (the numbers' host values, read if this call traces)
        carry_in, same = self._carry_in()
        try:
            res, carry_out = self._call(inp, static, carry_in)
        except Unsupported as e:
            raise RuntimeError(f"dg.compile(backend='xla'): {e}, at a new call's structure; "
                               "compile this step with the NumPy backend") from None
        # everything computed: write back (nothing above changed any state)
        for i, ref in enumerate(self.targets):
            v = res["written"].get(i)
            if v is None:
                continue
            t = _tensor_of(ref, leaves)
            if i in self._replaced:
                t._data = np.array(v)
                if i in self._bumped:
                    _bump(t._data)
            else:
                _store(t, v, bump=i in self._bumped)
        self._keep(carry_out, same)
        for u, tb in zip(self.updates, steps):
            mark_optimizer(u.opt)
            each = u.opt._counts == "each"
            for sts, t in tb:
                if t is not None:
                    for st in sts:
                        st["step"] = t
                elif each:
                    for st in sts:
                        st["step"] += 1
        made: dict = {}
        for i, value in res["grads"].items():
            ref = self.leaves[self._leaf_keys[i]]
            t = _tensor_of(ref, leaves)
            t._grad = None if value is None else _wrap(np.array(value))
        outs = dict(zip(self._out_slots, res["out"]))
        return self._rebuild_x(self.template, outs, leaves, made)

    def _trial(self, leaves: list) -> None:
        """Trace once now (shapes only, nothing runs), so that what cannot be lowered is
        found while the NumPy backend can still take over; the carry's layout from it."""
        inp, static, _ = self._inputs(leaves, trial=True)
        self._hosts = inp["opt"]
        out = _jax.eval_shape(lambda i: self._pure(i, static), inp)
        self._layout_carry(out)

    def _rebuild_x(self, t: Any, outs: dict, leaves: list, made: dict) -> Any:
        kind = type(t)
        if kind is Slot:
            if t.slot in self.const:
                return _wrap(np.array(self.values[t.slot]))
            m = made.get(t.slot)
            if m is None:
                m = made[t.slot] = _wrap(np.array(outs[t.slot]))
            return m
        if kind is Argument:
            return leaves[t.index]
        if kind is Object or kind is Value:
            return t[1]
        if kind is List:
            return [self._rebuild_x(v, outs, leaves, made) for v in t.items]
        if kind is Tuple:
            return tuple(self._rebuild_x(v, outs, leaves, made) for v in t.items)
        if kind is Named:
            return t.type(*[self._rebuild_x(v, outs, leaves, made) for v in t.items])
        return {k: self._rebuild_x(v, outs, leaves, made) for k, v in t.items.items()}


_EMPTY = np.zeros(0)


def _host_entry(a: Any) -> Any:
    """A state entry as a host array (a pending one's view, left pending)."""
    return a.value() if type(a) is Pending else a


def _tensor_of(ref: Any, leaves: list) -> Tensor:
    """The tensor a leaf reference names in this call: its argument, or the object."""
    return leaves[ref.index] if type(ref) is Arg else ref.obj


def _store(t: Tensor, v: np.ndarray, bump: bool) -> None:
    d = t._data
    if d.flags.writeable and d.shape == v.shape and d.dtype == v.dtype:
        np.copyto(d, v)
    else:
        t._data = np.array(v)
    if bump:
        _bump(t._data)


def build(rec: Recorder, leaves: list, wrapped: frozenset, result: Any,
          reuse_buffers: bool | None) -> Program:
    """The program for a recording: an ``XlaProgram``, or, where something in it has no
    XLA lowering, the NumPy backend's ``Program`` with a warning naming it."""
    require_jax()
    try:
        b = XlaBuilder(rec, leaves, wrapped)
        draft = b.build(result)
        program = XlaProgram(draft, b)
        program._trial(leaves)
        return program
    except Unsupported as e:
        warnings.warn(f"dg.compile(backend='xla'): {e} has no XLA lowering; this step runs on "
                      "the NumPy backend", UserWarning, stacklevel=4)
        program = Program(Builder(rec, leaves, wrapped).build(result), reuse_buffers)
        program.backend = "numpy"
        return program

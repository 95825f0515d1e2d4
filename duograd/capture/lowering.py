"""Lowering: a recording (``recording.Recorder.log``) becomes a draft program.

Each primitive call becomes a kernel instruction over slots (the op row's ``replay``
fact gives the kernel), each effect record an effect instruction (the record lowers
itself, ``e.lower(builder)``, which calls the builder's method for its kind: the XLA
backend's ``XlaBuilder`` overrides them); constants are folded and what nobody reads is
dropped. References in the program are ``refs``' named records. The passes (``passes.py``) finish the draft at the
first replay.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .._context import Accumulate, Derive, Draw, Host, SetGrad, Update
from .._tensor import _CONSTANTS, Tensor, _wrap
from ..autograd import WithConstant
from .instructions import CALL1, CALL2, CALLN, EFFECT, LOAD, Instr, ShapeChecked, new
from .recording import Recorder, Write, warn_at_user_line
from .refs import Arg, Argument, Dict, List, Made, Named, Object, Slot, Tuple, Value, leaf_key, slots_in


def _kernel(op: Any, kw: dict) -> Any:
    """The op's replay kernel: its row's ``replay`` fact with ``kw`` bound (the same
    ufunc, method or indexing on the same arrays, so the result is the same bit for bit;
    the forward's own shape checks hold by the signature), else ``forward`` with ``kw``."""
    if op.replay is not None:
        return op.replay(**kw)
    return functools.partial(op.forward, **kw) if kw else op.forward


class Builder:
    """Turns a recording into a draft program (``build``)."""

    def __init__(self, rec: Recorder, leaves: list, wrapped: frozenset = frozenset()) -> None:
        self.rec = rec
        self.values: list = []           # initial contents of the slots (constants, None)
        self.const: set[int] = set()     # slots whose value is fixed at recording time
        self.by_tensor: dict[int, int] = {}
        self.by_array: dict[int, int] = {}
        self.arg_slots: list[tuple[int, bool]] = []
        self.externals: list[tuple[Tensor, int]] = []
        self.objects: dict[int, Any] = {}  # slot -> the argument Tensor (leaves' .grad)
        self.code: list = []             # Instr, or None where a write was dropped
        self.cleared: dict = {}          # leaf -> index of the set_grad(None) still in force
        self.shapes: dict[int, tuple] = {}  # slot -> shape of a primitive's result
        self.dtypes: dict[int, np.dtype] = {}
        self.strided: set[int] = set()   # slots whose recorded array is not C-contiguous
        self.hosts: list = []            # the host steps' arguments (recheck's snapshot)
        self.draws: list = []            # the draws' functions and arguments (their generators)
        self.constant_ids = {id(t) for t in _CONSTANTS.values()}
        self.kernels: dict = {}          # op -> its replay kernel, for calls without keywords
        # in-place writes' stand-ins (the op read t's values through them): id -> t
        self.standins = {id(e.src): e.t for e in rec.log
                         if type(e) is Write and e.src is not None}
        for i, leaf in enumerate(leaves):
            s = self.new_slot()
            if i in wrapped:  # an array argument, a Tensor while recording: read as the array
                self.by_tensor[id(leaf)] = s
                self.by_array[id(leaf._data)] = s
                self.arg_slots.append((s, False))
            elif isinstance(leaf, Tensor):
                self.by_tensor[id(leaf)] = s
                self.by_array[id(leaf._data)] = s
                self.objects[s] = Arg(i)
                self.arg_slots.append((s, True))
            else:
                self.by_array[id(leaf)] = s
                self.arg_slots.append((s, False))

    def check_not_a_view(self, old: int, t: Tensor, e: Any) -> None:
        """An in-place write ``e`` into ``t`` (a constant of the step, slot ``old``) must not
        write through memory another constant shares: a replay cannot follow a view."""
        arr = t._data
        for k in self.const:
            if k != old and isinstance(self.values[k], np.ndarray) and \
                    np.shares_memory(self.values[k], arr):
                raise RuntimeError(
                    f"dg.compile: {e.what} at {e.line} writes into a tensor made in the step "
                    "that shares memory with another (a view), which a replay cannot "
                    "follow; write into a clone() or outside the compiled function")

    def new_slot(self, value: Any = None, const: bool = False) -> int:
        self.values.append(value)
        if const:
            self.const.add(len(self.values) - 1)
        return len(self.values) - 1

    def slot(self, t: Tensor) -> int:
        """The slot of a Tensor read by the recording (argument, result, constant or external)."""
        s = self.by_tensor.get(id(t))
        if s is None:
            target = self.standins.get(id(t)) if self.standins else None
            if target is not None:  # t's values before its in-place write: t's slot now
                s = self.by_tensor[id(t)] = self.slot(target)
                return s
            s = self.by_array.get(id(t._data))
            if s is None:
                if id(t) in self.rec.made or id(t) in self.constant_ids:
                    s = self.new_slot(t._data, const=True)
                else:
                    s = self.new_slot()
                    self.externals.append((t, s))
                self.by_array.setdefault(id(t._data), s)
            self.by_tensor[id(t)] = s
        return s

    def dynamic(self, value: Any) -> bool:
        """Whether a keyword parameter holds an array that changes from call to call."""
        if isinstance(value, np.ndarray):
            s = self.by_array.get(id(value))
            return s is not None and s not in self.const
        if isinstance(value, (tuple, list)):
            return any(self.dynamic(v) for v in value)
        return False

    def kw_builder(self, kw: dict) -> tuple[Callable, list[int]]:
        """A function of the slot list that rebuilds ``kw`` with this call's arrays (the
        keywords that hold none are bound once; this runs on every replay)."""
        reads: list[int] = []

        def template(v: Any) -> Callable:
            if isinstance(v, np.ndarray) and self.dynamic(v):
                s = self.by_array[id(v)]
                reads.append(s)
                return lambda env: env[s]
            if isinstance(v, (tuple, list)) and self.dynamic(v):
                parts = [template(x) for x in v]
                kind = type(v)
                return lambda env: kind([p(env) for p in parts])
            return lambda env: v
        fixed = {k: v for k, v in kw.items() if not self.dynamic(v)}
        parts = [(k, template(v)) for k, v in kw.items() if k not in fixed]

        def build(env: list) -> dict:
            d = fixed.copy()
            for k, p in parts:
                d[k] = p(env)
            return d
        return build, reads

    # ------------------------------------------------------------ primitive calls

    def call(self, op: Any, xs: tuple, kw: dict, out: Tensor) -> None:
        """A kernel instruction for a primitive call (``new``: an Instr, all fields given)."""
        # (a recording can hold 10^5 calls: this method is written for speed; a first
        # call's cost is the eager run plus this, per primitive call)
        by_tensor, const = self.by_tensor, self.const
        ins = []
        folded = True
        for x in xs:
            s = by_tensor.get(id(x))
            if s is None:
                s = self.slot(x)
            ins.append(s)
            if folded and s not in const:
                folded = False
        dyn = False
        if kw:
            for v in kw.values():
                if self.dynamic(v):
                    dyn = True
                    break
        d = out._data
        if len(ins) == 1 and d is xs[0]._data and not dyn:
            by_tensor[id(out)] = ins[0]  # the forward handed its input back (identity, a
            return                       # no-op cast): the same slot, no kernel
        values = self.values
        o = len(values)
        values.append(None)
        by_tensor[id(out)] = o
        self.by_array[id(d)] = o
        self.shapes[o] = d.shape
        self.dtypes[o] = d.dtype
        if not d.flags.c_contiguous:
            self.strided.add(o)
        if (folded and not dyn) or op.shape_only:
            values[o] = d  # folded: the recorded value is the value
            const.add(o)
            return
        code, name = self.code, op.name
        if dyn:
            fwd, ins_t = op.forward, tuple(ins)
            if op.value_shape:  # what follows holds for the recorded shape only
                fwd = ShapeChecked(fwd, d.shape, name)
            build, reads = self.kw_builder(kw)

            if len(ins_t) == 1:
                a = ins_t[0]

                def kernel(env, st, fwd=fwd, build=build, a=a, o=o):
                    env[o] = fwd(env[a], **build(env))
            else:
                def kernel(env, st, fwd=fwd, build=build, ins_t=ins_t, o=o):
                    env[o] = fwd(*[env[i] for i in ins_t], **build(env))
            code.append(new((EFFECT, kernel, None, None, o, ins + reads, name, "kernel", op)))
        else:
            if kw:
                f = _kernel(op, kw)
            else:  # the same kernel for every call of the op: made once per recording
                f = self.kernels.get(op)
                if f is None:
                    f = self.kernels[op] = _kernel(op, kw)
            if op.value_shape:
                f = ShapeChecked(f, d.shape, name)
            if type(f) is WithConstant:  # a binary ufunc, its constant in a slot of its own
                c = self.new_slot(xs[0]._data.dtype.type(f.value), const=True)
                code.append(new((CALL2, f.ufunc, ins[0], c, o, ins, name, "kernel", op)))
            elif len(ins) == 2:
                code.append(new((CALL2, f, ins[0], ins[1], o, ins, name, "kernel", op)))
            elif len(ins) == 1:
                code.append(new((CALL1, f, ins[0], None, o, ins, name, "kernel", op)))
            else:
                code.append(new((CALLN, f, tuple(ins), None, o, ins, name, "kernel", op)))
        if d.ndim == 0:  # NumPy gives 0-d results as scalars; the engine holds arrays
            code.append(new((CALL1, np.asarray, o, None, o, [o], name, "kernel", None)))

    # ------------------------------------------------------------ effects

    def leaf_ref(self, t: Tensor) -> Any:
        """How a replay finds a tensor whose .grad it writes: an argument, a tensor ``fn``
        made (made afresh by each replay), or the object itself (a model's parameter)."""
        s = self.slot(t)
        if s in self.objects:
            return self.objects[s]
        if id(t) in self.rec.made:
            self.objects[s] = Made(s, t.requires_grad)
            return self.objects[s]
        return Object(t)

    @staticmethod
    def _leaf_key(ref: Any) -> Any:
        return leaf_key(ref)

    def derive(self, e: Derive) -> None:
        # (an array argument's, or a number argument's stand-in's: ``dg.tensor(lr)``)
        s = self.by_array.get(id(e.source)) if isinstance(e.source, np.ndarray) else None
        if s is None or s in self.const:
            return  # derived from a constant: a constant itself
        o = self.new_slot()
        self.by_array[id(e.out)] = o
        f = functools.partial(e.fn, **e.kw) if e.kw else e.fn
        f = ShapeChecked(f, np.shape(e.out), "derive")  # (its shape may depend on the values)
        self.code.append(new((CALL1, f, s, None, o, [s], "derive", "kernel", None)))

    def draw(self, e: Draw) -> None:  # random numbers: drawn again by every replay, in order
        self.draws.append((e.fn, e.args))
        o = self.new_slot()
        self.by_array[id(e.out)] = o
        self.code.append(Instr(CALLN, functools.partial(e.fn, *e.args), (), None, o, [], "draw",
                               "effect"))

    def accumulate(self, e: Accumulate) -> None:
        ref, gs = self.leaf_ref(e.leaf), self.slot(e.g)
        o = self.new_slot()
        self.by_tensor[id(e.out)] = o
        self.by_array[id(e.out._data)] = o
        copy_g = gs in self.const  # never hand a folded constant's array to .grad
        cleared = self.cleared.pop(self._leaf_key(ref), None)
        if cleared is not None:
            # .grad was set to None earlier in the step (zero_grad) and nothing read it
            # since: that write is dropped, and the sum is known to be g itself.
            self.code[cleared] = None

            def accumulate(env, st, ref=ref, gs=gs, o=o, copy_g=copy_g):
                g = env[gs].copy() if copy_g else env[gs]
                st.pending[st.resolve(ref, env)] = st.made[o] = _wrap(g)
                env[o] = g
        else:
            def accumulate(env, st, ref=ref, gs=gs, o=o, copy_g=copy_g):
                leaf = st.resolve(ref, env)
                old = st.pending[leaf] if leaf in st.pending else leaf._grad
                g = env[gs].copy() if copy_g else env[gs]
                new = _wrap(g) if old is None else _wrap(np.asarray(old._data + g))
                st.pending[leaf] = new
                st.made[o] = new
                env[o] = new._data
        self.code.append(new((EFFECT, accumulate, None, None, o, [gs], "accumulate .grad", "effect",
                              None)))

    def set_grad(self, e: SetGrad) -> None:
        ref = self.leaf_ref(e.t)
        vref = None if e.value is None else self.slot(e.value)
        if vref is None:
            self.cleared[self._leaf_key(ref)] = len(self.code)
        else:
            self.cleared.pop(self._leaf_key(ref), None)

        def set_grad(env, st, ref=ref, vref=vref):
            leaf = st.resolve(ref, env)
            st.pending[leaf] = None if vref is None else st.tensor(vref, env)
        self.code.append(new((EFFECT, set_grad, None, None, None, [] if vref is None else [vref],
                              "set .grad", "effect", None)))

    def host(self, e: Host) -> None:
        self.hosts.append(e.args)
        self.cleared.clear()  # a host step may read .grad
        self.code.append(Instr(EFFECT, HostStep(e.fn, e.args, e.kw), None, None, None, [],
                               getattr(e.fn, "__qualname__", "host"), "host"))

    def update(self, e: Update) -> None:
        """``opt.step()`` of an optimizer whose update runs as the program's own kernels
        (``optim.foreach.FlatUpdate``): one instruction that reads the gradients from the
        held-back ``.grad`` writes (nothing is committed), each group's numbers afresh, and
        updates parameters and state in place; it snapshots them only when something
        after it can fail. Parameters that are arguments or made by ``fn``, or that cannot
        share flat buffers, keep the host step."""
        from ..optim.foreach import FlatUpdate
        from ..optim import _write

        opt = e.opt

        def outlives(p: Tensor) -> bool:  # a tensor read but not given, not one of this call
            s = self.by_tensor.get(id(p))
            return id(p) not in self.rec.made and (s is None or type(self.objects.get(s)) is not Arg)
        plan = FlatUpdate.plan(opt, e.grads, _write) if all(map(outlives, opt.params)) else None
        if plan is None:
            return self.host(Host(e.fn, (opt,), {}))
        self.hosts.append((opt,))  # (recheck's snapshot: the optimizer and its parameters)
        self.cleared.clear()  # it reads .grad
        self.code.append(Instr(EFFECT, UpdateStep(plan, e.fn, opt), None, None, None, [],
                               getattr(e.fn, "__qualname__", "step"), "update"))

    def write(self, e: Write) -> None:
        """``t``'s values replaced (``t.data = ...``): later reads of ``t`` read the new
        values' slot, and a replay writes them into ``t`` when ``t`` outlives the step (an
        argument or a tensor read but not given). Values computed outside duograd's
        operations cannot be redone: that raises here, at the recording."""
        if e.inplace:
            return self.write_in_place(e)
        s = self.by_array.get(id(e.value))
        if s is None:  # (the recorder checked that a primitive made it)
            raise RuntimeError(f"dg.compile: {e.what} at {e.line}: the values written are "
                               "unknown to the recording")
        t = e.t
        old = self.by_tensor.get(id(t))
        self.by_tensor[id(t)] = s
        if id(t) in self.rec.made:
            return  # a tensor of the step itself: later reads read slot s, nothing to write
        ref = self.objects.get(old) if old is not None else None
        if type(ref) is not Arg:
            ref = Object(t)
        copy_v = s in self.const

        def write(env, st, ref=ref, s=s, copy_v=copy_v):
            t = st.resolve(ref, env)
            st.undo.append((t, t._data))
            t._data = env[s].copy() if copy_v else env[s]
        self.code.append(new((EFFECT, write, None, None, None, [s], e.what, "effect", None)))

    def write_in_place(self, e: Write) -> None:
        """``t``'s array written in place with ``value`` (``inplace.write``). A tensor that
        outlives the step (an argument, a parameter) and a result of the step's kernels are
        written in place by the replay too (views of them see it, as eagerly); a constant of
        the step (``h = dg.zeros(3); h[0] = x``) becomes the written value's slot."""
        t, v = e.t, e.value
        s = self.slot(v)
        old = self.slot(t)
        arg = self.objects.get(old)
        external = any(old == k for _, k in self.externals)
        if not external and type(arg) is not Arg and old in self.const:
            if e.before is not None:
                self.values[old] = e.before  # what the reads before the write saw
            self.check_not_a_view(old, t, e)
            if v._data.dtype != t._data.dtype:
                o = self.new_slot()
                self.code.append(new((CALL1, functools.partial(_cast_to, dtype=t._data.dtype), s,
                                      None, o, [s], e.what, "kernel", None)))
                s = o
            self.by_tensor[id(t)] = s
            self.by_array[id(t._data)] = s
            return
        if type(arg) is Arg:
            ref = arg
        elif external:
            ref = Object(t)
        else:
            ref = Slot(old)  # a result of the step's kernels: written in place

        def write_in_place(env, st, ref=ref, s=s, old=old):
            if type(ref) is Slot:
                arr = env[old]
            else:
                arr = st.resolve(ref, env)._data
                st.copies.append((arr, arr.copy()))
            np.copyto(arr, env[s], casting="same_kind")
        self.code.append(new((EFFECT, write_in_place, None, None, None, [s, old], e.what, "effect",
                              None)))

    # ------------------------------------------------------------ the result

    def output(self, obj: Any) -> Any:
        """A template of ``fn``'s result: Tensors become references to slots."""
        if isinstance(obj, Tensor):
            s = self.by_tensor.get(id(obj))
            if s is None and id(obj) in self.rec.made:
                # a tensor fn made from a derived array (``dg.tensor(x)`` of an argument):
                # computed again by each replay, unless it is a constant
                s = self.by_array.get(id(obj._data))
                if s is not None and s in self.const:
                    s = None
            if s is None:
                return Object(obj)  # returned as it is (an argument's or a model's tensor)
            ref = self.objects.get(s)
            if type(ref) is Arg:
                return Argument(ref.index)
            if id(obj) in self.rec.made and obj.requires_grad:  # a leaf fn made: its .grad too
                self.objects.setdefault(s, Made(s, True))
            return Slot(s)
        if isinstance(obj, tuple) and hasattr(type(obj), "_fields"):  # a named tuple
            return Named(type(obj), tuple(self.output(v) for v in obj))
        if isinstance(obj, tuple) and type(obj) is not tuple and \
                not any(isinstance(v, Tensor) for v in obj):
            return Value(obj)  # another tuple type of plain values (a shape: ``x.size()``)
        if isinstance(obj, list):
            return List([self.output(v) for v in obj])
        if isinstance(obj, tuple):
            return Tuple([self.output(v) for v in obj])
        if isinstance(obj, dict):
            return Dict({k: self.output(v) for k, v in obj.items()})
        if isinstance(obj, (np.ndarray, np.generic)):
            warn_at_user_line("dg.compile: fn returned a NumPy value computed outside duograd; a "
                              "replay returns the recorded value unchanged (return a Tensor instead)")
        return Value(obj)

    def build(self, result: Any) -> dict:
        """The draft: what ``program.Program`` needs (its code finished at the first replay)."""
        call = self.call
        for entry in self.rec.log:
            if type(entry) is tuple:
                call(*entry)
            else:
                entry.lower(self)  # the effect's own: this builder's method for its kind
        template = self.output(result)
        needed = set(slots_in(template))
        code = []
        for ins in reversed([ins for ins in self.code if ins is not None]):
            # drop what nobody reads (effects run; a kernel whose shape a replay checks
            # stays: its shape may be all that fn used, ``x[:k.shape[0]]``)
            if ins.role != "kernel" or ins.out in needed or type(ins.f) is ShapeChecked or \
                    (ins.op is not None and ins.op.value_shape):
                code.append(ins)
                needed.update(ins.reads)
        code.reverse()
        # Tensors read but not given: loaded at the start and again after each host step.
        loads = [new((LOAD, t, None, None, s, [], "load", "load", None))
                 for t, s in self.externals if s in needed]
        values = [v if i in self.const else None for i, v in enumerate(self.values)]
        guards = [(t, t._data.shape, t._data.dtype, t.requires_grad) for t, s in self.externals]
        attrs = list(self.rec.attrs.values())
        return dict(code=code, loads=loads, needed_out=set(slots_in(template)), shapes=self.shapes,
                    dtypes=self.dtypes, values=values, arg_slots=self.arg_slots, guards=guards,
                    template=template, const=self.const, strided=self.strided, attrs=attrs,
                    hosts=self.hosts, draws=self.draws)


class HostStep:
    """The instruction of a host step: commits the held-back ``.grad`` writes and runs
    ``fn(*args, **kw)``. ``snapshot`` (set by ``passes.finish``): whether something that
    can fail runs after it, so that it first snapshots what the step changes."""

    __slots__ = ("fn", "args", "kw", "snapshot")

    def __init__(self, fn: Callable, args: tuple, kw: dict) -> None:
        self.fn, self.args, self.kw, self.snapshot = fn, args, kw, False

    def __call__(self, env: list, st: Any) -> None:
        if self.snapshot:
            st.before_host(self.args)
        st.commit()
        self.fn(*self.args, **self.kw)


class UpdateStep:
    """The instruction of an optimizer's update run as the program's own kernels
    (``Builder.update``); ``snapshot`` as ``HostStep``'s."""

    __slots__ = ("plan", "fn", "opt", "snapshot")

    def __init__(self, plan: Any, fn: Callable, opt: Any) -> None:
        self.plan, self.fn, self.opt, self.snapshot = plan, fn, opt, False

    def __call__(self, env: list, st: Any) -> None:
        if not self.plan.prepare(st.pending):  # not as recorded (a gradient missing): eagerly
            if self.snapshot:
                st.before_host((self.opt,))
            st.commit()
            self.fn(self.opt)
            return
        if self.snapshot:
            self.plan.save(st)
        self.plan.run()


def _cast_to(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return a.astype(dtype)

"""Capture and replay: ``dg.compile`` records a step once and replays its NumPy work.

Eager duograd pays a fixed Python cost per primitive call: a Tensor object, graph
bookkeeping, rule dispatch, a dict of cotangents. ``dg.compile(fn)`` pays it once. The
first call for a signature runs ``fn`` eagerly inside a recording (``autograd.trace``):
every primitive call of the forward pass, the backward pass (VJP rules, the broadcasting
adjoint, casts, the seed of ones) and any ``duograd.func`` transform. Because every array
computation of a step is a primitive call (the engine's invariant, proved by
tests/compiled/test_tensor_replay.py), that recording *is* the step. It is compiled into a flat
program of instructions ``(kind, kernel, argument slots, result slot)`` over a list of
arrays (finished at the first replay: rewrites that keep every bit, and buffers reused
for results that never leave the replay), and later calls run that program in a tight loop: no Tensors, no graph, no
cotangent dicts, only the NumPy kernels, as tinygrad's TinyJit replays its kernels.

What the recording holds besides primitive calls, and how a replay treats it:

- **Arguments** (Tensors and NumPy arrays) are read from the new call. An array derived
  from one outside the primitives (a conversion, the class labels of cross-entropy) is
  derived again (``tensor._derive``).
- **Tensors the step reads but was not given** (a model's parameters) are read afresh,
  ``.data`` and all, every call: an optimizer that moved or replaced them is seen.
- **Constants** (Tensors made inside ``fn`` from fixed data, the seed of ones, anything
  computed from constants alone) are folded: computed once, at recording time.
- **Results nobody reads** are dropped.
- **Random draws** made through ``tensor._draw`` (``nn.Dropout``'s mask) are drawn again,
  from the same generator, so a replayed training run matches the eager one.
- **Effects** are replayed in order: gradients accumulated into ``.grad``, ``.grad``
  assignments (``zero_grad``), and host steps (``opt.step()``, a scheduler's step,
  ``clip_grad_norm_``: ``autograd.host``) called again. Writes to ``.grad`` are held back
  until the end or until a host step runs, so a replay that fails part-way leaves every
  ``.grad`` and parameter as it was (after a host step has run, parameters, gradients and
  optimizer state are restored from a snapshot).

Signatures and guards: one program per signature, the types, shapes and dtypes (and
``requires_grad``) of the array arguments, the other arguments by value, and whether
grad mode is on; at most ``CACHE_SIZE`` of them, least recently used evicted. Each
program also checks, every call, the shapes, dtypes and ``requires_grad`` of the tensors
it reads but was not given; a change records again.

What cannot be captured: Python decisions on tensor values (``if loss.item() > 1:``) are
frozen at the recorded branch, and so is anything computed in plain NumPy or Python from
a value (``.numpy()``, ``.item()``, ``float()``, ``bool()``, NumPy random draws of your own),
and so are module flags such as ``.training``. Reading a value while recording warns,
naming the line; ``recheck_every=N`` runs ``fn`` eagerly every N-th call and raises
``RuntimeError`` naming the first operation where the fresh recording differs. Tensors
a replay returns hold the right values but no graph (compile the whole step, backward
included). A call made while another recording, a ``jvp`` or ``dg.detect_anomaly()`` is
in progress runs eagerly.

>>> import duograd as dg
>>> w = dg.tensor([1.0, 2.0], requires_grad=True)
>>> def step(x):
...     loss = (w * x).sum()
...     loss.backward()
...     return loss
>>> fast = dg.compile(step)
>>> w.grad = None
>>> [float(fast(dg.tensor([3.0, 4.0]))) for _ in range(3)], fast.traces
([11.0, 11.0, 11.0], 1)
>>> w.grad.numpy()                        # three backwards accumulated, as eagerly
array([ 9., 12.])
"""

from __future__ import annotations

import copy
import functools
import gc
import hashlib
import operator
import os
import sys
import warnings
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from . import autograd, ops
from .autograd import EFFECT, ones_like_p, zeros_like_p
from ._tensor import _CONSTANTS, Tensor, _wrap

__all__ = ["compile", "Compiled", "CACHE_SIZE"]

CACHE_SIZE = 8             # programs kept per compiled function (least recently used evicted)
from . import _tensor as _state  # whose _capture we set
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_SHAPE_ONLY = (ones_like_p, zeros_like_p)  # results depend on the input's shape alone

_VIEWS = ("transpose", "reshape", "broadcast_to")  # kernels whose result is a view of their input
# Instruction kinds: (kind, kernel, a, b, out); Program.run spells them as literals
_CALL1, _CALL2, _CALLN, _LOAD, _EFFECT, _BUF1, _BUF2 = range(7)
# Whether ufunc results that stay inside the replay are written into arrays allocated once
# (``out=``) instead of new ones. benchmarks/run.py times the training steps both ways in
# one run (``compiled.no_buffer_reuse_*`` in the measurements).
REUSE_BUFFERS = True


def _kernel(op: Any, kw: dict) -> Callable:
    """``op.forward`` with ``kw`` bound, with as little Python in between as NumPy allows:
    the same ufunc, method or indexing on the same arrays, so the result is the same bit
    for bit (the forward's own shape checks hold by the signature)."""
    if op is ops.matmul_p:
        return np.matmul
    if op is ops.sum_p:
        return functools.partial(np.add.reduce, axis=kw["axis"], keepdims=kw["keepdims"])
    if op is ops.transpose_p:
        return operator.methodcaller("transpose", kw["axes"])
    if op is ops.reshape_p:
        return operator.methodcaller("reshape", kw["shape"])
    if op is ops.getitem_p:
        return operator.itemgetter(kw["index"])
    return functools.partial(op.forward, **kw) if kw else op.forward


# ---------------------------------------------------------------- signatures

def _flatten(obj: Any, leaves: list, where: str) -> Any:
    """A hashable key of ``obj`` with each Tensor or array replaced by its spec; the
    Tensors and arrays themselves go to ``leaves`` in order."""
    if isinstance(obj, Tensor):
        leaves.append(obj)
        return ("T", obj._data.shape, obj._data.dtype.str, obj.requires_grad)
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"dg.compile: {where} is an array of dtype {obj.dtype} (shape "
                            f"{obj.shape}), which cannot be part of a signature; pass numbers "
                            "as a numeric array or a Tensor")
        leaves.append(obj)
        return ("A", obj.shape, obj.dtype.str)
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(_flatten(v, leaves, f"{where}[{i}]") for i, v in enumerate(obj)))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _flatten(obj[k], leaves, f"{where}[{k!r}]"))
                              for k in sorted(obj, key=repr)))
    try:
        hash(obj)
    except TypeError:
        raise TypeError(f"dg.compile: {where} of type {type(obj).__name__} cannot be part of a "
                        "signature (it is compared by value, so it must be hashable); pass "
                        "Tensors, NumPy arrays or plain Python values") from None
    return ("V", type(obj), obj)


def _signature(args: tuple, kwargs: dict) -> tuple[Any, list]:
    leaves: list = []
    key = (tuple(_flatten(a, leaves, f"argument {i}") for i, a in enumerate(args)),
           tuple((k, _flatten(kwargs[k], leaves, f"argument {k!r}")) for k in sorted(kwargs)),
           autograd.is_grad_enabled())
    return key, leaves


# ---------------------------------------------------------------- recording

def _user_frame() -> tuple[int, str]:
    """The innermost frame outside duograd (the user's code): its ``stacklevel`` for a
    ``warnings.warn`` made by this function's caller, and its "file:line"."""
    f, level = sys._getframe(1), 1
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)).startswith(_PACKAGE):
        f, level = f.f_back, level + 1
    return level, f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"


class _Recorder:
    """What ``_tensor.py`` reports while ``fn`` runs eagerly: Tensors made from data,
    arrays derived outside primitives, ``.grad`` writes, reads of values."""

    def __init__(self) -> None:
        self.log: list = []
        self.made: set[int] = set()   # ids of Tensors made from data during the recording
        self.keep: list = []  # everything the log names stays alive, so ids stay unique

    def __enter__(self) -> "_Recorder":
        self._prev = autograd._trace
        autograd._trace = self.log
        _state._capture = self
        autograd._update_watching()
        return self

    def __exit__(self, *exc: object) -> None:
        autograd._trace = self._prev
        _state._capture = None
        autograd._update_watching()

    def created(self, t: Tensor) -> None:
        self.made.add(id(t))
        self.keep.append(t)

    def derived(self, out: np.ndarray, source: Any, fn: Callable, kw: dict) -> None:
        autograd._trace.append((EFFECT, "derive", (source, fn, kw), out))

    def drawn(self, out: np.ndarray, fn: Callable, args: tuple) -> None:
        autograd._trace.append((EFFECT, "draw", (fn, args), out))

    def set_grad(self, t: Tensor, value: Tensor | None) -> None:
        autograd._trace.append((EFFECT, "set_grad", (t,), value))

    def read_value(self, what: str) -> None:
        level, line = _user_frame()
        warnings.warn(f"dg.compile: {what} at {line} reads a tensor's value while "
                      "recording; a replay does not run this line again, so any decision or "
                      "number computed from it is frozen at its recorded value "
                      "(recheck_every=N re-runs eagerly to catch a change)",
                      RuntimeWarning, stacklevel=level)


def _fingerprint(value: Any) -> Any:
    """A comparable stand-in for a keyword parameter or a constant's value."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, hashlib.sha1(np.ascontiguousarray(value).tobytes()).hexdigest())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_fingerprint(v) for v in value))
    if isinstance(value, dict):
        return tuple((k, _fingerprint(v)) for k, v in sorted(value.items()))
    if isinstance(value, slice):
        return ("slice", value.start, value.stop, value.step)
    return value


class _Builder:
    """Turns a recording into a Program."""

    def __init__(self, rec: _Recorder, leaves: list, fingerprints: bool) -> None:
        self.rec = rec
        self.fingerprints = fingerprints  # only recheck_every compares them
        self.values: list = []           # initial contents of the slots (constants, None)
        self.const: set[int] = set()     # slots whose value is fixed at recording time
        self.by_tensor: dict[int, int] = {}
        self.by_array: dict[int, int] = {}
        self.arg_slots: list[tuple[int, bool]] = []
        self.externals: list[tuple[Tensor, int]] = []
        self.external_slots: dict[int, int] = {}  # slot -> id of the tensor
        self.objects: dict[int, Any] = {}  # slot -> the argument Tensor (leaves' .grad)
        self.code: list = []             # (kind, kernel, a, b, out, reads, label, role)
        self.prints: list = []           # the program's fingerprint, one entry per record
        self.cleared: dict = {}          # leaf -> index of the set_grad(None) still in force
        self.shapes: dict[int, tuple] = {}  # slot -> shape of a primitive's result
        self.dtypes: dict[int, np.dtype] = {}
        self.constant_ids = {id(t) for t in _CONSTANTS.values()}
        for i, leaf in enumerate(leaves):
            s = self.new_slot()
            if isinstance(leaf, Tensor):
                self.by_tensor[id(leaf)] = s
                self.by_array[id(leaf._data)] = s
                self.objects[s] = ("arg", i)
                self.arg_slots.append((s, True))
            else:
                self.by_array[id(leaf)] = s
                self.arg_slots.append((s, False))

    def new_slot(self, value: Any = None, const: bool = False) -> int:
        self.values.append(value)
        if const:
            self.const.add(len(self.values) - 1)
        return len(self.values) - 1

    def slot(self, t: Tensor) -> int:
        """The slot of a Tensor read by the recording (argument, result, constant or external)."""
        s = self.by_tensor.get(id(t))
        if s is None:
            s = self.by_array.get(id(t._data))
            if s is None:
                if id(t) in self.rec.made or id(t) in self.constant_ids:
                    s = self.new_slot(t._data, const=True)
                else:
                    s = self.new_slot()
                    self.externals.append((t, s))
                    self.external_slots[s] = id(t)
                self.by_array.setdefault(id(t._data), s)
            self.by_tensor[id(t)] = s
        return s

    def describe(self, s: int) -> Any:
        if s in self.const:
            return ("const", _fingerprint(self.values[s]))
        if s in self.external_slots:
            return ("external", self.external_slots[s])
        return ("slot", s)

    def dynamic(self, value: Any) -> bool:
        """Whether a keyword parameter holds an array that changes from call to call."""
        if isinstance(value, np.ndarray):
            s = self.by_array.get(id(value))
            return s is not None and s not in self.const
        if isinstance(value, (tuple, list)):
            return any(self.dynamic(v) for v in value)
        return False

    def kw_builder(self, kw: dict) -> tuple[Callable, list[int]]:
        """A function of the slot list that rebuilds ``kw`` with this call's arrays."""
        reads: list[int] = []

        def template(v: Any) -> Callable:
            if isinstance(v, np.ndarray) and self.dynamic(v):
                s = self.by_array[id(v)]
                reads.append(s)
                return lambda env: env[s]
            if isinstance(v, (tuple, list)) and self.dynamic(v):
                parts = [template(x) for x in v]
                kind = type(v)
                return lambda env: kind(p(env) for p in parts)
            return lambda env: v
        parts = {k: template(v) for k, v in kw.items()}
        return (lambda env: {k: p(env) for k, p in parts.items()}), reads

    def call(self, op: Any, xs: tuple, kw: dict, out: Tensor) -> None:
        by_tensor, const = self.by_tensor, self.const
        ins = []
        folded = True
        for x in xs:  # (a recording can hold 10^5 calls: this loop is written for speed)
            s = by_tensor.get(id(x))
            if s is None:
                s = self.slot(x)
            ins.append(s)
            if folded and s not in const:
                folded = False
        if self.fingerprints:
            self.prints.append((op.name, tuple(self.describe(s) for s in ins), _fingerprint(kw),
                                out._data.shape, out._data.dtype.str))
        dyn = bool(kw) and any(self.dynamic(v) for v in kw.values())
        if len(xs) == 1 and out._data is xs[0]._data and not dyn:
            by_tensor[id(out)] = ins[0]  # the forward handed its input back (identity, a
            return                       # no-op cast): the same slot, no kernel
        o = len(self.values)
        self.values.append(None)
        by_tensor[id(out)] = o
        self.by_array[id(out._data)] = o
        self.shapes[o] = out._data.shape
        self.dtypes[o] = out._data.dtype
        if (folded and not dyn) or op in _SHAPE_ONLY:
            self.values[o] = out._data  # folded: the recorded value is the value
            const.add(o)
            return
        fwd = op.forward
        if dyn:
            build, reads = self.kw_builder(kw)
            ins_t = tuple(ins)

            def kernel(env, st, fwd=fwd, build=build, ins_t=ins_t, o=o):
                env[o] = fwd(*[env[i] for i in ins_t], **build(env))
            self.code.append((_EFFECT, kernel, None, None, o, ins + reads, op.name, "kernel"))
        elif op is ops.relu_p:  # maximum(x, 0) as a binary ufunc, its zero a constant slot
            zero = self.new_slot(xs[0]._data.dtype.type(0), const=True)
            self.code.append((_CALL2, np.maximum, ins[0], zero, o, ins, op.name, "kernel"))
        else:
            fwd = _kernel(op, kw)
            if len(ins) == 1:
                self.code.append((_CALL1, fwd, ins[0], None, o, ins, op.name, "kernel"))
            elif len(ins) == 2:
                self.code.append((_CALL2, fwd, ins[0], ins[1], o, ins, op.name, "kernel"))
            else:
                self.code.append((_CALLN, fwd, tuple(ins), None, o, ins, op.name, "kernel"))
        if out._data.ndim == 0:  # NumPy gives 0-d results as scalars; the engine holds arrays
            self.code.append((_CALL1, np.asarray, o, None, o, [o], op.name, "kernel"))

    def leaf_ref(self, t: Tensor) -> Any:
        """How a replay finds a tensor whose .grad it writes: an argument, a tensor ``fn``
        made (made afresh by each replay), or the object itself (a model's parameter)."""
        s = self.slot(t)
        if s in self.objects:
            return self.objects[s]
        if id(t) in self.rec.made:
            self.objects[s] = ("made", s, t.requires_grad)
            return self.objects[s]
        return ("object", t)

    def effect(self, kind: str, args: tuple, out: Any) -> None:
        if kind == "derive":
            source, fn, kw = args
            s = self.by_array.get(id(source)) if isinstance(source, np.ndarray) else None
            if self.fingerprints:
                self.prints.append(("derive", getattr(fn, "__name__", repr(fn)), _fingerprint(kw),
                                    self.describe(s) if s is not None else ("value", _fingerprint(source))))
            if s is None or s in self.const:
                return  # derived from a constant: a constant itself
            o = self.new_slot()
            self.by_array[id(out)] = o
            self.code.append((_CALL1, functools.partial(fn, **kw) if kw else fn, s, None, o, [s],
                              "derive", "kernel"))
        elif kind == "draw":  # random numbers: drawn again by every replay, in the same order
            fn, fargs = args
            if self.fingerprints:
                self.prints.append(("draw", getattr(fn, "__qualname__", repr(fn)), _fingerprint(fargs)))
            o = self.new_slot()
            self.by_array[id(out)] = o
            self.code.append((_CALLN, functools.partial(fn, *fargs), (), None, o, [], "draw", "effect"))
        elif kind == "accumulate":
            leaf, g = args
            ref, gs = self.leaf_ref(leaf), self.slot(g)
            o = self.new_slot()
            self.by_tensor[id(out)] = o
            self.by_array[id(out._data)] = o
            copy_g = gs in self.const  # never hand a folded constant's array to .grad
            if self.fingerprints:
                self.prints.append(("accumulate", self._leaf_print(ref), self.describe(gs)))

            cleared = self.cleared.pop(self._leaf_print(ref), None)
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
            self.code.append((_EFFECT, accumulate, None, None, o, [gs], "accumulate .grad", "effect"))
        elif kind == "set_grad":
            (t,) = args
            ref = self.leaf_ref(t)
            if out is None:
                vref = None
            else:
                vref = self.slot(out)
            if self.fingerprints:
                self.prints.append(("set_grad", self._leaf_print(ref),
                                    None if vref is None else self.describe(vref)))

            if vref is None:
                self.cleared[self._leaf_print(ref)] = len(self.code)
            else:
                self.cleared.pop(self._leaf_print(ref), None)

            def set_grad(env, st, ref=ref, vref=vref):
                leaf = st.resolve(ref, env)
                st.pending[leaf] = None if vref is None else st.tensor(vref, env)
            self.code.append((_EFFECT, set_grad, None, None, None, [] if vref is None else [vref],
                              "set .grad", "effect"))
        elif kind == "host":
            fn, fargs, fkw = args
            if self.fingerprints:
                self.prints.append(("host", getattr(fn, "__qualname__", repr(fn)), len(fargs)))

            snapshot = [False]  # set by build: whether anything that can fail runs after it
            self.cleared.clear()  # a host step may read .grad

            def host(env, st, fn=fn, fargs=fargs, fkw=fkw, snapshot=snapshot):
                if snapshot[0]:
                    st.before_host(fargs)
                st.commit()
                fn(*fargs, **fkw)
            host.snapshot = snapshot
            self.code.append((_EFFECT, host, None, None, None, [], getattr(fn, "__qualname__", "host"),
                              "host"))

    @staticmethod
    def _leaf_print(ref: Any) -> Any:
        return ref if ref[0] != "object" else ("object", id(ref[1]))

    def output(self, obj: Any) -> Any:
        """A template of ``fn``'s result: Tensors become references to slots."""
        if isinstance(obj, Tensor):
            s = self.by_tensor.get(id(obj))
            if s is None:
                return ("object", obj)  # returned as it is (an argument's or a model's tensor)
            if s in self.objects and self.objects[s][0] == "arg":
                return ("argument", self.objects[s][1])
            if id(obj) in self.rec.made and obj.requires_grad:  # a leaf fn made: its .grad too
                self.objects.setdefault(s, ("made", s, True))
            return ("slot", s)
        if isinstance(obj, tuple) and type(obj) is not tuple:  # a named tuple
            return ("namedtuple", type(obj), tuple(self.output(v) for v in obj))
        if isinstance(obj, (list, tuple)):
            return (type(obj).__name__, [self.output(v) for v in obj])
        if isinstance(obj, dict):
            return ("dict", {k: self.output(v) for k, v in obj.items()})
        if isinstance(obj, (np.ndarray, np.generic)):
            warnings.warn("dg.compile: fn returned a NumPy value computed outside duograd; a replay "
                          "returns the recorded value unchanged (return a Tensor instead)",
                          RuntimeWarning, stacklevel=_user_frame()[0])
        return ("value", obj)

    def build(self, result: Any, leaves: list) -> "Program":
        for op, xs, kw, out in self.rec.log:
            if op is EFFECT:
                self.effect(xs, kw, out)
            else:
                self.call(op, xs, kw, out)
        template = self.output(result)
        needed = set(_slots_in(template))
        code = []
        for ins in reversed([ins for ins in self.code if ins is not None]):  # drop what nobody reads (effects always run)
            if ins[7] != "kernel" or ins[4] in needed:
                code.append(ins)
                needed.update(ins[5])
        code.reverse()
        # Tensors read but not given: loaded at the start and again after each host step.
        loads = [(_LOAD, t, None, None, s, [], "load", "load") for t, s in self.externals if s in needed]
        values = [v if i in self.const else None for i, v in enumerate(self.values)]
        guards = [(t, t._data.shape, t._data.dtype, t.requires_grad) for t, s in self.externals]
        draft = (code, loads, set(_slots_in(template)), self.shapes, self.dtypes)
        return Program(draft, values, self.arg_slots, guards, template, self.prints, self.const,
                       n_recorded=len(self.rec.log))


def _finish(code: list, loads: list, needed_out: set[int], shapes: dict, dtypes: dict) -> list:
    """The recorded code made ready to run: the rewrites, buffers, snapshot flags and the
    loads of tensors read but not given. Done at the first replay, so that the recording
    call does not pay for it."""
    code = _peephole(code, needed_out=needed_out, shapes=shapes)
    if REUSE_BUFFERS:
        code = _reuse_buffers(code, needed_out, shapes, dtypes)
    later_kernel = False
    for ins in reversed(code):  # a host step followed by kernels snapshots what it changes
        if ins[7] == "host":
            ins[1].snapshot[0] = later_kernel
        later_kernel = later_kernel or ins[7] != "host"
    program: list = list(loads)
    for ins in code:
        program.append(ins)
        if ins[7] == "host":
            program.extend(loads)  # a host step may have moved or replaced them
    while program and program[-1][0] == _LOAD:  # nothing reads them any more
        program.pop()
    return program


def _peephole(code: list, needed_out: set[int], shapes: dict[int, tuple]) -> list:
    """Two rewrites that leave every value the same bit for bit:

    - a 0-d result is turned into an array (``np.asarray``, as the eager engine holds it)
      only where something other than a ufunc reads it: a ufunc computes the same on a
      NumPy scalar, and a result handed out is wrapped into an array anyway;
    - an explicit ``broadcast_to`` read only by binary ufuncs whose result has the
      broadcast shape is dropped: the ufunc broadcasts the same way by itself.
    """
    readers: dict[int, list] = {}
    for ins in code:
        for s in ins[5]:
            readers.setdefault(s, []).append(ins)

    def ufunc_reader(ins: tuple) -> bool:
        return ins[7] == "kernel" and ins[0] in (_CALL1, _CALL2) and isinstance(ins[1], np.ufunc)

    out, renamed = [], {}
    for ins in code:
        kind, f, a, b, o, reads, label, role = ins
        if role == "kernel" and f is np.asarray and o not in needed_out and                 all(ufunc_reader(r) for r in readers.get(o, []) if r is not ins):
            continue
        if role == "kernel" and label == "broadcast_to" and kind == _CALL1 and o not in needed_out                 and readers.get(o) and all(ufunc_reader(r) and r[0] == _CALL2 and shapes.get(r[4]) == shapes.get(o)
                                           for r in readers[o]):
            renamed[o] = a
            continue
        if renamed and (a in renamed or b in renamed):
            a2, b2 = renamed.get(a, a), renamed.get(b, b)
            ins = (kind, f, a2, b2, o, [renamed.get(s, s) for s in reads], label, role)
        out.append(ins)
    return out


def _reuse_buffers(code: list, needed_out: set[int], shapes: dict[int, tuple],
                   dtypes: dict[int, np.dtype]) -> list:
    """Give each ufunc result that never leaves the replay an array of its own, allocated
    once and written in place (``out=``) by every replay, instead of a new one per call.

    A result leaves the replay when it is returned, stored into ``.grad``, read by an
    effect, or read by a kernel other than a ufunc, except through a view (a transpose,
    reshape or broadcast, which leaves only if the view does): such results keep a new
    array per call. Each slot is written once per replay, so its buffer is never read
    stale.
    """
    escapes = set(needed_out)
    views = []
    for ins in code:
        kind, f, a, b, o, reads, label, role = ins
        if role == "kernel" and label in _VIEWS and kind == _CALL1:
            views.append(ins)
        elif role != "kernel" or not (kind in (_CALL1, _CALL2) and _makes_new_array(f)):
            escapes.update(reads)
    for ins in reversed(views):  # a view of a view: from the last one back
        if ins[4] in escapes:
            escapes.add(ins[2])
    out = []
    for ins in code:
        kind, f, a, b, o, reads, label, role = ins
        shape = shapes.get(o)
        if role == "kernel" and isinstance(f, np.ufunc) and kind in (_CALL1, _CALL2) \
                and o not in escapes and shape and f.nout == 1 and o not in reads:
            buf = np.empty(shape, dtypes[o])
            if kind == _CALL1:
                ins = (_BUF1, f, a, buf, o, reads, label, role)
            else:
                ins = (_BUF2, f, (a, b), buf, o, reads, label, role)
        out.append(ins)
    return out


def _makes_new_array(f: Any) -> bool:
    """Whether kernel ``f`` returns a new array, never a view of an input: a ufunc, or a
    ufunc's reduction (``sum``)."""
    if isinstance(f, np.ufunc):
        return True
    inner = getattr(f, "func", None)  # functools.partial(np.add.reduce, ...)
    return getattr(inner, "__name__", None) == "reduce" and isinstance(getattr(inner, "__self__", None), np.ufunc)


def _slots_in(template: Any) -> list[int]:
    kind = template[0]
    if kind == "slot":
        return [template[1]]
    if kind in ("list", "tuple"):
        return [s for v in template[1] for s in _slots_in(v)]
    if kind == "namedtuple":
        return [s for v in template[2] for s in _slots_in(v)]
    if kind == "dict":
        return [s for v in template[1].values() for s in _slots_in(v)]
    return []


# ---------------------------------------------------------------- replaying

class _Replay:
    """The per-call state of a replay: the call's arguments, the held-back ``.grad``
    writes, the Tensors made for ``.grad``, and snapshots for a failure after a host step."""

    __slots__ = ("args", "pending", "made", "snapshots")

    def __init__(self, args: list) -> None:
        self.args = args
        self.pending: dict[Tensor, Tensor | None] = {}
        self.made: dict[int, Tensor] = {}
        self.snapshots: list | None = None

    def resolve(self, ref: Any, env: list) -> Tensor:
        kind = ref[0]
        if kind == "arg":
            return self.args[ref[1]]
        if kind == "made":
            t = self.made.get(ref[1])
            if t is None:
                t = self.made[ref[1]] = _wrap(env[ref[1]], ref[2])
            return t
        return ref[1]

    def tensor(self, s: int, env: list) -> Tensor:
        t = self.made.get(s)
        if t is None:
            t = self.made[s] = _wrap(env[s])
        return t

    def commit(self) -> None:
        for leaf, value in self.pending.items():
            leaf._grad = value
        self.pending.clear()

    def before_host(self, fargs: tuple) -> None:
        """Snapshot what a host step changes (its object's parameters, gradients and
        state), once per replay, so that a later failure can put it back."""
        if self.snapshots is None:
            self.snapshots = []
        self.snapshots.append(_snapshot(fargs))

    def rollback(self) -> None:
        for restore in reversed(self.snapshots or []):
            restore()


def _snapshot(fargs: tuple) -> Callable[[], None]:
    """A function that puts back what a host step called with ``fargs`` can change: the
    values and gradients of the Tensors among them (an optimizer's ``params`` included)
    and the attributes of the objects among them (an optimizer's state, a scheduler and
    its optimizer)."""
    owners: list = []
    tensors: dict[int, Tensor] = {}

    def visit(x: Any) -> None:
        if isinstance(x, Tensor):
            tensors.setdefault(id(x), x)
        elif isinstance(x, (list, tuple)):
            for v in x:
                visit(v)
        elif hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x) \
                and all(o is not x for o in owners):
            owners.append(x)
            visit(list(getattr(x, "params", ())))
            if hasattr(x, "optimizer"):
                visit(x.optimizer)
    visit(list(fargs))
    memo = {id(t): t for t in tensors.values()}
    memo.update({id(o): o for o in owners})
    saved_tensors = [(t, t._data, t._data.copy(), t._grad) for t in tensors.values()]
    saved_vars = [(o, {k: copy.deepcopy(v, memo) for k, v in vars(o).items()}) for o in owners]

    def restore() -> None:
        for t, arr, values, g in saved_tensors:
            if t._data is arr and arr.flags.writeable:
                arr[...] = values  # in place: an array shared through from_numpy stays shared
            else:
                t._data = values
            t._grad = g
        for o, attrs in saved_vars:
            vars(o).update(attrs)
    return restore


class Program:
    """One recorded step, compiled: instructions over a list of slots."""

    def __init__(self, draft: tuple, values: list, arg_slots: list, guards: list, template: Any,
                 prints: list, const: set[int], n_recorded: int) -> None:
        self._draft = draft
        self._code: list | None = None
        self.values = values
        self.arg_slots = arg_slots
        self.guards = guards
        self.template = template
        self.prints = prints
        self.const = const
        self.n_recorded = n_recorded

    @property
    def code(self) -> list:
        """The instructions ``(kind, kernel, a, b, out)``, finished on first use."""
        if self._code is None:
            program = _finish(*self._draft)
            self._code = [ins[:5] for ins in program]
            self.labels = [ins[6] for ins in program]
            self._draft = None
        return self._code

    @property
    def kernels(self) -> int:
        """How many NumPy kernels a replay runs."""
        return sum(1 for ins in self.code if ins[0] in (_CALL1, _CALL2, _CALLN, _BUF1, _BUF2))

    def guard(self) -> bool:
        """Whether the tensors read but not given still have their recorded shapes, dtypes
        and ``requires_grad``."""
        for t, shape, dtype, rg in self.guards:
            d = t._data
            if d.shape != shape or d.dtype != dtype or t.requires_grad != rg:
                return False
        return True

    def run(self, leaves: list) -> Any:
        env = self.values.copy()
        for (s, is_tensor), leaf in zip(self.arg_slots, leaves):
            env[s] = leaf._data if is_tensor else leaf
        st = _Replay(leaves)
        code, ins = self.code, None
        try:
            # The kinds are literals (_CALL2 == 1, _CALL1 == 0, _BUF2 == 6, _BUF1 == 5,
            # _LOAD == 3, _CALLN == 2),
            # most frequent first: this loop is the whole cost a replay adds per kernel.
            for ins in code:
                kind, f, a, b, o = ins
                if kind == 1:
                    env[o] = f(env[a], env[b])
                elif kind == 0:
                    env[o] = f(env[a])
                elif kind == 6:
                    env[o] = f(env[a[0]], env[a[1]], out=b)
                elif kind == 5:
                    env[o] = f(env[a], out=b)
                elif kind == 3:
                    env[o] = f._data
                elif kind == 2:
                    env[o] = f(*[env[i] for i in a])
                else:
                    f(env, st)
        except Exception as e:
            st.rollback()
            label = self.labels[code.index(ins)]
            if type(e) in (ValueError, IndexError, TypeError, FloatingPointError) and \
                    not str(e).startswith(label):
                raise type(e)(f"{label}: {e} (in a dg.compile replay)") from e
            raise
        st.commit()
        return self._rebuild(self.template, env, st, leaves)

    def _rebuild(self, t: Any, env: list, st: _Replay, leaves: list) -> Any:
        kind = t[0]
        if kind == "slot":
            made = st.made.get(t[1])
            if made is not None:
                return made
            value = env[t[1]]
            return _wrap(value.copy() if t[1] in self.const else value)
        if kind == "argument":
            return leaves[t[1]]
        if kind in ("object", "value"):
            return t[1]
        if kind == "list":
            return [self._rebuild(v, env, st, leaves) for v in t[1]]
        if kind == "tuple":
            return tuple(self._rebuild(v, env, st, leaves) for v in t[1])
        if kind == "namedtuple":
            return t[1](*[self._rebuild(v, env, st, leaves) for v in t[2]])
        return {k: self._rebuild(v, env, st, leaves) for k, v in t[1].items()}


def _first_difference(old: list, new: list) -> int | None:
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            return i
    return None if len(old) == len(new) else min(len(old), len(new))


def _describe_print(p: Any) -> str:
    if p is None:
        return "nothing (the recording ended)"
    if p[0] in ("derive", "accumulate", "set_grad", "host"):
        return f"{p[0]} {p[1]!r}" if p[0] in ("derive", "host") else p[0]
    name, ins, _, shape, dtype = p
    return f"'{name}' (output shape {shape}, {np.dtype(dtype)})"


# ---------------------------------------------------------------- the compiled callable

class Compiled:
    """``fn`` compiled: call it as ``fn``. ``.traces`` counts the recordings made so far,
    ``.programs`` holds the programs by signature. See the module docstring.

    >>> import duograd as dg
    >>> double = dg.compile(lambda x: dg.tensor(x) * 2)
    >>> double(np.ones(2)).numpy(), double(np.ones(3)).numpy(), double.traces
    (array([2., 2.]), array([2., 2., 2.]), 2)
    """

    def __init__(self, fn: Callable, recheck_every: int | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"dg.compile: expected a callable, got {type(fn).__name__}")
        if recheck_every is not None and (not isinstance(recheck_every, int) or recheck_every < 1):
            raise ValueError(f"dg.compile: recheck_every must be a positive int or None, got {recheck_every!r}")
        self.fn = fn
        self.recheck_every = recheck_every
        self.traces = 0
        self.calls = 0
        self.programs: OrderedDict[Any, Program] = OrderedDict()
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<dg.compile of {getattr(self.fn, '__qualname__', self.fn)!r}: {self.traces} recordings>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _state._capture is not None or autograd._watching:
            return self.fn(*args, **kwargs)  # inside another recording or a jvp: eager
        key, leaves = _signature(args, kwargs)
        self.calls += 1
        program = self.programs.get(key)
        if program is not None and program.guard():
            self.programs.move_to_end(key)
            if self.recheck_every is not None and self.calls % self.recheck_every == 0:
                return self._recheck(key, program, args, kwargs, leaves)
            return program.run(leaves)
        result, program = self._record(args, kwargs, leaves)
        self.programs[key] = program
        self.programs.move_to_end(key)
        while len(self.programs) > CACHE_SIZE:
            self.programs.popitem(last=False)
        return result

    def _record(self, args: tuple, kwargs: dict, leaves: list) -> tuple[Any, Program]:
        rec = _Recorder()
        with rec:
            result = self.fn(*args, **kwargs)
        # The collector would walk the recording's ~10 objects per call again and again
        # while the program is built; nothing built here is cyclic garbage.
        enabled = gc.isenabled()
        gc.disable()
        try:
            program = _Builder(rec, leaves, self.recheck_every is not None).build(result, leaves)
        finally:
            if enabled:
                gc.enable()
        self.traces += 1
        return result, program

    def _recheck(self, key: Any, program: Program, args: tuple, kwargs: dict, leaves: list) -> Any:
        result, fresh = self._record(args, kwargs, leaves)
        self.traces -= 1  # a check, not a new program
        i = _first_difference(program.prints, fresh.prints)
        if i is not None:
            del self.programs[key]
            old = program.prints[i] if i < len(program.prints) else None
            new = fresh.prints[i] if i < len(fresh.prints) else None
            raise RuntimeError(
                f"dg.compile: the recording of {getattr(self.fn, '__qualname__', 'fn')} differs from "
                f"a fresh eager run at operation {i}: recorded {_describe_print(old)}, now "
                f"{_describe_print(new)}. Python control flow or a number computed from a tensor's "
                "value changed; this call ran eagerly, and the program is recorded again on the next call")
        return result


def compile(fn: Callable, recheck_every: int | None = None) -> Compiled:
    """``fn`` with its NumPy work recorded on the first call per signature and replayed
    after: the same results, gradients and effects, bit for bit, without the per-operation
    cost of the eager engine. See ``duograd.capture`` for what is captured.

    >>> import duograd as dg
    >>> from duograd import nn, optim
    >>> from duograd.nn import functional as F
    >>> model = nn.MLP(2, [8, 2], rng=0)
    >>> opt = optim.SGD(model.parameters(), lr=0.1)
    >>> def train_step(X, y):
    ...     model.zero_grad()
    ...     loss = F.cross_entropy(model(X), y)
    ...     loss.backward()
    ...     opt.step()
    ...     return loss
    >>> fast = dg.compile(train_step)
    >>> X, y = np.random.default_rng(0).standard_normal((16, 2)), np.arange(16) % 2
    >>> losses = [fast(X, y).item() for _ in range(20)]
    >>> losses[-1] < losses[0], fast.traces
    (True, 1)
    """
    return Compiled(fn, recheck_every)

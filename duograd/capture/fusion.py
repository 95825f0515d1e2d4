"""Fusion: chains (and small DAGs) of elementwise kernels merged into one kernel.

A pass over a finished program (``passes.finish`` runs it last, after buffer reuse). It
finds groups of elementwise ufunc kernels (``add``, ``mul``, ``exp``, ``relu`` as
``maximum`` with its constant, ``greater``, ``divide`` of floats, ...) joined by
*intermediates*: results that nothing outside the group reads (not returned, not stored
into ``.grad``, not read by an effect, a view, a reduction or a matmul). Each group becomes
one kernel instruction that calls the same ufuncs on the same operands in the same order,
but writes each result into an array chosen for it (``out=``) instead of a new one:

- an operand that dies in the group (its last reader is in it), is a result of this
  program's own kernels that makes a new array (a ufunc, a matmul, ``linear``), has the
  result's shape, dtype and C layout and is read by nothing else (so no view of it
  exists): the result is written into it, in place, as NumPy's own temporary elision
  does (``a @ w.T + b``'s sum written into the product), for results of at least
  ``INPLACE_MIN`` bytes (below that NumPy's ufunc is slower in place than not);
- otherwise an array that died earlier in the group, of the same shape and dtype (a
  chain alternates between two temporaries, or reuses one in place);
- otherwise a new array: the ufunc called without ``out=`` (allocated as the unfused
  kernel would), or, for a result that never leaves the replay, a buffer allocated once
  under the same policy as ``passes.reuse`` (``reuse_buffers``).

Why this is bit for bit: a ufunc's result does not depend on where it is written when
the output has the dtype the ufunc would give (the loop is chosen from the inputs, the
recorded result dtype is that loop's) and the output either is one of the inputs exactly
(element ``i`` is read before it is written) or overlaps none of them; NumPy then runs
the same inner loop. Results whose recorded layout is not C order are left alone (a
C-ordered buffer would change a later reduction's order of additions), and 0-d results
too (NumPy returns scalars for them). A group runs where its last member ran; it never
spans an effect, a load or a host step, and a group whose members cannot all move there
(something in between reads a member's result) is left unfused.

What it saves is per-kernel dispatch in the replay loop and, mostly, temporaries: the
allocation of a new array per intermediate and the memory traffic of touching it.

The switch: ``DUOGRAD_FUSION=0`` in the environment (read when a program is finished,
at its first replay), or ``duograd.capture.fusion.ENABLED = False``, turns the pass off;
the results are the same either way (the tests compare them bit for bit).

>>> import numpy as np, duograd as dg
>>> f = dg.compile(lambda x: (x * 2.0 + 1.0).relu())
>>> f(np.array([-1.0, 0.5])).tolist(), f(np.array([-1.0, 0.5])).tolist()
([0.0, 2.0], [0.0, 2.0])
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from .instructions import BUF1, BUF2, CALL1, CALL2, EFFECT, Instr

ENABLED = True  # the switch (also DUOGRAD_FUSION=0 in the environment)
MAX_GROUP = 32  # members per fused kernel: a longer chain is cut into pieces
# A result is written over one of its own operands only from this size on: on a small
# array NumPy's ufunc takes its slow path (the full iterator) when an output is also an
# input, about 2 us more per call; from tens of KiB the in-place write is as fast or faster
# (the memory is already in the cache). Smaller results alternate between two arrays.
INPLACE_MIN = 16 * 1024
_SOURCES: dict[str, Any] = {}  # generated source -> its compiled code (one per pattern)


def enabled() -> bool:
    """Whether the pass runs: ``ENABLED`` and ``DUOGRAD_FUSION`` not set to ``0``."""
    return ENABLED and os.environ.get("DUOGRAD_FUSION", "1").strip().lower() not in ("0", "false", "off")


def _operands(ins: Instr) -> list:
    if ins.kind == CALL1 or ins.kind == BUF1:
        return [ins.a]
    if ins.kind == CALL2:
        return [ins.a, ins.b]
    return list(ins.a)  # BUF2: (a, b)


def _ufunc_of(ins: Instr, dtypes: dict) -> Any:
    """The elementwise ufunc an instruction runs, or None."""
    if ins.role != "kernel" or ins.kind not in (CALL1, CALL2, BUF1, BUF2):
        return None
    f = ins.f
    if isinstance(f, np.ufunc):
        if f.nout != 1 or f.signature is not None or f.nin != (1 if ins.kind in (CALL1, BUF1) else 2):
            return None
        return f
    if getattr(f, "__name__", None) == "_true_divide" and ins.kind in (CALL2, BUF2):
        # div_p's kernel: np.divide itself when an operand is a float (known dtypes only)
        kinds = [getattr(dtypes.get(s), "kind", None) for s in _operands(ins)]
        if "f" in kinds and None not in kinds:
            return np.divide
    return None


def _fresh_maker(ins: Instr) -> bool:
    """Whether a kernel's result is a new array of its own on every call (so that it may be
    written into once nothing reads it any more)."""
    if ins.role != "kernel" or ins.kind not in (CALL1, CALL2):
        return False
    f = ins.f
    if isinstance(f, np.ufunc):
        return f.nout == 1
    return ins.op is not None and ins.op.name == "linear" and ins.kind == CALL2


def _escapes(code: list, needed_out: set, members: set) -> set:
    """The slots whose arrays leave the replay (``passes.reuse``'s rule): returned, or read
    by an instruction other than a kernel that makes a new array, through views too."""
    from .passes import makes_new_array
    escapes = set(needed_out)
    views = []
    for k, ins in enumerate(code):
        if ins.role == "kernel" and ins.op is not None and ins.op.view and ins.kind == CALL1:
            views.append(ins)
        elif k in members or (ins.role == "kernel" and ins.kind in (BUF1, BUF2)):
            continue
        elif ins.role != "kernel" or not (ins.kind in (CALL1, CALL2) and makes_new_array(ins.f)):
            escapes.update(ins.reads)
    for ins in reversed(views):
        if ins.out in escapes:
            escapes.add(ins.a)
    return escapes


def fuse(code: list, needed_out: set, shapes: dict, dtypes: dict, strided: frozenset = frozenset(),
         max_bytes: int | None = None, reuse_buffers: bool | None = None) -> list:
    """``code`` with its groups of elementwise kernels fused (see the module docstring).
    ``max_bytes`` / ``reuse_buffers``: the buffer policy of ``passes.reuse`` (False: no
    buffer kept between calls; True: any size; None: at most ``max_bytes``)."""
    ufuncs: dict[int, Any] = {}
    for k, ins in enumerate(code):
        u = _ufunc_of(ins, dtypes)
        o = ins.out
        if u is not None and shapes.get(o) and o not in strided and o in dtypes \
                and o not in _operands(ins) and o not in ins.reads:
            ufuncs[k] = u
    if len(ufuncs) < 2:
        return code
    readers: dict[int, list[int]] = {}
    region = []
    r = 0
    for k, ins in enumerate(code):
        if ins.role != "kernel":
            r += 1
        region.append(r)
        for s in set(_operands(ins) if k in ufuncs else ins.reads):
            readers.setdefault(s, []).append(k)
    producer = {code[k].out: k for k in ufuncs}
    writers: dict[int, list[int]] = {}
    for k, ins in enumerate(code):
        if ins.out is not None:
            writers.setdefault(ins.out, []).append(k)
    # union-find over the members, joined through their intermediates
    parent = {k: k for k in ufuncs}

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k
    internal = set()
    for s, p in producer.items():
        rs = readers.get(s, [])
        if s in needed_out or not rs or any(q not in ufuncs or region[q] != region[p] for q in rs):
            continue
        internal.add(s)
        for q in rs:
            parent[find(q)] = find(p)
    groups: dict[int, list[int]] = {}
    for k in ufuncs:
        groups.setdefault(find(k), []).append(k)
    chosen = []
    for g in groups.values():
        g.sort()
        for i in range(0, len(g), MAX_GROUP):  # a long chain in pieces (each one kernel)
            piece = g[i:i + MAX_GROUP]
            if len(piece) > 1 and piece[-1] - piece[0] <= 4 * len(piece) + 16 \
                    and _movable(piece, code):
                chosen.append(piece)
    if not chosen:
        return code
    members = {k for g in chosen for k in g}
    escapes = _escapes(code, needed_out, members)
    at = {}
    for g in chosen:
        at[g[-1]] = _fused(g, code, ufuncs, internal, readers, writers, members, escapes, shapes,
                           dtypes, strided, max_bytes, reuse_buffers)
    out = []
    for k, ins in enumerate(code):
        if k in at:
            out.append(at[k])
        elif k not in members:
            out.append(ins)
    return out


def _movable(group: list[int], code: list) -> bool:
    """Whether every member can run at the last one's place: nothing in between (outside
    the group) reads a member's result or writes a slot a member reads."""
    gs = set(group)
    done_outs: set = set()
    done_reads: set = set()
    for k in range(group[0], group[-1] + 1):
        ins = code[k]
        if k in gs:
            done_outs.add(ins.out)
            done_reads.update(_operands(ins))
            continue
        if done_outs.intersection(ins.reads) or ins.out in done_reads or ins.out in done_outs:
            return False
    return True


def _fused(group: list[int], code: list, ufuncs: dict, internal: set, readers: dict,
           writers: dict, members: set, escapes: set, shapes: dict, dtypes: dict, strided: frozenset,
           max_bytes: int | None, reuse_buffers: bool | None) -> Instr:
    """One group as one instruction: generated code calling the members' ufuncs with
    ``out=`` arrays chosen as the module docstring says."""
    gs = set(group)
    last_use: dict = {}  # slot -> the last member reading it
    for k in group:
        for s in _operands(code[k]):
            last_use[s] = k
    names: dict[str, Any] = {}
    lines: list[str] = []
    where: dict[int, str] = {}  # slot -> the local name holding its value
    external: list[int] = []

    def operand(s: int) -> str:
        if s in where:
            return where[s]
        v = f"e{len(external)}"
        external.append(s)
        where[s] = v
        names[f"i{len(external) - 1}"] = s
        lines.append(f"    {v} = env[i{len(external) - 1}]")
        return v
    # arrays that may be written into: (local name, shape, dtype, persistent) when free
    free: list[tuple[str, tuple, Any, bool]] = []
    held: dict[int, tuple[str, tuple, Any, bool]] = {}  # slot -> its array, while alive
    n_buf = 0

    def keep_buffer(nbytes: int) -> bool:
        if reuse_buffers is False:
            return False
        return max_bytes is None or nbytes <= max_bytes

    results = []
    n_done = 0
    for k in group:
        ins = code[k]
        u = ufuncs[k]
        o, shape, dtype = ins.out, shapes[ins.out], dtypes[ins.out]
        args = [operand(s) for s in _operands(ins)]
        uname = f"u{n_done}"
        names[uname] = u
        is_output = o not in internal or any(q not in gs for q in readers.get(o, ()))
        fresh_needed = is_output and o in escapes
        # operands dying here that are arrays one may write into
        dying = []
        for s in dict.fromkeys(_operands(ins)):
            if last_use.get(s) != k:
                continue
            if s in held:
                dying.append(s)
            elif s not in gs and _dead_input(s, gs, readers, writers, code, escapes, strided,
                                             shapes, dtypes):
                # (a result of another group may sit in a buffer kept between calls)
                p = writers[s][0]
                persistent = code[p].kind not in (CALL1, CALL2) or p in members
                held[s] = (where[s], shapes[s], dtypes[s], persistent)
                dying.append(s)
        target = None
        nbytes = math.prod(shape) * dtype.itemsize
        for s in dying if nbytes >= INPLACE_MIN else ():
            name, sh, dt, persistent = held[s]
            if sh == shape and dt == dtype and not (fresh_needed and persistent):
                target = held.pop(s)
                break
        if target is None:
            for i, (name, sh, dt, persistent) in enumerate(free):
                if sh == shape and dt == dtype and not (fresh_needed and persistent):
                    target = free.pop(i)
                    break
        if target is None and not fresh_needed and keep_buffer(nbytes):
            bname = f"b{n_buf}"
            n_buf += 1
            names[bname] = np.empty(shape, dtype)
            target = (bname, shape, dtype, True)
        for s in dying:  # the other dying arrays become free for later members
            if s in held:
                free.append(held.pop(s))
        v = f"v{n_done}"
        n_done += 1
        if target is None:
            lines.append(f"    {v} = {uname}({', '.join(args)})")
            target = (v, shape, dtype, False)
        else:
            lines.append(f"    {uname}({', '.join(args)}, out={target[0]})")
            lines.append(f"    {v} = {target[0]}")
            target = (v,) + target[1:]
        where[o] = v
        if is_output:
            results.append((o, v))
        else:
            held[o] = target
    for j, (o, v) in enumerate(results):
        names[f"o{j}"] = o
        lines.append(f"    env[o{j}] = {v}")
    src = "def fused(env, st):\n" + "\n".join(lines) + "\n"
    compiled = _SOURCES.get(src)
    if compiled is None:  # (slots, ufuncs and buffers are names: one code per pattern)
        compiled = _SOURCES[src] = compile(src, "<duograd fused kernel>", "exec")
    exec(compiled, names)
    kernel = names["fused"]
    kernel.source = src
    kernel.outs = tuple(o for o, _ in results)  # (every slot it writes; Instr.out is the last)
    label = "+".join(code[k].label for k in group)
    made = {code[k].out for k in group}
    reads = list(dict.fromkeys(s for k in group for s in code[k].reads if s not in made))
    return Instr(EFFECT, kernel, None, None, results[-1][0], reads, label, "kernel", None)


def _dead_input(s: int, group: set, readers: dict, writers: dict, code: list, needed: set,
                strided: frozenset, shapes: dict, dtypes: dict) -> bool:
    """Whether operand ``s`` (from outside the group) is an array the group may write into
    once its last reader in the group has read it: the result of one kernel of this
    program that makes a new array (or writes a buffer of its own), read by nothing but
    the group, never handed out, in C layout."""
    if s in needed or s in strided or s not in shapes or s not in dtypes or not shapes[s]:
        return False
    if any(q not in group for q in readers.get(s, [])):
        return False
    ws = writers.get(s, [])
    if len(ws) != 1:
        return False
    ins = code[ws[0]]
    return ins.role == "kernel" and (ins.kind in (BUF1, BUF2) or _fresh_maker(ins))

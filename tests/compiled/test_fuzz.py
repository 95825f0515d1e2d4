"""A differential fuzzer of ``dg.compile`` (issue 21): random steps, run eagerly and
compiled side by side over several calls with new inputs. Every compiled call must equal
the eager one bit for bit (values, ``.grad``, parameters, optimizer state), raise, or
record again (a new recording is an eager run, so it is compared the same way).

A program is drawn from a seeded generator: an op of OP_SPECS on the step's arguments,
its arguments given as NumPy arrays with NumPy arithmetic on them or as Tensors that
require grad, a Python-scalar argument (sometimes changed between calls; used as an input, or
through ``math``, NumPy, Python arithmetic, a branch, as a dim), a Dropout whose
``training`` flag or ``p`` is flipped between calls, a ``no_grad`` region, a second-order
term (``create_graph``), and a parameter updated by an optimizer (SGD with momentum and
Nesterov, Adam, AdamW, RMSprop, with a scheduler), by ``p.data = ...`` or by an in-place
``sub_`` under ``no_grad`` in the step; in-place ops on an intermediate; ``t[...] = v`` into a
tensor made in the step; an attribute read outside the arguments and changed between calls
(a module's ``training`` read without calling it, a custom ``__call__``, a config object's
attribute: ``_Knobs``); a selection whose size depends on the values (``out[out > 0]``,
``masked_select``).

CI runs ``FUZZ_PROGRAMS`` programs (300); ``DUOGRAD_FUZZ=full`` (or
``python tests/compiled/test_fuzz.py --full``) runs 2,000 and prints the counts. The
truth is the eager run of the same program on a twin of the same state.
"""

from __future__ import annotations

import math
import os
import sys
import warnings

import numpy as np
import pytest

import duograd as dg
from duograd import nn, optim
from duograd.capture import program as capture_program

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from specs import OP_SPECS, make_inputs  # noqa: E402

FUZZ_PROGRAMS = 300
FULL_PROGRAMS = 2000
CALLS = 4

OPTIMIZERS = [
    ("sgd", lambda ps: optim.SGD(ps, lr=0.05)),
    ("sgd-momentum", lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9)),
    ("sgd-nesterov", lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True)),
    ("adam", lambda ps: optim.Adam(ps, lr=0.01)),
    ("adamw", lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.1)),
    ("rmsprop", lambda ps: optim.RMSprop(ps, lr=0.01)),
]


def _float_specs():
    out = []
    for spec in OP_SPECS:
        try:
            xs = make_inputs(spec, seed=0)
        except Exception:
            continue
        if all(isinstance(x, np.ndarray) and x.dtype.kind == "f" for x in xs):
            out.append(spec)
    return out


_SPECS = None


def _program(seed: int) -> dict:
    global _SPECS
    if _SPECS is None:
        _SPECS = _float_specs()
    r = np.random.default_rng(seed)
    prog = dict(
        spec=_SPECS[r.integers(len(_SPECS))],
        numpy_args=bool(r.random() < 0.5),           # NumPy arrays, NumPy arithmetic on them
        grad_args=bool(r.random() < 0.3),            # Tensors that require grad
        scalar_change=bool(r.random() < 0.3),        # the Python scalar changes at call 2
        dropout=bool(r.random() < 0.3),
        flip=int(r.integers(4)),                     # 0: nothing, 1: eval(), 2: p changes, 3: both
        no_grad=bool(r.random() < 0.3),
        create_graph=bool(r.random() < 0.2),
        update=str(r.choice(["none", "data", "inplace"] + [name for name, _ in OPTIMIZERS])),
        inplace_mid=bool(r.random() < 0.3),          # an in-place op on an intermediate
        setitem=bool(r.random() < 0.2),              # the result written into a new tensor
        scheduler=bool(r.random() < 0.3),
        seed=seed,
    )
    # How the step uses its Python scalar (drawn after the rest, so that the programs
    # above stay the same): an input (``out * s``), or through math, NumPy, Python
    # arithmetic, a branch, a tensor of it, an int as a dim (static, found while recording or
    # by the verification at its first new value).
    prog["scalar_use"] = str(r.choice(["mul", "mul", "mul", "math", "numpy", "python",
                                       "branch", "tensor", "dim"]))
    # An attribute the step reads outside its arguments (issue 32; drawn last, so the
    # programs above stay the same), changed before call ``attr_call`` (and back at the
    # last call when that is call 1): see ``_Knobs``.
    prog["attr_use"] = str(r.choice(["none", "none"] + list(_Knobs.USES)))
    prog["attr_call"] = int(r.integers(1, CALLS))
    # A selection whose size depends on the values (drawn last too): the elements of the
    # op's result above zero, by a bool mask in a subscript or by masked_select; the count
    # changes from call to call, so a replay must notice and record again.
    prog["mask_use"] = str(r.choice(["none", "none", "getitem", "masked_select"]))
    return prog


class _Knobs:
    """What the step reads outside its arguments, one set per twin world:

    ``flag``: a module's ``training`` read by the step itself (the module never called);
    ``call``: a plain object with a ``__call__`` of its own reading its module's
    ``training`` and a plain flag; ``module_call``: a Module whose ``__call__`` bypasses
    ``Module.__call__`` reading its own ``training`` and a float setting; ``helper``: a
    helper function reading the flag of a module inside a Sequential; ``config``: a config
    object's attribute; ``nested``: an attribute of an object held by a config object (the
    holder's attribute replaced); ``class``: a class attribute; ``global``: a global object
    of a helper's own module (its attribute changed, or the global rebound)."""

    USES = ("flag", "call", "module_call", "helper", "config", "nested", "class", "global")

    def __init__(self, use: str, seed: int) -> None:
        self.use, self.seed = use, seed
        self.mod = nn.Dropout(0.5)
        self.net = nn.Sequential(nn.ReLU(), nn.Dropout(0.5))

        class Gate:
            def __init__(self):
                self.inner, self.on = nn.Dropout(0.5), True

            def __call__(self, y):
                return y * (1.5 if self.on else 0.5) * (2.0 if self.inner.training else 0.25)
        self.gate = Gate()

        class Scaled(nn.Module):
            def __init__(self):
                self.alpha = 1.5

            def __call__(self, y):
                return y * (self.alpha if self.training else -0.5)
        self.scaled = Scaled()

        class Opts:
            def __init__(self, k):
                self.k = k

        class Cfg:
            scale = 1.25
        self.Opts, self.Cfg = Opts, Cfg
        self.cfg = Cfg()
        self.cfg.opts = Opts(0.75)
        self.ns = {"CFG": Opts(2.5)}
        exec("def read_global(y):\n    return y * CFG.k\n", self.ns)

    def apply(self, y):
        """The step's use (written out per kind, so that each read is in the code)."""
        use = self.use
        if use == "flag":
            mod = self.mod
            return y * (2.0 if mod.training else 0.5)
        if use == "call":
            return self.gate(y)
        if use == "module_call":
            return self.scaled(y)
        if use == "helper":
            net = self.net

            def mode_factor():
                return 3.0 if net[1].training else 0.75
            return y * mode_factor()
        if use == "config":
            cfg = self.cfg
            return y * cfg.scale
        if use == "nested":
            cfg = self.cfg
            return y * cfg.opts.k
        if use == "class":
            Cfg = self.Cfg
            return y * Cfg.scale
        if use == "global":
            return self.ns["read_global"](y)
        return y

    def change(self, back: bool) -> None:
        use, odd = self.use, self.seed % 2 == 1
        if use == "flag":
            self.mod.train(back)
        elif use == "call":
            if odd:
                self.gate.on = back
            else:
                self.gate.inner.train(back)
        elif use == "module_call":
            if odd:
                self.scaled.alpha = 1.5 if back else -2.0
            else:
                self.scaled.train(back)
        elif use == "helper":
            self.net.train(back)
        elif use == "config":
            self.cfg.scale = 1.25 if back else 3.0
        elif use == "nested":
            self.cfg.opts = self.Opts(0.75 if back else -1.0)
        elif use == "class":
            self.Cfg.scale = 1.25 if back else 0.5
        elif use == "global":
            if odd:
                self.ns["CFG"] = self.Opts(2.5 if back else 4.0)
            else:
                self.ns["CFG"].k = 2.5 if back else -3.0

    def before(self, call: int, when: int) -> None:
        if call == when:
            self.change(False)
        elif when == 1 and call == CALLS - 1:
            self.change(True)


def _world(prog: dict, out_shape: tuple):
    """The step and the state it changes; two calls give two identical twins."""
    rng = np.random.default_rng(prog["seed"] + 1)
    W = dg.tensor(rng.uniform(0.5, 1.5, out_shape), requires_grad=True)
    drop = nn.Dropout(0.25, rng=np.random.default_rng(prog["seed"] + 2)) if prog["dropout"] else None
    knobs = _Knobs(prog["attr_use"], prog["seed"])
    opt = sched = None
    for name, make in OPTIMIZERS:
        if name == prog["update"]:
            opt = make([W])
            if prog["scheduler"]:
                sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    spec = prog["spec"]

    def step(*args):
        *xs, s = args
        if prog["numpy_args"]:
            xs = [np.multiply(x * 2.0, 0.5) for x in xs]    # NumPy arithmetic, exact
        out = spec.fn(*xs)
        if prog["inplace_mid"]:
            out = out * 1.0
            out.mul_(2.0)
            out.add_(0.25)
        if prog["setitem"]:
            z = dg.zeros(out.shape, dtype=out.dtype)
            z[...] = out
            out = z
        if drop is not None:
            out = drop(out)
        y = knobs.apply(_use_scalar(prog["scalar_use"], out, s))
        extra = None
        if prog["no_grad"]:
            with dg.no_grad():
                extra = (out * 3.0).sum()
        if opt is not None:
            opt.zero_grad()
        else:
            W.grad = None
        loss = (y * W).sum()
        if prog["mask_use"] != "none" and out.ndim:
            picked = out[out > 0] if prog["mask_use"] == "getitem" else \
                dg.masked_select(out, out > 0)
            loss = loss + (picked * picked).sum()
        if prog["create_graph"]:
            (gW,) = dg.autograd.grad(loss, [W], create_graph=True)
            loss = loss + (gW * gW).sum()
        loss.backward()
        if opt is not None:
            opt.step()
            if sched is not None:
                sched.step()
        elif prog["update"] == "data":
            W.data = (W - 0.01 * W.grad).detach()
        elif prog["update"] == "inplace":
            with dg.no_grad():
                W.sub_(0.01 * W.grad)
        return (loss, out) if extra is None else (loss, out, extra)
    return step, W, drop, opt, knobs


def _use_scalar(use: str, out, s):
    if use == "math":
        return out * math.sqrt(abs(s))
    if use == "numpy":
        return out * np.float64(s)
    if use == "python":
        return out * (s * 2.0 - 1.0)
    if use == "branch":
        return out * 2.0 if s > 0 else out * 3.0
    if use == "tensor":
        return out * dg.tensor(s, dtype=out.dtype)
    if use == "dim":  # s is an int here (0, 1 or 2): a dim where there are three, else a value
        return out.sum(dim=s, keepdim=True) * 1.5 if out.dim() >= 3 else out * s
    return out * s


def _arrays(t):
    if isinstance(t, dg.Tensor):
        return [t.detach().numpy()]
    if isinstance(t, (tuple, list)):
        return [a for v in t for a in _arrays(v)]
    return [np.asarray(t)]


def _bits_equal(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _state_arrays(W, opt, args):
    out = [W._data, None if W.grad is None else W.grad._data]
    if opt is not None:
        for st in opt.state.values():
            for k in sorted(st):
                v = st[k]
                out.append(v._data if isinstance(v, dg.Tensor) else np.asarray(v))
        out.append(np.asarray(opt.param_groups[0]["lr"]))
    for a in args:
        if isinstance(a, dg.Tensor) and a.requires_grad:
            out.append(None if a.grad is None else a.grad._data)
    return out


def run_program(seed: int) -> dict:
    """One program, eager against compiled; returns its counts and mismatches."""
    prog = _program(seed)
    spec = prog["spec"]
    res = {"calls": 0, "matched": 0, "raised": 0, "recorded": 0, "skipped": 0, "mismatches": []}
    try:
        probe = spec.fn(*[dg.tensor(x) for x in make_inputs(spec, seed=0)])
    except Exception:
        res["skipped"] = 1
        return res
    if not isinstance(probe, dg.Tensor) or probe.dtype.kind != "f":
        res["skipped"] = 1   # (a named tuple of results, or an integer result)
        return res
    eager, We, de, oe, ke = _world(prog, probe.shape)
    comp, Wc, dc, oc, kc = _world(prog, probe.shape)
    fast = dg.compile(comp, reuse_buffers=(None, True, False)[seed % 3])  # every kind of replay
    # replays through the loop and through the generated code: from the first replay on,
    # or from the second (program.GENERATE_AFTER; restored by fuzz)
    capture_program.GENERATE_AFTER = seed % 2
    ints = prog["scalar_use"] == "dim"
    s = 1 if ints else 1.5
    for call in range(CALLS):
        if call == 3 and prog["scalar_change"]:
            s = 2 if ints else 0.3      # a third value: replayed after the verification
        if call == 2:
            if prog["scalar_change"]:
                s = 0 if ints else -0.75
            for d in (de, dc):
                if d is not None and prog["flip"] in (1, 3):
                    d.eval()
                if d is not None and prog["flip"] in (2, 3):
                    d.p = 0.5
        for k in (ke, kc):
            k.before(call, prog["attr_call"])
        arrays = make_inputs(spec, seed=call + 1)
        if prog["grad_args"] and not prog["numpy_args"]:
            ea = [dg.tensor(a, requires_grad=True) for a in arrays]
            ca = [dg.tensor(a, requires_grad=True) for a in arrays]
        else:
            ea = [dg.tensor(a) for a in arrays]
            ca = [a.copy() for a in arrays] if prog["numpy_args"] else [dg.tensor(a) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = eager(*ea, s)
            except Exception:
                res["skipped"] = 1   # the eager step itself raises: nothing to compare
                return res
            traces = fast.traces
            try:
                got = fast(*ca, s)
            except Exception:
                res["raised"] += 1
                res["calls"] += 1
                return res
        res["calls"] += 1
        if fast.traces > traces and call > 0:
            res["recorded"] += 1
        a1 = _arrays(want) + _state_arrays(We, oe, ea)
        a2 = _arrays(got) + _state_arrays(Wc, oc, ca)
        ok = len(a1) == len(a2) and all((x is None and y is None) or
                                         (x is not None and y is not None and _bits_equal(x, y))
                                         for x, y in zip(a1, a2))
        if ok:
            res["matched"] += 1
        else:
            res["mismatches"].append((seed, call, {k: (v.name if k == "spec" else v)
                                                   for k, v in prog.items()}))
            return res
    return res


def fuzz(n: int, start: int = 0) -> dict:
    total = {"programs": 0, "calls": 0, "matched": 0, "raised": 0, "recorded": 0, "skipped": 0,
             "mismatches": []}
    for seed in range(start, start + n):
        after = capture_program.GENERATE_AFTER
        try:
            r = run_program(seed)
        finally:
            capture_program.GENERATE_AFTER = after
        total["programs"] += 1
        for k in ("calls", "matched", "raised", "recorded", "skipped"):
            total[k] += r[k]
        total["mismatches"] += r["mismatches"]
    return total


@pytest.mark.parametrize("block", range(6))
def test_compiled_equals_eager_on_random_programs(block):
    n = (FULL_PROGRAMS if os.environ.get("DUOGRAD_FUZZ") == "full" else FUZZ_PROGRAMS) // 6
    total = fuzz(n, start=block * n)
    assert not total["mismatches"], total["mismatches"][:5]
    assert total["matched"] > 0


if __name__ == "__main__":
    n = FULL_PROGRAMS if "--full" in sys.argv else FUZZ_PROGRAMS
    t = fuzz(n)
    print({k: v for k, v in t.items() if k != "mismatches"}, f"mismatches: {len(t['mismatches'])}")
    for m in t["mismatches"]:
        print(m)

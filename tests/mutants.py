"""Mutation testing: plant one realistic bug at a time and check that the tests catch it.

Run by hand (it is not part of CI: pytest never collects this file, whose name does not
start with ``test_``, and nothing below runs on import)::

    .venv/bin/python tests/mutants.py              # every mutant, 2 at a time
    .venv/bin/python tests/mutants.py --list       # the mutants, without running them
    .venv/bin/python tests/mutants.py S-mul-vjp O-adam-bias   # a few, by id
    .venv/bin/python tests/mutants.py --rev HEAD   # the committed tree, not the working tree
    .venv/bin/python tests/mutants.py --source DIR # any directory tree (a clean clone, say)

The whole run takes about 7 minutes on 2 cores.

A mutant is a small edit to one library file: an exact snippet of the source and what
to put in its place, the pytest selection that ought to fail because of it, and a line
saying what the bug is. Each mutant's snippet must occur exactly once in its file;
otherwise the mutant is *stale* (the code it was written against has changed) and the
script refuses to run at all (exit status 2, naming each stale mutant), so that a refactor
cannot turn a mutant into a check that cannot fail. tests/engine/test_mutants_anchor.py
checks the same in CI, without running any mutant.

The repository's working tree is never touched. The files of the working tree (those git
tracks or would track) are copied once into a temporary directory per worker. The
unmutated copy runs each selection first: a selection that fails there makes its
mutants *invalid*. Then each mutant is applied in a worker's copy, the selection runs
there (``python -m pytest -x -q -p no:cacheprovider <selection>``, with the copy as the
working directory and on ``PYTHONPATH``, so ``import duograd`` loads the mutated copy;
the script checks this before any mutant runs), and the file is restored. A mutant is
*killed* when its selection fails (or times out), *SURVIVED* when it passes.

The table lists every mutant and, for a killed one, the first test that failed; the kill
rate counts the killed among the valid mutants that are not known to be equivalent
(EQUIVALENT says why each of those cannot be killed). The exit status is non-zero if a
mutant outside EQUIVALENT survives, or if any is invalid.

Ids name the part of the library: K the four kinds of bug issue 9 names, E ops rules,
B ``sum_to``, T the traversal, I the listeners of ``_context`` (hooks, anomaly mode,
``explain``), C capture (``dg.compile``), J forward mode, F ``func``, G ``gradcheck``, X the Tensor
class and its methods, S/D/H the scalar engines (``Value``, ``Dual``, ``Var``), N ``nn``
modules, L losses, O optimizers, R learning-rate schedules. A mutant whose id ends in
``-gaps`` repeats another's bug with only the second, independent check as its selection
(issue 9: kills that hung on a single test).
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_JOBS = 2


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str        # relative to the repository root
    old: str         # must occur exactly once in the file
    new: str
    tests: str       # the pytest selection that should fail (paths, -k ...)
    what: str        # the bug, in one line


# Selections: one or two test files each, so the whole run stays within minutes.
SCALAR = "tests/scalar/test_scalar_engine.py"
FORWARD = "tests/scalar/test_scalar_forward.py"
HIGHER = "tests/scalar/test_higher_scalar.py"
NN = "tests/nn_optim/test_nn.py"
OPTIM = "tests/nn_optim/test_optim_oracle.py -k trajectory"          # the 50-step trajectories against torch
SCHED = "tests/nn_optim/test_optim_oracle.py -k 'lr_sequence or schedule'"
GAPS = "tests/engine/test_tensor_gaps.py"
OPS = "tests/ops/test_tensor_ops.py"
HIGHER_OPS = "tests/higher/test_higher_ops.py"
ENGINE = "tests/engine/test_tensor_engine.py"
BROADCAST = "tests/engine/test_tensor_broadcast.py"
HFUNC = "tests/higher/test_higher_func.py"
LISTEN = "tests/inspection/test_listeners.py"
COMPILE = "tests/compiled/test_compile.py"
FUSION = "tests/compiled/test_fusion.py"
SOUND = "tests/compiled/test_soundness.py"
UPDATE = "tests/compiled/test_optim_program.py"
NUMBERS = "tests/compiled/test_compile_scalar_inputs.py"
HTENSOR = "tests/higher/test_higher_tensor.py"
NODE = "tests/engine/test_node.py"
INPLACE = "tests/engine/test_semantics_inplace.py"
VALUE_SHAPES = "tests/compiled/test_value_shapes.py"

MUTANTS: list[Mutant] = [
    # ------------------------------------------------------------ the four kinds of issue 9
    Mutant("K-clip-at-lo", "duograd/rows/core.py",
           "lambda x, lo, hi: (x >= (-np.inf if lo is None else lo))",
           "lambda x, lo, hi: (x > (-np.inf if lo is None else lo))",
           f"{OPS} {GAPS}", "clip blocks the gradient at x == lo (torch.clamp passes it)"),
    Mutant("K-no-cast-back", "duograd/autograd/engine.py",
           "    if gx.dtype is not x.dtype:\n        gx = gx.astype(x.dtype)\n",
           "",
           f"{ENGINE} {GAPS}", "the cotangent is not cast back to its input's dtype"),
    Mutant("K-gradcheck-00", "duograd/gradcheck.py",
           "a, n = analytic[k], numeric[k]", "a, n = analytic[k][:1, :1], numeric[k][:1, :1]",
           f"{ENGINE} {GAPS}", "gradcheck compares only Jacobian entry [0, 0]"),
    Mutant("K-transpose-detached", "duograd/rows/core.py",
           "vjp=(lambda g, out, x, axes: transpose_p(g, axes=tuple(np.argsort(axes))),),",
           "vjp=(lambda g, out, x, axes: _wrap(np.transpose(g._data, tuple(np.argsort(axes)))),),",
           f"{HIGHER_OPS} {GAPS}",
           "transpose's VJP built from g's raw data: right at first order, no graph under create_graph"),
    Mutant("K-transpose-detached-gaps", "duograd/rows/core.py",
           "vjp=(lambda g, out, x, axes: transpose_p(g, axes=tuple(np.argsort(axes))),),",
           "vjp=(lambda g, out, x, axes: _wrap(np.transpose(g._data, tuple(np.argsort(axes)))),),",
           f"{GAPS} -k 'linear_op or issue_example'",
           "the same bug, caught by H v against central differences of the gradient (test_tensor_gaps.py)"),
    # ------------------------------------------------------------ ops rules
    Mutant("E-mul-swapped", "duograd/rows/core.py",
           "mul_p = Primitive(\"mul\", np.multiply, vjp=(lambda g, out, x, y: g * y,\n"
           "                                           lambda g, out, x, y: g * x)",
           "mul_p = Primitive(\"mul\", np.multiply, vjp=(lambda g, out, x, y: g * x,\n"
           "                                           lambda g, out, x, y: g * y)",
           OPS, "mul: each input scaled by itself"),
    Mutant("E-div-sign", "duograd/rows/core.py",
           "lambda g, out, x, y: -(g * out) / y)", "lambda g, out, x, y: (g * out) / y)",
           OPS, "div: d(x/y)/dy loses its minus sign"),
    Mutant("E-pow-at-0", "duograd/rows/core.py",
           "return where_p(equal_p(y, 0.0), 0.0, g * y * x ** (y - 1))",
           "return g * y * x ** (y - 1)",
           ENGINE, "pow: d(x**0)/dx is 0 * inf = nan at x = 0"),
    Mutant("E-pow-log-0", "duograd/rows/core.py",
           "return g * where_p(zero, at_zero, out * where_p(zero, 1.0, x).log())",
           "return g * out * x.log()",
           ENGINE, "pow: d(0**y)/dy is 0 * log 0 = nan"),
    Mutant("E-sqrt", "duograd/rows/core.py",
           "vjp=(lambda g, out, x: g / (out * 2),)", "vjp=(lambda g, out, x: g / out,)",
           OPS, "sqrt: slope 1/sqrt(x) (the factor 1/2 lost)"),
    Mutant("E-sigmoid", "duograd/rows/core.py",
           "vjp=(lambda g, out, x: g * out * (1 - out),)", "vjp=(lambda g, out, x: g * (1 - out),)",
           OPS, "sigmoid: slope 1 - s instead of s (1 - s)"),
    Mutant("E-softplus", "duograd/rows/core.py",
           "vjp=(lambda g, out, x: g * sigmoid_p(x),)", "vjp=(lambda g, out, x: g * sigmoid_p(out),)",
           f"{OPS} {GAPS}", "softplus: sigmoid of the output instead of the input"),
    Mutant("E-cos-sign", "duograd/rows/core.py",
           "vjp=(lambda g, out, x: -(g * sin_p(x)),)", "vjp=(lambda g, out, x: g * sin_p(x),)",
           OPS, "cos: d cos = +sin"),
    Mutant("E-relu-at-0", "duograd/rows/core.py",
           "vjp=(lambda g, out, x: g * greater_p(out, 0.0),)",
           "vjp=(lambda g, out, x: g * greater_equal_p(out, 0.0),)",
           ENGINE, "relu'(0) = 1 (PyTorch takes 0)"),
    Mutant("E-abs-no-sign", "duograd/rows/core.py",
           "vjp=(lambda g, out, x: g * sign_p(x),)", "vjp=(lambda g, out, x: g,)",
           OPS, "abs passes g through unchanged (no sign)"),
    Mutant("E-tie-full", "duograd/rows/core.py",
           "return (wins(x, y) + 0.5 * (x == y))", "return (wins(x, y) + 1.0 * (x == y))",
           ENGINE, "maximum/minimum: on a tie both sides get the whole gradient"),
    Mutant("E-tie-full-gaps", "duograd/rows/core.py",
           "return (wins(x, y) + 0.5 * (x == y))", "return (wins(x, y) + 1.0 * (x == y))",
           f"{GAPS} -k tie", "the same bug, caught by the second, independent check (test_tensor_gaps.py)"),
    Mutant("E-minimum-wins", "duograd/rows/core.py",
           "lambda g, out, x, y: g * share_p(x, y, wins=np.less),",
           "lambda g, out, x, y: g * share_p(x, y, wins=np.greater),",
           OPS, "minimum sends x's gradient where x is the larger"),
    Mutant("E-where-swapped", "duograd/rows/core.py",
           "lambda g, out, cond, x, y: where_p(cond, g, 0.0),",
           "lambda g, out, cond, x, y: where_p(cond, 0.0, g),",
           OPS, "where: x gets the gradient where cond is False"),
    Mutant("E-max-ties", "duograd/rows/core.py",
           "return (hit / hit.sum(axis=axis, keepdims=True)).astype(x.dtype, copy=False)",
           "return hit.astype(x.dtype, copy=False)",
           ENGINE, "max/min: every tied element gets the whole gradient"),
    Mutant("E-logsumexp-unshifted", "duograd/rows/core.py",
           "return exp_p(x - _expand(out, x.shape, axis, keepdims))", "return exp_p(x)",
           OPS, "logsumexp: the softmax in its rules is not normalised"),
    Mutant("E-expand-condition", "duograd/rows/core.py",
           "if not keepdims and axis != tuple(range(len(axis))):",
           "if keepdims and axis != tuple(range(len(axis))):",
           OPS, "a reduction's cotangent is broadcast back without putting back the reduced axes"),
    Mutant("E-transpose-perm", "duograd/rows/core.py",
           "transpose_p(g, axes=tuple(np.argsort(axes)))", "transpose_p(g, axes=tuple(axes))",
           OPS, "transpose's VJP applies the permutation instead of its inverse"),
    Mutant("E-cumsum-direction", "duograd/rows/core.py",
           "vjp=(lambda g, out, x, axis: _flip(cumsum_p(_flip(g, axis), axis=axis), axis),)",
           "vjp=(lambda g, out, x, axis: cumsum_p(g, axis=axis),)",
           f"{OPS} {GAPS}", "cumsum's VJP sums from the wrong end"),
    Mutant("E-scatter-overwrites", "duograd/rows/core.py",
           "        np.add.at(z, index, g)\n", "        z[index] = g\n",
           ENGINE, "getitem: repeated indices overwrite instead of accumulating"),
    Mutant("E-concat-offset", "duograd/rows/core.py",
           "start = builtins.sum(x.shape[axis] for x in xs[:i])", "start = i * xs[i].shape[axis]",
           OPS, "concatenate's VJP assumes every piece has the same length"),
    Mutant("E-matmul-gx", "duograd/rows/core.py",
           "    return g @ _mT(y)\n", "    return g @ y\n",
           OPS, "matmul: dL/dx = g y instead of g y^T"),
    Mutant("E-matmul-gy-1d", "duograd/rows/core.py",
           "return _squeeze(_mT(x) @ _unsqueeze(g, -1), -1)", "return _squeeze(x @ _unsqueeze(g, -1), -1)",
           OPS, "matmul with a vector on the right: dL/dy = x g instead of x^T g"),
    Mutant("E-sum-detached", "duograd/rows/core.py",
           "vjp=(lambda g, out, x, axis, keepdims: _expand(g, x.shape, axis, keepdims),),",
           "vjp=(lambda g, out, x, axis, keepdims: _expand(_wrap(g._data), x.shape, axis, keepdims),),",
           f"{HIGHER_OPS} {GAPS}", "sum's VJP detached from its cotangent (a second linear op)"),
    # ------------------------------------------------------------ sum_to (broadcasting's adjoint)
    Mutant("B-bias-mean", "duograd/shapes.py",
           "return g.sum(axis=tuple(range(lead)))", "return g.mean(axis=tuple(range(lead)))",
           BROADCAST, "sum_to averages over the leading axes (a bias gets the mean, not the sum)"),
    Mutant("B-inner-offset", "duograd/shapes.py",
           "inner = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)",
           "inner = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)",
           BROADCAST, "sum_to sums the size-1 axes without offsetting them by the added axes"),
    Mutant("B-no-inner", "duograd/shapes.py",
           "g = g.sum(axis=tuple(range(lead)) + inner, keepdims=True)",
           "g = g.sum(axis=tuple(range(lead)), keepdims=True)",
           BROADCAST, "sum_to forgets the axes where the input had size 1"),
    # ------------------------------------------------------------ the traversal
    Mutant("T-fanout", "duograd/autograd/engine.py",
           "                        e._g = prev + gx\n", "                        e._g = gx\n",
           ENGINE, "a node used twice keeps only the last path's cotangent"),
    Mutant("T-toposort-early", "duograd/autograd/engine.py",
           "                    e._g = c\n                    if not c:\n                        ready.append(e)",
           "                    e._g = c\n                    if c <= 1:\n                        ready.append(e)",
           ENGINE, "a node is visited before its last consumer has run"),
    Mutant("T-leaf-overwrite", "duograd/autograd/engine.py",
           "leaf._grad = g if leaf._grad is None else leaf._grad + g", "leaf._grad = g",
           ENGINE, "backward overwrites .grad instead of accumulating"),
    Mutant("T-never-release", "duograd/autograd/engine.py",
           "if n == 1 else node._x0\n            if not retain_graph:",
           "if n == 1 else node._x0\n            if False:",
           ENGINE, "backward never releases the graph (a second backward silently works)"),
    Mutant("T-no-create-graph", "duograd/autograd/engine.py",
           "prev_mode = _ctx.set_grad_mode(create_graph)\n    _busy = True",
           "prev_mode = _ctx.set_grad_mode(False)\n    _busy = True",
           HTENSOR, "create_graph=True records nothing: no second derivatives"),
    Mutant("T-grad-releases", "duograd/autograd/engine.py",
           "    if retain_graph is None:\n        retain_graph = create_graph",
           "    if retain_graph is None:\n        retain_graph = False",
           HTENSOR, "grad(create_graph=True) releases the graph its result depends on"),
    Mutant("T-prune-all", "duograd/autograd/engine.py",
           "if node in wanted or any(k in needed for k, _ in inputs_of(node)):",
           "if node in wanted or all(k in needed for k, _ in inputs_of(node)):",
           ENGINE, "grad's pruning drops a node unless every input leads to a target"),
    # ------------------------------------------------------------ the listeners (_context)
    Mutant("I-explain-fanout", "duograd/autograd/engine.py",
           "                else:\n                    grads[e] = prev + gx\n",
           "                else:\n                    grads[e] = gx\n",
           LISTEN + " -k grad_norm",
           "explain's |grad| of a node used three times keeps only the last use's cotangent"),
    Mutant("I-hooks-on-top", "duograd/hooks.py",
           "_context.push(_HOOKS, bottom=True)", "_context.push(_HOOKS)",
           LISTEN, "a hook registered inside detect_anomaly() runs after anomaly's check"),
    Mutant("I-explain-not-opaque", "duograd/explain.py",
           "    opaque = True", "    opaque = False",
           LISTEN, "explain's walk fires hooks and writes retained .grad"),
    Mutant("C-views-ignored", "duograd/capture/passes.py",
           "        if ins.out in escapes:\n            escapes.add(ins.a)",
           "        if False:\n            escapes.add(ins.a)",
           COMPILE + " -k buffer_reuse",
           "a buffer escapes through a view (.T) of a returned result: the next call overwrites it"),
    # issue 21: the planted capture bugs that survived the suite before test_soundness.py
    Mutant("C-sig-no-grad", "duograd/capture/recording.py",
           "x.requires_grad, d.flags.c_contiguous)", "d.flags.c_contiguous)",
           SOUND + " -k requiring_grad", "the signature omits an argument's requires_grad"),
    Mutant("C-sig-no-dtype", "duograd/capture/recording.py",
           'return ("T", d.shape, d.dtype.str,', 'return ("T", d.shape,',
           SOUND + " -k another_dtype", "the signature omits an argument Tensor's dtype"),
    Mutant("C-sig-no-dtype-array", "duograd/capture/recording.py",
           'return ("A", x.shape, x.dtype.str,', 'return ("A", x.shape,',
           SOUND + " -k another_dtype", "the signature omits an argument array's dtype"),
    Mutant("C-guard-no-grad", "duograd/capture/program.py",
           "if d.shape != shape or d.dtype != dtype or t.requires_grad != rg:",
           "if d.shape != shape or d.dtype != dtype:",
           SOUND + " -k stops_requiring", "the guard on closed-over tensors ignores requires_grad"),
    Mutant("C-guard-no-dtype", "duograd/capture/program.py",
           "if d.shape != shape or d.dtype != dtype or t.requires_grad != rg:",
           "if d.shape != shape or t.requires_grad != rg:",
           SOUND + " -k closed_over_tensor_of_another", "the guard on closed-over tensors ignores dtype"),
    Mutant("C-fold-no-grad", "duograd/capture/lowering.py",
           "if id(t) in self.rec.made or id(t) in self.constant_ids:",
           "if id(t) in self.rec.made or id(t) in self.constant_ids or not t.requires_grad:",
           SOUND + " -k read_every_call", "a closed-over tensor without grad is folded as a constant"),
    Mutant("C-lru-no-refresh", "duograd/capture/compiled.py",
           "            self.programs.move_to_end(key)\n            if self.recheck_every",
           "            if self.recheck_every",
           SOUND + " -k refreshes", "a cache hit does not refresh the program's LRU position"),
    Mutant("C-update-no-snapshot", "duograd/capture/lowering.py",
           "        if self.snapshot:\n            self.plan.save(st)\n", "",
           UPDATE + " -k rolls", "an optimizer update followed by a failing kernel is not undone"),
    Mutant("C-update-maximize", "duograd/optim/foreach.py",
           "            if group.get(\"maximize\"):\n                np.negative(b.G, out=b.G)\n", "",
           UPDATE + " -k maximize", "a compiled update ignores maximize=True"),
    Mutant("C-update-state-not-homed", "duograd/optim/foreach.py",
           "                        st[name] = homes[i]\n", "",
           UPDATE + " -k fifty", "a compiled update keeps its moments in buffers the optimizer's state does not see"),
    Mutant("C-update-new-gradient-ignored", "duograd/optim/foreach.py",
           "            if (p._grad if t is _MISSING else t) is not None:\n                return False\n", "",
           UPDATE + " -k outside", "a parameter recorded without .grad is not stepped when it has one"),
    Mutant("C-update-lr-per-call", "duograd/optim/foreach.py",
           "            group = groups[b.index]\n", "            group = b.__dict__.setdefault('g', groups[b.index])\n",
           UPDATE + " -k 'schedule or lr_changed'", "a compiled update keeps the lr and options it saw first"),
    Mutant("C-snapshot-after-commit", "duograd/capture/lowering.py",
           "        if self.snapshot:\n            st.before_host(self.args)\n        st.commit()",
           "        st.commit()\n        if self.snapshot:\n            st.before_host(self.args)",
           SOUND + " -k failing_after", "the host-step snapshot is taken after the held-back .grad commits"),
    Mutant("C-accumulate-committed", "duograd/capture/lowering.py",
           "old = st.pending[leaf] if leaf in st.pending else leaf._grad", "old = leaf._grad",
           SOUND + " -k two_backward", "an accumulate reads the committed .grad, not the held-back write"),
    Mutant("C-fusion-stays", "duograd/capture/lowering.py",
           "cleared = self.cleared.pop(self._leaf_key(ref), None)",
           "cleared = self.cleared.get(self._leaf_key(ref), None)",
           SOUND + " -k two_backward", "the zero_grad+backward fusion stays in force after a second backward"),
    Mutant("C-recheck-prefix", "duograd/capture/compiled.py",
           "    return None if len(old) == len(new) else min(len(old), len(new))",
           "    return None",
           SOUND + " -k prefix", "a recheck compares only the common prefix of two recordings"),
    Mutant("C-args-frozen", "duograd/capture/compiled.py",
           "    if not any(isinstance(x, np.ndarray) for x in leaves):",
           "    if True:",
           SOUND + " -k numpy_argument", "array arguments enter fn as arrays: NumPy arithmetic is frozen"),
    Mutant("C-alias-ignored", "duograd/capture/recording.py",
           "_aliases(arrays) if len(arrays) > 1 else None)",
           "None)",
           SOUND + " -k two_arguments", "the same array as two arguments is keyed like two arrays"),
    Mutant("C-attrs-unguarded", "duograd/capture/program.py",
           "            v = getattr(obj, name, _MISSING)\n            if v is not value and (type(v) is not type(value) or v != value):",
           "            v = getattr(obj, name, _MISSING)\n            if False:",
           SOUND + " -k 'eval or dropout_whose'", "a module's training flag or p is not guarded"),
    Mutant("C-strided-buffer", "duograd/capture/passes.py",
           "                and o not in strided and (", "                and True and (",
           SOUND + " -k transposed", "a Fortran-ordered result gets a C-ordered buffer: a reduction's last bits change"),
    Mutant("C-recheck-no-rollback", "duograd/capture/compiled.py",
           "        if i is not None:\n            put_back()", "        if i is not None:\n            pass",
           SOUND + " -k failed_recheck", "a failed recheck leaves the eager step's changes"),
    Mutant("C-globals-unguarded", "duograd/capture/compiled.py",
           "        program.values_read = values", "        program.values_read = []",
           SOUND + " -k 'global_number or closed_over_number'",
           "a global or closed-over number that fn reads is frozen at its recorded value"),
    Mutant("C-training-unreported", "duograd/nn/modules.py",
           "        if _ctx.on_attr:\n            _ctx.attr(self, \"training\", v)\n        return v",
           "        return v",
           SOUND + " -k 'flag_read_by_fn or issue_snippets or custom_call or in_a_container'",
           "a module's training read without calling the module is frozen at its recorded value"),
    Mutant("C-training-unreported-gaps", "duograd/nn/modules.py",
           "        if _ctx.on_attr:\n            _ctx.attr(self, \"training\", v)\n        return v",
           "        return v", "tests/compiled/test_fuzz.py",
           "the same, found by the fuzzer (a flag read by the step, a custom __call__, a helper)"),
    Mutant("C-object-attrs-unguarded", "duograd/capture/reads.py",
           "                    self.commit(chain)\n                    self.value(obj, name, v)",
           "                    self.commit(chain)",
           SOUND + " -k 'config_objects or issue_snippets or global_objects or bound_method'",
           "a plain object's attribute read by fn (cfg.scale) is frozen at its recorded value"),
    Mutant("C-object-attrs-unguarded-gaps", "duograd/capture/reads.py",
           "                    self.commit(chain)\n                    self.value(obj, name, v)",
           "                    self.commit(chain)", "tests/compiled/test_fuzz.py",
           "the same, found by the fuzzer (a config object, a class attribute, a global)"),
    Mutant("C-objects-on-the-way-unguarded", "duograd/capture/compiled.py",
           "        program.objects_read = objects", "        program.objects_read = []",
           SOUND + " -k 'config_objects or global_objects or custom_call or local_variable'",
           "an object on the way to a guarded value (cfg.opts, a rebound global) is replaced unseen"),
    Mutant("C-dict-entry-unguarded", "duograd/capture/reads.py",
           "                    self.value(d, name, v)  # a dict's entry: read with d.get(name)",
           "                    pass",
           SOUND + " -k class_used_as_a_config", "a dict's entry at a constant key is frozen"),
    Mutant("C-dict-function-unscanned", "duograd/capture/reads.py",
           "                    chain.append((d, name, v))\n                    if self.callable(v, depth + 1):",
           "                    chain.append((d, name, v))\n                    if False:",
           SOUND + " -k dict_entry_is_scanned",
           "a function taken from a dict entry and called is not scanned for its reads"),
    Mutant("C-custom-call-unscanned", "duograd/capture/reads.py",
           "        if type(call) is types.FunctionType:\n            return self.function(call, obj, depth)",
           "        if False:\n            return self.function(call, obj, depth)",
           SOUND + " -k 'custom_call or call_of_its_own'",
           "the plain settings a custom __call__ reads on its object are not guarded"),
    Mutant("C-locals-not-followed", "duograd/capture/reads.py",
           "                named[name] = chain  # ``cfg = self.cfg``: a later ``cfg.scale`` goes on from it",
           "                pass", SOUND + " -k local_variable",
           "an attribute read through a local name (opts = cfg.opts; opts.k) is not guarded"),
    Mutant("C-inplace-dropped", "duograd/capture/lowering.py",
           "            np.copyto(arr, env[s], casting=\"same_kind\")", "            pass",
           SOUND + " -k 'in_place or batch_norm'", "an in-place write is not replayed"),
    Mutant("C-standin-stale", "duograd/capture/lowering.py",
           "            if target is not None:  # t's values before its in-place write: t's slot now",
           "            if False:",
           SOUND + " -k 'setitem_into or in_place'", "an in-place op reads its tensor's recorded values"),
    Mutant("C-inplace-no-undo", "duograd/capture/program.py",
           "        for arr, values in reversed(self.copies):\n            arr[...] = values",
           "        pass",
           SOUND + " -k failing_after_an_in_place", "a replay failing after an in-place write leaves it"),
    Mutant("C-unseen-write", "duograd/capture/recording.py",
           "                    sums[i] = (d, _checksum(d))", "                    pass",
           SOUND + " -k numpy_write_into_an_argument", "a NumPy write into a read array goes unnoticed"),
    Mutant("C-peephole-scalar", "duograd/capture/passes.py",
           "                        and shapes.get(r.b if r.a == o else r.a) == shapes.get(o)\n", "",
           SOUND + " -k broadcast_times", "a broadcast read by a ufunc with a scalar is dropped"),
    # issue 21: Python numbers as inputs of the program
    Mutant("C-number-folded", "duograd/capture/compiled.py",
           "        program.standins = tuple((i, leaves[i]._data.dtype) for i in standins)",
           "        program.standins = ()",
           NUMBERS + " -k float32", "a number input's slot gets the plain number: its dtype is lost"),
    Mutant("C-number-never-dynamic", "duograd/capture/compiled.py",
           "                  if _number_key(leaves[i]) != nums.first[i] and _fits(leaves[i])}",
           "                  if False}",
           NUMBERS + " -k sweep", "a number stays static at every value: a sweep records per value"),
    # issue 32: what makes a stand-in's number static
    Mutant("C-number-read-unseen", "duograd/capture/recording.py",
           "                self.numbers.use(d, f\"read into Python ({what})\")\n                return",
           "                return",
           NUMBERS + " -k math", "a stand-in read into Python (math.sqrt) does not make it static"),
    Mutant("C-number-return-unseen", "duograd/capture/recording.py",
           "                    self.use(d, \"returned\")",
           "                    pass",
           NUMBERS + " -k returned", "a number computed from the stand-in alone is returned as a Tensor"),
    Mutant("C-number-store-unseen", "duograd/capture/recording.py",
           "        live = [d for r, d in self.refs if r() is not None]\n        if live:",
           "        live = []\n        if live:",
           NUMBERS + " -k 'stored or stand_in_still'", "a number stored by fn is not made static"),
    Mutant("C-number-not-put-back", "duograd/capture/compiled.py",
           "            put_back()\n            nums.static |= set(taint)",
           "            nums.static |= set(taint)",
           NUMBERS + " -k 'put_back or host_steps'", "an abandoned stand-in run's changes are kept"),
    Mutant("C-number-kept-replays", "duograd/capture/compiled.py",
           "            if program is not None and nums is not None and nums.kept and \\\n                    program is not self._last:",
           "            if False:",
           NUMBERS + " -k stored", "a stored number's program replays after another value was stored"),
    Mutant("C-number-strong-promotion", "duograd/_tensor.py",
           "            if _WEAK and id(a) in _WEAK:  # a stand-in for a Python number: ranked as one",
           "            if False:",
           NUMBERS + " -k 0d_float32", "a stand-in promotes as a 0-d tensor, not as the number"),
    Mutant("C-number-pow-exact", "duograd/capture/recording.py",
           "                if op.name not in _PYTHON_EXACT:",
           "                if False:",
           NUMBERS + " -k numpy_may_round", "round(lr) on the stand-in is NumPy's, not Python's"),
    Mutant("C-dict-order-sorted", "duograd/capture/trees.py",
           "tuple(obj), tuple(flatten(v, leaves, paths, f\"{where}[{k!r}]\")\n"
           "                                             for k, v in obj.items()))",
           "tuple(sorted(obj, key=repr)), tuple(flatten(obj[k], leaves, paths, f\"{where}[{k!r}]\")\n"
           "                                             for k in sorted(obj, key=repr)))",
           "tests/compiled/test_capture_simpler.py -k order",
           "a dict argument is keyed in sorted order: the same items in another order replay the first"),
    # ------------------------------------------------------------ forward mode and func
    Mutant("J-last-tangent", "duograd/autograd/engine.py",
           "t_out = ti if t_out is None else t_out + ti", "t_out = ti",
           OPS, "jvp keeps only the last input's tangent contribution"),
    Mutant("J-no-mask", "duograd/autograd/engine.py",
           "saved = _ctx.mask_levels(lvl)", "saved = _ctx.fwd_below",
           HFUNC, "nested jvp: a rule's own arithmetic pushes its level's tangent again"),
    Mutant("J-no-broadcast", "duograd/autograd/engine.py",
           "            if t_out.shape != out.shape:\n                t_out = t_out.broadcast_to(out.shape)\n",
           "",
           f"{OPS} {GAPS}", "a tangent is not broadcast to its output's shape"),
    Mutant("F-no-graph", "duograd/func.py",
           "    create = _needs_graph(outs, aliases, primals)\n",
           "    create = False\n",
           HFUNC, "func.vjp never records its backward pass: grad(grad(f)) breaks"),
    Mutant("F-jacrev-transposed", "duograd/func.py",
           "jacs.append(tuple(r.reshape(o.shape + x.shape) for r, x in zip(rows, sel)))",
           "jacs.append(tuple(r.reshape(m, -1).T.reshape(o.shape + x.shape) for r, x in zip(rows, sel)))",
           HFUNC, "jacrev stacks rows as columns (the Jacobian transposed)"),
    Mutant("F-jacfwd-transposed", "duograd/func.py",
           "by_arg.append([c.reshape(tuple(c.shape[:-1]) + x.shape) for c in cols])",
           "by_arg.append([c.reshape(-1, m).T.reshape(tuple(c.shape[:-1]) + x.shape) for c in cols])",
           HFUNC, "jacfwd stacks columns as rows (the Jacobian transposed)"),
    Mutant("F-value-drops-tangent", "duograd/func.py",
           "shown = tuple(ops.stop_gradient_p(o) for o in outs)",
           "shown = tuple(ops.detach_p(o) for o in outs)",
           f"{HFUNC} {GAPS}", "vjp's value drops its forward-mode tangent (jvp through value_and_grad's value)"),
    Mutant("F-jvp-tangent-dtype", "duograd/func.py",
           "set_tangent(d, lvl, t if t.dtype == x.dtype else t.astype(x.dtype))",
           "set_tangent(d, lvl, t)",
           f"{ENGINE} {GAPS}", "jvp keeps a float64 tangent on a float32 primal"),
    # ------------------------------------------------------------ gradcheck
    Mutant("G-no-rtol", "duograd/gradcheck.py",
           "bad = np.abs(a - n) > atol + rtol * np.abs(n)", "bad = np.abs(a - n) > atol + np.abs(n)",
           ENGINE, "gradcheck's relative tolerance is 100%"),
    Mutant("G-no-rtol-gaps", "duograd/gradcheck.py",
           "bad = np.abs(a - n) > atol + rtol * np.abs(n)", "bad = np.abs(a - n) > atol + np.abs(n)",
           f"{GAPS} -k gradcheck", "the same bug, caught by the second, independent check (test_tensor_gaps.py)"),
    Mutant("G-no-nan", "duograd/gradcheck.py",
           "        bad |= np.isnan(a) != np.isnan(n)\n", "",
           f"{ENGINE} {GAPS}", "gradcheck passes a nan derivative (nan > tol is False)"),
    Mutant("G-one-sided", "duograd/gradcheck.py",
           "numeric[k][:, e] = (cols[0] - cols[1]) / (2 * eps)", "numeric[k][:, e] = (cols[0] - cols[1]) / eps",
           ENGINE, "gradcheck's central difference divides by eps, not 2 eps"),
    Mutant("G-first-input", "duograd/gradcheck.py",
           "which = [i for i, x in enumerate(xs) if x.requires_grad] or list(range(len(xs)))\n"
           "    for i in which:\n        xs[i].requires_grad = True\n    _, analytic",
           "which = [0]\n"
           "    for i in which:\n        xs[i].requires_grad = True\n    _, analytic",
           f"{ENGINE} {GAPS}", "gradcheck checks only the first input"),
    Mutant("G-v-constant", "duograd/gradcheck.py",
           "dtype=np.float64), requires_grad=True)\n    n = len(xs)",
           "dtype=np.float64), requires_grad=False)\n    n = len(xs)",
           HIGHER_OPS, "gradgradcheck holds the cotangent v constant (the bug of section 2)"),
    # ------------------------------------------------------------ Tensor and its methods
    Mutant("X-constant-dtype", "duograd/_tensor.py",
           "return a, _number(b, dt)",
           "return a, _number(b, np.dtype(np.float64))",
           ENGINE, "a Python number makes a float32 tensor float64 (2 * x32)"),
    Mutant("X-tensor-shares", "duograd/_tensor.py",
           "arr = _derive(_as_array, data, dtype=dtype, copy=True)",
           "arr = _derive(_as_array, data, dtype=dtype)",
           f"{ENGINE} {GAPS}", "dg.tensor shares memory with its array instead of copying"),
    # ------------------------------------------------------------ the node and its versions (issue 27)
    Mutant("V-input-unchecked", "duograd/autograd/engine.py",
           "            if reads_in is None or i in reads_in:\n                raise _version_error(node, f\"input {i}\", arr)",
           "            if False:\n                raise _version_error(node, f\"input {i}\", arr)",
           NODE + " -k saved_input", "a saved input written in place is used without the version error"),
    Mutant("V-output-unchecked", "duograd/autograd/engine.py",
           "        if reads_out and _versions.written_since(out._data, s):",
           "        if False:",
           INPLACE + " -k saved_output", "a saved output written in place is used without the version error"),
    Mutant("V-reads-everything", "duograd/autograd/engine.py",
           "        return frozenset(ins), out\n",
           "        return None, True\n",
           NODE + " -k no_saved_value", "every input counts as saved: a write no rule reads raises (torch does not)"),
    Mutant("V-stamp-not-moved", "duograd/inplace.py",
           "        node.stamp = w\n        node._extra()[\"written\"] = w  # (the write",
           "        node._extra()[\"written\"] = w  # (the write",
           INPLACE, "an in-place op's node keeps its creation clock: its own write looks like an alias's"),
    Mutant("V-careless", "duograd/autograd/engine.py",
           "    return bool(last) and any(type(n) is Node and n.stamp < last for n in order)",
           "    return False",
           NODE + " -k view_of_a_base", "a value written through a view before its consumer was made goes unchecked"),
    Mutant("V-data-shares-counter", "duograd/_versions.py",
           "    out = np.asarray(_Interface(arr))", "    out = arr.view()",
           NODE + " -k data", "t.data's writes bump t's version (torch's .data has a counter of its own)"),
    Mutant("V-edge-follows-tensor", "duograd/autograd/engine.py",
           "                x = xs[i]\n                try:",
           "                x = xs[i]\n                e = e if key_of(x) is None else key_of(x)\n                try:",
           NODE + " -k 'new_node or old_node'",
           "an edge follows the input's current node, not the one it had when recorded"),
    Mutant("X-rsub", "duograd/methods.py",
           "def __rsub__(self, other): return ops.sub_p(other, self)",
           "def __rsub__(self, other): return ops.sub_p(self, other)",
           BROADCAST, "2 - x computes x - 2"),
    # ------------------------------------------------------------ scalar engine
    Mutant("S-mul-vjp", "duograd/scalar/engine.py",
           "out._vjp = lambda g: (g * y, g * x)", "out._vjp = lambda g: (g * x, g * y)",
           SCALAR, "Value *: each input scaled by itself instead of by the other"),
    Mutant("S-sub-vjp", "duograd/scalar/engine.py",
           "out._vjp = lambda g: (g, -g)", "out._vjp = lambda g: (g, g)",
           SCALAR, "Value -: the subtrahend's gradient loses its sign"),
    Mutant("S-div-vjp", "duograd/scalar/engine.py",
           "(g / y, -g * q / y)", "(g / y, -g * q)",
           SCALAR, "Value /: d(x/y)/dy = -x/y (one division by y missing)"),
    Mutant("S-tanh-vjp", "duograd/scalar/engine.py",
           "(g * (1.0 - t * t),)", "(g * (1.0 - t),)",
           SCALAR, "Value.tanh: slope 1 - t instead of 1 - t^2"),
    Mutant("S-relu-at-0", "duograd/scalar/engine.py",
           "positive = self.data > 0", "positive = self.data >= 0",
           SCALAR, "Value.relu: slope 1 at exactly 0 (PyTorch takes 0)"),
    Mutant("S-sigmoid-neg", "duograd/scalar/engine.py",
           "    e = math.exp(x)\n    return e / (1.0 + e)",
           "    e = math.exp(x)\n    return 1.0 / (1.0 + e)",
           SCALAR, "sigmoid's branch for x < 0 computes 1/(1 + e^x): sigmoid(-x)"),
    Mutant("S-power-slope", "duograd/scalar/engine.py",
           "return n * x ** (n - 1) if n != 0 else 0.0", "return n * x ** n if n != 0 else 0.0",
           SCALAR, "power rule n x^n instead of n x^(n-1) (engine and forward share it)"),
    Mutant("S-cos-vjp", "duograd/scalar/engine.py",
           "(-g * math.sin(x),)", "(g * math.sin(x),)",
           SCALAR, "Value.cos: d cos = +sin"),
    Mutant("S-accumulate", "duograd/scalar/engine.py",
           "node.grad += g", "node.grad = g",
           SCALAR, "backward overwrites .grad instead of accumulating"),
    Mutant("S-accumulate-gaps", "duograd/scalar/engine.py",
           "node.grad += g", "node.grad = g",
           f"{GAPS} -k scalar",
           "the same bug, caught by the second, independent check (test_tensor_gaps.py)"),
    Mutant("S-fanout", "duograd/scalar/engine.py",
           "grads[child] = grads.get(child, 0.0) + g_child", "grads[child] = g_child",
           SCALAR, "a node used twice keeps only the last path's gradient"),
    Mutant("S-toposort", "duograd/scalar/engine.py",
           "            order.append(node)  # everything below it is already in `order`\n"
           "        elif node not in seen:\n"
           "            seen.add(node)\n"
           "            stack.append((node, True))",
           "            pass\n"
           "        elif node not in seen:\n"
           "            seen.add(node)\n"
           "            order.append(node)\n"
           "            stack.append((node, True))",
           SCALAR, "topological order is a pre-order: a node can run before all its users"),
    # ------------------------------------------------------------ scalar forward mode
    Mutant("D-mul-tangent", "duograd/scalar/forward.py",
           "self.tangent * other.value + self.value * other.tangent",
           "self.tangent * other.value",
           FORWARD, "Dual *: the product rule forgets x y'"),
    Mutant("D-div-tangent", "duograd/scalar/forward.py",
           "(self.tangent - q * other.tangent) / other.value",
           "(self.tangent + q * other.tangent) / other.value",
           FORWARD, "Dual /: the quotient rule's sign"),
    Mutant("D-exp-tangent", "duograd/scalar/forward.py",
           "return Dual(e, e * self.tangent)", "return Dual(e, self.tangent)",
           FORWARD, "Dual.exp passes the tangent through unscaled"),
    Mutant("D-tanh-tangent", "duograd/scalar/forward.py",
           "(1.0 - t * t) * self.tangent", "(1.0 + t * t) * self.tangent",
           FORWARD, "Dual.tanh: 1 + t^2"),
    Mutant("D-cos-tangent", "duograd/scalar/forward.py",
           "-math.sin(self.value) * self.tangent", "math.sin(self.value) * self.tangent",
           FORWARD, "Dual.cos: d cos = +sin"),
    Mutant("D-sub-tangent", "duograd/scalar/forward.py",
           "self.tangent - other.tangent", "self.tangent + other.tangent",
           FORWARD, "Dual -: tangents added"),
    # ------------------------------------------------------------ scalar higher order
    Mutant("H-mul-detached", "duograd/scalar/higher.py",
           "out._vjp = lambda g: (g * y, g * x)", "out._vjp = lambda g: (g * y.data, g * x.data)",
           HIGHER, "Var *: the rule uses the inputs' floats, so the mixed second derivative is lost"),
    Mutant("H-sin-detached", "duograd/scalar/higher.py",
           "out._vjp = lambda g: (g * x.cos(),)", "out._vjp = lambda g: (g * math.cos(x.data),)",
           HIGHER, "Var.sin: a float slope, right at first order, wrong at second"),
    Mutant("H-tanh-detached", "duograd/scalar/higher.py",
           "(g * (1.0 - out * out),)", "(g * (1.0 - out.data * out.data),)",
           HIGHER, "Var.tanh: a float slope, right at first order, wrong at second"),
    Mutant("H-fanout", "duograd/scalar/higher.py",
           "grads[child] = grads[child] + g_child if child in grads else g_child",
           "grads[child] = g_child",
           HIGHER, "grad: a node used twice keeps only the last path's gradient"),
    Mutant("H-prune", "duograd/scalar/higher.py",
           "if node in wanted or any(child in leads_to_input for child in node._prev):",
           "if node in wanted:",
           HIGHER, "grad: pruning keeps only the inputs, so no gradient ever reaches them"),
    # ------------------------------------------------------------ nn modules
    Mutant("N-init-bound", "duograd/nn/modules.py",
           "fan_in = init._calculate_fan_in_and_fan_out(self.weight)[0]",
           "fan_in = init._calculate_fan_in_and_fan_out(self.weight)[1]",
           NN, "Linear's init bound from fan-out instead of fan-in"),
    Mutant("N-bias-dropped", "duograd/nn/modules.py",
           "return out if self.bias is None else out + self.bias", "return out",
           NN, "Linear forgets its bias"),
    Mutant("N-last-activated", "duograd/nn/modules.py",
           "        return last(x)\n", "        return act(last(x))\n",
           NN, "MLP activates its last layer (no logits)"),
    Mutant("N-shared-twice", "duograd/nn/modules.py",
           "            if id(p) not in seen or not remove_duplicate:\n", "            if True:\n",
           NN, "a parameter shared by two layers is listed twice"),
    Mutant("N-rng-reseeded", "duograd/nn/modules.py",
           "Linear(sizes[i], sizes[i + 1], rng=gen)", "Linear(sizes[i], sizes[i + 1], rng=rng)",
           NN, "MLP reseeds every layer from the int seed (identical draws per layer)"),
    Mutant("N-state-not-copied", "duograd/nn/modules.py",
           "out[prefix + name] = t if keep_vars else t._data.copy()",
           "out[prefix + name] = t if keep_vars else t._data",
           NN, "state_dict hands out the live arrays instead of copies"),
    Mutant("N-partial-load", "duograd/nn/modules.py",
           "        if problems:\n            raise _StateDictError(f\"{type(self).__name__}.load_state_dict: \"",
           "        for p, arr in staged:\n            p.data = arr\n"
           "        if problems:\n            raise _StateDictError(f\"{type(self).__name__}.load_state_dict: \"",
           NN, "load_state_dict loads the good keys before raising on a bad one"),
    # ------------------------------------------------------------ losses
    Mutant("L-mse-reduction", "duograd/nn/functional.py",
           "return _reduce(d * d, reduction, \"mse_loss\")", "return _reduce(d * d, \"mean\", \"mse_loss\")",
           NN, "mse_loss ignores reduction='sum'"),
    Mutant("L-mse-swapped", "duograd/nn/functional.py",
           "    d = pred - target\n", "    d = target - pred\n",
           NN, "mse_loss squares target - pred"),
    Mutant("L-hinge-sign", "duograd/nn/functional.py",
           "margin = 1 - scores * lab.astype(scores.dtype)", "margin = 1 + scores * lab.astype(scores.dtype)",
           NN, "hinge margin 1 + y s"),
    Mutant("L-hinge-abs", "duograd/nn/functional.py",
           "return _reduce(margin.relu(), reduction, \"hinge_loss\")",
           "return _reduce(margin.abs(), reduction, \"hinge_loss\")",
           NN, "hinge penalises points beyond the margin too (|m| instead of relu(m))"),
    Mutant("L-ce-sign", "duograd/nn/functional.py",
           "    return np.negative(w, out=w)",
           "    return w",
           "tests/ops/test_softmax_crossentropy.py", "cross_entropy forgets the minus sign"),
    Mutant("L-ce-range", "duograd/nn/functional.py",
           "bad = ((arr < 0) | (arr >= c)) & (arr != t.ignore_index)",
           "bad = ((arr < 0) | (arr > c)) & (arr != t.ignore_index)",
           NN, "cross_entropy accepts the class index C (one past the end)"),
    # ------------------------------------------------------------ optimizers
    Mutant("O-sgd-decay-sign", "duograd/optim/__init__.py",
           "d = g + wd * p._data if wd != 0.0 else g", "d = g - wd * p._data if wd != 0.0 else g",
           OPTIM, "SGD weight decay pushes weights away from 0"),
    Mutant("O-sgd-dampening", "duograd/optim/foreach.py",
           "buf = xp.iadd(buf, xp.damped(d, damp, tmp))",
           "buf = xp.iadd(buf, xp.damped(d, mu, tmp))",
           OPTIM, "SGD momentum with dampening (torch's default has none)"),
    Mutant("O-nesterov-ignored", "duograd/optim/foreach.py",
           "return buf, nesterov_direction_(xp, d, buf, mu, tmp) if nesterov else buf",
           "return buf, buf",
           OPTIM, "SGD ignores nesterov=True"),
    Mutant("O-adam-bias", "duograd/optim/__init__.py",
           "                                lr / (1 - b1 ** t), (1 - b2 ** t) ** 0.5)",
           "                                lr, (1 - b2 ** t) ** 0.5)",
           OPTIM, "Adam without the first moment's bias correction"),
    Mutant("O-adam-v", "duograd/optim/foreach.py",
           "    sq = xp.imul(sq, g)\n    v = xp.iadd(v, sq)\n",
           "    v = xp.iadd(v, sq)\n",
           OPTIM, "Adam's second moment averages g, not g^2"),
    Mutant("O-adam-eps", "duograd/optim/foreach.py",
           "    denom = xp.sqrt(v, tmp)\n    denom = xp.idiv(denom, root_bc2)\n    denom = xp.iadd(denom, eps)\n",
           "    denom = xp.sqrt(xp.add(v, eps), tmp)\n    denom = xp.idiv(denom, root_bc2)\n",
           OPTIM, "Adam's eps inside the square root"),
    Mutant("O-adamw-decay", "duograd/optim/__init__.py",
           "param = param * (1 - lr * wd)", "param = param * (1 - wd)",
           OPTIM, "AdamW's decoupled decay not scaled by lr"),
    Mutant("O-rmsprop-eps", "duograd/optim/foreach.py",
           "        avg = xp.sqrt(s, tmp)\n",
           "        avg = xp.sqrt(xp.add(s, eps), tmp)\n        avg = xp.sub(avg, eps, xp.out(avg))\n",
           OPTIM, "RMSprop's eps inside the square root"),
    Mutant("O-rmsprop-centered", "duograd/optim/foreach.py",
           "        avg = xp.sub(s, avg, xp.out(avg))\n", "        avg = xp.sub(s, 0.0, xp.out(avg))\n",
           OPTIM, "RMSprop ignores centered=True"),
    Mutant("O-skip-none", "duograd/optim/__init__.py",
           "                if grad is not None:\n                    g = grad._data",
           "                if True:\n                    g = grad._data if grad is not None else np.zeros_like(p._data)",
           NN, "optimizers step parameters that have no gradient (as if it were 0)"),
    # ------------------------------------------------------------ schedules
    Mutant("R-step-floor", "duograd/optim/lr_scheduler.py",
           "self.gamma ** (self.last_epoch // self.step_size)",
           "self.gamma ** (self.last_epoch / self.step_size)",
           SCHED, "StepLR decays smoothly instead of in steps"),
    Mutant("R-exp-offby1", "duograd/optim/lr_scheduler.py",
           "return self.base_lr * self.gamma ** self.last_epoch",
           "return self.base_lr * self.gamma ** (self.last_epoch + 1)",
           SCHED, "ExponentialLR one epoch ahead"),
    Mutant("R-step-lags", "duograd/optim/lr_scheduler.py",
           "        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)\n        self._apply()",
           "        self._apply()\n        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)",
           SCHED, "step() sets the lr of the epoch it leaves, one behind"),
    Mutant("R-cosine-eta-min", "duograd/optim/lr_scheduler.py",
           "cos = math.cos(math.pi * self.last_epoch / self.T_max)\n"
           "        return self.eta_min + (self.base_lr - self.eta_min) * (1 + cos) / 2",
           "cos = math.cos(math.pi * self.last_epoch / self.T_max)\n"
           "        return self.eta_min + self.base_lr * (1 + cos) / 2",
           SCHED, "CosineAnnealingLR overshoots by eta_min"),
    Mutant("R-warm-restarts-eta-min", "duograd/optim/lr_scheduler.py",
           "cos = math.cos(math.pi * self.T_cur / self.T_i)\n"
           "        return self.eta_min + (self.base_lr - self.eta_min) * (1 + cos) / 2",
           "cos = math.cos(math.pi * self.T_cur / self.T_i)\n"
           "        return self.eta_min + self.base_lr * (1 + cos) / 2",
           "tests/nn_optim/test_lr_scheduler_new.py -k warm_restarts",
           "CosineAnnealingWarmRestarts overshoots by eta_min (the cosine's other copy)"),
    Mutant("R-linear-no-hold", "duograd/optim/lr_scheduler.py",
           "frac = min(self.last_epoch, self.total_iters) / self.total_iters",
           "frac = self.last_epoch / self.total_iters",
           SCHED, "LinearLR keeps moving past total_iters"),
    # issue 32: the fusion pass and the derived-array memo
    Mutant("C-fuse-escape", "duograd/capture/fusion.py",
           "        fresh_needed = is_output and o in escapes",
           "        fresh_needed = False",
           FUSION, "a fused result that is returned sits in a buffer the next call overwrites"),
    Mutant("C-fuse-dying-read-later", "duograd/capture/fusion.py",
           "    if any(q not in group for q in readers.get(s, [])):\n        return False\n    ws",
           "    if False:\n        return False\n    ws",
           FUSION, "a product read after the chain is written over in place"),
    Mutant("C-fuse-unmovable", "duograd/capture/fusion.py",
           "            return False\n    return True\n\n\ndef _fused",
           "            pass\n    return True\n\n\ndef _fused",
           FUSION, "a group is moved past a kernel that reads one of its results"),
    Mutant("C-memo-no-bytes", "duograd/capture/memo.py",
           "        key = (src.dtype, src.shape, src.tobytes())",
           "        key = (src.dtype, src.shape)",
           FUSION, "targets changed in place are not read again"),
    Mutant("C-memo-array-keywords", "duograd/capture/memo.py",
           "and all(_plain(v) for v in kw.values()))",
           "and True)",
           FUSION, "a derive holding a class-weight array is kept though the weights change"),
    # Shapes that depend on the values (tests/compiled/test_value_shapes.py).
    Mutant("C-shape-unchecked", "duograd/capture/instructions.py",
           "        if np.shape(out) != self.shape:",
           "        if False:",
           VALUE_SHAPES, "a replay keeps going on a selection of another size"),
    Mutant("C-recapture-gens-moved", "duograd/capture/compiled.py",
           "                    g.bit_generator.state = state\n                del self.programs[key]",
           "                    pass\n                del self.programs[key]",
           VALUE_SHAPES, "an abandoned replay leaves its draws' generator moved"),
    Mutant("C-value-shape-dropped", "duograd/capture/lowering.py",
           "            if ins.role != \"kernel\" or ins.out in needed or type(ins.f) is ShapeChecked or \\\n"
           "                    (ins.op is not None and ins.op.value_shape):",
           "            if ins.role != \"kernel\" or ins.out in needed:",
           VALUE_SHAPES, "a selection whose size alone is used loses its check"),
    Mutant("C-mask-by-numpy", "duograd/ops.py",
           "                expanded.extend(nonzero_along_p(m, axis=k)._data for k in range(i.ndim))",
           "                expanded.extend(np.nonzero(i))",
           VALUE_SHAPES, "a bool mask's indices frozen at the recording"),
    Mutant("C-shape-write-unseen", "duograd/inplace.py",
           "        _ctx.write(t, f\"{name}()\", src=src)",
           "        pass",
           VALUE_SHAPES, "t_() of an argument is not redone by a replay"),
]

# Mutants that no test can kill, because the mutated program computes the same thing.
EQUIVALENT: dict[str, str] = {
    "L-mse-swapped": "(t - p)^2 equals (p - t)^2 bit for bit (negation is exact in IEEE "
                     "arithmetic) and its gradient 2(t - p) * (-1) is 2(p - t) exactly; kept "
                     "to show that an equivalent mutant is reported as such",
}


# ---------------------------------------------------------------- the copies


def _source_files(rev: str | None) -> list[str]:
    if rev is not None:
        out = subprocess.run(["git", "-C", REPO, "ls-tree", "-r", "--name-only", rev],
                             check=True, capture_output=True, text=True).stdout
    else:  # the working tree: tracked files plus the new ones git would track
        out = subprocess.run(["git", "-C", REPO, "ls-files", "--cached", "--others",
                              "--exclude-standard"], check=True, capture_output=True, text=True).stdout
    return [f for f in out.splitlines() if f]


def _make_copy(dest: str, rev: str | None, source: str | None = None) -> None:
    if source is not None:  # a directory tree, e.g. a clean clone
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info"))
        return
    os.makedirs(dest)
    if rev is not None:
        archive = subprocess.run(["git", "-C", REPO, "archive", rev], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
        return
    for rel in _source_files(None):
        src = os.path.join(REPO, rel)
        if not os.path.isfile(src):  # deleted in the working tree but still tracked
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel))


WHERE_CHECK = '''\
import os
import duograd


def test_duograd_is_imported_from_the_copy():
    root = os.path.realpath(os.environ["MUTANTS_ROOT"]) + os.sep
    assert os.path.realpath(duograd.__file__).startswith(root), duograd.__file__
'''


def _env(root: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=root, MUTANTS_ROOT=root,
               PYTHONDONTWRITEBYTECODE="1",  # no stale .pyc of a mutant outlives its run
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


_RUNNING: set[subprocess.Popen] = set()  # the pytest runs in progress (stopped on Ctrl-C)
_RUNNING_LOCK = threading.Lock()
_STOPPING = threading.Event()


def _pytest(root: str, selection: str, timeout: float) -> tuple[str, float, str]:
    """Run the selection in ``root``: ("passed" | "failed" | "timeout" | "error", seconds, detail)."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *shlex.split(selection)]
    start = time.monotonic()
    with _RUNNING_LOCK:
        if _STOPPING.is_set():
            return "error", 0.0, "interrupted"
        proc = subprocess.Popen(cmd, cwd=root, env=_env(root), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        _RUNNING.add(proc)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        proc.communicate()
        return "timeout", time.monotonic() - start, f"no result after {timeout:.0f} s"
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    seconds = time.monotonic() - start
    if proc.returncode == 0:
        return "passed", seconds, ""
    if proc.returncode in (1, 2):  # tests failed, or collection/import failed
        first = next((ln for ln in out.splitlines() if ln.startswith(("FAILED", "ERROR"))), None)
        if first is None:
            first = out.strip().splitlines()[-1] if out.strip() else ""
        return "failed", seconds, first
    return "error", seconds, f"pytest exit status {proc.returncode}: " + " | ".join(out.strip().splitlines()[-3:])


def _parallel(jobs: int, fn, items: list) -> list:
    """``[fn(item) for item in items]`` on ``jobs`` threads; on Ctrl-C nothing new starts
    and the pytest runs in progress are stopped."""
    ex = ThreadPoolExecutor(jobs)
    try:
        return list(ex.map(fn, items))
    except BaseException:
        _STOPPING.set()
        ex.shutdown(wait=False, cancel_futures=True)
        with _RUNNING_LOCK:
            for proc in list(_RUNNING):
                _stop(proc)
        raise
    finally:
        ex.shutdown(wait=True)


def _stop(proc: subprocess.Popen) -> None:
    """Kill a pytest run this script started, with its children (its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- running


def stale(mutants: list[Mutant], root: str = REPO) -> list[str]:
    """One line per mutant whose snippet does not occur exactly once in its file under
    ``root`` (the code it was written against has changed): such a mutant cannot be
    planted, a check that cannot fail. tests/engine/test_mutants_anchor.py asserts this
    list is empty for the repository, so that a refactor making a mutant stale fails CI.
    """
    texts: dict[str, str | None] = {}
    lines = []
    for m in mutants:
        if m.file not in texts:
            path = os.path.join(root, m.file)
            texts[m.file] = open(path).read() if os.path.isfile(path) else None
        text = texts[m.file]
        if text is None:
            lines.append(f"{m.id}: {m.file} does not exist")
        elif (n := text.count(m.old)) != 1:
            lines.append(f"{m.id}: its snippet occurs {n} times in {m.file} (must be exactly once)")
    return lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*", help="run only these mutants (default: all)")
    ap.add_argument("--rev", help="copy this git revision instead of the working tree")
    ap.add_argument("--source", help="copy this directory instead of the working tree")
    ap.add_argument("--jobs", type=int, default=MAX_JOBS, help=f"parallel runs (at most {MAX_JOBS})")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per pytest run")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies")
    args = ap.parse_args(argv)

    ids = [m.id for m in MUTANTS]
    dupes = {i for i in ids if ids.count(i) > 1}
    assert not dupes, f"duplicate mutant ids: {sorted(dupes)}"
    unknown = set(EQUIVALENT) - set(ids)
    assert not unknown, f"EQUIVALENT names unknown mutants: {sorted(unknown)}"
    chosen = [m for m in MUTANTS if not args.ids or m.id in args.ids]
    missing = set(args.ids) - set(ids)
    if missing:
        print(f"unknown mutant ids: {sorted(missing)}", file=sys.stderr)
        return 2
    if args.list:
        for m in chosen:
            print(f"{m.id:<27} {m.file:<32} {m.tests:<40} {m.what}")
        return 0

    jobs = max(1, min(args.jobs, MAX_JOBS, len(chosen)))
    tmp = tempfile.mkdtemp(prefix="duograd-mutants-")
    try:
        return _run(chosen, jobs, args, tmp)
    finally:
        if args.keep:
            print(f"copies kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _run(chosen: list[Mutant], jobs: int, args: argparse.Namespace, tmp: str) -> int:
    t0 = time.monotonic()
    roots = [os.path.join(tmp, f"copy{k}") for k in range(jobs)]
    for r in roots:
        _make_copy(r, args.rev, args.source)
    source = (f"the directory {args.source}" if args.source else
              f"git revision {args.rev}" if args.rev else f"the working tree of {REPO}")
    print(f"{len(chosen)} mutants, {jobs} at a time, in copies of {source} under {tmp}")

    # 1. Stale mutants: each snippet must occur exactly once, or nothing runs.
    problems = stale(chosen, roots[0])
    if problems:
        print(f"ABORT: {len(problems)} stale mutant(s), retarget them to the current code:",
              file=sys.stderr)
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        return 2

    # 2. `import duograd` must load the copy, under pytest as the mutants will run it.
    for r in roots:
        check = os.path.join(r, "tests", "zz_mutants_where_check.py")
        with open(check, "w") as f:
            f.write(WHERE_CHECK)
        status, _, detail = _pytest(r, os.path.relpath(check, r), args.timeout)
        os.remove(check)
        if status != "passed":
            print(f"ABORT: duograd is not imported from the copy {r}: {detail}", file=sys.stderr)
            return 2
    print("check: `import duograd` under pytest loads each copy, not the repository")

    originals = {m.file: open(os.path.join(roots[0], m.file)).read() for m in chosen}
    result: dict[str, tuple[str, float, str]] = {}
    runnable = chosen

    # 3. The unmutated copy must pass every selection.
    pool: queue.Queue[str] = queue.Queue()
    for r in roots:
        pool.put(r)

    def in_a_copy(fn, *a):
        r = pool.get()
        try:
            return fn(r, *a)
        finally:
            pool.put(r)

    selections = sorted({m.tests for m in runnable})
    base = dict(zip(selections, _parallel(jobs, lambda s: in_a_copy(_pytest, s, args.timeout), selections)))
    for s in selections:
        status, secs, detail = base[s]
        print(f"baseline {status:<7} {secs:6.1f}s  {s}" + (f"  ({detail})" if status != "passed" else ""))
    valid = []
    for m in runnable:
        if base[m.tests][0] != "passed":
            result[m.id] = ("invalid", 0.0, f"the selection {base[m.tests][0]} without the mutant")
        else:
            valid.append(m)

    # 4. One mutant at a time per copy.
    lock = threading.Lock()

    def run_one(root: str, m: Mutant) -> tuple[str, float, str]:
        path = os.path.join(root, m.file)
        original = originals[m.file]
        try:
            with open(path, "w") as f:
                f.write(original.replace(m.old, m.new, 1))
            status, secs, detail = _pytest(root, m.tests, args.timeout)
        finally:
            with open(path, "w") as f:
                f.write(original)
        outcome = {"failed": "killed", "timeout": "killed", "passed": "SURVIVED"}.get(status, "error")
        with lock:
            print(f"  {m.id:<27} {outcome:<8} {secs:6.1f}s", flush=True)
        return outcome, secs, detail

    for m, res in zip(valid, _parallel(jobs, lambda m: in_a_copy(run_one, m), valid)):
        result[m.id] = res

    # 5. The table.
    print()
    head = f"{'id':<27} {'file':<30} {'result':<10} {'secs':>6}  description / killed by"
    print(head)
    print("-" * len(head))
    for m in chosen:
        outcome, secs, detail = result[m.id]
        if outcome == "SURVIVED" and m.id in EQUIVALENT:
            outcome = "equivalent"
        short = m.file.replace("duograd/", "")
        print(f"{m.id:<27} {short:<30} {outcome:<10} {secs:6.1f}  {m.what}")
        if detail and outcome != "equivalent":
            print(f"{'':<27} {'':<30} {'':<10} {'':>6}    -> {_short(detail)}")
    counted = [m for m in chosen if m.id not in EQUIVALENT and result[m.id][0] in ("killed", "SURVIVED")]
    killed = [m for m in counted if result[m.id][0] == "killed"]
    survived = [m.id for m in counted if result[m.id][0] == "SURVIVED"]
    bad = [m.id for m in chosen if result[m.id][0] in ("invalid", "error")]
    equivalent = [m for m in chosen if m.id in EQUIVALENT]
    print("-" * len(head))
    rate = 100.0 * len(killed) / len(counted) if counted else 0.0
    print(f"kill rate: {len(killed)} of {len(counted)} non-equivalent mutants killed ({rate:.1f}%)"
          f"; {len(equivalent)} equivalent, {len(bad)} invalid/error; "
          f"{time.monotonic() - t0:.0f} s in all")
    for m in equivalent:
        print(f"equivalent {m.id}: {EQUIVALENT[m.id]} (result: {result[m.id][0]})")
    if survived:
        print(f"SURVIVED (not known to be equivalent): {', '.join(survived)}")
    if bad:
        print(f"invalid or error: {', '.join(bad)}")
    return 1 if survived or bad else 0


def _short(detail: str, width: int = 110) -> str:
    detail = re.sub(r"\s+", " ", detail)
    return detail if len(detail) <= width else detail[:width - 3] + "..."


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("\ninterrupted: the runs in progress were stopped and the copies removed", file=sys.stderr)
        sys.exit(130)

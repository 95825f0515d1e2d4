"""Capture and replay: ``dg.compile`` records a step once and replays its NumPy work.

Eager duograd pays a fixed Python cost per primitive call: a Tensor object, graph
bookkeeping, rule dispatch, a dict of cotangents. ``dg.compile(fn)`` pays it once. The
first call for a signature runs ``fn`` eagerly inside a recording (a listener on the stack
of ``duograd._context``, ``recording.py``):
every primitive call of the forward pass, the backward pass (VJP rules, the broadcasting
adjoint, casts, the seed of ones) and any ``duograd.func`` transform. Because every array
computation of a step is a primitive call (the engine's invariant, proved by
tests/compiled/test_tensor_replay.py), that recording *is* the step. It is lowered into a
flat program of instructions (``instructions.Instr``: kind, kernel, argument slots,
result slot) over a list of arrays (``lowering.py``), finished at the first replay by
rewrites that keep every bit and, with ``reuse_buffers=True``, buffers reused for results
that never leave the replay (``passes.py``), chains of elementwise kernels fused into one
(``fusion.py``) and derived arrays kept while their source is unchanged (``memo.py``;
``DUOGRAD_FUSION=0`` turns both off), and later calls run that program in a tight loop (``program.py``): no
Tensors, no graph, no cotangent dicts, only the NumPy kernels, as tinygrad's TinyJit
replays its kernels. ``compiled.py`` holds ``dg.compile`` and its cache.

What the recording holds besides primitive calls, and how a replay treats it:

- **Arguments** (Tensors and NumPy arrays) are read from the new call. While recording,
  every array argument enters ``fn`` as a Tensor (as ``jax.jit``'s tracers), so NumPy
  arithmetic on it is recorded. An array derived from one outside the primitives (a
  conversion, the class labels of cross-entropy) is derived again (``_tensor._derive``, a
  ``Derive`` effect).
- **Tensors the step reads but was not given** (a model's parameters) are read afresh,
  ``.data`` and all, every call: an optimizer that moved or replaced them is seen.
- **Constants** (Tensors made inside ``fn`` from fixed data, the seed of ones, anything
  computed from constants alone) are folded: computed once, at recording time.
- **Results nobody reads** are dropped.
- **Random draws** made through ``_tensor._draw`` (``nn.Dropout``'s mask) are drawn again,
  from the same generator, so a replayed training run matches the eager one.
- **Effects** are replayed in order: gradients accumulated into ``.grad``, ``.grad``
  assignments (``zero_grad``), writes (``inplace.write``'s in-place operations and ``t.data =``
  of values the primitives computed: a ``recording.Write``), optimizer updates, and host
  steps (a scheduler's step, ``clip_grad_norm_``, the optimizers not listed below:
  ``autograd.host``) called again. Writes to ``.grad`` are held back until the end or
  until a host step runs, so a replay that fails part-way leaves every ``.grad`` and
  parameter as it was (after a host step has run, parameters, gradients and optimizer
  state are restored from a snapshot). Each effect is a record type of
  ``duograd._context`` (``Accumulate``, ``SetGrad``, ``Derive``, ``Draw``, ``Host``,
  ``Update``).
- **Optimizer updates** (``opt.step()`` of ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``: an
  ``Update``) are kernels of the program, not host steps: one instruction that updates
  every parameter in place with the optimizer's formula run once per group on flat
  buffers (``optim.foreach``, the same function the eager step runs per parameter, so
  the bits are the same). It reads the gradients from the held-back ``.grad`` writes
  (nothing is committed early) and each group's lr and other numbers afresh, so a
  scheduler's step between calls or inside ``fn`` is seen without a new recording; the
  options that shape the update are guarded (a change records again). Only when
  something after it can fail does it snapshot what it writes (parameter values, its
  state buffers and step counts). State replaced between calls (``load_state_dict``) is
  taken over; a call that finds a ``.grad`` or a state entry missing runs the eager
  ``step()`` instead, as a host step.

Signatures and guards: one program per signature, the types, shapes, dtypes, layouts (and
``requires_grad``) of the array arguments, which of them are the same array, the types of
the Python number arguments, the other arguments by value, and whether grad mode is on; at
most ``CACHE_SIZE`` of them, least recently used evicted.

**Number arguments** (a Python float or int, not a bool) follow ``torch.compile``'s
automatic dynamic shapes. At its first value for a signature a number is static: ``fn``
gets the plain number and the program is keyed by its value. At another value it becomes
an input of that signature's programs: ``fn`` is recorded once more with the number as a
*stand-in*, a 0-d Tensor of it (float64 for a float, int64 for an int:
``recording.standin``) in an argument slot of the program, so ``x * lr`` is an ordinary
operation on an input, and later values replay. While recording, the engine ranks the
stand-in and what is computed from it alone as the Python number it stands for
(``_tensor._WEAK``, as torch's wrapped numbers): a float32 tensor times it stays float32,
with the bits of the tensor times the float. Uses that decide the program make the number
static for good for that signature (``recording.Numbers``): its value read into Python
(``float(lr)``, ``math.sqrt(lr)``, ``bool(lr > 0.5)``, ``.item()``, ``np.asarray``: the
engine's ``_context.read``), an operation on it alone whose NumPy kernel may round
otherwise than Python (``round``, ``**``), an op's keyword, a host step's, a draw's or a
module setting's argument, an array derived from it outside the operations, a return of
it (or of a number computed from it alone), or a reference to it still alive after the
recording and its program let go of it (a weak reference: ``fn`` stored it). Then what
that run changed is put back (``_state_of`` of the signature's last program) and ``fn``
runs again, recorded, with the plain number: its result is the call's. A signature whose
``fn`` stores a number replays a program only right after its own recording (a replay
does not store it again). ``dg.compile(fn, static_argnums=..., static_argnames=...)``
keys numbers by value from the start. Each program also checks, every call, the shapes,
dtypes and ``requires_grad`` of the tensors it reads but was not given, the flags and
plain settings of the modules it called (a Dropout's ``p``: ``_context.attr``), every
module's ``training`` read while recording (``nn.Module.training`` reports each read,
called or not), and the plain Python values ``fn``'s code reads outside its arguments:
names of its globals and closure, attribute chains on the objects found there or on
``self`` (``cfg.scale``), a dict's entry at a constant key, with the identity of each
object on the way (``capture.reads``, which scans ``fn``'s code and the code it reaches); a
change records again.

What cannot be captured: Python decisions on tensor values (``if loss.item() > 1:``) are
frozen at the recorded branch, and so is anything computed in plain NumPy or Python from
a value (``.numpy()``, ``.item()``, ``float()``, ``bool()``). Reading a value while recording
warns, naming the line; a NumPy write into a tensor's array and a draw from NumPy's global
generator raise. ``recheck_every=N`` runs ``fn`` eagerly every N-th call and, where the
fresh recording differs, puts back what that run changed and raises ``RuntimeError``
naming the first differing operation, its line and its inputs. Tensors
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

from .compiled import CACHE_SIZE, Compiled, compile
from .instructions import BUF1, BUF2, CALL1, CALL2, CALLN, EFFECT, LOAD, Instr

__all__ = ["compile", "Compiled", "CACHE_SIZE", "Instr", "CALL1", "CALL2", "CALLN", "LOAD",
           "EFFECT", "BUF1", "BUF2"]

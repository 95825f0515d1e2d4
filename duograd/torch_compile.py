"""``dg.compile`` under torch's signature: ``torch.compile(model_or_fn, *, fullgraph=...,
dynamic=..., backend=..., mode=..., options=..., disable=...)``, backed by duograd's capture
and replay (``duograd.capture.compile``, whose own keywords ``recheck_every``,
``reuse_buffers``, ``static_argnums`` and ``static_argnames`` pass through).

- A function gives a ``Compiled`` (``.traces`` and all), as ``duograd.capture.compile`` does.
- An ``nn.Module`` gives an ``OptimizedModule``: a Module holding the original as
  ``_orig_mod`` (so its ``state_dict`` keys start with ``_orig_mod.``, as torch's), whose call
  runs the original's forward through one ``Compiled``.
- ``compile(**options)`` with no model returns a decorator; ``disable=True`` returns the
  model itself, as torch does.
- ``backend="xla"`` runs the recorded programs through JAX's XLA (``duograd.capture.xla``,
  the ``duograd[xla]`` extra); every other backend name (torch's "inductor", "eager",
  "aot_eager", ...) is duograd's NumPy replay.
- ``fullgraph``, ``dynamic``, ``options``, ``name``, ``recompile_limit``,
  ``isolate_recompiles`` and ``shapes_spec`` are accepted and change nothing; ``mode`` is
  checked against torch's names, and ``mode`` with ``options`` raises ``RuntimeError``, as
  torch.

>>> import duograd as dg
>>> model = dg.nn.Linear(3, 2)
>>> fast = dg.compile(model, mode="reduce-overhead", fullgraph=True)
>>> x = dg.ones(4, 3)
>>> bool((fast(x) == model(x)).all()), fast._orig_mod is model
(True, True)
"""

from __future__ import annotations

from typing import Any, Callable

from .capture import compile as _capture_compile
from .nn.modules import Module

__all__ = ["compile", "OptimizedModule"]

_MODES = (None, "default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


class OptimizedModule(Module):
    """A module whose forward runs through ``dg.compile``; the original is ``_orig_mod``.

    >>> import duograd as dg
    >>> m = dg.nn.Linear(2, 1)
    >>> list(dg.compile(m).state_dict())
    ['_orig_mod.weight', '_orig_mod.bias']
    """

    def __init__(self, mod: Module, **capture_kwargs: Any) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", _capture_compile(mod.__call__, **capture_kwargs))

    def _members(self) -> Any:
        # torch names the wrapped module `_orig_mod` in parameter and state_dict keys
        yield "_orig_mod", self._orig_mod

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    @property
    def traces(self) -> int:
        """How many recordings the compiled forward has made."""
        return self._compiled.traces


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: str | Callable = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False, name: str | None = None, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None, recheck_every: int | None = None, reuse_buffers: bool | None = None,
            static_argnums: Any = (), static_argnames: Any = ()) -> Any:
    """``model`` (a function or an ``nn.Module``) compiled by duograd's capture and replay,
    with torch's keyword arguments accepted (see ``duograd.torch_compile``).

    >>> import duograd as dg
    >>> @dg.compile(backend="eager")
    ... def f(x):
    ...     return (x * x).sum()
    >>> float(f(dg.ones(3))), f.traces
    (3.0, 1)
    """
    if mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode!r}; expected one of "
                           f"{', '.join(m for m in _MODES if m)}")
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be given, not both")
    capture_kwargs = {"recheck_every": recheck_every, "reuse_buffers": reuse_buffers,
                      "static_argnums": static_argnums, "static_argnames": static_argnames}
    if model is None:
        def decorate(fn: Callable) -> Any:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable, **capture_kwargs)
        return decorate
    if disable:
        return model
    if backend == "xla":
        capture_kwargs["backend"] = "xla"
    if isinstance(model, Module):
        return OptimizedModule(model, **capture_kwargs)
    return _capture_compile(model, **capture_kwargs)  # a non-callable raises TypeError there

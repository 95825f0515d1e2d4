"""The plain Python values a step reads outside its arguments, found in its code: a
replay checks them every call, and a change records again.

``fn``'s code (and the code it reaches: the helper functions it names, the ``__call__``
of a callable object it names, the methods it calls on an object it reads, the lambdas
and comprehensions inside) is scanned before each recording, instruction by
instruction, for names loaded from its globals, its closure or ``self`` (a bound method
compiled), followed by attribute reads: ``cfg.scale``, ``self.opts.alpha``,
``CONFIG["lr"]``, ``math.pi``. Where such a chain ends at a plain value (a number, a bool,
a string, None, or a tuple of them), the value is guarded, and so is the identity of each
object on the way (``cfg`` rebound to another object, ``self.opts`` replaced). A plain
value named directly (a global learning rate, a closed-over flag) is guarded too.

Attributes are looked up without running anything: an instance's ``__dict__`` and its
class's plain attributes are read; a property, a ``__getattr__`` and any other descriptor
are not (a Module's ``training`` is a property that reports its every read to the
recording itself: ``nn.Module.training``). Reads the code does not spell out
(``getattr(cfg, name)``, an object handed to a library function that reads it, a
container mutated in place) are not found; ``docs/api.md`` ("What a replay cannot see")
lists them.

>>> class Cfg:
...     scale = 2.0
>>> cfg = Cfg()
>>> def step(x):
...     return x * cfg.scale
>>> [(name, value) for _, name, value in plain_reads(step)[0]]
[('scale', 2.0)]
"""

from __future__ import annotations

import dis
import sys
import sysconfig
import types
from typing import Any

from .._context import _PACKAGE

_PLAIN = (bool, int, float, complex, str, type(None))
_MISSING = object()
_FIXTURES = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
             types.MethodType, types.BuiltinMethodType)
_DEPTH = 4  # how many calls deep the scan follows helper functions and methods
_METHOD_LOADS = {"LOAD_METHOD"}
_ROOT_LOADS = {"LOAD_GLOBAL", "LOAD_NAME"}
_CELL_LOADS = {"LOAD_DEREF", "LOAD_CLASSDEREF"}
_instructions: dict = {}   # code object -> its instructions, as (opname, arg, argval)
_skip_files: dict = {}     # file name -> whether its code is a library's (not scanned)
_LIBRARY = tuple({p for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib",
                                                                     "platlib")) if p and len(p) > 1})


def is_plain(v: Any) -> bool:
    """A value a guard compares by value: a number, bool, string, None, or a tuple of them."""
    t = type(v)
    return t in _PLAIN or (t is tuple and all(type(x) in _PLAIN for x in v))


def _code_of(code: types.CodeType) -> list:
    ins = _instructions.get(code)
    if ins is None:
        ins = _instructions[code] = [(i.opname, i.arg, i.argval) for i in dis.get_instructions(code)]
    return ins


def _library(code: types.CodeType) -> bool:
    """Whether ``code`` is duograd's (its reads are reported by the engine's own events)
    or an installed library's (not the step's own code)."""
    f = code.co_filename
    hit = _skip_files.get(f)
    if hit is None:
        hit = _skip_files[f] = f.startswith(_PACKAGE) or f.startswith("<frozen") or \
            any(f.startswith(p) for p in _LIBRARY)
    return hit


def _lookup(obj: Any, name: str) -> tuple[Any, str | None]:
    """``obj.name`` found without running anything: ``(value, how)``, ``how`` being
    "value" (an instance's, a module's or a class's plain attribute), "method" (a function
    of its class: the bound call is scanned), or None (a property, ``__getattr__``,
    any other descriptor: not read)."""
    if isinstance(obj, types.ModuleType):
        d = obj.__dict__
        return (d[name], "value") if name in d else (None, None)
    klass = obj if isinstance(obj, type) else type(obj)
    found = _MISSING
    for k in klass.__mro__ if isinstance(klass, type) else ():
        if name in k.__dict__:
            found = k.__dict__[name]
            break
    if isinstance(obj, type):
        if found is _MISSING or hasattr(type(found), "__get__"):
            return None, None
        return found, "value"
    if found is not _MISSING and (hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")):
        if type(found) is types.MemberDescriptorType:  # a __slots__ entry
            v = getattr(obj, name, _MISSING)
            return (None, None) if v is _MISSING else (v, "value")
        return None, None  # a property (Module.training reports itself), any data descriptor
    try:
        d = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        d = None
    if type(d) is dict and name in d:
        return d[name], "value"
    if found is _MISSING:
        return None, None
    if type(found) is types.FunctionType:
        return found, "method"
    if hasattr(type(found), "__get__"):
        return None, None
    return found, "value"


class _Scan:
    """One scan: the guards found, ``values`` (where, name, value) compared by value,
    ``objects`` (where, name, object) by identity; ``where`` is a dict (globals, an
    instance's ``__dict__`` is not used: the object itself), a closure cell (name None) or
    an object (read with ``getattr``)."""

    def __init__(self) -> None:
        self.values: list = []
        self.objects: list = []
        self.seen_values: set = set()
        self.seen_objects: set = set()
        self.visited: set = set()

    def value(self, where: Any, name: Any, v: Any) -> None:
        key = (id(where), name)
        if key not in self.seen_values:
            self.seen_values.add(key)
            self.values.append((where, name, v))

    def identity(self, where: Any, name: Any, obj: Any) -> None:
        key = (id(where), name)
        if key not in self.seen_objects:
            self.seen_objects.add(key)
            self.objects.append((where, name, obj))

    def commit(self, chain: list | None, every: bool = True) -> None:
        """Guard the identity of each object on ``chain`` (of every one, or, where the chain
        led to no guarded value, of those that are not modules, classes or functions: a
        Module whose ``training`` was read, a global model, a Tensor)."""
        for where, name, obj in chain or ():
            if where is not None and (every or not isinstance(obj, _FIXTURES)):
                self.identity(where, name, obj)

    def callable(self, obj: Any, depth: int) -> bool:
        """Scan what calling ``obj`` runs, where it is the step's own code: a function, a
        bound method, an instance of a class with its own ``__call__``. Whether any
        guard was found."""
        if type(obj) is types.FunctionType:
            return self.function(obj, None, depth)
        if type(obj) is types.MethodType and type(obj.__func__) is types.FunctionType:
            return self.function(obj.__func__, obj.__self__, depth)
        if isinstance(obj, (type, types.ModuleType, types.BuiltinFunctionType)):
            return False
        call = getattr(type(obj), "__call__", None)
        if type(call) is types.FunctionType:
            return self.function(call, obj, depth)
        return False

    def function(self, f: types.FunctionType, self_obj: Any, depth: int) -> bool:
        code = f.__code__
        if depth > _DEPTH or _library(code):
            return False
        key = (code, id(self_obj))
        if key in self.visited:
            return False
        self.visited.add(key)
        cells = dict(zip(code.co_freevars, f.__closure__ or ()))
        local = {}
        if self_obj is not None and code.co_argcount:
            local[code.co_varnames[0]] = self_obj
        before = len(self.values) + len(self.objects)
        self.code(code, f.__globals__, cells, local, depth)
        return len(self.values) + len(self.objects) > before

    def code(self, code: types.CodeType, g: dict, cells: dict, local: dict, depth: int) -> None:
        chain: list | None = None  # (where, name, object) links from a root to the last read
        named: dict = {}           # local name -> the chain stored into it
        ins = _code_of(code)
        for k, (op, arg, name) in enumerate(ins):
            if op in _ROOT_LOADS:
                self.commit(chain, False)
                v = g.get(name, _MISSING)
                chain = None
                if v is _MISSING:
                    continue
                if is_plain(v):
                    self.value(g, name, v)
                    continue
                chain = [(g, name, v)]
                if self.callable(v, depth + 1):
                    self.commit(chain)
            elif op in _CELL_LOADS:
                self.commit(chain, False)
                cell = cells.get(name)
                chain = None
                if cell is None:
                    continue
                try:
                    v = cell.cell_contents
                except ValueError:
                    continue
                if is_plain(v):
                    self.value(cell, None, v)
                    continue
                chain = [(cell, None, v)]
                if self.callable(v, depth + 1):
                    self.commit(chain)
            elif op == "LOAD_FAST" and (name in local or name in named):
                self.commit(chain, False)
                chain = list(named[name]) if name in named else [(None, name, local[name])]
            elif op == "STORE_FAST" and chain is not None:
                named[name] = chain  # ``cfg = self.cfg``: a later ``cfg.scale`` goes on from it
                chain = None
            elif op == "STORE_FAST":
                named.pop(name, None)
            elif (op == "LOAD_ATTR" or op in _METHOD_LOADS) and chain is not None:
                obj = chain[-1][2]
                v, how = _lookup(obj, name)
                method = op in _METHOD_LOADS or (sys.version_info >= (3, 12) and op == "LOAD_ATTR"
                                                 and arg is not None and arg & 1)
                if how is None:
                    self.commit(chain, False)  # a property (a Module's training) reports itself
                    chain = None
                elif how == "method":
                    self.commit(chain, not self.function(v, obj, depth + 1))
                    chain = None
                elif is_plain(v) and not method:
                    self.commit(chain)
                    self.value(obj, name, v)
                    chain = None
                else:
                    chain.append((obj, name, v))
                    if self.callable(v, depth + 1):
                        self.commit(chain)
            elif op == "LOAD_CONST" and chain is not None and type(chain[-1][2]) is dict \
                    and k + 1 < len(ins) and ins[k + 1][0] == "BINARY_SUBSCR" and is_plain(name):
                d = chain[-1][2]
                v = d.get(name, _MISSING)
                if v is _MISSING:
                    self.commit(chain, False)
                    chain = None
                elif is_plain(v):
                    self.commit(chain)
                    self.value(d, name, v)  # a dict's entry: read with d.get(name)
                    chain = None
                else:
                    chain.append((d, name, v))
                    if self.callable(v, depth + 1):
                        self.commit(chain)
            elif op == "BINARY_SUBSCR" and chain is not None and k and ins[k - 1][0] == "LOAD_CONST":
                pass  # the subscript of the dict entry just taken into the chain
            elif op not in ("CACHE", "EXTENDED_ARG", "PRECALL", "NOP"):
                self.commit(chain, False)
                chain = None
        self.commit(chain, False)
        for c in code.co_consts:  # lambdas, comprehensions, inner functions
            if isinstance(c, types.CodeType) and depth <= _DEPTH:
                self.code(c, g, cells, {}, depth + 1)


def plain_reads(fn: Any) -> tuple[list, list]:
    """The guards of ``fn``'s reads: ``(values, objects)``, lists of ``(where, name,
    value)``. ``where`` is a dict (read with ``where.get(name)``), a closure cell (name
    None) or an object (``getattr(where, name)``); ``values`` are compared by type and
    value, ``objects`` by identity."""
    scan = _Scan()
    scan.callable(fn, 0)
    return scan.values, scan.objects

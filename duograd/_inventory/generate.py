"""Read torch 2.13's public names from torch itself (needs torch; nothing else here does).

``python -m duograd._inventory.generate``          prints what differs from the committed file
``python -m duograd._inventory.generate --write``  rewrites ``torch_names.json``

For each namespace of ``NAMESPACES`` the public names (no leading ``_``) of ``dir()`` are
kept when they belong to torch: a submodule of that namespace, a class or function whose
``__module__`` is torch's (typing helpers, NumPy and the standard library re-exported by a
torch module are left out), a dtype, or a constant of the ``torch`` namespace itself
(``pi``, ``strided``, ...). ``torch.Tensor`` keeps every public name of ``dir()``. Each name
records its kind and, where torch states them, its parameters: from ``inspect.signature``
for Python functions and classes; for torch's builtins with several overloads, the overloads
its Python argument parser lists (``_parser_signatures``); for the other builtins from their ATen schemas (one list
per overload, the keyword names the binding accepts), or, where there is none, from the
first lines of the docstring (``add(input, other, *, alpha=1, out=None) -> Tensor``); an
out-variant schema counts only where the Python binding takes its ``out=``
(``_python_takes_out``). ``alias`` names the ``torch.*`` name that is the same
object (``torch.nn.functional.conv2d`` is ``torch.conv2d``).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import sys
from typing import Any

# The namespaces counted, in the order of the table. torch.Tensor is a class, the rest modules.
NAMESPACES = [
    "torch.Tensor", "torch", "torch.nn.functional", "torch.nn", "torch.nn.init", "torch.optim",
    "torch.optim.lr_scheduler", "torch.utils.data", "torch.func", "torch.autograd",
    "torch.autograd.graph", "torch.autograd.functional", "torch.autograd.forward_ad",
    "torch.distributions", "torch.linalg", "torch.special", "torch.fft",
    # imported at the top of programs, even when little of them is used
    "torch.functional", "torch.onnx", "torch.nn.parallel", "torch.fx", "torch.jit",
    "torch.distributed", "torch.cuda", "torch.backends", "torch.amp",
]

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "torch_names.json")

_DOC_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\((.*)$")


def _balanced(rest: str) -> str | None:
    """The text up to the parenthesis that closes the one just opened, or None."""
    depth = 1
    for i, ch in enumerate(rest):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if depth == 0:
            tail = rest[i + 1:].strip()
            return rest[:i] if tail == "" or tail.startswith("->") else None
    return None


def _from_torch(obj: Any) -> bool:
    mod = getattr(obj, "__module__", None)
    if mod is None:  # some builtins of torch._C carry no module
        return inspect.isbuiltin(obj) or type(obj).__module__.startswith("torch")
    return isinstance(mod, str) and mod.split(".")[0] == "torch"


def _split_params(text: str) -> list[str]:
    """``input, other, *, alpha=1, out=None`` -> ["input", "other", "*", "alpha", "out"]."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    names = []
    for p in out:
        p = p.strip()
        if not p:
            continue
        p = p.split("=")[0].split(":")[0].strip()
        if p in ("*", "/") or re.fullmatch(r"\*{0,2}[A-Za-z_][A-Za-z0-9_]*", p):
            names.append(p)
        else:
            return []  # not a parameter list we can read
    return names


def _doc_signatures(name: str, obj: Any) -> list[list[str]]:
    """Parameter lists from a builtin's docstring: each leading line ``name(...)``."""
    doc = inspect.getdoc(obj) or ""
    sigs: list[list[str]] = []
    for line in doc.splitlines()[:12]:
        m = _DOC_LINE.match(line)
        inner = _balanced(m.group(2)) if m else None
        if m and inner is not None and m.group(1).split(".")[-1] == name:
            params = _split_params(inner)
            if params and params[0] == "self":
                params = params[1:]
            if params or inner.strip() == "":
                if params not in sigs:
                    sigs.append(params)
    return sigs


# the ATen name of a builtin: torch.linalg.norm is aten::linalg_norm, ...
_ATEN_PREFIX = {"torch": "", "torch.Tensor": "", "torch.nn.functional": "", "torch.functional": "",
                "torch.linalg": "linalg_", "torch.special": "special_", "torch.fft": "fft_"}


def _placeholder(type_name: str, torch: Any) -> Any:
    """A value of an ATen argument type (``Tensor``, ``int[]``, ``List[Optional[Tensor]]``, ...)
    that torch's Python parser accepts (never run: the probe below fails at parsing ``out=``)."""
    t = type_name.strip().rstrip("?")
    if t.startswith("Optional[") and t.endswith("]"):
        return _placeholder(t[9:-1], torch)
    if t.startswith("List[") and t.endswith("]"):
        return [_placeholder(t[5:-1], torch)]
    if t.endswith("]") and "[" in t:  # int[2], Tensor[]
        return [_placeholder(t[:t.index("[")], torch)]
    if t.startswith("Tensor"):
        return torch.ones(1)
    return {"int": 1, "SymInt": 1, "float": 1.0, "bool": False, "Scalar": 1, "str": "x",
            "ScalarType": torch.float32, "Layout": torch.strided, "Device": "cpu",
            "Generator": None, "MemoryFormat": torch.contiguous_format}.get(t, 1)


def _python_takes_out(obj: Any, schema: Any, torch: Any) -> bool:
    """Whether torch's Python binding of ``obj`` takes the ``out=`` of this out-variant schema
    (ATen generates out-variants that Python does not bind): called with placeholders for the
    required arguments and a string as ``out``, the parser names ``out`` as the wrong type, or
    says it does not know the keyword."""
    args = [_placeholder(str(a.type), torch) for a in schema.arguments
            if not a.kwarg_only and not a.has_default_value()]
    try:
        obj(*args, out="not a tensor")
    except TypeError as e:
        return "unexpected keyword argument 'out'" not in str(e)
    except Exception:  # noqa: BLE001  (it parsed: out= is taken)
        return True
    return True


def _schema_signatures(name: str, torch: Any, method: bool, obj: Any = None) -> list[list[str]]:
    """Parameter lists from the ATen schemas of ``name`` (``aten::add.Tensor(Tensor self, Tensor
    other, *, Scalar alpha=1)``), the names torch's Python binding accepts by keyword: ``self``
    is ``input`` for a ``torch.*`` function and is left out for a method; an out-variant's
    written tensors are the one ``out=``. Overloads on plain numbers, lists and strings only
    (TorchScript's) are left out."""
    sigs: list[list[str]] = []
    schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
    # TorchScript's overloads on one Python number or list (``aten::tensor.float(float t, ...)``):
    # Python's binding takes the general overload's names
    def script(sch: Any) -> bool:
        return sch.overload_name in ("bool", "float", "int", "complex", "list", "str") and \
            not any("Tensor" in str(a.type) for a in sch.arguments)
    if any(not script(sch) for sch in schemas):
        schemas = [sch for sch in schemas if not script(sch)]
    if any("Scalar" not in sch.overload_name for sch in schemas):
        # the Scalar overloads are TorchScript's; Python wraps a number as a tensor
        schemas = [sch for sch in schemas if "Scalar" not in sch.overload_name]
    for sch in schemas:
        args = list(sch.arguments)
        if not any("Tensor" in str(a.type) or a.name in ("dtype", "size") for a in args):
            continue
        outs = any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in args)
        if method and outs:
            continue  # a method takes no out=
        if outs and obj is not None and not _python_takes_out(obj, sch, torch):
            continue  # an out-variant ATen generates and Python does not bind
        pos, kw = [], []
        for a in args:
            writes = a.kwarg_only and a.alias_info is not None and a.alias_info.is_write
            n = "out" if writes else a.name
            if a.name == "self" and not a.kwarg_only:
                if method:
                    continue
                n = "input"
            target = kw if a.kwarg_only else pos
            if n not in target:
                target.append(n)
        params = pos + (["*"] + kw if kw else [])
        if params not in sigs:
            sigs.append(params)
    return sigs


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets (``int[2] dim = {-2, -1}`` is one part)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def _parser_signatures(obj: Any, torch: Any, method: bool) -> list[list[str]]:
    """The overloads torch's Python argument parser lists for a builtin with several (the
    signatures Python accepts, without TorchScript's): called with an unknown keyword and
    placeholders for its required arguments, it raises a TypeError naming each overload
    (``* (Tensor input, Tensor other, *, Tensor out = None)``). Empty for a builtin with one
    overload, or one not bound through the parser."""
    base = [torch.ones(1)] if method else []
    for n in range(5):
        try:
            obj(*base, *([object()] * n), __not_a_parameter__=1)
        except TypeError as e:
            msg = str(e)
            if "expected one of" in msg:
                sigs: list[list[str]] = []
                for line in msg.splitlines():
                    line = line.strip()
                    if not line.startswith("* (") or not line.endswith(")"):
                        continue
                    params = []
                    for part in _split_top(line[3:-1]):
                        part = part.split("=")[0].strip()
                        if part:
                            params.append(part if part == "*" else part.split()[-1])
                    if params not in sigs:
                        sigs.append(params)
                return sigs
            if "missing" in msg and "required" in msg:
                continue
            return []
        except Exception:  # noqa: BLE001  (a builtin that does not parse this way)
            return []
        return []
    return []


def _py_signature(obj: Any, drop_self: bool) -> list[str] | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    names: list[str] = []
    star = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            names.append("*" + p.name)
            star = True
        elif p.kind is p.VAR_KEYWORD:
            names.append("**" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                names.append("*")
                star = True
            names.append(p.name)
        elif p.kind is p.POSITIONAL_ONLY:
            names.append(p.name)
            if p is list(sig.parameters.values())[-1] or \
                    list(sig.parameters.values())[list(sig.parameters).index(p.name) + 1].kind \
                    is not p.POSITIONAL_ONLY:
                names.append("/")
        else:
            names.append(p.name)
    if drop_self and names and names[0] == "self":
        names = names[1:]
    return names


def _fill(entry: dict, name: str, obj: Any, sig: list[str] | None, torch: Any, method: bool,
          namespace: str) -> None:
    """The parameters of a function or method: its Python signature, else the ATen schemas
    of a builtin, else the builtin's docstring."""
    if sig is not None:
        entry["signatures"], entry["from"] = [sig], "inspect"
        return
    sigs = _parser_signatures(obj, torch, method) if inspect.isbuiltin(obj) or \
        type(obj).__name__ in ("method_descriptor", "builtin_function_or_method") else []
    if sigs:
        entry["signatures"], entry["from"] = sigs, "parser"
        return
    prefix = _ATEN_PREFIX.get(namespace)
    sigs = _schema_signatures(prefix + name, torch, method, obj) if prefix is not None else []
    if sigs:
        entry["signatures"], entry["from"] = sigs, "schema"
    else:
        entry["signatures"], entry["from"] = _doc_signatures(name, obj), "doc"


def describe(name: str, obj: Any, namespace: str, torch: Any) -> dict | None:
    """The inventory entry of ``namespace.name``, or None when it is not torch's own."""
    entry: dict[str, Any]
    if namespace == "torch.Tensor":
        raw = inspect.getattr_static(torch.Tensor, name)
        if callable(obj) and not isinstance(raw, (property,)) and type(raw).__name__ != "getset_descriptor":
            entry = {"kind": "method"}
            sig = _py_signature(obj, drop_self=True) if inspect.isfunction(obj) else None
            _fill(entry, name, obj, sig, torch, method=True, namespace=namespace)
        else:
            entry = {"kind": "attribute"}
        return entry
    if inspect.ismodule(obj):
        if not obj.__name__.startswith(namespace + "."):
            return None
        return {"kind": "module"}
    if isinstance(obj, torch.dtype):
        return {"kind": "dtype"}
    if inspect.isclass(obj):
        mod = getattr(obj, "__module__", "") or ""
        if not _from_torch(obj) or (namespace != "torch" and not mod.startswith(namespace)
                                    and name not in getattr(_module(namespace), "__all__", ())):
            return None
        entry = {"kind": "class"}
        if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
            entry["nn_module"] = True
        sig = _py_signature(obj, drop_self=True) if "__init__" in vars(obj) or \
            any("__init__" in vars(k) for k in obj.__mro__[1:-1]) else None
        if sig is not None and namespace != "torch":
            entry["signatures"] = [sig]
            entry["from"] = "inspect"
        return entry
    if callable(obj):
        if not _from_torch(obj):
            return None
        entry = {"kind": "function"}
        sig = _py_signature(obj, drop_self=False) if inspect.isfunction(obj) else None
        _fill(entry, name, obj, sig, torch, method=False, namespace=namespace)
        for alias_of in ("torch",):
            if namespace != alias_of and getattr(torch, name, None) is obj:
                entry["alias"] = f"torch.{name}"
        return entry
    if namespace == "torch" and (type(obj).__module__.split(".")[0] == "torch"
                                 or isinstance(obj, (bool, int, float, str, tuple, type(None)))):
        return {"kind": "value"}
    return None


def _module(namespace: str) -> Any:
    if namespace == "torch.Tensor":
        import torch
        return torch.Tensor
    return importlib.import_module(namespace)


def generate() -> dict:
    """The inventory as a dict (namespace -> name -> entry), read from the installed torch."""
    import warnings

    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        namespaces: dict[str, dict[str, Any]] = {}
        for ns in NAMESPACES:
            mod = _module(ns)
            names: dict[str, Any] = {}
            for n in sorted(dir(mod)):
                if n.startswith("_"):
                    continue
                try:
                    obj = getattr(mod, n)
                except Exception:  # a lazily loaded attribute that fails on this build
                    continue
                entry = describe(n, obj, ns, torch)
                if entry is not None:
                    names[n] = entry
            namespaces[ns] = names
    return {"torch_version": torch.__version__.split("+")[0], "namespaces": namespaces}


def dumps(inv: dict) -> str:
    """The committed text: one name per line, so a change reads as a short diff."""
    lines = ["{", f'  "torch_version": {json.dumps(inv["torch_version"])},', '  "namespaces": {']
    nss = list(inv["namespaces"].items())
    for i, (ns, names) in enumerate(nss):
        lines.append(f"    {json.dumps(ns)}: {{")
        items = list(names.items())
        for j, (n, e) in enumerate(items):
            lines.append(f"      {json.dumps(n)}: {json.dumps(e, sort_keys=True)}"
                         + ("," if j < len(items) - 1 else ""))
        lines.append("    }" + ("," if i < len(nss) - 1 else ""))
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = dumps(generate())
    if "--write" in argv:
        with open(PATH, "w") as f:
            f.write(text)
        print(f"wrote {PATH}")
        return 0
    with open(PATH) as f:
        old = f.read()
    if old == text:
        print("torch_names.json is up to date")
        return 0
    import difflib
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                               "committed", "torch", n=0))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

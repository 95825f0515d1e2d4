"""``save`` and ``load`` in PyTorch's own checkpoint format, without importing torch.

The format (what ``torch.save`` writes since 1.6) is a zip archive whose records sit under
one folder, the archive's name (``model`` for ``model.pt``, ``archive`` for a file object):

- ``data.pkl``: the object, pickled (protocol 2). A tensor is pickled as a call of
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
  whose ``storage`` is a *persistent id*, ``("storage", torch.FloatStorage, key, "cpu",
  numel)``: the pickle only names the storage; its bytes are the record ``data/<key>``.
  Two tensors that view one storage name the same key, so they stay views of one
  array after loading. (``_rebuild_tensor_v3`` with ``torch.storage.UntypedStorage`` and
  an explicit dtype is how torch writes the unsigned types wider than a byte.)
- ``data/<key>``: a storage's elements, raw, little-endian, in memory order, each record
  starting at a multiple of 64 bytes (``.storage_alignment``), stored uncompressed.
- ``version`` (``3``), ``.format_version`` (``1``), ``byteorder`` (``little``) and
  ``.data/serialization_id`` (an identifier of the file).

Here a tensor is a ``dg.Tensor`` (or a NumPy array, saved as a tensor), torch's names in
the pickle are written by name (so torch need not be importable), and on loading they
are resolved to duograd's own objects: tensors to ``dg.Tensor`` (``nn.Parameter`` for a
parameter), ``torch.Size`` to ``dg.Size``, dtypes to ``dg``'s (NumPy) dtypes.

``load(weights_only=True)``, the default as in torch 2.6+, unpickles with a restricted
unpickler that accepts what torch's weights-only unpickler accepts (tensors, storages,
``OrderedDict``, ``Counter``, the primitive containers, numbers, strings, bytes, dtypes,
``torch.Size``, ``torch.device``) and refuses every other global, before calling
anything, with a ``pickle.UnpicklingError`` naming it. ``weights_only=False`` loads any
pickle (only for files you trust: a pickle can run any code).

>>> import io
>>> import duograd as dg
>>> buf = io.BytesIO()
>>> w = dg.arange(6.0).reshape(2, 3)
>>> dg.save({"w": w, "row": w[1], "step": 3}, buf)
>>> _ = buf.seek(0)
>>> out = dg.load(buf)
>>> out["row"].numpy(), out["step"]
(array([3., 4., 5.]), 3)
>>> with dg.no_grad():
...     _ = out["w"].fill_(0.0)          # the two tensors still share one storage
>>> out["row"].numpy()
array([0., 0., 0.])
"""

from __future__ import annotations

import _codecs
import _compat_pickle
import io
import os
import pickle
import secrets
import zipfile
from collections import Counter, OrderedDict
from typing import Any, Callable

import numpy as np

from ._tensor import Size, Tensor, device, from_numpy

__all__ = ["save", "load"]

# torch's legacy (pre-zip) format begins with this number, pickled
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_ALIGN = 64

# storage class name in the pickle <-> the dtype of its elements
_STORAGE_DTYPES: dict[str, np.dtype] = {
    "DoubleStorage": np.dtype(np.float64), "FloatStorage": np.dtype(np.float32),
    "HalfStorage": np.dtype(np.float16), "LongStorage": np.dtype(np.int64),
    "IntStorage": np.dtype(np.int32), "ShortStorage": np.dtype(np.int16),
    "CharStorage": np.dtype(np.int8), "ByteStorage": np.dtype(np.uint8),
    "BoolStorage": np.dtype(np.bool_),
}
_STORAGE_OF = {dt: name for name, dt in _STORAGE_DTYPES.items()}
# torch's dtype names that NumPy has (``torch.float32`` in a pickle is the global
# ``torch float32``); the unsigned ones wider than a byte go through UntypedStorage
_DTYPES: dict[str, np.dtype] = {str(dt): dt for dt in _STORAGE_DTYPES.values()}
_DTYPES["bool"] = np.dtype(np.bool_)
for _name in ("uint16", "uint32", "uint64"):
    _DTYPES[_name] = np.dtype(_name)
_UNTYPED_SAVED = {np.dtype("uint16"), np.dtype("uint32"), np.dtype("uint64")}
# what torch can hold and NumPy cannot: a checkpoint naming one raises NotImplementedError
_NO_NUMPY = {"bfloat16", "complex32", "chalf", "float8_e4m3fn", "float8_e5m2",
             "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2",
             "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "bits8", "bits16",
             "bits1x8", "bits2x4", "bits4x2", "BFloat16Storage", "ComplexFloatStorage",
             "ComplexDoubleStorage", "QInt8Storage", "QUInt8Storage", "QInt32Storage",
             "QUInt4x2Storage", "QUInt2x4Storage", "complex64", "complex128", "cfloat",
             "cdouble"}


class _Name:
    """A torch global written into the pickle by its name (``GLOBAL module name``): the
    pickler never imports it, so torch need not be installed to save."""

    __slots__ = ("module", "name")
    _made: dict[tuple[str, str], "_Name"] = {}

    def __new__(cls, module: str, name: str) -> "_Name":
        key = (module, name)
        if key not in cls._made:  # one object per name: the pickle's memo shares it
            obj = super().__new__(cls)
            obj.module, obj.name = module, name
            cls._made[key] = obj
        return cls._made[key]

    def __call__(self, *args: Any) -> Any:  # (the pickler asks a reduce's function to be callable)
        raise TypeError(f"{self.module}.{self.name} is torch's, named in a pickle only")


class _StorageRef:
    """A storage being saved: its key, its elements (a 1-d array in memory order) and
    the name of its storage class (the persistent id refers to it)."""

    __slots__ = ("key", "flat", "kind")

    def __init__(self, key: str, flat: np.ndarray, kind: _Name) -> None:
        self.key, self.flat, self.kind = key, flat, kind


def _root(arr: np.ndarray) -> np.ndarray:
    """The array that owns ``arr``'s memory (the end of its chain of ``.base`` arrays)."""
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


def _address(arr: np.ndarray) -> int:
    return arr.__array_interface__["data"][0]


class _Pickler(pickle._Pickler):  # (the Python pickler: its save() and dispatch can be extended)
    """Python's pickler with torch's conventions for tensors: each tensor (or NumPy
    array) becomes a rebuild call on a persistent storage id; views of one array refer
    to one storage. NumPy scalars are written as Python numbers, dtypes, ``dg.Size``
    and ``dg.device`` as torch's."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file: Any, protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: dict[int, tuple[np.ndarray, _StorageRef]] = {}  # id(root) ->
        self.order: list[_StorageRef] = []

    def _save_name(self, obj: _Name) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Name] = _save_name

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            obj = obj.item()
        elif isinstance(obj, np.dtype) and str(obj) in _DTYPES and obj.isnative:
            obj = _Name("torch", str(obj))
        super().save(obj, save_persistent_id)

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is _StorageRef:
            numel = obj.flat.size * (obj.flat.itemsize if obj.kind.name == "UntypedStorage" else 1)
            return ("storage", obj.kind, obj.key, "cpu", numel)
        return None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            from .nn import Parameter
            data = obj._data
            if isinstance(obj, Parameter):
                plain = from_numpy(data)
                return (_Name("torch._utils", "_rebuild_parameter"),
                        (plain, bool(obj.requires_grad), OrderedDict()))
            return self._tensor(data, bool(obj.requires_grad))
        if type(obj) is np.ndarray or isinstance(obj, np.memmap):
            return self._tensor(obj, False)
        if type(obj) is Size:
            return (_Name("torch", "Size"), (tuple(obj),))
        if type(obj) is device:
            return (_Name("torch", "device"), (obj.type,))
        return NotImplemented

    def _tensor(self, arr: np.ndarray, requires_grad: bool) -> tuple:
        """The rebuild call of one tensor: its storage (shared with the other views of
        the same array where torch's layout can say so) and its offset and strides."""
        dt = arr.dtype
        if dt.kind not in "biuf" or str(dt.newbyteorder("=")) not in _DTYPES:
            raise TypeError(f"save: cannot save an array of dtype {dt} (shape {arr.shape}) "
                            "as a torch tensor; expected bool, an integer or a float dtype")
        size = tuple(int(n) for n in arr.shape)
        place = self._place(arr)
        if place is None:  # not expressible as a view of its owner: a storage of its own
            flat = np.ascontiguousarray(arr).reshape(-1)
            ref = self._new_storage(flat)
            offset, stride = 0, _contiguous_strides(size)
        else:
            ref, offset, stride = place
        if dt.newbyteorder("=") in _UNTYPED_SAVED:
            return (_Name("torch._utils", "_rebuild_tensor_v3"),
                    (ref, offset, size, stride, requires_grad, OrderedDict(),
                     _Name("torch", str(dt.newbyteorder("=")))))
        return (_Name("torch._utils", "_rebuild_tensor_v2"),
                (ref, offset, size, stride, requires_grad, OrderedDict()))

    def _place(self, arr: np.ndarray) -> tuple[_StorageRef, int, tuple[int, ...]] | None:
        """(storage, offset, strides in elements) of ``arr`` as a view of the array that owns
        its memory, or None when torch's layout cannot express it (negative or uneven
        strides, another dtype than the owner's, an owner not contiguous)."""
        if arr.size == 0:
            return None
        root = _root(arr)
        item = arr.itemsize
        if root.dtype != arr.dtype or not (root.flags.c_contiguous or root.flags.f_contiguous):
            return None
        delta = _address(arr) - _address(root)
        if delta < 0 or delta % item or any(s < 0 or s % item for s in arr.strides):
            return None
        offset = delta // item
        stride = tuple(s // item for s in arr.strides)
        last = offset + sum((n - 1) * s for n, s in zip(arr.shape, stride))
        if last >= root.size:
            return None
        entry = self.storages.get(id(root))
        if entry is None or entry[0] is not root:
            flat = root.reshape(-1) if root.flags.c_contiguous else root.T.reshape(-1)
            ref = self._new_storage(flat)
            self.storages[id(root)] = (root, ref)
        else:
            ref = entry[1]
        return ref, offset, stride

    def _new_storage(self, flat: np.ndarray) -> _StorageRef:
        dt = flat.dtype.newbyteorder("=")
        kind = (_Name("torch.storage", "UntypedStorage") if dt in _UNTYPED_SAVED
                else _Name("torch", _STORAGE_OF[dt]))
        ref = _StorageRef(str(len(self.order)), flat, kind)
        self.order.append(ref)
        return ref


def _contiguous_strides(size: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(size):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _archive_name(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if stem and all(c.isalnum() or c in "_-." for c in stem):
            return stem
    return "archive"


def _write_record(zf: zipfile.ZipFile, name: str, data: Any) -> None:
    """One record, stored uncompressed, its data starting at a multiple of 64 bytes (the
    padding goes in an extra field of the local header, as torch's writer pads)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    info.file_size = len(view)
    try:
        start = zf.fp.tell() + 30 + len(name.encode("utf-8")) + 4
        pad = (-start) % _ALIGN
        info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    except (OSError, AttributeError, ValueError):  # an unseekable stream: no alignment
        pass
    with zf.open(info, "w", force_zip64=info.file_size > 0x7FFF0000) as out:
        out.write(view)


def save(obj: Any, f: str | os.PathLike | Any, pickle_module: Any = pickle,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to ``f`` (a path or a writable binary file object) in torch's zip
    checkpoint format, as ``torch.save``: ``torch.load`` (and ``dg.load``) reads it.

    Tensors keep their dtype, shape, strides, ``requires_grad`` and sharing (views of
    one array are saved once and load as views of one storage); NumPy arrays are saved
    as tensors, NumPy scalars as Python numbers; containers, numbers and strings are
    pickled as they are. A view torch cannot express (negative strides) is saved as a
    copy of its own.

    >>> import io
    >>> import duograd as dg
    >>> buf = io.BytesIO()
    >>> dg.save({"w": dg.ones(2)}, buf)
    >>> buf.getvalue()[:2]               # a zip archive
    b'PK'
    """
    if pickle_module is not pickle:
        raise NotImplementedError("save: only Python's pickle module is supported "
                                  f"(got pickle_module={pickle_module!r})")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("save: torch's legacy (non-zip) format is not written; "
                                  "leave _use_new_zipfile_serialization=True")
    pkl = io.BytesIO()
    pickler = _Pickler(pkl, pickle_protocol)
    pickler.dump(obj)  # (before the file is opened: an unpicklable object leaves it alone)
    prefix = _archive_name(f)
    own = isinstance(f, (str, os.PathLike))
    stream = open(os.fspath(f), "wb") if own else f
    try:
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as zf:
            _write_record(zf, f"{prefix}/data.pkl", pkl.getvalue())
            _write_record(zf, f"{prefix}/.format_version", b"1")
            _write_record(zf, f"{prefix}/.storage_alignment", str(_ALIGN).encode())
            if not _disable_byteorder_record:
                _write_record(zf, f"{prefix}/byteorder", b"little")
            for ref in pickler.order:
                flat = ref.flat
                if flat.dtype.byteorder == ">":
                    flat = flat.astype(flat.dtype.newbyteorder("<"))
                flat = np.ascontiguousarray(flat)
                _write_record(zf, f"{prefix}/data/{ref.key}", flat.view(np.uint8))
            _write_record(zf, f"{prefix}/version", b"3\n")
            ident = "".join(secrets.choice("0123456789") for _ in range(40))
            _write_record(zf, f"{prefix}/.data/serialization_id", ident.encode())
    finally:
        if own:
            stream.close()


# ---------------------------------------------------------------------------- loading

class _Storage:
    """A storage named by a persistent id while loading: its elements are read (once per
    key) when a tensor is rebuilt on it."""

    __slots__ = ("loader", "key", "dtype", "numel", "location")

    def __init__(self, loader: "_Loader", key: str, dtype: np.dtype | None, numel: int,
                 location: str) -> None:
        self.loader, self.key, self.dtype, self.numel, self.location = (loader, key, dtype,
                                                                        numel, location)

    def array(self, dtype: np.dtype | None = None) -> np.ndarray:
        return self.loader.storage(self, dtype or self.dtype)


def _view(storage: Any, offset: int, size: Any, stride: Any, dtype: np.dtype | None = None
          ) -> np.ndarray:
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"load: a tensor's storage is a {type(storage).__name__}, "
                                     "not a storage of the archive")
    flat = storage.array(dtype)
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in stride) or min(size, default=1) < 0:
        raise RuntimeError(f"load: a tensor's size {size}, stride {stride} and offset {offset} "
                           "do not describe a view (corrupt archive?)")
    if 0 in size:
        return np.empty(size, flat.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= flat.size:
        raise RuntimeError(f"load: a tensor of size {size}, stride {stride} and offset {offset} "
                           f"does not fit its storage of {flat.size} elements (corrupt archive?)")
    item = flat.itemsize
    return np.ndarray(size, flat.dtype, buffer=flat, offset=offset * item,
                      strides=tuple(s * item for s in stride))


def _as_tensor(arr: np.ndarray, requires_grad: Any) -> Tensor:
    if requires_grad and arr.dtype.kind != "f":
        raise RuntimeError(f"load: a tensor of dtype {arr.dtype} requires grad (only floating "
                           "tensors can)")
    return from_numpy(arr, requires_grad=bool(requires_grad))


def _rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any) -> Tensor:
    return _as_tensor(_view(storage, storage_offset, size, stride), False)


def _rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any,
                       requires_grad: bool = False, backward_hooks: Any = None,
                       metadata: Any = None) -> Tensor:
    return _as_tensor(_view(storage, storage_offset, size, stride), requires_grad)


def _rebuild_tensor_v3(storage: Any, storage_offset: int, size: Any, stride: Any,
                       requires_grad: bool, backward_hooks: Any, dtype: Any,
                       metadata: Any = None) -> Tensor:
    if not isinstance(dtype, np.dtype):
        raise pickle.UnpicklingError(f"load: a tensor's dtype is {dtype!r}, not a dtype")
    return _as_tensor(_view(storage, storage_offset, size, stride, dtype), requires_grad)


def _rebuild_parameter(data: Any, requires_grad: bool, backward_hooks: Any,
                       state: Any = None) -> Tensor:
    from .nn import Parameter
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"load: a parameter's data is a {type(data).__name__}")
    p = _as_tensor(data._data, requires_grad)
    p.__class__ = Parameter  # (sharing data's memory, as torch's parameter does)
    return p


def _rebuild_from_type_v2(func: Callable, new_type: Any, args: tuple, state: Any) -> Any:
    out = func(*args)
    if new_type is not Tensor and not (isinstance(new_type, type) and isinstance(out, new_type)):
        raise NotImplementedError(f"load: tensor subclass {new_type!r} is not supported")
    return out


def _torch_device(*args: Any) -> device:
    name = ":".join(str(a) for a in args)
    return device(name)  # (raises for anything but the CPU)


def _get_layout(name: str) -> str:
    if name != "torch.strided":
        raise NotImplementedError(f"load: layout {name} is not supported (only torch.strided)")
    return name


class _StorageType:
    """``torch.FloatStorage`` and the like, as named in a persistent id."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: np.dtype | None) -> None:
        self.name, self.dtype = name, dtype


# torch's globals (``module.name``) -> duograd's stand-ins
_TORCH: dict[str, Any] = {
    "torch._utils._rebuild_tensor": _rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "torch.Size": Size,
    "torch.Tensor": Tensor,
    "torch.device": _torch_device,
    "torch.serialization._get_layout": _get_layout,
    "torch.storage.UntypedStorage": _StorageType("UntypedStorage", None),
}
for _name, _dt in _DTYPES.items():
    _TORCH[f"torch.{_name}"] = _dt
for _name, _dt in _STORAGE_DTYPES.items():
    _TORCH[f"torch.{_name}"] = _StorageType(_name, _dt)
# what else torch's weights-only unpickler allows
_SAFE: dict[str, Any] = {
    "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
    "builtins.set": set, "builtins.bytearray": bytearray, "builtins.complex": complex,
    "_codecs.encode": _codecs.encode,
}
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


def _lookup_torch(full: str) -> Any:
    if full in _TORCH:
        return _TORCH[full]
    if full == "torch.nn.parameter.Parameter":
        from .nn import Parameter
        return Parameter
    name = full.rsplit(".", 1)[-1]
    if name in _NO_NUMPY:
        raise NotImplementedError(f"load: the checkpoint holds {full}, which NumPy (and so "
                                  "duograd) cannot represent")
    return None


def _unsafe(full: str, why: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        f"load: Weights only load failed: {why} (refused under weights_only=True, nothing was "
        f"called). Re-running load with weights_only=False loads it, but a pickle can run "
        f"arbitrary code: do that only if you trust the source of the checkpoint. "
        f"Unsupported global: GLOBAL {full}")


class _WeightsOnlyUnpickler(pickle._Unpickler):  # (the Python unpickler: its opcodes can be checked)
    """Python's unpickler restricted as torch's weights-only unpickler: globals only from
    the allowed list, items set only on dicts and appended only to lists, ``BUILD`` only
    on ordered dicts and counters, persistent ids only for storages."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file: Any, loader: "_Loader", **kw: Any) -> None:
        super().__init__(file, **kw)
        self.loader = loader

    def find_class(self, module: str, name: str) -> Any:
        if self.proto < 3 and self.fix_imports:
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module.split(".")[0] in _BLOCKED_MODULES:
            raise _unsafe(full, f"the checkpoint names {full}, whose module {module} is blocked")
        if full in _SAFE:
            return _SAFE[full]
        if module == "torch" or module.startswith("torch."):
            found = _lookup_torch(full)
            if found is not None:
                return found
        raise _unsafe(full, f"{full} is not an allowed global")

    def persistent_load(self, pid: Any) -> Any:
        return self.loader.persistent_load(pid)

    def _check_target(self, kinds: tuple, what: str, depth: int = 1) -> None:
        target = self.stack[-depth]
        if type(target) not in kinds:
            raise pickle.UnpicklingError(f"load: weights_only=True can only {what} "
                                         f"{' or '.join(k.__name__ for k in kinds)}, not "
                                         f"{type(target).__name__}")

    def _setitem(self) -> None:
        self._check_target((dict, OrderedDict, Counter), "set items of a", 3)
        pickle._Unpickler.load_setitem(self)

    def _setitems(self) -> None:
        items = self.pop_mark()
        self._check_target((dict, OrderedDict, Counter), "set items of a")
        target = self.stack[-1]
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _append(self) -> None:
        self._check_target((list,), "append to a", 2)
        pickle._Unpickler.load_append(self)

    def _appends(self) -> None:
        items = self.pop_mark()
        self._check_target((list,), "append to a")
        self.stack[-1].extend(items)

    def _build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) not in (OrderedDict, Counter) or not isinstance(state, dict):
            raise pickle.UnpicklingError(f"load: weights_only=True can only BUILD an OrderedDict "
                                         f"or a Counter, not {type(inst).__name__}")
        inst.__dict__.update(state)

    def _newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        if cls not in (set, bytearray, complex, OrderedDict, Counter, Size):
            raise pickle.UnpicklingError(f"load: weights_only=True cannot make a new {cls!r}")
        self.append(cls.__new__(cls, *args))

    def _refused(self) -> None:
        raise pickle.UnpicklingError("load: weights_only=True refuses this pickle opcode "
                                     "(extension registry, NEWOBJ_EX or PERSID)")

    dispatch[pickle.SETITEM[0]] = _setitem
    dispatch[pickle.SETITEMS[0]] = _setitems
    dispatch[pickle.APPEND[0]] = _append
    dispatch[pickle.APPENDS[0]] = _appends
    dispatch[pickle.BUILD[0]] = _build
    dispatch[pickle.NEWOBJ[0]] = _newobj
    for _op in (pickle.EXT1, pickle.EXT2, pickle.EXT4, pickle.NEWOBJ_EX, pickle.PERSID,
                pickle.INST, pickle.OBJ):
        dispatch[_op[0]] = _refused


class _FullUnpickler(pickle.Unpickler):
    """Any pickle (``weights_only=False``), torch's globals resolved to duograd's."""

    def __init__(self, file: Any, loader: "_Loader", **kw: Any) -> None:
        super().__init__(file, **kw)
        self.loader = loader

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" or module.startswith("torch."):
            full = f"{module}.{name}"
            found = _lookup_torch(full)
            if found is None:
                raise NotImplementedError(f"load: the checkpoint names {full}, which duograd "
                                          "cannot rebuild without torch")
            return found
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        return self.loader.persistent_load(pid)


def _restorer(map_location: Any) -> Callable[[np.ndarray, str], np.ndarray]:
    """``map_location`` checked (anything that names a device other than the CPU raises
    now, before anything is read) and turned into ``restore(storage, location)``."""

    def cpu_name(where: Any, what: str) -> str:
        if isinstance(where, bytes):
            where = where.decode("ascii", "replace")
        name = str(where) if isinstance(where, (str, device)) or hasattr(where, "type") else None
        if name is None:
            raise TypeError(f"load: {what} must be a device name, a device, a dict or a callable, "
                            f"got {type(where).__name__}")
        if name not in ("cpu", "cpu:0"):
            raise RuntimeError(f"load: {what} {name!r} names a device other than the CPU; "
                               "duograd runs on the CPU only (use map_location='cpu' or None); "
                               "nothing was loaded")
        return "cpu"

    def default(storage: np.ndarray, location: str) -> np.ndarray:
        if location != "cpu" and not location.startswith("cpu:"):
            raise RuntimeError(f"load: the checkpoint's tensors were saved on {location!r}; "
                               "duograd runs on the CPU only: pass map_location='cpu' (or a "
                               f"dict such as {{{location!r}: 'cpu'}}); nothing was loaded")
        return storage

    if map_location is None:
        return default
    if isinstance(map_location, dict):
        for v in map_location.values():
            cpu_name(v, "map_location's value")
        table = {str(k): v for k, v in map_location.items()}
        return lambda storage, location: default(storage, cpu_name(table[location], "")
                                                 if location in table else location)
    if isinstance(map_location, (str, bytes, device)) or (
            hasattr(map_location, "type") and not callable(map_location)):
        cpu_name(map_location, "map_location")
        return lambda storage, location: storage
    if callable(map_location):
        def call(storage: np.ndarray, location: str) -> np.ndarray:
            out = map_location(storage, location)
            if out is None:
                return default(storage, location)
            if isinstance(out, Tensor):
                out = out._data
            if not isinstance(out, np.ndarray) or out.nbytes != storage.nbytes:
                raise TypeError(f"load: map_location returned {type(out).__name__}; expected the "
                                "storage it was given (a NumPy array), another array of its size, "
                                "or None")
            return out.reshape(-1).view(storage.dtype)
        return call
    raise TypeError(f"load: map_location must be None, a device name, a device, a dict or a "
                    f"callable, got {type(map_location).__name__}")


class _Loader:
    """One ``load``: the storages read so far (by key) and where their bytes come from."""

    def __init__(self, read: Callable[[str, np.dtype, int], np.ndarray],
                 restore: Callable[[np.ndarray, str], np.ndarray]) -> None:
        self.read, self.restore = read, restore
        self.loaded: dict[str, np.ndarray] = {}

    def persistent_load(self, pid: Any) -> _Storage:
        if type(pid) is not tuple or not pid or _text(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"load: only persistent ids of storages are allowed, "
                                         f"got {pid!r}")
        if len(pid) not in (5, 6):
            raise pickle.UnpicklingError(f"load: a storage id has {len(pid)} fields, expected 5")
        kind, key, location, numel = pid[1], _text(pid[2]), _text(pid[3]), pid[4]
        if not isinstance(kind, _StorageType) or not isinstance(numel, int) or numel < 0:
            raise pickle.UnpicklingError(f"load: bad storage id {pid!r}")
        if len(pid) == 6 and pid[5] is not None:
            raise NotImplementedError("load: legacy storage views are not supported")
        return _Storage(self, key, kind.dtype, numel, location)

    def storage(self, s: _Storage, dtype: np.dtype | None) -> np.ndarray:
        if dtype is None:
            raise pickle.UnpicklingError(f"load: storage {s.key} has no dtype")
        nbytes = s.numel * (1 if s.dtype is None else s.dtype.itemsize)
        arr = self.loaded.get(s.key)
        if arr is None:
            if nbytes % dtype.itemsize:
                raise RuntimeError(f"load: storage {s.key} of {nbytes} bytes does not hold "
                                   f"whole elements of {dtype} (corrupt archive?)")
            arr = self.restore(self.read(s.key, dtype, nbytes // dtype.itemsize), s.location)
            self.loaded[s.key] = arr
        if arr.dtype != dtype:  # (one storage seen with two dtypes: a reinterpretation)
            arr = arr.view(dtype)
        return arr


def _text(x: Any) -> str:
    return x.decode("ascii") if isinstance(x, bytes) else str(x)


class _LoadError(RuntimeError, pickle.UnpicklingError):
    """A file that is not a readable torch checkpoint: a ``RuntimeError`` (what torch
    raises for a corrupt archive) and a ``pickle.UnpicklingError`` (for other bytes)."""


def _zip_reader(zf: zipfile.ZipFile, prefix: str, path: str | None,
                mmap: bool) -> Callable[[str, np.dtype, int], np.ndarray]:
    def read(key: str, dtype: np.dtype, count: int) -> np.ndarray:
        name = f"{prefix}/data/{key}"
        try:
            info = zf.getinfo(name)
        except KeyError:
            raise _LoadError(f"load: the archive has no record {name} (corrupt archive?)") from None
        if info.file_size != count * dtype.itemsize:
            raise _LoadError(f"load: record {name} holds {info.file_size} bytes; its storage "
                             f"needs {count * dtype.itemsize} (corrupt archive?)")
        le = dtype.newbyteorder("<")
        if mmap and path is not None and info.compress_type == zipfile.ZIP_STORED and count:
            with open(path, "rb") as fh:
                fh.seek(info.header_offset)
                head = fh.read(30)
                if head[:4] != b"PK\x03\x04":
                    raise _LoadError(f"load: record {name} has a bad local header")
                start = (info.header_offset + 30 + int.from_bytes(head[26:28], "little")
                         + int.from_bytes(head[28:30], "little"))
            return np.memmap(path, dtype=le, mode="c", offset=start, shape=(count,))
        arr = np.empty(count, le)
        try:
            with zf.open(info) as src:
                got = src.readinto(memoryview(arr.view(np.uint8)))
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise _LoadError(f"load: cannot read record {name} ({e}; corrupt archive?)") from None
        if got != arr.nbytes:
            raise _LoadError(f"load: record {name} is truncated (corrupt archive?)")
        return arr if le.isnative else arr.astype(dtype.newbyteorder("="))
    return read


def load(f: str | os.PathLike | Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load what ``torch.save`` (or ``dg.save``) wrote to ``f`` (a path or a readable,
    seekable binary file object), as ``torch.load``, without torch: tensors come back as
    ``dg.Tensor`` (parameters as ``nn.Parameter``) with their dtype, shape, strides,
    ``requires_grad`` and sharing; storages of dtypes NumPy lacks (bfloat16, complex)
    raise ``NotImplementedError``.

    ``weights_only`` (None means True, torch 2.6+'s default) allows only tensors,
    containers, numbers, strings and torch's other safe names; any other global raises
    ``pickle.UnpicklingError`` naming it, before anything is called. ``weights_only=False``
    loads any pickle: only for files you trust.

    ``map_location``: None, ``"cpu"``, a ``dg.device`` (or ``torch.device``) on the CPU,
    a dict from saved locations to ``"cpu"``, or a callable ``fn(storage, location)``
    given each storage (a NumPy array) and returning it, an array of its size, or None.
    A device other than the CPU raises ``RuntimeError`` and loads nothing. ``mmap=True``
    maps the storages of a file given by path (copy-on-write) instead of reading them.

    >>> import io
    >>> import duograd as dg
    >>> buf = io.BytesIO()
    >>> dg.save([dg.tensor([1, 2]), "text", 2.5], buf)
    >>> _ = buf.seek(0)
    >>> dg.load(buf, map_location="cpu")
    [tensor([1, 2]), 'text', 2.5]
    """
    if weights_only is None:
        weights_only = True
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError(f"load: only Python's pickle module is supported (got "
                                  f"pickle_module={pickle_module!r})")
    if weights_only and pickle_module is not None:
        raise RuntimeError("load: cannot pass pickle_module together with weights_only=True "
                           "(as torch.load)")
    restore = _restorer(map_location)
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    if mmap and path is None:
        raise ValueError("load: f must be a file path in order to use the mmap argument")
    stream = open(path, "rb") if path is not None else f
    try:
        start = stream.tell()
        head = stream.read(4)
        stream.seek(start)
        if head == b"PK\x03\x04":
            return _load_zip(stream, path, bool(mmap), restore, weights_only, pickle_load_args)
        if head[:2] == b"\x80\x02" and _is_legacy(stream):
            return _load_legacy(stream, restore, weights_only, pickle_load_args)
        raise _LoadError(f"load: {path or 'the file'} is not a torch checkpoint: neither a zip "
                         f"archive nor torch's legacy format (it begins with {head!r})")
    finally:
        if path is not None:
            stream.close()


def _unpickle(data: Any, loader: _Loader, weights_only: bool, kw: dict) -> Any:
    kind = _WeightsOnlyUnpickler if weights_only else _FullUnpickler
    file = data if hasattr(data, "read") else io.BytesIO(data)
    return kind(file, loader, **kw).load()


def _load_zip(stream: Any, path: str | None, mmap: bool, restore: Callable,
              weights_only: bool, kw: dict) -> Any:
    try:
        zf = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise _LoadError(f"load: {path or 'the file'} is a corrupt zip archive ({e}); "
                         "nothing was loaded") from None
    with zf:
        names = zf.namelist()
        pkls = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
        if not pkls:
            raise _LoadError(f"load: the archive {path or ''} has no <name>/data.pkl record: "
                             "not a torch checkpoint")
        prefix = pkls[0].split("/")[0]
        if f"{prefix}/byteorder" in names and zf.read(f"{prefix}/byteorder") != b"little":
            raise NotImplementedError("load: the checkpoint was written big-endian")
        try:
            data = zf.read(pkls[0])
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise _LoadError(f"load: cannot read {pkls[0]} ({e}; corrupt archive?)") from None
        loader = _Loader(_zip_reader(zf, prefix, path, mmap), restore)
        try:
            return _unpickle(data, loader, weights_only, kw)
        except (EOFError, ValueError, IndexError, KeyError) as e:
            raise _LoadError(f"load: {pkls[0]} is not a valid pickle ({type(e).__name__}: {e}; "
                             "corrupt archive?)") from None


def _is_legacy(stream: Any) -> bool:
    start = stream.tell()
    try:
        return pickle.load(stream) == _LEGACY_MAGIC
    except Exception:
        return False
    finally:
        stream.seek(start)


def _load_legacy(stream: Any, restore: Callable, weights_only: bool, kw: dict) -> Any:
    """torch's legacy format (``_use_new_zipfile_serialization=False``): pickles of the
    magic number, the protocol version and system information, then the object (its
    storages persistent ids, ``("storage", type, key, location, numel, view)``), then the
    list of storage keys, then each storage as an 8-byte element count and its bytes. The
    tensors are rebuilt on empty arrays which the storages then fill."""
    pickle.load(stream)  # the magic number
    if pickle.load(stream) != 1001:
        raise _LoadError("load: unsupported version of torch's legacy format")
    info = _unpickle(stream, _Loader(None, restore), True, {})
    if not isinstance(info, dict) or not info.get("little_endian", True):
        raise NotImplementedError("load: legacy checkpoint written big-endian")
    made: dict[str, np.ndarray] = {}
    here = stream.tell()
    room = stream.seek(0, io.SEEK_END) - here  # (no storage can be larger than the file)
    stream.seek(here)

    def read(key: str, dtype: np.dtype, count: int) -> np.ndarray:
        if count * dtype.itemsize > room:
            raise _LoadError(f"load: legacy storage {key} claims {count * dtype.itemsize} bytes, "
                             "more than the file holds (corrupt file?)")
        made[key] = np.empty(count, dtype)
        return made[key]
    loader = _Loader(read, lambda storage, location: storage)
    where: dict[str, str] = {}
    old_persistent = loader.persistent_load

    def persistent_load(pid: Any) -> _Storage:
        s = old_persistent(pid[:5] if type(pid) is tuple and len(pid) == 6 and pid[5] is None else pid)
        where[s.key] = s.location
        return s
    loader.persistent_load = persistent_load  # type: ignore[method-assign]
    try:
        result = _unpickle(stream, loader, weights_only, kw)
        keys = _unpickle(stream, _Loader(None, restore), True, {})
        for key in keys:
            key = _text(key)
            count = int.from_bytes(stream.read(8), "little")
            arr = made.get(key)
            if arr is None or arr.size != count:
                raise _LoadError(f"load: legacy storage {key} does not match its record")
            if stream.readinto(memoryview(arr.view(np.uint8))) != arr.nbytes:
                raise _LoadError(f"load: legacy storage {key} is truncated")
            restore(arr, where.get(key, "cpu"))
    except (EOFError, ValueError, IndexError, KeyError) as e:
        raise _LoadError(f"load: not a valid legacy torch checkpoint ({type(e).__name__}: {e})") from None
    return result


# ------------------------------------------------- copy.deepcopy and pickle of a Tensor

def _rebuild_plain(cls: type, data: np.ndarray, requires_grad: bool, grad: Any) -> Tensor:
    """A Tensor from ``Tensor.__reduce_ex__`` (Python's own pickle; ``save`` writes torch's
    layout instead)."""
    t = from_numpy(data, requires_grad=requires_grad)
    if cls is not Tensor:
        t.__class__ = cls
    if grad is not None:
        t._grad = grad
    return t


def _tensor_reduce_ex(self: Tensor, protocol: int) -> tuple:
    """A tensor's values, class, ``requires_grad`` and ``.grad``, as torch pickles one: a
    tensor with history arrives as a leaf (the graph does not cross a pickle)."""
    return (_rebuild_plain, (type(self), self._data, bool(self.requires_grad), self._grad))


def _tensor_deepcopy(self: Tensor, memo: dict) -> Tensor:
    """``copy.deepcopy``: a new leaf with copied values, class, ``requires_grad`` and
    ``.grad``; only leaves, as torch's.

    >>> import copy
    >>> import duograd as dg
    >>> a = dg.ones(2, requires_grad=True)
    >>> b = copy.deepcopy(a)
    >>> b.requires_grad, b is a, bool((b == a).all())
    (True, False, True)
    """
    if self.grad_fn is not None:
        raise RuntimeError("Tensor.__deepcopy__: only tensors created explicitly by the user "
                           "(graph leaves) support the deepcopy protocol; call .detach() first")
    import copy
    new = _rebuild_plain(type(self), copy.deepcopy(self._data, memo), bool(self.requires_grad),
                         None if self._grad is None else copy.deepcopy(self._grad, memo))
    memo[id(self)] = new
    return new

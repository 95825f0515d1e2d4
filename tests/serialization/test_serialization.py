"""``dg.save`` / ``dg.load`` against torch's own ``torch.save`` / ``torch.load``: files go
both ways (written by one, read by the other) for every dtype, 0-d and empty tensors,
views of one storage, ``requires_grad``, parameters, state dicts and nested containers;
the weights-only unpickler refuses a malicious pickle; bad ``map_location`` and broken
files raise and load nothing."""

from __future__ import annotations

import collections
import copy
import io
import os
import pickle
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import duograd as dg
from duograd import nn

DTYPES = ["bool", "int32", "int64", "float32", "float64", "uint8", "int8", "int16", "float16"]


def _values(name: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    if name == "bool":
        return rng.random((3, 4)) < 0.5
    if name.startswith(("int", "uint")):
        info = np.iinfo(name)
        return rng.integers(max(info.min, -100), min(info.max, 100), (3, 4)).astype(name)
    out = rng.standard_normal((3, 4)).astype(name)
    out[0, 0] = -0.0
    return out


def _bytes_of(obj, save) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _dg_load(data: bytes, **kw):
    return dg.load(io.BytesIO(data), **kw)


def _torch_load(torch, data: bytes, **kw):
    return torch.load(io.BytesIO(data), **kw)


@pytest.mark.oracle
@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_goes_both_ways_with_torch(torch, name):
    a = _values(name)
    # duograd -> torch
    t = _torch_load(torch, _bytes_of({"t": dg.from_numpy(a.copy())}, dg.save))["t"]
    assert t.dtype == getattr(torch, name)
    assert t.numpy().tobytes() == a.tobytes()
    # torch -> duograd
    back = _dg_load(_bytes_of({"t": torch.from_numpy(a.copy())}, torch.save))["t"]
    assert isinstance(back, dg.Tensor) and back.dtype == np.dtype(name)
    assert back.numpy().tobytes() == a.tobytes()


@pytest.mark.oracle
def test_zero_dim_and_empty_tensors_both_ways(torch):
    ours = {"s": dg.tensor(2.5), "i": dg.tensor(7), "e": dg.zeros(0, 3), "e1": dg.zeros(0, dtype=dg.int64)}
    t = _torch_load(torch, _bytes_of(ours, dg.save))
    assert t["s"].shape == () and t["s"].item() == 2.5 and t["s"].dtype == torch.float64
    assert t["i"].shape == () and t["i"].item() == 7 and t["i"].dtype == torch.int64
    assert tuple(t["e"].shape) == (0, 3) and tuple(t["e1"].shape) == (0,)
    theirs = {"s": torch.tensor(2.5), "e": torch.zeros(0, 3, dtype=torch.float64)}
    d = _dg_load(_bytes_of(theirs, torch.save))
    assert d["s"].shape == () and d["s"].item() == 2.5 and d["s"].dtype == np.float32
    assert d["e"].shape == (0, 3) and d["e"].dtype == np.float64


@pytest.mark.oracle
def test_views_of_one_storage_stay_shared_both_ways(torch):
    base = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    theirs = {"base": base, "t": base.t(), "row": base[1], "cols": base[:, ::2]}
    d = _dg_load(_bytes_of(theirs, torch.save))
    for k, v in theirs.items():
        assert d[k].numpy().tolist() == v.tolist(), k
        assert d[k].numpy().strides == tuple(s * 8 for s in v.stride()), k
    with dg.no_grad():
        d["base"].fill_(-1.0)   # writing through one view is seen by the others
    assert (d["t"].numpy() == -1).all() and (d["row"].numpy() == -1).all() and (d["cols"].numpy() == -1).all()

    b = dg.arange(12.0).reshape(3, 4)
    ours = {"base": b, "t": b.transpose(0, 1), "row": b[1], "cols": b[:, ::2]}
    t = _torch_load(torch, _bytes_of(ours, dg.save))
    ptr = t["base"].untyped_storage().data_ptr()
    for k, v in ours.items():
        assert t[k].tolist() == v.numpy().tolist(), k
        assert t[k].untyped_storage().data_ptr() == ptr, k
    assert t["row"].storage_offset() == 4 and t["cols"].stride() == (4, 2)
    t["base"].fill_(5.0)
    assert (t["cols"] == 5).all()


def test_a_view_torch_cannot_express_is_saved_as_a_copy():
    a = np.arange(6.0)
    out = _dg_load(_bytes_of({"rev": a[::-1], "a": a}, dg.save))
    assert out["rev"].numpy().tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    assert not np.shares_memory(out["rev"].numpy(), out["a"].numpy())


@pytest.mark.oracle
def test_requires_grad_and_parameters_are_kept_both_ways(torch):
    ours = [dg.ones(2, requires_grad=True), dg.ones(2), nn.Parameter(dg.zeros(3))]
    t = _torch_load(torch, _bytes_of(ours, dg.save))
    assert [x.requires_grad for x in t] == [True, False, True]
    assert isinstance(t[2], torch.nn.Parameter) and not isinstance(t[0], torch.nn.Parameter)
    theirs = [torch.ones(2, requires_grad=True), torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))]
    d = _dg_load(_bytes_of(theirs, torch.save))
    assert d[0].requires_grad and type(d[0]) is dg.Tensor
    assert isinstance(d[1], nn.Parameter) and d[1].requires_grad and d[1].dtype == np.float64


@pytest.mark.oracle
def test_state_dicts_go_both_ways_and_give_the_same_outputs(torch, tmp_path):
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    x = np.random.default_rng(0).standard_normal((5, 3))
    want = tnet(torch.tensor(x)).detach().numpy()
    path = tmp_path / "torch_model.pt"
    torch.save(tnet.state_dict(), path)
    sd = dg.load(path)
    assert isinstance(sd, collections.OrderedDict) and list(sd) == list(tnet.state_dict())
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    net.load_state_dict(sd)
    for (k, v), mine in zip(tnet.state_dict().items(), net.state_dict().values()):
        assert mine.tobytes() == v.numpy().tobytes(), k
    np.testing.assert_allclose(net(dg.tensor(x)).detach().numpy(), want, rtol=1e-13, atol=1e-15)
    # and back: duograd's state_dict() (NumPy copies) loads in torch as torch tensors
    with dg.no_grad():
        for p in net.parameters():
            p.mul_(2.0)
    path2 = tmp_path / "dg_model.pt"
    dg.save(net.state_dict(), path2)
    tsd = torch.load(path2)
    assert all(type(v) is torch.Tensor for v in tsd.values())
    tnet.load_state_dict(tsd)
    for (k, v), mine in zip(tnet.state_dict().items(), net.state_dict().values()):
        assert mine.tobytes() == v.numpy().tobytes(), k
    np.testing.assert_allclose(tnet(torch.tensor(x)).detach().numpy(), net(dg.tensor(x)).detach().numpy(),
                               rtol=1e-13, atol=1e-15)


NESTED = {"epoch": 3, "loss": 0.125, "name": "run-1", "flags": [True, False, None],
          "shape": (2, 3), "tags": {"a", "b"}, "raw": b"\x00\xffbytes", "big": 2 ** 70,
          "neg": -5, "z": complex(1, 2), "deep": {"list": [1, [2, [3.5, "x"]]], "t": ()},
          "od": collections.OrderedDict([("b", 1), ("a", 2)]),
          "count": collections.Counter("abca")}


@pytest.mark.oracle
def test_nested_containers_go_both_ways(torch):
    assert _torch_load(torch, _bytes_of(NESTED, dg.save)) == NESTED
    assert _dg_load(_bytes_of(NESTED, torch.save)) == NESTED
    mixed = {"w": dg.tensor([1.0, 2.0]), "meta": {"dtype": dg.float32, "size": dg.Size((2, 3)),
                                                  "device": dg.device("cpu"), "n": np.int64(4)}}
    t = _torch_load(torch, _bytes_of(mixed, dg.save))
    assert t["meta"] == {"dtype": torch.float32, "size": torch.Size([2, 3]),
                         "device": torch.device("cpu"), "n": 4}
    back = _dg_load(_bytes_of(t, torch.save))
    assert back["meta"] == {"dtype": dg.float32, "size": (2, 3), "device": dg.device("cpu"), "n": 4}
    assert type(back["meta"]["size"]) is dg.Size


@pytest.mark.oracle
def test_the_archive_has_torchs_records(torch, tmp_path):
    path = tmp_path / "model.pt"
    dg.save({"w": dg.ones(3)}, path)
    tpath = tmp_path / "theirs.pt"
    torch.save({"w": torch.ones(3, dtype=torch.float64)}, tpath)
    with zipfile.ZipFile(path) as ours, zipfile.ZipFile(tpath) as theirs:
        names = [n.replace("model/", "") for n in ours.namelist()]
        assert names == [n.replace("theirs/", "") for n in theirs.namelist()]
        for rec in ("version", "byteorder", ".format_version", ".storage_alignment", "data/0"):
            assert ours.read(f"model/{rec}") == theirs.read(f"theirs/{rec}"), rec
        for info in ours.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
        start = _data_offset(path, ours.getinfo("model/data/0"))
        assert start % 64 == 0
    assert torch.load(path, mmap=True)["w"].tolist() == [1.0, 1.0, 1.0]


def _data_offset(path, info) -> int:
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        head = f.read(30)
    return info.header_offset + 30 + int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little")


class _Evil:
    def __reduce__(self):
        return (os.system, (f"touch {self.target}",))


def _archive_with(pkl: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def test_a_malicious_pickle_is_refused_under_weights_only_and_runs_nothing(tmp_path):
    evil = _Evil()
    evil.target = str(tmp_path / "pwned")
    data = _archive_with(pickle.dumps({"x": evil}, protocol=2))
    for kw in ({}, {"weights_only": True}):
        with pytest.raises(pickle.UnpicklingError, match=r"weights_only.*(posix|os)\.system"):
            _dg_load(data, **kw)
    assert not os.path.exists(evil.target)
    # a hand-written reduce to a builtin that is not allowed
    handmade = b"\x80\x02cbuiltins\neval\nX\x0a\x00\x00\x00print('x')\x85R."
    with pytest.raises(pickle.UnpicklingError, match=r"weights_only.*builtins\.eval"):
        _dg_load(_archive_with(handmade))


class Custom:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return type(other) is Custom and other.v == self.v


def test_weights_only_false_loads_a_custom_class_that_weights_only_refuses():
    data = _bytes_of({"c": Custom([1, 2]), "w": dg.ones(2)}, dg.save)
    with pytest.raises(pickle.UnpicklingError, match=r"weights_only=True.*Custom"):
        _dg_load(data)
    out = _dg_load(data, weights_only=False)
    assert out["c"] == Custom([1, 2]) and out["w"].numpy().tolist() == [1.0, 1.0]


def _on_device(torch, location: str) -> bytes:
    """A torch checkpoint whose storages are tagged with ``location`` (made by editing
    the pickle's location string: no accelerator is needed)."""
    data = _bytes_of({"w": torch.arange(3, dtype=torch.float64)}, torch.save)
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n in src.namelist():
            rec = src.read(n)
            if n.endswith("data.pkl"):
                new = location.encode()
                rec = rec.replace(b"X\x03\x00\x00\x00cpu", b"X" + len(new).to_bytes(4, "little") + new)
            z.writestr(n, rec)
    return buf.getvalue()


@pytest.mark.oracle
def test_map_location_forms_and_bad_ones(torch):
    data = _bytes_of({"w": dg.arange(3.0)}, dg.save)
    for ml in (None, "cpu", dg.device("cpu"), torch.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s,
               lambda s, loc: None):
        assert _dg_load(data, map_location=ml)["w"].numpy().tolist() == [0.0, 1.0, 2.0]
    seen = []
    _dg_load(data, map_location=lambda s, loc: seen.append((s.dtype, s.shape, loc)))
    assert seen == [(np.dtype(np.float64), (3,), "cpu")]  # torch calls it once per storage
    for ml in ("cuda", "cuda:0", torch.device("cuda:1"), "mps", {"cpu": "cuda:0"}):
        with pytest.raises(RuntimeError, match="CPU"):
            _dg_load(data, map_location=ml)
    with pytest.raises(TypeError, match="map_location"):
        _dg_load(data, map_location=3)
    with pytest.raises(TypeError, match="map_location returned"):
        _dg_load(data, map_location=lambda s, loc: "elsewhere")
    # a checkpoint saved on an accelerator loads only when mapped to the CPU (as torch)
    gpu = _on_device(torch, "cuda:0")
    with pytest.raises(RuntimeError, match="cuda:0.*map_location"):
        _dg_load(gpu)
    want = torch.load(io.BytesIO(gpu), map_location="cpu")["w"].tolist()
    assert _dg_load(gpu, map_location="cpu")["w"].numpy().tolist() == want
    assert _dg_load(gpu, map_location={"cuda:0": "cpu"})["w"].numpy().tolist() == want


def test_broken_files_raise_a_clear_error(tmp_path):
    good = _bytes_of({"w": dg.arange(4.0), "b": dg.ones(2)}, dg.save)
    cases = {
        "truncated": good[: len(good) // 2],
        "garbage": b"this is not a checkpoint at all",
        "empty": b"",
    }
    flipped = bytearray(good)
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        flipped[_data_offset_bytes(good, z.getinfo("archive/data/0"))] ^= 0xFF
    cases["bad crc"] = bytes(flipped)
    src = zipfile.ZipFile(io.BytesIO(good))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n in src.namelist():
            if not n.endswith("data/1"):
                z.writestr(n, src.read(n))
    cases["missing storage"] = buf.getvalue()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("notes.txt", "hello")
    cases["another zip"] = buf.getvalue()
    for what, data in cases.items():
        with pytest.raises(RuntimeError, match="load: ") as e:
            _dg_load(data)
        assert isinstance(e.value, pickle.UnpicklingError), what  # (torch's class for junk)
    path = tmp_path / "junk.pt"
    path.write_bytes(b"junk")
    with pytest.raises(RuntimeError, match="junk.pt is not a torch checkpoint"):
        dg.load(path)


def _data_offset_bytes(data: bytes, info) -> int:
    head = data[info.header_offset: info.header_offset + 30]
    return info.header_offset + 30 + int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little")


@pytest.mark.oracle
def test_torchs_legacy_format_loads(torch, tmp_path):
    base = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    path = tmp_path / "legacy.pt"
    torch.save({"base": base, "row": base[1], "i": torch.tensor([1, 2], dtype=torch.int32)}, path,
               _use_new_zipfile_serialization=False)
    out = dg.load(path)
    assert out["base"].numpy().tolist() == base.tolist() and out["row"].numpy().tolist() == [3.0, 4.0, 5.0]
    assert out["i"].dtype == np.int32
    assert np.shares_memory(out["base"].numpy(), out["row"].numpy())
    cut = tmp_path / "cut.pt"
    cut.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(RuntimeError, match="legacy"):
        dg.load(cut)


def test_paths_file_objects_and_mmap(tmp_path):
    w = dg.arange(5.0)
    path = tmp_path / "w.pt"
    dg.save({"w": w}, path)
    dg.save({"w": w}, str(tmp_path / "s.pt"))
    with open(tmp_path / "f.pt", "wb") as f:
        dg.save({"w": w}, f)
    for p in (path, str(tmp_path / "s.pt"), tmp_path / "f.pt"):
        assert dg.load(p)["w"].numpy().tolist() == w.numpy().tolist()
    with open(path, "rb") as f:
        assert dg.load(f)["w"].numpy().tolist() == w.numpy().tolist()
    mapped = dg.load(path, mmap=True)["w"]
    assert isinstance(mapped.numpy().base, np.memmap) or isinstance(mapped.numpy(), np.memmap)
    assert mapped.numpy().tolist() == w.numpy().tolist()
    with open(path, "rb") as f, pytest.raises(ValueError, match="mmap"):
        dg.load(f, mmap=True)


def test_save_refuses_what_torch_cannot_hold_and_writes_nothing(tmp_path):
    path = tmp_path / "c.pt"
    with pytest.raises(TypeError, match="complex"):
        dg.save({"c": np.ones(2, dtype=np.complex128)}, path)
    assert not path.exists()


def test_no_torch_is_imported():
    """duograd reads and writes the format with torch unimportable."""
    code = ("import sys, io; sys.modules['torch'] = None\n"
            "import duograd as dg\n"
            "buf = io.BytesIO(); dg.save({'w': dg.ones(2), 'v': [1, 'a']}, buf); buf.seek(0)\n"
            "out = dg.load(buf); assert out['v'] == [1, 'a'] and out['w'].numpy().tolist() == [1.0, 1.0]\n"
            "print('ok')")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


@pytest.mark.oracle
def test_deepcopy_and_pickle_of_a_tensor_as_torch(torch):
    a = nn.Parameter(dg.tensor([1.0, 2.0]))
    a.grad = dg.tensor([0.5, 0.5])
    for b in (copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert type(b) is nn.Parameter and b.requires_grad and b is not a
        assert b.detach().numpy().tolist() == [1.0, 2.0] and b.grad.numpy().tolist() == [0.5, 0.5]
        assert not np.shares_memory(b.detach().numpy(), a.detach().numpy())
    ta = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert type(copy.deepcopy(ta)) is torch.nn.Parameter  # (torch's behaviour, the oracle)
    y = a * 2
    with pytest.raises(RuntimeError):
        copy.deepcopy(y)
    with pytest.raises(RuntimeError):
        copy.deepcopy(ta * 2)


@pytest.mark.oracle
def test_strided_views_of_every_kind_reach_torch_as_views(torch):
    a = np.arange(60.0).reshape(3, 4, 5)
    f = np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    views = {"a": a, "perm": a.transpose(2, 0, 1), "step": a[::2, 1:, ::3], "row": a[1, 2],
             "bcast": np.broadcast_to(a[0, 0], (4, 5)), "f": f, "f_t": f.T, "f_col": f[:, 1]}
    t = _torch_load(torch, _bytes_of({k: dg.from_numpy(v) for k, v in views.items()}, dg.save))
    for k, v in views.items():
        assert t[k].numpy().tolist() == v.tolist(), k
        assert t[k].stride() == tuple(s // v.itemsize for s in v.strides), k
    assert t["perm"].untyped_storage().data_ptr() == t["a"].untyped_storage().data_ptr()
    assert t["f_t"].untyped_storage().data_ptr() == t["f"].untyped_storage().data_ptr()
    back = _dg_load(_bytes_of(t, torch.save))
    for k, v in views.items():
        assert back[k].numpy().tolist() == v.tolist() and back[k].numpy().strides == v.strides, k
    assert np.shares_memory(back["a"].numpy(), back["bcast"].numpy())

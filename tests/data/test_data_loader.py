"""``duograd.utils.data``: datasets, ``random_split``, samplers and ``DataLoader``, against
torch's (lengths, sizes, batches, errors), and the worker processes (the same batches as
``num_workers=0``, errors surfacing with the worker and the index, no process left behind).
The worker tests are few and small: each starts two processes by fork."""

from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

import duograd as dg
from duograd.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                                RandomSampler, SequentialSampler, Subset, SubsetRandomSampler,
                                TensorDataset, WeightedRandomSampler, get_worker_info, random_split)


def _ds(n: int = 10, lib=dg) -> TensorDataset:
    return (TensorDataset if lib is dg else lib.utils.data.TensorDataset)(
        lib.arange(2 * n, dtype=lib.float64).reshape(n, 2), lib.arange(n))


class Squares(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple:
        if not 0 <= i < self.n:
            raise IndexError(f"Squares: index {i} out of range")
        return dg.tensor([float(i), float(i * i)]), i


class Failing(Squares):
    def __getitem__(self, i: int) -> tuple:
        if i == 5:
            raise ValueError("sample 5 is corrupt")
        return super().__getitem__(i)


class Stream(IterableDataset):
    """0 .. n-1, each worker taking every num_workers-th (torch's sharding idiom)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        r = range(self.n)
        if info is not None:
            r = r[info.id::info.num_workers]
        return iter([float(i) for i in r])

    def __len__(self) -> int:
        return self.n


class Seeded(Dataset):
    """Each sample: the worker's id and seed and a draw from duograd's default generator."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> tuple:
        info = get_worker_info()
        return info.id, info.seed, dg.rand(()).item()


# ---------------------------------------------------------------- datasets

def test_tensor_pickles_as_values_and_requires_grad() -> None:
    x = dg.tensor([[1.0, 2.0]], requires_grad=True)
    for t in (x, x * 2, dg.arange(3, dtype=dg.int32), dg.nn.Parameter(dg.ones(2))):
        u = pickle.loads(pickle.dumps(t))
        assert type(u) is type(t) and u.dtype == t.dtype and u.tolist() == t.tolist()
        assert u.requires_grad == t.requires_grad and u.is_leaf


def test_datasets_index_and_length() -> None:
    ds = _ds(5)
    assert len(ds) == 5 and ds[-1][1].item() == 4 and ds[2][0].tolist() == [4.0, 5.0]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        ds[5]
    sub = Subset(ds, [4, 0, 2])
    assert len(sub) == 3 and [sub[i][1].item() for i in range(3)] == [4, 0, 2]
    with pytest.raises(IndexError, match="Subset: index 3"):
        sub[3]
    cat = ConcatDataset([ds, Squares(3)])
    assert len(cat) == 8 and cat[5][1] == 0 and cat[-1][1] == 2 and cat.cumulative_sizes == [5, 8]
    with pytest.raises(IndexError):
        cat[8]
    with pytest.raises(ValueError):
        cat[-9]
    assert len(ds + Squares(2)) == 7
    with pytest.raises(AssertionError, match="Size mismatch"):
        TensorDataset(dg.zeros(3), dg.zeros(4))


@pytest.mark.oracle
def test_dataset_errors_as_torch(torch) -> None:
    tu = torch.utils.data
    with pytest.raises(AssertionError):
        tu.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(ValueError):
        tu.ConcatDataset([list(range(3))])[-4]
    with pytest.raises(IndexError):
        tu.Subset(list(range(3)), [0, 1])[2]
    with pytest.raises(IndexError):
        _ds(5, torch)[5]
    with pytest.raises(IndexError):
        _ds(5)[5]


@pytest.mark.oracle
@pytest.mark.parametrize("n,lengths", [
    (10, [3, 7]), (10, [0.5, 0.5]), (10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (7, [0.1, 0.2, 0.7]),
    (5, [0.25, 0.25, 0.25, 0.25]), (3, [1.0]), (100, [0.33, 0.33, 0.34])])
def test_random_split_sizes_as_torch(torch, n, lengths) -> None:
    theirs = [len(s) for s in torch.utils.data.random_split(range(n), lengths)]
    parts = random_split(range(n), lengths, generator=dg.Generator().manual_seed(0))
    assert [len(s) for s in parts] == theirs
    assert sorted(i for p in parts for i in p) == list(range(n))  # a partition


@pytest.mark.oracle
def test_random_split_errors_as_torch(torch) -> None:
    for lengths in ([3, 3], [0.5, 0.6], [1.2, -0.2]):
        with pytest.raises(ValueError):
            torch.utils.data.random_split(range(10), lengths)
        with pytest.raises(ValueError):
            random_split(range(10), lengths)


def test_random_split_is_reproducible_with_a_generator() -> None:
    a = [list(s) for s in random_split(range(20), [0.5, 0.5], generator=dg.Generator().manual_seed(4))]
    b = [list(s) for s in random_split(range(20), [0.5, 0.5], generator=dg.Generator().manual_seed(4))]
    assert a == b


# ---------------------------------------------------------------- samplers

@pytest.mark.oracle
def test_sampler_lengths_and_coverage_as_torch(torch) -> None:
    tu = torch.utils.data
    data = list(range(7))
    pairs = [(SequentialSampler(data), tu.SequentialSampler(data)),
             (RandomSampler(data), tu.RandomSampler(data)),
             (RandomSampler(data, num_samples=17), tu.RandomSampler(data, num_samples=17)),
             (RandomSampler(data, True, 3), tu.RandomSampler(data, True, 3)),
             (SubsetRandomSampler([1, 5, 6]), tu.SubsetRandomSampler([1, 5, 6])),
             (WeightedRandomSampler([0.1, 0.9, 0.0], 5), tu.WeightedRandomSampler([0.1, 0.9, 0.0], 5)),
             (WeightedRandomSampler([1.0, 2.0, 3.0], 3, False), tu.WeightedRandomSampler([1.0, 2.0, 3.0], 3, False))]
    for ours, theirs in pairs:
        assert len(ours) == len(theirs) == len(list(ours))
    assert list(SequentialSampler(data)) == list(tu.SequentialSampler(data))
    assert sorted(RandomSampler(data)) == data
    many = list(RandomSampler(data, num_samples=17))  # two whole permutations and 3 more
    assert sorted(many[:7]) == sorted(many[7:14]) == data and len(set(many[14:])) == 3
    assert sorted(SubsetRandomSampler([1, 5, 6])) == [1, 5, 6]
    assert 2 not in list(WeightedRandomSampler([0.1, 0.9, 0.0], 50))
    assert sorted(WeightedRandomSampler([1.0, 2.0, 3.0], 3, False)) == [0, 1, 2]
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (2, 5, True), (0, 2, False)]:
        ours, theirs = BatchSampler(range(n), bs, drop), tu.BatchSampler(range(n), bs, drop)
        assert len(ours) == len(theirs) and list(ours) == list(theirs)


@pytest.mark.oracle
def test_sampler_errors_as_torch(torch) -> None:
    tu = torch.utils.data
    import duograd.utils.data as du
    cases = [lambda m: m.RandomSampler(range(3), num_samples=0),
             lambda m: m.RandomSampler(range(3), num_samples=-2),
             lambda m: m.RandomSampler(range(3), replacement=1),
             lambda m: m.WeightedRandomSampler([1.0, 2.0], 0),
             lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2),
             lambda m: m.BatchSampler(range(3), 0, False),
             lambda m: m.BatchSampler(range(3), 2, 1)]
    for make in cases:
        with pytest.raises(Exception) as te:
            make(tu)
        with pytest.raises(te.type):
            make(du)
    # drawing more than there are without replacement
    with pytest.raises(RuntimeError):
        list(tu.WeightedRandomSampler([1.0, 2.0], 3, replacement=False))
    with pytest.raises(RuntimeError, match="without replacement"):
        list(du.WeightedRandomSampler([1.0, 2.0], 3, replacement=False))


def test_random_sampler_generator_reproduces_and_default_moves() -> None:
    g = dg.Generator().manual_seed(1)
    a = list(RandomSampler(range(9), generator=g))
    assert list(RandomSampler(range(9), generator=g.manual_seed(1))) == a
    dg.manual_seed(5)
    b = list(RandomSampler(range(9)))
    dg.manual_seed(5)
    assert list(RandomSampler(range(9))) == b


# ---------------------------------------------------------------- the loader, one process

@pytest.mark.oracle
@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, False), (4, 8, False),
                                       (4, 8, True), (1, 1, False)])
def test_loader_batches_and_len_as_torch(torch, n, bs, drop) -> None:
    ours = DataLoader(_ds(n), batch_size=bs, drop_last=drop)
    theirs = torch.utils.data.DataLoader(_ds(n, torch), batch_size=bs, drop_last=drop)
    assert len(ours) == len(theirs)
    got, want = list(ours), list(theirs)
    assert len(got) == len(want)
    for (x, y), (tx, ty) in zip(got, want):
        assert x.shape == tuple(tx.shape) and x.tolist() == tx.tolist() and y.tolist() == ty.tolist()
        assert str(ty.dtype) == f"torch.{y.dtype}"


@pytest.mark.oracle
def test_loader_len_and_options_as_torch(torch) -> None:
    tu = torch.utils.data
    import duograd.utils.data as du
    for kw in [dict(batch_size=None), dict(batch_size=4, shuffle=True),
               dict(batch_sampler=[[0, 1], [2]]), dict(sampler=[3, 1, 2], batch_size=2)]:
        assert len(du.DataLoader(list(range(7)), **kw)) == len(tu.DataLoader(list(range(7)), **kw))
    for ds_of, kw in [(lambda m: Stream(7) if m is du else _TorchStream(7), dict(batch_size=3)),
                      (lambda m: Stream(7) if m is du else _TorchStream(7), dict(batch_size=3, drop_last=True))]:
        assert len(du.DataLoader(ds_of(du), **kw)) == len(tu.DataLoader(ds_of(tu), **kw))
    bad = [dict(shuffle=True, sampler=[0, 1]), dict(batch_sampler=[[0]], batch_size=2),
           dict(batch_sampler=[[0]], drop_last=True), dict(num_workers=-1), dict(timeout=-1),
           dict(prefetch_factor=2), dict(persistent_workers=True), dict(batch_size=None, drop_last=True)]
    for kw in bad:
        with pytest.raises(ValueError):
            tu.DataLoader(list(range(4)), **kw)
        with pytest.raises(ValueError):
            du.DataLoader(list(range(4)), **kw)
    with pytest.raises(ValueError):
        tu.DataLoader(_TorchStream(3), shuffle=True)
    with pytest.raises(ValueError):
        du.DataLoader(Stream(3), shuffle=True)


class _TorchStream:
    """Stream(n) for torch (built lazily: torch is optional)."""

    def __new__(cls, n: int):
        import torch.utils.data as tu

        class S(tu.IterableDataset):
            def __iter__(self):
                info = tu.get_worker_info()
                r = range(n)
                if info is not None:
                    r = r[info.id::info.num_workers]
                return iter([float(i) for i in r])

            def __len__(self):
                return n
        return S()


def test_shuffled_epochs_cover_every_index_once() -> None:
    loader = DataLoader(_ds(11), batch_size=4, shuffle=True, generator=dg.Generator().manual_seed(2))
    epochs = [[i for _, y in loader for i in y.tolist()] for _ in range(3)]
    for e in epochs:
        assert sorted(e) == list(range(11))
    assert epochs[0] != epochs[1]  # a new order each epoch
    dropped = [len(y) for _, y in DataLoader(_ds(11), batch_size=4, shuffle=True, drop_last=True)]
    assert dropped == [4, 4]


def test_loader_without_batching_and_with_a_collate_fn() -> None:
    samples = list(DataLoader([np.array([1, 2]), np.array([3, 4])], batch_size=None))
    assert [s.tolist() for s in samples] == [[1, 2], [3, 4]] and isinstance(samples[0], dg.Tensor)
    sums = list(DataLoader(list(range(6)), batch_size=2, collate_fn=sum))
    assert sums == [1, 5, 9]


def test_loader_index_out_of_range_is_a_clear_error() -> None:
    with pytest.raises(IndexError, match="index 10 is out of range"):
        list(DataLoader(_ds(10), sampler=[0, 10], batch_size=2))


# ---------------------------------------------------------------- the loader, worker processes

def _children() -> list:
    import multiprocessing
    return multiprocessing.active_children()


def _alive(procs) -> list:
    return [p for p in procs if p.is_alive()]


def test_workers_give_the_same_batches_as_the_main_process() -> None:
    def run(workers):
        loader = DataLoader(Squares(13), batch_size=3, shuffle=True, num_workers=workers,
                            generator=dg.Generator().manual_seed(7))
        return [(x.tolist(), y.tolist()) for x, y in loader]
    assert run(0) == run(2)
    # persistent workers: the same over two epochs as fresh loaders, and kept alive between them
    loader = DataLoader(Squares(7), batch_size=2, num_workers=2, persistent_workers=True)
    first = [y.tolist() for _, y in loader]
    procs = loader._iterator._workers.procs
    assert len(_alive(procs)) == 2
    assert [y.tolist() for _, y in loader] == first == [[0, 1], [2, 3], [4, 5], [6]]
    loader._iterator._shutdown()
    assert not _alive(procs)


@pytest.mark.oracle
def test_iterable_dataset_with_workers_as_torch(torch) -> None:
    ours = [b.tolist() for b in DataLoader(Stream(9), batch_size=2, num_workers=2)]
    theirs = [b.tolist() for b in torch.utils.data.DataLoader(_TorchStream(9), batch_size=2, num_workers=2)]
    assert ours == theirs
    # unsharded, each worker yields the whole stream (torch's behaviour: duplicates)
    class Whole(IterableDataset):
        def __iter__(self):
            return iter([1.0, 2.0])
    got = sorted(DataLoader(Whole(), batch_size=None, num_workers=2))
    assert got == [1.0, 1.0, 2.0, 2.0]


def test_worker_error_names_the_worker_and_the_index_and_stops_the_workers() -> None:
    it = iter(DataLoader(Failing(8), batch_size=2, num_workers=2))
    procs = it._workers.procs
    with pytest.raises(ValueError) as e:
        list(it)
    msg = str(e.value)
    assert "DataLoader worker process 0" in msg and "sample index 5" in msg and "sample 5 is corrupt" in msg
    assert not _alive(procs)


def test_workers_are_stopped_on_early_stop_collection_and_interrupt() -> None:
    it = iter(DataLoader(Squares(20), batch_size=2, num_workers=2))
    next(it)
    procs = it._workers.procs
    del it
    gc.collect()
    assert not _alive(procs)

    class Interrupting:  # a sampler that the user interrupts in the main process
        def __iter__(self):
            yield from range(6)
            raise KeyboardInterrupt

        def __len__(self):
            return 6
    it = iter(DataLoader(Squares(10), sampler=Interrupting(), batch_size=1, num_workers=2, prefetch_factor=1))
    procs = it._workers.procs
    with pytest.raises(KeyboardInterrupt):
        list(it)
    assert not _alive(procs)
    # interrupted while the first batches are asked for (inside iter())
    loader = DataLoader(Squares(10), sampler=Interrupting(), batch_size=1, num_workers=2, prefetch_factor=4)
    before = set(_children())
    with pytest.raises(KeyboardInterrupt):
        iter(loader)
    assert not [p for p in _children() if p not in before]


def test_worker_seeds_info_and_init_fn() -> None:
    def run():
        loader = DataLoader(Seeded(), batch_size=None, num_workers=2, generator=dg.Generator().manual_seed(3),
                            worker_init_fn=_init)
        return [(int(w), int(s), float(v)) for w, s, v in loader]
    a, b = run(), run()
    assert a == b  # seeded from the loader's generator: reproducible
    assert [w for w, _, _ in a] == [0, 1, 0, 1]
    seeds = {w: s for w, s, _ in a}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker id, as torch


def _init(worker_id: int) -> None:
    info = get_worker_info()
    assert info is not None and info.id == worker_id and info.num_workers == 2


def test_worker_init_error_surfaces() -> None:
    def bad_init(worker_id):
        raise OSError("no such file")
    with pytest.raises(OSError, match="while starting"):
        list(DataLoader(Squares(4), num_workers=2, worker_init_fn=bad_init))
    assert get_worker_info() is None  # the main process is no worker


class Stuck(Squares):
    def __getitem__(self, i: int) -> tuple:
        if get_worker_info() is not None and i == 1:
            import threading
            threading.Event().wait()  # never set: the worker hangs (it is terminated)
        return super().__getitem__(i)


def test_timeout_raises_and_stops_a_hung_worker() -> None:
    it = iter(DataLoader(Stuck(4), batch_size=None, num_workers=2, timeout=0.3))
    procs = it._workers.procs
    assert next(it)[1] == 0
    with pytest.raises(RuntimeError, match="timed out after 0.3 seconds"):
        next(it)
    assert not _alive(procs)


_INTERRUPTED_PROGRAM = """
import sys, threading
import duograd as dg
from duograd.utils.data import DataLoader, Dataset, get_worker_info

class Hangs(Dataset):
    def __len__(self):
        return 8
    def __getitem__(self, i):
        if i >= 2:
            threading.Event().wait()  # the worker hangs until it is stopped
        return i

try:
    it = iter(DataLoader(Hangs(), batch_size=None, num_workers=2))
    next(it)
    print(" ".join(str(p.pid) for p in it._workers.procs), flush=True)
    next(it); next(it)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    raise
"""


def test_ctrl_c_in_the_main_process_stops_the_workers() -> None:
    """SIGINT to the whole process group (what Ctrl-C in a terminal sends): the main process
    gets KeyboardInterrupt, the workers ignore it and are stopped, none is left."""
    import os
    import signal
    import subprocess
    import sys
    import time
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_PROGRAM], cwd=root, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        pids = [int(p) for p in child.stdout.readline().split()]
        assert len(pids) == 2, child.stderr.read()
        os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert "interrupted" in out and "KeyboardInterrupt" in err
    deadline = time.monotonic() + 5
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if os.path.exists(f"/proc/{p}") and "Z" not in _state(p)]
    assert not alive, f"worker processes left behind: {alive}"


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0]
    except OSError:
        return "Z"

"""The data loader, as ``torch.utils.data.DataLoader``: batches from a dataset, read in
the main process (``num_workers=0``) or by worker processes (``num_workers > 0``).

How the workers run (``multiprocessing``, the platform's default start method unless
``multiprocessing_context`` says otherwise): the main process walks the sampler and sends
each batch's indices to the workers in turn (at most ``prefetch_factor`` batches ahead per
worker); a worker reads the samples, collates them and sends the batch back (pickled: a
Tensor pickles as its values and ``requires_grad``); the main process hands the batches out
in the order it sent them. So a map-style dataset gives the same batches in the same order
with any ``num_workers``. An ``IterableDataset`` is iterated by each worker in full (shard
it with ``get_worker_info()``); the batches of the workers come out in turn.

A worker's exception is raised in the main process with the worker, the index and the
worker's traceback in its message. The workers are stopped (asked, then terminated) when an
epoch ends, when iteration stops early and the iterator is collected, on an error or a
``KeyboardInterrupt`` in the main process, and at interpreter exit; a worker whose parent
died exits by itself.

>>> import duograd as dg
>>> from duograd.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(dg.arange(10.0), dg.arange(10))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=4)]
[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
>>> len(DataLoader(ds, batch_size=4, drop_last=True))
2
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import random as _pyrandom
import signal
import time
import traceback
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from ... import random as _random
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo"]


# Tensors cross to and from the workers by pickling (``Tensor.__reduce_ex__``, as torch's: a
# leaf's values, class, requires_grad and .grad).


# ---------------------------------------------------------------- worker information

@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its ``id`` (0 ..
    ``num_workers`` - 1), ``num_workers``, its ``seed`` and its copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a data loader's worker process, its ``WorkerInfo``; in the main process, None.

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class _WorkerError:
    """A worker's exception, as it travels to the main process (the exception object itself
    may not pickle)."""

    def __init__(self, exc: BaseException, worker_id: int, where: str) -> None:
        self.exc_type = type(exc)
        self.where = where
        self.message = (f"Caught {type(exc).__name__} in DataLoader worker process {worker_id}"
                        f"{where}.\nOriginal Traceback (most recent call last):\n"
                        + "".join(traceback.format_exception(exc)[1:]))

    def reraise(self) -> None:
        try:
            err = self.exc_type(self.message)
        except Exception:
            err = RuntimeError(self.message)
        if isinstance(err, KeyError):  # KeyError's str() is the repr of its argument
            err = RuntimeError(self.message)
        raise err


def _fetch_map(dataset: Any, payload: Any, auto_collation: bool, collate_fn: Callable) -> Any:
    """One batch (or sample) of a map-style dataset; an error names the index it was at."""
    if not auto_collation:
        try:
            sample = dataset[payload]
        except Exception as e:
            e._dg_index = payload  # type: ignore[attr-defined]
            raise
        return collate_fn(sample)
    samples = []
    for i in payload:
        try:
            samples.append(dataset[i])
        except Exception as e:
            e._dg_index = i  # type: ignore[attr-defined]
            raise
    return collate_fn(samples)


class _IterableFetcher:
    """Reads an iterable dataset batch by batch; ``None`` when it has ended."""

    _END = object()

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable, batch_size: int | None,
                 drop_last: bool) -> None:
        self.it = iter(dataset)
        self.auto, self.collate_fn, self.batch_size, self.drop_last = (auto_collation, collate_fn,
                                                                       batch_size, drop_last)
        self.ended = False

    def fetch(self) -> Any:
        if self.ended:
            return self._END
        if not self.auto:
            try:
                return self.collate_fn(next(self.it))
            except StopIteration:
                self.ended = True
                return self._END
        batch = list(itertools.islice(self.it, self.batch_size))
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            self.ended = True
            return self._END
        if len(batch) < self.batch_size:
            self.ended = True
        return self.collate_fn(batch)


def _seed_worker(seed: int) -> None:
    _random.default_generator.manual_seed(seed)
    _pyrandom.seed(seed)
    np.random.seed(seed % (2 ** 32))


def _worker_loop(dataset: Any, iterable: bool, auto_collation: bool, collate_fn: Callable,
                 batch_size: int | None, drop_last: bool, index_queue: Any, result_queue: Any,
                 worker_id: int, num_workers: int, seed: int, init_fn: Callable | None,
                 parent_pid: int) -> None:
    """The body of one worker process: tasks come on ``index_queue`` as ``("task", epoch,
    send_idx, payload)`` or ``("reset", epoch)``, ``None`` stops it; results go back as
    ``(epoch, send_idx, worker_id, kind, data)`` with kind "ok", "end" or "error"."""
    global _worker_info
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    _seed_worker(seed)
    epoch = 0
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = (_IterableFetcher(dataset, auto_collation, collate_fn, batch_size, drop_last)
                   if iterable else None)
    except Exception as e:
        result_queue.put((epoch, -1, worker_id, "error", _WorkerError(e, worker_id, " (while starting)")))
        return  # (exiting joins the queue's feeder: the error gets through before the process ends)
    while True:
        try:
            msg = index_queue.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent_pid:  # the main process is gone: nobody to serve
                break
            continue
        if msg is None:
            break
        if msg[0] == "reset":
            epoch = msg[1]
            if iterable:
                fetcher = None
            continue
        _, epoch, idx, payload = msg
        try:
            if iterable:
                if fetcher is None:
                    fetcher = _IterableFetcher(dataset, auto_collation, collate_fn, batch_size, drop_last)
                data = fetcher.fetch()
                if data is _IterableFetcher._END:
                    result_queue.put((epoch, idx, worker_id, "end", None))
                    continue
            else:
                data = _fetch_map(dataset, payload, auto_collation, collate_fn)
            result_queue.put((epoch, idx, worker_id, "ok", data))
        except Exception as e:
            at = getattr(e, "_dg_index", None)
            where = f" (fetching sample index {at!r} of batch {payload!r})" if at is not None else \
                (f" (collating the batch of indices {payload!r})" if not iterable else
                 " (iterating the IterableDataset)")
            result_queue.put((epoch, idx, worker_id, "error", _WorkerError(e, worker_id, where)))
    result_queue.cancel_join_thread()  # exiting: do not wait for the pipe to drain


# ---------------------------------------------------------------- the iterators

class _SingleProcessIter:
    """Batches read in the main process."""

    def __init__(self, loader: "DataLoader") -> None:
        self._loader = loader
        self._base_seed = loader._draw_base_seed()
        if loader._iterable:
            self._fetcher = _IterableFetcher(loader.dataset, loader._auto_collation, loader.collate_fn,
                                             loader.batch_size, loader.drop_last)
        else:
            self._indices = iter(loader._index_sampler)

    def __iter__(self) -> "_SingleProcessIter":
        return self

    def __next__(self) -> Any:
        ld = self._loader
        if ld._iterable:
            data = self._fetcher.fetch()
            if data is _IterableFetcher._END:
                raise StopIteration
            return data
        payload = next(self._indices)
        return _fetch_map(ld.dataset, payload, ld._auto_collation, ld.collate_fn)

    def __len__(self) -> int:
        return len(self._loader)


class _Workers:
    """The worker processes and their queues; ``shutdown`` stops them (idempotent). Held by
    the iterator, and by a ``weakref.finalize`` of it, so collection or exit stops them."""

    def __init__(self, loader: "DataLoader", base_seed: int) -> None:
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self.result_queue = ctx.Queue()
        self.index_queues, self.procs = [], []
        self.down = False
        for wid in range(loader.num_workers):
            iq = ctx.Queue()
            p = ctx.Process(target=_worker_loop, daemon=True,
                            args=(loader.dataset, loader._iterable, loader._auto_collation,
                                  loader.collate_fn, loader.batch_size, loader.drop_last, iq,
                                  self.result_queue, wid, loader.num_workers, base_seed + wid,
                                  loader.worker_init_fn, os.getpid()))
            p.start()
            self.index_queues.append(iq)
            self.procs.append(p)

    def shutdown(self) -> None:
        if self.down:
            return
        self.down = True
        for iq in self.index_queues:
            try:
                iq.put(None)
            except Exception:  # (a queue already closed)
                pass
        deadline = time.monotonic() + 0.5  # idle workers stop at once
        for p in self.procs:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.terminate()
                p.join(timeout=1.0)
            if p.is_alive():
                p.kill()
                p.join()
        for q in (*self.index_queues, self.result_queue):
            q.cancel_join_thread()
            q.close()


class _MultiProcessIter:
    """Batches read by worker processes, handed out in the order they were asked for."""

    def __init__(self, loader: "DataLoader") -> None:
        self._loader = loader
        self._base_seed = loader._draw_base_seed()
        self._workers = _Workers(loader, self._base_seed)
        self._finalizer = weakref.finalize(self, self._workers.shutdown)
        self._epoch = 0
        try:
            self._start_epoch()
        except BaseException:  # the sampler failed or was interrupted: stop the new workers
            self._shutdown()
            raise

    def _start_epoch(self) -> None:
        ld = self._loader
        self._indices = None if ld._iterable else iter(ld._index_sampler)
        self._active = [True] * ld.num_workers
        self._next_worker = 0
        self._send_idx = 0    # the next batch to ask for
        self._rcvd_idx = 0    # the next batch to hand out
        self._owner: dict[int, int] = {}   # batch -> the worker asked for it
        self._ready: dict[int, tuple] = {}  # batches that came back early
        self._exhausted = False
        for _ in range(ld.prefetch_factor * ld.num_workers):
            self._ask()

    def _reset(self) -> None:
        """A new epoch on the same (persistent) workers."""
        self._epoch += 1
        if self._loader._iterable:
            for iq in self._workers.index_queues:
                iq.put(("reset", self._epoch))
        try:
            self._start_epoch()
        except BaseException:
            self._shutdown()
            raise

    def _ask(self) -> None:
        """Send the next batch's task to the next worker that is still going."""
        if self._exhausted or not any(self._active):
            return
        payload = None
        if self._indices is not None:
            try:
                payload = next(self._indices)
            except StopIteration:
                self._exhausted = True
                return
        n = len(self._active)
        while not self._active[self._next_worker]:
            self._next_worker = (self._next_worker + 1) % n
        wid = self._next_worker
        self._next_worker = (wid + 1) % n
        self._workers.index_queues[wid].put(("task", self._epoch, self._send_idx, payload))
        self._owner[self._send_idx] = wid
        self._send_idx += 1

    def _receive(self) -> tuple:
        """The next result of this epoch from any worker (waiting at most ``timeout``)."""
        timeout = self._loader.timeout
        start = time.monotonic()
        while True:
            wait = 0.5 if timeout <= 0 else max(0.0, min(0.5, start + timeout - time.monotonic()))
            try:
                epoch, idx, wid, kind, data = self._workers.result_queue.get(timeout=wait)
            except queue.Empty:
                dead = [p.pid for p in self._workers.procs if not p.is_alive()]
                if dead and self._workers.result_queue.empty():  # (what it sent before dying first)
                    time.sleep(0.05)
                if dead and self._workers.result_queue.empty():
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited "
                                       "unexpectedly") from None
                if timeout > 0 and time.monotonic() - start >= timeout:
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None
                continue
            if kind == "error" and idx == -1:  # a worker failed to start: fatal
                data.reraise()
            if epoch == self._epoch:
                return idx, wid, kind, data

    def __iter__(self) -> "_MultiProcessIter":
        return self

    def __next__(self) -> Any:
        try:
            return self._next()
        except StopIteration:
            if not self._loader.persistent_workers:
                self._shutdown()
            raise
        except BaseException:  # a worker's error, a timeout, KeyboardInterrupt: stop them all
            self._shutdown()
            raise

    def _next(self) -> Any:
        while True:
            if self._rcvd_idx in self._ready:
                kind, data = self._ready.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                self._ask()  # keep prefetch_factor batches asked ahead
                if kind == "end":
                    continue
                if kind == "error":
                    data.reraise()
                return data
            if self._rcvd_idx >= self._send_idx:
                raise StopIteration
            if self._workers.down:
                raise RuntimeError("DataLoader: the workers of this iterator have been shut down")
            idx, wid, kind, data = self._receive()
            if kind == "end":
                self._active[wid] = False
            self._ready[idx] = (kind, data)

    def _shutdown(self) -> None:
        self._finalizer()

    def __len__(self) -> int:
        return len(self._loader)

    def __del__(self) -> None:
        fin = getattr(self, "_finalizer", None)
        if fin is not None:
            fin()


# ---------------------------------------------------------------- the loader

class DataLoader:
    """Batches of ``dataset``, as ``torch.utils.data.DataLoader``.

    ``batch_size`` (default 1; None: no batching, each sample passed through
    ``default_convert``), ``shuffle`` (a ``RandomSampler`` drawing from ``generator``),
    ``sampler`` or ``batch_sampler`` (each exclusive of the options it replaces, as torch),
    ``collate_fn`` (default ``default_collate``), ``drop_last``, ``num_workers`` (worker
    processes; 0 reads in the main process), ``worker_init_fn(worker_id)`` (called in each
    worker after it is seeded with ``base_seed + worker_id``, the base seed drawn from
    ``generator`` once per iterator), ``prefetch_factor`` (batches asked ahead per worker,
    default 2), ``persistent_workers`` (keep the workers between epochs), ``timeout``
    (seconds to wait for a batch; 0 waits forever), ``pin_memory`` (accepted, no effect),
    ``multiprocessing_context`` (a start method name or a context).

    >>> import duograd as dg
    >>> from duograd.utils.data import TensorDataset
    >>> g = dg.Generator().manual_seed(0)
    >>> batches = list(DataLoader(TensorDataset(dg.arange(6)), batch_size=2, shuffle=True, generator=g))
    >>> sorted(i for (b,) in batches for i in b.tolist())
    [0, 1, 2, 3, 4, 5]
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator: _MultiProcessIter | None = None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _draw_base_seed(self) -> int:
        """The seed the workers' seeds are counted from: one draw from ``generator`` (or the
        default generator) per iterator, with or without workers, as torch."""
        return int(_random.as_rng(generator=self.generator).integers(0, 2 ** 62))

    def __iter__(self) -> Iterator:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None or self._iterator._workers.down:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset()
            return self._iterator
        return _MultiProcessIter(self)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # TypeError when the dataset has no length, as torch
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __repr__(self) -> str:
        return (f"DataLoader(dataset={type(self.dataset).__name__}, batch_size={self.batch_size}, "
                f"num_workers={self.num_workers})")


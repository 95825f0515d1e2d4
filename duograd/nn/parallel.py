"""``torch.nn.parallel``: the data-parallel wrappers as they behave with one device.

``DataParallel(module)`` on a machine without a GPU is what torch's is there: it keeps the
module as ``.module`` (so ``state_dict`` keys start with ``module.``) and its forward calls
the module's. ``DistributedDataParallel(module)`` does the same in this one process (torch's
needs an initialised process group, which duograd never has; wrapping lets a program
written for it run on one CPU), with ``no_sync()`` accepted. Gradients are the module's own:
with one replica there is nothing to average.

>>> import duograd as dg
>>> m = dg.nn.Linear(2, 1)
>>> dp = dg.nn.DataParallel(m)
>>> dp.module is m, list(dp.state_dict())
(True, ['module.weight', 'module.bias'])
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from .modules import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """``module`` on the one device there is: the forward passes through (see the module).

    >>> import duograd as dg
    >>> m = dg.nn.Linear(2, 1)
    >>> x = dg.ones(3, 2)
    >>> bool((dg.nn.DataParallel(m)(x) == m(x)).all())
    True
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """``module`` in one process: the forward passes through (see the module).

    >>> import duograd as dg
    >>> m = dg.nn.Linear(2, 1)
    >>> ddp = dg.nn.parallel.DistributedDataParallel(m)
    >>> with ddp.no_sync():
    ...     y = ddp(dg.ones(1, 2))
    >>> ddp.module is m, y.shape
    (True, (1, 1))
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, *args: Any, **kwargs: Any) -> None:
        # torch's other options (process_group, bucket_cap_mb, find_unused_parameters, ...) are
        # about communication between processes: accepted, and nothing to do with one process
        super().__init__()
        self.module = module
        self.device_ids = device_ids
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Nothing to postpone: one process has no gradients to synchronise."""
        yield

"""How many of torch 2.13's public names in ``torch.nn.functional``, ``torch.nn`` (module
classes), ``torch.optim`` (optimizers) and ``torch.optim.lr_scheduler`` (schedules)
duograd has, counted from torch's side (its ``dir()``); ``-v`` lists the missing ones.

    python -m experiments.torch_surface_counts [-v]     (from the repository root)

A name counts when ``getattr`` on duograd's namespace gives an object (a name that raises
``NotImplementedError`` or ``AttributeError`` does not count).
"""

from __future__ import annotations

import inspect
import sys

from duograd import nn as dnn
from duograd import optim as DO
from duograd.nn import functional as DF
from duograd.optim import lr_scheduler as DL


def public(mod: object, keep) -> list[str]:
    """The sorted public names of ``mod`` whose objects ``keep`` accepts.

    >>> import math
    >>> public(math, lambda o: o == math.pi)
    ['pi']
    """
    return sorted(n for n in dir(mod) if not n.startswith("_") and keep(getattr(mod, n)))


def has(mod: object, name: str) -> bool:
    """Whether ``mod.name`` gives an object (not an AttributeError or NotImplementedError).

    >>> from duograd import optim
    >>> has(optim, "LBFGS"), has(optim, "NoSuchOptimizer")
    (True, False)
    """
    try:
        return getattr(mod, name) is not None
    except (AttributeError, NotImplementedError):
        return False


def main(verbose: bool) -> None:
    """Print the four counts (and with ``verbose`` the missing names)."""
    import torch.nn as tnn  # (torch only here: the module imports without it)
    import torch.nn.functional as TF
    import torch.optim as TO
    import torch.optim.lr_scheduler as TL

    tables = [
        ("torch.nn.functional", public(TF, lambda o: callable(o) and not inspect.isclass(o)
                                       and not inspect.ismodule(o)), DF),
        ("torch.nn module classes", public(tnn, inspect.isclass), dnn),
        ("torch.optim optimizers", public(TO, lambda o: inspect.isclass(o) and issubclass(o, TO.Optimizer)
                                          and o is not TO.Optimizer), DO),
        ("torch.optim.lr_scheduler", sorted(set(public(TL, lambda o: inspect.isclass(o)
                                                       and issubclass(o, TL.LRScheduler)
                                                       and o is not TL.LRScheduler
                                                       and o.__module__.startswith("torch.optim")))
                                            | {"ReduceLROnPlateau"}), DL),
    ]
    for title, names, mod in tables:
        got = [n for n in names if has(mod, n)]
        print(f"{title}: {len(got)} of {len(names)}")
        if verbose:
            print("  missing:", ", ".join(n for n in names if n not in got) or "none")


if __name__ == "__main__":
    main("-v" in sys.argv)

"""A physics-informed network for the 1-D Poisson problem

    u''(x) = -pi^2 sin(pi x)  on [0, 1],   u(0) = u(1) = 0,

whose solution is sin(pi x). The network never sees that solution. It is trained
only on the equation's residual u'' + pi^2 sin(pi x) at collocation points, and u''
is obtained by differentiating the network twice with respect to its *input* with
``dg.grad(..., create_graph=True)``; the loss is then differentiated once more, with
respect to the weights. Every training step is therefore a third-order computation
through the engine.

Boundary conditions are built in, not penalised: the trial solution is

    u(x) = x (1 - x) N(x)

with N a tanh MLP, so u(0) = u(1) = 0 holds exactly whatever the weights are and the
loss has a single term (no weighting between a boundary penalty and the residual to
tune). tanh rather than relu because u'' must exist: relu's second derivative is 0.

Run ``python -m examples.pinn_poisson`` to train and print the error.

>>> from examples.pinn_poisson import train
>>> result = train(epochs=5, seed=0)
>>> sorted(result)
['epochs', 'loss', 'max_error', 'model', 'seconds']
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

import duograd as dg
from duograd import nn, optim
from duograd.optim import lr_scheduler

PI = math.pi


def source(x: np.ndarray | dg.Tensor):
    """The right-hand side's negation: u'' = -source(x), here pi^2 sin(pi x).

    >>> round(float(source(0.5)), 6)      # pi^2
    9.869604
    """
    return PI**2 * (PI * x).sin() if isinstance(x, dg.Tensor) else PI**2 * np.sin(PI * x)


def exact(x: np.ndarray) -> np.ndarray:
    """The solution, for measuring the error only (training never uses it).

    >>> exact(np.array([0.0, 0.5]))
    array([0., 1.])
    """
    return np.sin(PI * x)


def trial_solution(net: Callable[[dg.Tensor], dg.Tensor]) -> Callable[[dg.Tensor], dg.Tensor]:
    """u(x) = x (1 - x) net(x): zero at both ends for any weights.

    >>> import duograd as dg
    >>> u = trial_solution(lambda x: x * 0 + 5.0)
    >>> u(dg.tensor([[0.0], [0.5], [1.0]])).numpy().ravel()
    array([0.  , 1.25, 0.  ])
    """
    return lambda x: x * (1 - x) * net(x)


def second_derivative(u: Callable[[dg.Tensor], dg.Tensor], x: np.ndarray,
                      create_graph: bool = True) -> tuple[dg.Tensor, dg.Tensor]:
    """``(u(x), u''(x))`` at the points ``x`` (shape (m, 1)), by reverse mode twice.

    Each output row depends on its own input row only, so the gradient of the *sum*
    of the outputs is the derivative at every point at once; the same trick again
    gives u''. With ``create_graph`` u'' keeps its history, so a loss built on it can
    be differentiated with respect to the weights.

    >>> import numpy as np
    >>> _, d2 = second_derivative(lambda x: x ** 3, np.array([[1.0], [2.0]]))
    >>> d2.detach().numpy().ravel()
    array([ 6., 12.])
    """
    xt = dg.tensor(x, requires_grad=True)
    ux = u(xt)
    (du,) = dg.grad(ux.sum(), xt, create_graph=True)
    (d2u,) = dg.grad(du.sum(), xt, create_graph=create_graph)
    return ux, d2u


def residual_loss(u: Callable[[dg.Tensor], dg.Tensor], x: np.ndarray) -> dg.Tensor:
    """mean((u'' + pi^2 sin(pi x))^2) over the collocation points ``x``.

    >>> r = residual_loss(lambda x: x ** 2, np.array([[0.5]]))   # u'' = 2: residual 2 + pi^2
    >>> bool(np.isclose(float(r), (2 + PI**2) ** 2))
    True
    """
    _, d2u = second_derivative(u, x)
    r = d2u + source(dg.tensor(x))
    return (r * r).mean()


def collocation(m: int) -> np.ndarray:
    """m interior points, midpoints of a uniform grid on [0, 1], as a column.

    >>> collocation(4).ravel()
    array([0.125, 0.375, 0.625, 0.875])
    """
    return ((np.arange(m) + 0.5) / m).reshape(-1, 1)


def max_error(u: Callable[[dg.Tensor], dg.Tensor], n: int = 1001) -> float:
    """max |u(x) - sin(pi x)| over a fine grid of [0, 1], ends included.

    >>> max_error(lambda x: x * 0)       # u = 0 misses the peak of sin(pi x) by 1
    1.0
    """
    x = np.linspace(0.0, 1.0, n).reshape(-1, 1)
    with dg.no_grad():
        return float(np.max(np.abs(u(dg.tensor(x)).numpy() - exact(x))))


def train(epochs: int = 1500, seed: int = 0, width: int = 16, points: int = 64,
          lr: float = 1e-2, final_lr: float = 5e-4, log_every: int = 0) -> dict:
    """Fit u = x(1-x) N(x) to the Poisson residual with Adam and an exponentially
    decaying learning rate (from ``lr`` to ``final_lr`` over the run).

    Returns ``{"max_error", "loss", "model", "epochs", "seconds"}``: the max error
    against sin(pi x) on a fine grid, the final residual loss, the trained MLP, and
    the number of epochs and the wall time of the training loop.

    >>> r = train(epochs=3, seed=1, width=8, points=16)
    >>> r["epochs"], r["max_error"] > 0
    (3, True)
    """
    net = nn.MLP(1, [width, width, 1], activation="tanh", rng=seed)
    u = trial_solution(net)
    x = collocation(points)
    opt = optim.Adam(net.parameters(), lr=lr)
    sched = lr_scheduler.ExponentialLR(opt, gamma=(final_lr / lr) ** (1.0 / max(epochs, 1)))
    start = time.perf_counter()
    for epoch in range(epochs):
        opt.zero_grad()
        loss_t = residual_loss(u, x)
        loss_t.backward()
        opt.step()
        sched.step()
        if log_every and (epoch % log_every == 0 or epoch == epochs - 1):
            print(f"epoch {epoch:5d}  residual loss {float(loss_t):.3e}  "
                  f"max error {max_error(u):.3e}")
    seconds = time.perf_counter() - start
    # the loss at the final weights (each one in the loop was measured before its step)
    loss = float(residual_loss(u, x))
    return {"max_error": max_error(u), "loss": loss, "model": net, "epochs": epochs,
            "seconds": seconds}


def main() -> None:
    """Train with the default setting and print the error against sin(pi x)
    (``python -m examples.pinn_poisson``; a few seconds)."""
    result = train(log_every=250)
    print(f"max |u - sin(pi x)| on 1001 points: {result['max_error']:.2e}")
    print(f"final residual loss:                {result['loss']:.2e}")
    print(f"{result['epochs']} epochs in {result['seconds']:.1f} s")


if __name__ == "__main__":
    main()

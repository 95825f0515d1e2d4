"""The WGAN-GP gradient penalty: a loss on the gradient of a network.

A Wasserstein GAN's critic D should be 1-Lipschitz. WGAN-GP (Gulrajani et al., 2017)
asks for it softly: at random points x_hat on the segments between real and fake
samples it penalises the input gradient's norm for straying from 1,

    penalty = lam * mean_i (|| d D(x_hat_i) / d x_hat_i ||_2 - 1)^2.

The penalty is a function of a *gradient*, and training the critic needs the
penalty's gradient with respect to the critic's weights: a derivative of a
derivative. Here the input gradient is taken with ``dg.grad(..., create_graph=True)``,
which records that backward pass, and the weights' gradient comes from a second
reverse pass through it.

``penalty_and_grads`` works on plain NumPy weights with a critic built from raw
tensors (so it can be compared with PyTorch independently of ``duograd.nn``);
``main`` trains a ``duograd.nn.MLP`` critic for a few steps with ``duograd.optim.Adam``.

Run ``python -m examples.gradient_penalty``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

import duograd as dg

Critic = Callable[[dg.Tensor], dg.Tensor]


def raw_critic(params: Sequence[dg.Tensor]) -> Critic:
    """A tanh MLP from ``[W1, b1, W2, b2, ...]`` (W of shape (nin, nout)): tanh after
    every layer but the last, which returns one score per row.

    >>> import duograd as dg
    >>> d = raw_critic([dg.ones((2, 3)), dg.zeros(3), dg.ones((3, 1)), dg.zeros(1)])
    >>> d(dg.zeros((4, 2))).shape
    (4, 1)
    """
    pairs = list(zip(params[0::2], params[1::2]))

    def critic(x: dg.Tensor) -> dg.Tensor:
        for k, (w, b) in enumerate(pairs):
            x = x @ w + b
            if k < len(pairs) - 1:
                x = x.tanh()
        return x

    return critic


def interpolate(real: np.ndarray, fake: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """x_hat = alpha * real + (1 - alpha) * fake, one alpha per row.

    >>> import numpy as np
    >>> interpolate(np.ones((2, 2)), np.zeros((2, 2)), np.array([0.25, 1.0]))
    array([[0.25, 0.25],
           [1.  , 1.  ]])
    """
    alpha = np.asarray(alpha, dtype=float).reshape(-1, 1)
    return alpha * real + (1 - alpha) * fake


def gradient_penalty(critic: Critic, real: np.ndarray, fake: np.ndarray, alpha: np.ndarray,
                     lam: float = 10.0) -> dg.Tensor:
    """``lam * mean((||grad_x critic(x_hat)|| - 1)^2)`` at the interpolates, as a Tensor
    with history: differentiate it with respect to the critic's weights.

    Each score depends on its own row of x_hat only, so the gradient of the *sum* of
    the scores holds every row's input gradient at once.

    >>> import numpy as np
    >>> import duograd as dg
    >>> w = dg.tensor([[3.0], [4.0]], requires_grad=True)     # D(x) = 3 x1 + 4 x2: |grad| = 5
    >>> gp = gradient_penalty(lambda x: x @ w, np.zeros((2, 2)), np.ones((2, 2)), np.array([0.3, 0.6]))
    >>> float(gp)                                              # 10 * (5 - 1)^2
    160.0
    """
    x_hat = dg.tensor(interpolate(real, fake, alpha), requires_grad=True)
    scores = critic(x_hat)
    (g,) = dg.grad(scores.sum(), x_hat, create_graph=True)
    # NOTE: sqrt has no derivative at 0, so a row whose input gradient is exactly zero would
    # give nan; a tanh critic with nonzero weights does not produce one.
    norms = (g * g).sum(axis=1).sqrt()
    return lam * ((norms - 1) ** 2).mean()


def penalty_and_grads(weights: Sequence[np.ndarray], real: np.ndarray, fake: np.ndarray,
                      alpha: np.ndarray, lam: float = 10.0) -> tuple[float, list[np.ndarray]]:
    """The penalty for the tanh critic with NumPy ``weights`` ``[W1, b1, W2, b2, ...]``, and
    its gradient with respect to each of them (NumPy arrays of the weights' shapes).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ws = [rng.standard_normal(s) for s in [(2, 4), (4,), (4, 1), (1,)]]
    >>> value, grads = penalty_and_grads(ws, rng.standard_normal((3, 2)), rng.standard_normal((3, 2)),
    ...                                  rng.uniform(size=3))
    >>> [g.shape for g in grads]
    [(2, 4), (4,), (4, 1), (1,)]
    >>> float(grads[-1][0])        # the output bias cannot change the input gradient
    0.0
    """
    params = [dg.tensor(w, requires_grad=True) for w in weights]
    gp = gradient_penalty(raw_critic(params), real, fake, alpha, lam)
    # The last layer's bias shifts every score equally, so it never reaches the input
    # gradient: its share of the penalty's gradient is exactly zero.
    grads = dg.grad(gp, params, allow_unused=True)
    return float(gp), [np.zeros_like(w) if g is None else g.numpy() for g, w in zip(grads, weights)]


def sample_real(n: int, rng: np.random.Generator) -> np.ndarray:
    """The 'data': a Gaussian blob around (2, 2).

    >>> import numpy as np
    >>> sample_real(5, np.random.default_rng(0)).shape
    (5, 2)
    """
    return rng.normal(loc=2.0, scale=0.5, size=(n, 2))


def sample_fake(n: int, rng: np.random.Generator) -> np.ndarray:
    """A fixed, untrained 'generator': a wider Gaussian around the origin.

    >>> import numpy as np
    >>> sample_fake(5, np.random.default_rng(0)).shape
    (5, 2)
    """
    return rng.normal(loc=0.0, scale=1.0, size=(n, 2))


def main(steps: int = 200, batch: int = 64, lam: float = 10.0, seed: int = 0,
         log_every: int = 25) -> dict:
    """Train a critic (``nn.MLP`` 2 -> 32 -> 32 -> 1, tanh) with Adam on the WGAN-GP
    critic loss mean D(fake) - mean D(real) + penalty, and print the Wasserstein estimate,
    the penalty and the mean input-gradient norm. Returns the last step's numbers.

    >>> out = main(steps=2, log_every=0)
    >>> sorted(out)
    ['grad_norm', 'penalty', 'wasserstein']
    """
    from duograd import nn, optim

    rng = np.random.default_rng(seed)
    critic = nn.MLP(2, [32, 32, 1], activation="tanh", rng=seed)
    opt = optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    stats: dict = {}
    for step in range(steps):
        real, fake = sample_real(batch, rng), sample_fake(batch, rng)
        alpha = rng.uniform(size=batch)
        opt.zero_grad()
        w_est = critic(dg.tensor(real)).mean() - critic(dg.tensor(fake)).mean()
        gp = gradient_penalty(critic, real, fake, alpha, lam)
        loss = gp - w_est
        loss.backward()
        opt.step()
        # the input-gradient norm, measured without recording
        x_hat = dg.tensor(interpolate(real, fake, alpha), requires_grad=True)
        (g,) = dg.grad(critic(x_hat).sum(), x_hat)
        stats = {"wasserstein": float(w_est), "penalty": float(gp),
                 "grad_norm": float(np.sqrt((g.numpy() ** 2).sum(axis=1)).mean())}
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  W estimate {stats['wasserstein']:8.4f}  "
                  f"penalty {stats['penalty']:8.4f}  mean |grad_x D| {stats['grad_norm']:.4f}")
    if log_every:
        # For these two Gaussians W1 lies between |mean difference| = sqrt(8) (a lower bound)
        # and the closed-form W2 = sqrt(8 + 2 (1 - 0.5)^2) (an upper bound). The soft
        # penalty lets |grad D| exceed 1 a little, so a trained critic can overshoot.
        print(f"true W1 lies in [{np.sqrt(8):.3f}, {np.sqrt(8.5):.3f}]")
    return stats


if __name__ == "__main__":
    main()

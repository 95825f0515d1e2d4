"""jacrev of a 64 -> 64 tanh MLP's output with respect to its input: the median of 15 calls.

    python benchmarks/jacrev_vmap.py
    JAC_OUT=j.npy python benchmarks/jacrev_vmap.py    # also saves the Jacobian (to compare trees)
"""
import os
import statistics
import time

import numpy as np

import duograd as dg

rng = np.random.default_rng(0)
W1, W2 = dg.tensor(rng.standard_normal((64, 64)) / 8), dg.tensor(rng.standard_normal((64, 64)) / 8)
b1, b2 = dg.tensor(rng.standard_normal(64)), dg.tensor(rng.standard_normal(64))
x = dg.tensor(rng.standard_normal(64))


def mlp(x):
    return (W2 @ (W1 @ x + b1).tanh() + b2).tanh()


jac = dg.func.jacrev(mlp)
j = jac(x)
ts = []
for _ in range(15):
    t0 = time.perf_counter()
    jac(x)
    ts.append(time.perf_counter() - t0)
print(f"{dg.__file__}: jacrev 64->64 tanh MLP: median {statistics.median(ts) * 1e3:.2f} ms over 15")
if os.environ.get("JAC_OUT"):
    np.save(os.environ["JAC_OUT"], j.numpy())

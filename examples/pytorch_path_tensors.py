"""PyTorch's beginner path, step 1: fit y = a + b x + c x^2 + d x^3 to sin(x) on [-pi, pi]
with gradients written by hand, on tensors.

Written against torch; it runs unchanged with ``import duograd as torch`` (the only change),
which tests/nn_optim/test_pytorch_path.py checks. The coefficients start at zero (PyTorch's
tutorial draws them at random) so that the two runs can be compared number for number.
"""
import torch
import math

dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

a = torch.zeros((), device=device, dtype=dtype)
b = torch.zeros((), device=device, dtype=dtype)
c = torch.zeros((), device=device, dtype=dtype)
d = torch.zeros((), device=device, dtype=dtype)

lr = 1e-6
for step in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum().item()
    if step % 500 == 499:
        print(step, loss)

    # d loss / d y_pred, then the chain rule by hand for each coefficient
    g = 2.0 * (y_pred - y)
    grad_a = g.sum()
    grad_b = (g * x).sum()
    grad_c = (g * x ** 2).sum()
    grad_d = (g * x ** 3).sum()

    a -= lr * grad_a
    b -= lr * grad_b
    c -= lr * grad_c
    d -= lr * grad_d

coefficients = [a.item(), b.item(), c.item(), d.item()]
print(f"y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")

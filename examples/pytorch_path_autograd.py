"""PyTorch's beginner path, step 2: the same polynomial fit of sin(x), with autograd
computing the gradients and the coefficients updated in place under ``torch.no_grad()``.

Written against torch; it runs unchanged with ``import duograd as torch``.
"""
import torch
import math

dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

a = torch.zeros((), device=device, dtype=dtype, requires_grad=True)
b = torch.zeros((), device=device, dtype=dtype, requires_grad=True)
c = torch.zeros((), device=device, dtype=dtype, requires_grad=True)
d = torch.zeros((), device=device, dtype=dtype, requires_grad=True)

lr = 1e-6
for step in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if step % 500 == 499:
        print(step, loss.item())
    loss.backward()

    # The update must not be recorded, and must change a, b, c, d themselves (they stay the
    # leaves the next forward uses).
    with torch.no_grad():
        a -= lr * a.grad
        b -= lr * b.grad
        c -= lr * c.grad
        d -= lr * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

coefficients = [a.item(), b.item(), c.item(), d.item()]
print(f"y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")

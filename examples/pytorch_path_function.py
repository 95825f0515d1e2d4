"""PyTorch's beginner path, step 3: a custom autograd Function. The model is
y = a + b P3(c + d x), with P3(t) = (5 t^3 - 3 t) / 2 the Legendre polynomial of degree 3,
whose derivative is written by hand in ``backward``.

Written against torch; it runs unchanged with ``import duograd as torch``.
"""
import torch
import math


class Legendre3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return 0.5 * (5 * t ** 3 - 3 * t)

    @staticmethod
    def backward(ctx, grad_output):
        (t,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * t ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# A start close enough for this model to converge (the tutorial's own choice).
a = torch.tensor(0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.tensor(-1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.tensor(0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.tensor(0.3, device=device, dtype=dtype, requires_grad=True)

lr = 5e-6
for step in range(2000):
    y_pred = a + b * Legendre3.apply(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if step % 500 == 499:
        print(step, loss.item())
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= lr * p.grad
            p.grad = None

coefficients = [a.item(), b.item(), c.item(), d.item()]
print(f"y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")

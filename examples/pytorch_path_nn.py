"""PyTorch's beginner path, step 4: the polynomial as a linear layer over the features
(x, x^2, x^3), built from ``nn.Sequential``, ``nn.Linear`` and ``nn.Flatten``, with
``nn.MSELoss(reduction="sum")`` and an optimizer from ``torch.optim``.

Written against torch; it runs unchanged with ``import duograd as torch``. The layer starts
at zero (PyTorch's tutorial keeps its random start) so that the two runs compare.
"""
import torch
import math

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)          # (2000, 3): x, x^2, x^3

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1),
)
with torch.no_grad():                # a fixed start instead of the random one
    model[0].weight.zero_()
    model[0].bias.zero_()

loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)

for step in range(2000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if step % 500 == 499:
        print(step, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

linear_layer = model[0]
coefficients = [linear_layer.bias.item(), linear_layer.weight[:, 0].item(),
                linear_layer.weight[:, 1].item(), linear_layer.weight[:, 2].item()]
final_loss = loss.item()
print(f"y = {coefficients[0]} + {coefficients[1]} x + {coefficients[2]} x^2 + {coefficients[3]} x^3")

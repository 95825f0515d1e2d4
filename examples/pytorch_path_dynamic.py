"""PyTorch's beginner path, step 5: a custom ``nn.Module`` whose graph changes from one
forward to the next: after the cubic, it adds 0 to 2 further terms e x^4, e x^5, reusing the
same parameter e, a number drawn afresh each time.

Written against torch; it runs unchanged with ``import duograd as torch``. The draws come
from Python's ``random`` with a fixed seed, and the parameters start at zero, so the two runs
take the same path.
"""
import torch
import math
import random


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.zeros(()))
        self.b = torch.nn.Parameter(torch.zeros(()))
        self.c = torch.nn.Parameter(torch.zeros(()))
        self.d = torch.nn.Parameter(torch.zeros(()))
        self.e = torch.nn.Parameter(torch.zeros(()))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for k in range(4, random.randint(4, 6)):
            y = y + self.e * x ** k
        return y


random.seed(0)
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

model = DynamicNet()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for step in range(2000):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if step % 500 == 499:
        print(step, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

coefficients = [model.a.item(), model.b.item(), model.c.item(), model.d.item(), model.e.item()]
final_loss = loss.item()
print("y =", " + ".join(f"{v} x^{i}" for i, v in enumerate(coefficients)))

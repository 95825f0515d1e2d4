"""A sine-wave predictor in the style of PyTorch's time-sequence examples: two stacked
``nn.LSTMCell``s and a ``nn.Linear`` read a batch of phase-shifted sine waves one value at
a time and predict the next value; after the observed steps the model can keep going on
its own predictions (``future``). Trained with Adam on the mean squared error.

Written with torch's names only: the line ``import duograd as torch`` is the one place
that names the library, and ``tests/nn_optim/test_sine_lstm.py`` runs this same source
with real torch too (only that line changed), from the same initial weights, and compares
the losses step by step. Run it as ``python -m examples.sine_lstm``.
"""
import duograd as torch

HIDDEN = 16


def make_waves(batch=4, length=24, period=12.0):
    """A (batch, length) float64 tensor of sine waves, each shifted in phase."""
    t = torch.arange(length, dtype=torch.float64).unsqueeze(0)
    shift = torch.arange(batch, dtype=torch.float64).unsqueeze(1) * 2.5
    return torch.sin((t + shift) * (2 * 3.141592653589793 / period))


class SinePredictor(torch.nn.Module):
    def __init__(self, hidden=HIDDEN):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = torch.nn.LSTMCell(1, hidden)
        self.lstm2 = torch.nn.LSTMCell(hidden, hidden)
        self.linear = torch.nn.Linear(hidden, 1)

    def forward(self, waves, future=0):
        batch = waves.size(0)
        h1 = torch.zeros(batch, self.hidden, dtype=torch.float64)
        c1 = torch.zeros(batch, self.hidden, dtype=torch.float64)
        h2 = torch.zeros(batch, self.hidden, dtype=torch.float64)
        c2 = torch.zeros(batch, self.hidden, dtype=torch.float64)
        outputs = []
        output = None
        for t in range(waves.size(1)):
            h1, c1 = self.lstm1(waves[:, t:t + 1], (h1, c1))
            h2, c2 = self.lstm2(h1, (h2, c2))
            output = self.linear(h2)
            outputs.append(output)
        for _ in range(future):  # feed the model its own predictions
            h1, c1 = self.lstm1(output, (h1, c1))
            h2, c2 = self.lstm2(h1, (h2, c2))
            output = self.linear(h2)
            outputs.append(output)
        return torch.cat(outputs, dim=1)


def train(model, waves, steps=20, lr=0.01):
    """Train ``model`` to predict each next value of ``waves``; returns the losses."""
    inputs, targets = waves[:, :-1], waves[:, 1:]
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = torch.nn.MSELoss()
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main(steps=20):
    torch.manual_seed(0)
    model = SinePredictor().double()
    waves = make_waves()
    losses = train(model, waves, steps)
    with torch.no_grad():
        ahead = model(waves[:, :-1], future=10)
    print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f}; 10 steps ahead: {tuple(ahead.shape)}")
    return losses


if __name__ == "__main__":
    main()

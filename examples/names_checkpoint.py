"""A character-level name model in the style of makemore's MLP: a context of the previous
``BLOCK`` characters is embedded, flattened and passed through a tanh layer to the logits of
the next character. It is trained from a ``Dataset`` through a ``DataLoader`` with worker
processes, initialised with ``nn.init``, checkpointed with ``torch.save`` (model, optimizer and
step), resumed from ``torch.load``, and sampled with ``torch.multinomial``.

Written with torch's names only: the line ``import duograd as torch`` is the one place that
names the library, and ``tests/data/test_names_checkpoint.py`` runs this same source with real
torch too (only that line changed), and loads duograd's checkpoint into real torch. Run it as
``python -m examples.names_checkpoint``.
"""
import os
import tempfile

import duograd as torch
from duograd.utils.data import DataLoader, Dataset

NAMES = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn",
         "abigail", "emily", "ella", "elizabeth", "camila", "luna", "sofia", "avery", "mila",
         "aria", "scarlett", "penelope", "layla", "chloe", "victoria", "madison", "eleanor",
         "grace", "nora", "riley", "zoey", "hannah", "hazel", "lily", "ellie", "violet", "lillian"]
BLOCK = 3


class NamesDataset(Dataset):
    """Every (context, next character) pair of the names; '.' marks a name's start and end."""

    def __init__(self, names):
        chars = sorted(set("".join(names)))
        self.stoi = {c: i + 1 for i, c in enumerate(chars)}
        self.stoi["."] = 0
        self.itos = {i: c for c, i in self.stoi.items()}
        self.pairs = []
        for name in names:
            context = [0] * BLOCK
            for ch in name + ".":
                self.pairs.append((list(context), self.stoi[ch]))
                context = context[1:] + [self.stoi[ch]]

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        context, target = self.pairs[i]
        return torch.tensor(context), torch.tensor(target)

    @property
    def vocab_size(self):
        return len(self.stoi)


class CharMLP(torch.nn.Module):
    def __init__(self, vocab_size, n_embd=8, n_hidden=32):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab_size, n_embd)
        self.hidden = torch.nn.Linear(BLOCK * n_embd, n_hidden)
        self.head = torch.nn.Linear(n_hidden, vocab_size)
        torch.nn.init.normal_(self.wte.weight, std=0.5)
        torch.nn.init.xavier_uniform_(self.hidden.weight, gain=torch.nn.init.calculate_gain("tanh"))
        torch.nn.init.zeros_(self.hidden.bias)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)

    def forward(self, idx):
        x = self.wte(idx).flatten(1)
        return self.head(torch.tanh(self.hidden(x)))


def make_loader(dataset, num_workers=2, shuffle=False, seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    return DataLoader(dataset, batch_size=16, shuffle=shuffle, num_workers=num_workers,
                      generator=g, drop_last=True)


def train(model, opt, loader, steps, start=0):
    """``steps`` optimizer steps over the loader (epochs repeat); returns the losses."""
    losses, step = [], start
    while step < start + steps:
        for x, y in loader:
            if step == start + steps:
                break
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            step += 1
    return losses


def save_checkpoint(path, model, opt, step):
    torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": step}, path)


def resume(path, model, opt):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    opt.load_state_dict(checkpoint["optim"])
    return checkpoint["step"]


@torch.no_grad()
def sample(model, dataset, n=5, seed=1):
    g = torch.Generator()
    g.manual_seed(seed)
    out = []
    for _ in range(n):
        context, name = [0] * BLOCK, ""
        while len(name) < 20:
            probs = torch.softmax(model(torch.tensor([context])), dim=-1)
            ix = torch.multinomial(probs, num_samples=1, generator=g).item()
            if ix == 0:
                break
            name += dataset.itos[ix]
            context = context[1:] + [ix]
        out.append(name)
    return out


def main():
    torch.manual_seed(42)
    dataset = NamesDataset(NAMES)
    model = CharMLP(dataset.vocab_size).double()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loader = make_loader(dataset, shuffle=True)
    first = train(model, opt, loader, 30)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ckpt.pt")
        save_checkpoint(path, model, opt, 30)
        model2 = CharMLP(dataset.vocab_size).double()
        opt2 = torch.optim.Adam(model2.parameters(), lr=1e-2)
        step = resume(path, model2, opt2)
    later = train(model2, opt2, loader, 30, start=step)
    print(f"loss {first[0]:.3f} -> {first[-1]:.3f} -> {later[-1]:.3f}")
    print("samples:", ", ".join(sample(model2, dataset)))


if __name__ == "__main__":
    main()

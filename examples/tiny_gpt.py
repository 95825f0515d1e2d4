"""A tiny character-level causal language model, in the manner of minGPT: token and
position embeddings, a stack of pre-norm ``nn.TransformerEncoderLayer`` blocks under the
causal mask ``nn.Transformer.generate_square_subsequent_mask``, a final ``LayerNorm`` and a
linear head onto the characters, trained with AdamW on next-character prediction.

Written against torch; it runs unchanged with ``import duograd as torch``. Batches are
drawn with Python's ``random`` (seeded), so both libraries see the same data; the
test loads torch's initial weights into the duograd model and compares the 20 losses.
Run it as a program to train a little and sample greedily.
"""
import random

import torch

TEXT = (
    "the quick brown fox jumps over the lazy dog. the dog sleeps in the sun and the fox "
    "runs into the woods. a small model reads the text one character at a time and learns "
    "to guess the next one. "
)
CHARS = sorted(set(TEXT))
STOI = {c: i for i, c in enumerate(CHARS)}
VOCAB, BLOCK, D_MODEL, HEADS, LAYERS = len(CHARS), 16, 32, 4, 2
DTYPE = torch.float64


class TinyGPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, D_MODEL)
        self.pos = torch.nn.Embedding(BLOCK, D_MODEL)
        layer = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, dim_feedforward=4 * D_MODEL,
                                                 dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, num_layers=LAYERS,
                                                  enable_nested_tensor=False)
        self.ln_f = torch.nn.LayerNorm(D_MODEL)
        self.head = torch.nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t))
        mask = torch.nn.Transformer.generate_square_subsequent_mask(t, dtype=DTYPE)
        x = self.blocks(x, mask=mask, is_causal=True)
        return self.head(self.ln_f(x))


def make_model():
    return TinyGPT().to(DTYPE)


def get_batch(rng, batch_size=8):
    data = torch.tensor([STOI[c] for c in TEXT], dtype=torch.long)
    starts = [rng.randrange(len(TEXT) - BLOCK - 1) for _ in range(batch_size)]
    x = torch.stack([data[i:i + BLOCK] for i in starts])
    y = torch.stack([data[i + 1:i + BLOCK + 1] for i in starts])
    return x, y


def train(model, steps=20, lr=3e-3, seed=0):
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    losses = []
    model.train()
    for _ in range(steps):
        x, y = get_batch(rng)
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


def generate(model, prompt, n):
    model.eval()
    idx = torch.tensor([[STOI[c] for c in prompt]], dtype=torch.long)
    with torch.no_grad():
        for _ in range(n):
            logits = model(idx[:, -BLOCK:])
            nxt = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
            idx = torch.cat([idx, nxt], dim=1)
    return "".join(CHARS[i] for i in idx[0].tolist())


if __name__ == "__main__":
    torch.manual_seed(0)
    model = make_model()
    losses = train(model, steps=200)
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    print(generate(model, "the ", 40))

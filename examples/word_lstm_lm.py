"""A word-level language model in the style of PyTorch's word_language_model example: an
``nn.Embedding``, a 2-layer ``nn.LSTM`` with dropout between the layers, and a
``nn.Linear`` decoder whose weight is the embedding's (tied weights). The corpus is a
few built-in sentences, turned into one long stream of word ids and cut into ``batch``
columns; training runs truncated backpropagation through time (``bptt`` steps per
chunk, the hidden state carried from chunk to chunk and ``detach()``-ed so the graph
stops at the chunk's start), clips the gradient norm with
``nn.utils.clip_grad_norm_`` and takes plain SGD steps whose learning rate decays
(``optim.lr_scheduler.StepLR``).

Written with torch's names only: the line ``import duograd as torch`` is the one place
that names the library, and ``tests/nn_optim/test_word_lstm_lm.py`` runs this same source
with real torch too (only that line changed), from the same initial weights, and compares
the losses step by step. Run it as ``python -m examples.word_lstm_lm``.
"""
import duograd as torch

CORPUS = """
the cat sat on the mat . the dog sat on the log .
a cat and a dog met on the mat . the dog ran after the cat .
the cat ran up the tree and the dog sat under the tree .
a bird sat in the tree and sang . the cat looked at the bird .
the dog looked at the cat and the cat looked at the dog .
the bird flew over the mat and over the log and away .
"""


class Corpus:
    """The words of ``text`` as ids (in order of first appearance) and the vocabulary."""

    def __init__(self, text=CORPUS):
        self.words = []
        self.index = {}
        ids = []
        for word in text.split():
            if word not in self.index:
                self.index[word] = len(self.words)
                self.words.append(word)
            ids.append(self.index[word])
        self.ids = torch.tensor(ids, dtype=torch.int64)


def batchify(ids, batch):
    """Cut the stream of ids into ``batch`` columns: a (steps, batch) tensor."""
    steps = ids.size(0) // batch
    return ids[:steps * batch].view(batch, steps).t().contiguous()


def get_batch(source, i, bptt):
    """The inputs at rows i .. i+bptt-1 and, flattened, the words that follow each."""
    n = min(bptt, source.size(0) - 1 - i)
    return source[i:i + n], source[i + 1:i + 1 + n].reshape(-1)


class WordLM(torch.nn.Module):
    def __init__(self, ntoken, size=24, nlayers=2, dropout=0.2):
        super().__init__()
        self.ntoken, self.size, self.nlayers = ntoken, size, nlayers
        self.drop = torch.nn.Dropout(dropout)
        self.encoder = torch.nn.Embedding(ntoken, size)
        self.rnn = torch.nn.LSTM(size, size, nlayers, dropout=dropout)
        self.decoder = torch.nn.Linear(size, ntoken)
        self.decoder.weight = self.encoder.weight  # tied: the hidden size is the embedding's
        self.init_weights()

    def init_weights(self):
        torch.nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        torch.nn.init.zeros_(self.decoder.bias)

    def forward(self, inputs, hidden):
        emb = self.drop(self.encoder(inputs))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        return self.decoder(output).view(-1, self.ntoken), hidden

    def init_hidden(self, batch):
        weight = next(iter(self.parameters()))
        return (weight.new_zeros(self.nlayers, batch, self.size),
                weight.new_zeros(self.nlayers, batch, self.size))


def repackage_hidden(h):
    """The hidden state cut from its history (truncated backpropagation through time)."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train(model, corpus, steps=20, batch=4, bptt=6, lr=1.0, clip=0.5, gamma=0.9):
    """``steps`` SGD steps of truncated BPTT over the corpus (wrapping round at its end),
    the learning rate multiplied by ``gamma`` every 5 steps; returns the losses."""
    data = batchify(corpus.ids, batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=gamma)
    criterion = torch.nn.CrossEntropyLoss()
    model.train()
    hidden = model.init_hidden(batch)
    losses = []
    i = 0
    for _ in range(steps):
        if i >= data.size(0) - 1:
            i = 0
            hidden = model.init_hidden(batch)
        inputs, targets = get_batch(data, i, bptt)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(inputs, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        i += inputs.size(0)
    return losses


def main(steps=60):
    torch.manual_seed(0)
    corpus = Corpus()
    model = WordLM(len(corpus.words)).double()
    losses = train(model, corpus, steps)
    print(f"{len(corpus.words)} words, {corpus.ids.size(0)} tokens; "
          f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    return losses


if __name__ == "__main__":
    main()

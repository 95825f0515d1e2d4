"""A character-level language model of 88,799 US census surnames, from counting to attention.

The data is ``dist.all.last`` from the ``names`` package (the 1990 US census surname
file): every surname once, lowercased. Each name is read as a sequence of characters
closed by the end token ``.``, which also stands for "start" as the context of the first
letter, so the vocabulary is the 26 letters and ``.`` (27 symbols, ``.`` = 0). The split is
80/10/10 into train, dev and test by a fixed permutation (``SPLIT_SEED``); its checksum
goes into the measurements, so a reader can tell two runs used the same names.

Losses are negative log-likelihoods in nats per character: the mean over every predicted
symbol of a set, the closing ``.`` included.

The models, from the closed form to the learned:

1. **Counted bigram**: the maximum-likelihood table of P(next | previous) with add-one
   smoothing, computed by counting. Its dev NLL is the closed-form reference.
2. **Neural bigram**: a 27 x 27 table of logits, trained by gradient descent on the same
   counts plus one pseudo-count of every pair (add-one smoothing is exactly that
   regularisation: the smoothed table maximises the likelihood of the augmented counts),
   so its optimum *is* the counted table, and training must reach its NLL.

>>> words = ["ab", "b"]
>>> counts = bigram_counts(words)
>>> int(counts[0, encode("a")[0]]), int(counts.sum())   # '.'->a once; 5 pairs in all
(1, 5)
"""

from __future__ import annotations

import hashlib
import os
from typing import Sequence

import numpy as np

import duograd as dg
from duograd import optim
from duograd.nn import functional as F

ALPHABET = ".abcdefghijklmnopqrstuvwxyz"   # index 0, '.', closes every name and opens it
VOCAB = len(ALPHABET)
SPLIT_SEED = 1990                           # the census year: one fixed permutation
_INDEX = {c: i for i, c in enumerate(ALPHABET)}


def surnames_path() -> str:
    """Where the ``names`` package keeps the census surname file.

    >>> os.path.basename(surnames_path())
    'dist.all.last'
    """
    try:
        import names  # noqa: PLC0415  (an optional dependency: the `data` extra)
    except ImportError as e:
        raise ImportError("the surname data comes from the `names` package: "
                          "pip install 'names==0.3.0' (or pip install -e '.[data]')") from e
    return os.path.join(os.path.dirname(names.__file__), "dist.all.last")


def load_surnames(path: str | None = None) -> list[str]:
    """Every surname of the census file, lowercased, in the file's order (by frequency).

    >>> words = load_surnames()
    >>> len(words), words[:3]
    (88799, ['smith', 'johnson', 'williams'])
    """
    with open(path or surnames_path()) as f:
        words = [line.split()[0].lower() for line in f if line.strip()]
    bad = sorted({c for w in words for c in w} - set(ALPHABET[1:]))
    if bad:
        raise ValueError(f"load_surnames: characters outside a-z in the data: {bad}")
    return words


def split(words: Sequence[str], seed: int = SPLIT_SEED) -> dict[str, list[str]]:
    """Train, dev and test sets, 80/10/10, by one seeded permutation of ``words``.

    >>> parts = split([str(i) for i in range(10)])
    >>> [len(parts[k]) for k in ("train", "dev", "test")]
    [8, 1, 1]
    """
    order = np.random.default_rng(seed).permutation(len(words))
    n_train, n_dev = int(0.8 * len(words)), int(0.1 * len(words))
    pick = [words[i] for i in order]
    return {"train": pick[:n_train], "dev": pick[n_train:n_train + n_dev],
            "test": pick[n_train + n_dev:]}


def checksum(parts: dict[str, list[str]]) -> str:
    """SHA-256 of the split (each set's names, in order), to tell two splits apart.

    >>> checksum({"train": ["a"], "dev": [], "test": []})[:12]
    '43414c4a9626'
    """
    h = hashlib.sha256()
    for key in ("train", "dev", "test"):
        h.update(f"{key}:{','.join(parts[key])};".encode())
    return h.hexdigest()


def encode(word: str) -> list[int]:
    """The indices of ``word``'s characters.

    >>> encode("ab")
    [1, 2]
    """
    return [_INDEX[c] for c in word]


def bigram_pairs(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(previous, next) index pairs of every predicted symbol: '.' opens, '.' closes.

    >>> prev, nxt = bigram_pairs(["ab"])
    >>> prev.tolist(), nxt.tolist()
    ([0, 1, 2], [1, 2, 0])
    """
    prev: list[int] = []
    nxt: list[int] = []
    for w in words:
        seq = [0] + encode(w) + [0]
        prev.extend(seq[:-1])
        nxt.extend(seq[1:])
    return np.array(prev, dtype=np.int64), np.array(nxt, dtype=np.int64)


def bigram_counts(words: Sequence[str]) -> np.ndarray:
    """The 27 x 27 table of how often each symbol follows each other one (float64)."""
    prev, nxt = bigram_pairs(words)
    counts = np.zeros((VOCAB, VOCAB))
    np.add.at(counts, (prev, nxt), 1.0)
    return counts


def counted_bigram(counts: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """log P(next | previous) by counting, with add-``alpha`` smoothing: the closed form.

    >>> logp = counted_bigram(np.array([[1.0, 0.0], [0.0, 0.0]]))
    >>> np.exp(logp).tolist()
    [[0.6666666666666666, 0.3333333333333333], [0.5, 0.5]]
    """
    smoothed = counts + alpha
    return np.log(smoothed / smoothed.sum(axis=1, keepdims=True))


def nll(logp: np.ndarray, words: Sequence[str]) -> float:
    """Mean negative log-likelihood per predicted symbol of ``words`` under the bigram
    table ``logp`` (nats per character, the closing '.' included).

    >>> uniform = np.log(np.full((VOCAB, VOCAB), 1 / VOCAB))
    >>> bool(np.isclose(nll(uniform, ["ab"]), np.log(VOCAB)))
    True
    """
    prev, nxt = bigram_pairs(words)
    return float(-logp[prev, nxt].mean())


def train_neural_bigram(counts: np.ndarray, alpha: float = 1.0, steps: int = 300,
                        lr: float = 1.0) -> tuple[np.ndarray, list[float]]:
    """A 27 x 27 table of logits learned by gradient descent on the smoothed counts.

    The loss is the cross-entropy of the training pairs plus ``alpha`` pseudo-observations
    of every pair, per observation: ``-sum((C + alpha) * log_softmax(W)) / sum(C + alpha)``.
    Each row of W is a softmax regression whose optimum is the row of the add-``alpha``
    table, so the learned model converges to :func:`counted_bigram`. Adam with this rate
    reaches it to well under 1e-3 nats in a few hundred full-batch steps.
    Returns log P(next | previous) and the loss curve.
    """
    weights = dg.tensor((counts + alpha) / (counts + alpha).sum())
    W = dg.zeros(VOCAB, VOCAB, requires_grad=True)
    opt = optim.Adam([W], lr=lr)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    curve = []
    for _ in range(steps):
        opt.zero_grad()
        loss = -(weights * F.log_softmax(W, dim=1)).sum()
        loss.backward()
        opt.step()
        sched.step()
        curve.append(loss.item())
    with dg.no_grad():
        return F.log_softmax(W, dim=1).detach().numpy().copy(), curve

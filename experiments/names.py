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
from typing import Any, Sequence

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


# ---------------------------------------------------------------- the learned models' data

def windows(words: Sequence[str], context: int) -> tuple[np.ndarray, np.ndarray]:
    """(contexts, targets) for an MLP over ``context`` characters: one row per predicted
    symbol, the context padded on the left with '.' (int64).

    >>> X, y = windows(["ab"], 2)
    >>> X.tolist(), y.tolist()
    ([[0, 0], [0, 1], [1, 2]], [1, 2, 0])
    """
    if int(context) < 1:
        raise ValueError(f"windows: context must be a positive number of characters, got {context}")
    X: list[list[int]] = []
    y: list[int] = []
    for w in words:
        seq = [0] * context + encode(w) + [0]
        for i in range(len(seq) - context):
            X.append(seq[i:i + context])
            y.append(seq[i + context])
    return np.array(X, dtype=np.int64).reshape(-1, context), np.array(y, dtype=np.int64)


IGNORE = -100  # cross_entropy's ignore_index: the positions after a name's closing '.'


def sequences(words: Sequence[str], context: int) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, targets) of shape (len(words), context) for the transformer: the input
    is '.' then the name, the target the name then '.', then IGNORE to the end.

    >>> X, Y = sequences(["ab"], 4)
    >>> X.tolist(), Y.tolist()
    ([[0, 1, 2, 0]], [[1, 2, 0, -100]])
    """
    longest = max((len(w) for w in words), default=0)
    if longest + 1 > context:
        raise ValueError(f"sequences: a name of {longest} characters needs a context of "
                         f"{longest + 1}, got {context}")
    X = np.zeros((len(words), context), dtype=np.int64)
    Y = np.full((len(words), context), IGNORE, dtype=np.int64)
    for i, w in enumerate(words):
        e = encode(w)
        X[i, 1:len(e) + 1] = e
        Y[i, :len(e) + 1] = e + [0]
    return X, Y


# ---------------------------------------------------------------- configurations

SIZES_CONFIG: dict[str, dict[str, Any]] = {
    # steps, batch and the evaluation subset per model; "full" fits the 90 s budget
    "full": {"mlp_steps": 1000, "mlp_batch": 256, "tf_steps": 500, "tf_batch": 32,
             "bigram_steps": 300, "curve_dev": 1000, "compare_steps": 200, "time_repeats": 20},
    "quick": {"mlp_steps": 400, "mlp_batch": 256, "tf_steps": 200, "tf_batch": 32,
              "bigram_steps": 300, "curve_dev": 500, "compare_steps": 200, "time_repeats": 10},
    "smoke": {"mlp_steps": 4, "mlp_batch": 32, "tf_steps": 4, "tf_batch": 8,
              "bigram_steps": 20, "curve_dev": 50, "compare_steps": 4, "time_repeats": 2},
}
MLP_CONFIG = {"context": 4, "embed": 16, "hidden": 192, "lr": 3e-3, "weight_decay": 0.01}
TF_CONFIG = {"context": 16, "width": 64, "heads": 4, "layers": 2, "lr": 3e-3,
             "weight_decay": 0.1, "warmup": 0.1, "final_lr_fraction": 0.1}
SEEDS = (0, 1, 2)


def make_model(kind: str, seed: int, context: int | None = None) -> Any:
    """A freshly initialised model: ``kind`` "mlp" or "transformer"."""
    from .names_models import CharMLP, Transformer  # noqa: PLC0415

    if kind == "mlp":
        c = MLP_CONFIG
        return CharMLP(VOCAB, context or c["context"], c["embed"], c["hidden"], rng=seed)
    if kind == "transformer":
        c = TF_CONFIG
        return Transformer(VOCAB, context or c["context"], c["width"], c["heads"], c["layers"],
                           rng=seed)
    raise ValueError(f"make_model: kind must be 'mlp' or 'transformer', got {kind!r}")


class WarmupCosine:
    """The learning-rate factor at a step: linear warm-up from ~0 to 1 over ``warmup``
    steps, then a cosine down to ``final``. A picklable callable for LambdaLR (both
    duograd's and torch's).

    >>> f = WarmupCosine(steps=10, warmup=2, final=0.1)
    >>> [round(f(s), 3) for s in (0, 1, 2, 10)]
    [0.5, 1.0, 1.0, 0.1]
    """

    def __init__(self, steps: int, warmup: int, final: float) -> None:
        self.steps, self.warmup, self.final = int(steps), int(warmup), float(final)

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return (step + 1) / self.warmup
        t = min(1.0, (step - self.warmup) / max(1, self.steps - self.warmup))
        return float(self.final + (1 - self.final) * 0.5 * (1 + np.cos(np.pi * t)))


def _param_groups(named: Any, weight_decay: float) -> list[dict[str, Any]]:
    """Weight decay on the matrices (Linear weights, embeddings), none on biases and
    LayerNorm's gains: the usual AdamW grouping, same order in both libraries."""
    named = list(named)
    return [{"params": [p for _, p in named if p.ndim >= 2], "weight_decay": weight_decay},
            {"params": [p for _, p in named if p.ndim < 2], "weight_decay": 0.0}]


def make_optimizer(kind: str, model: Any, steps: int, lib: str = "duograd") -> tuple[Any, Any]:
    """AdamW and its schedule for ``model`` (a duograd model, or with ``lib="torch"`` its
    PyTorch twin): the MLP at a constant rate, the transformer with warm-up and cosine."""
    c = MLP_CONFIG if kind == "mlp" else TF_CONFIG
    if lib == "torch":
        import torch  # noqa: PLC0415
        o, LambdaLR = torch.optim, torch.optim.lr_scheduler.LambdaLR
    else:
        o, LambdaLR = optim, optim.lr_scheduler.LambdaLR
    opt = o.AdamW(_param_groups(model.named_parameters(), c["weight_decay"]), lr=c["lr"])
    if kind == "mlp":
        factor = WarmupCosine(steps, 0, 1.0)
    else:
        factor = WarmupCosine(steps, max(1, int(c["warmup"] * steps)), c["final_lr_fraction"])
    return opt, LambdaLR(opt, factor)


def batches(kind: str, data: tuple[np.ndarray, np.ndarray], steps: int, batch: int,
            seed: int) -> list[np.ndarray]:
    """The row indices of every step's minibatch, drawn once from ``seed``: the duograd
    run and its PyTorch twin see the same batches."""
    rng = np.random.default_rng([seed, 22])
    return [rng.integers(0, len(data[1]), batch) for _ in range(steps)]


def _loss(kind: str, logits: Any, y: Any) -> Any:
    if kind == "mlp":
        return F.cross_entropy(logits, y)
    return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1), ignore_index=IGNORE)


def step_inputs(kind: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The arguments of :func:`train_step` for a batch: the transformer's targets are
    flattened here, outside the step: an array that the step itself derives from an
    argument by plain NumPy (``y.reshape(-1)``) is frozen by a ``dg.compile`` replay."""
    return (x, y) if kind == "mlp" else (x, np.ascontiguousarray(y.reshape(-1)))


def train_step(kind: str, model: Any, opt: Any, x: np.ndarray, y: np.ndarray) -> Any:
    """One AdamW step of ``model`` on a batch from :func:`step_inputs`: forward,
    cross-entropy (the mean over counted positions), backward, step."""
    opt.zero_grad()
    logits = model(x)
    if kind == "mlp":
        loss = F.cross_entropy(logits, y)
    else:
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y, ignore_index=IGNORE)
    loss.backward()
    opt.step()
    return loss


def eval_nll(kind: str, model: Any, data: tuple[np.ndarray, np.ndarray],
             chunk: int = 4096) -> float:
    """Mean NLL per predicted symbol (nats per character) of ``model`` on ``data``."""
    total, count = 0.0, 0
    with dg.no_grad():
        for X, Y in _eval_chunks(kind, data, chunk):
            n = int((Y != IGNORE).sum())
            total += n * _loss(kind, model(X), Y).item()
            count += n
    return total / count


def _eval_chunks(kind: str, data: tuple[np.ndarray, np.ndarray], chunk: int) -> Any:
    """``data`` in chunks of rows; the transformer's names grouped by length and cut to
    it (a causal model's earlier positions do not see the padding, so the loss is the
    same, for half the work)."""
    X, Y = data
    if kind == "mlp":
        for i in range(0, len(Y), chunk):
            yield X[i:i + chunk], Y[i:i + chunk]
        return
    lengths = (Y != IGNORE).sum(axis=1)
    for L in np.unique(lengths):
        rows = np.flatnonzero(lengths == L)
        for i in range(0, len(rows), chunk):
            r = rows[i:i + chunk]
            yield np.ascontiguousarray(X[r, :L]), np.ascontiguousarray(Y[r, :L])


def eval_nll_torch(kind: str, twin: Any, data: tuple[np.ndarray, np.ndarray],
                   chunk: int = 4096) -> float:
    """:func:`eval_nll` for the PyTorch twin."""
    import torch  # noqa: PLC0415
    from torch.nn import functional as TF  # noqa: PLC0415

    total, count = 0.0, 0
    with torch.no_grad():
        for X, Y in _eval_chunks(kind, data, chunk):
            logits, y = twin(torch.from_numpy(X)), torch.from_numpy(Y)
            n = int((y != IGNORE).sum())
            if kind == "mlp":
                loss = TF.cross_entropy(logits, y)
            else:
                loss = TF.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1),
                                        ignore_index=IGNORE)
            total += n * loss.item()
            count += n
    return total / count


def train_pair(kind: str, seed: int, size: str, data: dict[str, tuple[np.ndarray, np.ndarray]],
               with_torch: bool = True, compile_steps: bool = True) -> dict[str, Any]:
    """Train one model of ``kind`` from ``seed`` (through dg.compile unless told not to),
    and, with ``with_torch``, its PyTorch float64 twin from the same initial weights on the
    same batches. Returns both loss curves, the dev curve, dev/test NLL of both, the
    largest curve difference over the first ``compare_steps`` and the largest parameter
    difference after them, and the model itself."""
    import time  # noqa: PLC0415

    from . import compiled  # noqa: PLC0415

    cfg = SIZES_CONFIG[size]
    steps = cfg["mlp_steps" if kind == "mlp" else "tf_steps"]
    batch = cfg["mlp_batch" if kind == "mlp" else "tf_batch"]
    compare = min(cfg["compare_steps"], steps)
    model = make_model(kind, seed)
    twin = None
    if with_torch:
        import torch  # noqa: PLC0415
        from .names_models import torch_twin  # noqa: PLC0415
        torch.manual_seed(seed)
        twin = torch_twin(model)
        topt, tsched = make_optimizer(kind, twin, steps, lib="torch")
    opt, sched = make_optimizer(kind, model, steps)
    Xtr, Ytr = data["train"]
    picks = batches(kind, data["train"], steps, batch, seed)
    step = (compiled if compile_steps else (lambda f: f))(
        lambda *args: train_step(kind, model, opt, *args))
    curve_dev_data = tuple(a[:cfg["curve_dev"]] for a in data["dev"])
    every = max(1, steps // 10)
    curve, tcurve, dev_curve, dev_steps = [], [], [], []
    param_diff = None
    t0 = time.perf_counter()
    for i, rows in enumerate(picks):
        x, y = Xtr[rows], Ytr[rows]
        curve.append(step(*step_inputs(kind, x, y)).item())
        sched.step()
        if twin is not None:
            topt.zero_grad()
            tx, ty = torch.from_numpy(x), torch.from_numpy(y)
            if kind == "mlp":
                tl = torch.nn.functional.cross_entropy(twin(tx), ty)
            else:
                tl = torch.nn.functional.cross_entropy(twin(tx).reshape(-1, VOCAB),
                                                       ty.reshape(-1), ignore_index=IGNORE)
            tl.backward()
            topt.step()
            tsched.step()
            tcurve.append(tl.item())
            if i + 1 == compare:
                param_diff = max_param_diff(model, twin)
        if (i + 1) % every == 0 or i + 1 == steps:
            dev_curve.append(eval_nll(kind, model, curve_dev_data))
            dev_steps.append(i + 1)
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {
        "kind": kind, "seed": seed, "steps": steps, "batch": batch, "curve": curve,
        "dev_curve": dev_curve, "dev_steps": dev_steps, "seconds": seconds,
        "dev_nll": eval_nll(kind, model, data["dev"]),
        "test_nll": eval_nll(kind, model, data["test"]),
        "parameters": int(sum(p.numel() for p in model.parameters())), "model": model}
    if twin is not None:
        diffs = np.abs(np.array(curve) - np.array(tcurve))
        out.update({
            "torch_curve": tcurve, "compare_steps": compare,
            "curve_max_diff": float(diffs[:compare].max()),
            "curve_max_diff_all": float(diffs.max()),
            "param_max_diff": param_diff,
            "torch_dev_nll": eval_nll_torch(kind, twin, data["dev"]),
            "torch_test_nll": eval_nll_torch(kind, twin, data["test"])})
    return out


def max_param_diff(model: Any, twin: Any) -> float:
    """The largest absolute difference between ``model``'s parameters and its PyTorch
    twin's, compared in PyTorch's layout."""
    theirs = {k: v.detach().numpy() for k, v in twin.state_dict().items()}
    ours = dg.nn.utils.torch_state_dict(model, numpy=True)
    if set(theirs) != set(ours):
        raise ValueError(f"max_param_diff: parameter names differ: {sorted(set(theirs) ^ set(ours))}")
    return float(max(np.abs(ours[k] - theirs[k]).max() for k in ours))


# ---------------------------------------------------------------- sampling

def sample(next_logits: Any, n: int, seed: int, max_len: int = 15) -> list[str]:
    """``n`` names drawn one character at a time: ``next_logits(history)`` maps the
    (n, t) int64 array of characters so far ('.' first) to (n, 27) logits of the next one.
    Each name ends at its first '.' or after ``max_len`` characters. The draws come from
    one NumPy generator seeded with ``seed`` (inverse-CDF of uniforms), so two models
    with the same probabilities give the same names.

    >>> uniform = lambda hist: np.zeros((hist.shape[0], VOCAB))
    >>> names_ = sample(uniform, 3, seed=0)
    >>> len(names_), all(set(w) <= set(ALPHABET[1:]) for w in names_)
    (3, True)
    """
    rng = np.random.default_rng(seed)
    hist = np.zeros((n, 1), dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    for _ in range(max_len + 1):
        logits = np.asarray(next_logits(hist), dtype=np.float64)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
        u = rng.random(n)
        nxt = np.minimum((cdf < u[:, None]).sum(axis=1), VOCAB - 1)
        nxt[done] = 0
        done |= nxt == 0
        hist = np.concatenate([hist, nxt[:, None]], axis=1)
        if done.all():
            break
    words = []
    for row in hist[:, 1:]:
        chars = [ALPHABET[i] for i in row]
        words.append("".join(chars).split(".")[0][:max_len])
    return words


def next_logits_fn(kind: str, model: Any, compile_forward: bool = False) -> Any:
    """The ``next_logits`` of :func:`sample` for a trained model: the bigram's table
    row, the MLP's last ``context`` characters (padded with '.'), the transformer's
    logits at the last position of the history padded to its full context (one shape:
    one dg.compile signature; the causal mask makes the padding invisible)."""
    if kind == "bigram":
        return lambda hist: model[hist[:, -1]]
    forward = dg.compile(lambda x: model(x)) if compile_forward else model

    def read(x: np.ndarray) -> np.ndarray:
        with dg.no_grad():
            return forward(x).detach().numpy()

    if kind == "mlp":
        c = model.context

        def mlp_next(hist: np.ndarray) -> np.ndarray:
            pad = np.zeros((hist.shape[0], max(0, c - hist.shape[1])), dtype=np.int64)
            return read(np.concatenate([pad, hist], axis=1)[:, -c:])
        return mlp_next

    def tf_next(hist: np.ndarray) -> np.ndarray:
        t = hist.shape[1]
        if t > model.context:
            raise ValueError(f"sample: a history of {t} exceeds the context {model.context}")
        x = np.zeros((hist.shape[0], model.context), dtype=np.int64)
        x[:, :t] = hist
        return read(x)[:, t - 1]
    return tf_next


# ---------------------------------------------------------------- PyTorch references for the bigrams

def have_torch() -> bool:
    """Whether PyTorch imports: without it the stage still trains and measures every
    duograd model, and its PyTorch columns read None (n/a in the report).

    >>> isinstance(have_torch(), bool)
    True
    """
    try:
        import torch  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


def torch_counted_bigram(words: Sequence[str], alpha: float = 1.0) -> np.ndarray:
    """:func:`counted_bigram` computed by PyTorch (bincount, log of the normalised rows):
    the independent column of the NLL table for the closed form."""
    import torch  # noqa: PLC0415

    prev, nxt = bigram_pairs(words)
    counts = torch.bincount(torch.from_numpy(prev * VOCAB + nxt), minlength=VOCAB * VOCAB)
    smoothed = counts.reshape(VOCAB, VOCAB).to(torch.float64) + alpha
    return torch.log(smoothed / smoothed.sum(dim=1, keepdim=True)).numpy()


def torch_neural_bigram(counts: np.ndarray, alpha: float = 1.0, steps: int = 300,
                        lr: float = 1.0) -> np.ndarray:
    """:func:`train_neural_bigram` in PyTorch (float64): same loss, Adam, cosine schedule."""
    import torch  # noqa: PLC0415

    weights = torch.from_numpy((counts + alpha) / (counts + alpha).sum())
    W = torch.zeros(VOCAB, VOCAB, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([W], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    for _ in range(steps):
        opt.zero_grad()
        loss = -(weights * torch.log_softmax(W, dim=1)).sum()
        loss.backward()
        opt.step()
        sched.step()
    return torch.log_softmax(W.detach(), dim=1).numpy()


# ---------------------------------------------------------------- timing

def step_times(kind: str, data: tuple[np.ndarray, np.ndarray], batch: int, repeats: int
               ) -> dict[str, dict[str, float]]:
    """Seconds per training step (median and quartiles, one thread): duograd eager,
    duograd through dg.compile, PyTorch float64 and float32, on the same batch."""
    from . import time_quartiles  # noqa: PLC0415

    out: dict[str, Any] = {"torch_f64": None, "torch_f32": None}
    if have_torch():
        import torch  # noqa: PLC0415
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
    try:
        X, Y = data
        rows = np.random.default_rng(0).integers(0, len(Y), batch)
        args = step_inputs(kind, X[rows], Y[rows])
        for mode in ("eager", "compiled"):
            model = make_model(kind, 0)
            opt, _ = make_optimizer(kind, model, 1000)
            f = (lambda *a: train_step(kind, model, opt, *a))
            f = dg.compile(f) if mode == "compiled" else f
            out[mode] = time_quartiles(lambda: f(*args), repeats, warmup=2)
        if not have_torch():
            return out
        from .names_models import torch_twin  # noqa: PLC0415
        for name, dtype in (("torch_f64", torch.float64), ("torch_f32", torch.float32)):
            twin = torch_twin(make_model(kind, 0), dtype=dtype)
            topt, _ = make_optimizer(kind, twin, 1000, lib="torch")
            tx, ty = torch.from_numpy(args[0]), torch.from_numpy(args[1])

            def tstep() -> None:
                topt.zero_grad()
                logits = twin(tx)
                if kind == "mlp":
                    loss = torch.nn.functional.cross_entropy(logits, ty)
                else:
                    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), ty,
                                                             ignore_index=IGNORE)
                loss.backward()
                topt.step()
            out[name] = time_quartiles(tstep, repeats, warmup=2)
        return out
    finally:
        if have_torch():
            torch.set_num_threads(threads)


# ---------------------------------------------------------------- the stage

def _seed_task(task: tuple[str, int, str]) -> dict[str, Any]:
    """One (model, seed) pair, for the process pool: data built in the worker."""
    kind, seed, size = task
    parts = split(load_surnames())
    if size == "smoke":
        parts = {k: v[:400] for k, v in parts.items()}
    make = (lambda w: windows(w, MLP_CONFIG["context"])) if kind == "mlp" else \
        (lambda w: sequences(w, TF_CONFIG["context"]))
    data = {k: make(v) for k, v in parts.items()}
    r = train_pair(kind, seed, size, data, with_torch=have_torch())
    model = r.pop("model")
    r["samples"] = sample(next_logits_fn(kind, model), 20, seed=SAMPLE_SEED)
    r["samples_compiled"] = sample(next_logits_fn(kind, model, compile_forward=True), 20,
                                   seed=SAMPLE_SEED)
    if seed == 0 and kind == "transformer":
        r["causal_max_diff"] = causal_mask_diff(model, parts["dev"][:64])
    return r


SAMPLE_SEED = 2026


def causal_mask_diff(model: Any, words: Sequence[str]) -> float:
    """The largest change of any position's logits before position t when every
    character from t on is replaced: 0.0 exactly when the mask holds."""
    X, _ = sequences(words, model.context)
    rng = np.random.default_rng(0)
    worst = 0.0
    with dg.no_grad():
        base = model(X).detach().numpy()
        for t in range(1, model.context):
            Z = X.copy()
            Z[:, t:] = rng.integers(0, VOCAB, Z[:, t:].shape)
            worst = max(worst, float(np.abs(model(Z).detach().numpy()[:, :t] - base[:, :t]).max()))
    return worst


def _max(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r.get(key) for r in runs]
    return None if any(v is None for v in values) else max(values)


def _summary(runs: list[dict[str, Any]], key: str) -> dict[str, float] | None:
    from . import mean_sd  # noqa: PLC0415

    if any(key not in r for r in runs):  # a PyTorch column, without PyTorch
        return None
    m, s = mean_sd([r[key] for r in runs])
    return {"mean": m, "sd": s}


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """The names stage: the four models' dev and test NLL (the learned ones over SEEDS,
    each beside its PyTorch float64 twin), the neural bigram's pin, the torch agreement,
    the causal-mask proof, samples, step times and two figures."""
    import time  # noqa: PLC0415

    from . import check_size, compiling, over_seeds  # noqa: PLC0415

    check_size(size)
    t0 = time.perf_counter()
    cfg = SIZES_CONFIG[size]
    parts = split(load_surnames())
    train_set = set(parts["train"])
    counts = bigram_counts(parts["train"])
    logp = counted_bigram(counts)
    nlogp, ncurve = train_neural_bigram(counts, steps=cfg["bigram_steps"])
    torch_ok = have_torch()
    tlogp = torch_counted_bigram(parts["train"]) if torch_ok else None
    tnlogp = torch_neural_bigram(counts, steps=cfg["bigram_steps"]) if torch_ok else None

    def tnll(table: Any, words: Sequence[str]) -> float | None:
        return None if table is None else nll(table, words)

    def tdiff(a: np.ndarray, b: Any) -> float | None:
        return None if b is None else float(np.abs(a - b).max())
    bigram = {
        "counted": {"dev_nll": nll(logp, parts["dev"]), "test_nll": nll(logp, parts["test"]),
                    "torch_dev_nll": tnll(tlogp, parts["dev"]),
                    "torch_test_nll": tnll(tlogp, parts["test"]),
                    "table_max_diff_torch": tdiff(logp, tlogp)},
        "neural": {"dev_nll": nll(nlogp, parts["dev"]), "test_nll": nll(nlogp, parts["test"]),
                   "torch_dev_nll": tnll(tnlogp, parts["dev"]),
                   "torch_test_nll": tnll(tnlogp, parts["test"]), "steps": cfg["bigram_steps"],
                   "curve": [float(v) for v in ncurve],
                   "table_max_diff_torch": tdiff(nlogp, tnlogp)}}
    pin = abs(bigram["neural"]["dev_nll"] - bigram["counted"]["dev_nll"])
    bigram["neural"]["pin"] = {"dev_nll_diff": pin, "tolerance": 1e-3, "met": bool(pin < 1e-3)}
    tasks = [(kind, s, size) for kind in ("transformer", "mlp") for s in SEEDS]
    runs = over_seeds(_seed_task, tasks, desc="names models", progress=progress)
    models: dict[str, Any] = {}
    for kind in ("mlp", "transformer"):
        rs = [r for r in runs if r["kind"] == kind]
        models[kind] = {
            "config": MLP_CONFIG if kind == "mlp" else TF_CONFIG,
            "steps": rs[0]["steps"], "batch": rs[0]["batch"],
            "parameters": rs[0]["parameters"], "seeds": list(SEEDS),
            **{k: _summary(rs, k) for k in ("dev_nll", "test_nll", "torch_dev_nll",
                                              "torch_test_nll")},
            "dev_nll_per_seed": [r["dev_nll"] for r in rs],
            "torch_dev_nll_per_seed": [r.get("torch_dev_nll") for r in rs],
            "compare_steps": rs[0].get("compare_steps"),
            "curve_max_diff": _max(rs, "curve_max_diff"),
            "curve_max_diff_all_steps": _max(rs, "curve_max_diff_all"),
            "param_max_diff": _max(rs, "param_max_diff"),
            "train_seconds_per_seed": [r["seconds"] for r in rs],
            "samples": rs[0]["samples"],
            "samples_eager_equal_compiled": all(r["samples"] == r["samples_compiled"] for r in rs),
            "samples_in_train": float(np.mean([w in train_set for w in rs[0]["samples"]])),
        }
    causal = next(r["causal_max_diff"] for r in runs if "causal_max_diff" in r)
    bigram_samples = sample(next_logits_fn("bigram", logp), 20, seed=SAMPLE_SEED)
    bigram["counted"]["samples"] = bigram_samples
    bigram["counted"]["samples_in_train"] = float(np.mean([w in train_set for w in bigram_samples]))
    mlp_dev, tf_dev = models["mlp"]["dev_nll"]["mean"], models["transformer"]["dev_nll"]["mean"]
    big_dev = bigram["counted"]["dev_nll"]
    margins = {"bigram_minus_mlp": big_dev - mlp_dev, "mlp_minus_transformer": mlp_dev - tf_dev,
               "ordered": bool(tf_dev < mlp_dev < big_dev)}
    timing_data = {k: (windows(parts["train"][:2000], MLP_CONFIG["context"]) if k == "mlp"
                       else sequences(parts["train"][:2000], TF_CONFIG["context"]))
                   for k in ("mlp", "transformer")}
    times = {k: step_times(k, timing_data[k], cfg["mlp_batch" if k == "mlp" else "tf_batch"],
                           cfg["time_repeats"]) for k in ("mlp", "transformer")}
    for k, t in times.items():
        base = t["torch_f64"]["median"] if t["torch_f64"] else None
        t["compiled_over_torch_f64"] = t["compiled"]["median"] / base if base else None
        t["eager_over_torch_f64"] = t["eager"]["median"] / base if base else None
    figures = [_draw_curves(out, bigram, runs, logp), _draw_table(out, logp)]
    return {"split_checksum": checksum(parts), "split_seed": SPLIT_SEED,
            "n_words": {k: len(v) for k, v in parts.items()}, "vocab": VOCAB,
            "bigram": bigram, "mlp": models["mlp"], "transformer": models["transformer"],
            "margins": margins, "causal_mask_max_diff": causal, "step_times": times,
            "transformer_target": {"compiled_over_torch_f64_max": 1.0,
                                   "met": (None if times["transformer"]["compiled_over_torch_f64"] is None
                                           else bool(times["transformer"]["compiled_over_torch_f64"] <= 1.0))},
            "sample_seed": SAMPLE_SEED, "compiled": compiling(), "figures": figures,
            "seconds": time.perf_counter() - t0}


def _draw_curves(out: Any, bigram: dict[str, Any], runs: list[dict[str, Any]],
                 logp: np.ndarray) -> str:
    from . import band, figure, save  # noqa: PLC0415

    fig, ax = figure(size=(7.5, 4.8))
    ax.axhline(bigram["counted"]["dev_nll"], color="k", ls=":", label="counted bigram (dev)")
    ax.plot(np.arange(1, len(bigram["neural"]["curve"]) + 1), bigram["neural"]["curve"],
            label="neural bigram (train, smoothed counts)")
    for kind, name in (("mlp", "MLP"), ("transformer", "transformer")):
        rs = [r for r in runs if r["kind"] == kind]
        curves = np.array([r["curve"] for r in rs])
        k = max(1, curves.shape[1] // 50)
        smooth = np.array([np.convolve(c, np.ones(k) / k, mode="valid") for c in curves])
        band(ax, np.arange(k, curves.shape[1] + 1), smooth, f"{name} (train, running mean)")
        band(ax, rs[0]["dev_steps"], [r["dev_curve"] for r in rs], f"{name} (dev)", ls="--",
             marker="o", ms=3)
    ax.set_xscale("log")
    ax.set_xlabel("training step")
    ax.set_ylabel("NLL (nats per character)")
    ax.set_title("Surnames: training and dev loss, mean ± sd over seeds")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, out, "names_loss_curves.png")


def _draw_table(out: Any, logp: np.ndarray) -> str:
    from . import figure, save  # noqa: PLC0415

    fig, ax = figure(size=(6.5, 6.0))
    im = ax.imshow(logp, cmap="viridis")
    ax.set_xticks(range(VOCAB), list(ALPHABET))
    ax.set_yticks(range(VOCAB), list(ALPHABET))
    ax.set_xlabel("next character")
    ax.set_ylabel("previous character")
    ax.set_title("Counted bigram: log P(next | previous), add-one smoothing")
    fig.colorbar(im, ax=ax, shrink=0.8)
    return save(fig, out, "names_bigram_table.png")


# ---------------------------------------------------------------- command line

def check_checkpoint(model: Any, path: str | os.PathLike) -> None:
    """Load ``path`` (``Module.save``'s .npz) into ``model`` after checking that its
    vocabulary and context match: a ValueError naming both sizes otherwise."""
    with np.load(os.fspath(path), allow_pickle=False) as f:
        shapes = {k: f[k].shape for k in f.files}
    table = "emb.weight" if "emb.weight" in shapes else "tok.weight"
    if table not in shapes:
        raise ValueError(f"names: {path} is not a checkpoint of a names model "
                         f"(no emb.weight or tok.weight among {sorted(shapes)[:4]}...)")
    if shapes[table][0] != model.vocab:
        raise ValueError(f"names: vocabulary mismatch: the checkpoint {path} has "
                         f"{shapes[table][0]} symbols ({table} {shapes[table]}), this model "
                         f"has {model.vocab} ({ALPHABET!r})")
    if "pos.weight" in shapes and shapes["pos.weight"][0] != model.context:
        raise ValueError(f"names: context mismatch: the checkpoint {path} has a context of "
                         f"{shapes['pos.weight'][0]}, this model {model.context}")
    model.load(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Train one model briefly, print its dev NLL and samples.

    >>> main(["--model", "mlp", "--context", "3", "--steps", "0", "--sample", "2"])  # doctest: +ELLIPSIS
    mlp (context 3, 0 steps): dev NLL ...
    0
    """
    import argparse  # noqa: PLC0415

    p = argparse.ArgumentParser(prog="python -m experiments.names",
                                description="A character model of US census surnames.")
    p.add_argument("--model", choices=("mlp", "transformer"), default="mlp")
    p.add_argument("--context", type=int, default=None,
                   help="characters of context (MLP default 4, transformer 16)")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--sample", type=int, default=10, help="names to sample")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--load", default=None, help="a checkpoint written by --save")
    p.add_argument("--save", default=None, help="write the trained model here (.npz)")
    args = p.parse_args(argv)
    if args.context is not None and args.context < 1:
        p.error(f"--context must be a positive number of characters, got {args.context}")
    if args.steps < 0 or args.sample < 0:
        p.error(f"--steps and --sample must be >= 0, got {args.steps} and {args.sample}")
    parts = split(load_surnames())
    if args.model == "transformer" and args.context is not None:
        longest = max(len(w) for w in parts["train"])
        if args.context < longest + 1:
            p.error(f"--context {args.context} is too short for the transformer: the longest "
                    f"name has {longest} characters, so it needs {longest + 1}")
    model = make_model(args.model, args.seed, args.context)
    if args.load:
        try:
            check_checkpoint(model, args.load)
        except ValueError as e:
            p.error(str(e))
    make = (lambda w: windows(w, model.context)) if args.model == "mlp" else \
        (lambda w: sequences(w, model.context))
    train, dev = make(parts["train"]), make(parts["dev"][:2000])
    if args.steps:
        opt, sched = make_optimizer(args.model, model, args.steps)
        step = dg.compile(lambda *a: train_step(args.model, model, opt, *a))
        batch = SIZES_CONFIG["full"]["mlp_batch" if args.model == "mlp" else "tf_batch"]
        for rows in batches(args.model, train, args.steps, batch, args.seed):
            step(*step_inputs(args.model, train[0][rows], train[1][rows]))
            sched.step()
    print(f"{args.model} (context {model.context}, {args.steps} steps): dev NLL "
          f"{eval_nll(args.model, model, dev):.4f} nats per character")
    for w in sample(next_logits_fn(args.model, model), args.sample, seed=args.seed):
        print(w)
    if args.save:
        print("saved", model.save(args.save))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

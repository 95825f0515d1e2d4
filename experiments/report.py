"""Turn ``measurements.json`` into words: the HTML report and the README's results block.

Both renderers read the measurements dict and nothing else (the HTML report also
embeds the PNG files the dict names, when it is given the folder they are in). Every
number on the page is formatted here from that dict; none is typed in by hand. A stage
that has not been measured yet gets a line saying how to measure it.

``sections(m)`` builds the content once (a title, a paragraph, tables and figure
names per stage); ``render_html`` and ``render_readme_block`` only lay it out.

>>> block = render_readme_block({})
>>> block.splitlines()[0]
'<!-- results:begin -->'
>>> "not measured yet" in block
True
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from duograd.capture.passes import SMALL_BUFFER

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"

TITLES = {
    "spiral": "1. Two-arm spiral",
    "digits": "2. Handwritten digits",
    "digits_cnn": "3. Handwritten digits with a convolutional network",
    "optimizers": "4. Optimizer comparison",
    "scalar_vs_tensor": "5. Scalar engine against tensor engine",
    "benchmarks": "6. Against PyTorch and hand-written NumPy",
    "modes": "7. Forward mode against reverse mode",
    "finite_diff": "8. Finite differences against autodiff",
    "graphs": "9. Computation graphs",
    "inside_gradient": "10. Inside a gradient",
    "verification": "11. Verification headline numbers",
    "names": "12. A language model of census surnames",
}


# ---------------------------------------------------------------- number formatting

def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage.

    >>> pct(0.98)
    '98.0%'
    """
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def sci(x: float | None, digits: int = 1) -> str:
    """Scientific notation; an exact zero stays ``0``.

    >>> sci(1.1102230246251565e-16), sci(0.0)
    ('1.1e-16', '0')
    """
    if x is None:
        return "n/a"
    return "0" if x == 0 else f"{x:.{digits}e}"


def times(x: float | None) -> str:
    """A ratio as a multiple.

    >>> times(2477.3), times(45.61), times(9.334), times(0.8954), times(0.01335)
    ('2,477x', '45.6x', '9.33x', '0.90x', '0.013x')
    """
    if x is None or not math.isfinite(x):
        return "n/a"
    if x >= 100:
        return f"{x:,.0f}x"
    if x >= 10:
        return f"{x:.1f}x"
    if x >= 0.1:
        return f"{x:.2f}x"
    return f"{x:.2g}x"


def duration(seconds: float | None) -> str:
    """Seconds in the unit that reads best.

    >>> duration(0.000254), duration(0.63), duration(75.2)
    ('254 us', '630 ms', '75.2 s')
    """
    if seconds is None:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def num(x: Any, digits: int = 3) -> str:
    """A plain number: ints with thousands separators, floats to ``digits`` significant digits.

    >>> num(135940), num(0.3951358930917078), num(None)
    ('135,940', '0.395', 'n/a')
    """
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def fraction(r: float) -> str:
    """A ratio of powers of two the way people say it.

    >>> fraction(0.015625), fraction(1.0), fraction(64.0)
    ('1/64', '1', '64')
    """
    return f"1/{1 / r:g}" if r < 1 else f"{r:g}"


def arch(sizes: list[int]) -> str:
    """``[2, 64, 64, 2]`` as ``MLP(2, [64, 64, 2])``.

    >>> arch([2, 16, 16, 1])
    'MLP(2, [16, 16, 1])'
    """
    return f"MLP({sizes[0]}, [{', '.join(str(s) for s in sizes[1:])}])"


def pct_sd(mean: float | None, sd: float | None, digits: int = 1) -> str:
    """A mean fraction and its standard deviation, both as percentages.

    >>> pct_sd(0.9413, 0.0296)
    '94.1% ± 3.0%'
    """
    if mean is None:
        return "n/a"
    return pct(mean, digits) if sd is None else f"{pct(mean, digits)} ± {pct(sd, digits)}"


def num_sd(mean: float | None, sd: float | None, digits: int = 3) -> str:
    """A mean and its standard deviation as plain numbers.

    >>> num_sd(0.01234, 0.00345)
    '0.0123 ± 0.00345'
    """
    return "n/a" if mean is None else f"{num(mean, digits)} ± {num(sd, digits)}"


def times_sd(mean: float | None, sd: float | None) -> str:
    """A mean ratio and its standard deviation, as multiples.

    >>> times_sd(33.2, 4.51)
    '33.2x ± 4.51x'
    """
    return "n/a" if mean is None else f"{times(mean)} ± {times(sd)}"


def span(lo: float | None, hi: float | None, fmt: Any = None) -> str:
    """A range ``lo-hi`` in one format (``duration`` unless ``fmt`` is given).

    >>> span(0.00121, 0.00135)
    '1.21 ms-1.35 ms'
    """
    fmt = fmt or duration
    return "n/a" if lo is None or hi is None else f"{fmt(lo)}-{fmt(hi)}"


def median_iqr(median: float | None, quartiles: list | None, fmt: Any = None) -> str:
    """A median with its p25-p75 range: ``1.27 ms (p25-p75 1.21 ms-1.35 ms)``.

    >>> median_iqr(0.00127, [0.00121, 0.00135])
    '1.27 ms (p25-p75 1.21 ms-1.35 ms)'
    >>> median_iqr(3.5, None, num)
    '3.5'
    """
    fmt = fmt or duration
    if median is None:
        return "n/a"
    if not quartiles or None in quartiles:
        return fmt(median)
    return f"{fmt(median)} (p25-p75 {span(quartiles[0], quartiles[1], fmt)})"


def never(epochs: list | None) -> str:
    """Epochs to a threshold per seed, "never" where a seed never got there.

    >>> never([12, None, 15])
    '12, never, 15'
    """
    return "n/a" if epochs is None else ", ".join("never" if e is None else str(e) for e in epochs)


# ---------------------------------------------------------------- content

@dataclass
class Table:
    """A table: header cells and rows of already formatted cells.

    >>> Table(["stage", "seconds"], [["spiral", "2.1"]]).rows[0][1]
    '2.1'
    """

    header: list[str]
    rows: list[list[str]]


@dataclass
class Section:
    """One stage as the renderers see it.

    >>> Section("spiral", TITLES["spiral"]).title
    '1. Two-arm spiral'
    """

    key: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    headline: str = ""  # one sentence for the README
    tables: list[Table] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    measured: bool = True


def _g(d: Any, *path: str, default: Any = None) -> Any:
    """``d[path[0]][path[1]]...``, or ``default`` where any step is missing."""
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return default
        d = d[key]
    return d


def _mode_note(m: dict) -> str:
    size = m.get("_size")
    return "" if size in (None, "full") else f" (from a --{size} run)"


def _seeds(m: dict) -> str:
    seeds = m.get("seeds") or [m.get("seed")]
    return f"{len(seeds)} random seed{'s' if len(seeds) != 1 else ''}"


def _spiral(m: dict) -> Section:
    s = Section("spiral", TITLES["spiral"], figures=m.get("figures", []))
    ov, sw = m["overlapping"], m["noise_sweep"]
    s.paragraphs.append(
        f"{num(m['n_points'])} points on two spiral arms of {num(m['revolutions'])} revolutions, "
        f"split {num(m['n_train'])} / {num(m['n_test'])} with the classes balanced in both parts. "
        f"{arch(m['architecture'])} ({num(m['parameters'])} parameters), {num(m['epochs'])} "
        f"full-batch epochs of {m['optimizer']} with the learning rate annealed from "
        f"{num(m['lr_start'])} to {num(m['lr_end'])} ({m['schedule']}). Every configuration is "
        f"trained from {_seeds(m)} ({', '.join(str(v) for v in m['seeds'])}); a random seed "
        f"changes {m['what_a_seed_changes']}. Numbers are mean ± sd over the random seeds.")
    s.paragraphs.append(
        "The ceiling is the Bayes-optimal accuracy of the generating distribution, computed from "
        "the generator's exact class densities (experiments/bayes.py): the two arms sit half a "
        "turn apart at every radius, so the best possible classifier errs only where the angular "
        "noise carries a point more than a quarter turn off its arm. "
        f"At the standard configuration's noise, {num(m['angular_noise'])} rad, the ceiling is "
        f"{pct(m['bayes_accuracy'], 2)}. The overlapping configuration's noise, "
        f"{num(ov['angular_noise'])} rad, was chosen for a ceiling of {pct(ov['target_ceiling'])}: "
        f"the exact ceiling was solved for the noise that gives it (rounded to 3 decimals) "
        f"before any network was trained; its ceiling is {pct(ov['bayes_accuracy'], 2)}.")
    s.paragraphs.append(
        f"Standard configuration: train {pct_sd(m['train_accuracy'], m['train_accuracy_sd'])}, test "
        f"{pct_sd(m['test_accuracy'], m['test_accuracy_sd'])} against a ceiling of "
        f"{pct(m['bayes_accuracy'])}. Overlapping: train "
        f"{pct_sd(ov['train_accuracy'], ov['train_accuracy_sd'])}, test "
        f"{pct_sd(ov['test_accuracy'], ov['test_accuracy_sd'])} against "
        f"{pct(ov['bayes_accuracy'])}.{_mode_note(m)}")
    s.paragraphs.append(_sweep_text(sw))
    s.headline = (f"{arch(m['architecture'])}, {_seeds(m)}: at noise {num(m['angular_noise'])} "
                  f"train **{pct_sd(m['train_accuracy'], m['train_accuracy_sd'])}**, test "
                  f"**{pct_sd(m['test_accuracy'], m['test_accuracy_sd'])}** (Bayes ceiling "
                  f"{pct(m['bayes_accuracy'])}); overlapping, noise {num(ov['angular_noise'])}: "
                  f"train **{pct_sd(ov['train_accuracy'], ov['train_accuracy_sd'])}**, test "
                  f"**{pct_sd(ov['test_accuracy'], ov['test_accuracy_sd'])}** (ceiling "
                  f"{pct(ov['bayes_accuracy'])}).")
    rows = []
    for name, c in (("standard", m), ("overlapping", ov)):
        rows.append([name, num(c["angular_noise"]), pct(c["bayes_accuracy"], 2),
                     pct_sd(c["train_accuracy"], c["train_accuracy_sd"]),
                     pct_sd(c["test_accuracy"], c["test_accuracy_sd"]),
                     pct_sd(c["generalisation_gap"], c["generalisation_gap_sd"]),
                     pct_sd(c["shortfall_to_ceiling"], c["shortfall_to_ceiling_sd"]),
                     num_sd(c["test_loss"], c["test_loss_sd"])])
    s.tables.append(Table(["configuration", "noise (rad)", "Bayes ceiling", "train accuracy",
                           "test accuracy", "train - test", "ceiling - test", "test loss"], rows))
    s.tables.append(Table(
        ["noise (rad)", "seeds", "Bayes ceiling", "train accuracy", "test accuracy",
         "train - test", "ceiling - test"],
        [[num(n), num(k), pct(b, 2), pct_sd(tr, trs), pct_sd(te, tes), pct_sd(g, gs),
          pct_sd(c, cs)]
         for n, k, b, tr, trs, te, tes, g, gs, c, cs in zip(
            sw["noise"], sw["seeds_per_level"], sw["bayes_accuracy"], sw["train_accuracy"],
            sw["train_accuracy_sd"], sw["test_accuracy"], sw["test_accuracy_sd"],
            sw["generalisation_gap"], sw["generalisation_gap_sd"], sw["shortfall_to_ceiling"],
            sw["shortfall_to_ceiling_sd"])]))
    s.tables.append(Table(["quantity (standard configuration)", "value"], [
        ["train loss (cross-entropy)", num_sd(m["train_loss"], m["train_loss_sd"])],
        ["test loss (cross-entropy)", num_sd(m["test_loss"], m["test_loss_sd"])],
        ["training runs in the stage (all noise levels and seeds)", num(m.get("runs"))],
        ["the stage's training time (wall, runs in parallel)", duration(m["train_seconds"])],
    ]))
    return s


def _sweep_text(sw: dict) -> str:
    """The noise sweep in words: where memorising starts, how close test gets to the ceiling."""
    levels, short = sw["noise"], sw["shortfall_to_ceiling"]
    i_close = min(range(len(levels)), key=lambda i: short[i])
    gap_from = sw.get("memorising_from_noise")
    text = (f"Noise sweep ({len(levels)} levels from {num(levels[0])} to {num(levels[-1])} rad, "
            f"up to {num(max(sw['seeds_per_level']))} seeds each): ")
    text += (f"the train - test gap reaches {pct(sw['gap_noted'], 0)} from noise {num(gap_from)} "
             f"on, where the network starts to fit its training points better than the "
             f"distribution allows. " if gap_from is not None else
             f"the train - test gap stays below {pct(sw['gap_noted'], 0)} throughout. ")
    near = sw.get("near_ceiling_noises") or []
    if near:
        text += (f"Test accuracy is within {pct(sw['near_ceiling'], 0)} of the ceiling at noise "
                 f"{', '.join(num(n) for n in near)}")
    else:
        text += f"Test accuracy is never within {pct(sw['near_ceiling'], 0)} of the ceiling"
    text += (f"; it comes closest at noise {num(levels[i_close])} ({pct(short[i_close])} short) "
             f"and is {pct(short[-1])} short at noise {num(levels[-1])}, where the ceiling is "
             f"{pct(sw['bayes_accuracy'][-1])}.")
    return text


def _digits(m: dict) -> Section:
    s = Section("digits", TITLES["digits"], figures=m.get("figures", []))
    worst = m["most_confused"]
    n_seeds = len(m.get("seeds") or [m.get("seed")])
    s.paragraphs.append(
        f"scikit-learn's bundled 8x8 digits ({num(m['n_samples'])} images), stratified "
        f"{num(m['n_train'])} / {num(m['n_test'])} split; scikit-learn supplies the pixels and the "
        f"split only. {arch(m['architecture'])} ({num(m['parameters'])} parameters), "
        f"{num(m['epochs'])} epochs of {m['optimizer']} on minibatches of {num(m['batch_size'])} "
        f"(lr {num(m['lr'])}, weight decay {num(m.get('weight_decay', 0.0))}, {num(m['steps'])} "
        f"steps), trained from {_seeds(m)}: a random seed changes "
        f"{m['what_a_seed_changes']}. The confusion matrix is counted by this project's own code, "
        f"over every seed's test predictions together.")
    errors = f"{m['test_errors']:.1f} ± {m['test_errors_sd']:.1f}"
    ref, goal = m.get("reference_test_accuracy"), m.get("target_test_accuracy")
    compare = ""
    if ref is not None and goal is not None:
        compare = (f" The reference write-up reports {pct(ref, 2)} for one run of "
                   f"MLP(64, [64, 32, 10]) on these digits; this project's goal for the mean over "
                   f"random seeds is {pct(goal, 1)}: "
                   f"{'met' if m['test_accuracy'] >= goal else 'missed'} "
                   f"({100 * (m['test_accuracy'] - goal):+.2f} points).")
    s.paragraphs.append(
        f"Test accuracy {pct_sd(m['test_accuracy'], m['test_accuracy_sd'], 2)} "
        f"({errors} of {num(m['n_test'])} test digits wrong); train accuracy "
        f"{pct_sd(m['train_accuracy'], m['train_accuracy_sd'], 2)}. "
        f"The most frequent confusion: a true {worst['true']} read as {worst['predicted']} "
        f"({num(worst['count'])} times over the {num(n_seeds)} random seeds).{compare}"
        f"{_mode_note(m)}")
    s.paragraphs.extend(_setting_text(m, "mlp"))
    s.paragraphs.extend(_instability_text(m))
    s.headline = (f"{arch(m['architecture'])} on scikit-learn's digits, {_seeds(m)}: test "
                  f"accuracy **{pct_sd(m['test_accuracy'], m['test_accuracy_sd'], 2)}** "
                  f"({errors} of {num(m['n_test'])} wrong)"
                  + (f"; the reference write-up's single run: {pct(ref, 2)}" if ref else "")
                  + (f"; goal {pct(goal, 1)} for the mean: "
                     f"{'met' if m['test_accuracy'] >= goal else 'missed'}." if goal else "."))
    ps = m["per_seed"]
    s.tables.append(Table(["random seed", "train accuracy", "test accuracy", "test errors"],
                          [[str(seed), pct(a, 2), pct(b, 2), num(e)] for seed, a, b, e in zip(
                              m["seeds"], ps["train_accuracy"], ps["test_accuracy"],
                              ps["test_errors"])]
                          + [["mean ± sd", pct_sd(m["train_accuracy"], m["train_accuracy_sd"], 2),
                              pct_sd(m["test_accuracy"], m["test_accuracy_sd"], 2),
                              errors]]))
    cm = m["confusion_matrix"]
    s.tables.append(Table([f"true \\ predicted ({num(n_seeds)} seeds)"] + [str(j) for j in range(len(cm))],
                          [[str(i)] + [str(v) if v else "." for v in row] for i, row in enumerate(cm)]))
    return s


def _setting_text(m: dict, model: str) -> list[str]:
    """Where the hyper-parameters came from, and the validation sweep's summary."""
    r = m if model == "mlp" else m.get("cnn", {})
    source = r.get("setting_source")
    if not source:
        return []
    sweep = m.get("_sweep")
    if not source.startswith("validation sweep") or not isinstance(sweep, dict):
        return [f"Hyper-parameters: {source}; they were not chosen on a validation split "
                f"(run `python walkthrough.py --only digits_sweep` to choose them)."]
    sw = sweep[model]
    grid = "; ".join(f"{k} {', '.join(_grid_value(v) for v in vals)}" for k, vals in sw["grid"].items())
    chosen = ", ".join(f"{k} {_grid_value(v)}" for k, v in sw["chosen"].items())
    edges = [k for k, vals in list(sw["grid"].items()) + [("epochs", sw["epochs_read"])]
             if len(vals) > 2 and sw["chosen"].get(k) in (vals[-1],)
             and isinstance(vals[-1], (int, float)) and not isinstance(vals[-1], bool)]
    text = (f"Hyper-parameters chosen on a validation split, never on the test digits: the "
            f"{num(sweep['n_fit'] + sweep['n_val'])} training digits were split again into "
            f"{num(sweep['n_fit'])} for training and {num(sweep['n_val'])} for validation, and a "
            f"coarse grid ({grid}; epochs read at {', '.join(str(e) for e in sw['epochs_read'])}) "
            f"was trained from {len(sw['seeds'])} random seeds per point ({num(sw['runs'])} runs). "
            f"Chosen: {chosen}, mean validation accuracy {pct(sw['chosen_val_accuracy'], 2)} "
            f"(one validation digit is {pct(1 / sweep['n_val'], 2)}, so neighbouring points of "
            f"the grid are often within noise of each other). The chosen setting was then "
            f"trained on all {num(sweep['n_fit'] + sweep['n_val'])} training digits.")
    if edges:
        text += (f" The choice lies at the largest value of the grid for {', '.join(edges)}: "
                 f"the grid does not bracket the best value there.")
    return [text]


def _instability_text(m: dict) -> list[str]:
    """A late rise of the mean training loss, when there is one, and the seeds it cost.

    >>> _instability_text({"curves": {"train_loss": [1.0, 0.01, 0.001, 0.03]}, "seeds": [0, 1], "lr": 0.01,
    ...     "per_seed": {"train_accuracy": [1.0, 0.97], "test_accuracy": [0.98, 0.94]}})[0][:60]
    'The mean training loss over the random seeds is lowest at ep'
    """
    loss = _g(m, "curves", "train_loss") or []
    if len(loss) < 2:
        return []
    k = min(range(len(loss)), key=lambda i: loss[i])
    if loss[-1] < 3 * loss[k]:
        return []
    ps = m["per_seed"]
    worst = min(range(len(ps["test_accuracy"])), key=lambda i: ps["test_accuracy"][i])
    return [f"The mean training loss over the random seeds is lowest at epoch {k + 1} "
            f"({sci(loss[k])}) and ends at {sci(loss[-1])}: training is not settled at the last "
            f"epoch (Adam at a constant learning rate of {num(m['lr'])}, no schedule). Random seed "
            f"{m['seeds'][worst]} ends with train accuracy {pct(ps['train_accuracy'][worst], 2)} and "
            f"test accuracy {pct(ps['test_accuracy'][worst], 2)}; the validation sweep trained "
            f"random seeds {', '.join(str(v) for v in (_g(m, '_sweep', 'mlp', 'seeds') or []))} "
            f"only and could not see this spread."]


def _grid_value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return "[" + ", ".join(str(x) for x in v) + "]"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _sweep_table(sweep: dict, model: str, top: int = 8) -> Table:
    """The best ``top`` grid points of the validation sweep, best first."""
    sw = sweep[model]
    keys = list(sw["grid"]) + ["epochs"]
    rows = sorted(sw["rows"], key=lambda r: -r["val_accuracy_mean"])[:top]
    return Table([f"{model.upper()} sweep: {k}" if i == 0 else k for i, k in enumerate(keys)]
                 + ["validation accuracy, mean", "per random seed"],
                 [[_grid_value(r[k]) for k in keys] + [pct(r["val_accuracy_mean"], 2),
                   ", ".join(pct(a, 2) for a in r["val_accuracy"])] for r in rows])


def _mean_sd(r: dict) -> str:
    """'98.93% ± 0.21%' from a summary's mean and sample standard deviation."""
    return pct_sd(r["test_accuracy_mean"], r["test_accuracy_sd"], 2)


def _digits_cnn(m: dict) -> Section:
    s = Section("digits_cnn", TITLES["digits_cnn"], figures=m.get("figures", []))
    cnn, mlp, seeds = m["cnn"], m["mlp"], m["seeds"]
    n = len(seeds)
    s.paragraphs.append(
        f"The same {num(m['n_train'])} / {num(m['n_test'])} stratified split (seed "
        f"{num(m['split_seed'])}) as section 2, with the pixels as 1x8x8 images. The CNN is "
        f"{cnn['architecture']} ({num(cnn['parameters'])} parameters), trained with "
        f"{cnn['optimizer']} (lr {num(cnn['lr'])}) on minibatches of {num(cnn['batch_size'])} for "
        f"{num(cnn['epochs'])} epochs"
        + (", each minibatch shifted by one pixel at random (augmentation)" if cnn.get("augment")
           else "") +
        f"; the MLP is section 2's {arch(mlp['architecture'])} "
        f"({num(mlp['parameters'])} parameters, {num(mlp['epochs'])} epochs). Each of the {n} "
        f"random seeds ({', '.join(str(k) for k in seeds)}) draws both models' initial weights "
        f"and minibatch order; the accuracies below are after the last epoch, not the best epoch."
        + (" The MLP's numbers are section 2's (the same setting from the same random seeds), "
           "read rather than trained a second time." if mlp.get("from_digits_stage") else ""))
    s.paragraphs.extend(_setting_text(m, "cnn"))
    verdict = "met" if m["target_met"] else "missed"
    ref = m.get("reference_test_accuracy", m.get("seed_claim_test_accuracy"))
    s.paragraphs.append(
        f"Test accuracy over {n} random seeds, mean ± sample standard deviation: CNN "
        f"{_mean_sd(cnn)} (from {pct(cnn['test_accuracy_min'], 2)} to "
        f"{pct(cnn['test_accuracy_max'], 2)}), MLP {_mean_sd(mlp)}; the convolutions add "
        f"{100 * m['accuracy_gain_mean']:.2f} points. This project's goal of "
        f"{pct(m['target_test_accuracy'], 1)} for the CNN's mean is {verdict} "
        f"({100 * (cnn['test_accuracy_mean'] - m['target_test_accuracy']):+.2f} points); the "
        f"reference write-up quotes ~{pct(ref, 0)} for a small convolutional network, without "
        f"a spread. The time of one CNN training step is in section 6's benchmark table "
        f"(timed alone; steps timed here would share the CPUs with the other random seeds' "
        f"training).{_mode_note(m)}")
    s.headline = (f"CNN on the same digits split: test accuracy **{_mean_sd(cnn)}** over {n} random "
                  f"seeds, against the MLP's {_mean_sd(mlp)} (goal {pct(m['target_test_accuracy'], 1)}: "
                  f"{verdict}).")
    rows = [[str(k), pct(a, 2), pct(b, 2), str(ea), str(eb)] for k, a, b, ea, eb in zip(
        seeds, mlp["test_accuracy"], cnn["test_accuracy"], mlp["test_errors"], cnn["test_errors"])]
    rows.append(["mean ± sd", _mean_sd(mlp), _mean_sd(cnn), "", ""])
    s.tables.append(Table(["random seed", "MLP test accuracy", "CNN test accuracy", "MLP errors",
                           "CNN errors"], rows))
    return s


def _optimizers(m: dict) -> Section:
    s = Section("optimizers", TITLES["optimizers"], figures=m.get("figures", []))
    opts = m["optimizers"]
    winner, runner = m["winner"], m["runner_up"]
    n = len(m["seeds"])
    s.paragraphs.append(
        f"One problem ({m['problem']}; {arch(m['architecture'])}, {num(m['parameters'])} "
        f"parameters), {num(m['epochs'])} epochs, no schedule, repeated from {_seeds(m)} "
        f"({', '.join(str(v) for v in m['seeds'])}); a seed changes {m['what_a_seed_changes']}. "
        f"Each optimizer gets its own learning-rate sweep for every seed ({num(m['runs'])} runs), "
        f"and the code asserts that every seed's best rate is bracketed: the rates on both sides "
        f"of it in the grid end worse. SGD with momentum uses momentum {num(m['momentum'])}.")
    reach = "; ".join(
        f"{name}: {never(opts[name]['epochs_to_threshold'])}" for name in m["ranking"])
    ratios = m["per_seed"]["final_loss_ratio"]
    lo, hi = m["final_loss_ratio_range"]
    winners = m["per_seed"]["winner"]
    same = all(w == winner for w in winners)
    s.paragraphs.append(
        f"{winner} wins (lowest geometric-mean final loss over the seeds): its final loss is "
        f"{times_sd(m['final_loss_ratio'], m['final_loss_ratio_sd'])} lower than the runner-up's "
        f"({runner}), from {times(lo)} to {times(hi)} across seeds"
        + ("; it has the lowest final loss at every seed. " if same else
           f"; the per-seed winners are {', '.join(winners)}. ")
        + f"Epochs to reach the loss {num(m['threshold'])}, per seed (never: not within "
        f"{num(m['epochs'])} epochs): {reach}. This is one small full-batch problem, not a "
        f"general ranking of optimizers.{_mode_note(m)}")
    reached = opts[winner]["reached_threshold"]
    s.headline = (f"At each one's best learning rate, {_seeds(m)}: **{winner}** ends with a loss "
                  f"**{times_sd(m['final_loss_ratio'], m['final_loss_ratio_sd'])}** lower than the "
                  f"runner-up ({runner}; {times(lo)}-{times(hi)}); it reaches loss "
                  f"{num(m['threshold'])} in {reached} of {n} seeds (epochs "
                  f"{never(opts[winner]['epochs_to_threshold'])})"
                  + "".join(f", {o} in {opts[o]['reached_threshold']}" for o in m["ranking"][1:])
                  + ".")
    s.tables.append(Table(
        ["optimizer", "lr grid", "best lr per seed", "bracketed (all seeds)", "final loss",
         f"epochs to loss {num(m['threshold'])} per seed"],
        [[name, ", ".join(f"{v:g}" for v in opts[name]["grid"]),
          ", ".join(f"{v:g}" for v in opts[name]["best_lr"]),
          "yes" if all(opts[name]["bracketed"]) else "NO",
          num_sd(opts[name]["final_loss_mean"], opts[name]["final_loss_sd"]),
          never(opts[name]["epochs_to_threshold"])] for name in m["ranking"]]))
    header = (["random seed", "lowest final loss", f"{runner} / {winner} final loss"]
              + [f"{name}: best lr (neighbours, both worse)" for name in m["ranking"]])
    rows = []
    for i, seed in enumerate(m["seeds"]):
        row = [str(seed), winners[i], times(ratios[i])]
        for name in m["ranking"]:
            o = opts[name]
            b = o["bracket"][i]
            row.append(f"{o['best_lr'][i]:g} ({'-' if b[0] is None else f'{b[0]:g}'}, "
                       f"{'-' if b[1] is None else f'{b[1]:g}'})"
                       + ("" if o["bracketed"][i] else " NOT bracketed"))
        rows.append(row)
    rows.append(["mean ± sd", "", times_sd(m["final_loss_ratio"], m["final_loss_ratio_sd"])]
                + [""] * len(m["ranking"]))
    s.tables.append(Table(header, rows))
    return s


def _scalar_vs_tensor(m: dict) -> Section:
    s = Section("scalar_vs_tensor", TITLES["scalar_vs_tensor"], figures=m.get("figures", []))
    s.paragraphs.append(
        f"The identical workload on both engines: {arch(m['architecture'])} "
        f"({num(m['parameters'])} parameters, the same weights copied across), "
        f"{num(m['n_points'])} spiral points, {m['loss']}, full-batch gradient descent. The stage "
        f"asserts that both engines give the same loss and gradients at every timed step: the "
        f"largest differences were {sci(m['loss_max_abs_diff'])} (loss) and "
        f"{sci(m['grad_max_abs_diff'])} (gradients), within the {sci(m['tolerance'], 0)} allowed.")
    s.paragraphs.append(
        f"A step takes {median_iqr(m['scalar_step_seconds'], m.get('scalar_step_quartiles'))} on "
        f"the scalar engine and {median_iqr(m['tensor_step_seconds'], m.get('tensor_step_quartiles'))} "
        f"on the tensor engine (medians, with the middle half of the timed steps): a speedup of "
        f"{times(m['speedup'])}. Walking the two graphs finds {num(m['scalar_nodes'])} nodes "
        f"against {num(m['tensor_nodes'])}, a ratio of {times(m['node_ratio'])}; the speedup is "
        f"{num(m['speedup_over_node_ratio'], 2)} times the node ratio. The scalar engine pays once "
        f"per number (a Python object and a closure for each), the tensor engine once per array. "
        f"Timings pause Python's garbage collector, as timeit does; with it running, one scalar "
        f"step took {duration(m['scalar_step_seconds_gc_on'])}, because the collector keeps "
        f"rescanning the objects the step allocates, one or more per node.{_mode_note(m)}")
    sq_text = (f" (step medians {median_iqr(m['scalar_step_seconds'], m.get('scalar_step_quartiles'))}"
               f" and {median_iqr(m['tensor_step_seconds'], m.get('tensor_step_quartiles'))})")
    s.headline = (f"Same {num(m['parameters'])}-parameter step on both engines: "
                  f"**{times(m['speedup'])}** faster on tensors{sq_text}, beside a node-count ratio of "
                  f"**{times(m['node_ratio'])}** ({num(m['scalar_nodes'])} vs "
                  f"{num(m['tensor_nodes'])} nodes).")
    sq, tq = m.get("scalar_step_quartiles"), m.get("tensor_step_quartiles")
    s.tables.append(Table(["", "scalar engine", "tensor engine", "ratio"], [
        ["time per step (median)", duration(m["scalar_step_seconds"]),
         duration(m["tensor_step_seconds"]), times(m["speedup"])],
        ["time per step (p25-p75)", span(*sq) if sq else "n/a", span(*tq) if tq else "n/a",
         f"{times(sq[0] / tq[1])}-{times(sq[1] / tq[0])}" if sq and tq else "n/a"],
        ["graph nodes per step", num(m["scalar_nodes"]), num(m["tensor_nodes"]),
         times(m["node_ratio"])],
        ["time per node", duration(m["scalar_seconds_per_node"]),
         duration(m["tensor_seconds_per_node"]),
         times(m["scalar_seconds_per_node"] / m["tensor_seconds_per_node"])],
        ["steps timed", num(m["scalar_steps_timed"]), num(m["tensor_steps_timed"]), ""],
    ]))
    return s


_BENCH_ROWS = (("per_op", "per op, tiny arrays"), ("train_spiral", "spiral training step"),
               ("train_digits", "digits training step"), ("train_blas", "BLAS-bound training step"),
               ("chain", "long chain of ops"))


def _bench_ratio(r: dict, engine: str, ours: str = "duograd") -> float | None:
    """duograd's time (``ours``: "duograd", or "duograd_compiled" for dg.compile's replay)
    over ``engine``'s, from the times themselves."""
    a, b = r.get(ours), r.get(engine)
    return None if a is None or not b else a / b


_TARGET = re.compile(r"(duograd(?:_compiled)?)\s*(<=|<)\s*(?:([0-9.]+)\s*x\s*)?(numpy|torch)")
_CONV_BENCH_ROWS = (("conv_digits", "conv layer, digits size"), ("conv_mid", "conv layer, mid-size"),
                    ("train_cnn", "digits CNN training step"))
# issue 30's sequence models, against torch float64 (no NumPy floor)
_SEQ_BENCH_ROWS = (("lstm", "LSTM forward + backward"),
                   ("encoder_layer", "TransformerEncoderLayer forward + backward"),
                   ("surname_tf", "surname transformer training step"))
_TARGET_ROWS = _BENCH_ROWS + (("memory", "peak memory of a spiral step"),
                              ("hvp", "Hessian-vector product")) + _CONV_BENCH_ROWS + _SEQ_BENCH_ROWS


def bench_targets(m: dict) -> list[dict[str, Any]]:
    """Every benchmark target with its measured ratio, whether it was met, and by how
    much: ``margin`` is measured / limit - 1 (negative: under the limit).

    >>> t = bench_targets({"train_spiral": {"duograd": 1.5, "numpy": 1.0, "met": False,
    ...                                     "target": "duograd <= 1.3x numpy"}})
    >>> t[0]["limit"], t[0]["measured"], t[0]["met"], round(t[0]["margin"], 3)
    (1.3, 1.5, False, 0.154)
    """
    out = []
    for key, label in _TARGET_ROWS:
        r = m.get(key)
        if not isinstance(r, dict):
            continue
        # One target string, or a list of them for a row held to several references.
        targets = [r.get("target")] if not isinstance(r.get("target"), list) else r["target"]
        for target in targets:
            if not isinstance(target, str):
                continue
            parsed = _TARGET.fullmatch(target.strip())
            if parsed is None:
                continue
            ours, op, factor, ref = parsed.groups()
            limit = float(factor) if factor else 1.0
            if key == "memory":
                measured = r.get("ratio")
            elif key == "hvp":
                measured = r.get("ratio_to_torch")
            else:
                measured = _bench_ratio(r, ref, ours)
            met = r.get("met") if len(targets) == 1 else None
            if met is None and measured is not None:
                met = measured < limit if op == "<" else measured <= limit
            out.append({"key": key, "workload": label, "target": target, "reference": ref,
                        "limit": limit, "measured": measured, "met": met,
                        "margin": None if measured is None else measured / limit - 1.0})
    return out


def _target_verdict(t: dict[str, Any]) -> str:
    """'met, 12% under the limit' / 'missed by 17%' / 'not measured'."""
    if t["measured"] is None or t["met"] is None:
        return "not measured"
    off = abs(100 * t["margin"])
    pct_off = f"{off:.0f}%" if off >= 1 else f"{off:.1f}%"
    if t["met"]:
        return "met" if t["margin"] == 0 else f"met, {pct_off} under the limit"
    return f"missed by {pct_off}"


def _targets_table(targets: list[dict[str, Any]]) -> Table:
    return Table(["target", "workload", "measured", "met?", "by how much"], [
        [t["target"], t["workload"],
         "n/a" if t["measured"] is None else f"{times(t['measured'])} {t['reference']}",
         "n/a" if t["met"] is None else ("yes" if t["met"] else "NO"), _target_verdict(t)]
        for t in targets])


def _targets_summary(targets: list[dict[str, Any]]) -> str:
    measured = [t for t in targets if t["met"] is not None]
    if not measured:
        return ""
    missed = [t for t in measured if not t["met"]]
    text = f"Targets met: {len(measured) - len(missed)} of {len(measured)}"
    if missed:
        text += "; missed: " + "; ".join(
            f"{t['workload']} ({t['target']}: measured {times(t['measured'])} {t['reference']}, "
            f"{_target_verdict(t)})" for t in missed)
    return text + "."


_COMPILED_ROWS = (("per_op", "per op, tiny arrays"), ("train_spiral", "spiral step, MLP + Adam"),
                  ("train_digits", "digits step, MLP + Adam"), ("hvp", "Hessian-vector product"),
                  ("chain", "long chain of ops"))


def compiled_rows(m: dict) -> list[dict[str, Any]]:
    """Per workload: eager, dg.compile and PyTorch as multiples of hand-written NumPy, the
    compiled target, and the recording (first) call as a multiple of one eager step.

    >>> r = compiled_rows({"per_op": {"duograd": 2.0, "duograd_compiled": 1.0, "numpy": 0.8,
    ...     "torch": 3.0, "compiled": {"limit": 1.6, "met": True, "first_call_ratio_to_eager": 1.2}}})
    >>> r[0]["eager"], r[0]["compiled"], r[0]["met"]
    (2.5, 1.25, True)
    """
    out = []
    for key, label in _COMPILED_ROWS:
        r = m.get(key)
        if not isinstance(r, dict) or not isinstance(r.get("compiled"), dict):
            continue
        c, base = r["compiled"], r.get("numpy")
        eager = r.get("duograd_fwd_over_rev", r.get("duograd"))
        torch = r.get("torch") if key != "hvp" else min(
            (r[k] for k in ("torch_func", "torch_functional") if r.get(k) is not None), default=None)
        ratio = (lambda a: None if a is None or not base else a / base)
        out.append({"key": key, "workload": label, "eager": ratio(eager),
                    "compiled": ratio(r.get("duograd_compiled")), "torch": ratio(torch),
                    "limit": c.get("limit"), "met": c.get("met"),
                    "first_call": c.get("first_call_ratio_to_eager"),
                    "first_call_met": c.get("first_call_met")})
    return out


def _compiled_table(rows: list[dict[str, Any]]) -> Table:
    yes = (lambda v: "n/a" if v is None else ("yes" if v else "NO"))
    return Table(["dg.compile workload", "eager / NumPy", "compiled / NumPy", "PyTorch / NumPy",
                  "target", "met?", "first call / eager step (target <= 3x)"], [
        [r["workload"], times(r["eager"]), times(r["compiled"]), times(r["torch"]),
         f"<= {times(r['limit'])}", yes(r["met"]),
         f"{times(r['first_call'])} ({'met' if r['first_call_met'] else 'missed'})"
         if r["first_call"] is not None else "n/a"] for r in rows])


def _num_range(x: float) -> str:
    return num(x)


SEQ_HEADER = "sequence model"


def _seq_table(m: dict) -> Table | None:
    """The sequence models' rows: eager and dg.compile beside PyTorch float64 (and float32
    for reference), in ms, with both ratios to float64; None when none was measured.

    >>> t = _seq_table({"lstm": {"model": "LSTM", "unit": "ms per step", "duograd": 2.0,
    ...     "duograd_compiled": 1.0, "torch": 2.0, "torch_f32": 1.5}})
    >>> t.rows[0][-2:]
    ['1.00x', '0.50x']
    """
    rows = []
    for key, label in _SEQ_BENCH_ROWS:
        r = m.get(key)
        if not isinstance(r, dict):
            continue
        q = r.get("quartiles") or {}
        model = f" {r['model']}" if r.get("model") else ""
        rows.append([f"{label}{model}", r.get("unit", "")]
                    + [median_iqr(r.get(e), q.get(e), _num_range)
                       for e in ("duograd", "duograd_compiled", "torch", "torch_f32")]
                    + [times(_bench_ratio(r, "torch")),
                       times(_bench_ratio(r, "torch", "duograd_compiled"))])
    if not rows:
        return None
    return Table([SEQ_HEADER, "unit", "duograd eager", "duograd dg.compile", "torch",
                  "torch float32 (reference)", "eager / torch", "compiled / torch"], rows)


TRANSFORMS_HEADER = "function transform (issue 31)"


def _transforms_table(m: dict) -> Table | None:
    """benchmarks/func_bench.py's rows (``benchmarks.transforms``): duograd, its baseline
    and torch.func, in ms, with both ratios, the target and the agreement with torch;
    None when not measured.

    >>> t = _transforms_table({"transforms": {"jacrev": {"model": "MLP", "jacrev_s": 0.001,
    ...     "row_loop_s": 0.01, "torch_func_s": 0.002, "max_abs_diff_vs_torch": 1e-16,
    ...     "met": True, "target": "t"}}})
    >>> t.rows[0][4:6]
    ['0.10x', '0.50x']
    """
    tr = m.get("transforms")
    if not isinstance(tr, dict):
        return None
    ms = (lambda v: "n/a" if v is None else num(v * 1e3))
    ratio = (lambda a, b: None if a is None or not b else a / b)
    yes = (lambda v: "n/a" if v is None else ("yes" if v else "NO"))
    specs = (("per_sample", "per-sample gradients, vmap(grad(loss))", "vmap_grad_s",
              "one batched backward", "batched_backward_s", "torch_func_s", "max_abs_diff_vs_torch"),
             ("jacrev", "func.jacrev (one batched sweep)", "jacrev_s",
              "the row loop (one vjp per row)", "row_loop_s", "torch_func_s", "max_abs_diff_vs_torch"),
             ("hessian", "Hessian, vmap of jvp of grad (chunked)", "forward_over_reverse_s",
              None, None, "torch_func_s", "max_abs_diff_vs_torch"),
             ("hessian", "func.hessian, literal (small batch)", "func_hessian_s",
              None, None, "torch_func_hessian_s", "small_max_abs_diff_vs_torch"))
    rows = []
    for key, label, ours, base_label, base, theirs, diff in specs:
        r = tr.get(key)
        if not isinstance(r, dict) or r.get(ours) is None:
            continue
        model = f" ({r['model']})" if r.get("model") else ""
        rows.append([label + model, ms(r.get(ours)), base_label or "-",
                     ms(r.get(base)) if base else "-", times(ratio(r.get(ours), r.get(base)))
                     if base else "-", times(ratio(r.get(ours), r.get(theirs))),
                     ms(r.get(theirs)), r.get("target", "") if ours != "func_hessian_s" else "-",
                     yes(r.get("met")) if ours != "func_hessian_s" and key != "hessian" else "-",
                     sci(r.get(diff))])
    if not rows:
        return None
    return Table([TRANSFORMS_HEADER, "duograd (ms)", "baseline", "baseline (ms)",
                  "duograd / baseline", "duograd / torch.func", "torch.func (ms)", "target",
                  "met?", "max abs diff vs torch"], rows)


XLA_HEADER = "dg.compile(backend=\"xla\") workload"
_XLA_ROWS = (("spiral", "spiral step, MLP + Adam"), ("digits", "digits step, MLP + Adam"),
             ("per_op", "per op, tiny arrays"), ("chain", "long chain of ops"),
             ("hvp", "Hessian-vector product"))


def _xla_table(m: dict) -> Table | None:
    """benchmarks/xla_bench.py's rows (``benchmarks.xla``): the XLA backend against jax.jit
    of the same step written by hand, the first calls, and the agreement of the two;
    None when not measured.

    >>> t = _xla_table({"xla": {"hvp": {"unit": "ms", "xla": 2.0, "jax_jit": 1.0,
    ...     "ratio_to_jax_jit": 2.0, "met": False, "max_rel_diff": 1e-15,
    ...     "first_call_ms": {"xla_record_and_compile": 10.0, "jax_jit": 8.0}}}})
    >>> t.rows[0][3:5]
    ['2.00x', 'NO']
    """
    x = m.get("xla")
    if not isinstance(x, dict):
        return None
    rows = []
    for key, label in _XLA_ROWS:
        r = x.get(key)
        if not isinstance(r, dict):
            continue
        first = r.get("first_call_ms") or {}
        rows.append([label, f"{num(r.get('xla'))} {r.get('unit', '')}",
                     f"{num(r.get('jax_jit'))} {r.get('unit', '')}", times(r.get("ratio_to_jax_jit")),
                     "n/a" if r.get("met") is None else ("yes" if r["met"] else "NO"),
                     f"{num(first.get('xla_record_and_compile'))} / {num(first.get('jax_jit'))}",
                     sci(r.get("max_rel_diff"))])
    if not rows:
        return None
    return Table([XLA_HEADER, "duograd, backend=\"xla\"", "jax.jit by hand",
                  "xla / jax.jit (target <= 1.05x)", "met?", "first call ms: xla / jax.jit",
                  "max relative difference"], rows)


def _benchmarks(m: dict) -> Section:
    s = Section("benchmarks", TITLES["benchmarks"], figures=m.get("figures", []))
    mach = m.get("machine", {})
    cfg = m.get("config", {})
    torch_version = mach.get("torch")
    counts = {p.get("num_threads") for p in _g(m, "threads", "threadpools", default=[]) or []}
    pools = " / ".join(num(c) for c in sorted(counts, key=str)) if counts else "n/a"
    s.paragraphs.append(
        "Timings from benchmarks/run.py, all engines in one process taking turns, BLAS threads "
        f"held at {pools} (verified: {num(_g(m, 'threads', 'verified'))}), float64 throughout; "
        f"{cfg.get('statistic', 'median over repeats')} ({cfg.get('mode', '?')} mode), with the "
        "middle half of the repeats (p25-p75) beside each median. "
        "The hand-written NumPy column is the same arithmetic with every derivative worked out by "
        "hand: the floor for any NumPy engine. "
        + ("PyTorch was not installed, so its column reads n/a."
           if not torch_version else f"PyTorch {torch_version}."))
    rows = []
    for key, label in _BENCH_ROWS + _CONV_BENCH_ROWS + _SEQ_BENCH_ROWS:
        r = m.get(key)
        if not isinstance(r, dict):
            continue
        model = f" {r['model']}" if r.get("model") else ""
        q = r.get("quartiles") or {}
        rows.append([f"{label}{model}", r.get("unit", "")]
                    + [median_iqr(r.get(e), q.get(e), _num_range)
                       for e in ("duograd", "torch", "torch_f32", "autograd", "numpy")]
                    + [times(_bench_ratio(r, "numpy")), times(_bench_ratio(r, "torch"))])
    s.tables.append(Table(["workload", "unit", "duograd", "torch", "torch float32 (reference)",
                           "HIPS autograd", "NumPy by hand",
                           "duograd / NumPy", "duograd / torch"], rows))
    parts = []
    for key, label in (("per_op", "per op on tiny arrays"), ("train_spiral", "spiral step"),
                       ("train_digits", "digits step"), ("train_blas", "BLAS-bound step")):
        r = m.get(key)
        if isinstance(r, dict):
            parts.append(f"{label} {times(_bench_ratio(r, 'torch'))} / "
                         f"{times(_bench_ratio(r, 'numpy'))}")
    if parts:
        summary = ("duograd's time as a multiple of PyTorch's / hand-written NumPy's: "
                   + "; ".join(parts) + ".")
        s.paragraphs.append(summary + " Below 1x, duograd was faster. Timings on a shared "
                            "machine carry visible spread.")
        s.headline = summary
    blas = m.get("train_blas")
    blas_ratio = _bench_ratio(blas, "numpy") if isinstance(blas, dict) else None
    if blas_ratio is not None and blas_ratio < 1.0:
        s.paragraphs.append(
            f"On the BLAS-bound step duograd reads {times(blas_ratio)} the NumPy floor, below it: "
            "both spend that step in the same BLAS calls, so the gap is run-to-run timing noise, "
            "not a faster engine.")
    targets = bench_targets(m)
    if targets:
        summary = _targets_summary(targets)
        s.paragraphs.append(summary + " Each target, its measured ratio and the margin by which "
                            "it was met or missed (measured / limit - 1) are in the table below.")
        s.tables.append(_targets_table(targets))
        if s.headline:
            s.headline += " " + summary
    seq = _seq_table(m)
    if seq is not None:
        s.paragraphs.append(
            "The sequence models (issue 30) have no hand-written NumPy floor: each is timed "
            "against PyTorch float64, eager and through dg.compile, from the same weights, "
            "after checking that the gradients agree; the times are in the table below.")
        s.tables.append(seq)
    trans = _transforms_table(m)
    if trans is not None:
        s.paragraphs.append(
            "The function transforms (issue 31, benchmarks/func_bench.py, one thread for both "
            "libraries): vmap, jacrev and the Hessian against their baselines and torch.func, "
            "with the largest difference from torch.func's values.")
        s.tables.append(trans)
    crows = compiled_rows(m)
    if crows:
        met = sum(1 for r in crows if r["met"])
        s.paragraphs.append(
            f"Capture and replay (dg.compile): a step is recorded once and its NumPy kernels are "
            f"replayed with no Tensors, graph or rule dispatch in between. Compiled targets met: "
            f"{met} of {len(crows)}. Each row is the time of one step as a multiple of the "
            "hand-written NumPy step measured in the same run.")
        s.tables.append(_compiled_table(crows))
        reuse = [(label, _g(m, key, "compiled", "buffer_reuse_ratio_to_numpy"))
                 for key, label in (("train_spiral", "spiral"), ("train_digits", "digits"))]
        if all(v is not None for _, v in reuse):
            s.paragraphs.append(
                "By default a replay writes only small kernel results (at most "
                f"{SMALL_BUFFER // 1024} KiB) into "
                "arrays allocated once and gives larger ones a new array per call. Timed in the "
                "same run with every result that never leaves the program in a buffer of its "
                "own (reuse_buffers=True, docs/api.md, dg.compile), the steps read "
                + ", ".join(f"{label} {times(v)}" for label, v in reuse) + " of NumPy.")
        ro = m.get("replay_overhead")
        if isinstance(ro, dict):
            s.paragraphs.append(
                f"The replay loop itself costs {num(ro.get('overhead_per_kernel_us'))} us per kernel "
                f"over a direct NumPy call ({num(ro.get('replay'))} us against "
                f"{num(ro.get('numpy'))} us for a one-element negation, eager "
                f"{num(ro.get('eager'))} us).")
        if s.headline:
            s.headline += " dg.compile / NumPy: " + "; ".join(
                f"{r['workload']} {times(r['compiled'])}" for r in crows) + "."
    xla = _xla_table(m)
    if xla is not None:
        chain = _g(m, "xla", "machine", "long_chain_ops")
        s.paragraphs.append(
            "dg.compile(fn, backend=\"xla\") (issue 32, benchmarks/xla_bench.py): the recorded "
            "step, duograd's own backward and the optimizer update run as one jax.jit "
            "computation, timed against the same step written by hand in jax.numpy and jitted "
            "(its state kept as JAX arrays between calls; the XLA backend hands parameters, "
            "gradients and optimizer state over and back on every call). The long chain is "
            f"{num(chain)} ops here (XLA takes minutes to compile 100,000).")
        s.tables.append(xla)
    elif isinstance(m.get("xla"), dict) and m["xla"].get("skipped"):
        s.paragraphs.append(f"dg.compile(backend=\"xla\"): not measured ({m['xla']['skipped']}).")
    hvp = m.get("hvp")
    if isinstance(hvp, dict):
        hq = hvp.get("quartiles") or {}
        s.tables.append(Table(["Hessian-vector product", hvp.get("unit", "") + " (median, p25-p75)"], [
            [label, median_iqr(hvp.get(k), hq.get(k), _num_range)]
            for k, label in (("duograd_fwd_over_rev", "duograd, forward-over-reverse (func.hvp)"),
                             ("duograd_rev_over_rev", "duograd, reverse-over-reverse (grad of grad)"),
                             ("duograd_compiled", "duograd, func.hvp through dg.compile"),
                             ("numpy", "hand-written NumPy (R-operator)"),
                             ("torch_func", "torch.func jvp(grad)"),
                             ("torch_functional", "torch.autograd.functional.hvp"))] + [
            ["relative error against finite differences", sci(_g(hvp, "checks", "fd_rel_err"))],
        ]))
    mem = m.get("memory")
    if isinstance(mem, dict):
        s.paragraphs.append(
            f"Memory: a spiral step's peak allocation is {num(mem.get('duograd'))} MiB against "
            f"{num(mem.get('numpy'))} MiB by hand ({times(mem.get('ratio'))}).")
    s.paragraphs.append("Every engine computes in float64; the torch float32 column is the same "
                        "training step in float32, for reference only (it is not compared with "
                        "anything, and duograd's ratios are against the float64 columns).")
    return s


def _modes(m: dict) -> Section:
    s = Section("modes", TITLES["modes"], figures=m.get("figures", []))
    pts = m["points"]
    cross, rng = m.get("crossover_ratio"), m.get("crossover_range")
    s.paragraphs.append(
        f"The full Jacobian of {m['function']} (hidden width {num(m['hidden'])}) with n * m held at "
        f"{num(m['n_times_m'])} and n / m swept from {fraction(pts[0]['ratio'])} to "
        f"{fraction(pts[-1]['ratio'])}; {num(m['repeats'])} repeats, "
        + ("each timing jacfwd and jacrev back to back, and the ratio taken within each repeat "
           "(paired), so a burst of load on the shared machine moves both sides of one ratio. "
           if m.get("statistic") else "medians. ") + f"jacfwd runs one forward "
        f"sweep per input, jacrev one reverse sweep per output. Both agree with the closed-form "
        f"Jacobian computed in NumPy to {sci(m['max_abs_error'])}.")
    s.paragraphs.append(
        f"With {num(pts[0]['n'])} inputs and {num(pts[0]['m'])} outputs, forward mode takes "
        f"{times(m['fwd_over_rev_at_min_ratio'])} reverse mode's time; with "
        f"{num(pts[-1]['n'])} inputs and {num(pts[-1]['m'])} outputs, "
        f"{times(m['fwd_over_rev_at_max_ratio'])}. "
        + (f"The median ratio crosses 1 near n / m = {num(cross, 2)}" if cross is not None else
           "The cheaper mode did not change over this sweep")
        + (f"; read from the p25 and p75 curves of the per-repeat ratios instead, the crossing "
           f"moves between {num(rng[0], 2)} and {num(rng[1], 2)}, so the data place it only "
           f"within that range" if cross is not None and rng else "")
        + (f". The cheaper mode changes {m['crossings']} times along the sweep, so timing "
           f"noise is visible in the curve" if (m.get("crossings") or 0) > 1 else "")
        + ". Theory puts the crossing at n / m = 1 up to the constant costs of a JVP and a "
        "VJP. A loss has one output, which is why training uses reverse mode." + _mode_note(m))
    s.headline = (f"Full Jacobian, forward vs reverse mode: forward costs "
                  f"{times(m['fwd_over_rev_at_min_ratio'])} reverse's at n/m = "
                  f"{fraction(pts[0]['ratio'])} and {times(m['fwd_over_rev_at_max_ratio'])} at n/m = "
                  f"{fraction(pts[-1]['ratio'])}"
                  + (f"; the modes cost the same somewhere between n/m = {num(rng[0], 2)} and "
                     f"{num(rng[1], 2)} (median {num(cross, 2)})." if cross is not None and rng else
                     f"; crossover near n/m = {num(cross, 2)}." if cross is not None else "."))
    s.tables.append(Table(["n", "m", "n / m", "jacfwd (median, p25-p75)",
                           "jacrev (median, p25-p75)", "jacfwd / jacrev (paired, median, p25-p75)"],
                          [[num(p["n"]), num(p["m"]), fraction(p["ratio"]),
                            median_iqr(p["jacfwd_seconds"], p.get("jacfwd_quartiles")),
                            median_iqr(p["jacrev_seconds"], p.get("jacrev_quartiles")),
                            median_iqr(p["fwd_over_rev"], p.get("fwd_over_rev_quartiles"), times)]
                           for p in pts]))
    return s


def _finite_diff(m: dict) -> Section:
    s = Section("finite_diff", TITLES["finite_diff"], figures=m.get("figures", []))
    bf, bc = m["best_forward"], m["best_central"]
    s.paragraphs.append(
        f"The derivative of {m['function']} at x = {num(m['x0'])}, against the exact value from the "
        f"{m['truth']}. Steps h run from {sci(m['h'][0], 0)} to {sci(m['h'][-1], 0)}.")
    s.paragraphs.append(
        f"Forward differences are best at h = {sci(bf['h'])} with error {sci(bf['error'])}; "
        f"central differences at h = {sci(bc['h'])} with error {sci(bc['error'])}. At the smallest "
        f"h round-off has taken over: errors {sci(m['forward_error_at_smallest_h'])} (forward) and "
        f"{sci(m['central_error_at_smallest_h'])} (central). Reverse-mode autodiff has no step to "
        f"choose: its error is {sci(m['autodiff_error'])} on the tensor engine and "
        f"{sci(m['autodiff_error_scalar'])} on the scalar engine (machine epsilon is "
        f"{sci(m['machine_epsilon'])}).")
    s.headline = (f"Best finite difference: {sci(bc['error'])} (central, h = {sci(bc['h'])}); "
                  f"autodiff: **{sci(m['autodiff_error'])}**.")
    return s


def _graphs(m: dict) -> Section:
    s = Section("graphs", TITLES["graphs"], figures=m.get("figures", []))
    sc, te = m["scalar"], m["tensor"]
    renderer = {"dot": "Graphviz's dot", "matplotlib": "the built-in matplotlib fallback"}.get(
        m["renderer"], m["renderer"])
    s.paragraphs.append(
        f"The scalar expression {sc['expression']} after its backward pass ({num(sc['nodes'])} "
        f"nodes, {num(sc['edges'])} edges; each box shows its value and gradient), and one MLP layer's "
        f"forward pass on tensors, {te['expression']} ({num(te['nodes'])} nodes, each a whole "
        f"array). Drawn by duograd.viz.draw with {renderer}; the DOT source sits next to each PNG "
        f"({sc['dot']}, {te['dot']}).")
    s.headline = f"Graph pictures drawn with {renderer}; DOT source beside each PNG."
    return s


def _inside_gradient(m: dict) -> Section:
    s = Section("inside_gradient", TITLES["inside_gradient"], figures=m.get("figures", []))
    ex, pr, ns, ac, ck = m["explain"], m["planted_rules"], m["nan_sources"], m["anomaly_cost"], m["checkpoint"]
    bias = "; ".join(f"row {b['row']}: {b['op']} of {tuple(b['input_shapes'][0])} and "
                     f"{tuple(b['input_shapes'][1])}, bias summed over axis "
                     f"{', '.join(map(str, b['summed_axes'][1]))} ({b['where']})" for b in ex["bias_rows"])
    s.paragraphs.append(
        f"dg.explain on the spiral MLP's loss lists {num(ex['rows'])} nodes in backward order; the "
        f"rows where the broadcasting adjoint summed a bias: {bias}. In the picture such an edge "
        f"reads \"{ex['edge_example']}\" (blue). The graph keeps {num(ex['total_saved_bytes'])} bytes "
        "alive for its rules. In the table, `where` is the line of this stage's source that "
        "made the node; \"summed axes\" has one entry per input: · means the gradient reached "
        "that input with its shape unchanged, - that the input is a constant (no gradient), "
        "and numbers are the axes the broadcasting adjoint summed over.")
    s.tables.append(Table(["#", "op", "shape", "input shapes", "summed axes (per input)",
                           "|grad|", "saved", "where"], [r + [""] * (8 - len(r)) for r in ex["cells"]]))
    s.tables.append(Table(["planted wrong rule", "op", "flagged rows", "fd error"],
                          [[r["bug"], r["op"], ", ".join(r["flagged"]) or "none", sci(r["fd_error"])]
                           for r in pr["rows"]]))
    s.paragraphs.append(
        f"check=True located **{pr['located']} of {pr['total']}** planted wrong VJP rules (each a "
        f"user-defined Primitive in the loss), flagging {pr['other_rows_flagged']} other rows; the "
        f"correct loss flags {pr['clean_loss_flagged']} rows (worst finite-difference error "
        f"{sci(pr['clean_worst_fd_error'])}). detect_anomaly located **{ns['located']} of "
        f"{ns['total']}** planted NaN/inf sources at the right op, pass and line. The masked-where "
        f"trap's message: \"{ns['masked_where_message']}\"")
    s.tables.append(Table(["NaN/inf source", "op", "pass", "where", "located"],
                          [[r["case"], r["op"] or "-", r["pass"] or "-", r["where"] or "-",
                            "yes" if r["located"] else "no"] for r in ns["rows"]]))
    s.paragraphs.append(
        f"Anomaly mode costs {times(ac['ratio_on_off'])} per op when on ({num(ac['on_us_per_op'])} "
        f"against {num(ac['off_us_per_op'])} µs; target {ac['target_on']}); off, it costs a "
        "primitive call one test of a flag that is already there for hooks.")
    cks = [("gradient-dominated", ck)] + ([("activation-dominated", m["checkpoint_activations"])]
                                          if isinstance(m.get("checkpoint_activations"), dict) else [])
    rows = []
    for what, c in cks:
        cfg = f"{what}: {c['depth']} layers, width {c['width']}, batch {c['batch']}"
        rows.append([cfg, num(c["peak_mib_plain"]), num(c["peak_mib_checkpoint"]),
                     num(c.get("predicted_peak_mib_checkpoint")), num(c["gradient_mib"]),
                     times(c["memory_ratio"]), times(c.get("predicted_memory_ratio")),
                     times(c["time_ratio"]), "yes" if c["bit_identical"] else "NO"])
    s.tables.append(Table(["checkpoint configuration (tanh MLP, segments of sqrt(layers))",
                           "plain peak (MiB)", "checkpointed peak (MiB)",
                           "sqrt(n) prediction (MiB)", "gradients (MiB)", "memory saved",
                           "predicted saving", "time ratio", "gradients bit-identical"], rows))
    goal_m, goal_t = ck["targets"]["memory"], ck["targets"]["time"]
    last_what, last = cks[-1]
    s.paragraphs.append(
        f"Checkpointing runs each segment of sqrt(n) layers without keeping its activations "
        f"and recomputes them during the backward pass; the sqrt(n) model predicts that "
        f"n / s + s layers' activations are alive at the peak instead of n (s layers per "
        f"segment), plus the gradients, which no checkpointing can drop. The goal: memory "
        f"{goal_m} at {goal_t} the time. In the gradient-dominated configuration ({ck['depth']} "
        f"layers of width {ck['width']}, batch {ck['batch']}) the gradients alone are "
        f"{num(ck['gradient_mib'])} MiB of the {num(ck['peak_mib_plain'])} MiB peak, so the "
        f"saving is capped: {times(ck['memory_ratio'])} (the activations alone shrink "
        f"{times(ck['memory_ratio_without_gradients'])}); the goal is missed there by "
        f"construction. "
        + (f"In the {last_what} configuration ({last['depth']} layers of width {last['width']}, "
           f"batch {last['batch']}) checkpointing saves {times(last['memory_ratio'])} (predicted "
           f"{times(last.get('predicted_memory_ratio'))}) at {times(last['time_ratio'])} the "
           f"time: the memory goal is {'met' if last['memory_ratio'] >= 3 else 'missed'} and the "
           f"time goal {'met' if last['time_ratio'] <= 1.4 else 'missed'} (recomputing the "
           f"forward pass costs about one more forward, 4/3 of a step in theory)."
           if len(cks) > 1 else "")
        + " The vanishing-gradient figure reads each layer's gradient norm with register_hook.")
    s.headline = (f"explain's check located {pr['located']}/{pr['total']} planted wrong rules; "
                  f"detect_anomaly located {ns['located']}/{ns['total']} NaN sources; checkpointing: "
                  + "; ".join(f"{what} {times(c['memory_ratio'])} less peak memory at "
                              f"{times(c['time_ratio'])} the time" for what, c in cks) + ".")
    return s


def _last_int(key: str) -> int:
    """The number at the end of a key such as ``distance_at_6000``, for sorting."""
    return int(key.rsplit("_", 1)[1])


def _verification(m: dict) -> Section:
    s = Section("verification", TITLES["verification"])
    ce, ls, adam = m.get("ce_identity", {}), m.get("least_squares", {}), m.get("adam_stall", {})
    rows = []
    if ce:
        rows.append([f"cross-entropy gradient vs (softmax - onehot)/N, {num(ce.get('n_cases'))} "
                     "random cases (float64)", sci(ce.get("max_abs_error")), "max abs error"])
        rows.append(["the same in float32", sci(ce.get("max_abs_error_float32")), "max abs error"])
    if ls:
        rows.append([f"gradient descent at lr = 1/L vs numpy.linalg.solve ({num(ls.get('steps'))} "
                     "steps)", sci(ls.get("relative_error")), "relative error of the solution"])
        rows.append(["final loss vs closed-form residual", sci(ls.get("loss_gap")), "abs difference"])
        rows.append(["engine gradient at the exact solution", sci(ls.get("grad_at_star_max_abs")),
                     "max abs (round-off)"])
        rows.append(["loss ever rose before converging", num(ls.get("loss_rose")), "theorem: no"])
    if adam:
        for key in sorted((k for k in adam if k.startswith("distance_at_")), key=_last_int):
            rows.append([f"Adam, fixed lr {num(adam.get('lr'))}: distance to optimum at step "
                         f"{num(int(key.rsplit('_', 1)[1]))}", sci(adam[key]), "not settling"])
        for key in sorted((k for k in adam if k.startswith("max_distance_")), key=_last_int):
            lo, hi = key[len("max_distance_"):].split("_to_")
            rows.append([f"Adam, fixed lr: largest distance over steps {num(int(lo))}-{num(int(hi))}",
                         sci(adam[key]), "orbiting"])
        rows.append([f"Adam, annealed ({adam.get('annealed_schedule')})",
                     sci(adam.get("annealed_distance")), "distance to optimum"])
    pinn, gpen = m.get("pinn", {}), m.get("gradient_penalty", {})
    if pinn:
        rows.append([f"PINN for u'' = -pi^2 sin(pi x), trained {num(pinn.get('epochs'))} epochs through "
                     "its own second derivative, vs sin(pi x) on "
                     f"{num(pinn.get('grid_points'))} points", sci(pinn.get("max_error")),
                     "max abs error"])
    if gpen:
        rows.append([f"gradient-penalty gradient w.r.t. {num(gpen.get('n_params'))} critic weights "
                     "vs central differences", sci(gpen.get("max_abs_error")), "max abs error"])
    s.tables.append(Table(["check (against an independent reference)", "measured", "meaning"], rows))
    s.paragraphs.append(
        "Measured by benchmarks/pins.py and the two programs in examples/; the test suite "
        "asserts thresholds on these same functions.")
    parts = []
    if ce:
        parts.append(f"cross-entropy gradient = (p - y)/N to **{sci(ce.get('max_abs_error'))}**")
    if ls:
        parts.append(f"gradient descent lands on numpy.linalg.solve's answer to "
                     f"**{sci(ls.get('relative_error'))}** relative error")
    if adam:
        parts.append(f"annealed Adam reaches it to {sci(adam.get('annealed_distance'))}")
    if pinn:
        parts.append(f"a PINN trained through its second derivative is within "
                     f"{sci(pinn.get('max_error'))} of sin(pi x)")
    s.headline = "; ".join(parts) + "." if parts else ""
    return s


_BUILDERS = {"spiral": _spiral, "digits": _digits, "digits_cnn": _digits_cnn,
             "optimizers": _optimizers,
             "scalar_vs_tensor": _scalar_vs_tensor, "benchmarks": _benchmarks, "modes": _modes,
             "finite_diff": _finite_diff, "graphs": _graphs, "inside_gradient": _inside_gradient,
             "verification": _verification}
_BUILDERS["names"] = lambda m: _names_section(m)  # branch names: the section is below


def sections(measurements: dict) -> list[Section]:
    """Every stage's section, in walkthrough order; unmeasured stages say so.

    >>> [s.measured for s in sections({})][:2]
    [False, False]
    """
    out = []
    stage_sizes = _g(measurements, "meta", "stages", default={}) or {}
    for key, build in _BUILDERS.items():
        m = measurements.get(key)
        if not isinstance(m, dict):
            out.append(Section(key, TITLES[key], measured=False, paragraphs=[
                f"Not measured yet: run `python walkthrough.py --only {key}`."],
                headline=f"not measured yet (`python walkthrough.py --only {key}`)"))
            continue
        try:
            sec = build(dict(m, _size=_g(stage_sizes, key, "size"),
                             _sweep=measurements.get("digits_sweep")))
            sweep = measurements.get("digits_sweep")
            model = {"digits": "mlp", "digits_cnn": "cnn"}.get(key)
            source = (m.get("setting_source") if key == "digits"
                      else _g(m, "cnn", "setting_source")) if model else None
            if model and isinstance(sweep, dict) and str(source).startswith("validation sweep"):
                sec.tables.append(_sweep_table(sweep, model))
            label = run_labels(measurements)["stages"].get(key)
            if label and not run_labels(measurements)["one_run"]:
                sec.paragraphs.insert(0, f"Measured by run {label} (see the note at the top).")
                sec.headline += f" [run {label}]"
            out.append(sec)
        except (KeyError, TypeError, IndexError, ValueError) as e:
            # A section written by an older or foreign version of the stage.
            note = (f"The {key} section of measurements.json could not be rendered "
                    f"({type(e).__name__}: {e}); rerun `python walkthrough.py --only {key}`.")
            out.append(Section(key, TITLES[key], measured=False, paragraphs=[note],
                               headline=f"could not be rendered; rerun `python walkthrough.py "
                                        f"--only {key}`"))
    return out


MAIN_STAGES = tuple(TITLES)


def run_labels(measurements: dict) -> dict[str, Any]:
    """Which run measured each stage: ``{"stages": {stage: label}, "runs": [(label, info)],
    "one_run": bool}``. Labels are letters in order of first use; stages measured before
    runs were recorded share the label "?". ``one_run`` is true when every main stage
    (the digits sweep aside) comes from one run.

    >>> r = run_labels({"meta": {"stages": {"spiral": {"run": "x"}, "modes": {"run": "y"}},
    ...                          "runs": {"x": {"command": "a"}, "y": {"command": "b"}}}})
    >>> r["stages"], r["one_run"]
    ({'spiral': 'A', 'modes': 'B'}, False)
    """
    meta = measurements.get("meta", {}) or {}
    stages, runs = meta.get("stages", {}) or {}, meta.get("runs", {}) or {}
    labels: dict[str, str] = {}
    out: dict[str, str] = {}
    listed: list[tuple[str, dict]] = []
    for key in list(MAIN_STAGES) + [k for k in stages if k not in MAIN_STAGES]:
        if key not in stages:
            continue
        rid = stages[key].get("run")
        if rid is None:
            out[key] = "?"
            if "?" not in labels.values():
                labels["?"] = "?"
                listed.append(("?", {"command": "an earlier run", "date": "not recorded"}))
            continue
        if rid not in labels:
            labels[rid] = chr(ord("A") + len([v for v in labels.values() if v != "?"]))
            listed.append((labels[rid], dict(runs.get(rid, {}), id=rid)))
        out[key] = labels[rid]
    main = {out[k] for k in MAIN_STAGES if k in out}
    one = len(main) == 1 and "?" not in main and all(k in out for k in MAIN_STAGES)
    return {"stages": out, "runs": listed, "one_run": one}


def _meta_line(measurements: dict) -> str:
    meta = measurements.get("meta", {})
    v = meta.get("versions", {})
    threads = meta.get("blas_threads")
    machine = (f"on {num(meta.get('cpu_count'))} CPU cores (BLAS threads: {num(threads)}), Python "
               f"{v.get('python', '?')}, NumPy {v.get('numpy', '?')}, PyTorch "
               f"{v.get('torch') or 'not installed'}.")
    r = run_labels(measurements)
    if not r["runs"]:
        return f"Last updated {meta.get('date', '?')} by `{meta.get('command', '?')}` {machine}"
    info = {label: i for label, i in r["runs"]}
    stages = r["stages"]
    if r["one_run"]:
        label = stages[MAIN_STAGES[0]]
        text = (f"Every section comes from one complete run, `{info[label].get('command', '?')}`, "
                f"dated {info[label].get('date', '?')},")
        extra = [(k, stages[k]) for k in stages if k not in MAIN_STAGES and stages[k] != label]
        for k, lab in extra:
            text = (text[:-1] + f"; the digits hyper-parameters come from the validation sweep, "
                    f"`{info[lab].get('command', '?')}`, dated {info[lab].get('date', '?')},")
        return f"{text} {machine}"
    parts = []
    for label, i in r["runs"]:
        names = [k for k, lab in stages.items() if lab == label]
        parts.append(f"run {label}: `{i.get('command', '?')}`, {i.get('date', '?')} "
                     f"({', '.join(names)})")
    return ("These numbers do NOT come from one complete run; each section names the run that "
            "measured it. " + "; ".join(parts) + f". Measured {machine}")


# ---------------------------------------------------------------- README block

def _md_table(header: list, rows: list) -> list[str]:
    """A Markdown table's lines, then a blank line."""
    return (["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            + ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows] + [""])


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


# Figures shown inline in the README; the rest are linked (the report shows them all).
README_FIGURES = ("spiral.png", "spiral_noise.png", "scalar_vs_tensor.png")
# Their alt texts: one each, so no two images read the same to a screen reader.
README_ALT = {"spiral.png": "decision boundaries and loss curves",
              "spiral_noise.png": "accuracy against the Bayes ceiling across the noise sweep",
              "scalar_vs_tensor.png": "time per step and nodes per graph on each engine"}


def render_readme_block(measurements: dict, figure_dir: str = "results") -> str:
    """The README's results block, markers included, from the measurements alone.

    >>> render_readme_block({}).splitlines()[-1]
    '<!-- results:end -->'
    """
    lines = [BEGIN,
             "<!-- Generated by walkthrough.py from results/measurements.json: edit the "
             "renderer (experiments/report.py), not this block. -->",
             "",
             _meta_line(measurements) + " Every figure and table is in "
             f"[{figure_dir}/report.html]({figure_dir}/report.html).",
             "",
             "| experiment | result | figures |",
             "| --- | --- | --- |"]
    secs = sections(measurements)
    for s in secs:
        links = ", ".join(f"[{fig}]({figure_dir}/{fig})" for fig in s.figures) if s.measured else ""
        lines.append(f"| {s.title} | {_md_escape(s.headline)} | {links} |")
    lines.append("")
    shown = [(s, fig) for s in secs if s.measured for fig in s.figures if fig in README_FIGURES]
    for s, fig in shown:
        lines.append(f"![{s.title}: {README_ALT.get(fig, fig)}]({figure_dir}/{fig})")
        lines.append("")
    bench = next((s for s in secs if s.key == "benchmarks" and s.measured), None)
    if bench is not None and bench.tables:
        t = bench.tables[0]
        lines.append("Benchmark times (median, with p25-p75 of the repeats; a ratio below 1x means "
                     "duograd was faster):")
        lines.append("")
        lines += _md_table(t.header, t.rows)
        goals = next((t for t in bench.tables if t.header and t.header[0] == "target"), None)
        if goals is not None:
            lines.append("Benchmark targets (\"by how much\" is measured / limit - 1):")
            lines.append("")
            lines += _md_table(goals.header, goals.rows)
        seq = next((t for t in bench.tables if t.header and t.header[0] == SEQ_HEADER), None)
        if seq is not None:
            lines.append("Sequence models against PyTorch float64 (eager and `dg.compile`):")
            lines.append("")
            lines += _md_table(seq.header, seq.rows)
        trans = next((t for t in bench.tables if t.header and t.header[0] == TRANSFORMS_HEADER), None)
        if trans is not None:
            lines.append("Function transforms (`vmap`, `jacrev`, `hessian`) against their baselines "
                         "and torch.func:")
            lines.append("")
            lines += _md_table(trans.header, trans.rows)
        comp = next((t for t in bench.tables if t.header and t.header[0] == "dg.compile workload"), None)
        if comp is not None:
            lines.append("Capture and replay, `dg.compile` (times as multiples of hand-written NumPy):")
            lines.append("")
            lines += _md_table(comp.header, comp.rows)
        xla = next((t for t in bench.tables if t.header and t.header[0] == XLA_HEADER), None)
        if xla is not None:
            lines.append("`dg.compile(fn, backend=\"xla\")` against `jax.jit` of the same step "
                         "written by hand:")
            lines.append("")
            lines += _md_table(xla.header, xla.rows)
    lines.append(END)
    return "\n".join(lines)


TIME_BEGIN, TIME_END = "<!-- time:begin -->", "<!-- time:end -->"


def render_time_line(measurements: dict) -> str:
    """The README's time estimate, from the stage times in measurements.json, markers included.

    >>> render_time_line({"meta": {"cpu_count": 2, "stages": {"spiral": {"seconds": 60.0},
    ...     "modes": {"seconds": 30.0}}}}).splitlines()[1].split(";")[0]
    "The walkthrough itself took about 1.5 minutes (90 s, the sum of its stages' last times) on 2 CPU cores"
    """
    meta = measurements.get("meta", {}) or {}
    stages = meta.get("stages", {}) or {}
    main = [v.get("seconds") or 0.0 for k, v in stages.items() if k in MAIN_STAGES]
    if not main:
        return f"{TIME_BEGIN}\nHow long it takes: not measured yet.\n{TIME_END}"
    total = float(sum(main))
    text = (f"The walkthrough itself took about {total / 60:.1f} minutes ({total:.0f} s, the sum of "
            f"its stages' last times) on {num(meta.get('cpu_count'))} CPU cores;")
    sweep = stages.get("digits_sweep")
    rest = (" the first `make demo` or `make test` also creates .venv and installs the packages "
            "(minutes, depending on the network).")
    if isinstance(sweep, dict) and sweep.get("seconds"):
        rest += (f" The optional digits hyper-parameter sweep (`--only digits_sweep`) took "
                 f"{sweep['seconds'] / 60:.1f} minutes more.")
    return f"{TIME_BEGIN}\n{text}{rest}\n{TIME_END}"


def replace_block(readme_text: str, block: str) -> str:
    """``readme_text`` with the text between the markers (inclusive) replaced by ``block``.

    >>> replace_block("a\\n<!-- results:begin -->\\nold\\n<!-- results:end -->\\nb", "NEW")
    'a\\nNEW\\nb'
    """
    i, j = readme_text.find(BEGIN), readme_text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"README: the markers {BEGIN} and {END} were not found in order")
    return readme_text[:i] + block + readme_text[j + len(END):]


def extract_block(readme_text: str) -> str:
    """The block between the markers, markers included.

    >>> extract_block("x\\n<!-- results:begin -->\\n1\\n<!-- results:end -->\\ny")
    '<!-- results:begin -->\\n1\\n<!-- results:end -->'
    """
    i, j = readme_text.find(BEGIN), readme_text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"README: the markers {BEGIN} and {END} were not found in order")
    return readme_text[i:j + len(END)]


def update_readme(path: str | Path, measurements: dict) -> bool:
    """Rewrite the results block of the README at ``path``; True if its text changed.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "README.md")
    >>> _ = open(path, "w").write("# x\\n" + BEGIN + "\\n" + END + "\\n")
    >>> update_readme(path, {}), update_readme(path, {})
    (True, False)
    """
    path = Path(path)
    old = path.read_text(encoding="utf-8")
    new = replace_block(old, render_readme_block(measurements))
    i, j = new.find(TIME_BEGIN), new.find(TIME_END)
    if 0 <= i < j:  # the time estimate before `make demo`
        new = new[:i] + render_time_line(measurements) + new[j + len(TIME_END):]
    if new != old:
        path.write_text(new, encoding="utf-8")
    return new != old


# ---------------------------------------------------------------- HTML report

_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.5}
h1{border-bottom:2px solid #333;padding-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc}
.tw{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:1em 0;font-size:.92em;max-width:100%}
th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top;
overflow-wrap:anywhere}
td.num{text-align:right;overflow-wrap:normal}th{background:#f3f3f3}
td.num span{white-space:nowrap}td.num .iqr{display:block;color:#666;font-size:.85em}
@media (max-width:1000px){table{font-size:.8em}th,td{padding:.2em .3em}
td.num span{white-space:normal}}
figure{margin:1em 0}img{max-width:100%;border:1px solid #ddd}
figcaption{color:#444;font-size:.9em;margin-top:.2em}
.missing{color:#a00}.meta{color:#555;font-size:.9em}code{background:#f3f3f3;padding:0 .2em}
nav ul{columns:2;list-style:none;padding-left:0}
"""


def _inline_md(text: str) -> str:
    """HTML for a paragraph that may hold **bold** and `code` spans."""
    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", t)


# What each figure shows, for its caption (a figure not listed gets its file name).
CAPTIONS = {
    "spiral.png": "Top: the decision boundaries (random seed 0) of the standard configuration "
                  "and of the overlapping one (the key is above the panels); colour is the class (blue 0, red 1, for the points and the "
                  "shaded P(class 1) alike), circles are training points and triangles test "
                  "points, the dashed green line is the Bayes boundary. Bottom: train and test "
                  "loss per epoch, mean and mean ± sd over the seeds.",
    "spiral_noise.png": "The noise sweep. Left: train and test accuracy (mean ± sd over seeds) "
                        "against the exact Bayes ceiling. Right: the train - test gap "
                        "(memorising) and the ceiling - test shortfall.",
    "digits_curves.png": "Train and test cross-entropy (geometric mean ×/÷ geometric sd) and "
                         "accuracy (mean ± sd) per epoch on the digits, bands over the seeds.",
    "digits_confusion.png": "Confusion matrix of the test digits, every seed's predictions "
                            "counted together (rows: true digit, columns: predicted).",
    "digits_cnn_confusion.png": "Confusion matrices of the test digits for seed 0, the MLP (left) "
                                "and the CNN (right); rows: true digit, columns: predicted, "
                                "off-diagonal counts in red.",
    "digits_cnn_filters.png": "The CNN's sixteen first-layer 3x3 filters after training (seed 0), "
                              "on one colour scale: red positive, blue negative weights.",
    "optimizers.png": "Left: loss per epoch at each optimizer's best learning rate (each seed "
                      "at its own best rate; geometric mean ×/÷ geometric sd over seeds). Right: "
                      "final loss over each learning-rate grid, the band over seeds; the stars "
                      "mark each random seed's best rate, one star per seed, spread sideways "
                      "(each seed's star moved by a factor of 1.12 from its neighbour's, centred "
                      "on the true rate) so that seeds with the same best rate stay visible.",
    "scalar_vs_tensor.png": "The same training step on the scalar and the tensor engine: time "
                            "per step and nodes per graph.",
    "benchmarks.png": "Time per step or op relative to hand-written NumPy (1x, dashed): bars "
                      "are medians, whiskers the p25-p75 range of each engine's repeats (over "
                      "NumPy's median); n/a marks a column that was not measured.",
    "modes.png": "Left: time for the full Jacobian with forward mode (jacfwd) and reverse mode "
                 "(jacrev) as the input/output ratio n / m changes (medians, p25-p75 bars). "
                 "Right: the ratio jacfwd / jacrev taken within each repeat (the two are timed "
                 "back to back), its median and p25-p75; the crossover is where it crosses 1.",
    "inside_explain.png": "dg.explain's picture of the spiral MLP's backward pass, output at the "
                          "top: one box per node (operation, shape, gradient norm, bytes kept for "
                          "the backward rule, source line), edges labelled with the gradient's "
                          "shape; blue edges are where the broadcasting adjoint summed a "
                          "gradient down to a bias's shape.",
    "inside_vanishing.png": "Gradient norm at each hidden layer's output of a deep MLP, read "
                            "with register_hook during one backward pass: with sigmoid it shrinks "
                            "layer by layer towards the input, with relu it does not.",
    "inside_checkpoint.png": "Peak memory of one forward + backward pass, plain and checkpointed, "
                             "for the gradient-dominated (left) and the activation-dominated "
                             "(right) configuration; hatched: the part that is gradients, dashed "
                             "red: the sqrt(n)-segments prediction; labels give MiB and time per "
                             "step.",
    "finite_diff.png": "Error of forward and central differences against the step h, beside "
                       "reverse-mode autodiff's error and machine epsilon times |f'(x0)|.",
    "graph_scalar.png": "The graph of tanh(a*b + c) * d after backward(): leaves a = 2, b = -3, "
                        "c = 6.8, d = -0.7; each box shows its value and gradient.",
    "graph_tensor_layer.png": "One MLP layer's forward pass on tensors, relu(x @ W.T + b); each box "
                              "is a whole array.",
    "names_loss_curves.png": "The surname models' loss per training step (log scale): training "
                             "loss as a running mean and dev loss as dashed lines with markers, "
                             "mean ± sd over the random seeds, for the neural bigram, the MLP and "
                             "the transformer.",
    "names_bigram_table.png": "The counted bigram: log P(next character | previous character) "
                              "with add-one smoothing, '.' both opening and closing a name "
                              "(rows: previous character, columns: next).",
}


def _img(figure_dir: Path | None, name: str, number: int) -> str:
    path = None if figure_dir is None else Path(figure_dir) / name
    if path is None or not path.is_file():
        return f'<p class="missing">Figure {html.escape(name)} is not available.</p>'
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    caption = CAPTIONS.get(name, name)
    return (f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>Figure {number}. {html.escape(caption)} "
            f"(file: {html.escape(name)})</figcaption></figure>")


_NUMERIC = re.compile(r"[-+]?[\d.,]+(e[-+]?\d+)?\s*(x|%|us|ms|s|MiB)?( \w+)?|n/a|\.|-|")


def _is_numeric(cell: str) -> bool:
    """A number, or a number with its spread: '94.1% ± 3.0%', '1.2 (p25-p75 1.1-1.3)'."""
    head = cell.split(" ± ")[0].split(" (")[0].strip()
    return bool(_NUMERIC.fullmatch(head))


def _num_cell(c: str) -> str:
    """A number cell: the value on one line, a "(p25-p75 ...)" range on a second, smaller one,
    so that wide tables fit the text column.

    >>> _num_cell("1.2 (p25-p75 1.1-1.3)")
    '<td class="num"><span>1.2</span><span class="iqr">p25-p75 1.1-1.3</span></td>'
    """
    head, sep, rest = c.partition(" (p25-p75 ")
    if sep and rest.endswith(")"):
        return (f'<td class="num"><span>{html.escape(head)}</span>'
                f'<span class="iqr">p25-p75 {html.escape(rest[:-1])}</span></td>')
    return f'<td class="num"><span>{html.escape(c)}</span></td>'


def _html_table(t: Table) -> Iterable[str]:
    """Numbers right-aligned (so their digits line up), words left-aligned."""
    yield '<div class="tw"><table><thead><tr>' + "".join(f"<th>{html.escape(h)}</th>"
                                                         for h in t.header)
    yield "</tr></thead><tbody>"
    for row in t.rows:
        yield "<tr>" + "".join(_num_cell(c) if _is_numeric(c) else f"<td>{html.escape(c)}</td>"
                               for c in row) + "</tr>"
    yield "</tbody></table></div>"


def render_html(measurements: dict, figure_dir: str | Path | None = None) -> str:
    """One self-contained HTML page: every stage's numbers, with its figures embedded
    as base64 PNGs when ``figure_dir`` holds them.

    >>> page = render_html({})
    >>> page.startswith("<!DOCTYPE html>") and "not measured yet" in page.lower()
    True
    """
    secs = sections(measurements)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>duograd walkthrough report</title>", f"<style>{_CSS}</style></head><body>",
           "<h1>duograd: the walkthrough report</h1>",
           f'<p class="meta">{_inline_md(_meta_line(measurements))} Every number on this page is '
           "read from measurements.json by experiments/report.py.</p>",
           "<h2>Summary</h2>"]
    out.extend(_html_table(Table(["experiment", "result"],
                                 [[s.title, s.headline.replace("**", "")] for s in secs])))
    # The titles carry their numbers ("1. Two-arm spiral"), so the list adds none.
    out.append("<nav><h2>Contents</h2><ul>"
               + "".join(f'<li><a href="#{s.key}">{html.escape(s.title)}</a></li>' for s in secs)
               + "</ul></nav>")
    n_figure = 0
    for s in secs:
        out.append(f'<h2 id="{s.key}">{html.escape(s.title)}</h2>')
        opening = "<p>" if s.measured else '<p class="missing">'
        for p in s.paragraphs:
            out.append(f"{opening}{_inline_md(p)}</p>")
        for fig in s.figures:
            n_figure += 1
            out.append(_img(Path(figure_dir) if figure_dir is not None else None, fig, n_figure))
        for t in s.tables:
            out.extend(_html_table(t))
    stages = _g(measurements, "meta", "stages", default={}) or {}
    if stages:
        out.append("<h2>Stage times</h2>")
        order = [k for k in TITLES if k in stages] + [k for k in stages if k not in TITLES]
        labels = run_labels(measurements)["stages"]
        out.extend(_html_table(Table(["stage", "size", "seconds", "run", "finished at"], [
            [k, str(stages[k].get("size", "")), num(stages[k].get("seconds")),
             labels.get(k, "?"), str(stages[k].get("date", ""))] for k in order]
            + [["all stages (their latest runs)", "", num(round(sum(
                float(v.get("seconds") or 0) for v in stages.values()), 2)), "", ""]])))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- names (branch names)

def _worst(*values: float | None) -> float | None:
    """The largest of ``values``, or None when any is missing (not measured)."""
    return None if any(v is None for v in values) else max(values)


def _names_section(m: dict) -> Section:
    """Section 12: the surname models, each beside PyTorch, from measurements alone."""
    s = Section("names", TITLES["names"], figures=m.get("figures", []))
    big, mlp, tf = m["bigram"], m["mlp"], m["transformer"]
    n = len(mlp["seeds"])

    def ms(r: dict, key: str) -> str:
        return "n/a" if r.get(key) is None else f"{r[key]['mean']:.4f} ± {r[key]['sd']:.4f}"

    def f4(x: Any) -> str:
        return "n/a" if x is None else f"{x:.4f}"

    def dur(t: Any) -> str:
        return "n/a (PyTorch not installed)" if t is None else duration(t["median"])

    s.paragraphs.append(
        f"{num(sum(m['n_words'].values()))} US census surnames (the `names` package), split "
        f"80/10/10 into {num(m['n_words']['train'])} / {num(m['n_words']['dev'])} / "
        f"{num(m['n_words']['test'])} names by seed {m['split_seed']} (checksum "
        f"`{m['split_checksum'][:16]}`); {m['vocab']} symbols, '.' closing each name. NLL is in "
        f"nats per character, the closing '.' included. The MLP ({num(mlp['parameters'])} "
        f"parameters, {num(mlp['steps'])} steps of {num(mlp['batch'])} windows) and the "
        f"transformer ({num(tf['parameters'])} parameters, {num(tf['steps'])} steps of "
        f"{num(tf['batch'])} names, AdamW with warm-up and cosine) are trained over {n} seeds "
        f"through {'dg.compile' if m.get('compiled') else 'eager steps'}, each beside the same "
        f"model in PyTorch float64 from the same weights on the same batches.{_mode_note(m)}")
    pin = big["neural"]["pin"]
    s.paragraphs.append(
        f"The neural bigram ({num(big['neural']['steps'])} full-batch Adam steps on the "
        f"smoothed counts) reaches the counted bigram's dev NLL within "
        f"{sci(pin['dev_nll_diff'])} nats (pin < {sci(pin['tolerance'])}: "
        f"{'met' if pin['met'] else 'MISSED'}). Against PyTorch over the first "
        f"{num(mlp['compare_steps'])} steps, the largest loss difference is "
        f"{sci(mlp['curve_max_diff'])} (MLP) and {sci(tf['curve_max_diff'])} (transformer), the "
        f"largest parameter difference {sci(mlp['param_max_diff'])} and "
        f"{sci(tf['param_max_diff'])}. The causal mask: replacing every character from a "
        f"position on changes the transformer's outputs before it by at most "
        f"{sci(m['causal_mask_max_diff'])}.")
    mg = m["margins"]
    s.paragraphs.append(
        f"Dev NLL margins: the MLP is {mg['bigram_minus_mlp']:.4f} nats below the counted bigram, "
        f"the transformer {mg['mlp_minus_transformer']:.4f} below the MLP "
        f"(order transformer < MLP < bigram: {'holds' if mg['ordered'] else 'DOES NOT hold'}).")
    rows = [[name, f4(big[k]["dev_nll"]), f4(big[k]["torch_dev_nll"]), f4(big[k]["test_nll"]),
             f4(big[k]["torch_test_nll"])]
            for name, k in (("counted bigram", "counted"), ("neural bigram", "neural"))]
    for name, r in (("MLP", mlp), ("transformer", tf)):
        rows.append([name, ms(r, "dev_nll"), ms(r, "torch_dev_nll"), ms(r, "test_nll"),
                     ms(r, "torch_test_nll")])
    s.tables.append(Table(["model", "dev NLL (duograd)", "dev NLL (PyTorch f64)",
                           "test NLL (duograd)", "test NLL (PyTorch f64)"], rows))
    trows = []
    for name, key in (("MLP", "mlp"), ("transformer", "transformer")):
        t = m["step_times"][key]
        trows.append([name] + [dur(t[k]) for k in ("eager", "compiled", "torch_f64", "torch_f32")]
                     + [times(t["compiled_over_torch_f64"])])
    s.tables.append(Table(["training step (1 thread)", "eager", "dg.compile", "PyTorch f64",
                           "PyTorch f32", "compiled / PyTorch f64"], trows))
    srows = [["counted bigram", ", ".join(big["counted"]["samples"]),
              pct(big["counted"]["samples_in_train"], 0)]]
    for name, r in (("MLP", mlp), ("transformer", tf)):
        srows.append([name, ", ".join(r["samples"]), pct(r["samples_in_train"], 0)])
    s.tables.append(Table(["model", f"20 samples (seed {m['sample_seed']})", "in training set"],
                          srows))
    target = m["transformer_target"]
    s.headline = (f"Surnames: dev NLL bigram {big['counted']['dev_nll']:.3f}, MLP "
                  f"{mlp['dev_nll']['mean']:.3f}, transformer {tf['dev_nll']['mean']:.3f} nats/char "
                  f"(PyTorch f64 twins agree to {sci(_worst(mlp['curve_max_diff'], tf['curve_max_diff']))}); "
                  f"compiled transformer step {times(m['step_times']['transformer']['compiled_over_torch_f64'])} "
                  f"PyTorch f64 (target <= {times(target['compiled_over_torch_f64_max'])}: "
                  f"{'not measured' if target['met'] is None else 'met' if target['met'] else 'missed'}).")
    return s

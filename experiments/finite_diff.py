"""Stage 7: finite differences against automatic differentiation.

The derivative of ``f(x) = sin(x) exp(-x/2) + x^3/10`` at ``X0`` four ways: forward
differences ``(f(x+h) - f(x)) / h`` and central differences ``(f(x+h) - f(x-h)) / 2h``
for every step ``h`` from 1e-1 down to 1e-15, and reverse-mode autodiff on both
engines. Each is compared with the closed form

    f'(x) = exp(-x/2) (cos x - sin(x) / 2) + 3 x^2 / 10

evaluated to 50 significant digits with mpmath (in float64 when mpmath is absent; the
measurements say which). The finite-difference errors trace the familiar V: truncation
error falls as h shrinks until round-off, which grows like 1/h, takes over. Autodiff has
no step to choose; its error is a few rounding errors of the operations themselves.
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable

import numpy as np

import duograd as dg
from duograd.scalar import Value

from . import check_size, figure, save, to_list

X0 = 1.3
STEPS_PER_DECADE = {"full": 4, "quick": 4, "smoke": 1}


def f(x: Any) -> Any:
    """The test function; works on floats, Values and Tensors alike.

    >>> round(f(0.0), 12)
    0.0
    """
    if isinstance(x, float):
        return math.sin(x) * math.exp(-x / 2) + x ** 3 / 10
    return x.sin() * (x * -0.5).exp() + x ** 3 / 10


def exact_derivative(x: float) -> tuple[float, str]:
    """The closed-form f'(x) rounded to float64, and how it was computed.

    >>> d, how = exact_derivative(0.0)
    >>> d
    1.0
    """
    try:
        import mpmath
    except ImportError:
        d = math.exp(-x / 2) * (math.cos(x) - math.sin(x) / 2) + 3 * x * x / 10
        return d, "closed form in float64 (mpmath not installed)"
    with mpmath.workdps(50):
        v = mpmath.mpf(x)
        d = mpmath.exp(-v / 2) * (mpmath.cos(v) - mpmath.sin(v) / 2) + 3 * v ** 2 / 10
        return float(d), "closed form in mpmath at 50 digits"


def _autodiff_tensor(x: float) -> float:
    t = dg.tensor(x, requires_grad=True)
    (g,) = dg.grad(f(t), t)
    return g.item()


def _autodiff_scalar(x: float) -> float:
    v = Value(x)
    f(v).backward()
    return v.grad


def _errors(step: Callable[[float], float], hs: np.ndarray, truth: float) -> np.ndarray:
    return np.array([abs(step(h) - truth) for h in hs])


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Measure the V curve and the autodiff error; draw them on log-log axes.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["autodiff_error"] < 1e-14
    True
    """
    check_size(size)
    per_decade = STEPS_PER_DECADE[size]
    hs = 10.0 ** -np.linspace(1, 15, 14 * per_decade + 1)
    truth, how = exact_derivative(X0)
    # Errors are measured against the closed form rounded once to float64 (within
    # half an ulp of the true derivative).
    fx = f(X0)
    forward = _errors(lambda h: (f(X0 + h) - fx) / h, hs, truth)
    central = _errors(lambda h: (f(X0 + h) - f(X0 - h)) / (2 * h), hs, truth)
    ad_tensor = abs(_autodiff_tensor(X0) - truth)
    ad_scalar = abs(_autodiff_scalar(X0) - truth)

    i_fwd, i_cen = int(np.argmin(forward)), int(np.argmin(central))
    fig_name = _draw(out, hs, forward, central, ad_tensor, ad_scalar, truth)
    return {
        "function": "f(x) = sin(x) exp(-x/2) + x^3/10", "x0": X0,
        "exact_derivative": truth, "truth": how,
        "h": to_list(hs, 6),
        "forward_error": to_list(forward, 6), "central_error": to_list(central, 6),
        "best_forward": {"h": float(hs[i_fwd]), "error": float(forward[i_fwd])},
        "best_central": {"h": float(hs[i_cen]), "error": float(central[i_cen])},
        "forward_error_at_smallest_h": float(forward[-1]),
        "central_error_at_smallest_h": float(central[-1]),
        "autodiff_error": ad_tensor, "autodiff_error_scalar": ad_scalar,
        "machine_epsilon": float(np.finfo(np.float64).eps),
        "figures": [fig_name],
    }


def _draw(out, hs, forward, central, ad_tensor, ad_scalar, truth) -> str:
    fig, ax = figure(size=(9.6, 4.8))
    # An error of exactly 0 has no place on a log axis; draw it at a floor and say so.
    floor = 1e-18
    ax.loglog(hs, np.maximum(forward, floor), "o-", ms=3, label="forward difference")
    ax.loglog(hs, np.maximum(central, floor), "s-", ms=3, label="central difference")
    eps_err = np.finfo(np.float64).eps * abs(truth)
    for value, style, name in ((ad_tensor, "-", "autodiff, tensor engine"),
                               (ad_scalar, ":", "autodiff, scalar engine")):
        shown = value if value > 0 else floor
        label = f"{name}: {value:.1e}" if value > 0 else f"{name}: exactly 0 (drawn at {floor:g})"
        ax.axhline(shown, ls=style, lw=1.6, color="black" if style == "-" else "tab:red",
                   label=label, zorder=2)
    # NOTE: autodiff's error sits at about this line, so it is drawn on top, in its own
    # colour, or the autodiff line would hide it.
    ax.axhline(eps_err, color="tab:green", lw=1.5, ls=(0, (5, 3)), zorder=4,
               label=f"machine epsilon x |f'(x0)| = {eps_err:.1e}")
    # Both lines named where they are drawn: one just above, one just below.
    x_text = hs[0]
    ax.annotate(f"autodiff (tensor) {ad_tensor:.1e}" if ad_tensor > 0 else "autodiff (tensor) 0",
                (x_text, ad_tensor if ad_tensor > 0 else floor), xytext=(4, 3),
                textcoords="offset points", fontsize=7.5, va="bottom")
    ax.annotate(f"machine epsilon x |f'(x0)| {eps_err:.1e}", (x_text, eps_err), xytext=(4, -3),
                textcoords="offset points", fontsize=7.5, va="top", color="tab:green")
    ax.invert_xaxis()
    ax.set_xlabel("step h (log scale, shrinking to the right)")
    ax.set_ylabel("|estimate - exact derivative| (log scale)")
    ax.set_title(f"Finite differences vs autodiff for f'({X0})")
    ax.grid(True, which="both", alpha=0.3)
    # outside the axes: inside, it covers the first (largest-h) difference points
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.set_ylim(floor / 3, 1)
    return save(fig, out, "finite_diff.png")

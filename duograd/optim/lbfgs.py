"""``LBFGS``: limited-memory BFGS on all parameters as one flat vector, with
``torch.optim.LBFGS``'s algorithm (the two-loop recursion over the last ``history_size``
curvature pairs, a first step of ``min(1, 1 / |g|_1) * lr``, its stopping tests and, with
``line_search_fn="strong_wolfe"``, the cubic-interpolation line search with the strong
Wolfe conditions). ``step(closure)`` calls ``closure`` (which zeroes the gradients,
recomputes the loss, calls ``backward`` and returns the loss) as often as it needs.

>>> import duograd as dg
>>> from duograd import optim
>>> w = dg.tensor([3.0, -2.0], requires_grad=True)
>>> opt = optim.LBFGS([w], lr=1.0)
>>> def closure():
...     opt.zero_grad()
...     loss = ((w - 1.0) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure)
>>> w.data.round(6)
array([1., 1.])
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from . import Optimizer, _closure, _write


def _cubic_min(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
               bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to
    ``bounds`` (default: between the two points); their midpoint if it has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_sq = d1 ** 2 - g1 * g2
    if d2_sq < 0:
        return (lo + hi) / 2.0
    d2 = d2_sq ** 0.5
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def _strong_wolfe(evaluate: Callable[[float], tuple[float, np.ndarray]], t: float,
                  d: np.ndarray, f: float, g: np.ndarray, gtd: float, c1: float = 1e-4,
                  c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, np.ndarray, float, int]:
    """A step ``t`` along ``d`` satisfying the strong Wolfe conditions (bracketing, then
    zooming by cubic interpolation); returns ``(loss, flat gradient, t, evaluations)``."""
    d_norm = float(np.max(np.abs(d)))
    g = g.copy()
    f_new, g_new = evaluate(t)
    evals, gtd_new = 1, float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done, it = False, 0
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            br, br_f, br_g, br_gtd, done = [t], [f_new], [g_new], [gtd_new], True
            break
        if gtd_new >= 0:
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        lo, hi = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new @ d)
        it += 1
    if it == max_ls:
        br, br_f, br_g, br_gtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]
    insufficient = False
    low, high = (0, 1) if br_f[0] <= br_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(br[1] - br[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1])
        top, bottom = max(br), min(br)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new @ d)
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= br_f[low]:
            br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if br_f[0] <= br_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br[high] - br[low]) >= 0:
                br[high], br_f[high], br_g[high], br_gtd[high] = br[low], br_f[low], br_g[low], br_gtd[low]
            br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new.copy(), gtd_new
    return br_f[low], br_g[low], br[low], evals


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS`` (see the module docstring): one parameter group
    only; ``max_eval`` defaults to ``max_iter * 5 // 4``; ``step(closure)`` returns the
    closure's first loss. State (under the first parameter, as torch): ``func_evals``,
    ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``,
    ``prev_flat_grad``, ``prev_loss``.

    >>> import duograd as dg
    >>> from duograd import optim
    >>> w = dg.tensor([0.0], requires_grad=True)
    >>> opt = optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 2.0) ** 4).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> bool(abs(w.item() - 2.0) < 0.05)
    True
    """

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p._data.size, p._data.dtype) if p._grad is None
                               else p._grad._data.reshape(-1) for p in self._params])

    def _add(self, t: float, d: np.ndarray) -> None:
        """Every parameter moves by ``t * d`` (its slice), in place."""
        o = 0
        for p in self._params:
            n = p._data.size
            _write(p, p._data, -(t * d[o:o + n]).reshape(p._data.shape))
            o += n

    def _set(self, saved: list[np.ndarray]) -> None:
        for p, x in zip(self._params, saved):
            _write(p, x, np.zeros((), p._data.dtype))

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """One L-BFGS step (up to ``max_iter`` iterations); ``closure`` is required."""
        if closure is None:
            raise RuntimeError("LBFGS.step: a closure that reevaluates the model and returns "
                               "the loss is required")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search, history = group["line_search_fn"], group["history_size"]
        state = self._state(self._params[0])
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = _closure(closure)
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if np.max(np.abs(g)) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        dirs, stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_g = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, dirs, stps, ro, H_diag = -g, [], [], [], 1
            else:
                y, s = g - prev_g, d * t
                ys = float(y @ s)
                if ys > 1e-10:
                    if len(dirs) == history:
                        dirs.pop(0)
                        stps.pop(0)
                        ro.pop(0)
                    dirs.append(y)
                    stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / float(y @ y)
                al = state.setdefault("al", [None] * history)
                q = -g
                for i in range(len(dirs) - 1, -1, -1):
                    al[i] = float(stps[i] @ q) * ro[i]
                    q = q + (-al[i]) * dirs[i]
                d = q * H_diag
                for i in range(len(dirs)):
                    be = float(dirs[i] @ d) * ro[i]
                    d += (al[i] - be) * stps[i]
            prev_g = g.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(np.sum(np.abs(g)))) * lr if state["n_iter"] == 1 else lr
            gtd = float(g @ d)
            if gtd > -tol_change:
                break
            ls_evals = 0
            if line_search is not None:
                if line_search != "strong_wolfe":
                    raise RuntimeError("LBFGS: only 'strong_wolfe' is supported")
                x0 = [p._data.copy() for p in self._params]

                def evaluate(step: float, x0: list = x0, d: np.ndarray = d) -> tuple[float, np.ndarray]:
                    self._add(step, d)
                    value = float(_closure(closure))
                    flat = self._flat_grad()
                    self._set(x0)
                    return value, flat

                loss, g, t, ls_evals = _strong_wolfe(evaluate, t, d, loss, g, gtd,
                                                     max_ls=max_eval - evals)
                self._add(t, d)
                opt_cond = np.max(np.abs(g)) <= tol_grad
            else:
                self._add(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(_closure(closure))
                    g = self._flat_grad()
                    opt_cond = np.max(np.abs(g)) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if np.max(np.abs(d * t)) <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=dirs, old_stps=stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_g, prev_loss=prev_loss)
        return orig_loss

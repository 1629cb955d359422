"""The Chinchilla loss law ``L(N, D) = E + A / N^a + B / D^b`` (method notes, section 4) fitted to
the family's runs the way Hoffmann et al. (2022, Approach 3) and Besiroglu et al. (2024) did.

With ``theta = (log A, log B, log E, a, b)`` the predicted log-loss is
``LSE(log A - a log N, log B - b log D, log E)`` (``LSE``: log-sum-exp), and the fit minimises
``sum_i Huber_delta(LSE_i - log L_i)`` with ``delta = 1e-3`` by L-BFGS (analytic gradient), started
from Hoffmann's grid (``a, b`` in ``{0, 0.5, ..., 2}``, ``log E`` in ``{-1, -0.5, ..., 1}``,
``log A, log B`` in ``{0, 5, ..., 25}``: 4,500 points). L-BFGS runs from the ``starts`` grid
points with the smallest objective (all of them with ``starts=None``), and the best optimum is
kept. Intervals: percentile bootstrap over runs (resampled with replacement, each resample refitted
from the full-data optimum and its own best grid points), as Besiroglu et al. report them.
The parameters are bounded (:data:`BOUNDS`: ``a, b`` in ``[1e-3, 3]`` so that every fit is a
valid :class:`sdsl.model.laws.LossConstants`, ``E >= e^-5``); :meth:`LossFit.at_bound` names the
estimates that stopped at a bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize
from scipy.special import logsumexp

from sdsl.model.laws import LossConstants
from sdsl.validation import as_positive

__all__ = [
    "BOUNDS",
    "HUBER_DELTA",
    "PARAMETERS",
    "LossFit",
    "bootstrap_loss_law",
    "fit_loss_law",
    "hoffmann_grid",
    "objective",
]

HUBER_DELTA = 1e-3
PARAMETERS = ("E", "A", "B", "a", "b")
#: Bounds of ``(log A, log B, log E, a, b)``: wide for the scales, and ``E >= e^-5``: where the
#: data cannot tell ``E`` from 0 the fit stops at the bound instead of running ``log E`` to
#: ``-inf`` (which only slows L-BFGS down); an estimate at a bound is flagged.
BOUNDS = ((-10.0, 50.0), (-10.0, 50.0), (-5.0, 3.0), (1e-3, 3.0), (1e-3, 3.0))
_BOUNDS = list(BOUNDS)


def hoffmann_grid() -> np.ndarray:
    """Hoffmann et al.'s initialisations ``(log A, log B, log E, a, b)``, 4,500 rows (``a, b = 0``
    moved to the lower bound 1e-3)."""
    la = np.arange(0.0, 25.1, 5.0)
    e = np.arange(-1.0, 1.01, 0.5)
    ab = np.arange(0.0, 2.01, 0.5)
    g = np.array(np.meshgrid(la, la, e, ab, ab, indexing="ij")).reshape(5, -1).T
    return np.column_stack([g[:, 0], g[:, 1], g[:, 2], np.clip(g[:, 3], 1e-3, 3), np.clip(g[:, 4], 1e-3, 3)])


def _huber(r: np.ndarray, delta: float) -> np.ndarray:
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


def objective(
    theta: ArrayLike,
    log_n: np.ndarray,
    log_d: np.ndarray,
    log_l: np.ndarray,
    delta: float = HUBER_DELTA,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """``sum_i w_i Huber(LSE_i - log L_i)`` for one ``theta`` (5,) or many (k, 5) at once."""
    th = np.atleast_2d(np.asarray(theta, dtype=float))
    terms = np.stack(
        [
            th[:, :1] - th[:, 3:4] * log_n[None, :],
            th[:, 1:2] - th[:, 4:5] * log_d[None, :],
            np.broadcast_to(th[:, 2:3], (th.shape[0], log_n.size)),
        ]
    )
    r = logsumexp(terms, axis=0) - log_l[None, :]
    w = np.ones_like(log_l) if weights is None else weights
    out = (_huber(r, delta) * w[None, :]).sum(axis=1)
    return out if np.ndim(theta) == 2 else out[0]


def _obj_grad(theta: np.ndarray, log_n, log_d, log_l, delta, w) -> tuple[float, np.ndarray]:
    """Objective and gradient for one ``theta`` (plain numpy: this is the inner loop of the fit)."""
    t1 = theta[0] - theta[3] * log_n
    t2 = theta[1] - theta[4] * log_d
    t3 = theta[2]
    mx = np.maximum(np.maximum(t1, t2), t3)
    e1, e2, e3 = np.exp(t1 - mx), np.exp(t2 - mx), np.exp(t3 - mx)
    s = e1 + e2 + e3
    r = mx + np.log(s) - log_l
    a = np.abs(r)
    h = np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))
    dh = np.clip(r, -delta, delta) * w / s
    g1, g2 = dh * e1, dh * e2
    grad = np.array([g1.sum(), g2.sum(), (dh * e3).sum(), -(g1 @ log_n), -(g2 @ log_d)])
    return float(h @ w), grad


@dataclass(frozen=True)
class LossFit:
    """A fitted loss law: ``theta = (log A, log B, log E, a, b)``, the objective, the number of
    runs and of L-BFGS starts, and (after :func:`bootstrap_loss_law`) bootstrap draws."""

    theta: np.ndarray
    objective: float
    n_runs: int
    starts: int
    boot: np.ndarray | None = None

    @property
    def values(self) -> dict[str, float]:
        """``E, A, B, a, b`` in the units of the law."""
        la, lb, le, a, b = self.theta
        return {"E": float(np.exp(le)), "A": float(np.exp(la)), "B": float(np.exp(lb)), "a": float(a), "b": float(b)}

    def constants(self, name: str = "laptop") -> LossConstants:
        v = self.values
        return LossConstants(
            v["E"],
            v["A"],
            v["B"],
            v["a"],
            v["b"],
            name=name,
            source=f"Huber fit on {self.n_runs} runs of the laptop-scale family",
        )

    def at_bound(self) -> dict[str, bool]:
        """Per parameter, whether the estimate sits at a bound of :data:`BOUNDS` (the data do not
        determine it there)."""
        names = ("A", "B", "E", "a", "b")
        return {
            k: bool(np.isclose(v, lo, rtol=0, atol=1e-6) or np.isclose(v, hi, rtol=0, atol=1e-6))
            for k, v, (lo, hi) in zip(names, self.theta, BOUNDS)
        }

    def predict(self, n: ArrayLike, d: ArrayLike) -> np.ndarray:
        """``L(N, D)`` of the fit."""
        v = self.values
        n, d = as_positive(n, "n (parameters)"), as_positive(d, "d (tokens)")
        return v["E"] + v["A"] * n ** -v["a"] + v["B"] * d ** -v["b"]

    def intervals(self, level: float = 0.95) -> pd.DataFrame:
        """Per parameter: estimate, the percentile bootstrap interval and the standard error of
        each endpoint (NaN without draws).

        Returns
        -------
        DataFrame with ``parameter, estimate, ci_lower, ci_upper, ci_lower_se, ci_upper_se,
        at_bound``. ``ci_*_se`` is the Maritz-Jarrett standard error of the endpoint as a
        quantile of the draws (:func:`scipy.stats.mstats.mjci`): how far another set of draws
        (or the same draws on other CPU kernels, where a weakly identified refit lands on another
        optimum) may move it. An endpoint whose standard error exceeds its value is not
        determined by the draws.
        """
        rows = []
        v = self.values
        probs = ((1 - level) / 2, (1 + level) / 2)
        for name in PARAMETERS:
            lo = hi = lo_se = hi_se = np.nan
            if self.boot is not None and len(self.boot):
                col = _as_values(self.boot)[name]
                lo, hi = np.quantile(col, probs)
                lo_se, hi_se = (_endpoint_se(col, q, p) for q, p in zip((lo, hi), probs))
            rows.append(
                {
                    "parameter": name,
                    "estimate": v[name],
                    "ci_lower": float(lo),
                    "ci_upper": float(hi),
                    "ci_lower_se": lo_se,
                    "ci_upper_se": hi_se,
                    "at_bound": self.at_bound()[name],
                }
            )
        return pd.DataFrame(rows)


def _endpoint_se(draws: np.ndarray, endpoint: float, prob: float) -> float:
    """Maritz-Jarrett standard error of the ``prob`` quantile of ``draws``. The draws are
    centred on the endpoint first (the error is shift-invariant): where the draws near the
    quantile are all equal (an estimate at a bound) the weighted variance is then exactly zero
    instead of a rounding error of either sign. Below 1e-9 of the endpoint's magnitude (float
    rounding of the weighted moments) it is reported as 0."""
    from scipy.stats import mstats

    se = float(mstats.mjci(np.asarray(draws, dtype=float) - endpoint, prob=[prob])[0])
    if not np.isfinite(se) or se < 1e-9 * max(abs(endpoint), np.finfo(float).tiny):
        return 0.0
    return se


def _as_values(theta: np.ndarray) -> dict[str, np.ndarray]:
    th = np.atleast_2d(theta)
    return {"E": np.exp(th[:, 2]), "A": np.exp(th[:, 0]), "B": np.exp(th[:, 1]), "a": th[:, 3], "b": th[:, 4]}


def _check(n, d, loss) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = np.log(as_positive(np.asarray(n, dtype=float), "n (parameters)"))
    d = np.log(as_positive(np.asarray(d, dtype=float), "d (tokens)"))
    l_ = np.log(as_positive(np.asarray(loss, dtype=float), "loss (nats per token)"))
    if not (n.shape == d.shape == l_.shape) or n.ndim != 1:
        raise ValueError(f"n, d and loss must be 1-d of one length, got {n.shape}, {d.shape}, {l_.shape}")
    if n.size < 5:
        raise ValueError(f"the loss law has 5 parameters: at least 5 runs are needed, got {n.size}")
    return n, d, l_


def _fit(log_n, log_d, log_l, inits: np.ndarray, delta: float, w: np.ndarray) -> tuple[np.ndarray, float]:
    from threadpoolctl import threadpool_limits

    best, best_f = None, np.inf
    # one BLAS thread: L-BFGS-B's small dense updates are 40 times slower with two threads on a
    # shared CPU (a descheduled thread stalls every call)
    with threadpool_limits(limits=1):
        for x0 in inits:
            res = optimize.minimize(
                _obj_grad,
                x0,
                args=(log_n, log_d, log_l, delta, w),
                jac=True,
                method="L-BFGS-B",
                bounds=_BOUNDS,
                options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-12},
            )
            if res.fun < best_f:
                best, best_f = res.x, float(res.fun)
    return np.asarray(best), best_f


def fit_loss_law(
    n: ArrayLike, d: ArrayLike, loss: ArrayLike, *, starts: int | None = 16, delta: float = HUBER_DELTA
) -> LossFit:
    """Fit ``L(N, D) = E + A/N^a + B/D^b`` (module docstring).

    Parameters
    ----------
    n, d, loss : parameters, training tokens and validation loss (nats) of each run.
    starts : L-BFGS starts: the grid points with the smallest objective (None: all 4,500).
    delta : Huber threshold on the log-loss residual (Hoffmann et al.: 1e-3).
    """
    log_n, log_d, log_l = _check(n, d, loss)
    grid = hoffmann_grid()
    if starts is not None:
        if int(starts) < 1:
            raise ValueError(f"starts must be >= 1 or None, got {starts!r}")
        order = np.argsort(objective(grid, log_n, log_d, log_l, delta))
        grid = grid[order[: int(starts)]]
    w = np.ones_like(log_l)
    theta, f = _fit(log_n, log_d, log_l, grid, delta, w)
    return LossFit(theta=theta, objective=f, n_runs=int(log_n.size), starts=len(grid))


def bootstrap_loss_law(
    fit: LossFit,
    n: ArrayLike,
    d: ArrayLike,
    loss: ArrayLike,
    rng: np.random.Generator,
    *,
    n_resamples: int = 300,
    starts: int = 0,
    delta: float = HUBER_DELTA,
) -> LossFit:
    """``fit`` with ``n_resamples`` bootstrap refits over runs (resampled with replacement; each
    started from ``fit``'s optimum and the resample's ``starts`` best grid points: on the
    laptop-scale family the best grid point reaches the same optimum as the full-data optimum,
    three to ten times more slowly, hence ``starts = 0`` by default). A resample with fewer than 3
    distinct runs is drawn again."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    log_n, log_d, log_l = _check(n, d, loss)
    grid = hoffmann_grid()
    k = log_n.size
    draws: list[np.ndarray] = []
    while len(draws) < int(n_resamples):
        counts = np.bincount(rng.integers(0, k, k), minlength=k).astype(float)
        if np.count_nonzero(counts) < 3:
            continue
        inits = fit.theta[None, :]
        if starts:
            order = np.argsort(objective(grid, log_n, log_d, log_l, delta, counts))
            inits = np.vstack([inits, grid[order[:starts]]])
        theta, _ = _fit(log_n, log_d, log_l, inits, delta, counts)
        draws.append(theta)
    return LossFit(theta=fit.theta, objective=fit.objective, n_runs=fit.n_runs, starts=fit.starts, boot=np.array(draws))

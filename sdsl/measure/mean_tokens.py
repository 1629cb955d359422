"""Alpha from mean accepted lengths (method notes, section 9): inverting
``E(alpha, gamma) = (1 - alpha**(gamma + 1)) / (1 - alpha)`` for one draft length (``brentq``) or
several (weighted least squares), with a delta-method standard error -- what engines that export
only a mean acceptance length (SGLang, TensorRT-LLM) allow."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from sdsl.measure.estimators import AlphaEstimate, _as_counts, _check_level
from sdsl.model.solvers import find_root
from sdsl.model.throughput import expected_tokens

__all__ = ["alpha_from_mean_tokens"]


def _k_moments(alpha: float, gamma: int) -> tuple[float, float]:
    """Mean and variance of the accepted count ``k`` under the truncated geometric law."""
    i = np.arange(1, gamma + 1)
    p = alpha**i  # P(k >= i)
    mean = p.sum()
    second = ((2 * i - 1) * p).sum()
    return float(mean), float(max(second - mean * mean, 0.0))


def _d_expected_tokens(alpha: float, gamma: np.ndarray) -> np.ndarray:
    """``dE/dalpha`` for ``E = sum_{i=0}^{gamma} alpha**i``."""
    return np.array([np.sum(np.arange(1, g + 1) * alpha ** np.arange(0, g)) for g in gamma], dtype=float)


def alpha_from_mean_tokens(
    mean_tokens: ArrayLike,
    gamma: ArrayLike,
    n_iterations: ArrayLike,
    *,
    mean_tokens_se: ArrayLike | None = None,
    level: float = 0.95,
) -> AlphaEstimate:
    """Alpha by inverting the expected tokens per iteration ``E(alpha, gamma)`` (method notes,
    sections 1 and 9; Leviathan et al. 2023, Eq. 1).

    ``mean_tokens[j]`` is the mean number of tokens produced per iteration (accepted drafts *plus*
    the bonus/correction token, i.e. vLLM's "mean acceptance length") measured over
    ``n_iterations[j]`` iterations at draft length ``gamma[j]``. One draft length: ``brentq`` solves
    ``E(alpha, gamma) = mean``. Several: weighted least squares (``scipy.optimize.least_squares``)
    with weights ``1 / se_j**2``. ``mean_tokens_se`` (standard errors of the means) defaults to the
    model-based ``sd(k) / sqrt(n)`` under the truncated geometric law at the estimate. The standard
    error of alpha comes from the delta method, the interval is Wald, clipped to [0, 1].

    Approximate by construction: the mean discards the per-position information the MLE uses.

    Parameters
    ----------
    mean_tokens : mean tokens per iteration at each draft length (>= 1).
    gamma : the draft lengths (integers >= 1), one per mean (or one for all).
    n_iterations : iterations behind each mean (integers >= 1).
    mean_tokens_se : standard errors of the means (default: model-based).
    level : confidence level, in (0, 1).

    Returns
    -------
    AlphaEstimate
    """
    level = _check_level(level)
    m = np.atleast_1d(np.asarray(mean_tokens, dtype=float))
    if m.size == 0:
        raise ValueError("mean_tokens is empty: at least one measurement is needed")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"mean_tokens must be finite, got {mean_tokens!r}")
    g = _as_counts(gamma, "gamma")
    n = _as_counts(n_iterations, "n_iterations")
    if g.size == 1 and m.size > 1:
        g = np.full(m.size, g[0])
    if n.size == 1 and m.size > 1:
        n = np.full(m.size, n[0])
    if not (g.size == n.size == m.size):
        raise ValueError(
            f"mean_tokens, gamma and n_iterations must have the same length, got {m.size}, {g.size}, {n.size}"
        )
    if np.any(g < 1):
        raise ValueError(f"gamma must be >= 1, got {g[g < 1][0]}")
    if np.any(n < 1):
        raise ValueError(f"n_iterations must be >= 1, got {n[n < 1][0]}")
    bad = (m < 1.0) | (m > g + 1.0)
    if np.any(bad):
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"mean_tokens must lie in [1, gamma + 1] (one bonus/correction token plus 0..gamma "
            f"accepted), got {m[j]!r} at gamma={g[j]}"
        )
    se_given = None
    if mean_tokens_se is not None:
        se_given = np.atleast_1d(np.asarray(mean_tokens_se, dtype=float))
        if se_given.size == 1 and m.size > 1:
            se_given = np.full(m.size, se_given[0])
        if se_given.shape != m.shape or not np.all(np.isfinite(se_given)) or np.any(se_given <= 0):
            raise ValueError(f"mean_tokens_se must be > 0 with one entry per measurement, got {mean_tokens_se!r}")

    def e(alpha: float) -> np.ndarray:
        return np.asarray(expected_tokens(alpha, g), dtype=float)

    if m.size == 1:
        target = m[0]
        if target >= g[0] + 1.0:
            a = 1.0
        elif target <= 1.0:
            a = 0.0
        else:
            # E(alpha, gamma) rises strictly in alpha: one root in (0, 1); numpy only (the base install)
            def excess(x: np.ndarray, _rows: np.ndarray) -> np.ndarray:
                return np.array([e(v)[0] for v in x]) - target

            a = float(find_root(excess, np.zeros(1), np.ones(1), np.zeros(1, int), xatol=1e-14)[0])
        method = "invert_mean_tokens"
    else:

        def se_at(alpha: float) -> np.ndarray:
            if se_given is not None:
                return se_given
            sd = np.array([np.sqrt(_k_moments(alpha, int(gj))[1]) for gj in g])
            return np.maximum(sd / np.sqrt(n), 1e-6)

        from scipy import optimize  # several draft lengths: the analysis extra

        a = 0.5
        for _ in range(3):  # iteratively reweighted: model-based weights depend on alpha
            w = 1.0 / se_at(a)
            fit = optimize.least_squares(lambda x: (e(x[0]) - m) * w, x0=[a], bounds=([0.0], [1.0]))
            a = float(fit.x[0])
        method = "least_squares_mean_tokens"
    # delta method
    if se_given is not None:
        se_m = se_given
    else:
        se_m = np.array([np.sqrt(_k_moments(a, int(gj))[1]) for gj in g]) / np.sqrt(n)
    d = _d_expected_tokens(a, g)
    if np.all(se_m == 0):  # alpha at 0 or 1 under the model: no sampling variance in the model
        se = 0.0
    else:
        w = 1.0 / np.maximum(se_m, 1e-300) ** 2
        info = float(np.sum(w * d * d))
        se = float(1.0 / np.sqrt(info)) if info > 0 else float("inf")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    return AlphaEstimate(
        a,
        se,
        max(a - z * se, 0.0),
        min(a + z * se, 1.0),
        n=int(n.sum()),
        method=method,
        interval="wald_delta",
        level=level,
        trials=int(n.sum()),
        accepted=int(round(float(np.sum((m - 1.0) * n)))),
        extra={"gamma": tuple(int(x) for x in g)},
    )

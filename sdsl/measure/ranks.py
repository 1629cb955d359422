"""Rank statistics of a handful of measurements (method notes, section 6; the latency chapter's
tests of "latency grows with the distance from N*"): Spearman's rho of one pair of samples
(:func:`spearman`) and of many at once, row by row (:func:`spearman_rows`, for permutation,
bootstrap and noise draws), Kendall's tau (:func:`kendall`) and Kendall's ``S``
(:func:`kendall_s`, concordant minus discordant pairs), and the evidence a few points give for a
rising trend (:func:`trend_evidence`: exact permutation p-values, a bootstrap over the points and
redraws of the measurement noise).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["spearman", "spearman_rows", "kendall", "kendall_s", "trend_evidence"]


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho of ``x`` and ``y`` (``scipy.stats.spearmanr``)."""
    return float(stats.spearmanr(x, y).statistic)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``x`` with the same row of ``y`` (Pearson correlation of
    average ranks, as ``scipy.stats.spearmanr``); NaN where a row is constant."""
    rx = stats.rankdata(x, axis=-1)
    ry = stats.rankdata(y, axis=-1)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=-1) / np.where(den > 0, den, 1.0), np.nan)


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau of ``x`` and ``y`` (``scipy.stats.kendalltau``)."""
    return float(stats.kendalltau(x, y).statistic)


def kendall_s(x: np.ndarray, y: np.ndarray) -> int:
    """Kendall's ``S`` of ``x`` and ``y``: concordant minus discordant pairs (ties count zero)."""
    i, j = np.triu_indices(x.size, 1)
    return int(np.sum(np.sign(x[j] - x[i]) * np.sign(y[j] - y[i])))


def trend_evidence(
    x: np.ndarray, y: np.ndarray, se: np.ndarray, rng: np.random.Generator, n_boot: int, n_noise: int, q: list[float]
) -> dict[str, float]:
    """How firmly ``y`` grows with ``x`` (at least two points; ``se`` the standard errors of ``y``):
    ``spearman`` and ``kendall``, their exact one-sided permutation p-values ``spearman_p`` (all
    ``n!`` pairings, ``scipy.stats.permutation_test``) and ``kendall_p`` (``kendalltau`` with
    ``method="exact"``), the quantiles ``q`` of rho over ``n_boot`` bootstrap resamples of the points
    (``boot_lo``, ``boot_hi``; resamples where rho is undefined dropped, their share
    ``boot_undefined``), and over ``n_noise`` redraws of ``y`` from normals with standard errors ``se``
    (``noise_lo``, ``noise_hi``, and the share of positive rho ``noise_p_positive``). Draws from
    ``rng`` in that order: permutations, bootstrap, noise (:func:`sdsl.chapters.latency.rank_correlations`)."""
    n = x.size
    row = {"spearman": spearman(x, y), "kendall": kendall(x, y)}
    # one sample, "pairings": every one of the n! orders of y against the fixed x
    perm = stats.permutation_test(
        (y,),
        lambda yy, axis=-1: spearman_rows(np.broadcast_to(x, yy.shape), yy),
        permutation_type="pairings",
        alternative="greater",
        n_resamples=np.inf,
        vectorized=True,
        rng=rng,
    )
    row["spearman_p"] = float(perm.pvalue)
    row["kendall_p"] = float(stats.kendalltau(x, y, method="exact", alternative="greater").pvalue)
    idx = rng.integers(0, n, (n_boot, n))
    boot = spearman_rows(x[idx], y[idx])
    ok = np.isfinite(boot)
    row["boot_lo"], row["boot_hi"] = (float(v) for v in np.quantile(boot[ok], q))
    row["boot_undefined"] = float(1.0 - ok.mean())
    draws = y[None, :] + se[None, :] * rng.standard_normal((n_noise, n))
    rho = spearman_rows(np.broadcast_to(x, draws.shape), draws)
    row["noise_lo"], row["noise_hi"] = (float(v) for v in np.quantile(rho, q))
    row["noise_p_positive"] = float(np.mean(rho > 0))
    return row

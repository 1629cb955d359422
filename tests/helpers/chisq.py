"""The chi-square goodness-of-fit test of sampled tokens against an exact distribution, shared by
the harness's lossless tests (cells with fewer than 5 expected draws are pooled)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def chisquare(counts, probs):
    """``scipy.stats.chisquare`` of ``counts`` against ``probs`` with small cells pooled."""
    n = counts.sum()
    exp = n * probs
    big = exp >= 5
    obs_b = np.append(counts[big], counts[~big].sum())
    exp_b = np.append(exp[big], exp[~big].sum())
    if exp_b[-1] == 0:
        obs_b, exp_b = obs_b[:-1], exp_b[:-1]
    exp_b *= obs_b.sum() / exp_b.sum()
    return stats.chisquare(obs_b, exp_b)

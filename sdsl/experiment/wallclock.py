"""Wall-clock speed of speculative decoding against plain decoding, and Theorem 3.8 of Leviathan
et al. (2023).

Theorem 3.8: with acceptance rate ``alpha``, draft length ``gamma`` and cost ratio ``c`` (the time
of one draft step over one target step), the expected improvement in wall time is

    S(alpha, gamma, c) = (1 - alpha^(gamma + 1)) / ((1 - alpha) (gamma c + 1))
                       = E(alpha, gamma) / (gamma c + 1),

with ``E`` the expected tokens per iteration (method notes, section 1). It charges the target's
verification of ``gamma + 1`` tokens as one step and ignores the bookkeeping between steps.

:func:`time_pair` benchmarks, on the same prompts and in alternating rounds (both methods see the
same background load), plain decoding of the target and speculative sampling at the ``gamma``
Theorem 3.8 picks for the measured cost ratio ``c`` (plain decoding of the draft over the target),
all with :mod:`sdsl.measure.sampling`, and reports medians with order-statistics intervals.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from sdsl.model.throughput import expected_tokens
from sdsl.validation import as_in_range, as_positive

__all__ = ["best_integer_gamma", "median_interval", "theorem38_speedup", "time_pair"]


def theorem38_speedup(alpha: ArrayLike, gamma: ArrayLike, c: ArrayLike) -> np.ndarray:
    """Expected wall-time improvement factor ``E(alpha, gamma) / (gamma c + 1)`` (Leviathan et al.
    2023, Theorem 3.8; module docstring).

    Parameters
    ----------
    alpha : acceptance rate in [0, 1].
    gamma : draft length >= 0.
    c : cost ratio, time of a draft step over a target step, > 0.
    """
    a = as_in_range(alpha, "alpha (acceptance rate)", 0.0, 1.0)
    g = as_in_range(gamma, "gamma (draft length)", 0.0, np.inf)
    cc = as_positive(c, "c (cost ratio)")
    return expected_tokens(a, g) / (g * cc + 1.0)


def best_integer_gamma(alpha: float, c: float, max_gamma: int) -> int:
    """The integer ``gamma`` in ``1..max_gamma`` with the largest Theorem 3.8 speedup (ties: the
    smaller)."""
    if int(max_gamma) < 1:
        raise ValueError(f"max_gamma must be >= 1, got {max_gamma!r}")
    g = np.arange(1, int(max_gamma) + 1)
    return int(g[np.argmax(theorem38_speedup(alpha, g, c))])


def median_interval(values: ArrayLike, level: float = 0.95) -> tuple[float, float, float, float]:
    """The median of ``values`` and the distribution-free interval of the median from order
    statistics: ``(x_(k), x_(n+1-k))`` with the largest ``k`` whose coverage
    ``1 - 2 P(Binomial(n, 1/2) < k)`` is at least ``level``, or the extremes (``k = 1``) when no
    ``k`` reaches it (five rounds: coverage 93.8 %). Returns median, low, high and the coverage."""
    from math import comb

    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        raise ValueError("values must not be empty")
    cdf = np.cumsum([comb(n, i) for i in range(n + 1)]) / 2.0**n  # P(B <= i)
    k = 1
    for j in range(1, (n + 1) // 2 + 1):
        if 1 - 2 * cdf[j - 1] >= level:
            k = j
    cover = float(1 - 2 * cdf[k - 1]) if n > 1 else 0.0
    return float(np.median(x)), float(x[k - 1]), float(x[n - k]), cover


def time_pair(
    target,
    draft,
    prompts: Sequence[Sequence[int]],
    *,
    alpha: float,
    new_tokens: int,
    temperature: float,
    rounds: int,
    max_gamma: int,
    seed: int,
) -> dict:
    """Plain decoding of the target and speculative sampling of the pair, interleaved on the same
    prompts as a benchmark: ``rounds`` rounds, each timing both methods once, in alternating
    order (plain first in even rounds, speculative first in odd ones), so that both see the same
    background load; medians over the rounds with their order-statistics intervals
    (:func:`median_interval`).

    ``gamma`` is the integer that maximises Theorem 3.8 for ``alpha`` and the cost ratio ``c``
    measured first (the faster of two plain decodings of each model, after a warm-up). Returns
    ``gamma``, ``c``, the medians of tokens per second of each method, the median of the per-round
    speedups (plain time over speculative time) with ``speedup_low``, ``speedup_high`` and the
    interval's ``coverage``, Theorem 3.8's prediction at ``gamma`` and ``c``, the mean accepted
    tokens per iteration, and ``round_target_s``, ``round_spec_s`` (the per-round times).
    """
    import torch

    from sdsl.measure.sampling import autoregressive_generate, speculative_generate

    if int(rounds) < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds!r}")
    n_tokens = int(new_tokens) * len(prompts)

    def run(kind: str, gamma: int = 0) -> tuple[float, list]:
        gen = torch.Generator().manual_seed(int(seed))
        t0 = time.perf_counter()
        results = []
        for ids in prompts:
            if kind == "spec":
                results.append(
                    speculative_generate(
                        target,
                        draft,
                        ids,
                        gamma=gamma,
                        max_new_tokens=new_tokens,
                        temperature=temperature,
                        generator=gen,
                    )
                )
            else:
                model = target if kind == "target" else draft
                results.append(
                    autoregressive_generate(
                        model, ids, max_new_tokens=new_tokens, temperature=temperature, generator=gen
                    )
                )
        return time.perf_counter() - t0, results

    run("target")  # warm-up (allocator, kernels)
    run("draft")
    t_target = min(run("target")[0], run("target")[0])
    t_draft = min(run("draft")[0], run("draft")[0])
    c = t_draft / t_target
    gamma = best_integer_gamma(alpha, c, max_gamma)
    plain_s, spec_s, accepted = [], [], []
    for i in range(int(rounds)):
        order = ("target", "spec") if i % 2 == 0 else ("spec", "target")
        for kind in order:
            t, res = run(kind, gamma)
            if kind == "spec":
                spec_s.append(t)
                accepted.extend(np.concatenate([r.accepted for r in res]).tolist())
            else:
                plain_s.append(t)
    ratio = np.array(plain_s) / np.array(spec_s)
    speedup, lo, hi, cover = median_interval(ratio)
    acc = np.asarray(accepted, dtype=float)
    return {
        "gamma": gamma,
        "c": c,
        "new_tokens": n_tokens,
        "rounds": int(rounds),
        "target_tokens_per_s": n_tokens / float(np.median(plain_s)),
        "draft_tokens_per_s": n_tokens / t_draft,
        "spec_tokens_per_s": n_tokens / float(np.median(spec_s)),
        "speedup": speedup,
        "speedup_low": lo,
        "speedup_high": hi,
        "coverage": cover,
        "predicted_speedup": float(theorem38_speedup(alpha, gamma, c)),
        "mean_accepted": float(acc.mean()) if acc.size else float("nan"),
        "round_target_s": [float(v) for v in plain_s],
        "round_spec_s": [float(v) for v in spec_s],
    }

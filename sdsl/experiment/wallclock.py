"""Wall-clock speed of speculative decoding against plain decoding, and Theorem 3.8 of Leviathan
et al. (2023).

Theorem 3.8: with acceptance rate ``alpha``, draft length ``gamma`` and cost ratio ``c`` (the time
of one draft step over one target step), the expected improvement in wall time is

    S(alpha, gamma, c) = (1 - alpha^(gamma + 1)) / ((1 - alpha) (gamma c + 1))
                       = E(alpha, gamma) / (gamma c + 1),

with ``E`` the expected tokens per iteration (method notes, section 1). It charges the target's
verification of ``gamma + 1`` tokens as one step and ignores the bookkeeping between steps.

:func:`time_pair` measures, on the same prompts and round-robin (every method sees the same
background load; the fastest of the repeats is kept, the least perturbed by other processes),
plain decoding of the target and of the draft (their ratio is the measured ``c``) and speculative
sampling at a given ``gamma``, all with :mod:`sdsl.measure.sampling`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from sdsl.model.throughput import expected_tokens
from sdsl.validation import as_in_range, as_positive

__all__ = ["best_integer_gamma", "theorem38_speedup", "time_pair"]


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


def time_pair(
    target,
    draft,
    prompts: Sequence[Sequence[int]],
    *,
    alpha: float,
    new_tokens: int,
    temperature: float,
    repeats: int,
    max_gamma: int,
    seed: int,
) -> dict:
    """Tokens per second of plain decoding (target, draft) and of speculative sampling at the
    integer ``gamma`` that maximises Theorem 3.8 for ``alpha`` and the measured cost ratio.

    A first round of plain decoding of both models gives ``c`` and hence ``gamma``; then
    ``repeats`` round-robin rounds of the three methods; the fastest round of each is kept.
    Returns ``gamma``, ``c`` (draft over target time per token, from the kept rounds), tokens per
    second of each method, the measured speedup (speculative over plain target), Theorem 3.8's
    prediction at that ``gamma`` and ``c``, and the mean accepted tokens per iteration observed.
    """
    import torch

    from sdsl.measure.sampling import autoregressive_generate, speculative_generate

    if int(repeats) < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats!r}")
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
    t_target, _ = run("target")
    t_draft, _ = run("draft")
    gamma = best_integer_gamma(alpha, t_draft / t_target, max_gamma)
    best = {"target": t_target, "draft": t_draft, "spec": float("inf")}
    spec_res: list = []
    for _ in range(int(repeats)):
        for kind in ("target", "draft", "spec"):
            t, res = run(kind, gamma)
            if t < best[kind]:
                best[kind] = t
                if kind == "spec":
                    spec_res = res
    c = best["draft"] / best["target"]
    accepted = np.concatenate([r.accepted for r in spec_res]) if spec_res else np.zeros(0)
    return {
        "gamma": gamma,
        "c": c,
        "new_tokens": n_tokens,
        "target_tokens_per_s": n_tokens / best["target"],
        "draft_tokens_per_s": n_tokens / best["draft"],
        "spec_tokens_per_s": n_tokens / best["spec"],
        "speedup": best["target"] / best["spec"],
        "predicted_speedup": float(theorem38_speedup(alpha, gamma, c)),
        "iterations": int(accepted.size),
        "mean_accepted": float(accepted.mean()) if accepted.size else float("nan"),
    }

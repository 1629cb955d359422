"""From the counts an engine exports to an :class:`~sdsl.measure.engines.types.AlphaReading`, with
the estimators of :mod:`sdsl.measure.estimators` (method notes, section 9) and the trial bounds of
:mod:`sdsl.measure.estimators` where drafts were shorter than ``k`` or the export rounds.

Three kinds of input, three functions:

* :func:`from_position_counts` -- per-position acceptance counters (vLLM's and llama.cpp's
  ``spec_decode_num_accepted_tokens_per_pos``, or rates times drafts from vLLM's log line): the
  MLE :func:`~sdsl.measure.estimators.alpha_from_position_counts`, ``alpha = S / (drafts + sum a[:-1])``;
* :func:`from_iterations` -- per-iteration accepted counts (vLLM's per-request histograms and
  per-step arrays): :func:`~sdsl.measure.estimators.alpha_from_accepted` and the cluster bootstrap over
  requests :func:`~sdsl.measure.estimators.alpha_bootstrap`;
* :func:`from_mean_length` -- only a mean acceptance length (SGLang, TensorRT-LLM, vLLM V0's log):
  :func:`~sdsl.measure.estimators.alpha_from_mean_tokens`, which inverts ``E(alpha, k)`` (method notes,
  section 1). This assumes a chain draft of ``k`` tokens accepted position by position; for tree
  drafts (several candidates per position) the mean length is not ``E(alpha, k)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from sdsl.measure.engines.types import AlphaReading, Labels, ShortDrafts, label_text
from sdsl.measure.estimators import (
    AlphaEstimate,
    alpha_bootstrap,
    alpha_from_accepted,
    alpha_from_mean_tokens,
    alpha_from_position_counts,
    alpha_from_trial_bounds,
    constant_alpha_test,
)

__all__ = [
    "from_position_counts",
    "from_iterations",
    "from_mean_length",
    "invert_mean_length",
    "reduction_bound",
    "CHAIN_ONLY",
]

#: The label of every estimate that inverts a mean acceptance length.
CHAIN_ONLY = (
    "inverts the mean acceptance length E(alpha, k) = (1 - alpha^(k+1)) / (1 - alpha): valid "
    "for chain drafts of k tokens only (not for tree drafts such as EAGLE with topk > 1)"
)


def reduction_bound(stopped: Sequence[float], k: int, missing: float) -> float:
    """The most evaluated positions that drafts shorter than ``k`` can remove from the full-draft
    count (method notes, section 9; :mod:`sdsl.measure.estimators`).

    Counting every draft as ``k`` long is wrong only for a short draft accepted in full: with ``j``
    tokens, all accepted, it is counted as stopping at position ``j + 1`` (one evaluated position
    too many) and it misses ``k - j`` draft tokens. ``stopped[j - 1]`` is the number of drafts that
    accepted exactly ``j`` tokens (``j = 1..k-1``); the ``missing`` draft tokens can make at most
    ``x_j <= stopped[j - 1]`` of them short with ``sum x_j (k - j) <= missing``, maximised greedily
    from ``j = k - 1`` (one missing token each) down.
    """
    budget = max(float(missing), 0.0)
    total = 0.0
    for j in range(k - 1, 0, -1):
        if budget <= 0:
            break
        take = min(float(stopped[j - 1]), math.floor(budget / (k - j)))
        total += take
        budget -= take * (k - j)
    return total


def _short(
    k: int, drafts: float, s: float, t: float, m_min: float, m_max: float, m_point: float, reduction: float
) -> ShortDrafts:
    missing = int(round(m_point)) if m_point > 0.5 else 0
    d_min = int(math.ceil(m_min / max(k - 1, 1))) if m_min > 0.5 else 0
    d_max = int(min(round(max(m_max, 0.0)), round(drafts))) if k > 1 else 0
    upper = s / max(t - reduction, s) if t > 0 and s > 0 else 0.0
    return ShortDrafts(missing, d_min, max(d_max, d_min), s / t if t > 0 else 0.0, upper)


def from_position_counts(
    *,
    source: str,
    path: str,
    labels: Labels,
    accepted_per_pos: Sequence[float],
    num_drafts: float,
    num_draft_tokens: float | None,
    num_accepted_tokens: float | None,
    level: float = 0.95,
    rel_tolerance: float = 0.0,
    trials_slack: float = 0.0,
    method: str = "per-position counters, truncated-geometric MLE (method notes, section 9)",
    notes: Sequence[str] = (),
) -> AlphaReading:
    """Alpha from per-position counters ``a_i`` (drafts whose token at 0-based position ``i`` was
    accepted) and the number of drafts (method notes, section 9).

    Parameters
    ----------
    accepted_per_pos : ``a_0 >= a_1 >= ... >= a_{k-1}``; ``k = len``.
    num_drafts, num_draft_tokens, num_accepted_tokens : the engine's totals (``num_draft_tokens``
        may be None when not exported: short drafts are then undetectable).
    rel_tolerance : relative rounding of the totals (llama.cpp: ``5e-6``, half a unit of the 6th
        significant digit); 0 means exact.
    trials_slack : extra absolute uncertainty of the evaluated positions (rounded rates of a log).

    Raises
    ------
    ValueError when the counters contradict each other beyond ``rel_tolerance`` (one line naming
    the series).
    """
    where = f"{path} ({label_text(labels)})"
    a = np.asarray(accepted_per_pos, dtype=float)
    k = int(a.size)
    if k == 0:
        raise ValueError(f"{where}: no per-position counter")
    d = float(num_drafts)
    tol_d = rel_tolerance * d
    if np.any(np.diff(a) > 0):
        i = int(np.flatnonzero(np.diff(a) > 0)[0]) + 1
        raise ValueError(
            f"{where}: accepted at position {i} ({a[i]:.0f}) > accepted at position {i - 1} "
            f"({a[i - 1]:.0f}); a position is only reached when the previous one was accepted"
        )
    if a[0] > d + tol_d + trials_slack:
        raise ValueError(f"{where}: accepted at position 0 ({a[0]:.0f}) > number of drafts ({d:.0f})")
    s = float(a.sum())
    if num_accepted_tokens is not None:
        acc = float(num_accepted_tokens)
        tol = rel_tolerance * acc + trials_slack
        if abs(s - acc) > tol + 1e-9:
            extra = f" (tolerance {tol:.3g}: totals rounded to 6 significant digits)" if rel_tolerance else ""
            raise ValueError(
                f"{where}: per-position counters sum to {s:.0f} but num_accepted_tokens is {acc:.0f}{extra}"
            )
    t = d + float(a[:-1].sum())
    m_point = m_min = m_max = 0.0
    all_notes = list(notes)
    if num_draft_tokens is not None:
        dt = float(num_draft_tokens)
        tol_m = k * tol_d + rel_tolerance * dt
        m_point = k * d - dt
        if m_point < -tol_m - 1e-9:
            raise ValueError(
                f"{where}: num_draft_tokens ({dt:.0f}) > k x num_drafts ({k} x {d:.0f}); "
                "the per-position counters are shorter than the drafts"
            )
        m_min, m_max = max(m_point - tol_m, 0.0), max(m_point + tol_m, 0.0)
    else:
        all_notes.append("num_draft_tokens is not exported: drafts shorter than k cannot be detected")
    stopped = [a[j - 1] - a[j] for j in range(1, k)]
    reduction = reduction_bound(stopped, k, m_max)
    t_lo = t - tol_d - reduction - trials_slack
    t_hi = t + tol_d + trials_slack
    s_int = int(round(s))
    if t_lo == t_hi and float(d).is_integer():
        est = alpha_from_position_counts([int(x) for x in a], int(d), level=level)
    else:
        est = alpha_from_trial_bounds(
            s, t, max(t_lo, s), t_hi, level=level, n=int(round(d)), method="mle_position_counts_bounded"
        )
    short = _short(k, d, s, t, m_min, m_max, m_point, reduction)
    if rel_tolerance:
        all_notes.append(
            f"totals rounded by the exporter: |error| <= {rel_tolerance:g} x value; the interval covers it"
        )
    if short.drafts_max > 0 and k > 1:
        all_notes.append(
            "drafts shorter than k lower the conditional rates at the positions where they end (a "
            "short draft accepted in full counts as a rejection): the constant-alpha test is biased "
            "towards rejecting"
        )
    d_int = max(int(round(d)), int(a[0]))
    test = constant_alpha_test(accepted_per_pos=[int(round(x)) for x in a], num_drafts=d_int) if k > 1 else None
    rates = test.rates if test is not None else (s_int / d_int,) if d_int else ()
    return AlphaReading(
        source=source,
        path=path,
        labels=labels,
        gamma=k,
        estimate=est,
        method=method,
        num_drafts=d,
        num_draft_tokens=num_draft_tokens,
        num_accepted_tokens=s if rel_tolerance or num_accepted_tokens is None else float(num_accepted_tokens),
        position_rates=rates,
        constant_alpha=test,
        short_drafts=short,
        notes=tuple(all_notes),
    )


def from_iterations(
    *,
    source: str,
    path: str,
    labels: Labels,
    accepted: Sequence[int],
    drafted: Sequence[int],
    k: int,
    exact_lengths: bool,
    missing_tokens: int = 0,
    groups: Sequence | np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
    method: str = "per-iteration accepted counts, truncated-geometric MLE",
    notes: Sequence[str] = (),
) -> AlphaReading:
    """Alpha from per-iteration accepted counts (method notes, section 9).

    ``drafted[t]`` is the draft length of iteration ``t``: exact when ``exact_lengths`` (vLLM's
    ``per_step_drafted``), else ``k`` for every iteration with ``missing_tokens`` draft tokens
    known to be missing in total (from ``num_draft_tokens``), which bounds the estimate
    (:mod:`sdsl.measure.estimators`). ``groups`` (one label per iteration, e.g. the request) with a
    seeded ``rng`` adds a cluster bootstrap over requests.
    """
    acc = np.asarray(accepted, dtype=np.int64)
    gam = np.asarray(drafted, dtype=np.int64)
    mle = alpha_from_accepted(acc, gam, level=level)
    s, t = float(mle.accepted), float(mle.trials)
    if exact_lengths:
        n_short = int(np.count_nonzero(gam < k))
        miss = int(np.sum(np.maximum(k - gam, 0)))
        short = ShortDrafts(miss, n_short, n_short, mle.alpha, mle.alpha, exact=True)
        est = mle
    else:
        m = float(missing_tokens)
        reduction = reduction_bound([int(np.count_nonzero(acc == j)) for j in range(1, k)], k, m)
        short = _short(k, float(acc.size), s, t, m, m, m, reduction)
        est = (
            mle
            if m == 0
            else alpha_from_trial_bounds(
                s, t, max(t - reduction, s), t, level=level, n=int(acc.size), method="mle_truncated_geometric_bounded"
            )
        )
    boot = None
    all_notes = list(notes)
    if groups is not None and rng is not None:
        grp = np.asarray(groups)
        if np.unique(grp).size >= 2:
            boot = alpha_bootstrap(acc, gam, grp, rng, level=level)
            if not exact_lengths and missing_tokens:
                all_notes.append("the bootstrap interval is of the estimate that counts every draft as k long")
        else:
            all_notes.append("one request only: no bootstrap over requests")
    test = constant_alpha_test(acc, gam) if gam.max() > 1 else None
    if test is not None and not exact_lengths and missing_tokens:
        all_notes.append(
            "drafts shorter than k lower the conditional rates at the positions where they end: the "
            "constant-alpha test is biased towards rejecting"
        )
    used = gam > 0
    return AlphaReading(
        source=source,
        path=path,
        labels=labels,
        gamma=int(k),
        estimate=est,
        method=method,
        num_drafts=float(np.count_nonzero(used)),
        num_draft_tokens=float(gam.sum()) if exact_lengths else None,
        num_accepted_tokens=float(acc.sum()),
        position_rates=test.rates if test else (),
        constant_alpha=test,
        short_drafts=short,
        bootstrap=boot,
        notes=tuple(all_notes),
    )


def invert_mean_length(mean_length: float, k: int) -> float:
    """The alpha with ``E(alpha, k) = mean_length`` (method notes, section 1), no interval."""
    return float(alpha_from_mean_tokens(mean_length, k, 1).alpha)


def from_mean_length(
    *,
    source: str,
    path: str,
    labels: Labels,
    mean_length: float,
    k: int,
    n_iterations: float | None,
    level: float = 0.95,
    method: str = "mean acceptance length inverted",
    num_drafts: float | None = None,
    num_draft_tokens: float | None = None,
    num_accepted_tokens: float | None = None,
    notes: Sequence[str] = (),
) -> AlphaReading:
    """Alpha by inverting the mean acceptance length ``E(alpha, k)`` (bonus token included) with
    :func:`sdsl.measure.estimators.alpha_from_mean_tokens`: the delta-method interval from ``n_iterations``
    verification steps. Without a count (an interval gauge) the interval cannot be computed: it is
    NaN and the reading says why. Labelled valid for chain drafts only (:data:`CHAIN_ONLY`)."""
    where = f"{path} ({label_text(labels)})"
    if not 1.0 <= mean_length <= k + 1.0:
        raise ValueError(
            f"{where}: mean acceptance length {mean_length:.6g} outside [1, k + 1] = [1, {k + 1}]"
            "; is k (the draft length) right?"
        )
    all_notes = [CHAIN_ONLY, *notes]
    if n_iterations is not None and n_iterations >= 1:
        est = alpha_from_mean_tokens(mean_length, k, int(round(n_iterations)), level=level)
    else:
        a = invert_mean_length(mean_length, k)
        est = AlphaEstimate(
            a,
            float("nan"),
            float("nan"),
            float("nan"),
            n=0,
            method="invert_mean_tokens",
            interval="none (no count of verification steps)",
            level=level,
        )
        all_notes.append("no count of verification steps in the export: no sampling interval can be given")
    return AlphaReading(
        source=source,
        path=path,
        labels=labels,
        gamma=int(k),
        estimate=est,
        method=method,
        num_drafts=num_drafts,
        num_draft_tokens=num_draft_tokens,
        num_accepted_tokens=num_accepted_tokens,
        chain_only=True,
        notes=tuple(all_notes),
    )

"""From the counts an engine exports to an :class:`~sdsl.measure.engines.types.AlphaReading`, with
the estimators of :mod:`sdsl.measure.estimators` (method notes, section 9) and the trial bounds of
:mod:`sdsl.measure.estimators` where drafts were shorter than ``k`` or the export rounds.

Three kinds of input, three functions (and, for printed summaries, :func:`from_rounded_rates` on
rates rounded to a few decimals with the drafts known within a range, and
:func:`from_totals_bounded` on totals alone):

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

import importlib.util
import math
from collections.abc import Sequence
from dataclasses import dataclass

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
    "short_drafts",
    "drafts_from_summary",
    "RoundedRates",
    "from_rounded_rates",
    "from_totals_bounded",
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


def short_drafts(
    *,
    k: int,
    accepted: float,
    trials: float,
    trials_low: float,
    drafts: float,
    drafts_low: float,
    drafts_high: float,
    draft_tokens: float,
    tolerance: float = 0.0,
) -> ShortDrafts:
    """The :class:`~sdsl.measure.engines.types.ShortDrafts` record of counts whose number of drafts
    is ``drafts`` (known within ``[drafts_low, drafts_high]``) and whose draft tokens are
    ``draft_tokens`` (``tolerance``: their rounding): the missing tokens ``k x drafts - draft tokens``
    at the point and over the range, the short drafts they allow (each misses 1 to ``k - 1``
    tokens), and alpha at the evaluated positions ``trials`` (every draft counted ``k`` long) and at
    their lower bound ``trials_low`` (method notes, section 9)."""
    point = k * drafts - draft_tokens
    low = max(k * drafts_low - draft_tokens - tolerance, 0.0)
    high = max(k * max(drafts_high, drafts) - draft_tokens + tolerance, 0.0)
    missing = int(round(point)) if point > 0.5 else 0
    missing_max = int(round(high)) if high > 0.5 else 0
    d_min = int(math.ceil(low / (k - 1) - 1e-9)) if k > 1 and low > 0.5 else 0
    d_max = int(min(round(high), math.floor(max(drafts_high, drafts) + 1e-9))) if k > 1 else 0
    s = float(accepted)
    full = s / trials if trials > 0 else 0.0
    upper = s / max(trials_low, s) if trials_low > 0 and s > 0 else 0.0
    return ShortDrafts(
        missing,
        d_min,
        max(d_max, d_min),
        full,
        max(upper, full),
        missing_max=missing_max if missing_max > missing else None,
    )


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
    drafts_range: tuple[float, float] | None = None,
    trials_range: tuple[float, float] | None = None,
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
    drafts_range : ``(low, high)`` of the number of drafts where it is not exact (a log line gives it
        through rounded rates, or not at all when nothing was accepted); ``num_drafts`` is the point.
    trials_range : ``(low, high)`` of the evaluated positions ``drafts + sum a[:-1]`` the caller
        derived from rounded inputs (every draft counted ``k`` long); the short-draft reduction is
        subtracted from its low end here.

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
    d_low, d_high = drafts_range if drafts_range is not None else (d, d)
    tol_d = rel_tolerance * d
    slack = 0.0 if trials_range is None else max(trials_range[1] - trials_range[0], 0.0)
    if np.any(np.diff(a) > 0):
        i = int(np.flatnonzero(np.diff(a) > 0)[0]) + 1
        raise ValueError(
            f"{where}: accepted at position {i} ({a[i]:.0f}) > accepted at position {i - 1} "
            f"({a[i - 1]:.0f}); a position is only reached when the previous one was accepted"
        )
    if a[0] > max(d, d_high) + tol_d + slack:
        raise ValueError(f"{where}: accepted at position 0 ({a[0]:.0f}) > number of drafts ({d:.0f})")
    s = float(a.sum())
    if num_accepted_tokens is not None:
        acc = float(num_accepted_tokens)
        tol = rel_tolerance * acc + slack
        if abs(s - acc) > tol + 1e-9:
            extra = f" (tolerance {tol:.3g}: totals rounded to 6 significant digits)" if rel_tolerance else ""
            raise ValueError(
                f"{where}: per-position counters sum to {s:.0f} but num_accepted_tokens is {acc:.0f}{extra}"
            )
    t = d + float(a[:-1].sum())
    all_notes = list(notes)
    m_high = 0.0
    if num_draft_tokens is not None:
        dt = float(num_draft_tokens)
        tol_m = k * tol_d + rel_tolerance * dt
        if k * max(d, d_high) - dt < -tol_m - 1e-9:
            raise ValueError(
                f"{where}: num_draft_tokens ({dt:.0f}) > k x num_drafts ({k} x {d:.0f}); "
                "the per-position counters are shorter than the drafts"
            )
        m_high = max(k * d - dt + tol_m, 0.0)
    else:
        all_notes.append("num_draft_tokens is not exported: drafts shorter than k cannot be detected")
    stopped = [a[j - 1] - a[j] for j in range(1, k)]
    reduction = reduction_bound(stopped, k, m_high)
    if trials_range is None:
        t_lo, t_hi = t - tol_d - reduction, t + tol_d
    else:
        t_lo, t_hi = min(trials_range[0], t) - reduction, max(trials_range[1], t)
    s_int = int(round(s))
    if t_lo == t_hi and float(d).is_integer():
        est = alpha_from_position_counts([int(x) for x in a], int(d), level=level)
    else:
        est = alpha_from_trial_bounds(
            s, t, max(t_lo, s), t_hi, level=level, n=int(round(d)), method="mle_position_counts_bounded"
        )
    if num_draft_tokens is not None:
        short = short_drafts(
            k=k,
            accepted=s,
            trials=t,
            trials_low=max(t_lo, s),
            drafts=d,
            drafts_low=d_low,
            drafts_high=d_high,
            draft_tokens=float(num_draft_tokens),
            tolerance=k * tol_d + rel_tolerance * float(num_draft_tokens),
        )
    else:
        short = ShortDrafts(0, 0, 0, s / t if t > 0 else 0.0, s / max(t_lo, s) if s > 0 else 0.0)
    if rel_tolerance:
        all_notes.append(
            f"totals rounded by the exporter: |error| <= {rel_tolerance:g} x value; the interval covers it"
        )
    if short.any and k > 1 and s > 0:
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


def drafts_from_summary(
    *,
    accepted: int,
    drafted: int,
    k: int,
    mean: float | None,
    mean_rounding: float,
    rates: Sequence[float],
    rate_rounding: float,
    where: str,
) -> tuple[float, float, float]:
    """Point, low and high number of drafts behind a printed summary of one interval: the exact
    ``accepted`` and ``drafted`` tokens, the mean acceptance length ``1 + accepted / drafts`` rounded
    to ``mean_rounding`` and the per-position rates ``accepted at position i / drafts`` rounded to
    ``rate_rounding`` (vLLM's ``SpecDecoding metrics:`` line, llama.cpp's ``print_timing``).

    Each draft has 1 to ``k`` tokens, so the drafts lie in ``[drafted / k, drafted]``; the rounded
    mean and rates narrow that when something was accepted (``accepted / drafts`` is then known
    within their rounding). ``drafted / k`` is the point when it is whole and inside the range
    (every draft ``k`` long). With nothing accepted the mean and the rates are all 0 whatever the
    number of drafts: the range stays ``[drafted / k, drafted]``.
    """
    a, dt = accepted, drafted
    lo: float = math.ceil(dt / k)
    hi = float(dt)
    if a > 0:
        if mean is not None:
            lo = max(lo, a / (mean - 1 + mean_rounding))
            if mean - 1 - mean_rounding > 0:
                hi = min(hi, a / (mean - 1 - mean_rounding))
        if rates:
            sr = sum(rates)
            lo = max(lo, a / (sr + len(rates) * rate_rounding))
            if sr - len(rates) * rate_rounding > 0:
                hi = min(hi, a / (sr - len(rates) * rate_rounding))
    if lo > hi + 1e-9:
        raise ValueError(
            f"{where}: the counts contradict each other (accepted {a}, drafted {dt}, mean acceptance length "
            f"{mean}, {len(rates)} per-position rates)"
        )
    lo_i, hi_i = float(math.ceil(lo - 1e-9)), float(math.floor(hi + 1e-9))
    full = dt / k
    if dt % k == 0 and lo - 1e-9 <= full <= hi + 1e-9:
        return full, lo_i, hi_i
    point = a / (mean - 1) if a > 0 and mean is not None and mean > 1 else lo
    return float(min(max(round(point), lo_i), hi_i)), lo_i, hi_i


@dataclass(frozen=True)
class RoundedRates:
    """One printed summary of an interval or a run: the exact ``accepted`` tokens, the draft tokens
    (None: not printed), the number of drafts (``drafts`` within ``[drafts_low, drafts_high]``) and
    the per-position rates ``accepted at position i / drafts`` rounded to within ``rounding``;
    ``first``: the exact count at position 0 where it is printed (llama.cpp's ``#acc drafts``)."""

    accepted: float
    draft_tokens: float | None
    drafts: float
    drafts_low: float
    drafts_high: float
    rates: tuple[float, ...]
    rounding: float
    first: float | None = None


def _trials_range(part: RoundedRates, k: int) -> tuple[float, float]:
    """The evaluated positions ``drafts + sum a[:-1] = drafts + accepted - a[k-1]`` of one summary,
    every draft counted ``k`` long, over its range of drafts and the rounding of the last rate (the
    accepted total is exact, so only the count at the last position is uncertain; a rate beyond
    those printed is exactly 0). ``T`` rises with the drafts, so its ends are at the ends of their
    range."""
    s = part.accepted
    if k == 1:  # every accepted token is at position 0: T = drafts
        return part.drafts_low, part.drafts_high
    if k - 1 >= len(part.rates):
        return part.drafts_low + s, part.drafts_high + s
    rate = part.rates[k - 1]
    last_hi = min((rate + part.rounding) * part.drafts_low, s)
    last_lo = max((rate - part.rounding) * part.drafts_high, 0.0)
    return part.drafts_low + s - last_hi, part.drafts_high + s - last_lo


def from_rounded_rates(
    parts: Sequence[RoundedRates],
    *,
    source: str,
    path: str,
    labels: Labels,
    k: int,
    level: float = 0.95,
    method: str,
    notes: Sequence[str] = (),
) -> AlphaReading:
    """Alpha from printed summaries with rounded per-position rates (vLLM's log lines and
    ``spec_decode.py`` printout, llama.cpp's ``print_timing`` and ``statistics`` lines): the
    per-position counts ``rate x drafts`` rescaled to the exact accepted total give the point
    (:func:`from_position_counts`); the evaluated positions are bounded over the rounding and the
    range of the drafts (:func:`_trials_range`), and the interval covers both ends (method notes,
    section 9). ``k``: the draft length (rates beyond those printed are 0)."""
    pos = [0.0] * k
    s = sum(p.accepted for p in parts)
    first = sum(p.first for p in parts if p.first is not None) if all(p.first is not None for p in parts) else None
    for p in parts:
        for i, r in enumerate(p.rates[:k]):
            pos[i] += r * p.drafts
    if first is not None:
        rest = sum(pos[1:])
        pos = [first] + ([x * (s - first) / rest for x in pos[1:]] if rest > 0 else pos[1:])
    else:
        total = sum(pos)
        pos = [x * s / total for x in pos] if total > 0 else pos
    ranges = [_trials_range(p, k) for p in parts]
    d = sum(p.drafts for p in parts)
    d_lo, d_hi = sum(p.drafts_low for p in parts), sum(p.drafts_high for p in parts)
    dts = [p.draft_tokens for p in parts]
    dt = None if any(x is None for x in dts) else float(sum(x for x in dts if x is not None))
    all_notes = list(notes)
    if s == 0 and d_hi > d_lo:
        all_notes.append(
            f"no draft token was accepted, so the rates and the mean length (all 0) do not tell the number of drafts: "
            f"{d_lo:.0f} if each draft had k tokens, up to {d_hi:.0f} if each had 1; the interval is taken at "
            f"{d_lo:.0f} (the widest)"
        )
    elif d_hi > d_lo:
        all_notes.append(
            f"drafts recovered from the rounded mean length and rates: {d:.0f} (range {d_lo:.0f} to {d_hi:.0f})"
        )
    return from_position_counts(
        source=source,
        path=path,
        labels=labels,
        accepted_per_pos=pos,
        num_drafts=d,
        num_draft_tokens=dt,
        num_accepted_tokens=s,
        level=level,
        drafts_range=(d_lo, d_hi),
        trials_range=(sum(r[0] for r in ranges), sum(r[1] for r in ranges)),
        method=method,
        notes=all_notes,
    )


def from_totals_bounded(
    *,
    source: str,
    path: str,
    labels: Labels,
    accepted: float,
    draft_tokens: float,
    drafts_low: float,
    drafts_high: float,
    first: float | None = None,
    k: int | None = None,
    level: float = 0.95,
    method: str,
    notes: Sequence[str] = (),
) -> AlphaReading:
    """Alpha when only totals are printed: accepted tokens ``S``, draft tokens, the drafts within
    ``[drafts_low, drafts_high]`` and (``first``) the drafts whose first token was accepted.

    The evaluated positions are ``S + R``, ``R`` the drafts that ended in a rejection (method notes,
    section 9). A draft accepted in full has at least one token, so ``R >= drafts - min(S, first)``;
    a rejected draft leaves at least one of its tokens unaccepted, so ``R <= draft tokens - S`` and
    ``R <= drafts``. The estimate ``S / (S + R)`` is bounded over that range; the point is its
    middle, and the interval covers both ends. The draft lengths are not printed, so no constant-
    alpha test is possible."""
    s = float(accepted)
    dt = float(draft_tokens)
    if s > dt:
        raise ValueError(f"{path} ({label_text(labels)}): accepted tokens ({s:.0f}) > draft tokens ({dt:.0f})")
    full_max = min(s, drafts_low if first is None else min(first, drafts_low))
    r_lo = max(drafts_low - full_max, 1.0 if s < dt else 0.0)
    r_hi = min(drafts_high, dt - s)
    if r_lo > r_hi + 1e-9:
        raise ValueError(
            f"{path} ({label_text(labels)}): the counts contradict each other (accepted {s:.0f} of {dt:.0f} draft "
            f"tokens in {drafts_low:.0f} to {drafts_high:.0f} drafts)"
        )
    t_lo, t_hi = s + r_lo, s + r_hi
    t = 0.5 * (t_lo + t_hi)
    if t <= 0:
        raise ValueError(f"{path} ({label_text(labels)}): no evaluated draft position")
    est = alpha_from_trial_bounds(
        s, t, max(t_lo, s), max(t_hi, s), level=level, n=int(round(drafts_low)), method="mle_totals_bounded"
    )
    d = 0.5 * (drafts_low + drafts_high)
    kk = k if k is not None else max(int(math.ceil(dt / max(drafts_low, 1.0))), 1)
    short = ShortDrafts(
        0,
        0,
        None,
        s / t_hi if t_hi > 0 else 0.0,
        s / max(t_lo, s) if s > 0 else 0.0,
        detail=(
            f"alpha is bounded over every split of the {dt:.0f} draft tokens into drafts the totals allow (which drafts "
            "ended without a rejection is not printed)"
        ),
    )
    return AlphaReading(
        source=source,
        path=path,
        labels=labels,
        gamma=kk if k is not None else None,
        estimate=est,
        method=method,
        num_drafts=d if drafts_low == drafts_high else None,
        num_draft_tokens=dt,
        num_accepted_tokens=s,
        short_drafts=short,
        notes=(
            *notes,
            f"evaluated positions S + rejections within [{t_lo:.0f}, {t_hi:.0f}] (the drafts that ended in a "
            "rejection are not printed); the point is the middle",
        ),
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
        n = float(acc.size)
        short = short_drafts(
            k=k,
            accepted=s,
            trials=t,
            trials_low=max(t - reduction, s),
            drafts=n,
            drafts_low=n,
            drafts_high=n,
            draft_tokens=k * n - m,
        )
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
        if np.unique(grp).size >= 2 and importlib.util.find_spec("scipy") is None:
            all_notes.append(
                "no bootstrap over requests: it needs scipy, which the base install leaves out "
                "(pip install 'sdsl[analysis]')"
            )
        elif np.unique(grp).size >= 2:
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

"""Alpha when the number of evaluated draft positions is known only within bounds (method notes,
section 9).

The truncated-geometric MLE of alpha is ``S / T`` with ``S`` accepted draft tokens and ``T``
evaluated draft positions (every accepted position plus one rejected position per iteration that
stopped early). Serving engines export ``S`` exactly, but ``T`` is known only within bounds when

* some drafts were shorter than the configured length ``k`` (n-gram and suffix decoding find fewer
  tokens, grammar-rejected tokens are dropped, the draft length adapts to the batch): counting
  every draft as ``k`` tokens long counts a *rejection* for a short draft that was accepted in full,
  one evaluated position too many for each such draft. Their number is at most what the
  ``m = k * drafts - draft tokens`` missing tokens allow
  (:func:`sdsl.measure.engines.estimate.reduction_bound`), so ``T`` lies in
  ``[T_full - reduction, T_full]``;
* the export rounds its totals (llama.cpp prints 6 significant digits, vLLM's log line 2 decimals
  of the mean acceptance length and 3 of each per-position rate).

:func:`alpha_from_trial_bounds` returns the estimate at the reported ``T`` with an interval that
covers both the sampling error and the bounds: the lower end of the ``level`` interval at the
largest ``T`` and the upper end at the smallest ``T`` (a union of intervals, so its coverage is
at least ``level`` whatever the true ``T`` in the bounds).
"""

from __future__ import annotations

import math

from sdsl.measure.estimators import (
    AlphaEstimate,
    _binomial_interval,
    _check_interval,
    _check_level,
)

__all__ = ["alpha_from_trial_bounds"]


def _whole(value: float, name: str) -> float:
    x = float(value)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a finite count >= 0, got {value!r}")
    return x


def alpha_from_trial_bounds(
    accepted: float,
    trials: float,
    trials_low: float,
    trials_high: float,
    *,
    level: float = 0.95,
    interval: str = "profile",
    n: int = 0,
    method: str = "mle_trial_bounds",
) -> AlphaEstimate:
    """Alpha ``= accepted / trials`` with an interval widened to every ``trials`` in
    ``[trials_low, trials_high]`` (method notes, section 9; module docstring).

    Parameters
    ----------
    accepted : accepted draft tokens ``S`` (excluding the bonus token), exact.
    trials : evaluated draft positions ``T`` as reported (e.g. counting every draft as ``k`` long).
    trials_low, trials_high : bounds of the true ``T``, ``trials_low <= trials <= trials_high``;
        ``trials_low`` is raised to ``accepted`` (alpha cannot exceed 1).
    level : confidence level in (0, 1).
    interval : interval of the binomial kernel at each end (:data:`sdsl.measure.estimators.INTERVALS`).
    n : number of drafts (iterations) behind the counts, recorded in the result.
    method : label of the estimate.

    Returns
    -------
    AlphaEstimate with ``alpha = S / T``, ``se`` the sampling standard error at ``T`` (the bounds
    are not in it), ``[ci_low, ci_high]`` = [lower end at ``trials_high``, upper end at
    ``trials_low``]; ``extra`` holds ``alpha_low = S / trials_high`` and ``alpha_high =
    S / trials_low`` (the bounds without sampling error) and the trial bounds.
    """
    level = _check_level(level)
    interval = _check_interval(interval)
    s = _whole(accepted, "accepted")
    t = _whole(trials, "trials")
    lo_t = _whole(trials_low, "trials_low")
    hi_t = _whole(trials_high, "trials_high")
    if t <= 0:
        raise ValueError(f"trials must be > 0 (no evaluated draft position), got {trials!r}")
    if s > t:
        raise ValueError(f"accepted must be <= trials, got accepted={accepted!r} > trials={trials!r}")
    if not lo_t <= t <= hi_t:
        raise ValueError(
            f"trial bounds must satisfy trials_low <= trials <= trials_high, got "
            f"{trials_low!r} <= {trials!r} <= {trials_high!r}"
        )
    lo_t = max(lo_t, s)
    # the binomial kernel takes whole counts; round the bounds outwards
    si = int(round(s))
    a, se, _, _ = _binomial_interval(si, max(int(round(t)), si, 1), level, interval)
    a = s / t
    _, _, low, _ = _binomial_interval(si, max(int(math.ceil(hi_t)), si, 1), level, interval)
    _, _, _, high = _binomial_interval(si, max(int(math.floor(lo_t)), si, 1), level, interval)
    return AlphaEstimate(
        float(a),
        float(se),
        float(min(low, a)),
        float(max(high, a)),
        n=int(n),
        method=method,
        interval=f"{interval}_union_over_trial_bounds",
        level=level,
        trials=int(round(t)),
        accepted=si,
        extra={
            "alpha_low": s / hi_t,
            "alpha_high": s / lo_t if lo_t > 0 else 1.0,
            "trials_low": lo_t,
            "trials_high": hi_t,
        },
    )

"""Estimating the acceptance rate alpha from speculative decoding runs (method notes, section 9;
the paper's Appendix B).

Under the standard model of speculative decoding (Leviathan et al. 2023, Section 3.3) every drafted
token is accepted independently with probability ``alpha`` until the first rejection, so the number
``k`` of accepted tokens in an iteration that drafted ``gamma`` tokens follows a truncated geometric
law::

    P(k) = alpha**k (1 - alpha)      for k < gamma
    P(gamma) = alpha**gamma

Its log-likelihood over iterations is ``S ln(alpha) + R ln(1 - alpha)`` with ``S = sum(k)`` (tokens
accepted) and ``R = #{iterations with k < gamma}`` (rejections): the kernel of a binomial with
``S + R`` Bernoulli trials, one per *evaluated* draft position. Hence the maximum-likelihood
estimate ``alpha = S / (S + R)``, observed Fisher information ``(S + R) / (alpha (1 - alpha))`` and
exact profile-likelihood intervals.

Four estimators, each returning a frozen :class:`AlphaEstimate`:

* :func:`alpha_from_accepted` -- per-iteration accepted counts and draft lengths (MLE), with a
  choice of interval (profile likelihood, Wilson score, logit-Wald, Wald);
* :func:`alpha_bootstrap` -- the same MLE with a cluster bootstrap over prompts (``scipy.stats.
  bootstrap`` on per-prompt sums), which also covers dependence between iterations of one prompt;
* :func:`alpha_from_position_counts` -- per-position counters (accepted at position ``i``, number of
  drafts), which is what serving engines such as vLLM export (:mod:`sdsl.measure.engines`);
* :func:`alpha_from_mean_tokens` -- mean tokens per iteration at one or several ``gamma``, inverting
  ``E(alpha, gamma)`` (method notes, section 1) with ``brentq`` / ``least_squares``, SE by the delta
  method;

and :func:`constant_alpha_test`, a chi-square goodness-of-fit test of the constant-alpha model
from the per-position conditional acceptance rates (real acceptance often falls with position).

What ``sdsl alpha`` needs runs on numpy alone (the base install): the normal quantile comes from the
standard library's :class:`statistics.NormalDist` and the profile-likelihood bounds from
:func:`sdsl.model.solvers.find_root`; scipy (``sdsl[analysis]``) is imported where it is used, by
the bootstrap and by the chi-square test's p-value.

At the end: alpha when the number of evaluated draft positions is known only within bounds
(:func:`alpha_from_trial_bounds`) and alpha from mean accepted lengths (:func:`alpha_from_mean_tokens`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from sdsl.model.solvers import find_root
from sdsl.model.throughput import expected_tokens

__all__ = [
    "AlphaEstimate",
    "ConstantAlphaTest",
    "INTERVALS",
    "position_counts",
    "alpha_from_accepted",
    "alpha_bootstrap",
    "alpha_from_position_counts",
    "constant_alpha_test",
    "alpha_from_trial_bounds",
    "alpha_from_mean_tokens",
]


#: Interval methods of the likelihood-based estimators.
INTERVALS = ("profile", "wilson", "logit", "wald")


@dataclass(frozen=True)
class AlphaEstimate:
    """An estimate of the acceptance rate with its uncertainty.

    ``alpha`` point estimate; ``se`` standard error (observed Fisher information, bootstrap or delta
    method, see ``method``); ``ci_low``, ``ci_high`` the ``level`` confidence interval; ``n`` the
    number of iterations (drafts) used; ``trials`` the number of evaluated draft positions
    (``S + R``; for the mean-token estimator the number of iterations); ``accepted`` the number of
    accepted draft tokens ``S`` (excluding the bonus/correction token); ``method`` how it was
    estimated and ``interval`` how the interval was built.
    """

    alpha: float
    se: float
    ci_low: float
    ci_high: float
    n: int
    method: str
    interval: str
    level: float = 0.95
    trials: int = 0
    accepted: int = 0
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def half_width(self) -> float:
        """Half the width of the interval (the ``alpha_hw95`` column of the ``acceptance`` data)."""
        return 0.5 * (self.ci_high - self.ci_low)

    def as_dict(self) -> dict:
        """The scalar fields as a plain dict (one row of a summary table)."""
        return {
            "alpha": self.alpha,
            "se": self.se,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "half_width": self.half_width,
            "n": self.n,
            "trials": self.trials,
            "accepted": self.accepted,
            "method": self.method,
            "interval": self.interval,
            "level": self.level,
        }


@dataclass(frozen=True)
class ConstantAlphaTest:
    """Chi-square goodness-of-fit of the constant-alpha model (:func:`constant_alpha_test`).

    ``rates[i]`` is the conditional acceptance rate at draft position ``i + 1`` (accepted at that
    position / drafts that reached it), ``trials[i]`` its denominator; ``alpha`` the pooled MLE;
    ``statistic``, ``dof``, ``p_value`` the Pearson chi-square test of equal rates across positions;
    ``p_value`` is ``None`` where scipy, which computes it, is not installed (the base install of
    ``sdsl``; ``pip install 'sdsl[analysis]'`` adds it).
    """

    alpha: float
    statistic: float
    dof: int
    p_value: float | None
    rates: tuple[float, ...]
    trials: tuple[int, ...]
    accepted: tuple[int, ...]

    def rejects(self, level: float = 0.05) -> bool:
        """Whether the constant-alpha model is rejected at significance ``level``; raises
        ``RuntimeError`` when the p-value was not computed (scipy not installed)."""
        if self.p_value is None:
            raise RuntimeError("the constant-alpha test has no p-value: scipy is not installed")
        return bool(self.p_value < level)


# --------------------------------------------------------------------------- input checks
def _as_counts(value: ArrayLike, name: str, *, allow_empty: bool = False) -> np.ndarray:
    """``value`` as a 1-D array of non-negative integers; ValueError naming ``name`` otherwise."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric counts, got {value!r}") from exc
    arr = np.atleast_1d(arr)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty: at least one count is needed")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {arr[arr < 0][0]!r}")
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be whole numbers, got {arr[arr != np.round(arr)][0]!r}")
    return arr.astype(np.int64)


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in the open interval (0, 1), got {level!r}")
    return level


def _check_interval(interval: str) -> str:
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {INTERVALS}, got {interval!r}")
    return interval


def _accepted_and_gamma(accepted: ArrayLike, gamma: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    k = _as_counts(accepted, "accepted")
    g = _as_counts(gamma, "gamma")
    if g.size == 1 and k.size != 1:
        g = np.full_like(k, g[0])
    if g.shape != k.shape:
        raise ValueError(f"gamma must be a scalar or have one entry per iteration ({k.size}), got {g.size}")
    if np.any(k > g):
        i = int(np.flatnonzero(k > g)[0])
        raise ValueError(f"accepted must be <= gamma (drafted), got accepted={k[i]} > gamma={g[i]} at iteration {i}")
    return k, g


# --------------------------------------------------------------------------- binomial kernel
def _binomial_interval(s: int, t: int, level: float, interval: str) -> tuple[float, float, float, float]:
    """Point estimate, SE and interval for ``s`` successes in ``t`` Bernoulli trials.

    The truncated-geometric likelihood has exactly this kernel (module docstring)."""
    if t <= 0:
        raise ValueError("no evaluated draft positions (every iteration drafted 0 tokens)")
    a = s / t
    se = float(np.sqrt(a * (1.0 - a) / t))
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    if interval == "wald":
        lo, hi = a - z * se, a + z * se
    elif interval == "wilson":
        denom = 1.0 + z * z / t
        centre = (a + z * z / (2 * t)) / denom
        half = z * np.sqrt(a * (1 - a) / t + z * z / (4 * t * t)) / denom
        lo, hi = centre - half, centre + half
    elif interval == "logit":
        if s == 0 or s == t:  # logit undefined at the boundary: fall back to the exact profile bound
            return _binomial_interval(s, t, level, "profile")
        eta = np.log(a / (1 - a))
        se_eta = 1.0 / np.sqrt(t * a * (1 - a))
        lo, hi = (1.0 / (1.0 + np.exp(-(eta + sgn * z * se_eta))) for sgn in (-1.0, 1.0))
    else:  # profile likelihood: 2 (l(a_hat) - l(a)) = chi2_1(level)
        crit = z * z / 2.0  # the chi-square(1) quantile at level is z**2
        f = t - s

        def ll(x):
            return (s * np.log(x) if s else 0.0) + (f * np.log1p(-x) if f else 0.0)

        lmax = ll(a) if 0.0 < a < 1.0 else 0.0
        tiny = 1e-15

        def excess(x: np.ndarray, _rows: np.ndarray) -> np.ndarray:
            return lmax - ll(x) - crit

        lo = 0.0 if s == 0 else float(find_root(excess, np.array([tiny]), np.array([a]), np.zeros(1, int))[0])
        hi = 1.0 if f == 0 else float(find_root(excess, np.array([a]), np.array([1.0 - tiny]), np.zeros(1, int))[0])
    return a, se, float(max(lo, 0.0)), float(min(hi, 1.0))


# --------------------------------------------------------------------------- estimators
def position_counts(accepted: ArrayLike, gamma: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Per-position trials and acceptances from per-iteration counts.

    Position ``i`` (1-based) of an iteration is *evaluated* if it was drafted (``i <= gamma``) and
    every earlier position was accepted (``k >= i - 1``); it is accepted if ``k >= i``. Returns
    ``(trials, accepted_at)`` of length ``max(gamma)``; ``accepted_at`` is what vLLM exports as
    ``spec_decode_num_accepted_tokens_per_pos`` (with ``position = i - 1``).
    """
    k, g = _accepted_and_gamma(accepted, gamma)
    gmax = int(g.max())
    pos = np.arange(1, gmax + 1)[:, None]
    trials = ((pos <= g[None, :]) & (k[None, :] >= pos - 1)).sum(axis=1)
    acc = (k[None, :] >= pos).sum(axis=1)
    return trials.astype(np.int64), acc.astype(np.int64)


def alpha_from_accepted(
    accepted: ArrayLike,
    gamma: ArrayLike,
    *,
    level: float = 0.95,
    interval: str = "profile",
) -> AlphaEstimate:
    """Maximum-likelihood alpha from per-iteration accepted counts (method notes, section 9).

    ``accepted[t]`` tokens of the ``gamma[t]`` drafted in iteration ``t`` were accepted (excluding
    the target's bonus/correction token); ``gamma`` may be a scalar. Truncated geometric law:
    ``alpha = S / (S + R)``, ``S = sum(k)``, ``R = #{k < gamma}``; SE from the observed Fisher
    information ``sqrt(alpha (1 - alpha) / (S + R))``. ``interval``: ``"profile"`` (likelihood
    ratio, default: exact at ``alpha = 1`` or ``0``), ``"wilson"`` (score), ``"logit"`` (Wald on the
    logit scale) or ``"wald"``. Iterations with ``gamma = 0`` carry no information and are skipped.

    Parameters
    ----------
    accepted : accepted draft tokens per iteration (integers, ``0 <= accepted <= gamma``).
    gamma : draft length per iteration (or one for all).
    level : confidence level of the interval, in (0, 1).
    interval : ``"profile"``, ``"wilson"``, ``"logit"`` or ``"wald"``.

    Returns
    -------
    AlphaEstimate
    """
    level = _check_level(level)
    interval = _check_interval(interval)
    k, g = _accepted_and_gamma(accepted, gamma)
    used = g > 0
    if not np.any(used):
        raise ValueError("gamma is 0 in every iteration: nothing was drafted")
    k, g = k[used], g[used]
    s = int(k.sum())
    r = int(np.count_nonzero(k < g))
    a, se, lo, hi = _binomial_interval(s, s + r, level, interval)
    return AlphaEstimate(
        a,
        se,
        lo,
        hi,
        n=int(k.size),
        method="mle_truncated_geometric",
        interval=interval,
        level=level,
        trials=s + r,
        accepted=s,
    )


def alpha_bootstrap(
    accepted: ArrayLike,
    gamma: ArrayLike,
    groups: ArrayLike,
    rng: np.random.Generator,
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    ci_method: str = "BCa",
) -> AlphaEstimate:
    """The MLE of :func:`alpha_from_accepted` with a cluster bootstrap over prompts.

    ``groups[t]`` names the prompt of iteration ``t``; whole prompts are resampled with replacement
    (``scipy.stats.bootstrap`` on the paired per-prompt sums ``S_j``, ``R_j``, statistic
    ``sum S / (sum S + sum R)``), so dependence between the iterations of one prompt (the paper's
    "stochasticity in evaluation") is carried into the interval. ``ci_method``: ``"BCa"``,
    ``"percentile"`` or ``"basic"``; when every prompt has the same rate (e.g. alpha = 1) the
    bootstrap distribution is degenerate and the interval collapses to the point.

    Parameters
    ----------
    accepted, gamma : as in :func:`alpha_from_accepted`.
    groups : the prompt (cluster) of each iteration.
    rng : the generator of the resamples.
    level : confidence level, in (0, 1).
    n_resamples : bootstrap resamples (>= 100).
    ci_method : ``"BCa"``, ``"percentile"`` or ``"basic"``.

    Returns
    -------
    AlphaEstimate
        The MLE with the bootstrap's standard error and interval.
    """
    level = _check_level(level)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    k, g = _accepted_and_gamma(accepted, gamma)
    grp = np.asarray(groups)
    if grp.shape != k.shape:
        raise ValueError(f"groups must have one entry per iteration ({k.size}), got shape {grp.shape}")
    used = g > 0
    k, g, grp = k[used], g[used], grp[used]
    if k.size == 0:
        raise ValueError("gamma is 0 in every iteration: nothing was drafted")
    labels, inv = np.unique(grp, return_inverse=True)
    s_j = np.bincount(inv, weights=k, minlength=labels.size)
    r_j = np.bincount(inv, weights=(k < g).astype(float), minlength=labels.size)
    s, r = s_j.sum(), r_j.sum()
    a = float(s / (s + r))
    if labels.size < 2:
        raise ValueError(f"groups must contain at least 2 prompts for a cluster bootstrap, got {labels.size}")

    def statistic(sv, rv, axis=-1):
        ss, rr = np.sum(sv, axis=axis), np.sum(rv, axis=axis)
        return ss / (ss + rr)

    rate_j = s_j / np.maximum(s_j + r_j, 1e-300)
    if np.allclose(rate_j, rate_j[0]):
        lo = hi = a
        se = 0.0
    else:
        from scipy import stats  # the bootstrap's intervals: the analysis extra

        res = stats.bootstrap(
            (s_j, r_j),
            statistic,
            paired=True,
            vectorized=True,
            n_resamples=int(n_resamples),
            confidence_level=level,
            method=ci_method,
            rng=rng,
        )
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        se = float(res.standard_error)
        if not (np.isfinite(lo) and np.isfinite(hi)):  # BCa can fail on near-degenerate data
            q = np.quantile(res.bootstrap_distribution, [(1 - level) / 2, (1 + level) / 2])
            lo, hi = float(q[0]), float(q[1])
    return AlphaEstimate(
        a,
        se,
        max(lo, 0.0),
        min(hi, 1.0),
        n=int(k.size),
        method="mle_cluster_bootstrap",
        interval=f"bootstrap_{ci_method}",
        level=level,
        trials=int(s + r),
        accepted=int(s),
        extra={"n_prompts": int(labels.size), "n_resamples": int(n_resamples)},
    )


def _check_position_counts(accepted_per_pos: ArrayLike, num_drafts: int) -> tuple[np.ndarray, int]:
    a = _as_counts(accepted_per_pos, "accepted_per_pos")
    drafts = _as_counts(num_drafts, "num_drafts")
    if drafts.size != 1:
        raise ValueError(f"num_drafts must be a single count, got {num_drafts!r}")
    d = int(drafts[0])
    if d == 0:
        raise ValueError("num_drafts must be > 0, got 0")
    if a[0] > d:
        raise ValueError(
            f"accepted_per_pos[0] must be <= num_drafts, got {a[0]} > {d} "
            "(a position cannot accept more tokens than there were drafts)"
        )
    inc = np.flatnonzero(np.diff(a) > 0)
    if inc.size:
        i = int(inc[0]) + 1
        raise ValueError(
            f"accepted_per_pos must be non-increasing (a token at position i is only accepted if "
            f"position i-1 was), got accepted_per_pos[{i}]={a[i]} > accepted_per_pos[{i - 1}]={a[i - 1]}"
        )
    return a, d


def alpha_from_position_counts(
    accepted_per_pos: ArrayLike,
    num_drafts: int,
    *,
    level: float = 0.95,
    interval: str = "profile",
) -> AlphaEstimate:
    """MLE of alpha from per-position acceptance counters (method notes, section 9).

    ``accepted_per_pos[i]`` is the number of drafts whose token at 0-based position ``i`` was
    accepted (vLLM's ``spec_decode_num_accepted_tokens_per_pos`` with ``position = i``), of
    ``num_drafts`` drafts of ``gamma = len(accepted_per_pos)`` tokens each. Position ``i`` was
    evaluated ``accepted_per_pos[i - 1]`` times (``num_drafts`` for ``i = 0``), so the counters are a
    chain of binomials with the same kernel as :func:`alpha_from_accepted`, and the estimate equals
    it exactly: ``alpha = sum(a) / (num_drafts + sum(a[:-1]))``.

    Parameters
    ----------
    accepted_per_pos : accepted drafts at each 0-based position (non-increasing integers).
    num_drafts : drafts of ``len(accepted_per_pos)`` tokens each.
    level : confidence level, in (0, 1).
    interval : as in :func:`alpha_from_accepted`.

    Returns
    -------
    AlphaEstimate
    """
    level = _check_level(level)
    interval = _check_interval(interval)
    a, d = _check_position_counts(accepted_per_pos, num_drafts)
    s = int(a.sum())
    t = int(d + a[:-1].sum())
    est, se, lo, hi = _binomial_interval(s, t, level, interval)
    return AlphaEstimate(
        est,
        se,
        lo,
        hi,
        n=d,
        method="mle_position_counts",
        interval=interval,
        level=level,
        trials=t,
        accepted=s,
        extra={"gamma": int(a.size)},
    )


def constant_alpha_test(
    accepted: ArrayLike | None = None,
    gamma: ArrayLike | None = None,
    *,
    accepted_per_pos: ArrayLike | None = None,
    num_drafts: int | None = None,
) -> ConstantAlphaTest:
    """Chi-square goodness-of-fit of the constant-alpha model (method notes, section 9).

    Under the model, the conditional acceptance rate at every draft position is the same alpha.
    The counts form a 2 x gamma table (accepted / rejected at each evaluated position); Pearson's
    chi-square test of homogeneity (``scipy.stats.chi2_contingency``, ``gamma - 1`` degrees of
    freedom) tests equal rates. Give either per-iteration ``accepted`` and ``gamma`` or vLLM-style
    ``accepted_per_pos`` and ``num_drafts``. Positions never evaluated are dropped; with no
    rejection (or no acceptance) at all the table has a zero row and the test is trivially passed
    (statistic 0, p-value 1).

    Parameters
    ----------
    accepted, gamma : per-iteration counts, as in :func:`alpha_from_accepted`; or
    accepted_per_pos, num_drafts : per-position counters, as in :func:`alpha_from_position_counts`.

    Returns
    -------
    ConstantAlphaTest
        The statistic, degrees of freedom, p-value and per-position rates.
    """
    if accepted is not None:
        if accepted_per_pos is not None:
            raise ValueError("give either accepted (with gamma) or accepted_per_pos (with num_drafts), not both")
        if gamma is None:
            raise ValueError("gamma is required with accepted")
        trials, acc = position_counts(accepted, gamma)
    elif accepted_per_pos is not None:
        if num_drafts is None:
            raise ValueError("num_drafts is required with accepted_per_pos")
        a, d = _check_position_counts(accepted_per_pos, num_drafts)
        trials = np.concatenate([[d], a[:-1]]).astype(np.int64)
        acc = a
    else:
        raise ValueError("accepted (with gamma) or accepted_per_pos (with num_drafts) is required")
    keep = trials > 0
    trials, acc = trials[keep], acc[keep]
    rej = trials - acc
    total = trials.sum()
    alpha = float(acc.sum() / total)
    rates = tuple(float(x) for x in acc / trials)
    dof = int(trials.size - 1)
    if dof == 0 or acc.sum() == 0 or rej.sum() == 0:
        stat, p = 0.0, 1.0
    else:
        try:
            from scipy import stats
        except ImportError:  # the base install: the statistic (Pearson's, as below), no p-value
            table = np.vstack([acc, rej]).astype(float)
            expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
            stat, p = float(((table - expected) ** 2 / expected).sum()), None
        else:
            res = stats.chi2_contingency(np.vstack([acc, rej]), correction=False)
            stat, p, dof = float(res.statistic), float(res.pvalue), int(res.dof)
    return ConstantAlphaTest(alpha, stat, dof, p, rates, tuple(int(x) for x in trials), tuple(int(x) for x in acc))


# --- Alpha when the number of evaluated draft positions is known only within bounds (method notes,


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


# --- Alpha from mean accepted lengths (method notes, section 9): inverting


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
    se_m, d = np.broadcast_arrays(np.asarray(se_m, dtype=float), np.asarray(_d_expected_tokens(a, g), dtype=float))
    exact = se_m == 0
    if np.all(exact) or np.any(exact & (d != 0)):
        # alpha at 0 or 1 under the model (no sampling variance), or a mean length known without
        # variance that moves with alpha: it pins alpha
        se = 0.0
    else:
        with np.errstate(over="ignore"):  # a standard error near 0 is information near infinity: se 0
            info = float(np.sum((d[~exact] / se_m[~exact]) ** 2))
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

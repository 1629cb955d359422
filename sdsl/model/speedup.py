"""Wall-clock speedup of speculative decoding: Leviathan et al. 2023, Theorem 3.8, and its break-even.

With acceptance rate ``alpha``, draft length ``gamma`` and the *cost coefficient* ``c`` (the time of
one draft step over the time of one target step), the expected improvement in wall time over plain
decoding is (Leviathan, Kalman and Matias 2023, "Fast Inference from Transformers via Speculative
Decoding", ICML, Theorem 3.8)

    S(alpha, gamma, c) = (1 - alpha**(gamma+1)) / ((1 - alpha) (gamma c + 1)).

Theorem 3.8 charges the target's verification of ``gamma + 1`` tokens the time of one target step.
A measured verification that costs more is written here as a *verification cost*
``v(gamma) = t_verify(gamma + 1) / t_target(1)``, affine ``v = 1 + k gamma`` (one measured
``t_verify`` fixes the slope ``k``, :func:`cost_from_latencies`) or any array (the roofline of
:mod:`sdsl.model.hardware`); then ``S = E(alpha, gamma) / (gamma c + v(gamma))``.

With an affine ``v`` the speedup is the paper's Eq. 9 in disguise: ``E / (gamma (c + k) + 1)`` is
``T * 2M`` with ``N / M = c + k``, so the best draft length is the closed form of
:func:`sdsl.model.throughput.optimal_gamma` at ``N / M = c + k``; and Corollary 3.9 gives the break-even:
speculation beats plain decoding for some ``gamma >= 1`` exactly when ``alpha > c + k``
(:func:`break_even_alpha`).

The "speedup" of the paper's tokens-per-FLOP model, ``T(N*) * 2M``, is Theorem 3.8 with
``c = N / M``: a wall-clock speedup only where time is proportional to parameters read, i.e. in
the batch-1 memory-bound limit (:mod:`sdsl.model.hardware`). The command line calls it the
"tokens per FLOP ratio".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sdsl.model.throughput import expected_tokens, optimal_gamma
from sdsl.validation import TINY, as_float_array, as_in_range, as_open_unit

if TYPE_CHECKING:  # numpy.typing costs import time; the annotations are strings
    from numpy.typing import ArrayLike

__all__ = [
    "DEFAULT_GAMMA_MAX",
    "expected_speedup",
    "cost_from_latencies",
    "best_gamma",
    "best_integer_gamma",
    "break_even_alpha",
    "SpeedupReport",
    "speedup_report",
]

#: Largest draft length searched (the largest ``sdsl speedup --gamma`` takes; engines draft far
#: fewer tokens): where the best draft length lies beyond it -- or there is none, drafting being
#: free -- the best integer is this one, and the report says so (:attr:`SpeedupReport.note`).
DEFAULT_GAMMA_MAX = 1024


def _positive_scalar(value: float, name: str, allow_zero: bool = False) -> float:
    x = float(as_float_array(value, name))
    if x < 0 or (x == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    if 0 < x < TINY:  # 1/x overflows: the closed forms divide by it
        raise ValueError(
            f"{name} must be {'0 or ' if allow_zero else ''}a number >= {TINY:.3g} (the smallest normal float), got "
            f"{value!r}, a subnormal one"
        )
    return x


def expected_speedup(alpha: ArrayLike, gamma: ArrayLike, c: ArrayLike, verify_cost: ArrayLike = 1.0) -> np.ndarray:
    """Expected wall-clock speedup over plain decoding (Leviathan et al. 2023, Theorem 3.8).

    Parameters
    ----------
    alpha : array_like
        Acceptance rate, in [0, 1].
    gamma : array_like
        Draft length (tokens drafted per iteration), >= 0; real values give the continuous relaxation.
    c : array_like
        Cost coefficient: time of one draft step over the time of one target step, >= 0.
    verify_cost : array_like
        Time of the target's verification of ``gamma + 1`` tokens over one target step, >= 1 (1 in
        Theorem 3.8).

    Returns
    -------
    numpy.ndarray
        ``S = E(alpha, gamma) / (gamma c + verify_cost)`` with
        ``E = (1 - alpha**(gamma+1)) / (1 - alpha)`` (Leviathan et al., Eq. 1).
    """
    c = as_in_range(c, "c (cost coefficient, draft step over target step)", 0.0, np.inf)
    v = as_in_range(verify_cost, "verify_cost (verification over one target step)", 1.0, np.inf)
    g = as_in_range(gamma, "gamma (draft length)", 0.0, np.inf)
    # gamma c beyond the largest float is infinite time per iteration: the speedup's limit, 0
    with np.errstate(over="ignore"):
        return expected_tokens(alpha, g) / (g * c + v)


def cost_from_latencies(
    t_draft: float, t_target: float, t_verify: float | None = None, verify_tokens: int | None = None
) -> tuple[float, float]:
    """Cost coefficient ``c`` and verification slope ``k`` from measured step latencies.

    Parameters
    ----------
    t_draft : float
        Seconds of one draft forward pass producing one token (> 0).
    t_target : float
        Seconds of one target forward pass producing one token (> 0), plain decoding.
    t_verify : float, optional
        Seconds of one target forward pass over ``verify_tokens`` tokens (a verification), >= t_target.
    verify_tokens : int, optional
        Tokens in that pass, ``gamma + 1`` >= 2; required with ``t_verify``.

    Returns
    -------
    c : float
        ``t_draft / t_target`` (Theorem 3.8's cost coefficient).
    k : float
        Slope of the affine verification cost ``v(gamma) = 1 + k gamma``:
        ``(t_verify / t_target - 1) / (verify_tokens - 1)``; 0 without ``t_verify`` (Theorem 3.8).
    """
    td = _positive_scalar(t_draft, "t_draft (seconds per draft step)")
    tt = _positive_scalar(t_target, "t_target (seconds per target step)")
    if not math.isfinite(td / tt):
        raise ValueError(
            f"t_draft / t_target = {td:g} s / {tt:g} s is beyond the largest float: the draft step would "
            "cost infinitely many target steps; check the two latencies"
        )
    if td / tt < TINY:
        raise ValueError(
            f"t_draft / t_target = {td:g} s / {tt:g} s is below {TINY:.3g}, the smallest normal float (it "
            "underflows): a draft step that costs nothing of a target step; check the two latencies"
        )
    if t_verify is None:
        if verify_tokens is not None:
            raise ValueError("verify_tokens is given without t_verify (seconds of that verification pass)")
        return td / tt, 0.0
    tv = _positive_scalar(t_verify, "t_verify (seconds per verification pass)")
    if verify_tokens is None:
        raise ValueError("t_verify needs verify_tokens: the tokens of that pass (gamma + 1, an integer >= 2)")
    k = float(verify_tokens)
    if not k.is_integer() or k < 2:
        raise ValueError(f"verify_tokens must be an integer >= 2 (gamma + 1 tokens verified), got {verify_tokens!r}")
    if tv < tt:
        raise ValueError(
            f"t_verify = {tv:g} s is below t_target = {tt:g} s: a pass over {int(k)} tokens cannot be "
            f"faster than over one; check the measurements"
        )
    return td / tt, (tv / tt - 1.0) / (k - 1.0)


def best_gamma(
    alpha: float, c: float, verify_slope: float = 0.0, gamma_max: int = DEFAULT_GAMMA_MAX
) -> tuple[float, int]:
    """Continuous and integer draft lengths maximising Theorem 3.8 with ``v = 1 + k gamma``.

    Parameters
    ----------
    alpha : float
        Acceptance rate, in (0, 1).
    c : float
        Cost coefficient (draft step over target step), >= 0.
    verify_slope : float
        ``k`` of the affine verification cost, >= 0.
    gamma_max : int
        The largest integer draft length searched.

    Returns
    -------
    gamma_continuous : float
        The maximiser over real ``gamma >= 0``: :func:`sdsl.model.throughput.optimal_gamma` with
        ``N / M = c + k`` (the same closed form, Lambert W's lower branch); ``inf`` when
        ``c + k = 0`` (drafting is free: the speedup grows with ``gamma`` without a maximum), 0
        when ``c + k >= 1``.
    gamma_integer : int
        The best integer up to ``gamma_max`` (floor or ceiling of the continuous one; ``S`` is
        unimodal in ``gamma``, so ``gamma_max`` itself when the continuous one lies beyond it).
    """
    a = float(as_open_unit(alpha, "alpha (acceptance rate)"))
    ce = _positive_scalar(c, "c (cost coefficient)", allow_zero=True) + _positive_scalar(
        verify_slope, "verify_slope (k of v = 1 + k gamma)", allow_zero=True
    )
    gm = int(gamma_max)
    if ce == 0:
        return math.inf, gm
    if ce >= 1:
        return 0.0, 0
    g = float(optimal_gamma(a, ce, 1.0))
    if g >= gm:
        return g, gm
    gi = int(optimal_gamma(a, ce, 1.0, integer=True))
    return g, min(gi, gm)


def best_integer_gamma(alpha: float, iteration_cost: ArrayLike) -> tuple[int, float]:
    """The integer draft length with the largest speedup for any cost of an iteration.

    Parameters
    ----------
    alpha : float
        Acceptance rate, in [0, 1].
    iteration_cost : array_like
        ``iteration_cost[g]``: time of one iteration with draft length ``g = 0, 1, ...`` over the
        time of one plain decoding step (``iteration_cost[0] = 1`` for plain decoding).

    Returns
    -------
    gamma : int
        ``argmax_g E(alpha, g) / iteration_cost[g]`` (the smallest on ties).
    speedup : float
        The speedup there.
    """
    cost = as_float_array(iteration_cost, "iteration_cost")
    if cost.ndim != 1 or cost.size < 1 or np.any(cost <= 0):
        raise ValueError("iteration_cost must be a non-empty 1-d array of positive times, one per gamma = 0, 1, ...")
    s = expected_tokens(alpha, np.arange(cost.size, dtype=float)) / cost
    g = int(np.argmax(s))
    return g, float(s[g])


def break_even_alpha(
    c: float, verify_cost: ArrayLike | None = None, verify_slope: float = 0.0, gamma_max: int = DEFAULT_GAMMA_MAX
) -> float:
    """The acceptance rate below which no draft length ``1 <= gamma <= gamma_max`` beats plain decoding.

    Parameters
    ----------
    c : float
        Cost coefficient (draft step over target step), >= 0.
    verify_cost : array_like, optional
        ``verify_cost[g - 1]`` = ``v(g)`` for ``g = 1 .. len``, each >= 1; overrides ``verify_slope``.
    verify_slope : float
        ``k`` of ``v = 1 + k gamma`` when ``verify_cost`` is not given.
    gamma_max : int
        Largest draft length considered with ``verify_slope``.

    Returns
    -------
    float
        ``min over gamma`` of the root in ``alpha`` of ``E(alpha, gamma) = gamma c + v(gamma)``
        (``E`` grows from 1 to ``gamma + 1`` with ``alpha``); with an affine ``v`` it is ``c + k``,
        reached at ``gamma = 1`` (Leviathan et al., Corollary 3.9). 1.0 when no draft length can
        pay (``gamma c + v(gamma) >= gamma + 1`` for every ``gamma``).
    """
    c = _positive_scalar(c, "c (cost coefficient)", allow_zero=True)
    if verify_cost is None:
        k = _positive_scalar(verify_slope, "verify_slope (k of v = 1 + k gamma)", allow_zero=True)
        gm = int(gamma_max)
        if gm < 1:
            raise ValueError(f"gamma_max must be an integer >= 1, got {gamma_max!r}")
        v = 1.0 + k * np.arange(1, gm + 1, dtype=float)
    else:
        v = as_in_range(verify_cost, "verify_cost (v(gamma) for gamma = 1, 2, ...)", 1.0, np.inf).ravel()
        if v.size < 1:
            raise ValueError("verify_cost must hold v(gamma) for gamma = 1, 2, ... (at least one value)")
    if c >= 1.0:  # v >= 1, so g c + v >= g + 1 for every g: no draft length pays (and g c may overflow)
        return 1.0
    g = np.arange(1, v.size + 1, dtype=float)
    need = g * c + v  # E must exceed this; E < g + 1 for alpha < 1
    ok = need < g + 1
    if not np.any(ok):
        return 1.0
    g, need = g[ok], need[ok]
    lo, hi = np.zeros_like(g), np.ones_like(g)
    for _ in range(60):  # bisection on the increasing function E(alpha, g) - need
        mid = 0.5 * (lo + hi)
        above = expected_tokens(mid, g) >= need
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    return float(np.min(hi))


@dataclass(frozen=True)
class SpeedupReport:
    """What ``sdsl speedup`` prints: Theorem 3.8 for one ``(alpha, c, k)``."""

    alpha: float
    c: float
    verify_slope: float
    gamma: int | None
    speedup: float | None
    """Expected speedup at the given ``gamma`` (None when no gamma was given)."""
    gamma_continuous: float
    gamma_integer: int
    speedup_at_best: float
    break_even_alpha: float
    gamma_max: int = DEFAULT_GAMMA_MAX
    """The largest draft length searched."""
    note: str | None = None
    """Said when the best draft length lies beyond ``gamma_max`` or there is none (``c + k = 0``):
    ``gamma_integer`` is then ``gamma_max``, the end of the search, not an optimum."""

    @property
    def gamma_capped(self) -> bool:
        """Whether ``gamma_integer`` is the end of the search rather than the optimum."""
        return self.note is not None

    def as_dict(self) -> dict[str, float | int | str | bool | None]:
        out: dict[str, float | int | str | bool | None] = dict(self.__dict__)
        out["gamma_capped"] = self.gamma_capped
        if math.isinf(self.gamma_continuous):
            out["gamma_continuous"] = None  # JSON has no infinity
        return out


def speedup_report(
    alpha: float, c: float, gamma: int | None = None, verify_slope: float = 0.0, gamma_max: int = DEFAULT_GAMMA_MAX
) -> SpeedupReport:
    """Theorem 3.8 for one acceptance rate and cost: the speedup at ``gamma`` (if given), the best
    draft lengths (the integer one up to ``gamma_max``, with a note when the search ends there), the
    speedup there and the break-even acceptance rate.

    Parameters
    ----------
    alpha : float
        Acceptance rate, in (0, 1).
    c : float
        Cost coefficient, >= 0.
    gamma : int, optional
        A draft length to evaluate (integer >= 0).
    verify_slope : float
        ``k`` of the affine verification cost ``v = 1 + k gamma``.
    gamma_max : int
        The largest integer draft length searched (default :data:`DEFAULT_GAMMA_MAX`).

    Returns
    -------
    SpeedupReport
    """
    a = float(as_open_unit(alpha, "alpha (acceptance rate)"))
    gc, gi = best_gamma(a, c, verify_slope, gamma_max)
    note = None
    if math.isinf(gc):
        note = (
            f"c + k = 0, drafting is free: the speedup grows with gamma without a maximum, towards 1/(1 - alpha) = "
            f"{1 / (1 - a):.4g}x; gamma {gi} is the largest draft length searched, not an optimum"
        )
    elif gc > gamma_max:
        note = (
            f"the best draft length, {gc:.4g}, lies beyond the largest searched, {gamma_max} (engines draft far fewer "
            f"tokens): gamma {gi} is the best up to there, not the optimum"
        )
    s_at = None
    if gamma is not None:
        gf = float(gamma)
        if not math.isfinite(gf) or not gf.is_integer() or gf < 0:
            raise ValueError(f"gamma must be an integer >= 0 (tokens drafted per iteration), got {gamma!r}")
        gamma = int(gf)
        s_at = float(expected_speedup(a, gamma, c, 1.0 + verify_slope * gamma))
    s_best = float(expected_speedup(a, gi, c, 1.0 + verify_slope * gi))
    return SpeedupReport(
        alpha=a,
        c=float(c),
        verify_slope=float(verify_slope),
        gamma=gamma,
        speedup=s_at,
        gamma_continuous=gc,
        gamma_integer=gi,
        speedup_at_best=s_best,
        break_even_alpha=break_even_alpha(c, verify_slope=verify_slope),
        gamma_max=int(gamma_max),
        note=note,
    )

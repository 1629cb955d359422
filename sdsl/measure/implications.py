"""What one measured alpha implies through the plan, for ``sdsl alpha``
(:mod:`sdsl.measure.report`).

With the target and the draft behind the measurement (``--preset`` or ``--target-params``, and
``--draft-params``), the plan's cost model (the paper's Eq. 9, ``C = 2 N gamma + 2 M``) turns the
measured alpha into:

* the throughput-optimal integer draft length ``gamma*`` (:func:`sdsl.model.throughput.optimal_gamma`,
  ``integer=True``), at alpha and at the ends of its interval;
* the speedup over plain decoding in tokens per FLOP, ``T x 2M`` (:func:`sdsl.model.throughput.tokens_per_flop`),
  at the engine's ``k`` and at ``gamma*``;
* with the draft family's tokens ``D`` and the target's ``D'`` (a preset gives both): ``N*``, the
  throughput-optimal draft size, from the paper's acceptance plane (Eq. 5, Table 3's ``A`` and
  ``B``) with its intercept ``C`` recalibrated so that the plane passes through the measured alpha
  at the measured draft (:func:`sdsl.model.optimum.optimal_draft_size`, integer ``gamma``), and its range
  over the interval of alpha.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["PlanContext", "Implication", "resolve_context", "implications"]


@dataclass(frozen=True)
class PlanContext:
    """Target and draft behind a measurement (None: not given)."""

    target_name: str | None = None
    target_params: float | None = None
    target_tokens: float | None = None
    draft_params: float | None = None
    draft_tokens: float | None = None

    @property
    def active(self) -> bool:
        return self.target_params is not None and self.draft_params is not None


@dataclass(frozen=True)
class Implication:
    """What one measured alpha implies through the plan (module docstring)."""

    alpha: float
    alpha_range: tuple[float, float]
    gamma_star: int
    gamma_star_range: tuple[int, int]
    speedup_star: float
    gamma_engine: int | None = None
    speedup_engine: float | None = None
    n_star: float | None = None
    n_star_range: tuple[float, float] | None = None
    gamma_at_n_star: float | None = None
    speedup_at_n_star: float | None = None
    plane_intercept: float | None = None
    note: str = ""


def resolve_context(
    preset: Any = None,
    target_params: Any = None,
    target_tokens: Any = None,
    draft_params: Any = None,
    draft_tokens: Any = None,
) -> PlanContext:
    """Validate the plan options (:func:`sdsl.plan.resolve_target` and friends); a target needs the
    draft's size and the other way round."""
    from sdsl import plan as P
    from sdsl.validation import TARGET_PARAMS, shown

    any_target = preset is not None or target_params is not None
    if not any_target and draft_params is None:
        if target_tokens is not None or draft_tokens is not None:
            raise ValueError(
                f"{shown('target_tokens')} / {shown('draft_tokens')} need the target ({shown('preset')} or "
                f"{shown('target_params')}) and {shown('draft_params')}"
            )
        return PlanContext()
    if not any_target:
        raise ValueError(
            f"{shown('draft_params')} needs the target: {shown('preset')} NAME or {shown('target_params')} M"
        )
    if draft_params is None:
        raise ValueError(f"the plan needs the size of the measured draft: {shown('draft_params')} N (parameters)")
    if preset is None and target_tokens is None:
        if draft_tokens is not None:
            raise ValueError(
                f"{shown('draft_tokens')} is used only with the target's tokens: give "
                f"{shown('target_tokens')} too (or {shown('preset')})"
            )
        t_params = P.positive_number(target_params, "target_params", "parameters M of the target", TARGET_PARAMS)
        name, t_tokens, d_default = f"M = {t_params:.4g}", None, None
    else:
        t = P.resolve_target(preset, target_params, target_tokens)
        name, t_params, t_tokens, d_default = t.name, t.params, t.tokens, t.draft_tokens
    from sdsl.validation import MODEL_PARAMS, TOKENS

    n = P.positive_number(draft_params, "draft_params", "parameters N of the measured draft", MODEL_PARAMS)
    if n >= t_params:
        raise ValueError(
            f"{shown('draft_params')} must be below the target size M = {t_params:.4g}, got {draft_params!r}"
        )
    d = (
        P.positive_number(draft_tokens, "draft_tokens", "pre-training tokens D of the draft family", TOKENS)
        if draft_tokens is not None
        else d_default
    )
    return PlanContext(name, t_params, t_tokens, n, d)


def _n_star(
    alpha: float, n: float, m: float, d: float, d_target: float
) -> tuple[float, float, float, float, tuple[float, float]]:
    """N* of the plane through (N, D, alpha) with the paper's A, B for a draft of ``n`` parameters
    and ``d`` tokens and a target of ``m`` parameters and ``d_target`` tokens: (N*, gamma, speedup,
    C, range).

    The search range is the plan's default ``(1e7, M/2)`` narrowed to the sizes where the
    recalibrated plane stays inside (0, 1) (alpha is monotone in N)."""
    import numpy as np

    from sdsl.model.laws import (
        BESIROGLU_2024,
        PAPER_EQ5,
        AcceptanceCoefficients,
        acceptance_rate,
        perplexity,
    )
    from sdsl.model.optimum import optimal_draft_size
    from sdsl.plan import DEFAULT_N_LOW

    x = float(perplexity(n, d, BESIROGLU_2024))
    y = float(perplexity(m, d_target, BESIROGLU_2024))
    c = alpha - PAPER_EQ5.A * x - PAPER_EQ5.B * y
    coef = AcceptanceCoefficients(A=PAPER_EQ5.A, B=PAPER_EQ5.B, C=c, source="recalibrated to the measurement")
    lo, hi = min(DEFAULT_N_LOW, m / 4), m / 2
    grid = np.exp(np.linspace(np.log(lo), np.log(hi), 400))
    a = acceptance_rate(perplexity(grid, d, BESIROGLU_2024), y, coef)
    ok = (a > 1e-3) & (a < 1 - 1e-3)
    if not ok.any():
        raise ValueError("the recalibrated plane leaves (0, 1) for every draft size in the range")
    idx = np.flatnonzero(ok)
    rng = (float(grid[idx[0]]), float(grid[idx[-1]]))
    opt = optimal_draft_size(m, d, d_target, BESIROGLU_2024, coef, True, rng)
    return opt.n_star, opt.gamma_star, opt.speedup, c, rng


def implications(alpha: float, ci: tuple[float, float], k: int | None, ctx: PlanContext) -> Implication | None:
    """Integer ``gamma*``, the speedups and (with ``D`` and ``D'``) ``N*`` implied by ``alpha``."""
    n, m = ctx.draft_params, ctx.target_params
    if n is None or m is None or not 0.0 < alpha < 1.0:  # not ctx.active, or no rate to plan with
        return None
    import numpy as np

    from sdsl.model.throughput import optimal_gamma, tokens_per_flop

    has_ci = all(math.isfinite(v) for v in ci)
    lo, hi = ci if has_ci else (alpha, alpha)
    lo, hi = min(max(lo, 1e-9), 1 - 1e-9), min(max(hi, 1e-9), 1 - 1e-9)
    g = int(optimal_gamma(alpha, n, m, integer=True))
    g_lo, g_hi = int(optimal_gamma(lo, n, m, integer=True)), int(optimal_gamma(hi, n, m, integer=True))
    s_star = float(tokens_per_flop(alpha, n, m, g)) * 2 * m
    s_eng = float(tokens_per_flop(alpha, n, m, k)) * 2 * m if k else None
    imp: dict[str, Any] = dict(
        alpha=alpha,
        alpha_range=(lo, hi),
        gamma_star=g,
        gamma_star_range=(min(g_lo, g_hi), max(g_lo, g_hi)),
        speedup_star=s_star,
        gamma_engine=k,
        speedup_engine=s_eng,
    )
    d, d_target = ctx.draft_tokens, ctx.target_tokens
    if d is None or d_target is None:
        return Implication(**imp, note="N* needs the draft family's tokens D and the target's D' (--preset gives both)")
    try:
        ns, gs, ss, c, n_rng = _n_star(alpha, n, m, d, d_target)
    except ValueError as exc:
        return Implication(**imp, note=f"N* not available: {exc}")
    # N* over the interval of alpha (not monotone with an integer gamma: a grid, not the two ends)
    ends = [ns]
    for a in np.linspace(lo, hi, 9) if has_ci else ():
        try:
            ends.append(_n_star(float(a), n, m, d, d_target)[0])
        except ValueError:
            continue
    note = (
        ""
        if n_rng[0] <= min(1e7, m / 4) * 1.0001
        else (
            f"N* searched over {n_rng[0]:.3g} to {n_rng[1]:.3g} parameters, where the recalibrated plane is in (0, 1)"
        )
    )
    return Implication(
        **imp,
        n_star=ns,
        n_star_range=(min(ends), max(ends)),
        gamma_at_n_star=gs,
        speedup_at_n_star=ss,
        plane_intercept=c,
        note=note,
    )

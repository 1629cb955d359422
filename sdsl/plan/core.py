"""The plan of one target: its inputs checked at once (:func:`check_inputs`), ``N*`` and the gain
(:func:`plan`, the one kernel :func:`sdsl.model.optimum.optimal_draft_size`), candidate drafts as
shares of the optimum, and the seeded parametric bootstrap of ``N*`` with its interval."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made: `sdsl plan` runs without it
    import pandas as pd

from sdsl import validation as V
from sdsl.model.laws import LossConstants, resolve_constants
from sdsl.model.optimum import DraftOptimum, log_grid, optimal_draft_size, plane_alpha, solve, throughput_curve
from sdsl.plan.alpha_source import AlphaModel, resolve_alpha_source
from sdsl.plan.targets import (
    Target,
    resolve_candidates,
    resolve_draft_tokens,
    resolve_n_range,
    resolve_target,
)
from sdsl.validation import shown

__all__ = [
    "PlanInputs",
    "check_inputs",
    "plan",
    "candidate_shares",
    "bootstrap_n_star",
    "n_star_interval",
    "plan_table",
    "covariance_sensitivity",
]


@dataclass(frozen=True)
class PlanInputs:
    """Every input of a plan, validated."""

    target: Target
    draft_tokens: tuple[float, ...]
    constants: LossConstants
    alpha: AlphaModel
    integer: bool
    n_range: tuple[float, float]
    candidates: dict[str, float] = field(default_factory=dict)
    n_boot: int = 0
    seed: int | None = None


def _check_int(value: Any, name: str, low: int) -> int:
    return V.integer(value, name, low=low)


def _resolve_constants(constants: Any) -> LossConstants:
    if isinstance(constants, str) and "," in constants:
        constants = [v.strip() for v in constants.split(",")]
    try:
        return resolve_constants(constants)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{shown('constants')}: {V.one_line(exc)}") from None


def _check_range(
    m: float,
    d: float,
    d_target: float,
    c: LossConstants,
    alpha: AlphaModel,
    integer: bool,
    lo: float,
    hi: float,
    cands: dict[str, float],
) -> DraftOptimum:
    """The plan's numbers checked where they are used, with the user's names: the loss law finite
    (no overflow of exp(L)), the plane inside (0, 1) at both ends of the range (alpha is monotone in
    N) and at every candidate, and an optimum strictly inside the range."""
    where = f"{shown('n_range')} [{lo:.4g}, {hi:.4g}]"
    for n, dd, what in (
        (lo, d, "the draft at the low end of"),
        (hi, d, "the draft at the high end of"),
        (m, d_target, "the target, for"),
    ):
        loss = c.E + c.A * n**-c.a + c.B * dd**-c.b
        if not loss < 700:
            raise ValueError(
                f"the loss-law constants ({shown('constants')}: E={c.E:g}, A={c.A:g}, B={c.B:g}, a={c.a:g}, "
                f"b={c.b:g}) give a loss of {loss:.4g} nats for {what} {where}: its perplexity "
                f"exp(L) overflows; E is in nats (1.8172 in besiroglu2024)"
            )
    sizes = [(f"draft size n = {n:.6g} inside {where}", n) for n in (lo, hi)]
    sizes += [(f"{shown('candidates')} {k!r} = {v:.6g}", v) for k, v in cands.items()]
    y = math.exp(c.E + c.A * m**-c.a + c.B * d_target**-c.b)
    cf = alpha.coefficients
    for label, n in sizes:
        a = cf.A * math.exp(c.E + c.A * n**-c.a + c.B * d**-c.b) + cf.B * y + cf.C
        if not 0 < a < 1:
            fix = f"narrow {shown('n_range')}" if label.startswith("draft size") else "drop it"
            raise ValueError(
                f"the acceptance rate leaves (0, 1) at {label}: alpha = {a:.6g} (Eq. 5 with A={cf.A}, "
                f"B={cf.B}, C={cf.C}, {alpha.label}); {fix}"
            )
    o = _optimum(m, d, d_target, c, cf, integer, (lo, hi))
    if not o.interior:
        raise ValueError(
            f"{o.status}: N* lies outside the searched draft sizes {where}; widen {shown('n_range')} "
            f"(within [{V.MODEL_PARAMS[0]:g}, M = {m:.4g}])"
        )
    return o


def check_inputs(
    preset: str | None = None,
    target_params: Any = None,
    target_tokens: Any = None,
    draft_tokens: Any = None,
    constants: Any = "besiroglu2024",
    alpha_source: Any = "paper",
    integer_gamma: Any = False,
    n_range: Any = None,
    candidates: Any = None,
    n_boot: Any = 0,
    seed: Any = None,
) -> PlanInputs:
    """Validate every input of a plan at once, before anything is computed or drawn.

    Parameters
    ----------
    preset : preset name (``data/presets.csv``), or None with ``target_params`` and ``target_tokens``.
    target_params, target_tokens : target size ``M`` (parameters) and pre-training tokens ``D'``.
    draft_tokens : pre-training tokens ``D`` of the draft family; one number or several.
    constants : loss-law constants: ``"besiroglu2024"``, ``"hoffmann2022"`` or five numbers
        ``(E, A, B, a, b)`` (also as a comma-separated string).
    alpha_source : ``"paper"``, ``"refit"`` or a measurements CSV path.
    integer_gamma : integer draft length instead of its continuous relaxation.
    n_range : ``(low, high)`` draft sizes searched, in parameters; default ``(1e7, M/2)``.
    candidates : drafts to compare with the optimum, ``{label: parameters}`` or a list of sizes.
    n_boot : bootstrap draws of ``N*`` (0: no bootstrap).
    seed : seed of the bootstrap's generator (required when ``n_boot > 0``).

    Raises
    ------
    ValueError with a one-line message for the first problem found, naming the argument as the user
    typed it (:func:`sdsl.validation.argument_names`: the command line's flags): a value of the wrong
    type or outside its domain (:data:`sdsl.validation.TARGET_PARAMS`, ``TOKENS``, ``MODEL_PARAMS``,
    bootstrap draws 0 or in [100, 100000]), a loss that overflows, the acceptance plane leaving
    (0, 1) in ``n_range`` or at a candidate, and an optimum on an end of ``n_range`` (``N*`` outside
    it: widen the range).
    """
    target = resolve_target(preset, target_params, target_tokens)
    d_draft = resolve_draft_tokens(draft_tokens, target)
    c = _resolve_constants(constants)
    integer = V.boolean(integer_gamma, "integer_gamma", "integer draft lengths instead of continuous")
    lo, hi = resolve_n_range(n_range, target.params)
    cands = resolve_candidates(candidates, target.params)
    n_boot = V.draws(n_boot, "n_boot", what="parametric bootstrap draws of N*")
    if seed is not None:
        seed = V.seed(seed, "seed")
    if n_boot > 0 and seed is None:
        raise ValueError(
            f"{shown('seed')} is required for the bootstrap ({shown('n_boot')} > 0): give an integer "
            f"in [0, {V.MAX_SEED}]"
        )
    alpha = resolve_alpha_source(alpha_source)
    for d in d_draft:
        _check_range(target.params, d, target.tokens, c, alpha, integer, lo, hi, cands)
    return PlanInputs(
        target=target,
        draft_tokens=d_draft,
        constants=c,
        alpha=alpha,
        integer=integer,
        n_range=(lo, hi),
        candidates=cands,
        n_boot=n_boot,
        seed=seed,
    )


def _check_plan_inputs(inputs: Any) -> PlanInputs:
    """``inputs`` if it is a :class:`PlanInputs` (what :func:`check_inputs` returns)."""
    if not isinstance(inputs, PlanInputs):
        raise ValueError(
            f"{shown('inputs')} must be validated plan inputs (sdsl.plan.check_inputs(...)), got {V.show(inputs)}"
        )
    return inputs


def plan(inputs: PlanInputs, d_draft: float | None = None) -> DraftOptimum:
    """The throughput-optimal draft for one ``D`` (default: the first of ``inputs.draft_tokens``):
    :func:`sdsl.model.optimum.optimal_draft_size` over ``inputs.n_range``."""
    _check_plan_inputs(inputs)
    d = (
        inputs.draft_tokens[0]
        if d_draft is None
        else V.number(d_draft, "d_draft", low=V.TOKENS[0], high=V.TOKENS[1], what="draft pre-training tokens")
    )
    return _optimum(
        inputs.target.params,
        float(d),
        inputs.target.tokens,
        inputs.constants,
        inputs.alpha.coefficients,
        inputs.integer,
        tuple(inputs.n_range),
    )


@functools.lru_cache(maxsize=64)
def _optimum(m, d, d_target, constants, coefficients, integer, n_range) -> DraftOptimum:
    """:func:`sdsl.model.throughput.optimal_draft_size`, computed once per configuration: :func:`check_inputs`
    runs it to validate and :func:`plan` returns the same result (a pure function of hashable,
    frozen inputs)."""
    return optimal_draft_size(m, d, d_target, constants, coefficients, integer, n_range)


def candidate_shares(inputs: PlanInputs, d_draft: float, optimum: DraftOptimum) -> pd.DataFrame:
    """Each candidate draft's ``alpha``, ``gamma*``, ``T`` and share of the optimum ``T(N)/T(N*)``."""
    import pandas as pd

    _check_plan_inputs(inputs)
    d_draft = V.number(d_draft, "d_draft", low=V.TOKENS[0], high=V.TOKENS[1], what="draft pre-training tokens")
    if not isinstance(optimum, DraftOptimum):
        raise ValueError(
            f"{shown('optimum')} must be the plan's optimum (sdsl.plan.plan(inputs)), got {V.show(optimum)}"
        )
    cols = ["candidate", "params", "d_draft", "alpha", "gamma", "tokens_per_flop", "speedup", "share_of_optimum"]
    if not inputs.candidates:
        return pd.DataFrame(columns=cols)
    n = np.array(list(inputs.candidates.values()), dtype=float)
    cur = throughput_curve(
        n,
        inputs.target.params,
        d_draft,
        inputs.target.tokens,
        inputs.constants,
        inputs.alpha.coefficients,
        inputs.integer,
    )
    t = np.asarray(cur["tokens_per_flop"], dtype=float)
    return pd.DataFrame(
        {
            "candidate": list(inputs.candidates),
            "params": n,
            "d_draft": d_draft,
            "alpha": cur["alpha"],
            "gamma": cur["gamma"],
            "tokens_per_flop": t,
            "speedup": t * 2.0 * inputs.target.params,
            "share_of_optimum": t / optimum.tokens_per_flop,
        },
        columns=cols,
    )


def _normal_draws(rng: np.random.Generator, mean: np.ndarray, cov: np.ndarray, size: int) -> np.ndarray:
    """``size`` draws of a normal with ``mean`` and ``cov``, through the Cholesky factor of the
    components with positive variance (the others are constant). Cholesky, not eigh: the factor is
    unique, so the draws do not depend on the signs LAPACK's kernels give eigenvectors (with eigh,
    another BLAS gave draws 1-4 % apart at the same seed)."""
    z = rng.standard_normal((size, mean.size))
    out = np.tile(mean, (size, 1))
    free = np.flatnonzero(np.diag(cov) > 0)
    if free.size:
        try:
            chol = np.linalg.cholesky(cov[np.ix_(free, free)])
        except np.linalg.LinAlgError:
            raise ValueError(
                "the covariance of the acceptance coefficients is not positive definite "
                "on its non-constant coefficients: no bootstrap"
            ) from None
        out[:, free] += z[:, free] @ chol.T
    return out


def bootstrap_n_star(
    inputs: PlanInputs,
    d_draft: float | None = None,
    n_boot: int | None = None,
    rng: np.random.Generator | None = None,
    grid_points: int = 161,
) -> np.ndarray:
    """Parametric bootstrap of ``N*``: ``n_boot`` draws of ``(A, B, C)`` from a normal with the
    alpha model's mean and covariance, each maximised over ``inputs.n_range``.

    All draws are solved at once by the kernel :func:`sdsl.model.optimum.solve` (a
    ``grid_points`` scan of ``log N`` over ``inputs.n_range``, then the root of the derivative). A
    draw for which the plane leaves (0, 1) anywhere in the range, or whose maximum lies at an end of
    it, is returned as NaN (counted by :func:`n_star_interval`).

    ``rng`` defaults to ``np.random.default_rng(inputs.seed)``.
    """
    _check_plan_inputs(inputs)
    d = (
        inputs.draft_tokens[0]
        if d_draft is None
        else V.number(d_draft, "d_draft", low=V.TOKENS[0], high=V.TOKENS[1], what="draft pre-training tokens")
    )
    b = (
        inputs.n_boot
        if n_boot is None
        else V.integer(n_boot, "n_boot", low=1, high=V.MAX_DRAWS, what="bootstrap draws")
    )
    if b < 1:
        raise ValueError(f"{shown('n_boot')} must be an integer in [1, {V.MAX_DRAWS}] for a bootstrap, got {b!r}")
    if rng is None:
        if inputs.seed is None:
            raise ValueError(f"{shown('seed')} is required for the bootstrap ({shown('n_boot')} > 0): give an integer")
        rng = np.random.default_rng(inputs.seed)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {V.show(rng)}")
    cf = inputs.alpha.coefficients
    coef = _normal_draws(rng, np.array([cf.A, cf.B, cf.C]), np.asarray(inputs.alpha.cov, dtype=float), b)
    m = np.full(b, inputs.target.params)
    grid = log_grid(np.full(b, inputs.n_range[0]), np.full(b, inputs.n_range[1]), grid_points)
    alpha = plane_alpha(m, np.full(b, d), np.full(b, inputs.target.tokens), inputs.constants, coef)
    o = solve(alpha, m, grid, inputs.integer)
    whole = (o.valid_low == grid[:, 0]) & (o.valid_high == grid[:, -1])
    return np.where(o.interior & whole, o.n_star, np.nan)


def n_star_interval(draws: np.ndarray, level: float = 0.95) -> dict[str, float]:
    """Percentile interval of bootstrap draws of ``N*`` (NaN draws, where the plane left (0, 1),
    are dropped and counted)."""
    level = V.level(level, what="level of the percentile interval", strings=False)
    try:
        d = np.asarray(draws, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"draws must be bootstrap draws of N* (numbers, NaN for a dropped draw), got {V.show(draws)}"
        ) from None
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"draws must be a non-empty 1-D array of bootstrap draws of N*, got shape {d.shape}")
    ok = d[np.isfinite(d)]
    if ok.size == 0:
        raise ValueError("no bootstrap draw kept the acceptance rate inside (0, 1): no interval")
    q = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return {
        "low": float(q[0]),
        "high": float(q[1]),
        "level": float(level),
        "draws": int(d.size),
        "dropped": int(d.size - ok.size),
        "median": float(np.median(ok)),
    }


def plan_table(inputs: PlanInputs, rng: np.random.Generator | None = None) -> pd.DataFrame:
    """One row per draft-family token count ``D``: ``N*``, ``gamma*``, ``alpha(N*)``, ``T(N*)``,
    speedup and, if ``inputs.n_boot > 0``, the bootstrap's 95 % interval of ``N*``.

    One generator (``rng``, default seeded by ``inputs.seed``) serves every ``D`` in turn."""
    import pandas as pd

    _check_plan_inputs(inputs)
    if inputs.n_boot > 0 and rng is None:
        rng = np.random.default_rng(inputs.seed)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {V.show(rng)}")
    rows = []
    for d in inputs.draft_tokens:
        o = plan(inputs, d)
        row = {
            "target": inputs.target.name,
            "m": inputs.target.params,
            "d_target": inputs.target.tokens,
            "d_draft": d,
            "n_star": o.n_star,
            "gamma_star": o.gamma_star,
            "alpha": o.alpha,
            "tokens_per_flop": o.tokens_per_flop,
            "speedup": o.speedup,
        }
        if inputs.n_boot > 0:
            ci = n_star_interval(bootstrap_n_star(inputs, d, rng=rng))
            row.update(
                n_star_ci_low=ci["low"],
                n_star_ci_high=ci["high"],
                bootstrap_draws=ci["draws"],
                bootstrap_dropped=ci["dropped"],
            )
        rows.append(row)
    return pd.DataFrame(rows)


def covariance_sensitivity(inputs: PlanInputs, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """How much the missing covariance of Table 3 matters: the 95 % interval of ``N*`` (first ``D``
    of ``inputs``) under a fit whose full covariance is known -- ``inputs.alpha`` if it has one (a
    refit or a measurements file), else our refit on Tables 1 and 2 -- once with its full
    covariance and once with only its diagonal (what the paper's printed standard errors allow),
    both with the same seed."""
    import pandas as pd

    _check_plan_inputs(inputs)
    n_boot = V.draws(n_boot, "n_boot", allow_zero=False)
    seed = V.seed(seed, "seed")
    cov0 = inputs.alpha.cov
    has_full = bool(np.count_nonzero(cov0 - np.diag(np.diag(cov0))))
    refit = inputs.alpha if has_full else resolve_alpha_source("refit")
    rows = []
    for label, cov in (("full covariance", refit.cov), ("diagonal only", np.diag(np.diag(refit.cov)))):
        alpha = AlphaModel(refit.coefficients, cov, f"{refit.label}, {label}", refit.n_obs, refit.r2)
        inp = PlanInputs(
            inputs.target,
            inputs.draft_tokens,
            inputs.constants,
            alpha,
            inputs.integer,
            inputs.n_range,
            {},
            n_boot,
            seed,
        )
        o = plan(inp)
        ci = n_star_interval(bootstrap_n_star(inp, rng=np.random.default_rng(seed)))
        rows.append(
            {
                "covariance": label,
                "n_star": o.n_star,
                "n_star_ci_low": ci["low"],
                "n_star_ci_high": ci["high"],
                "relative_width": (ci["high"] - ci["low"]) / o.n_star,
            }
        )
    return pd.DataFrame(rows)

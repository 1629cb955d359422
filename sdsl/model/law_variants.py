"""Comparing acceptance laws at the paper's configurations (the "beyond" chapter's computations).

Each fitted law (:mod:`sdsl.model.alpha_laws`) is followed to the throughput-optimal draft size
``N*`` (method notes, section 6) with :func:`sdsl.model.optimum.law_optimal_draft_sizes`, for
every loss-constant set and integer or continuous ``gamma``: :func:`n_star_variants`,
:func:`n_star_spread`; across target sizes: :func:`ratio_sweep`, :func:`ratio_rule_range`; the
checks against the paper's Tables 4 and 5: :func:`table4_check`, :func:`table5_check`; and the
elasticities of ``N*`` and ``T(N*)`` at several configurations: :func:`elasticity_table`, from
the log-space differences of :func:`log_elasticity`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from sdsl.model.alpha_laws import FittedLaw, parameter_table
from sdsl.model.laws import (
    BESIROGLU_2024,
    HOFFMANN_2022,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    resolve_constants,
)
from sdsl.model.optimum import LawOptimum, _batch_optima, law_optimal_draft_size, law_optimal_draft_sizes, plane_alpha
from sdsl.validation import as_positive

__all__ = [
    "TABLE4_QUANTITIES",
    "table4_check",
    "n_star_variants",
    "table5_check",
    "n_star_spread",
    "ratio_sweep",
    "ratio_rule_range",
    "elasticity_table",
    "PLANE_PARAMETERS",
    "LOSS_PARAMETERS",
    "log_elasticity",
    "elasticities",
]


#: Every quantity Table 4 prints for a fit, in its order.
TABLE4_QUANTITIES = ("p1", "moe1", "ci1_lower", "ci1_upper", "p2", "moe2", "ci2_lower", "ci2_upper", "mse", "r2")


def table4_check(fitted: Mapping[str, FittedLaw], data: pd.DataFrame, table4: pd.DataFrame) -> pd.DataFrame:
    """Our per-target fits beside the paper's Table 4 (linear, logarithmic, power): one row per
    printed quantity (:data:`TABLE4_QUANTITIES`: both parameters with their margins of error and
    95 % intervals, MSE and R^2) with columns ``target, function, quantity, ours, paper,
    deviation``. Comparing the deviation with the printed precision
    (:func:`sdsl.data.printed_tolerance`) is left to the caller."""
    names = {"linear": "linear_x", "logarithmic": "log_x", "power": "power_x"}
    rows = []
    pt = parameter_table({v: fitted[v] for v in names.values()}, data)
    for _, r in table4.iterrows():
        law = names[r["function"]]
        sub = pt[(pt["law"] == law) & (pt["fit"] == r["target"])]
        est = sub["estimate"].to_numpy()
        ci = sub[["ci_lower", "ci_upper"]].to_numpy()
        # OLS order: Intercept, slope; Table 4: p1 = slope, p2 = intercept. Power: p1, p2.
        first, second = (1, 0) if law != "power_x" else (0, 1)
        ours = {}
        for k, i in (("1", first), ("2", second)):
            ours[f"p{k}"] = est[i]
            ours[f"moe{k}"] = (ci[i, 1] - ci[i, 0]) / 2
            ours[f"ci{k}_lower"], ours[f"ci{k}_upper"] = ci[i, 0], ci[i, 1]
        ours.update(mse=sub["mse"].iloc[0], r2=sub["r2"].iloc[0])
        for k in TABLE4_QUANTITIES:
            rows.append(
                {
                    "target": r["target"],
                    "function": r["function"],
                    "quantity": k,
                    "ours": float(ours[k]),
                    "paper": float(r[k]),
                    "deviation": float(ours[k]) - float(r[k]),
                }
            )
    return pd.DataFrame(rows)


def n_star_variants(
    fitted: Mapping[str, FittedLaw],
    configs: pd.DataFrame,
    constants: Sequence[LossConstants | str] = (BESIROGLU_2024, HOFFMANN_2022),
    integer: Sequence[bool] = (False, True),
) -> pd.DataFrame:
    """``N*`` for every law x loss-constant set x integer/continuous ``gamma`` x configuration.
    A per-target law is evaluated only at the targets it was fitted on. All variants of one law
    are solved at once (:func:`law_optimal_draft_sizes`)."""
    cs = [resolve_constants(const) for const in constants]
    rows = []
    for name, fl in fitted.items():
        keys = []
        for _, cfg in configs.iterrows():
            if fl.law.per_target and cfg["target"] not in fl.pieces:
                continue
            for c in cs:
                for integ in integer:
                    keys.append((cfg, c, integ))
        if not keys:
            continue
        opts = law_optimal_draft_sizes(
            fl,
            [k[0]["target"] for k in keys],
            [k[0]["m"] for k in keys],
            [k[0]["d_draft"] for k in keys],
            [k[0]["d_target"] for k in keys],
            [k[1] for k in keys],
            [k[2] for k in keys],
        )
        for (cfg, c, integ), opt in zip(keys, opts):
            rows.append(
                {
                    "law": name,
                    "target": cfg["target"],
                    "draft_family": cfg["draft_family"],
                    "m": cfg["m"],
                    "d_target": cfg["d_target"],
                    "d_draft": cfg["d_draft"],
                    "constants": c.name,
                    "gamma": "integer" if integ else "continuous",
                    "n_star": opt.n_star,
                    "gamma_star": opt.gamma_star,
                    "alpha": opt.alpha,
                    "tokens_per_flop": opt.tokens_per_flop,
                    "ratio": opt.ratio,
                    "status": opt.status,
                    "n_at_max": opt.n_at_max,
                }
            )
    return pd.DataFrame(rows)


def table5_check(
    fitted: FittedLaw,
    paper5: pd.DataFrame,
    constants: LossConstants | str = BESIROGLU_2024,
    d_target: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """The paper's Table 5 regenerated through :func:`law_optimal_draft_size` with a fitted law
    (the paper's plane by default in the notebook): ours, the paper's and the relative
    deviations of ``N*`` and ``T(N*)``; ``d_target`` replaces the printed target tokens ``D'`` of
    the targets it names (a reading of :data:`sdsl.audit.rules.READINGS`), column ``d_target``."""
    over = dict(d_target or {})
    unknown = sorted(set(over) - set(paper5["target"]))
    if unknown:
        raise ValueError(
            f"d_target names target(s) {unknown} that Table 5 does not list; it lists {sorted(set(paper5['target']))}"
        )
    rows = []
    for _, r in paper5.iterrows():
        d_t = float(over.get(r["target"], r["d_target"]))
        o = law_optimal_draft_size(fitted, r["target"], r["m"], r["d_draft"], d_t, constants)
        rows.append(
            {
                "target": r["target"],
                "draft_family": r["draft_family"],
                "d_target": d_t,
                "n_star": o.n_star,
                "paper_n_star": float(r["n_star"]),
                "n_star_rel_dev": o.n_star / float(r["n_star"]) - 1,
                "tokens_per_flop": o.tokens_per_flop,
                "paper_tokens_per_flop": float(r["tokens_per_flop"]),
                "tokens_per_flop_rel_dev": o.tokens_per_flop / float(r["tokens_per_flop"]) - 1,
            }
        )
    return pd.DataFrame(rows)


def n_star_spread(variants: pd.DataFrame, by: Sequence[str] = ("target",)) -> pd.DataFrame:
    """Spread of ``N*`` across variants (laws, constants, gamma, families) per group ``by``:
    count of variants with an interior optimum, min, median, max, max/min, and the law and
    variant at each end."""
    rows = []
    for key, g in variants.groupby(list(by), sort=True):
        ok = g[g["status"] == "interior"]
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row.update({"variants": int(len(g)), "interior": int(len(ok))})
        if len(ok):
            lo, hi = ok.loc[ok["n_star"].idxmin()], ok.loc[ok["n_star"].idxmax()]
            row.update(
                {
                    "n_star_min": float(lo["n_star"]),
                    "n_star_median": float(ok["n_star"].median()),
                    "n_star_max": float(hi["n_star"]),
                    "max_over_min": float(hi["n_star"] / lo["n_star"]),
                    "min_variant": f"{lo['law']} / {lo['draft_family']} / {lo['constants']} / {lo['gamma']}",
                    "max_variant": f"{hi['law']} / {hi['draft_family']} / {hi['constants']} / {hi['gamma']}",
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def ratio_sweep(
    fitted: Mapping[str, FittedLaw],
    m_grid: ArrayLike,
    d_target: float,
    d_drafts: Mapping[str, float],
    constants: Sequence[LossConstants | str] = (BESIROGLU_2024, HOFFMANN_2022),
    integer: Sequence[bool] = (False, True),
) -> pd.DataFrame:
    """``M / N*`` against the target size ``M`` for the laws with cross-target structure (the
    others have no way to move to another ``M``). ``d_drafts`` maps a draft family to its ``D``."""
    rows = []
    ms = np.asarray(m_grid, float)
    cs = [resolve_constants(const) for const in constants]
    for name, fl in fitted.items():
        if not fl.law.cross_target:
            continue
        keys = [(fam, d, c, integ, m) for fam, d in d_drafts.items() for c in cs for integ in integer for m in ms]
        opts = law_optimal_draft_sizes(
            fl,
            "new target",
            [k[4] for k in keys],
            [float(k[1]) for k in keys],
            float(d_target),
            [k[2] for k in keys],
            [k[3] for k in keys],
        )
        for (fam, _, c, integ, m), opt in zip(keys, opts):
            rows.append(
                {
                    "law": name,
                    "draft_family": fam,
                    "constants": c.name,
                    "gamma": "integer" if integ else "continuous",
                    "m": float(m),
                    "n_star": opt.n_star,
                    "ratio": opt.ratio,
                    "alpha": opt.alpha,
                    "status": opt.status,
                }
            )
    return pd.DataFrame(rows)


def ratio_rule_range(sweep: pd.DataFrame, low: float = 150.0, high: float = 300.0) -> pd.DataFrame:
    """Where ``low <= M/N* <= high`` holds in a :func:`ratio_sweep`: per (law, family, constants,
    gamma) the smallest and largest ``M`` of the sweep inside the band, the ratio at both ends
    of the sweep, and whether the band is left above the largest ``M`` (``breaks_above``)."""
    rows = []
    for key, g in sweep.groupby(["law", "draft_family", "constants", "gamma"], sort=True):
        g = g.sort_values("m")
        inside = g[(g["ratio"] >= low) & (g["ratio"] <= high)]
        rows.append(
            {
                **dict(zip(["law", "draft_family", "constants", "gamma"], key)),
                "ratio_at_m_min": float(g["ratio"].iloc[0]),
                "ratio_at_m_max": float(g["ratio"].iloc[-1]),
                "m_min": float(g["m"].iloc[0]),
                "m_max": float(g["m"].iloc[-1]),
                "band_m_low": float(inside["m"].min()) if len(inside) else np.nan,
                "band_m_high": float(inside["m"].max()) if len(inside) else np.nan,
                "ratio_min": float(g["ratio"].min()),
                "ratio_max": float(g["ratio"].max()),
                "no_interior": int((g["status"] != "interior").sum()),
            }
        )
    return pd.DataFrame(rows)


def elasticity_table(
    configs: pd.DataFrame,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    constants: LossConstants | str = BESIROGLU_2024,
    integer: bool = False,
    h: float = 1e-3,
) -> pd.DataFrame:
    """:func:`elasticities` at every configuration of ``configs`` (columns ``target, m, d_target,
    draft_family, d_draft``), all configurations solved at once."""
    cfgs = [(float(r["m"]), float(r["d_draft"]), float(r["d_target"])) for _, r in configs.iterrows()]
    frames = []
    for (_, cfg), e in zip(configs.iterrows(), _elasticity_frame(cfgs, coefficients, constants, integer, h)):
        e.insert(0, "draft_family", cfg["draft_family"])
        e.insert(0, "target", cfg["target"])
        frames.append(e)
    return pd.concat(frames, ignore_index=True)


# --- How sensitive ``N*`` and ``T(N*)`` are to every constant they are built from: log

PLANE_PARAMETERS = ("A", "B", "C")
LOSS_PARAMETERS = ("E", "A_loss", "B_loss", "a", "b")


def log_elasticity(f: Callable[[float], float], theta: float, h: float = 1e-3) -> float:
    """``d ln f / d ln |theta|`` by a central difference in log space:
    ``(ln f(theta e^h) - ln f(theta e^-h)) / (2 h)``. ``f`` must be positive; ``theta`` non-zero
    (its sign is kept)."""
    if theta == 0 or not np.isfinite(theta):
        raise ValueError(f"theta must be finite and non-zero for an elasticity, got {theta!r}")
    if not h > 0:
        raise ValueError(f"h (log step) must be > 0, got {h!r}")
    up, down = f(theta * np.exp(h)), f(theta * np.exp(-h))
    if not (up > 0 and down > 0):
        raise ValueError(f"f must be positive around theta = {theta!r}, got {down!r} and {up!r}")
    return float((np.log(up) - np.log(down)) / (2.0 * h))


def _perturbed(coefficients: AcceptanceCoefficients, constants: LossConstants, name: str, value: float):
    if name in PLANE_PARAMETERS:
        plane_field: dict[str, Any] = {name: value}
        return replace(coefficients, **plane_field), constants
    loss_field: dict[str, Any] = {{"A_loss": "A", "B_loss": "B"}.get(name, name): value}
    return coefficients, replace(constants, **loss_field)


def _plane_optima(
    m: np.ndarray,
    d_draft: np.ndarray,
    d_target: np.ndarray,
    coefs: Sequence[AcceptanceCoefficients],
    consts: Sequence[LossConstants],
    integer: bool,
) -> list[LawOptimum]:
    """``N*`` of Eq. 5 (each row with its own coefficients and loss-law constants) as
    :func:`sdsl.optimal_draft_size` searches it (range ``(min(1e7, M), M)``, a 97-point scan over
    ``log N``, the kernel's refinement), for all rows at once."""
    alpha = plane_alpha(m, d_draft, d_target, list(consts), list(coefs))
    return _batch_optima(alpha, m, np.minimum(1e7, m), m.copy(), np.full(m.size, bool(integer)), 97)


def _elasticity_frame(
    configs: Sequence[tuple[float, float, float]],
    coefficients: AcceptanceCoefficients,
    constants: LossConstants | str,
    integer: bool,
    h: float,
) -> list[pd.DataFrame]:
    """:func:`elasticities` of several configurations ``(m, d_draft, d_target)``: every perturbed
    ``N*`` of all of them solved at once (:func:`_plane_optima`)."""
    c = resolve_constants(constants)
    if not h > 0:
        raise ValueError(f"h (log step) must be > 0, got {h!r}")
    names = (*PLANE_PARAMETERS, *LOSS_PARAMETERS)
    base = {
        name: (
            getattr(coefficients, name)
            if name in PLANE_PARAMETERS
            else getattr(c, {"A_loss": "A", "B_loss": "B"}.get(name, name))
        )
        for name in names
    }
    keys, coefs, consts = [], [], []
    for i, _ in enumerate(configs):
        for name in names:
            theta = base[name]
            if theta == 0 or not np.isfinite(theta):
                raise ValueError(f"theta must be finite and non-zero for an elasticity, got {theta!r}")
            for v in (theta * np.exp(h), theta * np.exp(-h)):  # the two points log_elasticity asks for
                co, cs = _perturbed(coefficients, c, name, v)
                keys.append((i, name, v))
                coefs.append(co)
                consts.append(cs)
    cfg = np.array(configs, dtype=float).reshape(-1, 3)
    idx = np.array([k[0] for k in keys])
    opts = _plane_optima(cfg[idx, 0], cfg[idx, 1], cfg[idx, 2], coefs, consts, integer)
    bad = [k for k, o in zip(keys, opts) if o.status != "interior"]
    if bad:
        i, name, v = bad[0]
        raise ValueError(f"no interior optimum of N at configuration {configs[i]} with {name} = {v!r}")
    found = dict(zip(keys, opts))
    frames = []
    for i, _ in enumerate(configs):
        rows = []
        for name in names:
            rows.append(
                {
                    "parameter": name,
                    "value": float(base[name]),
                    "elasticity_n_star": log_elasticity(lambda v: found[(i, name, v)].n_star, base[name], h),
                    "elasticity_t": log_elasticity(lambda v: found[(i, name, v)].tokens_per_flop, base[name], h),
                }
            )
        frames.append(pd.DataFrame(rows))
    return frames


def elasticities(
    m: float,
    d_draft: float,
    d_target: float,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    constants: LossConstants | str = BESIROGLU_2024,
    integer: bool = False,
    h: float = 1e-3,
) -> pd.DataFrame:
    """Elasticities of ``N*`` and of ``T(N*)`` with respect to the Eq. 5 coefficients ``A, B, C``
    and the loss-law constants ``E, A, B, a, b`` (``A_loss``, ``B_loss``), by central finite
    differences in log space (:func:`log_elasticity`), at one configuration, with ``N*`` searched
    as :func:`sdsl.optimal_draft_size` does (range ``(1e7, M)``, 97-point scan, refinement to
    1e-12 in ``log N``), all perturbed optima at once."""
    m = float(as_positive(m, "m (target parameters)"))
    d_draft = float(as_positive(d_draft, "d_draft (draft pre-training tokens)"))
    d_target = float(as_positive(d_target, "d_target (target pre-training tokens)"))
    return _elasticity_frame([(m, d_draft, d_target)], coefficients, constants, integer, h)[0]

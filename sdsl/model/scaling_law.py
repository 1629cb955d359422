"""The scaling law of the optimal draft (the paper's Tables 8 and 9; method notes, section 8):
regressions of ``N*`` over a grid of configurations, solved by :func:`sdsl.model.fitting.ols` on a
centred, scaled design (the design as given has condition number ~1e12) and reported in the paper's
units, with HC3 standard errors and normal-quantile intervals (statsmodels' default for a robust
covariance; the margin of error is the half-width).

* Table 8: ``N*/M = mu + M0/M + g ln D + g' ln D'`` (:func:`fit_table8`);
* Table 9: ``N* = mu M + M0`` (:func:`fit_table9`);
* their coefficients beside the paper's (:func:`coefficient_table`, :func:`beside_paper`, by name
  :func:`beside_paper_values`) and their ``R^2`` (:func:`fit_metrics`);
* what a solved grid says in numbers: the range of ``M`` where ``M / N*`` stays in a band
  (:func:`ratio_band`), how far ``N*`` moves along each axis (:func:`data_effects`), ``M / N*`` for
  targets beyond the grid's (:func:`practical_ratios`, :func:`ratio_by_target`) and the target size
  at which Table 9's law gives a ratio (:func:`law_target_size`).

The HC3 intervals of regressions on deterministic outputs (``N*`` from the kernel) measure how far
the linear form misses the exact optimum, not noise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdsl.model.fitting import LinearFit, ols
from sdsl.model.grid import axis, size_ratio
from sdsl.model.laws import BESIROGLU_2024, LossConstants
from sdsl.tolerance import equal_to_printed
from sdsl.validation import as_positive

__all__ = [
    "TABLE8_TERMS",
    "TABLE9_TERMS",
    "fit_table8",
    "fit_table9",
    "coefficient_table",
    "beside_paper",
    "beside_paper_values",
    "fit_metrics",
    "ratio_band",
    "data_effects",
    "practical_ratios",
    "ratio_by_target",
    "law_target_size",
]

#: Regressors of Table 8, in the paper's order: intercept, 1/M, ln D, ln D'.
TABLE8_TERMS = ("mu", "M0", "g", "g_prime")
#: Regressors of Table 9: M and the intercept.
TABLE9_TERMS = ("mu", "M0")


def _check_solution(solution: pd.DataFrame) -> pd.DataFrame:
    needed = ("m", "d_draft", "d_target", "n_star")
    missing = [c for c in needed if c not in solution.columns]
    if missing:
        raise ValueError(f"solution lacks column(s) {missing}; expected the output of optimal_draft_sizes")
    if len(solution) < 5:
        raise ValueError(f"a scaling regression needs at least 5 configurations, got {len(solution)}")
    for col in needed:
        as_positive(solution[col].to_numpy(), f"solution column {col}")
    return solution


def fit_table8(solution: pd.DataFrame) -> LinearFit:
    """OLS of ``N*/M = mu + M0 / M + g ln D + g' ln D'`` (the paper's Table 8) with HC3
    standard errors, solved on a centred and scaled design and reported in the paper's units
    (:func:`sdsl.model.fitting.ols`; the design as given has condition number ~1e12); returns
    the :class:`~sdsl.model.fitting.LinearFit` (parameters named :data:`TABLE8_TERMS`)."""
    s = _check_solution(solution)
    x = pd.DataFrame(
        {
            "mu": np.ones(len(s)),
            "M0": 1.0 / s["m"].to_numpy(),
            "g": np.log(s["d_draft"].to_numpy()),
            "g_prime": np.log(s["d_target"].to_numpy()),
        }
    )
    return ols(s["n_star"].to_numpy() / s["m"].to_numpy(), x, cov_type="HC3")


def fit_table9(solution: pd.DataFrame) -> LinearFit:
    """Pooled OLS of ``N* = mu M + M0`` (the paper's Table 9) with HC3 standard errors
    (:func:`sdsl.model.fitting.ols`, centred and scaled); returns the
    :class:`~sdsl.model.fitting.LinearFit` (parameters named :data:`TABLE9_TERMS`)."""
    s = _check_solution(solution)
    x = pd.DataFrame({"mu": s["m"].to_numpy(), "M0": np.ones(len(s))})
    return ols(s["n_star"].to_numpy(), x, cov_type="HC3")


def coefficient_table(results, level: float = 0.95) -> pd.DataFrame:
    """parameter, estimate, std_error, moe, ci_lower, ci_upper of fitted statsmodels results
    (the CI from ``conf_int``: normal quantiles for a robust covariance; moe its half-width)."""
    ci = results.conf_int(alpha=1.0 - level)
    out = pd.DataFrame(
        {
            "parameter": list(results.params.index),
            "estimate": results.params.to_numpy(),
            "std_error": results.bse.to_numpy(),
            "ci_lower": ci.iloc[:, 0].to_numpy(),
            "ci_upper": ci.iloc[:, 1].to_numpy(),
        }
    )
    out.insert(3, "moe", (out["ci_upper"] - out["ci_lower"]) / 2.0)
    return out


def beside_paper(ours: pd.DataFrame, paper: pd.DataFrame, tolerance: pd.DataFrame | None = None) -> pd.DataFrame:
    """Our coefficient table beside the paper's (``paper_table8`` / ``paper_table9`` layout):
    adds ``paper_estimate, paper_moe, paper_ci_lower, paper_ci_upper``, the relative deviations
    of estimate and margin of error, ``paper_in_our_ci``, ``ours_in_paper_ci`` and, with
    ``tolerance`` (:func:`sdsl.data.printed_tolerance`), whether the estimate, the margin of error
    and both equal the paper's to every printed digit (``estimate_digits_equal``,
    ``moe_digits_equal``, ``printed_digits_equal``)."""
    p = paper.set_index("parameter")
    missing = [k for k in ours["parameter"] if k not in p.index]
    if missing:
        raise ValueError(f"the paper's table has no parameter(s) {missing}")
    out = ours.copy()
    pp = p.loc[out["parameter"]]
    out["paper_estimate"] = pp["estimate"].to_numpy()
    out["paper_moe"] = pp["moe"].to_numpy()
    out["paper_ci_lower"] = pp["ci_lower"].to_numpy()
    out["paper_ci_upper"] = pp["ci_upper"].to_numpy()
    out["rel_deviation"] = out["estimate"] / out["paper_estimate"] - 1.0
    out["moe_rel_deviation"] = out["moe"] / out["paper_moe"] - 1.0
    out["deviation_in_moe"] = (out["estimate"] - out["paper_estimate"]) / out["paper_moe"]
    out["paper_in_our_ci"] = (out["ci_lower"] <= out["paper_estimate"]) & (out["paper_estimate"] <= out["ci_upper"])
    out["ours_in_paper_ci"] = (out["paper_ci_lower"] <= out["estimate"]) & (out["estimate"] <= out["paper_ci_upper"])
    if tolerance is not None:
        t = tolerance.set_index("parameter").loc[out["parameter"]]
        out["estimate_digits_equal"] = equal_to_printed(
            out["estimate"], out["paper_estimate"], t["estimate"].to_numpy()
        )
        out["moe_digits_equal"] = equal_to_printed(out["moe"], out["paper_moe"], t["moe"].to_numpy())
        out["printed_digits_equal"] = out["estimate_digits_equal"] & out["moe_digits_equal"]
    return out


def beside_paper_values(prefix: str, table: pd.DataFrame) -> dict[str, object]:
    """The numbers of a coefficient table beside the paper's (:func:`beside_paper`) by name: for each
    parameter ``p``, ``<prefix>_<p>`` (the estimate) and its ``_moe``, ``_lo``, ``_hi``, the paper's
    (``_paper``, ``_paper_moe``, ``_paper_lo``, ``_paper_hi``) and the deviations (``_dev_pct`` and
    ``_moe_dev_pct`` in per cent, ``_dev_moe`` in margins of error)."""
    out: dict[str, object] = {}
    for r in table.itertuples():
        p = f"{prefix}_{r.parameter}"
        out.update(
            {
                p: r.estimate,
                f"{p}_moe": r.moe,
                f"{p}_lo": r.ci_lower,
                f"{p}_hi": r.ci_upper,
                f"{p}_paper": r.paper_estimate,
                f"{p}_paper_moe": r.paper_moe,
                f"{p}_paper_lo": r.paper_ci_lower,
                f"{p}_paper_hi": r.paper_ci_upper,
                f"{p}_dev_pct": 100 * r.rel_deviation,
                f"{p}_moe_dev_pct": 100 * r.moe_rel_deviation,
                f"{p}_dev_moe": r.deviation_in_moe,
            }
        )
    return out


def fit_metrics(solution: pd.DataFrame, paper_metrics: pd.DataFrame | None = None) -> pd.DataFrame:
    """R^2, adjusted R^2 and observations of Tables 8 and 9: table, metric, ours (and paper,
    difference where ``paper_metrics`` has the metric)."""
    r8, r9 = fit_table8(solution), fit_table9(solution)
    rows = [
        (8, "r2", r8.rsquared),
        (8, "adj_r2", r8.rsquared_adj),
        (8, "observations", r8.nobs),
        (9, "r2", r9.rsquared),
        (9, "adj_r2", r9.rsquared_adj),
        (9, "observations", r9.nobs),
    ]
    out = pd.DataFrame(rows, columns=["table", "metric", "ours"])
    if paper_metrics is not None:
        pm = paper_metrics.assign(table=paper_metrics["table"].astype(int))
        out = out.merge(pm.rename(columns={"value": "paper"}), on=["table", "metric"], how="left")
        out["difference"] = out["ours"] - out["paper"]
    return out


def ratio_band(ratios: pd.DataFrame, low: float = 150.0, high: float = 300.0) -> dict[str, float]:
    """The range of target sizes over which ``M/N*`` stays in [low, high].

    ``ratios``: the output of :func:`sdsl.model.grid.size_ratio` over a range of ``M`` (and any data sizes).
    Returns ``m_all_low, m_all_high``: the smallest and largest ``M`` at which every
    configuration is inside the band; ``m_any_low, m_any_high``: the same for at least one; and
    the overall min and max of ``M/N*``. NaN where no ``M`` qualifies.
    """
    if not 0 < low < high:
        raise ValueError(f"the band must satisfy 0 < low < high, got ({low!r}, {high!r})")
    inside = ratios.assign(inside=(ratios["m_over_n"] >= low) & (ratios["m_over_n"] <= high))
    by_m = inside.groupby("m")["inside"].agg(["all", "any"])
    m_all = by_m.index[by_m["all"]]
    m_any = by_m.index[by_m["any"]]
    nan = float("nan")
    return {
        "low": float(low),
        "high": float(high),
        "m_all_low": float(m_all.min()) if len(m_all) else nan,
        "m_all_high": float(m_all.max()) if len(m_all) else nan,
        "m_any_low": float(m_any.min()) if len(m_any) else nan,
        "m_any_high": float(m_any.max()) if len(m_any) else nan,
        "ratio_min": float(ratios["m_over_n"].min()),
        "ratio_max": float(ratios["m_over_n"].max()),
    }


def data_effects(solution: pd.DataFrame) -> pd.DataFrame:
    """How much N* moves across each axis of a full factorial grid, the other two held fixed:
    for ``factor`` in M, D, D', the relative change ``N*(max) / N*(min) - 1`` from the lowest to
    the highest value of that factor, its ``min``, ``median`` and ``max`` over the settings of
    the other two, and the mean elasticity ``d ln N* / d ln factor`` (log-log slope between the
    ends)."""
    s = _check_solution(solution)
    out = []
    for factor, col in (("M", "m"), ("D", "d_draft"), ("D'", "d_target")):
        others = [c for c in ("m", "d_draft", "d_target") if c != col]
        lo_v, hi_v = s[col].min(), s[col].max()
        lo = s[s[col] == lo_v].set_index(others)["n_star"]
        hi = s[s[col] == hi_v].set_index(others)["n_star"]
        change = (hi / lo - 1.0).to_numpy()
        elasticity = (np.log(hi / lo) / np.log(hi_v / lo_v)).to_numpy()
        out.append(
            {
                "factor": factor,
                "low": lo_v,
                "high": hi_v,
                "change_min": change.min(),
                "change_median": float(np.median(change)),
                "change_max": change.max(),
                "elasticity_min": elasticity.min(),
                "elasticity_median": float(np.median(elasticity)),
                "elasticity_max": elasticity.max(),
            }
        )
    return pd.DataFrame(out)


def practical_ratios(
    configs: pd.DataFrame,
    m_low: float = 1e9,
    m_high: float = 1e12,
    points: int = 61,
    constants: LossConstants | str = BESIROGLU_2024,
) -> pd.DataFrame:
    """``N*`` and ``M / N*`` (:func:`sdsl.model.grid.size_ratio`) for ``points`` target sizes log-spaced from
    ``m_low`` to ``m_high``, each with every draft and target data size of ``configs``
    (:func:`sdsl.model.grid.table7_grid`): the law's practical range, beyond the grid's targets."""
    m_vals = axis(m_low, m_high, points, "log", "target sizes M")
    d_vals, p_vals = np.sort(configs["d_draft"].unique()), np.sort(configs["d_target"].unique())
    mm, dd, pp = (a.ravel() for a in np.meshgrid(m_vals, d_vals, p_vals, indexing="ij"))
    return size_ratio(mm, dd, pp, constants=constants)


def ratio_by_target(ratios: pd.DataFrame, every: int = 1) -> pd.DataFrame:
    """``M / N*`` of :func:`practical_ratios` per target size: its smallest, median and largest
    value over the data sizes, for every ``every``-th target size (and the largest)."""
    by_m = ratios.groupby("m")["m_over_n"].agg(["min", "median", "max"]).reset_index()
    keep = sorted(set(range(0, len(by_m), max(1, int(every)))) | {len(by_m) - 1})
    return by_m.iloc[keep].reset_index(drop=True)


def law_target_size(ratio: float, mu: float, m0: float) -> float:
    """The target size ``M`` at which Table 9's law ``N* = mu M + M0`` gives ``M / N* = ratio``:
    ``M = ratio M0 / (1 - ratio mu)`` (infinite when ``ratio >= 1 / mu``)."""
    den = 1.0 - float(ratio) * float(mu)
    return float("inf") if den <= 0 else float(ratio) * float(m0) / den

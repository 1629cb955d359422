"""Fits of alpha against perplexity (method notes, sections 5 and 7; the paper's Tables 3 and 4).

* :func:`fit_plane`: the paper's Eq. 5, ``alpha = A x + B y + C`` (draft and target perplexity),
  by OLS with classical standard errors, margins of error ``t(0.975, n - 3) SE``, ``MSE = SSR / n``
  and ``R^2``;
* :func:`fit_per_target`: for one target, ``alpha = p1 x + p2`` and ``alpha = p1 ln x + p2`` by OLS,
  and ``alpha = p1 x**p2`` by nonlinear least squares in the original space
  (:func:`sdsl.model.fitting.fit_power_law`), with ``moe = t(0.975, n - 2) SE``;
  :func:`fit_targets` for every target and form;
* :func:`implied_residual_df`: the residual degrees of freedom a printed table's ``moe / SE``
  ratios allow (how many pairs the paper fitted).

Every form reports ``MSE = SSR / n`` (not ``SSR / (n - k)``): the convention that reproduces the
MSE column of the paper's Table 4. All least squares go through :mod:`sdsl.model.fitting`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from sdsl.model.fitting import fit_power_law, ols
from sdsl.model.laws import AcceptanceCoefficients

__all__ = [
    "FORMS",
    "REQUIRED_COLUMNS",
    "PlaneFit",
    "CurveFit",
    "check_frame",
    "fit_plane",
    "implied_residual_df",
    "fit_per_target",
    "fit_targets",
    "fit_power_loglog",
    "targets_in_order",
    "pair_matrix",
]

#: The three functional forms of Table 4, in the paper's order.
FORMS: tuple[str, ...] = ("linear", "logarithmic", "power")

#: Columns every acceptance table needs (the ``acceptance`` schema of ``data/``).
REQUIRED_COLUMNS = ("target", "draft", "draft_family", "draft_ppl", "target_ppl", "alpha")


def check_frame(df: pd.DataFrame, needed: Sequence[str] = REQUIRED_COLUMNS) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df must be a pandas DataFrame of acceptance measurements, got {type(df).__name__}")
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"df is missing column(s) {missing}; an acceptance table needs {list(needed)}")
    if len(df) == 0:
        raise ValueError("df has no rows: at least one (target, draft) measurement is needed")
    for c in ("draft_ppl", "target_ppl", "alpha"):
        if c in needed:
            v = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
            if not np.all(np.isfinite(v)):
                raise ValueError(f"column {c!r} must be finite numbers")
            if c.endswith("ppl") and np.any(v <= 0):
                raise ValueError(f"column {c!r} must be > 0 (a perplexity), got {v[v <= 0][0]!r}")
    return df


# ---------------------------------------------------------------------------------------------
# Eq. 5: the acceptance plane (Table 3, Figure 1)


@dataclass(frozen=True, eq=False)
class PlaneFit:
    """OLS fit of the paper's Eq. 5, ``alpha = A x + B y + C`` (Table 3; method notes, s.5).

    ``estimate``, ``std_error``, ``moe``, ``ci_lower`` and ``ci_upper`` are indexed by
    ``"A"``, ``"B"``, ``"C"``. ``moe = t(0.975, n - 3) * std_error`` and the CI is
    ``estimate -/+ moe``. ``mse = SSR / n`` (the convention of Table 4; Table 3's cannot be
    checked without the paper's 130 observations). ``covariance`` is the 3 x 3 covariance of the
    estimates (``SSR / (n - 3)`` scaling, as OLS reports it).
    """

    estimate: pd.Series
    std_error: pd.Series
    moe: pd.Series
    ci_lower: pd.Series
    ci_upper: pd.Series
    covariance: pd.DataFrame
    mse: float
    r2: float
    n: int
    df_resid: int
    t_crit: float

    @property
    def coefficients(self) -> AcceptanceCoefficients:
        """The estimates as :class:`sdsl.AcceptanceCoefficients` (for the throughput model)."""
        return AcceptanceCoefficients(
            A=float(self.estimate["A"]),
            B=float(self.estimate["B"]),
            C=float(self.estimate["C"]),
            source=f"OLS refit of Eq. 5 on {self.n} pairs",
        )

    def predict(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        """``A x + B y + C`` at draft perplexity ``x`` and target perplexity ``y``."""
        e = self.estimate
        return e["A"] * np.asarray(x, dtype=float) + e["B"] * np.asarray(y, dtype=float) + e["C"]

    def table(self) -> pd.DataFrame:
        """One row per parameter: parameter, estimate, std_error, moe, ci_lower, ci_upper (the
        columns of the paper's Table 3)."""
        return pd.DataFrame(
            {
                "parameter": list(self.estimate.index),
                "estimate": self.estimate.to_numpy(),
                "std_error": self.std_error.to_numpy(),
                "moe": self.moe.to_numpy(),
                "ci_lower": self.ci_lower.to_numpy(),
                "ci_upper": self.ci_upper.to_numpy(),
            }
        )


def fit_plane(df: pd.DataFrame) -> PlaneFit:
    """Fit the paper's Eq. 5, ``alpha = A x + B y + C``, by OLS (statsmodels).

    ``x`` is ``df.draft_ppl``, ``y`` is ``df.target_ppl``, ``alpha`` is ``df.alpha`` (the columns
    of ``data/acceptance.csv``). Reports what the paper's Table 3 prints: estimates, standard
    errors, margins of error ``t(0.975, n - 3) * SE``, 95 % confidence intervals, ``MSE = SSR / n``
    and ``R^2`` (book chapter "Method", Eq. 5 section; method notes, section 5).

    Raises ``ValueError`` for fewer than 4 rows (no residual degree of freedom) or when the
    design is rank-deficient (e.g. a single target perplexity, so ``y`` is collinear with the
    intercept).
    """
    check_frame(df, ("draft_ppl", "target_ppl", "alpha"))
    n = len(df)
    if n < 4:
        raise ValueError(f"fit_plane needs at least 4 (draft, target) pairs for 3 coefficients, got {n}")
    X = pd.DataFrame(
        {"A": df["draft_ppl"].to_numpy(dtype=float), "B": df["target_ppl"].to_numpy(dtype=float), "C": 1.0}
    )
    if np.linalg.matrix_rank(X.to_numpy()) < 3:
        raise ValueError(
            "fit_plane: the design [draft_ppl, target_ppl, 1] is rank-deficient; Eq. 5 needs at least "
            "two distinct draft perplexities and two distinct target perplexities, not on one line"
        )
    res = ols(df["alpha"].to_numpy(dtype=float), X)
    dof = int(round(res.df_resid))
    t = float(stats.t.ppf(0.975, dof))
    est = res.params.astype(float)
    se = res.bse.astype(float)
    moe = t * se
    return PlaneFit(
        estimate=est,
        std_error=se,
        moe=moe,
        ci_lower=est - moe,
        ci_upper=est + moe,
        covariance=res.cov_params().astype(float),
        mse=float(res.ssr / n),
        r2=float(res.rsquared),
        n=n,
        df_resid=dof,
        t_crit=t,
    )


def implied_residual_df(paper: pd.DataFrame, level: float = 0.975, max_df: int = 10_000) -> pd.DataFrame:
    """Residual degrees of freedom consistent with a printed table's ``moe / std_error`` ratios.

    For each row, the interval of ``moe / std_error`` allowed by the printed digits (each value
    +/- half a unit in its last printed digit, given by columns ``std_error_tol`` and ``moe_tol``
    if present, else 5e-7) is compared with ``t(level, df)``. Returns, per parameter, the ratio
    and the smallest and largest ``df`` inside the interval. Applied to the paper's Table 3 it
    shows that the plane was fitted with 127 residual degrees of freedom, i.e. 130 observations
    (13 targets x 10 drafts), where the seed has 50.
    """
    for c in ("parameter", "std_error", "moe"):
        if c not in paper.columns:
            raise ValueError(f"paper is missing column {c!r}; expected the paper's Table 3")
    dfs = np.arange(1, max_df + 1)
    tq = stats.t.ppf(level, dfs)
    rows = []
    for _, r in paper.iterrows():
        se_tol = float(r.get("std_error_tol", 5e-7))
        moe_tol = float(r.get("moe_tol", 5e-7))
        lo = (r["moe"] - moe_tol) / (r["std_error"] + se_tol)
        hi = (r["moe"] + moe_tol) / (r["std_error"] - se_tol)
        ok = dfs[(tq >= lo) & (tq <= hi)]
        rows.append(
            {
                "parameter": r["parameter"],
                "ratio": float(r["moe"] / r["std_error"]),
                "ratio_low": float(lo),
                "ratio_high": float(hi),
                "df_min": int(ok.min()) if ok.size else np.nan,
                "df_max": int(ok.max()) if ok.size else np.nan,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# per-target fits (Table 4, Figure 3)


@dataclass(frozen=True, eq=False)
class CurveFit:
    """One per-target fit of alpha against draft perplexity ``x`` (one row of Table 4).

    ``form`` is ``"linear"`` (``alpha = p1 x + p2``), ``"logarithmic"`` (``alpha = p1 ln x + p2``)
    or ``"power"`` (``alpha = p1 x ** p2``). ``moe = t(0.975, n - 2) * SE``; ``mse = SSR / n``;
    ``r2`` is computed in the original space of alpha.
    """

    target: str
    form: str
    p1: float
    p2: float
    se1: float
    se2: float
    moe1: float
    moe2: float
    mse: float
    r2: float
    n: int
    t_crit: float
    covariance: np.ndarray = field(repr=False)

    @property
    def ci1(self) -> tuple[float, float]:
        """95 % confidence interval of ``p1``."""
        return (self.p1 - self.moe1, self.p1 + self.moe1)

    @property
    def ci2(self) -> tuple[float, float]:
        """95 % confidence interval of ``p2``."""
        return (self.p2 - self.moe2, self.p2 + self.moe2)

    def predict(self, x: np.ndarray | float) -> np.ndarray:
        """Predicted alpha at draft perplexity ``x``."""
        x = np.asarray(x, dtype=float)
        if self.form == "linear":
            return self.p1 * x + self.p2
        if self.form == "logarithmic":
            return self.p1 * np.log(x) + self.p2
        return self.p1 * np.power(x, self.p2)

    def row(self) -> dict[str, object]:
        """The fit as one row of Table 4 (``target``, ``function`` and the paper's columns)."""
        return {
            "target": self.target,
            "function": self.form,
            "p1": self.p1,
            "moe1": self.moe1,
            "ci1_lower": self.ci1[0],
            "ci1_upper": self.ci1[1],
            "p2": self.p2,
            "moe2": self.moe2,
            "ci2_lower": self.ci2[0],
            "ci2_upper": self.ci2[1],
            "mse": self.mse,
            "r2": self.r2,
            "n": self.n,
        }


def _xy(df: pd.DataFrame, target: str) -> tuple[np.ndarray, np.ndarray]:
    check_frame(df, ("target", "draft_ppl", "alpha"))
    sub = df[df["target"] == target]
    if sub.empty:
        raise ValueError(f"target {target!r} has no rows; targets present: {sorted(df['target'].unique())}")
    x = sub["draft_ppl"].to_numpy(dtype=float)
    y = sub["alpha"].to_numpy(dtype=float)
    if x.size < 3:
        raise ValueError(
            f"target {target!r} has {x.size} draft(s); a two-parameter fit with a margin of error needs "
            f"at least 3 (n - 2 >= 1 residual degree of freedom)"
        )
    if np.unique(x).size < 2:
        raise ValueError(f"target {target!r}: all drafts have the same perplexity; the fit is undetermined")
    return x, y


def fit_per_target(df: pd.DataFrame, target: str, form: str) -> CurveFit:
    """Fit alpha against draft perplexity for one target (paper's Table 4 and Figure 3; book
    chapter "Method", per-target fits; method notes, section 7).

    * ``"linear"``: ``alpha = p1 x + p2``, OLS (statsmodels);
    * ``"logarithmic"``: ``alpha = p1 ln x + p2``, OLS (statsmodels);
    * ``"power"``: ``alpha = p1 x ** p2``, nonlinear least squares in the original space
      (:func:`sdsl.model.fitting.fit_power_law`: Levenberg-Marquardt from the log-log OLS
      solution, polished to the stationary point by Gauss-Newton); standard errors from the
      covariance ``SSR / (n - 2) * (J'J)^-1`` at the optimum.

    All forms: ``moe = t(0.975, n - 2) * SE``, CI ``p -/+ moe``, ``MSE = SSR / n`` and
    ``R^2 = 1 - SSR / SST`` in the original space. This reproduces every printed digit of Table 4
    for Qwen1.5-14B and Qwen1.5-32B (see :func:`table4_vs_paper`).

    Raises ``ValueError`` for an unknown ``form``, an unknown target, fewer than 3 drafts, or a
    power-law fit that does not converge.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {list(FORMS)}, got {form!r}")
    x, y = _xy(df, target)
    n = x.size
    t = float(stats.t.ppf(0.975, n - 2))
    if form in ("linear", "logarithmic"):
        xx = np.log(x) if form == "logarithmic" else x
        res = ols(y, pd.DataFrame({"p2": np.ones(n), "p1": xx}))
        p1, p2 = float(res.params["p1"]), float(res.params["p2"])
        se1, se2 = float(res.bse["p1"]), float(res.bse["p2"])
        cov = res.cov.loc[["p1", "p2"], ["p1", "p2"]].to_numpy(dtype=float)
        ssr = res.ssr
    else:
        if np.any(y <= 0):
            raise ValueError(f"target {target!r}: a power law needs alpha > 0")
        try:
            pf = fit_power_law(x, y)
        except ValueError as exc:
            raise ValueError(f"target {target!r}: {exc}") from None
        p1, p2 = (float(v) for v in pf.p)
        cov, ssr = pf.cov, pf.ssr
        se1, se2 = (float(v) for v in np.sqrt(np.diag(cov)))
    sst = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - ssr / sst if sst > 0 else np.nan
    return CurveFit(
        target=str(target),
        form=form,
        p1=p1,
        p2=p2,
        se1=se1,
        se2=se2,
        moe1=t * se1,
        moe2=t * se2,
        mse=ssr / n,
        r2=float(r2),
        n=int(n),
        t_crit=t,
        covariance=np.asarray(cov, dtype=float),
    )


def _fmt_alpha(alpha: float, hw: float | None) -> str:
    if hw is None or not np.isfinite(hw):
        return f"{alpha:g}"
    return f"{alpha:g} ± {hw:g}"


def pair_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """The pairs of ``df`` in the layout of the paper's Tables 1 and 2: one row per target with its
    perplexity (``target``, ``target_ppl``), one column per draft; the first row ("Perplexity")
    holds each draft's perplexity as text, the other cells ``"alpha ± half-width"`` (``alpha_hw95``;
    ``alpha`` alone where it is missing, empty where the pair was not measured)."""
    check_frame(df, ("target", "draft", "draft_ppl", "target_ppl", "alpha"))
    targets = targets_in_order(df)
    drafts = list(dict.fromkeys(df["draft"].tolist()))
    hw = df["alpha_hw95"] if "alpha_hw95" in df.columns else pd.Series(np.nan, index=df.index)
    header: dict[str, object] = {"target": "Perplexity", "target_ppl": np.nan}
    for d in drafts:
        ppl = df.loc[df["draft"] == d, "draft_ppl"].unique()
        if ppl.size != 1:
            raise ValueError(f"draft {d!r} has {ppl.size} different perplexities {list(ppl)}; expected one")
        header[d] = f"{float(ppl[0]):.10g}"
    rows = [header]
    for t in targets:
        sub = df[df["target"] == t]
        tp = sub["target_ppl"].unique()
        if tp.size != 1:
            raise ValueError(f"target {t!r} has {tp.size} different perplexities {list(tp)}; expected one")
        row: dict[str, object] = {"target": t, "target_ppl": float(tp[0])}
        for d in drafts:
            hit = sub[sub["draft"] == d]
            row[d] = _fmt_alpha(float(hit["alpha"].iloc[0]), float(hw[hit.index[0]])) if len(hit) else ""
        rows.append(row)
    return pd.DataFrame(rows, columns=["target", "target_ppl", *drafts])


def targets_in_order(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["target"].tolist()))


def fit_power_loglog(df: pd.DataFrame, target: str) -> tuple[float, float]:
    """``(p1, p2)`` of ``alpha = p1 x ** p2`` by OLS on ``ln alpha = ln p1 + p2 ln x``: the
    log-log shortcut, which does *not* reproduce Table 4's power-law row (method notes, s.7);
    kept to show the difference with :func:`fit_per_target` (``form="power"``)."""
    x, y = _xy(df, target)
    if np.any(y <= 0):
        raise ValueError(f"target {target!r}: a power law needs alpha > 0")
    res = ols(np.log(y), pd.DataFrame({"b0": np.ones(x.size), "b1": np.log(x)})).params
    return float(np.exp(res["b0"])), float(res["b1"])


def fit_targets(df: pd.DataFrame, targets: Iterable[str] | None = None, forms: Iterable[str] = FORMS) -> list[CurveFit]:
    """:func:`fit_per_target` for every target (in the order of ``df``) and every form."""
    check_frame(df, ("target", "draft_ppl", "alpha"))
    targets = targets_in_order(df) if targets is None else list(targets)
    forms = list(forms)
    for f in forms:
        if f not in FORMS:
            raise ValueError(f"form must be one of {list(FORMS)}, got {f!r}")
    return [fit_per_target(df, t, f) for t in targets for f in forms]

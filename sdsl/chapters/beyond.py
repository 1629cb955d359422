"""Competing acceptance laws, held-out validation and the sensitivity of ``N*`` (chapter "beyond").

How far can the SDSL law be trusted with the 50 (target, draft) pairs of the paper's Tables 1 and 2?
This module puts the paper's own laws beside the log-linear law of Scylla ("Scaling Laws for
Speculative Decoding", arXiv 2505.07858: acceptance grows log-linearly with draft capacity and
pre-training tokens) and compares them by held-out prediction error, then follows each law to the
throughput-optimal draft size ``N*`` (method notes, section 6) and measures how sensitive ``N*`` is
to every constant it is built from.

Laws (:data:`LAWS`), all ``alpha`` as a function of the data of one (target, draft) pair:

===================  ==============================================  ==========  ============
name                 form                                            fitted      across targets
===================  ==============================================  ==========  ============
``plane_paper``      ``A x + B y + C``, Table 3 coefficients (Eq. 5)  not refit   yes (``y``)
``plane``            ``A x + B y + C`` (Eq. 5), OLS                   pooled      yes (``y``)
``linear_x``         ``p1 x + p2`` (Table 4)                          per target  no
``log_x``            ``p1 ln x + p2`` (Table 4)                       per target  no
``power_x``          ``p1 x**p2`` (Table 4, nonlinear LS)             per target  no
``linear_x_pooled``  ``a_target + p1 x``, target as a factor         pooled      no
``loglin_n``         ``a + b ln N`` (Scylla)                          per target  no
``loglin_n_pooled``  ``a_target + b ln N``, target as a factor        pooled      no
``loglin_nd_pooled`` ``a_target + b ln N + c ln D``                   pooled      no
``loglin_n_y``       ``a + b ln N + c y``                             pooled      yes (``y``)
``loglin_nd_y``      ``a + b ln N + c ln D + e y``                    pooled      yes (``y``)
``target_mean``      ``a_target`` (baseline: no draft dependence)     per target  no
===================  ==============================================  ==========  ============

``x``, ``y`` are the draft's and the target's perplexities, ``N`` and ``D`` the draft's parameters
and pre-training tokens. A law with the target as a factor (or fitted per target) has no level for
a target it has not seen, so leave-one-target-out is defined only for the laws that carry the
target through a covariate (the plane and the ``_y`` log-linear laws, which replace the factor
by the target's perplexity ``y``).

Propagation to ``N*``: the perplexities come from the loss law, ``x = exp(L(N, D))`` and
``y = exp(L(M, D'))`` (method notes, section 4), as the paper does for Eq. 5; ``ln N`` and ``ln D``
enter directly. ``T(N) = T(N, M, alpha(N), gamma*)`` (Eq. 9) is maximised over ``log N`` by a scan
and the root of its derivative, for all variants of a law at once (one call of the kernel
:func:`sdsl.model.optimum.solve`); a maximum at the end of the range or where ``alpha``
leaves (0, 1) is reported as such (status), never as an optimum.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from sdsl.book.style import fix_layout
from sdsl._validate import as_positive
from sdsl.model.laws import (
    BESIROGLU_2024,
    HOFFMANN_2022,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    loss_law,
    resolve_constants,
)
from sdsl.model.fitting import fit_power_law, ols
from sdsl.model.optimum import log_grid, plane_alpha, solve

__all__ = [
    "Law",
    "FittedLaw",
    "LAWS",
    "LOSS_PARAMETERS",
    "PLANE_PARAMETERS",
    "law_data",
    "law_table",
    "fit_laws",
    "parameter_table",
    "table4_check",
    "cross_validate",
    "bootstrap_rmse",
    "compare_laws",
    "cv_predictions",
    "configurations",
    "LawOptimum",
    "law_optimal_draft_size",
    "law_optimal_draft_sizes",
    "n_star_variants",
    "table5_check",
    "n_star_spread",
    "ratio_sweep",
    "ratio_rule_range",
    "log_elasticity",
    "elasticities",
    "elasticity_table",
    "figure_predicted_observed",
    "figure_n_star",
    "figure_ratio",
    "figure_tornado",
]

SCHEMES = {"draft": "leave one draft out", "target": "leave one target out"}


# ---------------------------------------------------------------------------------------------
# data


def law_data(acceptance: pd.DataFrame | None = None, models: pd.DataFrame | None = None) -> pd.DataFrame:
    """The 50 (target, draft) pairs of Tables 1 and 2 with the covariates of every law.

    Columns: ``target, draft, draft_family, alpha, x`` (draft perplexity), ``y`` (target
    perplexity), ``n`` (draft parameters), ``d`` (draft pre-training tokens), ``m``,
    ``d_target`` and the logs ``ln_x, ln_n, ln_d``. Draft sizes and tokens come from the
    ``models`` table (the draft names of ``acceptance`` are model names there).
    """
    from sdsl import data as _data

    acc = _data.load("acceptance") if acceptance is None else acceptance
    mod = _data.load("models") if models is None else models
    sizes = mod.set_index("model")
    missing = sorted(set(acc["draft"]).union(acc["target"]) - set(sizes.index))
    if missing:
        raise ValueError(f"models table has no entry for {missing}: cannot attach sizes N, M and tokens D, D'")
    out = pd.DataFrame(
        {
            "target": acc["target"].astype(str).to_numpy(),
            "draft": acc["draft"].astype(str).to_numpy(),
            "draft_family": acc["draft_family"].astype(str).to_numpy(),
            "alpha": acc["alpha"].astype(float).to_numpy(),
            "x": acc["draft_ppl"].astype(float).to_numpy(),
            "y": acc["target_ppl"].astype(float).to_numpy(),
            "n": sizes.loc[acc["draft"], "params"].astype(float).to_numpy(),
            "d": sizes.loc[acc["draft"], "tokens"].astype(float).to_numpy(),
            "m": sizes.loc[acc["target"], "params"].astype(float).to_numpy(),
            "d_target": sizes.loc[acc["target"], "tokens"].astype(float).to_numpy(),
        }
    )
    return _with_logs(out)


def _with_logs(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for col in ("x", "n", "d"):
        if col in df:
            df[f"ln_{col}"] = np.log(as_positive(df[col].to_numpy(), col))
    return df


# ---------------------------------------------------------------------------------------------
# laws


class _LinearPiece:
    """One OLS fit (statsmodels) evaluated without patsy: ``sum(coef * feature)`` plus the level
    of the target when the target is a factor."""

    _FACTOR = "C(target)[T."

    def __init__(self, result: Any, targets: Sequence[str]) -> None:
        self.result = result
        self.names = list(result.params.index)
        self.coefs = result.params.to_numpy(dtype=float)
        self.has_factor = any(n.startswith(self._FACTOR) for n in self.names)
        self.levels = set(targets) if self.has_factor else set()

    def evaluate(self, features: Mapping[str, np.ndarray], target: str) -> np.ndarray:
        if self.has_factor and target not in self.levels:
            raise ValueError(
                f"a law with the target as a factor has no level for target {target!r}; "
                f"fitted levels: {sorted(self.levels)}"
            )
        total = 0.0
        for name, coef in zip(self.names, self.coefs):
            if name == "Intercept":
                total = total + coef
            elif name.startswith(self._FACTOR):
                total = total + (coef if target == name[len(self._FACTOR):-1] else 0.0)
            else:
                total = total + coef * np.asarray(features[name], dtype=float)
        shape = np.broadcast(*[np.asarray(v) for v in features.values()]).shape
        return np.broadcast_to(np.asarray(total, dtype=float), shape).copy()

    def table(self) -> pd.DataFrame:
        ci = self.result.conf_int(alpha=0.05)
        return pd.DataFrame(
            {
                "parameter": self.result.params.index,
                "estimate": self.result.params.to_numpy(),
                "std_error": self.result.bse.to_numpy(),
                "ci_lower": ci[0].to_numpy(),
                "ci_upper": ci[1].to_numpy(),
            }
        )

    @property
    def nobs(self) -> int:
        return int(self.result.nobs)


@dataclass(frozen=True)
class _PowerPiece:
    """``alpha = p1 x**p2`` by nonlinear least squares in the original space (method notes, s. 7)."""

    p: np.ndarray
    cov: np.ndarray
    nobs: int

    def evaluate(self, features: Mapping[str, np.ndarray], target: str) -> np.ndarray:
        return self.p[0] * np.power(np.asarray(features["x"], dtype=float), self.p[1])

    def table(self) -> pd.DataFrame:
        se = np.sqrt(np.diag(self.cov))
        t = stats.t.ppf(0.975, self.nobs - 2)
        return pd.DataFrame(
            {
                "parameter": ["p1", "p2"],
                "estimate": self.p,
                "std_error": se,
                "ci_lower": self.p - t * se,
                "ci_upper": self.p + t * se,
            }
        )


@dataclass(frozen=True)
class _FixedPlane:
    coefficients: AcceptanceCoefficients
    nobs: int = 0

    def evaluate(self, features: Mapping[str, np.ndarray], target: str) -> np.ndarray:
        c = self.coefficients
        return c.A * np.asarray(features["x"], float) + c.B * np.asarray(features["y"], float) + c.C

    def table(self) -> pd.DataFrame:
        c = self.coefficients
        return pd.DataFrame(
            {"parameter": ["x", "y", "Intercept"], "estimate": [c.A, c.B, c.C],
             "std_error": np.nan, "ci_lower": np.nan, "ci_upper": np.nan}
        )


def _design(formula: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Design matrix of a formula ``alpha ~ term + term`` with the terms ``1`` (intercept only),
    ``C(target)`` (treatment dummies, first level in sorted order as reference) and column names;
    columns named as patsy names them, so that estimates read as in statsmodels' formula API."""
    lhs, _, rhs = formula.partition("~")
    if lhs.strip() != "alpha" or not rhs.strip():
        raise ValueError(f"formula must read 'alpha ~ terms', got {formula!r}")
    cols = {"Intercept": np.ones(len(frame))}
    for term in (t.strip() for t in rhs.split("+")):
        if term == "1":
            continue
        if term == "C(target)":
            levels = sorted(frame["target"].astype(str).unique())
            for lev in levels[1:]:
                cols[f"C(target)[T.{lev}]"] = (frame["target"].astype(str) == lev).to_numpy(dtype=float)
        elif term in frame:
            cols[term] = frame[term].to_numpy(dtype=float)
        else:
            raise ValueError(f"formula {formula!r}: unknown term {term!r}")
    return pd.DataFrame(cols, index=frame.index)


@dataclass(frozen=True)
class Law:
    """An acceptance law: how it is fitted and what it can predict.

    ``kind`` is ``"ols"`` (statsmodels formula ``formula``), ``"power"`` (``p1 x**p2`` by
    nonlinear least squares) or ``"fixed"`` (the paper's Table 3 plane, not refitted).
    ``per_target`` laws are fitted separately on each target's rows; ``cross_target`` laws can
    predict a target they were not fitted on (leave-one-target-out is defined for them only).
    """

    name: str
    label: str
    kind: str
    formula: str | None = None
    per_target: bool = False
    cross_target: bool = False
    refitted: bool = True
    coefficients: AcceptanceCoefficients | None = None

    def fit(self, data: pd.DataFrame) -> "FittedLaw":
        """Fit on ``data`` (a frame like :func:`law_data`) and return a :class:`FittedLaw`."""
        if len(data) == 0:
            raise ValueError(f"law {self.name!r}: cannot fit on an empty frame")
        if self.kind == "fixed":
            return FittedLaw(self, {"pooled": _FixedPlane(self.coefficients or PAPER_EQ5)})
        groups = data.groupby("target", sort=True) if self.per_target else [("pooled", data)]
        return FittedLaw(self, {str(k): self._fit_one(g) for k, g in groups})

    def _fit_one(self, g: pd.DataFrame):
        if self.kind == "ols":
            exog = _design(self.formula, g)
            result = ols(g["alpha"].to_numpy(dtype=float), exog)
            return _LinearPiece(result, sorted(g["target"].astype(str).unique()))
        if self.kind == "power":
            pf = fit_power_law(g["x"].to_numpy(float), g["alpha"].to_numpy(float))
            return _PowerPiece(pf.p, pf.cov, len(g))
        raise ValueError(f"law {self.name!r}: unknown kind {self.kind!r}; allowed: ols, power, fixed")


@dataclass(frozen=True)
class FittedLaw:
    """A law fitted on some rows: ``pieces`` maps a target (per-target laws) or ``"pooled"`` to
    one fit."""

    law: Law
    pieces: dict[str, Any]

    def _piece(self, target: str):
        if not self.law.per_target:
            return self.pieces["pooled"]
        if target not in self.pieces:
            raise ValueError(
                f"law {self.law.name!r} is fitted per target and has no fit for target {target!r} "
                f"(fitted: {sorted(self.pieces)}); it cannot predict a held-out target"
            )
        return self.pieces[target]

    def alpha(self, features: Mapping[str, np.ndarray], target: str) -> np.ndarray:
        """``alpha`` from covariates (``x, y, ln_x, ln_n, ln_d``) for one target."""
        return np.asarray(self._piece(target).evaluate(features, target), dtype=float)

    def predict(self, data: pd.DataFrame) -> np.ndarray:
        """Predicted ``alpha`` for every row of ``data`` (a frame like :func:`law_data`)."""
        targets = data["target"].astype(str).to_numpy()
        cols = {c: data[c].to_numpy(float) for c in ("x", "y", "ln_x", "ln_n", "ln_d") if c in data}
        out = np.empty(len(data), dtype=float)
        for target in pd.unique(targets):
            idx = np.flatnonzero(targets == target)
            out[idx] = self.alpha({c: v[idx] for c, v in cols.items()}, str(target))
        return out

    def parameters(self) -> pd.DataFrame:
        """Estimates with standard errors and 95 % confidence intervals, one row per parameter."""
        frames = []
        for key, piece in self.pieces.items():
            t = piece.table()
            t.insert(0, "fit", key)
            t.insert(0, "law", self.law.name)
            t["nobs"] = piece.nobs
            frames.append(t)
        return pd.concat(frames, ignore_index=True)


#: The laws compared in the chapter, in the order of the module docstring.
LAWS: tuple[Law, ...] = (
    Law("plane_paper", "Eq. 5, paper's Table 3 (not refitted)", "fixed", cross_target=True, refitted=False,
        coefficients=PAPER_EQ5),
    Law("plane", "Eq. 5 plane A x + B y + C", "ols", "alpha ~ x + y", cross_target=True),
    Law("linear_x", "per target p1 x + p2", "ols", "alpha ~ x", per_target=True),
    Law("log_x", "per target p1 ln x + p2", "ols", "alpha ~ ln_x", per_target=True),
    Law("power_x", "per target p1 x^p2", "power", per_target=True),
    Law("linear_x_pooled", "a_target + p1 x", "ols", "alpha ~ C(target) + x"),
    Law("loglin_n", "per target a + b ln N (Scylla)", "ols", "alpha ~ ln_n", per_target=True),
    Law("loglin_n_pooled", "a_target + b ln N", "ols", "alpha ~ C(target) + ln_n"),
    Law("loglin_nd_pooled", "a_target + b ln N + c ln D", "ols", "alpha ~ C(target) + ln_n + ln_d"),
    Law("loglin_n_y", "a + b ln N + c y", "ols", "alpha ~ ln_n + y", cross_target=True),
    Law("loglin_nd_y", "a + b ln N + c ln D + e y", "ols", "alpha ~ ln_n + ln_d + y", cross_target=True),
    Law("target_mean", "baseline: per-target mean", "ols", "alpha ~ 1", per_target=True),
)


def _law_map(laws: Iterable[Law] | None) -> dict[str, Law]:
    return {law.name: law for law in (LAWS if laws is None else laws)}


def law_table(laws: Iterable[Law] | None = None) -> pd.DataFrame:
    """Which law is fitted how and evaluated in which cross-validation scheme (and why not)."""
    rows = []
    for law in _law_map(laws).values():
        if not law.refitted:
            fit, loto = "not refitted (paper's Table 3)", "reference only: its fit saw these targets"
        elif law.per_target:
            fit, loto = "per target", "no: a per-target fit has nothing for an unseen target"
        elif "C(target)" in (law.formula or ""):
            fit, loto = "pooled, target as a factor", "no: an unseen target has no level"
        else:
            fit, loto = "pooled", "yes: the target enters through its perplexity y"
        rows.append({"law": law.name, "form": law.label, "formula": law.formula or law.kind, "fit": fit,
                     "leave_one_draft_out": "yes" if law.refitted else "reference only",
                     "leave_one_target_out": loto,
                     "propagates_to_new_M": "yes" if law.cross_target else "no (fixed target)"})
    return pd.DataFrame(rows)


def fit_laws(data: pd.DataFrame, laws: Iterable[Law] | None = None) -> dict[str, FittedLaw]:
    """Every law fitted on all rows of ``data``."""
    return {name: law.fit(data) for name, law in _law_map(laws).items()}


def parameter_table(fitted: Mapping[str, FittedLaw], data: pd.DataFrame) -> pd.DataFrame:
    """In-sample fit of every law: parameters with 95 % CIs, and the in-sample MSE and R^2 of
    each fit (per target for per-target laws). In-sample numbers are for orientation only; the
    laws are ranked by held-out error (:func:`compare_laws`)."""
    frames = []
    for name, fl in fitted.items():
        p = fl.parameters()
        pred = fl.predict(data)
        resid = data["alpha"].to_numpy() - pred
        stats_by_fit = {}
        for key in fl.pieces:
            mask = (data["target"] == key).to_numpy() if fl.law.per_target else np.ones(len(data), bool)
            obs = data["alpha"].to_numpy()[mask]
            ssr = float(np.sum(resid[mask] ** 2))
            stats_by_fit[key] = (ssr / mask.sum(), 1.0 - ssr / float(np.sum((obs - obs.mean()) ** 2)))
        p["mse"] = p["fit"].map(lambda k: stats_by_fit[k][0])
        p["r2"] = p["fit"].map(lambda k: stats_by_fit[k][1])
        frames.append(p)
    return pd.concat(frames, ignore_index=True)


def table4_check(fitted: Mapping[str, FittedLaw], data: pd.DataFrame, table4: pd.DataFrame) -> pd.DataFrame:
    """Our per-target fits beside the paper's Table 4 (linear, logarithmic, power): one row per
    printed quantity (``p1, moe1, p2, moe2, mse, r2``) with columns ``target, function, quantity,
    ours, paper, deviation``. Comparing the deviation with the printed precision
    (:func:`sdsl.data.printed_tolerance`) is left to the caller."""
    names = {"linear": "linear_x", "logarithmic": "log_x", "power": "power_x"}
    rows = []
    pt = parameter_table({v: fitted[v] for v in names.values()}, data)
    for _, r in table4.iterrows():
        law = names[r["function"]]
        sub = pt[(pt["law"] == law) & (pt["fit"] == r["target"])]
        est = sub["estimate"].to_numpy()
        # OLS order: Intercept, slope; Table 4: p1 = slope, p2 = intercept. Power: p1, p2.
        p1, p2 = (est[1], est[0]) if law != "power_x" else (est[0], est[1])
        ci = sub[["ci_lower", "ci_upper"]].to_numpy()
        moe1, moe2 = ((ci[1, 1] - ci[1, 0]) / 2, (ci[0, 1] - ci[0, 0]) / 2) if law != "power_x" else (
            (ci[0, 1] - ci[0, 0]) / 2, (ci[1, 1] - ci[1, 0]) / 2)
        ours = {"p1": p1, "moe1": moe1, "p2": p2, "moe2": moe2, "mse": sub["mse"].iloc[0], "r2": sub["r2"].iloc[0]}
        for k, v in ours.items():
            rows.append({"target": r["target"], "function": r["function"], "quantity": k,
                         "ours": float(v), "paper": float(r[k]), "deviation": float(v) - float(r[k])})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# held-out validation


def cross_validate(law: Any, data: pd.DataFrame, scheme: str = "draft") -> pd.DataFrame:
    """Held-out predictions of ``law`` under leave-one-draft-out (``scheme="draft"``: each fold
    holds out every row of one draft, one per target) or leave-one-target-out (``"target"``:
    every row of one target; only for laws with ``cross_target``).

    ``law`` is anything with ``fit(frame) -> object with predict(frame)``. The held-out rows are
    never part of the frame passed to ``fit``. Returns the rows of ``data`` with ``fold``,
    ``predicted`` and ``error = predicted - alpha``.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
    if scheme == "target" and not getattr(law, "cross_target", False):
        raise ValueError(
            f"law {getattr(law, 'name', law)!r} has no cross-target structure (fitted per target or "
            "with the target as a factor): it cannot predict a held-out target"
        )
    data = data.reset_index(drop=True)
    out = []
    for key, test_idx in data.groupby(scheme, sort=True).indices.items():
        train = data.drop(index=test_idx)
        test = data.iloc[test_idx]
        pred = np.asarray(law.fit(train.reset_index(drop=True)).predict(test.reset_index(drop=True)), float)
        fold = test.assign(fold=key, predicted=pred, error=pred - test["alpha"].to_numpy())
        out.append(fold)
    res = pd.concat(out).sort_index()
    res.insert(0, "law", getattr(law, "name", type(law).__name__))
    res.insert(1, "scheme", scheme)
    return res


def bootstrap_rmse(
    errors: ArrayLike, rng: np.random.Generator, n_resamples: int = 2000, level: float = 0.95,
    baseline: ArrayLike | None = None,
) -> tuple[float, float, float]:
    """RMSE of ``errors`` with a percentile bootstrap interval (``scipy.stats.bootstrap``, rows
    resampled with replacement). With ``baseline`` (errors of another law on the same rows) the
    statistic is the paired difference ``RMSE(errors) - RMSE(baseline)``."""
    e = np.asarray(errors, dtype=float)
    if e.ndim != 1 or e.size < 2:
        raise ValueError(f"errors must be a 1-d array of at least 2 values, got shape {e.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")

    def rmse(v, axis=-1):
        return np.sqrt(np.mean(np.square(v), axis=axis))

    if baseline is None:
        point = float(rmse(e))
        res = stats.bootstrap((e,), rmse, n_resamples=n_resamples, confidence_level=level,
                              method="percentile", rng=rng, vectorized=True)
    else:
        b = np.asarray(baseline, dtype=float)
        if b.shape != e.shape:
            raise ValueError(f"baseline must have the shape of errors {e.shape}, got {b.shape}")
        point = float(rmse(e) - rmse(b))
        res = stats.bootstrap((e, b), lambda u, v, axis=-1: rmse(u, axis) - rmse(v, axis), paired=True,
                              n_resamples=n_resamples, confidence_level=level, method="percentile",
                              rng=rng, vectorized=True)
    ci = res.confidence_interval
    return point, float(ci.low), float(ci.high)


def cv_predictions(data: pd.DataFrame, laws: Iterable[Law] | None = None) -> pd.DataFrame:
    """Held-out predictions of every law under every scheme it supports (long frame)."""
    frames = []
    for law in _law_map(laws).values():
        for scheme in SCHEMES:
            if scheme == "target" and not law.cross_target:
                continue
            frames.append(cross_validate(law, data, scheme))
    return pd.concat(frames, ignore_index=True)


def compare_laws(
    predictions: pd.DataFrame, data: pd.DataFrame, rng: np.random.Generator,
    laws: Iterable[Law] | None = None, n_resamples: int = 2000, level: float = 0.95,
) -> pd.DataFrame:
    """Ranked table of held-out errors: per scheme, each law's RMSE with its bootstrap interval,
    its MAE, its RMSE relative to the best refitted law and the paired bootstrap interval of the
    difference, beside the in-sample RMSE and R^2 of the fit on all rows.

    The paper's Table 3 plane (``refitted=False``) is listed for reference but not ranked: its
    coefficients were fitted on the paper's 13 targets, which include these pairs.
    """
    lawmap = _law_map(laws)
    fitted = {n: l.fit(data) for n, l in lawmap.items()}
    obs = data["alpha"].to_numpy()
    sst = float(np.sum((obs - obs.mean()) ** 2))
    rows = []
    for scheme, label in SCHEMES.items():
        sub = predictions[predictions["scheme"] == scheme]
        if sub.empty:
            continue
        errs = {n: g.sort_values(["target", "draft"])["error"].to_numpy() for n, g in sub.groupby("law")}
        ranked = [n for n in errs if lawmap[n].refitted]
        ranked.sort(key=lambda n: float(np.sqrt(np.mean(errs[n] ** 2))))
        best = ranked[0]
        for n in [*ranked, *[n for n in errs if not lawmap[n].refitted]]:
            e = errs[n]
            rmse, lo, hi = bootstrap_rmse(e, rng, n_resamples, level)
            if n == best:
                d, dlo, dhi = 0.0, 0.0, 0.0
            else:
                d, dlo, dhi = bootstrap_rmse(e, rng, n_resamples, level, baseline=errs[best])
            resid = obs - fitted[n].predict(data)
            rows.append({
                "scheme": label, "rank": ranked.index(n) + 1 if n in ranked else np.nan,
                "law": n, "label": lawmap[n].label, "n_heldout": int(e.size),
                "rmse": rmse, "rmse_ci_lower": lo, "rmse_ci_upper": hi,
                "mae": float(np.mean(np.abs(e))), "ratio_to_best": rmse / float(np.sqrt(np.mean(errs[best] ** 2))),
                "diff_to_best": d, "diff_ci_lower": dlo, "diff_ci_upper": dhi,
                "in_sample_rmse": float(np.sqrt(np.mean(resid ** 2))),
                "in_sample_r2": 1.0 - float(np.sum(resid ** 2)) / sst,
                "n_parameters": int(sum(len(p.table()) for p in fitted[n].pieces.values())) if lawmap[n].refitted else 0,
            })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# propagation to N*


def configurations(models: pd.DataFrame | None = None, targets: Sequence[str] | None = None,
                   families: Sequence[str] = ("OPT", "Qwen1.5", "Qwen2.5")) -> pd.DataFrame:
    """(target, draft family) configurations with ``m``, ``d_target`` and the family's ``d_draft``
    (tokens of the family's drafts in the ``models`` table). Default targets: the five of
    Tables 1 and 2."""
    from sdsl import data as _data

    mod = _data.load("models") if models is None else models
    targets = list(targets) if targets is not None else ["OPT-13B", "OPT-30B", "OPT-66B", "Qwen1.5-14B", "Qwen1.5-32B"]
    idx = mod.set_index("model")
    drafts = mod[mod["role"] == "draft"]
    rows = []
    for t in targets:
        for fam in families:
            toks = drafts.loc[drafts["family"] == fam, "tokens"].unique()
            if len(toks) != 1:
                raise ValueError(f"draft family {fam!r} has {len(toks)} token counts in the models table; need one")
            rows.append({"target": t, "m": float(idx.loc[t, "params"]), "d_target": float(idx.loc[t, "tokens"]),
                         "draft_family": fam, "d_draft": float(toks[0])})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class LawOptimum:
    """``N*`` of one law at one configuration. ``status`` is ``"interior"`` for a genuine
    maximum; otherwise ``n_star`` is NaN and ``n_at_max`` is where ``T`` is largest on the
    searched range (an end of the range, or where ``alpha`` leaves (0, 1))."""

    n_star: float
    gamma_star: float
    alpha: float
    tokens_per_flop: float
    m: float
    status: str
    n_at_max: float
    alpha_valid_range: tuple[float, float]

    @property
    def ratio(self) -> float:
        """``M / N*``."""
        return self.m / self.n_star if np.isfinite(self.n_star) else np.nan


def _features_at(n: np.ndarray, m: float, d_draft: float, d_target: float, c: LossConstants) -> dict[str, np.ndarray]:
    n = np.asarray(n, dtype=float)
    x = np.exp(loss_law(n, d_draft, *c.as_tuple()))  # perplexity(n, d_draft, c) without checks
    y = np.full(n.shape, np.exp(loss_law(m, d_target, *c.as_tuple())))
    return {"x": x, "y": y, "ln_x": np.log(x), "ln_n": np.log(n), "ln_d": np.full(np.shape(n), np.log(d_draft))}


def _rows_constants(constants, k: int) -> dict[str, np.ndarray]:
    """Loss-law constants as per-row arrays ``E, A, B, a, b`` (one set, or one per row)."""
    if isinstance(constants, (LossConstants, str)):
        constants = [constants] * k
    cs = [resolve_constants(c) for c in constants]
    if len(cs) != k:
        raise ValueError(f"constants must be one set or one per configuration ({k}), got {len(cs)}")
    return {f: np.array([getattr(c, f) for c in cs], dtype=float) for f in ("E", "A", "B", "a", "b")}


def _column(v: np.ndarray, n: np.ndarray) -> np.ndarray:
    """A per-row value shaped to broadcast against ``n`` (rows first)."""
    return v.reshape(v.shape + (1,) * (n.ndim - 1))


def _law_alpha_fn(fitted: FittedLaw, targets: np.ndarray, m: np.ndarray, d_draft: np.ndarray,
                  d_target: np.ndarray, cs: Mapping[str, np.ndarray]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``alpha(n, rows)`` of a fitted law for the configurations ``rows`` (``n`` has one row, or one
    entry, per element of ``rows``): the features of :func:`_features_at`, evaluated per target."""

    def alpha(n: np.ndarray, rows: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=float)
        col = {k: _column(v[rows], n) for k, v in cs.items()}
        dd, mm, pp = _column(d_draft[rows], n), _column(m[rows], n), _column(d_target[rows], n)
        x = np.exp(loss_law(n, dd, col["E"], col["A"], col["B"], col["a"], col["b"]))
        y = np.exp(loss_law(mm, pp, col["E"], col["A"], col["B"], col["a"], col["b"]))
        feats = {"x": x, "y": np.broadcast_to(y, n.shape), "ln_x": np.log(x), "ln_n": np.log(n),
                 "ln_d": np.broadcast_to(np.log(dd), n.shape)}
        out = np.empty(n.shape, dtype=float)
        tr = targets[rows]
        for t in np.unique(tr):
            sel = tr == t
            out[sel] = fitted.alpha({k: v[sel] for k, v in feats.items()}, str(t))
        return out

    return alpha


def _batch_optima(
    alpha_fn: Callable[[np.ndarray, np.ndarray], np.ndarray], m: np.ndarray, lo: np.ndarray, hi: np.ndarray,
    integer: np.ndarray, grid_points: int,
) -> list[LawOptimum]:
    """:func:`sdsl.model.optimum.solve` on a ``grid_points`` log grid from ``lo`` to ``hi`` per
    configuration, as one :class:`LawOptimum` per configuration."""
    o = solve(alpha_fn, m, log_grid(lo, hi, grid_points), integer)
    return [
        LawOptimum(float(o.n_star[i]), float(o.gamma_star[i]), float(o.alpha[i]), float(o.tokens_per_flop[i]),
                   float(o.m[i]), str(o.status[i]), float(o.n_at_max[i]),
                   (float(o.valid_low[i]), float(o.valid_high[i])))
        for i in range(len(o))
    ]


def law_optimal_draft_sizes(
    fitted: FittedLaw, targets: Sequence[str] | str, m: ArrayLike, d_draft: ArrayLike, d_target: ArrayLike,
    constants: LossConstants | str | Sequence[LossConstants | str] = BESIROGLU_2024,
    integer: bool | Sequence[bool] = False, grid_points: int = 241,
) -> list[LawOptimum]:
    """:func:`law_optimal_draft_size` for many configurations of one fitted law at once (one entry
    per configuration; ``targets``, ``m``, ``d_draft``, ``d_target``, ``constants`` and ``integer``
    broadcast together), all solved by one call of :func:`sdsl.model.optimum.solve`. A configuration the law cannot evaluate (a target without a fit or a level) gets
    status ``"not defined: ..."`` and NaNs. Search range per configuration: ``(min(1e6, M/10), M)``."""
    m_ = np.atleast_1d(np.asarray(as_positive(m, "m (target parameters)"), dtype=float))
    m_, d_, p_, integ_ = np.broadcast_arrays(
        m_, np.atleast_1d(as_positive(d_draft, "d_draft (draft pre-training tokens)")),
        np.atleast_1d(as_positive(d_target, "d_target (target pre-training tokens)")),
        np.atleast_1d(np.asarray(integer, dtype=bool)))
    k_cfg = m_.size
    targets_ = np.broadcast_to(np.asarray([targets] if isinstance(targets, str) else list(targets), dtype=object),
                               (k_cfg,))
    m_, d_, p_, integ_ = (np.ascontiguousarray(v) for v in (m_, d_, p_, integ_))
    cs = _rows_constants(constants, k_cfg)
    nan = float("nan")
    out: list[LawOptimum | None] = [None] * k_cfg
    ok = np.ones(k_cfg, dtype=bool)
    for t in np.unique(targets_):  # a target the law cannot evaluate
        try:
            fitted.alpha({c: np.ones(1) for c in ("x", "y", "ln_x", "ln_n", "ln_d")}, str(t))
        except ValueError as exc:
            for i in np.flatnonzero(targets_ == t):
                ok[i] = False
                out[i] = LawOptimum(nan, nan, nan, nan, float(m_[i]), f"not defined: {exc}", nan, (nan, nan))
    sel = np.flatnonzero(ok)
    if sel.size:
        lo = np.minimum(1e6, m_[sel] / 10)
        res = _batch_optima(_law_alpha_fn(fitted, targets_[sel], m_[sel], d_[sel], p_[sel],
                                          {k: v[sel] for k, v in cs.items()}),
                            m_[sel], lo, m_[sel].copy(), integ_[sel], grid_points)
        for i, r in zip(sel, res):
            out[i] = r
    return out  # type: ignore[return-value]


def law_optimal_draft_size(
    fitted: FittedLaw, target: str, m: float, d_draft: float, d_target: float,
    constants: LossConstants | str = BESIROGLU_2024, integer: bool = False,
    n_bounds: tuple[float, float] | None = None, grid_points: int = 241,
) -> LawOptimum:
    """``N* = argmax_N T(N, M, alpha_law(N), gamma*)`` for a fitted law (method notes, s. 6).

    ``alpha_law(N)`` takes ``x = exp(L(N, D))``, ``y = exp(L(M, D'))``, ``ln N`` and ``ln D``.
    A ``grid_points`` scan over ``log N`` in ``n_bounds`` (default ``(1e6, M)``) finds the largest
    ``T`` where ``0 < alpha < 1``; if it lies strictly inside, it is refined to the root of the
    derivative (:func:`sdsl.model.optimum.solve`). Otherwise the status names the edge and
    ``n_star`` is NaN.
    (:func:`law_optimal_draft_sizes` does many configurations at once.) Raises ``ValueError`` if
    the law cannot evaluate ``target``.
    """
    c = resolve_constants(constants)
    m = float(as_positive(m, "m (target parameters)"))
    lo, hi = n_bounds if n_bounds is not None else (min(1e6, m / 10), m)
    if not 0 < lo < hi <= m:
        raise ValueError(f"n_bounds must satisfy 0 < low < high <= m = {m:.6g}, got ({lo:.6g}, {hi:.6g})")
    fitted.alpha(_features_at(np.ones(1), m, d_draft, d_target, c), target)  # raises for an unknown target
    arr = np.array([m])
    cs = _rows_constants(c, 1)
    return _batch_optima(
        _law_alpha_fn(fitted, np.array([target], dtype=object), arr, np.array([float(d_draft)]),
                      np.array([float(d_target)]), cs),
        arr, np.array([float(lo)]), np.array([float(hi)]), np.array([bool(integer)]), grid_points)[0]


def n_star_variants(
    fitted: Mapping[str, FittedLaw], configs: pd.DataFrame,
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
            fl, [k[0]["target"] for k in keys], [k[0]["m"] for k in keys], [k[0]["d_draft"] for k in keys],
            [k[0]["d_target"] for k in keys], [k[1] for k in keys], [k[2] for k in keys])
        for (cfg, c, integ), opt in zip(keys, opts):
            rows.append({
                "law": name, "target": cfg["target"], "draft_family": cfg["draft_family"],
                "m": cfg["m"], "d_target": cfg["d_target"], "d_draft": cfg["d_draft"],
                "constants": c.name, "gamma": "integer" if integ else "continuous",
                "n_star": opt.n_star, "gamma_star": opt.gamma_star, "alpha": opt.alpha,
                "tokens_per_flop": opt.tokens_per_flop, "ratio": opt.ratio, "status": opt.status,
                "n_at_max": opt.n_at_max,
            })
    return pd.DataFrame(rows)


def table5_check(fitted: FittedLaw, paper5: pd.DataFrame,
                 constants: LossConstants | str = BESIROGLU_2024) -> pd.DataFrame:
    """The paper's Table 5 regenerated through :func:`law_optimal_draft_size` with a fitted law
    (the paper's plane by default in the notebook): ours, the paper's and the relative
    deviations of ``N*`` and ``T(N*)``."""
    rows = []
    for _, r in paper5.iterrows():
        o = law_optimal_draft_size(fitted, r["target"], r["m"], r["d_draft"], r["d_target"], constants)
        rows.append({"target": r["target"], "draft_family": r["draft_family"], "n_star": o.n_star,
                     "paper_n_star": float(r["n_star"]), "n_star_rel_dev": o.n_star / float(r["n_star"]) - 1,
                     "tokens_per_flop": o.tokens_per_flop, "paper_tokens_per_flop": float(r["tokens_per_flop"]),
                     "tokens_per_flop_rel_dev": o.tokens_per_flop / float(r["tokens_per_flop"]) - 1})
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
            row.update({
                "n_star_min": float(lo["n_star"]), "n_star_median": float(ok["n_star"].median()),
                "n_star_max": float(hi["n_star"]), "max_over_min": float(hi["n_star"] / lo["n_star"]),
                "min_variant": f"{lo['law']} / {lo['draft_family']} / {lo['constants']} / {lo['gamma']}",
                "max_variant": f"{hi['law']} / {hi['draft_family']} / {hi['constants']} / {hi['gamma']}",
            })
        rows.append(row)
    return pd.DataFrame(rows)


def ratio_sweep(
    fitted: Mapping[str, FittedLaw], m_grid: ArrayLike, d_target: float, d_drafts: Mapping[str, float],
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
        opts = law_optimal_draft_sizes(fl, "new target", [k[4] for k in keys], [float(k[1]) for k in keys],
                                       float(d_target), [k[2] for k in keys], [k[3] for k in keys])
        for (fam, _, c, integ, m), opt in zip(keys, opts):
            rows.append({"law": name, "draft_family": fam, "constants": c.name,
                         "gamma": "integer" if integ else "continuous", "m": float(m),
                         "n_star": opt.n_star, "ratio": opt.ratio, "alpha": opt.alpha,
                         "status": opt.status})
    return pd.DataFrame(rows)


def ratio_rule_range(sweep: pd.DataFrame, low: float = 150.0, high: float = 300.0) -> pd.DataFrame:
    """Where ``low <= M/N* <= high`` holds in a :func:`ratio_sweep`: per (law, family, constants,
    gamma) the smallest and largest ``M`` of the sweep inside the band, the ratio at both ends
    of the sweep, and whether the band is left above the largest ``M`` (``breaks_above``)."""
    rows = []
    for key, g in sweep.groupby(["law", "draft_family", "constants", "gamma"], sort=True):
        g = g.sort_values("m")
        inside = g[(g["ratio"] >= low) & (g["ratio"] <= high)]
        rows.append({
            **dict(zip(["law", "draft_family", "constants", "gamma"], key)),
            "ratio_at_m_min": float(g["ratio"].iloc[0]), "ratio_at_m_max": float(g["ratio"].iloc[-1]),
            "m_min": float(g["m"].iloc[0]), "m_max": float(g["m"].iloc[-1]),
            "band_m_low": float(inside["m"].min()) if len(inside) else np.nan,
            "band_m_high": float(inside["m"].max()) if len(inside) else np.nan,
            "ratio_min": float(g["ratio"].min()), "ratio_max": float(g["ratio"].max()),
            "no_interior": int((g["status"] != "interior").sum()),
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# sensitivity

#: Coefficients of Eq. 5 and the five loss-law constants, by the names used in the tables.
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
        return replace(coefficients, **{name: value}), constants
    field_ = {"A_loss": "A", "B_loss": "B"}.get(name, name)
    return coefficients, replace(constants, **{field_: value})


def _plane_optima(m: np.ndarray, d_draft: np.ndarray, d_target: np.ndarray, coefs: Sequence[AcceptanceCoefficients],
                  consts: Sequence[LossConstants], integer: bool) -> list[LawOptimum]:
    """``N*`` of Eq. 5 (each row with its own coefficients and loss-law constants) as
    :func:`sdsl.optimal_draft_size` searches it (range ``(min(1e7, M), M)``, a 97-point scan over
    ``log N``, the kernel's refinement), for all rows at once."""
    alpha = plane_alpha(m, d_draft, d_target, list(consts), list(coefs))
    return _batch_optima(alpha, m, np.minimum(1e7, m), m.copy(), np.full(m.size, bool(integer)), 97)


def _elasticity_frame(configs: Sequence[tuple[float, float, float]], coefficients: AcceptanceCoefficients,
                      constants: LossConstants | str, integer: bool, h: float) -> list[pd.DataFrame]:
    """:func:`elasticities` of several configurations ``(m, d_draft, d_target)``: every perturbed
    ``N*`` of all of them solved at once (:func:`_plane_optima`)."""
    c = resolve_constants(constants)
    if not h > 0:
        raise ValueError(f"h (log step) must be > 0, got {h!r}")
    names = (*PLANE_PARAMETERS, *LOSS_PARAMETERS)
    base = {name: (getattr(coefficients, name) if name in PLANE_PARAMETERS
                   else getattr(c, {"A_loss": "A", "B_loss": "B"}.get(name, name))) for name in names}
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
            rows.append({
                "parameter": name, "value": float(base[name]),
                "elasticity_n_star": log_elasticity(lambda v: found[(i, name, v)].n_star, base[name], h),
                "elasticity_t": log_elasticity(lambda v: found[(i, name, v)].tokens_per_flop, base[name], h),
            })
        frames.append(pd.DataFrame(rows))
    return frames


def elasticities(
    m: float, d_draft: float, d_target: float,
    coefficients: AcceptanceCoefficients = PAPER_EQ5, constants: LossConstants | str = BESIROGLU_2024,
    integer: bool = False, h: float = 1e-3,
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


def elasticity_table(configs: pd.DataFrame, coefficients: AcceptanceCoefficients = PAPER_EQ5,
                     constants: LossConstants | str = BESIROGLU_2024, integer: bool = False,
                     h: float = 1e-3) -> pd.DataFrame:
    """:func:`elasticities` at every configuration of ``configs`` (columns ``target, m, d_target,
    draft_family, d_draft``), all configurations solved at once."""
    cfgs = [(float(r["m"]), float(r["d_draft"]), float(r["d_target"])) for _, r in configs.iterrows()]
    frames = []
    for (_, cfg), e in zip(configs.iterrows(), _elasticity_frame(cfgs, coefficients, constants, integer, h)):
        e.insert(0, "draft_family", cfg["draft_family"])
        e.insert(0, "target", cfg["target"])
        frames.append(e)
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------------------------------
# figures





def figure_predicted_observed(predictions: pd.DataFrame, laws: Sequence[str], labels: Mapping[str, str] | None = None):
    """Held-out predicted against observed ``alpha``: one panel per law; filled markers
    leave-one-draft-out, open markers leave-one-target-out; colour = draft family."""
    import matplotlib.pyplot as plt

    from sdsl.book.style import family_color

    ncol = min(4, len(laws))
    nrow = int(np.ceil(len(laws) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(2.6 * ncol, 2.6 * nrow + 0.4), sharex=True, sharey=True,
                             squeeze=False)
    lo = float(min(predictions["alpha"].min(), predictions["predicted"].min())) - 0.01
    hi = float(max(predictions["alpha"].max(), predictions["predicted"].max())) + 0.01
    for ax, name in zip(axes.flat, laws):
        sub = predictions[predictions["law"] == name]
        for scheme, filled in (("draft", True), ("target", False)):
            s = sub[sub["scheme"] == scheme]
            for fam, g in s.groupby("draft_family"):
                col = family_color(fam)
                ax.scatter(g["alpha"], g["predicted"], s=14, marker="o" if filled else "D",
                           facecolors=col if filled else "none", edgecolors=col, linewidths=0.8,
                           label=f"{fam}, {'draft' if filled else 'target'} held out")
        ax.plot([lo, hi], [lo, hi], color="0.4", lw=0.8, ls="--")
        ax.text(0.04, 0.96, (labels or {}).get(name, name), transform=ax.transAxes, va="top", fontsize=7.5)
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    for ax in axes.flat[len(laws):]:
        ax.set_visible(False)
    for ax in axes[-1, :]:
        ax.set_xlabel(r"observed $\alpha$")
    for ax in axes[:, 0]:
        ax.set_ylabel("held-out prediction")
    handles, lab = [], []
    for ax in axes.flat:
        for hnd, l_ in zip(*ax.get_legend_handles_labels()):
            if l_ not in lab:
                handles.append(hnd)
                lab.append(l_)
    fig.legend(handles, lab, loc="outside lower center", ncol=3, fontsize=7.5)
    return fix_layout(fig)


def figure_n_star(variants: pd.DataFrame, targets: Sequence[str], law_order: Sequence[str]):
    """``N*`` of every variant: one panel per target, one row per law; colour = draft family,
    filled = Besiroglu constants, open = Hoffmann; circle = continuous, square = integer gamma.
    Variants without an interior optimum are marked with a cross at the left edge."""
    import matplotlib.pyplot as plt

    from sdsl.book.style import family_color

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ncol = min(3, len(targets))
    nrow = int(np.ceil(len(targets) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.0 * ncol + 1.2, (0.26 * len(law_order) + 0.9) * nrow + 0.6),
                             sharey=True, squeeze=False)
    ypos = {n: i for i, n in enumerate(law_order)}
    fams = sorted(variants["draft_family"].unique())
    offs = {f: (i - (len(fams) - 1) / 2) * 0.22 for i, f in enumerate(fams)}
    xmin = variants.loc[variants["status"] == "interior", "n_star"].min()
    for ax, target in zip(axes.flat, targets):
        sub = variants[(variants["target"] == target) & variants["law"].isin(law_order)]
        sub = sub.assign(
            ypos=sub["law"].map(ypos) + sub["draft_family"].map(offs) + np.where(sub["gamma"] == "integer", 0.06, -0.06),
            interior=sub["status"] == "interior",
        )
        # one scatter per marker shape (not per point): the same marks, far fewer artists to draw
        cols = [family_color(f) for f in sub["draft_family"]]
        sub = sub.assign(edge=cols, face=[c if k == "besiroglu2024" else "none" for c, k in zip(cols, sub["constants"])])
        for gam, g in sub[sub["interior"]].groupby("gamma", sort=True):
            ax.scatter(g["n_star"], g["ypos"], s=16, marker="o" if gam == "continuous" else "s",
                       facecolors=list(g["face"]), edgecolors=list(g["edge"]), linewidths=0.8)
        none = sub[~sub["interior"]]
        if len(none):
            ax.scatter(np.full(len(none), xmin / 1.6), none["ypos"], s=16, marker="x", color=list(none["edge"]),
                       linewidths=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:.0f}M"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"N* for {target}")
        ax.axvline(xmin / 1.35, color="0.7", lw=0.6)
    for ax in axes.flat[len(targets):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_yticks(range(len(law_order)), law_order)
    axes[0, 0].invert_yaxis()
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker="o", color=family_color(f), label=f"{f} drafts") for f in fams]
    handles += [
        Line2D([], [], ls="", marker="o", color="0.3", label="Besiroglu 2024, continuous gamma"),
        Line2D([], [], ls="", marker="o", mfc="none", color="0.3", label="Hoffmann 2022"),
        Line2D([], [], ls="", marker="s", color="0.3", label="integer gamma"),
        Line2D([], [], ls="", marker="x", color="0.3", label="no interior optimum"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=7.5)
    return fix_layout(fig)


def figure_ratio(sweep: pd.DataFrame, low: float = 150.0, high: float = 300.0, draft_family: str | None = None,
                 gamma: str = "continuous"):
    """``M / N*`` against ``M`` for the cross-target laws; the band ``[low, high]`` shaded.
    Solid: Besiroglu constants, dashed: Hoffmann."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    sub = sweep[sweep["gamma"] == gamma]
    if draft_family is not None:
        sub = sub[sub["draft_family"] == draft_family]
    colors = dict(zip(sorted(sub["law"].unique()), ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00"]))
    for (law, const), g in sub.groupby(["law", "constants"], sort=True):
        g = g.sort_values("m")
        ax.plot(g["m"], g["ratio"], color=colors[law], ls="-" if const == "besiroglu2024" else "--", lw=1.4,
                label=f"{law}, {const}")
    ax.axhspan(low, high, color="0.85", zorder=0, label=f"M/N* in [{low:g}, {high:g}]")
    ax.axhline(200, color="0.5", lw=0.7, ls=":")
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(FixedLocator([20, 50, 100, 150, 200, 300, 500, 1000]))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("target size M (parameters)")
    ax.set_ylabel(r"$M/N^*$")
    fig.legend(loc="outside right center", fontsize=7.5)
    return fix_layout(fig)


def figure_tornado(elast: pd.DataFrame, reference: tuple[str, str]):
    """Tornado chart: elasticities of ``N*`` (left) and ``T(N*)`` (right) at the reference
    configuration ``(target, draft_family)`` as horizontal bars sorted by size, with the range
    over all configurations of ``elast`` as a whisker."""
    import matplotlib.pyplot as plt

    ref = elast[(elast["target"] == reference[0]) & (elast["draft_family"] == reference[1])].set_index("parameter")
    order = ref["elasticity_n_star"].abs().sort_values().index
    rng_ = elast.groupby("parameter").agg(
        n_lo=("elasticity_n_star", "min"), n_hi=("elasticity_n_star", "max"),
        t_lo=("elasticity_t", "min"), t_hi=("elasticity_t", "max"),
    ).loc[order]
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6), sharey=True)
    for ax, col, lo, hi, xlabel in (
        (axes[0], "elasticity_n_star", "n_lo", "n_hi", r"elasticity of $N^*$"),
        (axes[1], "elasticity_t", "t_lo", "t_hi", r"elasticity of $\mathcal{T}(N^*)$"),
    ):
        v = ref.loc[order, col].to_numpy()
        y = np.arange(len(order))
        ax.barh(y, v, color=np.where(v >= 0, "#0072B2", "#D55E00"), height=0.6)
        ax.hlines(y, rng_[lo].to_numpy(), rng_[hi].to_numpy(), color="0.2", lw=1.2)
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_xscale("symlog", linthresh=0.1)
        ax.set_xlabel(xlabel)
    axes[0].set_yticks(np.arange(len(order)), [p.replace("_loss", " (loss)") if p.endswith("_loss") else (f"{p} (plane)" if p in ("A", "B", "C") else p) for p in order])
    return fix_layout(fig)



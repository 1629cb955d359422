"""Acceptance laws: alpha as a function of one (target, draft) pair's data, fitted and evaluated.

The registry :data:`LAWS` holds the paper's own laws beside the log-linear law of Scylla ("Scaling
Laws for Speculative Decoding", arXiv 2505.07858); each :class:`Law` is fitted on a frame of pairs
(:func:`law_data`: ``alpha``, the perplexities ``x`` and ``y``, ``ln x``,
``ln N``, ``ln D``, the target) into a :class:`FittedLaw` that evaluates alpha for new features.
OLS laws are solved by :func:`sdsl.model.fitting.ols`, the power law by
:func:`sdsl.model.fitting.fit_power_law`. The table of laws is in the beyond chapter's docstring.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from sdsl.model.fitting import fit_power_law, ols
from sdsl.model.laws import (
    PAPER_EQ5,
    AcceptanceCoefficients,
)
from sdsl.validation import as_positive

__all__ = ["law_data", "Law", "FittedLaw", "LAWS", "law_table", "fit_laws", "parameter_table"]


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
                total = total + (coef if target == name[len(self._FACTOR) : -1] else 0.0)
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
            {
                "parameter": ["x", "y", "Intercept"],
                "estimate": [c.A, c.B, c.C],
                "std_error": np.nan,
                "ci_lower": np.nan,
                "ci_upper": np.nan,
            }
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

    def fit(self, data: pd.DataFrame) -> FittedLaw:
        """Fit on ``data`` (a frame like :func:`law_data`) and return a :class:`FittedLaw`."""
        if len(data) == 0:
            raise ValueError(f"law {self.name!r}: cannot fit on an empty frame")
        if self.kind == "fixed":
            return FittedLaw(self, {"pooled": _FixedPlane(self.coefficients or PAPER_EQ5)})
        groups = data.groupby("target", sort=True) if self.per_target else [("pooled", data)]
        return FittedLaw(self, {str(k): self._fit_one(g) for k, g in groups})

    def _fit_one(self, g: pd.DataFrame):
        if self.kind == "ols":
            if self.formula is None:
                raise ValueError(f"law {self.name!r}: an ols law needs a formula 'alpha ~ terms'")
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
    Law(
        "plane_paper",
        "Eq. 5, paper's Table 3 (not refitted)",
        "fixed",
        cross_target=True,
        refitted=False,
        coefficients=PAPER_EQ5,
    ),
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
        rows.append(
            {
                "law": law.name,
                "form": law.label,
                "formula": law.formula or law.kind,
                "fit": fit,
                "leave_one_draft_out": "yes" if law.refitted else "reference only",
                "leave_one_target_out": loto,
                "propagates_to_new_M": "yes" if law.cross_target else "no (fixed target)",
            }
        )
    return pd.DataFrame(rows)


def fit_laws(data: pd.DataFrame, laws: Iterable[Law] | None = None) -> dict[str, FittedLaw]:
    """Every law fitted on all rows of ``data``."""
    return {name: law.fit(data) for name, law in _law_map(laws).items()}


def parameter_table(fitted: Mapping[str, FittedLaw], data: pd.DataFrame) -> pd.DataFrame:
    """In-sample fit of every law: parameters with 95 % CIs, and the in-sample MSE and R^2 of
    each fit (per target for per-target laws). In-sample numbers are for orientation only; the
    laws are ranked by held-out error (:func:`compare_laws`)."""
    frames = []
    for _name, fl in fitted.items():
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

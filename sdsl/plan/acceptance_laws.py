"""The acceptance laws ``sdsl plan``'s interval of ``N*`` solves (:mod:`sdsl.plan.interval`, the
``law`` source): linear laws evaluated with numpy alone (:class:`CommittedLaw`), the refitted
cross-target laws of ``data/acceptance_laws.csv`` (:func:`committed_laws`), where they were fitted
(:func:`fitted_ranges`) and the plan's own plane as one of them (:func:`plane_law`).

The refitted laws' coefficients are committed (``data/acceptance_laws.csv``, written by
``tools/fit_acceptance_laws.py`` from :func:`fit_law_rows`; a test refits them with statsmodels and
compares): fitting them here would import pandas and statsmodels, over a second, and ``sdsl plan``
has 0.3 s and, installed from the wheel, has neither package. Only numpy is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LAWS_FILE_COLUMNS", "CommittedLaw", "committed_laws", "plane_law", "fit_law_rows", "fitted_ranges"]

#: Columns of ``data/acceptance_laws.csv``.
LAWS_FILE_COLUMNS = ("law", "label", "formula", "parameter", "estimate", "std_error", "nobs", "r2")
_FEATURES = ("x", "y", "ln_n", "ln_d")


@dataclass(frozen=True)
class CommittedLaw:
    """A linear acceptance law ``alpha = Intercept + sum(coef * feature)`` over the features ``x``,
    ``y``, ``ln_n``, ``ln_d`` of :mod:`sdsl.model.optimum`, evaluated with numpy alone.

    It has the ``alpha(features, target)`` of :class:`sdsl.model.alpha_laws.FittedLaw` (the target is
    ignored: these laws carry it through ``y``), so the kernel's front end
    :func:`sdsl.model.optimum.law_optimal_draft_sizes` solves it as any fitted law."""

    name: str
    label: str
    """The law's form, e.g. ``a + b ln N + c y``."""
    coefficients: tuple[tuple[str, float], ...]
    """``(parameter, estimate)`` pairs: ``Intercept`` and features."""
    ranges: tuple[tuple[str, float, float], ...] = ()
    """``(feature, low, high)``: where the law was fitted (``x``, ``y`` perplexities; ``ln_n``,
    ``ln_d`` as ``N`` and ``D``, not their logs)."""
    fitted_on: str = ""
    """Where the coefficients come from."""

    def __post_init__(self) -> None:
        unknown = [p for p, _ in self.coefficients if p != "Intercept" and p not in _FEATURES]
        if unknown:
            raise ValueError(
                f"law {self.name!r}: unknown parameter(s) {unknown}; allowed: Intercept, {', '.join(_FEATURES)}"
            )

    def alpha(self, features: Mapping[str, np.ndarray], target: str = "") -> np.ndarray:
        """``alpha`` at the features (arrays that broadcast together)."""
        shape = np.broadcast(*[np.asarray(v) for v in features.values()]).shape
        total: Any = 0.0
        for p, v in self.coefficients:
            total = total + (v if p == "Intercept" else v * np.asarray(features[p], dtype=float))
        return np.broadcast_to(np.asarray(total, dtype=float), shape).copy()

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(p for p, _ in self.coefficients if p != "Intercept")


def fitted_ranges() -> dict[str, tuple[float, float]]:
    """Where the laws of ``data/acceptance_laws.csv`` were fitted: the 50 pairs of Tables 1 and 2
    (``data/acceptance.csv``, sizes and tokens from ``data/models.csv``), as ``{feature: (low,
    high)}`` for ``x``, ``y`` (perplexities), ``ln_n`` and ``ln_d`` (given as ``N`` and ``D``)."""
    from sdsl.data import records

    acc = records("acceptance")
    size = {r["model"]: r for r in records("models")}
    missing = sorted({r["draft"] for r in acc} - set(size))
    if missing:
        raise ValueError(f"models table has no entry for the drafts {missing}")
    cols = {
        "x": [r["draft_ppl"] for r in acc],
        "y": [r["target_ppl"] for r in acc],
        "ln_n": [float(size[r["draft"]]["params"]) for r in acc],
        "ln_d": [float(size[r["draft"]]["tokens"]) for r in acc],
    }
    return {k: (float(min(v)), float(max(v))) for k, v in cols.items()}


def committed_laws() -> tuple[CommittedLaw, ...]:
    """The refitted cross-target laws of ``data/acceptance_laws.csv`` (read without pandas), in file
    order, each with the ranges of :func:`fitted_ranges`."""
    from sdsl.data import records

    rng = fitted_ranges()
    laws: dict[str, dict[str, Any]] = {}
    for r in records("acceptance_laws"):
        law = laws.setdefault(r["law"], {"label": r["label"], "coef": []})
        law["coef"].append((r["parameter"], float(r["estimate"])))
    out = []
    for name, v in laws.items():
        feats = [p for p, _ in v["coef"] if p != "Intercept"]
        out.append(
            CommittedLaw(
                name, v["label"], tuple(v["coef"]), tuple((f, *rng[f]) for f in feats), "refitted on Tables 1 and 2"
            )
        )
    return tuple(out)


def plane_law(alpha_model) -> CommittedLaw:
    """The plan's acceptance plane (:class:`sdsl.plan.alpha_source.AlphaModel`, Eq. 5:
    ``alpha = A x + B y + C``) as a :class:`CommittedLaw` named ``plan``."""
    c = alpha_model.coefficients
    rng = alpha_model.ppl_range
    ranges = () if rng is None else (("x", rng[0], rng[1]), ("y", rng[2], rng[3]))
    return CommittedLaw(
        "plan",
        "Eq. 5 plane A x + B y + C",
        (("Intercept", c.C), ("x", c.A), ("y", c.B)),
        ranges,
        f"the plan's, {alpha_model.label}",
    )


def fit_law_rows(acceptance=None, models=None) -> list[dict[str, Any]]:
    """The rows of ``data/acceptance_laws.csv``: every refitted law of
    :data:`sdsl.model.alpha_laws.LAWS` that predicts new targets (``cross_target`` and
    ``refitted``), fitted by :func:`sdsl.model.alpha_laws.fit_laws` (statsmodels OLS) on the pairs of
    :func:`sdsl.model.alpha_laws.law_data`. Imports pandas and statsmodels: for the tool that writes
    the file and the test that compares it, never for ``sdsl plan``.

    Returns
    -------
    list of dict
        One per (law, parameter), with the keys :data:`LAWS_FILE_COLUMNS`.
    """
    from sdsl.model.alpha_laws import LAWS, fit_laws, law_data

    laws = [law for law in LAWS if law.cross_target and law.refitted]
    frame = law_data(acceptance, models)
    rows = []
    for name, fl in fit_laws(frame, laws).items():
        piece = fl.pieces["pooled"]
        res = piece.result
        for p, est, se in zip(piece.names, piece.coefs, res.bse.to_numpy(dtype=float)):
            rows.append(
                {
                    "law": name,
                    "label": fl.law.label,
                    "formula": fl.law.formula,
                    "parameter": p,
                    "estimate": float(est),
                    "std_error": float(se),
                    "nobs": int(res.nobs),
                    "r2": float(res.rsquared),
                }
            )
    return rows

"""Where the acceptance plane comes from: the paper's Table 3 (standard errors, no covariance),
our refit on Tables 1 and 2, or the user's own measurements, each with the covariance the bootstrap
draws from and the perplexity range it was fitted on."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made: `sdsl plan` runs without it
    import pandas as pd

from sdsl.model.laws import PAPER_EQ5, AcceptanceCoefficients
from sdsl.validation import show, shown

__all__ = [
    "ALPHA_SOURCES",
    "MEASUREMENT_COLUMNS",
    "AlphaModel",
    "read_measurements",
    "fit_acceptance_plane",
    "resolve_alpha_source",
]

#: Named sources of the acceptance plane; any other string is read as a measurements file.
ALPHA_SOURCES = ("paper", "refit")
#: Columns a measurements file must have (the acceptance plane's variables).
MEASUREMENT_COLUMNS = ("draft_ppl", "target_ppl", "alpha")


@dataclass(frozen=True)
class AlphaModel:
    """Coefficients of Eq. 5 with the covariance used by the bootstrap."""

    coefficients: AcceptanceCoefficients
    cov: np.ndarray
    """3 x 3 covariance of (A, B, C)."""
    label: str
    n_obs: int | None = None
    r2: float | None = None
    note: str = ""
    ppl_range: tuple[float, float, float, float] | None = None
    """Perplexities the plane was fitted on: draft (min, max), target (min, max); None if unknown."""


def read_measurements(path: str | os.PathLike) -> pd.DataFrame:
    """A user's acceptance measurements: a CSV with columns ``draft_ppl``, ``target_ppl`` and
    ``alpha`` (other columns, e.g. those of ``data/acceptance.csv``, are ignored), validated with
    the constraints of the ``acceptance`` schema (perplexities >= 1, alpha in (0, 1)).

    Every problem raises a ``ValueError`` with one line naming the file (and line and column)."""
    import pandas as pd

    from sdsl import data

    p = Path(path).expanduser()
    if not p.is_file():
        why = "is a folder, not a file" if p.is_dir() else "does not exist"
        raise ValueError(
            f"measurements file {str(path)!r} {why} ({shown('alpha_source')} must be 'paper', "
            f"'refit' or the path of a CSV file)"
        )
    # the package's one CSV reader: encoding, NUL bytes, header, quoting, blank lines, each with its line
    table = data.read_csv_text(p, source=f"measurements file {p}")
    data.check_sha256(p)  # a provenance file beside it records the file's sha256
    raw = pd.DataFrame(table.rows, columns=table.header, dtype=object)
    missing = [c for c in MEASUREMENT_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"measurements file {p}: missing column(s) {missing}; it needs {list(MEASUREMENT_COLUMNS)}")
    acc = data.schema("acceptance")
    columns: list[dict[str, Any]] = []
    for c in MEASUREMENT_COLUMNS:
        col = acc.column(c)
        entry = {"name": c, "type": col.type, "unit": col.unit, "description": col.description}
        for k in ("min", "max", "min_exclusive", "max_exclusive"):
            if getattr(col, k) is not None:
                entry[k] = getattr(col, k)
        columns.append(entry)
    sub = {"name": "measurements", "columns": columns, "key": []}
    df = data.validate(raw[list(MEASUREMENT_COLUMNS)], sub, source=f"measurements file {p}", line_offset=table.lines)
    if len(df) < 4:
        raise ValueError(
            f"measurements file {p}: {len(df)} row(s); the plane alpha = A x + B y + C needs at least 4 "
            f"measurements (3 coefficients and an error estimate)"
        )
    for c, what in (("draft_ppl", "drafts"), ("target_ppl", "targets")):
        if df[c].nunique() < 2:
            raise ValueError(
                f"measurements file {p}: every row has the same {c}; the plane needs at least two "
                f"{what} with different perplexities"
            )
    return df


def fit_acceptance_plane(df: pd.DataFrame, label: str = "refit") -> AlphaModel:
    """OLS fit of the paper's Eq. 5, ``alpha = A x + B y + C`` (``x = draft_ppl``,
    ``y = target_ppl``), with the coefficients' covariance: :func:`sdsl.model.alpha_fits.fit_plane`
    (statsmodels, non-robust, as the paper's Table 3 standard errors), wrapped as an
    :class:`AlphaModel` for the bootstrap."""
    from sdsl.model.alpha_fits import fit_plane

    fit = fit_plane(df)
    cov = fit.covariance.loc[["A", "B", "C"], ["A", "B", "C"]].to_numpy(dtype=float)
    c = fit.coefficients
    return AlphaModel(
        coefficients=AcceptanceCoefficients(A=c.A, B=c.B, C=c.C, source=label),
        cov=cov,
        label=label,
        n_obs=int(fit.n),
        r2=float(fit.r2),
        note=f"OLS on {int(fit.n)} measurements, full covariance of (A, B, C)",
        ppl_range=(
            float(df["draft_ppl"].min()),
            float(df["draft_ppl"].max()),
            float(df["target_ppl"].min()),
            float(df["target_ppl"].max()),
        ),
    )


def _paper_alpha_model() -> AlphaModel:
    from sdsl.data import records

    t3 = {r["parameter"]: r for r in records("paper_table3")}
    se = np.array([t3[k]["std_error"] for k in ("A", "B", "C")], dtype=float)
    acc = records("acceptance")  # the pairs of the paper's fit that its Tables 1 and 2 print
    x = [r["draft_ppl"] for r in acc]
    y = [r["target_ppl"] for r in acc]
    return AlphaModel(
        coefficients=PAPER_EQ5,
        cov=np.diag(se**2),
        label="paper (Table 3)",
        note=(
            "Table 3 prints standard errors but not the covariance of (A, B, C); the bootstrap "
            "draws them independently (diagonal covariance)"
        ),
        ppl_range=(min(x), max(x), min(y), max(y)),
    )


def resolve_alpha_source(source: Any) -> AlphaModel:
    """``"paper"`` (Table 3), ``"refit"`` (OLS on ``data/acceptance.csv``) or the path of a
    measurements CSV (see :func:`read_measurements`), refitted on the fly."""
    if isinstance(source, AlphaModel):
        return source
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str) or not source.strip():
        raise ValueError(
            f"{shown('alpha_source')} must be 'paper', 'refit' or the path of a measurements CSV, got {show(source)}"
        )
    key = source.strip()
    if key.lower() == "paper":
        return _paper_alpha_model()
    if key.lower() == "refit":
        from sdsl import data

        model = fit_acceptance_plane(data.load("acceptance"), label="refit (Tables 1 and 2)")
        return model
    if not (key.lower().endswith(".csv") or "/" in key or os.sep in key or Path(key).exists()):
        raise ValueError(
            f"{shown('alpha_source')} must be 'paper', 'refit' or the path of a measurements CSV, got {show(source)}"
        )
    df = read_measurements(key)
    return fit_acceptance_plane(df, label=f"measurements {Path(key).name}")

"""The scorecard's rows: each number the paper prints, read beside ours from the chapters' artifacts.

:func:`number_rows` gives one row per printed number and reading: the results the companion
recomputes (Tables 3, 4, 5's ``N*`` and ``T(N*)``, 6's ``N*`` and distances, 8 and 9, read from
the artifacts of the chapters that compute them, :data:`REQUIRED_ARTIFACTS`) and the inputs it
takes from the paper (every transcribed number beside the paper's text,
:func:`sdsl.audit.paper.transcription`, plus the inputs a reading of :data:`sdsl.audit.rules.READINGS`
takes otherwise). :func:`claim_rows` gives one row per claim of the captions of Figures 1 to 5
(``data/paper_claims.csv``, computed here by :func:`claim_values`).

A row is ``table, item, kind, reading, paper, ours, printed_tol, chapter, artifact, detail``; the
scorecard chapter (:mod:`sdsl.chapters.scorecard`) judges it. A missing artifact raises
:class:`MissingArtifactsError` (:func:`check_artifacts`), a missing column or row a ``ValueError``
naming the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from sdsl import data as _data
from sdsl.audit.reproduction import AS_PRINTED
from sdsl.audit.rules import D_TARGET_4E12, GRID_1E14
from sdsl.tolerance import EQUAL, WITHIN

__all__ = [
    "REQUIRED_ARTIFACTS",
    "MissingArtifactsError",
    "check_artifacts",
    "parse_millions",
    "number_rows",
    "claim_rows",
    "LATENCY_METRICS",
    "latency_claims",
    "claim_values",
]


#: Artifacts the scorecard reads: chapter -> files.
REQUIRED_ARTIFACTS: dict[str, tuple[str, ...]] = {
    "acceptance": ("table3.csv", "table4.csv"),
    "optimal_draft": ("table5_as_printed.csv", "hypotheses_14b.csv"),
    "latency": ("table6.csv",),
    "scaling": (
        "table7.csv",
        "table8.csv",
        "table9.csv",
        "fit_metrics.csv",
        "variants.csv",
        "grid_solution.csv",
        "data_effects.csv",
    ),
}

_T34 = ("estimate", "std_error", "moe", "ci_lower", "ci_upper")
_T4 = ("p1", "moe1", "ci1_lower", "ci1_upper", "p2", "moe2", "ci2_lower", "ci2_upper", "mse", "r2")
_T89 = ("estimate", "moe", "ci_lower", "ci_upper")


class MissingArtifactsError(FileNotFoundError):
    """A chapter's artifacts that the scorecard needs are not there."""


def check_artifacts(root: Path | str) -> None:
    """Raise :class:`MissingArtifactsError` naming every missing file of :data:`REQUIRED_ARTIFACTS`."""
    root = Path(root)
    missing = [f"{c}/{f}" for c, files in REQUIRED_ARTIFACTS.items() for f in files if not (root / c / f).is_file()]
    if missing:
        chapters = sorted({m.split("/")[0] for m in missing})
        raise MissingArtifactsError(
            f"the scorecard needs artifacts that are missing under {root}: {', '.join(missing)}; run "
            f"`python -m sdsl.build.pipeline run {' '.join(chapters)}` first"
        )


def _read(root: Path, rel: str, columns: tuple[str, ...]) -> pd.DataFrame:
    path = root / rel
    df = pd.read_csv(path)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: the scorecard needs column(s) {missing}; the file has {list(df.columns)}")
    return df


_MILLIONS = re.compile(r"^\s*([0-9.]+)\s*M\s*$")


def parse_millions(text: str) -> tuple[float, float]:
    """``'117M'`` -> ``(117e6, 0.5e6)``: the value and half a unit of its last printed digit."""
    m = _MILLIONS.match(str(text))
    if not m:
        raise ValueError(f"expected a size printed in millions such as '117M', got {text!r}")
    digits = m.group(1)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return float(digits) * 1e6, 0.5 * 10.0 ** (-decimals) * 1e6


def _row(
    table: str,
    item: str,
    paper: float,
    ours: float,
    tol: float,
    chapter: str,
    artifact: str,
    kind: str = "number",
    reading: str = AS_PRINTED,
    detail: str = "",
) -> dict:
    return {
        "table": table,
        "item": item,
        "kind": kind,
        "reading": reading,
        "paper": float(paper),
        "ours": float(ours),
        "printed_tol": float(tol),
        "chapter": chapter,
        "artifact": artifact,
        "detail": detail,
    }


def _lookup(series: pd.Series, key, artifact: str) -> float:
    try:
        return float(series.loc[key])
    except KeyError:
        raise ValueError(f"{artifact}: no row {key!r} (the scorecard needs it)") from None


def _metrics(number: int) -> list[tuple[str, float, float]]:
    met, tol = _data.load("paper_metrics"), _data.printed_tolerance("paper_metrics")
    sel = met["table"] == number
    return [
        (m, v, t) for (m, v), t in zip(met.loc[sel, ["metric", "value"]].itertuples(index=False), tol.loc[sel, "value"])
    ]


def _table3(root: Path) -> list[dict]:
    art = "acceptance/table3.csv"
    ours = _read(root, art, ("parameter", "quantity", "refit")).set_index(["parameter", "quantity"])["refit"]
    paper, tol = (
        _data.load("paper_table3").set_index("parameter"),
        _data.printed_tolerance("paper_table3").set_index("parameter"),
    )
    rows = [
        _row("Table 3", f"{p} {q}", paper.loc[p, q], _lookup(ours, (p, q), art), tol.loc[p, q], "acceptance", art)
        for p in paper.index
        for q in _T34
    ]
    rows += [
        _row("Table 3", f"model {m}", v, _lookup(ours, ("model", m), art), t, "acceptance", art)
        for m, v, t in _metrics(3)
    ]
    return rows


def _table4(root: Path) -> list[dict]:
    art = "acceptance/table4.csv"
    ours = _read(root, art, ("target", "function", *_T4)).set_index(["target", "function"])
    rows = []
    for (_, p), (_, t) in zip(
        _data.load("paper_table4").iterrows(), _data.printed_tolerance("paper_table4").iterrows()
    ):
        key = (p["target"], p["function"])
        if key not in ours.index:
            raise ValueError(f"{art}: no row for {key} (the scorecard needs it)")
        rows += [
            _row("Table 4", f"{key[0]} {key[1]} {q}", p[q], ours.loc[key, q], t[q], "acceptance", art) for q in _T4
        ]
    return rows


def _table5(root: Path) -> list[dict]:
    # as printed from the table of every input as printed, the reading from the hypotheses: both
    # whatever the chapter's parameters chose for its own Table 5
    art, hart = "optimal_draft/table5_as_printed.csv", "optimal_draft/hypotheses_14b.csv"
    ours = _read(root, art, ("target", "draft_family", "n_star", "tokens_per_flop")).set_index(
        ["target", "draft_family"]
    )
    hyp = _read(root, hart, ("hypothesis", "target", "draft_family", "n_star", "tokens_per_flop"))
    alt = hyp[hyp["hypothesis"].str.replace(" ", "").str.startswith("D'=4")].set_index(["target", "draft_family"])
    rows = []
    for (_, p), (_, t) in zip(
        _data.load("paper_table5").iterrows(), _data.printed_tolerance("paper_table5").iterrows()
    ):
        key = (p["target"], p["draft_family"])
        if key not in ours.index:
            raise ValueError(f"{art}: no row for {key} (the scorecard needs it)")
        for q, label in (("n_star", "N*"), ("tokens_per_flop", "T(N*)")):
            item = f"{key[0]} {key[1]} drafts {label}"
            rows.append(_row("Table 5", item, p[q], ours.loc[key, q], t[q], "optimal_draft", art))
            if key[0] == "Qwen1.5-14B":
                if key not in alt.index:
                    raise ValueError(f"{hart}: no D' = 4e12 row for {key} (the scorecard needs it)")
                rows.append(
                    _row(
                        "Table 5", item, p[q], alt.loc[key, q], t[q], "optimal_draft", hart, reading=D_TARGET_4E12.name
                    )
                )
    return rows


def _table6(root: Path) -> list[dict]:
    art = "latency/table6.csv"
    ours = _read(root, art, ("draft", "n_star", "distance")).set_index("draft")
    rows = []
    for (_, p), (_, t) in zip(
        _data.load("paper_table6").iterrows(), _data.printed_tolerance("paper_table6").iterrows()
    ):
        d = p["draft"]
        if d not in ours.index:
            raise ValueError(f"{art}: no row for draft {d!r} (the scorecard needs it)")
        n_paper, n_tol = parse_millions(p["n_star_printed"])
        rows.append(_row("Table 6", f"{d} N*", n_paper, ours.loc[d, "n_star"], n_tol, "latency", art))
        rows.append(
            _row("Table 6", f"{d} |N-N*|/M", p["distance"], ours.loc[d, "distance"], t["distance"], "latency", art)
        )
    return rows


def _adjusted_r2(r2: float, n: int, regressors: int) -> float:
    """Adjusted R^2 of an OLS fit with an intercept and ``regressors`` regressors on ``n`` rows."""
    return 1.0 - (1.0 - r2) * (n - 1) / (n - regressors - 1)


def _table89(root: Path, number: int) -> list[dict]:
    """Both readings of Table 8 or 9 from the scaling chapter's ``variants.csv`` (the chapter's own
    spacing, data axes to 1e13 as printed and to 1e14), plus the grid points of Table 9."""
    art = "scaling/variants.csv"
    var = _read(root, art, ("spacing", "d_high", "n_spacing", "table", "parameter", *_T89, "r2"))
    grid = _read(root, "scaling/table7.csv", ("parameter", "points", "spacing")).set_index("parameter")
    n = int(
        _lookup(
            _read(root, "scaling/fit_metrics.csv", ("table", "metric", "ours"))
            .assign(table=lambda f: f["table"].astype(int))
            .set_index(["table", "metric"])["ours"],
            (number, "observations"),
            "scaling/fit_metrics.csv",
        )
    )
    var = var[
        (var["table"] == number)
        & (var["spacing"] == grid.loc["M", "spacing"])
        & (var["n_spacing"] == grid.loc["N", "spacing"])
    ]
    paper, tol = _data.load(f"paper_table{number}"), _data.printed_tolerance(f"paper_table{number}")
    rows = []
    for reading, d_high in ((AS_PRINTED, 1e13), (GRID_1E14.name, 1e14)):
        v = var[np.isclose(var["d_high"], d_high)].set_index("parameter")
        if v.empty or v.index.duplicated().any():
            raise ValueError(f"{art}: need exactly one set of Table {number} rows with d_high = {d_high:g}")
        for (_, p), (_, t) in zip(paper.iterrows(), tol.iterrows()):
            rows += [
                _row(
                    f"Table {number}",
                    f"{p['parameter']} {q}",
                    p[q],
                    _lookup(v[q], p["parameter"], art),
                    t[q],
                    "scaling",
                    art,
                    reading=reading,
                )
                for q in _T89
            ]
        r2 = float(v["r2"].iloc[0])
        ours = {"r2": r2, "adj_r2": _adjusted_r2(r2, n, len(v) - 1), "observations": n}
        rows += [
            _row(f"Table {number}", f"model {m}", val, ours[m], tl, "scaling", art, reading=reading)
            for m, val, tl in _metrics(number)
        ]
    if number == 9:
        rows += [
            _row("Table 9", f"grid points |{p}|", pts, grid.loc[p, "points"], 0.5, "scaling", "scaling/table7.csv")
            for p, pts in (("M", 8), ("D", 6), ("D_prime", 6))
        ]
    return rows


def _inputs() -> list[dict]:
    """Every transcribed input beside the paper's text (:func:`sdsl.audit.paper.transcription`), and the
    inputs a reading takes otherwise."""
    from sdsl.audit.paper import transcription

    rows = []
    for r in transcription().itertuples(index=False):
        rows.append(_row(r.table, r.item, r.printed, r.transcribed, r.tolerance, "", f"data/{r.dataset}.csv", "input"))
        if r.table == "Table 7" and r.item in ("D high end", "D_prime high end"):
            rows.append(
                _row(
                    r.table,
                    r.item,
                    r.printed,
                    1e14,
                    r.tolerance,
                    GRID_1E14.chapter,
                    "scaling/table7.csv",
                    "input",
                    GRID_1E14.name,
                )
            )
        if r.table == "Table 5" and r.item == "Qwen1.5-14B D'":
            rows.append(
                _row(
                    r.table,
                    r.item,
                    r.printed,
                    4e12,
                    r.tolerance,
                    D_TARGET_4E12.chapter,
                    "optimal_draft/hypotheses_14b.csv",
                    "input",
                    D_TARGET_4E12.name,
                )
            )
    return rows


def _claims(root: Path, card: pd.DataFrame) -> list[dict]:
    computed = claim_values(root, card)
    rows = []
    for c in _data.load("paper_claims").itertuples(index=False):
        if c.claim not in computed:
            raise ValueError(f"data/paper_claims.csv: the scorecard does not know how to compute claim {c.claim!r}")
        value, detail = computed[c.claim]()
        table = c.source.replace(" caption", "")
        rows.append(
            _row(
                table,
                c.quote,
                c.value,
                value,
                0.0,
                c.chapter,
                "",
                "claim",
                detail=f"{c.quantity}: {detail}" if detail else c.quantity,
            )
        )
    return rows


def number_rows(root: Path | str) -> list[dict]:
    """The rows of every printed number of Tables 1 to 9 under the artifacts tree ``root``: the
    transcribed inputs first, then Tables 3, 4, 5, 6, 8 and 9 (every reading of each)."""
    root = Path(root)
    return [
        *_inputs(),
        *_table3(root),
        *_table4(root),
        *_table5(root),
        *_table6(root),
        *_table89(root, 8),
        *_table89(root, 9),
    ]


def claim_rows(root: Path | str, card: pd.DataFrame) -> list[dict]:
    """The rows of every claim of ``data/paper_claims.csv``, computed from the artifacts tree ``root``
    and ``card``, the judged rows of :func:`number_rows` (a claim about Table 3 or 4 reads their
    statuses)."""
    return _claims(Path(root), card)


# --- The checkable claims of the paper's figure captions, computed from the chapters' artifacts.

#: The latency metrics of Table 6.
LATENCY_METRICS = ("ttft", "ttot", "tpot")


def latency_claims(table6: pd.DataFrame) -> pd.DataFrame:
    """For each draft family with at least two drafts and each latency metric (TTFT, TTOT, TPOT):
    whether latency rises at every step to a draft farther from ``N*`` (``rises``) and whether the
    draft nearest ``N*`` is the fastest (``nearest_fastest``)."""
    rows = []
    for fam, g in table6.groupby("draft_family", sort=True):
        if len(g) < 2:
            continue
        g = g.sort_values("distance")
        for m in LATENCY_METRICS:
            if f"{m}_s" not in g.columns:
                raise ValueError(f"latency table lacks column {m + '_s'!r}")
            v = g[f"{m}_s"].to_numpy(dtype=float)
            rows.append(
                {
                    "draft_family": fam,
                    "metric": m.upper(),
                    "drafts": len(g),
                    "rises": bool(np.all(np.diff(v) > 0)),
                    "nearest_fastest": bool(v[0] == v.min()),
                }
            )
    return pd.DataFrame(rows, columns=["draft_family", "metric", "drafts", "rises", "nearest_fastest"])


def claim_values(root: Path, card: pd.DataFrame) -> dict[str, Callable[[], tuple[float, str]]]:
    """Per claim of ``data/paper_claims.csv``: how its share is computed, and a detail for the reader."""
    printed = card[card["reading"] == AS_PRINTED]

    def reproduced(table: str, pattern: str) -> tuple[float, str]:
        sub = printed[(printed["table"] == table) & printed["item"].str.contains(pattern)]
        ok = sub["status"].isin([EQUAL, WITHIN])
        return float(ok.mean()), f"{int(ok.sum())} of {len(sub)} reproduced"

    def latency(column: str) -> tuple[float, str]:
        table = latency_claims(
            _read(root, "latency/table6.csv", ("draft_family", "distance", "ttft_s", "ttot_s", "tpot_s"))
        )
        fails = ", ".join(
            f"{f} {m}" for f, m in table.loc[~table[column], ["draft_family", "metric"]].itertuples(index=False)
        )
        return float(table[column].mean()), (f"it fails for {fails}" if fails else "")

    def families() -> tuple[float, str]:
        fams = set(_read(root, "latency/table6.csv", ("draft_family",))["draft_family"])
        named = ("OPT", "Qwen1.5", "Qwen2.5")
        return float(np.mean([f in fams for f in named])), "Table 6 has " + ", ".join(sorted(fams)) + " drafts"

    def stars() -> tuple[float, str]:
        from sdsl.model.laws import BESIROGLU_2024, PAPER_EQ5
        from sdsl.model.optimum import throughput_curve

        t5, tol = _data.load("paper_table5"), _data.printed_tolerance("paper_table5")
        ours = _read(root, "optimal_draft/table5.csv", ("target", "draft_family", "tokens_per_flop"))
        best = ours.set_index(["target", "draft_family"])["tokens_per_flop"]
        ok = []
        for (_, p), (_, t) in zip(t5.iterrows(), tol.iterrows()):
            at = throughput_curve(
                np.array([p["n_star"]]), p["m"], p["d_draft"], p["d_target"], BESIROGLU_2024, PAPER_EQ5
            )
            top = float(best.loc[(p["target"], p["draft_family"])])
            ok.append(top - float(np.asarray(at["tokens_per_flop"])[0]) <= t["tokens_per_flop"])
        return float(np.mean(ok)), f"{sum(ok)} of {len(ok)} stars at their curve's maximum"

    def linear(threshold: float = 0.95) -> tuple[float, str]:
        sol = _read(root, "scaling/grid_solution.csv", ("m", "d_draft", "d_target", "n_star"))
        r2, worst = [], 0.0
        for _, g in sol.groupby(["d_draft", "d_target"]):
            fit = np.polyfit(g["m"], g["n_star"], 1)
            resid = g["n_star"] - np.polyval(fit, g["m"])
            r2.append(1.0 - float(np.sum(resid**2) / np.sum((g["n_star"] - g["n_star"].mean()) ** 2)))
            worst = max(worst, float(np.max(np.abs(resid) / g["n_star"])))
        eff = _read(root, "scaling/data_effects.csv", ("factor", "elasticity_median")).set_index("factor")
        return (
            float(np.mean(np.asarray(r2) >= threshold)),
            f"R^2 {min(r2):.3f} to {max(r2):.3f}; the line bends (d ln N*/d ln M = "
            f"{eff.loc['M', 'elasticity_median']:.2f}, largest residual {100 * worst:.0f} % of N*)",
        )

    def second_order() -> tuple[float, str]:
        eff = _read(root, "scaling/data_effects.csv", ("factor", "change_min", "change_max")).set_index("factor")
        m_min = float(eff.loc["M", "change_min"])
        big = {f: float(max(abs(eff.loc[f, "change_min"]), abs(eff.loc[f, "change_max"]))) for f in ("D", "D'")}
        return (
            float(np.mean([v < m_min for v in big.values()])),
            f"N* changes by at most {100 * big['D']:.1f} % over D and {100 * big[chr(68) + chr(39)]:.2f} % over D', "
            f"by at least {100 * m_min:.0f} % over M",
        )

    return {
        "latency_rises_with_distance": lambda: latency("rises"),
        "nearest_draft_fastest": lambda: latency("nearest_fastest"),
        "fig1_least_squares_plane": lambda: reproduced("Table 3", r"^[ABC] estimate$"),
        "fig2_stars_at_maximum": stars,
        "fig3_curves_are_table4": lambda: reproduced("Table 4", r" p[12]$"),
        "fig4_families": families,
        "fig5_linear_in_m": linear,
        "fig5_data_second_order": second_order,
    }

"""How the book shows each chapter's tables: the headers (with units), the precision of each column,
the columns of long text to wrap. One entry per (chapter, table) in :data:`VIEWS`, rendered by
:func:`view` through :func:`sdsl.book.tables.show`; the CSV of a table keeps every column at full
precision, and the download link beside the table points to it.

Units: parameters, tokens, seconds, tokens per FLOP; perplexity, the acceptance rate and the
regression coefficients are dimensionless. A relative deviation reads ``ours / paper − 1``.

:class:`Publisher` is a notebook's one publishing call: it writes a result as the artifact its
function declared (:func:`sdsl.book.outputs.declare`) and shows it through its view. The plan
chapter's tables have view functions of their own (:func:`view_plan` and the others at the end).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from sdsl.book.outputs import Item, declared, downloads, save_figure, save_table
from sdsl.book.tables import DASH, show

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Publisher",
    "VIEWS",
    "view",
    "variants_side_by_side",
    "FigureFiles",
    "figure",
    "view_columns",
    "view_plan",
    "view_candidates",
    "view_interval",
    "view_sensitivity",
    "view_table5_check",
    "view_lookup",
]


def _fmt(spec: str) -> Callable[[Any], str]:
    """A cell formatter with Python format ``spec``; a dash for a missing value."""

    def f(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return DASH
        return format(v, spec)

    return f


_PCT, _PCT3, _INT, _ONE, _E2 = _fmt("+.2%"), _fmt("+.3%"), _fmt(",.0f"), _fmt(",.1f"), _fmt("+.2e")


def _per_1e11(digits: int) -> Callable[[Any], str]:
    """Throughput in units of 1e-11 tokens per FLOP (the scale of Table 5), ``digits`` significant."""
    return lambda v: DASH if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * 1e11:.{digits}g}"


_SCI3, _SCI4, _G6, _F6, _G3 = _fmt(".3e"), _fmt(".4e"), _fmt(".6g"), _fmt(".6f"), _fmt(".3g")
#: Axes of the scaling grid and the coefficients of Tables 8 and 9, as a reader says them.
_AXIS = {
    "N": "N, draft size (parameters)",
    "M": "M, target size (parameters)",
    "D": "D, draft tokens",
    "D_prime": "D′, target tokens",
    "D'": "D′, target tokens",
}
_COEF = {"mu": "μ", "M0": "M₀ (parameters)", "g": "g (of ln D)", "g_prime": "g′ (of ln D′)"}
_METRIC = {"r2": "R²", "adj_r2": "adjusted R²", "observations": "observations"}
#: Names of the quantities of a coefficient table, as a reader says them.
_QUANTITY = {
    "estimate": "estimate",
    "std_error": "standard error",
    "moe": "margin of error (95 %)",
    "ci_lower": "CI lower (95 %)",
    "ci_upper": "CI upper (95 %)",
    "mse": "MSE",
    "r2": "R²",
    "n": "observations",
}

#: Keyword arguments of :func:`sdsl.book.tables.show` per chapter and table name.
VIEWS: dict[str, dict[str, dict[str, Any]]] = {
    "acceptance": {
        "table3": {
            "formats": {"quantity": lambda q: _QUANTITY.get(q, q), "paper": _G6, "refit": _G6, "difference": _G6},
            "columns": {
                "parameter": "parameter",
                "quantity": "quantity",
                "paper": "paper (Table 3)",
                "refit": "our refit",
                "difference": "refit − paper",
            },
        },
        "table3_implied_df": {
            "digits": 7,
            "columns": {
                "parameter": "parameter",
                "ratio": "MoE / SE as printed",
                "ratio_low": "lowest ratio the digits allow",
                "ratio_high": "highest ratio the digits allow",
                "df_min": "fewest residual df",
                "df_max": "most residual df",
            },
        },
        "eq5_coefficients": {
            "digits": 6,
            "columns": {"parameter": "parameter", "estimate": "estimate", "source": "source"},
        },
        "table4": {
            "formats": {c: _F6 for c in ("p1", "moe1", "p2", "moe2", "mse", "r2")},
            "columns": {
                "target": "target",
                "function": "form",
                "p1": "p₁",
                "moe1": "MoE p₁",
                "ci1": "95 % CI p₁",
                "p2": "p₂",
                "moe2": "MoE p₂",
                "ci2": "95 % CI p₂",
                "mse": "MSE",
                "r2": "R²",
                "n": "drafts",
            },
        },
        "table4_agreement": {
            "digits": 3,
            "columns": {
                "target": "target",
                "function": "form",
                "printed": "printed numbers",
                "equal": "equal to every printed digit",
                "max_last_digits": "largest deviation (last printed digits)",
            },
        },
        "table4_vs_paper": {
            "digits": 6,
            "columns": {
                "target": "target",
                "function": "form",
                "quantity": "quantity",
                "ours": "ours",
                "paper": "paper",
                "last_digits": "deviation (last printed digits)",
            },
        },
    },
    "optimal_draft": {
        "gamma_check": {
            "digits": {"alpha": 4, "m_over_n": 3, "gamma_closed": 7, "gamma_brute": 7, "abs_diff": 2, "t_rel_diff": 2},
            "formats": {"n": _SCI3, "m": _SCI4},
            "columns": {
                "alpha": "α",
                "n": "N (parameters)",
                "m": "M (parameters)",
                "m_over_n": "M / N",
                "gamma_closed": "γ* closed form",
                "gamma_brute": "γ* on the grid",
                "abs_diff": "|difference|",
                "t_rel_diff": "T(closed) / T(grid) − 1",
            },
        },
        "table5": {
            "digits": {"gamma_star": 4, "alpha": 4},
            "formats": {
                "n_star": _ONE,
                "paper_n_star": _ONE,
                "n_star_rel_dev": _E2,
                "tokens_per_flop_rel_dev": _E2,
                "tokens_per_flop": _per_1e11(5),
                "paper_tokens_per_flop": _per_1e11(4),
            },
            "columns": {
                "target": "target",
                "draft_family": "draft family",
                "n_star": "N* (parameters)",
                "paper_n_star": "paper N* (parameters)",
                "n_star_rel_dev": "N* / paper − 1",
                "gamma_star": "γ* (tokens)",
                "alpha": "α at N*",
                "tokens_per_flop": "T(N*) (10⁻¹¹ tokens per FLOP)",
                "paper_tokens_per_flop": "paper T(N*) (10⁻¹¹ tokens per FLOP)",
                "tokens_per_flop_rel_dev": "T / paper − 1",
            },
        },
        "hypotheses_14b": {
            "digits": 2,
            "columns": {
                "hypothesis": "hypothesis",
                "max_abs_n_dev": "largest |N* / paper − 1|",
                "max_abs_t_dev": "largest |T / paper − 1|",
                "t_every_digit": "T(N*) equal to every printed digit",
            },
        },
        "implied_d_target": {
            "formats": {"d_target_printed": _SCI3, "d_target_implied": _fmt(".5e")},
            "columns": {
                "target": "target",
                "draft_family": "draft family",
                "d_target_printed": "D′ printed (tokens)",
                "d_target_implied": "D′ that gives the printed N* (tokens)",
            },
        },
        "speedup": {
            "digits": {"gamma_star": 3, "alpha": 4, "speedup": 4},
            "formats": {"m": _INT, "n_star": _INT, "tokens_per_flop": _per_1e11(4)},
            "columns": {
                "target": "target",
                "draft_family": "draft family",
                "m": "M (parameters)",
                "n_star": "N* (parameters)",
                "gamma_star": "γ* (tokens)",
                "alpha": "α at N*",
                "tokens_per_flop": "T(N*) (10⁻¹¹ tokens per FLOP)",
                "speedup": "T(N*) · 2M (× plain decoding)",
            },
        },
    },
    "latency": {
        "table6": {
            "formats": {
                "n": _INT,
                "n_star": _INT,
                "distance": _fmt(".6f"),
                "paper_distance": _fmt(".4g"),
                "distance_diff": _fmt("+.1e"),
            },
            "columns": {
                "draft": "draft",
                "draft_family": "draft family",
                "n": "N (parameters)",
                "n_star": "N* (parameters)",
                "paper_n_star_printed": "paper N*",
                "distance": "|N − N*| / M",
                "paper_distance": "paper |N − N*| / M",
                "distance_diff": "ours − paper",
                "ttft": "TTFT (s)",
                "ttot": "TTOT (s)",
                "tpot": "TPOT (s)",
            },
        },
        "rank_correlations": {
            "digits": 3,
            "formats": {"min_p": _fmt(".3f"), "noise_p_positive": _fmt(".0%")},
            "columns": {
                "scope": "drafts",
                "metric": "metric",
                "n": "n",
                "spearman": "Spearman ρ",
                "spearman_p": "exact p (ρ)",
                "kendall": "Kendall τ",
                "kendall_p": "exact p (τ)",
                "min_p": "smallest possible p",
                "boot": "bootstrap 95 % interval of ρ",
                "noise": "ρ under measurement noise (95 %)",
                "noise_p_positive": "share of ρ > 0 under noise",
            },
        },
        "stratified_trend_test": {
            "digits": 3,
            "columns": {
                "metric": "metric",
                "s": "Kendall S within families",
                "pairs": "within-family pairs",
                "permutations": "within-family permutations",
                "p": "exact p",
            },
        },
    },
    "scaling": {
        "table7": {
            "formats": {
                "parameter": lambda p: _AXIS.get(p, p),
                "low": _G3,
                "high": _G3,
                "paper_low": _G3,
                "paper_high": _G3,
            },
            "columns": {
                "parameter": "axis",
                "low": "low",
                "high": "high",
                "points": "points",
                "spacing": "spacing",
                "paper_low": "paper low",
                "paper_high": "paper high",
                "paper_points": "paper points",
                "as_printed": "as printed",
            },
        },
        "grid_check": {
            "formats": {
                "m": _G3,
                "d_draft": _G3,
                "d_target": _G3,
                "n_star": _ONE,
                "n_star_scalar": _ONE,
                "rel_diff": _fmt("+.1e"),
            },
            "columns": {
                "m": "M (parameters)",
                "d_draft": "D (tokens)",
                "d_target": "D′ (tokens)",
                "n_star": "N* on the grid (parameters)",
                "n_star_scalar": "N* scalar (parameters)",
                "rel_diff": "grid / scalar − 1",
            },
        },
        "coefficients": {
            "formats": {
                "parameter": lambda p: _COEF.get(p, p),
                "estimate": _SCI3,
                "moe": _SCI3,
                "paper_estimate": _SCI3,
                "paper_moe": _SCI3,
                "rel_deviation": _PCT,
                "deviation_in_moe": _fmt("+.3f"),
            },
            "columns": {
                "parameter": "coefficient",
                "estimate": "ours",
                "moe": "MoE (95 %)",
                "ci": "95 % CI",
                "paper_estimate": "paper",
                "paper_moe": "paper MoE",
                "paper_ci": "paper 95 % CI",
                "rel_deviation": "ours / paper − 1",
                "deviation_in_moe": "(ours − paper) / paper MoE",
                "paper_in_our_ci": "paper in our CI",
                "ours_in_paper_ci": "ours in paper CI",
                "printed_digits_equal": "every printed digit",
            },
        },
        "fit_metrics": {
            "digits": 5,
            "formats": {"metric": lambda m: _METRIC.get(m, m)},
            "columns": {
                "table": "table",
                "metric": "metric",
                "ours": "ours",
                "paper": "paper",
                "difference": "ours − paper",
            },
        },
        "variants": {
            "formats": {
                "parameter": lambda p: _COEF.get(p, p),
                "d_high": _G3,
                "estimate": _SCI3,
                "paper_estimate": _SCI3,
                "moe": _SCI3,
                "paper_moe": _SCI3,
                "rel_deviation": _PCT,
            },
            "digits": {"r2": 4},
            "columns": {
                "spacing": "spacing of M, D, D′",
                "d_high": "upper end of D, D′ (tokens)",
                "table": "table",
                "parameter": "coefficient",
                "estimate": "ours",
                "paper_estimate": "paper",
                "rel_deviation": "ours / paper − 1",
                "moe": "MoE",
                "paper_moe": "paper MoE",
                "paper_in_our_ci": "paper in our CI",
                "ours_in_paper_ci": "ours in paper CI",
                "r2": "R²",
            },
        },
        "variants_n_grid": {
            "formats": {"d_high": _G3, "estimate": _SCI3, "paper_estimate": _SCI3, "rel_deviation": _PCT},
            "columns": {
                "d_high": "upper end of D, D′ (tokens)",
                "n_spacing": "spacing of N",
                "refined": "refined",
                "estimate": "g (ours)",
                "paper_estimate": "g (paper)",
                "rel_deviation": "ours / paper − 1",
                "paper_in_our_ci": "paper in our CI",
                "ours_in_paper_ci": "ours in paper CI",
            },
        },
        "size_ratio": {
            "formats": {"m": _G3},
            "digits": 4,
            "columns": {
                "m": "target size M (parameters)",
                "min": "smallest M / N*",
                "median": "median M / N*",
                "max": "largest M / N*",
            },
        },
        "data_effects": {
            "formats": {
                "factor": lambda f: _AXIS.get(f, f),
                "low": _G3,
                "high": _G3,
                **{c: _PCT for c in ("change_min", "change_median", "change_max")},
            },
            "digits": 4,
            "columns": {
                "factor": "axis",
                "low": "from",
                "high": "to",
                "change_min": "N* change, least",
                "change_median": "N* change, median",
                "change_max": "N* change, most",
                "elasticity_min": "d ln N* / d ln x, least",
                "elasticity_median": "d ln N* / d ln x, median",
                "elasticity_max": "d ln N* / d ln x, most",
            },
        },
    },
}
# Table 5 with every input as printed, beside the chapter's reading: the same columns
VIEWS["optimal_draft"]["table5_as_printed"] = VIEWS["optimal_draft"]["table5"]


def variants_side_by_side(var: pd.DataFrame) -> pd.DataFrame:
    """The ``optimal_draft`` table ``variants`` as one row per (target, draft family) and one column
    per variant: ``N*`` and its deviation from the paper, e.g. ``n_star besiroglu2024 continuous``."""
    v = var.assign(gamma=np.where(var["integer"], "integer", "continuous"))
    wide = v.pivot_table(
        index=["target", "draft_family"],
        columns=["constants", "gamma"],
        values=["n_star", "n_star_rel_dev"],
        sort=False,
    )
    wide.columns = [" ".join(c) for c in wide.columns]
    return wide.reset_index()


def _special(chapter: str, name: str, table: pd.DataFrame):
    if chapter == "acceptance" and name in ("table1", "table2", "measurements"):
        drafts = {c: c for c in table.columns if c not in ("target", "target_ppl")}
        return show(table, columns={"target": "target", "target_ppl": "target perplexity", **drafts}, digits=10)
    if chapter == "acceptance" and name == "table4":  # the paper's layout: each interval in one cell
        ci = {
            k: [f"[{lo:.6f}, {hi:.6f}]" for lo, hi in zip(table[f"{k}_lower"], table[f"{k}_upper"])]
            for k in ("ci1", "ci2")
        }
        return show(table.assign(**ci), **VIEWS[chapter][name])
    if chapter == "latency" and name == "table6":  # latencies as the paper prints them: mean ± MoE
        lat = {
            k: [f"{m:.4g} ± {e:.3g}" for m, e in zip(table[f"{k}_s"], table[f"{k}_moe_s"])]
            for k in ("ttft", "ttot", "tpot")
        }
        return show(table.assign(**lat), **VIEWS[chapter][name])
    if chapter == "latency" and name == "rank_correlations":
        iv = {
            k: [DASH if np.isnan(lo) else f"[{lo:.2f}, {hi:.2f}]" for lo, hi in zip(table[f"{k}_lo"], table[f"{k}_hi"])]
            for k in ("boot", "noise")
        }
        return show(table.assign(**iv), **VIEWS[chapter][name])
    if chapter == "scaling" and name in ("table8", "table9"):
        ci = {
            k: [f"[{lo:.3e}, {hi:.3e}]" for lo, hi in zip(table[f"{p}ci_lower"], table[f"{p}ci_upper"])]
            for k, p in (("ci", ""), ("paper_ci", "paper_"))
        }
        return show(table.assign(**ci), **VIEWS[chapter]["coefficients"])
    if chapter == "optimal_draft" and name == "variants":
        wide = variants_side_by_side(table)
        cols = {"target": "target", "draft_family": "draft family"}
        for c in wide.columns[2:]:
            what, const, gamma = c.split(" ")
            cols[c] = f"{'N* (parameters)' if what == 'n_star' else 'N* / paper − 1'}, {const}, {gamma} γ"
        return show(
            wide, columns=cols, formats={c: (_INT if c.startswith("n_star ") else _PCT) for c in wide.columns[2:]}
        )
    return None


def view(chapter: str, name: str, table: pd.DataFrame):
    """``table`` (artifact ``name`` of ``chapter``) as the book shows it: a pandas ``Styler`` from
    :func:`sdsl.book.tables.show` with the arguments of :data:`VIEWS`. Raises ``ValueError`` for a
    table without a view, or a view naming a column the table lacks."""
    special = _special(chapter, name, table)
    if special is not None:
        return special
    known = VIEWS.get(chapter, {})
    if name not in known:
        raise ValueError(f"no view of table {name!r} of chapter {chapter!r}; views: {sorted(known)}")
    return show(table, **known[name])


class FigureFiles:
    """A saved figure as the notebook displays it: its SVG (what the book renders) and its PNG (what
    a notebook viewer without SVG shows), both read from the files :func:`sdsl.book.outputs.save_figure`
    wrote, so that the page shows exactly the published files. Its text form names the figure (never
    ``<Figure size ...>``)."""

    def __init__(self, svg: str | os.PathLike, png: str | os.PathLike) -> None:
        self.svg, self.png = Path(svg), Path(png)
        for p, kind in ((self.svg, ".svg"), (self.png, ".png")):
            if p.suffix != kind or not p.is_file():
                raise ValueError(f"figure file must be an existing {kind} file, got {str(p)!r}")

    def _repr_svg_(self) -> str:
        return self.svg.read_text(encoding="utf-8")

    def _repr_png_(self) -> bytes:
        return self.png.read_bytes()

    def __repr__(self) -> str:
        return f"Figure {self.svg.stem}"


def figure(paths: Sequence[str | os.PathLike]) -> FigureFiles:
    """The figure written by :func:`sdsl.book.outputs.save_figure` (its returned ``paths``: SVG, PNG,
    then the data CSV), for display: ``figure(save_figure(fig, ...))`` as a cell's last line."""
    if len(paths) < 2:
        raise ValueError(f"paths must be save_figure's (SVG, PNG[, data CSV]), got {len(paths)} path(s)")
    return FigureFiles(paths[0], paths[1])


# --- How the plan chapter (``notebooks/plan_draft.md``, :mod:`sdsl.chapters.plan_draft`) shows its


def view_columns(df: pd.DataFrame, columns: dict[str, str], **kw):
    """:func:`sdsl.book.tables.show` of the ``columns`` that ``df`` has (a rerun without bootstrap
    has no interval columns)."""
    from sdsl.book.tables import show

    return show(df, columns={k: v for k, v in columns.items() if k in df.columns}, **kw)


def view_plan(table: pd.DataFrame):
    """The plan (:func:`sdsl.plan.plan_table`) as the reader sees it."""
    return view_columns(
        table,
        {
            "target": "target",
            "d_draft": "D (tokens)",
            "n_star": "N* (parameters)",
            "gamma_star": "γ* (tokens)",
            "alpha": "α at N*",
            "tokens_per_flop": "T(N*) (tokens per FLOP)",
            "speedup": "speedup (×)",
        },
    )


def view_candidates(candidates: pd.DataFrame):
    """The candidate drafts (:func:`sdsl.chapters.plan_draft.candidates_table`) as the reader sees
    them."""
    return view_columns(
        candidates,
        {
            "candidate": "candidate",
            "params": "N (parameters)",
            "d_draft": "D (tokens)",
            "alpha": "α",
            "gamma": "γ* (tokens)",
            "tokens_per_flop": "T(N) (tokens per FLOP)",
            "speedup": "speedup (×)",
            "share_of_optimum": "T(N) / T(N*)",
        },
    )


def view_interval(table: pd.DataFrame):
    """``N*`` and its bootstrap interval, per ``D``, as the reader sees them."""
    return view_columns(
        table,
        {
            "d_draft": "D (tokens)",
            "n_star": "N* (parameters)",
            "n_star_ci_low": "2.5 % (parameters)",
            "n_star_ci_high": "97.5 % (parameters)",
            "bootstrap_draws": "draws",
            "bootstrap_dropped": "dropped",
        },
    )


def view_sensitivity(sensitivity: pd.DataFrame):
    """:func:`sdsl.plan.covariance_sensitivity` as the reader sees it."""
    return view_columns(
        sensitivity,
        {
            "covariance": "covariance",
            "n_star": "N* (parameters)",
            "n_star_ci_low": "2.5 % (parameters)",
            "n_star_ci_high": "97.5 % (parameters)",
            "relative_width": "interval width / N*",
        },
    )


def view_table5_check(check: pd.DataFrame):
    """:func:`sdsl.chapters.plan_draft.table5_check` as the reader sees it: ``N*`` to every printed
    digit, deviations in scientific notation."""
    dev = lambda v: f"{v:+.2e}"  # noqa: E731
    return view_columns(
        check,
        {
            "target": "target",
            "draft_family": "drafts",
            "reading": "reading",
            "d_target": "D' (tokens)",
            "n_star_paper": "N* paper (parameters)",
            "n_star_ours": "N* ours (parameters)",
            "n_star_rel_dev": "N* deviation",
            "tpf_paper": "T(N*) paper (tokens per FLOP)",
            "tpf_ours": "T(N*) ours (tokens per FLOP)",
            "tpf_rel_dev": "T(N*) deviation",
        },
        formats={
            "n_star_paper": lambda v: f"{v:,.1f}",
            "n_star_ours": lambda v: f"{v:,.1f}",
            "n_star_rel_dev": dev,
            "tpf_rel_dev": dev,
        },
    )


def view_lookup(table: pd.DataFrame):
    """:func:`sdsl.chapters.plan_draft.lookup` as the reader sees it: refused and unknown rows keep
    their reason."""
    import pandas as pd

    t = table.copy()
    t["status"] = [s if s != "planned" else "" for s in t["status"]]
    t["note"] = [" ".join(x for x in (s, n) if isinstance(x, str) and x) for s, n in zip(t["status"], t["note"])]
    t["gamma_star_integer"] = t["gamma_star_integer"].astype("Int64")

    def scaled(unit: float, digits: int = 3):
        return lambda v: "–" if pd.isna(v) else f"{v / unit:.{digits}g}"

    return view_columns(
        t,
        {
            "model": "target",
            "params": "M (billion parameters)",
            "tokens": "D' (trillion tokens)",
            "draft_tokens": "D (trillion tokens)",
            "n_star": "N* (million parameters)",
            "m_over_n_star": "M / N*",
            "gamma_star_continuous": "γ* continuous (tokens)",
            "gamma_star_integer": "γ* integer (tokens)",
            "alpha": "α at N*",
            "tokens_per_flop_ratio": "T(N*)·2M (over plain decoding)",
            "gpus": "devices",
            "wall_clock_speedup": "wall-clock speedup (×)",
            "note": "note",
        },
        digits={
            "m_over_n_star": 3,
            "gamma_star_continuous": 3,
            "alpha": 3,
            "tokens_per_flop_ratio": 3,
            "wall_clock_speedup": 3,
        },
        formats={
            "params": scaled(1e9),
            "tokens": scaled(1e12, 2),
            "draft_tokens": scaled(1e12, 2),
            "n_star": scaled(1e6),
            "gamma_star_integer": lambda v: "–" if pd.isna(v) else str(int(v)),
            "gpus": lambda v: "–" if pd.isna(v) else str(int(v)),
        },
        wrap=["note"],
    )


class _Shown:
    """A published table as a cell shows it: the book's view of it, then its download links."""

    def __init__(self, table: Any, links: Any) -> None:
        self.table, self.links = table, links

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.table, self.links)

    def __repr__(self) -> str:
        return f"table with {self.links.data}"


class Publisher:
    """A chapter's publishing call: ``publish = Publisher(CHAPTER, artifacts_dir)`` once in a
    notebook, then ``publish(result)`` for each table or figure.

    ``publish(table)`` writes the artifact the table's function declared (:func:`declare`) and
    returns what the cell shows: the book's view of it (:func:`sdsl.book.views.view`) and its
    download links; a table declared ``shown=False`` is written and nothing is shown.
    ``publish(fig, data=frame)`` writes the figure's SVG, PNG and the numbers plotted and returns
    the figure as the page shows it (:class:`sdsl.book.views.FigureFiles`); its download links
    come from :meth:`downloads` in the next cell (the figure's cell holds the figure alone, for its
    caption). ``name`` picks one of a function's declared artifacts, or names the artifact of a
    result that is not a declared function's own (a column of a run, a filtered table); it must be
    one of the chapter's declared artifacts.
    """

    def __init__(self, chapter: str, artifacts_dir: str | os.PathLike | None = None) -> None:
        self.chapter, self.artifacts_dir = chapter, artifacts_dir
        self.last: str | None = None

    def _artifacts(self) -> dict[str, Item]:
        known: dict[str, Item] = {}
        for i in declared():
            if i.chapter == self.chapter:
                for a in i.artifacts:
                    known.setdefault(a, i)
        return known

    def artifact(self, obj: Any, name: str | None = None) -> tuple[str, Item]:
        """The artifact ``obj`` is published as, and its declaration; ``ValueError`` naming what is
        wrong when ``name`` is not declared by the chapter or ``obj`` carries no single declaration."""
        known = self._artifacts()
        keys = obj.attrs.get("sdsl_items", ()) if isinstance(obj, pd.DataFrame) else getattr(obj, "sdsl_items", ())
        mine = [i for i in declared() if i.key in keys and i.chapter == self.chapter]
        if name is not None:
            if name not in known:
                raise ValueError(
                    f"publish: {name!r} is not an artifact the chapter {self.chapter!r} declares; "
                    f"declared: {', '.join(sorted(known))}"
                )
            return name, known[name]
        if len(mine) != 1:
            made = f"declarations {', '.join(keys)}" if keys else "no declared function"
            raise ValueError(
                f"publish: this {type(obj).__name__} comes from {made} of chapter {self.chapter!r}: "
                f"give name=, one of {', '.join(sorted(known))}"
            )
        return mine[0].artifacts[0], mine[0]

    def __call__(self, obj: Any, name: str | None = None, *, data: pd.DataFrame | None = None) -> Any:
        """Write ``obj`` as its declared artifact and return what the cell shows (see the class)."""
        artifact, item = self.artifact(obj, name)
        self.last = artifact
        if isinstance(obj, Figure):
            paths = save_figure(obj, self.chapter, artifact, self.artifacts_dir, data=data)
            return FigureFiles(paths[0], paths[1])
        if not isinstance(obj, pd.DataFrame):
            raise ValueError(
                f"publish: {artifact} must be a DataFrame or a matplotlib Figure, got {type(obj).__name__}"
            )
        if data is not None:
            raise ValueError(f"publish: data= is for figures; {artifact} is a table")
        if not item.shown:
            raise ValueError(f"publish: {item.key} is declared shown=False: write it with publish.save")
        save_table(obj, self.chapter, artifact, self.artifacts_dir)
        return _Shown(view(self.chapter, artifact, obj), self.downloads(artifact))

    def save(self, obj: Any, name: str | None = None) -> None:
        """Write ``obj`` as its declared artifact (as :meth:`__call__` does) and show nothing: for
        an artifact written for download only, or one the cell shows in a view of its own."""
        artifact, _ = self.artifact(obj, name)
        self.last = artifact
        if not isinstance(obj, pd.DataFrame):
            raise ValueError(f"publish.save: {artifact} must be a DataFrame, got {type(obj).__name__}")
        save_table(obj, self.chapter, artifact, self.artifacts_dir)

    def downloads(self, name: str | None = None) -> Any:
        """The download links of artifact ``name`` (default: the one published last)."""
        name = name or self.last
        if name is None:
            raise ValueError("publish.downloads: nothing has been published yet; give the artifact's name")
        return downloads(self.chapter, name, self.artifacts_dir)

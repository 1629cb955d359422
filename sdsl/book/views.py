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
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from sdsl.book.outputs import Item, declared, downloads, save_figure, save_table
from sdsl.book.tables import DASH, Table, as_printed, count, expect, number, reader_text, reader_words, show

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
    "caption_of",
]


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _num(digits: int = 4, sign: bool = False) -> Callable[[Any], str]:
    """A cell formatter: :func:`sdsl.book.tables.number` at ``digits`` significant digits, with a
    plus sign on a positive number when ``sign``."""

    def f(v: Any) -> str:
        if _missing(v):
            return DASH
        text = number(v, digits)
        return "+" + text if sign and isinstance(v, (int, float, np.number)) and float(v) > 0 else text

    return f


def _pct(digits: int = 3, sign: bool = True) -> Callable[[Any], str]:
    """A share as a percentage at ``digits`` significant digits (``+1.56 %``)."""

    def f(v: Any) -> str:
        if _missing(v):
            return DASH
        text = number(100 * float(v), digits)
        return ("+" + text if sign and float(v) > 0 else text) + " %"

    return f


def _size(digits: int = 4, zeros: bool = False) -> Callable[[Any], str]:
    """A count of parameters or tokens (``124M``, ``15T``); with ``zeros``, trailing zeros kept
    (``4.000T``), for a column whose digits are compared."""

    def f(v: Any) -> str:
        if _missing(v):
            return DASH
        if not zeros:
            return count(v, digits)
        x = float(v)
        for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
            if abs(x) >= div:
                return f"{x / div:#.{digits}g}".rstrip(".") + suffix
        return number(x, digits)

    return f


def _interval(lo: Any, hi: Any, digits: int = 3) -> str:
    """``[lo, hi]`` at ``digits`` significant digits; a dash when missing."""
    if _missing(lo) or _missing(hi):
        return DASH
    return f"[{number(lo, digits)}, {number(hi, digits)}]"


_DEV, _DEV2, _PCT, _N4, _N3, _SIZE = _num(3, True), _num(2, True), _pct(3), _num(4), _num(3), _size()
_YESNO = {"yes": "yes", "no": "no", True: "yes", False: "no"}
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
_CONSTANTS = {"besiroglu2024": "Besiroglu", "hoffmann2022": "Hoffmann"}

#: Keyword arguments of :func:`sdsl.book.tables.show` per chapter and table name. The columns are
#: in the order of their weight for the reader: those that do not fit the text column are left to
#: the CSV (and named under the table).
VIEWS: dict[str, dict[str, dict[str, Any]]] = {
    "acceptance": {
        "table3": {
            "formats": {"quantity": lambda q: _QUANTITY.get(q, q), "paper": _N4, "refit": _N4, "difference": _DEV},
            "columns": {
                "parameter": "parameter",
                "quantity": "quantity",
                "paper": "paper (Table 3)",
                "refit": "our refit",
                "difference": "refit − paper",
            },
        },
        "table3_implied_df": {
            "formats": {"ratio": _N4},
            "columns": {
                "parameter": "parameter",
                "ratio": "MoE / SE as printed",
                "df_min": "fewest residual degrees of freedom",
                "df_max": "most residual degrees of freedom",
            },
        },
        "eq5_coefficients": {
            "columns": {"parameter": "parameter", "estimate": "estimate", "source": "source"},
        },
        "table4": {
            "formats": {"p1": _N4, "p2": _N4, "mse": _N3, "r2": _N4, "moe1": _N3, "moe2": _N3},
            "columns": {
                "target": "target",
                "function": "form",
                "p1": "p₁",
                "moe1": "± p₁ (95 %)",
                "p2": "p₂",
                "moe2": "± p₂ (95 %)",
                "r2": "R²",
                "mse": "MSE",
                "ci1": "95 % CI p₁",
                "ci2": "95 % CI p₂",
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
                "max_last_digits": "largest deviation (units of the last printed digit)",
            },
        },
        "table4_vs_paper": {
            "columns": {
                "target": "target",
                "function": "form",
                "quantity": "quantity",
                "ours": "ours",
                "paper": "paper",
                "last_digits": "deviation (units of the last printed digit)",
            },
        },
    },
    "optimal_draft": {
        "gamma_check": {
            "formats": {
                "alpha": _N4,
                "n": _SIZE,
                "m": _SIZE,
                "m_over_n": _N3,
                "gamma_closed": _N4,
                "gamma_brute": _N4,
                "abs_diff": _num(2),
                "t_rel_diff": _num(2),
            },
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
            "formats": {
                "n_star": _SIZE,
                "paper_n_star": _SIZE,
                "n_star_rel_dev": _DEV,
                "tokens_per_flop_rel_dev": _DEV,
                "tokens_per_flop": _num(4),
                "paper_tokens_per_flop": _num(4),
                "gamma_star": _N4,
                "alpha": _N4,
            },
            "columns": {
                "target": "target",
                "draft_family": "draft family",
                "n_star": "N* (parameters)",
                "paper_n_star": "paper N*",
                "n_star_rel_dev": "N* / paper − 1",
                "tokens_per_flop": "T(N*) (tokens per FLOP)",
                "paper_tokens_per_flop": "paper T(N*)",
                "tokens_per_flop_rel_dev": "T / paper − 1",
                "gamma_star": "γ* (tokens)",
                "alpha": "α at N*",
            },
        },
        "hypotheses_14b": {
            "digits": 2,
            "formats": {"hypothesis": lambda h: as_printed(reader_text(str(h)))},
            "columns": {
                "hypothesis": "hypothesis",
                "max_abs_n_dev": "largest |N* / paper − 1|",
                "max_abs_t_dev": "largest |T / paper − 1|",
                "t_every_digit": "T(N*) equal to every printed digit",
            },
        },
        "implied_d_target": {
            "formats": {"d_target_printed": _SIZE, "d_target_implied": _size(4, zeros=True)},
            "columns": {
                "target": "target",
                "draft_family": "draft family",
                "d_target_printed": "D′ printed (tokens)",
                "d_target_implied": "D′ that gives the printed N* (tokens)",
            },
        },
        "flop_gain": {
            "formats": {
                "m": _SIZE,
                "n_star": _SIZE,
                "gamma_star": _N3,
                "alpha": _N4,
                "tokens_per_flop": _N4,
                "speedup": _N4,
            },
            "columns": {
                "target": "target",
                "draft_family": "draft family",
                "speedup": "tokens per FLOP over plain decoding (×)",
                "m": "M (parameters)",
                "n_star": "N* (parameters)",
                "gamma_star": "γ* (tokens)",
                "alpha": "α at N*",
                "tokens_per_flop": "T(N*) (tokens per FLOP)",
            },
        },
    },
    "latency": {
        "table6": {
            "formats": {
                "n": _SIZE,
                "n_star": _SIZE,
                "distance": _N4,
                "paper_distance": _N4,
                "distance_diff": _num(2, True),
            },
            "columns": {
                "draft": "draft",
                "n": "N (parameters)",
                "n_star": "N* (parameters)",
                "distance": "|N − N*| / M",
                "paper_distance": "paper |N − N*| / M",
                "distance_diff": "ours − paper",
            },
        },
        "table6_latency": {
            "columns": {
                "draft": "draft",
                "draft_family": "draft family",
                "ttft": "TTFT (s)",
                "ttot": "TTOT (s)",
                "tpot": "TPOT (s)",
            },
        },
        "rank_correlations": {
            "digits": 3,
            "formats": {"min_p": _N3, "noise_p_positive": _pct(2, sign=False)},
            "columns": {
                "scope": "drafts",
                "metric": "metric",
                "n": "n",
                "spearman": "Spearman ρ",
                "spearman_p": "exact p",
                "boot": "bootstrap 95 % interval of ρ",
                "noise": "ρ under measurement noise (95 %)",
                "noise_p_positive": "share of ρ > 0 under noise",
                "kendall": "Kendall τ",
                "kendall_p": "exact p (τ)",
                "min_p": "smallest possible p",
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
                "low": _num(3),
                "high": _num(3),
                "paper_low": _num(3),
                "paper_high": _num(3),
            },
            "columns": {
                "parameter": "axis",
                "low": "low",
                "high": "high",
                "points": "points",
                "spacing": "spacing",
                "as_printed": "as the paper prints it",
                "paper_low": "paper low",
                "paper_high": "paper high",
                "paper_points": "paper points",
            },
        },
        "grid_check": {
            "formats": {
                "m": _SIZE,
                "d_draft": _SIZE,
                "d_target": _SIZE,
                "n_star": _SIZE,
                "n_star_scalar": _SIZE,
                "rel_diff": _DEV2,
            },
            "columns": {
                "m": "M (parameters)",
                "d_draft": "D (tokens)",
                "d_target": "D′ (tokens)",
                "n_star": "N* on the grid (parameters)",
                "n_star_scalar": "N* scalar search (parameters)",
                "rel_diff": "grid / scalar − 1",
            },
        },
        "coefficients": {
            "formats": {
                "parameter": lambda p: _COEF.get(p, p),
                "estimate": _N4,
                "paper_estimate": _N4,
                "rel_deviation": _PCT,
                "moe": _num(3),
                "paper_moe": _num(3),
                "moe_rel_deviation": _PCT,
            },
            "columns": {
                "parameter": "coefficient",
                "estimate": "ours",
                "paper_estimate": "paper",
                "rel_deviation": "ours / paper − 1",
                "estimate_digits_equal": "estimate equal to every printed digit",
                "moe": "our MoE",
                "paper_moe": "paper MoE",
                "moe_rel_deviation": "MoE / paper − 1",
                "moe_digits_equal": "MoE equal to every printed digit",
            },
        },
        "intervals": {
            "formats": {
                "parameter": lambda p: _COEF.get(p, p),
                "deviation_in_moe": _num(3, True),
            },
            "columns": {
                "parameter": "coefficient",
                "ci": "our 95 % CI",
                "paper_ci": "paper 95 % CI",
                "deviation_in_moe": "(ours − paper) / paper MoE",
                "paper_in_our_ci": "paper in our CI",
                "ours_in_paper_ci": "ours in paper CI",
            },
        },
        "fit_metrics": {
            "formats": {"metric": lambda m: _METRIC.get(m, m), "difference": _DEV},
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
                "d_high": _SIZE,
                "estimate": _N3,
                "paper_estimate": _N3,
                "rel_deviation": _PCT,
                "r2": _N4,
            },
            "columns": {
                "spacing": "spacing of M, D, D′",
                "d_high": "upper end of D, D′ (tokens)",
                "table": "table",
                "parameter": "coefficient",
                "rel_deviation": "ours / paper − 1",
                "paper_in_our_ci": "paper in our CI",
                "ours_in_paper_ci": "ours in paper CI",
                "estimate": "ours",
                "paper_estimate": "paper",
                "r2": "R²",
            },
        },
        "variants_n_grid": {
            "formats": {"d_high": _SIZE, "estimate": _N3, "paper_estimate": _N3, "rel_deviation": _PCT},
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
            "formats": {"m": _SIZE},
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
                "low": _SIZE,
                "high": _SIZE,
                **{c: _PCT for c in ("change_min", "change_median", "change_max")},
                **{c: _N3 for c in ("elasticity_min", "elasticity_median", "elasticity_max")},
            },
            "columns": {
                "factor": "axis",
                "low": "from",
                "high": "to",
                "change_min": "N* change, least",
                "change_median": "N* change, median",
                "change_max": "N* change, most",
                "elasticity_median": "d ln N* / d ln x, median",
                "elasticity_min": "d ln N* / d ln x, least",
                "elasticity_max": "d ln N* / d ln x, most",
            },
        },
    },
    "plan_draft": {
        "n_star_interval": {
            "formats": {"low": _SIZE, "high": _SIZE},
            "wrap": ["source"],
            "columns": {"source": "source", "low": "N* low (parameters)", "high": "N* high (parameters)"},
        },
    },
}
# Table 5 with every input as printed, beside the chapter's reading: the same columns
VIEWS["optimal_draft"]["table5_as_printed"] = VIEWS["optimal_draft"]["table5"]
VIEWS["scaling"]["table8"] = VIEWS["scaling"]["table9"] = VIEWS["scaling"]["coefficients"]


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


def _transcribed(v: Any) -> str:
    """A cell of Tables 1 and 2 as transcribed: ``alpha ± half-width`` as printed (four digits), a
    perplexity (printed to ten) at four significant digits."""
    if _missing(v):
        return DASH
    try:
        return number(float(v))
    except ValueError:
        return str(v)


def _acceptance_grid(table: pd.DataFrame, drafts: Sequence[str], caption: str | None, label: str | None) -> Table:
    cols = {"target": "target", "target_ppl": "target perplexity", **{c: c for c in drafts}}
    formats = {"target_ppl": _N4, **{c: _transcribed for c in drafts}}
    return show(table, columns=cols, formats=formats, caption=caption, label=label)


def _special(chapter: str, name: str, table: pd.DataFrame, caption: str | None, label: str | None):
    """Tables the book shows otherwise than one :func:`show` of their columns: the paper's layouts,
    intervals in one cell, and a table split in two by meaning (one list of :class:`Table`)."""
    if chapter == "acceptance" and name in ("table1", "table2", "measurements"):
        drafts = [c for c in table.columns if c not in ("target", "target_ppl")]
        families = list(dict.fromkeys(d.split("-")[0] for d in drafts))
        if name != "table2" or len(families) < 2:
            return _acceptance_grid(table, drafts, caption, label)
        # Table 2 holds two draft families: one table each (the paper's columns, side by side, do
        # not fit the text column)
        out = []
        for i, fam in enumerate(families):
            mine = [d for d in drafts if d.split("-")[0] == fam]
            cap = f"{caption.rstrip('.')}: the {fam} drafts." if caption else None
            out.append(
                _acceptance_grid(
                    table, mine, cap, label if i == 0 else f"{label}-{fam.lower().replace('.', '')}" if label else None
                )
            )
        return out
    if chapter == "acceptance" and name == "table4":  # the paper's layout: each interval in one cell
        ci = {
            k: [_interval(lo, hi, 4) for lo, hi in zip(table[f"{k}_lower"], table[f"{k}_upper"])]
            for k in ("ci1", "ci2")
        }
        return show(table.assign(**ci), **VIEWS[chapter][name], caption=caption, label=label)
    if chapter == "latency" and name == "table6":  # split by meaning: the distance, then the latencies
        lat = {
            k: [f"{number(m, 4)} ± {number(e, 2)}" for m, e in zip(table[f"{k}_s"], table[f"{k}_moe_s"])]
            for k in ("ttft", "ttot", "tpot")
        }
        both = table.assign(**lat)
        second = f"{label}-latency" if label else None
        return [
            show(both, **VIEWS[chapter]["table6"], caption=caption, label=label),
            show(
                both,
                **VIEWS[chapter]["table6_latency"],
                caption="The same drafts' latencies with the OPT-13B target, as the paper's Table 6 prints them "
                "(mean ± 95 % margin of error over 50 prompts)."
                if caption
                else None,
                label=second,
            ),
        ]
    if chapter == "latency" and name == "rank_correlations":
        iv = {
            k: [_interval(lo, hi, 2) for lo, hi in zip(table[f"{k}_lo"], table[f"{k}_hi"])] for k in ("boot", "noise")
        }
        return show(table.assign(**iv), **VIEWS[chapter][name], caption=caption, label=label)
    if chapter == "scaling" and name in ("table8", "table9"):  # split by meaning: the estimates, then the intervals
        ci = {
            k: [_interval(lo, hi, 3) for lo, hi in zip(table[f"{p}ci_lower"], table[f"{p}ci_upper"])]
            for k, p in (("ci", ""), ("paper_ci", "paper_"))
        }
        t = table.assign(**ci)
        return [
            show(t, **VIEWS[chapter]["coefficients"], caption=caption, label=label),
            show(
                t,
                **VIEWS[chapter]["intervals"],
                caption=f"The 95 % intervals of the coefficients of {name.replace('table', 'Table ')}, ours and the paper's, "
                "and whether each estimate lies in the other's interval."
                if caption
                else None,
                label=f"{label}-intervals" if label else None,
            ),
        ]
    if chapter == "optimal_draft" and name == "variants":  # the deviations; the N* themselves in the CSV
        wide = variants_side_by_side(table)
        cols = {"target": "target", "draft_family": "draft family"}
        for c in wide.columns[2:]:
            what, const, gamma = c.split(" ")
            if what == "n_star_rel_dev":
                cols[c] = f"{_CONSTANTS.get(const, const)}, {gamma} γ"
        return show(
            wide,
            columns=cols,
            formats={c: _PCT for c in cols if c not in ("target", "draft_family")},
            caption=caption,
            label=label,
        )
    return None


def view(chapter: str, name: str, table: pd.DataFrame, caption: str | None = None, label: str | None = None):
    """``table`` (artifact ``name`` of ``chapter``) as the book shows it: a :class:`Table` from
    :func:`sdsl.book.tables.show` with the arguments of :data:`VIEWS` (or a list of them, for a
    table split by meaning), captioned ``caption`` and labelled ``label``. Raises ``ValueError`` for
    a table without a view, or a view naming a column the table lacks."""
    special = _special(chapter, name, table, caption, label)
    if special is not None:
        return special
    known = VIEWS.get(chapter, {})
    if name not in known:
        raise ValueError(f"no view of table {name!r} of chapter {chapter!r}; views: {sorted(known)}")
    return show(table, **known[name], caption=caption, label=label)


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
# tables. Each takes the ``caption`` and ``label`` of :func:`sdsl.book.tables.show`.


def view_columns(df: pd.DataFrame, columns: dict[str, str], **kw):
    """:func:`sdsl.book.tables.show` of the ``columns`` that ``df`` has (a rerun without bootstrap
    has no interval columns)."""
    return show(df, columns={k: v for k, v in columns.items() if k in df.columns}, **kw)


def view_plan(table: pd.DataFrame, **kw):
    """The plan (:func:`sdsl.plan.plan_table`) as the reader sees it."""
    return view_columns(
        table,
        {
            "target": "target",
            "d_draft": "D (tokens)",
            "n_star": "N* (parameters)",
            "speedup": "tokens per FLOP over plain decoding (×)",
            "gamma_star": "γ* (tokens)",
            "alpha": "α at N*",
            "tokens_per_flop": "T(N*) (tokens per FLOP)",
        },
        formats={"d_draft": _SIZE, "n_star": _SIZE, "gamma_star": _N3},
        **kw,
    )


def view_candidates(candidates: pd.DataFrame, **kw):
    """The candidate drafts (:func:`sdsl.chapters.plan_draft.candidates_table`) as the reader sees
    them."""
    return view_columns(
        candidates,
        {
            "candidate": "candidate",
            "params": "N (parameters)",
            "share_of_optimum": "T(N) / T(N*)",
            "alpha": "α",
            "gamma": "γ* (tokens)",
            "speedup": "tokens per FLOP over plain decoding (×)",
            "d_draft": "D (tokens)",
            "tokens_per_flop": "T(N) (tokens per FLOP)",
        },
        formats={"params": _SIZE, "d_draft": _SIZE, "gamma": _N3, "share_of_optimum": _pct(3, sign=False)},
        **kw,
    )


def view_interval(table: pd.DataFrame, **kw):
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
        formats={"d_draft": _SIZE, "n_star": _SIZE, "n_star_ci_low": _SIZE, "n_star_ci_high": _SIZE},
        **kw,
    )


def view_sensitivity(sensitivity: pd.DataFrame, **kw):
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
        formats={
            "n_star": _SIZE,
            "n_star_ci_low": _SIZE,
            "n_star_ci_high": _SIZE,
            "relative_width": _pct(2, sign=False),
        },
        **kw,
    )


def view_table5_check(check: pd.DataFrame, **kw):
    """:func:`sdsl.chapters.plan_draft.table5_check` as the reader sees it: how far the planning
    code's ``N*`` and ``T(N*)`` lie from the paper's, per reading of ``D'`` (the values themselves
    in the CSV)."""
    return view_columns(
        check,
        {
            "target": "target",
            "draft_family": "drafts",
            "reading": "D′ as",
            "d_target": "D′ (tokens)",
            "n_star_ours": "N* ours (parameters)",
            "n_star_rel_dev": "N* / paper − 1",
            "tpf_rel_dev": "T(N*) / paper − 1",
        },
        formats={"d_target": _SIZE, "n_star_ours": _SIZE, "n_star_rel_dev": _DEV, "tpf_rel_dev": _DEV},
        **kw,
    )


def _lookup_note(status: Any, note: Any) -> str:
    """A row's note in the lookup table, in a few words (the CSV has the full text)."""
    status, note = str(status or ""), str(note) if isinstance(note, str) else ""
    if status.startswith("refused"):
        return "refused (MoE)" if "mixture" in status else status
    if status and status != "planned":
        return status
    return "shape unknown" if note.startswith("architecture unknown") else note


def view_lookup(table: pd.DataFrame, **kw):
    """:func:`sdsl.chapters.plan_draft.lookup` as the reader sees it: sizes as the field writes
    them, and for a row refused or without a number its reason in a few words."""
    t = table.copy()
    t["note"] = [_lookup_note(s, n) for s, n in zip(t["status"], t["note"])]
    t["gamma_star_integer"] = t["gamma_star_integer"].astype("Int64")
    return view_columns(
        t,
        {
            "model": "target",
            "params": "M",
            "tokens": "D′ (tokens)",
            "n_star": "N*",
            "m_over_n_star": "M / N*",
            "gamma_star_integer": "γ*",
            "tokens_per_flop_ratio": "FLOP gain (×)",
            "wall_clock_speedup": "wall-clock speedup",
            "note": "note",
            "alpha": "α at N*",
            "draft_tokens": "D (tokens)",
            "gamma_star_continuous": "γ* continuous",
            "gpus": "devices",
        },
        digits={
            "m_over_n_star": 3,
            "gamma_star_continuous": 3,
            "alpha": 3,
            "tokens_per_flop_ratio": 3,
            "wall_clock_speedup": 3,
        },
        formats={
            "params": _size(3),
            "tokens": _size(3),
            "draft_tokens": _size(3),
            "n_star": _size(3),
            "gamma_star_integer": lambda v: DASH if pd.isna(v) else str(int(v)),
            "gpus": lambda v: DASH if pd.isna(v) else str(int(v)),
        },
        **kw,
    )


class _Shown:
    """A published table as a cell shows it: the book's view of it (one table, or the tables it is
    split into by meaning), then its download links."""

    def __init__(self, table: Any, links: Any) -> None:
        self.table, self.links = table, links

    def _ipython_display_(self) -> None:
        from IPython.display import display

        tables = self.table if isinstance(self.table, list) else [self.table]
        display(*tables, self.links)

    def __repr__(self) -> str:
        return f"table with {self.links.data}"


def caption_of(item: Item, artifact: str | None = None) -> str:
    """The caption of a table or figure of ``item`` (its artifact ``artifact``, default the first):
    the paper's ``Table 5, regenerated: ...`` or the companion's own, from the declaration's title
    as a reader writes it (:func:`sdsl.book.tables.reader_text`)."""
    title = reader_text(item.title)
    title = title[0].upper() + title[1:]
    if item.paper and (artifact is None or artifact == item.artifacts[0]):
        return f"The paper's {item.key}, regenerated. {title}."
    return f"{title}."


class Publisher:
    """A chapter's publishing call: ``publish = Publisher(CHAPTER, artifacts_dir)`` once in a
    notebook, then ``publish(result)`` for each table or figure.

    ``publish(table)`` writes the artifact the table's function declared (:func:`declare`) and
    returns what the cell shows: the book's view of it (:func:`sdsl.book.views.view`), captioned
    from the declaration and labelled ``<chapter>-<artifact>`` (cited with ``{numref}``), and its
    download links; a table declared ``shown=False`` is written and nothing is shown.
    ``publish(fig, data=frame)`` writes the figure's SVG, PNG and the numbers plotted and returns
    the figure as the page shows it (:class:`sdsl.book.views.FigureFiles`); its download links
    come from :meth:`downloads` in the next cell (the figure's cell holds the figure alone, for its
    caption). ``name`` picks one of a function's declared artifacts, or names the artifact of a
    result that is not a declared function's own (a column of a run, a filtered table); it must be
    one of the chapter's declared artifacts. ``caption`` replaces the declaration's.
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

    def label(self, artifact: str) -> str:
        """The label that cites the table or figure of ``artifact`` (``{numref}`label```)."""
        return f"{self.chapter}-{artifact}"

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

    def __call__(
        self, obj: Any, name: str | None = None, *, data: pd.DataFrame | None = None, caption: str | None = None
    ) -> Any:
        """Write ``obj`` as its declared artifact and return what the cell shows (see the class)."""
        artifact, item = self.artifact(obj, name)
        self.last = artifact
        if isinstance(obj, Figure):
            reader_words(obj)  # a law's or a run's identifier in a legend, as a reader says it
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
        shown = view(self.chapter, artifact, obj, caption or caption_of(item, artifact), self.label(artifact))
        return _Shown(shown, self.downloads(artifact))

    def save(self, obj: Any, name: str | None = None, caption: str | None = None) -> None:
        """Write ``obj`` as its declared artifact (as :meth:`__call__` does) and show nothing: for
        an artifact written for download only, or one the cell shows in a view of its own, which
        then takes the declaration's caption (or ``caption``) and label
        (:func:`sdsl.book.tables.expect`)."""
        artifact, item = self.artifact(obj, name)
        self.last = artifact
        if not isinstance(obj, pd.DataFrame):
            raise ValueError(f"publish.save: {artifact} must be a DataFrame, got {type(obj).__name__}")
        save_table(obj, self.chapter, artifact, self.artifacts_dir)
        if item.shown:
            expect(obj, caption or caption_of(item, artifact), self.label(artifact))

    def downloads(self, name: str | None = None) -> Any:
        """The download links of artifact ``name`` (default: the one published last)."""
        name = name or self.last
        if name is None:
            raise ValueError("publish.downloads: nothing has been published yet; give the artifact's name")
        return downloads(self.chapter, name, self.artifacts_dir)

"""How the plan chapter (``notebooks/plan_draft.md``, :mod:`sdsl.chapters.plan_draft`) shows its
tables: the headers with their units and the cell formats a reader sees, through
:func:`sdsl.book.tables.show`; the CSV of a table keeps every column at full precision. pandas and
the table renderer are imported when a view is made, never on import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "view_columns",
    "view_plan",
    "view_candidates",
    "view_interval",
    "view_sensitivity",
    "view_table5_check",
    "view_lookup",
]


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

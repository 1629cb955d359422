"""The reproduction scorecard: every number the paper prints, and every checkable claim of its
figures' captions, with its status.

Generated from the artifacts of the other chapters and from ``data/`` (never typed). Every one of
the numbers printed in the paper's Tables 1 to 9 (:func:`sdsl.audit.paper.printed_numbers`, read from the
paper's text) gets a row of one of two kinds:

- ``number``: a result the companion recomputes (Tables 3, 4, 5's ``N*`` and ``T(N*)``, 6's
  ``N*`` and distances, 8 and 9), judged by the one rule :func:`sdsl.tolerance.classify`:
  ``equal to printed precision`` (within half a unit of the last printed digit), ``within
  tolerance`` (the table's stated relative tolerance, :data:`TOLERANCES`) or ``differs``. An end of
  an interval whose estimate differs cannot reproduce: it ``differs`` too, whatever its own
  distance (:func:`interval_rule`);
- ``input``: a number the companion takes from the paper (Tables 1 and 2, the sizes and tokens of
  Table 5, the latencies of Table 6, Table 7's grid), checked against the CSV it was transcribed into
  (``input as printed``, else ``input mistranscribed``).

``claim`` rows test the captions of Figures 1 to 5 (``data/paper_claims.csv``), judged exactly, or
``not checkable`` when the companion's data cannot test them (:func:`not_checkable`). Counts of
observations and sizes of the grid, which follow from Table 7's grid, are inputs.

One rule for every reinterpretation (:data:`READINGS`, a likely misprint): each dependent number
appears ``as printed`` and as reinterpreted, with counts for both views (:func:`view`, :func:`counts`).

The rows are read from the artifacts by :mod:`sdsl.audit.rows`, the tolerances, readings and reasons
are :mod:`sdsl.audit.rules`; this module judges the rows and shows them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdsl.audit.reproduction import (
    AS_PRINTED,
    FIGURES,
    INPUT_BAD,
    INPUT_OK,
    INPUT_READ,
    TABLES,
    counts,
    coverage,
    interval_rule,
    view,
)
from sdsl.audit.rows import REQUIRED_ARTIFACTS, check_artifacts, claim_rows, number_rows
from sdsl.audit.rules import COINCIDENCE, READINGS, reason_for
from sdsl.book.outputs import declare
from sdsl.book.tables import reader_text
from sdsl.tolerance import DIFFERS, EQUAL, STATUSES, TOLERANCES, WITHIN, classify

__all__ = [
    "NOT_CHECKABLE",
    "not_checkable",
    "printed",
    "scorecard",
    "tolerance_table",
    "differences_markdown",
    "readings_markdown",
    "counts_table",
    "view_counts",
    "view_rows",
    "figure_counts",
    "summary",
]


@declare(
    "scorecard",
    "every printed number and claim with its status",
    data=(
        "paper_tables",
        "paper_claims",
        "paper_table3",
        "paper_table4",
        "paper_table5",
        "paper_table6",
        "paper_table7",
        "paper_table8",
        "paper_table9",
        "paper_metrics",
        "acceptance",
        "latency",
    ),
)
def scorecard(artifacts_root: Path | str | None = None) -> pd.DataFrame:
    """Every printed number of Tables 1 to 9 and every claim of the captions of Figures 1 to 5, one
    row per number and reading: ``table, item, kind`` (number, input, claim), ``reading``,
    ``paper``, ``ours``, ``rel_deviation``, ``printed_tol``, ``rtol``, ``status``, ``chapter``,
    ``artifact``, ``detail``, and for a row that differs its ``reason`` and ``reason_chapter``.

    Raises :class:`MissingArtifactsError` when a chapter's artifacts are missing."""
    from sdsl.paths import artifacts_root as _default_root

    root = Path(artifacts_root) if artifacts_root is not None else _default_root()
    check_artifacts(root)
    df = pd.DataFrame(number_rows(root))
    df["rtol"] = df["table"].map(lambda t: TOLERANCES[t].rtol)
    df["status"] = [classify(o, p, t, r) for o, p, t, r in zip(df["ours"], df["paper"], df["printed_tol"], df["rtol"])]
    coincidence = interval_rule(df)
    df.loc[coincidence, "status"] = DIFFERS
    # counts of observations and sizes of the grid follow from Table 7's inputs (8 x 6 x 6 = 288):
    # they are inputs, not results the companion reproduces
    follows = df["item"].str.contains(r"(?:\bobservations$|^grid points\b)", regex=True)
    df.loc[follows, "kind"] = "input"
    is_input = df["kind"] == "input"
    df.loc[is_input, "status"] = np.where(
        df.loc[is_input, "reading"] != AS_PRINTED,
        INPUT_READ,
        np.where(df.loc[is_input, "status"] == EQUAL, INPUT_OK, INPUT_BAD),
    )
    claims = pd.DataFrame(claim_rows(root, df))
    claims["rtol"] = 0.0
    claims["status"] = [EQUAL if o == p else DIFFERS for o, p in zip(claims["ours"], claims["paper"])]
    unknown = not_checkable(root)
    for table, why in unknown.items():
        at = claims["table"] == table
        claims.loc[at, "status"] = NOT_CHECKABLE
        claims.loc[at, "detail"] = claims.loc[at, "detail"] + f"; not checkable: {why}"
    df = pd.concat([df, claims], ignore_index=True)
    coincidence = coincidence.reindex(df.index, fill_value=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        df["rel_deviation"] = np.where(df["paper"] != 0, df["ours"] / df["paper"] - 1.0, np.nan)
    reasons = [reason_for(t, i) if s == DIFFERS else None for t, i, s in zip(df["table"], df["item"], df["status"])]
    df["reason"] = [
        (COINCIDENCE if c else r.text + (f" ({d.split(': ')[-1]})" if k == "claim" else "")) if r else ""
        for r, d, c, k in zip(reasons, df["detail"], coincidence, df["kind"])
    ]
    df["reason_chapter"] = [(r.chapter or ch) if r else "" for r, ch in zip(reasons, df["chapter"])]
    cols = [
        "table",
        "item",
        "kind",
        "reading",
        "paper",
        "ours",
        "rel_deviation",
        "printed_tol",
        "rtol",
        "status",
        "chapter",
        "artifact",
        "detail",
        "reason",
        "reason_chapter",
    ]
    order = {t: i for i, t in enumerate(TOLERANCES)}
    return df[cols].sort_values("table", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


#: The status of a claim the data of the companion cannot test (neither holds nor fails).
NOT_CHECKABLE = "not checkable"


def not_checkable(root: Path | str) -> dict[str, str]:
    """The figures whose caption's claim the companion's data cannot test, with why: Figure 1's
    surface is the paper's fit of Eq. 5 (Table 3), and a fit to the pairs of Tables 1 and 2 tests
    it only when those are the pairs the paper fitted. Table 3's printed margins of error imply
    its residual degrees of freedom (``acceptance/table3_implied_df.csv``, the most that all
    three coefficients allow); when they ask for more pairs than Tables 1 and 2 print, the claim
    is not checkable."""
    from sdsl import data

    implied = pd.read_csv(Path(root) / "acceptance" / "table3_implied_df.csv")
    fitted = int(implied["df_min"].max()) + len(implied)  # residual df + the plane's coefficients
    printed = len(data.load("acceptance"))
    if fitted > printed:
        return {
            "Figure 1": f"Table 3's margins of error imply a fit to at least {fitted} pairs; Tables 1 and 2 "
            f"print {printed}"
        }
    return {}


@declare("tolerances", "the stated tolerance of each table")
def tolerance_table() -> pd.DataFrame:
    """The stated tolerance of each table."""
    return pd.DataFrame([{"table": t, "rtol": v.rtol, "why": v.why} for t, v in TOLERANCES.items()])


def _groups(card: pd.DataFrame):
    """The rows that differ grouped by table, reading, chapter and reason, numbered from 1."""
    diff = card[card["status"] == DIFFERS]
    return list(enumerate(diff.groupby(["table", "reading", "reason_chapter", "reason"], sort=False), start=1))


def differences_markdown(card: pd.DataFrame) -> str:
    """The rows that differ, grouped by table, reading and reason, as a numbered MyST list with the
    chapter that explains each as a ``{doc}`` link (the tables below refer to these numbers)."""
    lines = []
    for i, ((table, reading, chapter, reason), g) in _groups(card):
        n = "1 number" if len(g) == 1 else f"{len(g)} numbers"
        n = n if (g["kind"] != "claim").any() else ("1 claim" if len(g) == 1 else f"{len(g)} claims")
        lines.append(
            f"{i}. {table} ({reader_text(reading)}; {n}, explained in {{doc}}`{chapter}`): {reader_text(reason)}."
        )
    return "\n".join(lines) if lines else "Every number reproduces."


_WORDS = (
    (r"\bstd_error\b", "SE"),
    (r"\bmoe(\d?)\b", r"margin\1"),
    (r"\bci(\d?)_lower\b", r"CI\1 low"),
    (r"\bci(\d?)_upper\b", r"CI\1 high"),
    (r"\badj_r2\b", "adjusted R²"),
    (r"\br2\b", "R²"),
    (r"\bmse\b", "MSE"),
    (r"\bg_prime\b", "g′"),
    (r"\bmu\b", "μ"),
    (r"\bM0\b", "M₀"),
    (r"\bmodel ", ""),
    (r"\bD_prime\b", "D′"),
)


def _human(item: str) -> str:
    for pattern, repl in _WORDS:
        item = re.sub(pattern, repl, item)
    return item


def readings_markdown() -> str:
    """The reinterpretations of :data:`READINGS` as a MyST list, each with the chapter that argues
    it (which reads the input so by default, shows it as printed beside it and names the parameter
    that selects either in its section on rerunning it)."""
    return "\n".join(
        f"- {reader_text(r.name)}: {reader_text(r.text)} (argued in {{doc}}`{r.chapter}`, which reads the input so by "
        f"default, shows it as printed beside it, and reruns either way: {{ref}}`{r.chapter}-run`)."
        for r in READINGS
    )


@declare("counts", "the counts per table, as printed and as reinterpreted", data=("paper_tables", "paper_claims"))
def counts_table(card: pd.DataFrame) -> pd.DataFrame:
    """:func:`counts` of both views, one after the other, with a ``view`` column (as printed, as
    reinterpreted): the artifact ``counts.csv``."""
    return pd.concat(
        [
            counts(card, r, order=list(TOLERANCES)).assign(view="as reinterpreted" if r else AS_PRINTED)
            for r in (False, True)
        ],
        ignore_index=True,
    )


def view_counts(counts_: pd.DataFrame, which: str, caption: str | None = None, label: str | None = None):
    """One view of :func:`counts_table` as the reader sees it, captioned ``caption`` and labelled
    ``label``."""
    from sdsl.book.tables import show

    c = counts_[counts_["view"] == which]
    cols = {
        "table": "table",
        EQUAL: "equal",
        WITHIN: "within tol.",
        DIFFERS: "differ",
        INPUT_OK: "inputs ok",
        INPUT_BAD: "inputs wrong",
        INPUT_READ: "inputs reread",
        "total": "rows",
        "reproduced": "reproduce",
    }
    return show(
        c,
        columns=cols,
        formats={"reproduced": lambda v: "\u2013" if v != v else f"{100 * v:.0f} %"},
        caption=caption,
        label=label,
    )


def printed(value: float, tol: float) -> str:
    """``value`` with the digits the paper prints: ``tol`` is half a unit of its last printed digit
    (``5e-09`` for ``29.79318619``); scientific notation for values of a million or more."""
    if value != value:
        return "\u2013"
    if not tol > 0:
        return f"{value:g}"
    decimals = round(-np.log10(2 * tol))
    if 0 <= decimals <= 12 and abs(value) < 1e6:
        return f"{value:.{decimals}f}"
    digits = max(int(np.floor(np.log10(abs(value)))) + decimals + 1, 1) if value else 1
    return f"{value:.{digits - 1}e}"


def view_rows(card: pd.DataFrame, kind: str, caption: str | None = None, label: str | None = None):
    """The rows of one ``kind`` (number, input, claim) as the reader sees them: quantities named in
    words, values to four significant digits (the CSV holds them as printed and in full), deviations in per cent, and for a row that differs the number of
    its reason in :func:`differences_markdown` with the chapter that explains it linked."""
    from sdsl.book.tables import number, show

    ref = {}
    for i, (_, g) in _groups(card):
        ref.update({j: i for j in g.index})
    rows = card[card["kind"] == kind]
    where = [
        f'<a href="{c or ch}.html">{c or ch}</a>' if (c or ch) else "\u2013"
        for c, ch in zip(rows["reason_chapter"], rows["chapter"])
    ]
    why = [f"reason {ref[j]}" if j in ref else "\u2013" for j in rows.index]
    rows = rows.assign(
        item=[_human(t) for t in rows["item"]] if kind != "claim" else rows["item"],
        where=where,
        why=why,
        reading=[reader_text(str(r)) for r in rows["reading"]],
    )
    cols = {
        "table": "table",
        "item": "claim" if kind == "claim" else "number",
        "reading": "reading",
        "paper": "paper",
        "ours": "transcribed" if kind == "input" else "ours",
        "rel_deviation": "deviation",
        "status": "status",
        "why": "why it differs",
        "where": "chapter",
    }
    if kind == "claim":
        cols = {
            "table": "figure",
            "item": "claim (the caption's words)",
            "detail": "what is computed",
            "ours": "share in which it holds",
            "status": "status",
            "why": "why it fails",
            "where": "chapter",
        }
    four = lambda v: "\u2013" if v != v else number(v, 4)  # noqa: E731
    pct = lambda v: "\u2013" if v != v else ("+" if v > 0 else "") + number(100 * v, 3) + " %"  # noqa: E731
    share = lambda v: "\u2013" if v != v else f"{100 * v:.0f} %"  # noqa: E731
    return show(
        rows,
        columns=cols,
        formats={"paper": four, "ours": share if kind == "claim" else four, "rel_deviation": pct},
        wrap=["item", "detail"] if kind == "claim" else [],
        fold=False,  # the scorecard's own rows are the point of its page
        caption=caption,
        label=label,
    )


@declare("fig_counts", "the counts as bars", data=("paper_tables", "paper_claims"), figure=True)
def figure_counts(card: pd.DataFrame):
    """The statuses of the compared numbers and claims per table, as printed (left) and as
    reinterpreted (right), stacked horizontal bars."""
    import matplotlib.pyplot as plt

    colors = {EQUAL: "#009E73", WITHIN: "#E69F00", DIFFERS: "#D55E00"}
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.8), sharey=True)
    for ax, reinterpreted, label in ((axes[0], False, "as printed"), (axes[1], True, "as reinterpreted")):
        c = counts(card, reinterpreted, order=list(TOLERANCES))
        c = c[~c["table"].isin([TABLES, FIGURES]) & (c[list(STATUSES)].sum(axis=1) > 0)].set_index("table")
        left = pd.Series(0, index=c.index)
        for status in STATUSES:
            ax.barh(c.index, c[status], left=left, color=colors[status], label=status)
            left = left + c[status]
        ax.set_xlabel(f"numbers and claims, {label}")
    axes[0].invert_yaxis()
    axes[1].legend(loc="lower right", fontsize="small")
    return fig


def summary(card: pd.DataFrame) -> dict[str, Any]:
    """The numbers the chapter's text cites (glue names without the chapter prefix): for both views
    (``printed_``, ``reinterpreted_``) the compared numbers and those equal, within tolerance and
    differing and the share that reproduces; the claims and those that hold; the inputs checked and
    mistranscribed; the printed numbers of the tables and how many have a row."""
    out: dict[str, Any] = {}
    for prefix, reint in (("printed", False), ("reinterpreted", True)):
        # the row of the counts that sums the tables: the same numbers as the table of counts
        row = counts(card, reint).set_index("table").loc[TABLES]
        out.update(
            {
                f"{prefix}_n_numbers": int(row[EQUAL] + row[WITHIN] + row[DIFFERS]),
                f"{prefix}_n_equal": int(row[EQUAL]),
                f"{prefix}_n_within": int(row[WITHIN]),
                f"{prefix}_n_differs": int(row[DIFFERS]),
                f"{prefix}_share": float(row["reproduced"]),
                f"{prefix}_share_pct": round(100 * float(row["reproduced"])),
            }
        )
    printed = view(card)
    claims, inputs = printed[printed["kind"] == "claim"], printed[printed["kind"] == "input"]
    cov = coverage(card)
    checkable = claims[claims["status"] != NOT_CHECKABLE]
    out.update(
        n_claims=len(checkable),
        n_claims_not_checkable=len(claims) - len(checkable),
        n_claims_hold=int((claims["status"] == EQUAL).sum()),
        n_inputs=len(inputs),
        n_inputs_bad=int((inputs["status"] == INPUT_BAD).sum()),
        n_printed=int(cov["printed"].sum()),
        n_accounted=int(cov["accounted"].sum()),
        n_readings=len(READINGS),
        n_reinterpreted=int((card["reading"] != AS_PRINTED).sum()),
        n_coincidence=int((card["reason"] == COINCIDENCE).sum()),
    )
    return out


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed."""
    from sdsl import validation as V

    p = V.check_parameters(
        "scorecard",
        params,
        {
            "artifacts_dir": V.optional(V.rule(V.folder)),
            "artifacts_root": V.optional(
                V.rule(V.folder, must_exist=True, what="the artifacts tree the chapters wrote")
            ),
        },
    )
    root = p.get("artifacts_root")
    if root is not None:
        missing = {
            c: [f for f in files if not (Path(root) / c / f).is_file()] for c, files in REQUIRED_ARTIFACTS.items()
        }
        missing = {c: files for c, files in missing.items() if files}
        if missing:
            shown = "; ".join(f"{c} ({', '.join(files)})" for c, files in missing.items())
            chapters = " ".join(repr(c) for c in missing)
            raise ValueError(
                f"artifacts_root {str(root)!r} lacks the artifacts of chapter(s) {shown}: make them with "
                f"sdsl.build.pipeline.execute_notebook(chapter, artifacts={str(root)!r}) for each of {chapters} "
                f"(or python -m sdsl.build.pipeline run, which writes the default artifacts tree)"
            )


# What this chapter shows that a function of another module makes.
declare("coverage", "every printed number matched to its row", data=("paper_tables",))(coverage)

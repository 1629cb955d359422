"""How a paper's printed numbers are accounted for: readings, views, counts and coverage.

A *card* is a table with one row per printed number (or claim) and reading: ``table``, ``item``,
``kind`` (``number``, ``input``, ``claim``), ``reading`` (:data:`AS_PRINTED` or the name of a
reinterpretation), ``paper`` (the printed value), ``ours`` and ``status`` (the statuses of
:mod:`sdsl.tolerance` for numbers and claims; :data:`INPUT_OK`, :data:`INPUT_BAD` or
:data:`INPUT_READ` for transcribed inputs). The scorecard chapter (:mod:`sdsl.chapters.scorecard`)
builds it; here are the rules that read it: one view per reading (:func:`view`), the counts
(:func:`counts`), whether every printed number has a row (:func:`coverage`) and the rule that an
interval end cannot reproduce when its estimate does not (:func:`interval_rule`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from sdsl.tolerance import DIFFERS, EQUAL, STATUSES, WITHIN

__all__ = [
    "AS_PRINTED",
    "INPUT_OK",
    "INPUT_BAD",
    "INPUT_READ",
    "TABLES",
    "FIGURES",
    "interval_rule",
    "view",
    "counts",
    "coverage",
]

#: The reading of a number as the paper prints its inputs.
AS_PRINTED = "as printed"
#: Status of a transcribed input equal to the printed number.
INPUT_OK = "input as printed"
#: Status of a transcribed input that differs from the printed number.
INPUT_BAD = "input mistranscribed"
#: Status of an input that a reinterpretation reads otherwise than printed.
INPUT_READ = "input read otherwise"
#: The rows of :func:`counts` that sum the tables (their numbers) and the figures (their claims):
#: a number and a claim are counted apart, never in one share.
TABLES, FIGURES = "Tables 1 to 9", "Figures 1 to 5"


def interval_rule(card: pd.DataFrame) -> pd.Series:
    """Which rows the interval rule makes differ: an interval end (``ci_lower``, ``ci_upper``,
    ``ciK_lower``, ``ciK_upper``) whose estimate (``estimate``, ``pK``) of the same table, parameter
    and reading differs, while the end itself is equal or within tolerance (a boolean Series)."""
    end = card["item"].str.contains(r" ci\d?_(?:lower|upper)$")
    est = card["item"].str.contains(r" (?:estimate|p\d)$")
    end_key = card["item"].str.replace(r" ci(\d?)_(lower|upper)$", r" @\1", regex=True)
    est_key = card["item"].str.replace(r" (?:estimate|p(\d))$", r" @\1", regex=True)
    differs = set(
        zip(
            card.loc[est & (card["status"] == DIFFERS), "table"],
            card.loc[est & (card["status"] == DIFFERS), "reading"],
            est_key[est & (card["status"] == DIFFERS)],
        )
    )
    hit = [
        bool(e) and s != DIFFERS and (t, r, k) in differs
        for t, r, k, e, s in zip(card["table"], card["reading"], end_key, end, card["status"])
    ]
    return pd.Series(hit, index=card.index)


def view(card: pd.DataFrame, reinterpreted: bool = False) -> pd.DataFrame:
    """One row per printed number and claim: ``as printed``, or with every reinterpretation of
    :data:`READINGS` applied (a number's reinterpreted row replaces its printed one)."""
    printed = card[card["reading"] == AS_PRINTED]
    if not reinterpreted:
        return printed
    other = card[card["reading"] != AS_PRINTED]
    keep = ~printed.set_index(["table", "item"]).index.isin(other.set_index(["table", "item"]).index)
    return pd.concat([printed[keep], other]).sort_index()


def counts(card: pd.DataFrame, reinterpreted: bool = False, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Per table of :func:`view`, the rows of each status (numbers and claims: equal, within,
    differs; inputs: as printed, mistranscribed, read otherwise), the ``total`` and the share of
    compared numbers and claims that reproduce (equal or within tolerance); tables in ``order``
    (default: as they come); the last two rows sum the tables (:data:`TABLES`: their numbers and
    inputs) and the figures (:data:`FIGURES`: their claims)."""
    v = view(card, reinterpreted)
    cols = [*STATUSES, INPUT_OK, INPUT_BAD, INPUT_READ]
    c = pd.crosstab(v["table"], v["status"]).reindex(columns=cols, fill_value=0)
    if order is not None:
        c = c.loc[[t for t in order if t in c.index]]
    rows = list(c.index)
    c.loc[TABLES] = c.loc[[t for t in rows if str(t).startswith("Table ")]].sum()
    c.loc[FIGURES] = c.loc[[t for t in rows if str(t).startswith("Figure ")]].sum()
    c["total"] = c.sum(axis=1)
    compared = c[list(STATUSES)].sum(axis=1)
    c["reproduced"] = np.where(compared > 0, (c[EQUAL] + c[WITHIN]) / compared.where(compared > 0, 1), np.nan)
    c.index.name, c.columns.name = "table", None
    return c.reset_index()


def coverage(card: pd.DataFrame, numbers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per table, the numbers its text prints (:func:`sdsl.audit.paper.printed_numbers`) and how many of
    them a row of the scorecard (as printed) accounts for: each printed number is matched to one row
    of its table whose paper value equals it within half a printed unit. ``missing`` lists the
    printed texts no row accounts for (empty when every number has its row)."""
    from sdsl.audit.paper import printed_numbers

    nums = printed_numbers() if numbers is None else numbers
    printed = view(card)
    rows = []
    for table, g in nums.groupby("table", sort=False):
        pool = list(printed.loc[(printed["table"] == table) & (printed["kind"] != "claim"), "paper"])
        missing = []
        for r in g.itertuples(index=False):
            hit = next((i for i, v in enumerate(pool) if abs(v - r.value) <= r.tolerance * (1 + 1e-9) + 1e-300), None)
            if hit is None:
                missing.append(r.text)
            else:
                pool.pop(hit)
        rows.append(
            {
                "table": table,
                "printed": len(g),
                "accounted": len(g) - len(missing),
                "missing": ", ".join(missing),
                "rows_without_printed_number": len(pool),
            }
        )
    return pd.DataFrame(rows)

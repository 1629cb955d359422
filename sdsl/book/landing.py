"""The landing page's reproduction summary, generated from the scorecard's artifacts.

:func:`reproduction_markdown` reads ``scorecard/counts.csv`` (both views: the paper's inputs as
printed and as the chapters reinterpret them) and ``scorecard/coverage.csv`` from an artifacts tree
and writes the summary the book's first page shows (MyST): nothing in it is typed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["reproduction_markdown"]

_EQUAL, _WITHIN, _DIFFERS = "equal to printed precision", "within tolerance", "differs"
_INPUT_OK = "input as printed"


def _numbers(counts: pd.DataFrame, view: str) -> dict[str, int]:
    """Counts of one view over the tables (results and inputs) and over the figures (claims)."""
    c = counts[(counts["view"] == view) & (counts["table"] != "All")]
    tables, figures = c[c["table"].str.startswith("Table")], c[c["table"].str.startswith("Figure")]
    return {
        "equal": int(tables[_EQUAL].sum()),
        "within": int(tables[_WITHIN].sum()),
        "differs": int(tables[_DIFFERS].sum()),
        "inputs": int(tables[_INPUT_OK].sum()),
        "claims": int(figures[[_EQUAL, _WITHIN, _DIFFERS]].to_numpy().sum()),
        "hold": int(figures[_EQUAL].sum()),
    }


def reproduction_markdown(root: Path | str) -> str:
    """The summary of the reproduction under the artifacts tree ``root`` (MyST text): how many of
    the printed numbers have a row, how many results reproduce as printed and as reinterpreted, how
    many inputs were checked and how many claims hold, with a table per view and a link to the
    scorecard. Raises ``FileNotFoundError`` naming a missing artifact."""
    root = Path(root)
    paths = {name: root / "scorecard" / f"{name}.csv" for name in ("counts", "coverage")}
    for path in paths.values():
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: run `python -m sdsl.build.pipeline run scorecard` first")
    counts, cover = pd.read_csv(paths["counts"]), pd.read_csv(paths["coverage"])
    p, r = _numbers(counts, "as printed"), _numbers(counts, "as reinterpreted")
    n = p["equal"] + p["within"] + p["differs"]

    def share(v: dict[str, int]) -> str:
        return f"{100 * (v['equal'] + v['within']) / n:.0f} %"

    lines = [
        f"Of the {int(cover['printed'].sum())} numbers printed in the paper's nine tables, "
        f"{int(cover['accounted'].sum())} have a row in the {{doc}}`scorecard <executed/scorecard>`: "
        f"{p['inputs']} are inputs the companion takes from the paper, each checked against the paper's text, "
        f"and {n} are results it recomputes.",
        "",
        "| the paper's inputs | equal to printed precision | within tolerance | differ | reproduce |",
        "|:--|--:|--:|--:|--:|",
        f"| as printed | {p['equal']} | {p['within']} | {p['differs']} | {share(p)} |",
        f"| as the chapters reinterpret them | {r['equal']} | {r['within']} | {r['differs']} | {share(r)} |",
        "",
        f"Of the {p['claims']} checkable claims of the paper's figure captions, {p['hold']} hold. "
        "Every number that differs, and every claim that fails, has its reason in the scorecard.",
    ]
    return "\n".join(lines)

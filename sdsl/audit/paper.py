"""The paper's printed numbers, read from its text.

``data/paper_tables.txt`` holds the nine tables of the paper verbatim, as the text the project holds
prints them (cells separated by tabs, LaTeX as printed; provenance and sha256 in
``data/paper_tables.yml``). :func:`printed_numbers` extracts every number printed in them, with
where it stands (table, line, row label, column header) and half a unit in its last printed digit.
The scorecard (:mod:`sdsl.chapters.scorecard`) gives each of them a row: compared with our value,
or, for a transcribed input (Tables 1 and 2, the inputs of Tables 5 to 7), checked against the
CSV of ``data/`` it was transcribed into (:func:`transcription`).

Cells are read as printed: ``${0.5959}_{\\pm 0.0018}$`` is two numbers, ``[-0.009915, -0.006609]``
two, ``$4.89\\times 10^{-3}$`` one, ``180B`` one (1.8e11), ``$10^{8}$ to $10^{10}$`` two,
``$\\|M\\|=8,\\;\\|D\\|=6$`` two; a cell with no number (a name such as ``OPT-13B`` or ``$\\mu$``,
or a description) is a label.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import cast

import pandas as pd

__all__ = ["TABLES_FILE", "NUMBER_COLUMNS", "cell_numbers", "read_tables", "printed_numbers", "transcription"]

#: What the numbers of the tables are read from.
TABLES_FILE = "paper_tables.txt"

#: Columns of :func:`printed_numbers`.
NUMBER_COLUMNS = ["table", "line", "row", "label", "column", "k", "text", "value", "tolerance"]

_NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_SUFFIX = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
_PATTERNS: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(rf"^\$\{{({_NUM})\}}_\{{\\pm\s*({_NUM})\}}\$$"), "plain"),  # ${a}_{\pm b}$
    (re.compile(rf"^\$?({_NUM})\s*\\pm\s*({_NUM})\$?$"), "plain"),  # $a\pm b$
    (re.compile(rf"^\$?\\pm\s*({_NUM})\$?$"), "plain"),  # $\pm a$
    (re.compile(rf"^\[({_NUM}),\s*({_NUM})\]$"), "plain"),  # [a, b]
    (re.compile(rf"^({_NUM})([KMBT])$"), "suffix"),  # 180B
    (re.compile(rf"^\$?({_NUM})\$?$"), "plain"),  # 0.5959, $288$
)
_SCI = re.compile(rf"\$?(?:({_NUM})\s*\\times\s*)?10\^\{{({_NUM})\}}\$?")
_GRID = re.compile(r"\\\|[^|]*?\\\|\s*=\s*(\d+)")


def _half_unit(text: str) -> float:
    """Half a unit in the last printed digit of ``text`` (``0.599`` -> 5e-4, ``117`` -> 0.5)."""
    # text is a number matched by _NUM: finite, so its exponent is an int (not 'n', 'N' or 'F')
    return float(Decimal(5).scaleb(cast(int, Decimal(text).as_tuple().exponent) - 1))


def cell_numbers(cell: str) -> list[tuple[str, float, float]]:
    """The numbers printed in one table cell, in order: ``(text, value, tolerance)`` with the
    tolerance half a unit in the last printed digit (of the mantissa, for ``a \\times 10^{k}``
    and ``180B``). A label (no number) gives ``[]``."""
    c = cell.strip()
    if not c:
        return []
    if _GRID.search(c):
        return [(m.group(1), float(m.group(1)), 0.5) for m in _GRID.finditer(c)]
    parts = [p.strip() for p in re.split(r"\s+to\s+", c)]
    sci = [m for p in parts if (m := _SCI.fullmatch(p))]
    if len(sci) == len(parts):
        out = []
        for p, m in zip(parts, sci):
            mant, exp = m.group(1) or "1", int(m.group(2))
            scale = 10.0**exp
            out.append((p, float(mant) * scale, (_half_unit(mant) if m.group(1) else 0.0) * scale))
        return out
    for pattern, kind in _PATTERNS:
        m = pattern.match(c)
        if m:
            if kind == "suffix":
                scale = _SUFFIX[m.group(2)]
                return [(c, float(m.group(1)) * scale, _half_unit(m.group(1)) * scale)]
            return [(g, float(g), _half_unit(g)) for g in m.groups()]
    return []


def _path() -> Path:
    from sdsl.paths import DATA

    return DATA / TABLES_FILE


def read_tables(path: str | Path | None = None) -> dict[str, list[list[str]]]:
    """The tables of ``data/paper_tables.txt`` (or ``path``): ``{"Table 1": [cells of each line]}``.

    Raises ``ValueError`` when the file's sha256 differs from the one its ``.yml`` records (the
    text was edited without updating its provenance)."""
    import yaml

    from sdsl.data import sha256

    p = Path(path) if path is not None else _path()
    meta_path = p.with_suffix(".yml")
    if meta_path.is_file():
        recorded = (yaml.safe_load(meta_path.read_text(encoding="utf-8")) or {}).get("sha256")
        if recorded and recorded != sha256(p):
            raise ValueError(
                f"{p}: sha256 {sha256(p)[:12]}... differs from {str(recorded)[:12]}... recorded in "
                f"{meta_path.name}; update it after a deliberate edit"
            )
    tables: dict[str, list[list[str]]] = {}
    current = None
    for line in p.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            tables[current] = []
        elif current is not None and line.strip() and not line.startswith("#"):
            tables[current].append(line.split("\t"))
    return tables


#: Tables printed in groups of three lines whose middle line names the target (Tables 4 and 5).
_GROUPED = ("Table 4", "Table 5")


def printed_numbers(path: str | Path | None = None) -> pd.DataFrame:
    """Every number printed in the paper's tables, one row each (:data:`NUMBER_COLUMNS`): the
    table, the line (0 = the header), the row (the line's first label cell; in Tables 4 and 5 the
    target named on the middle line of its group of three), the line's last label (``label``:
    Table 4's function, Table 5's draft family), the column header, the position ``k`` in its
    cell, the printed text, its value and half a unit in its last printed digit."""
    rows = []
    for table, lines in read_tables(path).items():
        header = [c.strip() for c in lines[0]] if lines else []
        previous = ""
        for i, cells in enumerate(lines):
            if i == 0 and table not in ("Table 1", "Table 2"):
                continue  # a header of labels
            labels = [c.strip() for c in cells if c.strip() and not cell_numbers(c)]
            if table in _GROUPED:
                middle = lines[3 * ((i - 1) // 3) + 2]
                row = next(c.strip() for c in middle if c.strip() and not cell_numbers(c))
            else:
                row = labels[0] if labels else previous
            previous = row
            for j, cell in enumerate(cells):
                for k, (text, value, tol) in enumerate(cell_numbers(cell)):
                    rows.append(
                        {
                            "table": table,
                            "line": i,
                            "row": row,
                            "label": labels[-1] if labels else "",
                            "column": header[j] if j < len(header) else "",
                            "k": k,
                            "text": text,
                            "value": value,
                            "tolerance": tol,
                        }
                    )
    return pd.DataFrame(rows, columns=NUMBER_COLUMNS)


def _acceptance_inputs(numbers: pd.DataFrame, acceptance: pd.DataFrame, table: str) -> list[dict]:
    """Tables 1 and 2: the draft perplexities (line 1), then per target its perplexity, and per
    draft alpha and the half-width of its interval."""
    t = numbers[numbers["table"] == table]
    src = acceptance[acceptance["source_table"] == int(table.split()[1])]
    out = []
    for r in t.itertuples(index=False):
        if r.line == 0:
            continue
        if r.line == 1:
            sub = src[src["draft"] == r.column]
            item, value, where = f"{r.column} draft perplexity", sub["draft_ppl"], "draft_ppl"
        elif r.column in ("Draft Model", ""):
            sub = src[src["target"] == r.row]
            item, value, where = f"{r.row} target perplexity", sub["target_ppl"], "target_ppl"
        else:
            sub = src[(src["target"] == r.row) & (src["draft"] == r.column)]
            col = "alpha" if r.k == 0 else "alpha_hw95"
            item = f"{r.row} / {r.column} " + ("alpha" if r.k == 0 else "alpha half-width (95 %)")
            value, where = sub[col], col
        out.append(_input(table, item, r, value, "acceptance", where))
    return out


def _input(table: str, item: str, printed, values: pd.Series, dataset: str, column: str) -> dict:
    vals = sorted(set(float(v) for v in values))
    if len(vals) != 1:
        raise ValueError(f"data/{dataset}.csv: expected one value of {column} for {table} {item!r}, found {vals}")
    return {
        "table": table,
        "item": item,
        "printed_text": printed.text,
        "printed": float(printed.value),
        "tolerance": float(printed.tolerance),
        "transcribed": vals[0],
        "dataset": dataset,
        "column": column,
    }


def transcription(numbers: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every transcribed input of the paper beside the number its text prints: Tables 1 and 2
    (``data/acceptance.csv``), Table 5's target sizes ``M``, target tokens ``D'`` and draft tokens
    ``D`` (``data/paper_table5.csv``), Table 6's latencies (``data/latency.csv``) and Table 7's grid
    (``data/paper_table7.csv``). Columns: ``table, item, printed_text, printed, tolerance,
    transcribed, dataset, column``; the scorecard judges ``|transcribed - printed| <= tolerance``."""
    from sdsl import data

    nums = printed_numbers() if numbers is None else numbers
    rows = [
        *_acceptance_inputs(nums, data.load("acceptance"), "Table 1"),
        *_acceptance_inputs(nums, data.load("acceptance"), "Table 2"),
    ]
    t5 = data.load("paper_table5")
    for r in nums[nums["table"] == "Table 5"].itertuples(index=False):
        col = {
            "M (target size)": "m",
            "$D^{\\prime}$ (training target size)": "d_target",
            "$D$ (training draft size)": "d_draft",
        }.get(r.column)
        if col is None:
            continue
        sub = t5[t5["target"] == r.row]
        if col == "d_draft":  # one per row: the draft family printed on the same line
            fam = r.label
            sub = sub[sub["draft_family"] == fam]
            item = f"{r.row} {fam} drafts D"
        else:
            item = f"{r.row} {'M' if col == 'm' else chr(68) + chr(39)}"
        rows.append(_input("Table 5", item, r, sub[col], "paper_table5", col))
    lat = data.load("latency")
    metric = {"TTFT (s)": "ttft", "TTOT (s)": "ttot", "TPOT (s)": "tpot"}
    for r in nums[nums["table"] == "Table 6"].itertuples(index=False):
        if r.column not in metric:
            continue
        m = metric[r.column]
        col = f"{m}_s" if r.k == 0 else f"{m}_moe_s"
        item = f"{r.row} {m.upper()}" + ("" if r.k == 0 else " margin of error")
        rows.append(_input("Table 6", item, r, lat.loc[lat["draft"] == r.row, col], "latency", col))
    t7 = data.load("paper_table7").set_index("parameter")
    names = {"$N$": "N", "$M$": "M", "$D$": "D", "$D\\prime$": "D_prime"}
    for r in nums[nums["table"] == "Table 7"].itertuples(index=False):
        p = names[r.row]
        col = "points" if r.column == "Number of Grid Points" else ("low" if r.k == 0 else "high")
        rows.append(
            _input(
                "Table 7",
                f"{p} {col if col == 'points' else col + ' end'}",
                r,
                pd.Series([t7.loc[p, col]]),
                "paper_table7",
                col,
            )
        )
    return pd.DataFrame(rows)

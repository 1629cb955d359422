"""Tables formatted for reading in the book: no index, units in the headers, numbers at a sensible
precision, missing values as a dash, long text wrapped, and every table within the text column.

:func:`show` turns a chapter's table (as saved to its CSV, full precision) into what the reader sees
(HTML rendered by myst-nb); the CSV keeps every digit and the download link beside the table points
to it. A table whose columns would not fit the text column of the book (:data:`COLUMN_PX`, the
column at a 1400 px window) is shown as consecutive parts, each repeating the columns that name a
row (:func:`split_columns`); a table of more than :data:`FOLD_ROWS` rows is folded under a line that
says how many rows it has, so that the page's text stays readable.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from html import escape
from typing import Any

__all__ = ["number", "words", "WORDS", "show", "split_columns", "Table", "COLUMN_PX", "FOLD_ROWS"]

#: What a missing value reads as.
DASH = "\u2013"
#: The width a table may take: the text column of the book at a 1400 px window (772 px with the
#: window's scroll bar) less a margin for the estimate of the font's widths.
COLUMN_PX = 740
#: Tables with more rows than this are folded (a reader opens them; the CSV holds them all).
FOLD_ROWS = 30
#: Average width of a character of the tables' font (``sdsl.css``: 0.875 rem of DejaVu Sans, 14 px),
#: in px, and the padding of a cell, left and right together.
CHAR_PX, PAD_PX = 8.2, 16.0
#: Text longer than this (characters) is wrapped; a wrapped column is this many characters wide.
WRAP_CHARS = 28
#: A header wraps onto at most this many lines.
HEADER_LINES = 2


def number(value: Any, digits: int = 4) -> str:
    """A number at ``digits`` significant digits (scientific notation outside 1e-3 .. 1e6), a dash
    for a missing value, text as it is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            return DASH
        if v != 0 and not (1e-3 <= abs(v) < 1e6):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}g}"
    text = str(value)
    return DASH if text in ("", "nan", "None") else text


#: Identifiers of the package's tables as a reader says them: a header of a column shown without a
#: header of its own, and a cell of text that is exactly one of them.
WORDS: dict[str, str] = {
    "function": "form",
    "quantity": "quantity",
    "estimate": "estimate",
    "std_error": "standard error",
    "moe": "margin of error (95 %)",
    "ci_lower": "95 % CI, low",
    "ci_upper": "95 % CI, high",
    "p1": "p₁",
    "p2": "p₂",
    "moe1": "MoE p₁",
    "moe2": "MoE p₂",
    "ci1_lower": "95 % CI p₁, low",
    "ci1_upper": "95 % CI p₁, high",
    "ci2_lower": "95 % CI p₂, low",
    "ci2_upper": "95 % CI p₂, high",
    "mse": "MSE",
    "r2": "R²",
    "adj_r2": "adjusted R²",
    "n": "n",
    "observations": "observations",
    "linear": "linear",
    "log": "logarithmic",
    "power": "power law",
    "A_loss": "A of the loss law",
    "B_loss": "B of the loss law",
    "E_loss": "E of the loss law",
    "a_loss": "a of the loss law",
    "b_loss": "b of the loss law",
}


def words(text: Any) -> Any:
    """``text`` as a reader says it (:data:`WORDS`, and the names of the acceptance laws and of the
    loss-law constants of :mod:`sdsl.chapters.beyond`); anything else as it is."""
    if not isinstance(text, str):
        return text
    from sdsl.chapters.beyond import CONSTANT_NAMES, LAW_NAMES

    return WORDS.get(text) or LAW_NAMES.get(text) or CONSTANT_NAMES.get(text) or text


def _visible(text: str) -> str:
    """The text a cell shows (an HTML link's words, not its address)."""
    import re

    return re.sub(r"<[^>]+>", "", text)


def _header_px(header: str) -> float:
    words = str(header).split()
    longest = max((len(w) for w in words), default=1)
    return max(longest, math.ceil(len(str(header)) / HEADER_LINES)) * CHAR_PX + PAD_PX


def column_px(header: str, cells: Sequence[str], wrapped: bool) -> float:
    """The width (px) a column takes: its widest cell (a wrapped column :data:`WRAP_CHARS`
    characters at most) or its header wrapped onto :data:`HEADER_LINES` lines."""
    widest = max((len(_visible(c)) for c in cells), default=1)
    if wrapped:
        widest = min(widest, WRAP_CHARS)
    return max(widest * CHAR_PX + PAD_PX, _header_px(header))


def split_columns(widths: Mapping[str, float], keys: Sequence[str], limit: float = COLUMN_PX) -> list[list[str]]:
    """The columns of ``widths`` (in order, column -> px) in consecutive parts that each fit ``limit``
    px with the ``keys`` columns (which name a row) repeated at the left of every part; one part when
    everything fits. A column too wide to share a part stands alone with the keys."""
    rest = [c for c in widths if c not in keys]
    base = sum(widths[k] for k in keys)
    parts: list[list[str]] = []
    current: list[str] = []
    used = base
    for c in rest:
        if current and used + widths[c] > limit:
            parts.append(current)
            current, used = [], base
        current.append(c)
        used += widths[c]
    if current or not parts:
        parts.append(current)
    return [list(keys) + p for p in parts]


class Table:
    """A table as the book shows it: one or more HTML tables (the parts of :func:`split_columns`),
    folded under a summary line when long. ``to_html()`` is what a notebook displays."""

    def __init__(self, stylers: Sequence[Any], n_rows: int, fold: bool, caption: str | None) -> None:
        self.stylers, self.n_rows, self.fold, self.caption = list(stylers), n_rows, fold, caption

    def to_html(self) -> str:
        parts = [s.to_html() for s in self.stylers]
        if len(parts) > 1:
            notes = [
                f'<p class="sdsl-table-part">Part {i} of {len(parts)} of the table (the columns that name a row '
                "are repeated).</p>"
                for i in range(1, len(parts) + 1)
            ]
            parts = [n + p for n, p in zip(notes, parts)]
        html = '<div class="sdsl-table">' + "".join(parts) + "</div>"
        if self.fold:
            what = escape(self.caption) if self.caption else "The table"
            html = (
                f'<details class="sdsl-fold"><summary>{what}: {self.n_rows} rows (select to show; the CSV holds '
                f"every digit)</summary>{html}</details>"
            )
        return html

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"Table of {self.n_rows} rows in {len(self.stylers)} part(s)"


def _cell(value: Any, digits: int) -> str:
    return number(words(value), digits)


def show(
    df: Any,
    columns: Mapping[str, str] | None = None,
    digits: int | Mapping[str, int] = 4,
    formats: Mapping[str, Callable[[Any], str]] | None = None,
    wrap: Sequence[str] = (),
    caption: str | None = None,
    keys: Sequence[str] | None = None,
    fold: bool | None = None,
) -> Table:
    """A table for reading.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (full precision).
    columns : mapping, optional
        Column -> header to show (with its unit, e.g. ``"n_star": "N* (parameters)"``); when given,
        only these columns are shown, in this order.
    digits : int or mapping
        Significant digits of numbers, one for all or per column.
    formats : mapping, optional
        Column -> a function of the cell giving its text (overrides ``digits``).
    wrap : sequence of str
        Columns of long text, wrapped to a readable width (text longer than :data:`WRAP_CHARS`
        characters is wrapped in any case).
    caption : str, optional
    keys : sequence of str, optional
        The columns that name a row, repeated in every part when the table is split (default: its
        leading columns of text, at most two, or its first column).
    fold : bool, optional
        Fold the table under a summary line (default: when it has more than :data:`FOLD_ROWS` rows).

    Returns
    -------
    Table
    """
    cols = list(columns) if columns is not None else list(df.columns)
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"show: the table has no column(s) {missing}; it has {list(df.columns)}")
    unknown = [c for c in keys or () if c not in cols] + [c for c in wrap if c not in df.columns]
    if unknown:
        raise ValueError(f"show: keys must be shown columns and wrap columns of the table; {unknown} are not")
    fmt: dict[str, Callable[[Any], str]] = {}
    for c in cols:
        if formats and c in formats:
            fmt[c] = formats[c]
        else:
            d = digits.get(c, 4) if isinstance(digits, Mapping) else int(digits)
            fmt[c] = partial(_cell, digits=d)
    names = {c: columns[c] if columns is not None else words(c) for c in cols}
    texts = {c: [fmt[c](v) for v in df[c]] for c in cols}
    long_text = [c for c in cols if any(len(_visible(t)) > WRAP_CHARS for t in texts[c])]
    wrapped = [c for c in cols if c in wrap or c in long_text]
    widths = {c: column_px(names[c], texts[c], c in wrapped) for c in cols}
    if keys is None:
        leading = []
        for c in cols[:2]:
            if df[c].dtype.kind in "OSUb" or str(df[c].dtype) in ("string", "category"):
                leading.append(c)
            else:
                break
        keys = leading or cols[:1]
    parts = split_columns(widths, [k for k in keys if k in cols])
    stylers = []
    for part in parts:
        out = df[part].copy().rename(columns=names)
        # a stable id (pandas draws a random one): the executed notebooks stay byte-stable
        uid = "t" + hashlib.sha256("|".join(map(str, out.columns)).encode()).hexdigest()[:8]
        styler = out.style.set_uuid(uid).format({names[c]: fmt[c] for c in part}).hide(axis="index")
        shown_wrap = [names[c] for c in part if c in wrapped]
        if shown_wrap:
            styler = styler.set_properties(
                subset=shown_wrap,
                **{"white-space": "normal", "min-width": "12em", "max-width": "24em", "text-align": "left"},
            )
        if caption:
            styler = styler.set_caption(caption)
        stylers.append(styler)
    return Table(stylers, len(df), len(df) > FOLD_ROWS if fold is None else fold, caption)

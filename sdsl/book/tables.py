"""Tables formatted for reading in the book: a numbered caption, no index, units in the headers,
numbers right-aligned at three or four significant digits, missing values as a dash, long text
wrapped, and no wider than the text column.

:func:`show` turns a chapter's table (as saved to its CSV, full precision) into what the reader sees.
The book renders it as a MyST ``table`` directive (``_repr_markdown_``: a real table of the
document, numbered per chapter and cited with ``{numref}`` by its label); a notebook viewer shows
its HTML (``_repr_html_``). The CSV keeps every digit and every column, and the download link under
the table points to it.

A table is split by meaning, never by width: it shows the columns it is given, in order, as far as
they fit the text column at a 1400 px window (:data:`COLUMN_PX`); the columns that do not fit are
left to the CSV, and a line under the table names them. A table of more than :data:`FOLD_ROWS`
rows is folded under a line that says how many rows it has.

Captions: a table published through :class:`sdsl.book.views.Publisher` takes the caption and label
of its declaration (:func:`sdsl.book.outputs.declare`); :func:`expect` records them for a table
that a notebook saves (``publish.save``) and then shows with :func:`show` itself.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from html import escape
from typing import Any

__all__ = [
    "number",
    "count",
    "as_printed",
    "printed_as",
    "words",
    "reader_text",
    "reader_words",
    "WORDS",
    "show",
    "expect",
    "fit_columns",
    "Table",
    "COLUMN_PX",
    "FOLD_ROWS",
    "DIGITS",
]

#: What a missing value reads as.
DASH = "\u2013"
#: The minus sign of a number (not a hyphen).
MINUS = "\u2212"
#: The most significant digits a number of a table shows (the CSV keeps them all).
DIGITS = 4
#: The width a table may take: the text column of the book at a 1400 px window (772 px with the
#: window's scroll bar) less a margin for the estimate of the font's widths (which errs wide: a
#: column of "0.5959 ± 0.0018" is estimated at 139 px and drawn at 134).
COLUMN_PX = 764
#: Tables with more rows than this are folded (a reader opens them; the CSV holds them all).
FOLD_ROWS = 30
#: Average width of a character of the tables' font (``sdsl.css``: 0.875 rem, 14 px), in px, and
#: the padding of a cell, left and right together.
CHAR_PX, PAD_PX = 8.2, 16.0
#: Text longer than this (characters) is wrapped; a wrapped column is this many characters wide.
WRAP_CHARS = 28
#: A header wraps onto at most this many lines.
HEADER_LINES = 2

_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def _minus(text: str) -> str:
    return MINUS + text[1:] if text.startswith("-") else text


_E_NOTATION = re.compile(r"(?<![\w.])(-?)(\d+(?:\.\d+)?)e([+-]?\d+)(?![\w.])")
_HYPHEN_MINUS = re.compile(r"(?<![\w.\u2212-])-(?=\d)")


def as_printed(text: str) -> str:
    """``text`` with every number in Python's e-notation as a power of ten and the minus sign of a
    number a minus sign (``-1.4e-05`` -> ``−1.4 × 10⁻⁵``, ``1e+07`` -> ``10⁷``): how the book prints
    a number of its prose (the local Sphinx extension ``sdsl_reader`` applies it to every glued
    number)."""

    def power(m: re.Match) -> str:
        sign, mantissa, exponent = m.group(1), m.group(2), int(m.group(3))
        ten = "10" + str(exponent).translate(_SUPERSCRIPT)
        body = ten if float(mantissa) == 1 else f"{mantissa} \u00d7 {ten}"
        return (MINUS if sign else "") + body

    return _HYPHEN_MINUS.sub(MINUS, _E_NOTATION.sub(power, text))


def printed_as(value: Any, spec: str) -> str:
    """``value`` formatted with the Python format ``spec`` and printed as the book prints a glued
    number (:func:`as_printed`): the same text as ``{glue:text}`name:spec``` in a chapter."""
    return as_printed(format(value, spec))


def scientific(v: float, digits: int = DIGITS) -> str:
    """``v`` as a mantissa of ``digits`` significant digits times a power of ten, as printed
    (``1.240 × 10⁸``, ``−9.25 × 10⁻⁵``)."""
    mantissa, exponent = f"{v:.{digits - 1}e}".split("e")
    return f"{_minus(mantissa)} \u00d7 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def number(value: Any, digits: int = DIGITS) -> str:
    """A number at ``digits`` significant digits (a power of ten outside 0.001 .. 10^digits), a
    dash for a missing value, yes or no for a flag, an integer below 100,000 as it is; text as
    :func:`words` says it."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if type(value).__name__ == "bool_":
        return "yes" if bool(value) else "no"
    if isinstance(value, numbers.Integral) and abs(int(value)) < 100_000:
        return _minus(f"{int(value):,}")
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            return DASH
        if math.isinf(v):
            return _minus("-\u221e" if v < 0 else "\u221e")
        if v == 0:
            return "0"
        if not (1e-3 <= abs(v) < 10**digits):
            return scientific(v, digits)
        return _minus(f"{v:.{digits}g}")
    text = str(words(value))
    return DASH if text in ("", "nan", "None", "<NA>") else as_printed(text)


def count(value: Any, digits: int = DIGITS) -> str:
    """A count of parameters or tokens as the field writes it, at ``digits`` significant digits:
    ``124M``, ``14.17B``, ``15T``, ``950k``; a dash when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    v = float(value)
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return _minus(f"{v / div:.{digits}g}{suffix}")
    return number(v, digits)


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
    "besiroglu2024": "Besiroglu et al. 2024",
    "hoffmann2022": "Hoffmann et al. 2022",
    "held_out_target": "held-out target",
    "fit_target": "fit target",
    "with_embeddings": "with embeddings",
    "non_embedding": "without embeddings",
    "calibration": "calibration draft",
    "test": "test draft",
}

_SNAKE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+$")


def words(text: Any) -> Any:
    """``text`` as a reader says it (:data:`WORDS`, and the names of the acceptance laws and of the
    loss-law constants of :mod:`sdsl.chapters.beyond`); an identifier in snake case that none of
    them names reads with spaces; anything else as it is."""
    if not isinstance(text, str):
        return text
    from sdsl.chapters.beyond import CONSTANT_NAMES, LAW_NAMES

    said = WORDS.get(text) or LAW_NAMES.get(text) or CONSTANT_NAMES.get(text)
    if said:
        return said
    return text.replace("_", " ") if _SNAKE.match(text) else text


def _power(mantissa: str, exponent: str) -> str:
    power = "10" + str(int(exponent)).translate(_SUPERSCRIPT)
    return power if float(mantissa) == 1 else f"{mantissa} \u00d7 {power}"


#: Python's names of quantities in a title or caption, as a reader writes them.
_READER = (
    (re.compile(r"\bgamma\*"), "γ*"),
    (re.compile(r"\bgamma\b"), "γ"),
    (re.compile(r"\balpha\b"), "α"),
    (re.compile(r"\bmu\b"), "μ"),
    (re.compile(r"D'"), "D′"),
    (re.compile(r"g'"), "g′"),
    (re.compile(r"\b(\d+(?:\.\d+)?)e\+?(\d+)\b"), lambda m: _power(m.group(1), m.group(2))),
)


def reader_text(text: str) -> str:
    """A title or caption with Python's spellings as a reader writes them: ``gamma*`` as γ*,
    ``alpha`` as α, ``D'`` as D′, ``4e12`` as 4 × 10¹²."""
    for pattern, repl in _READER:
        text = pattern.sub(repl, text)
    return text


def reader_words(fig) -> int:
    """Write every text of ``fig`` that is an identifier of the package (a law's or a constant
    set's name, a run's role: ``loglin_n_y``, ``held_out_target``) as a reader says it
    (:func:`sdsl.book.tables.words`). Returns how many texts changed."""
    from matplotlib.text import Text

    changed = 0
    for t in fig.findobj(Text):
        text = t.get_text()
        # identifiers only: a word of plain English (a tick label "log") stays as it is
        said = words(text) if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+\d{4}", text) else text
        if said != text:
            t.set_text(said)
            changed += 1
    return changed


def _visible(text: str) -> str:
    """The text a cell shows (an HTML link's words, not its address)."""
    return re.sub(r"<[^>]+>", "", text)


def _header_px(header: str) -> float:
    parts = str(header).split()
    longest = max((len(w) for w in parts), default=1)
    return max(longest, math.ceil(len(str(header)) / HEADER_LINES)) * CHAR_PX + PAD_PX


def column_px(header: str, cells: Sequence[str], wrapped: bool) -> float:
    """The width (px) a column takes: its widest cell (a wrapped column :data:`WRAP_CHARS`
    characters at most) or its header wrapped onto :data:`HEADER_LINES` lines."""
    widest = max((len(_visible(c)) for c in cells), default=1)
    if wrapped:
        widest = min(widest, WRAP_CHARS)
    return max(widest * CHAR_PX + PAD_PX, _header_px(header))


def fit_columns(widths: Mapping[str, float], limit: float = COLUMN_PX) -> tuple[list[str], list[str]]:
    """The columns of ``widths`` (in order, column -> px) that fit ``limit`` px together, taken in
    order (the first always), and the columns left out."""
    shown: list[str] = []
    used = 0.0
    for c, w in widths.items():
        if shown and used + w > limit:
            break
        shown.append(c)
        used += w
    return shown, [c for c in widths if c not in shown]


#: Captions and labels of tables a notebook saved and will show itself (:func:`expect`), by the
#: identity of the DataFrame.
_EXPECTED: dict[int, tuple[Any, str, str]] = {}


def expect(df: Any, caption: str, label: str) -> None:
    """Record that ``df``, when :func:`show` shows it without a caption of its own, is captioned
    ``caption`` and labelled ``label`` (once: a second showing of the same frame is not labelled
    again)."""
    _EXPECTED[id(df)] = (df, caption, label)


def _expected(df: Any) -> tuple[str | None, str | None]:
    entry = _EXPECTED.get(id(df))
    if entry is None or entry[0] is not df:
        return None, None
    del _EXPECTED[id(df)]
    return entry[1], entry[2]


_NUMERIC = re.compile(r"^[\u2212+\-\[(]?[\d.]")


def _numeric(text: str) -> bool:
    """Whether a cell reads as a number (or an interval of numbers), right-aligned."""
    return bool(_NUMERIC.match(_visible(text).strip()))


def _md(text: str) -> str:
    """``text`` escaped for a cell or caption of a Markdown table (raw HTML of a cell kept)."""
    if "<" in text and re.search(r"</?[a-z][^>]*>", text):
        tags = re.split(r"(</?[a-z][^>]*>)", text)
        return "".join(t if re.fullmatch(r"</?[a-z][^>]*>", t) else _md(t) for t in tags)
    out = re.sub(r"([\\`*_{}\[\]<>#|$~])", r"\\\1", text)
    return out.replace("\n", " ")


class Table:
    """A table as the book shows it. ``_repr_markdown_`` is the MyST the book renders (a numbered
    ``table`` directive when it has a caption and a label), ``_repr_html_`` / ``to_html`` what a
    notebook viewer shows.

    Attributes: ``headers`` (shown), ``rows`` (the cells' text), ``align`` (``"left"`` or
    ``"right"`` per column), ``wrapped`` (columns whose text wraps), ``left_out`` (headers of the
    columns only the CSV has), ``caption``, ``label``, ``fold``.
    """

    def __init__(
        self,
        headers: Sequence[str],
        rows: Sequence[Sequence[str]],
        align: Sequence[str],
        wrapped: Sequence[bool],
        left_out: Sequence[str] = (),
        caption: str | None = None,
        label: str | None = None,
        fold: bool = False,
        styler: Any = None,
    ) -> None:
        self.headers, self.rows, self.align, self.wrapped = (
            list(headers),
            [list(r) for r in rows],
            list(align),
            list(wrapped),
        )
        self.left_out, self.caption, self.label, self.fold = list(left_out), caption, label, fold
        self.n_rows = len(self.rows)
        self._styler = styler

    def _note(self) -> str:
        if not self.left_out:
            return ""
        return f'<p class="sdsl-table-more">Left to the CSV, with every digit: {escape(", ".join(self.left_out))}.</p>'

    def _repr_markdown_(self) -> str:
        def cell(text: str, j: int) -> str:
            body = _md(text)
            return f'<span class="sdsl-wrap">{body}</span>' if self.wrapped[j] and len(_visible(text)) > 12 else body

        head = "| " + " | ".join(_md(h) for h in self.headers) + " |"
        rule = "|" + "|".join("--:" if a == "right" else ":--" for a in self.align) + "|"
        body = ["| " + " | ".join(cell(c, j) for j, c in enumerate(r)) + " |" for r in self.rows]
        options = [":class: sdsl-table"]
        if self.label:
            options.insert(0, f":name: {self.label}")
        fence = f":::{{table}} {_md(self.caption)}" if self.caption else ":::{table}"
        lines = [fence, *options, "", head, rule, *body, ":::"]
        out = "\n".join(lines)
        if self.fold:
            out = (
                f'<details class="sdsl-fold"><summary>{self.n_rows} rows: select to show the table '
                f"(the CSV holds them all)</summary>\n\n{out}\n\n</details>"
            )
        note = self._note()
        return out + ("\n\n" + note if note else "") + "\n"

    def to_html(self) -> str:
        """The table as HTML (a pandas Styler's), with its caption and the line naming the columns
        left to the CSV."""
        html = '<div class="sdsl-table">' + self._styler.to_html() + "</div>" + self._note()
        if self.fold:
            html = f'<details class="sdsl-fold"><summary>{self.n_rows} rows (select to show)</summary>{html}</details>'
        return html

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"Table of {self.n_rows} rows and {len(self.headers)} columns"


def _cell(value: Any, digits: int) -> str:
    return number(words(value), digits)


def show(
    df: Any,
    columns: Mapping[str, str] | None = None,
    digits: int | Mapping[str, int] = DIGITS,
    formats: Mapping[str, Callable[[Any], str]] | None = None,
    wrap: Sequence[str] = (),
    caption: str | None = None,
    keys: Sequence[str] | None = None,
    fold: bool | None = None,
    label: str | None = None,
) -> Table:
    """A table for reading.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (full precision).
    columns : mapping, optional
        Column -> header to show (with its unit, e.g. ``"n_star": "N* (parameters)"``); when given,
        only these columns, in this order, as far as they fit the text column (the rest are named
        under the table, left to the CSV).
    digits : int or mapping
        Significant digits of numbers, one for all or per column (at most :data:`DIGITS`).
    formats : mapping, optional
        Column -> a function of the cell giving its text (overrides ``digits``).
    wrap : sequence of str
        Columns of long text, wrapped to a readable width (text longer than :data:`WRAP_CHARS`
        characters is wrapped in any case).
    caption, label : str, optional
        The table's caption and the label that cites it (``{numref}`label```); by default those
        :func:`expect` recorded for ``df``. A table with both is numbered.
    keys : sequence of str, optional
        Accepted for compatibility; the first column always stays.
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
    if caption is None and label is None:
        caption, label = _expected(df)
    fmt: dict[str, Callable[[Any], str]] = {}
    for c in cols:
        if formats and c in formats:
            fmt[c] = formats[c]
        else:
            d = digits.get(c, DIGITS) if isinstance(digits, Mapping) else int(digits)
            fmt[c] = partial(_cell, digits=min(d, DIGITS))
    names = {c: columns[c] if columns is not None else str(words(c)) for c in cols}
    texts = {c: [str(words(fmt[c](v))) for v in df[c]] for c in cols}
    long_text = [c for c in cols if any(len(_visible(t)) > WRAP_CHARS for t in texts[c])]
    wrapped = [c for c in cols if c in wrap or c in long_text]
    widths = {c: column_px(names[c], texts[c], c in wrapped) for c in cols}
    shown, left = fit_columns(widths)
    align = [
        "right" if all(_numeric(t) or t == DASH for t in texts[c]) and any(_numeric(t) for t in texts[c]) else "left"
        for c in shown
    ]
    rows = [[texts[c][i] for c in shown] for i in range(len(df))]
    out = df[shown].copy().rename(columns=names)
    # a stable id (pandas draws a random one): the executed notebooks stay byte-stable
    uid = "t" + hashlib.sha256("|".join(map(str, out.columns)).encode()).hexdigest()[:8]
    styler = out.style.set_uuid(uid).format({names[c]: fmt[c] for c in shown}).hide(axis="index")
    styler = styler.set_properties(
        subset=[names[c] for c, a in zip(shown, align) if a == "right"], **{"text-align": "right"}
    )
    shown_wrap = [names[c] for c in shown if c in wrapped]
    if shown_wrap:
        styler = styler.set_properties(
            subset=shown_wrap,
            **{"white-space": "normal", "min-width": "12em", "max-width": "24em", "text-align": "left"},
        )
    if caption:
        styler = styler.set_caption(caption)
    return Table(
        [names[c] for c in shown],
        rows,
        align,
        [c in wrapped for c in shown],
        [names[c] for c in left],
        caption,
        label,
        len(df) > FOLD_ROWS if fold is None else fold,
        styler,
    )

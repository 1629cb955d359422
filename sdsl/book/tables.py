"""Tables formatted for reading in the book: no index, units in the headers, numbers at a sensible
precision, missing values as a dash, long text wrapped.

:func:`show` turns a chapter's table (as saved to its CSV, full precision) into what the reader sees
(a pandas ``Styler``, rendered as HTML by myst-nb); the CSV keeps every digit and the download link
beside the table points to it. The book's stylesheet (``book/_static/sdsl.css``) gives every table a
horizontal scroll box, so a wide table never overflows its column.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

__all__ = ["number", "show"]

#: What a missing value reads as.
DASH = "\u2013"


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


def show(
    df: Any,
    columns: Mapping[str, str] | None = None,
    digits: int | Mapping[str, int] = 4,
    formats: Mapping[str, Callable[[Any], str]] | None = None,
    wrap: Sequence[str] = (),
    caption: str | None = None,
):
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
        Columns of long text, wrapped to a readable width.
    caption : str, optional

    Returns
    -------
    pandas.io.formats.style.Styler
    """
    cols = list(columns) if columns is not None else list(df.columns)
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"show: the table has no column(s) {missing}; it has {list(df.columns)}")
    out = df[cols].copy()
    fmt: dict[str, Callable[[Any], str]] = {}
    for c in cols:
        if formats and c in formats:
            fmt[c] = formats[c]
        else:
            d = digits.get(c, 4) if isinstance(digits, Mapping) else int(digits)
            fmt[c] = partial(number, digits=d)
    out = out.rename(columns=dict(columns) if columns is not None else {})
    fmt = {(columns or {}).get(c, c): f for c, f in fmt.items()}
    import hashlib

    # a stable id (pandas draws a random one): the executed notebooks stay byte-stable
    uid = "t" + hashlib.sha256("|".join(map(str, out.columns)).encode()).hexdigest()[:8]
    styler = out.style.set_uuid(uid).format(fmt).hide(axis="index")
    shown_wrap = [(columns or {}).get(c, c) for c in wrap]
    if shown_wrap:
        styler = styler.set_properties(
            subset=shown_wrap,
            **{"white-space": "normal", "min-width": "18em", "max-width": "36em", "text-align": "left"},
        )
    if caption:
        styler = styler.set_caption(caption)
    return styler

"""Numbers in the prose: glue a chapter's values under its prefix, as plain Python values.

A chapter's module computes the numbers its text cites in one tested ``summary()`` function (a
mapping name -> value); the notebook glues them all at once with :func:`glue_summary` in one hidden
cell and cites them as ``{glue:text}`<chapter>_<name>:.4g```. myst-nb cannot format numpy scalars,
and a boolean would read as "(true)" in a sentence, so values are converted here and booleans are
refused (say it in words: a string).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["plain", "glue_summary"]


def plain(name: str, value: Any) -> int | float | str:
    """``value`` as a plain ``int``, ``float`` or ``str`` for myst-nb's glue.

    Raises ``ValueError`` naming the value for a boolean, a non-finite float (a number the prose
    would print as "nan") or anything else.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"glue value {name!r} is a boolean: write it as words (a str), not '(true)'")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"glue value {name!r} is {v}: the prose cannot cite it")
        return v
    if isinstance(value, str):
        return value
    raise ValueError(f"glue value {name!r} must be a number or a str, got {type(value).__name__}")


def glue_summary(chapter: str, summary: Mapping[str, Any]) -> None:
    """Glue every entry of ``summary`` as ``<chapter>_<name>`` (not displayed)."""
    from myst_nb import glue

    for name, value in summary.items():
        glue(f"{chapter}_{name}", plain(name, value), display=False)

"""The one rule that decides whether our value reproduces a printed one.

A number printed with ``k`` decimals stands for every value within half a unit of its last digit:
``0.599`` for ``[0.5985, 0.5995]``. Ours *equals the printed precision* when
``|ours - printed| <= half_unit`` (:func:`equal_to_printed`), where ``half_unit`` comes from the
printed text (:func:`sdsl.data.printed_tolerance`). A relative slack of ``1e-9`` on ``half_unit``
absorbs the binary representation of both decimals (``0.5985`` is not exactly representable), so a
value on the rounding boundary counts as printed the way a reader would round it; it is far below
any difference a reader could see. Values that do not print equal can still be *within a stated
relative tolerance* of the printed one (:func:`within_tolerance`). :func:`classify` applies both,
in that order, and is the only place the scorecard and the chapters decide it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["PRINT_SLACK", "EQUAL", "WITHIN", "DIFFERS", "STATUSES", "equal_to_printed", "within_tolerance", "classify"]

#: Relative slack on half a printed unit (binary representation of the decimals).
PRINT_SLACK = 1e-9
#: Status of a value that equals the printed precision.
EQUAL = "equal to printed precision"
#: Status of a value within the stated relative tolerance, not at printed precision.
WITHIN = "within tolerance"
#: Status of a value outside both.
DIFFERS = "differs"
STATUSES = (EQUAL, WITHIN, DIFFERS)


def equal_to_printed(ours: ArrayLike, printed: ArrayLike, half_unit: ArrayLike) -> np.ndarray:
    """``|ours - printed| <= half_unit (1 + 1e-9)``, elementwise; False where any is NaN.

    Parameters
    ----------
    ours : our values.
    printed : the printed values.
    half_unit : half a unit in the last printed digit of each (:func:`sdsl.data.printed_tolerance`).

    Returns
    -------
    numpy.ndarray of bool (a bool for scalars)
    """
    o, p, h = (np.asarray(v, dtype=float) for v in (ours, printed, half_unit))
    with np.errstate(invalid="ignore"):
        out = np.abs(o - p) <= h * (1.0 + PRINT_SLACK)
    return out[()] if out.ndim == 0 else out


def within_tolerance(ours: ArrayLike, printed: ArrayLike, rtol: ArrayLike) -> np.ndarray:
    """``|ours - printed| <= rtol |printed|`` (with a 1e-12 relative slack), elementwise."""
    o, p, r = (np.asarray(v, dtype=float) for v in (ours, printed, rtol))
    with np.errstate(invalid="ignore"):
        out = np.abs(o - p) <= r * np.abs(p) * (1.0 + 1e-12)
    return out[()] if out.ndim == 0 else out


def classify(ours: float, printed: float, half_unit: float, rtol: float) -> str:
    """:data:`EQUAL`, :data:`WITHIN` or :data:`DIFFERS` for one value (non-finite: differs)."""
    if not (math.isfinite(ours) and math.isfinite(printed)):
        return DIFFERS
    if equal_to_printed(ours, printed, half_unit):
        return EQUAL
    if within_tolerance(ours, printed, rtol):
        return WITHIN
    return DIFFERS

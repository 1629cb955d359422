"""Axis labels a reader can read: units in the label, no offset text.

matplotlib writes very small or very large linear values with an offset label in the corner of
the axis ("1e-11", "1e8"), away from the unit. :func:`scaled` chooses the power of ten of the
data instead, divides the tick labels by it and writes it into the axis label:
``throughput (10^-11 tokens per FLOP)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["power_of_ten", "scaled", "tokens"]


def power_of_ten(values: Iterable[float]) -> int:
    """The power of ten of the largest finite magnitude in ``values`` (0 when there is none)."""
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v)) and float(v) != 0.0]
    return int(math.floor(math.log10(max(finite)))) if finite else 0


def scaled(ax, axis: str, label: str, unit: str, values: Iterable[float] | None = None) -> int:
    """Label the linear ``axis`` (``"x"`` or ``"y"``) of ``ax`` as ``label (10^k unit)`` with tick
    labels divided by ``10^k``, ``k`` the power of ten of ``values`` (default: the axis' data
    limits); ``k`` = 0 gives ``label (unit)``. Returns ``k``."""
    from matplotlib.ticker import FuncFormatter

    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    if values is None:
        values = ax.get_ylim() if axis == "y" else ax.get_xlim()
    k = power_of_ten(values)
    scale = 10.0**k
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / scale:g}"))
    text = f"{label} ($10^{{{k}}}$ {unit})" if k else f"{label} ({unit})"
    (ax.set_ylabel if axis == "y" else ax.set_xlabel)(text)
    return k


def tokens(n: float) -> str:
    """A token or parameter count as a reader writes it: ``180B``, ``2.4T``, ``18T``, ``125M``."""
    n = float(n)
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{n:.3g}"

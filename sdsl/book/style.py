"""The one place that sets the look of every figure and how figures are written to disk, and the
axis labels that carry their units (:func:`scaled`).

Figures are byte-stable between two runs: a fixed SVG hash salt, no creation date in SVG or
PNG metadata, fixed DPI and fonts that ship with matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import matplotlib as mpl
import seaborn as sns

__all__ = [
    "use",
    "FAMILY_COLORS",
    "SAVEFIG_METADATA",
    "family_color",
    "fix_layout",
    "legible",
    "shown_scale",
    "COLUMN_INCHES",
    "MIN_TEXT_PT",
    "SAVE_PAD",
    "saved_bbox",
    "power_of_ten",
    "scaled",
    "tokens",
]


#: The width of the book's text column at a 1400 px window (772 CSS px, 96 per inch; 740 px leaves
#: the output area's margins): a figure wider than this is shown scaled down to it, and its text with it.
COLUMN_INCHES = 740 / 96
#: The smallest text a figure may show, in points at the size the book shows it.
MIN_TEXT_PT = 9.0
#: The padding around a text that reaches beyond a figure's edge when it is saved (inches): the
#: canvas grows to hold it (:func:`saved_bbox`).
SAVE_PAD = 0.04

#: One colour per draft family, the same in every figure.
FAMILY_COLORS: dict[str, str] = {
    "OPT": "#0072B2",
    "Qwen1.5": "#D55E00",
    "Qwen2.5": "#009E73",
    "Llama-3": "#CC79A7",
}

#: Metadata written into saved figures: nothing that changes between runs.
SAVEFIG_METADATA: dict[str, dict[str, str | None]] = {
    "svg": {"Date": None, "Creator": None},
    "png": {"Software": None},
}


def family_color(family: str) -> str:
    """The colour of a draft family; families not listed cycle through seaborn's palette."""
    if family in FAMILY_COLORS:
        return FAMILY_COLORS[family]
    palette = sns.color_palette("colorblind", 10).as_hex()
    return palette[sum(map(ord, family)) % len(palette)]


def use() -> None:
    """Apply the companion's plotting style (call once at the top of a notebook)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind", font="DejaVu Sans")
    mpl.rcParams.update(
        {
            "figure.dpi": 100,
            # 120 dpi: a figure of the column's width (8 in) is a PNG of about 960 px, shown at 772 px
            "savefig.dpi": 120,
            "figure.figsize": (7.0, 4.2),
            "svg.hashsalt": "sdsl-companion",
            "svg.fonttype": "path",
            "axes.titlesize": "medium",
            "legend.frameon": False,
            "figure.constrained_layout.use": True,
        }
    )


def fix_layout(fig):
    """Solve the figure's constrained layout once and keep it: the SVG, the PNG and the
    notebook's display then reuse the positions instead of solving the layout three times
    (the layout dominates the cost of drawing multi-panel figures)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):
        engine.execute(fig)
        fig.set_layout_engine("none")
        fig._sdsl_constrained = True  # legible() solves it again when it enlarges text
    return fig


def shown_scale(fig) -> float:
    """The factor by which the book shows ``fig``: 1, or less for a figure wider than the column."""
    return min(1.0, COLUMN_INCHES / fig.get_figwidth())


def saved_bbox(fig):
    """The box (inches) ``fig`` is saved in: the figure, grown to hold every text that reaches
    beyond its edge (with :data:`SAVE_PAD` around it), never cropped, so that a figure whose text
    fits keeps its size from one run to the next. After the figure's layout."""
    from matplotlib.transforms import Bbox

    fig.draw_without_rendering()
    tight, full = fig.get_tightbbox(), fig.bbox_inches
    if tight is None or (tight.x0 >= full.x0 and tight.y0 >= full.y0 and tight.x1 <= full.x1 and tight.y1 <= full.y1):
        return full
    return Bbox.union([full, tight.padded(SAVE_PAD)])


def _enlarge(fig, floor: float) -> bool:
    """Set every text of ``fig`` under ``floor`` points to ``floor``; whether any changed."""
    from matplotlib.text import Text

    changed = False
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = [t for t in axis.get_ticklabels(which="both") if t.get_visible() and t.get_text().strip()]
            if any(t.get_fontsize() < floor - 1e-9 for t in labels):
                ax.tick_params(axis=name, which="both", labelsize=floor)
                changed = True
    for t in [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]:
        if t.get_fontsize() < floor - 1e-9:
            t.set_fontsize(floor)
            changed = True
    return changed


def legible(fig, min_pt: float = MIN_TEXT_PT) -> float:
    """Enlarge every text of ``fig`` (titles, labels, tick labels, legends, annotations) that would
    show under ``min_pt`` points at the size the book shows the figure (:func:`shown_scale`; then,
    once laid out, at the width it is saved at, whose text may reach beyond its edge), and solve a
    constrained layout again for the new sizes. Returns the smallest text size of the figure at its
    natural size (points), which :func:`sdsl.book.outputs.save_figure` records in the SVG's
    description (the browser test scales it by the width the page shows)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.text import Text

    def relayout() -> None:
        engine = fig.get_layout_engine()
        if not isinstance(engine, ConstrainedLayoutEngine) and getattr(fig, "_sdsl_constrained", False):
            fig.set_layout_engine("constrained")
            fix_layout(fig)

    floor = min_pt / shown_scale(fig)
    if _enlarge(fig, floor):
        relayout()
    # the saved width: the canvas grows to hold a text beyond the figure's edge, and the page then
    # shows it smaller
    width = float(saved_bbox(fig).width)
    if width > COLUMN_INCHES and width > fig.get_figwidth() + 1e-6:
        floor = max(floor, min_pt * width / COLUMN_INCHES)
        if _enlarge(fig, floor):
            relayout()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    for ax in fig.axes:
        sizes += [t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text().strip()]
    return round(min(sizes, default=floor), 2)


# --- Axis labels a reader can read: units in the label, no offset text.


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

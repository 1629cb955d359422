"""The one place that sets the look of every figure, and how figures are written to disk.

Figures are byte-stable between two runs: a fixed SVG hash salt, no creation date in SVG or
PNG metadata, fixed DPI and fonts that ship with matplotlib.
"""

from __future__ import annotations

import matplotlib as mpl
import seaborn as sns

__all__ = ["use", "FAMILY_COLORS", "SAVEFIG_METADATA", "family_color", "fix_layout"]

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
            "savefig.dpi": 150,
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
    return fig

"""The figure display helper: a saved figure is shown from its files, as SVG and PNG, never as
``<Figure size ...>`` text."""

import matplotlib
import pytest
from IPython.core.formatters import DisplayFormatter
from matplotlib.figure import Figure

from sdsl.book.outputs import save_figure
from sdsl.book.views import FigureFiles, figure

matplotlib.use("Agg")


def _saved(tmp_path):
    fig = Figure(figsize=(2, 1.5))
    fig.add_subplot().plot([0, 1], [1, 0])
    return save_figure(fig, "demo", "fig", tmp_path)


def test_figure_displays_the_saved_svg_and_png(tmp_path):
    paths = _saved(tmp_path)
    bundle, _ = DisplayFormatter().format(figure(paths))
    assert bundle["image/svg+xml"] == paths[0].read_text(encoding="utf-8")
    assert bundle["image/png"] == paths[1].read_bytes()
    assert bundle["image/png"][:8] == b"\x89PNG\r\n\x1a\n"
    assert "<Figure size" not in bundle["text/plain"] and bundle["text/plain"] == "Figure fig"


def test_figure_rejects_missing_or_wrong_files(tmp_path):
    paths = _saved(tmp_path)
    with pytest.raises(ValueError, match="paths must be save_figure's"):
        figure(paths[:1])
    with pytest.raises(ValueError, match=r"existing \.png file"):
        FigureFiles(paths[0], paths[0])
    with pytest.raises(ValueError, match=r"existing \.svg file"):
        FigureFiles(tmp_path / "absent.svg", paths[1])

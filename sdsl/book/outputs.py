"""Writing a chapter's tables and figures into the artifacts tree.

Each table and figure of a chapter comes from one named function in ``sdsl`` and is written
here, once: ``save_table`` writes CSV, ``save_figure`` writes SVG (for the book) and PNG (for a
quick look) and, with ``data=``, the numbers behind the figure as ``<name>.data.csv``. Files are
written to a temporary name and renamed, so a failed run never leaves a half-written file behind.
:func:`downloads` renders the line of download links the book shows under each of them.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib as mpl
import pandas as pd
from matplotlib.figure import Figure

from sdsl.book.style import SAVEFIG_METADATA
from sdsl.paths import artifacts_dir

__all__ = ["save_table", "save_figure", "chapter_dir", "KINDS", "download_links", "downloads"]


def chapter_dir(chapter: str, out_dir: str | os.PathLike | None = None) -> Path:
    """``out_dir`` if given (created), else the chapter's folder of the artifacts tree."""
    if out_dir is None:
        return artifacts_dir(chapter)
    path = Path(out_dir).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _atomic_write(path: Path, write) -> Path:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def save_table(df: pd.DataFrame, chapter: str, name: str, out_dir: str | os.PathLike | None = None) -> Path:
    """Write ``df`` as ``<chapter>/<name>.csv`` (floats at full precision, no index)."""
    path = chapter_dir(chapter, out_dir) / f"{name}.csv"
    return _atomic_write(path, lambda p: df.to_csv(p, index=False, float_format="%.12g", lineterminator="\n"))


def save_figure(
    fig: Figure,
    chapter: str,
    name: str,
    out_dir: str | os.PathLike | None = None,
    data: pd.DataFrame | None = None,
) -> list[Path]:
    """Write ``fig`` as ``<chapter>/<name>.svg`` and ``.png``, without dates or other run-dependent
    metadata, its text first made legible at the size the book shows it
    (:func:`sdsl.book.style.legible`, the smallest size at natural size recorded in the SVG's
    description), and, when ``data`` is given, the numbers plotted as ``<name>.data.csv`` (written like
    :func:`save_table`), which the regeneration check (``python -m sdsl.build.check``) compares exactly.

    Returns the paths written (SVG, PNG, then the data CSV if any).
    """
    from sdsl.book.style import legible

    folder = chapter_dir(chapter, out_dir)
    smallest = legible(fig)
    dpi = float(mpl.rcParams["savefig.dpi"]) if mpl.rcParams["savefig.dpi"] != "figure" else float(fig.dpi)
    description = f"smallest text {smallest:g} pt at natural size, {dpi:g} dpi"
    metadata = {
        "svg": {**SAVEFIG_METADATA["svg"], "Description": description},
        "png": {**SAVEFIG_METADATA["png"], "Description": description},
    }
    paths = []
    # byte-stable SVG ids even when a notebook forgot sdsl.book.style.use()
    salt = mpl.rcParams["svg.hashsalt"] or "sdsl-companion"
    with mpl.rc_context({"svg.hashsalt": salt}):
        for fmt in ("svg", "png"):
            path = folder / f"{name}.{fmt}"
            paths.append(_atomic_write(path, lambda p, fmt=fmt: fig.savefig(p, format=fmt, metadata=metadata[fmt])))
    if data is not None:
        if not isinstance(data, pd.DataFrame):
            raise ValueError(f"data must be a pandas DataFrame (the numbers plotted), got {type(data).__name__}")
        path = folder / f"{name}.data.csv"
        paths.append(
            _atomic_write(path, lambda p: data.to_csv(p, index=False, float_format="%.12g", lineterminator="\n"))
        )
    return paths


# --- Download links under each table and figure of the book.

#: File suffixes linked, in order, with the text of their link.
KINDS = ((".csv", "CSV"), (".svg", "SVG"), (".png", "PNG"), (".data.csv", "figure data"))


def download_links(chapter: str, name: str, artifacts_dir: str | os.PathLike | None = None) -> str:
    """The Markdown line of links to the files of artifact ``name`` of ``chapter`` that exist in
    ``artifacts_dir`` (default: the chapter's folder of the artifacts tree); relative to a page of
    ``book/executed/``. Raises ``ValueError`` when none exists (a link to nothing is a typo)."""

    folder = Path(chapter_dir(chapter, artifacts_dir))
    # raw HTML links: a Markdown link to a file makes Sphinx copy it again into _downloads/
    links = [
        f'<a href="../_static/artifacts/{chapter}/{name}{suffix}">{label}</a>'
        for suffix, label in KINDS
        if (folder / f"{name}{suffix}").is_file() and not (suffix == ".csv" and name.endswith(".data"))
    ]
    if not links:
        raise ValueError(f"artifact {chapter}/{name} has no file in {folder}: nothing to link")
    return "Download: " + " | ".join(links)


def downloads(chapter: str, name: str, artifacts_dir: str | os.PathLike | None = None):
    """:func:`download_links` as an ``IPython.display.Markdown`` object, to display in a cell."""
    from IPython.display import Markdown

    return Markdown(download_links(chapter, name, artifacts_dir))

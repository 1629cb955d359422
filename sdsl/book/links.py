"""Download links under each table and figure of the book.

The pipeline copies the artifacts tree into the book (``book/_static/artifacts/<chapter>/``,
:func:`sdsl.build.pipeline.build_book`), so the built HTML serves every CSV, SVG, PNG and figure-data
file beside the page that shows it. :func:`downloads` renders the line of links a notebook puts
right after a table or figure: ``Download: CSV | SVG | PNG | figure data``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["KINDS", "download_links", "downloads"]

#: File suffixes linked, in order, with the text of their link.
KINDS = ((".csv", "CSV"), (".svg", "SVG"), (".png", "PNG"), (".data.csv", "figure data"))


def download_links(chapter: str, name: str, artifacts_dir: str | os.PathLike | None = None) -> str:
    """The Markdown line of links to the files of artifact ``name`` of ``chapter`` that exist in
    ``artifacts_dir`` (default: the chapter's folder of the artifacts tree); relative to a page of
    ``book/executed/``. Raises ``ValueError`` when none exists (a link to nothing is a typo)."""
    from sdsl.book.outputs import chapter_dir

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

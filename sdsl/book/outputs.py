"""Declaring, writing and showing a chapter's tables and figures.

Each table and figure of the book is declared once, where the function that makes it is defined
(:func:`declare`, a decorator in the chapter module: the paper's item it regenerates or the
artifact's name, what it shows, the datasets of ``data/`` it reads). The declarations are the
book's registry (:mod:`sdsl.book.registry`: the artifact index, the landing page's gallery, the
browser test's expected items), and they let a notebook publish a result by value:
``publish(chapter.table5(configs, const, coef))`` writes ``table5.csv``, shows the table as the book
does and links its downloads (:class:`sdsl.book.views.Publisher`).

Writing: ``save_table`` writes CSV, ``save_figure`` writes SVG (for the book) and PNG (for a
quick look) and, with ``data=``, the numbers behind the figure as ``<name>.data.csv``. Files are
written to a temporary name and renamed, so a failed run never leaves a half-written file behind.
:func:`downloads` renders the line of download links the book shows under each of them.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import matplotlib as mpl
import pandas as pd
from matplotlib.figure import Figure

from sdsl.book.style import SAVEFIG_METADATA, saved_bbox
from sdsl.paths import artifacts_dir

__all__ = [
    "Item",
    "declare",
    "declared",
    "save_table",
    "save_figure",
    "chapter_dir",
    "KINDS",
    "download_links",
    "downloads",
]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Item:
    """One table or figure: ``key`` (``Table 5``, ``Figure 2`` for the paper's; ``chapter/name`` for
    the companion's), what it shows, the chapter, the function that makes it (dotted path), the
    artifact names (without suffix; the first is the one shown), the datasets it reads, whether it
    is a figure, whether the chapter's page shows it (followed by its download links) and whether
    the book's own run writes it (not: an artifact only a reader's own data produce)."""

    key: str
    title: str
    chapter: str
    function: str
    artifacts: tuple[str, ...]
    data: tuple[str, ...] = ()
    figure: bool = False
    shown: bool = True
    regenerated: bool = True

    @property
    def paper(self) -> bool:
        """Whether this is one of the paper's tables or figures."""
        return self.key.startswith(("Table ", "Figure "))


#: Every declaration made so far, in the order the chapter modules made them.
_DECLARED: list[Item] = []
_PAPER = re.compile(r"^(Table|Figure) [1-9]$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def declare(
    name: str,
    title: str,
    *,
    data: Sequence[str] = (),
    also: Sequence[str] = (),
    figure: bool | None = None,
    shown: bool = True,
    regenerated: bool = True,
) -> Callable[[F], F]:
    """Declare that the decorated function makes a table or figure of the chapter whose module
    calls this (``sdsl.chapters.<chapter>``).

    Parameters
    ----------
    name : str
        ``"Table 1"`` to ``"Table 9"``, ``"Figure 1"`` to ``"Figure 5"`` for the paper's items (the
        artifact is then ``table5``, ``figure2``), else the artifact's name (``gamma_check``).
    title : str
        What it shows, as the artifact index says it.
    data : sequence of str
        The datasets of ``data/`` it reads.
    also : sequence of str
        Further artifacts written beside the first (a figure's curves, a table's comparison).
    figure : bool, optional
        Whether it is a figure; by default, whether ``name`` is one of the paper's figures.
    shown : bool
        Whether the chapter's page shows it (else it is written for download only).
    regenerated : bool
        Whether the book's own run writes it (``False``: only a reader's own data produce it, so
        the baseline has no copy).

    Returns
    -------
    callable
        A decorator. Applied to a function ``f`` it returns ``f`` wrapped so that its result (a
        DataFrame or a matplotlib Figure) carries its declaration, which :class:`Publisher` reads;
        declarations stack, one per artifact a function makes. Applied to a function defined
        elsewhere (``eq5 = declare(...)(fit_plane)``) it declares that function as the maker.
    """
    module = sys._getframe(1).f_globals["__name__"]
    chapter = module.rsplit(".", 1)[-1]
    paper = bool(_PAPER.match(name))
    artifact = name.lower().replace(" ", "") if paper else name
    for a in (artifact, *also):
        if not _NAME.match(a):
            raise ValueError(f"declare: artifact name {a!r} must be lower case letters, digits and '_'")

    def decorate(fn: F) -> F:
        maker = inspect.unwrap(fn)
        item = Item(
            name if paper else f"{chapter}/{name}",
            title,
            chapter,
            f"{maker.__module__}.{maker.__qualname__}",
            (artifact, *also),
            tuple(data),
            name.startswith("Figure ") if figure is None else figure,
            shown,
            regenerated,
        )
        taken = [i.key for i in _DECLARED if i.chapter == chapter and item.artifacts[0] in i.artifacts]
        if taken:
            raise ValueError(f"declare: {item.key} names an artifact that {taken[0]} already declares")
        _DECLARED.append(item)
        items = getattr(fn, "__sdsl_items__", None)
        if items is not None:
            fn.__sdsl_items__ = (*items, item)  # type: ignore[attr-defined]
            return fn

        @functools.wraps(fn)
        def made(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            keys = tuple(i.key for i in made.__sdsl_items__)  # type: ignore[attr-defined]
            if isinstance(out, pd.DataFrame):
                out.attrs["sdsl_items"] = keys
            elif isinstance(out, Figure):
                out.sdsl_items = keys  # type: ignore[attr-defined]
            return out

        made.__sdsl_items__ = (item,)  # type: ignore[attr-defined]
        return made  # type: ignore[return-value]

    return decorate


def declared() -> tuple[Item, ...]:
    """Every declaration of the chapter modules imported so far (:func:`sdsl.book.registry.items`
    imports them all)."""
    return tuple(_DECLARED)


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
    # the canvas grows to hold every text (a long label of the last panel, an annotation at a
    # curve's end) rather than cutting it at the figure's edge
    box = saved_bbox(fig)
    with mpl.rc_context({"svg.hashsalt": salt}):
        for fmt in ("svg", "png"):
            path = folder / f"{name}.{fmt}"
            paths.append(
                _atomic_write(
                    path, lambda p, fmt=fmt: fig.savefig(p, format=fmt, metadata=metadata[fmt], bbox_inches=box)
                )
            )
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

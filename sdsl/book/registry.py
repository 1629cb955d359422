"""Where everything in the book comes from: one entry per table and figure.

For each of the paper's Tables 1 to 9 and Figures 1 to 5, and for every artifact of the
companion's own, :data:`REGISTRY` records the chapter that shows it, the function that makes it, its
artifact files (under ``build/artifacts/<chapter>/``) and the datasets of ``data/`` it reads. It is
not written here: it is read from the declarations the chapter modules make beside each function
(:func:`sdsl.book.outputs.declare`), so importing this module imports every chapter. The
book's artifact index page is generated from it (:func:`index_markdown`, by the local Sphinx
extension ``book/_ext/sdsl_pages.py``), and so are the landing page's thumbnails of the paper's
figures (:func:`gallery_markdown`); the browser test reads the book against it (each item present
on its page). A test keeps it complete: every artifact of ``baseline/`` is in it, and every
function, file and dataset it names exists.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from sdsl.book.outputs import Item, declared

__all__ = [
    "ARXIV",
    "REGISTRY",
    "paper_items",
    "by_key",
    "artifact_files",
    "resolve",
    "source_link",
    "module_file",
    "data_files",
    "index_markdown",
    "chapter_title",
    "gallery_markdown",
    "thumbnail",
    "figure_label",
    "THUMBNAIL_PX",
]

#: The paper's arXiv page.
ARXIV = "https://arxiv.org/abs/2603.11053"


def _load() -> tuple[Item, ...]:
    """Import every chapter module, in book order (``notebooks/runs.yml``), and return their
    declarations of what the book's run writes (not what only a reader's own data produce): the
    paper's tables, then its figures, by number, then the companion's own by chapter, in the order
    each module declares them."""
    from sdsl.data import load_yaml
    from sdsl.paths import RUNS_FILE

    chapters = list(load_yaml(RUNS_FILE.read_text(encoding="utf-8"))["runs"])
    for chapter in chapters:
        importlib.import_module(f"sdsl.chapters.{chapter}")
    items = [i for i in declared() if i.regenerated and i.chapter in chapters]

    def order(item: Item) -> tuple:
        if item.paper:
            kind, number = item.key.split()
            return (0, kind != "Table", int(number), 0)
        return (1, chapters.index(item.chapter), 0, items.index(item))

    return tuple(sorted(items, key=order))


#: Every table and figure the book's run writes, from the declarations in the chapter modules
#: (:func:`sdsl.book.outputs.declare`).
REGISTRY: tuple[Item, ...] = _load()


def paper_items() -> list[Item]:
    """The paper's Tables 1 to 9 and Figures 1 to 5, in that order."""
    return [i for i in REGISTRY if i.paper]


def by_key(key: str) -> Item:
    """The item of ``key`` (``"Figure 2"``, ``"beyond/law_ranking"``); ``KeyError`` naming the known keys."""
    for item in REGISTRY:
        if item.key == key:
            return item
    raise KeyError(f"no item {key!r} in the registry; it has {[i.key for i in REGISTRY]}")


_SUFFIXES = (".csv", ".svg", ".png", ".data.csv")


def artifact_files(item: Item, root: Path | str) -> list[str]:
    """The files of ``item`` that exist under the artifacts tree ``root`` (``chapter/name.suffix``)."""
    root = Path(root)
    return [
        f"{item.chapter}/{a}{s}"
        for a in item.artifacts
        for s in _SUFFIXES
        if (root / item.chapter / f"{a}{s}").is_file() and not (s == ".csv" and a.endswith(".data"))
    ]


def resolve(function: str):
    """The object a dotted path names (``sdsl.chapters.acceptance.table1``); ``ValueError`` if none."""
    module, _, name = function.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"registry: {function!r} does not name an importable object ({exc})") from None


def module_file(function: str) -> str:
    """The Python file (relative to the repository) that defines ``function``."""
    from sdsl.paths import ROOT

    obj = inspect.unwrap(resolve(function))
    source = inspect.getsourcefile(obj)
    if source is None:
        raise ValueError(f"registry: {function!r} has no Python source file to link to")
    return Path(source).resolve().relative_to(ROOT).as_posix()


def source_link(function: str, prefix: str = "") -> str:
    """A link to the lines of ``function`` on the book's own page of its module (``_code/``, written
    by the local Sphinx extension ``book/_ext/sdsl_source.py``), relative to a page ``prefix``
    (``""`` at the book's root, ``"../"`` one folder down)."""
    obj = inspect.unwrap(resolve(function))
    line = inspect.getsourcelines(obj)[1]
    return f"{prefix}_code/{module_file(function)}.html#L-{line}"


def data_files(name: str) -> list[str]:
    """The files of dataset ``name`` of ``data/`` the book shows: its CSV or text file and its
    provenance file (relative to the repository)."""
    from sdsl.paths import DATA

    files = sorted(p.name for p in DATA.iterdir() if p.stem == name and p.suffix in (".csv", ".txt", ".yml"))
    if not files:
        raise ValueError(f"registry: dataset {name!r} has no file in data/")
    return [f"data/{f}" for f in files]


def _data_link(name: str, prefix: str = "") -> str:
    files = data_files(name)
    shown = next((f for f in files if not f.endswith(".yml")), files[0])
    # raw HTML: the pages of _code/ are written by the builder, not documents MyST could resolve
    return f'<a href="{prefix}_code/{shown}.html"><code>{shown.removeprefix("data/")}</code></a>'


def chapter_title(chapter: str) -> str:
    """The title of a chapter: the first heading of its notebook (``notebooks/<chapter>.md``)."""
    from sdsl.paths import ROOT

    path = ROOT / "notebooks" / f"{chapter}.md"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"{path}: no level-1 heading to take the chapter's title from")


def _files_cell(item: Item, root: Path | str, static_prefix: str) -> str:
    """The artifact's files, one line per artifact: its name and a link per kind (CSV, SVG, ...)."""
    labels = {".csv": "CSV", ".svg": "SVG", ".png": "PNG", ".data.csv": "data"}
    lines = []
    for a in item.artifacts:
        links = [
            f'<a href="{static_prefix}/{item.chapter}/{a}{suffix}">{label}</a>'
            for suffix, label in labels.items()
            if f"{item.chapter}/{a}{suffix}" in artifact_files(item, root)
        ]
        if links:
            lines.append(f"{a.replace('_', ' ')}: {', '.join(links)}")
    return "<br>".join(lines) or "\u2013"


def index_markdown(root: Path | str, static_prefix: str = "_static/artifacts") -> str:
    """The artifact index page's body (MyST): one table for the paper's items and one per chapter
    for the companion's, with the function that makes it (linked to its source), the artifact files
    (linked to the copies the book serves under ``static_prefix``) and the datasets it reads (linked
    to the book's pages of them)."""
    prefix = static_prefix[: -len("_static/artifacts")] if static_prefix.endswith("_static/artifacts") else ""

    def row(item: Item, with_chapter: bool) -> str:
        data = ", ".join(_data_link(d, prefix) for d in item.data) or "\u2013"
        fn = f'<a href="{source_link(item.function, prefix)}"><code>{item.function.rsplit(".", 1)[1]}</code></a>'
        name = item.key if item.paper else item.key.split("/", 1)[1].replace("_", " ")
        where = f" {{doc}}`{chapter_title(item.chapter)} <executed/{item.chapter}>` |" if with_chapter else ""
        return f"| {name} | {item.title} |{where} {fn} | {_files_cell(item, root, static_prefix)} | {data} |"

    out = [
        "## The paper's tables and figures",
        "",
        "| item | what it shows | chapter | made by | files | reads |",
        "|:--|:--|:--|:--|:--|:--|",
        *[row(i, True) for i in paper_items()],
        "",
    ]
    chapters = list(dict.fromkeys(i.chapter for i in REGISTRY if not i.paper))
    for ch in chapters:
        out += [
            f"## {chapter_title(ch)}",
            "",
            f"The companion's own tables and figures of the chapter {{doc}}`{chapter_title(ch)} <executed/{ch}>`.",
            "",
            "| item | what it shows | made by | files | reads |",
            "|:--|:--|:--|:--|:--|",
            *[row(i, False) for i in REGISTRY if not i.paper and i.chapter == ch],
            "",
        ]
    return "\n".join(out)


#: The width (px) of the landing page's thumbnails: twice the 246 px of a card, for sharp screens.
THUMBNAIL_PX = 492


def thumbnail(png: Path | str, dest: Path | str, width: int = THUMBNAIL_PX) -> Path:
    """Write a ``width``-px-wide copy of the figure ``png`` to ``dest`` in 256 colours (written only
    when missing or older than ``png``; no metadata, so two builds write the same bytes)."""
    from PIL import Image

    png, dest = Path(png), Path(dest)
    if dest.is_file() and dest.stat().st_mtime >= png.stat().st_mtime:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(png) as im:
        small = im.convert("RGB").resize((width, round(im.height * width / im.width)), Image.Resampling.LANCZOS)
    # 256 colours without dithering: a plot's flat colours and antialiased edges survive, and the
    # file is about a third of the full-colour one
    small = small.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    tmp = dest.with_name(f".{dest.name}.tmp")
    small.save(tmp, format="PNG", optimize=True)
    tmp.replace(dest)
    return dest


def figure_label(item: Item) -> str:
    """The label of the chapter's figure that regenerates the paper's ``item`` (``Figure 2`` ->
    ``optimal_draft-fig2``), as the notebook names it."""
    return f"{item.chapter}-fig{item.key.split()[1]}"


def gallery_markdown(
    root: Path | str,
    static_prefix: str = "_static/artifacts",
    thumbnails: Path | str | None = None,
    thumbnail_prefix: str = "_static/thumbnails",
) -> str:
    """A grid of the paper's five figures (sphinx-design cards, MyST), each a thumbnail of our
    regeneration (:func:`thumbnail`, written into ``thumbnails`` and linked under
    ``thumbnail_prefix``; without ``thumbnails``, the full PNG under ``static_prefix``) linked to
    the figure in its chapter. Raises ``ValueError`` naming a figure whose PNG is missing."""
    cards = []
    for item in (i for i in paper_items() if i.figure):
        png = Path(root) / item.chapter / f"{item.artifacts[0]}.png"
        if not png.is_file():
            raise ValueError(f"{png}: the landing page's thumbnail of {item.key} is missing; run the pipeline first")
        if thumbnails is not None:
            name = f"{item.chapter}-{item.artifacts[0]}.png"
            thumbnail(png, Path(thumbnails) / name)
            img = f"{thumbnail_prefix}/{name}"
        else:
            img = f"{static_prefix}/{item.chapter}/{item.artifacts[0]}.png"
        cards += [
            f":::{{grid-item-card}} {item.key}",
            # a link by address, not by reference: a reference's text would be the figure's caption
            # with its LaTeX as written
            f":link: executed/{item.chapter}.html#{figure_label(item)}",
            ":link-type: url",
            f":link-alt: {item.key} in its chapter",
            f":img-top: {img}",
            f":img-alt: {item.key}: {item.title}",
            "",
            item.title[0].upper() + item.title[1:] + ".",
            ":::",
            "",
        ]
    return "\n".join(["::::{grid} 1 2 3 3", ":gutter: 2", "", *cards, "::::"])

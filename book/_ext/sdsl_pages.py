"""Pages of the book generated at build time (loaded via ``sphinx: local_extensions``).

Markers in a page's source are replaced, when Sphinx reads it, by MyST text generated from the
package and the artifacts the pipeline copied into ``_static/artifacts`` (never typed):

- ``<!-- sdsl:figure-gallery -->``: the paper's five figures as thumbnails (written into
  ``_thumbnails/``, this extension's own folder outside ``_static``: Sphinx copies each once, into
  ``_images``) linked to the figures in their chapters (:func:`sdsl.book.registry.gallery_markdown`);
- ``<!-- sdsl:reproduction -->``: the scorecard's counts, as printed and as reinterpreted
  (:func:`sdsl.book.landing.reproduction_markdown`);
- ``<!-- sdsl:headline -->``: the answers in short, each number with what bounds it
  (:func:`sdsl.book.landing.headline_markdown`);
- ``<!-- sdsl:artifact-index -->``: the artifact index (:func:`sdsl.book.registry.index_markdown`).

Every chapter (an executed notebook of ``executed/``) ends with a section "Run this chapter
yourself": its notebook to download, executed (``.ipynb``) and as its source (``.md``), the one
papermill command that reruns it with the reader's parameters (the book's values written out,
:func:`sdsl.build.parameters.rerun_command`) and what each parameter sets. The downloads are
written beside the built pages (``_static/notebooks/``) when the build finishes: the executed
notebook without papermill's record of the build machine (its paths) and without the book's
injected parameters, so that papermill injects the reader's.

A marker whose inputs are missing (the pipeline has not run) stops the build with one line naming
what is missing.
"""

import json
from pathlib import Path

from sphinx.errors import ExtensionError

#: Where the notebooks to download are written, relative to the built site.
NOTEBOOKS_DIR = "_static/notebooks"


def _generate(app, docname, source):
    text = source[0]
    if docname.startswith("executed/"):
        chapter = docname.split("/", 1)[1]
        if chapter in _chapters():
            source[0] = _with_run_section(text, chapter)
        return
    if "<!-- sdsl:" not in text:
        return
    from sdsl.book import landing, registry

    root = Path(app.srcdir) / "_static" / "artifacts"
    prefix = "/".join([".."] * docname.count("/") + ["_static", "artifacts"])
    generators = {
        "<!-- sdsl:figure-gallery -->": lambda: registry.gallery_markdown(
            root, prefix, Path(app.srcdir) / "_thumbnails", "_thumbnails"
        ),
        "<!-- sdsl:reproduction -->": lambda: landing.reproduction_markdown(root),
        "<!-- sdsl:headline -->": lambda: landing.headline_markdown(root),
        "<!-- sdsl:artifact-index -->": lambda: registry.index_markdown(root, prefix),
    }
    for marker, make in generators.items():
        if marker in text:
            try:
                text = text.replace(marker, make())
            except (ValueError, FileNotFoundError, KeyError) as exc:
                raise ExtensionError(f"{docname}: cannot generate {marker}: {exc}") from None
    source[0] = text


def _chapters():
    from sdsl.build.parameters import load_runs

    return load_runs()


def _cell(text: str) -> str:
    """A parameter's value or help as a table cell (pipes escaped)."""
    return text.replace("|", "\\|")


def run_section(chapter: str) -> str:
    """The MyST of the section that ends a chapter: its downloads, the command that reruns it and
    its parameters with the book's values."""
    from sdsl.build.parameters import as_argument, parameter_help, rerun_command

    helps = parameter_help(chapter)
    book = _chapters()[chapter] or {}
    values = {name: book.get(name, default) for name, (default, _) in helps.items()}
    rows = [
        f"| `{name}` | `{_cell(as_argument(values[name]))}` | {_cell(text) or '–'} |"
        for name, (_, text) in helps.items()
        if name != "artifacts_dir"
    ]
    link = f"../{NOTEBOOKS_DIR}/{chapter}"
    return "\n".join(
        [
            f"({chapter}-run)=",
            "## Run this chapter yourself",
            "",
            f'This chapter is a notebook: <a href="{link}.ipynb" download>{chapter}.ipynb</a>, executed, with '
            f'every output shown here, or its source, <a href="{link}.md" download>{chapter}.md</a> (MyST '
            f"Markdown, which `jupytext --to ipynb {chapter}.md` turns into a notebook). With the package "
            "installed with its book extra ({ref}`install`), this command reruns it; the values are the "
            "book's, and any of them can be changed. Its tables and figures go into the folder it names.",
            "",
            "```bash",
            rerun_command(chapter, values),
            "```",
            "",
            f"{{numref}}`{chapter}-parameters` lists what each parameter sets.",
            "",
            ":::{table} The parameters of this chapter, with the book's values.",
            f":name: {chapter}-parameters",
            "",
            "| parameter | the book's value | what it sets |",
            "|:--|:--|:--|",
            *rows,
            ":::",
            "",
        ]
    )


def _with_run_section(text: str, chapter: str) -> str:
    """The executed notebook's JSON ``text`` with the section of :func:`run_section` as its last cell."""
    nb = json.loads(text)
    nb["cells"].append(
        {"cell_type": "markdown", "id": f"{chapter}-run", "metadata": {}, "source": run_section(chapter)}
    )
    return json.dumps(nb)


def downloadable(nb: dict) -> dict:
    """The executed notebook ``nb`` as a reader downloads it: without papermill's record of the
    run (the build machine's paths, times) and of each cell's execution, without the book's
    injected parameters (papermill injects the reader's) and without the book's own cell tags."""
    own = {"remove-cell"}
    cells = []
    for cell in nb.get("cells", []):
        meta = {k: v for k, v in cell.get("metadata", {}).items() if k not in ("papermill", "execution")}
        tags = [t for t in meta.get("tags", []) if t not in own]
        if "injected-parameters" in tags:
            continue
        if tags:
            meta["tags"] = tags
        else:
            meta.pop("tags", None)
        cells.append({**cell, "metadata": meta})
    meta = {k: v for k, v in nb.get("metadata", {}).items() if k != "papermill"}
    return {**nb, "metadata": meta, "cells": cells}


def _write_downloads(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    from sdsl.paths import NOTEBOOKS

    out = Path(app.outdir) / NOTEBOOKS_DIR
    out.mkdir(parents=True, exist_ok=True)
    for chapter in _chapters():
        executed = Path(app.srcdir) / "executed" / f"{chapter}.ipynb"
        if not executed.is_file():
            continue
        nb = downloadable(json.loads(executed.read_text(encoding="utf-8")))
        (out / f"{chapter}.ipynb").write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        (out / f"{chapter}.md").write_bytes((NOTEBOOKS / f"{chapter}.md").read_bytes())


def setup(app):
    app.connect("source-read", _generate)
    app.connect("build-finished", _write_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

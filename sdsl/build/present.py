"""How an executed notebook is presented in the book.

papermill leaves two cells a reader has no use for on the rendered page: the notebook's own
``parameters`` cell and the ``injected-parameters`` cell it adds after it (which holds the run's
absolute ``artifacts_dir``). :func:`present_notebook` tags both ``remove-cell`` (the executed
``.ipynb`` keeps them: it stays a record of the run and can be rerun as it is) and replaces the
absolute paths of this checkout in every cell's source and outputs by paths relative to the
repository root, so that no page shows the build machine's folders. Called by
:func:`sdsl.build.pipeline.execute_notebook` on every executed notebook.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sdsl.paths import ROOT

__all__ = ["REMOVED_TAGS", "relative_paths", "present_cells", "present_notebook"]

#: Cells carrying one of these tags are removed from the rendered page.
REMOVED_TAGS = ("parameters", "injected-parameters")


def relative_paths(text: str, root: Path | str = ROOT, extra: dict[str, str] | None = None) -> str:
    """``text`` with every absolute path under ``root`` written relative to it (``<root>/x``
    becomes ``x``, ``<root>`` itself ``.``), and every prefix of ``extra`` (absolute folder ->
    what to write instead) replaced. Longer prefixes are replaced first."""
    prefixes = {str(Path(root)).rstrip("/"): "."}
    prefixes.update({str(k).rstrip("/"): v for k, v in (extra or {}).items()})
    out = text
    for prefix in sorted(prefixes, key=len, reverse=True):
        repl = prefixes[prefix]
        inside = "" if repl == "." else repl.rstrip("/") + "/"
        # a function, not a template: the replacement is taken literally (no backslash escapes)
        out = re.sub(re.escape(prefix) + "/", lambda _m: inside, out)
        out = re.sub(re.escape(prefix) + r"(?![\w.-])", lambda _m: repl, out)
    return out


def _strip(value: Any, fix) -> Any:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, list):
        return [_strip(v, fix) for v in value]
    if isinstance(value, dict):
        return {k: _strip(v, fix) for k, v in value.items()}
    return value


def present_cells(nb: dict[str, Any], root: Path | str = ROOT, extra: dict[str, str] | None = None) -> dict[str, Any]:
    """The notebook ``nb`` (nbformat 4 as a dict), presented: cells tagged one of
    :data:`REMOVED_TAGS` get the tag ``remove-cell``; absolute paths in every cell's source and
    outputs are made relative (:func:`relative_paths`). The notebook's metadata (papermill's
    record of the run) is left as it is. Returns a new dict."""

    def fix(text: str) -> str:
        return relative_paths(text, root, extra)

    cells = []
    for cell in nb.get("cells", []):
        cell = dict(cell)
        meta = dict(cell.get("metadata", {}))
        tags = list(meta.get("tags", []))
        if any(t in tags for t in REMOVED_TAGS) and "remove-cell" not in tags:
            tags.append("remove-cell")
        if tags:
            meta["tags"] = tags
        cell["metadata"] = meta
        cell["source"] = _strip(cell.get("source", ""), fix)
        if "outputs" in cell:
            cell["outputs"] = _strip(cell["outputs"], fix)
        cells.append(cell)
    return {**nb, "cells": cells}


def present_notebook(
    nb_path: Path | str,
    artifacts_root: Path | str | None = None,
    root: Path | str = ROOT,
    moved: dict[str, str] | None = None,
) -> Path:
    """Rewrite the executed notebook ``nb_path`` in place with :func:`present_cells`; an
    ``artifacts_root`` outside ``root`` (a run into a folder of the user's) is written as
    ``artifacts``. ``moved`` maps folders the run wrote into (its staging folder) to where their
    content now lies, replaced first, so that the page names the final folder. One read and one
    write of the notebook."""
    import nbformat

    path = Path(nb_path)
    extra = {}
    if artifacts_root is not None and not Path(artifacts_root).resolve().is_relative_to(Path(root).resolve()):
        extra[str(Path(artifacts_root).resolve())] = "artifacts"
    text = path.read_text(encoding="utf-8")
    for old, new in (moved or {}).items():
        text = text.replace(old, new)
    presented = present_cells(json.loads(text), root, extra)
    nbformat.write(nbformat.from_dict(presented), path)
    return path

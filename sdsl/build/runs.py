"""``notebooks/runs.yml``: which chapters the book runs, in book order, and with which parameters.

The one place where a run's parameters are recorded. Chapters listed under ``last:`` read the
other chapters' artifacts (the scorecard) and run after all the others have succeeded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sdsl.data import YamlError, load_yaml, yaml_problem
from sdsl.paths import NOTEBOOKS, RUNS_FILE

__all__ = ["PATH_PARAMETERS", "load_runs", "load_last"]

#: Parameters that name a place on disk, not a choice of the run: left out of records.
PATH_PARAMETERS = ("artifacts_dir", "artifacts_root")


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = load_yaml(path.read_text(encoding="utf-8")) or {}
    except YamlError as exc:  # a key given twice would silently drop a run's parameters
        raise ValueError(yaml_problem(path, exc)) from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: expected a mapping with 'runs' (and optionally 'last')")
    return doc


def load_runs(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Chapters in book order with the parameters of their run (empty: the notebook's defaults)."""
    path = path if path is not None else RUNS_FILE
    runs = _read(path).get("runs")
    if not isinstance(runs, dict) or not runs:
        raise ValueError(f"{path}: expected a mapping 'runs: {{chapter: {{parameter: value}}}}'")
    out: dict[str, dict[str, Any]] = {}
    for chapter, params in runs.items():
        params = params or {}
        if not isinstance(params, dict):
            raise ValueError(f"{path}: parameters of {chapter!r} must be a mapping, got {params!r}")
        if not isinstance(chapter, str) or not chapter.isidentifier():  # a chapter names files: never a path
            raise ValueError(f"{path}: chapter {chapter!r} is not a plain name (letters, digits and '_')")
        if not (NOTEBOOKS / f"{chapter}.md").is_file():
            raise ValueError(f"{path}: chapter {chapter!r} has no notebook {NOTEBOOKS / (chapter + '.md')}")
        out[str(chapter)] = params
    return out


def load_last(path: Path | None = None) -> list[str]:
    """Chapters listed under ``last:`` in ``runs.yml``: executed after every other chapter."""
    path = RUNS_FILE if path is None else path
    doc = _read(path)
    last = doc.get("last") or []
    if isinstance(last, str):
        last = [last]
    runs = doc.get("runs") or {}
    unknown = [c for c in last if c not in runs]
    if unknown:
        raise ValueError(f"{path}: 'last' names chapter(s) {unknown} that are not under 'runs'")
    return [str(c) for c in last]

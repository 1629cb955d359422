"""The parameters of a notebook, checked before it runs: an unknown name fails listing
the allowed names with the nearest suggested (``papermill.inspect_notebook`` gives a notebook's
parameters), and every value is checked by its chapter's ``check_parameters`` (the function the
cell after the notebook's parameters cell calls) in this process, so that nothing starts, and
nothing is written, for a parameter the notebook would refuse or not use."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from sdsl.paths import NOTEBOOKS

__all__ = ["ParameterError", "chapters", "notebook_parameters", "check_notebook_parameters"]


class ParameterError(ValueError):
    """A notebook parameter is unknown or invalid: one line naming it and what is allowed; raised
    before anything runs or is written."""


def chapters(notebooks: Path | None = None) -> list[str]:
    """The chapters of the notebooks folder (default ``sdsl.paths.NOTEBOOKS``): the stems of its
    ``*.md`` files that are Python identifiers (a chapter is also a module name,
    ``sdsl.chapters.<chapter>``), sorted. A chapter is looked up here before it names any file."""
    folder = NOTEBOOKS if notebooks is None else Path(notebooks)
    return sorted(p.stem for p in folder.glob("*.md") if p.stem.isidentifier() and p.is_file())


def notebook_parameters(chapter: str, notebooks: Path | None = None) -> dict[str, Any]:
    """The parameters of ``notebooks/<chapter>.md`` as papermill sees them
    (``papermill.inspect_notebook``), name -> default value (the default's source text where it is
    not a Python literal), in the notebook's order. ``notebooks``: the folder (default
    ``sdsl.paths.NOTEBOOKS``)."""
    import ast

    import jupytext
    import nbformat
    import papermill

    from sdsl import validation as V

    folder = NOTEBOOKS if notebooks is None else Path(notebooks)
    names = chapters(folder)
    if not isinstance(chapter, str):
        raise ParameterError(f"chapter must be a chapter's name (a str), got {V.show(chapter)}")
    if chapter not in names:  # a name of the folder's notebooks, never a path ('../README')
        raise ParameterError(f"unknown chapter {chapter!r}; {V.suggestion(chapter, names)}chapters: {', '.join(names)}")
    with tempfile.TemporaryDirectory(prefix="sdsl-inspect-") as tmp:
        path = Path(tmp) / f"{chapter}.ipynb"
        nb = jupytext.read(folder / f"{chapter}.md")
        nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
        nbformat.write(nb, path)
        found = papermill.inspect_notebook(str(path))
    out: dict[str, Any] = {}
    for name, info in found.items():
        try:
            out[name] = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError, TypeError):
            out[name] = info["default"]
    return out


def check_notebook_parameters(
    chapter: str, parameters: Any, executor_sets: tuple[str, ...] = ("artifacts_dir",), notebooks: Path | None = None
) -> None:
    """Refuse, before anything runs, parameters that notebook ``chapter`` would not use as given: a
    name it does not have (the closest suggested, every allowed one listed), one the executor sets
    itself (``artifacts_dir``: pass ``artifacts=``), and a value its chapter's
    ``check_parameters`` (the cell after the parameters cell) refuses, checked here with the
    notebook's defaults for the parameters not given. Raises :class:`ParameterError`."""
    import importlib

    from sdsl import validation as V

    defaults = notebook_parameters(chapter, notebooks)
    if not isinstance(parameters, dict) or not all(isinstance(k, str) for k in parameters):
        raise ParameterError(
            f"parameters of notebook {chapter!r} must be a dict of parameter names to values, got {V.show(parameters)}"
        )
    try:
        V.unknown_names(parameters, defaults, "parameter", f"of notebook {chapter!r}")
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    for name in executor_sets:
        if name in parameters:
            raise ParameterError(
                f"parameter {name!r} of notebook {chapter!r} is set by the executor: pass "
                f"artifacts=FOLDER to execute_notebook instead"
            )
    try:
        module = importlib.import_module(f"sdsl.chapters.{chapter}")
    except ImportError:
        return
    check = getattr(module, "check_parameters", None)
    if check is None:
        return
    merged = {**{k: v for k, v in defaults.items() if k not in executor_sets}, **parameters}
    try:
        check(**merged)
    except ValueError as exc:
        raise ParameterError(f"notebook {chapter!r}: {V.one_line(exc)}") from None

"""The parameters of every run: which chapters the book runs, in book order, and with which
parameters (``notebooks/runs.yml``, :func:`load_runs`), and the parameters of a notebook checked
before it runs: an unknown name fails listing
the allowed names with the nearest suggested (``papermill.inspect_notebook`` gives a notebook's
parameters), and every value is checked by its chapter's ``check_parameters`` (the function the
cell after the notebook's parameters cell calls) in this process, so that nothing starts, and
nothing is written, for a parameter the notebook would refuse or not use."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from sdsl._owned import write_failure
from sdsl.data import YamlError, load_yaml, yaml_problem
from sdsl.paths import NOTEBOOKS, RUNS_FILE

__all__ = [
    "ParameterError",
    "chapters",
    "notebook_parameters",
    "parameter_help",
    "rerun_command",
    "as_argument",
    "check_notebook_parameters",
    "plain_parameters",
    "PATH_PARAMETERS",
    "load_runs",
    "load_last",
]


class ParameterError(ValueError):
    """A notebook parameter is unknown or invalid: one line naming it and what is allowed; raised
    before anything runs or is written."""


def chapters(notebooks: Path | None = None) -> list[str]:
    """The chapters of the notebooks folder (default ``sdsl.paths.NOTEBOOKS``): the stems of its
    ``*.md`` files that are Python identifiers (a chapter is also a module name,
    ``sdsl.chapters.<chapter>``), sorted. A chapter is looked up here before it names any file."""
    folder = NOTEBOOKS if notebooks is None else Path(notebooks)
    return sorted(p.stem for p in folder.glob("*.md") if p.stem.isidentifier() and p.is_file())


def _inspect(chapter: str, notebooks: Path | None = None) -> dict[str, dict[str, Any]]:
    """``papermill.inspect_notebook`` of ``notebooks/<chapter>.md``: per parameter its default's
    source text and its help (the comment that ends its line)."""
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
    nb = jupytext.read(folder / f"{chapter}.md")
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    try:
        with tempfile.TemporaryDirectory(prefix="sdsl-inspect-") as tmp:
            path = Path(tmp) / f"{chapter}.ipynb"
            nbformat.write(nb, path)
            return dict(papermill.inspect_notebook(str(path)))
    except OSError as exc:  # the temporary folder's disk (full, read only), not the notebook
        raise write_failure(exc, "the temporary folder", tempfile.gettempdir()) from None


def _value(text: str) -> Any:
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError):
        return text


def notebook_parameters(chapter: str, notebooks: Path | None = None) -> dict[str, Any]:
    """The parameters of ``notebooks/<chapter>.md`` as papermill sees them
    (``papermill.inspect_notebook``), name -> default value (the default's source text where it is
    not a Python literal), in the notebook's order. ``notebooks``: the folder (default
    ``sdsl.paths.NOTEBOOKS``)."""
    return {name: _value(info["default"]) for name, info in _inspect(chapter, notebooks).items()}


def parameter_help(chapter: str, notebooks: Path | None = None) -> dict[str, tuple[Any, str]]:
    """Each parameter of ``notebooks/<chapter>.md`` with its default and what it sets (the comment
    that ends its line in the parameters cell; empty when there is none), in the notebook's order."""
    return {
        name: (_value(info["default"]), str(info.get("help") or "").strip())
        for name, info in _inspect(chapter, notebooks).items()
    }


def rerun_command(chapter: str, parameters: dict[str, Any], out: str | None = None) -> str:
    """The one command that reruns the downloaded notebook ``<chapter>.ipynb`` with
    ``parameters`` (name -> value): papermill, its tables and figures written into the folder
    ``out`` (default ``my_<chapter>``), every value as papermill reads it back (``-p`` for a
    number, a string, ``True``, ``False`` or ``None``; ``-y`` with YAML for a list or a mapping),
    one parameter a line."""
    import yaml

    out = out or f"my_{chapter}"
    lines = [f"papermill {chapter}.ipynb {out}.ipynb", f"-p artifacts_dir {out}"]
    for name, value in parameters.items():
        if name == "artifacts_dir":
            continue
        if isinstance(value, (list, tuple, dict)):
            flow = yaml.dump({name: _plain_yaml(value)}, Dumper=_yaml_dumper(), default_flow_style=True, width=10_000)
            lines.append(f"-y '{flow.strip()[1:-1]}'")
        elif isinstance(value, str):
            text = value if value and all(c.isalnum() or c in "-._/" for c in value) else f"'{value}'"
            lines.append(f"-p {name} {text}" if _value(value) == value or not value else f"-r {name} {text}")
        elif isinstance(value, float):
            lines.append(f"-p {name} {_float(value)}")
        else:
            lines.append(f"-p {name} {value!r}")
    return " \\\n    ".join(lines)


def as_argument(value: Any) -> str:
    """A parameter's value as :func:`rerun_command` writes it: a float as :func:`_float`, a list or
    mapping as YAML in flow style, anything else as Python prints it (``None``, ``True``, text)."""
    import yaml

    if isinstance(value, (list, tuple, dict)):
        return yaml.dump(_plain_yaml(value), Dumper=_yaml_dumper(), default_flow_style=True, width=10_000).strip()
    if isinstance(value, float):
        return _float(value)
    return str(value)


def _float(value: float) -> str:
    """A float as a reader writes it and YAML reads it back as a float: ``4.0e+12``, ``0.95``
    (PyYAML reads ``4e12`` as a string)."""
    text = f"{value:.6g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa if '.' in mantissa else mantissa + '.0'}e{exponent}"
    return text if "." in text or "n" in text else text + ".0"


def _yaml_dumper():
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(float, lambda d, v: d.represent_scalar("tag:yaml.org,2002:float", _float(v)))
    return Dumper


def _plain_yaml(value: Any) -> Any:
    """``value`` with tuples as lists (YAML has no tuples)."""
    if isinstance(value, dict):
        return {k: _plain_yaml(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_yaml(v) for v in value]
    return value


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


def plain_parameters(parameters: Any) -> Any:
    """``parameters`` with numpy's scalars and arrays as the plain Python numbers and lists they hold
    (in lists, tuples and dicts too): what the notebook's kernel receives, and what its check and the
    run's record see. papermill writes the parameters into the notebook as JSON, which has no
    ``numpy.int64``; a ``np.int64(200)`` reaches the kernel as ``200``."""
    import numpy as np

    if isinstance(parameters, np.ndarray):
        return parameters.tolist()
    if isinstance(parameters, np.generic):
        return parameters.item()
    if isinstance(parameters, dict):
        return {k: plain_parameters(v) for k, v in parameters.items()}
    if isinstance(parameters, (list, tuple)):
        items = [plain_parameters(v) for v in parameters]
        return items if isinstance(parameters, list) else tuple(items)
    return parameters


# --- ``notebooks/runs.yml``: which chapters the book runs, in book order, and with which parameters.

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

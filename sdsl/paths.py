"""Every path the project uses, absolute, in one place.

Nothing else in the package, the notebooks or the tests builds a path from the working
directory. The artifacts root can be redirected with the environment variable
``SDSL_ARTIFACTS`` (the regeneration check writes into a temporary folder that way).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "ROOT",
    "DATA",
    "NOTEBOOKS",
    "BOOK",
    "EXECUTED",
    "BUILD",
    "BASELINE",
    "BENCHMARKS",
    "RUNS_FILE",
    "artifacts_root",
    "artifacts_dir",
]

ROOT = Path(__file__).resolve().parent.parent


def _data_dir() -> Path:
    """The folder of the datasets: the package data ``sdsl._data`` (importlib's view of the
    repository's ``data/`` under an editable install, of the wheel's copy once installed), else,
    in a checkout used without installing, ``ROOT / "data"``."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("sdsl._data")
    except (ImportError, ValueError):
        spec = None
    for loc in (spec.submodule_search_locations or []) if spec is not None else []:
        if (Path(loc) / "presets.yml").is_file():
            return Path(loc).resolve()
    return ROOT / "data"


#: The datasets (``data/`` of the repository; ``sdsl/_data`` inside an installed wheel).
DATA = _data_dir()
NOTEBOOKS = ROOT / "notebooks"
BOOK = ROOT / "book"
#: Executed notebooks, written by the executor and assembled by Jupyter Book.
EXECUTED = BOOK / "executed"
BUILD = ROOT / "build"
#: Committed baseline artifacts that the regeneration check compares against.
BASELINE = ROOT / "baseline"
BENCHMARKS = ROOT / "benchmarks"
#: The one file that records which notebooks run and with which parameters.
RUNS_FILE = NOTEBOOKS / "runs.yml"


def artifacts_root() -> Path:
    """Root of the artifacts tree: ``$SDSL_ARTIFACTS`` if set, else ``build/artifacts``."""
    env = os.environ.get("SDSL_ARTIFACTS")
    return Path(env).resolve() if env else BUILD / "artifacts"


def artifacts_dir(chapter: str) -> Path:
    """The artifacts folder of one chapter (created if missing)."""
    if not chapter or "/" in chapter or chapter.startswith("."):
        raise ValueError(f"chapter must be a plain folder name, got {chapter!r}")
    path = artifacts_root() / chapter
    path.mkdir(parents=True, exist_ok=True)
    return path

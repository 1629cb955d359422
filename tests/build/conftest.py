"""Shared helpers of the build tests: a copy of the repository to run the check in."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sdsl.paths import BASELINE, DATA, NOTEBOOKS, ROOT

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

"""


def _make_copy(dest: Path, notebooks: dict[str, str | None], runs: str, baseline: bool = False) -> Path:
    """A copy of the repository at ``dest`` with the given notebooks (name -> text, or ``None``
    to copy the real one), ``runs.yml`` text and, with ``baseline``, the committed baseline."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "sdsl", dest / "sdsl", ignore=ignore)
    shutil.copytree(DATA, dest / "data", ignore=ignore)
    shutil.copytree(ROOT / "tools", dest / "tools", ignore=ignore)
    shutil.copy2(ROOT / "requirements.lock", dest / "requirements.lock")
    if baseline:
        shutil.copytree(BASELINE, dest / "baseline")
    nb = dest / "notebooks"
    nb.mkdir()
    for name, text in notebooks.items():
        if text is None:
            shutil.copy2(NOTEBOOKS / f"{name}.md", nb / f"{name}.md")
        else:
            (nb / f"{name}.md").write_text(HEADER + text)
    (nb / "runs.yml").write_text(runs)
    return dest


def _run_check(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    env.pop("SDSL_ARTIFACTS", None)
    return subprocess.run(
        [sys.executable, "-m", "sdsl.build.check", "--jobs", "1", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _replace_once(path: Path, old: str, new: str) -> str:
    """Replace the one occurrence of ``old`` in ``path``; for a data file, record its new sha256 in
    the provenance file beside it (a deliberate change of the data, not damage). Returns the text
    before."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    path.write_text(text.replace(old, new))
    yml = path.with_suffix(".yml")
    if path.suffix == ".csv" and yml.is_file():
        meta = yml.read_text()
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        yml.write_text(re.sub(r"(?m)^sha256:.*$", f"sha256: {sha}", meta))
    return text


@pytest.fixture
def make_copy():
    return _make_copy


@pytest.fixture
def run_check():
    return _run_check


@pytest.fixture
def replace_once():
    return _replace_once

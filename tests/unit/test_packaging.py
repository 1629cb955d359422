"""pyproject.toml and the package layout: what an installed wheel needs.

The end-to-end check (build the wheel, install it in a fresh venv outside the repository, run the
commands) is tools/wheel_check.sh, which `make test` runs after pytest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import sdsl
from sdsl import paths

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_subpackage_is_listed():
    """The package list is explicit (sdsl._data maps data/): a new folder of sdsl/ must be added."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "sdsl").rglob("__init__.py")}
    assert found <= listed, f"add {sorted(found - listed)} to [tool.setuptools] packages in pyproject.toml"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["sdsl._data"] == "data"


def test_build_metadata():
    assert PYPROJECT["build-system"]["requires"] == ["setuptools>=77"]  # SPDX licence strings (PEP 639)
    proj = PYPROJECT["project"]
    assert proj["license"] == "MIT" and (ROOT / "LICENSE").is_file()
    assert proj["requires-python"] == ">=3.11"  # no upper bound
    assert {"Repository", "Paper"} <= set(proj["urls"])
    core = {d.split(">")[0].split("=")[0].strip() for d in proj["dependencies"]}
    assert core == {"numpy", "pyyaml", "prometheus_client"}  # planning and sdsl alpha; no scipy (143 MB)
    extras = proj["optional-dependencies"]
    assert {"analysis", "plot", "book", "measure", "test"} <= set(extras)
    pinned = [d for ds in extras.values() for d in ds if "==" in d]
    assert not pinned, f"extras take version ranges (exact pins are requirements.lock's): {pinned}"
    assert any(d.startswith("threadpoolctl") for d in extras["measure"])  # sdsl.experiment.lossfit
    assert any(d.startswith("threadpoolctl") for d in extras["book"])  # sdsl.build.manifest
    assert "sdsl[plot,measure]" in extras["book"]  # two chapters run the local models
    assert (ROOT / "sdsl" / "py.typed").is_file()


def test_package_data_is_the_data_folder():
    assert paths.DATA == (ROOT / "data").resolve()
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["sdsl._data"]
    shipped = {p.name for g in globs for p in paths.DATA.glob(g)}
    assert {"presets.csv", "presets.yml", "accelerators.csv", "acceptance.csv", "paper_table3.csv"} <= shipped
    assert {"model.safetensors", "config.json", "tokenizer.json"} <= shipped  # data/local_pair/*/


def test_planning_path_imports_neither_pandas_nor_scipy():
    """Nor numpy.ma, which np.unique, np.median and np.quantile import (30 ms of sdsl plan)."""
    code = (
        "import sys, io, contextlib, json; import sdsl.cli as c\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for a in (['plan','--preset','llama-3-70b'], ['plan','--preset','opt-13b','--json'],\n"
        "              ['presets'], ['speedup','--alpha','0.7','--cost-ratio','0.1'],\n"
        "              ['plan','--preset','qwen2.5-72b','--hardware','h200','--batch','1,32']):\n"
        "        assert c.main(a) == 0, a\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pandas','scipy','matplotlib','statsmodels','torch') or m == 'numpy.ma')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_version():
    assert sdsl.__version__ == PYPROJECT["project"]["version"]


def _requirement(extra: str, name: str):
    from packaging.requirements import Requirement

    found = [Requirement(d) for d in PYPROJECT["project"]["optional-dependencies"][extra]]
    return next((r for r in found if r.name.lower() == name), None)


def _locked(name: str) -> str:
    import re

    m = re.search(rf"(?im)^{re.escape(name)}==([^\s+]+)", (ROOT / "requirements.lock").read_text())
    assert m, f"{name} is not pinned in requirements.lock"
    return m.group(1)


def test_the_extras_fit_the_engines_environments():
    """[measure] takes the transformers of a vLLM environment (vLLM's requirements/common.txt:
    transformers >= 4.56.0, < 5) as well as the lock's, and does not pull Ray; [experiment] does,
    in a range that leaves out the releases whose token authentication, on by default, refuses
    `--address` to a cluster started with `ray start --head` (Ray 2.59 and later); every range
    admits the lock's pin, which CI tests."""
    tf = _requirement("measure", "transformers")
    assert tf is not None and tf.specifier.contains("4.56.0") and not tf.specifier.contains("4.55.4")
    assert tf.specifier.contains(_locked("transformers")) and tf.specifier.contains("5.25.0")
    assert _requirement("measure", "ray") is None and _requirement("analysis", "ray") is None
    ray = _requirement("experiment", "ray")
    assert ray is not None and ray.specifier.contains(_locked("ray"))
    assert not ray.specifier.contains("2.59.0") and not ray.specifier.contains("2.60.0")
    assert "sdsl[measure]" in PYPROJECT["project"]["optional-dependencies"]["experiment"]
    torch = _requirement("measure", "torch")
    assert torch is not None and torch.specifier.contains(_locked("torch"))
    # the extras check installs the oldest transformers the range admits beside the lock's
    script = (ROOT / "tools" / "extras_check.sh").read_text()
    assert "transformers==4.56.0" in script and "measure-oldest" in script


FAKE_PYTHON = """#!/bin/sh
# a Python that runs, makes "virtual environments" (copies of itself) and whose pip fails as pip does
[ "$1" = "-c" ] && exit 0
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  echo "ERROR: Could not find a version that satisfies the requirement setuptools>=77 (PYTHONPATH='${PYTHONPATH-unset}')" >&2
  exit 1
fi
exit 1
"""


@pytest.mark.parametrize("pythonpath", [".", "/elsewhere:"])
def test_the_wheel_check_runs_pip_apart_from_the_callers_pythonpath_and_shows_its_error(pythonpath, tmp_path):
    """With the checkout on PYTHONPATH (`.`, or a value ending in ':'), pip took the checkout's
    sdsl.egg-info for an installed sdsl; and the script's pip wrapper hid what pip said."""
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": pythonpath, "TMPDIR": str(tmp_path)}
    res = subprocess.run(
        ["bash", str(ROOT / "tools" / "wheel_check.sh"), str(fake)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert "ERROR: Could not find a version that satisfies the requirement" in res.stderr  # pip's own words
    assert "PYTHONPATH='unset'" in res.stderr, res.stderr  # pip never saw the caller's
    assert "wheel check FAILED: pip exited with status 1" in res.stderr

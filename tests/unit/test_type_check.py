"""The type check behind ``py.typed`` (``mypy`` in ``make lint``) covers the whole package and
treats as untyped only the third-party packages that really ship no types."""

from __future__ import annotations

import importlib.util
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def _overridden() -> list[str]:
    return sorted(
        {
            m.removesuffix(".*")
            for o in CONFIG.get("overrides", [])
            if o.get("ignore_missing_imports")
            for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])
        }
    )


def test_mypy_checks_the_package_with_no_global_escape():
    assert CONFIG["files"] == ["sdsl"]
    assert CONFIG["python_version"] == "3.11"
    # a global ignore_missing_imports would hide a misspelt or uninstalled import of sdsl itself
    assert "ignore_missing_imports" not in CONFIG
    assert CONFIG.get("warn_unused_ignores") is True
    for o in CONFIG.get("overrides", []):
        modules = [o["module"]] if isinstance(o["module"], str) else o["module"]
        assert not any(m == "sdsl" or m.startswith("sdsl.") for m in modules), o


@pytest.mark.parametrize("module", _overridden())
def test_an_untyped_import_override_names_a_package_without_types(module):
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)  # the top-level package only: nothing is imported
    if spec is None or spec.origin is None:
        pytest.skip(f"{top} is not installed here (an extra): nothing to compare with")
    stubs = Path(sysconfig.get_paths()["purelib"]) / f"{top}-stubs"
    assert not stubs.is_dir(), f"{top}-stubs is installed: drop the override of {module}"
    if not spec.submodule_search_locations:  # a single-file module: typed only by a stub beside it
        assert not Path(spec.origin).with_suffix(".pyi").is_file(), f"{top} has a stub: drop the override"
        return
    where = Path(next(iter(spec.submodule_search_locations)))
    if not rest:
        assert not (where / "py.typed").is_file(), f"{top} ships py.typed: drop the override of {module}"
    else:  # a submodule of a typed package: it must lack its stub
        stub = where.joinpath(*rest[:-1]) / f"{rest[-1]}.pyi"
        assert not stub.is_file(), f"{stub} exists: drop the override of {module}"

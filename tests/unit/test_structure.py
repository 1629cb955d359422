"""The package's shape: layers that import one way, small modules, one N* search, chapter
modules named as their notebooks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from sdsl.build.runs import load_runs
from sdsl.paths import NOTEBOOKS, ROOT

PACKAGE = ROOT / "sdsl"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _module_level_imports(path: Path) -> set[str]:
    """``sdsl`` modules imported at module level (not inside functions, not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    known = {_name(p) for p in MODULES}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for n in ast.walk(node) if isinstance(node, (ast.Import, ast.ImportFrom, ast.Try)) else []:
            if isinstance(n, ast.Import):
                out.update(a.name for a in n.names if a.name.startswith("sdsl"))
            elif isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("sdsl"):
                out.add(n.module)
                out.update(f"{n.module}.{a.name}" for a in n.names if f"{n.module}.{a.name}" in known)
    return {m for m in out if m in known}


def test_no_import_cycle():
    graph = {_name(p): _module_level_imports(p) - {_name(p)} for p in MODULES}
    # a package's __init__ importing its own submodules is not a cycle of the layers
    for mod, deps in graph.items():
        graph[mod] = {
            d
            for d in deps
            if not (d.startswith(mod + ".") and (PACKAGE / Path(*mod.split(".")[1:]) / "__init__.py").exists())
        }
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycle = stack[stack.index(d) :] + [d]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if state.get(d) is None:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if state.get(m) is None:
            visit(m)


def test_the_model_layer_imports_no_chapter_book_or_build_code():
    for p in (PACKAGE / "model").glob("*.py"):
        text = p.read_text(encoding="utf-8")
        bad = re.findall(r"^\s*(?:from|import) sdsl\.(chapters|book|build|measure|plan)\b", text, flags=re.MULTILINE)
        assert not bad, f"{p.name} imports sdsl.{bad[0]}: the model layer must not depend on it"


def test_the_experiment_sits_between_measure_and_the_chapters():
    """``sdsl.experiment`` trains and measures with the model and measure layers; only the
    chapters (and the book and build above them) may import it, never the layers below."""
    for p in (PACKAGE / "experiment").glob("*.py"):
        text = p.read_text(encoding="utf-8")
        bad = re.findall(
            r"^\s*(?:from|import) sdsl\.(chapters|book|build|plan|cli)\b",
            text,
            flags=re.MULTILINE,
        )
        assert not bad, f"experiment/{p.name} imports sdsl.{bad[0]}: the experiment must not depend on it"
    for layer in ("model", "measure", "plan"):
        for p in (PACKAGE / layer).rglob("*.py"):
            text = p.read_text(encoding="utf-8")
            assert not re.search(r"^\s*(?:from|import) sdsl\.experiment\b", text, flags=re.MULTILINE), (
                f"{layer}/{p.name} imports sdsl.experiment: the layers below it must not depend on it"
            )


def test_one_search_for_n_star():
    """No scalar minimiser or golden section anywhere but the one kernel (sdsl.model.optimum) and
    its numpy root finder (sdsl.model.solvers)."""
    pattern = re.compile(r"minimize_scalar|find_minimum|golden|fminbound|minimize_bounded")
    hits = [
        p.relative_to(ROOT).as_posix()
        for p in MODULES
        if p.name not in ("optimum.py", "solvers.py") and pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert not hits, f"a search of its own in {hits}; call sdsl.model.optimum.solve"


def test_every_chapter_module_is_named_as_its_notebook():
    chapters = {p.stem for p in (PACKAGE / "chapters").glob("*.py") if p.stem != "__init__"}
    notebooks = set(load_runs())
    assert chapters <= notebooks, f"chapter modules without a notebook: {sorted(chapters - notebooks)}"
    for stem in notebooks:
        assert (NOTEBOOKS / f"{stem}.md").is_file()


def test_the_linter_and_the_formatter_see_every_tracked_python_file():
    # an exclude pattern such as "build" once matched sdsl/build/ and tests/build/ too, and the
    # whole build subpackage escaped `ruff check` and `ruff format --check` unnoticed
    import subprocess
    import sys

    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "*.py"], capture_output=True, text=True, check=True
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout: no list of tracked files to compare with")
    shown = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--show-files", str(ROOT)], capture_output=True, text=True, cwd=ROOT
    ).stdout.split()
    seen = {str(Path(p).resolve().relative_to(ROOT)) for p in shown if p.endswith(".py")}
    expected = {p for p in tracked if not p.startswith(("data/", "book/"))}
    assert sorted(expected - seen) == []


def test_pytest_collects_every_test_folder():
    # pytest's default norecursedirs holds "build", which once skipped tests/build/ in every run
    import fnmatch
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    patterns = cfg.get("norecursedirs")
    assert patterns is not None, "norecursedirs must be set: pytest's default skips any folder named build"
    folders = {p.parent for p in (ROOT / "tests").rglob("test_*.py")}
    skipped = sorted(
        str(f.relative_to(ROOT))
        for f in folders
        for part in f.relative_to(ROOT).parts
        if any(fnmatch.fnmatch(part, pat) for pat in patterns)
    )
    assert skipped == []

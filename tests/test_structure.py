"""The package's shape: no import cycle of any kind, few re-exports and only from a package
``__init__`` (by import, by a chapter module's attribute in a notebook, or by a dotted path), a
bounded number of modules, public names only in the notebooks, no issue numbers in the code, one
home for the command line, layers that import one way, one N* search, chapter modules named as
their notebooks."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from sdsl.build.parameters import load_runs
from sdsl.paths import NOTEBOOKS, ROOT

PACKAGE = ROOT / "sdsl"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str | None:
    """The absolute module an ``ImportFrom`` names (relative imports resolved)."""
    if not node.level:
        return node.module
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The parsed module, once per test process (the tests only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


KNOWN = {_name(p): p for p in MODULES}


def _imports(module: str, path: Path) -> set[str]:
    """Every ``sdsl`` module ``module`` imports, wherever the import stands: at module level, under
    ``TYPE_CHECKING``, inside a function. ``from P import n`` is an import of ``P.n`` when that is a
    module, else of ``P`` (the name comes from ``P``'s namespace: an ``__init__`` counts)."""
    out: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in KNOWN)
        elif isinstance(node, ast.ImportFrom):
            src = _resolve(module, path, node)
            if not src or src not in KNOWN:
                continue
            subs = {f"{src}.{a.name}" for a in node.names if f"{src}.{a.name}" in KNOWN}
            out |= subs
            if len(subs) < len(node.names):
                out.add(src)
    return out - {module}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_of_any_kind():
    """Type-only imports, imports inside functions and imports through a package ``__init__`` all
    count: a cycle among them is a cycle of the concepts, whatever defers its import."""
    graph = {m: _imports(m, p) for m, p in KNOWN.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def _bound_by_import(module: str, path: Path) -> dict[str, str]:
    """Names a module binds at module level (``TYPE_CHECKING`` blocks included) by importing a
    non-module name from ``sdsl``: name -> the module it came from."""
    out: dict[str, str] = {}

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                for h in node.handlers:
                    walk(h.body)
            elif isinstance(node, ast.ImportFrom):
                src = _resolve(module, path, node)
                if src and src in KNOWN:
                    for a in node.names:
                        if f"{src}.{a.name}" not in KNOWN:
                            out[a.asname or a.name] = src

    walk(_tree(path).body)
    return out


def _all(path: Path) -> set[str]:
    for node in _tree(path).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:
                return set()
    return set()


def re_exports() -> set[tuple[str, str]]:
    """``(module, name)`` for every re-exported name: a name a module binds by importing it from
    another ``sdsl`` module and then offers as its own, by listing it in its ``__all__`` or by
    another module (of the package, its tests, benchmarks or tools) importing it from there. A name
    imported only to be used is not one."""
    bound = {m: _bound_by_import(m, p) for m, p in KNOWN.items()}
    out = {(m, n) for m, names in bound.items() for n in names if n in _all(KNOWN[m])}
    importers = list(KNOWN.items()) + [
        (_name(p), p) for folder in ("tests", "benchmarks", "tools") for p in (ROOT / folder).rglob("*.py")
    ]
    for m, p in importers:
        for node in ast.walk(_tree(p)):
            if isinstance(node, ast.ImportFrom):
                src = _resolve(m, p, node) if p.is_relative_to(PACKAGE) else node.module
                if src in bound:
                    out |= {(src, a.name) for a in node.names if a.name in bound[src]}
    return out


#: The goal, reached: no name re-exported outside a package ``__init__`` (the chapter modules once
#: offered the model's names to their notebooks, 94 of 118), at most 40 in all. The ceiling in all is
#: where the package stands (``sdsl`` and ``sdsl.measure.engines``); it only goes down.
MAX_RE_EXPORTS_OUTSIDE_INIT = 0
MAX_RE_EXPORTS = 24


def test_re_exports_only_from_a_package_init_and_few():
    found = re_exports()
    outside = sorted(f"{m}.{n}" for m, n in found if KNOWN[m].name != "__init__.py")
    assert len(outside) <= MAX_RE_EXPORTS_OUTSIDE_INIT, (
        f"{len(outside)} names re-exported outside a package __init__, at most {MAX_RE_EXPORTS_OUTSIDE_INIT}: "
        f"{outside}; import a name from the module that defines it"
    )
    assert len(found) <= MAX_RE_EXPORTS, f"{len(found)} re-exported names, at most {MAX_RE_EXPORTS}"


CHAPTERS = {p.stem: p for p in sorted((PACKAGE / "chapters").glob("*.py")) if p.name != "__init__.py"}


def _defined(path: Path) -> set[str]:
    """Names a module binds at module level (under ``if`` and ``try`` too) by defining them: a
    ``def``, a ``class``, an assignment. Not the names it imports."""
    out: set[str] = set()

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                out.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, ast.If):
                walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                for h in node.handlers:
                    walk(h.body)

    walk(_tree(path).body)
    return out


#: A MyST code cell of a notebook (jupytext's format): its options (``:tags: [...]`` lines or a
#: ``---`` YAML block) come first, then the code.
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def code_cells(path: Path) -> list[str]:
    """The code of every code cell of the MyST notebook ``path``, in order, without its options."""
    text = path.read_text(encoding="utf-8")
    cells = []
    for body in CODE_CELL.findall(text):
        if body.startswith("---\n"):
            body = body.split("\n---\n", 1)[1]
        lines = body.splitlines()
        while lines and lines[0].startswith(":"):
            lines.pop(0)
        cells.append("\n".join(lines))
    assert len(cells) == text.count("```{code-cell}"), f"{path.name}: a code cell this reader misses"
    return cells


def _taken_from_chapters(trees: list[ast.Module]) -> list[tuple[int, str, str]]:
    """``(line, chapter, name)`` for every name some code takes from a chapter module, the trees read
    in order (a notebook's cells): ``from sdsl.chapters.X import name``, and ``alias.name`` where
    ``alias`` is bound by ``from sdsl.chapters import X [as alias]`` or ``import sdsl.chapters.X as
    alias``."""
    aliases: dict[str, str] = {}
    out = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "sdsl.chapters":
                aliases |= {a.asname or a.name: a.name for a in node.names if a.name in CHAPTERS}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sdsl.chapters."):
                out += [(node.lineno, node.module.split(".")[2], a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                aliases |= {
                    a.asname: a.name.split(".")[2]
                    for a in node.names
                    if a.asname and a.name.startswith("sdsl.chapters.")
                }
        out += [
            (node.lineno, aliases[node.value.id], node.attr)
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
        ]
    return out


def _not_defined_there(uses: list[tuple[int, str, str]], defined: dict[str, set[str]]) -> list[tuple[int, str]]:
    return [(line, f"sdsl.chapters.{c}.{n}") for line, c, n in uses if c in defined and n not in defined[c]]


def test_notebooks_and_scripts_take_from_a_chapter_only_what_it_defines():
    """A notebook (or a test, benchmark or tool) calling ``chapter.fit_plane`` where the chapter
    module only imports ``fit_plane`` uses it as a re-export, by attribute rather than by import:
    the name has one home, the module that defines it, and is imported from there."""
    hits = []
    defined = {c: _defined(p) for c, p in CHAPTERS.items()}  # parsed once: every file is checked against it
    for p in sorted(NOTEBOOKS.glob("*.md")):
        trees = [ast.parse(c) for c in code_cells(p)]
        hits += [f"{p.name}: {name}" for _, name in _not_defined_there(_taken_from_chapters(trees), defined)]
    scripts = [p for folder in ("sdsl", "tests", "benchmarks", "tools", "book") for p in (ROOT / folder).rglob("*.py")]
    for p in sorted(s for s in scripts if "_build" not in s.parts):
        hits += [
            f"{p.relative_to(ROOT)}:{line}: {name}"
            for line, name in _not_defined_there(_taken_from_chapters([_tree(p)]), defined)
        ]
    assert not hits, f"names a chapter module imports but does not define, taken from it: {hits}"


#: ``sdsl.chapters.<chapter>.<name>`` as the registry, the docs and the docstrings write it.
CHAPTER_PATH = re.compile(r"\bsdsl\.chapters\.(\w+)\.(\w+)")


def test_dotted_paths_name_what_a_chapter_defines():
    """The registry's functions, and every ``sdsl.chapters.X.name`` the docs, notebooks and
    docstrings cite, name something chapter ``X`` defines, not a name it imports."""
    from sdsl.book.registry import REGISTRY

    defined = {c: _defined(p) for c, p in CHAPTERS.items()}

    def bad(path: str) -> bool:
        m = CHAPTER_PATH.search(path)
        return bool(m) and m[1] in defined and m[2] not in defined[m[1]]

    hits = [f"registry {i.key}: {i.function}" for i in REGISTRY if bad(i.function)]
    texts = [*MODULES, *NOTEBOOKS.glob("*.md"), *(ROOT / "book").glob("*.md"), *ROOT.glob("*.md")]
    for p in sorted(texts):
        for m in CHAPTER_PATH.finditer(p.read_text(encoding="utf-8")):
            if bad(m[0]):
                hits.append(f"{p.relative_to(ROOT)}: {m[0]}")
    assert not hits, f"dotted paths to a name the chapter module only imports: {hits}"


#: A ceiling on the package's modules (127 when it was set, 100 once the split-offs were folded
#: back): a new module is a new concept, not a split of an old one; raise it with the reason.
#: 101: measuring step times on the user's device (``sdsl.measure.steps``).
#: 102: what each serving engine accepts of a (target, draft) pair (``sdsl.model.engine_rules``).
#: 107: readers of five more engine outputs, one module each as the vLLM outputs have (vLLM's
#: printouts, SGLang's per-request meta_info and bench_serving result, llama.cpp's log lines,
#: TensorRT-LLM's iteration stats).
#: 109: the published deployments of speculative decoding as the plan's inputs, the acceptance law
#: fitted to them and the plan's error on them (``sdsl.plan.published``), and their chapter
#: (``sdsl.chapters.published``).
#: 110: the rules the laptop-scale prediction must beat (``sdsl.experiment.baselines``).
MAX_MODULES = 110


def test_the_package_stays_small():
    assert len(MODULES) <= MAX_MODULES, f"{len(MODULES)} modules in sdsl/, at most {MAX_MODULES}"


#: ``import sdsl._x``, ``from sdsl.a._x import``, ``from sdsl import _x``.
PRIVATE = re.compile(r"^\s*(?:from|import)\s+sdsl(?:\.\w+)*\._\w+|^\s*from\s+sdsl(?:\.\w+)*\s+import\s+.*\b_\w+", re.M)


def test_notebooks_import_no_private_module():
    hits = [
        f"{p.name}: {m.group(0).strip()}"
        for p in sorted(NOTEBOOKS.glob("*.md"))
        for m in PRIVATE.finditer(p.read_text(encoding="utf-8"))
    ]
    assert not hits, f"notebooks import private sdsl modules: {hits}"


#: Words that speak of the project's issues rather than of the project ("issue 17", "#23",
#: "ticket"); an external project's pull request ("vLLM PR #24049") is a citation.
TICKET = re.compile(r"\b(?:issue|ticket)s?\s*#?\d+|\bticket|(?<!PR )(?<![\w&])#\d{1,5}\b", re.I)


def _docs_and_comments(path: Path) -> list[tuple[int, str]]:
    import io
    import tokenize

    text = path.read_text(encoding="utf-8")
    out = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((getattr(node, "lineno", 1), doc))
    return out


def test_the_code_speaks_of_the_project_not_of_issues():
    hits = [
        f"{p.relative_to(ROOT)}:{line}: {m.group(0)!r}"
        for p in MODULES
        for line, text in _docs_and_comments(p)
        for m in TICKET.finditer(text)
    ]
    assert not hits, f"issue numbers in docstrings or comments: {hits}"


def test_no_sha_keyed_yaml_index():
    assert not (PACKAGE / "_yaml_index.json").exists(), "sdsl/_yaml_index.json: read the YAML with PyYAML"


def test_the_command_line_has_one_home():
    """The command line lives in ``sdsl/cli.py`` (or a ``cli`` package); deployment belongs to
    ``sdsl/plan/``."""
    stray = sorted(p.name for p in PACKAGE.glob("cli_*.py"))
    if (PACKAGE / "deployment.py").exists():
        stray.append("deployment.py")
    assert not stray, f"top-level command-line modules outside their home: {stray}"


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
            r"^\s*(?:from|import) sdsl\.(chapters|book|build|plan|cli|cli_deploy|deployment)\b",
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


def test_notebooks_publish_through_the_declarations():
    """A notebook writes and links its tables and figures with ``Publisher`` (the artifact's name
    comes from the declaration beside its function), never by typing it into ``save_table``,
    ``save_figure`` or ``downloads``."""
    hits = [
        f"{p.name}: {m[0]}"
        for p in sorted(NOTEBOOKS.glob("*.md"))
        for m in re.finditer(r"\b(?:save_table|save_figure)\(|(?<![.\w])downloads\(", p.read_text(encoding="utf-8"))
    ]
    assert not hits, hits


def test_a_module_run_as_a_script_defines_everything_before_it_runs():
    """``python -m sdsl.build.pipeline`` runs the module's ``if __name__ == "__main__"`` block when
    it is reached: a function defined after it does not exist yet for the run (a module folded into
    another once broke ``make book`` so). The block is the module's last statement."""
    late = []
    for path in MODULES:
        body = _tree(path).body
        for i, node in enumerate(body):
            if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and i != len(body) - 1:
                late.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not late, f"a __main__ block before the module's end: {late}"

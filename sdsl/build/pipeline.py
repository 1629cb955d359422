"""The one executor: MyST notebooks -> papermill -> executed notebooks -> Jupyter Book.

``notebooks/runs.yml`` is the one place where a run's parameters are recorded. Each notebook
``notebooks/<chapter>.md`` is converted with jupytext's Python API, executed by papermill with
the parameters of its entry into ``book/executed/<chapter>.ipynb``, and Jupyter Book assembles the
executed notebooks without executing them again (``execute_notebooks: off``).

A chapter's artifacts are written into a staging folder and moved into the artifacts tree only
when its notebook ran through: a failed notebook leaves no half-written artifacts behind.
A notebook whose inputs (its source, its parameters, the ``sdsl`` package, ``data/`` and the lock
file) have not changed since its last successful run is not executed again.

Chapters listed under ``last:`` in ``runs.yml`` (the scorecard) read the other chapters'
artifacts: they run after all the others have succeeded, and their inputs include those
artifacts. After a run the artifacts tree gets its ``manifest.json`` and the executed notebooks
a ``status.md`` page (:mod:`sdsl.build.artifacts`).

Command line::

    python -m sdsl.build.pipeline run [CHAPTER ...] [--force] [--jobs N]
    python -m sdsl.build.pipeline book [--force]      # run, then build the HTML book
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sdsl.paths import BOOK, DATA, EXECUTED, NOTEBOOKS, ROOT, RUNS_FILE, artifacts_root

__all__ = [
    "NotebookError",
    "RunResult",
    "load_runs",
    "load_last",
    "inputs_digest",
    "execute_notebook",
    "run",
    "build_book",
    "main",
]

KERNEL = "python3"


class NotebookError(RuntimeError):
    """A notebook raised while papermill executed it; the message carries its traceback."""


@dataclass(frozen=True)
class RunResult:
    chapter: str
    executed: Path
    seconds: float
    skipped: bool


def load_runs(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Chapters in book order with the parameters of their run (empty: the notebook's defaults)."""
    path = path if path is not None else RUNS_FILE
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh) or {}
    runs = doc.get("runs")
    if not isinstance(runs, dict) or not runs:
        raise ValueError(f"{path}: expected a mapping 'runs: {{chapter: {{parameter: value}}}}'")
    out: dict[str, dict[str, Any]] = {}
    for chapter, params in runs.items():
        params = params or {}
        if not isinstance(params, dict):
            raise ValueError(f"{path}: parameters of {chapter!r} must be a mapping, got {params!r}")
        if not (NOTEBOOKS / f"{chapter}.md").is_file():
            raise ValueError(f"{path}: chapter {chapter!r} has no notebook {NOTEBOOKS / (chapter + '.md')}")
        out[str(chapter)] = params
    return out


def load_last(path: Path | None = None) -> list[str]:
    """Chapters listed under ``last:`` in ``runs.yml``: executed after every other chapter."""
    path = RUNS_FILE if path is None else path
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh) or {}
    last = doc.get("last") or []
    if isinstance(last, str):
        last = [last]
    runs = doc.get("runs") or {}
    unknown = [c for c in last if c not in runs]
    if unknown:
        raise ValueError(f"{path}: 'last' names chapter(s) {unknown} that are not under 'runs'")
    return [str(c) for c in last]


def _digest_files(paths: list[Path], h: "hashlib._Hash") -> None:
    for p in sorted(paths):
        h.update(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p.name).encode())
        h.update(p.read_bytes())


def inputs_digest(chapter: str, parameters: dict[str, Any]) -> str:
    """Hash of everything a chapter's outputs depend on: its notebook, its parameters, the
    ``sdsl`` package, ``data/`` and the lock file."""
    h = hashlib.sha256()
    _digest_files([NOTEBOOKS / f"{chapter}.md"], h)
    h.update(json.dumps(parameters, sort_keys=True, default=str).encode())
    _digest_files([p for p in (ROOT / "sdsl").rglob("*.py")], h)
    _digest_files([p for p in DATA.rglob("*") if p.is_file()], h)
    _digest_files([ROOT / "requirements.lock"], h)
    return h.hexdigest()


def _to_ipynb(chapter: str, path: Path) -> None:
    import jupytext
    import nbformat

    nb = jupytext.read(NOTEBOOKS / f"{chapter}.md")
    nb.metadata.setdefault("kernelspec", {"name": KERNEL, "display_name": "Python 3", "language": "python"})
    nbformat.write(nb, path)


def _error_text(exc: Exception) -> str:
    import re

    text = str(exc)
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def execute_notebook(
    chapter: str,
    parameters: dict[str, Any] | None = None,
    output_dir: Path | str = EXECUTED,
    artifacts: Path | str | None = None,
) -> Path:
    """Execute ``notebooks/<chapter>.md`` with papermill and return the executed notebook's path.

    ``parameters`` override the notebook's defaults. The chapter's artifacts go to
    ``artifacts/<chapter>`` (default: the artifacts tree, ``sdsl.paths.artifacts_root()``); they
    are staged and moved there only on success. Raises :class:`NotebookError` with the
    notebook's traceback when a cell raises.
    """
    import papermill

    parameters = dict(parameters or {})
    output_dir = Path(output_dir).resolve()
    output_dir.mkdir(parents=True, exist_ok=True)
    final_root = Path(artifacts).resolve() if artifacts is not None else artifacts_root()
    final_root.mkdir(parents=True, exist_ok=True)
    out_path = output_dir / f"{chapter}.ipynb"
    with tempfile.TemporaryDirectory(prefix=f"sdsl-{chapter}-", dir=final_root) as tmp:
        tmp = Path(tmp)
        source = tmp / f"{chapter}.source.ipynb"
        try:
            _to_ipynb(chapter, source)
        except Exception as exc:  # jupytext: malformed cell metadata, bad header, ...
            raise NotebookError(
                f"notebook {chapter!r} could not be read ({NOTEBOOKS / (chapter + '.md')}): {exc}"
            ) from None
        staging = tmp / "artifacts" / chapter
        staging.mkdir(parents=True)
        params = {**parameters, "artifacts_dir": str(staging)}
        staged_nb = tmp / f"{chapter}.ipynb"
        env_before = os.environ.get("MPLBACKEND")
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        # chapters that read other chapters' artifacts (the scorecard) find them here
        root_before = os.environ.get("SDSL_ARTIFACTS")
        os.environ["SDSL_ARTIFACTS"] = str(final_root)
        try:
            papermill.execute_notebook(
                str(source), str(staged_nb), parameters=params, kernel_name=KERNEL,
                progress_bar=False, cwd=str(NOTEBOOKS), language="python",
            )
        except Exception as exc:  # papermill's PapermillExecutionError and kernel failures
            raise NotebookError(f"notebook {chapter!r} failed:\n{_error_text(exc)}") from None
        finally:
            if env_before is None:
                os.environ.pop("MPLBACKEND", None)
            else:
                os.environ["MPLBACKEND"] = env_before
            if root_before is None:
                os.environ.pop("SDSL_ARTIFACTS", None)
            else:
                os.environ["SDSL_ARTIFACTS"] = root_before
        _strip_staging_paths(staged_nb, staging, final_root / chapter)
        final = final_root / chapter
        if final.exists():
            shutil.rmtree(final)
        shutil.move(str(staging), str(final))
        shutil.move(str(staged_nb), str(out_path))
    return out_path


def _strip_staging_paths(nb_path: Path, staging: Path, final: Path) -> None:
    """Replace the temporary staging folder by the final artifacts folder in the executed
    notebook (parameters cell and outputs), so that the book shows stable paths."""
    text = nb_path.read_text(encoding="utf-8")
    nb_path.write_text(text.replace(str(staging), str(final)), encoding="utf-8")


def _stamp_path(chapter: str, output_dir: Path) -> Path:
    return output_dir / f".{chapter}.inputs"


def _run_one(
    chapter: str, params: dict[str, Any], output_dir: Path, artifacts: Path, force: bool, last: bool = False
) -> RunResult:
    digest = inputs_digest(chapter, params)
    if last:  # a chapter that reads the others' artifacts depends on them too
        from sdsl.build.artifacts import tree_digest

        digest += ":" + tree_digest(artifacts, exclude=[chapter])
    stamp = _stamp_path(chapter, output_dir)
    executed = output_dir / f"{chapter}.ipynb"
    if (
        not force
        and executed.is_file()
        and (artifacts / chapter).is_dir()
        and stamp.is_file()
        and stamp.read_text() == digest
    ):
        return RunResult(chapter, executed, 0.0, True)
    if stamp.exists():
        stamp.unlink()
    t0 = time.perf_counter()
    path = execute_notebook(chapter, params, output_dir, artifacts)
    seconds = time.perf_counter() - t0
    stamp.write_text(digest)
    return RunResult(chapter, path, seconds, False)


def run(
    chapters: list[str] | None = None,
    force: bool = False,
    jobs: int = 2,
    output_dir: Path | str = EXECUTED,
    artifacts: Path | str | None = None,
) -> list[RunResult]:
    """Execute the chapters of ``notebooks/runs.yml`` (all, or those named), ``jobs`` at a time;
    the chapters under ``last:`` afterwards, and only if all the others succeeded. Then write the
    manifest of the artifacts tree and ``status.md`` beside the executed notebooks.

    Raises :class:`NotebookError` naming every notebook that failed, with its traceback.
    """
    from sdsl.build.artifacts import write_manifest, write_status

    runs = load_runs()
    all_chapters = list(runs)
    last = load_last()
    if chapters:
        unknown = [c for c in chapters if c not in runs]
        if unknown:
            raise ValueError(f"unknown chapter(s) {unknown}; {RUNS_FILE} lists {list(runs)}")
        runs = {c: runs[c] for c in chapters}
    output_dir = Path(output_dir).resolve()
    output_dir.mkdir(parents=True, exist_ok=True)
    artifacts = Path(artifacts).resolve() if artifacts is not None else artifacts_root()
    results: list[RunResult] = []
    errors: list[str] = []
    first = {c: p for c, p in runs.items() if c not in last}
    if jobs <= 1 or len(first) <= 1:
        for chapter, params in first.items():
            try:
                results.append(_run_one(chapter, params, output_dir, artifacts, force))
            except NotebookError as exc:
                errors.append(str(exc))
    else:
        # longest first (by the last recorded duration): the slowest notebook does not start last
        from sdsl.build.artifacts import last_duration

        def seconds(c: str) -> float:
            d = last_duration(output_dir / f"{c}.ipynb")
            return d if d != float("inf") else last_duration(EXECUTED / f"{c}.ipynb")

        order = sorted(first, key=lambda c: -seconds(c))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {
                c: pool.submit(_run_one, c, first[c], output_dir, artifacts, force) for c in order
            }
            for chapter in first:
                try:
                    results.append(futures[chapter].result())
                except NotebookError as exc:
                    errors.append(str(exc))
    for chapter in [c for c in runs if c in last]:
        if errors:
            errors.append(f"notebook {chapter!r} not executed: it reads the artifacts of the chapters that failed")
            continue
        try:
            results.append(_run_one(chapter, runs[chapter], output_dir, artifacts, force, last=True))
        except NotebookError as exc:
            errors.append(str(exc))
    write_manifest(artifacts, output_dir)
    write_status(output_dir, all_chapters)
    if errors:
        raise NotebookError("\n\n".join(errors))
    return results


def _book_digest(builder_args: list[str] | None) -> str:
    """Hash of everything the HTML book is built from: ``book/`` (sources, configuration, the
    executed notebooks) except ``_build``, the lock file and the builder arguments."""
    h = hashlib.sha256()
    files = [p for p in BOOK.rglob("*") if p.is_file() and p.relative_to(BOOK).parts[0] != "_build"]
    _digest_files([*files, ROOT / "requirements.lock"], h)
    h.update(json.dumps(builder_args or []).encode())
    return h.hexdigest()


def build_book(builder_args: list[str] | None = None, force: bool = False) -> Path:
    """Build the HTML book from the executed notebooks, warnings as errors; returns index.html.

    Skipped when nothing it is built from changed since the last successful build (``force``
    builds anyway); otherwise built in full (``--all``)."""
    index = BOOK / "_build" / "html" / "index.html"
    stamp = BOOK / "_build" / ".inputs"
    digest = _book_digest(builder_args)
    if not force and index.is_file() and stamp.is_file() and stamp.read_text() == digest:
        return index
    if stamp.exists():
        stamp.unlink()
    exe = Path(sys.executable).parent / "jupyter-book"
    # --all: Sphinx's incremental environment can keep stale labels (a removed duplicate equation
    # label was still reported); a full build of the executed notebooks takes a few seconds.
    cmd = [str(exe), "build", str(BOOK), "-W", "-n", "--keep-going", "--all", *(builder_args or [])]
    proc = subprocess.run(cmd, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed (exit {proc.returncode}): {' '.join(cmd)}")
    stamp.write_text(digest)
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sdsl.build.pipeline", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="execute notebooks with papermill into book/executed/")
    p_run.add_argument("chapters", nargs="*", help="chapters to run (default: all in notebooks/runs.yml)")
    p_book = sub.add_parser("book", help="run every notebook, then build the HTML book")
    for p in (p_run, p_book):
        p.add_argument("--force", action="store_true", help="execute even if the inputs did not change")
        p.add_argument("--jobs", type=int, default=2, help="notebooks executed at once (default 2)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    try:
        results = run(getattr(args, "chapters", None) or None, force=args.force, jobs=args.jobs)
    except NotebookError as exc:
        print(exc, file=sys.stderr)
        return 1
    for r in results:
        state = "unchanged, skipped" if r.skipped else f"executed in {r.seconds:.1f} s"
        print(f"{r.chapter:>20}: {state}")
    if args.command == "book":
        index = build_book(force=args.force)
        print(f"book: {index} ({time.perf_counter() - t0:.1f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

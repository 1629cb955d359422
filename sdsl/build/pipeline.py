"""The one executor: MyST notebooks -> papermill -> executed notebooks -> Jupyter Book.

``notebooks/runs.yml`` is the one place where a run's parameters are recorded. Each notebook
``notebooks/<chapter>.md`` is converted with jupytext's Python API, executed by papermill with
the parameters of its entry into ``book/executed/<chapter>.ipynb``, and Jupyter Book assembles the
executed notebooks without executing them again (``execute_notebooks: off``).

A chapter's artifacts are staged and published with their provenance and executed notebook, all
or none (:mod:`sdsl.build.publish`), only when its notebook ran through: a failed or interrupted
notebook leaves the previous artifacts whole (a killed run's leftovers are undone on the next run);
SIGTERM kills the kernel and stops the run at once, in one line. The book is built beside the
published one and swapped in on success. A folder holding what the tools did not make is refused.
A notebook whose inputs (its source, its parameters, the ``sdsl`` package, ``data/`` and the lock
file) have not changed since its last successful run is not executed again.

Chapters listed under ``last:`` in ``runs.yml`` (the scorecard) read the other chapters'
artifacts: they run after all the others have succeeded, and their inputs include those
artifacts. After a run the artifacts tree gets its ``manifest.json`` and the executed notebooks
a ``status.md`` page (:mod:`sdsl.build.manifest`, :mod:`sdsl.build.status`). A folder that
cannot be written gives one line naming it (exit status 2) before anything runs.

Command line::

    python -m sdsl.build.pipeline run [CHAPTER ...] [--force] [--jobs N]
    python -m sdsl.build.pipeline book [--force]      # run, then build the HTML book
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdsl.build.manifest import machine_info, tree_digest, write_manifest, write_provenance
from sdsl.build.parameters import ParameterError, check_notebook_parameters, notebook_parameters
from sdsl.build.present import present_notebook
from sdsl.build.publish import publish, staging_name
from sdsl.build.runs import load_last, load_runs
from sdsl.build.staging import (
    STAGING_PREFIX,
    Interrupted,
    OutputError,
    claim,
    clean_stale,
    digest_files,
    killable_kernel_manager,
    refuse_foreign,
    terminate_as_exit,
)
from sdsl.build.status import last_duration, write_status
from sdsl.paths import BOOK, DATA, EXECUTED, NOTEBOOKS, ROOT, RUNS_FILE, artifacts_root

__all__ = [
    "NotebookError",
    "OutputError",
    "ParameterError",
    "notebook_parameters",
    "check_notebook_parameters",
    "RunResult",
    "inputs_digest",
    "execute_notebook",
    "clean_stale",
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


def inputs_digest(chapter: str, parameters: dict[str, Any]) -> str:
    """Hash of everything a chapter's outputs depend on: its notebook, its parameters, the
    ``sdsl`` package, ``data/`` and the lock file."""
    h = hashlib.sha256()
    digest_files([NOTEBOOKS / f"{chapter}.md"], h)
    h.update(json.dumps(parameters, sort_keys=True, default=str).encode())
    digest_files([p for p in (ROOT / "sdsl").rglob("*.py")], h)
    digest_files([p for p in DATA.rglob("*") if p.is_file()], h)
    digest_files([ROOT / "requirements.lock"], h)
    return h.hexdigest()


def _to_ipynb(chapter: str, path: Path) -> None:
    import jupytext
    import nbformat

    nb = jupytext.read(NOTEBOOKS / f"{chapter}.md")
    nb.metadata.setdefault("kernelspec", {"name": KERNEL, "display_name": "Python 3", "language": "python"})
    nbformat.write(nb, path)


def _error_text(exc: Exception) -> str:

    text = str(exc)
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


#: A kernel that dies before it answers has run no cell: started again up to this many times.
KERNEL_START_ATTEMPTS = 3
_KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"


def _execute_with_kernel_retries(execute, *args, **kwargs):
    """``execute(*args, **kwargs)`` (papermill's), started again when the kernel died before it
    answered: jupyter_client picks the kernel's TCP ports before the kernel binds them, so two
    kernels started at once can collide ("Address already in use"). No cell has run then, so
    nothing is repeated; any other failure is raised at once."""
    for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
        try:
            return execute(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - only the kernel-start failure is retried
            if _KERNEL_START_FAILURE not in str(exc) or attempt == KERNEL_START_ATTEMPTS:
                raise
            time.sleep(0.5 * attempt)


def execute_notebook(
    chapter: str,
    parameters: dict[str, Any] | None = None,
    output_dir: Path | str = EXECUTED,
    artifacts: Path | str | None = None,
    digest: str | None = None,
) -> Path:
    """Execute ``notebooks/<chapter>.md`` with papermill and return the executed notebook's path.

    ``parameters`` override the notebook's defaults. The chapter's artifacts go to
    ``artifacts/<chapter>`` (default: the artifacts tree, ``sdsl.paths.artifacts_root()``) with a
    provenance record (:func:`sdsl.build.manifest.write_provenance`): they are staged and published
    only on success, by renames, so the chapter's previous artifacts stay whole until the new ones
    replace them. Raises :class:`NotebookError` with the notebook's traceback when a cell raises,
    and :class:`OutputError` when an output folder cannot be written, and :class:`ParameterError`
    (a ``ValueError``) for an unknown or invalid parameter (:func:`check_notebook_parameters`),
    both before anything runs or is written.
    """
    import papermill

    parameters = {} if parameters is None else parameters
    check_notebook_parameters(chapter, parameters, notebooks=NOTEBOOKS)
    parameters = dict(parameters)
    final_root = refuse_foreign(
        Path(artifacts).resolve() if artifacts is not None else artifacts_root(), "artifacts folder"
    )
    output_dir = claim(refuse_foreign(Path(output_dir).resolve(), "output folder"), "output folder")
    claim(final_root, "artifacts folder")
    final = final_root / chapter
    if final.exists() and not os.access(final, os.W_OK):
        raise OutputError(f"artifacts folder {final} is not writable: nothing was run or published")
    for root in (final_root, output_dir):  # the artifacts root first: a publication's journal lies there
        clean_stale(root)
    source_md = NOTEBOOKS / f"{chapter}.md"
    out_path = output_dir / f"{chapter}.ipynb"
    staged_out = output_dir / f"{staging_name(chapter)}.ipynb"  # beside its destination: one filesystem
    with (
        terminate_as_exit(),
        tempfile.TemporaryDirectory(prefix=f"{STAGING_PREFIX}{chapter}-{os.getpid()}-", dir=final_root) as name,
    ):
        tmp = Path(name)
        source = tmp / f"{chapter}.source.ipynb"
        try:
            _to_ipynb(chapter, source)
        except Exception as exc:  # jupytext: malformed cell metadata, bad header, ...
            raise NotebookError(f"notebook {chapter!r} could not be read ({source_md}): {exc}") from None
        staging = tmp / "artifacts" / chapter
        staging.mkdir(parents=True)
        params = {**parameters, "artifacts_dir": str(staging)}
        staged_nb = tmp / f"{chapter}.ipynb"
        env_before = {k: os.environ.get(k) for k in ("MPLBACKEND", "SDSL_ARTIFACTS")}
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        # chapters that read other chapters' artifacts (the scorecard) find them here
        os.environ["SDSL_ARTIFACTS"] = str(final_root)
        try:
            _execute_with_kernel_retries(
                papermill.execute_notebook,
                str(source),
                str(staged_nb),
                parameters=params,
                kernel_name=KERNEL,
                progress_bar=False,
                cwd=str(NOTEBOOKS),
                language="python",
                kernel_manager_class=killable_kernel_manager(),
                shutdown_kernel="immediate",
                # the wait for a cell's last output after its reply: nbclient's default of 4 s failed
                # cells of three chapters on a machine loaded 6 times over (a kernel that dies is
                # still reported at once: nbclient checks that it is alive while it waits)
                iopub_timeout=120,
            )
        except Exception as exc:  # papermill's PapermillExecutionError and kernel failures
            if getattr(exc, "ename", None) == "ValueError" and "check_parameters" in _error_text(exc):
                # the notebook's own check (the cell after its parameters) refused a value
                evalue = getattr(exc, "evalue", exc)
                raise ParameterError(f"notebook {chapter!r}: {' '.join(str(evalue).split())}") from None
            raise NotebookError(f"notebook {chapter!r} failed:\n{_error_text(exc)}") from None
        finally:
            for k, v in env_before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        _strip_staging_paths(staged_nb, staging, final_root / chapter)
        present_notebook(staged_nb, final_root)  # parameter cells off the page, no absolute paths
        write_provenance(staging, source_md, parameters, digest)
        try:
            shutil.copyfile(staged_nb, staged_out)
            publish([(staging, final), (staged_out, out_path)], tmp)
        finally:
            staged_out.unlink(missing_ok=True)
    return out_path


def _strip_staging_paths(nb_path: Path, staging: Path, final: Path) -> None:
    """Replace the temporary staging folder by the final artifacts folder in the executed
    notebook (parameters cell and outputs), so that the book shows stable paths, and tag papermill's
    injected-parameters cell ``remove-cell``: it holds the machine's absolute artifacts path."""
    import nbformat

    nb = nbformat.reads(nb_path.read_text(encoding="utf-8").replace(str(staging), str(final)), as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell.metadata["tags"] = [*tags, "remove-cell"]
    nbformat.write(nb, str(nb_path))


def _stamp_path(chapter: str, output_dir: Path) -> Path:
    return output_dir / f".{chapter}.inputs"


def _run_one(
    chapter: str, params: dict[str, Any], output_dir: Path, artifacts: Path, force: bool, last: bool = False
) -> RunResult:
    digest = inputs_digest(chapter, params)
    if last:  # a chapter that reads the others' artifacts depends on them too
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
    path = execute_notebook(chapter, params, output_dir, artifacts, digest)
    seconds = time.perf_counter() - t0
    stamp.write_text(digest)
    return RunResult(chapter, path, seconds, False)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's workers (each kills its kernel and removes its staging on SIGTERM),
    then kill those still there after a while (the next run undoes what they left)."""
    procs = list(getattr(pool, "_processes", {}).values())
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=10)
    pool.shutdown(wait=False, cancel_futures=True)


def run(
    chapters: list[str] | None = None,
    force: bool = False,
    jobs: int = 2,
    output_dir: Path | str = EXECUTED,
    artifacts: Path | str | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> list[RunResult]:
    """Execute the chapters of ``notebooks/runs.yml`` (all, or those named), ``jobs`` at a time;
    the chapters under ``last:`` afterwards, and only if all the others succeeded. Then write the
    manifest of the artifacts tree and ``status.md`` beside the executed notebooks.

    ``overrides`` maps a chapter to parameters that replace those of ``runs.yml`` for this run
    (the kernel matrix sets the measure chapter's torch threads so). Staging folders of killed
    runs are removed first; SIGINT or SIGTERM during the run stops the workers, removes this run's
    staging folders and leaves every chapter's previous artifacts whole.

    Raises :class:`NotebookError` naming every notebook that failed, with its traceback, and
    :class:`OutputError` when an output folder cannot be written (before anything runs).
    """
    runs = load_runs()
    all_chapters = list(runs)
    last = load_last()
    if chapters:
        unknown = [c for c in chapters if c not in runs]
        if unknown:
            raise ValueError(f"unknown chapter(s) {unknown}; {RUNS_FILE} lists {list(runs)}")
        runs = {c: runs[c] for c in chapters}
    for chapter, params in (overrides or {}).items():
        if chapter not in runs:
            raise ValueError(
                f"overrides name chapter {chapter!r}, which this run does not execute; it runs {list(runs)}"
            )
        runs[chapter] = {**runs[chapter], **params}
    for chapter, params in runs.items():  # every name and value, before anything runs
        check_notebook_parameters(chapter, params, notebooks=NOTEBOOKS)
    artifacts = refuse_foreign(
        Path(artifacts).resolve() if artifacts is not None else artifacts_root(), "artifacts folder"
    )
    output_dir = claim(refuse_foreign(Path(output_dir).resolve(), "output folder"), "output folder")
    claim(artifacts, "artifacts folder")
    for chapter in runs:
        if (artifacts / chapter).exists() and not os.access(artifacts / chapter, os.W_OK):
            raise OutputError(f"artifacts folder {artifacts / chapter} is not writable: nothing was run or published")
    clean_stale(artifacts)
    results: list[RunResult] = []
    errors: list[str] = []
    first = {c: p for c, p in runs.items() if c not in last}
    with terminate_as_exit():
        if jobs <= 1 or len(first) <= 1:
            for chapter, params in first.items():
                try:
                    results.append(_run_one(chapter, params, output_dir, artifacts, force))
                except NotebookError as exc:
                    errors.append(str(exc))
        else:
            # longest first (by the last recorded duration): the slowest notebook does not start last
            def seconds(c: str) -> float:
                d = last_duration(output_dir / f"{c}.ipynb")
                return d if d != float("inf") else last_duration(EXECUTED / f"{c}.ipynb")

            order = sorted(first, key=lambda c: -seconds(c))
            pool = ProcessPoolExecutor(max_workers=jobs)
            try:
                futures = {c: pool.submit(_run_one, c, first[c], output_dir, artifacts, force) for c in order}
                for chapter in first:
                    try:
                        results.append(futures[chapter].result())
                    except NotebookError as exc:
                        errors.append(str(exc))
            except BaseException:
                _stop_pool(pool)
                clean_stale(artifacts)
                raise
            pool.shutdown(wait=True)
        for chapter in [c for c in runs if c in last]:
            if errors:
                errors.append(f"notebook {chapter!r} not executed: it reads the artifacts of the chapters that failed")
                continue
            try:
                results.append(_run_one(chapter, runs[chapter], output_dir, artifacts, force, last=True))
            except NotebookError as exc:
                errors.append(str(exc))
        write_manifest(artifacts, machine_info())
        write_status(output_dir, all_chapters)
    if errors:
        raise NotebookError("\n\n".join(errors))
    return results


def _copy_artifacts(book: Path) -> None:
    """Mirror the artifacts tree into ``book/_static/artifacts`` (served beside the pages, linked by
    :func:`sdsl.book.links.downloads`); only the artifacts, not the manifest or staging folders."""
    from sdsl.build.manifest import list_files

    dest = book / "_static" / "artifacts"
    root = artifacts_root()
    wanted = set(list_files(root))
    if dest.exists():
        for p in sorted(dest.rglob("*"), reverse=True):
            rel = p.relative_to(dest).as_posix()
            if p.is_file() and rel not in wanted:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()
    for rel in wanted:
        target = dest / rel
        if not target.is_file() or target.read_bytes() != (root / rel).read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / rel, target)


def _book_digest(builder_args: list[str] | None, book: Path = BOOK) -> str:
    """Hash of everything the HTML book is built from: ``book/`` (sources, configuration, the
    executed notebooks) except ``_build``, the lock file and the builder arguments."""
    h = hashlib.sha256()
    files = [p for p in book.rglob("*") if p.is_file() and p.relative_to(book).parts[0] != "_build"]
    digest_files([*files, ROOT / "requirements.lock"], h)
    h.update(json.dumps(builder_args or []).encode())
    return h.hexdigest()


def build_book(builder_args: list[str] | None = None, force: bool = False, book: Path | str = BOOK) -> Path:
    """Build the HTML book from the executed notebooks, warnings as errors; returns index.html.

    Skipped when nothing it is built from changed since the last successful build (``force``
    builds anyway); otherwise built in full (``--all``) into a staging folder beside
    ``book/_build/html`` and swapped in by renames only when the build succeeded: a failed or
    interrupted build (SIGINT, SIGTERM) leaves the previous book whole and no staging folder.
    """
    book = Path(book)
    build = claim(book / "_build", "book build folder")
    html = build / "html"
    index = html / "index.html"
    stamp = build / ".inputs"
    if book == BOOK:  # the project's book links the artifacts it shows
        _copy_artifacts(book)
    digest = _book_digest(builder_args, book)
    clean_stale(build)
    if not force and index.is_file() and stamp.is_file() and stamp.read_text() == digest:
        return index
    exe = Path(sys.executable).parent / "jupyter-book"
    with (
        terminate_as_exit(),
        tempfile.TemporaryDirectory(prefix=f"{STAGING_PREFIX}book-{os.getpid()}-", dir=build) as tmp,
    ):
        # --all: Sphinx's incremental environment can keep stale labels (a removed duplicate
        # equation label was still reported); a full build of the executed notebooks takes seconds.
        cmd = [
            str(exe),
            "build",
            str(book),
            "--path-output",
            tmp,
            "-W",
            "-n",
            "--keep-going",
            "--all",
            *(builder_args or []),
        ]
        proc = subprocess.Popen(cmd, cwd=ROOT)
        try:
            code = proc.wait()
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
        new = Path(tmp) / "_build" / "html"
        if code != 0 or not (new / "index.html").is_file():
            raise RuntimeError(f"jupyter-book build failed (exit {code}): {' '.join(cmd)}; the previous book is kept")
        publish([(new, html)], Path(tmp))
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
    if args.jobs < 1:
        parser.error(f"--jobs must be an integer >= 1, got {args.jobs}")
    t0 = time.perf_counter()
    try:
        results = run(getattr(args, "chapters", None) or None, force=args.force, jobs=args.jobs)
        for r in results:
            state = "unchanged, skipped" if r.skipped else f"executed in {r.seconds:.1f} s"
            print(f"{r.chapter:>20}: {state}")
        if args.command == "book":
            index = build_book(force=args.force)
            print(f"book: {index} ({time.perf_counter() - t0:.1f} s in all)")
    except Interrupted as exc:
        print(exc.line(parser.prog), file=sys.stderr)
        return exc.status
    except NotebookError as exc:
        print(exc, file=sys.stderr)
        return 1
    except (OutputError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

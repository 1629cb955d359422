"""The one executor: MyST notebooks -> papermill -> executed notebooks -> Jupyter Book.

``notebooks/runs.yml`` is the one place where a run's parameters are recorded. Each notebook
``notebooks/<chapter>.md`` is converted with jupytext's Python API, executed by papermill with
the parameters of its entry into ``book/executed/<chapter>.ipynb``, and Jupyter Book assembles the
executed notebooks without executing them again (``execute_notebooks: off``).

A chapter's artifacts are staged and published with their provenance and executed notebook, all
or none (:mod:`sdsl.build.publish`), only when its notebook ran through: a failed or interrupted
notebook leaves the previous artifacts whole (what a killed run left is mended by whoever reads the
tree next: the next run, the book build, the regeneration check); SIGTERM kills the kernel and
stops the run at once, in one line. The book is built beside the published one and swapped in on
success. A folder holding what the tools did not make is refused, and so is a chapter's artifacts
folder holding a file no run wrote (a run replaces the folder whole), before anything runs. A
disk that cannot take a run (full, read only) is named, not the notebook.
A notebook whose inputs (its source, its parameters, the ``sdsl`` package, ``data/`` and the lock
file) have not changed since its last successful run is not executed again, nor its parameters
checked again (they passed with those inputs), and a run that executes nothing keeps the machine
recorded in the manifest: a build with nothing changed imports no chapter and no torch. The
parameters ``runs.yml`` gives a chapter are checked before any notebook starts; a chapter run with
its defaults is checked by its notebook's own cell after the parameters. Kernels talk to papermill
over Unix sockets in the run's staging folder (:func:`sdsl.build.staging.kernel_manager`), and
their numerical libraries get one thread each unless the caller sized them (:data:`KERNEL_THREADS`).
The command prints one line per notebook (ran, with its time, or up to date) and the book's path;
Sphinx's output only when the book build fails.

Chapters listed under ``last:`` in ``runs.yml`` (the scorecard) read the other chapters'
artifacts: they run after all the others have succeeded, and their inputs include those
artifacts. After a run the artifacts tree gets its ``manifest.json`` and the executed notebooks
a ``status.md`` page (:mod:`sdsl.build.manifest`, :mod:`sdsl.build.status`). A folder that
cannot be written gives one line naming it (exit status 2) before anything runs.

How an executed notebook is presented in the book (:func:`present_cells`) is at the end.

Command line::

    python -m sdsl.build.pipeline run [CHAPTER ...] [--force] [--jobs N]
    python -m sdsl.build.pipeline book [--force]      # run, then build the HTML book
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdsl import validation as V
from sdsl._owned import OutputError, claim, refuse_foreign, write_failure
from sdsl.build.manifest import (
    foreign_artifacts,
    machine_info,
    read_manifest,
    tree_digest,
    write_manifest,
    write_provenance,
)
from sdsl.build.parameters import (
    ParameterError,
    check_notebook_parameters,
    load_last,
    load_runs,
    plain_parameters,
)
from sdsl.build.publish import publish, stage_beside, staging_folder
from sdsl.build.staging import Interrupted, clean_stale, digest_files, kernel_manager, terminate_as_exit
from sdsl.build.status import last_duration, write_status
from sdsl.paths import BOOK, DATA, EXECUTED, NOTEBOOKS, ROOT, RUNS_FILE, artifacts_root

__all__ = [
    "NotebookError",
    "RunResult",
    "shared_digest",
    "inputs_digest",
    "execute_notebook",
    "run",
    "build_book",
    "main",
    "REMOVED_TAGS",
    "relative_paths",
    "present_cells",
    "present_notebook",
]


KERNEL = "python3"

#: The thread pools of a kernel's numerical libraries (numpy's and scipy's OpenBLAS, torch's
#: OpenMP) get one thread each unless the user's environment sets their size: a run's
#: parallelism is across notebooks (``--jobs``), and two kernels whose BLAS each start a thread
#: per core oversubscribe the cores (``benchmarks/bench_build.py`` measures what that costs). One
#: value for every ``--jobs`` keeps the numbers independent of it.
KERNEL_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def kernel_environment() -> dict[str, str]:
    """The environment variables a notebook's kernel runs with besides the caller's: each of
    :data:`KERNEL_THREADS` as the caller set it, else ``"1"``."""
    return {name: os.environ.get(name, "1") for name in KERNEL_THREADS}


class NotebookError(RuntimeError):
    """A notebook raised while papermill executed it; the message carries its traceback."""


@dataclass(frozen=True)
class RunResult:
    chapter: str
    executed: Path
    seconds: float
    skipped: bool


def shared_digest() -> hashlib._Hash:
    """The hash, not finished, of the inputs every chapter shares: the ``sdsl`` package, ``data/``
    and the lock file (computed once per run, then extended per chapter by :func:`inputs_digest`)."""
    h = hashlib.sha256()
    digest_files([p for p in (ROOT / "sdsl").rglob("*.py")], h)
    digest_files([p for p in DATA.rglob("*") if p.is_file()], h)
    digest_files([ROOT / "requirements.lock"], h)
    return h


def inputs_digest(chapter: str, parameters: dict[str, Any], shared: hashlib._Hash | None = None) -> str:
    """Hash of everything a chapter's outputs depend on: the ``sdsl`` package, ``data/`` and the
    lock file (``shared``, :func:`shared_digest`, computed here when not given), its notebook and
    its parameters."""
    h = (shared if shared is not None else shared_digest()).copy()
    digest_files([NOTEBOOKS / f"{chapter}.md"], h)
    h.update(json.dumps(parameters, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _read_notebook(chapter: str):
    import jupytext

    nb = jupytext.read(NOTEBOOKS / f"{chapter}.md")
    nb.metadata.setdefault("kernelspec", {"name": KERNEL, "display_name": "Python 3", "language": "python"})
    return nb


def _error_text(exc: Exception) -> str:

    text = str(exc)
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


#: errno values that name the disk, not the notebook: no space, over quota, read only.
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG)


def _disk_error_in_kernel(exc: Exception) -> bool:
    """A cell of the notebook raised an OSError of the disk (its artifacts could not be written)."""
    text = f"{getattr(exc, 'ename', '')}: {getattr(exc, 'evalue', '')}"
    return any(f"[Errno {code}]" in text for code in _DISK_ERRORS)


def refuse_foreign_artifacts(folder: Path) -> None:
    """Refuse, before anything runs, a chapter's artifacts folder holding files that no run wrote
    (:func:`sdsl.build.manifest.foreign_artifacts`): publishing replaces the folder whole, and they
    are the user's. One line naming them."""
    foreign = foreign_artifacts(folder)
    if foreign:
        shown = ", ".join(repr(f) for f in foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise OutputError(
            f"artifacts folder {folder} holds files no run wrote ({shown}): a run replaces the folder whole; move "
            "them out of it first; nothing was run or written"
        )


def execute_notebook(
    chapter: str,
    parameters: dict[str, Any] | None = None,
    output_dir: Path | str = EXECUTED,
    artifacts: Path | str | None = None,
    digest: str | None = None,
) -> Path:
    """Execute ``notebooks/<chapter>.md`` with papermill and return the executed notebook's path.

    ``parameters`` override the notebook's defaults (numpy numbers and arrays as the plain Python
    values they hold, :func:`sdsl.build.parameters.plain_parameters`). The chapter's artifacts go to
    ``artifacts/<chapter>`` (default: the artifacts tree, ``sdsl.paths.artifacts_root()``) with a
    provenance record (:func:`sdsl.build.manifest.write_provenance`): they are staged and published
    only on success, by renames, so the chapter's previous artifacts stay whole until the new ones
    replace them. Raises :class:`NotebookError` with the notebook's traceback when a cell raises,
    and :class:`OutputError` when an output folder cannot be written (a full disk included: the
    disk is named, not the notebook) or holds files no run wrote, and :class:`ParameterError` (a
    ``ValueError``) for an unknown or invalid parameter (:func:`check_notebook_parameters`), both
    before anything runs or is written.
    """
    parameters = plain_parameters({} if parameters is None else parameters)
    check_notebook_parameters(chapter, parameters, notebooks=NOTEBOOKS)
    return _execute(chapter, dict(parameters), output_dir, artifacts, digest)


def _execute(
    chapter: str, parameters: dict[str, Any], output_dir: Path | str, artifacts: Path | str | None, digest: str | None
) -> Path:
    """:func:`execute_notebook` once its parameters have been checked (:func:`run` checks every
    parameter given before it starts any notebook)."""
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
    refuse_foreign_artifacts(final)
    try:
        with terminate_as_exit(), staging_folder(final_root, chapter) as tmp:
            return _execute_in(chapter, parameters, tmp, final_root, output_dir, digest)
    except OSError as exc:  # writing the staged run or publishing it: the disk, not the notebook
        raise write_failure(exc, f"the run of notebook {chapter!r} in", final_root) from None


def _execute_in(
    chapter: str, parameters: dict[str, Any], tmp: Path, final_root: Path, output_dir: Path, digest: str | None
) -> Path:
    """Run the notebook in the staging folder ``tmp`` and publish it (see :func:`_execute`)."""
    import nbformat
    import papermill

    source_md = NOTEBOOKS / f"{chapter}.md"
    out_path = output_dir / f"{chapter}.ipynb"
    final = final_root / chapter
    source = tmp / f"{chapter}.source.ipynb"
    try:
        nb = _read_notebook(chapter)
    except Exception as exc:  # jupytext: malformed cell metadata, bad header, ...
        raise NotebookError(f"notebook {chapter!r} could not be read ({source_md}): {exc}") from None
    nbformat.write(nb, source)  # an OSError here is the disk's (see _execute)
    staging = tmp / "artifacts" / chapter
    staging.mkdir(parents=True)
    params = {**parameters, "artifacts_dir": str(staging)}
    staged_nb = tmp / f"{chapter}.ipynb"
    env_before = {k: os.environ.get(k) for k in ("MPLBACKEND", "SDSL_ARTIFACTS", *KERNEL_THREADS)}
    os.environ.update(kernel_environment())
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    # chapters that read other chapters' artifacts (the scorecard) find them here
    os.environ["SDSL_ARTIFACTS"] = str(final_root)
    try:
        with kernel_manager(tmp) as manager:
            papermill.execute_notebook(
                str(source),
                str(staged_nb),
                parameters=params,
                kernel_name=KERNEL,
                progress_bar=False,
                cwd=str(NOTEBOOKS),
                language="python",
                kernel_manager_class=manager,
                shutdown_kernel="immediate",
                # not after every cell: each save serializes and validates the whole notebook
                request_save_on_cell_execute=False,
                # the wait for a cell's last output after its reply: nbclient's default of 4 s
                # failed cells of three chapters on a machine loaded 6 times over (a kernel that
                # dies is still reported at once: nbclient checks that it is alive while it waits)
                iopub_timeout=120,
            )
    except Exception as exc:  # papermill's PapermillExecutionError and kernel failures
        if isinstance(exc, OSError) and exc.errno in _DISK_ERRORS:
            raise  # papermill writing the executed notebook: the disk's (see _execute)
        if getattr(exc, "ename", None) == "ValueError" and "check_parameters" in _error_text(exc):
            # the notebook's own check (the cell after its parameters) refused a value
            evalue = getattr(exc, "evalue", exc)
            raise ParameterError(f"notebook {chapter!r}: {' '.join(str(evalue).split())}") from None
        if _disk_error_in_kernel(exc):
            raise OutputError(
                f"notebook {chapter!r} could not write its artifacts into {final_root} "
                f"({V.one_line(getattr(exc, 'evalue', exc))}): free space there or give another folder; "
                "nothing was published"
            ) from None
        raise NotebookError(f"notebook {chapter!r} failed:\n{_error_text(exc)}") from None
    finally:
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    # parameter cells off the page; the final artifacts folder, relative, instead of the staging one
    present_notebook(staged_nb, final_root, moved={str(staging): str(final)})
    write_provenance(staging, source_md, parameters, digest)
    staged_out = stage_beside(tmp, out_path)  # beside its destination: one filesystem
    shutil.copyfile(staged_nb, staged_out)
    publish([(staging, final), (staged_out, out_path)], tmp)
    return out_path


def _stamp_path(chapter: str, output_dir: Path) -> Path:
    return output_dir / f".{chapter}.inputs"


def _up_to_date(chapter: str, digest: str, output_dir: Path, artifacts: Path) -> bool:
    """The chapter's executed notebook and artifacts are there and were made from inputs of this
    ``digest`` (its stamp, written when the run went through)."""
    stamp = _stamp_path(chapter, output_dir)
    return (
        (output_dir / f"{chapter}.ipynb").is_file()
        and (artifacts / chapter).is_dir()
        and stamp.is_file()
        and stamp.read_text() == digest
    )


def _inputs_unchanged(chapter: str, digest: str, output_dir: Path) -> bool:
    """The chapter's last run went through with inputs of this ``digest`` (its own part of the stamp;
    a chapter under ``last:`` adds the other chapters' artifacts after a colon): its parameters
    passed their check then, and nothing that check reads has changed since."""
    stamp = _stamp_path(chapter, output_dir)
    return stamp.is_file() and stamp.read_text().split(":", 1)[0] == digest


def _run_one(chapter: str, params: dict[str, Any], output_dir: Path, artifacts: Path, digest: str) -> RunResult:
    """Execute one chapter whose parameters were checked; its stamp records ``digest`` once it went
    through."""
    stamp = _stamp_path(chapter, output_dir)
    if stamp.exists():
        stamp.unlink()
    t0 = time.perf_counter()
    path = _execute(chapter, params, output_dir, artifacts, digest)
    seconds = time.perf_counter() - t0
    stamp.write_text(digest)
    return RunResult(chapter, path, seconds, False)


_PROBE = "import json, sys; from sdsl.build.manifest import machine_info; json.dump(machine_info(), sys.stdout)"


def _start_machine_probe() -> subprocess.Popen:
    """:func:`~sdsl.build.manifest.machine_info` in a process of its own, started when notebooks
    are about to run: its imports (torch's above all) then overlap the notebooks instead of
    following them."""
    env = {**os.environ, **kernel_environment()}  # the kernels' thread counts, as they ran
    return subprocess.Popen([sys.executable, "-c", _PROBE], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)


def _machine(probe: subprocess.Popen | None) -> dict[str, Any]:
    """What ``probe`` found (:func:`machine_info` here when it failed or there is none)."""
    if probe is not None:
        out, _ = probe.communicate()
        if probe.returncode == 0:
            try:
                found = json.loads(out)
            except ValueError:
                found = None
            if isinstance(found, dict):
                return found
    return machine_info()


def _recorded_machine(artifacts: Path) -> dict[str, Any] | None:
    """The machine recorded in the artifacts tree's manifest, ``None`` when there is none (or it
    is damaged): when a run executed nothing, its artifacts were made there, not here."""
    try:
        manifest = read_manifest(artifacts)
    except ValueError:
        return None
    machine = manifest.get("machine") if manifest is not None else None
    return machine if isinstance(machine, dict) else None


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
        twice = [c for i, c in enumerate(chapters) if c in chapters[:i]]
        if twice:
            raise ValueError(f"chapter {twice[0]!r} is named twice: name each chapter once")
        unknown = [c for c in chapters if c not in runs]
        if unknown:
            raise ValueError(f"unknown chapter(s) {unknown}; {RUNS_FILE} lists {list(runs)}")
        runs = {c: runs[c] for c in chapters}
    for chapter, params in plain_parameters(overrides or {}).items():
        if chapter not in runs:
            raise ValueError(
                f"overrides name chapter {chapter!r}, which this run does not execute; it runs {list(runs)}"
            )
        runs[chapter] = {**runs[chapter], **params}
    shared = shared_digest()
    digests = {c: inputs_digest(c, p, shared) for c, p in runs.items()}
    stamps_dir = Path(output_dir).resolve()
    for chapter, params in runs.items():  # every name and value given, before anything runs
        # A chapter run with its notebook's defaults is checked by the notebook itself, in the cell
        # after its parameters (importing the nine chapters here took 4 s before any notebook
        # started); a chapter whose inputs are those of its last run that went through passed then.
        if params and (force or not _inputs_unchanged(chapter, digests[chapter], stamps_dir)):
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
    clean_stale(output_dir)
    for chapter in runs:  # every chapter's folder, before any notebook runs
        refuse_foreign_artifacts(artifacts / chapter)
    done: dict[str, RunResult] = {}
    first = [c for c in runs if c not in last]
    pending = [c for c in first if force or not _up_to_date(c, digests[c], output_dir, artifacts)]
    for chapter in first:
        if chapter not in pending:
            done[chapter] = RunResult(chapter, output_dir / f"{chapter}.ipynb", 0.0, True)
    # the probe takes a core for its imports: at once when the notebooks leave one free, else once
    # the parallel notebooks are done (beside the chapters under ``last:``)
    probes: list[subprocess.Popen] = [_start_machine_probe()] if pending and (jobs <= 1 or len(pending) < jobs) else []
    try:
        return _run_pending(
            runs, all_chapters, last, pending, done, digests, output_dir, artifacts, jobs, force, probes
        )
    finally:
        for probe in probes:
            if probe.poll() is None:
                probe.kill()
                probe.wait()


def _run_pending(
    runs: dict[str, dict[str, Any]],
    all_chapters: list[str],
    last: list[str],
    pending: list[str],
    done: dict[str, RunResult],
    digests: dict[str, str],
    output_dir: Path,
    artifacts: Path,
    jobs: int,
    force: bool,
    probes: list[subprocess.Popen],
) -> list[RunResult]:
    """The second half of :func:`run`: execute the ``pending`` chapters, then those under ``last:``,
    then write the manifest (the machine from the probe in ``probes``, started by :func:`run` when
    the notebooks leave a core free, else here once the parallel ones are done) and the status
    page."""
    errors: list[str] = []
    with terminate_as_exit():
        if jobs <= 1 or len(pending) <= 1:
            for chapter in pending:
                try:
                    done[chapter] = _run_one(chapter, runs[chapter], output_dir, artifacts, digests[chapter])
                except NotebookError as exc:
                    errors.append(str(exc))
        else:
            # longest first (by the last recorded duration): the slowest notebook does not start last
            def seconds(c: str) -> float:
                d = last_duration(output_dir / f"{c}.ipynb")
                return d if d != float("inf") else last_duration(EXECUTED / f"{c}.ipynb")

            order = sorted(pending, key=lambda c: -seconds(c))
            pool = ProcessPoolExecutor(max_workers=jobs)
            try:
                futures = {c: pool.submit(_run_one, c, runs[c], output_dir, artifacts, digests[c]) for c in order}
                for chapter in pending:
                    try:
                        done[chapter] = futures[chapter].result()
                    except NotebookError as exc:
                        errors.append(str(exc))
            except BaseException:
                _stop_pool(pool)
                clean_stale(artifacts)
                raise
            pool.shutdown(wait=True)
            if not probes:
                probes.append(_start_machine_probe())
        for chapter in [c for c in runs if c in last]:
            if errors:
                errors.append(f"notebook {chapter!r} not executed: it reads the artifacts of the chapters that failed")
                continue
            # a chapter that reads the others' artifacts depends on them too
            digest = digests[chapter] + ":" + tree_digest(artifacts, exclude=[chapter])
            if not force and _up_to_date(chapter, digest, output_dir, artifacts):
                done[chapter] = RunResult(chapter, output_dir / f"{chapter}.ipynb", 0.0, True)
                continue
            if not probes:
                probes.append(_start_machine_probe())
            try:
                done[chapter] = _run_one(chapter, runs[chapter], output_dir, artifacts, digest)
            except NotebookError as exc:
                errors.append(str(exc))
        executed = any(not r.skipped for r in done.values())
        machine = None if executed else _recorded_machine(artifacts)
        write_manifest(artifacts, machine if machine is not None else _machine(probes[0] if probes else None))
        write_status(output_dir, all_chapters)
    if errors:
        raise NotebookError("\n\n".join(errors))
    return [done[c] for c in runs if c in done]


def _copy_artifacts(book: Path) -> None:
    """Mirror the artifacts tree into ``book/_static/artifacts`` (served beside the pages, linked by
    :func:`sdsl.book.outputs.downloads`); only the artifacts, not the manifest or staging folders."""
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


def _written_by_build(rel: Path) -> bool:
    """Whether ``rel`` (relative to ``book/``) is written by the book's build, not a source."""
    return rel.parts[0] in ("_build", "_thumbnails") or "__pycache__" in rel.parts


def _book_digest(builder_args: list[str] | None, book: Path = BOOK) -> str:
    """Hash of everything the HTML book is built from: ``book/`` (sources, configuration, the
    executed notebooks) except ``_build`` and what the build itself writes there (the local
    extensions' ``__pycache__``, the landing page's thumbnails: made from the artifacts, which are
    hashed), the lock file and the builder arguments. What a build writes must not count, or the
    next build with nothing changed would run Sphinx again."""
    h = hashlib.sha256()
    files = [p for p in book.rglob("*") if p.is_file() and not _written_by_build(p.relative_to(book))]
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
        clean_stale(artifacts_root())  # what a killed run left is mended before the book reads it
        _copy_artifacts(book)
    digest = _book_digest(builder_args, book)
    clean_stale(build)
    if not force and index.is_file() and stamp.is_file() and stamp.read_text() == digest:
        return index
    exe = Path(sys.executable).parent / "jupyter-book"
    with terminate_as_exit(), staging_folder(build, "book") as staged:
        tmp = str(staged)
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
        # Sphinx's progress is kept back: shown, all of it, only when the build fails
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            output, _ = proc.communicate()
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
        code = proc.returncode
        new = Path(tmp) / "_build" / "html"
        if code != 0 or not (new / "index.html").is_file():
            raise RuntimeError(
                f"{output.rstrip()}\n\njupyter-book build failed (exit {code}, its output above): "
                f"{' '.join(cmd)}; the previous book is kept"
            )
        publish([(new, html)], staged)
        stamp.write_text(digest)
    return index


def main(argv: list[str] | None = None) -> int:
    """``python -m sdsl.build.pipeline``: a usage error or a refused folder or parameter is one line
    and exit status 2 (before anything runs), a failed notebook its traceback and 1, SIGTERM or
    SIGINT at any instant one line and 128 + the signal's number."""
    with terminate_as_exit():  # from the start: a SIGTERM while the command starts is one line too
        parser = V.CommandParser(prog="python -m sdsl.build.pipeline", description=__doc__.split("\n\n")[0])
        try:
            sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
            p_run = sub.add_parser("run", help="execute notebooks with papermill into book/executed/")
            p_run.add_argument("chapters", nargs="*", help="chapters to run (default: all in notebooks/runs.yml)")
            p_book = sub.add_parser("book", help="run every notebook, then build the HTML book")
            jobs = V.argument_type(V.integer, "--jobs", low=1, what="notebooks executed at once")
            for p in (p_run, p_book):
                p.add_argument("--force", action="store_true", help="execute even if the inputs did not change")
                p.add_argument("--jobs", type=jobs, default=2, help="notebooks executed at once (default 2)")
            try:
                args = parser.parse_args(argv)
            except Interrupted:
                raise
            except SystemExit as exc:  # a usage error (one line) or --help
                return exc.code if isinstance(exc.code, int) else V.EXIT_USAGE
            t0 = time.perf_counter()
            results = run(getattr(args, "chapters", None) or None, force=args.force, jobs=args.jobs)
            width = max((len(r.chapter) for r in results), default=0)
            for r in results:
                state = "up to date" if r.skipped else f"ran in {r.seconds:.1f} s"
                print(f"{r.chapter:<{width}}  {state}")
            if args.command == "book":
                t1 = time.perf_counter()
                index = build_book(force=args.force)
                t2 = time.perf_counter()
                print(f"book: {index} (notebooks {t1 - t0:.1f} s, book {t2 - t1:.1f} s)")
        except (Interrupted, KeyboardInterrupt) as exc:
            logging.disable(logging.CRITICAL)  # the process ends here: its one line is all it says
            stop = exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)
            print(stop.line(parser.prog), file=sys.stderr)
            return stop.status
        except NotebookError as exc:
            print(exc, file=sys.stderr)
            return 1
        except (OutputError, ValueError) as exc:
            print(f"{parser.prog}: error: {V.one_line(exc)}", file=sys.stderr)
            return V.EXIT_USAGE
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0


# --- How an executed notebook is presented in the book.

#: Cells carrying one of these tags are removed from the rendered page.
REMOVED_TAGS = ("parameters", "injected-parameters")


def relative_paths(text: str, root: Path | str = ROOT, extra: dict[str, str] | None = None) -> str:
    """``text`` with every absolute path under ``root`` written relative to it (``<root>/x``
    becomes ``x``, ``<root>`` itself ``.``), and every prefix of ``extra`` (absolute folder ->
    what to write instead) replaced. Longer prefixes are replaced first."""
    prefixes = {str(Path(root)).rstrip("/"): "."}
    prefixes.update({str(k).rstrip("/"): v for k, v in (extra or {}).items()})
    out = text
    for prefix in sorted(prefixes, key=len, reverse=True):
        repl = prefixes[prefix]
        inside = "" if repl == "." else repl.rstrip("/") + "/"
        # a function, not a template: the replacement is taken literally (no backslash escapes)
        out = re.sub(re.escape(prefix) + "/", lambda _m: inside, out)
        out = re.sub(re.escape(prefix) + r"(?![\w.-])", lambda _m: repl, out)
    return out


def _strip(value: Any, fix) -> Any:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, list):
        return [_strip(v, fix) for v in value]
    if isinstance(value, dict):
        return {k: _strip(v, fix) for k, v in value.items()}
    return value


def present_cells(nb: dict[str, Any], root: Path | str = ROOT, extra: dict[str, str] | None = None) -> dict[str, Any]:
    """The notebook ``nb`` (nbformat 4 as a dict), presented: cells tagged one of
    :data:`REMOVED_TAGS` get the tag ``remove-cell``; absolute paths in every cell's source and
    outputs are made relative (:func:`relative_paths`). The notebook's metadata (papermill's
    record of the run) is left as it is. Returns a new dict."""

    def fix(text: str) -> str:
        return relative_paths(text, root, extra)

    cells = []
    for cell in nb.get("cells", []):
        cell = dict(cell)
        meta = dict(cell.get("metadata", {}))
        tags = list(meta.get("tags", []))
        if any(t in tags for t in REMOVED_TAGS) and "remove-cell" not in tags:
            tags.append("remove-cell")
        if tags:
            meta["tags"] = tags
        cell["metadata"] = meta
        cell["source"] = _strip(cell.get("source", ""), fix)
        if "outputs" in cell:
            cell["outputs"] = _strip(cell["outputs"], fix)
        cells.append(cell)
    return {**nb, "cells": cells}


def present_notebook(
    nb_path: Path | str,
    artifacts_root: Path | str | None = None,
    root: Path | str = ROOT,
    moved: dict[str, str] | None = None,
) -> Path:
    """Rewrite the executed notebook ``nb_path`` in place with :func:`present_cells`; an
    ``artifacts_root`` outside ``root`` (a run into a folder of the user's) is written as
    ``artifacts``. ``moved`` maps folders the run wrote into (its staging folder) to where their
    content now lies, replaced first, so that the page names the final folder. One read and one
    write of the notebook."""
    import nbformat

    path = Path(nb_path)
    extra = {}
    if artifacts_root is not None and not Path(artifacts_root).resolve().is_relative_to(Path(root).resolve()):
        extra[str(Path(artifacts_root).resolve())] = "artifacts"
    text = path.read_text(encoding="utf-8")
    for old, new in (moved or {}).items():
        text = text.replace(old, new)
    presented = present_cells(json.loads(text), root, extra)
    nbformat.write(nbformat.from_dict(presented), path)
    return path


if __name__ == "__main__":
    sys.exit(main())

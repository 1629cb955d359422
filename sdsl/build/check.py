"""The regeneration check: rerun every notebook into a temporary folder and compare the artifacts
with the committed baseline (``baseline/``).

Command line::

    python -m sdsl.build.check                    # regenerate everything, compare, exit 1 on any change
    python -m sdsl.build.check acceptance scaling # only these chapters (the others are not compared)
    python -m sdsl.build.check --accept           # make the regenerated artifacts the baseline, on purpose

Every value is compared by the tolerance policy of its class (:mod:`sdsl.tolerance`: exact,
computed, difference, float32, stochastic, timing), figures by image comparison of their PNGs where
their data are deterministic (diff images in ``build/check/diff``); see :mod:`sdsl.build.compare`.
``--set CHAPTER.PARAMETER=VALUE`` overrides a notebook parameter for this check (the kernel matrix
sets the measure chapter's torch threads so; the value is read as YAML 1.2 reads it: ``1e3`` is a
number, ``no`` a word). A notebook that fails makes the check fail with the
notebook's error (and leaves no artifacts behind). Exit status: 0 when everything matches (or was
accepted), 1 when an artifact is missing, extra or changed, 2 when a notebook failed, the baseline
is damaged (one line naming the file), the command line is wrong or a folder cannot be used (one
line, before anything is touched; a baseline that is a file or, without ``--accept``, missing), or
the disk cannot take the regenerated artifacts (one line naming the disk's error).

Every folder the check writes (``--diff-dir``, ``--keep``, ``--baseline`` with ``--accept``) must be
new, empty or already the tools' own (:func:`sdsl.build.staging.claim`; a baseline is the tools'
when its ``manifest.json`` is): one that holds anything else is refused, and in the baseline only
chapter folders a run made (their ``.provenance.json``) are replaced or removed. A file the tools
did not write in a folder of theirs the check would clear or replace (the diff folder, ``--keep``'s
``artifacts/``, a baseline chapter) is named and refused, never removed. ``--accept`` publishes the
new baseline's chapters and manifest all or none (:mod:`sdsl.build.publish`); what a killed accept
left is mended before the baseline is read.
"""

from __future__ import annotations

import logging
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sdsl import validation as V
from sdsl._owned import (
    OWNED_MARKER,
    WRITTEN,
    OutputError,
    claim,
    clear_owned,
    foreign_files,
    is_owned,
    note_written,
    refuse_foreign,
    write_failure,
)
from sdsl.build.manifest import (
    MANIFEST_NAME,
    PROVENANCE_NAME,
    foreign_artifacts,
    list_files,
    machine_info,
    read_manifest,
    write_manifest,
)
from sdsl.build.publish import is_staging, publish, staging_folder
from sdsl.build.staging import Interrupted, clean_stale, terminate_as_exit
from sdsl.paths import BASELINE, BOOK, BUILD, DATA, EXECUTED, NOTEBOOKS, ROOT

if TYPE_CHECKING:  # the comparison imports pandas: only once a check has run
    from sdsl.build.compare import Report

__all__ = ["CheckResult", "check", "accept", "main", "DIFF_DIR"]

#: Where diff images of changed figures are saved for inspection.
DIFF_DIR = BUILD / "check" / "diff"


@dataclass
class CheckResult:
    """``report`` is ``None`` when a notebook failed (``error`` holds its traceback) or, with
    ``failure="input"``, when the baseline is damaged (``error`` names the file)."""

    report: Report | None
    error: str | None
    accepted: bool
    seconds: float
    failure: str = "notebook"

    @property
    def ok(self) -> bool:
        return self.error is None and (self.accepted or (self.report is not None and self.report.ok))

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return 2
        return 0 if self.ok else 1

    def text(self) -> str:
        if self.error is not None and self.failure == "input":
            return f"CHECK FAILED: {self.error}"
        if self.error is not None:
            return f"CHECK FAILED: a notebook failed, nothing was compared.\n{self.error}"
        assert self.report is not None
        out = self.report.text()
        if self.accepted:
            out += "\nACCEPTED: the regenerated artifacts are now the baseline."
        return out + f"\n({self.seconds:.1f} s)"


def _project_folders(baseline: Path) -> list[tuple[Path, str]]:
    """The folders of the project that no folder the check writes may be, contain or lie in: the
    checkout, its sources and data, the committed baseline, and the other tools' output folders
    (the published artifacts, the executed notebooks, the book, the experiment's work)."""
    folders = [
        (ROOT, "the project's checkout"),
        (ROOT / "sdsl", "the package's sources"),
        (DATA, "the data folder"),
        (NOTEBOOKS, "the notebooks folder"),
        (BOOK, "the book's sources"),
        (BUILD, "the tools' build folder"),
        (BUILD / "artifacts", "the published artifacts"),
        (BUILD / "experiment", "the laptop-scale experiment's work"),
        (EXECUTED, "the executed notebooks"),
        (BASELINE, "the committed baseline"),
    ]
    return [(f, what) for f, what in folders if f != BASELINE or f.resolve() != baseline.resolve()]


def _check_folders(baseline: Path, written: list[tuple[Path, str]], accept: bool) -> None:
    """Refuse, in one line and before anything is touched, a folder the check writes (the diff
    folder, the work folder, the baseline with ``--accept``) that is, holds or lies inside another
    of its folders or a project folder: clearing or replacing it would remove what is not its own.
    A folder may lie inside the build folder (``build/check/diff`` does), not inside the others."""
    roles = [*written, *([] if accept else [(baseline, "baseline folder (--baseline)")])]
    for i, (folder, what) in enumerate(written):
        f = folder.resolve()
        for other, whose in [*roles[:i], *roles[i + 1 :], *_project_folders(baseline)]:
            o = other.resolve()
            inside = f.is_relative_to(o) and o not in (ROOT.resolve(), BUILD.resolve())
            if f == o or o.is_relative_to(f) or inside:
                relation = "is" if f == o else ("holds" if o.is_relative_to(f) else "lies inside")
                raise OutputError(
                    f"{what} {folder} {relation} {whose} ({other}): give a folder of its own; nothing was run or written"
                )


def _baseline_chapters(baseline: Path) -> list[str]:
    return sorted({f.split("/", 1)[0] for f in list_files(baseline)})


def _refuse_foreign_chapter(folder: Path, what: str) -> None:
    """Refuse a chapter folder the check would replace or remove that holds files no run wrote
    (:func:`sdsl.build.manifest.foreign_artifacts`): one line naming them."""
    foreign = foreign_artifacts(folder)
    if foreign:
        shown = ", ".join(repr(f) for f in foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise OutputError(
            f"{what} {folder} holds files no run wrote ({shown}): it would be replaced whole; move them out of it "
            "first; nothing was run or written"
        )


def _accept_refusal(baseline: Path, replaced: list[str]) -> None:
    """Refuse, before anything is written, a baseline folder that is not the tools' (new, empty,
    marked, or holding their manifest), a folder in it to be replaced or removed that no run
    made (no provenance record), or one holding a file no run wrote: one line naming it."""
    owned = baseline.is_dir() and (is_owned(baseline) or read_manifest(baseline) is not None)
    if baseline.is_dir() and not owned and any(baseline.iterdir()):
        claim(baseline, "baseline folder (--baseline)")  # raises, naming what it holds
    for chapter in replaced:
        folder = baseline / chapter
        if folder.exists() and not (folder / PROVENANCE_NAME).is_file() and not is_owned(folder):
            raise OutputError(
                f"baseline folder {folder} was not made by a run (it has no {PROVENANCE_NAME}): move it out of "
                f"the baseline to accept; nothing was run or written"
            )
        _refuse_foreign_chapter(folder, "baseline folder")


def accept(new_root: Path | str, baseline: Path | str = BASELINE, chapters: list[str] | None = None) -> Path:
    """Make the regenerated artifacts ``new_root`` the baseline (only ``chapters`` if given, else
    the whole tree, removing chapters that were not regenerated) with a new manifest, published
    all or none (:mod:`sdsl.build.publish`). Returns the baseline path. Raises
    :class:`~sdsl.build.staging.OutputError` (one line) for a baseline that is not the tools' or
    a chapter folder in it holding a file no run wrote, and for a disk that cannot take it."""
    new_root, baseline = Path(new_root), Path(baseline)
    new_chapters = _baseline_chapters(new_root)
    old_chapters = _baseline_chapters(baseline)
    targets = new_chapters if chapters is None else list(chapters)
    removed = [c for c in old_chapters if c not in new_chapters] if chapters is None else []
    _check_folders(baseline, [(baseline, "baseline folder (--baseline)")], accept=True)
    _accept_refusal(baseline, [*targets, *removed])
    claim(baseline, "baseline folder (--baseline)", owned=True)
    clean_stale(baseline)  # a killed accept's publication is undone first
    try:
        with staging_folder(baseline, "accept") as tmp:
            tree = tmp / "tree"
            tree.mkdir()
            items: list[tuple[Path | None, Path]] = []
            for chapter in sorted({*old_chapters, *targets} - set(removed)):
                source = new_root if chapter in targets else baseline
                if (source / chapter).is_dir():
                    shutil.copytree(source / chapter, tree / chapter)
                    if chapter in targets:
                        items.append((tree / chapter, baseline / chapter))
                elif (baseline / chapter).exists():  # named, but regenerated nothing
                    items.append((None, baseline / chapter))
            items += [(None, baseline / chapter) for chapter in removed]
            write_manifest(tree, machine_info())
            items.append((tree / MANIFEST_NAME, baseline / MANIFEST_NAME))
            publish(items, tmp)
    except OSError as exc:
        raise write_failure(exc, "baseline folder (--baseline)", baseline) from None
    return baseline


def _foreign_in_tree(root: Path) -> list[str]:
    """What an artifacts tree the check made (``--keep``'s ``artifacts/``) holds that no run wrote:
    it is cleared before the check regenerates into it."""
    if not root.is_dir():
        return []
    out: list[str] = []
    for p in sorted(root.iterdir()):
        if p.name in (OWNED_MARKER, WRITTEN, MANIFEST_NAME, f".{MANIFEST_NAME}.tmp") or is_staging(p):
            continue
        if p.is_dir() and not p.is_symlink():
            out += [f"{p.name}/{f}" for f in foreign_artifacts(p)]
        else:
            out.append(p.name)
    return out


def _refuse_foreign_work(work: Path) -> None:
    """Refuse a ``--keep`` folder whose ``artifacts/`` holds files no run wrote: the check clears it."""
    foreign = _foreign_in_tree(work / "artifacts")
    if foreign:
        shown = ", ".join(repr(f) for f in foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise OutputError(
            f"work folder (--keep) {work} holds files these tools did not make in artifacts/ ({shown}): the check "
            "clears that folder; move them out of it or give another folder; nothing was run or written"
        )


def check(
    chapters: list[str] | None = None,
    baseline: Path | str = BASELINE,
    accept_new: bool = False,
    jobs: int = 2,
    workdir: Path | str | None = None,
    diff_dir: Path | str = DIFF_DIR,
    overrides: dict[str, dict] | None = None,
) -> CheckResult:
    """Regenerate (all chapters, or ``chapters``) with ``sdsl.build.pipeline.run(force=True)`` into
    ``workdir`` (default: a temporary folder, removed afterwards) and compare with ``baseline``.

    With ``chapters``, the baseline's artifacts of the other chapters are copied into the
    temporary tree first (with their provenance), so that a chapter reading them (the scorecard)
    can run alone; only the named chapters are compared. ``overrides`` replaces notebook
    parameters (chapter -> parameters). ``accept_new`` copies the regenerated artifacts into the
    baseline after the comparison (never after a failed notebook).

    Raises ``ValueError`` (:class:`OutputError` among them) in one line, before anything runs, for
    a bad argument, a baseline that is not a folder (or, without ``accept_new``, does not exist), a
    folder the check would clear holding files the tools did not write; and for a disk that cannot
    take the regenerated artifacts.
    """
    from sdsl.build.compare import DamagedArtifact, check_readable, check_recorded, compare_trees
    from sdsl.build.pipeline import NotebookError, run

    t0 = time.perf_counter()
    baseline, diff_dir = Path(baseline), Path(diff_dir)
    _check_arguments(chapters, jobs, overrides)  # every name and value, before anything is touched
    folders = [(diff_dir, "diff folder (--diff-dir)")]
    if workdir is not None:
        folders.append((Path(workdir), "work folder (--keep)"))
    _check_folders(
        baseline, [*folders, *([(baseline, "baseline folder (--baseline)")] if accept_new else [])], accept_new
    )
    if baseline.exists() and not baseline.is_dir():
        raise OutputError(f"--baseline {baseline} is a file: give the baseline folder (default {BASELINE})")
    if not baseline.exists() and not accept_new:
        raise OutputError(
            f"--baseline {baseline} does not exist: there is nothing to compare with (make it with --accept); "
            "nothing was run"
        )
    for folder, what in folders:  # every folder, before any is written
        refuse_foreign(folder, what)
    if diff_dir.is_dir() and is_owned(diff_dir) and foreign_files(diff_dir):
        clear_owned(diff_dir, "diff folder (--diff-dir)")  # raises, naming the files the check did not write
    if workdir is not None:
        _refuse_foreign_work(Path(workdir))
    if baseline.is_dir() and is_owned(baseline):
        clean_stale(baseline)  # what a killed --accept left is mended before the baseline is read
    try:  # a damaged baseline is named before minutes of notebooks run
        manifest = read_manifest(baseline)
        check_readable(baseline, list_files(baseline, chapters or None))
        if manifest is not None:
            check_recorded(baseline, manifest, chapters or None)
    except ValueError as exc:
        return CheckResult(None, str(exc), False, time.perf_counter() - t0, failure="input")
    if accept_new:
        _accept_refusal(baseline, chapters or _baseline_chapters(baseline))
    clear_owned(claim(diff_dir, "diff folder (--diff-dir)"), "diff folder (--diff-dir)")
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="sdsl-check-")
        work = Path(tmp.name)
    else:
        work = claim(Path(workdir), "work folder (--keep)")
    try:
        new_root = work / "artifacts"
        executed = work / "executed"
        try:
            if new_root.exists():  # inside the work folder, the check's own (_refuse_foreign_work)
                clean_stale(new_root)
                shutil.rmtree(new_root)
            claim(new_root, "artifacts folder")
            if chapters:
                for chapter in sorted(set(_baseline_chapters(baseline)) - set(chapters)):
                    copied = sorted(
                        p.relative_to(baseline / chapter).as_posix() for p in (baseline / chapter).rglob("*")
                    )
                    note_written(new_root / chapter, copied)  # before copying: a copy cut short is still the check's
                    shutil.copytree(baseline / chapter, new_root / chapter, dirs_exist_ok=True)
        except OSError as exc:
            raise write_failure(exc, "work folder", work) from None
        try:
            run(chapters or None, force=True, jobs=jobs, output_dir=executed, artifacts=new_root, overrides=overrides)
        except NotebookError as exc:
            return CheckResult(None, str(exc), False, time.perf_counter() - t0)
        except OutputError:
            raise  # a folder or a disk: one line, the command's usage status
        except Exception as exc:  # a notebook that cannot even be read (jupytext), a bad runs.yml
            return CheckResult(None, f"{type(exc).__name__}: {exc}", False, time.perf_counter() - t0)
        try:
            report = compare_trees(baseline, new_root, diff_dir, chapters=chapters or None)
        except DamagedArtifact as exc:
            return CheckResult(None, str(exc), False, time.perf_counter() - t0, failure="input")
        except OSError as exc:
            raise write_failure(exc, "diff folder (--diff-dir)", diff_dir) from None
        if not (baseline / MANIFEST_NAME).is_file() and baseline.is_dir():
            report.notes.append(f"the baseline {baseline} has no {MANIFEST_NAME}")
        elif not baseline.is_dir():
            report.notes.append(f"there is no baseline yet at {baseline}: it is made now (--accept)")
        accepted = False
        if accept_new:
            accept(new_root, baseline, chapters or None)
            accepted = True
        return CheckResult(report, None, accepted, time.perf_counter() - t0)
    finally:
        if tmp is not None:
            tmp.cleanup()


def _check_arguments(chapters: list[str] | None, jobs: object, overrides: dict[str, dict] | None) -> None:
    """Refuse an unknown chapter or one named twice, a ``jobs`` that is not an integer >= 1, and an
    override a notebook would not take (unknown chapter or parameter, a value its check refuses),
    by ``ValueError``: one line, before anything runs or is written."""
    from sdsl.build.parameters import check_notebook_parameters, load_runs

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"--jobs (notebooks executed at once) must be an integer >= 1, got {V.show(jobs)}")
    runs = load_runs()
    known = list(runs)
    for i, chapter in enumerate(chapters or []):
        if chapter not in runs:
            raise ValueError(
                f"unknown chapter {chapter!r}; {V.suggestion(str(chapter), known)}chapters of notebooks/runs.yml: {', '.join(known)}"
            )
        if chapter in (chapters or [])[:i]:
            raise ValueError(f"chapter {chapter!r} is named twice: name each chapter once")
    checked = chapters or known
    for chapter, params in (overrides or {}).items():
        if chapter not in checked:
            raise ValueError(
                f"--set names chapter {chapter!r}, which this check does not run; "
                f"{V.suggestion(str(chapter), checked)}it runs: {', '.join(checked)}"
            )
        try:
            check_notebook_parameters(chapter, {**runs[chapter], **params}, notebooks=NOTEBOOKS)
        except ValueError as exc:
            raise ValueError(f"--set: {V.one_line(exc)}") from None


#: A number as a person types it (``1e3``, ``70e9``, ``-.5``): YAML 1.1, which PyYAML reads, takes
#: ``1e3`` for a string (it wants ``1.0e+3``).
_DECIMAL = re.compile(r"[-+]?(\d[\d_]*\.?\d*|\.\d+)([eE][-+]?\d+)?")
#: The only words read as booleans (YAML 1.2); YAML 1.1 also reads yes, no, on, off, y and n.
_BOOLEANS = {"true": True, "false": False}


def _scalar(text: str) -> object:
    """A ``--set`` value as YAML 1.2 reads it: ``1e3`` is the number 1000 (an integer where it is one,
    so that an integer parameter takes it), ``no`` the string 'no' (only true and false are booleans);
    anything else as PyYAML reads it."""
    import yaml

    word = text.strip()
    if _DECIMAL.fullmatch(word):
        x = float(word.replace("_", ""))
        integral = "." not in word and x.is_integer() and abs(x) <= 2**53
        return int(x) if integral else x
    parsed = yaml.safe_load(text)
    if isinstance(parsed, bool) and word.lower() not in _BOOLEANS:
        return word
    return parsed


def parse_overrides(items: list[str]) -> dict[str, dict]:
    """``["measure_acceptance.threads=2"]`` -> ``{"measure_acceptance": {"threads": 2}}`` (values
    read as YAML 1.2 scalars: ``1e3`` is a number, ``no`` a string). Raises ``ValueError`` naming a
    malformed item."""
    import yaml

    out: dict[str, dict] = {}
    for item in items:
        key, eq, value = item.partition("=")
        chapter, dot, name = key.partition(".")
        example = "expected CHAPTER.PARAMETER=VALUE, e.g. measure_acceptance.threads=2"
        if not eq:
            raise ValueError(f"--set {item!r} has no '=': {example}")
        if not (dot and chapter and name):
            raise ValueError(f"--set {item!r} does not name CHAPTER.PARAMETER before '=': {example}")
        try:
            parsed = _scalar(value)
        except yaml.YAMLError as exc:
            raise ValueError(f"--set {item!r}: the value is not a YAML scalar ({' '.join(str(exc).split())})") from None
        if name in out.get(chapter, {}):
            raise ValueError(f"--set {key} is given twice")
        out.setdefault(chapter, {})[name] = parsed
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m sdsl.build.check``: see the module notes for the exit statuses; SIGTERM or SIGINT
    at any instant is one line and 128 + the signal's number."""
    with terminate_as_exit():  # from the start: a SIGTERM while the command starts is one line too
        parser = V.CommandParser(
            prog="python -m sdsl.build.check",
            description="Regenerate every table and figure into a temporary folder and compare them "
            "with the committed baseline by the tolerance policy; exit 1 when one changed, 2 when a "
            "notebook failed, the baseline is damaged or the command line is wrong.",
        )
        try:
            return _main(parser, argv)
        except (Interrupted, KeyboardInterrupt) as exc:
            logging.disable(logging.CRITICAL)  # the process ends here: its one line is all it says
            stop = exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)
            print(stop.line(parser.prog), file=sys.stderr)
            return stop.status


def _main(parser: V.CommandParser, argv: list[str] | None) -> int:
    parser.add_argument("chapters", nargs="*", help="chapters to check (default: all in notebooks/runs.yml)")
    parser.add_argument(
        "--accept", action="store_true", help="make the regenerated artifacts the baseline (on purpose)"
    )
    parser.add_argument("--baseline", type=Path, default=BASELINE, help=f"baseline folder (default {BASELINE})")
    parser.add_argument(
        "--jobs",
        type=V.argument_type(V.integer, "--jobs", low=1, what="notebooks executed at once"),
        default=2,
        help="notebooks executed at once (default 2)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="regenerate into this new or empty folder and keep it (default: a temporary folder)",
    )
    parser.add_argument(
        "--diff-dir", type=Path, default=DIFF_DIR, help=f"diff images, a new or empty folder (default {DIFF_DIR})"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="CHAPTER.PARAMETER=VALUE",
        help="override a notebook parameter for this check (repeatable)",
    )
    try:
        args = parser.parse_args(argv)
    except Interrupted:
        raise
    except SystemExit as exc:  # a usage error (one line) or --help
        return exc.code if isinstance(exc.code, int) else V.EXIT_USAGE
    try:
        overrides = parse_overrides(args.overrides)
        result = check(
            args.chapters or None, args.baseline, args.accept, args.jobs, args.keep, args.diff_dir, overrides or None
        )
    except ValueError as exc:  # a usage error, a folder or a disk: nothing was published
        print(f"{parser.prog}: error: {V.one_line(exc)}", file=sys.stderr)
        return V.EXIT_USAGE
    print(result.text(), file=sys.stdout if result.ok else sys.stderr)
    _record(result, args.chapters)
    return result.exit_code


def _record(result: CheckResult, chapters: list[str]) -> None:
    """Record the result for the book's status page (:func:`sdsl.build.status.check_lines`)."""
    import json

    from sdsl.build.status import CHECK_RECORD, commit_info

    rep = result.report
    if rep is None:
        summary = result.error if result.error is not None and result.failure == "input" else "a notebook failed"
    else:
        changed = f"{len(rep.affected())} changed: {', '.join(rep.affected())}"
        summary = f"{rep.compared} artifacts compared, " + ("all match the baseline" if rep.ok else changed)
    path = BUILD.joinpath(*CHECK_RECORD)
    text = (
        json.dumps(
            {
                "chapters": chapters,
                "ok": bool(rep is not None and rep.ok),
                "accepted": result.accepted,
                "exit_code": result.exit_code,
                "summary": summary,
                "commit": commit_info().replace("`", ""),
            },
            indent=1,
        )
        + "\n"
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError:  # a full or read-only disk: the result was printed; the status page keeps the last
        pass


if __name__ == "__main__":
    sys.exit(main())

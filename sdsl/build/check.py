"""The regeneration check: rerun every notebook into a temporary folder and compare the artifacts
with the committed baseline (``baseline/``).

Command line::

    python -m sdsl.build.check                    # regenerate everything, compare, exit 1 on any change
    python -m sdsl.build.check acceptance scaling # only these chapters (the others are not compared)
    python -m sdsl.build.check --accept           # make the regenerated artifacts the baseline, on purpose

Every value is compared by the tolerance policy of its class (:mod:`sdsl.build.policy`: exact,
computed, difference, float32, stochastic, timing), figures by image comparison of their PNGs where
their data are deterministic (diff images in ``build/check/diff``); see :mod:`sdsl.build.compare`.
``--set CHAPTER.PARAMETER=VALUE`` overrides a notebook parameter for this check (the kernel matrix
sets the measure chapter's torch threads so). A notebook that fails makes the check fail with the
notebook's error (and leaves no artifacts behind). Exit status: 0 when everything matches (or was
accepted), 1 when an artifact is missing, extra or changed, 2 when a notebook failed or the
command line is wrong.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from sdsl.build.compare import Report, compare_trees
from sdsl.build.manifest import MANIFEST_NAME, list_files, machine_info, write_manifest
from sdsl.paths import BASELINE, BUILD

__all__ = ["CheckResult", "check", "accept", "main", "DIFF_DIR"]

#: Where diff images of changed figures are saved for inspection.
DIFF_DIR = BUILD / "check" / "diff"


@dataclass
class CheckResult:
    """``report`` is ``None`` when a notebook failed (``error`` holds its traceback)."""

    report: Report | None
    error: str | None
    accepted: bool
    seconds: float

    @property
    def ok(self) -> bool:
        return self.error is None and (self.accepted or (self.report is not None and self.report.ok))

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return 2
        return 0 if self.ok else 1

    def text(self) -> str:
        if self.error is not None:
            return f"CHECK FAILED: a notebook failed, nothing was compared.\n{self.error}"
        assert self.report is not None
        out = self.report.text()
        if self.accepted:
            out += "\nACCEPTED: the regenerated artifacts are now the baseline."
        return out + f"\n({self.seconds:.1f} s)"


def accept(new_root: Path | str, baseline: Path | str = BASELINE, chapters: list[str] | None = None) -> Path:
    """Copy the regenerated artifacts ``new_root`` into ``baseline`` (only ``chapters`` if given,
    else the whole tree, removing chapters that were not regenerated) and rewrite the baseline's
    manifest. Returns the baseline path."""
    new_root, baseline = Path(new_root), Path(baseline)
    baseline.mkdir(parents=True, exist_ok=True)
    new_chapters = sorted({f.split("/", 1)[0] for f in list_files(new_root)})
    if chapters is None:
        for old in sorted({f.split("/", 1)[0] for f in list_files(baseline)}):
            shutil.rmtree(baseline / old)
        targets = new_chapters
    else:
        targets = list(chapters)
    for chapter in targets:
        dest = baseline / chapter
        if dest.exists():
            shutil.rmtree(dest)
        if (new_root / chapter).is_dir():
            shutil.copytree(new_root / chapter, dest)
    write_manifest(baseline, machine_info())
    return baseline


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
    """
    from sdsl.build.pipeline import NotebookError, OutputError, run

    t0 = time.perf_counter()
    baseline = Path(baseline)
    diff_dir = Path(diff_dir)
    if diff_dir.exists():
        shutil.rmtree(diff_dir)
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="sdsl-check-")
        work = Path(tmp.name)
    else:
        work = Path(workdir)
        work.mkdir(parents=True, exist_ok=True)
    try:
        new_root = work / "artifacts"
        executed = work / "executed"
        if new_root.exists():
            shutil.rmtree(new_root)
        new_root.mkdir(parents=True)
        if chapters:
            for chapter in sorted({f.split("/", 1)[0] for f in list_files(baseline)} - set(chapters)):
                shutil.copytree(baseline / chapter, new_root / chapter)
        try:
            run(chapters or None, force=True, jobs=jobs, output_dir=executed, artifacts=new_root, overrides=overrides)
        except (NotebookError, OutputError) as exc:
            return CheckResult(None, str(exc), False, time.perf_counter() - t0)
        except Exception as exc:  # a notebook that cannot even be read (jupytext), a bad runs.yml
            return CheckResult(None, f"{type(exc).__name__}: {exc}", False, time.perf_counter() - t0)
        report = compare_trees(baseline, new_root, diff_dir, chapters=chapters or None)
        if not baseline.is_dir():
            report.notes.append(f"there is no baseline yet at {baseline}: create it with --accept")
        elif not (baseline / MANIFEST_NAME).is_file():
            report.notes.append(f"the baseline {baseline} has no {MANIFEST_NAME}")
        accepted = False
        if accept_new:
            accept(new_root, baseline, chapters or None)
            accepted = True
        return CheckResult(report, None, accepted, time.perf_counter() - t0)
    finally:
        if tmp is not None:
            tmp.cleanup()


def parse_overrides(items: list[str]) -> dict[str, dict]:
    """``["measure_acceptance.threads=2"]`` -> ``{"measure_acceptance": {"threads": 2}}`` (values
    read as YAML scalars). Raises ``ValueError`` naming a malformed item."""
    out: dict[str, dict] = {}
    for item in items:
        key, eq, value = item.partition("=")
        chapter, dot, name = key.partition(".")
        if not (eq and dot and chapter and name):
            raise ValueError(f"--set {item!r}: expected CHAPTER.PARAMETER=VALUE, e.g. measure_acceptance.threads=2")
        out.setdefault(chapter, {})[name] = yaml.safe_load(value)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sdsl.build.check",
        description="Regenerate every table and figure into a temporary folder and compare them "
        "with the committed baseline by the tolerance policy; exit 1 when one changed, 2 when a "
        "notebook failed.",
    )
    parser.add_argument("chapters", nargs="*", help="chapters to check (default: all in notebooks/runs.yml)")
    parser.add_argument(
        "--accept", action="store_true", help="make the regenerated artifacts the baseline (on purpose)"
    )
    parser.add_argument("--baseline", type=Path, default=BASELINE, help=f"baseline tree (default {BASELINE})")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once (default 2)")
    parser.add_argument(
        "--keep", type=Path, default=None, help="regenerate into this folder and keep it (default: a temporary folder)"
    )
    parser.add_argument("--diff-dir", type=Path, default=DIFF_DIR, help=f"diff images (default {DIFF_DIR})")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="CHAPTER.PARAMETER=VALUE",
        help="override a notebook parameter for this check (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be an integer >= 1, got {args.jobs}")
    try:
        overrides = parse_overrides(args.overrides)
    except ValueError as exc:
        parser.error(str(exc))
    from sdsl import _validate as V
    from sdsl.build.runs import load_runs

    known = list(load_runs())
    unknown = [c for c in args.chapters if c not in known]
    if unknown:  # nothing is run for a misspelt chapter: one line, not "a notebook failed"
        print(
            f"{parser.prog}: error: unknown chapter {unknown[0]!r}; {V.suggestion(unknown[0], known)}chapters of "
            f"notebooks/runs.yml: {', '.join(known)}",
            file=sys.stderr,
        )
        return 2
    result = check(
        args.chapters or None, args.baseline, args.accept, args.jobs, args.keep, args.diff_dir, overrides or None
    )
    print(result.text(), file=sys.stdout if result.ok else sys.stderr)
    _record(result, args.chapters)
    return result.exit_code


def _record(result: CheckResult, chapters: list[str]) -> None:
    """Record the result for the book's status page (:func:`sdsl.build.status.check_lines`)."""
    import json

    from sdsl.build.status import CHECK_RECORD, commit_info

    rep = result.report
    summary = (
        "a notebook failed"
        if result.error is not None
        else f"{rep.compared} artifacts compared, "
        + ("all match the baseline" if rep.ok else f"{len(rep.affected())} changed: {', '.join(rep.affected())}")
    )
    path = BUILD.joinpath(*CHECK_RECORD)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
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
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    sys.exit(main())

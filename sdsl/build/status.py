"""The executed notebooks' record and the book's build status page.

:func:`executed_info` reads what papermill recorded in an executed notebook (parameters, duration,
times); :func:`write_status` writes ``status.md`` beside the executed notebooks, a page of the book
listing each notebook's execution time and parameters, the commit, the package versions and the
machine of the build, and the result of the last regeneration check.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sdsl.build.parameters import PATH_PARAMETERS as _PATH_PARAMETERS

__all__ = [
    "STATUS_NAME",
    "CHECK_RECORD",
    "executed_info",
    "last_duration",
    "status_table",
    "commit_info",
    "environment_lines",
    "check_lines",
    "write_status",
]

#: The status page written next to the executed notebooks.
STATUS_NAME = "status.md"
#: Where ``python -m sdsl.build.check`` records its last result (under ``build/``).
CHECK_RECORD = ("check", "last.json")


def executed_info(executed: Path | str) -> dict[str, Any]:
    """What papermill recorded in an executed notebook: ``parameters`` (without the paths of the
    run), ``duration`` (seconds), ``start_time``, ``end_time`` and ``exception`` (bool)."""
    nb = json.loads(Path(executed).read_text(encoding="utf-8"))
    pm = nb.get("metadata", {}).get("papermill", {}) or {}
    params = {k: v for k, v in (pm.get("parameters") or {}).items() if k not in _PATH_PARAMETERS}
    return {
        "parameters": params,
        "duration": pm.get("duration"),
        "start_time": pm.get("start_time"),
        "end_time": pm.get("end_time"),
        "exception": bool(pm.get("exception")),
    }


def last_duration(executed: Path | str) -> float:
    """Seconds papermill recorded for an executed notebook; ``inf`` when unknown (never run yet),
    so that unknown notebooks are scheduled first."""
    try:
        duration = executed_info(executed)["duration"]
    except (OSError, ValueError):
        return math.inf
    return float(duration) if duration is not None else math.inf


def status_table(executed_dir: Path | str, chapters: Iterable[str]) -> list[dict[str, Any]]:
    """Per chapter, in the order given, a row of what papermill recorded in its executed notebook:
    ``chapter``, ``seconds`` (NaN when it never ran), ``finished`` (UTC) and ``parameters``
    (``defaults`` when the run used the notebook's own). Plain rows, not a data frame: the build
    that finds nothing to do does not import pandas."""
    rows = []
    for chapter in chapters:
        path = Path(executed_dir) / f"{chapter}.ipynb"
        if not path.is_file():
            rows.append({"chapter": chapter, "seconds": math.nan, "finished": "not executed", "parameters": ""})
            continue
        info = executed_info(path)
        params = info["parameters"]
        rows.append(
            {
                "chapter": chapter,
                "seconds": float(info["duration"]) if info["duration"] is not None else math.nan,
                "finished": (info["end_time"] or "")[:19].replace("T", " "),
                "parameters": ", ".join(f"{k}={v!r}" for k, v in sorted(params.items())) or "defaults",
            }
        )
    return rows


def commit_info(root: Path | str | None = None) -> str:
    """The git commit of the checkout (``abc1234``, with ``plus uncommitted changes`` when the work
    tree differs from it), or ``not a git checkout``."""
    import subprocess

    from sdsl.paths import ROOT

    cwd = Path(root) if root is not None else ROOT
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=20, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"
    return f"`{head}`" + (" plus uncommitted changes" if dirty else "")


def environment_lines(manifest: dict[str, Any] | None) -> list[str]:
    """Markdown lines for the package versions and the machine (CPU, cores, BLAS library and kernel,
    numpy's vector extensions, torch's CPU capability, kernel-selecting environment) recorded in the
    artifacts' manifest (:func:`sdsl.build.manifest.read_manifest`)."""
    if not manifest:
        return ["No manifest of the artifacts tree was found: run `python -m sdsl.build.pipeline run`."]
    m = manifest.get("machine", {}) or {}
    blas = (
        "; ".join(
            f"{b.get('internal_api')} {b.get('version')}, kernel {b.get('architecture')}, "
            f"{b.get('num_threads')} threads"
            for b in m.get("blas") or []
        )
        or "none found"
    )
    env = ", ".join(f"`{k}={v}`" for k, v in (m.get("environment") or {}).items()) or "none set"
    lines = [
        "| | |",
        "|:--|:--|",
        f"| CPU | {m.get('cpu', '?')}, {m.get('cores', '?')} cores, flags {', '.join(m.get('cpu_flags') or []) or 'none'} |",
        f"| BLAS | {blas} |",
        f"| numpy vector extensions | {', '.join(m.get('numpy_simd') or []) or 'none'} |",
        f"| torch CPU capability | {m.get('torch_cpu_capability') or 'not recorded'} |",
        f"| kernel environment | {env} |",
        f"| platform | {m.get('platform', '?')} |",
        "",
        "| package | version |",
        "|:--|:--|",
    ]
    lines += [f"| {k} | {v} |" for k, v in sorted((manifest.get("packages") or {}).items())]
    return lines


def _commit(text: str) -> str:
    """``abc123 plus uncommitted changes`` with the hash as code (records written before the fix
    may hold stray backticks)."""
    head, _, rest = text.replace("`", "").partition(" ")
    return f"`{head}`" + (f" {rest}" if rest else "")


def check_lines(record_path: Path | str) -> list[str]:
    """Markdown lines for the last regeneration check recorded at ``record_path`` (written by
    ``python -m sdsl.build.check``), and for the kernel matrix in ``matrix.json`` beside it."""
    record_path = Path(record_path)
    lines = []
    if record_path.is_file():
        r = json.loads(record_path.read_text(encoding="utf-8"))
        verdict = "passed" if r.get("ok") else ("accepted as the new baseline" if r.get("accepted") else "failed")
        lines.append(
            f"The last regeneration check (`python -m sdsl.build.check {' '.join(r.get('chapters') or [])}`"
            f"{', commit ' + _commit(r['commit']) if r.get('commit') else ''}) {verdict}"
            f"{': ' + r['summary'] if r.get('summary') else ''}."
        )
    matrix = record_path.with_name("matrix.json")
    if matrix.is_file():
        combos = json.loads(matrix.read_text(encoding="utf-8"))
        lines += [
            "",
            "The check under the CPU kernels of `python -m sdsl.build.matrix`:",
            "",
            "| kernel | status |",
            "|:--|:--|",
        ]
        lines += [f"| {c.get('name', '?')} | {c.get('status', '?')} |" for c in combos]
    return lines or [
        "The regeneration check is a command of its own (`python -m sdsl.build.check`, which CI runs on "
        "every change with the CPU-kernel matrix `python -m sdsl.build.matrix`); this build did not run "
        "it, so this page lists the notebooks' executions and no comparison with the committed baseline."
    ]


def write_status(
    executed_dir: Path | str,
    chapters: Iterable[str],
    artifacts: Path | str | None = None,
    check_record: Path | str | None = None,
) -> Path:
    """Write ``executed_dir/status.md``: a page of the book listing each notebook's execution time
    (papermill's ``duration``), when it finished and its parameters; the commit of the checkout; the
    package versions and the machine from the manifest of ``artifacts`` (default: the artifacts
    tree); and the last regeneration check (``check_record``, default ``build/check/last.json``).
    Rewritten only when its content changes (a rebuild with nothing executed leaves it untouched)."""
    from sdsl.build.manifest import MANIFEST_NAME
    from sdsl.paths import BUILD, artifacts_root

    executed_dir = Path(executed_dir)
    table = status_table(executed_dir, list(chapters))
    total = math.fsum(r["seconds"] for r in table if not math.isnan(r["seconds"]))
    lines = [
        "# Build status",
        "",
        "How long each notebook took when it was last executed by papermill "
        "(`python -m sdsl.build.pipeline run`), and the parameters of that run (from "
        "`notebooks/runs.yml`; *defaults* means the notebook's own, which reproduce the paper). "
        "A notebook whose inputs did not change is not executed again, so its time is that of "
        "its last execution.",
        "",
        "| chapter | seconds | finished (UTC) | parameters |",
        "|:--|--:|:--|:--|",
    ]
    for r in table:
        secs = "" if math.isnan(r["seconds"]) else f"{r['seconds']:.1f}"
        params = str(r["parameters"]).replace("|", "\\|")
        chapter = r["chapter"]
        link = f"{{doc}}`{chapter}`" if (executed_dir / f"{chapter}.ipynb").is_file() else chapter
        lines.append(f"| {link} | {secs} | {r['finished']} | {params} |")
    lines += ["", f"Total execution time of the last runs: {total:.1f} s.", ""]
    manifest_path = Path(artifacts if artifacts is not None else artifacts_root()) / MANIFEST_NAME
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else None
    lines += [
        "## Source",
        "",
        f"Commit of the checkout that built this book: {commit_info()}.",
        "",
        "## Environment and machine",
        "",
        "From the manifest of the artifacts (`build/artifacts/manifest.json`), written by the last run.",
        "",
        *environment_lines(manifest),
        "",
        "## Regeneration check",
        "",
        *check_lines(Path(check_record) if check_record is not None else BUILD.joinpath(*CHECK_RECORD)),
        "",
    ]
    text = "\n".join(lines)
    path = executed_dir / STATUS_NAME
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path

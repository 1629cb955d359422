"""The executed notebooks' record and the book's build status page.

:func:`executed_info` reads what papermill recorded in an executed notebook (parameters, duration,
times); :func:`write_status` writes ``status.md`` beside the executed notebooks, a page of the book
listing each notebook's execution time and parameters, the commit, the package versions and the
machine of the build, and the result of the last regeneration check.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from sdsl.build.runs import PATH_PARAMETERS as _PATH_PARAMETERS

__all__ = ["STATUS_NAME", "executed_info", "last_duration", "status_table", "write_status"]

#: The status page written next to the executed notebooks.
STATUS_NAME = "status.md"


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


def status_table(executed_dir: Path | str, chapters: Iterable[str]) -> pd.DataFrame:
    """Per chapter, what papermill recorded in its executed notebook: ``chapter``, ``seconds``,
    ``finished`` (UTC) and ``parameters`` (``defaults`` when the run used the notebook's own)."""
    rows = []
    for chapter in chapters:
        path = Path(executed_dir) / f"{chapter}.ipynb"
        if not path.is_file():
            rows.append({"chapter": chapter, "seconds": math.nan, "finished": "not executed", "parameters": ""})
            continue
        info = executed_info(path)
        params = info["parameters"]
        rows.append({
            "chapter": chapter,
            "seconds": float(info["duration"]) if info["duration"] is not None else math.nan,
            "finished": (info["end_time"] or "")[:19].replace("T", " "),
            "parameters": ", ".join(f"{k}={v!r}" for k, v in sorted(params.items())) or "defaults",
        })
    return pd.DataFrame(rows, columns=["chapter", "seconds", "finished", "parameters"])


def write_status(executed_dir: Path | str, chapters: Iterable[str]) -> Path:
    """Write ``executed_dir/status.md``: a page of the book listing each notebook's execution time
    (papermill's ``duration``), when it finished and its parameters. Rewritten only when its
    content changes (a rebuild with nothing executed leaves it untouched)."""
    executed_dir = Path(executed_dir)
    table = status_table(executed_dir, list(chapters))
    total = float(np.nansum(table["seconds"].to_numpy(dtype=float)))
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
    for r in table.itertuples(index=False):
        secs = "" if math.isnan(r.seconds) else f"{r.seconds:.1f}"
        params = str(r.parameters).replace("|", "\\|")
        link = f"{{doc}}`{r.chapter}`" if (executed_dir / f"{r.chapter}.ipynb").is_file() else r.chapter
        lines.append(f"| {link} | {secs} | {r.finished} | {params} |")
    lines += ["", f"Total execution time of the last runs: {total:.1f} s.", ""]
    text = "\n".join(lines)
    path = executed_dir / STATUS_NAME
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path

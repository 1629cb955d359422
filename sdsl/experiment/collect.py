"""The raw results of a run of the experiment, assembled from its work folder
(:mod:`sdsl.experiment.runner`): the tables of every finished task (:mod:`sdsl.experiment.results`),
the tokenizer and ``provenance.yml`` (command, commit, machine, versions, sessions and their
durations, task times, seeds, settings, corpus sources), written into ``out/results``; and
:func:`pair_key`, the name of a pair's files in the work folder."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import yaml

from sdsl._machine import cpu_model
from sdsl.experiment import results as _results
from sdsl.experiment.tasks import atomic_write_text
from sdsl.paths import ROOT

if TYPE_CHECKING:
    from sdsl.experiment.runner import Experiment

__all__ = ["pair_key", "collect", "write_provenance"]


def pair_key(draft: str, target: str, temperature: float | None = None) -> str:
    """The name of a pair's files and tasks: ``<draft>__<target>``, with ``__t<temperature>`` for alpha."""
    key = f"{draft}__{target}"
    return key if temperature is None else f"{key}__t{temperature:g}"


def collect(exp: Experiment) -> Path:
    """Assemble the raw results of every finished task of ``exp`` into ``exp.out/results``; returns it."""
    folder = exp.out / "results"
    folder.mkdir(parents=True, exist_ok=True)
    s = exp.scale
    targets = {t.run_id for t in s.targets()}
    runs: list[dict[str, Any]] = []
    curves: list[dict[str, Any]] = []
    for r in s.runs():
        rec = json.loads((exp.out / "train" / f"{r.run_id}.json").read_text())
        runs.append({**rec["metrics"], "role": "target" if r.run_id in targets else "draft"})
        curves.extend({"run": r.run_id, **c} for c in rec["curve"])
    pairs, counts, prompts = [], [], []
    for d, t in s.pairs():
        for temp in s.measurement.temperatures:
            rec = json.loads((exp.out / "alpha" / f"{pair_key(d.run_id, t.run_id, temp)}.json").read_text())
            key = {"draft": d.run_id, "target": t.run_id, "temperature": float(temp)}
            pairs.append(rec["pair"])
            counts.append(pd.DataFrame(rec["counts"]).assign(**key))
            prompts.append(pd.DataFrame(rec["prompts"]).assign(**key))
    wall = [
        json.loads((exp.out / "wallclock" / f"{pair_key(d.run_id, t.run_id)}.json").read_text()) for d, t in s.pairs()
    ]
    timings = [
        {"cpu_seconds": float("nan"), **json.loads(p.read_text())} for p in sorted((exp.out / "done").glob("*.json"))
    ]
    tables = {
        "runs": pd.DataFrame(runs),
        "curves": pd.DataFrame(curves),
        "alpha_pairs": pd.DataFrame(pairs),
        "alpha_counts": pd.concat(counts, ignore_index=True),
        "alpha_prompts": pd.concat(prompts, ignore_index=True),
        "wallclock": pd.DataFrame(wall),
        "timings": pd.DataFrame(timings),
    }
    _results.write_results(tables, folder)
    atomic_write_text(folder / "tokenizer.json", (exp.out / "corpus" / "tokenizer.json").read_text())
    write_provenance(exp, folder, pd.DataFrame(timings))
    return folder


def write_provenance(exp: Experiment, folder: Path, timings: pd.DataFrame) -> None:
    """Write ``folder/provenance.yml``: command, commit, machine, versions, sessions, task times
    (``timings``, one row per finished task), seeds, settings and corpus of ``exp``'s run."""
    import tokenizers
    import torch
    import transformers

    state = json.loads((exp.out / "state.json").read_text())
    sources = json.loads((exp.out / "corpus" / "sources.json").read_text())
    sessions = [
        {**x, "end": x.get("end") or x.get("last_task_end") or _last_marker(exp.out, i)}
        for i, x in enumerate(state["sessions"])
    ]
    duration = sum(x["end"] - x["start"] for x in sessions if x.get("end"))
    prov = {
        "title": f"Laptop-scale experiment, scale {exp.scale.name}: raw results",
        "command": sessions[0]["command"],
        "resumed_with": [x["command"] for x in sessions[1:]],
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_changes": bool(_git("status", "--porcelain")),
        "machine": {
            "cpu": cpu_model(),
            "logical_cpus": os.cpu_count(),
            "torch_threads_training": exp.threads,
            "torch_threads_decoding": exp.decode_threads,
            "device": exp.device,
            "accelerator": _accelerator(exp.device),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "versions": {
            "torch": str(torch.__version__),
            "transformers": str(transformers.__version__),
            "tokenizers": str(tokenizers.__version__),
            "numpy": str(np.__version__),
        },
        "started": _iso(sessions[0]["start"]),
        "finished": _iso(max(x.get("end") or 0 for x in sessions)),
        "duration_s": round(duration, 1),
        "sessions": len(sessions),
        "session_durations_s": [round(x["end"] - x["start"], 1) for x in sessions if x.get("end")],
        "session_ends": ["recorded" if x.get("end") else "killed: last finished task" for x in state["sessions"]],
        "load_average_1min_mean": [
            round(float(np.mean(x["load_average_1min"])), 2) if x.get("load_average_1min") else None for x in sessions
        ],
        "task_seconds": {k: round(float(v), 1) for k, v in timings.groupby("kind")["seconds"].sum().items()},
        "task_cpu_seconds": {k: round(float(v), 1) for k, v in timings.groupby("kind")["cpu_seconds"].sum().items()},
        "seed": exp.scale.seed,
        "seeds": "every seed derives from 'seed' and the task's name (sdsl.experiment.pairs.seed_for)",
        "scale": json.loads(json.dumps(exp.scale.as_dict())),
        "settings_digest": exp.scale.digest(),
        "corpus": sources,
        "checkpoints": "not committed (build/experiment/<scale>/models; python -m sdsl.experiment run rebuilds them)",
    }
    with open(folder / "provenance.yml", "w", encoding="utf-8") as fh:
        fh.write("# Provenance of the raw results in this folder, written by sdsl.experiment.runner.\n")
        yaml.safe_dump(prov, fh, sort_keys=False, allow_unicode=True, width=100)


def _last_marker(out: Path, session: int) -> float | None:
    """When the last task of ``session`` finished (a session killed before it could record its
    end ends there, as far as its results go)."""
    times = [
        p.stat().st_mtime for p in (out / "done").glob("*.json") if json.loads(p.read_text()).get("session") == session
    ]
    return max(times) if times else None


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _accelerator(device: str) -> str:
    """The name of a CUDA ``device`` (``torch.cuda.get_device_name``), else ``"none"``."""
    if not str(device).startswith("cuda"):
        return "none"
    import torch

    return str(torch.cuda.get_device_name(torch.device(device)))


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="seconds")

"""The raw results of a run of the experiment, assembled from its work folder
(:mod:`sdsl.experiment.runner`): the tables of every finished task (:mod:`sdsl.experiment.results`),
the committed prediction beside the empirical optimum on the test grid, the prediction against its
baselines (:mod:`sdsl.experiment.baselines`), the tokenizer and ``provenance.yml`` (command,
commit, machine, versions, sessions and their durations, task times, CPU minutes per phase, the
prediction's sha256 and time, the design's checks, where the tasks ran, seeds, settings, corpus
sources), written into ``out/results``; and :func:`pair_key`, the name of a pair's files in the
work folder."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import yaml

from sdsl import data as _data
from sdsl._machine import cpu_model
from sdsl.experiment import results as _results
from sdsl.experiment.config import PHASES
from sdsl.experiment.results import atomic_write_text
from sdsl.paths import ROOT

#: The phases that come after the committed prediction.
TEST_PHASES = PHASES[PHASES.index("test training") :]


class Experiment(Protocol):
    """What collecting reads of a run (:class:`sdsl.experiment.runner.Experiment` is one): its
    scale, output folder, device and threads, and the records of its finished tasks. A protocol,
    so that the runner, which calls :func:`collect`, is not imported back."""

    scale: Any
    out: Path
    device: str
    threads: int
    decode_threads: int

    def prediction_path(self) -> Path: ...

    def extension_path(self) -> Path: ...

    def replicates_path(self) -> Path: ...

    def train_record(self, run: Any) -> dict: ...

    def alpha_record(self, draft: Any, target: Any) -> dict: ...

    def test_runs(self) -> list: ...


__all__ = ["pair_key", "collect", "write_provenance"]


def pair_key(draft: str, target: str, temperature: float | None = None) -> str:
    """The name of a pair's files and tasks: ``<draft>__<target>``, with ``__t<temperature>`` for alpha."""
    key = f"{draft}__{target}"
    return key if temperature is None else f"{key}__t{temperature:g}"


def _done(out: Path) -> pd.DataFrame:
    """One row per finished task (its marker in ``out/done``), times in UTC."""
    rows = []
    for p in sorted((out / "done").glob("*.json")):
        rec = json.loads(p.read_text())
        rows.append(
            {
                "task": rec["task"],
                "kind": rec["kind"],
                "seconds": rec["seconds"],
                "cpu_seconds": rec.get("cpu_seconds", float("nan")),
                "session": rec["session"],
                "phase": rec.get("phase", ""),
                "start_utc": _iso(rec["start"]) if "start" in rec else "",
                "end_utc": _iso(rec["end"]) if "end" in rec else "",
                "node": rec.get("node", ""),
            }
        )
    return pd.DataFrame(rows)


def collect(exp: Experiment) -> Path:
    """Assemble the raw results of every finished task of ``exp`` into ``exp.out/results``, with
    the empirical optimum on the test grid beside the committed prediction
    (:func:`sdsl.experiment.predict.empirical`); returns the folder."""
    from sdsl.experiment.pairs import seed_for
    from sdsl.experiment.predict import COUNTS, empirical

    folder = exp.out / "results"
    folder.mkdir(parents=True, exist_ok=True)
    s = exp.scale
    tests = exp.test_runs()
    runs: list[dict[str, Any]] = []
    curves: list[dict[str, Any]] = []
    for r in s.runs() + tests:
        rec = exp.train_record(r)
        runs.append({**rec["metrics"], "role": s.role(r), "replicate": r.replicate})
        curves.extend({"run": r.run_id, **c} for c in rec["curve"])
    all_pairs = s.calibration_pairs() + s.test_pairs(tests)
    pairs, counts, prompts, alphas = [], [], [], []
    for d, t in all_pairs:
        for temp in s.measurement.temperatures:
            rec = json.loads((exp.out / "alpha" / f"{pair_key(d.run_id, t.run_id, temp)}.json").read_text())
            key = {"draft": d.run_id, "target": t.run_id, "temperature": float(temp)}
            pairs.append(rec["pair"])
            counts.append(pd.DataFrame(rec["counts"]).assign(**key))
            prompts.append(pd.DataFrame(rec["prompts"]).assign(**key))
        alphas.append(exp.alpha_record(d, t)["pair_alpha"])
    wall, rounds = [], []
    for d, t in s.test_pairs(tests):
        rec = json.loads((exp.out / "wallclock" / f"{pair_key(d.run_id, t.run_id)}.json").read_text())
        for i, (ts, ss) in enumerate(zip(rec.pop("round_target_s"), rec.pop("round_spec_s"))):
            rounds.append({"draft": d.run_id, "target": t.run_id, "round": i, "target_s": ts, "spec_s": ss})
        wall.append(rec)
    timings = _done(exp.out)
    runs_df = pd.DataFrame(runs)
    pred = exp.out / "prediction"
    committed = _data.load(pred / "prediction_committed.csv")
    draws = _data.load(pred / "prediction_draws.csv")
    test_ids = {r.run_id for r in tests}
    test_alpha = pd.DataFrame([a for a in alphas if a["draft"] in test_ids])
    tables: dict[str, pd.DataFrame] = {}
    curves_all = [pd.read_csv(pred / "predicted_curves.csv")]
    for count in COUNTS:
        rng = np.random.default_rng(seed_for(s.seed, "empirical", count))
        table, emp = empirical(
            runs_df,
            test_alpha,
            committed[committed["count"] == count],
            draws[draws["count"] == count],
            count=count,
            rng=rng,
        )
        tables["prediction" if count == "with_embeddings" else "prediction_non_embedding"] = table
        curves_all.append(emp)
    tables |= {
        "runs": runs_df,
        "curves": pd.DataFrame(curves),
        "alpha_pairs": pd.DataFrame(pairs),
        "alpha_counts": pd.concat(counts, ignore_index=True),
        "alpha_prompts": pd.concat(prompts, ignore_index=True),
        "wallclock": pd.DataFrame(wall),
        "wallclock_rounds": pd.DataFrame(rounds),
        "timings": timings,
        "prediction_committed": committed,
        "prediction_draws": draws,
        "throughput_curves": pd.concat(curves_all, ignore_index=True),
    }
    _results.write_results(tables, folder)
    # the committed prediction as it was written: byte for byte, so its sha256 can be checked
    (folder / "prediction_committed.csv").write_bytes((pred / "prediction_committed.csv").read_bytes())
    atomic_write_text(folder / "tokenizer.json", (exp.out / "corpus" / "tokenizer.json").read_text())
    write_provenance(exp, folder, timings)
    _baselines(pred, folder)
    return folder


def _baselines(pred: Path, folder: Path) -> None:
    """The prediction against the baselines (:mod:`sdsl.experiment.baselines`) in ``folder``: the
    rules' sizes written with the prediction (``baselines_committed.csv``, copied byte for byte),
    recomputed from the results to check that they are those sizes, and their losses on the test
    grid (``baselines.csv``, ``baselines_non_embedding.csv``). A prediction written before the
    baselines existed has no committed sizes: they are computed here, and the tables say so."""
    from sdsl.experiment.baselines import rule_sizes, write_baselines

    committed = pred / "baselines_committed.csv"
    if committed.is_file():
        (folder / "baselines_committed.csv").write_bytes(committed.read_bytes())
        (folder / "baselines_committed.yml").write_bytes((pred / "baselines_committed.yml").read_bytes())
    write_baselines(folder, after_the_fact=not committed.is_file())
    if committed.is_file():
        from sdsl.experiment.baselines import pair_alphas
        from sdsl.experiment.pairs import seed_for

        res = _results.load_results(folder)
        prov = _results.provenance(folder)
        role = res["runs"].set_index("run")["role"]
        alphas = pair_alphas(res)
        cal = alphas[(alphas["draft"].map(role) == "calibration") & (alphas["target"].map(role) == "target")]
        want = res["baselines_committed"]
        for count in want["count"].unique():
            points, _ = rule_sizes(
                res["runs"],
                cal,
                count=str(count),
                rng=np.random.default_rng(seed_for(int(prov["seed"]), "baselines", str(count))),
                n_resamples=int(prov["scale"]["prediction_resamples"]),
            )
            w = want[want["count"] == count].set_index(["target", "rule"])["n"]
            got = points.set_index(["target", "rule"])["n"].reindex(w.index)
            if not np.allclose(got.to_numpy(float), w.to_numpy(float), rtol=1e-6):
                raise ValueError(
                    f"the baselines' sizes recomputed from the results ({count}) are not those written with the "
                    "prediction: the results are not the run's"
                )


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
        "prediction": _prediction_provenance(exp, timings),
        "executor": [_executor(x) for x in state["sessions"]],
        # finished tasks taken over from a folder of other settings (the same runs: run ids, seeds, recipe)
        "reused_from": state.get("reused_from"),
        "cpu_minutes_by_phase": {
            str(k): round(float(v) / 60, 1) for k, v in _by_phase(timings)["cpu_seconds"].sum().items()
        },
        "wall_minutes_by_phase": _wall_by_phase(timings),
        "checkpoints": "not committed (build/experiment/<scale>/models; python -m sdsl.experiment run rebuilds them)",
    }
    with open(folder / "provenance.yml", "w", encoding="utf-8") as fh:
        fh.write("# Provenance of the raw results in this folder, written by sdsl.experiment.runner.\n")
        yaml.safe_dump(prov, fh, sort_keys=False, allow_unicode=True, width=100)


def _prediction_provenance(exp: Experiment, timings: pd.DataFrame) -> dict[str, Any]:
    """The committed prediction's file, sha256 and UTC time, and the first start of a test
    training task (which must come after it)."""
    rec = json.loads(exp.prediction_path().read_text())
    test = timings[timings["phase"].isin(TEST_PHASES)]
    first = str(test["start_utc"].min()) if len(test) else None
    return {
        "file": "prediction_committed.csv",
        "sha256": rec["sha256"],
        "baselines_file": rec.get("baselines_file"),
        "baselines_sha256": rec.get("baselines_sha256"),
        "design_checks": rec.get("design_checks"),
        "written_utc": rec["written_utc"],
        "grid_n_stars": rec["grid_n_stars"],
        "test_runs": rec["test_runs"],
        "first_test_task_start_utc": first,
        "grid_extension": json.loads(exp.extension_path().read_text()) if exp.extension_path().is_file() else None,
        "replicates": json.loads(exp.replicates_path().read_text()) if exp.replicates_path().is_file() else None,
        "written_before_every_test_task": bool(first is None or first >= rec["written_utc"]),
    }


def _executor(session: dict) -> dict | None:
    """Where a session ran its tasks: its ``executor`` record (a process pool or Ray), or the
    ``ray`` record of a session from before the process pool existed."""
    if session.get("executor"):
        return session["executor"]
    if session.get("ray"):
        return {"kind": "ray", **session["ray"]}
    return None


def _by_phase(timings: pd.DataFrame):
    """``timings`` grouped by phase, in the order the phases run."""
    order = {p: i for i, p in enumerate(PHASES)}
    t = timings.assign(_order=timings["phase"].map(order).fillna(len(order)))
    return t.sort_values("_order", kind="mergesort").groupby("phase", sort=False)


def _wall_by_phase(timings: pd.DataFrame) -> dict[str, float]:
    """Minutes from the first start to the last end of each phase's tasks, summed over the
    sessions it ran in (a resumed run does not count the time between sessions)."""
    out = {}
    for phase, g in _by_phase(timings):
        span = 0.0
        for _, h in g.groupby("session"):
            span += (pd.to_datetime(h["end_utc"]).max() - pd.to_datetime(h["start_utc"]).min()).total_seconds()
        out[str(phase)] = round(span / 60, 1)
    return out


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

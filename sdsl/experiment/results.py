"""The raw results of one run of the experiment: tables with their schemas and provenance.

A results folder (``data/laptop_scale/`` for the committed CPU run) holds ``runs.csv``,
``curves.csv``, ``alpha_pairs.csv``, ``alpha_counts.csv``, ``alpha_prompts.csv``,
``wallclock.csv``, ``timings.csv`` and ``baselines.csv`` (the prediction against rules without the
paper's laws, :mod:`sdsl.experiment.baselines`), each with a ``.yml`` schema beside it (the format of
:mod:`sdsl.data`, with the CSV's sha256), ``tokenizer.json`` and ``provenance.yml`` (command,
commit, machine, duration, seeds, corpus sources). :func:`load_results` reads and validates them
with :func:`sdsl.data.load`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from sdsl import data as _data
from sdsl.paths import DATA

__all__ = [
    "OPTIONAL_TABLES",
    "RESULTS",
    "SCHEMAS",
    "TABLES",
    "atomic_write_bytes",
    "atomic_write_text",
    "load_results",
    "provenance",
    "write_results",
    "write_table",
]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (never half-written)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


#: The committed results of the full CPU run.
RESULTS = DATA / "laptop_scale"

_S, _I, _F = "str", "int", "float"
_PAIR = [
    ("draft", _S, "", "draft run id"),
    ("target", _S, "", "target run id"),
    ("temperature", _F, "", "sampling temperature (0: greedy)"),
]

#: Column schemas: (name, type, unit, description[, constraints]).
SCHEMAS: dict[str, dict[str, Any]] = {
    "runs": {
        "title": "Training runs of the model family",
        "key": ["run"],
        "columns": [
            ("run", _S, "", "run id: shape and token budget"),
            ("shape", _S, "", "w<width>l<layers>"),
            ("width", _I, "", "embedding width"),
            ("layers", _I, "", "transformer blocks"),
            ("heads", _I, "", "attention heads"),
            ("params", _I, "parameters", "N with embeddings: non-embedding plus the tied token table and output head"),
            ("non_embedding_params", _I, "parameters", "without token and position tables"),
            ("total_params", _I, "parameters", "every parameter, tied embeddings counted once"),
            (
                "role",
                _S,
                "",
                "target (fitted), held_out_target (in no fit), calibration (a draft the fits see) or test (a draft no fit sees)",
                {"allowed": ["target", "held_out_target", "calibration", "test"]},
            ),
            ("replicate", _I, "", "0: calibration run; 1, 2: test drafts (other seeds of the recipe)"),
            ("tokens", _I, "tokens", "tokens predicted in training (D)"),
            ("tokens_budget", _I, "tokens", "requested budget"),
            ("steps", _I, "", "optimiser steps"),
            ("batch_size", _I, "sequences", "sequences per step"),
            ("seq_len", _I, "tokens", "predicted tokens per sequence"),
            ("peak_lr", _F, "", "peak learning rate"),
            ("epochs", _F, "", "passes over the training split"),
            ("tokens_per_param", _F, "", "D / N (Chinchilla-optimal: about 20)"),
            ("val_loss", _F, "nats/token", "validation loss"),
            ("val_loss_se", _F, "nats/token", "SE over windows"),
            ("val_ppl", _F, "", "exp(val_loss)"),
            ("val_tokens", _I, "tokens", "validation tokens scored"),
            ("final_train_loss", _F, "nats/token", "mean training loss over the last curve interval"),
            ("train_s", _F, "s", "wall time of the optimiser steps"),
            ("eval_s", _F, "s", "wall time of evaluations"),
            ("wall_s", _F, "s", "wall time of the run"),
            ("flops_per_token", _F, "FLOP", "6 (N + layers seq_len width)"),
            ("train_flops", _F, "FLOP", "flops_per_token * tokens"),
            ("flops_per_s", _F, "FLOP/s", "achieved"),
            ("tokens_per_s", _F, "tokens/s", "training throughput"),
        ],
    },
    "curves": {
        "title": "Loss curves",
        "key": ["run", "step"],
        "columns": [
            ("run", _S, "", "run id"),
            ("step", _I, "", "optimiser steps done"),
            ("tokens", _I, "tokens", "tokens seen"),
            ("lr", _F, "", "learning rate of the step"),
            ("train_loss", _F, "nats/token", "mean training loss since the previous point"),
            (
                "val_loss",
                _F,
                "nats/token",
                "loss on the curve's validation windows (empty: not evaluated)",
                {"required": False},
            ),
        ],
    },
    "alpha_pairs": {
        "title": "Alpha per (draft, target, temperature)",
        "key": ["draft", "target", "temperature"],
        "columns": _PAIR
        + [
            ("gamma", _I, "", "draft length of the measurement"),
            ("n_prompts", _I, "", "prompts measured"),
            (
                "method",
                _S,
                "",
                "speculative sampling (the harness, prompt by prompt) or greedy replay (sdsl.experiment.greedy)",
                {"allowed": ["speculative sampling", "greedy replay"]},
            ),
            ("harness_prompts", _I, "", "prompts decoded by the harness (greedy: the first ones, also replayed)"),
            (
                "harness_identical",
                _I,
                "",
                "greedy: harness prompts the replay reproduced exactly (empty: no replay)",
                {"required": False},
            ),
            ("reached_target", _S, "", "whether the half-width target was met", {"allowed": ["yes", "no"]}),
            ("half_width", _F, "", "95 % half width at stopping (max of profile and cluster bootstrap)"),
            ("overlap", _F, "", "teacher-forced mean of sum_x min(p, q) on validation windows (temperature 1)"),
            ("overlap_se", _F, "", "its SE over windows"),
            ("agree", _F, "", "teacher-forced argmax agreement (greedy alpha)"),
            ("agree_se", _F, "", "its SE"),
            ("measure_s", _F, "s", "wall time of the measurement"),
        ],
    },
    "alpha_counts": {
        "title": "Accepted-count histograms per prompt",
        "key": ["draft", "target", "temperature", "prompt_id", "drafted", "accepted"],
        "columns": _PAIR
        + [
            ("prompt_id", _I, "", "prompt index"),
            ("drafted", _I, "tokens", "tokens drafted in the iteration"),
            ("accepted", _I, "tokens", "drafted tokens accepted"),
            ("iterations", _I, "", "iterations with these counts"),
        ],
    },
    "alpha_prompts": {
        "title": "Per-prompt statistics of the alpha measurements",
        "key": ["draft", "target", "temperature", "prompt_id"],
        "columns": _PAIR
        + [
            ("prompt_id", _I, "", "prompt index"),
            ("new_tokens", _I, "tokens", "tokens generated"),
            ("iterations", _I, "", "speculative iterations"),
            ("evaluated", _I, "", "evaluated draft positions"),
            ("beta_sum", _F, "", "sum over evaluated positions of sum_x min(p, q) (on-policy)"),
            (
                "ttot_s",
                _F,
                "s",
                "wall time of the request in the harness (empty: replayed, not decoded by the harness)",
                {"required": False},
            ),
        ],
    },
    "wallclock": {
        "title": "Wall clock of speculative decoding against plain decoding, interleaved rounds",
        "key": ["draft", "target"],
        "columns": [
            ("draft", _S, "", "draft run id"),
            ("target", _S, "", "target run id"),
            ("temperature", _F, "", "sampling temperature"),
            ("alpha", _F, "", "measured alpha used for gamma"),
            ("gamma", _I, "", "integer gamma maximising Theorem 3.8"),
            ("c", _F, "", "measured cost ratio draft/target"),
            ("new_tokens", _I, "tokens", "tokens per method per round"),
            ("rounds", _I, "", "alternating rounds of plain and speculative decoding"),
            ("target_tokens_per_s", _F, "tokens/s", "plain decoding of the target, median over rounds"),
            ("draft_tokens_per_s", _F, "tokens/s", "plain decoding of the draft (for c)"),
            ("spec_tokens_per_s", _F, "tokens/s", "speculative sampling, median over rounds"),
            ("speedup", _F, "", "median over rounds of plain time / speculative time"),
            ("speedup_low", _F, "", "order-statistics interval of the median, low"),
            ("speedup_high", _F, "", "order-statistics interval of the median, high"),
            ("coverage", _F, "", "coverage of that interval"),
            ("predicted_speedup", _F, "", "Theorem 3.8 at alpha, gamma, c"),
            ("mean_accepted", _F, "tokens", "mean accepted tokens per iteration"),
        ],
    },
    "wallclock_rounds": {
        "title": "Wall clock per round",
        "key": ["draft", "target", "round"],
        "columns": [
            ("draft", _S, "", "draft run id"),
            ("target", _S, "", "target run id"),
            ("round", _I, "", "round (even: plain first; odd: speculative first)"),
            ("target_s", _F, "s", "plain decoding of the target"),
            ("spec_s", _F, "s", "speculative sampling"),
        ],
    },
    "timings": {
        "title": "Wall time of every task of the run",
        "key": ["task"],
        "columns": [
            ("task", _S, "", "task id"),
            ("kind", _S, "", "corpus, train, greedy (a target's greedy continuations), alpha or wallclock"),
            ("seconds", _F, "s", "wall time"),
            (
                "cpu_seconds",
                _F,
                "s",
                "CPU time of the process that ran it (empty: not recorded by the first session)",
                {"required": False},
            ),
            ("session", _I, "", "session (0: first start, then resumes)"),
            ("phase", _S, "", "phase of the run (sdsl.experiment.runner)"),
            ("start_utc", _S, "", "start of the task, UTC ISO 8601"),
            ("end_utc", _S, "", "end of the task, UTC ISO 8601"),
            ("node", _S, "", "host the task ran on"),
        ],
    },
    **{
        name: {
            "title": title,
            "key": ["target"],
            "columns": [
                ("target", _S, "", "target run id"),
                ("role", _S, "", "target or held_out_target", {"allowed": ["target", "held_out_target"]}),
                ("params", _I, "parameters", f"M, {count}"),
                ("n_star_predicted", _F, "parameters", "N* predicted from the calibration runs"),
                ("predicted_low", _F, "parameters", "95 % bootstrap interval of the prediction, low"),
                ("predicted_high", _F, "parameters", "95 % bootstrap interval of the prediction, high"),
                ("n_star_empirical", _F, "parameters", "N* of the smooth fit to measured throughput on the test grid"),
                ("empirical_low", _F, "parameters", "95 % band of the empirical N*, low"),
                ("empirical_high", _F, "parameters", "95 % band of the empirical N*, high"),
                ("lost_at_predicted", _F, "", "fraction of throughput lost at the predicted N*"),
                ("lost_low", _F, "", "95 % interval, low"),
                ("lost_high", _F, "", "95 % interval, high"),
            ],
        }
        for name, title, count in (
            ("prediction", "Predicted and empirical N* per target (N with embeddings)", "with embeddings"),
            (
                "prediction_non_embedding",
                "Predicted and empirical N* per target (N without embeddings)",
                "without embeddings",
            ),
        )
    },
    **{
        name: {
            "title": title,
            "key": ["target", "rule"],
            "columns": [
                ("target", _S, "", "target run id"),
                (
                    "rule",
                    _S,
                    "",
                    "sdsl (the prediction) or a baseline (sdsl.experiment.baselines.RULES)",
                    {"allowed": ["sdsl", "m_over_200", "m_over_100", "best_calibration", "ln_n_fit"]},
                ),
                ("n", _F, "parameters", f"the draft size the rule picks, N {count}"),
                ("n_low", _F, "parameters", "2.5 % of the rule's draws (the prediction: its 95 % interval, low)"),
                ("n_high", _F, "parameters", "97.5 % of the rule's draws (the prediction: its 95 % interval, high)"),
                ("lost", _F, "", "fraction of the measured throughput lost at n (smooth fit on the test grid)"),
                ("lost_low", _F, "", "95 % interval, low"),
                ("lost_high", _F, "", "95 % interval, high"),
                (
                    "grid",
                    _S,
                    "",
                    "n inside the test grid, or below / above it (lost read at the grid's end: a lower bound)",
                    {"allowed": ["inside", "below", "above"]},
                ),
            ],
        }
        for name, title, count in (
            (
                "baselines",
                "The prediction against rules without the paper's laws (N with embeddings)",
                "with embeddings",
            ),
            (
                "baselines_non_embedding",
                "The prediction against rules without the paper's laws (N without embeddings)",
                "without embeddings",
            ),
        )
    },
    "prediction_committed": {
        "title": "The prediction as written before any test draft was trained",
        "key": ["count", "target"],
        "columns": [
            ("count", _S, "", "how N is counted", {"allowed": ["with_embeddings", "non_embedding"]}),
            ("target", _S, "", "target run id"),
            ("role", _S, "", "target or held_out_target", {"allowed": ["target", "held_out_target"]}),
            ("params", _I, "parameters", "M under the count"),
            ("law", _S, "", "acceptance law of the point prediction"),
            ("n_star_predicted", _F, "parameters", "N* of the full-data fits"),
            ("predicted_low", _F, "parameters", "2.5 % of the bootstrap draws"),
            ("predicted_high", _F, "parameters", "97.5 % of the bootstrap draws"),
            ("status", _S, "", "interior, or the edge of the searched range where T is largest"),
            ("draws", _I, "", "bootstrap draws with an N* (interior or at an edge)"),
            ("draws_interior", _I, "", "bootstrap draws with an interior optimum"),
            ("draws_total", _I, "", "bootstrap draws"),
            ("m_over_n_star", _F, "", "M / N* predicted"),
        ],
    },
    "baselines_committed": {
        "title": "The sizes the baselines pick, written with the prediction before any test draft was trained",
        "key": ["count", "target", "rule"],
        "columns": [
            ("count", _S, "", "how N is counted", {"allowed": ["with_embeddings", "non_embedding"]}),
            ("target", _S, "", "target run id"),
            ("role", _S, "", "target or held_out_target", {"allowed": ["target", "held_out_target"]}),
            (
                "rule",
                _S,
                "",
                "a baseline (sdsl.experiment.baselines.BASELINES)",
                {"allowed": ["m_over_200", "m_over_100", "best_calibration", "ln_n_fit"]},
            ),
            ("n", _F, "parameters", "the size the rule picks on the calibration data as measured"),
            ("n_low", _F, "parameters", "2.5 % of its draws", {"required": False}),
            ("n_high", _F, "parameters", "97.5 % of its draws", {"required": False}),
        ],
    },
    "prediction_draws": {
        "title": "Bootstrap draws of the predicted N*",
        "key": ["count", "target", "draw"],
        "columns": [
            ("count", _S, "", "how N is counted", {"allowed": ["with_embeddings", "non_embedding"]}),
            ("target", _S, "", "target run id"),
            ("draw", _I, "", "draw"),
            ("law", _S, "", "acceptance law drawn"),
            ("n_star", _F, "parameters", "N* of the draw (empty: the fit failed)", {"required": False}),
            ("status", _S, "", "interior, an edge of the searched range, or failed"),
        ],
    },
    "throughput_curves": {
        "title": "Predicted and measured throughput curves with bands",
        "key": ["count", "target", "curve", "n"],
        "columns": [
            ("count", _S, "", "how N is counted", {"allowed": ["with_embeddings", "non_embedding"]}),
            ("target", _S, "", "target run id"),
            (
                "curve",
                _S,
                "",
                "predicted (calibration laws) or empirical (smooth fit on the test grid)",
                {"allowed": ["predicted", "empirical"]},
            ),
            ("n", _F, "parameters", "draft size"),
            ("speedup", _F, "", "2 M T(N): throughput over plain decoding at equal FLOPs", {"required": False}),
            ("low", _F, "", "2.5 % of the draws", {"required": False}),
            ("high", _F, "", "97.5 % of the draws", {"required": False}),
        ],
    },
}
#: Tables a results folder may lack: the baselines were added after the first two runs (their
#: folders hold them, computed afterwards by :func:`sdsl.experiment.baselines.from_results`).
OPTIONAL_TABLES = ("baselines", "baselines_non_embedding", "baselines_committed")
TABLES = tuple(SCHEMAS)


def _schema_mapping(name: str, sha: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    spec = SCHEMAS[name]
    cols = []
    for col in spec["columns"]:
        entry = {"name": col[0], "type": col[1], "unit": col[2], "description": col[3]}
        if len(col) > 4:
            entry.update(col[4])
        cols.append(entry)
    return {
        "title": f"Laptop-scale experiment: {spec['title']}",
        "source": extra.get("source", "sdsl-companion, python -m sdsl.experiment run (see provenance.yml)"),
        "licence": "CC0-1.0 (measurements made by this project)",
        "description": extra.get("description", "Raw results of the laptop-scale experiment."),
        "key": list(spec["key"]),
        "columns": cols,
        "sha256": sha,
    }


def write_table(df: pd.DataFrame, folder: str | os.PathLike, name: str, extra: Mapping[str, Any] | None = None) -> Path:
    """Validate ``df`` against the schema ``name``, write ``<name>.csv`` and ``<name>.yml`` (with
    the CSV's sha256) into ``folder``."""
    if name not in SCHEMAS:
        raise ValueError(f"name must be one of {list(SCHEMAS)}, got {name!r}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cols = [c[0] for c in SCHEMAS[name]["columns"]]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"table {name!r} lacks column(s) {missing}")
    out = df[cols].sort_values(list(SCHEMAS[name]["key"]), kind="mergesort").reset_index(drop=True)
    csv = folder / f"{name}.csv"
    out.to_csv(csv, index=False, float_format="%.10g", lineterminator="\n")
    meta = _schema_mapping(name, _data.sha256(csv), extra or {})
    _data.validate(pd.read_csv(csv, dtype=str, keep_default_na=False), meta, str(csv), line_offset=2)
    with open(folder / f"{name}.yml", "w", encoding="utf-8") as fh:
        fh.write(f"# Schema and provenance of {name}.csv, written by sdsl.experiment.results.\n")
        yaml.safe_dump(meta, fh, sort_keys=False, allow_unicode=True, width=100)
    return csv


def write_results(tables: Mapping[str, pd.DataFrame], folder: str | os.PathLike) -> list[Path]:
    """Every table of ``tables`` written with :func:`write_table`."""
    return [write_table(df, folder, name) for name, df in tables.items()]


def load_results(folder: str | os.PathLike | None = None) -> dict[str, pd.DataFrame]:
    """Every table of a results folder (default: the committed ``data/laptop_scale``), validated
    against its schema; ValueError naming the folder if a table is missing."""
    folder = Path(folder) if folder is not None else RESULTS
    if not folder.is_dir():
        raise ValueError(f"results folder {folder} does not exist (run: python -m sdsl.experiment run)")
    out = {}
    for name in TABLES:
        p = folder / f"{name}.csv"
        if not p.is_file():
            if name in OPTIONAL_TABLES:
                continue
            raise ValueError(f"results folder {folder} lacks {p.name}")
        out[name] = _data.load(p)
    return out


def provenance(folder: str | os.PathLike | None = None) -> dict[str, Any]:
    """The ``provenance.yml`` of a results folder."""
    folder = Path(folder) if folder is not None else RESULTS
    p = folder / "provenance.yml"
    if not p.is_file():
        raise ValueError(f"results folder {folder} lacks provenance.yml")
    with open(p, encoding="utf-8") as fh:
        return yaml.safe_load(fh)

"""What a scale costs before it is run: per training run its ``N``, token budget, epochs over the
training split, tokens per parameter and training FLOPs; per scale the totals and the count of
(draft, target) pairs; and the training time at an assumed throughput.

The FLOPs are those of :func:`sdsl.experiment.training.flops_per_token` (Kaplan et al. 2020,
Table 1), the same count the runner records as achieved FLOP/s, so an estimate made here can be
compared with the ``flops_per_s`` column of a finished run. :func:`probe_step_seconds` measures
what a training step of each shape costs on this machine (a few steps on random tokens) and
:func:`estimate_minutes` turns it, with the per-pair times of a finished run, into the minutes a
whole run of the scale takes on ``workers`` cores.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from sdsl.experiment.config import Scale
from sdsl.experiment.training import flops_per_token, train_steps

__all__ = [
    "budget_table",
    "budget_totals",
    "estimate_minutes",
    "expected_n_stars",
    "pair_seconds",
    "probe_step_seconds",
    "train_tokens_of",
]

#: Chinchilla's compute-optimal tokens per parameter (Hoffmann et al. 2022).
CHINCHILLA_TOKENS_PER_PARAM = 20.0


def train_tokens_of(out: str | os.PathLike) -> int | None:
    """Tokens of the training split of the corpus prepared in the work folder ``out``
    (``corpus/sources.json``), or None if no corpus is there yet."""
    path = Path(out) / "corpus" / "sources.json"
    if not path.is_file():
        return None
    return int(json.loads(path.read_text())["splits"]["train"]["tokens"])


def budget_table(scale: Scale, train_tokens: int | None = None) -> pd.DataFrame:
    """One row per calibration run of ``scale``: ``run``, ``params`` (``N``: non-embedding plus the
    tied token table), ``non_embedding_params``, ``tokens`` (predicted tokens, whole steps),
    ``epochs`` (``tokens / train_tokens``; NaN without ``train_tokens``), ``tokens_per_param``,
    ``chinchilla`` (whether ``tokens_per_param >= 20``) and ``train_flops``.

    Parameters
    ----------
    scale : the scale.
    train_tokens : tokens of its training split (:func:`train_tokens_of`), if known.
    """
    if train_tokens is not None and int(train_tokens) < 1:
        raise ValueError(f"train_tokens must be >= 1, got {train_tokens!r}")
    rec = scale.recipe
    per_step = rec.batch_size * rec.seq_len
    rows = []
    for run in scale.runs():
        n = scale.params(run.shape)
        tokens = train_steps(run.tokens, rec) * per_step
        rows.append(
            {
                "run": run.run_id,
                "params": n,
                "non_embedding_params": run.shape.non_embedding_params(),
                "tokens": tokens,
                "epochs": tokens / int(train_tokens) if train_tokens else float("nan"),
                "tokens_per_param": tokens / n,
                "chinchilla": tokens / n >= CHINCHILLA_TOKENS_PER_PARAM,
                "train_flops": flops_per_token(n, run.shape, rec.seq_len) * tokens,
            }
        )
    return pd.DataFrame(rows)


def budget_totals(scale: Scale, table: pd.DataFrame, flops_per_s: float | None = None) -> dict:
    """Totals of :func:`budget_table` (the calibration runs; the test drafts follow from the
    prediction): shapes, runs, calibration pairs, decades of ``N`` and of non-embedding
    parameters, training FLOPs, the largest epoch count, and with ``flops_per_s`` the training
    time in seconds at that sustained throughput (one model at a time)."""
    if flops_per_s is not None and not float(flops_per_s) > 0:
        raise ValueError(f"flops_per_s must be > 0, got {flops_per_s!r}")
    total = float(table["train_flops"].sum())
    out = {
        "scale": scale.name,
        "shapes": len(scale.shapes),
        "runs": len(table),
        "pairs": len(scale.calibration_pairs()),
        "params_min": int(table["params"].min()),
        "params_max": int(table["params"].max()),
        "decades_params": float(np.log10(table["params"].max() / table["params"].min())),
        "decades_non_embedding": float(
            np.log10(table["non_embedding_params"].max() / table["non_embedding_params"].min())
        ),
        "train_flops": total,
        "max_epochs": float(table["epochs"].max()),
        "under_chinchilla": int((~table["chinchilla"]).sum()),
        "min_tokens_per_param": float(table["tokens_per_param"].min()),
    }
    if flops_per_s is not None:
        out["train_s"] = total / float(flops_per_s)
    return out


def probe_step_seconds(scale: Scale, shapes, *, steps: int = 6, threads: int = 1, seed: int = 0) -> dict[str, float]:
    """Seconds per optimiser step of each of ``shapes`` (:class:`ModelShape`) under ``scale``'s
    recipe on this machine with ``threads`` torch threads: ``steps`` steps of
    :func:`sdsl.experiment.training.train_run` on random token ids, the first (allocation and warm
    up) not counted. Returns ``{shape name: seconds per step}``."""
    import torch

    from sdsl.experiment.config import RunSpec
    from sdsl.experiment.training import build_model, train_run

    if int(steps) < 2:
        raise ValueError(f"steps must be >= 2 (the first is not counted), got {steps!r}")
    rec = scale.recipe
    torch.set_num_threads(int(threads))
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, scale.vocab_size, size=(rec.seq_len + 1) * rec.batch_size * (int(steps) + 4)).astype(
        np.uint16
    )
    val = torch.from_numpy(rng.integers(1, scale.vocab_size, size=(2, rec.seq_len + 1)).astype(np.int64))
    out: dict[str, float] = {}
    for shape in shapes:
        times = []
        for k in (1, int(steps)):
            model = build_model(shape, scale.vocab_size, 2 * rec.seq_len, seed)
            run = RunSpec(shape, k * rec.batch_size * rec.seq_len)
            res = train_run(model, run, ids, val, rec, torch.Generator().manual_seed(seed), curve_val_windows=val)
            times.append(float(res.metrics["train_s"]))
        out[shape.name] = (times[1] - times[0]) / (int(steps) - 1)
    return out


def estimate_minutes(
    scale: Scale,
    step_s: dict[str, float],
    test_runs,
    pair_s: float,
    wall_pair_s: float,
    *,
    workers: int = 2,
    added_drafts: int = 0,
) -> dict[str, float]:
    """The wall minutes of a whole run of ``scale`` on ``workers`` cores, phase by phase: training
    (``steps x step_s`` of each run, the longest first on the free worker: the largest target
    bounds the calibration), alpha (``pair_s`` seconds per pair, ``workers`` at a time), the wall
    clock (``wall_pair_s`` per test pair, one at a time). ``test_runs``: the test drafts expected
    (:meth:`Scale.test_runs` of the expected predictions); ``added_drafts``: drafts the rules
    after the measurement may add (grid extension, second seeds), each costed as the largest test
    draft. ``step_s``: :func:`probe_step_seconds` of every shape."""
    rec = scale.recipe

    def makespan(seconds: list[float]) -> float:
        free = [0.0] * int(workers)
        for v in sorted(seconds, reverse=True):
            i = int(np.argmin(free))
            free[i] += v
        return max(free) if free else 0.0

    def train_s(run) -> float:
        return train_steps(run.tokens, rec) * step_s[run.shape.name]

    tests = list(test_runs)
    n_targets = len(scale.targets) + len(scale.held_out_targets)
    biggest_test = max((train_s(r) for r in tests), default=0.0)
    cal_pairs = len(scale.calibration_pairs())
    test_pairs = (len(tests) + int(added_drafts)) * n_targets
    out = {
        "calibration training": makespan([train_s(r) for r in scale.runs()]) / 60,
        "calibration alpha": cal_pairs * pair_s / int(workers) / 60,
        "prediction": 0.5,
        "test training": makespan([train_s(r) for r in tests] + [biggest_test] * int(added_drafts)) / 60,
        "test alpha": test_pairs * pair_s / int(workers) / 60,
        "wall clock": test_pairs * wall_pair_s / 60,
    }
    out["total"] = sum(out.values())
    out["calibration phase"] = out["calibration training"] + out["calibration alpha"] + out["prediction"]
    out["calibration cpu"] = (sum(train_s(r) for r in scale.runs()) + cal_pairs * pair_s) / 60
    return out


def expected_n_stars(scale: Scale, results: str | os.PathLike) -> dict[str, float]:
    """``N*`` (with embeddings, the Eq. 5 plane) of every target of ``scale`` as the calibration
    runs of a finished run (the results folder ``results``) predict it, each target entering as a
    held-out target does (its ``M`` and the common budget): where the test grid of ``scale`` is
    expected to lie before its own calibration runs exist. The finished run must have the same
    token table."""
    from sdsl.experiment.baselines import pair_alphas
    from sdsl.experiment.predict import predict
    from sdsl.experiment.results import load_results, provenance

    if int(provenance(results)["scale"]["vocab_size"]) != scale.vocab_size:
        raise ValueError(f"the results in {results} have another token table than the scale {scale.name!r}")
    res = load_results(results)
    runs = res["runs"]
    role = runs.set_index("run")["role"]
    al = pair_alphas(res)
    cal = al[(al["draft"].map(role) == "calibration") & (al["target"].map(role) == "target")]
    base = runs[runs["role"].isin(["calibration", "target"])]
    hyp = pd.DataFrame(
        [
            {
                "run": f"expected-{t.name}",
                "params": scale.params(t),
                "non_embedding_params": t.non_embedding_params(),
                "tokens": scale.common_tokens,
                "role": "held_out_target",
                "val_loss": np.nan,
                "val_ppl": np.nan,
            }
            for t in scale.targets + scale.held_out_targets
        ]
    )
    rows, _, _ = predict(
        pd.concat([base, hyp], ignore_index=True),
        cal,
        laws=("plane",),
        count="with_embeddings",
        rng=np.random.default_rng(0),
        n_resamples=1,
    )
    rows = rows[rows["target"].str.startswith("expected-")]
    return {str(r["target"]).removeprefix("expected-"): float(r["n_star_predicted"]) for _, r in rows.iterrows()}


def pair_seconds(results: str | os.PathLike, prompts: int) -> tuple[float, float]:
    """Seconds per alpha measurement of a pair at ``prompts`` prompts and per wall-clock pair,
    from the task times of a finished run (its ``timings.csv``: CPU seconds of its test alpha tasks,
    scaled by the prompts its pairs had; wall seconds of its wall-clock tasks)."""
    from sdsl.experiment.results import load_results

    res = load_results(results)
    t = res["timings"]
    alpha = t[(t["kind"] == "alpha") & (t["phase"] == "test alpha")]
    per = float(alpha["cpu_seconds"].mean()) * int(prompts) / float(res["alpha_pairs"]["n_prompts"].max())
    return per, float(t.loc[t["kind"] == "wallclock", "seconds"].mean())

"""What a scale costs before it is run: per training run its ``N``, token budget, epochs over the
training split, tokens per parameter and training FLOPs; per scale the totals and the count of
(draft, target) pairs; and the training time at an assumed throughput.

The FLOPs are those of :func:`sdsl.experiment.training.flops_per_token` (Kaplan et al. 2020,
Table 1), the same count the runner records as achieved FLOP/s, so an estimate made here can be
compared with the ``flops_per_s`` column of a finished run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from sdsl.experiment.config import Scale
from sdsl.experiment.training import flops_per_token, train_steps

__all__ = ["budget_table", "budget_totals", "train_tokens_of"]

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
    }
    if flops_per_s is not None:
        out["train_s"] = total / float(flops_per_s)
    return out

"""Model construction, parameter counts and the one training recipe of the family.

Every model is a ``transformers`` GPT-2 (``GPT2LMHeadModel``) with tied input and output
embeddings, no dropout and GELU (tanh) as one fused op, trained from seeded random weights with
AdamW, linear warm-up and cosine decay (:class:`sdsl.experiment.config.Recipe`; with
``precision="bf16"`` the forward pass runs under ``torch.autocast`` in bfloat16, the weights, the
loss and the optimiser in float32; evaluation is always float32) on windows of the
training split. Windows are non-overlapping, ``seq_len + 1`` tokens long (``seq_len`` predicted
tokens each), visited in a seeded random order, epoch after epoch; ``tokens`` counts predicted
tokens, so a run of budget ``D`` makes ``ceil(D / (batch * seq_len))`` steps.

FLOPs: training costs ``6 (N + n_layer * seq_len * width)`` FLOPs per predicted token (Kaplan et
al. 2020, Table 1: a forward pass costs ``2 N + 2 n_layer n_ctx d``, a backward pass twice that),
with ``N`` the parameters that cost FLOPs per token (non-embedding weights plus the tied output
head; :meth:`sdsl.experiment.config.ModelShape.params`).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from sdsl.experiment.config import ModelShape, Recipe, RunSpec
from sdsl.measure.sampling import model_device

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "ParamCounts",
    "TrainResult",
    "build_model",
    "evaluate_loss",
    "flops_per_token",
    "lr_at",
    "param_counts",
    "train_run",
    "windows",
]


@dataclass(frozen=True)
class ParamCounts:
    """``total`` (every parameter, tied embeddings once), ``non_embedding`` (without the token and
    position tables), ``n`` (``non_embedding`` plus the token table: the ``N`` of the laws and of
    the FLOP model) and ``position`` (the position table)."""

    total: int
    non_embedding: int
    n: int
    position: int


def build_model(shape: ModelShape, vocab_size: int, n_positions: int, seed: int, eos_token_id: int = 0):
    """A GPT-2 of ``shape`` with seeded random weights (GPT-2's initialisation draws from torch's
    global generator, so it runs inside ``torch.random.fork_rng``: no global state leaks)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        vocab_size=int(vocab_size),
        n_positions=int(n_positions),
        n_embd=shape.width,
        n_layer=shape.layers,
        n_head=shape.heads,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        activation_function="gelu_pytorch_tanh",
        bos_token_id=int(eos_token_id),
        eos_token_id=int(eos_token_id),
        pad_token_id=None,
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = GPT2LMHeadModel(cfg)
    return model


def param_counts(model) -> ParamCounts:
    """The parameter counts of a GPT-2 built by :func:`build_model`."""
    total = sum(p.numel() for p in model.parameters())
    wte = model.transformer.wte.weight.numel()
    wpe = model.transformer.wpe.weight.numel()
    return ParamCounts(total=int(total), non_embedding=int(total - wte - wpe), n=int(total - wpe), position=int(wpe))


def flops_per_token(n: int, shape: ModelShape, seq_len: int) -> float:
    """Training FLOPs per predicted token, ``6 (N + n_layer seq_len width)`` (module docstring)."""
    return 6.0 * (float(n) + shape.layers * float(seq_len) * shape.width)


def lr_at(step: int, steps: int, peak: float, recipe: Recipe) -> float:
    """Learning rate at ``step`` (0-based) of ``steps``: linear warm-up over
    ``max(1, round(warmup_fraction * steps))`` steps, then cosine decay from ``peak`` to
    ``min_lr_ratio * peak`` at the last step."""
    warm = max(1, round(recipe.warmup_fraction * steps))
    if step < warm:
        return peak * (step + 1) / warm
    span = max(steps - warm - 1, 1)
    frac = min((step - warm) / span, 1.0)
    lo = recipe.min_lr_ratio * peak
    return lo + 0.5 * (peak - lo) * (1.0 + math.cos(math.pi * frac))


def train_steps(tokens: int, recipe: Recipe) -> int:
    """Optimiser steps of a run of ``tokens`` predicted tokens: ``ceil(tokens / (batch * seq_len))``,
    at least 1 (the run sees ``steps * batch * seq_len`` tokens)."""
    return max(1, math.ceil(int(tokens) / (recipe.batch_size * recipe.seq_len)))


def windows(ids: np.ndarray, seq_len: int) -> np.ndarray:
    """Non-overlapping windows of ``seq_len + 1`` tokens (consecutive windows share one token) as
    an ``int64`` array ``(n_windows, seq_len + 1)``."""
    n = (len(ids) - 1) // int(seq_len)
    if n < 1:
        raise ValueError(f"{len(ids)} tokens are too few for one window of {seq_len + 1}")
    idx = np.arange(n)[:, None] * int(seq_len) + np.arange(int(seq_len) + 1)[None, :]
    return ids[idx].astype(np.int64)


def evaluate_loss(model, wins: torch.Tensor, batch: int = 32) -> tuple[float, np.ndarray]:
    """Mean next-token cross-entropy (nats) of ``model`` over ``wins`` (every predicted token of
    every window), and the per-window means."""
    import torch
    import torch.nn.functional as F

    dev = model_device(model)
    model.eval()
    per = []
    with torch.inference_mode():
        for i in range(0, wins.shape[0], batch):
            w = wins[i : i + batch].to(dev)
            logits = model(input_ids=w[:, :-1]).logits
            ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1), reduction="none")
            per.append(ce.view(w.shape[0], -1).mean(dim=1).double().cpu().numpy())
    per_w = np.concatenate(per)
    return float(per_w.mean()), per_w


@dataclass
class TrainResult:
    """What one run records: ``metrics`` (one row of the runs table) and ``curve`` (rows of the
    loss-curve table: ``step, tokens, lr, train_loss, val_loss``)."""

    metrics: dict
    curve: list[dict]


def _param_groups(model, weight_decay: float):
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for _name, p in model.named_parameters():
        (decay if p.ndim >= 2 else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def train_run(
    model,
    run: RunSpec,
    train_ids: np.ndarray,
    val_windows: torch.Tensor,
    recipe: Recipe,
    generator: torch.Generator,
    *,
    curve_val_windows: torch.Tensor | None = None,
    on_step: Callable[[int, int], None] | None = None,
) -> TrainResult:
    """Train ``model`` on ``run.tokens`` predicted tokens of ``train_ids`` with ``recipe`` and
    return its metrics and loss curve.

    Parameters
    ----------
    model : a GPT-2 from :func:`build_model` (trained in place).
    run : the shape and token budget.
    train_ids : the training split as token ids.
    val_windows : windows for the final validation loss (the same for every run).
    recipe : the training recipe.
    generator : ``torch.Generator`` that orders the windows (seeded by the caller).
    curve_val_windows : windows for the validation points along the curve (default: the first
        ``recipe.curve_eval_windows`` of ``val_windows``).
    on_step : called as ``on_step(step, steps)`` after every optimiser step (progress bars).
    """
    import torch
    import torch.nn.functional as F

    dev = model_device(model)
    autocast: Callable[[], contextlib.AbstractContextManager[Any]]
    if recipe.precision == "bf16":
        autocast = partial(torch.autocast, device_type=dev.type, dtype=torch.bfloat16)
    else:
        autocast = contextlib.nullcontext
    wins = torch.from_numpy(windows(train_ids, recipe.seq_len))
    per_step = recipe.batch_size * recipe.seq_len
    steps = train_steps(run.tokens, recipe)
    peak = recipe.peak_lr(run.shape.width)
    curve_val = val_windows[: recipe.curve_eval_windows] if curve_val_windows is None else curve_val_windows
    try:
        opt = torch.optim.AdamW(
            _param_groups(model, recipe.weight_decay), lr=peak, betas=(recipe.beta1, recipe.beta2), fused=True
        )
    except (RuntimeError, TypeError):  # a device or torch without the fused kernel
        opt = torch.optim.AdamW(_param_groups(model, recipe.weight_decay), lr=peak, betas=(recipe.beta1, recipe.beta2))
    order = torch.randperm(wins.shape[0], generator=generator, device="cpu")
    pos, epochs_started = 0, 1
    curve_every = max(1, steps // recipe.curve_points)
    eval_at = {min(steps, max(1, round(steps * (k + 1) / recipe.curve_evals))) for k in range(recipe.curve_evals)}
    curve: list[dict] = []
    acc, acc_n = 0.0, 0
    train_s = eval_s = 0.0
    model.train()
    t_start = time.perf_counter()
    for step in range(steps):
        t0 = time.perf_counter()
        if pos + recipe.batch_size > order.numel():
            order = torch.randperm(wins.shape[0], generator=generator, device="cpu")
            pos, epochs_started = 0, epochs_started + 1
        x = wins[order[pos : pos + recipe.batch_size]].to(dev)
        pos += recipe.batch_size
        lr = lr_at(step, steps, peak, recipe)
        for group in opt.param_groups:
            group["lr"] = lr
        with autocast():
            logits = model(input_ids=x[:, :-1]).logits
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if recipe.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.grad_clip)
        opt.step()
        acc += float(loss.detach())
        acc_n += 1
        train_s += time.perf_counter() - t0
        done = step + 1
        if done % curve_every == 0 or done == steps or done in eval_at:
            row = {
                "step": done,
                "tokens": done * per_step,
                "lr": lr,
                "train_loss": acc / acc_n,
                "val_loss": float("nan"),
            }
            acc, acc_n = 0.0, 0
            if done in eval_at and done != steps:
                t1 = time.perf_counter()
                row["val_loss"] = evaluate_loss(model, curve_val)[0]
                model.train()
                eval_s += time.perf_counter() - t1
            curve.append(row)
        if on_step is not None:
            on_step(done, steps)
    t1 = time.perf_counter()
    val_loss, per_window = evaluate_loss(model, val_windows)
    eval_s += time.perf_counter() - t1
    curve[-1]["val_loss"] = evaluate_loss(model, curve_val)[0]
    counts = param_counts(model)
    tokens_seen = steps * per_step
    fpt = flops_per_token(counts.n, run.shape, recipe.seq_len)
    se = float(per_window.std(ddof=1) / np.sqrt(per_window.size)) if per_window.size > 1 else float("nan")
    metrics = {
        "run": run.run_id,
        "shape": run.shape.name,
        "width": run.shape.width,
        "layers": run.shape.layers,
        "heads": run.shape.heads,
        "params": counts.n,
        "non_embedding_params": counts.non_embedding,
        "total_params": counts.total,
        "tokens": tokens_seen,
        "tokens_budget": run.tokens,
        "steps": steps,
        "batch_size": recipe.batch_size,
        "seq_len": recipe.seq_len,
        "peak_lr": peak,
        "epochs": tokens_seen / float(wins.shape[0] * recipe.seq_len),
        "tokens_per_param": tokens_seen / counts.n,
        "val_loss": val_loss,
        "val_loss_se": se,
        "val_ppl": float(np.exp(val_loss)),
        "val_tokens": int(val_windows.shape[0] * (val_windows.shape[1] - 1)),
        "final_train_loss": curve[-1]["train_loss"],
        "train_s": train_s,
        "eval_s": eval_s,
        "wall_s": time.perf_counter() - t_start,
        "flops_per_token": fpt,
        "train_flops": fpt * tokens_seen,
        "flops_per_s": fpt * tokens_seen / train_s,
        "tokens_per_s": tokens_seen / train_s,
    }
    model.eval()
    return TrainResult(metrics, curve)

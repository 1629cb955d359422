"""The harness that measures alpha, TTFT, TPOT and total time (the quantities of the paper's
Tables 1, 2 and 6) for a (draft, target) pair: prompts decoded by speculative sampling
(:mod:`sdsl.measure.sampling`) into tidy per-iteration and per-request tables, turned into alpha
with the estimators of :mod:`sdsl.measure.estimators` (from accepted counts, from the mean accepted
length, and as the mean of ``beta = sum min(p, q)``, Leviathan et al., Corollary 3.6), with a
cluster bootstrap over prompts and the constant-alpha test. Pairs with different tokenizers go
through :mod:`sdsl.measure.universal`; the small local pair is :mod:`sdsl.measure.local`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdsl.measure.estimators import (
    AlphaEstimate,
    alpha_bootstrap,
    alpha_from_accepted,
    alpha_from_mean_tokens,
    constant_alpha_test,
)
from sdsl.measure.local import load_model, load_tokenizer
from sdsl.measure.sampling import check_same_vocabulary, speculative_generate

if TYPE_CHECKING:  # pragma: no cover
    pass

__all__ = [
    "AcceptanceRun",
    "measure_acceptance",
    "summarize_measurement",
    "model_perplexity",
    "acceptance_row",
]

ITERATION_COLUMNS = ["gamma", "prompt_id", "iteration", "drafted", "accepted", "tokens", "evaluated", "beta_sum"]
REQUEST_COLUMNS = ["gamma", "prompt_id", "prompt_tokens", "new_tokens", "iterations", "ttft_s", "tpot_s", "ttot_s"]


# --------------------------------------------------------------------------- measuring
@dataclass
class AcceptanceRun:
    """Result of :func:`measure_acceptance`: a tidy per-iteration table (columns
    ``ITERATION_COLUMNS``), a per-request table (``REQUEST_COLUMNS``) and the run's settings."""

    iterations: pd.DataFrame
    requests: pd.DataFrame
    settings: dict


def _seed_for(seed: int, *keys: int) -> int:
    return int(np.random.SeedSequence([int(seed), *map(int, keys)]).generate_state(1)[0])


def _gamma_list(gammas: Sequence[int]) -> list[int]:
    out = [int(g) for g in np.atleast_1d(gammas)]
    if not out or min(out) < 1:
        raise ValueError(f"gammas must be draft lengths >= 1, got {out!r}")
    return out


def _record(
    generate, gammas: list[int], encoded: list[list[int]], *, desc: str, progress: bool, timed: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``iterations`` and ``requests`` tables of ``generate(gamma, prompt_id, ids)`` (a
    :class:`~sdsl.measure.sampling.GenerationResult`) over every draft length and prompt; TTFT and
    TPOT are NaN unless ``timed``."""
    from tqdm.auto import tqdm

    iters, reqs = [], []
    bar = tqdm(total=len(gammas) * len(encoded), desc=desc, disable=not progress)
    for g in gammas:
        for j, ids in enumerate(encoded):
            r = generate(g, j, ids)
            for i, (d, a, e, b) in enumerate(zip(r.drafted, r.accepted, r.evaluated, r.beta_sum)):
                iters.append((g, j, i, d, a, a + 1, e, b))
            ttft, tpot = (r.ttft_s, r.tpot_s) if timed else (np.nan, np.nan)
            reqs.append((g, j, r.prompt_tokens, len(r.tokens), len(r.drafted), ttft, tpot, r.ttot_s))
            bar.update(1)
    bar.close()
    return pd.DataFrame(iters, columns=ITERATION_COLUMNS), pd.DataFrame(reqs, columns=REQUEST_COLUMNS)


def _settings(
    draft: Any,
    target: Any,
    gammas: list[int],
    *,
    temperature: float,
    top_k: int,
    top_p: float,
    max_new_tokens: int,
    seed: int,
    n_prompts: int,
) -> dict[str, Any]:
    """The run's settings, as :attr:`AcceptanceRun.settings` records them."""

    def name(m: Any) -> str:
        return str(m) if isinstance(m, (str, os.PathLike)) else type(m).__name__

    return {
        "draft": name(draft),
        "target": name(target),
        "gammas": gammas,
        "temperature": float(temperature),
        "top_k": int(top_k),
        "top_p": float(top_p),
        "max_new_tokens": int(max_new_tokens),
        "seed": int(seed),
        "n_prompts": int(n_prompts),
    }


def measure_acceptance(
    draft: Any,
    target: Any,
    prompts: Sequence[str],
    *,
    gammas: Sequence[int] = (4,),
    temperature: float = 0.0,
    max_new_tokens: int = 32,
    seed: int = 0,
    tokenizer: Any = None,
    draft_tokenizer: Any = None,
    progress: bool = True,
    top_k: int = 0,
    top_p: float = 1.0,
) -> AcceptanceRun:
    """Run speculative decoding of every prompt at every draft length and record what Tables 1,
    2 and 6 of the paper need: per iteration the drafted and accepted counts, per request TTFT,
    TPOT and total time.

    ``draft``, ``target``: local paths, hub names or loaded models; ``tokenizer``: defaults to the
    target's (loaded from its path); ``draft_tokenizer``: defaults to the draft's when it is a path
    (used only to check the vocabularies agree). Generation runs to ``max_new_tokens`` (EOS is not
    a stop, so every prompt contributes the same number of tokens). Each (gamma, prompt) gets its
    own ``torch.Generator`` seeded from ``seed``. ``progress`` shows a ``tqdm.auto`` bar.
    ``top_k`` / ``top_p``: the sampling filters of the server being modelled (0 / 1: off).
    """
    import torch

    if not prompts:
        raise ValueError("prompts is empty")
    gammas = _gamma_list(gammas)
    tok = load_tokenizer(tokenizer if tokenizer is not None else target)
    dtok = draft_tokenizer
    if dtok is None and isinstance(draft, (str, os.PathLike)):
        dtok = load_tokenizer(draft)
    dmodel, tmodel = load_model(draft), load_model(target)
    vocab = check_same_vocabulary(dmodel, tmodel, dtok, tok if dtok is not None else None)
    encoded = [tok(p)["input_ids"] for p in prompts]

    def generate(g: int, j: int, ids: list[int]):
        return speculative_generate(
            tmodel,
            dmodel,
            ids,
            gamma=g,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            generator=torch.Generator().manual_seed(_seed_for(seed, g, j)),
            vocab_size=vocab,
            top_k=top_k,
            top_p=top_p,
        )

    iterations, requests = _record(generate, gammas, encoded, desc="speculative decoding", progress=progress)
    settings = _settings(
        draft,
        target,
        gammas,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        max_new_tokens=max_new_tokens,
        seed=seed,
        n_prompts=len(prompts),
    )
    return AcceptanceRun(iterations, requests, settings)


def summarize_measurement(
    m: AcceptanceRun, rng: np.random.Generator, *, level: float = 0.95, n_resamples: int = 2000
) -> pd.DataFrame:
    """One row per draft length: alpha by the truncated-geometric MLE (profile interval), by the
    cluster bootstrap over prompts, by inverting the mean tokens per iteration, and directly as
    the mean of ``sum min(p, q)`` over the same evaluated positions (Leviathan et al., Corollary
    3.6, with a cluster-robust normal interval), the constant-alpha chi-square p-value, and the
    mean TTFT / TPOT / TTOT over requests with their 95 % margins of error (t interval over
    prompts, like the paper's Table 6)."""
    from scipy import stats

    rows = []
    for g, it in m.iterations.groupby("gamma", sort=True):
        it = it[it["drafted"] > 0]
        mle = alpha_from_accepted(it["accepted"], it["drafted"], level=level)
        boot = alpha_bootstrap(
            it["accepted"], it["drafted"], it["prompt_id"], rng, level=level, n_resamples=n_resamples
        )
        full = it[it["drafted"] == g]
        mean_tok = alpha_from_mean_tokens(full["tokens"].mean(), g, len(full), level=level) if len(full) else None
        # direct estimate: ratio of sums over prompts, cluster-robust SE
        per = it.groupby("prompt_id")[["beta_sum", "evaluated"]].sum()
        beta = float(per["beta_sum"].sum() / per["evaluated"].sum())
        resid = per["beta_sum"] - beta * per["evaluated"]
        k = len(per)
        se_beta = float(np.sqrt(k / max(k - 1, 1) * np.sum(resid**2)) / per["evaluated"].sum())
        gof = constant_alpha_test(it["accepted"], it["drafted"])
        rq = m.requests[m.requests["gamma"] == g]
        row = {
            "gamma": int(g),
            "n_prompts": int(rq.shape[0]),
            "iterations": int(len(it)),
            "evaluated": mle.trials,
            "accepted": mle.accepted,
            "alpha": mle.alpha,
            "se": mle.se,
            "ci_low": mle.ci_low,
            "ci_high": mle.ci_high,
            "boot_se": boot.se,
            "boot_ci_low": boot.ci_low,
            "boot_ci_high": boot.ci_high,
            "alpha_mean_tokens": mean_tok.alpha if mean_tok else np.nan,
            "alpha_mean_tokens_se": mean_tok.se if mean_tok else np.nan,
            "alpha_min_pq": beta,
            "alpha_min_pq_se": se_beta,
            "mean_tokens_per_iteration": float(it["tokens"].mean()),
            "gof_chi2": gof.statistic,
            "gof_dof": gof.dof,
            "gof_p": gof.p_value,
        }
        for col, name in (("ttft_s", "ttft"), ("tpot_s", "tpot"), ("ttot_s", "ttot")):
            x = rq[col].dropna().to_numpy()
            row[f"{name}_s"] = float(x.mean()) if x.size else np.nan
            row[f"{name}_moe_s"] = (
                float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
                if x.size > 1
                else np.nan
            )
        rows.append(row)
    return pd.DataFrame(rows)


def model_perplexity(model: Any, tokenizer: Any, texts: Sequence[str]) -> float:
    """Token-level perplexity ``exp(mean NLL)`` of ``model`` on ``texts`` (each scored on its own;
    the first token of each text is context only), like the perplexity columns of Tables 1, 2."""
    import torch

    from sdsl.measure.sampling import model_device

    model, tokenizer = load_model(model), load_tokenizer(tokenizer)
    nll, count = 0.0, 0
    with torch.inference_mode():
        for text in texts:
            ids = tokenizer(text)["input_ids"]
            if len(ids) < 2:
                continue
            x = torch.tensor([ids], device=model_device(model))
            logits = model(input_ids=x).logits[0, :-1].double()
            nll += float(torch.nn.functional.cross_entropy(logits, x[0, 1:], reduction="sum"))
            count += len(ids) - 1
    if count == 0:
        raise ValueError("texts have no token to score (each needs at least two tokens)")
    return float(np.exp(nll / count))


def acceptance_row(
    *,
    target: str,
    draft: str,
    draft_family: str,
    draft_ppl: float,
    target_ppl: float,
    estimate: AlphaEstimate,
    source_table: Any = None,
) -> dict:
    """One row in the format of ``data/acceptance.csv`` (the paper's Tables 1 and 2): ``alpha``
    and ``alpha_hw95``, the half width of the 95 % interval. ``source_table`` is empty (None) for
    one's own measurements; validate with ``sdsl.data.validate(df, "acceptance")``."""
    if estimate.level != 0.95:
        raise ValueError(f"estimate.level must be 0.95 for alpha_hw95, got {estimate.level}")
    return {
        "target": target,
        "draft": draft,
        "draft_family": draft_family,
        "source_table": np.nan if source_table is None else source_table,
        "draft_ppl": float(draft_ppl),
        "target_ppl": float(target_ppl),
        "alpha": float(estimate.alpha),
        "alpha_hw95": float(estimate.half_width),
    }

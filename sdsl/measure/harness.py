"""A speculative-sampling harness that measures alpha, TTFT, TPOT and total time (the quantities
of the paper's Tables 1, 2 and 6), for any pair of Hugging Face causal language models that share a
vocabulary. Optional extra ``measure`` (torch, transformers, tqdm): they are imported only inside
the functions here, so ``import sdsl`` stays light.

Algorithm: speculative sampling (Leviathan, Kalman and Matias 2023, Algorithm 1; Chen et al. 2023),
batch size 1, with a ``transformers.DynamicCache`` for each model. One iteration with draft length
``gamma``:

1. the draft samples ``x_1..x_gamma`` autoregressively from ``q`` (one cached forward per token);
2. the target scores ``[last token, x_1..x_gamma]`` in one cached forward, giving ``p_1..p_{gamma+1}``;
3. ``x_i`` is accepted with probability ``min(1, p_i(x_i) / q_i(x_i))``, in order, until the first
   rejection; on a rejection at position ``n + 1`` the token is resampled from
   ``norm(max(0, p - q))``, and if all ``gamma`` are accepted a bonus token is sampled from
   ``p_{gamma+1}``; both caches are cropped back to the accepted prefix.

Greedy decoding (``temperature = 0``) is the limit of one-hot ``p`` and ``q``: ``x_i`` is accepted
iff it is the target's argmax, and the correction is the target's argmax, so the output is exactly
the target's greedy output. With sampling the output is distributed as the target's (Leviathan et
al., Theorem 3.5); with ``top_k`` / ``top_p`` both models' distributions are warped as servers
sample (:mod:`sdsl.measure.filters`) and the output follows the target's warped distribution. Per
evaluated position the harness also records
``beta = sum_x min(p(x), q(x))``, whose mean is alpha (Leviathan et al., Corollary 3.6): an
independent check of the estimate from accepted counts (:mod:`sdsl.measure.estimators`).

Exactness is guaranteed in float32. In bfloat16 (or float16) a token's logits can depend on how
many tokens the forward pass holds (kernels and reduction orders chosen by the matrix shapes,
typically on GPUs), so verifying ``gamma + 1`` tokens at once and decoding one token at a time can
round differently: near-ties flip and greedy outputs diverge after the first flip (issue 16 reports
568 of 960 greedy tokens agreeing in bfloat16; on the CPU build of torch pinned here the local
pairs agreed on all of them, ``benchmarks/bench_harness.py --dtype bfloat16`` counts it). Sampled
outputs still follow the target up to that rounding; load the models in float32
(``load_model(..., dtype=torch.float32)``) when exactness matters. Models whose cache
cannot be cropped after a rejection (recurrent or linear-attention layers) are refused
(:mod:`sdsl.measure.cache`); pairs with different tokenizers go through
:mod:`sdsl.measure.universal`.

:mod:`sdsl.measure.local` holds the small local draft/target pair (committed under
``data/local_pair``) and the code that builds it, so that tests, the notebook and the benchmark run
without any model hub.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from sdsl.measure.local import load_model, load_tokenizer
from sdsl.measure.estimators import (
    AlphaEstimate,
    alpha_bootstrap,
    alpha_from_accepted,
    alpha_from_mean_tokens,
    constant_alpha_test,
)

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "GenerationResult",
    "Measurement",
    "check_same_vocabulary",
    "autoregressive_generate",
    "speculative_generate",
    "measure_acceptance",
    "summarize_measurement",
    "model_perplexity",
    "acceptance_row",
    "position_rates",
    "accepted_distribution",
    "figure1",
    "figure2",
]

ITERATION_COLUMNS = ["gamma", "prompt_id", "iteration", "drafted", "accepted", "tokens",
                     "evaluated", "beta_sum"]
REQUEST_COLUMNS = ["gamma", "prompt_id", "prompt_tokens", "new_tokens", "iterations", "ttft_s",
                   "tpot_s", "ttot_s"]


def _vocab_size(model) -> int:
    return int(model.get_output_embeddings().weight.shape[0])


def check_same_vocabulary(draft, target, draft_tokenizer=None, target_tokenizer=None) -> int:
    """Refuse pairs that do not share a vocabulary; returns the number of token ids to compare.

    Token-level speculative sampling compares ``p(x)`` and ``q(x)`` for the same token id, so the
    two models must index the same vocabulary: identical token-to-id maps when tokenizers are
    given, and equal output sizes -- except that with identical tokenizers, output layers padded to
    different sizes (Qwen2.5-0.5B scores 151,936 ids, Qwen2.5-72B 152,064) are compared on the
    tokenizer's ids only. Cross-family pairs (OPT drafts for Qwen targets and the reverse, as in
    the paper's Tables 1 and 2) fail here: they need token-level translation or text-level
    verification, a different algorithm with a different acceptance rate.
    """
    vd, vt = _vocab_size(draft), _vocab_size(target)
    if draft_tokenizer is not None and target_tokenizer is not None:
        a, b = draft_tokenizer.get_vocab(), target_tokenizer.get_vocab()
        if a != b:
            only_d = len(set(a) - set(b))
            only_t = len(set(b) - set(a))
            raise ValueError(
                "draft and target vocabularies differ (tokenizers: draft has "
                f"{len(a)} tokens, target {len(b)}; {only_d} only in the draft, {only_t} only in "
                "the target, or the same tokens with different ids): token-level speculative "
                "sampling needs a shared vocabulary")
        n = max(b.values()) + 1 if b else 0
        if vd != vt and min(vd, vt) >= n:
            return n
    if vd != vt:
        raise ValueError(
            f"draft and target vocabularies differ: the draft scores {vd} tokens, the target "
            f"{vt}; token-level speculative sampling needs a shared vocabulary")
    return vt


# --------------------------------------------------------------------------- decoding
def _probs(logits: "torch.Tensor", temperature: float, top_k: int = 0, top_p: float = 1.0) -> "torch.Tensor":
    """Next-token distributions (float64); one-hot argmax when ``temperature == 0``; top-k / top-p
    warping (:func:`sdsl.measure.filters.warped_probs`) when either is on."""
    import torch

    logits = logits.double()
    if temperature == 0.0:
        out = torch.zeros_like(logits)
        out.scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)
        return out
    if top_k or top_p < 1.0:
        from sdsl.measure.filters import warped_probs

        return warped_probs(logits, temperature, top_k, top_p)
    return torch.softmax(logits / temperature, dim=-1)


def _sample(probs: "torch.Tensor", temperature: float, generator: "torch.Generator") -> int:
    import torch

    if temperature == 0.0:
        return int(probs.argmax())
    return int(torch.multinomial(probs, 1, generator=generator))


def _crop_to(cache, length: int) -> None:
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)


_CACHE_KWARG: dict[type, str] = {}


def _cache_kwarg(model) -> str:
    """``cache`` (transformers >= 5.2x) or ``past_key_values`` (older, and most architectures)."""
    cls = type(model)
    if cls not in _CACHE_KWARG:
        import inspect

        params = inspect.signature(model.forward).parameters
        _CACHE_KWARG[cls] = "cache" if "cache" in params else "past_key_values"
    return _CACHE_KWARG[cls]


def _forward(model, tokens: list[int], cache) -> "torch.Tensor":
    import torch

    out = model(input_ids=torch.tensor([tokens]), use_cache=True, **{_cache_kwarg(model): cache})
    return out.logits[0]


def _check_decoding_args(max_new_tokens: int, temperature: float) -> tuple[int, float]:
    if int(max_new_tokens) < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens!r}")
    t = float(temperature)
    if not np.isfinite(t) or t < 0:
        raise ValueError(f"temperature must be >= 0 (0: greedy), got {temperature!r}")
    return int(max_new_tokens), t


@dataclass
class GenerationResult:
    """One prompt's generation: the new tokens, per-iteration counts and timings (seconds)."""

    tokens: list[int]
    drafted: list[int] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)
    evaluated: list[int] = field(default_factory=list)
    beta_sum: list[float] = field(default_factory=list)
    ttft_s: float = float("nan")
    ttot_s: float = float("nan")
    prompt_tokens: int = 0

    @property
    def tpot_s(self) -> float:
        """Time per output token after the first: ``(TTOT - TTFT) / (new tokens - 1)``."""
        n = len(self.tokens)
        return (self.ttot_s - self.ttft_s) / (n - 1) if n > 1 else float("nan")


def autoregressive_generate(model, input_ids: Sequence[int], *, max_new_tokens: int,
                            temperature: float = 0.0, generator=None,
                            eos_token_id: int | None = None, top_k: int = 0,
                            top_p: float = 1.0) -> GenerationResult:
    """Plain decoding with a KV cache, batch size 1 (the baseline; same sampling as the harness,
    ``top_k`` / ``top_p`` included)."""
    import torch
    from transformers import DynamicCache

    from sdsl.measure.filters import check_filters

    max_new_tokens, temperature = _check_decoding_args(max_new_tokens, temperature)
    top_k, top_p = check_filters(top_k, top_p)
    generator = generator if generator is not None else torch.Generator().manual_seed(0)
    seq = [int(t) for t in input_ids]
    if not seq:
        raise ValueError("input_ids is empty: a prompt of at least one token is needed")
    res = GenerationResult(tokens=[], prompt_tokens=len(seq))
    t0 = time.perf_counter()
    with torch.inference_mode():
        cache = DynamicCache()
        feed = seq
        while len(res.tokens) < max_new_tokens:
            logits = _forward(model, feed, cache)
            tok = _sample(_probs(logits[-1], temperature, top_k, top_p), temperature, generator)
            res.tokens.append(tok)
            if len(res.tokens) == 1:
                res.ttft_s = time.perf_counter() - t0
            if eos_token_id is not None and tok == eos_token_id:
                break
            feed = [tok]
    res.ttot_s = time.perf_counter() - t0
    return res


def speculative_generate(target, draft, input_ids: Sequence[int], *, gamma: int,
                         max_new_tokens: int, temperature: float = 0.0, generator=None,
                         eos_token_id: int | None = None,
                         vocab_size: int | None = None, top_k: int = 0,
                         top_p: float = 1.0) -> GenerationResult:
    """Speculative sampling (Leviathan et al. 2023, Algorithm 1), batch size 1, KV caches for both
    models (module docstring). ``temperature = 0`` is greedy. ``generator`` is a
    ``torch.Generator`` (seeded: reproducible). The first token comes from the target's prefill
    (both models prefill the prompt: TTFT); every later iteration drafts
    ``min(gamma, tokens still to produce - 1)`` tokens, so no token beyond ``max_new_tokens`` is
    generated; iterations that drafted 0 tokens are plain target steps and are recorded with
    ``drafted = 0``. Returns the new tokens, per-iteration ``drafted``, ``accepted`` (excluding the
    bonus/correction token), ``evaluated`` positions and ``beta_sum`` (``sum min(p, q)`` over the
    evaluated positions), and TTFT / TTOT. ``vocab_size``: compare only the first ids (from
    :func:`check_same_vocabulary` with tokenizers, for padded output layers); default: the
    models' output sizes, which must be equal. ``top_k`` / ``top_p`` warp both models' distributions
    (:mod:`sdsl.measure.filters`); the output then follows the target's warped distribution. Exact
    in float32 (module docstring: in bfloat16 verification can round differently from one-token
    decoding). A model whose cache cannot be cropped is refused (:mod:`sdsl.measure.cache`).
    """
    import torch
    from transformers import DynamicCache

    from sdsl.measure.cache import check_croppable_cache, check_croppable_model
    from sdsl.measure.filters import check_filters

    max_new_tokens, temperature = _check_decoding_args(max_new_tokens, temperature)
    top_k, top_p = check_filters(top_k, top_p)
    check_croppable_model(target, "target")
    check_croppable_model(draft, "draft")
    if int(gamma) < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma!r}")
    gamma = int(gamma)
    vocab = check_same_vocabulary(draft, target) if vocab_size is None else int(vocab_size)
    generator = generator if generator is not None else torch.Generator().manual_seed(0)
    seq = [int(t) for t in input_ids]
    if not seq:
        raise ValueError("input_ids is empty: a prompt of at least one token is needed")
    res = GenerationResult(tokens=[], prompt_tokens=len(seq))
    new = res.tokens
    t0 = time.perf_counter()
    with torch.inference_mode():
        tcache, dcache = DynamicCache(), DynamicCache()
        p0 = _probs(_forward(target, seq, tcache)[-1, :vocab], temperature, top_k, top_p)
        _forward(draft, seq, dcache)  # draft prefill, so TTFT covers both models
        check_croppable_cache(tcache, "target", target)
        check_croppable_cache(dcache, "draft", draft)
        first = _sample(p0, temperature, generator)
        new.append(first)
        seq.append(first)
        res.ttft_s = time.perf_counter() - t0
        t_len, d_len = len(seq) - 1, len(seq) - 1  # tokens held by each cache
        while len(new) < max_new_tokens and not (eos_token_id is not None and new[-1] == eos_token_id):
            g = min(gamma, max_new_tokens - len(new) - 1)
            drafts: list[int] = []
            qs = []
            feed = seq[d_len:]
            for _ in range(g):
                q = _probs(_forward(draft, feed, dcache)[-1, :vocab], temperature, top_k, top_p)
                x = _sample(q, temperature, generator)
                drafts.append(x)
                qs.append(q)
                feed = [x]
            d_len = len(seq) + max(g - 1, 0) if g else d_len
            p = _probs(_forward(target, seq[t_len:] + drafts, tcache)[-(g + 1):, :vocab], temperature, top_k, top_p)
            n = 0
            beta = 0.0
            for i in range(g):
                x = drafts[i]
                beta += float(torch.minimum(p[i], qs[i]).sum())
                if temperature == 0.0:
                    ok = bool(p[i, x] == 1.0)
                else:
                    r = float(torch.rand((), generator=generator, dtype=torch.float64))
                    ok = r * float(qs[i][x]) < float(p[i, x])  # r < p/q without dividing
                if not ok:
                    break
                n += 1
            if n < g:
                resid = torch.clamp(p[n] - qs[n], min=0.0)
                total = float(resid.sum())
                last = _sample(resid / total if total > 0 else p[n], temperature, generator) \
                    if temperature > 0 else int(p[n].argmax())
            else:
                last = _sample(p[g], temperature, generator)
            produced = drafts[:n] + [last]
            base = len(seq)
            seq.extend(produced)
            new.extend(produced)
            t_len = base + n  # target cache held seq + all drafts: keep the accepted prefix
            _crop_to(tcache, t_len)
            if g:
                d_len = min(d_len, base + n)
                _crop_to(dcache, d_len)
            res.drafted.append(g)
            res.accepted.append(n)
            res.evaluated.append(min(n + 1, g))
            res.beta_sum.append(beta)
        if eos_token_id is not None and eos_token_id in new:
            del new[new.index(eos_token_id) + 1:]
    res.ttot_s = time.perf_counter() - t0
    return res


# --------------------------------------------------------------------------- measuring
@dataclass
class Measurement:
    """Result of :func:`measure_acceptance`: a tidy per-iteration table (columns
    ``ITERATION_COLUMNS``), a per-request table (``REQUEST_COLUMNS``) and the run's settings."""

    iterations: pd.DataFrame
    requests: pd.DataFrame
    settings: dict


def _seed_for(seed: int, *keys: int) -> int:
    return int(np.random.SeedSequence([int(seed), *map(int, keys)]).generate_state(1)[0])


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
) -> Measurement:
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
    from tqdm.auto import tqdm

    if not prompts:
        raise ValueError("prompts is empty")
    gammas = [int(g) for g in np.atleast_1d(gammas)]
    if not gammas or min(gammas) < 1:
        raise ValueError(f"gammas must be draft lengths >= 1, got {gammas!r}")
    tok = load_tokenizer(tokenizer if tokenizer is not None else target)
    dtok = draft_tokenizer
    if dtok is None and isinstance(draft, (str, os.PathLike)):
        dtok = load_tokenizer(draft)
    dmodel, tmodel = load_model(draft), load_model(target)
    vocab = check_same_vocabulary(dmodel, tmodel, dtok, tok if dtok is not None else None)
    encoded = [tok(p)["input_ids"] for p in prompts]
    iters, reqs = [], []
    bar = tqdm(total=len(gammas) * len(prompts), desc="speculative decoding", disable=not progress)
    for g in gammas:
        for j, ids in enumerate(encoded):
            gen = torch.Generator().manual_seed(_seed_for(seed, g, j))
            r = speculative_generate(tmodel, dmodel, ids, gamma=g, max_new_tokens=max_new_tokens,
                                     temperature=temperature, generator=gen, vocab_size=vocab,
                                     top_k=top_k, top_p=top_p)
            for i, (d, a, e, b) in enumerate(zip(r.drafted, r.accepted, r.evaluated, r.beta_sum)):
                iters.append((g, j, i, d, a, a + 1, e, b))
            reqs.append((g, j, r.prompt_tokens, len(r.tokens), len(r.drafted), r.ttft_s, r.tpot_s,
                         r.ttot_s))
            bar.update(1)
    bar.close()
    settings = {"draft": str(draft) if isinstance(draft, (str, os.PathLike)) else type(draft).__name__,
                "target": str(target) if isinstance(target, (str, os.PathLike)) else type(target).__name__,
                "gammas": gammas, "temperature": float(temperature), "top_k": int(top_k),
                "top_p": float(top_p),
                "max_new_tokens": int(max_new_tokens), "seed": int(seed), "n_prompts": len(prompts)}
    return Measurement(pd.DataFrame(iters, columns=ITERATION_COLUMNS),
                       pd.DataFrame(reqs, columns=REQUEST_COLUMNS), settings)


def summarize_measurement(m: Measurement, rng: np.random.Generator, *, level: float = 0.95,
                          n_resamples: int = 2000) -> pd.DataFrame:
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
        boot = alpha_bootstrap(it["accepted"], it["drafted"], it["prompt_id"], rng, level=level,
                               n_resamples=n_resamples)
        full = it[it["drafted"] == g]
        mean_tok = alpha_from_mean_tokens(full["tokens"].mean(), g, len(full), level=level) \
            if len(full) else None
        # direct estimate: ratio of sums over prompts, cluster-robust SE
        per = it.groupby("prompt_id")[["beta_sum", "evaluated"]].sum()
        beta = float(per["beta_sum"].sum() / per["evaluated"].sum())
        resid = per["beta_sum"] - beta * per["evaluated"]
        k = len(per)
        se_beta = float(np.sqrt(k / max(k - 1, 1) * np.sum(resid ** 2)) / per["evaluated"].sum())
        gof = constant_alpha_test(it["accepted"], it["drafted"])
        rq = m.requests[m.requests["gamma"] == g]
        row = {
            "gamma": int(g), "n_prompts": int(rq.shape[0]), "iterations": int(len(it)),
            "evaluated": mle.trials, "accepted": mle.accepted,
            "alpha": mle.alpha, "se": mle.se, "ci_low": mle.ci_low, "ci_high": mle.ci_high,
            "boot_se": boot.se, "boot_ci_low": boot.ci_low, "boot_ci_high": boot.ci_high,
            "alpha_mean_tokens": mean_tok.alpha if mean_tok else np.nan,
            "alpha_mean_tokens_se": mean_tok.se if mean_tok else np.nan,
            "alpha_min_pq": beta, "alpha_min_pq_se": se_beta,
            "mean_tokens_per_iteration": float(it["tokens"].mean()),
            "gof_chi2": gof.statistic, "gof_dof": gof.dof, "gof_p": gof.p_value,
        }
        for col, name in (("ttft_s", "ttft"), ("tpot_s", "tpot"), ("ttot_s", "ttot")):
            x = rq[col].dropna().to_numpy()
            row[f"{name}_s"] = float(x.mean()) if x.size else np.nan
            row[f"{name}_moe_s"] = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1)
                                         / np.sqrt(x.size)) if x.size > 1 else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def model_perplexity(model: Any, tokenizer: Any, texts: Sequence[str]) -> float:
    """Token-level perplexity ``exp(mean NLL)`` of ``model`` on ``texts`` (each scored on its own;
    the first token of each text is context only), like the perplexity columns of Tables 1, 2."""
    import torch

    model, tokenizer = load_model(model), load_tokenizer(tokenizer)
    nll, count = 0.0, 0
    with torch.inference_mode():
        for text in texts:
            ids = tokenizer(text)["input_ids"]
            if len(ids) < 2:
                continue
            x = torch.tensor([ids])
            logits = model(input_ids=x).logits[0, :-1].double()
            nll += float(torch.nn.functional.cross_entropy(logits, x[0, 1:], reduction="sum"))
            count += len(ids) - 1
    if count == 0:
        raise ValueError("texts have no token to score (each needs at least two tokens)")
    return float(np.exp(nll / count))


def acceptance_row(*, target: str, draft: str, draft_family: str, draft_ppl: float,
                   target_ppl: float, estimate: AlphaEstimate,
                   source_table: Any = None) -> dict:
    """One row in the format of ``data/acceptance.csv`` (the paper's Tables 1 and 2): ``alpha``
    and ``alpha_hw95``, the half width of the 95 % interval. ``source_table`` is empty (None) for
    one's own measurements; validate with ``sdsl.data.validate(df, "acceptance")``."""
    if estimate.level != 0.95:
        raise ValueError(f"estimate.level must be 0.95 for alpha_hw95, got {estimate.level}")
    return {"target": target, "draft": draft, "draft_family": draft_family,
            "source_table": np.nan if source_table is None else source_table, "draft_ppl": float(draft_ppl),
            "target_ppl": float(target_ppl), "alpha": float(estimate.alpha),
            "alpha_hw95": float(estimate.half_width)}


# --------------------------------------------------------------------------- tables and figures
def _finish_layout(fig):
    """Solve the layout once (constrained layout under ``sdsl.book.style.use()``, else tight layout)
    and keep it, so that the SVG, the PNG and the notebook's display do not solve it again."""
    from sdsl.book.style import fix_layout

    if fig.get_layout_engine() is None:
        fig.tight_layout()
        return fig
    return fix_layout(fig)


def position_rates(iterations: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    """Per draft length and position (1-based): evaluated trials, accepted, the conditional
    acceptance rate and its Wilson interval; plus the pooled MLE ``alpha`` of that draft length.
    Under the constant-alpha model every rate equals alpha (:func:`sdsl.measure.estimators.
    constant_alpha_test`)."""
    from sdsl.measure.estimators import _binomial_interval, position_counts

    rows = []
    for g, it in iterations.groupby("gamma", sort=True):
        it = it[it["drafted"] > 0]
        trials, acc = position_counts(it["accepted"], it["drafted"])
        alpha = float(acc.sum() / trials.sum())
        for i, (t, a) in enumerate(zip(trials, acc), start=1):
            if t == 0:
                continue
            _, _, lo, hi = _binomial_interval(int(a), int(t), level, "wilson")
            rows.append({"gamma": int(g), "position": i, "trials": int(t), "accepted": int(a),
                         "rate": a / t, "ci_low": lo, "ci_high": hi, "alpha": alpha})
    return pd.DataFrame(rows)


def accepted_distribution(iterations: pd.DataFrame) -> pd.DataFrame:
    """Observed frequency of the accepted count ``k`` per draft length (full-length drafts only)
    beside the truncated geometric law at the MLE: ``alpha**k (1 - alpha)`` for ``k < gamma`` and
    ``alpha**gamma`` for ``k = gamma``."""
    rows = []
    for g, it in iterations.groupby("gamma", sort=True):
        full = it[it["drafted"] == g]
        if full.empty:
            continue
        a = alpha_from_accepted(full["accepted"], g).alpha
        counts = np.bincount(full["accepted"].to_numpy(), minlength=g + 1)
        for k in range(g + 1):
            expected = a ** k * (1 - a) if k < g else a ** g
            rows.append({"gamma": int(g), "k": k, "observed": counts[k] / counts.sum(),
                         "expected": expected, "iterations": int(counts.sum())})
    return pd.DataFrame(rows)


def figure1(iterations: pd.DataFrame, *, level: float = 0.95):
    """Conditional acceptance rate by draft position (Wilson intervals) against the constant alpha
    of the truncated geometric model (dashed), one colour per draft length."""
    import matplotlib.pyplot as plt

    rates = position_rates(iterations, level=level)
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    for j, (g, r) in enumerate(rates.groupby("gamma")):
        colour = f"C{j}"
        off = (j - (rates["gamma"].nunique() - 1) / 2) * 0.08
        ax.errorbar(r["position"] + off, r["rate"], yerr=[r["rate"] - r["ci_low"], r["ci_high"] - r["rate"]],
                    fmt="o", color=colour, capsize=3, label=f"$\\gamma$ = {g}")
        ax.axhline(r["alpha"].iloc[0], color=colour, ls="--", lw=1)
    ax.set_xlabel("draft position $i$")
    ax.set_ylabel("P(accept at $i$ | accepted before $i$)")
    ax.set_xticks(sorted(rates["position"].unique()))
    ax.legend(frameon=False)
    return _finish_layout(fig)


def figure2(iterations: pd.DataFrame):
    """Observed distribution of the accepted count ``k`` (bars) against the truncated geometric
    law at the MLE (markers), one panel per draft length."""
    import matplotlib.pyplot as plt

    dist = accepted_distribution(iterations)
    gammas = sorted(dist["gamma"].unique())
    fig, axes = plt.subplots(1, len(gammas), figsize=(3.2 * len(gammas), 3.0), squeeze=False)
    for ax, g in zip(axes[0], gammas):
        d = dist[dist["gamma"] == g]
        ax.bar(d["k"], d["observed"], color="0.75", label="observed")
        ax.plot(d["k"], d["expected"], "o", color="C3", label="truncated geometric")
        ax.set_xlabel(f"accepted tokens $k$ ($\\gamma$ = {g})")
        ax.set_xticks(d["k"])
    axes[0][0].set_ylabel("fraction of iterations")
    axes[0][0].legend(frameon=False, fontsize="small")
    return _finish_layout(fig)

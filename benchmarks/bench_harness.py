"""Speed of the speculative-sampling harness against plain decoding and transformers' assisted
generation, on one local draft/target pair, and the speedup Theorem 3.8 of Leviathan et al. (2023)
predicts from the measured alpha and cost ratio c.

    /tmp/probe/bin/python benchmarks/bench_harness.py [--gamma 4] [--prompts 10] [--new-tokens 64]

Builds (offline, seeded) a target of 6 layers x 256 and a draft that is the target's first layer
(same embeddings and head, briefly fine-tuned), both trained for seconds on data/prompts.txt, so the
draft is much cheaper than the target. Everything runs greedy, batch size 1, one torch thread
(oversubscribed CPUs make multi-threaded small matmuls erratic); the methods take turns prompt by
prompt and the fastest of --repeats is kept per method and prompt, so that background load on a
shared machine biases none of them. Each method decodes the same
prompts to the same number of new tokens (EOS is an ordinary token everywhere: transformers gets
``eos_token_id=None``); tokens/s is new tokens over wall time summed over prompts (best of
--repeats). transformers' assisted generation reads its draft length from the *draft's*
``generation_config`` (``num_assistant_tokens`` passed to ``target.generate`` is ignored in 5.x):
it is set there, with the ``"constant"`` schedule and the confidence early stop off
(:func:`sdsl.measure.universal.configure_assistant`), and the drafted tokens of every iteration
are recorded and printed for each method, so that the methods are compared at the same gamma.
Theorem 3.8: expected walltime improvement
``(1 - alpha**(gamma+1)) / ((1 - alpha) (gamma c + 1))`` with ``c`` the draft's cost per token
relative to the target's; the theorem charges the target's verification of gamma + 1 tokens as one
step, which on a CPU it is not, so a second prediction uses the measured verification cost, and a
third also counts the draft's catch-up forward: after an iteration that accepted every draft, the
draft's next first forward holds two tokens (its last draft and the bonus token), which costs more
than the one-token step that c measures (a share alpha**gamma of iterations; all of them when the
greedy output repeats itself and alpha = 1).
No assertion: a benchmark reports, tests assert.

    /tmp/probe/bin/python benchmarks/bench_harness.py --phases

times instead the phases of the measure_acceptance chapter with its default parameters (build and
train the local pair with ``build_local_pair``'s defaults, load it, measure, summarize, perplexities),
one torch thread, and prints the alpha it measures two ways.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch
from transformers import DynamicCache

from sdsl.measure import harness as H
from sdsl.measure import local as L
from sdsl.measure import sampling as S
from sdsl.measure.estimators import alpha_from_accepted
from sdsl.measure.universal import configure_assistant, record_assisted_iterations
from sdsl.model.throughput import expected_tokens
from sdsl.paths import DATA


def _time_forward(model, n_tokens: int, context: int, reps: int) -> float:
    """Fastest of ``reps`` cached forwards of ``n_tokens`` tokens after ``context`` tokens (the
    minimum is the least perturbed by other processes on a shared CPU)."""
    kwarg = S._cache_kwarg(model)
    times = []
    ids = torch.randint(2, 10, (1, context))
    step = torch.randint(2, 10, (1, n_tokens))
    with torch.inference_mode():
        for _ in range(reps):
            cache = DynamicCache()
            model(input_ids=ids, use_cache=True, **{kwarg: cache})
            t = time.perf_counter()
            model(input_ids=step, use_cache=True, **{kwarg: cache})
            times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gamma", type=int, default=4)
    ap.add_argument("--prompts", type=int, default=10)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--target-layers", type=int, default=6)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--train-steps", type=int, default=120)
    ap.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 1.0])
    ap.add_argument(
        "--dtype",
        choices=["float32", "bfloat16"],
        default="float32",
        help="load both models in this dtype (bfloat16: greedy outputs diverge, see sdsl.measure.harness)",
    )
    ap.add_argument(
        "--phases", action="store_true", help="time the measure_acceptance chapter's phases at its defaults instead"
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.phases:
        return phases(threads=args.threads)

    texts = L.read_prompts(DATA / "prompts.txt")
    prompts = texts[: args.prompts]
    t0 = time.perf_counter()
    folder = tempfile.mkdtemp(prefix="sdsl-bench-")
    draft_path, target_path = L.build_local_pair(
        folder,
        texts=texts,
        seed=args.seed,
        target_layers=args.target_layers,
        target_width=args.width,
        draft_layers=1,
        draft_width=None,
        n_head=4,
        train_steps=args.train_steps,
        draft_train_steps=30,
        lr=1e-2,
    )
    build_s = time.perf_counter() - t0
    dtype = getattr(torch, args.dtype)
    draft, target = L.load_model(draft_path, dtype=dtype), L.load_model(target_path, dtype=dtype)
    tok = L.load_tokenizer(target_path)
    encoded = [tok(p)["input_ids"] for p in prompts]
    n_new = args.new_tokens
    gamma = args.gamma
    n_params = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    print(
        f"pair: target {n_params(target) / 1e6:.2f}M params ({args.target_layers} layers x {args.width}), "
        f"draft {n_params(draft) / 1e6:.2f}M (1 layer); built and trained in {build_s:.1f} s"
    )
    print(
        f"{len(encoded)} prompts x {n_new} new tokens, batch 1, {args.threads} thread(s), "
        f"best of {args.repeats}, {args.dtype}"
    )
    # cost ratio c (Leviathan et al.: time of one draft step over one target step): in each
    # comparison below from plain decoding with each model through the same KV-cache loop
    # (includes the per-step overhead both pay); here, for reference, from single cached forwards.
    ctx = int(np.mean([len(e) for e in encoded])) + n_new // 2
    t_d1 = _time_forward(draft, 1, ctx, 60)
    t_t1 = _time_forward(target, 1, ctx, 60)
    t_tv = _time_forward(target, gamma + 1, ctx, 60)
    c = t_d1 / t_t1
    c_verify = t_tv / t_t1
    print(
        f"single cached forwards (fastest of 60): draft {t_d1 * 1e3:.2f} ms, target {t_t1 * 1e3:.2f} ms "
        f"(ratio {c:.3f}); verification pass of {gamma + 1} tokens = {c_verify:.2f} x a 1-token "
        "target step"
    )
    results = {"c_forward": c, "c_verify": c_verify}
    for temperature in args.temperatures:
        results[temperature] = _compare(target, draft, tok, encoded, n_new, gamma, temperature, args, c, c_verify)
    return results


def _compare(target, draft, tok, encoded, n_new, gamma, temperature, args, c, c_verify) -> dict:
    total_tokens = n_new * len(encoded)
    sampling = temperature > 0
    gen_kw = dict(do_sample=True, temperature=temperature, top_k=0, top_p=1.0) if sampling else dict(do_sample=False)

    def hf_generate(ids, **kw):
        x = torch.tensor([ids])
        out = target.generate(
            x,
            attention_mask=torch.ones_like(x),
            max_new_tokens=n_new,
            eos_token_id=None,
            pad_token_id=tok.eos_token_id,
            **gen_kw,
            **kw,
        )
        return out[0, len(ids) :].tolist()

    assisted_log: list[tuple[int, int]] = []

    def assisted(ids):
        # the draft length lives on the draft's generation_config (configure_assistant); the
        # recorder appends (drafted, accepted) of every iteration to assisted_log
        with configure_assistant(draft, gamma), record_assisted_iterations(target) as log:
            out = hf_generate(ids, assistant_model=draft)
        assisted_log.extend(log)
        return out

    gen = torch.Generator().manual_seed(args.seed)

    decode_time: list[float] = []  # seconds after the first token, per request of the current method

    def plain(ids):
        r = S.autoregressive_generate(target, ids, max_new_tokens=n_new, temperature=temperature, generator=gen)
        decode_time.append(r.ttot_s - r.ttft_s)
        return r.tokens

    spec_results = []

    def spec(ids):
        r = S.speculative_generate(
            target, draft, ids, gamma=gamma, max_new_tokens=n_new, temperature=temperature, generator=gen
        )
        spec_results.append(r)
        decode_time.append(r.ttot_s - r.ttft_s)
        return r.tokens

    def draft_plain(ids):
        r = S.autoregressive_generate(draft, ids, max_new_tokens=n_new, temperature=temperature, generator=gen)
        decode_time.append(r.ttot_s - r.ttft_s)
        return r.tokens

    kwarg = S._cache_kwarg(target)
    n_verify = max(n_new // (gamma + 1), 1)

    def step_cost(model, n_tokens: int, scored: int, keep: int):
        """One step of the harness's loop alone, timed in that loop: a cached forward of ``n_tokens``
        tokens, the probabilities of the last ``scored``, the cache cropped back to ``keep`` of them."""

        def run(ids):
            cache = DynamicCache()
            with torch.inference_mode():
                model(input_ids=torch.tensor([ids]), use_cache=True, **{kwarg: cache})
                t0 = time.perf_counter()
                for _ in range(n_verify):
                    logits = model(input_ids=torch.tensor([ids[-1:] * n_tokens]), use_cache=True, **{kwarg: cache})
                    S._probs(logits.logits[0][-scored:], temperature)
                    S._crop_to(cache, cache.get_seq_length() - (n_tokens - keep))
                decode_time.append((time.perf_counter() - t0) / n_verify * (n_new - 1))
            return []

        return run

    # the verification of gamma + 1 tokens (the measured cost c_v), and the draft's catch-up step
    # (c_2): after an iteration that accepted every drafted token the draft has not yet seen its
    # last draft, so its next first forward holds two tokens (that draft and the bonus token)
    verify = step_cost(target, gamma + 1, gamma + 1, 1)
    catch_up = step_cost(draft, 2, 1, 0)

    methods = {
        "plain": plain,
        "hf": hf_generate,
        "assisted": assisted,
        "spec": spec,
        "draft_plain": draft_plain,
        "verify": verify,
        "catch_up": catch_up,
    }
    for fn in methods.values():  # warm-up
        fn(encoded[0])
    # round-robin repeats, fastest of each: every method sees the same background load
    best = {k: float("inf") for k in methods}
    best_decode = {k: float("inf") for k in methods}
    outs = {k: [None] * len(encoded) for k in methods}
    # round robin per prompt (every method runs each prompt back to back, so that a change of the
    # background load hits all of them alike), fastest of the repeats per (method, prompt), summed
    per_prompt = {k: np.full((args.repeats, len(encoded)), np.inf) for k in methods}
    per_prompt_decode = {k: np.full((args.repeats, len(encoded)), np.inf) for k in methods}
    for rep in range(args.repeats):
        for j, ids in enumerate(encoded):
            for k, fn in methods.items():
                decode_time.clear()
                t = time.perf_counter()
                outs[k][j] = fn(ids)
                per_prompt[k][rep, j] = time.perf_counter() - t
                if decode_time:
                    per_prompt_decode[k][rep, j] = decode_time[-1]
    for k in methods:
        best[k] = float(per_prompt[k].min(axis=0).sum())
        best_decode[k] = float(per_prompt_decode[k].min(axis=0).sum())
    t_plain, t_hf, t_assist, t_spec = best["plain"], best["hf"], best["assisted"], best["spec"]
    out_plain, out_hf, out_assist, out_spec = outs["plain"], outs["hf"], outs["assisted"], outs["spec"]
    c_plain = best["draft_plain"] / t_plain
    # spec_results holds the harness's last repeat only if it ran last among the harness calls
    spec_results.clear()
    [spec(ids) for ids in encoded]
    last = spec_results[-len(encoded) :]
    assisted_log.clear()
    [assisted(ids) for ids in encoded]
    a_drafted = np.array([d for d, _ in assisted_log], dtype=float)
    a_accepted = np.array([min(a, d) for d, a in assisted_log], dtype=float)
    h_drafted = np.concatenate([r.drafted for r in last]).astype(float)
    h_accepted = np.concatenate([r.accepted for r in last]).astype(float)
    per_iter = {  # (iterations, drafted per iteration, new tokens per target step)
        "plain": (total_tokens, 0.0, 1.0),
        "assisted": (a_drafted.size, float(a_drafted.mean()), total_tokens / max(a_drafted.size, 1)),
        "spec": (h_drafted.size, float(h_drafted.mean()), total_tokens / max(h_drafted.size + len(last), 1)),
    }
    est = alpha_from_accepted(np.concatenate([r.accepted for r in last]), np.concatenate([r.drafted for r in last]))
    beta = sum(sum(r.beta_sum) for r in last) / sum(sum(r.evaluated) for r in last)
    e_tok = float(expected_tokens(est.alpha, gamma))
    c = c_plain  # this run's cost ratio: draft vs target plain decoding, same loop, same load
    predicted = e_tok / (gamma * c + 1.0)  # Theorem 3.8
    predicted_verify = e_tok / (gamma * c + c_verify)
    measured = t_plain / t_spec
    # the decoding phase (after the first token, which both pay as a prefill) with the costs
    # measured in the harness's own loop: c_d per draft token, c_v per verification of gamma + 1
    c_d = best_decode["draft_plain"] / best_decode["plain"]
    c_v = best_decode["verify"] / best_decode["plain"]
    predicted_loop = e_tok / (gamma * c_d + c_v)
    # Theorem 3.8 per iteration with the run's draft lengths (the last iterations of a request
    # draft fewer tokens so as to stop at the budget)
    e_run = float(np.mean(expected_tokens(est.alpha, h_drafted[h_drafted > 0])))
    predicted_run = e_run / (float(h_drafted.mean()) * c_d + c_v)
    # ... and with the draft's catch-up forwards counted: the first draft forward of an iteration
    # that follows one which accepted all its drafts holds 2 tokens, at c_2 instead of c_d
    c_2 = best_decode["catch_up"] / best_decode["plain"]
    catch = np.concatenate(
        [
            np.r_[False, (np.asarray(r.accepted) == np.asarray(r.drafted))[:-1]] & (np.asarray(r.drafted) > 0)
            for r in last
        ]
    )
    predicted_catch = e_run / (float(h_drafted.mean()) * c_d + float(catch.mean()) * (c_2 - c_d) + c_v)
    measured_decode = best_decode["plain"] / best_decode["spec"]
    t_step = best_decode["plain"] / (total_tokens - len(encoded))
    t_iter = best_decode["spec"] / max(h_drafted.size, 1)
    overhead = t_iter - (h_drafted.mean() * c_d + catch.mean() * (c_2 - c_d) + c_v) * t_step

    mode = f"temperature {temperature:g} (sampling)" if sampling else "greedy"
    print(f"\n=== {mode} ===")
    rows = [
        ("plain decoding (sdsl, KV cache)", t_plain),
        ("plain decoding (transformers generate)", t_hf),
        (f"assisted generation (transformers, gamma={gamma})", t_assist),
        (f"speculative sampling (sdsl.measure.harness, gamma={gamma})", t_spec),
    ]
    keys = ["plain", "plain", "assisted", "spec"]
    print(f"{'method':52s} {'time s':>8s} {'tokens/s':>9s} {'vs plain':>9s} {'drafted/iter':>13s} {'tokens/step':>12s}")
    for (name, t), key in zip(rows, keys):
        _, drafted, tps = per_iter[key]
        print(f"{name:52s} {t:8.3f} {total_tokens / t:9.1f} {t_plain / t:9.2f} {drafted:13.2f} {tps:12.2f}")
    a_alpha = alpha_from_accepted(a_accepted, a_drafted) if a_drafted.size else None
    print(
        f"drafted tokens per iteration: assisted {per_iter['assisted'][1]:.2f} over {per_iter['assisted'][0]} "
        f"iterations, harness {per_iter['spec'][1]:.2f} over {per_iter['spec'][0]} (gamma = {gamma}; the last "
        "iterations of a request draft fewer to stop at the token budget)"
    )
    if a_alpha is not None:
        print(
            f"alpha from transformers' assisted iterations = {a_alpha.alpha:.4f} [{a_alpha.ci_low:.4f}, "
            f"{a_alpha.ci_high:.4f}]; harness mean accepted per iteration {h_accepted.mean():.3f}"
        )
    print(f"harness / assisted generation (tokens/s ratio): {t_assist / t_spec:.2f}")
    print(f"harness / transformers plain generate:          {t_hf / t_spec:.2f}")
    if not sampling:
        same = lambda a, b: sum(x == y for x, y in zip(a, b))  # noqa: E731
        print(
            f"greedy outputs identical to plain decoding: harness "
            f"{sum(same(a, b) for a, b in zip(out_spec, out_plain))}/{total_tokens}, assisted "
            f"{sum(same(a, b) for a, b in zip(out_assist, out_plain))}/{total_tokens}, "
            f"transformers plain {sum(same(a, b) for a, b in zip(out_hf, out_plain))}/{total_tokens} tokens"
        )
    print(
        f"alpha (truncated-geometric MLE) = {est.alpha:.4f} [{est.ci_low:.4f}, {est.ci_high:.4f}] "
        f"over {est.trials} evaluated positions; mean sum min(p, q) = {beta:.4f}"
    )
    print(f"cost ratio c in this run (draft / target plain decoding) = {c:.3f}")
    print(f"expected tokens per iteration E(alpha, gamma) = {e_tok:.3f}")
    print(f"speedup predicted by Theorem 3.8, E / (gamma c + 1):              {predicted:.2f}")
    print(f"predicted with the measured verification cost, E / (gamma c + c_v): {predicted_verify:.2f}")
    print(f"speedup measured (harness vs plain decoding):                      {measured:.2f}")
    print(f"measured / predicted (Theorem 3.8 with the measured verification cost):  {measured / predicted_verify:.2f}")
    print(
        f"decoding phase, costs measured in the harness's loop: c = {c_d:.3f} per draft token, c_v = {c_v:.2f} per "
        f"verification of {gamma + 1} tokens (x a plain decoding step of {1e3 * t_step:.2f} ms)"
    )
    print(
        f"  predicted E / (gamma c + c_v) = {predicted_loop:.2f}, measured (plain / harness time per token after "
        f"the first) = {measured_decode:.2f}, ratio {measured_decode / predicted_loop:.2f}"
    )
    print(
        f"  with the run's draft lengths (mean {h_drafted.mean():.2f}, E = {e_run:.3f} tokens per iteration): "
        f"predicted {predicted_run:.2f}, measured / predicted {measured_decode / predicted_run:.2f}"
    )
    print(
        f"  with the draft's 2-token catch-up forward (after {100 * catch.mean():.0f} % of iterations; c_2 = "
        f"{c_2:.3f} against c = {c_d:.3f} for one token): predicted {predicted_catch:.2f}, measured / predicted "
        f"{measured_decode / predicted_catch:.2f}"
    )
    print(
        f"  harness time per iteration {1e3 * t_iter:.2f} ms, of which {1e3 * overhead:.2f} ms beyond the "
        f"forwards and probabilities (acceptance loop, bookkeeping)"
    )
    return {
        "t_plain": t_plain,
        "t_hf": t_hf,
        "t_assisted": t_assist,
        "t_harness": t_spec,
        "alpha": est.alpha,
        "beta": beta,
        "c": c,
        "predicted": predicted,
        "predicted_verify": predicted_verify,
        "measured": measured,
        "c_d": c_d,
        "c_v": c_v,
        "predicted_loop": predicted_loop,
        "predicted_run": predicted_run,
        "measured_decode": measured_decode,
        "c_2": c_2,
        "catch_up_share": float(catch.mean()),
        "predicted_catch": predicted_catch,
        "overhead_s": overhead,
        "drafted_per_iteration": {k: v[1] for k, v in per_iter.items()},
    }


def phases(
    *,
    seed: int = 20260225,
    gammas=(2, 4),
    n_prompts: int = 16,
    max_new_tokens: int = 24,
    n_resamples: int = 2000,
    threads: int = 1,
) -> dict:
    """Wall time of each phase of the measure_acceptance chapter at its default parameters (the
    imports of torch and transformers are outside the timings: they are paid once per kernel)."""
    from transformers import AutoModelForCausalLM, GPT2LMHeadModel  # noqa: F401  (import cost)

    torch.set_num_threads(threads)
    texts = L.read_prompts(DATA / "prompts.txt")
    prompts = texts[:n_prompts]
    times = {}
    t = time.perf_counter()
    draft_path, target_path = L.build_local_pair(tempfile.mkdtemp(prefix="sdsl-bench-"), texts=texts, seed=seed)
    times["build"] = time.perf_counter() - t
    t = time.perf_counter()
    draft, target = L.load_model(draft_path), L.load_model(target_path)
    tok = L.load_tokenizer(target_path)
    times["load"] = time.perf_counter() - t
    t = time.perf_counter()
    m = H.measure_acceptance(
        draft,
        target,
        prompts,
        gammas=list(gammas),
        temperature=1.0,
        max_new_tokens=max_new_tokens,
        seed=seed,
        tokenizer=tok,
        progress=False,
    )
    times["measure"] = time.perf_counter() - t
    t = time.perf_counter()
    summary = H.summarize_measurement(m, np.random.default_rng(seed), n_resamples=n_resamples)
    times["summarize"] = time.perf_counter() - t
    t = time.perf_counter()
    ppl = (H.model_perplexity(draft, tok, prompts), H.model_perplexity(target, tok, prompts))
    times["perplexity"] = time.perf_counter() - t
    for k, v in times.items():
        print(f"{k:12s} {v:6.2f} s")
    print(f"{'total':12s} {sum(times.values()):6.2f} s")
    print(f"perplexity: draft {ppl[0]:.2f}, target {ppl[1]:.2f}")
    for _, r in summary.iterrows():
        print(
            f"gamma {int(r['gamma'])}: {int(r['evaluated'])} evaluated positions, alpha (MLE) "
            f"{r['alpha']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}], cluster bootstrap "
            f"[{r['boot_ci_low']:.4f}, {r['boot_ci_high']:.4f}]; mean sum min(p, q) "
            f"{r['alpha_min_pq']:.4f} (SE {r['alpha_min_pq_se']:.4f}); chi-square p {r['gof_p']:.3g}"
        )
    return {"times": times, "summary": summary}


if __name__ == "__main__":
    main()

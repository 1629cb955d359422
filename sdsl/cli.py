"""The ``sdsl`` command line: every sub-command's options, how it runs and what it prints.

::

    sdsl plan --preset llama-3-70b
    sdsl plan --target-params 70.6e9 --target-tokens 15e12 --draft-tokens 15e12 --json
    sdsl presets [--plan]
    sdsl alpha scrape.txt [--json]            # alpha from a vLLM / llama.cpp / SGLang / TRT-LLM export
    sdsl plan --preset llama-3.1-70b --hardware h200 --dtype fp8 --batch 1,8,64
    sdsl speedup --alpha 0.8 --cost-ratio 0.05 --gamma 5

Bad input prints one line on stderr and exits with status 2, argparse's own usage errors included;
the message is the ``ValueError`` the notebook ``plan_draft`` raises for the same input
(:func:`sdsl.plan.check_inputs`, :mod:`sdsl.validation`), with the parameters named by the flags
typed here (``--n-range``, not ``n_range``). Nothing given is dropped: an option given twice, an
option that the other options make unused (``--seed`` without ``--bootstrap``, the hardware options
without ``--hardware``) and an unknown option are refused. Negative numbers are values
(``--target-params -70e9`` is refused for its sign, not read as an option). ``sdsl --version``
prints the version; ``python -m sdsl`` is the same command.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdsl.validation import EXIT_USAGE, CommandParser

if TYPE_CHECKING:
    from sdsl.plan.deployment import WallClockInputs

__all__ = ["main", "build_parser"]

#: Parameter names of the library whose flag is not the parameter's name with dashes.
_FLAGS = {"n_boot": "--bootstrap", "candidates": "--draft-params", "integer_gamma": "--integer-gamma"}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``sdsl`` (sub-commands ``plan``, ``speedup``, ``presets`` and ``alpha``)."""
    import sdsl

    parser = CommandParser(
        prog="sdsl",
        description=(
            "Speculative Decoding Scaling Laws (arXiv 2603.11053): plan the throughput-optimal draft "
            "size N* for a target model. Sizes are in parameters, data in pre-training tokens; "
            "numbers accept scientific notation (70.6e9)."
        ),
        epilog="Run 'sdsl plan --help' for the planning options.",
    )
    parser.add_argument("--version", action="version", version=f"sdsl {sdsl.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_plan_parser(sub)
    _add_speedup_parser(sub)
    _add_presets_parser(sub)
    _add_alpha_parser(sub)
    _add_steps_parser(sub)
    return parser


def _add_plan_parser(sub: Any) -> None:
    """``sdsl plan``: N* and what it takes to deploy it."""
    p = sub.add_parser(
        "plan",
        help="optimal draft size N*, integer draft length, acceptance rate, wall-clock speedup, engine settings",
        description=(
            "Throughput-optimal draft size N* for a target of M parameters trained on D' tokens, with a "
            "draft of the family trained on D tokens: N* maximises tokens per FLOP "
            "T = E(alpha, gamma*) / (2 N gamma* + 2 M) (the paper's Eq. 9), with alpha from the loss law "
            "and the acceptance plane (Eq. 5). Prints N* (parameters), gamma* (draft tokens per "
            "iteration, continuous and the best integer, with the throughput rounding gives up), alpha (acceptance "
            "rate at N*), T(N*) (tokens per FLOP), the tokens per FLOP ratio T(N*) * 2M (dimensionless; not a "
            "wall-clock speedup), the wall-clock speedup of Theorem 3.8 (Leviathan et al. 2023) with its cost "
            "coefficient, vLLM, SGLang, TensorRT-LLM and llama.cpp settings, and which uncertainties the N* interval "
            "includes."
        ),
    )
    tgt = p.add_argument_group("target (a preset, or its size and tokens; explicit values override the preset)")
    tgt.add_argument(
        "--preset",
        metavar="NAME",
        help="target preset from data/presets.csv, e.g. llama-3-70b ('sdsl presets' lists them)",
    )
    tgt.add_argument("--target-params", metavar="M", help="target size M, in parameters (e.g. 70.6e9)")
    tgt.add_argument("--target-tokens", metavar="D'", help="target pre-training data D', in tokens (e.g. 15e12)")
    p.add_argument(
        "--draft-tokens",
        metavar="D",
        help="draft family's pre-training data D, in tokens (default with --preset: the family's own)",
    )
    p.add_argument(
        "--constants",
        metavar="NAME|E,A,B,a,b",
        default="besiroglu2024",
        help="loss-law constants of L(N, D) = E + A/N^a + B/D^b: 'besiroglu2024' (default), "
        "'hoffmann2022', or five comma-separated numbers E,A,B,a,b (E in nats)",
    )
    p.add_argument(
        "--alpha-source",
        metavar="paper|refit|published|CSV",
        default="paper",
        help="acceptance plane alpha = A x + B y + C: 'paper' (Table 3, default), 'refit' (OLS on "
        "the paper's Tables 1 and 2), 'published' (fitted to published deployments of speculative decoding, "
        "needs --temperature: the form that beat a constant alpha on held-out targets and sources, printed with "
        "that error; now the paper's A and B with C falling as the temperature rises; a constant, which gives no N*, "
        "if no form beats it) or a CSV of your measurements with columns draft_ppl, target_ppl, alpha "
        "(perplexities, acceptance rate in (0, 1)), refitted",
    )
    p.add_argument(
        "--temperature",
        metavar="T",
        help="sampling temperature T >= 0 (0: greedy decoding) of --alpha-source published (required there; the "
        "other sources know no temperature and refuse it)",
    )
    p.add_argument(
        "--integer-gamma",
        action="store_true",
        help="optimise over integer draft lengths gamma (default: continuous relaxation)",
    )
    p.add_argument(
        "--n-range",
        nargs=2,
        metavar=("LOW", "HIGH"),
        help="range of draft sizes searched, in parameters (default: 1e7 to M/2)",
    )
    p.add_argument(
        "--draft-params",
        metavar="N",
        action="append",
        help="a candidate draft size, in parameters (repeatable): its alpha, best integer gamma, wall-clock speedup "
        "and tokens per FLOP as a share of the optimum",
    )
    p.add_argument(
        "--bootstrap",
        metavar="B",
        help="parametric bootstrap draws of the acceptance coefficients for a 95%% interval of N*: "
        "0 (none, the default) or 100 to 10000",
    )
    p.add_argument(
        "--seed",
        metavar="S",
        help="seed of the bootstrap, an integer in [0, 2^63 - 1] (default 0; only with --bootstrap)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (keys n_star, gamma_star, alpha, tokens_per_flop, "
        "tokens_per_flop_ratio, gamma_star_continuous, gamma_star_integer, rounding_loss, wall_clock, "
        "num_speculative_tokens, engines, suggested_draft, interval, published_accuracy (the typical error of "
        "this alpha and speedup on published deployments), warnings, plus n_star_ci95 and "
        "candidates (each with draft_params, alpha, gamma, speedup, pays, tokens_per_flop_share) when asked for) "
        "instead of a table",
    )
    _add_deployment_options(p)


def _add_deployment_options(p: argparse.ArgumentParser) -> None:
    """The wall-clock, hardware and engine options of ``sdsl plan`` (:mod:`sdsl.plan.deployment`)."""
    w = p.add_argument_group(
        "wall-clock speedup (Leviathan et al. 2023, Theorem 3.8; default: c = N*/M, the FLOP model's batch-1 "
        "memory-bound limit; give one of the three sources below)"
    )
    w.add_argument(
        "--cost-ratio",
        metavar="C",
        help="cost coefficient c: seconds of a draft step over seconds of a target step (dimensionless, >= 0; from 1 on speculation never pays)",
    )
    w.add_argument("--draft-latency", metavar="S", help="measured seconds of one draft step (one token)")
    w.add_argument(
        "--target-latency", metavar="S", help="measured seconds of one target step (one token, plain decoding)"
    )
    w.add_argument(
        "--verify-latency",
        metavar="S",
        help="measured seconds of one target pass verifying --verify-tokens "
        "tokens (default: Theorem 3.8's assumption, the cost of one step)",
    )
    w.add_argument("--verify-tokens", metavar="K", help="tokens of that verification pass (gamma + 1, an integer >= 2)")
    h = p.add_argument_group(
        "hardware model (the step-time model of one forward pass, calibrated on measured step times; re-optimises "
        "N* and gamma* for wall-clock time)"
    )
    h.add_argument(
        "--hardware",
        metavar="NAME",
        help="accelerator preset of data/accelerators.csv (h200: fitted to step times measured on an H200; "
        "a100-80gb, h100-sxm: that fit scaled by their spec sheets; h200-spec: the spec sheet alone; cpu-here) or "
        "an accelerator file written by 'sdsl steps fit' (.yml)",
    )
    h.add_argument("--gpus", metavar="G", default=None, help="devices in tensor parallel (ideal scaling; default 1)")
    h.add_argument(
        "--dtype",
        metavar="T",
        help="weights and KV cache: bf16 (GPU default), fp16, fp8, fp32; only the "
        "bytes change, the peak compute stays the preset's (weight-only quantisation)",
    )
    h.add_argument(
        "--batch",
        metavar="B",
        action="append",
        help="sequences decoded together (repeatable or comma-separated, e.g. 1,8,64; default 1)",
    )
    h.add_argument(
        "--context",
        metavar="L",
        action="append",
        help="tokens in each sequence's KV cache (repeatable or comma-separated; default 0)",
    )
    h.add_argument(
        "--overlap",
        action="store_true",
        help="drafting overlapped with verification (Saguaro, MineDraft): "
        "an iteration costs max(draft, verify) instead of their sum",
    )
    h.add_argument(
        "--step-overhead",
        metavar="S",
        help="fixed seconds per forward pass (kernel launches, framework; default: the preset's, 0 for the GPUs)",
    )
    h.add_argument("--gamma-max", metavar="G", help="largest draft length searched, 1 to 1024 (default 32)")
    w.add_argument(
        "--gamma",
        metavar="G",
        help="evaluate this draft length (an integer >= 1) instead of searching the best one: the wall-clock "
        "speedup of the plan, of the suggested draft and of each --draft-params at G",
    )
    e = p.add_argument_group(
        "engine settings (vLLM, SGLang, TensorRT-LLM and llama.cpp; with --hardware they carry --gpus, --dtype "
        "and the draft length of each --batch)"
    )
    e.add_argument(
        "--draft-model",
        metavar="ID",
        help="draft repository id or path written into the engine settings "
        "(default: the suggested published draft, else a placeholder)",
    )
    e.add_argument("--target-model", metavar="ID", help="target repository id or path (default: the preset's)")


def _add_speedup_parser(sub: Any) -> None:
    """``sdsl speedup``: Theorem 3.8 for one acceptance rate and cost."""
    s = sub.add_parser(
        "speedup",
        help="wall-clock speedup of speculative decoding (Theorem 3.8), best draft length, break-even alpha",
        description=(
            "Expected wall-clock speedup over plain decoding, S = (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + v)), "
            "with c the time of a draft step over a target step and v the cost of verifying gamma + 1 tokens "
            "over one target step (1 in Leviathan et al. 2023, Theorem 3.8; v = 1 + k gamma from a measured "
            "verification). Prints S at --gamma, the best integer and continuous gamma, and the break-even "
            "alpha below which speculation loses (c + k, Corollary 3.9)."
        ),
    )
    s.add_argument("--alpha", metavar="A", required=True, help="acceptance rate, in (0, 1)")
    s.add_argument("--gamma", metavar="G", help="draft length to evaluate (integer >= 0)")
    s.add_argument(
        "--cost-ratio",
        "--c",
        dest="cost_ratio",
        metavar="C",
        help="cost coefficient c (draft step over target step, >= 0; from 1 on speculation never pays)",
    )
    s.add_argument("--draft-latency", metavar="S", help="measured seconds of one draft step (instead of --cost-ratio)")
    s.add_argument("--target-latency", metavar="S", help="measured seconds of one target step")
    s.add_argument(
        "--verify-latency", metavar="S", help="measured seconds of one verification pass of --verify-tokens tokens"
    )
    s.add_argument("--verify-tokens", metavar="K", help="tokens of that pass (gamma + 1, integer >= 2)")
    s.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (alpha, c, verify_slope, gamma, speedup, "
        "gamma_continuous, gamma_integer, speedup_at_best, break_even_alpha, gamma_max, gamma_capped, note: "
        "gamma_integer is gamma_max, with a note, where the best draft length lies beyond it or there is none)",
    )


def _add_presets_parser(sub: Any) -> None:
    """``sdsl presets``: the target presets, planned with ``--plan``."""
    p = sub.add_parser(
        "presets",
        help="list the target presets (parameters, tokens, draft family tokens); --plan plans each",
        description="List the target presets of data/presets.csv: M in parameters, D' and D in tokens; "
        "with --plan, N*, the integer gamma*, alpha and the tokens per FLOP ratio of each "
        "dense target (mixture-of-experts targets are refused).",
    )
    p.add_argument(
        "--plan",
        action="store_true",
        help="plan every dense target: N*, integer gamma*, alpha, the "
        "tokens per FLOP ratio and, where the architecture is known, the wall-clock speedup on an H100 SXM "
        "at batch 1 (mixture-of-experts targets refused, unknown tokens said to be unknown)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")


def _add_alpha_parser(sub: Any) -> None:
    """``sdsl alpha``: its options only (the engine readers are imported when it runs)."""
    p = sub.add_parser(
        "alpha",
        help="alpha with its interval from a serving engine's metrics, log or per-request JSON",
        description="Alpha with its interval per model and engine from what a serving engine wrote (format "
        "detected), per-position rates with the constant-alpha test, drafts shorter than k, and what the "
        "measured alpha implies through the plan. Exit status: 0 with an alpha, 1 when every series is "
        "idle or unusable, 2 on bad input.",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="a saved /metrics scrape (vLLM, llama.cpp, SGLang; TensorRT-LLM's GET /prometheus/metrics; or a "
        "pasted Prometheus query table), a vLLM log, vLLM per-request JSON, a 'vllm bench serve --save-result' "
        "JSON or its printout, vLLM's LLM.get_metrics() saved as json.dump([dataclasses.asdict(m) for m in "
        "llm.get_metrics()], f), the printout of vLLM's examples/offline_inference/spec_decode.py, SGLang "
        "per-request meta_info JSON or a bench_serving result, llama.cpp log lines (print_timing, statistics, "
        "llama-speculative), TensorRT-LLM's GET /metrics iteration stats JSON; the format is detected; - reads "
        "standard input",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    p.add_argument(
        "--delta",
        action="store_true",
        help="FILES are successive scrapes of one server, earliest first: report the traffic between "
        "the first and the last (a restart is told from files in the wrong order through _created)",
    )
    p.add_argument(
        "--format",
        dest="fmt",
        metavar="FMT",
        help="skip detection: vllm-prometheus, llamacpp-prometheus, sglang-prometheus, trtllm-prometheus "
        "(GET /prometheus/metrics), vllm-log, vllm-requests, vllm-bench, vllm-get-metrics, vllm-spec-decode, "
        "vllm-bench-text, sglang-requests, sglang-bench, llamacpp-log or trtllm-iteration-stats (GET /metrics)",
    )
    p.add_argument(
        "--gamma",
        metavar="K",
        help="draft length k, for exports that do not carry it (TensorRT-LLM without max_draft_len; "
        "SGLang without spec_num_steps, with tree drafts: the number of steps; SGLang bench_serving; a vllm "
        "bench serve result without per-position rates); refused when it differs from the k an export carries",
    )
    p.add_argument("--level", metavar="L", default="0.95", help="confidence level of the intervals (default 0.95)")
    p.add_argument(
        "--seed",
        metavar="S",
        help="seed of the bootstrap over requests of vLLM or SGLang per-request JSON, an integer in [0, 2^63 - 1] "
        "(default 0)",
    )
    plan = p.add_argument_group("what alpha implies (optional): the target and the draft that was measured")
    plan.add_argument("--preset", metavar="NAME", help="target preset of data/presets.csv ('sdsl presets')")
    plan.add_argument("--target-params", metavar="M", help="target size M, in parameters")
    plan.add_argument("--target-tokens", metavar="D'", help="target pre-training tokens D'")
    plan.add_argument("--draft-params", metavar="N", help="size N of the measured draft, in parameters")
    plan.add_argument("--draft-tokens", metavar="D", help="pre-training tokens D of the draft family")


def _add_steps_parser(sub: Any) -> None:
    """``sdsl steps``: measure step times, fit the step-time model to them, predict with it."""
    p = sub.add_parser(
        "steps",
        help="measure one forward pass on your device, fit the step-time model, predict step times",
        description="The step-time model behind 'sdsl plan --hardware': measure the seconds of one forward pass of "
        "given shapes on your device (measure), fit the model's effective rates and overheads to them and write an "
        "accelerator file (fit), or predict the seconds of given passes (predict).",
    )
    ss = p.add_subparsers(dest="steps_command", metavar="STEP", required=True)
    m = ss.add_parser(
        "measure",
        help="time one forward pass of given shapes on this device (random weights; CUDA graphs on a GPU)",
        description="Time one forward pass of Llama-style shapes with random weights at every batch, context and "
        "number of new tokens given: replayed from a CUDA graph and eagerly on a CUDA device, eagerly elsewhere; the "
        "median of --repeats after --warmup. Writes a CSV (the columns of data/h200_step_times.csv) and its "
        "provenance beside it (OUT.yml). Shapes: --preset (data/presets.csv), --config (a Hugging Face config.json "
        "file; nothing is downloaded) or the numbers --layers ... --vocab.",
    )
    m.add_argument("-o", "--output", metavar="CSV", required=True, help="the CSV to write (never overwritten)")
    m.add_argument("--preset", metavar="NAME", action="append", help="a preset's shape (repeatable)")
    m.add_argument("--config", metavar="FILE", action="append", help="a config.json's shape (repeatable)")
    for flag, what in (
        ("--layers", "decoder layers"),
        ("--hidden", "hidden size"),
        ("--heads", "attention heads"),
        ("--kv-heads", "key-value heads"),
        ("--head-dim", "dimension of one head"),
        ("--intermediate", "width of the gated MLP"),
        ("--vocab", "vocabulary size"),
    ):
        m.add_argument(flag, metavar="N", help=f"{what} of a shape given by numbers")
    m.add_argument("--tied", action="store_true", help="a shape given by numbers shares its embedding and head")
    m.add_argument("--name", metavar="NAME", help="name of a shape given by numbers (default: custom)")
    m.add_argument(
        "--max-layers", metavar="N", help="keep at most N layers of each shape (a model too large for the device)"
    )
    m.add_argument(
        "--batch", metavar="B", default="1,16,64", help="sequences in the pass (comma-separated; default 1,16,64)"
    )
    m.add_argument("--context", metavar="L", default="512,8192", help="tokens in each cache (default 512,8192)")
    m.add_argument("--tokens", metavar="K", default="1,4,8", help="new tokens per sequence (default 1,4,8)")
    m.add_argument(
        "--device", metavar="D", default="auto", help="auto (a CUDA device if there is one), cpu or cuda[:N]"
    )
    m.add_argument("--dtype", metavar="T", default="bf16", help="bf16 (default), fp16 or fp32")
    m.add_argument("--no-graphs", action="store_true", help="on a CUDA device, time the eager pass only")
    m.add_argument("--repeats", metavar="R", default="20", help="timed passes, the median kept (default 20)")
    m.add_argument("--warmup", metavar="W", default="3", help="passes run before timing (default 3)")
    f = ss.add_parser(
        "fit",
        help="fit the step-time model to measured step times and write an accelerator file",
        description="Fit the step-time model (effective compute rate and bandwidth, a per-pass and a per-layer "
        "overhead, the attention's bandwidth over the KV cache) to measured step times by least squares on the "
        "log-ratio, report its error on each shape left out of the fit in turn, and write an accelerator file that "
        "'sdsl plan --hardware FILE' and 'sdsl steps predict --hardware FILE' read. Needs scipy (the analysis extra).",
    )
    f.add_argument(
        "measured",
        metavar="MEASURED.csv",
        help="step times: the output of 'sdsl steps measure', or any CSV with its columns",
    )
    f.add_argument(
        "-o", "--output", metavar="FILE.yml", required=True, help="the accelerator file to write (never overwritten)"
    )
    f.add_argument("--name", metavar="NAME", help="the device's name (default: the measurement's provenance)")
    f.add_argument("--memory", metavar="BYTES", help="the device's memory (default: the measurement's provenance)")
    f.add_argument(
        "--column", metavar="COL", help="the column of measured seconds (default: seconds, graph_s, eager_s)"
    )
    f.add_argument(
        "--dtype", metavar="T", help="precision of the measured passes (default: the provenance's, else bf16)"
    )
    f.add_argument(
        "--keep-slow-attention",
        action="store_true",
        help="keep the rows of context 8192 or more with several new tokens, left out by default on a CUDA device",
    )
    f.add_argument("--json", action="store_true", help="print the fit and its errors as one JSON object")
    pr = ss.add_parser(
        "predict",
        help="predict the seconds of given passes with an accelerator's step-time model",
        description="Print the CSV of passes with a predicted_s column (and ratio where measured seconds are given): "
        "seconds of one forward pass by the step-time model of an accelerator preset or file.",
    )
    pr.add_argument(
        "shapes",
        metavar="SHAPES.csv",
        help="passes: the shape columns, batch, context and tokens; - reads standard input",
    )
    pr.add_argument(
        "--hardware",
        metavar="NAME|FILE",
        required=True,
        help="an accelerator preset (data/accelerators.csv) or a file of 'sdsl steps fit'",
    )
    pr.add_argument(
        "--column",
        metavar="COL",
        help="the column of measured seconds to compare with (default: seconds, graph_s, eager_s if present)",
    )


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Parameter name -> the flag that sets it, for the messages of one sub-command."""
    out = {a.dest: a.option_strings[0] for a in parser._actions if a.option_strings and a.dest != "help"}
    return {**out, **{k: v for k, v in _FLAGS.items() if v in out.values()}}


def _plan(args: argparse.Namespace) -> int:
    from sdsl import plan as P
    from sdsl.validation import draws, seed

    if args.seed is not None and (args.bootstrap is None or draws(args.bootstrap, "bootstrap") == 0):
        seed(args.seed, "seed")
        raise ValueError(
            f"--seed {args.seed} is used only by the bootstrap: give --bootstrap B (100 to 10000 draws) "
            f"too, or drop --seed"
        )
    inputs = P.check_inputs(
        preset=args.preset,
        target_params=args.target_params,
        target_tokens=args.target_tokens,
        draft_tokens=args.draft_tokens,
        constants=args.constants,
        alpha_source=args.alpha_source,
        integer_gamma=args.integer_gamma,
        n_range=args.n_range,
        candidates=args.draft_params,
        n_boot=0 if args.bootstrap is None else args.bootstrap,
        seed=("0" if args.seed is None else args.seed) if args.bootstrap is not None else None,
        temperature=args.temperature,
    )
    from sdsl.plan.deployment import deployment_report

    wall = _wall_clock_inputs(args)
    opt = P.plan(inputs)
    result: dict[str, Any] = {
        "n_star": opt.n_star,
        "gamma_star": opt.gamma_star,
        "alpha": opt.alpha,
        "tokens_per_flop": opt.tokens_per_flop,
    }
    ci = None
    if inputs.n_boot > 0:
        ci = P.n_star_interval(P.bootstrap_n_star(inputs))
        result["n_star_ci95"] = [ci["low"], ci["high"]]
    report = deployment_report(inputs, opt, wall, args.draft_model, args.target_model)
    result.update(report)
    if args.json:
        print(json.dumps(result))
        return 0
    t = inputs.target
    rows = [
        ("target", f"{t.name}: M = {t.params:.4g} parameters, D' = {t.tokens:.3g} tokens"),
        ("draft family tokens D", f"{inputs.draft_tokens[0]:.3g} tokens"),
        ("loss-law constants", inputs.constants.name),
        ("acceptance plane", inputs.alpha.label),
        ("draft length", "integer" if inputs.integer else "continuous"),
        ("N* (optimal draft size)", f"{opt.n_star:.4g} parameters"),
    ]
    if ci is not None:
        rows.append(
            ("N* 95 % interval", f"[{ci['low']:.4g}, {ci['high']:.4g}] ({ci['draws']} draws, seed {inputs.seed})")
        )
    rows += [
        ("gamma* (draft length)", f"{opt.gamma_star:.4g} tokens per iteration"),
        ("alpha at N*", f"{opt.alpha:.4f}"),
        ("  its typical error", report["published_accuracy"]["alpha"]["line"]),
        ("T(N*)", f"{opt.tokens_per_flop:.4g} tokens per FLOP"),
    ]
    rows += _plan_rows(report)
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0


def _wall_clock_inputs(args: argparse.Namespace) -> WallClockInputs:
    """The validated :class:`sdsl.plan.deployment.WallClockInputs` of ``sdsl plan``'s options."""
    from sdsl.plan.deployment import check_wall_clock

    return check_wall_clock(
        cost_ratio=args.cost_ratio,
        draft_latency=args.draft_latency,
        target_latency=args.target_latency,
        verify_latency=args.verify_latency,
        verify_tokens=args.verify_tokens,
        hardware=args.hardware,
        gpus=args.gpus,
        dtype=args.dtype,
        batch=args.batch,
        context=args.context,
        overlap=args.overlap,
        step_overhead=args.step_overhead,
        gamma_max=args.gamma_max,
        gamma=args.gamma,
    )


def _g(x: Any, fmt: str = ".4g") -> str:
    return "n/a" if x is None else format(x, fmt)


def _plan_rows(rep: dict[str, Any]) -> list[tuple[str, str]]:
    """The text rows of a deployment report (after N*, gamma*, alpha and T(N*))."""
    w = rep["wall_clock"]
    rows = [
        (
            "gamma* continuous / integer",
            f"{rep['gamma_star_continuous']:.4g} / {rep['gamma_star_integer']} tokens per "
            f"iteration (rounding gives up {100 * rep['rounding_loss']:.3f} % of tokens per FLOP)",
        ),
        (
            "N* with an integer gamma",
            f"{rep['n_star_integer_gamma']:.4g} parameters (gives up {100 * rep['rounding_loss_reoptimised']:.3f} %)",
        ),
        (
            "tokens per FLOP ratio",
            f"{rep['tokens_per_flop_ratio']:.3f}x (T(N*) * 2M: tokens per FLOP over plain decoding; "
            f"not a wall-clock speedup)",
        ),
        (
            "wall-clock speedup",
            f"{_g(w['speedup'], '.3f')}x at gamma = {w['gamma_integer']}"
            f"{' (given)' if w.get('gamma_fixed') else ''}: {w['source'].split(' (')[0] if 'step_model' in w else w['source']}",
        ),
        ("  its typical error", rep["published_accuracy"]["speedup"]["line"]),
        ("verdict", w["verdict"]),
    ]
    if "step_model" in w:
        rows.append(("step-time model", w["step_model"]))
    if "break_even_alpha" in w:
        rows.append(
            (
                "cost coefficient c",
                f"{w['cost_coefficient']:.4g} (verification slope {w['verify_cost_slope']:.4g}); "
                f"speculation loses below alpha = {w['break_even_alpha']:.4f}",
            )
        )
    for r in w.get("by_batch_and_context", []):
        rows.append(
            (
                f"batch {r['batch']:g}, context {r['context']:g}",
                f"N* {r['n_star']:.4g}, gamma {r['gamma_star']}, speedup {r['speedup']:.3f}x (the FLOP N*: gamma "
                f"{r['flop_n_star_gamma']}, {r['flop_n_star_speedup']:.3f}x); verification {r['target_bound']}-bound"
                f"{'' if r['fits_in_memory'] else '; does not fit in memory'}",
            )
        )
    s = rep["suggested_draft"]
    if s is not None:
        rows.append(
            (
                "suggested draft",
                f"{s['model']} ({s['params']:.4g} parameters, alpha {s['alpha']:.4f}): gamma {s['gamma_wall_clock']}, "
                f"wall-clock speedup {s['speedup_wall_clock']:.3f}x; {100 * s['share_of_optimum']:.1f} % of the "
                f"optimum's tokens per FLOP",
            )
        )
    for c in rep.get("candidates", []):
        rows.append(
            (
                f"candidate N = {c['draft_params']:.3g}",
                f"alpha {c['alpha']:.4f}, gamma {c['gamma']}, wall-clock speedup {c['speedup']:.3f}x"
                f"{'' if c['pays'] else ' (plain decoding is faster)'}; {100 * c['tokens_per_flop_share']:.1f} % of "
                f"the optimum's tokens per FLOP (ratio {c['tokens_per_flop_ratio']:.3f}x)",
            )
        )
    rows += _engine_rows(rep["engines"])
    rows += _interval_rows(rep["interval"])
    for wmsg in rep["warnings"]:
        rows.append(("warning", wmsg))
    return rows


_ENGINE_NAMES = (("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM"), ("llamacpp", "llama.cpp"))


def _engine_rows(e: dict[str, Any]) -> list[tuple[str, str]]:
    """The text rows of the engine settings: one command per engine and planned batch size (one
    TensorRT-LLM configuration with its per-batch schedule), the version each was checked against."""
    if not e.get("vllm"):
        return [("engines", e["note"])]
    rows = []
    for key, name in _ENGINE_NAMES:
        s = e[key]
        if s.get("command") is None:
            rows.append((name, f"no command: {s['refused']}"))
        for r in s.get("by_batch") or ([{"batch": None, "command": s["command"]}] if s.get("command") else []):
            rows.append((name if r["batch"] is None else f"{name}, batch {r['batch']}", r["command"]))
        rows.append((f"  {name} version", f"checked against {s['version']}; needs {s['requires']}"))
        for c in s.get("caveats") or []:
            rows.append((f"  {name} caveat", c))
        if s.get("note"):
            rows.append((f"  {name} note", s["note"]))
    return rows + [("engine draft", e["draft"]), ("engine target", e["target"])]


_SOURCE_NAMES = {"law": "acceptance law", "constants": "loss-law constants", "coefficients": "plane's coefficients"}


def _interval_rows(iv: dict[str, Any]) -> list[tuple[str, str]]:
    """The text rows of the ``N*`` interval (:func:`sdsl.plan.interval.n_star_intervals`): the
    headline with its sources, each source, the combination and what is left out."""
    h, by = iv["headline"], iv["by_source"]
    names = ", ".join(_SOURCE_NAMES[k] for k in h["sources"])
    rows = [
        (
            "N* interval (headline)",
            f"[{_g(h.get('low'))}, {_g(h.get('high'))}] parameters over: {names}"
            + (f"; left out: {', '.join(_SOURCE_NAMES[k] for k in h['left_out'])}" if h["left_out"] else "")
            + " (an envelope of model choices, not a probability)",
        )
    ]
    law = by["law"]
    groups: dict[str, list[str]] = {}
    for v in law["laws"]:
        groups.setdefault(v["fitted_on"], []).append(
            f"{v['label']} {_g(v['n_star'])}" + ("" if v["status"] == "interior" else f" ({v['status']})")
        )
    rows.append(
        (
            "  by acceptance law",
            f"[{_g(law.get('low'))}, {_g(law.get('high'))}]: "
            + "; ".join(f"{k}: {', '.join(g)}" for k, g in groups.items()),
        )
    )
    con = by["constants"]
    rows.append(
        (
            "  by loss-law constants",
            f"[{_g(con.get('low'))}, {_g(con.get('high'))}]: "
            + "; ".join(f"{v['constants']} {_g(v['n_star'])}" for v in con["sets"]),
        )
    )
    co = by["coefficients"]
    if co["computed"]:
        rows.append(
            (
                "  by plane's coefficients",
                f"[{_g(co['low'])}, {_g(co['high'])}]: {co['kind']} "
                f"({co['draws']} draws, seed {co['seed']}, {co['dropped']} dropped)",
            )
        )
    else:
        rows.append(("  by plane's coefficients", f"not computed: {co['why']}"))
    c = iv["combined"]
    if c is not None and c["sources"] != h["sources"]:
        rows.append(("  combined (all computed)", f"[{_g(c['low'])}, {_g(c['high'])}]"))
    rows.append(("N* interval leaves out", "; ".join(iv["excludes"])))
    return rows


def _speedup(args: argparse.Namespace) -> int:
    """``sdsl speedup``: Theorem 3.8 for one acceptance rate and cost."""
    from sdsl import validation as V
    from sdsl.model.speedup import speedup_report
    from sdsl.plan.deployment import check_wall_clock

    alpha = V.number(args.alpha, "alpha", low=0, high=1, low_open=True, high_open=True, what="acceptance rate")
    if args.cost_ratio is None and args.draft_latency is None and args.target_latency is None:
        raise ValueError("give the cost of drafting: --cost-ratio C, or --draft-latency and --target-latency (seconds)")
    wc = check_wall_clock(
        cost_ratio=args.cost_ratio,
        draft_latency=args.draft_latency,
        target_latency=args.target_latency,
        verify_latency=args.verify_latency,
        verify_tokens=args.verify_tokens,
    )
    gamma = (
        None
        if args.gamma is None
        else V.integer(args.gamma, "gamma", low=0, high=1024, what="tokens drafted per iteration")
    )
    assert wc.c is not None  # a cost ratio or the latencies were given: both set c
    rep = speedup_report(alpha, wc.c, gamma, wc.verify_slope)
    d = rep.as_dict()
    if args.json:
        print(json.dumps(d))
        return 0
    rows = [
        ("alpha", f"{rep.alpha:.10g}"),
        ("cost coefficient c", f"{rep.c:.4g} (draft step over target step)"),
        ("verification cost", f"1 + {rep.verify_slope:.4g} gamma target steps"),
    ]
    if gamma is not None:
        rows.append((f"speedup at gamma = {gamma}", f"{rep.speedup:.4f}x (wall-clock, Theorem 3.8)"))
    gc = "unbounded (drafting is free)" if d["gamma_continuous"] is None else f"{rep.gamma_continuous:.4g}"
    rows += [
        ("best gamma (continuous)", gc),
        ("best gamma (integer)", f"{rep.gamma_integer}: speedup {rep.speedup_at_best:.4f}x"),
        *([("note", rep.note)] if rep.note else []),
        (
            "break-even alpha",
            f"{rep.break_even_alpha:.4f} (below it no draft length beats plain decoding)"
            if rep.c + rep.verify_slope < 1
            else f"none: c + k = {rep.c + rep.verify_slope:.4g} >= 1, a draft step costs at least a target step, so "
            f"no acceptance rate below 1 makes speculation pay; serve without a draft",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0


def _presets(args: argparse.Namespace) -> int:
    return _presets_plan(args) if args.plan else _presets_list(args)


def _presets_list(args: argparse.Namespace) -> int:
    """``sdsl presets``: the presets of ``data/presets.csv``."""
    from sdsl.plan import preset_records

    rows = preset_records()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        k: (None if isinstance(v, float) and math.isnan(v) else v)
                        for k, v in r.items()
                        if not k.endswith("_source")
                    }
                    for r in rows
                ]
            )
        )
        return 0
    print(f"{'preset':<21} {'model':<21} {'M (params)':>11} {'D_prime (tokens)':>17} {'D (tokens)':>11}  note")
    for r in rows:
        note = (
            "mixture of experts: refused"
            if r["architecture"] == "moe"
            else "draft only"
            if r["role"] == "draft"
            else ""
        )
        tok = "unknown" if math.isnan(r["tokens"]) else f"{r['tokens']:.3g}"
        dt = "unknown" if r["draft_tokens"] is None or math.isnan(r["draft_tokens"]) else f"{r['draft_tokens']:.3g}"
        print(f"{r['preset']:<21} {r['model']:<21} {r['params']:>11.4g} {tok:>17} {dt:>11}  {note}")
    return 0


def _presets_plan(args: argparse.Namespace) -> int:
    """``sdsl presets --plan``: the lookup table of :func:`sdsl.plan.lookup.lookup_rows` (the book's
    table, the same numbers)."""
    from sdsl.plan.lookup import lookup_rows

    out = lookup_rows()
    if args.json:
        print(json.dumps(out))
        return 0
    print(
        f"{'preset':<21} {'M (params)':>11} {'D_prime':>8} {'D':>8} {'N* (params)':>12} {'gamma*':>6} {'alpha':>7} "
        f"{'ratio':>6} {'wall-clock':>10} {'hw gamma':>8} {'gpus':>4}"
    )
    for r in out:
        if r["status"] != "planned":
            tok = "unknown" if r["tokens"] is None else f"{r['tokens']:.3g}"
            print(f"{r['preset']:<21} {r['params']:>11.4g} {tok:>8}  {r['status']}: {r['note']}")
            continue
        known = r["wall_clock_speedup"] is not None
        wall = f"{r['wall_clock_speedup']:.3f}x" if known else "n/a"
        print(
            f"{r['preset']:<21} {r['params']:>11.4g} {r['tokens']:>8.3g} {r['draft_tokens']:>8.3g} "
            f"{r['n_star']:>12.4g} {r['gamma_star_integer']:>6d} {r['alpha']:>7.4f} {r['tokens_per_flop_ratio']:>5.3f}x "
            f"{wall:>10} {r['wall_clock_gamma'] if known else '':>8} {r['gpus'] if known else '':>4}"
        )
    hw = next((r["hardware"] for r in out if r["hardware"]), "the GPU preset")
    print(
        "ratio: tokens per FLOP over plain decoding (T(N*) * 2M), not a wall-clock speedup; wall-clock: Theorem 3.8 "
        f"on the step-time model of {hw} at batch 1, empty KV cache, a draft of N* parameters at its best integer gamma "
        "(hw gamma) on the fewest devices (gpus, tensor parallel) that hold both models (n/a: architecture unknown); 'sdsl plan --preset NAME --hardware h100-sxm --batch 1,64' for a deployment"
    )
    return 0


def _alpha(args: argparse.Namespace) -> int:
    """``sdsl alpha``: validate, read, print; exit status 0 with at least one alpha, 1 when every
    series was idle or unusable (:mod:`sdsl.measure.report`)."""
    from sdsl import validation as V
    from sdsl.measure.implications import resolve_context
    from sdsl.measure.report import build_report, report_dict, report_text

    level = V.level(args.level, what="confidence level")
    gamma = None if args.gamma is None else V.integer(args.gamma, "gamma", low=1, high=1024, what="draft length k")
    seed = 0 if args.seed is None else V.seed(args.seed, "seed")
    if args.fmt is not None:
        from sdsl.measure.engines.detect import FORMATS

        args.fmt = V.choice(args.fmt, "fmt", list(FORMATS), "format of the files")
    if args.delta and len(args.files) < 2:
        raise ValueError(
            f"{V.shown('delta')} needs at least two files (successive scrapes, earliest first), got {len(args.files)}"
        )
    ctx = resolve_context(args.preset, args.target_params, args.target_tokens, args.draft_params, args.draft_tokens)
    try:
        rep = build_report(args.files, delta=args.delta, fmt=args.fmt, level=level, gamma=gamma, seed=seed, context=ctx)
    except ImportError as exc:  # prometheus_client is in the measure extra
        raise ValueError(
            f"reading engine exports needs the measure extra (pip install -e '.[measure]'): {exc}"
        ) from None
    from sdsl.measure.engines.detect import SEEDED

    if args.seed is not None and not any(r.source in SEEDED for r in rep.reads):
        raise ValueError(
            f"{V.shown('seed')} {args.seed} is used only by the bootstrap over requests of vLLM or SGLang "
            f"per-request JSON, and no file is one: drop {V.shown('seed')}"
        )
    if args.json:
        print(json.dumps(report_dict(rep), allow_nan=False))
    else:
        print(report_text(rep))
    return 0 if rep.n_readings else 1


def _steps(args: argparse.Namespace) -> int:
    """``sdsl steps measure|fit|predict``."""
    return {"measure": _steps_measure, "fit": _steps_fit, "predict": _steps_predict}[args.steps_command](args)


def _new_file(path: str, name: str, what: str) -> Path:
    """A file to write that does not exist yet, in a folder that does (nothing a user owns is overwritten)."""
    from sdsl import validation as V

    p = Path(V.text(path, name, what)).expanduser()
    if p.exists() or p.is_symlink():
        raise ValueError(f"{V.shown(name)} {str(p)!r} exists: give a new file (nothing is overwritten)")
    if not p.parent.is_dir():
        raise ValueError(f"{V.shown(name)} {str(p)!r}: the folder {str(p.parent)!r} does not exist")
    return p


def _grid(text: str, name: str, low: int, what: str) -> list[int]:
    from sdsl import validation as V

    items = [t for t in str(text).replace(",", " ").split()]
    if not items:
        raise ValueError(f"{V.shown(name)} is empty: give {what}, comma-separated")
    out = [V.integer(t, name, low=low, high=10**7, what=what) for t in items]
    if len(set(out)) < len(out):
        raise ValueError(f"{V.shown(name)} {text!r} lists a value twice: give each once")
    return out


def _steps_measure(args: argparse.Namespace) -> int:
    from sdsl import validation as V
    from sdsl.measure import steps as M

    out = _new_file(args.output, "output", "the CSV to write")
    if Path(str(out) + ".yml").exists():
        raise ValueError(
            f"{V.shown('output')}: {str(out) + '.yml'!r} exists (the provenance is written there): give a new file"
        )
    cap = None if args.max_layers is None else V.integer(args.max_layers, "max_layers", low=1, what="layers kept")
    shapes = [M.shape_from_preset(p, cap) for p in args.preset or []]
    shapes += [M.shape_from_config(V.existing_file(c, "config", "a config.json file"), cap) for c in args.config or []]
    dims = ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab")
    given = {d: getattr(args, d) for d in dims if getattr(args, d) is not None}
    if given or args.tied or args.name:
        lacking = [V.shown(d) for d in dims if d not in given]
        if lacking:
            raise ValueError(f"a shape given by numbers needs {', '.join(lacking)} too (or use --preset / --config)")
        shapes.append(M.shape(args.name or "custom", **given, tied=args.tied, max_layers=cap))
    if not shapes:
        raise ValueError("give at least one shape: --preset NAME, --config FILE or the numbers --layers ... --vocab")
    names = [s["shape"] for s in shapes]
    if len(set(names)) < len(names):
        raise ValueError(
            f"two shapes are named {next(n for n in names if names.count(n) > 1)!r}: give each once (--name)"
        )
    dtype = V.choice(str(args.dtype).strip().lower(), "dtype", list(M.DTYPES), "precision of the weights")
    batches = _grid(args.batch, "batch", 1, "sequences in the pass")
    contexts = _grid(args.context, "context", 0, "tokens in each cache")
    tokens = _grid(args.tokens, "tokens", 1, "new tokens per sequence")
    repeats = V.integer(args.repeats, "repeats", low=1, high=10_000, what="timed passes")
    warmup = V.integer(args.warmup, "warmup", low=0, high=10_000, what="passes before timing")
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        raise ValueError(_extra_needed("torch")) from None
    rows, rec = M.measure(
        shapes, batches, contexts, tokens, str(args.device).strip().lower(), dtype, not args.no_graphs, repeats, warmup,
        log=lambda line: print(line, file=sys.stderr),
    )  # fmt: skip
    meta = M.write_measurement(rows, out, rec)
    print(f"{len(rows)} passes of {len(shapes)} shapes on {rec['device']} written to {out} (provenance {meta})")
    return 0


def _provenance_of(path: Path) -> dict[str, Any]:
    """The record ``sdsl steps measure`` wrote beside a measurement, or {}."""
    import yaml

    meta = Path(str(path) + ".yml")
    try:
        rec = yaml.safe_load(meta.read_text(encoding="utf-8")) if meta.is_file() else {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return rec if isinstance(rec, dict) else {}


def _steps_fit(args: argparse.Namespace) -> int:
    from sdsl import validation as V
    from sdsl.data import sha256
    from sdsl.measure.steps import read_passes

    try:
        import scipy  # noqa: F401

        from sdsl.model import calibration as C
        from sdsl.model.hardware import write_accelerator
    except ModuleNotFoundError as exc:
        raise ValueError(_extra_needed(exc.name or "scipy")) from None
    path = Path(V.existing_file(args.measured, "measured", "a CSV of measured step times"))
    out = _new_file(args.output, "output", "the accelerator file to write")
    if out.suffix not in (".yml", ".yaml"):
        raise ValueError(f"{V.shown('output')} {str(out)!r}: an accelerator file ends in .yml (--hardware reads it so)")
    header, rows = read_passes(path)
    timed = [c for c in C.MEASURED_COLUMNS if c in header]
    column = args.column or (timed[0] if timed else None)
    if column is None or column not in header:
        raise ValueError(
            f"{str(path)!r} has no column of measured seconds"
            + (f" named {args.column!r}" if args.column else f" ({', '.join(C.MEASURED_COLUMNS)})")
            + f"; its columns are {', '.join(header)}"
        )
    rows = [r for r in rows if r.get(column) == r.get(column)]  # measured rows only
    rec = _provenance_of(path)
    cuda = rec.get("device_type") == "cuda" or column.startswith("graph")
    slow = [r for r in rows if C.slow_attention(r)] if cuda and not args.keep_slow_attention else []
    rows = [r for r in rows if not (slow and C.slow_attention(r))]
    shapes = list(dict.fromkeys(C.shape_name(r) for r in rows))
    if len(shapes) < 3:
        raise ValueError(
            f"{str(path)!r}: the fit needs passes of at least 3 shapes (it is checked on each shape left out in turn), "
            f"got {len(shapes)}: measure more shapes"
        )
    name = args.name or str(rec.get("device") or path.stem)
    memory = V.number(args.memory, "memory", low=0, low_open=True, what="bytes") if args.memory is not None else float(rec.get("memory_bytes") or math.inf)  # fmt: skip
    dtype = V.choice(str(args.dtype or rec.get("dtype") or "bf16").lower(), "dtype", ["bf16", "fp16", "fp32", "fp8"], "precision of the measured passes")  # fmt: skip
    bpp = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "fp8": 1.0}[dtype]
    kw = {"memory": memory, "bytes_per_param": bpp, "dtype": dtype, "column": column}
    acc = C.fit_step_model(rows, name, source=f"fitted to {path.name} (sha256 {sha256(path)[:16]}...)", **kw)
    inside = C.error_summary(C.step_time_errors(rows, acc, column))
    held = C.error_summary(C.leave_one_shape_out(rows, **kw))
    note = "" if not slow else f"; {len(slow)} passes of context 8192 or more with several new tokens left out"
    from dataclasses import replace

    acc = replace(acc, accuracy=C.accuracy_text(held, "measured passes of shapes left out of the fit") + note)
    fit = {
        "measurement": str(path),
        "sha256": sha256(path),
        "column": column,
        "rows": len(rows),
        "shapes": shapes,
        "left_out": len(slow),
        "in_sample": inside,
        "leave_one_shape_out": held,
        "provenance": {k: rec[k] for k in ("device", "driver", "torch", "dtype", "graphs", "date") if k in rec},
    }
    write_accelerator(acc, out, fit)
    if args.json:
        print(json.dumps({"accelerator": acc.as_record(), "fit": fit}, allow_nan=False, default=str))
        return 0
    r = acc.as_record()
    print(f"fitted {len(rows)} passes of {len(shapes)} shapes ({', '.join(shapes)}){note}")
    print(f"  weight products: {r['peak_flops']:.4g} FLOP/s, {r['bandwidth']:.4g} bytes/s")
    print(f"  attention:       {r['attention_flops']:.4g} FLOP/s, {r['attention_bandwidth']:.4g} bytes/s")
    print(f"  overheads:       {r['step_overhead_s']:.3g} s per pass, {r['layer_overhead_s']:.3g} s per layer")
    print(f"  in sample:       {C.accuracy_text(inside, 'passes')}")
    print(f"  held out:        {acc.accuracy}")
    print(f"written to {out} (sdsl plan --hardware {out}; sdsl steps predict --hardware {out} PASSES.csv)")
    return 0


def _steps_predict(args: argparse.Namespace) -> int:
    import tempfile

    from sdsl import validation as V
    from sdsl.measure.steps import format_passes, read_passes
    from sdsl.model import calibration as C
    from sdsl.model.hardware import get_accelerator, step_time

    acc = get_accelerator(V.text(args.hardware, "hardware", "an accelerator preset or file"))
    if args.shapes == "-":
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, encoding="utf-8") as fh:
            fh.write(sys.stdin.read())
        try:
            header, rows = read_passes(fh.name, "standard input")
        finally:
            os.unlink(fh.name)
    else:
        header, rows = read_passes(V.existing_file(args.shapes, "shapes", "a CSV of passes"))
    column = args.column or next((c for c in C.MEASURED_COLUMNS if c in header), None)
    if args.column is not None and args.column not in header:
        raise ValueError(f"{V.shown('column')} {args.column!r} is not a column of the passes: {', '.join(header)}")
    for r in rows:
        r["predicted_s"] = float(step_time(C.shape_of(r), acc, r["batch"], r["context"], r["tokens"]))
        if column is not None:
            m = r.get(column)
            r["ratio"] = r["predicted_s"] / m if isinstance(m, float) and m == m else math.nan
    cols = [c for c in header if c not in ("predicted_s", "ratio")] + ["predicted_s"] + (["ratio"] if column else [])
    sys.stdout.write(format_passes(cols, rows))
    return 0


#: The extra of the package that brings each optional module (``pip install 'sdsl[EXTRA]'``).
_EXTRAS = {
    "pandas": "analysis",
    "scipy": "analysis",
    "statsmodels": "analysis",
    "matplotlib": "plot",
    "seaborn": "plot",
    "torch": "measure",
    "transformers": "measure",
    "threadpoolctl": "measure",
}


def _extra_needed(module: str) -> str:
    """One line naming the extra that brings ``module``."""
    top = module.split(".")[0]
    extra = _EXTRAS.get(top)
    if extra is None:
        return f"this needs the Python package {top!r}, which is not installed"
    return f"this needs {top}, in the {extra} extra: pip install 'sdsl[{extra}]'"


def _dispatch(args: argparse.Namespace) -> int:
    command = {"plan": _plan, "speedup": _speedup, "presets": _presets, "alpha": _alpha, "steps": _steps}[args.command]
    return command(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sdsl`` console script; returns the exit status (SIGTERM or SIGINT: one
    line and 128 + the signal's number)."""
    from sdsl.validation import Interrupt, interrupted, sigterm_as_interrupt

    try:
        with sigterm_as_interrupt():
            return _main(argv)
    except (Interrupt, KeyboardInterrupt) as exc:
        return interrupted("sdsl", exc, "nothing was written")


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        given = list(sys.argv[1:] if argv is None else argv)
        first = next((a for a in given if not a.startswith("-")), None)
        before = given[: given.index(first)] if first is not None else given
        unknown = [a for a in before if a.split("=")[0] not in ("-h", "--help", "--version")]
        if unknown:  # `sdsl --verbose plan`: name the option, not a missing COMMAND
            parser.error(
                f"unrecognized arguments: {' '.join(unknown)} (options follow the command: sdsl COMMAND [options])"
            )
        args, extra = parser.parse_known_args(argv)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[args.command]
        if getattr(args, "steps_command", None):  # the flags of `sdsl steps STEP`
            sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[args.steps_command]
        if extra:  # named by the sub-command, with the closest of its options
            sub.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # argparse: --help, --version (0) and usage errors (2)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    from sdsl.validation import argument_names, one_line

    try:
        with argument_names(_flags(sub)):
            status = _dispatch(args)
        sys.stdout.flush()  # inside the try: a closed pipe is seen here, not at interpreter exit
        return status
    except ValueError as exc:
        print(f"sdsl {args.command}: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except ModuleNotFoundError as exc:  # a feature of an extra, in the light install
        print(f"sdsl {args.command}: error: {_extra_needed(exc.name or str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader went away (`sdsl presets | head`): not an error of ours; silence the final flush
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

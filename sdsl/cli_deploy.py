"""The deployment half of the ``sdsl`` command line: the wall-clock and engine options of
``sdsl plan``, the ``sdsl speedup`` command and ``sdsl presets --plan``.

:mod:`sdsl.cli` builds the parser and dispatches; this module adds its options and prints. Nothing
here imports pandas or scipy (``sdsl plan`` must answer in 0.3 s).
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

__all__ = [
    "add_plan_arguments",
    "add_speedup_parser",
    "add_presets_arguments",
    "wall_clock_inputs",
    "plan_rows",
    "engine_rows",
    "interval_rows",
    "run_speedup",
    "run_presets_plan",
    "run_presets_list",
]


def add_plan_arguments(p: argparse.ArgumentParser) -> None:
    """The wall-clock, hardware and engine options of ``sdsl plan``."""
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
        "hardware model (a roofline of one decoding step; re-optimises N* and gamma* for wall-clock time)"
    )
    h.add_argument(
        "--hardware",
        metavar="NAME",
        help="accelerator preset of data/accelerators.csv: a100-80gb, h100-sxm, h200, cpu-here",
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


def wall_clock_inputs(args: argparse.Namespace):
    """The validated :class:`sdsl.deployment.WallClockInputs` of ``sdsl plan``'s options."""
    from sdsl.deployment import check_wall_clock

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
    )


def _g(x: Any, fmt: str = ".4g") -> str:
    return "n/a" if x is None else format(x, fmt)


def plan_rows(rep: dict[str, Any]) -> list[tuple[str, str]]:
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
        ("wall-clock speedup", f"{_g(w['speedup'], '.3f')}x at gamma = {w['gamma_integer']}: {w['source']}"),
    ]
    if "break_even_alpha" in w:
        rows.append(
            (
                "cost coefficient c",
                f"{w['cost_coefficient']:.4g} (verification slope {w['verify_cost_slope']:.4g}); "
                f"speculation loses below alpha = {w['break_even_alpha']:.4f}",
            )
        )
    for r in w.get("by_batch_and_context", []):
        n = "no draft" if r["n_star"] is None else f"N* {r['n_star']:.4g}"
        rows.append(
            (
                f"batch {r['batch']:g}, context {r['context']:g}",
                f"{n}, gamma* {r['gamma_star']}, speedup {r['speedup']:.3f}x (the FLOP N*: gamma "
                f"{r['flop_n_star_gamma']}, {r['flop_n_star_speedup']:.3f}x); verification {r['target_bound']}-bound"
                f"{'' if r['fits_in_memory'] else '; does not fit in memory'}",
            )
        )
    s = rep["suggested_draft"]
    if s is not None:
        g = s.get("gamma_hardware", s["gamma_integer"])
        rows.append(
            (
                "suggested draft",
                f"{s['model']} ({s['params']:.4g} parameters, alpha {s['alpha']:.4f}, best "
                f"gamma {g}): {100 * s['share_of_optimum']:.1f} % of the optimum's tokens per FLOP",
            )
        )
    rows += engine_rows(rep["engines"])
    rows += interval_rows(rep["interval"])
    for wmsg in rep["warnings"]:
        rows.append(("warning", wmsg))
    return rows


_ENGINE_NAMES = (("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM"), ("llamacpp", "llama.cpp"))


def engine_rows(e: dict[str, Any]) -> list[tuple[str, str]]:
    """The text rows of the engine settings: one command per engine and planned batch size (one
    TensorRT-LLM configuration with its per-batch schedule), the version each was checked against."""
    if not e.get("vllm"):
        return [("engines", e["note"])]
    rows = []
    for key, name in _ENGINE_NAMES:
        s = e[key]
        for r in s.get("by_batch") or [{"batch": None, "command": s["command"]}]:
            rows.append((name if r["batch"] is None else f"{name}, batch {r['batch']}", r["command"]))
        rows.append((f"  {name} version", f"checked against {s['version']}; needs {s['requires']}"))
        if s.get("note"):
            rows.append((f"  {name} note", s["note"]))
    return rows + [("engine draft", e["draft"]), ("engine target", e["target"])]


_SOURCE_NAMES = {"law": "acceptance law", "constants": "loss-law constants", "coefficients": "plane's coefficients"}


def interval_rows(iv: dict[str, Any]) -> list[tuple[str, str]]:
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


def add_speedup_parser(sub) -> None:
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
        "gamma_continuous, gamma_integer, speedup_at_best, break_even_alpha)",
    )


def run_speedup(args: argparse.Namespace) -> int:
    from sdsl import validation as V
    from sdsl.deployment import check_wall_clock
    from sdsl.model.speedup import speedup_report

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
        ("alpha", f"{rep.alpha:.4g}"),
        ("cost coefficient c", f"{rep.c:.4g} (draft step over target step)"),
        ("verification cost", f"1 + {rep.verify_slope:.4g} gamma target steps"),
    ]
    if gamma is not None:
        rows.append((f"speedup at gamma = {gamma}", f"{rep.speedup:.4f}x (wall-clock, Theorem 3.8)"))
    gc = "unbounded (drafting is free)" if d["gamma_continuous"] is None else f"{rep.gamma_continuous:.4g}"
    rows += [
        ("best gamma (continuous)", gc),
        ("best gamma (integer)", f"{rep.gamma_integer}: speedup {rep.speedup_at_best:.4f}x"),
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


def add_presets_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plan",
        action="store_true",
        help="plan every dense target: N*, integer gamma*, alpha, the "
        "tokens per FLOP ratio and, where the architecture is known, the wall-clock speedup on an H100 SXM "
        "at batch 1 (mixture-of-experts targets refused, unknown tokens said to be unknown)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")


def run_presets_list(args: argparse.Namespace) -> int:
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


def run_presets_plan(args: argparse.Namespace) -> int:
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
        f"on the roofline of {hw} at batch 1, empty KV cache, a draft of N* parameters at its best integer gamma "
        "(hw gamma) on the fewest devices (gpus, tensor parallel) that hold both models (n/a: architecture unknown); 'sdsl plan --preset NAME --hardware h100-sxm --batch 1,64' for a deployment"
    )
    return 0

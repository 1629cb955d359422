"""What ``sdsl plan`` adds to the paper's optimum to make it deployable.

:func:`deployment_report` takes a validated plan (:class:`sdsl.plan.PlanInputs`) and its optimum
(:class:`sdsl.model.throughput.DraftOptimum`) and returns, as one JSON-ready mapping:

* the draft length an engine can take: the best integer ``gamma`` at ``N*`` beside the continuous
  ``gamma*``, the share of throughput rounding gives up, and ``N*`` re-optimised for an integer
  ``gamma`` (:mod:`sdsl.model.deploy`);
* the *wall-clock* speedup (Leviathan et al. 2023, Theorem 3.8, :mod:`sdsl.model.speedup`) with its
  cost coefficient ``c`` from one of: the FLOP model (``c = N*/M``, the default: the batch-1
  memory-bound limit, where it equals the tokens-per-FLOP ratio), a given ratio, measured draft and
  target latencies (with the measured cost of verifying ``gamma + 1`` tokens), or the roofline of a
  hardware preset at given batch sizes and context lengths (:mod:`sdsl.model.hardware`, which then
  re-optimises ``N*`` and ``gamma*`` for wall-clock time, with drafting sequential or overlapped);
* the published draft of the target's tokenizer group that comes closest to the optimum, and
  ready-to-paste vLLM, SGLang, TensorRT-LLM and llama.cpp settings carrying the plan's devices,
  precision and per-batch draft length (:mod:`sdsl.model.deploy`);
* the interval of ``N*`` over acceptance laws, loss-law constants and the plane's coefficients, by
  source and combined, with the sources of the headline interval (:mod:`sdsl.plan.interval`), and
  warnings where the acceptance plane (or a law of the interval) is evaluated outside the data it
  was fitted on.

Only numpy is imported (no pandas, no scipy): ``sdsl plan`` runs from the base install.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sdsl import validation as V
from sdsl.model import deploy as D
from sdsl.model import hardware as H
from sdsl.model import speedup as S
from sdsl.model.laws import acceptance_rate, perplexity
from sdsl.model.optimum import DraftOptimum, optimal_draft_size
from sdsl.model.throughput import optimal_gamma, optimal_tokens_per_flop
from sdsl.plan import PlanInputs, preset_records
from sdsl.plan.interval import n_star_intervals
from sdsl.validation import shown

__all__ = [
    "DTYPES",
    "WallClockInputs",
    "check_wall_clock",
    "perplexity_warnings",
    "suggest_draft",
    "deployment_report",
]

_GAMMA_MAX = "largest draft length searched"
_LATENCIES = ("draft_latency", "target_latency", "verify_latency", "verify_tokens")
#: The most devices a plan shards a model over in tensor parallel: far beyond any model's attention
#: heads (Llama-3.1-405B has 128), which each device must get some of.
MAX_GPUS = 1024
#: Bytes per weight and KV-cache element of the number formats ``--dtype`` accepts.
DTYPES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp32": 4.0}


@dataclass(frozen=True)
class WallClockInputs:
    """Where the cost coefficient of Theorem 3.8 comes from (validated by :func:`check_wall_clock`)."""

    source: str
    """``"flop"``, ``"cost_ratio"``, ``"latencies"`` or ``"hardware"``."""
    c: float | None = None
    verify_slope: float = 0.0
    hardware: H.Accelerator | None = None
    batches: tuple[float, ...] = (1.0,)
    contexts: tuple[float, ...] = (0.0,)
    overlap: bool = False
    gamma_max: int = 32


def _number(value: Any, name: str, low: float, what: str, integer: bool = False, strict: bool = False) -> float:
    if integer:
        return float(V.integer(value, name, low=int(low), what=what))
    return V.number(value, name, low=low, low_open=strict, what=what)


def _list(values: Any, name: str, low: float, what: str, integer: bool, default: float) -> tuple[float, ...]:
    if values is None:
        return (default,)
    if isinstance(values, np.ndarray):  # as the list it holds
        if values.ndim > 1:
            raise ValueError(f"{shown(name)} must be a list of values ({what}), got an array of shape {values.shape}")
        values = values.tolist()
    items = values if isinstance(values, (list, tuple)) else [values]
    out: list[float] = []
    for v in items:
        parts = v.replace(",", " ").split() if isinstance(v, str) else [v]
        if isinstance(v, str) and not parts:
            raise ValueError(f"{shown(name)} is empty: give at least one value ({what})")
        if isinstance(v, str) and any(not q.strip() for q in v.split(",")):
            raise ValueError(f"{shown(name)} {v!r} has an empty item: give values separated by single commas ({what})")
        out += [_number(p, name, low, what, integer) for p in parts]
    if not out:
        raise ValueError(f"{shown(name)} is empty: give at least one value ({what})")
    twice = [x for i, x in enumerate(out) if x in out[:i]]
    if twice:
        raise ValueError(f"{shown(name)} lists {twice[0]:g} twice: give each value once ({what})")
    return tuple(out)


def check_wall_clock(
    cost_ratio: Any = None,
    draft_latency: Any = None,
    target_latency: Any = None,
    verify_latency: Any = None,
    verify_tokens: Any = None,
    hardware: Any = None,
    gpus: Any = None,
    dtype: Any = None,
    batch: Any = None,
    context: Any = None,
    overlap: bool = False,
    step_overhead: Any = None,
    gamma_max: Any = None,
) -> WallClockInputs:
    """Validate the wall-clock options of ``sdsl plan`` (one ``ValueError`` with one line per problem).

    At most one source of the cost coefficient: ``cost_ratio`` (``c``), the latencies
    ``draft_latency`` and ``target_latency`` in seconds (optionally ``verify_latency`` of a pass over
    ``verify_tokens`` tokens), or a ``hardware`` preset (with ``gpus`` in tensor parallel (default 1),
    ``dtype``, batch sizes ``batch``, context lengths ``context``, ``overlap``, ``step_overhead`` in
    seconds and ``gamma_max``, the largest draft length searched, default 32). None of them: the FLOP
    model, ``c = N*/M``. An option the chosen source does not use is refused, not ignored."""
    gm = 32 if gamma_max is None else V.integer(gamma_max, "gamma_max", low=1, high=1024, what=_GAMMA_MAX)
    lat = [v is not None for v in (draft_latency, target_latency, verify_latency, verify_tokens)]
    lat_names = "/".join(shown(n) for n, on in zip(_LATENCIES, lat) if on)
    sources = ((shown("cost_ratio"), cost_ratio is not None), (lat_names, any(lat)), (shown("hardware"), hardware))
    given = [n for n, on in sources if on is not None and on is not False]
    if len(given) > 1:
        raise ValueError(f"give one source of the cost of drafting, not {' and '.join(given)}")
    hw_only = [
        shown(n)
        for n, v in (
            ("batch", batch),
            ("context", context),
            ("dtype", dtype),
            ("step_overhead", step_overhead),
            ("gpus", gpus),
            ("gamma_max", gamma_max),
        )
        if v is not None
    ] + ([shown("overlap")] if V.boolean(overlap, "overlap", "drafting overlapped with verification") else [])
    if hw_only and hardware is None:
        raise ValueError(
            f"{', '.join(hw_only)} {'needs' if len(hw_only) == 1 else 'need'} {shown('hardware')} (an "
            f"accelerator preset: {', '.join(H.accelerator_names())}); without it {'it is' if len(hw_only) == 1 else 'they are'} "
            f"not used"
        )
    if cost_ratio is not None:
        c = _number(cost_ratio, "cost_ratio", 0, "seconds of a draft step over seconds of a target step")
        return WallClockInputs("cost_ratio", c=c, gamma_max=gm)
    if any(lat):
        if draft_latency is None or target_latency is None:
            raise ValueError(
                f"latencies need both {shown('draft_latency')} and {shown('target_latency')} (seconds per "
                f"step of one token)"
            )
        if (verify_latency is None) != (verify_tokens is None):
            raise ValueError(
                f"{shown('verify_latency')} and {shown('verify_tokens')} go together (the seconds of one "
                f"verification pass and its tokens): give both or neither"
            )
        td = _number(draft_latency, "draft_latency", 0, "seconds per draft step", strict=True)
        tt = _number(target_latency, "target_latency", 0, "seconds per target step", strict=True)
        tv = None if verify_latency is None else _number(verify_latency, "verify_latency", 0, "seconds", strict=True)
        kt = (
            None
            if verify_tokens is None
            else int(_number(verify_tokens, "verify_tokens", 2, "gamma + 1 tokens", integer=True))
        )
        if not V.TINY <= td / tt < math.inf:  # the cost coefficient c = td / tt over- or underflows
            raise ValueError(
                f"{shown('draft_latency')} / {shown('target_latency')} = {td:g} s / {tt:g} s is "
                f"{'beyond the largest float' if td / tt == math.inf else f'below {V.TINY:.3g}, the smallest normal float'}"
                f": the cost coefficient c must be a number in [{V.TINY:.3g}, 1.8e+308]; check the two latencies"
            )
        if tv is not None and tv < tt:
            raise ValueError(
                f"{shown('verify_latency')} = {tv:g} s is below {shown('target_latency')} = {tt:g} s: a pass "
                f"over {kt:g} tokens cannot be faster than over one; check the measurements"
            )
        c, k = S.cost_from_latencies(td, tt, tv, kt)
        return WallClockInputs("latencies", c=c, verify_slope=k, gamma_max=gm)
    if hardware is None:
        return WallClockInputs("flop", gamma_max=gm)
    acc = H.get_accelerator(V.text(hardware, "hardware", "an accelerator preset"))
    acc = acc.times(
        V.integer(1 if gpus is None else gpus, "gpus", low=1, high=MAX_GPUS, what="devices in tensor parallel")
    )
    if dtype is not None:
        key = V.choice(str(dtype).strip().lower(), "dtype", list(DTYPES), "weights and KV cache")
        acc = acc.with_bytes_per_param(DTYPES[key], key)
    if step_overhead is not None:
        acc = replace(acc, step_overhead=_number(step_overhead, "step_overhead", 0, "seconds per forward pass"))
    return WallClockInputs(
        "hardware",
        hardware=acc,
        batches=_list(batch, "batch", 1, "sequences decoded together", True, 1.0),
        contexts=_list(context, "context", 0, "tokens in each KV cache", True, 0.0),
        overlap=V.boolean(overlap, "overlap", "drafting overlapped with verification"),
        gamma_max=gm,
    )


def perplexity_warnings(inputs: PlanInputs, opt: DraftOptimum) -> list[str]:
    """Warnings where the predicted perplexities of the draft at ``N*`` and of the target lie outside
    the ranges the acceptance plane was fitted on (``inputs.alpha.ppl_range``)."""
    rng = inputs.alpha.ppl_range
    if rng is None:
        return []
    x = float(perplexity(opt.n_star, inputs.draft_tokens[0], inputs.constants))
    y = float(perplexity(inputs.target.params, inputs.target.tokens, inputs.constants))
    out = []
    for what, v, lo, hi in (("draft at N*", x, rng[0], rng[1]), ("target", y, rng[2], rng[3])):
        if not lo <= v <= hi:
            out.append(
                f"the predicted perplexity of the {what}, {v:.3g}, lies outside the range the acceptance "
                f"plane ({inputs.alpha.label}) was fitted on, {lo:.3g} to {hi:.3g}: alpha is extrapolated"
            )
    return out


def _alpha(n, d, y, inputs):
    return acceptance_rate(perplexity(n, d, inputs.constants), y, inputs.alpha.coefficients)


def suggest_draft(inputs: PlanInputs, opt: DraftOptimum) -> dict[str, Any] | None:
    """The published dense model of the target's tokenizer group (``data/presets.csv``), smaller than
    half the target and with known tokens, whose throughput (Eq. 9, integer ``gamma``, its own
    pre-training tokens as ``D``) comes closest to the optimum's; None when there is none."""
    t = inputs.target
    if not t.tokenizer:
        return None
    y = float(perplexity(t.params, t.tokens, inputs.constants))
    best = None
    for r in preset_records():
        tok = r["tokens"]
        if (
            r["tokenizer"] != t.tokenizer
            or r["architecture"] != "dense"
            or not r["params"] <= t.params / 2
            or tok is None
            or not math.isfinite(tok)
        ):
            continue
        n = float(r["params"])
        a = float(_alpha(n, tok, y, inputs))
        if not 0 < a < 1:
            continue
        share = float(optimal_tokens_per_flop(a, n, t.params, True)) / opt.tokens_per_flop
        if best is None or share > best["share_of_optimum"]:
            best = {
                "model": r["model"],
                "hf_id": r["hf_id"] or None,
                "params": n,
                "tokens": float(tok),
                "alpha": a,
                "gamma_integer": int(optimal_gamma(a, n, t.params, integer=True)),
                "share_of_optimum": share,
            }
    return best


def _theorem_38(alpha: float, c: float, k: float) -> dict[str, Any]:
    rep = S.speedup_report(alpha, c, None, k)
    return {
        "speedup": rep.speedup_at_best,
        "gamma_integer": rep.gamma_integer,
        "gamma_continuous": None if math.isinf(rep.gamma_continuous) else rep.gamma_continuous,
        "cost_coefficient": c,
        "verify_cost_slope": k,
        "break_even_alpha": rep.break_even_alpha,
        "note": rep.note,
    }


def deployment_report(
    inputs: PlanInputs,
    opt: DraftOptimum,
    wc: WallClockInputs,
    draft_model: str | None = None,
    target_model: str | None = None,
) -> dict[str, Any]:
    """Everything ``sdsl plan`` prints beyond ``N*``: see the module's docstring.

    Parameters
    ----------
    inputs : sdsl.plan.PlanInputs
    opt : sdsl.model.throughput.DraftOptimum
        The optimum of ``inputs`` (:func:`sdsl.plan.plan`).
    wc : WallClockInputs
    draft_model, target_model : str, optional
        Repository ids or paths written into the engine settings (default: the suggested draft, the
        preset's repository, else placeholders).

    Returns
    -------
    dict
        JSON-ready (no NaN or infinity).
    """
    for name, v in (("draft_model", draft_model), ("target_model", target_model)):
        if v is not None:  # an empty id is not a silent "use the default"
            V.text(v, name, "a repository id or path written into the engine settings")
            if not v.isprintable():
                raise ValueError(
                    f"{shown(name)} {v!r} contains a control character (a newline, a tab): a repository id or "
                    f"path written into the engine settings is one line of printable characters"
                )
    m, d = inputs.target.params, inputs.draft_tokens[0]
    il = D.integer_draft_length(opt.alpha, opt.n_star, m)
    opt_int = (
        opt
        if inputs.integer
        else optimal_draft_size(
            m, d, inputs.target.tokens, inputs.constants, inputs.alpha.coefficients, True, inputs.n_range
        )
    )
    opt_cont = (
        optimal_draft_size(
            m, d, inputs.target.tokens, inputs.constants, inputs.alpha.coefficients, False, inputs.n_range
        )
        if inputs.integer
        else opt
    )
    out: dict[str, Any] = {
        "gamma_star_continuous": il.gamma_continuous,
        "gamma_star_integer": il.gamma_integer,
        "rounding_loss": il.rounding_loss,
        "n_star_integer_gamma": opt_int.n_star,
        "rounding_loss_reoptimised": max(0.0, 1.0 - opt_int.tokens_per_flop / opt_cont.tokens_per_flop),
        "tokens_per_flop_ratio": opt.tokens_per_flop * 2.0 * m,
    }
    y = float(perplexity(m, inputs.target.tokens, inputs.constants))
    sugg = suggest_draft(inputs, opt)
    warnings = perplexity_warnings(inputs, opt)
    if wc.source == "hardware":
        acc = wc.hardware
        assert acc is not None  # a "hardware" source always carries its accelerator
        shape, known = H.target_shape(m, inputs.target.shape)
        if not known:
            warnings.append("the target's architecture is unknown: the hardware model scales Llama-3-8B's shape")

        def alpha_of_n(n):
            return _alpha(n, d, y, inputs)

        rows: list[dict[str, Any]] = []
        for b in wc.batches:
            for ctx in wc.contexts:
                hp = H.plan_on_hardware(shape, alpha_of_n, acc, inputs.n_range, b, ctx, wc.overlap, wc.gamma_max)
                g_flop, s_flop = H.speedup_at(opt.n_star, opt.alpha, shape, acc, b, ctx, wc.overlap, wc.gamma_max)
                row = hp.as_dict()
                row.update(flop_n_star_gamma=g_flop, flop_n_star_speedup=s_flop)
                rows.append(row)
                if not hp.fits_in_memory:
                    warnings.append(
                        f"batch {b:g}, context {ctx:g}: weights and KV caches need "
                        f"{hp.memory_needed / 1e9:.4g} GB, more than the {acc.memory / 1e9:.4g} GB of "
                        f"{acc.name} (try --gpus{'' if acc.bytes_per_param <= 1 else ' or --dtype fp8'})"
                    )
        head = rows[0]
        wall = {
            "source": f"roofline of {acc.name} ({acc.dtype}), drafting "
            f"{'overlapped with' if wc.overlap else 'before'} verification",
            "speedup": head["speedup"],
            "gamma_integer": head["gamma_star"],
            "n_star": head["n_star"],
            "cost_coefficient": head["cost_coefficient"],
            "verify_cost": head["verify_cost"],
            "batch": head["batch"],
            "context": head["context"],
            "by_batch_and_context": rows,
            "shape_known": known,
        }
        gamma = int(head["gamma_star"])
        if sugg is not None:
            sugg["gamma_hardware"], sugg["speedup_hardware"] = H.speedup_at(
                sugg["params"],
                sugg["alpha"],
                shape,
                acc,
                head["batch"],
                head["context"],
                wc.overlap,
                wc.gamma_max,
            )
    else:
        if wc.source == "flop":
            c, k = opt.n_star / m, 0.0
            label = (
                "Theorem 3.8 with c = N*/M: the paper's FLOP model, i.e. batch 1, memory-bound, no overhead "
                "(give --cost-ratio, --draft-latency/--target-latency or --hardware for your deployment)"
            )
        else:
            assert wc.c is not None  # a cost ratio or the latencies: both set c
            c, k = wc.c, wc.verify_slope
            label = (
                "Theorem 3.8 with the given cost ratio c"
                if wc.source == "cost_ratio"
                else "Theorem 3.8 with c and the verification cost from the measured latencies"
            )
        wall = {"source": label, **_theorem_38(opt.alpha, c, k)}
        if wall["note"]:  # the draft length is the end of the search, not an optimum
            warnings.append(f"wall-clock draft length: {wall['note']}")
        gamma = int(wall["gamma_integer"])
        if sugg is not None and wc.source == "flop":
            sugg["gamma_wall_clock"] = sugg["gamma_integer"]
    out["wall_clock"] = wall
    out["suggested_draft"] = sugg
    # the suggested draft, when its checkpoint goes into the engine settings
    used = sugg if draft_model is None and sugg is not None and sugg.get("hf_id") else None
    eng_gamma = gamma
    if used is not None:
        eng_gamma = (
            int(used.get("gamma_hardware", used["gamma_integer"])) if wc.source in ("flop", "hardware") else gamma
        )
    out["num_speculative_tokens"] = eng_gamma
    deploy = _engine_deployment(inputs, wc, out, used, warnings)
    target_id = target_model or inputs.target.hf_id
    out["engines"] = D.engine_settings(
        eng_gamma, target_id, draft_model or (used["hf_id"] if used is not None else None), **deploy
    )
    out["engines"]["draft"] = (
        "given (--draft-model)"
        if draft_model
        else f"suggested: {used['model']}"
        if used is not None
        else "placeholder: a draft of about N* parameters"
    )
    dropped = getattr(inputs.target, "dropped_hf_id", None)
    why = f"the planned size is not that of the preset's model {dropped}" if dropped else "no preset model"
    out["engines"]["target"] = (
        "given (--target-model)" if target_model else f"preset: {target_id}" if target_id else f"placeholder: {why}"
    )
    out["interval"] = n_star_intervals(inputs, opt.n_star)
    for law, what in _law_extrapolation(out["interval"]):
        warnings.append(
            f"the {law} of the N* interval is evaluated at {what} (the range of the pairs it was "
            f"fitted on): its N* there is an extrapolation"
        )
    out["warnings"] = warnings
    return _json_safe(out)


def _engine_deployment(inputs: PlanInputs, wc: WallClockInputs, out: dict[str, Any], sugg, warnings: list[str]) -> dict:
    """What the engine settings carry from the roofline plan: the devices in tensor parallel (checked
    against the target's heads, and the suggested draft's), the precision and the draft length of
    each planned batch size (at the first context length)."""
    if wc.source != "hardware":
        return {}
    hw, shape, draft_tp = wc.hardware, inputs.target.shape, None
    assert hw is not None  # a "hardware" source always carries its accelerator
    tp = int(hw.count)
    if shape:
        heads, kv = int(shape["heads"]), int(shape["kv_heads"])
        why = D.check_tensor_parallel(tp, heads, kv, inputs.target.name)
        if why:
            raise ValueError(
                f"{shown('gpus')} {tp}: {why} (vLLM, SGLang and TensorRT-LLM shard the heads over the devices "
                f"in tensor parallel); choose one of {', '.join(map(str, D.tensor_parallel_choices(heads, kv)))}"
            )
    elif tp > 1:
        warnings.append(f"the target's heads are unknown: check that {tp} devices divide them before serving")
    row = next((r for r in preset_records() if sugg is not None and r["model"] == sugg["model"]), None)
    if tp > 1 and row is not None and row.get("heads") == row.get("heads") is not None:  # known, not NaN
        why = D.check_tensor_parallel(tp, int(row["heads"]), int(row["kv_heads"]), sugg["model"])
        if why:
            draft_tp = 1
            warnings.append(f"{why}: the draft runs on one device (draft_tensor_parallel_size 1), not {tp}")
    ctx0, rows = wc.contexts[0], out["wall_clock"]["by_batch_and_context"]
    full = H.target_shape(inputs.target.params, shape)[0]
    pairs = [
        (
            int(b),
            int(
                H.speedup_at(sugg["params"], sugg["alpha"], full, hw, b, ctx0, wc.overlap, wc.gamma_max)[0]
                if sugg is not None
                else next(r["gamma_star"] for r in rows if r["batch"] == b and r["context"] == ctx0)
            ),
        )
        for b in wc.batches
    ]
    dtype = hw.dtype if hw.dtype in D.ENGINE_DTYPES else None
    return {"tp": tp, "dtype": dtype, "gamma_by_batch": pairs, "draft_tp": draft_tp}


def _law_extrapolation(interval: dict[str, Any]) -> list[tuple[str, str]]:
    """(law, covariates) where a refitted law of the interval is evaluated outside its fitted draft
    sizes or tokens at the plan's constants (the perplexities' warning is :func:`perplexity_warnings`)."""
    out = []
    for v in interval["by_source"]["law"]["laws"]:
        far = [e for e in v["extrapolated"] if e.startswith(("draft size", "draft tokens"))]
        if v["law"] != "plan" and far:
            out.append((f"law {v['label']} ({v['fitted_on']})", "; ".join(far)))
    return out


def _json_safe(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x

"""What ``sdsl plan`` adds to the paper's optimum to make it deployable.

:func:`deployment_report` takes a validated plan (:class:`sdsl.plan.PlanInputs`) and its optimum
(:class:`sdsl.model.throughput.DraftOptimum`) and returns, as one JSON-ready mapping:

* the draft length an engine can take: the best integer ``gamma`` at ``N*`` beside the continuous
  ``gamma*``, the share of throughput rounding gives up, and ``N*`` re-optimised for an integer
  ``gamma`` (:mod:`sdsl.model.deploy`);
* the *wall-clock* speedup (Leviathan et al. 2023, Theorem 3.8, :mod:`sdsl.model.speedup`) with its
  cost coefficient ``c`` from one of: the FLOP model (``c = N*/M``, the default: the batch-1
  memory-bound limit, where it equals the tokens-per-FLOP ratio), a given ratio, measured draft and
  target latencies (with the measured cost of verifying ``gamma + 1`` tokens), or the step-time model
  of an accelerator (a preset or a file of ``sdsl steps fit``) at given batch sizes and context
  lengths (:mod:`sdsl.model.hardware`, which then re-optimises ``N*`` and ``gamma*`` for wall-clock
  time, with drafting sequential or overlapped); the draft length is the best from 1 up (or the one
  given), so the speedup falls below 1 where plain decoding is faster, and the plan says so;
* each candidate draft's acceptance rate, draft length, wall-clock speedup and share of the
  optimum's tokens per FLOP (:func:`evaluate_drafts`);
* the published drafts of the target's tokenizer group that an engine accepts
  (:mod:`sdsl.model.engine_rules`), up to three, best first by their wall-clock speedup, and
  ready-to-paste vLLM, SGLang, TensorRT-LLM and llama.cpp settings carrying the plan's devices,
  precision, context and per-batch draft length (:mod:`sdsl.model.deploy`): each engine serves the
  best candidate it accepts, or says in one line why it serves none, and a deployment whose
  weights and KV caches do not fit the devices gets the reason and the smallest ``--gpus`` instead
  of commands;
* the interval of ``N*`` over acceptance laws, loss-law constants and the plane's coefficients, by
  source and combined, with the sources of the headline interval (:mod:`sdsl.plan.interval`), and
  warnings where the acceptance plane (or a law of the interval) is evaluated outside the data it
  was fitted on;
* how far such an alpha and such a wall-clock speedup were off on published deployments of
  speculative decoding, for the plan's acceptance source and cost model
  (:func:`sdsl.plan.published.typical_error`).

Only numpy is imported (no pandas, no scipy): ``sdsl plan`` runs from the base install.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sdsl import validation as V
from sdsl.model import deploy as D
from sdsl.model import engine_rules as ER
from sdsl.model import hardware as H
from sdsl.model import speedup as S
from sdsl.model.laws import acceptance_rate, perplexity
from sdsl.model.optimum import DraftOptimum, optimal_draft_size
from sdsl.model.throughput import optimal_gamma, optimal_tokens_per_flop
from sdsl.plan import PlanInputs, preset_records
from sdsl.plan.interval import n_star_intervals
from sdsl.plan.published import published_law, typical_error
from sdsl.validation import shown

__all__ = [
    "DTYPES",
    "WallClockInputs",
    "check_wall_clock",
    "perplexity_warnings",
    "suggest_draft",
    "draft_wall_clock",
    "evaluate_drafts",
    "step_model_note",
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
    gamma: int | None = None
    """A fixed draft length (``--gamma``) instead of the search from 1 to ``gamma_max``."""


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
    gamma: Any = None,
) -> WallClockInputs:
    """Validate the wall-clock options of ``sdsl plan`` (one ``ValueError`` with one line per problem).

    At most one source of the cost coefficient: ``cost_ratio`` (``c``), the latencies
    ``draft_latency`` and ``target_latency`` in seconds (optionally ``verify_latency`` of a pass over
    ``verify_tokens`` tokens), or a ``hardware`` preset (with ``gpus`` in tensor parallel (default 1),
    ``dtype``, batch sizes ``batch``, context lengths ``context``, ``overlap``, ``step_overhead`` in
    seconds and ``gamma_max``, the largest draft length searched, default 32). None of them: the FLOP
    model, ``c = N*/M``. ``gamma`` fixes the draft length instead of searching it (with any source).
    An option the chosen source does not use is refused, not ignored."""
    gm = 32 if gamma_max is None else V.integer(gamma_max, "gamma_max", low=1, high=1024, what=_GAMMA_MAX)
    fixed = None if gamma is None else V.integer(gamma, "gamma", low=1, high=1024, what="a fixed draft length")
    if fixed is not None and gamma_max is not None:
        raise ValueError(
            f"{shown('gamma')} fixes the draft length and {shown('gamma_max')} bounds its search: give one of them"
        )
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
        return WallClockInputs("cost_ratio", c=c, gamma_max=gm, gamma=fixed)
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
        return WallClockInputs("latencies", c=c, verify_slope=k, gamma_max=gm, gamma=fixed)
    if hardware is None:
        return WallClockInputs("flop", gamma_max=gm, gamma=fixed)
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
        gamma=fixed,
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


def suggest_draft(
    inputs: PlanInputs, opt: DraftOptimum, gpus: int = 1, dtype: str | None = None
) -> dict[str, Any] | None:
    """The published dense model of the target's tokenizer group (``data/presets.csv``), smaller than
    half the target, with known tokens and accepted by at least one engine
    (:func:`sdsl.model.engine_rules.compatible_drafts` at ``gpus`` and ``dtype``), whose throughput
    (Eq. 9, integer ``gamma``, its own pre-training tokens as ``D``) comes closest to the optimum's;
    None when there is none. ``candidates`` lists up to three such drafts, best first, each with
    every engine's verdict (one line)."""
    t = inputs.target
    if not t.tokenizer:
        return None
    y = float(perplexity(t.params, t.tokens, inputs.constants))
    rows = [
        r
        for r in preset_records()
        if r["tokenizer"] == t.tokenizer
        and r["architecture"] == "dense"
        and r["params"] <= t.params / 2
        and r["tokens"] is not None
        and math.isfinite(r["tokens"])
    ]
    spec = _target_spec(inputs)
    accepted = {d.name: v for d, v in ER.compatible_drafts(spec, gpus, dtype, rows)}
    cands = []
    for r in rows:
        if r["model"] not in accepted:
            continue
        n, tok = float(r["params"]), float(r["tokens"])
        a = float(_alpha(n, tok, y, inputs))
        if not 0 < a < 1:
            continue
        cands.append(
            {
                "model": r["model"],
                "hf_id": r["hf_id"] or None,
                "params": n,
                "tokens": tok,
                "alpha": a,
                "gamma_integer": int(optimal_gamma(a, n, t.params, integer=True)),
                "share_of_optimum": float(optimal_tokens_per_flop(a, n, t.params, True)) / opt.tokens_per_flop,
                "engines": {k: v.line() for k, v in accepted[r["model"]].items()},
            }
        )
    if not cands:
        return None
    cands.sort(key=lambda c: -c["share_of_optimum"])
    return {**cands[0], "candidates": cands}


def _target_spec(inputs: PlanInputs) -> ER.ModelSpec:
    t = inputs.target
    return ER.ModelSpec.from_shape(t.name, t.params, t.shape, t.hf_id, t.tokenizer)


def _theorem_38(alpha: float, c: float, k: float, gamma: int | None = None) -> dict[str, Any]:
    """Theorem 3.8 at the best draft length from 1 up (or the given one): below 1 where speculation
    loses, as plain decoding is then the better choice and the plan says so."""
    rep = S.speedup_report(alpha, c, gamma, k)
    g = int(gamma) if gamma is not None else max(rep.gamma_integer, 1)
    speed = float(S.expected_speedup(alpha, g, c, 1.0 + k * g))
    return {
        "speedup": speed,
        "pays": bool(speed > 1.0),
        "gamma_integer": g,
        "gamma_fixed": gamma is not None,
        "gamma_continuous": None if math.isinf(rep.gamma_continuous) else rep.gamma_continuous,
        "cost_coefficient": c,
        "verify_cost_slope": k,
        "break_even_alpha": rep.break_even_alpha,
        "note": rep.note,
    }


def _shape_of_row(row: dict[str, Any]) -> H.Architecture | None:
    """A preset's architecture (its configuration's columns), or None where they are unknown."""
    cols = ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "tied_embeddings")
    vals = [row.get(k) for k in cols]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in vals):
        return None
    return H.target_shape(float(row["params"]), {k: float(v) for k, v in zip(cols, vals) if v is not None})[0]


def draft_wall_clock(
    inputs: PlanInputs, wc: WallClockInputs, n: float, alpha: float, draft: H.Architecture | None = None
) -> dict[str, Any]:
    """The wall-clock speedup of one draft of ``n`` parameters and acceptance rate ``alpha`` under
    the plan's source of the cost of drafting: its best integer draft length from 1 up (or the fixed
    one) and the speedup there, below 1 where plain decoding is faster.

    With a hardware model, at every planned batch size and context (``by_batch_and_context``; the
    headline is the first), the draft's own architecture when known (``draft``), else the target's
    aspect ratio (:func:`sdsl.model.hardware.draft_shape`). Otherwise Theorem 3.8 with ``c = N/M``
    (the FLOP model) or the given ``c`` and verification slope."""
    m = inputs.target.params
    if wc.source != "hardware":
        c, k = (n / m, 0.0) if wc.source == "flop" else (float(wc.c or 0.0), wc.verify_slope)
        t = _theorem_38(alpha, c, k, wc.gamma)
        return {"gamma": t["gamma_integer"], "speedup": t["speedup"], "pays": t["pays"], "cost_coefficient": c}
    acc = wc.hardware
    assert acc is not None  # a "hardware" source always carries its accelerator
    shape = H.target_shape(m, inputs.target.shape)[0]
    rows = []
    for b in wc.batches:
        for ctx in wc.contexts:
            g, s = H.speedup_at(n, alpha, shape, acc, b, ctx, wc.overlap, wc.gamma_max, wc.gamma, draft)
            rows.append({"batch": b, "context": ctx, "gamma": g, "speedup": s, "pays": s > 1.0})
    d = draft if draft is not None else H.draft_shape(n, shape)
    c = float(H.step_time(d, acc, wc.batches[0], wc.contexts[0], 1.0) / H.step_time(shape, acc, wc.batches[0], wc.contexts[0], 1.0))  # fmt: skip
    return {
        **{k: rows[0][k] for k in ("gamma", "speedup", "pays")},
        "cost_coefficient": c,
        "by_batch_and_context": rows,
    }


def evaluate_drafts(
    inputs: PlanInputs, opt: DraftOptimum, wc: WallClockInputs, sizes: dict[str, float]
) -> list[dict[str, Any]]:
    """Each candidate draft (``--draft-params``): its acceptance rate by the plan's laws, its best
    integer draft length and wall-clock speedup (:func:`draft_wall_clock`), and its tokens per FLOP
    as a share of the optimum's (Eq. 9 at its best integer draft length). Keys ``draft_params``,
    ``alpha``, ``gamma``, ``speedup``, ``pays``, ``tokens_per_flop_share``, ``tokens_per_flop_ratio``,
    ``cost_coefficient`` (and ``by_batch_and_context`` with a hardware model)."""
    m, d = inputs.target.params, inputs.draft_tokens[0]
    y = float(perplexity(m, inputs.target.tokens, inputs.constants))
    out = []
    for label, n in sizes.items():
        a = float(_alpha(n, d, y, inputs))
        if not 0 < a < 1:
            raise ValueError(
                f"{shown('candidates')} {label}: the acceptance rate of a draft of {n:.4g} parameters leaves (0, 1) "
                f"({a:.4g}) under {inputs.alpha.label}"
            )
        t = float(optimal_tokens_per_flop(a, n, m, True))
        out.append(
            {
                "draft_params": float(n),
                "alpha": a,
                **draft_wall_clock(inputs, wc, float(n), a),
                "tokens_per_flop_share": t / opt.tokens_per_flop,
                "tokens_per_flop_ratio": t * 2.0 * m,
            }
        )
    return out


def step_model_note(acc: H.Accelerator) -> str:
    """How far the step-time model of ``acc`` was off where it was checked, in one sentence."""
    kind = {"measured": "calibrated", "scaled": "scaled, not measured", "spec sheet": "uncalibrated"}[acc.basis]
    return f"{kind}: {acc.accuracy}" if acc.accuracy else kind


def _verdict(n: float, g: int, s: float, what: str = "draft") -> str:
    return (
        f"plain decoding is faster: the best {what} of {n:.3g} parameters at gamma {g} gives {s:.2f}x"
        if s <= 1.0
        else f"speculation pays: the best {what} of {n:.3g} parameters at gamma {g} gives {s:.2f}x"
    )


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
    ranked: list[dict[str, Any]] = []
    warnings = perplexity_warnings(inputs, opt)
    if wc.source == "hardware":
        acc = wc.hardware
        assert acc is not None  # a "hardware" source always carries its accelerator
        shape, known = H.target_shape(m, inputs.target.shape)
        if not known:
            warnings.append("the target's architecture is unknown: the step-time model scales Llama-3-8B's shape")
        if acc.basis != "measured":
            warnings.append(f"{acc.name}: step times {step_model_note(acc)}")

        def alpha_of_n(n):
            return _alpha(n, d, y, inputs)

        rows: list[dict[str, Any]] = []
        for b in wc.batches:
            for ctx in wc.contexts:
                hp = H.plan_on_hardware(
                    shape, alpha_of_n, acc, inputs.n_range, b, ctx, wc.overlap, wc.gamma_max, gamma=wc.gamma
                )
                g_flop, s_flop = H.speedup_at(
                    opt.n_star, opt.alpha, shape, acc, b, ctx, wc.overlap, wc.gamma_max, wc.gamma
                )
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
            "source": f"step-time model of {acc.name} ({acc.dtype}; {step_model_note(acc)}), drafting "
            f"{'overlapped with' if wc.overlap else 'before'} verification",
            "speedup": head["speedup"],
            "pays": head["pays"],
            "gamma_integer": head["gamma_star"],
            "gamma_fixed": wc.gamma is not None,
            "n_star": head["n_star"],
            "cost_coefficient": head["cost_coefficient"],
            "verify_cost": head["verify_cost"],
            "batch": head["batch"],
            "context": head["context"],
            "by_batch_and_context": rows,
            "shape_known": known,
            "step_model": step_model_note(acc),
        }
        wall["verdict"] = _verdict(head["n_star"], head["gamma_star"], head["speedup"])
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
        wall = {"source": label, **_theorem_38(opt.alpha, c, k, wc.gamma)}
        wall["verdict"] = _verdict(opt.n_star, wall["gamma_integer"], wall["speedup"], "draft (N*)")
        if wall["note"] and wc.gamma is None:  # the draft length is the end of the search, not an optimum
            warnings.append(f"wall-clock draft length: {wall['note']}")
    if sugg is not None:  # each draft an engine accepts, by its wall-clock speedup: the best three
        presets = {r["model"]: r for r in preset_records()}
        for c in sugg["candidates"]:
            ev = draft_wall_clock(inputs, wc, c["params"], c["alpha"], _shape_of_row(presets[c["model"]]))
            c.update(gamma_wall_clock=ev["gamma"], speedup_wall_clock=ev["speedup"], pays=ev["pays"])
            if "by_batch_and_context" in ev:
                c["by_batch_and_context"] = ev["by_batch_and_context"]
        ranked = sorted(sugg["candidates"], key=lambda c: -c["speedup_wall_clock"])
        sugg = {**ranked[0], "candidates": ranked[:3]}
    out["wall_clock"] = wall
    out["suggested_draft"] = sugg
    if inputs.candidates:
        out["candidates"] = evaluate_drafts(inputs, opt, wc, dict(inputs.candidates))
    # the suggested draft, when its checkpoint goes into the engine settings
    used = sugg if draft_model is None and sugg is not None and sugg.get("hf_id") else None
    eng_gamma = int(wall["gamma_integer"]) if wall["pays"] else 0
    if used is not None:
        eng_gamma = int(used["gamma_wall_clock"]) if used["pays"] else 0
    out["num_speculative_tokens"] = eng_gamma
    deploy = _engine_deployment(inputs, wc, out, used, warnings, draft_model, ranked)
    target_id = target_model or inputs.target.hf_id
    out["engines"] = D.engine_settings(
        eng_gamma, target_id, draft_model or (used["hf_id"] if used is not None else None), **deploy
    )
    if "note" in out["engines"] and not out["engines"].get("vllm"):
        who = used if used is not None else None
        out["engines"]["note"] = (
            _verdict(who["params"], who["gamma_wall_clock"], who["speedup_wall_clock"])
            if who is not None
            else wall["verdict"]
        ) + ": serve without speculative decoding"
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
    out["published_accuracy"] = typical_error(inputs.alpha.key, wc.source, wc.hardware)
    plane = inputs.alpha
    if plane.key == "published" and plane.temperature is not None:
        lo, hi = published_law().temperature_range
        if not lo <= plane.temperature <= hi:
            warnings.append(
                f"the temperature {plane.temperature:g} lies outside the temperatures the published law was fitted "
                f"on ({lo:g} to {hi:g}): its alpha is extrapolated"
            )
    out["warnings"] = warnings
    return _json_safe(out)


def _engine_deployment(
    inputs: PlanInputs,
    wc: WallClockInputs,
    out: dict[str, Any],
    sugg,
    warnings: list[str],
    draft_model: str | None = None,
    ranked: list[dict[str, Any]] | None = None,
) -> dict:
    """What the engine settings carry from the plan: the devices in tensor parallel (checked against
    the target's heads), the precision, the longest planned context, the draft length of each planned
    batch size (at the first context length), each engine's verdict on the draft it serves
    (:func:`sdsl.model.engine_rules.check_pair`: the given ``--draft-model``, else the suggested draft,
    else the next candidate the engine accepts) and, when weights and KV caches do not fit the devices,
    the line that refuses every command (:func:`sdsl.model.engine_rules.memory_fit`)."""
    hw = wc.hardware if wc.source == "hardware" else None
    shape, name = inputs.target.shape, inputs.target.name
    tp = 1 if hw is None else int(hw.count)
    if shape:
        heads, kv = int(shape["heads"]), int(shape["kv_heads"])
        why = D.check_tensor_parallel(tp, heads, kv, name)
        if why:
            raise ValueError(
                f"{shown('gpus')} {tp}: {why} (vLLM, SGLang and TensorRT-LLM shard the heads over the devices "
                f"in tensor parallel); choose one of {', '.join(map(str, D.tensor_parallel_choices(heads, kv)))}"
            )
    elif tp > 1:
        warnings.append(f"the target's heads are unknown: check that {tp} devices divide them before serving")
    dtype = hw.dtype if hw is not None and hw.dtype in D.ENGINE_DTYPES else None
    context = int(max(wc.contexts)) if hw is not None and max(wc.contexts) > 0 else None
    target = _target_spec(inputs)
    rows = {r["model"]: r for r in preset_records()}
    by_id = {r["hf_id"]: r for r in rows.values() if r.get("hf_id")}
    if draft_model is not None:  # the user's draft: its shape when it is a preset's
        row = by_id.get(draft_model) or rows.get(draft_model)
        spec = (
            ER.ModelSpec.from_preset(row)
            if row
            else ER.ModelSpec(draft_model, float(out.get("n_star_integer_gamma") or 0) or 1.0)
        )
        chain: list[tuple[ER.ModelSpec, dict[str, Any] | None]] = [(spec, None)]
    elif sugg is not None:  # every draft an engine may take, best first: the engine serves the first it accepts
        cands = [c for c in (ranked or [sugg]) if c.get("hf_id") and c["model"] in rows]
        chain = [(ER.ModelSpec.from_preset(rows[c["model"]]), c) for c in cands]
    else:
        chain = []
    ctx0, rows_hw = wc.contexts[0], out["wall_clock"].get("by_batch_and_context", [])

    def pairs_of(c: dict[str, Any] | None) -> list[tuple[int, int]]:
        """(batch, draft length) at the first context; 0 where plain decoding is faster."""
        src = rows_hw if c is None else c["by_batch_and_context"]
        key = "gamma_star" if c is None else "gamma"
        at = {r["batch"]: r for r in src if r["context"] == ctx0}
        return [(int(b), int(at[b][key]) if at[b]["pays"] else 0) for b in wc.batches]

    verdicts: dict[str, dict[str, Any]] = {}
    drafts: dict[str, tuple[str | None, list[tuple[int, int]]]] = {}
    checked = [(spec, c, ER.check_pair(target, spec, tp, dtype)) for spec, c in chain]
    for key in D.ENGINE_KEYS:
        if not checked:
            continue
        pick = next(((spec, c, v[key]) for spec, c, v in checked if v[key].ok), None)
        first = checked[0]
        if pick is None:
            verdicts[key] = {
                **first[2][key].as_dict(),
                "reasons": [_refusal([(sp.name, v[key]) for sp, _, v in checked])],
            }
            continue
        spec, c, v = pick
        verdicts[key] = v.as_dict()
        if c is not None and c is not first[1]:
            verdicts[key]["caveats"] = [
                f"serves {spec.name}, not the suggested {first[0].name} ({first[2][key].line()})",
                *verdicts[key]["caveats"],
            ]
            g = [(1, int(c["gamma_wall_clock"]) if c["pays"] else 0)]
            drafts[key] = (c["hf_id"], pairs_of(c) if hw is not None else g)
    deploy: dict[str, Any] = {"tp": tp, "dtype": dtype, "context": context, "verdicts": verdicts, "drafts": drafts}
    if hw is not None:
        deploy["gamma_by_batch"] = pairs_of(sugg)
        draft_spec = (
            chain[0][0] if chain else ER.ModelSpec("the draft at N*", float(out["wall_clock"]["n_star"] or 1.0))
        )
        fit = ER.memory_fit(target, draft_spec, hw, tp, max(wc.batches), max(wc.contexts))
        if not fit.fits:
            deploy["refused"] = fit.reason()
    return deploy


def _refusal(tried: list[tuple[str, ER.Verdict]]) -> str:
    """One line for an engine that takes none of the drafts tried: the reasons they share once,
    then each draft's own."""
    if len(tried) == 1:
        return tried[0][1].line()
    common = [r for r in tried[0][1].reasons if all(r in v.reasons for _, v in tried)]
    own = [
        f"{n}: {'; '.join(r for r in v.reasons if r not in common)}" for n, v in tried if set(v.reasons) - set(common)
    ]
    if not own and all("(the target, " in r for r in common):  # the engine cannot serve the target at all
        return "; ".join(common)
    return f"none of the candidate drafts ({', '.join(n for n, _ in tried)}): " + "; ".join(common + own)


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

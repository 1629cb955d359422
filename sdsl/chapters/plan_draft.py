"""The plan chapter: a draft for a target of the reader's choice (the planning itself is
:mod:`sdsl.plan`), its tables, its figure and the numbers its text cites (:func:`summary`). How the
reader sees the tables (the ``view_*`` functions) is :mod:`sdsl.book.views`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sdsl.audit.rules import D_TARGET_4E12
from sdsl.book.outputs import declare
from sdsl.book.tables import count, words
from sdsl.plan import covariance_sensitivity, plan_table

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made: `sdsl plan` runs without it
    import pandas as pd

from sdsl.book.views import view_columns
from sdsl.model.optimum import throughput_curve
from sdsl.plan import PlanInputs

__all__ = [
    "CHAPTER",
    "inputs_table",
    "candidates_table",
    "interval_edge_share",
    "table5_check",
    "throughput_curves",
    "figure_throughput",
    "view_inputs",
    "lookup",
    "lookup_summary",
    "interval_report",
    "interval_table",
    "engine_report",
    "engines_table",
    "engines_markdown",
    "cli_command",
    "PLAN_PARAMETERS",
    "step_times",
    "step_time_errors",
    "figure_step_times",
    "OVERHEAD_FACTORS",
    "overhead_sweep",
    "figure_overhead",
    "view_step_errors",
    "step_summary",
    "summary",
]

#: Name of the notebook chapter (and of its artifacts folder).
CHAPTER = "plan_draft"


def inputs_table(inputs: PlanInputs) -> pd.DataFrame:
    """The checked inputs of a plan as a two-column table (``input``, ``value``) for the reader."""
    import pandas as pd

    t = inputs.target
    return pd.DataFrame(
        {
            "input": [
                "target",
                "M (parameters)",
                "D′ (tokens)",
                "D (tokens)",
                "loss-law constants",
                "acceptance plane",
                "draft length",
                "N range (parameters)",
            ],
            "value": [
                t.name,
                count(t.params),
                count(t.tokens),
                ", ".join(count(d) for d in inputs.draft_tokens),
                str(words(inputs.constants.name)),
                inputs.alpha.label,
                "integer" if inputs.integer else "continuous",
                f"{count(inputs.n_range[0])} to {count(inputs.n_range[1])}",
            ],
        }
    )


@declare("candidates", "the candidate drafts as a share of the optimum", data=("presets",))
def candidates_table(inputs: PlanInputs, table: pd.DataFrame) -> pd.DataFrame:
    """Every candidate draft of ``inputs`` at every ``D`` of the plan ``table``, with its throughput
    as a share of that ``D``'s optimum (:func:`sdsl.plan.candidate_shares`)."""
    import pandas as pd

    from sdsl import plan as P

    frames = [P.candidate_shares(inputs, float(d), P.plan(inputs, float(d))) for d in table["d_draft"]]
    return pd.concat(frames, ignore_index=True)


def interval_edge_share(inputs: PlanInputs, table: pd.DataFrame) -> float:
    """The lower of ``T(N)/T(N*)`` at the two ends of the bootstrap interval of ``N*`` (first row of
    the plan ``table``): how much throughput a draft at the edge of the interval gives up.
    NaN when the plan has no interval (``n_boot = 0``)."""
    first = table.iloc[0]
    if "n_star_ci_low" not in table.columns or not np.isfinite(first.get("n_star_ci_low", np.nan)):
        return float("nan")
    edges = throughput_curve(
        np.array([first["n_star_ci_low"], first["n_star_ci_high"]], dtype=float),
        inputs.target.params,
        inputs.draft_tokens[0],
        inputs.target.tokens,
        inputs.constants,
        inputs.alpha.coefficients,
        inputs.integer,
    )
    return float(np.min(edges["tokens_per_flop"]) / first["tokens_per_flop"])


@declare("table5_check", "the planning code on Table 5's inputs, as printed and with D' = 4e12", data=("paper_table5",))
def table5_check(
    paper5: pd.DataFrame | None = None, d_target_14b: float = D_TARGET_4E12.default["Qwen1.5-14B"]
) -> pd.DataFrame:
    """The planning code on the paper's Table 5 inputs (``data/paper_table5.csv``; Table 3's plane,
    Besiroglu et al. constants, continuous gamma): ``N*`` and ``T(N*)`` beside the printed values
    and their relative deviations, one row per printed row (``reading`` = ``as printed``), and the
    Qwen1.5-14B rows again with the target's tokens ``D'`` = ``d_target_14b`` (``reading`` =
    ``D' = 4e+12``), the reading the optimal-draft chapter finds behind them."""
    import pandas as pd

    from sdsl import data
    from sdsl import plan as P

    t5 = data.load("paper_table5") if paper5 is None else paper5
    rows = []
    readings = [("as printed", None), (f"D\u2032 read as {d_target_14b / 1e12:g}T", d_target_14b)]
    for reading, d_alt in readings:
        for _, r in t5.iterrows():
            if d_alt is not None and r["target"] != "Qwen1.5-14B":
                continue
            d_target = float(r["d_target"]) if d_alt is None else float(d_alt)
            o = P.plan(P.check_inputs(target_params=r["m"], target_tokens=d_target, draft_tokens=r["d_draft"]))
            rows.append(
                {
                    "target": r["target"],
                    "draft_family": r["draft_family"],
                    "reading": reading,
                    "d_target": d_target,
                    "n_star_paper": float(r["n_star"]),
                    "n_star_ours": o.n_star,
                    "n_star_rel_dev": o.n_star / float(r["n_star"]) - 1,
                    "tpf_paper": float(r["tokens_per_flop"]),
                    "tpf_ours": o.tokens_per_flop,
                    "tpf_rel_dev": o.tokens_per_flop / float(r["tokens_per_flop"]) - 1,
                }
            )
    return pd.DataFrame(rows)


def interval_report(inputs: PlanInputs, n_star: float) -> dict[str, Any]:
    """The interval of ``N*`` that ``sdsl plan`` prints for ``inputs`` (with its bootstrap of
    ``inputs.n_boot`` draws and ``inputs.seed``): :func:`sdsl.plan.interval.n_star_intervals`, the
    headline over every source computed (the acceptance law, the loss-law constants and the plane's
    coefficients) and each source alone."""
    from sdsl.plan.interval import n_star_intervals

    return n_star_intervals(inputs, n_star)


#: The sources of the interval of N* as the reader reads them, in the order shown.
INTERVAL_SOURCES = {
    "law": "the acceptance law (a model choice: the range over the laws)",
    "constants": "the loss-law constants (a model choice: the range over the published sets)",
    "coefficients": "the plane's coefficients (95 % parametric bootstrap of their standard errors)",
}


@declare(
    "n_star_interval",
    "the interval of N* that sdsl plan prints: every source together, then each alone",
    data=("presets", "paper_table3", "acceptance_laws"),
)
def interval_table(report: dict[str, Any]) -> pd.DataFrame:
    """The interval of ``N*`` of :func:`interval_report` as a table: the headline (every source
    computed, an envelope of model choices around the bootstrap's statistical interval), then each
    source alone with the others at the plan's choice; ``low`` and ``high`` in parameters."""
    import pandas as pd

    h, by = report["headline"], report["by_source"]
    rows = [
        {
            "source": "every source together (the headline)",
            "low": h.get("low", np.nan),
            "high": h.get("high", np.nan),
            "holds": ", ".join(INTERVAL_SOURCES[k].split(" (")[0] for k in h.get("sources", [])),
        }
    ]
    for key, what in INTERVAL_SOURCES.items():
        b = by[key]
        rows.append(
            {
                "source": what,
                "low": b.get("low", np.nan) if b["computed"] else np.nan,
                "high": b.get("high", np.nan) if b["computed"] else np.nan,
                "holds": what.split(" (")[0] if b["computed"] else f"not computed: {b['why']}",
            }
        )
    return pd.DataFrame(rows)


def engine_report(inputs: PlanInputs, hardware: str, context: int = 1024) -> dict[str, Any]:
    """What ``sdsl plan --hardware <hardware> --context <context> --gpus G`` prints beyond ``N*`` for
    ``inputs`` (:func:`sdsl.plan.deployment.deployment_report`), with ``G`` the fewest devices of
    :data:`sdsl.model.hardware.DEVICE_COUNTS` on which it prints engine commands (the weights and
    KV caches fit), as a user would choose it after the plan names it."""
    from sdsl import plan as P
    from sdsl.model.hardware import DEVICE_COUNTS
    from sdsl.plan.deployment import check_wall_clock, deployment_report

    opt = P.plan(inputs)
    report: dict[str, Any] = {}
    for gpus in DEVICE_COUNTS:
        wc = check_wall_clock(hardware=hardware, gpus=gpus, context=[context])
        report = deployment_report(inputs, opt, wc)
        if (report["engines"].get("vllm") or {}).get("command"):
            break
    return report


#: The engines of ``sdsl plan``, as their projects name them, in the order it prints them.
ENGINES = (("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM"), ("llamacpp", "llama.cpp"))


@declare(
    "engines",
    "the engine commands sdsl plan prints for the planned target, with the versions they were checked against",
    data=("presets",),
    shown=False,
)
def engines_table(report: dict[str, Any]) -> pd.DataFrame:
    """The engine settings of :func:`engine_report`: per engine its command (as ``sdsl plan``
    prints it), the version it was checked against and what it needs."""
    import pandas as pd

    e = report["engines"]
    rows = []
    for key, name in ENGINES:
        s = e.get(key) or {}
        if s.get("command"):
            rows.append(
                {"engine": name, "command": s["command"], "checked_against": s["version"], "needs": s["requires"]}
            )
    return pd.DataFrame(rows, columns=["engine", "command", "checked_against", "needs"])


def engines_markdown(engines: pd.DataFrame) -> str:
    """The engine commands of :func:`engines_table` as the page shows them: per engine, what it was
    checked against (its files, options and interfaces as code) and its command in a code block
    (Markdown; TensorRT-LLM's is Python)."""
    import re

    def code(text: str) -> str:
        return re.sub(r"(?<![`\w-])(--[\w-]+|[\w.-]*[_/][\w./-]*\w)", r"`\1`", text)

    parts = []
    for r in engines.itertuples(index=False):
        lang = "python" if r.command.startswith(("from ", "import ")) else "bash"
        parts += [
            f"{r.engine}, checked against {code(r.checked_against)}; needs {code(r.needs)}:",
            "",
            f"```{lang}",
            r.command,
            "```",
            "",
        ]
    return "\n".join(parts)


def cli_command(**parameters: Any) -> str:
    """The ``sdsl plan`` command that makes the plan of the notebook's ``parameters`` (its names:
    ``preset``, ``target_params``, ...; those left at ``None`` are left out), flag by flag."""
    flags = {
        "preset": "--preset",
        "target_params": "--target-params",
        "target_tokens": "--target-tokens",
        "draft_tokens": "--draft-tokens",
        "constants": "--constants",
        "alpha_source": "--alpha-source",
        "temperature": "--temperature",
        "n_range": "--n-range",
        "candidates": "--draft-params",
        "n_boot": "--bootstrap",
        "seed": "--seed",
    }
    defaults = {"constants": "besiroglu2024", "alpha_source": "paper", "n_boot": 0}

    def text(v: Any) -> str:
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    parts = ["sdsl plan"]
    for name, flag in flags.items():
        v = parameters.get(name)
        if v is None or v == "" or defaults.get(name) == v or (name == "seed" and not parameters.get("n_boot")):
            continue
        if name == "candidates":
            parts += [f"{flag} {text(x)}" for x in v.values()]
        elif name == "draft_tokens" and isinstance(v, (list, tuple)):
            parts += [f"{flag} {text(x)}" for x in v]
        elif name == "n_range":
            parts.append(f"{flag} {text(float(v[0]))} {text(float(v[1]))}")
        elif isinstance(v, (list, tuple)):
            parts.append(f"{flag} {','.join(text(x) for x in v)}")
        else:
            parts.append(f"{flag} {text(v)}")
    if parameters.get("integer_gamma"):
        parts.append("--integer-gamma")
    return " ".join(parts)


def throughput_curves(inputs: PlanInputs, table: pd.DataFrame, points: int = 400) -> pd.DataFrame:
    """The curves of :func:`figure_throughput`: ``T(N)`` (Eq. 9 at ``gamma*``) on ``points``
    log-spaced draft sizes of ``inputs.n_range``, one curve per draft-token count ``D`` of
    ``table``."""
    import pandas as pd

    lo, hi = inputs.n_range
    n = np.exp(np.linspace(np.log(lo), np.log(hi), points))
    frames = []
    for d in table["d_draft"].astype(float):
        cur = throughput_curve(
            n,
            inputs.target.params,
            d,
            inputs.target.tokens,
            inputs.constants,
            inputs.alpha.coefficients,
            inputs.integer,
        )
        frames.append(
            pd.DataFrame(
                {
                    "d_draft": d,
                    "n": cur["n"],
                    "alpha": cur["alpha"],
                    "gamma": cur["gamma"],
                    "tokens_per_flop": cur["tokens_per_flop"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@declare(
    "figure_throughput",
    "throughput against draft size for the planned target",
    data=("presets", "paper_table3"),
    figure=True,
)
def figure_throughput(
    inputs: PlanInputs, table: pd.DataFrame, candidates: pd.DataFrame | None = None, points: int = 400
):
    """Throughput ``T(N)`` (Eq. 9 with ``gamma*``) against draft size for each ``D``, the optimum
    ``N*`` (star) with its bootstrap interval (shaded), and the candidate drafts (dots) annotated
    with their share of the optimum. Units on both axes, no offset label."""
    import matplotlib.pyplot as plt

    from sdsl.book.style import family_color, scaled, tokens

    fig, ax = plt.subplots()
    curves = throughput_curves(inputs, table, points)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, row in table.reset_index(drop=True).iterrows():
        d = float(row["d_draft"])
        colour = (
            family_color(inputs.target.draft_family)
            if inputs.target.draft_family and len(table) == 1
            else palette[i % len(palette)]
        )
        cur = curves[curves["d_draft"] == d]
        ax.plot(cur["n"], cur["tokens_per_flop"], color=colour, label=f"drafts trained on D = {tokens(d)} tokens")
        ax.plot(
            [row["n_star"]],
            [row["tokens_per_flop"]],
            marker="*",
            markersize=14,
            color=colour,
            markeredgecolor="black",
            linestyle="none",
        )
        if "n_star_ci_low" in row and np.isfinite(row.get("n_star_ci_low", np.nan)):
            ax.axvspan(row["n_star_ci_low"], row["n_star_ci_high"], color=colour, alpha=0.15, linewidth=0)
        if candidates is not None and len(candidates):
            sub = candidates[candidates["d_draft"] == d]
            ax.plot(sub["params"], sub["tokens_per_flop"], marker="o", color="black", linestyle="none")
            for _, c in sub.iterrows():
                ax.annotate(
                    f"{c['candidate']}: {100 * c['share_of_optimum']:.0f} %",
                    (c["params"], c["tokens_per_flop"]),
                    textcoords="offset points",
                    xytext=(6, 6),
                    fontsize=8,
                )
    ax.set_xscale("log")
    ax.set_xlabel("draft size N (parameters)")
    scaled(ax, "y", r"throughput $\mathcal{T}(N)$", "tokens per FLOP", curves["tokens_per_flop"])
    ax.legend(loc="lower left")
    return fig


def view_inputs(inputs: PlanInputs):
    """The checked inputs (:func:`inputs_table`) as the reader sees them."""
    return view_columns(
        inputs_table(inputs),
        {"input": "input", "value": "value"},
        wrap=["value"],
        caption="The inputs of this plan, as checked.",
        label="plan_draft-inputs",
    )


@declare(
    "lookup",
    "N*, gamma*, alpha, the tokens per FLOP over plain decoding and the wall-clock speedup for every dense target preset",
    data=("presets", "paper_table3", "accelerators"),
)
def lookup(hardware: str = "h100-sxm") -> pd.DataFrame:
    """The lookup table of :mod:`sdsl.plan.lookup` (``sdsl presets --plan``): one row per target
    preset of ``data/presets.csv``, with ``m_over_n_star`` (``M / N*``) added.

    Parameters
    ----------
    hardware : str
        Accelerator preset of ``data/accelerators.csv`` for the wall-clock speedup.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`sdsl.plan.lookup.LOOKUP_COLUMNS` and ``m_over_n_star`` (NaN where not planned).
    """
    from sdsl.plan.lookup import lookup_table

    t = lookup_table(hardware)
    t["m_over_n_star"] = t["params"] / t["n_star"]
    return t


def lookup_summary(table: pd.DataFrame) -> dict[str, Any]:
    """The numbers the text cites about the lookup table (glue names without the chapter prefix)."""
    ok = table[table["status"] == "planned"]
    return {
        "lookup_n": int(len(table)),
        "lookup_n_planned": int(len(ok)),
        "lookup_n_moe": int(table["status"].str.startswith("refused").sum()),
        "lookup_n_unknown": int((table["status"] == "tokens unknown").sum()),
        "lookup_hardware": str(ok["hardware"].iloc[0]),
        "lookup_ratio_min": float(ok["m_over_n_star"].min()),
        "lookup_ratio_max": float(ok["m_over_n_star"].max()),
        "lookup_gamma_min": int(ok["gamma_star_integer"].min()),
        "lookup_gamma_max": int(ok["gamma_star_integer"].max()),
        "lookup_speedup_min": float(ok["wall_clock_speedup"].min()),
        "lookup_speedup_max": float(ok["wall_clock_speedup"].max()),
    }


#: The devices of the step-time check, as the reader names them.
_H200, _CPU = "NVIDIA H200 (shared measurement)", "this machine's CPU"


@declare(
    "step_times",
    "measured against modelled seconds of one forward pass: H200 shapes held out of the fit, this machine's CPU",
    data=("h200_step_times", "cpu_step_times", "accelerators"),
    shown=False,
)
def step_times() -> pd.DataFrame:
    """Every measured pass beside the step-time model's prediction (``sdsl.model.calibration``):
    on the H200, each shape predicted by the model fitted on the other four (``fitted, shape held
    out``; the passes of context 8192 with several new tokens, left out of every fit, predicted by
    the fit on all shapes and flagged ``slow_attention``) and by the spec sheet without overheads;
    on this machine's CPU, each shape held out likewise."""
    import pandas as pd

    from sdsl import data
    from sdsl.model import calibration as C
    from sdsl.model.hardware import get_accelerator

    h200 = [dict(r) for r in data.records("h200_step_times")]
    fast = [r for r in h200 if not C.slow_attention(r)]
    slow = [r for r in h200 if C.slow_attention(r)]
    cpu = [dict(r) for r in data.records("cpu_step_times")]
    parts = [
        (_H200, "fitted, shape held out", C.leave_one_shape_out(fast, memory=141e9)),
        (_H200, "fitted, shape held out", C.step_time_errors(slow, get_accelerator("h200"))),
        (_H200, "spec sheet, no overhead", C.step_time_errors(h200, get_accelerator("h200-spec"))),
        (_CPU, "fitted, shape held out", C.leave_one_shape_out(cpu, bytes_per_param=4.0, dtype="fp32")),
    ]
    rows = [{"device": d, "model": m, **e} for d, m, errs in parts for e in errs]
    return pd.DataFrame(rows)


@declare(
    "step_time_errors",
    "how far the step-time model is from measured step times, by device and model",
    data=("h200_step_times", "cpu_step_times", "accelerators"),
)
def step_time_errors(steps: pd.DataFrame) -> pd.DataFrame:
    """:func:`step_times` summarised per device and model (the passes of context 8192 with several new
    tokens apart): passes, the share within 20 % of the measured time, the median
    ``|ln(predicted/measured)|``, and the smallest and largest ratio."""
    import pandas as pd

    from sdsl.model.calibration import error_summary

    rows = []
    keys = steps.assign(kind=np.where(steps["slow_attention"], "context 8192, several new tokens", "every other pass"))
    for (device, model, kind), g in keys.groupby(["device", "model", "kind"], sort=False):
        s = error_summary(g.to_dict("records"))
        rows.append({"device": device, "model": model, "passes_of": kind, **s})
    return pd.DataFrame(rows)


@declare(
    "figure_step_times",
    "measured against modelled step times on an H200 and on this machine's CPU",
    data=("h200_step_times", "cpu_step_times", "accelerators"),
    figure=True,
)
def figure_step_times(steps: pd.DataFrame):
    """Predicted against measured seconds of one forward pass, log-log, one panel per device: the
    fitted model on shapes held out of its fit (one colour per shape; hollow: the passes of context
    8192 with several new tokens) and, on the H200, the spec sheet without overheads (grey); the
    diagonal with a band of +-20 %."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, device in zip(axes, (_H200, _CPU)):
        d = steps[steps["device"] == device]
        lo, hi = d[["measured_s", "predicted_s"]].min().min() / 1.5, d[["measured_s", "predicted_s"]].max().max() * 1.5
        x = np.geomspace(lo, hi, 50)
        ax.fill_between(x, x / 1.2, x * 1.2, color="0.85", linewidth=0, label="within 20 %")
        ax.plot(x, x, color="0.4", linewidth=0.8)
        spec = d[d["model"].str.startswith("spec")]
        if len(spec):
            ax.plot(spec["measured_s"], spec["predicted_s"], "x", color="0.55", markersize=4,
                    label="spec sheet, no overhead")  # fmt: skip
        fit = d[d["model"].str.startswith("fitted")]
        for i, (shape, g) in enumerate(fit.groupby("shape", sort=False)):
            c = palette[i % len(palette)]
            solid, hollow = g[~g["slow_attention"]], g[g["slow_attention"]]
            ax.plot(solid["measured_s"], solid["predicted_s"], "o", color=c, markersize=4, label=shape)
            if len(hollow):
                ax.plot(hollow["measured_s"], hollow["predicted_s"], "o", mfc="none", color=c, markersize=5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_xlabel("measured (s)")
        ax.set_ylabel("predicted (s)")
        ax.set_title(device, fontsize=10)
        ax.legend(fontsize=7, loc="upper left", frameon=False)
    return fig


#: Multiples of the calibrated per-layer overhead swept by :func:`overhead_sweep` (0: the spec-sheet
#: assumption of no overhead).
OVERHEAD_FACTORS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


@declare(
    "overhead_sweep",
    "N*, the draft length and the wall-clock speedup against the per-layer overhead",
    data=("accelerators", "presets", "paper_table3"),
    shown=False,
)
def overhead_sweep(
    inputs: PlanInputs, hardware: str = "h200", batches: tuple[int, ...] = (1, 64), context: int = 1024
) -> pd.DataFrame:
    """The hardware plan of the planned target (:func:`sdsl.model.hardware.plan_on_hardware`, the
    plan's acceptance law) with the calibrated accelerator's overheads scaled by each of
    :data:`OVERHEAD_FACTORS`, on the fewest devices that hold the target, at each batch size: how
    ``N*``, the best draft length and the speedup move with the overhead no spec sheet states.
    Empty when the target's architecture is unknown."""
    import pandas as pd

    from sdsl.model import hardware as H
    from sdsl.model.laws import acceptance_rate, perplexity

    shape, known = H.target_shape(inputs.target.params, inputs.target.shape)
    cols = ["factor", "layer_overhead_s", "batch", "context", "devices", "n_star", "gamma", "speedup", "pays"]
    if not known:
        return pd.DataFrame(columns=cols)
    base = H.get_accelerator(hardware)
    d = inputs.draft_tokens[0]
    y = perplexity(inputs.target.params, inputs.target.tokens, inputs.constants)

    def alpha_of_n(n):
        return acceptance_rate(perplexity(n, d, inputs.constants), y, inputs.alpha.coefficients)

    rows = []
    for b in batches:
        devices = (
            H.devices_to_hold(shape, H.draft_shape(inputs.n_range[0], shape), base, b, context) or H.DEVICE_COUNTS[-1]
        )
        for f in OVERHEAD_FACTORS:
            from dataclasses import replace

            acc = replace(base, step_overhead=base.step_overhead * f, layer_overhead=base.layer_overhead * f).times(
                devices
            )
            hp = H.plan_on_hardware(shape, alpha_of_n, acc, inputs.n_range, b, context)
            rows.append(
                {
                    "factor": f,
                    "layer_overhead_s": base.layer_overhead * f,
                    "batch": b,
                    "context": context,
                    "devices": devices,
                    "n_star": hp.n_star,
                    "gamma": hp.gamma_star,
                    "speedup": hp.speedup,
                    "pays": hp.pays,
                }
            )
    return pd.DataFrame(rows, columns=cols)


@declare(
    "figure_overhead",
    "how N*, the draft length and the speedup move with the per-layer overhead",
    data=("accelerators", "presets", "paper_table3"),
    figure=True,
)
def figure_overhead(sweep: pd.DataFrame):
    """Three panels against the per-layer overhead (microseconds): ``N*``, the best draft length and
    the wall-clock speedup, one line per batch size; the calibrated overhead marked."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6), layout="constrained")
    calibrated = sweep.loc[sweep["factor"] == 1.0, "layer_overhead_s"]
    for b, g in sweep.groupby("batch"):
        us = 1e6 * g["layer_overhead_s"]
        axes[0].plot(us, g["n_star"], marker="o", label=f"batch {b}")
        axes[1].plot(us, g["gamma"], marker="o", label=f"batch {b}")
        axes[2].plot(us, g["speedup"], marker="o", label=f"batch {b}")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("N* (parameters)")
    axes[1].set_ylabel("best draft length")
    axes[2].set_ylabel("wall-clock speedup")
    axes[2].axhline(1.0, color="0.5", linewidth=0.8)
    for ax in axes:
        ax.set_xlabel("per-layer overhead (µs)")
        if len(calibrated):
            ax.axvline(1e6 * float(calibrated.iloc[0]), color="0.6", linestyle=":", linewidth=1)
    axes[2].legend(fontsize=8, frameon=False)
    return fig


def view_step_errors(errors: pd.DataFrame, **kw: Any):
    """:func:`step_time_errors` as the reader sees it (shares in per cent); ``kw``: the caption and
    label of :func:`sdsl.book.tables.show`."""
    shown = errors.assign(within_20=100 * errors["within_20"])
    return view_columns(
        shown,
        {
            "device": "device",
            "model": "model",
            "passes_of": "passes",
            "n": "number",
            "within_20": "within 20 % (%)",
            "median_abs_log": "median |ln(predicted/measured)|",
            "ratio_min": "predicted/measured, lowest",
            "ratio_max": "highest",
        },
        **kw,
    )


def step_summary(errors: pd.DataFrame, sweep: pd.DataFrame) -> dict[str, Any]:
    """The numbers the chapter's hardware section cites (glue names without the chapter prefix)."""

    def one(device: str, model: str) -> pd.Series:
        sel = errors[
            (errors["device"] == device) & (errors["model"] == model) & (errors["passes_of"] == "every other pass")
        ]
        return sel.iloc[0]

    fit, spec, cpu = (
        one(_H200, "fitted, shape held out"),
        one(_H200, "spec sheet, no overhead"),
        one(_CPU, "fitted, shape held out"),
    )
    out: dict[str, Any] = {
        "steps_h200_n": int(fit["n"]),
        "steps_h200_within": float(100 * fit["within_20"]),
        "steps_h200_median": float(fit["median_abs_log"]),
        "steps_spec_low": float(1 / spec["ratio_max"]),
        "steps_spec_high": float(1 / spec["ratio_min"]),
        "steps_cpu_n": int(cpu["n"]),
        "steps_cpu_within": float(100 * cpu["within_20"]),
        "steps_cpu_median": float(cpu["median_abs_log"]),
    }
    if len(sweep):
        b1 = sweep[sweep["batch"] == sweep["batch"].min()]
        zero, cal = b1[b1["factor"] == 0.0].iloc[0], b1[b1["factor"] == 1.0].iloc[0]
        out.update(
            overhead_us=float(1e6 * cal["layer_overhead_s"]),
            overhead_devices=int(cal["devices"]),
            overhead_zero_n=float(zero["n_star"]),
            overhead_zero_gamma=int(zero["gamma"]),
            overhead_zero_speedup=float(zero["speedup"]),
            overhead_cal_n=float(cal["n_star"]),
            overhead_cal_gamma=int(cal["gamma"]),
            overhead_cal_speedup=float(cal["speedup"]),
            overhead_batch_high=int(sweep["batch"].max()),
            overhead_high_speedup=float(
                sweep[(sweep["batch"] == sweep["batch"].max()) & (sweep["factor"] == 1.0)]["speedup"].iloc[0]
            ),
        )
    return out


def _number(value: float) -> float | str:
    """A finite float, or ``"n/a"`` (a rerun without bootstrap or candidates has no such number)."""
    return float(value) if np.isfinite(value) else "n/a"


def summary(
    inputs: PlanInputs,
    table: pd.DataFrame,
    candidates: pd.DataFrame,
    sensitivity: pd.DataFrame,
    check: pd.DataFrame,
    lookup_: pd.DataFrame | None = None,
    interval: dict[str, Any] | None = None,
    engines: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The numbers the chapter's text cites, by glue name (without the chapter prefix): the plan's
    inputs, the optimum of the first ``D``, its bootstrap interval and how flat the curve is at its
    ends, the best candidate, the covariance sensitivity and the Table 5 check (``check`` from
    :func:`table5_check`); with ``interval`` (:func:`interval_report`), the interval ``sdsl plan``
    prints (``iv_low``, ``iv_high``, ``iv_sources``, and per source ``iv_<source>_low`` and
    ``_high``); with ``engines`` (:func:`engine_report`), the wall-clock speedup of the FLOP model
    and the suggested draft."""
    t = inputs.target
    first = table.iloc[0]
    out: dict[str, Any] = {
        "target": t.name,
        "m": float(t.params),
        "d_target": float(t.tokens),
        "d_draft": float(inputs.draft_tokens[0]),
        "constants": str(words(inputs.constants.name)),
        "alpha_label": inputs.alpha.label,
        "alpha_note": inputs.alpha.note,
        "n_boot": int(inputs.n_boot),
        "seed": int(inputs.seed) if inputs.seed is not None else 0,
        "n_star": float(first["n_star"]),
        "gamma_star": float(first["gamma_star"]),
        "alpha": float(first["alpha"]),
        "tpf": float(first["tokens_per_flop"]),
        "speedup": float(first["speedup"]),
        "n_star_over_m": float(first["n_star"] / t.params),
    }
    if len(candidates):
        best = candidates.loc[candidates["share_of_optimum"].idxmax()]
        out.update(best_candidate=str(best["candidate"]), best_share=float(100 * best["share_of_optimum"]))
    else:
        out.update(best_candidate="(none given)", best_share="n/a")
    lo = float(first["n_star_ci_low"]) if "n_star_ci_low" in table.columns else float("nan")
    hi = float(first["n_star_ci_high"]) if "n_star_ci_high" in table.columns else float("nan")
    out.update(
        ci_low=_number(lo),
        ci_high=_number(hi),
        ci_rel_low=_number(100 * (lo / first["n_star"] - 1)),
        ci_rel_high=_number(100 * (hi / first["n_star"] - 1)),
        dropped=int(table["bootstrap_dropped"].sum()) if "bootstrap_dropped" in table.columns else 0,
        ci_edge_share=_number(100 * interval_edge_share(inputs, table)),
        width_full=float(100 * sensitivity["relative_width"].iloc[0]),
        width_diag=float(100 * sensitivity["relative_width"].iloc[1]),
    )
    printed = check[check["reading"] == "as printed"]
    alt = check[check["reading"] != "as printed"]
    is14 = printed["target"] == "Qwen1.5-14B"
    out.update(
        t5_max_dev_n=float(100 * printed["n_star_rel_dev"].abs().max()),
        t5_max_dev_t=float(100 * printed["tpf_rel_dev"].abs().max()),
        t5_max_dev_t_32=float(100 * printed.loc[~is14, "tpf_rel_dev"].abs().max()),
        t5_d_printed=float(printed.loc[is14, "d_target"].iloc[0]),
        t5_d_alt=float(alt["d_target"].iloc[0]),
        t5_alt_dev_n=float(100 * alt["n_star_rel_dev"].abs().max()),
        t5_alt_dev_t=float(100 * alt["tpf_rel_dev"].abs().max()),
    )
    if lookup_ is not None:
        out.update(lookup_summary(lookup_))
    if interval is not None:
        h = interval["headline"]
        out.update(
            iv_low=_number(h.get("low", np.nan)),
            iv_high=_number(h.get("high", np.nan)),
            iv_sources=", ".join(INTERVAL_SOURCES[k].split(" (")[0] for k in h.get("sources", [])) or "none",
            iv_rel_low=_number(100 * (h.get("low", np.nan) / out["n_star"] - 1)),
            iv_rel_high=_number(100 * (h.get("high", np.nan) / out["n_star"] - 1)),
        )
        for key, b in interval["by_source"].items():
            out[f"iv_{key}_low"] = _number(b.get("low", np.nan)) if b["computed"] else "n/a"
            out[f"iv_{key}_high"] = _number(b.get("high", np.nan)) if b["computed"] else "n/a"
    if engines is not None:
        w, sugg = engines["wall_clock"], engines["suggested_draft"]
        out.update(
            wall_speedup=float(w["speedup"]),
            wall_gamma=int(w["gamma_integer"]),
            ratio=float(engines["tokens_per_flop_ratio"]),
            engine_gamma=int(engines["num_speculative_tokens"]),
            warnings="; ".join(engines["warnings"]) or "none",
            alpha_range="extrapolated beyond" if any("extrapolated" in w for w in engines["warnings"]) else "within",
        )
        if sugg is not None:
            out.update(
                suggested=str(sugg["model"]),
                suggested_share=float(100 * sugg["share_of_optimum"]),
                suggested_params=float(sugg["params"]),
            )
    return out


#: The notebook's parameters that are ``sdsl plan``'s inputs (:func:`sdsl.plan.check_inputs`).
PLAN_PARAMETERS = (
    "preset",
    "target_params",
    "target_tokens",
    "draft_tokens",
    "constants",
    "alpha_source",
    "integer_gamma",
    "n_range",
    "candidates",
    "n_boot",
    "seed",
    "temperature",
)


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed, by :func:`sdsl.plan.check_inputs` (the checks and
    messages of ``sdsl plan``)."""
    from sdsl import plan as P
    from sdsl import validation as V

    names = PLAN_PARAMETERS
    V.unknown_names(params, (*names, "artifacts_dir", "lookup_hardware"), "parameter", "of notebook 'plan_draft'")
    if params.get("artifacts_dir") is not None:
        V.folder(params["artifacts_dir"], "artifacts_dir")
    if "lookup_hardware" in params:
        from sdsl.model.hardware import get_accelerator

        try:
            get_accelerator(V.text(params["lookup_hardware"], "lookup_hardware", "an accelerator preset"))
        except ValueError as exc:
            raise ValueError(f"lookup_hardware: {V.one_line(exc)}") from None
    given: dict[str, Any] = {k: v for k, v in params.items() if k in names}
    # sdsl plan's checks read numeric text (the command line's); a notebook's numbers are Python values
    V.no_numeric_text(
        given,
        (
            "target_params",
            "target_tokens",
            "draft_tokens",
            "constants",
            "n_range",
            "candidates",
            "n_boot",
            "seed",
            "temperature",
        ),
    )
    if given.get("preset") == "":  # papermill's `-p preset ""`: no preset, the target by its size and tokens
        given["preset"] = None
    P.check_inputs(**given)


# What this chapter shows that a function of another module makes.
declare(
    "plan",
    "N*, gamma*, alpha and the tokens per FLOP over plain decoding for the planned target",
    data=("presets", "paper_table3"),
)(plan_table)
declare("covariance_sensitivity", "the bootstrap interval with and without the covariance", data=("acceptance",))(
    covariance_sensitivity
)

"""The measure chapter's tables and figures: per-position acceptance rates and the distribution
of accepted tokens per iteration, from the harness's per-iteration table
(:func:`sdsl.measure.harness.measure_acceptance`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdsl.measure.estimators import alpha_from_accepted

__all__ = ["CHAPTER", "position_rates", "accepted_distribution", "figure_position_rates", "figure_accepted"]

#: Chapter name: notebook stem and artifacts folder.
CHAPTER = "measure_acceptance"


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


def figure_position_rates(iterations: pd.DataFrame, *, level: float = 0.95):
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


def figure_accepted(iterations: pd.DataFrame):
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


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (issue 13; the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed. ``draft`` and ``target`` go together (a path, which
    must be a folder, or a hub name); ``rebuild_pair`` applies to the committed pair only; ``n_prompts`` is at most
    the prompts the file holds."""
    import os

    from sdsl import _validate as V
    from sdsl.measure.local import read_prompts
    from sdsl.paths import DATA

    def model(value: object, name: str) -> str:
        v = V.text(value, name, "a model folder or a hub name")
        if v.startswith(("/", ".", "~")) and not os.path.isdir(os.path.expanduser(v)):
            raise ValueError(f"{name} must be a model folder or a hub name: the folder {v!r} does not exist")
        return v

    p = V.check_parameters("measure_acceptance", params, {
        "draft": V.optional(model), "target": V.optional(model), "rebuild_pair": V.rule(V.boolean),
        "draft_family": V.rule(V.text), "prompts_file": V.optional(V.rule(V.existing_file, what="one prompt a line")),
        "gammas": V.rule(V.sequence, item=V.rule(V.integer, low=1, high=64), unique=True, noun="draft lengths"),
        "temperature": V.rule(V.number, low=0, high=10, what="0 is greedy"),
        "n_prompts": V.rule(V.integer, low=1), "max_new_tokens": V.rule(V.integer, low=1, high=4096),
        "seed": V.rule(V.seed), "n_resamples": V.rule(V.draws, allow_zero=False, what="cluster-bootstrap resamples"),
        "threads": V.rule(V.integer, low=1, high=os.cpu_count() or 1, what="torch threads, at most this machine's CPUs"),
        "artifacts_dir": V.optional(V.rule(V.folder))})
    if (p.get("draft") is None) != (p.get("target") is None):
        raise ValueError("draft and target go together: give both (model folders or hub names) or neither (the pair "
                         "committed under data/local_pair)")
    if p.get("rebuild_pair") and p.get("draft") is not None:
        raise ValueError("rebuild_pair=True rebuilds the committed local pair; with draft and target given it would "
                         "not be used: set it False or drop draft and target")
    path = p.get("prompts_file") or DATA / "prompts.txt"
    try:
        count = len(read_prompts(path))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"prompts_file {str(path)!r}: {V.one_line(exc)}") from None
    if p.get("n_prompts", 16) > count:
        raise ValueError(f"n_prompts must be an integer in [1, {count}] (the prompts in {path}), got {p['n_prompts']}")

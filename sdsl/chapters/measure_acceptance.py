"""The measure chapter: load a (draft, target) pair, measure alpha with the harness
(:func:`sdsl.measure.harness.measure_acceptance`), and the chapter's tables, figures and the
numbers its text cites (:func:`summary`): per-position acceptance rates, the distribution of
accepted tokens per iteration, the summary row in the format of ``data/acceptance.csv``, and the
paper's cross-family pairs with the vocabularies of their families (``data/presets.csv``)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdsl.book.outputs import declare
from sdsl.measure.estimators import alpha_from_accepted
from sdsl.measure.harness import measure_acceptance

__all__ = [
    "CHAPTER",
    "LOCAL_NAMES",
    "Pair",
    "quiet_transformers",
    "load_pair",
    "summary_table",
    "summary_row",
    "paper_pair_families",
    "vocabularies",
    "cross_family_latency",
    "position_rates",
    "accepted_distribution",
    "figure_position_rates",
    "figure_accepted",
    "summary",
]

#: Chapter name: notebook stem and artifacts folder.
CHAPTER = "measure_acceptance"

#: Names of the committed local pair's models in the tables.
LOCAL_NAMES = ("local-gpt2-draft", "local-gpt2-target")

#: The two tokenizers of the paper's models: OPT's, and Qwen's (Qwen1.5 and Qwen2.5 share one up
#: to added special tokens, so a Qwen-with-Qwen pair counts as same-family).
VENDOR = {"OPT": "OPT", "Qwen1.5": "Qwen", "Qwen2.5": "Qwen"}


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Within the block, transformers writes no progress bars and only errors (its
    ``Loading weights`` bars and config notices would land on the page as stderr), and the
    ``TqdmWarning`` of ``tqdm.auto`` in a kernel without ipywidgets is not shown; the previous
    settings are restored after."""
    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)  # transformers imports tqdm.auto
        from transformers.utils import logging as hf_logging

        verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        try:
            yield
        finally:
            hf_logging.set_verbosity(verbosity)
            if bars:
                hf_logging.enable_progress_bar()


@dataclass
class Pair:
    """A loaded (draft, target) pair: the models, the target's tokenizer (and the draft's, for a
    pair of one's own), their names in the tables and the folder of a freshly trained pair (kept
    alive with the object)."""

    draft_model: Any
    target_model: Any
    tokenizer: Any
    draft_tokenizer: Any
    draft_name: str
    target_name: str
    workdir: Any = field(default=None, repr=False)


def load_pair(
    draft: str | os.PathLike | None,
    target: str | os.PathLike | None,
    *,
    rebuild: bool = False,
    texts: Sequence[str] = (),
    seed: int = 0,
) -> Pair:
    """The pair the chapter decodes: ``draft`` and ``target`` (local folders or hub names), or,
    both ``None``, the committed local pair of ``data/local_pair`` (sha256-checked,
    :func:`sdsl.measure.local.committed_pair`), trained afresh on ``texts`` with ``seed`` into a
    temporary folder when ``rebuild``. Raises ``ValueError`` when only one of the two is given."""
    from sdsl.measure import local

    if (draft is None) != (target is None):
        raise ValueError("draft and target: give both (paths or hub names), or neither (None uses the local pair)")
    workdir = None
    draft_path: str | os.PathLike
    target_path: str | os.PathLike
    with quiet_transformers():
        if draft is None and rebuild:
            workdir = tempfile.TemporaryDirectory(prefix="sdsl-measure-")
            draft_path, target_path = local.build_local_pair(workdir.name, texts=list(texts), seed=seed)
        elif draft is None:
            draft_path, target_path = local.committed_pair()
        else:
            assert target is not None  # both or neither (checked above)
            draft_path, target_path = draft, target
        names = LOCAL_NAMES if draft is None else (str(draft), str(target))
        return Pair(
            local.load_model(draft_path),
            local.load_model(target_path),
            local.load_tokenizer(target_path),
            None if draft is None else local.load_tokenizer(draft_path),
            names[0],
            names[1],
            workdir,
        )


@declare("summary", "alpha four ways and the latencies, per draft length", data=("prompts", "local_pair"))
def summary_table(
    measurement: Any, pair: Pair, rng: np.random.Generator, *, n_resamples: int = 2000, temperature: float = 1.0
) -> pd.DataFrame:
    """:func:`sdsl.measure.harness.summarize_measurement` with the pair's names and the
    temperature: one row per draft length."""
    from sdsl.measure import harness

    out = harness.summarize_measurement(measurement, rng, n_resamples=n_resamples)
    out.insert(0, "draft", pair.draft_name)
    out.insert(0, "target", pair.target_name)
    out["temperature"] = float(temperature)
    return out


@declare(
    "acceptance_row", "the measurement as a row of data/acceptance.csv", data=("prompts", "local_pair", "acceptance")
)
def summary_row(
    pair: Pair, prompts: Sequence[str], iterations: pd.DataFrame, summary: pd.DataFrame, draft_family: str
) -> pd.DataFrame:
    """The measurement as one row of ``data/acceptance.csv`` (validated against its schema): the
    perplexities of both models on ``prompts``, the MLE of alpha at the largest draft length and
    as half-width of its 95 % interval the larger of the profile interval's and the cluster
    bootstrap's (the honest one when prompts differ)."""
    from sdsl import data
    from sdsl.measure import harness

    main = summary.iloc[-1]
    it = iterations[(iterations["gamma"] == main["gamma"]) & (iterations["drafted"] > 0)]
    estimate = alpha_from_accepted(it["accepted"], it["drafted"])
    row = harness.acceptance_row(
        target=pair.target_name,
        draft=pair.draft_name,
        draft_family=draft_family,
        draft_ppl=harness.model_perplexity(pair.draft_model, pair.tokenizer, prompts),
        target_ppl=harness.model_perplexity(pair.target_model, pair.tokenizer, prompts),
        estimate=estimate,
    )
    row["alpha_hw95"] = max(row["alpha_hw95"], 0.5 * float(main["boot_ci_high"] - main["boot_ci_low"]))
    return data.validate(pd.DataFrame([row]), "acceptance")


def _families(paper: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    fam = models.set_index("model")["family"]
    out = paper.assign(target_family=paper["target"].map(fam))
    same = out["target_family"].map(VENDOR) == out["draft_family"].map(VENDOR)
    return out.assign(kind=np.where(same, "same family", "cross family"))


@declare("paper_pair_families", "the paper's pairs by family and kind", data=("acceptance", "models"))
def paper_pair_families(paper: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """The paper's measured pairs (``data/acceptance.csv``) by target family, draft family and kind
    (``same family`` when both models use the same tokenizer, :data:`VENDOR`, else ``cross
    family``): number of pairs and mean alpha."""
    out = _families(paper, models)
    return (
        out.groupby(["target_family", "draft_family", "kind"])
        .agg(pairs=("alpha", "size"), alpha_mean=("alpha", "mean"))
        .reset_index()
    )


def vocabularies(presets: pd.DataFrame, families: Sequence[str] = ("OPT", "Qwen1.5", "Qwen2.5")) -> pd.DataFrame:
    """Per model family of the paper: its tokenizer group and the smallest and largest vocabulary
    (``vocab_size`` of the models' ``config.json``, the rows of the embedding) over the family's
    models in ``data/presets.csv``."""
    sub = presets[presets["family"].isin(families) & presets["vocab"].notna()]
    out = sub.groupby("family", sort=False).agg(
        tokenizer=("tokenizer", "first"),
        models=("model", "size"),
        vocab_min=("vocab", "min"),
        vocab_max=("vocab", "max"),
    )
    missing = [f for f in families if f not in out.index]
    if missing:
        raise ValueError(f"data/presets.csv has no vocabulary for the family(ies) {missing}")
    return out.loc[list(families)].reset_index().astype({"vocab_min": int, "vocab_max": int})


def cross_family_latency(latency: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 6 latencies (``data/latency.csv``, OPT-13B target) per draft family: mean
    TTFT, TPOT and TTOT, and each as a multiple of the same-family (OPT) drafts' mean."""
    means = latency.groupby("draft_family", sort=False)[["ttft_s", "tpot_s", "ttot_s"]].mean()
    if "OPT" not in means.index:
        raise ValueError("the latency table has no OPT draft to compare the other families with")
    ratios = (means / means.loc["OPT"]).add_suffix("_over_opt")
    return means.join(ratios).reset_index()


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
            rows.append(
                {
                    "gamma": int(g),
                    "position": i,
                    "trials": int(t),
                    "accepted": int(a),
                    "rate": a / t,
                    "ci_low": lo,
                    "ci_high": hi,
                    "alpha": alpha,
                }
            )
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
            expected = a**k * (1 - a) if k < g else a**g
            rows.append(
                {
                    "gamma": int(g),
                    "k": k,
                    "observed": counts[k] / counts.sum(),
                    "expected": expected,
                    "iterations": int(counts.sum()),
                }
            )
    return pd.DataFrame(rows)


@declare("fig_position_rates", "acceptance rate by draft position", data=("prompts", "local_pair"), figure=True)
def figure_position_rates(iterations: pd.DataFrame, *, level: float = 0.95):
    """Conditional acceptance rate by draft position (Wilson intervals) against the constant alpha
    of the truncated geometric model (dashed), one colour per draft length."""
    import matplotlib.pyplot as plt

    rates = position_rates(iterations, level=level)
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    for j, (g, r) in enumerate(rates.groupby("gamma")):
        colour = f"C{j}"
        off = (j - (rates["gamma"].nunique() - 1) / 2) * 0.08
        ax.errorbar(
            r["position"] + off,
            r["rate"],
            yerr=[r["rate"] - r["ci_low"], r["ci_high"] - r["rate"]],
            fmt="o",
            color=colour,
            capsize=3,
            label=f"$\\gamma$ = {g}",
        )
        ax.axhline(r["alpha"].iloc[0], color=colour, ls="--", lw=1)
    ax.set_xlabel("draft position $i$")
    ax.set_ylabel("P(accept at $i$ | accepted before $i$)")
    ax.set_xticks(sorted(rates["position"].unique()))
    ax.legend(frameon=False)
    return _finish_layout(fig)


@declare(
    "fig_accepted",
    "accepted tokens per iteration against the truncated geometric law",
    data=("prompts", "local_pair"),
    figure=True,
)
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


def summary(
    pair: Pair,
    prompts_all: Sequence[str],
    prompts: Sequence[str],
    iterations: pd.DataFrame,
    summary_tab: pd.DataFrame,
    row: pd.DataFrame,
    paper: pd.DataFrame,
    models: pd.DataFrame,
    vocab: pd.DataFrame,
    latency: pd.DataFrame,
    *,
    temperature: float,
    max_new_tokens: int,
) -> dict[str, Any]:
    """The numbers the chapter's text cites, by glue name (without the chapter prefix): the pair and
    the run, the estimates at the largest draft length (``summary_tab``'s last row, with whether
    the direct estimate lies inside the MLE's interval and whether the chi-square test rejects a
    constant alpha at 5 %), the summary ``row``, the range of the paper's measurements, its
    cross-family pairs, the vocabularies and the Table 6 latency ratios of the Qwen1.5 drafts."""
    main = summary_tab.iloc[-1]
    fam = _families(paper, models)
    voc = vocab.set_index("family")
    qwen = voc.loc[[f for f in voc.index if f != "OPT"]]
    lat = cross_family_latency(latency).set_index("draft_family")
    out: dict[str, Any] = {
        "n_prompts_file": len(prompts_all),
        "n_prompts": len(prompts),
        "target_layers": int(getattr(pair.target_model.config, "num_hidden_layers", 0)),
        "draft_layers": int(getattr(pair.draft_model.config, "num_hidden_layers", 0)),
        "target_params": int(sum(p.numel() for p in pair.target_model.parameters())),
        "draft_params": int(sum(p.numel() for p in pair.draft_model.parameters())),
        "temperature": float(temperature),
        "max_new_tokens": int(max_new_tokens),
        "n_iterations": int(len(iterations)),
        "gamma_main": int(main["gamma"]),
        "evaluated": int(main["evaluated"]),
        "agree": "inside" if main["ci_low"] <= main["alpha_min_pq"] <= main["ci_high"] else "outside",
        "gof_verdict": "rejects" if main["gof_p"] < 0.05 else "does not reject",
        "draft_ppl": float(row["draft_ppl"].iloc[0]),
        "target_ppl": float(row["target_ppl"].iloc[0]),
        "alpha_hw95": float(row["alpha_hw95"].iloc[0]),
        "paper_alpha_min": float(paper["alpha"].min()),
        "paper_alpha_max": float(paper["alpha"].max()),
        "paper_hw_min": float(paper["alpha_hw95"].min()),
        "paper_hw_max": float(paper["alpha_hw95"].max()),
        "n_cross": int((fam["kind"] == "cross family").sum()),
        "n_pairs": int(len(fam)),
        "vocab_opt": int(voc.loc["OPT", "vocab_max"]),
        "vocab_qwen_min": int(qwen["vocab_min"].min()),
        "vocab_qwen_max": int(qwen["vocab_max"].max()),
        "tpot_qwen_over_opt": float(lat.loc["Qwen1.5", "tpot_s_over_opt"]),
        "ttft_qwen_over_opt": float(lat.loc["Qwen1.5", "ttft_s_over_opt"]),
    }
    for col in (
        "alpha",
        "ci_low",
        "ci_high",
        "boot_ci_low",
        "boot_ci_high",
        "alpha_mean_tokens",
        "alpha_min_pq",
        "alpha_min_pq_se",
        "gof_p",
    ):
        out[col] = float(main[col])
    return out


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed. ``draft`` and ``target`` go together (a path, which
    must be a folder, or a hub name); ``rebuild_pair`` applies to the committed pair only; ``n_prompts`` is at most
    the prompts the file holds."""
    import os

    from sdsl import validation as V
    from sdsl.measure.local import read_prompts
    from sdsl.paths import DATA

    def model(value: object, name: str) -> str:
        v = V.text(value, name, "a model folder or a hub name")
        folder = os.path.expanduser(v)
        if v.startswith(("/", ".", "~")) and not os.path.isdir(folder):
            raise ValueError(f"{name} must be a model folder or a hub name: the folder {v!r} does not exist")
        if os.path.isdir(folder):  # what from_pretrained reads first: fail here, not seconds into loading
            from transformers.utils import (
                CONFIG_NAME,
                SAFE_WEIGHTS_INDEX_NAME,
                SAFE_WEIGHTS_NAME,
                WEIGHTS_INDEX_NAME,
                WEIGHTS_NAME,
            )

            weights = (SAFE_WEIGHTS_NAME, SAFE_WEIGHTS_INDEX_NAME, WEIGHTS_NAME, WEIGHTS_INDEX_NAME)
            missing = [CONFIG_NAME] if not os.path.isfile(os.path.join(folder, CONFIG_NAME)) else []
            if not any(os.path.isfile(os.path.join(folder, w)) for w in weights):
                missing.append(f"weights ({' or '.join(weights)})")
            if missing:
                raise ValueError(
                    f"{name} must be a model folder (a saved Hugging Face model) or a hub name: the folder "
                    f"{v!r} has no {' and no '.join(missing)}"
                )
        return v

    p = V.check_parameters(
        "measure_acceptance",
        params,
        {
            "draft": V.optional(model),
            "target": V.optional(model),
            "rebuild_pair": V.rule(V.boolean),
            "draft_family": V.rule(V.text),
            "prompts_file": V.optional(V.rule(V.existing_file, what="one prompt a line")),
            "gammas": V.rule(V.sequence, item=V.rule(V.integer, low=1, high=64), unique=True, noun="draft lengths"),
            "temperature": V.rule(V.number, low=0, high=10, what="0 is greedy"),
            "n_prompts": V.rule(V.integer, low=1),
            "max_new_tokens": V.rule(V.integer, low=1, high=4096),
            "seed": V.rule(V.seed),
            "n_resamples": V.rule(V.draws, allow_zero=False, what="cluster-bootstrap resamples"),
            "threads": V.rule(
                V.integer, low=1, high=os.cpu_count() or 1, what="torch threads, at most this machine's CPUs"
            ),
            "artifacts_dir": V.optional(V.rule(V.folder)),
        },
    )
    if (p.get("draft") is None) != (p.get("target") is None):
        raise ValueError(
            "draft and target go together: give both (model folders or hub names) or neither (the pair "
            "committed under data/local_pair)"
        )
    if p.get("rebuild_pair") and p.get("draft") is not None:
        raise ValueError(
            "rebuild_pair=True rebuilds the committed local pair; with draft and target given it would "
            "not be used: set it False or drop draft and target"
        )
    if "n_prompts" not in p:  # the notebook passes it (its parameters cell holds the default)
        return
    path = p.get("prompts_file") or DATA / "prompts.txt"
    try:
        count = len(read_prompts(path))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"prompts_file {str(path)!r}: {V.one_line(exc)}") from None
    if p["n_prompts"] > count:
        raise ValueError(f"n_prompts must be an integer in [1, {count}] (the prompts in {path}), got {p['n_prompts']}")


# What this chapter shows that a function of another module makes.
declare("iterations", "drafted and accepted tokens of every iteration", data=("prompts", "local_pair"))(
    measure_acceptance
)
declare("requests", "TTFT, TPOT and TTOT of every request", data=("prompts", "local_pair"), shown=False)(
    measure_acceptance
)

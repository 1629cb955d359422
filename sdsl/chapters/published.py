"""The paper's laws and the companion's plan against published deployments of draft-model
speculative decoding (chapter "published").

Every row of ``data/published_deployments.csv`` is turned into the plan's inputs and predicted as
``sdsl plan`` predicts it (:mod:`sdsl.plan.published`); this module tabulates the predictions
against the measurements, as a referee reads them:

* the data (:func:`inputs_table`, :func:`data_size`): what was measured where, and what had to be
  assumed;
* alpha (:func:`alpha_table`, :func:`alpha_errors`): the paper's Eq. 5 through the loss law, the
  companion's refit, a constant equal to the median measured alpha (the baseline) and the extended
  law, held out by target and by source;
* the wall-clock speedup (:func:`speedup_table`, :func:`speedup_errors`, :func:`speedup_by`,
  :func:`cost_models`): by hardware class, engine and temperature, with the law's alpha and with the
  measured alpha (the cost model's error alone), the FLOP model ``c = N/M`` against the
  step-time model;
* the choice of a draft (:func:`draft_ranking`, :func:`ranking_summary`): wherever one source measured
  several drafts for one target, does the plan rank them as measured, does it pick the best, does
  its ``N*`` sit near the best measured draft -- against Leviathan et al.'s rule of a draft about
  100 times smaller than the target;
* the extended acceptance law (:func:`extension_skill`, :func:`extension_fit`: statsmodels beside
  the light install's numpy fit).

The two figures (:func:`figure_alpha`, :func:`figure_speedup`) and the numbers the text cites
(:func:`summary`) close the module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from sdsl.book.outputs import declare
from sdsl.book.style import fix_layout
from sdsl.model import hardware as H
from sdsl.model.laws import BESIROGLU_2024, PAPER_EQ5, acceptance_rate, perplexity
from sdsl.model.optimum import optimal_draft_size
from sdsl.plan import published as P

__all__ = [
    "DATA",
    "CLASS_NAMES",
    "source_labels",
    "readable",
    "inputs_table",
    "data_size",
    "alpha_table",
    "alpha_errors",
    "speedup_table",
    "speedup_errors",
    "speedup_by",
    "cost_models",
    "TOKEN_READINGS",
    "draft_ranking",
    "ranking_summary",
    "extension_skill",
    "extension_fit",
    "figure_alpha",
    "figure_speedup",
    "verdict",
    "summary",
    "check_parameters",
]

#: The data sets every table reads.
DATA = ("published_deployments", "presets", "accelerators", "acceptance_laws", "paper_table3")
#: The hardware classes as the text names them.
CLASS_NAMES = {
    "tpu": "TPU",
    "datacenter-gpu": "datacenter GPU",
    "consumer-gpu": "consumer GPU",
    "apple": "Apple silicon",
    "cpu": "CPU",
    "all": "all",
}
#: The acceptance estimates as the text names them.
#: Identifiers of this chapter's tables as a reader says them (whole words replaced in text cells).
READER_WORDS = {
    "step_time": "step-time model",
    "source_c": "the source's c",
    "draft_tuned": "tuned draft",
    "flop": "FLOP model",
}


def source_labels(deployments: pd.DataFrame) -> dict[str, str]:
    """Each ``source_id`` of the published deployments as a reader cites it, from its ``source``
    column: a repository's issue or pull request as ``repo issue N`` / ``repo PR N``, otherwise the
    first author (``et al.`` for several) and the year."""
    import re

    out = {}
    for sid, source in deployments.drop_duplicates("source_id")[["source_id", "source"]].itertuples(index=False):
        text = str(source)
        m = re.search(r"[\w.-]+/([\w.-]+) (issue|PR) (\d+)", text.split("'")[0])
        if m:
            out[str(sid)] = f"{m.group(1)} {m.group(2)} {m.group(3)}"
            continue
        y = re.search(r"\b(?:19|20)\d{2}\b", text)
        authors = text[: y.start()] if y else text
        names = [a.strip() for a in re.split(r",| and ", re.sub(r"\(.*?\)", "", authors)) if a.strip()]
        first = names[0] if names else str(sid)
        out[str(sid)] = f"{first}{' et al.' if len(names) > 1 else ''}{' ' + y.group(0) if y else ''}"
    return out


def readable(df: pd.DataFrame, sources: dict[str, str]) -> pd.DataFrame:
    """``df`` with every text cell in a reader's words: source ids as :func:`source_labels` gives
    them and the identifiers of :data:`READER_WORDS`, each replaced where it stands as a whole word."""
    import re

    words = {**READER_WORDS, **sources}
    pattern = re.compile(
        r"(?<![\w/-])(" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")(?![\w-])"
    )
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(lambda v: pattern.sub(lambda m: words[m.group(1)], v) if isinstance(v, str) else v)
    return out


ESTIMATE_NAMES = {
    "paper": "Eq. 5, Table 3 (the paper)",
    "refit": "Eq. 5 refitted on Tables 1 and 2",
    "published_loto": "extended law, target held out",
    "published_loso": "extended law, source held out",
    "constant_loto": "constant (median), target held out",
    "constant_loso": "constant (median), source held out",
}


def _acceptance() -> tuple[dict[str, Any], ...]:
    """The measured pairs of the paper's Tables 1 and 2 (``data/acceptance.csv``)."""
    from sdsl.data import records

    return records("acceptance")


def _rows() -> dict[str, P.Deployment]:
    return {d.row_id: d for d in P.deployments()}


@declare("inputs", "every published deployment as the plan's inputs", data=DATA)
def inputs_table() -> pd.DataFrame:
    """One row per published measurement: the plan's inputs (:func:`sdsl.plan.published.deployment_of_row`),
    what was assumed, the measurement, and why ``sdsl plan`` gives no answer where it gives none
    (under the paper's Eq. 5)."""
    out = []
    for d in P.deployments():
        out.append(
            {
                "row_id": d.row_id,
                "source_id": d.source_id,
                "target": d.target,
                "draft": d.draft,
                "m": d.m,
                "d_target": d.d_target,
                "n": d.n,
                "d_draft": d.d_draft,
                "tokens_assumed": "target and draft"
                if d.target_tokens_assumed and d.draft_tokens_assumed
                else "target"
                if d.target_tokens_assumed
                else "draft"
                if d.draft_tokens_assumed
                else "",
                "hardware_class": d.hardware_class or "",
                "cost_model": f"step time, {d.preset}" if d.preset else "FLOP (c = N/M)",
                "gpus": d.gpus,
                "batch": d.batch,
                "batch_assumed": d.batch_assumed,
                "gamma": d.gamma_published or "",
                "temperature": d.temperature,
                "engine": d.engine,
                "alpha": d.alpha,
                "speedup": d.speedup,
                "plan_answers": P.plan_domain(d) is None,
                "why_not": P.plan_domain(d) or "",
            }
        )
    return pd.DataFrame(out)


@declare("data_size", "the data set by source and hardware class", data=DATA)
def data_size(inputs: pd.DataFrame) -> pd.DataFrame:
    """Rows by source and hardware class (``no timing``: alpha measured without a clock), with the
    rows that measured alpha and a speedup, and a total row."""
    cls = inputs["hardware_class"].replace("", "no timing")
    order = [c for c in (*CLASS_NAMES, "no timing") if c != "all" and (cls == c).any()]
    tab = pd.crosstab(inputs["source_id"], cls).reindex(columns=order, fill_value=0)
    tab = tab.reindex(list(dict.fromkeys(inputs["source_id"])))
    tab["rows"] = tab[order].sum(axis=1)
    tab["alpha_measured"] = inputs.groupby("source_id")["alpha"].count()
    tab["speedup_measured"] = inputs.groupby("source_id")["speedup"].count()
    total = tab.sum(axis=0).to_frame().T
    total.index = ["all sources"]
    out = pd.concat([tab, total]).reset_index(names="source_id")
    return out.astype({c: int for c in out.columns if c != "source_id"})


@declare("alpha_predictions", "predicted against measured alpha, per setting", data=DATA)
def alpha_table() -> pd.DataFrame:
    """One row per setting with a measured alpha (:func:`sdsl.plan.published.alpha_settings`): the
    loss law's perplexities, the measured alpha, and the predictions of the paper's Eq. 5, the refit,
    the extended law and the constant held out by target and by source."""
    s = P.alpha_settings()
    rows = _rows()
    law = P.published_law()
    held = {scheme: P.held_out_predictions(s, scheme) for scheme in P.SCHEMES}
    refit = P.refit_coefficients()
    out = []
    for i in range(len(s)):
        d = rows[s.rows[i][0]]
        out.append(
            {
                "source_id": d.source_id,
                "target": d.target,
                "draft": d.draft,
                "task": d.task.split(",")[0],
                "temperature": float(s.temperature[i]),
                "rows": len(s.rows[i]),
                "row_ids": " ".join(s.rows[i]),
                "x": float(s.x[i]),
                "y": float(s.y[i]),
                "alpha": float(s.alpha[i]),
                "paper": float(acceptance_rate(s.x[i], s.y[i], PAPER_EQ5)),
                "refit": float(acceptance_rate(s.x[i], s.y[i], refit)),
                "published_loto": float(held["leave one target out"][law.form][i]),
                "published_loso": float(held["leave one source out"][law.form][i]),
                "constant_loto": float(held["leave one target out"]["constant"][i]),
                "constant_loso": float(held["leave one source out"]["constant"][i]),
            }
        )
    return pd.DataFrame(out)


def _alpha_err(pred: pd.Series, alpha: pd.Series) -> dict[str, Any]:
    e = pred - alpha
    return {
        "n": int(e.size),
        "mae": float(e.abs().mean()),
        "within": int((e.abs() <= P.ALPHA_TOLERANCE + 1e-12).sum()),
        "bias": float(e.mean()),
    }


@declare("alpha_errors", "the errors of alpha by estimate, temperature and source", data=DATA)
def alpha_errors(alpha: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute error, settings within :data:`sdsl.plan.published.ALPHA_TOLERANCE` and bias
    (predicted minus measured) of each estimate (:data:`ESTIMATE_NAMES`), over all settings, by
    temperature and by source."""
    groups: list[tuple[str, pd.Series]] = [("all settings", pd.Series(True, index=alpha.index))]
    groups += [(f"temperature {t:g}", alpha["temperature"] == t) for t in sorted(alpha["temperature"].unique())]
    groups += [(f"source {s}", alpha["source_id"] == s) for s in dict.fromkeys(alpha["source_id"])]
    out = []
    for est in ESTIMATE_NAMES:
        for name, mask in groups:
            out.append(
                {"estimate": est, "settings": name, **_alpha_err(alpha.loc[mask, est], alpha.loc[mask, "alpha"])}
            )
    return pd.DataFrame(out)


@declare("speedup_predictions", "every predicted speedup beside the measured one", data=DATA, shown=False)
def speedup_table() -> pd.DataFrame:
    """:func:`sdsl.plan.published.predictions` as a table, with each row's source, hardware class,
    engine, temperature and preset; ``headline`` marks the prediction that stands for the row and
    ``plan`` the plan's own answer (the paper's alpha, the step-time model where the row's device has
    a preset, else the FLOP model)."""
    preds = P.predictions()
    head = {id(p) for p in P.headline(preds)}
    rows = _rows()
    out = []
    for p in preds:
        d = rows[p["row_id"]]
        out.append(
            {
                "row_id": p["row_id"],
                "source_id": d.source_id,
                "hardware_class": d.hardware_class,
                "engine": d.engine,
                "temperature": d.temperature,
                "batch": d.batch,
                "gamma_published": d.gamma_published or "",
                "preset": d.preset or "",
                "alpha_from": p["alpha_from"],
                "cost_model": p["cost_model"],
                "gamma_rule": p["gamma_rule"],
                "alpha": p["alpha"],
                "gamma": p["gamma"],
                "predicted": p["speedup"],
                "measured": p["measured"],
                "ratio": p["ratio"],
                "domain": p["domain"] or "",
                "headline": id(p) in head,
                "plan": id(p) in head
                and p["alpha_from"] == "paper"
                and p["cost_model"] == ("step_time" if d.preset else "flop"),
            }
        )
    return pd.DataFrame(out)


def _scored(pred: pd.DataFrame) -> pd.DataFrame:
    return pred[pred["headline"] & (pred["domain"] == "") & pred["ratio"].notna()]


def _ratio_stats(r: pd.Series) -> dict[str, Any]:
    r = r.astype(float)
    return {
        "n": int(r.size),
        "within": int(((r - 1).abs() <= P.SPEEDUP_TOLERANCE + 1e-12).sum()),
        "median_ratio": float(r.median()),
        "ratio_q25": float(r.quantile(0.25)),
        "ratio_q75": float(r.quantile(0.75)),
    }


@declare("speedup_errors", "the errors of the speedup by alpha, cost model and hardware class", data=DATA)
def speedup_errors(pred: pd.DataFrame) -> pd.DataFrame:
    """Predicted over measured speedup of the headline predictions inside the plan's domain: by the
    alpha they use (:data:`sdsl.plan.published.ALPHA_FROM`, and ``plan``: the plan's own answer),
    the cost model and the hardware class (``all`` too): deployments, how many within
    :data:`sdsl.plan.published.SPEEDUP_TOLERANCE`, the median ratio and its quartiles."""
    s = _scored(pred)
    out = []
    plan = s[s["plan"]]
    for cls in ["all", *sorted(plan["hardware_class"].unique())]:
        sub = plan if cls == "all" else plan[plan["hardware_class"] == cls]
        out.append(
            {"alpha_from": "plan", "cost_model": "the plan's", "hardware_class": cls, **_ratio_stats(sub["ratio"])}
        )
    for (src, model), g in s.groupby(["alpha_from", "cost_model"], sort=False):
        for cls in ["all", *sorted(g["hardware_class"].unique())]:
            sub = g if cls == "all" else g[g["hardware_class"] == cls]
            out.append({"alpha_from": src, "cost_model": model, "hardware_class": cls, **_ratio_stats(sub["ratio"])})
    return pd.DataFrame(out)


@declare("speedup_by", "the plan's speedup error by engine, temperature, batch and draft length", data=DATA)
def speedup_by(pred: pd.DataFrame) -> pd.DataFrame:
    """The plan's own answer (the paper's alpha; the step-time model where the device has a preset,
    else the FLOP model) by engine, by temperature (greedy, sampling, not published), by batch (1 or
    more) and by draft length (fixed by the source, or chosen by the engine)."""
    s = _scored(pred)
    s = s[s["plan"]]
    temp = np.where(
        s["temperature"].isna(), "not published", np.where(s["temperature"] == 0, "greedy (T = 0)", "sampling (T > 0)")
    )
    dims = {
        "engine": s["engine"],
        "temperature": pd.Series(temp, index=s.index),
        "batch": np.where(s["batch"] > 1, "more than 1", "1"),
        "draft length": np.where(s["gamma_published"].str.isdigit(), "fixed", "chosen by the engine"),
    }
    out = []
    for dim, key in dims.items():
        key = pd.Series(key, index=s.index)
        for value in sorted(key.unique()):
            out.append({"by": dim, "value": value, **_ratio_stats(s.loc[key == value, "ratio"])})
    return pd.DataFrame(out)


@declare("cost_models", "c = N/M against the step-time model and the source's c, on the same deployments", data=DATA)
def cost_models(pred: pd.DataFrame) -> pd.DataFrame:
    """The baselines of the cost of drafting, each on the deployments that have both: on the
    datacenter GPUs with a step-time model, the FLOP model ``c = N/M`` against it; on the TPU rows
    that published their ``c``, the FLOP model against Theorem 3.8 with that ``c``; each with the
    paper's alpha and with the measured one."""
    s = _scored(pred)
    out = []
    for other in ("step_time", "source_c"):
        rows = set(s.loc[s["cost_model"] == other, "row_id"])
        for src in ("paper", "measured"):
            sub = s[s["row_id"].isin(rows) & (s["alpha_from"] == src)]
            common = set(sub.loc[sub["cost_model"] == other, "row_id"]) & set(
                sub.loc[sub["cost_model"] == "flop", "row_id"]
            )
            for model in ("flop", other):
                g = sub[(sub["cost_model"] == model) & sub["row_id"].isin(common)]
                if len(g):
                    out.append(
                        {
                            "comparison": f"flop against {other}",
                            "alpha_from": src,
                            "cost_model": model,
                            "hardware_class": ", ".join(sorted(g["hardware_class"].unique())),
                            **_ratio_stats(g["ratio"]),
                        }
                    )
    return pd.DataFrame(out)


# ---------------------------------------------------------------------------------------------
# choosing a draft: where one source measured several drafts for one target

_GROUP = ("source_id", "target", "task", "temperature", "hardware", "batch", "qps", "precision")


def _groups() -> list[list[P.Deployment]]:
    """Rows of one source, target, task, temperature, device, batch, request rate and precision with
    at least two different drafts and a measured speedup."""
    from sdsl.data import records

    raw = {r["row_id"]: r for r in records(P.DATASET)}
    by: dict[tuple, list[P.Deployment]] = {}
    for d in P.deployments():
        if d.speedup is None:
            continue
        r = raw[d.row_id]
        key = tuple("" if r[k] is None or (isinstance(r[k], float) and math.isnan(r[k])) else r[k] for k in _GROUP)
        by.setdefault(key, []).append(d)
    return [g for g in by.values() if len({d.draft for d in g}) > 1]


#: The two readings of the drafts' pre-training tokens in the ranking test: each row's own (20 per
#: parameter where unpublished), or one ``D`` for the drafts of a group where it is assumed (the
#: largest of them), as ``sdsl plan`` compares candidate drafts of one family.
TOKEN_READINGS = ("each draft's own", "one D for the group's drafts")


def _group_tokens(group: list[P.Deployment], reading: str) -> dict[str, float]:
    """``D`` of each row of a group under ``reading`` (:data:`TOKEN_READINGS`)."""
    if reading == TOKEN_READINGS[0]:
        return {d.row_id: d.d_draft for d in group}
    assumed = [d.d_draft for d in group if d.draft_tokens_assumed]
    common = max(assumed) if assumed else None
    return {d.row_id: common if d.draft_tokens_assumed and common is not None else d.d_draft for d in group}


@declare("draft_ranking", "the drafts of one target: measured and predicted speedup", data=DATA)
def draft_ranking() -> pd.DataFrame:
    """For every group of :func:`_groups` and each reading of the drafts' tokens
    (:data:`TOKEN_READINGS`), one row per draft: its size and tokens, its best measured speedup over
    the group's rows (several draft lengths), the plan's prediction on the same rows (the paper's
    alpha; the step-time model where the device has a preset, else the FLOP model; at the published
    draft length where fixed, else the plan's best; the largest over those rows), and both ranks
    (1: fastest)."""
    out = []
    for reading in TOKEN_READINGS:
        for i, g in enumerate(_groups(), start=1):
            tokens = _group_tokens(g, reading)
            first = g[0]
            label = f"{first.target_key} ({first.source_id}; {first.task.split(',')[0].split(' (')[0]}"
            label += f", T = {first.temperature:g}" if first.temperature is not None else ""
            label += f", batch {first.batch})" if not first.batch_assumed else ")"
            model = "step_time" if first.preset else "flop"
            drafts: dict[str, list[P.Deployment]] = {}
            for d in g:
                drafts.setdefault(d.draft, []).append(d)
            rows = []
            for name, ds in drafts.items():
                predicted = []
                for d in ds:
                    dd = replace(d, d_draft=tokens[d.row_id])
                    predicted.append(P.wall_clock(dd, P.law_alpha(dd), model, dd.gamma)["speedup"])
                rows.append(
                    {
                        "tokens": reading,
                        "group": i,
                        "setting": label,
                        "m": first.m,
                        "draft": name,
                        "n": ds[0].n,
                        "d_draft": tokens[ds[0].row_id],
                        "rows": len(ds),
                        "measured": max(float(d.speedup) for d in ds),  # type: ignore[arg-type]
                        "predicted": max(predicted),
                        "cost_model": f"step time, {first.preset}" if first.preset else "FLOP (c = N/M)",
                    }
                )
            tab = pd.DataFrame(rows)
            tab["rank_measured"] = tab["measured"].rank(ascending=False, method="min").astype(int)
            tab["rank_predicted"] = tab["predicted"].rank(ascending=False, method="min").astype(int)
            out.append(tab.sort_values("n"))
    return pd.concat(out, ignore_index=True)


def _n_star(best: P.Deployment, d: float) -> float:
    """The plan's ``N*`` for the target of ``best`` with draft tokens ``d``: on the step-time model of
    its device where it has one (:func:`sdsl.model.hardware.plan_on_hardware` at its batch), else
    the paper's FLOP optimum; the paper's Eq. 5."""
    m, dt = best.m, best.d_target
    n_range = (min(1e7, m / 4), m / 2)
    if best.preset is None:
        return float(optimal_draft_size(m, d, dt, BESIROGLU_2024, PAPER_EQ5, False, n_range).n_star)
    y = float(perplexity(m, dt, BESIROGLU_2024))

    def alpha_of_n(n):
        return acceptance_rate(perplexity(n, d, BESIROGLU_2024), y, PAPER_EQ5)

    acc = H.get_accelerator(best.preset).times(best.gpus)
    shape = H.target_shape(m, best.target_shape)[0]
    return float(H.plan_on_hardware(shape, alpha_of_n, acc, n_range, best.batch, 0.0, False, 32).n_star)


@declare("ranking_summary", "does the plan choose the draft that was measured fastest", data=DATA)
def ranking_summary(ranking: pd.DataFrame) -> pd.DataFrame:
    """Per reading of the tokens and group of :func:`draft_ranking`: the pairs of drafts the plan
    orders as measured, whether its pick (the fastest predicted) and the pick of Leviathan et al.'s
    rule (the draft closest to ``M/100`` in log size) is the measured fastest, the measured speedup
    each pick gives as a share of the best, and the plan's ``N*`` (with the best measured draft's
    ``D``) and ``M/100`` against the best measured draft's size."""
    groups = _groups()
    out = []
    for (reading, i), g in ranking.groupby(["tokens", "group"], sort=False):
        meas, pr = g["measured"].to_numpy(), g["predicted"].to_numpy()
        pairs = [(a, b) for a in range(len(g)) for b in range(a + 1, len(g))]
        agree = sum(np.sign(meas[a] - meas[b]) == np.sign(pr[a] - pr[b]) for a, b in pairs)
        best = int(np.argmax(meas))
        pick = int(np.argmax(pr))
        m = float(g["m"].iloc[0])
        rule = int(np.argmin(np.abs(np.log(g["n"].to_numpy() / (m / 100)))))
        best_dep = next(d for d in groups[int(i) - 1] if d.draft == g["draft"].iloc[best])
        n_star = _n_star(best_dep, float(g["d_draft"].iloc[best]))
        n_best = float(g["n"].iloc[best])
        out.append(
            {
                "tokens": reading,
                "group": int(i),
                "setting": g["setting"].iloc[0],
                "drafts": len(g),
                "pairs": len(pairs),
                "pairs_ordered_right": int(agree),
                "measured_best": g["draft"].iloc[best],
                "plan_pick": g["draft"].iloc[pick],
                "plan_picks_best": pick == best,
                "plan_share_of_best": float(meas[pick] / meas[best]),
                "rule_pick": g["draft"].iloc[rule],
                "rule_picks_best": rule == best,
                "rule_share_of_best": float(meas[rule] / meas[best]),
                "n_best": n_best,
                "n_star": n_star,
                "n_star_over_best": n_star / n_best,
                "m_over_100_over_best": m / 100 / n_best,
            }
        )
    return pd.DataFrame(out)


# ---------------------------------------------------------------------------------------------
# the extended acceptance law


@declare("extension_skill", "the extended acceptance laws against the constant, held out", data=DATA)
def extension_skill() -> pd.DataFrame:
    """:func:`sdsl.plan.published.skill_table` with each form's equation, its inputs, whether it is
    kept (beats the constant under both schemes), whether the plan can serve it, and which one
    ``--alpha-source published`` uses."""
    law = P.published_law()
    forms = {f.name: f for f in P.FORMS}
    rows = []
    for r in law.skill:
        f = forms.get(r["form"])
        mine = [x for x in law.skill if x["form"] == r["form"]]
        kept = bool(f is not None and all(x["beats_constant"] for x in mine))
        rows.append(
            {
                "form": r["form"],
                "equation": f.label if f else "the median alpha of the training settings",
                "inputs": ", ".join(f.inputs) if f else "",
                "scheme": r["scheme"],
                "n": r["n"],
                "mae": r["mae"],
                "within": r["within"],
                "bias": r["bias"],
                "beats_constant": r["beats_constant"],
                "kept": kept if f else None,
                "servable": (set(f.inputs) <= set(P.PLAN_INPUTS)) if f else True,
                "chosen": r["form"] == law.form,
            }
        )
    return pd.DataFrame(rows)


@declare("extension_fit", "the chosen law fitted on every setting: statsmodels beside numpy", data=DATA)
def extension_fit() -> pd.DataFrame:
    """The chosen form (:func:`sdsl.plan.published.published_law`) refitted by statsmodels OLS on
    every setting: each estimated term's estimate, standard error and 95 % interval, beside the light
    install's numpy estimate and their difference."""
    import statsmodels.api as sm

    law = P.published_law()
    s = P.alpha_settings()
    if law.form == "constant":
        return pd.DataFrame(
            [{"term": "one", "estimate": law.coefficients["one"], "numpy": law.coefficients["one"], "difference": 0.0}]
        )
    f = next(f for f in P.FORMS if f.name == law.form)
    X, offset = P.design(f, s)
    fit = sm.OLS(s.alpha - offset, X).fit()
    ci = fit.conf_int(0.05)
    return pd.DataFrame(
        {
            "term": list(f.terms),
            "estimate": fit.params,
            "std_error": fit.bse,
            "ci_lower": ci[:, 0],
            "ci_upper": ci[:, 1],
            "numpy": [law.coefficients[t] for t in f.terms],
            "difference": [law.coefficients[t] - b for t, b in zip(f.terms, fit.params)],
            "nobs": int(fit.nobs),
        }
    )


# ---------------------------------------------------------------------------------------------
# figures

_CLASS_COLORS = {
    "tpu": "#0072B2",
    "datacenter-gpu": "#D55E00",
    "consumer-gpu": "#009E73",
    "apple": "#CC79A7",
    "cpu": "#E69F00",
}


@declare("fig_alpha", "predicted against measured alpha", data=DATA, figure=True)
def figure_alpha(alpha: pd.DataFrame):
    """Predicted against measured alpha per setting: the paper's Eq. 5 (blue) and the extended law
    with the setting's target held out (orange); circles greedy decoding, triangles sampling at
    ``T = 1``; the dashed line is equality, the band +-0.05, the dotted line the constant (the
    median measured alpha)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 5.0))
    lo, hi = 0.45, 0.9
    ax.fill_between(
        [lo, hi],
        [lo - P.ALPHA_TOLERANCE, hi - P.ALPHA_TOLERANCE],
        [lo + P.ALPHA_TOLERANCE, hi + P.ALPHA_TOLERANCE],
        color="0.9",
        lw=0,
    )
    ax.plot([lo, hi], [lo, hi], color="0.4", lw=0.8, ls="--")
    ax.axhline(float(alpha["alpha"].median()), color="0.5", lw=0.8, ls=":")
    for est, colour, label in (
        ("paper", "#0072B2", "Eq. 5, Table 3"),
        ("published_loto", "#D55E00", "extended law, target held out"),
    ):
        for t, marker in ((0.0, "o"), (1.0, "^")):
            g = alpha[alpha["temperature"] == t]
            ax.scatter(g["alpha"], g[est], marker=marker, s=36, color=colour, alpha=0.85, label=f"{label}, T = {t:g}")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel(r"measured $\alpha$")
    ax.set_ylabel(r"predicted $\alpha$")
    ax.legend(loc="upper left")
    return fix_layout(fig)


@declare("fig_speedup", "predicted against measured speedup by hardware class", data=DATA, figure=True)
def figure_speedup(pred: pd.DataFrame):
    """Predicted against measured wall-clock speedup, log-log, colour by hardware class: left the
    plan's own answer (the paper's alpha; the step-time model where the device has a preset, squares,
    else the FLOP model, circles), right the same cost models with the measured alpha (the deployments
    that measured one). The dashed line is equality, the band +-20 %."""
    import matplotlib.pyplot as plt

    s = _scored(pred)
    panels = (
        ("the plan (the paper's alpha)", s[s["plan"]]),
        (
            "measured alpha",
            s[(s["alpha_from"] == "measured") & (s["cost_model"] == np.where(s["preset"] != "", "step_time", "flop"))],
        ),
    )
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 4.8), sharex=True, sharey=True)
    lo, hi = 0.5, 6.0
    grid = np.geomspace(lo, hi, 50)
    for ax, (title, g) in zip(axes, panels):
        ax.fill_between(grid, grid * (1 - P.SPEEDUP_TOLERANCE), grid * (1 + P.SPEEDUP_TOLERANCE), color="0.9", lw=0)
        ax.plot(grid, grid, color="0.4", lw=0.8, ls="--")
        for cls, colour in _CLASS_COLORS.items():
            for model, marker in (("flop", "o"), ("step_time", "s")):
                sub = g[(g["hardware_class"] == cls) & (g["cost_model"] == model)]
                if len(sub):
                    ax.scatter(
                        sub["measured"],
                        sub["predicted"],
                        marker=marker,
                        s=26,
                        color=colour,
                        alpha=0.8,
                        label=f"{CLASS_NAMES[cls]}, {'step time' if model == 'step_time' else 'FLOP'}",
                    )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ticks = [0.5, 1, 2, 3, 4, 6]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("measured speedup")
        ax.text(0.03, 0.97, title, transform=ax.transAxes, va="top")
    axes[0].set_ylabel("predicted speedup")
    handles, labels = [], []
    for ax in axes:
        for hnd, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(hnd)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncol=3)
    return fix_layout(fig)


# ---------------------------------------------------------------------------------------------
# the numbers of the text


def _stat(tab: pd.DataFrame, **key: Any) -> Mapping[str, Any]:
    mask = np.ones(len(tab), dtype=bool)
    for k, v in key.items():
        mask &= (tab[k] == v).to_numpy()
    hit = tab[mask]
    if len(hit) != 1:
        raise KeyError(f"{key}: {len(hit)} rows")
    return hit.iloc[0]


def verdict(alpha_err: pd.DataFrame, speed_err: pd.DataFrame, skill: pd.DataFrame, rank: pd.DataFrame) -> str:
    """The chapter's verdict in one sentence of numbers (the landing page quotes it)."""
    paper = _stat(alpha_err, estimate="paper", settings="all settings")
    const = _stat(alpha_err, estimate="constant_loto", settings="all settings")
    plan = _stat(speed_err, alpha_from="plan", hardware_class="all")
    gpu = _stat(speed_err, alpha_from="paper", cost_model="step_time", hardware_class="datacenter-gpu")
    chosen = skill[skill["chosen"] & (skill["scheme"] == P.SELECTION_SCHEME)]
    own, common = (rank[rank["tokens"] == r] for r in TOKEN_READINGS)
    ext = (
        f"an extension with the sampling temperature, held out by target, errs {float(chosen['mae'].iloc[0]):.3f}"
        if len(chosen) and chosen["form"].iloc[0] != "constant"
        else "no extension beats that constant"
    )
    return (
        f"On published deployments the paper's acceptance law is off by {paper['mae']:.3f} in alpha on average "
        f"(within 0.05 in {int(paper['within'])} of {int(paper['n'])} settings), worse than a constant "
        f"({const['mae']:.3f}), and {ext}; the plan's wall-clock speedup is within 20 % in {int(plan['within'])} of "
        f"{int(plan['n'])} deployments (median predicted/measured {plan['median_ratio']:.2f}), {int(gpu['within'])} of "
        f"{int(gpu['n'])} on A100 and H100 GPUs with the step-time model (fitted on an H200, scaled to them); of the "
        f"drafts one source measured "
        f"for one target it picks the fastest in {int(own['plan_picks_best'].sum())} of {len(own)} comparisons "
        f"({int(common['plan_picks_best'].sum())} with one pre-training size for the drafts whose tokens are not "
        f"published), where a draft 100 times smaller than the target is the fastest in "
        f"{int(own['rule_picks_best'].sum())}."
    )


def summary(
    inputs: pd.DataFrame,
    size: pd.DataFrame,
    alpha: pd.DataFrame,
    alpha_err: pd.DataFrame,
    pred: pd.DataFrame,
    speed_err: pd.DataFrame,
    by: pd.DataFrame,
    costs: pd.DataFrame,
    ranking: pd.DataFrame,
    rank: pd.DataFrame,
    skill: pd.DataFrame,
    fit: pd.DataFrame,
) -> dict[str, Any]:
    """The numbers the chapter's text cites, by glue name (without the chapter prefix)."""
    out: dict[str, Any] = {"verdict": verdict(alpha_err, speed_err, skill, rank)}
    total = size[size["source_id"] == "all sources"].iloc[0]
    out.update(
        rows=int(total["rows"]),
        sources=int(inputs["source_id"].nunique()),
        alpha_rows=int(total["alpha_measured"]),
        speedup_rows=int(total["speedup_measured"]),
        settings=len(alpha),
        alpha_sources=int(alpha["source_id"].nunique()),
        assumed_tokens=int((inputs["tokens_assumed"] != "").sum()),
        assumed_batch=int((inputs["batch_assumed"] & inputs["speedup"].notna()).sum()),
        plan_refuses=int((~inputs["plan_answers"]).sum()),
        no_temperature=int(inputs["temperature"].isna().sum()),
        alpha_min=float(alpha["alpha"].min()),
        alpha_max=float(alpha["alpha"].max()),
        paper_min=float(alpha["paper"].min()),
        paper_max=float(alpha["paper"].max()),
        x_min=float(alpha["x"].min()),
        x_max=float(alpha["x"].max()),
        y_min=float(alpha["y"].min()),
        y_max=float(alpha["y"].max()),
        median_alpha=float(alpha["alpha"].median()),
        alpha_targets=len({s.split(" (")[0] for s in alpha["target"]}),
        plane_y_min=float(min(r["target_ppl"] for r in _acceptance())),
        plane_y_max=float(max(r["target_ppl"] for r in _acceptance())),
        tol_alpha=float(P.ALPHA_TOLERANCE),
        tol_speedup=float(100 * P.SPEEDUP_TOLERANCE),
        tokens_per_param=float(P.TOKENS_PER_PARAMETER),
    )
    for est in ESTIMATE_NAMES:
        r = _stat(alpha_err, estimate=est, settings="all settings")
        out.update({f"{est}_mae": float(r["mae"]), f"{est}_within": int(r["within"]), f"{est}_bias": float(r["bias"])})
    for t in (0.0, 1.0):
        for est in ("paper", "published_loto"):
            r = _stat(alpha_err, estimate=est, settings=f"temperature {t:g}")
            out[f"{est}_t{int(t)}_bias"] = float(r["bias"])
            out[f"{est}_t{int(t)}_mae"] = float(r["mae"])
        out[f"measured_t{int(t)}"] = float(alpha.loc[alpha["temperature"] == t, "alpha"].mean())
        out[f"n_t{int(t)}"] = int((alpha["temperature"] == t).sum())
    for cls in ["all", *sorted(speed_err.loc[speed_err["alpha_from"] == "plan", "hardware_class"].unique())]:
        if cls == "all":
            key = "plan"
        else:
            key = f"plan_{cls.replace('-', '_')}"
        r = _stat(speed_err, alpha_from="plan", hardware_class=cls)
        out.update(
            {f"{key}_n": int(r["n"]), f"{key}_within": int(r["within"]), f"{key}_ratio": float(r["median_ratio"])}
        )
    for src in ("paper", "measured", "published"):
        for model in ("flop", "step_time", "source_c"):
            for cls in ("all", "datacenter-gpu", "tpu"):
                hit = speed_err[
                    (speed_err["alpha_from"] == src)
                    & (speed_err["cost_model"] == model)
                    & (speed_err["hardware_class"] == cls)
                ]
                if len(hit):
                    r = hit.iloc[0]
                    key = f"{src}_{model}_{cls.replace('-', '_')}"
                    out.update(
                        {
                            f"{key}_n": int(r["n"]),
                            f"{key}_within": int(r["within"]),
                            f"{key}_ratio": float(r["median_ratio"]),
                        }
                    )
    for r in costs.itertuples():
        key = f"cost_{r.comparison.split()[-1]}_{r.alpha_from}_{r.cost_model}"
        out.update({f"{key}_n": int(r.n), f"{key}_within": int(r.within), f"{key}_ratio": float(r.median_ratio)})
    for r in by.itertuples():
        key = f"by_{r.by.replace(' ', '_')}_{str(r.value).split(' ')[0].replace('-', '_').replace('.', '_')}"
        out.update({f"{key}_n": int(r.n), f"{key}_within": int(r.within), f"{key}_ratio": float(r.median_ratio)})
    for reading, suffix in zip(TOKEN_READINGS, ("own", "common")):
        r = rank[rank["tokens"] == reading]
        t5 = r[r["setting"].str.startswith("T5-XXL")]
        out.update(
            {
                f"groups_{suffix}": len(r),
                f"pairs_{suffix}": int(r["pairs"].sum()),
                f"pairs_right_{suffix}": int(r["pairs_ordered_right"].sum()),
                f"groups_all_right_{suffix}": int((r["pairs_ordered_right"] == r["pairs"]).sum()),
                f"plan_picks_{suffix}": int(r["plan_picks_best"].sum()),
                f"rule_picks_{suffix}": int(r["rule_picks_best"].sum()),
                f"plan_share_min_{suffix}": float(r["plan_share_of_best"].min()),
                f"rule_share_min_{suffix}": float(r["rule_share_of_best"].min()),
                f"plan_share_mean_{suffix}": float(r["plan_share_of_best"].mean()),
                f"rule_share_mean_{suffix}": float(r["rule_share_of_best"].mean()),
                f"t5_groups_{suffix}": len(t5),
                f"t5_right_{suffix}": int((t5["pairs_ordered_right"] == t5["pairs"]).sum()),
                f"t5_n_star_{suffix}": float(t5["n_star"].median()),
                f"t5_n_star_ratio_{suffix}": float(t5["n_star_over_best"].median()),
            }
        )
    own = rank[rank["tokens"] == TOKEN_READINGS[0]]
    out.update(
        t5_rule_ratio=float(own.loc[own["setting"].str.startswith("T5-XXL"), "m_over_100_over_best"].median()),
        t5_common_d=float(
            ranking.loc[
                (ranking["tokens"] == TOKEN_READINGS[1]) & ranking["setting"].str.startswith("T5-XXL"), "d_draft"
            ].iloc[0]
        ),
    )
    law = P.published_law()
    chosen = skill[skill["chosen"]]
    out.update(
        chosen=str(law.form),
        chosen_label=str(law.label),
        forms=len(P.FORMS),
        kept=int(skill.drop_duplicates("form")["kept"].fillna(False).astype(bool).sum()),
        c0=float(law.coefficients.get("one", 0.0)),
        c_t=float(law.coefficients.get("temperature", 0.0)),
        paper_c=float(PAPER_EQ5.C),
        fit_max_diff=float(fit["difference"].abs().max()),
        r2=float(law.r2),
    )
    for r in chosen.itertuples():
        key = "loto" if r.scheme == "leave one target out" else "loso"
        out[f"chosen_{key}_mae"] = float(r.mae)
        out[f"chosen_{key}_within"] = int(r.within)
    for r in skill[skill["form"] == "constant"].itertuples():
        key = "loto" if r.scheme == "leave one target out" else "loso"
        out[f"const_{key}_mae"] = float(r.mae)
        out[f"const_{key}_within"] = int(r.within)
    full = skill[(skill["form"] == "refit_temperature") & (skill["scheme"] == P.SELECTION_SCHEME)]
    out["full_refit_loto_mae"] = float(full["mae"].iloc[0])
    tuned = skill[(skill["form"] == "paper_slopes_temperature_tuned") & (skill["scheme"] == P.SELECTION_SCHEME)]
    out["tuned_loto_mae"] = float(tuned["mae"].iloc[0])
    temp_only = skill[(skill["form"] == "temperature") & (skill["scheme"] == "leave one source out")]
    out["temperature_only_loso_mae"] = float(temp_only["mae"].iloc[0])
    return out


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters cell):
    one ``ValueError`` naming the parameter and what is allowed."""
    from sdsl import validation as V

    V.check_parameters("published", params, {"artifacts_dir": V.optional(V.rule(V.folder))})

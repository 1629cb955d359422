"""The landing page's answers in short and its reproduction summary, generated from the chapters'
artifacts.

:func:`headline_markdown` answers the reader's four questions, one sentence each, every number read
from an artifact and printed as the chapter it links prints it. :func:`reproduction_markdown` reads
``scorecard/counts.csv`` (both views: the paper's inputs as printed and as the chapters reinterpret
them) and ``scorecard/coverage.csv`` from an artifacts tree and writes the summary the book's first
page shows (MyST): nothing in it is typed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from sdsl.audit.reproduction import TABLES
from sdsl.book.tables import printed_as

__all__ = ["reproduction_markdown", "headline_markdown", "published_verdict"]

_EQUAL, _WITHIN, _DIFFERS = "equal to printed precision", "within tolerance", "differs"
_INPUT_OK = "input as printed"


def _numbers(counts: pd.DataFrame, view: str) -> dict[str, int]:
    """Counts of one view: the recomputed results and inputs of the tables (the scorecard's row
    :data:`~sdsl.audit.reproduction.TABLES`) and the claims of the figures (its row ``FIGURES``)."""
    from sdsl.audit.reproduction import FIGURES

    c = counts[counts["view"] == view].set_index("table")
    tables, figures = c.loc[TABLES], c.loc[FIGURES]
    return {
        "equal": int(tables[_EQUAL]),
        "within": int(tables[_WITHIN]),
        "differs": int(tables[_DIFFERS]),
        "inputs": int(tables[_INPUT_OK]),
        "claims": int(figures[[_EQUAL, _WITHIN, _DIFFERS]].sum()),
        "hold": int(figures[_EQUAL]),
        "share": round(100 * float(tables["reproduced"])),
    }


def _read(root: Path, rel: str) -> pd.DataFrame:
    path = root / rel
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python -m sdsl.build.pipeline run` first")
    return pd.read_csv(path)


def _extrapolated(plan: pd.Series) -> bool:
    """Whether the acceptance plane is evaluated outside the target perplexities it was fitted on
    for the planned target of ``plan`` (a row of ``plan_draft/plan.csv``), as ``sdsl plan`` warns
    with the book's defaults (the paper's plane, Besiroglu et al. constants)."""
    from sdsl import plan as P
    from sdsl.plan.deployment import perplexity_warnings

    inputs = P.check_inputs(
        target_params=float(plan["m"]), target_tokens=float(plan["d_target"]), draft_tokens=float(plan["d_draft"])
    )
    return any("extrapolated" in w for w in perplexity_warnings(inputs, P.plan(inputs)))


def headline_markdown(root: Path | str) -> str:
    """The landing page's answers in short (MyST), one sentence per question, each number read
    from the artifacts tree ``root`` and printed as the chapter it links prints it, each with the
    condition that bounds it:

    - does it reproduce: the share of the recomputed results of the paper's tables that reproduce,
      as printed and as the chapters read two inputs (the scorecard's row of the tables), and
      Table 3's plane, which does not (the refit's R² against the printed one, and the pairs the
      paper's margins of error imply);
    - does the central claim hold: the laptop-scale test (prediction, measurement, throughput
      lost, the criterion);
    - how to size a draft: the planning chapter's N* for its target with the interval ``sdsl plan``
      prints and the tokens per FLOP over plain decoding;
    - how far the plan holds on real hardware: the paper's latency claim judged as its caption
      states it, the trend within one draft family with its exact p-value, and how closely the
      step-time model behind the plan's wall-clock speedups matched measured step times;
    - does it hold against others' measurements: the verdict of the published-deployments chapter
      (:func:`published_verdict`)."""
    root = Path(root)
    counts = _read(root, "scorecard/counts.csv").set_index(["view", "table"])
    t3 = _read(root, "acceptance/table3.csv")
    implied = _read(root, "acceptance/table3_implied_df.csv").set_index("parameter")
    lap = _read(root, "laptop_scale/prediction.csv").sort_values("params", ascending=False)
    plan = _read(root, "plan_draft/plan.csv").iloc[0]
    iv = _read(root, "plan_draft/n_star_interval.csv").iloc[0]
    rc = _read(root, "latency/rank_correlations.csv").set_index(["scope", "metric"])
    t6 = _read(root, "latency/table6.csv")
    steps = _read(root, "plan_draft/step_time_errors.csv")
    h200 = steps[steps["device"].str.contains("H200")]
    fit, slow = (
        h200[(h200["model"] == "fitted, shape held out") & (h200["passes_of"] == kind)].iloc[0]
        for kind in ("every other pass", "context 8192, several new tokens")
    )
    spec = h200[(h200["model"] == "spec sheet, no overhead") & (h200["passes_of"] == "every other pass")].iloc[0]

    # does it reproduce
    printed, read = counts.loc[("as printed", TABLES)], counts.loc[("as reinterpreted", TABLES)]
    n = int(printed[_EQUAL] + printed[_WITHIN] + printed[_DIFFERS])
    r2 = t3[t3["quantity"] == "r2"].iloc[0]
    c = implied.loc["C"]
    pairs = (
        f"{int(c['df_min']) + 3}" if c["df_min"] == c["df_max"] else f"{int(c['df_min']) + 3} to {int(c['df_max']) + 3}"
    )
    reproduce = (
        f"*Does it reproduce?* Of the {n} results of the paper's tables that the companion recomputes, "
        f"{round(100 * printed['reproduced'])} % reproduce with the paper's inputs as printed and "
        f"{round(100 * read['reproduced'])} % with the two inputs its chapters read otherwise, every other one with "
        f"its reason in the {{doc}}`scorecard <executed/scorecard>`; the acceptance plane of Table 3 does not, because "
        f"the paper fitted it on the {pairs} pairs its margins of error imply and prints {int(t3.loc[t3['quantity'] == 'n', 'refit'].iloc[0])}, "
        f"on which the refit has $R^2$ = {r2['refit']:.3f} against the printed {r2['paper']:g} "
        f"({{doc}}`acceptance chapter <executed/acceptance>`)."
    )

    design = _read(root, "laptop_scale/runs_of_the_design.csv")
    baselines = _read(root, "laptop_scale/baselines.csv")
    wall = _read(root, "laptop_scale/wallclock.csv")
    central = "*Does the central claim hold?* " + _laptop_sentence(lap, design, baselines, wall)

    # how to size a draft
    extrapolated = (
        ", with acceptance rates extrapolated beyond the perplexities the paper's plane was fitted on"
        if _extrapolated(plan)
        else ""
    )
    size = (
        f"*How to size a draft?* `sdsl plan` gives the throughput-optimal draft with the interval of the choices "
        f"the method leaves open: for {plan['target']}, $N^*$ = {printed_as(float(plan['n_star']), '.4g')} "
        f"parameters within [{printed_as(float(iv['low']), '.4g')}, {printed_as(float(iv['high']), '.4g')}] over "
        f"the acceptance law, the loss-law constants and the plane's coefficients (an envelope, not a probability), "
        f"and {float(plan['speedup']):.3f} times the tokens per FLOP of plain decoding, a ratio of FLOP counts, not "
        f"of wall-clock time{extrapolated} ({{doc}}`planning chapter <executed/plan_draft>`)."
    )

    # how far the plan holds on real hardware
    from sdsl.audit.rows import latency_claims

    claims = latency_claims(t6)
    fails = [f"{f} {m}" for f, m in claims.loc[~claims["rises"], ["draft_family", "metric"]].itertuples(index=False)]
    said = fails[0] if len(fails) == 1 else ", ".join(fails[:-1]) + " and " + fails[-1] if fails else ""
    opt = rc.loc[("OPT drafts", "ttot")]
    verdict = (
        f"latency does not rise at every step away from $N^*$ as the paper's Figure 4 states (it fails for {said})"
        if fails
        else "latency rises at every step away from $N^*$, as the paper's Figure 4 states"
    )
    hardware = (
        f"*How far does the plan hold on real hardware?* Untested at the paper's scale: in the paper's own "
        f"latencies with an OPT-13B target, {verdict}, and the rise of the total time within the OPT drafts has "
        f"Spearman's $\\rho$ = {float(opt['spearman']):.2f} with an exact one-sided p = {float(opt['spearman_p']):.3f} "
        f"over {int(opt['n'])} drafts, not established ({{doc}}`latency chapter <executed/latency>`). The "
        f"wall-clock speedups `sdsl plan --hardware` prints come from a model of each step's cost fitted to forward "
        f"passes measured on one H200: on the shapes held out of its fit it is within 20 % of the measured time for "
        f"{_share(fit)} passes, but only for {_share(slow)} passes at a context of 8192 with several new tokens "
        f"(PyTorch's attention kernel, slower there than the engines'), where the spec sheet without overheads is "
        f"within 20 % for {_share(spec)} passes "
        f"({{doc}}`planning chapter <executed/plan_draft>`)."
    )
    others = (
        f"*Does it hold against others' measurements?* {published_verdict(root).rstrip('.')} "
        f"({{doc}}`published-deployments chapter <executed/published>`)."
    )
    return "\n".join(
        ["**In short.**", "", f"- {reproduce}", f"- {central}", f"- {size}", f"- {hardware}", f"- {others}", ""]
    )


def _share(row: pd.Series) -> str:
    """``k of n`` for a row of ``plan_draft/step_time_errors.csv``."""
    n = int(row["n"])
    return f"{round(float(row['within_20']) * n)} of {n}"


def _laptop_sentence(lap: pd.DataFrame, design: pd.DataFrame, baselines: pd.DataFrame, wall: pd.DataFrame) -> str:
    """The companion's test of the central claim, from the laptop-scale artifacts: which run of the
    design passed and by how far the earlier ones missed, the latest run's prediction against the
    measurement with their intervals (a lower end at the floor of the range searched written
    ``≤``), the throughput per FLOP lost, the baselines that lose no more, and the wall clock."""
    from sdsl.chapters.laptop_scale import RULE_WORDS as words
    from sdsl.experiment.baselines import judge

    big = lap.iloc[0]
    passed, n = int(lap["passed"].sum()), len(lap)
    latest = design.iloc[-1]
    ordinals = ("first", "second", "third", "fourth", "fifth")
    cardinals = ("one", "two", "three", "four", "five")
    k = len(design)

    def earlier_run(i: int, r: Any) -> str:
        if int(r.passed) < int(r.targets):
            return (
                f"the {ordinals[i]} missed, its measured optimum {r.measured_over_predicted_min:.1f} to "
                f"{r.measured_over_predicted_max:.1f} times the prediction"
            )
        rivals = str(r.not_beaten)
        return (
            f"the {ordinals[i]} passed the 2 % criterion with calibration drafts reaching beyond the optima, "
            f"but did not beat {rivals}"
        )

    earlier = "; ".join(earlier_run(i, r) for i, r in enumerate(design.iloc[:-1].itertuples()))
    low = f"{big['predicted_low'] / 1e3:,.1f}"
    if big["predicted_low"] <= float(latest["search_floor"]) * (1 + 1e-9):
        low = "≤ " + low
    # the baselines the prediction does not beat on a majority of the targets (the criterion's rule)
    j = judge(lap, baselines)
    as_good = sorted(j.loc[j["beaten"] == "no", "rule"])
    whole = passed == n and not as_good
    runs = f"{'passed' if whole else 'failed'} in the {ordinals[k - 1]} of {cardinals[k - 1]} runs of the design" + (
        f" ({earlier})" if earlier else ""
    )
    rivals = (
        " Rules a practitioner could use without the paper lose no more on a majority of the targets ("
        + ", ".join(words.get(r, r) for r in as_good)
        + ")."
        if as_good
        else " Every rule without the paper's laws that the companion tried loses more."
    )
    ratio = big["n_star_empirical"] / big["n_star_predicted"]
    return (
        f"On models trained here, about a thousand times smaller than the paper's targets, the companion's test "
        f"({{doc}}`laptop-scale chapter <executed/laptop_scale>`) {runs}. In the "
        f"{ordinals[k - 1]}, it predicted, before any test draft was trained, $N^*$ = "
        f"{big['n_star_predicted'] / 1e3:,.1f} k parameters [{low}, {big['predicted_high'] / 1e3:,.1f}] for its "
        f"largest target; the measured optimum is {big['n_star_empirical'] / 1e3:,.1f} k "
        f"[{big['empirical_low'] / 1e3:,.1f}, {big['empirical_high'] / 1e3:,.1f}], {ratio:.1f} times the "
        f"prediction, and the predicted size loses "
        f"{100 * big['lost_at_predicted']:.1f} % [{100 * big['lost_low']:.1f}, {100 * big['lost_high']:.1f}] of "
        f"the throughput per FLOP (tokens per FLOP, the paper's Eq. 9): less than 2 % is lost for {passed} of {n} "
        f"targets.{rivals} In wall-clock time on this CPU, speculative decoding was faster "
        f"than plain decoding over its whole interval for {int((wall['speedup_low'] > 1).sum())} of {len(wall)} "
        f"test pairs."
    )


def published_verdict(root: Path | str) -> str:
    """The verdict of the published-deployments chapter (:func:`sdsl.chapters.published.verdict`),
    from its artifacts under ``root``."""
    from sdsl.chapters.published import verdict

    root = Path(root)
    names = ("alpha_errors", "speedup_errors", "extension_skill", "ranking_summary")
    tabs = [_read(root, f"published/{n}.csv") for n in names]
    return verdict(*tabs)


def reproduction_markdown(root: Path | str) -> str:
    """The summary of the reproduction under the artifacts tree ``root`` (MyST text): how many of
    the printed numbers have a row, how many results reproduce as printed and as reinterpreted, how
    many inputs were checked and how many claims hold, with a table per view and a link to the
    scorecard. Raises ``FileNotFoundError`` naming a missing artifact."""
    root = Path(root)
    paths = {name: root / "scorecard" / f"{name}.csv" for name in ("counts", "coverage")}
    for path in paths.values():
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: run `python -m sdsl.build.pipeline run scorecard` first")
    counts, cover = pd.read_csv(paths["counts"]), pd.read_csv(paths["coverage"])
    p, r = _numbers(counts, "as printed"), _numbers(counts, "as reinterpreted")
    n = p["equal"] + p["within"] + p["differs"]

    def share(v: dict[str, int]) -> str:
        return f"{v['share']} %"

    lines = [
        f"Of the {int(cover['printed'].sum())} numbers printed in the paper's nine tables, "
        f"{int(cover['accounted'].sum())} have a row in the {{doc}}`scorecard <executed/scorecard>`: "
        f"{p['inputs']} are inputs the companion takes from the paper, each checked against the paper's text, "
        f"and {n} are results it recomputes.",
        "",
        "| recomputed results, with the paper's inputs | equal to printed precision | within tolerance | differ | reproduce |",
        "|:--|--:|--:|--:|--:|",
        f"| as printed | {p['equal']} | {p['within']} | {p['differs']} | {share(p)} |",
        f"| as the chapters reinterpret them | {r['equal']} | {r['within']} | {r['differs']} | {share(r)} |",
        "",
        f"Of the {p['claims']} checkable claims of the paper's figure captions, {p['hold']} hold. "
        "Every number that differs, and every claim that fails or cannot be checked, has its reason in the "
        "scorecard.",
    ]
    return "\n".join(lines)

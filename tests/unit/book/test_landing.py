"""The landing page's answers in short, read from the committed baseline artifacts: each number it
states is the artifact's, recomputed here with pandas alone, and printed as its chapter prints it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sdsl.audit.reproduction import TABLES
from sdsl.book.landing import headline_markdown, reproduction_markdown
from sdsl.book.tables import printed_as

BASELINE = Path(__file__).resolve().parents[3] / "baseline"


def _answers() -> list[str]:
    return [line for line in headline_markdown(BASELINE).splitlines() if line.startswith("- ")]


def test_four_answers_each_with_the_chapter_it_comes_from():
    answers = _answers()
    questions = ("Does it reproduce?", "Does the central claim hold?", "How to size a draft?", "real hardware?")
    assert len(answers) == 4
    for answer, question in zip(answers, questions):
        assert question in answer and "{doc}`" in answer


def test_the_reproduction_shares_are_the_scorecards_row_of_the_tables():
    counts = pd.read_csv(BASELINE / "scorecard" / "counts.csv").set_index(["view", "table"])
    printed, read = counts.loc[("as printed", TABLES)], counts.loc[("as reinterpreted", TABLES)]
    first = _answers()[0]
    assert f"{round(100 * printed['reproduced'])} % reproduce with the paper's inputs as printed" in first
    assert f"{round(100 * read['reproduced'])} % with the two inputs" in first
    table = reproduction_markdown(BASELINE)
    assert (
        f"| {round(100 * printed['reproduced'])} % |" in table and f"| {round(100 * read['reproduced'])} % |" in table
    )


def test_the_plan_is_stated_with_the_interval_sdsl_plan_prints():
    plan = pd.read_csv(BASELINE / "plan_draft" / "plan.csv").iloc[0]
    iv = pd.read_csv(BASELINE / "plan_draft" / "n_star_interval.csv").iloc[0]
    size = _answers()[2]
    assert f"$N^*$ = {printed_as(float(plan['n_star']), '.4g')} parameters" in size
    assert f"within [{printed_as(float(iv['low']), '.4g')}, {printed_as(float(iv['high']), '.4g')}]" in size
    assert "not of wall-clock time" in size and "speedup" not in size


def test_the_headline_states_the_laptop_scale_test_with_its_intervals_and_verdict():
    central = _answers()[1]
    p = pd.read_csv(BASELINE / "laptop_scale" / "prediction.csv").sort_values("params", ascending=False)
    big = p.iloc[0]
    assert f"$N^*$ = {big['n_star_predicted'] / 1e3:,.1f} k parameters" in central
    assert f"measured optimum of {big['n_star_empirical'] / 1e3:,.1f} k" in central
    assert f"is met for {int(p['passed'].sum())} of {len(p)} targets" in central

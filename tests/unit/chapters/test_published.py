"""Tests of sdsl.chapters.published: the tables' arithmetic on the committed data, the ranking test,
the parameters' check and the landing page's verdict (chapter "published")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdsl.book.landing import headline_markdown, published_verdict
from sdsl.chapters import published as chapter
from sdsl.plan import published as P

BASELINE = Path(__file__).resolve().parents[3] / "baseline"


@pytest.fixture(scope="module")
def pred() -> pd.DataFrame:
    return chapter.speedup_table()


def test_the_data_size_adds_up():
    inputs = chapter.inputs_table()
    size = chapter.data_size(inputs)
    total = size[size["source_id"] == "all sources"].iloc[0]
    assert total["rows"] == len(inputs) == 120
    body = size[size["source_id"] != "all sources"]
    assert (
        body.drop(columns=["source_id", "rows", "alpha_measured", "speedup_measured"]).sum(axis=1) == body["rows"]
    ).all()
    assert total["alpha_measured"] == inputs["alpha"].notna().sum()


def test_alpha_errors_are_the_mean_absolute_errors_of_the_table():
    alpha = chapter.alpha_table()
    err = chapter.alpha_errors(alpha)
    row = err[(err["estimate"] == "paper") & (err["settings"] == "all settings")].iloc[0]
    assert row["mae"] == pytest.approx(float(np.mean(np.abs(alpha["paper"] - alpha["alpha"]))), rel=1e-12)
    assert row["within"] == int((np.abs(alpha["paper"] - alpha["alpha"]) <= 0.05).sum())
    assert row["n"] == len(alpha) == len(P.alpha_settings())


def test_the_plans_answer_is_one_per_scored_deployment(pred):
    plan = pred[pred["plan"]]
    assert plan["row_id"].is_unique
    assert set(plan["cost_model"]) == {"flop", "step_time"}
    assert (plan.loc[plan["preset"] != "", "cost_model"] == "step_time").all()
    # at the published draft length where it is a fixed integer
    fixed = plan[plan["gamma_published"].str.isdigit()]
    assert (fixed["gamma"].astype(int) == fixed["gamma_published"].astype(int)).all()


def test_the_ranking_compares_drafts_of_one_target_in_one_setting():
    ranking = chapter.draft_ranking()
    for _, g in ranking.groupby(["tokens", "group"]):
        assert g["m"].nunique() == 1 and g["draft"].is_unique and len(g) >= 2
    rank = chapter.ranking_summary(ranking)
    assert set(rank["tokens"]) == set(chapter.TOKEN_READINGS)
    t5 = rank[rank["setting"].str.startswith("T5-XXL")]
    assert len(t5) == 8 and set(t5["measured_best"]) == {"T5-small (T5 v1.1)"}
    # the 100x rule picks the draft closest to M/100: T5-small (77M) for T5-XXL (11B)
    assert set(t5["rule_pick"]) == {"T5-small (T5 v1.1)"}
    assert ((rank["plan_share_of_best"] <= 1) & (rank["plan_share_of_best"] > 0)).all()


def test_one_d_for_a_group_changes_only_the_assumed_tokens():
    ranking = chapter.draft_ranking()
    own, common = (ranking[ranking["tokens"] == r].reset_index(drop=True) for r in chapter.TOKEN_READINGS)
    rows = {d.draft: d for d in P.deployments()}
    published = [rows[d].draft_tokens_assumed is False for d in own["draft"]]
    assert (own.loc[published, "d_draft"] == common.loc[published, "d_draft"]).all()
    assert own["measured"].equals(common["measured"])


def test_check_parameters_refuses_an_unknown_name():
    chapter.check_parameters(artifacts_dir=None)
    with pytest.raises(ValueError, match="artifacts"):
        chapter.check_parameters(artifacts_dir=None, artifact_dir="x")


def test_the_landing_page_states_the_verdict_from_the_baseline():
    text = headline_markdown(BASELINE)
    verdict = published_verdict(BASELINE)
    assert verdict.rstrip(".") in text
    err = pd.read_csv(BASELINE / "published" / "alpha_errors.csv")
    paper = err[(err["estimate"] == "paper") & (err["settings"] == "all settings")].iloc[0]
    assert f"off by {paper['mae']:.3f} in alpha" in verdict
    assert "{doc}`published-deployments chapter <executed/published>`" in text

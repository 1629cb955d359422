"""The reproduction scorecard, on the committed baseline artifacts (fast, no notebook run).

The baseline tree (``baseline/``) is what the chapters wrote at the last accepted run; the scorecard
read from it must account for every number the paper prints, give both counts and apply the
interval rule. Changing one artifact must change exactly the row it feeds."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from sdsl import data
from sdsl.audit import reproduction as R
from sdsl.audit.rows import MissingArtifactsError, parse_millions
from sdsl.chapters import scorecard as sc
from sdsl.paths import ROOT
from sdsl.tolerance import DIFFERS, EQUAL, WITHIN, classify


@pytest.fixture()
def root(tmp_path):
    """A copy of the baseline artifacts tree that a test may change."""
    dst = tmp_path / "artifacts"
    shutil.copytree(ROOT / "baseline", dst)
    return dst


@pytest.fixture(scope="module")
def card():
    return sc.scorecard(ROOT / "baseline")


def test_classify_boundaries():
    assert classify(0.5994, 0.599, 5e-4, 0.01) == EQUAL
    assert classify(0.6040, 0.599, 5e-4, 0.01) == WITHIN
    assert classify(0.6060, 0.599, 5e-4, 0.01) == DIFFERS
    assert classify(float("nan"), 0.599, 5e-4, 0.01) == DIFFERS


def test_parse_millions():
    assert parse_millions("117M") == (117e6, 0.5e6)
    assert parse_millions("1.5M") == (1.5e6, 0.05e6)
    with pytest.raises(ValueError, match="printed in millions"):
        parse_millions("117")


def test_every_printed_number_of_tables_1_to_9_has_a_row(card):
    cov = R.coverage(card)
    assert list(cov["table"]) == [f"Table {i}" for i in range(1, 10)]
    assert (cov["missing"] == "").all(), cov[cov["missing"] != ""]
    assert (cov["printed"] == cov["accounted"]).all()
    # the paper's text (data/paper_tables.txt) prints 310 numbers in Tables 1-9
    assert cov["printed"].sum() == 310
    # inputs (Tables 1, 2, 7) are checked against their transcription, never "compared"
    inputs = R.view(card)
    assert set(inputs.loc[inputs["table"].isin(["Table 1", "Table 2", "Table 7"]), "kind"]) == {"input"}
    assert (inputs.loc[inputs["kind"] == "input", "status"] == R.INPUT_OK).all()


def test_every_figure_has_a_scored_claim(card):
    claims = card[card["kind"] == "claim"]
    assert set(claims["table"]) == {f"Figure {i}" for i in range(1, 6)}
    # a claim holds or it does not, unless the data cannot test it: Figure 1's fit to more pairs
    # than Tables 1 and 2 print
    assert set(claims["status"]) <= {EQUAL, DIFFERS, sc.NOT_CHECKABLE}
    assert set(claims.loc[claims["status"] == sc.NOT_CHECKABLE, "table"]) == {"Figure 1"}


def test_both_counts_and_the_readings(card):
    printed = R.counts(card).set_index("table")
    reread = R.counts(card, reinterpreted=True).set_index("table")
    for total in (R.TABLES, R.FIGURES):  # a reading replaces a row, never adds one
        assert printed.loc[total, "total"] == reread.loc[total, "total"]
    # on the printed grid Table 8's estimates differ; read with data axes to 1e14 they reproduce
    assert printed.loc["Table 8", DIFFERS] > 0 and reread.loc["Table 8", DIFFERS] == 0
    assert reread.loc[R.TABLES, "reproduced"] > printed.loc[R.TABLES, "reproduced"]
    # the scorecard's summary cites the tables' row: one value on every page
    s = sc.summary(card)
    assert s["printed_share"] == pytest.approx(printed.loc[R.TABLES, "reproduced"])
    assert s["reinterpreted_share"] == pytest.approx(reread.loc[R.TABLES, "reproduced"])
    readings = set(card.loc[card["reading"] != R.AS_PRINTED, "reading"])
    assert readings == {"D' = 4e12", "D, D' to 1e14"}
    # each reinterpreted number also appears as printed
    other = card[card["reading"] != R.AS_PRINTED].set_index(["table", "item"]).index
    assert other.isin(card[card["reading"] == R.AS_PRINTED].set_index(["table", "item"]).index).all()


def test_interval_end_does_not_reproduce_when_its_estimate_differs(card):
    t3 = card[(card["table"] == "Table 3") & (card["reading"] == R.AS_PRINTED)].set_index("item")
    for p in ("A", "C"):
        assert t3.loc[f"{p} estimate", "status"] == DIFFERS
        assert t3.loc[f"{p} ci_lower", "status"] == DIFFERS
    assert "coincidence" in t3.loc["A ci_lower", "reason"]
    assert not R.interval_rule(card).any()  # the rule is applied: nothing left for it to change


def test_every_difference_has_a_reason_and_a_chapter(card):
    d = card[card["status"] == DIFFERS]
    assert len(d) > 0
    assert (d["reason"].str.len() > 20).all(), d[d["reason"].str.len() <= 20][["table", "item"]]
    assert d["reason_chapter"].isin(["acceptance", "optimal_draft", "latency", "scaling"]).all()


def test_a_changed_number_differs_with_its_reason_and_chapter(root):
    t4 = pd.read_csv(root / "acceptance" / "table4.csv")
    before = sc.scorecard(root)
    first = data.load("paper_table4").iloc[0]
    t4.loc[(t4["target"] == first["target"]) & (t4["function"] == first["function"]), "p1"] *= 1.5
    t4.to_csv(root / "acceptance" / "table4.csv", index=False)
    after = sc.scorecard(root)
    changed = after["status"] != before["status"]
    assert changed.sum() >= 1
    # the estimate, its interval ends (interval rule) and Figure 3's claim, built on Table 4's estimates
    assert set(after.loc[changed, "table"]) == {"Table 4", "Figure 3"}
    assert (after.loc[changed, "status"] == DIFFERS).all()
    assert (after.loc[changed, "reason"] != "").all()
    assert after.loc[changed, "item"].str.endswith(" p1").any()


def test_missing_chapter_artifacts_fail_loudly(root):
    (root / "latency" / "table6.csv").unlink()
    with pytest.raises(MissingArtifactsError, match=r"latency/table6\.csv.*sdsl\.build\.pipeline run latency"):
        sc.scorecard(root)


def test_missing_column_is_named(root):
    pd.read_csv(root / "optimal_draft" / "table5_as_printed.csv").drop(columns=["n_star"]).to_csv(
        root / "optimal_draft" / "table5_as_printed.csv", index=False
    )
    with pytest.raises(ValueError, match=r"table5_as_printed\.csv: the scorecard needs column\(s\) \['n_star'"):
        sc.scorecard(root)

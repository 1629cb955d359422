"""The reproduction scorecard, on artifacts built from the paper's own values (fast, no notebook)."""

from __future__ import annotations

import pandas as pd
import pytest

from sdsl import data
from sdsl.chapters import scorecard as sc
from sdsl.book.outputs import save_table


def _paper_artifacts(root):
    """An artifacts tree whose 'ours' are the paper's printed values: everything must be equal."""
    p3 = data.load("paper_table3")
    met = data.load("paper_metrics")
    rows = [{"parameter": r.parameter, "quantity": q, "paper": getattr(r, q), "refit": getattr(r, q)}
            for r in p3.itertuples() for q in ("estimate", "std_error", "moe", "ci_lower", "ci_upper")]
    rows += [{"parameter": "model", "quantity": m, "paper": v, "refit": v}
             for m, v in met.loc[met["table"] == 3, ["metric", "value"]].itertuples(index=False)]
    save_table(pd.DataFrame(rows), "acceptance", "table3", root / "acceptance")
    save_table(data.load("paper_table4"), "acceptance", "table4", root / "acceptance")
    save_table(data.load("paper_table5"), "optimal_draft", "table5", root / "optimal_draft")
    t6 = data.load("paper_table6").merge(data.load("latency").drop(columns=["draft_family"]), on="draft")
    t6["n_star"] = [sc.parse_millions(t)[0] for t in t6["n_star_printed"]]
    save_table(t6, "latency", "table6", root / "latency")
    save_table(data.load("paper_table8"), "scaling", "table8", root / "scaling")
    save_table(data.load("paper_table9"), "scaling", "table9", root / "scaling")
    save_table(met[met["table"] != 3].rename(columns={"value": "ours"}), "scaling", "fit_metrics", root / "scaling")
    return root


def test_classify_boundaries():
    assert sc.classify(0.5994, 0.599, 5e-4, 0.01) == sc.EQUAL
    assert sc.classify(0.6040, 0.599, 5e-4, 0.01) == sc.WITHIN
    assert sc.classify(0.6060, 0.599, 5e-4, 0.01) == sc.DIFFERS
    assert sc.classify(float("nan"), 0.599, 5e-4, 0.01) == sc.DIFFERS


def test_parse_millions():
    assert sc.parse_millions("117M") == (117e6, 0.5e6)
    assert sc.parse_millions("1.5M") == (1.5e6, 0.05e6)
    with pytest.raises(ValueError, match="printed in millions"):
        sc.parse_millions("117")


def test_paper_values_score_equal_and_claims_are_computed(tmp_path):
    card = sc.scorecard(_paper_artifacts(tmp_path))
    numeric = card[card["table"] != "Claims"]
    assert set(numeric["table"]) == {"Table 3", "Table 4", "Table 5", "Table 6", "Table 8", "Table 9"}
    # every printed number of the data files is scored: 15 + 2, 6 x 10, 6 x 2, 6 x 2, 4 x 4 + 2, 2 x 4 + 2
    assert numeric.groupby("table").size().to_dict() == {
        "Table 3": 17, "Table 4": 60, "Table 5": 12, "Table 6": 12, "Table 8": 18, "Table 9": 10}
    assert (numeric["status"] == sc.EQUAL).all(), numeric[numeric["status"] != sc.EQUAL]
    assert (numeric["reason"] == "").all()
    # the claims are tested on the paper's own latencies: OPT drafts do not rise at every step
    claims = card[card["table"] == "Claims"].set_index(card.loc[card["table"] == "Claims", "item"].str.split(":").str[0])
    assert claims.loc["latency_rises_with_distance", "ours"] == pytest.approx(0.5)
    assert claims.loc["latency_rises_with_distance", "status"] == sc.DIFFERS
    assert "OPT TTFT" in claims.loc["latency_rises_with_distance", "reason"]
    assert claims.loc["latency_rises_with_distance", "reason_chapter"] == "latency"
    counts = sc.summary(card).set_index("table")
    assert counts.loc["All", "total"] == len(card)
    assert counts.loc["All", sc.EQUAL] == len(numeric)


def test_a_changed_number_differs_with_its_reason_and_chapter(tmp_path):
    root = _paper_artifacts(tmp_path)
    t8 = pd.read_csv(root / "scaling" / "table8.csv")
    t8.loc[t8["parameter"] == "g", "estimate"] *= 1.5
    t8.to_csv(root / "scaling" / "table8.csv", index=False)
    card = sc.scorecard(root)
    row = card[(card["table"] == "Table 8") & (card["item"] == "g estimate")].iloc[0]
    assert row["status"] == sc.DIFFERS
    assert row["rel_deviation"] == pytest.approx(0.5)
    assert row["reason_chapter"] == "scaling" and "[1e12, 1e14]" in row["reason"]
    md = sc.to_markdown(card)
    assert "{doc}`scaling`" in md and "+50.00%" in md


def test_missing_chapter_artifacts_fail_loudly(tmp_path):
    root = _paper_artifacts(tmp_path)
    (root / "latency" / "table6.csv").unlink()
    with pytest.raises(sc.MissingArtifactsError, match=r"latency/table6\.csv.*sdsl\.build\.pipeline run latency"):
        sc.scorecard(root)


def test_missing_column_is_named(tmp_path):
    root = _paper_artifacts(tmp_path)
    pd.read_csv(root / "optimal_draft" / "table5.csv").drop(columns=["n_star"]).to_csv(
        root / "optimal_draft" / "table5.csv", index=False)
    with pytest.raises(ValueError, match=r"table5\.csv: the scorecard needs column\(s\) \['n_star'\]"):
        sc.scorecard(root)

"""The landing page's headline, read from the committed baseline artifacts: each number it states
is the artifact's, recomputed here with pandas alone."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sdsl.book.landing import headline_markdown

BASELINE = Path(__file__).resolve().parents[3] / "baseline"


def test_the_headline_states_table5_under_the_reading_and_as_printed():
    text = headline_markdown(BASELINE)
    read = pd.read_csv(BASELINE / "optimal_draft" / "table5.csv")
    printed = pd.read_csv(BASELINE / "optimal_draft" / "table5_as_printed.csv")
    assert f"within {100 * read['n_star_rel_dev'].abs().max():.1e} % of the printed value" in text
    assert f"with every input as printed: {100 * printed['n_star_rel_dev'].abs().max():.3f} %" in text
    changed = read[read["d_target"] != printed["d_target"]]
    assert set(changed["target"]) == {"Qwen1.5-14B"}
    assert "the Qwen1.5-14B target's $D'$ read as 4e+12 where the table prints 3e+12" in text


def test_the_headline_states_the_laptop_scale_test_with_its_intervals_and_verdict():
    text = headline_markdown(BASELINE)
    p = pd.read_csv(BASELINE / "laptop_scale" / "prediction.csv").sort_values("params", ascending=False)
    big = p.iloc[0]
    assert f"$N^*$ = {big['n_star_predicted'] / 1e3:,.1f} k parameters" in text
    assert f"measured optimum is {big['n_star_empirical'] / 1e3:,.1f} k" in text
    assert f"is met for {int(p['passed'].sum())} of {len(p)} targets" in text
    # every run of the design is counted: the first one's miss is stated with the pass
    runs = pd.read_csv(BASELINE / "laptop_scale" / "runs_of_the_design.csv")
    first = runs.iloc[0]
    assert len(runs) == 2 and "passed in the second of two runs of the design" in text
    assert (
        f"the first missed by {first['measured_over_predicted_min']:.0f}-{first['measured_over_predicted_max']:.0f}x"
        in text
    )
    assert "of the throughput per FLOP" in text
    # the baselines the prediction does not beat on a majority of the targets are named
    b = pd.read_csv(BASELINE / "laptop_scale" / "baselines.csv")
    lost = b.pivot(index="target", columns="rule", values="lost")
    unbeaten = [r for r in lost.columns if r != "sdsl" and 2 * int((lost["sdsl"] < lost[r]).sum()) <= len(lost)]
    assert unbeaten and "so this pass does not single out the paper's laws" in text
    assert "the best calibration draft" in text
    wall = pd.read_csv(BASELINE / "laptop_scale" / "wallclock.csv")
    assert f"for {int((wall['speedup_low'] > 1).sum())} of {len(wall)} test pairs" in text

"""Chapter latency: Table 6 against the paper's printed digits, Figure 4's plotted data against the
table, the rank-correlation analysis, and the notebook through papermill."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdsl import data
from sdsl.chapters import latency


@pytest.fixture(scope="module")
def t6():
    return latency.table6()


def test_table6_distance_equals_every_printed_digit(t6):
    paper = data.load("paper_table6")
    tol = data.printed_tolerance("paper_table6").set_index("draft")["distance"]
    assert len(t6) == len(paper) == 6
    mine = t6.set_index("draft")
    for r in paper.itertuples():
        assert abs(mine.loc[r.draft, "distance"] - r.distance) <= tol[r.draft], r.draft
    assert t6["distance_within_print"].all()


def test_table6_n_star_printed_and_per_family(t6):
    assert (t6["n_star_printed"] == t6["paper_n_star_printed"]).all()
    # one optimum per family, as in the paper
    assert t6.groupby("draft_family")["n_star"].nunique().eq(1).all()
    models = data.load("models").set_index("model")
    m = models.loc["OPT-13B", "params"]
    assert np.allclose(t6["distance"], (t6["n"] - t6["n_star"]).abs() / m, rtol=1e-14)


def test_table6_carries_the_measured_latencies(t6):
    lat = data.load("latency").set_index("draft")
    for k in latency.METRICS:
        for s in ("_s", "_moe_s"):
            assert np.array_equal(
                t6.set_index("draft")[f"{k}{s}"].to_numpy(), lat.loc[t6["draft"], f"{k}{s}"].to_numpy()
            )


def test_table6_rejects_an_unmeasured_target():
    with pytest.raises(ValueError, match="no latency measurements"):
        latency.table6("OPT-30B")
    with pytest.raises(ValueError, match="target"):
        latency.table6("GPT-9")


def test_format_millions():
    assert latency.format_millions(117313807.4) == "117M"
    assert latency.format_millions(109_500_001) == "110M"


def test_figure4_plots_the_table(t6):
    fig = latency.figure4(t6)
    assert len(fig.axes) == 3
    for ax, k in zip(fig.axes, latency.METRICS):
        assert ax.get_yscale() == "log"
        lines = {ln.get_gid(): ln for ln in ax.lines if ln.get_gid()}
        assert lines["optimum"].get_xdata()[0] == 0 and lines["optimum"].get_linestyle() == "--"
        for fam, d in t6.groupby("draft_family"):
            ln = lines[f"errorbar|{k}|{fam}"]
            assert np.array_equal(ln.get_xdata(), d["distance"].to_numpy())
            assert np.array_equal(ln.get_ydata(), d[f"{k}_s"].to_numpy())
        # error bars: each vertical segment spans mean -/+ the 95 % margin
        segs = [s for c in ax.collections for s in c.get_segments()]
        spans = sorted((round(float(s[0][0]), 12), round(float(s[0][1]), 12), round(float(s[1][1]), 12)) for s in segs)
        want = sorted(
            (
                round(float(r.distance), 12),
                round(float(getattr(r, f"{k}_s") - getattr(r, f"{k}_moe_s")), 12),
                round(float(getattr(r, f"{k}_s") + getattr(r, f"{k}_moe_s")), 12),
            )
            for r in t6.itertuples()
        )
        assert spans == want


@pytest.fixture(scope="module")
def rc(t6):
    return latency.rank_correlations(t6, np.random.default_rng(7), n_boot=500, n_noise=500)


def test_rank_correlations_statistics(rc, t6):
    r = rc.set_index(["scope", "metric"])
    assert r.loc[("OPT drafts", "ttot"), "n"] == 4
    # OPT TTOT: one swapped pair (350M above 1.3B) out of six -> rho = 0.8, tau = 4/6
    assert r.loc[("OPT drafts", "ttot"), "spearman"] == pytest.approx(0.8)
    assert r.loc[("OPT drafts", "ttot"), "kendall"] == pytest.approx(4 / 6)
    # exact permutation p-value: rho >= 0.8 for 4 of the 24 orders
    assert r.loc[("OPT drafts", "ttot"), "spearman_p"] == pytest.approx(4 / 24)
    assert r.loc[("OPT drafts", "ttot"), "kendall_p"] == pytest.approx(4 / 24)
    assert r.loc[("OPT drafts", "ttft"), "spearman"] == pytest.approx(-0.8)
    # two drafts: any correlation is +-1 and the exact p-value is 1/2
    q = r.loc[("Qwen1.5 drafts", "ttot")]
    assert abs(q["spearman"]) == pytest.approx(1.0) and q["spearman_p"] == pytest.approx(0.5) and q["min_p"] == 0.5
    assert r.loc[("all drafts", "ttot"), "min_p"] == pytest.approx(1 / math.factorial(6))
    for lo, hi in (("boot_lo", "boot_hi"), ("noise_lo", "noise_hi")):
        assert (rc[lo] <= rc[hi]).all() and (rc[lo] >= -1 - 1e-12).all() and (rc[hi] <= 1 + 1e-12).all()
    assert ((rc["noise_p_positive"] >= 0) & (rc["noise_p_positive"] <= 1)).all()


def test_rank_correlations_are_reproducible_with_the_same_rng(t6):
    a = latency.rank_correlations(t6, np.random.default_rng(3), n_boot=200, n_noise=200)
    b = latency.rank_correlations(t6, np.random.default_rng(3), n_boot=200, n_noise=200)
    pd.testing.assert_frame_equal(a, b)


def test_spearman_rows_matches_scipy():
    from scipy import stats

    from sdsl.chapters.latency import spearman_rows

    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6))
    y = rng.normal(size=(50, 6))
    y[:, 2] = y[:, 1]  # ties
    ours = spearman_rows(x, y)
    ref = [stats.spearmanr(a, b).statistic for a, b in zip(x, y)]
    assert np.allclose(ours, ref, rtol=1e-12)


def test_stratified_trend_test_enumerates_within_family_permutations(t6):
    st = latency.stratified_trend_test(t6).set_index("metric")
    assert (st["permutations"] == 24 * 2).all() and (st["pairs"] == 6 + 1).all()
    # TTOT: OPT S = 5 - 1 = 4, Qwen1.5 S = +1
    assert st.loc["ttot", "s"] == 5
    # brute-force check of the p-value: S >= 5 needs OPT S >= 4 (4 of 24 orders) and Qwen S = +1,
    # or OPT S = 6 (1 of 24) with Qwen S = -1  ->  (4 * 1 + 1 * 1) / 48
    assert st.loc["ttot", "p"] == pytest.approx(5 / 48)

"""sdsl.chapters.acceptance: the Eq. 5 plane (Table 3) and the per-target fits (Table 4) against the paper's
printed digits, recovery of known coefficients from seeded simulated data, and input errors."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from sdsl import data  # noqa: E402
from sdsl.chapters import acceptance as fits  # noqa: E402
from sdsl.model.alpha_fits import FORMS, fit_per_target, fit_plane, fit_power_loglog, fit_targets, implied_residual_df  # noqa: E402
from sdsl.model.laws import AcceptanceCoefficients  # noqa: E402

PRINTED_TARGETS = ("Qwen1.5-14B", "Qwen1.5-32B")


@pytest.fixture(scope="module")
def acc() -> pd.DataFrame:
    return data.load("acceptance")


@pytest.fixture(scope="module")
def ours4(acc) -> pd.DataFrame:
    return fits.table4(acc)


@pytest.fixture(scope="module")
def cmp4(ours4) -> pd.DataFrame:
    return fits.table4_vs_paper(ours4, data.load("paper_table4"), data.printed_tolerance("paper_table4"))


# --- Table 4: every printed cell, to every printed digit -------------------------------------


def test_table4_covers_every_printed_cell(cmp4):
    paper = data.load("paper_table4")
    # 2 targets x 3 forms x 10 quantities
    assert len(cmp4) == len(paper) * len(fits.TABLE4_QUANTITIES) == 60
    assert set(cmp4["target"]) == set(PRINTED_TARGETS)
    assert set(cmp4["function"]) == set(FORMS)


@pytest.mark.parametrize("target", PRINTED_TARGETS)
@pytest.mark.parametrize("form", FORMS)
def test_table4_reproduces_printed_digits(cmp4, target, form):
    """Estimates, MoE, CI bounds, MSE and R^2 of all three forms equal the printed digits
    (|ours - paper| <= half a unit in the last printed digit). Every cell reproduces, including
    the power law (nonlinear least squares, covariance s^2 (J'J)^-1 at the optimum)."""
    rows = cmp4[(cmp4["target"] == target) & (cmp4["function"] == form)]
    assert len(rows) == len(fits.TABLE4_QUANTITIES)
    bad = rows[~rows["equal_to_printed"]]
    assert bad.empty, bad.to_string()
    assert np.all(np.abs(rows["difference"]) <= rows["tolerance"] * (1 + 1e-9))


def test_power_law_is_nls_not_loglog(acc):
    """Method notes s.7: NLS gives the printed 1.382782 / -0.247168 for Qwen1.5-14B; a log-log
    OLS gives 1.3848 / -0.2477, which is off by far more than the printed precision."""
    paper = data.load("paper_table4").set_index(["target", "function"]).loc[("Qwen1.5-14B", "power")]
    nls = fit_per_target(acc, "Qwen1.5-14B", "power")
    assert nls.p1 == pytest.approx(paper["p1"], abs=5e-7)
    assert nls.p2 == pytest.approx(paper["p2"], abs=5e-7)
    assert nls.r2 == pytest.approx(paper["r2"], abs=5e-7)
    p1, p2 = fit_power_loglog(acc, "Qwen1.5-14B")
    assert p1 == pytest.approx(1.3848, abs=5e-5)
    assert p2 == pytest.approx(-0.2477, abs=5e-5)
    assert abs(p1 - paper["p1"]) > 1e-3 and abs(p2 - paper["p2"]) > 4e-4


def test_power_covariance_is_the_analytic_one(acc):
    """The power-law SEs are sqrt(diag(SSR/(n-2) (J'J)^-1)) at the optimum, and the optimum is a
    stationary point of SSR (gradient J' r ~ 0)."""
    f = fit_per_target(acc, "Qwen1.5-14B", "power")
    sub = acc[acc["target"] == "Qwen1.5-14B"]
    x, y = sub["draft_ppl"].to_numpy(), sub["alpha"].to_numpy()
    xp = x**f.p2
    J = np.column_stack([xp, f.p1 * xp * np.log(x)])
    r = y - f.p1 * xp
    assert np.max(np.abs(J.T @ r)) < 1e-9
    cov = (r @ r) / (len(x) - 2) * np.linalg.inv(J.T @ J)
    np.testing.assert_allclose([f.se1, f.se2], np.sqrt(np.diag(cov)), rtol=1e-10)


def test_mse_convention_is_ssr_over_n(acc):
    """Table 4's MSE is SSR / n: SSR / (n - 2) would not match the printed 0.000113."""
    f = fit_per_target(acc, "Qwen1.5-14B", "linear")
    assert f.mse == pytest.approx(0.000113, abs=5e-7)
    assert f.mse * f.n / (f.n - 2) == pytest.approx(0.000141, abs=5e-6)


def test_table4_has_all_five_targets(acc, ours4):
    assert list(ours4["target"].unique()) == list(dict.fromkeys(acc["target"]))
    assert len(ours4) == 3 * acc["target"].nunique()
    assert (ours4["ci1_lower"] < ours4["p1"]).all() and (ours4["p1"] < ours4["ci1_upper"]).all()
    assert ours4["r2"].between(0, 1).all()


# --- Table 3: the refit on the 50 pairs ------------------------------------------------------


def test_table3_refit_on_50_pairs(acc):
    """Method notes s.5: a refit on the seed's 50 pairs gives about A = -0.00575, B = 0.00798,
    C = 0.6965, R^2 = 0.41 (not the paper's Table 3, fitted on 130 pairs)."""
    fit = fit_plane(acc)
    assert fit.n == 50 and fit.df_resid == 47
    assert fit.estimate["A"] == pytest.approx(-0.00575, abs=5e-6)
    assert fit.estimate["B"] == pytest.approx(0.00798, abs=5e-6)
    assert fit.estimate["C"] == pytest.approx(0.6965, abs=5e-5)
    assert fit.r2 == pytest.approx(0.41, abs=0.01)
    # the moe is t(0.975, 47) * SE and the CI is estimate -/+ moe
    np.testing.assert_allclose(fit.moe / fit.std_error, 2.0117405137, rtol=1e-9)
    np.testing.assert_allclose(fit.ci_upper - fit.ci_lower, 2 * fit.moe, rtol=1e-12)
    assert fit.mse == pytest.approx(
        float(np.mean((acc["alpha"] - fit.predict(acc["draft_ppl"], acc["target_ppl"])) ** 2))
    )


def test_table3_side_by_side(acc):
    fit = fit_plane(acc)
    t3 = fits.table3(fit, data.load("paper_table3"), data.load("paper_metrics"))
    paper = t3.set_index(["parameter", "quantity"])["paper"]
    assert paper[("A", "estimate")] == -0.0067
    assert paper[("model", "r2")] == 0.602296 and paper[("model", "mse")] == 0.001284
    refit = t3.set_index(["parameter", "quantity"])["refit"]
    assert refit[("B", "estimate")] == pytest.approx(fit.estimate["B"])
    assert refit[("model", "n")] == 50
    np.testing.assert_allclose(t3["difference"].dropna(), (t3["refit"] - t3["paper"]).dropna())


def test_paper_table3_implies_130_observations():
    """The printed MoE/SE of C (the most precise row) is t(0.975, nu) for nu = 127 only:
    13 targets x 10 drafts = 130 pairs, 3 coefficients."""
    paper = data.load("paper_table3")
    tol = data.printed_tolerance("paper_table3")
    implied = implied_residual_df(paper.assign(std_error_tol=tol["std_error"], moe_tol=tol["moe"]))
    c = implied.set_index("parameter").loc["C"]
    assert (c["df_min"], c["df_max"]) == (127, 127)
    assert (implied["df_min"] <= 127).all() and (implied["df_max"] >= 127).all()


def test_paper_sample_counts_the_pairs_and_targets_behind_table3():
    """n = nu + 3 from the tightest row, the drafts of Tables 1 and 2 (10), and n / drafts targets;
    a table of the implied nu given by hand moves every count with it."""
    s = fits.paper_sample()
    assert (s["dof"], s["n"], s["drafts"], s["targets"]) == (127, 130, 10, 13.0)
    hand = pd.DataFrame({"parameter": ["A", "C"], "df_min": [90, 117], "df_max": [400, 117], "ratio": [1.98, 1.9805]})
    pairs = pd.DataFrame({"target": ["t"] * 4, "draft": ["d1", "d2", "d3", "d4"]})
    assert fits.paper_sample(hand, pairs) == {"dof": 117, "ratio": 1.9805, "n": 120, "drafts": 4, "targets": 30.0}


# --- recovery from seeded simulated data -----------------------------------------------------


def test_plane_recovers_known_coefficients():
    rng = np.random.default_rng(20260225)
    true = {"A": -0.006, "B": 0.011, "C": 0.65}
    x = rng.uniform(12, 30, 400)
    y = rng.uniform(9, 16, 400)
    alpha = true["A"] * x + true["B"] * y + true["C"] + rng.normal(0, 0.01, 400)
    fit = fit_plane(pd.DataFrame({"draft_ppl": x, "target_ppl": y, "alpha": alpha}))
    for k, v in true.items():
        assert fit.ci_lower[k] <= v <= fit.ci_upper[k], (k, v, fit.ci_lower[k], fit.ci_upper[k])
        assert fit.estimate[k] == pytest.approx(v, abs=4 * fit.std_error[k])
    assert fit.mse == pytest.approx(1e-4, rel=0.2)
    assert isinstance(fit.coefficients, AcceptanceCoefficients)


def test_plane_ci_coverage_is_about_95_percent():
    """Across 200 seeded replications the 95 % CI of B covers the truth 95 % of the time
    (binomial sd ~1.5 %, so [0.89, 0.99] fails by chance with probability < 1e-4)."""
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(200):
        x = rng.uniform(12, 30, 30)
        y = rng.uniform(9, 16, 30)
        a = -0.006 * x + 0.011 * y + 0.65 + rng.normal(0, 0.02, 30)
        f = fit_plane(pd.DataFrame({"draft_ppl": x, "target_ppl": y, "alpha": a}))
        hits += f.ci_lower["B"] <= 0.011 <= f.ci_upper["B"]
    assert 0.89 <= hits / 200 <= 0.99


def _per_target_frame(x, alpha, target="T"):
    return pd.DataFrame({"target": target, "draft_ppl": x, "alpha": alpha})


def test_power_law_nls_recovers_known_power_law():
    rng = np.random.default_rng(42)
    x = np.linspace(10, 35, 25)
    alpha = 1.3 * x**-0.23 + rng.normal(0, 0.003, x.size)
    f = fit_per_target(_per_target_frame(x, alpha), "T", "power")
    assert f.ci1[0] <= 1.3 <= f.ci1[1]
    assert f.ci2[0] <= -0.23 <= f.ci2[1]
    assert f.p1 == pytest.approx(1.3, rel=0.05) and f.p2 == pytest.approx(-0.23, abs=0.02)
    exact = fit_per_target(_per_target_frame(x, 1.3 * x**-0.23), "T", "power")
    assert exact.p1 == pytest.approx(1.3, rel=1e-8) and exact.p2 == pytest.approx(-0.23, rel=1e-8)
    assert exact.r2 == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "form,fn,p",
    [
        ("linear", lambda x: -0.008 * x + 0.83, (-0.008, 0.83)),
        ("logarithmic", lambda x: -0.16 * np.log(x) + 1.15, (-0.16, 1.15)),
    ],
)
def test_ols_forms_recover_known_curves(form, fn, p):
    rng = np.random.default_rng(3)
    x = np.linspace(10, 35, 30)
    f = fit_per_target(_per_target_frame(x, fn(x) + rng.normal(0, 0.004, x.size)), "T", form)
    assert f.ci1[0] <= p[0] <= f.ci1[1] and f.ci2[0] <= p[1] <= f.ci2[1]
    np.testing.assert_allclose(f.predict(x), fn(x), atol=0.005)


# --- tables 1 and 2 --------------------------------------------------------------------------


def test_tables_1_and_2_layout(acc):
    t1, t2 = fits.table1(acc), fits.table2(acc)
    assert list(t1.columns) == ["target", "target_ppl", "OPT-125M", "OPT-350M", "OPT-1.3B", "OPT-2.7B"]
    assert len(t2.columns) == 2 + 6
    assert t1.iloc[0]["target"] == "Perplexity" and t1.iloc[0]["OPT-125M"] == "29.79318619"
    row = t1.set_index("target").loc["OPT-13B"]
    assert row["target_ppl"] == 15.58453751 and row["OPT-125M"] == "0.5959 ± 0.0018"
    assert t2.set_index("target").loc["Qwen1.5-14B", "Qwen2.5-0.5B"] == "0.6898 ± 0.0011"
    assert len(t1) == len(t2) == 1 + acc["target"].nunique()


def test_user_rows_without_source_table(acc):
    mine = acc.head(12).assign(source_table=pd.NA, alpha_hw95=np.nan)
    assert not fits.has_table(mine, 1)
    with pytest.raises(ValueError, match="source_table == 1"):
        fits.table1(mine)
    m = fits.acceptance_matrix(mine)
    assert m.iloc[1, 2] == f"{mine['alpha'].iloc[0]:g}"


# --- figures ---------------------------------------------------------------------------------


def test_figures_build_without_titles(acc):
    plane = fit_plane(acc)
    f1 = fits.figure1(acc, plane)
    f1b = fits.figure1(acc, plane.coefficients)
    f3 = fits.figure3(acc, fit_targets(acc))
    try:
        ax = f1.axes[0]
        assert (round(ax.elev, 6), round(ax.azim, 6)) == (22.0, -128.0)
        assert all(not a.get_title() for f in (f1, f3) for a in f.axes)
        # one visible panel per target, with 3 curves each
        panels = [a for a in f3.axes if a.axison]
        assert len(panels) == acc["target"].nunique()
        assert all(len(a.get_lines()) >= 3 for a in panels)
    finally:
        for f in (f1, f1b, f3):
            plt.close(f)


# --- errors ----------------------------------------------------------------------------------


def test_errors_for_bad_input(acc):
    with pytest.raises(ValueError, match="form must be one of"):
        fit_per_target(acc, "OPT-13B", "cubic")
    with pytest.raises(ValueError, match="has no rows"):
        fit_per_target(acc, "GPT-5", "linear")
    with pytest.raises(ValueError, match="at least 3"):
        fit_per_target(acc[acc["target"] == "OPT-13B"].head(2), "OPT-13B", "power")
    with pytest.raises(ValueError, match="at least 4"):
        fit_plane(acc.head(3))
    with pytest.raises(ValueError, match="rank-deficient"):
        fit_plane(acc[acc["target"] == "OPT-13B"])
    with pytest.raises(ValueError, match="missing column"):
        fit_plane(acc.drop(columns="alpha"))
    with pytest.raises(ValueError, match="must be > 0"):
        fit_plane(acc.assign(draft_ppl=-acc["draft_ppl"]))
    with pytest.raises(ValueError, match="no rows"):
        fit_plane(acc.iloc[0:0])
    with pytest.raises(ValueError, match="PlaneFit"):
        fits.table3("not a fit", data.load("paper_table3"))
    with pytest.raises(ValueError, match="CurveFit"):
        fits.figure3(acc, [])
    with pytest.raises(ValueError, match="form must be one of"):
        fit_targets(acc, forms=["quadratic"])
    with pytest.raises(ValueError, match="missing Table 4 column"):
        fits.table4_vs_paper(
            pd.DataFrame({"target": []}), data.load("paper_table4"), data.printed_tolerance("paper_table4")
        )

"""Tests of sdsl.plan and of the plan_draft notebook (issue 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sdsl
from sdsl import data
from sdsl import plan as P

LLAMA_70B = 70553706496


# --------------------------------------------------------------------------------- presets


def test_presets_load_and_cover_the_required_models():
    df = data.load("presets")
    required = {
        "llama-3-8b",
        "llama-3-70b",
        "qwen2.5-7b",
        "qwen2.5-14b",
        "qwen2.5-32b",
        "qwen2.5-72b",
        "qwen1.5-72b",
        "qwen1.5-110b",
        "opt-30b",
        "opt-66b",
    }
    assert required <= set(df["preset"])
    assert (df[["params_source", "tokens_source", "draft_tokens_source"]] != "").all().all()
    assert data.provenance("presets")["sha256"] == data.sha256(data.data_path("presets"))


def test_presets_agree_with_models_table_and_brief():
    """Where a model is in data/models.csv, the preset has the same M and D', or the D' the book
    reads where the paper prints another (one value per model in every chapter: the rule of
    sdsl.audit.rules.D_TARGET_4E12); model-card numbers of the brief within their printed precision."""
    from sdsl.audit.rules import D_TARGET_4E12

    pre = data.load("presets").set_index("model")
    models = data.load("models").set_index("model")
    common = pre.index.intersection(models.index)
    assert len(common) >= 8
    read = dict(D_TARGET_4E12.default)
    assert read and set(read) <= set(common)
    for name in common:
        assert pre.loc[name, "params"] == models.loc[name, "params"], name
        assert pre.loc[name, "tokens"] == read.get(name, models.loc[name, "tokens"]), name
    card = {
        "Llama-3-8B": (8.03e9, 15e12),
        "Llama-3-70B": (70.6e9, 15e12),
        "Qwen2.5-7B": (7.62e9, 18e12),
        "Qwen2.5-14B": (14.7e9, 18e12),
        "Qwen2.5-32B": (32.5e9, 18e12),
        "Qwen2.5-72B": (72.7e9, 18e12),
        "OPT-30B": (30e9, 180e9),
        "OPT-66B": (66e9, 180e9),
    }
    for name, (m, d) in card.items():
        assert abs(pre.loc[name, "params"] / m - 1) < 0.01, name  # cards print 3 significant digits
        assert pre.loc[name, "tokens"] == d, name


def test_get_preset_case_insensitive_and_by_model_name():
    a = P.get_preset("LLAMA-3-70B")
    b = P.get_preset("Llama-3-70B")
    assert a == b and a.params == LLAMA_70B and a.tokens == 15e12 and a.draft_tokens == 15e12


def test_unknown_preset_suggests_closest():
    with pytest.raises(ValueError, match=r"unknown preset 'lama-3-70b'; did you mean 'llama-3-70b'"):
        P.get_preset("lama-3-70b")


# --------------------------------------------------------------------------------- planning


def test_plan_reproduces_paper_table5():
    """N* within 1e-3 relative of the printed Table 5 (method notes s.6: four significant figures),
    T(N*) within 0.2 % (method notes: about 0.1 %)."""
    t5 = data.load("paper_table5")
    for _, r in t5.iterrows():
        inp = P.check_inputs(target_params=r["m"], target_tokens=r["d_target"], draft_tokens=r["d_draft"])
        o = P.plan(inp)
        assert o.n_star == pytest.approx(r["n_star"], rel=1e-3)
        assert o.tokens_per_flop == pytest.approx(r["tokens_per_flop"], rel=2e-3)


def test_preset_plan_equals_core():
    inp = P.check_inputs("llama-3-70b")
    o = P.plan(inp)
    core = sdsl.optimal_draft_size(LLAMA_70B, 15e12, 15e12, n_bounds=(1e7, LLAMA_70B / 2))
    assert o.n_star == pytest.approx(core.n_star, rel=1e-9)
    assert o.speedup == pytest.approx(o.tokens_per_flop * 2 * LLAMA_70B)
    # brute force over a fine grid of N
    n = np.exp(np.linspace(np.log(1e8), np.log(1e9), 20001))
    t = sdsl.throughput_curve(n, LLAMA_70B, 15e12, 15e12)["tokens_per_flop"]
    assert o.n_star == pytest.approx(n[np.argmax(t)], rel=2e-4)


def test_several_draft_tokens_give_one_row_each_and_more_data_smaller_draft():
    inp = P.check_inputs("qwen1.5-14b", draft_tokens=[180e9, 2.4e12, 18e12])
    tab = P.plan_table(inp)
    assert list(tab["d_draft"]) == [180e9, 2.4e12, 18e12]
    assert tab["n_star"].is_monotonic_decreasing


def test_candidate_share_is_ratio_of_throughputs():
    inp = P.check_inputs("llama-3-70b", candidates={"1B": 1e9, "opt": None or 2.8e8})
    o = P.plan(inp)
    c = P.candidate_shares(inp, 15e12, o).set_index("candidate")
    t1 = sdsl.throughput_curve(np.array([1e9]), LLAMA_70B, 15e12, 15e12)["tokens_per_flop"][0]
    assert c.loc["1B", "share_of_optimum"] == pytest.approx(t1 / o.tokens_per_flop, rel=1e-12)
    assert 0 < c.loc["1B", "share_of_optimum"] < 1
    assert c.loc["opt", "share_of_optimum"] == pytest.approx(1, abs=1e-3)  # 2.8e8 is next to N*


def test_integer_gamma_returns_integer():
    o = P.plan(P.check_inputs("opt-13b", integer_gamma=True))
    assert o.gamma_star == int(o.gamma_star)


# --------------------------------------------------------------------------------- alpha sources


def test_paper_alpha_uses_table3_standard_errors_as_diagonal():
    m = P.resolve_alpha_source("paper")
    t3 = data.load("paper_table3").set_index("parameter")
    assert np.allclose(np.sqrt(np.diag(m.cov)), t3.loc[["A", "B", "C"], "std_error"])
    assert np.count_nonzero(m.cov - np.diag(np.diag(m.cov))) == 0
    assert "covariance" in m.note and "diagonal" in m.note


def test_refit_matches_method_notes():
    m = P.resolve_alpha_source("refit")
    c = m.coefficients
    # method notes s.5: about A = -0.00575, B = 0.00798, C = 0.6965, R^2 = 0.41
    assert c.A == pytest.approx(-0.00575, abs=5e-6)
    assert c.B == pytest.approx(0.00798, abs=5e-6)
    assert c.C == pytest.approx(0.6965, abs=5e-5)
    assert m.r2 == pytest.approx(0.41, abs=0.005)
    assert m.n_obs == 50 and m.cov.shape == (3, 3) and np.all(np.linalg.eigvalsh(m.cov) > 0)


def test_measurements_file_recovers_known_plane(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(10, 30, 40)
    y = rng.uniform(8, 16, 40)
    alpha = -0.006 * x + 0.01 * y + 0.7 + rng.normal(0, 0.002, 40)
    f = tmp_path / "mine.csv"
    pd.DataFrame({"pair": range(40), "draft_ppl": x, "target_ppl": y, "alpha": alpha}).to_csv(f, index=False)
    m = P.resolve_alpha_source(str(f))
    ci = 1.96 * np.sqrt(np.diag(m.cov))
    assert abs(m.coefficients.A + 0.006) < ci[0]
    assert abs(m.coefficients.B - 0.01) < ci[1]
    assert abs(m.coefficients.C - 0.7) < ci[2]
    # and the acceptance table of the paper itself is a valid measurements file
    acc = tmp_path / "acc.csv"
    data.load("acceptance").to_csv(acc, index=False)
    refit = P.resolve_alpha_source(acc)
    assert refit.coefficients.A == pytest.approx(P.resolve_alpha_source("refit").coefficients.A, rel=1e-10)


# --------------------------------------------------------------------------------- bootstrap


def test_bootstrap_matches_core_per_draw():
    inp = P.check_inputs("llama-3-70b")
    draws = P.bootstrap_n_star(inp, n_boot=4, rng=np.random.default_rng(5))
    cf = inp.alpha.coefficients
    coef = np.random.default_rng(5).multivariate_normal([cf.A, cf.B, cf.C], inp.alpha.cov, size=4, method="eigh")
    for c, d in zip(coef, draws):
        core = sdsl.optimal_draft_size(
            LLAMA_70B, 15e12, 15e12, coefficients=sdsl.AcceptanceCoefficients(*c), n_bounds=inp.n_range
        )
        assert d == pytest.approx(core.n_star, rel=1e-6)


def test_bootstrap_interval_covers_n_star_and_is_reproducible():
    inp = P.check_inputs("llama-3-70b", n_boot=300, seed=11)
    o = P.plan(inp)
    a = P.n_star_interval(P.bootstrap_n_star(inp))
    b = P.n_star_interval(P.bootstrap_n_star(inp))
    c = P.n_star_interval(P.bootstrap_n_star(inp, rng=np.random.default_rng(12)))
    assert a == b
    assert a != c
    assert a["low"] < o.n_star < a["high"]
    assert a["dropped"] == 0 and a["draws"] == 300


def test_bootstrap_without_uncertainty_collapses_to_n_star():
    inp = P.check_inputs("opt-13b")
    zero = P.AlphaModel(inp.alpha.coefficients, np.zeros((3, 3)), "exact")
    inp0 = P.PlanInputs(**{**inp.__dict__, "alpha": zero})
    draws = P.bootstrap_n_star(inp0, n_boot=3, rng=np.random.default_rng(0))
    assert np.allclose(draws, P.plan(inp0).n_star, rtol=1e-6)


# --------------------------------------------------------------------------------- bad input


BAD_INPUTS = [
    (dict(preset="lama-3-70b"), r"unknown preset 'lama-3-70b'; did you mean 'llama-3-70b'"),
    (
        dict(preset=None, target_params=-5, target_tokens=1e12, draft_tokens=1e12),
        r"target_params must be a number > 0 \(parameters M of the target\), got -5",
    ),
    (
        dict(preset=None, target_params="abc", target_tokens=1e12, draft_tokens=1e12),
        r"target_params must be a number > 0 .*got 'abc'",
    ),
    (dict(preset=None, target_params=7e10, target_tokens=0, draft_tokens=1e12), r"target_tokens must be a number > 0"),
    (dict(preset=None, target_params=7e10, target_tokens=1e12), r"draft_tokens .* is required"),
    (dict(preset="llama-3-70b", draft_tokens=[]), r"draft_tokens .* is empty"),
    (dict(preset="llama-3-70b", n_range=(1e9, 1e8)), r"n_range must be two increasing numbers \[low, high\]"),
    (dict(preset="llama-3-70b", n_range=(1e8, 1e12)), r"n_range high = 1e\+12 exceeds the target size"),
    (dict(preset="llama-3-70b", n_range=(1e8,)), r"n_range must be two increasing numbers"),
    (dict(preset="llama-3-70b", constants=[1, -2, 3, 0.3, 0.3]), r"loss-law constant A must be > 0"),
    (dict(preset="llama-3-70b", constants=[-1, 2, 3, 0.3, 0.3]), r"loss-law constant E .* must be >= 0"),
    (dict(preset="llama-3-70b", constants="1,2,3"), r"five numbers .* got 3 values"),
    (dict(preset="llama-3-70b", constants="chinchilla"), r"unknown loss-law constant set 'chinchilla'"),
    (
        dict(preset="opt-13b", n_range=(1e5, 1e9)),
        r"the acceptance rate leaves \(0, 1\) at draft size n = 100000 inside n_range",
    ),
    (dict(preset="llama-3-70b", alpha_source="magic"), r"alpha_source must be 'paper', 'refit', 'published' or"),
    (dict(preset="llama-3-70b", alpha_source="/no/such/file.csv"), r"measurements file .* does not exist"),
    (dict(preset="llama-3-70b", n_boot=-1), r"n_boot must be 0 \(none\) or an integer in \[100, 10000\]"),
    (dict(preset="llama-3-70b", n_boot=200, seed=None), r"seed is required"),
    (dict(preset="llama-3-70b", candidates={"x": 0}), r"candidates 'x' must be a number > 0"),
    (
        dict(preset="llama-3-70b", candidates={"big": 1e12}),
        r"candidates 'big' = 1e\+12 is not smaller than the target size",
    ),
]


@pytest.mark.parametrize("kwargs, message", BAD_INPUTS)
def test_bad_input_raises_one_line_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message) as err:
        P.check_inputs(**kwargs)
    assert "\n" not in str(err.value)


MALFORMED = {
    "missing_column": ("draft_ppl,alpha\n20,0.6\n", r"missing column\(s\) \['target_ppl'\]"),
    "non_numeric": (
        "draft_ppl,target_ppl,alpha\n20,10,0.6\nabc,10,0.6\n21,11,0.6\n22,12,0.7\n",
        r"line 3, column 'draft_ppl': non-numeric value 'abc'",
    ),
    "alpha_out_of_range": (
        "draft_ppl,target_ppl,alpha\n20,10,1.2\n21,11,0.6\n22,12,0.7\n23,10,0.6\n",
        r"line 2, column 'alpha': value 1.2 is out of range",
    ),
    "too_few_rows": ("draft_ppl,target_ppl,alpha\n20,10,0.6\n21,11,0.6\n", r"needs at least 4 measurements"),
    "one_target": (
        "draft_ppl,target_ppl,alpha\n20,10,0.6\n21,10,0.6\n22,10,0.7\n23,10,0.7\n",
        r"every row has the same target_ppl",
    ),
    "empty": ("", r"the file is empty"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_measurements_file(tmp_path, case):
    text, message = MALFORMED[case]
    f = tmp_path / f"{case}.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=message) as err:
        P.check_inputs("llama-3-70b", alpha_source=str(f))
    assert "\n" not in str(err.value)


def test_optimum_with_range_up_to_m_is_finite():
    """Regression: the core's default search range reaches M; for M = 70.6e9 the last grid point has
    M/N = 1 + 1e-16, where gamma* once came out NaN (lambertw at its branch point -1/e)."""
    assert np.isfinite(sdsl.optimal_gamma(0.7, 70.6e9 * (1 - 1e-16), 70.6e9))
    o = sdsl.optimal_draft_size(70.6e9, 15e12, 15e12)
    assert np.isfinite(o.n_star)
    mine = P.plan(P.check_inputs(target_params=70.6e9, target_tokens=15e12, draft_tokens=15e12, n_range=(1e7, 70.6e9)))
    assert mine.n_star == pytest.approx(o.n_star, rel=1e-9)


# --------------------------------------------------------------------------------- notebook


def test_covariance_sensitivity_uses_full_and_diagonal_refit_covariance():
    inp = P.check_inputs("opt-13b")
    sens = P.covariance_sensitivity(inp, n_boot=200, seed=2)
    assert list(sens["covariance"]) == ["full covariance", "diagonal only"]
    assert sens["n_star"].nunique() == 1
    assert ((sens["n_star_ci_low"] < sens["n_star"]) & (sens["n_star"] < sens["n_star_ci_high"])).all()
    again = P.covariance_sensitivity(inp, n_boot=200, seed=2)
    pd.testing.assert_frame_equal(sens, again)

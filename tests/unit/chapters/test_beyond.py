"""Tests of sdsl.chapters.beyond: competing acceptance laws, held-out validation, N* propagation and
elasticities (chapter "beyond")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import sdsl
from sdsl import data
from sdsl.chapters import beyond as lc
from sdsl.model import law_variants, optimum
from sdsl.model.alpha_laws import LAWS, Law, fit_laws, law_data
from sdsl.model.configurations import ACCEPTANCE_TARGETS, configurations
from sdsl.model.crossval import bootstrap_rmse, compare_laws, cross_validate, cv_predictions
from sdsl.model.law_variants import (
    elasticities,
    log_elasticity,
    n_star_spread,
    n_star_variants,
    ratio_rule_range,
    table4_check,
)
from sdsl.model.optimum import law_optimal_draft_size, law_optimal_draft_sizes


@pytest.fixture(scope="module")
def real() -> pd.DataFrame:
    return law_data()


@pytest.fixture(scope="module")
def fitted(real):
    return fit_laws(real)


def _law(name: str) -> Law:
    return {law.name: law for law in LAWS}[name]


def _simulate(real: pd.DataFrame, rng: np.random.Generator, b: float = 0.025, sigma: float = 0.004):
    """alpha = a_target + b ln N + noise on the real design (5 targets x 10 drafts)."""
    levels = {t: a for t, a in zip(sorted(real["target"].unique()), (0.12, 0.19, 0.23, 0.15, 0.13))}
    mean = real["target"].map(levels).to_numpy() + b * real["ln_n"].to_numpy()
    return real.assign(alpha=mean + rng.normal(0.0, sigma, len(real))), levels


# ------------------------------------------------------------------------------------------ data


def test_law_data_attaches_sizes(real):
    assert len(real) == 50
    row = real[(real["target"] == "OPT-13B") & (real["draft"] == "OPT-125M")].iloc[0]
    assert row["n"] == 125_239_296 and row["d"] == 180e9 and row["m"] == 12_853_473_280
    assert row["ln_n"] == pytest.approx(np.log(125_239_296), rel=1e-15)


def test_law_data_names_missing_model(real):
    acc = data.load("acceptance")
    models = data.load("models")
    with pytest.raises(ValueError, match="OPT-125M"):
        law_data(acc, models[models["model"] != "OPT-125M"])


# -------------------------------------------------------------------------------------- the laws


def test_per_target_fits_reproduce_table4(fitted, real):
    """Our Table-4 forms equal every printed digit of the paper (half a unit in the last digit)."""
    paper = data.load("paper_table4")
    tol = data.printed_tolerance("paper_table4")
    chk = table4_check(fitted, real, paper)
    assert len(chk) == 60  # 6 fits x 10 printed quantities (estimates, margins, intervals, MSE, R^2)
    for _, r in chk.iterrows():
        i = paper.index[(paper["target"] == r["target"]) & (paper["function"] == r["function"])][0]
        t = tol.loc[i, r["quantity"]]
        assert abs(r["deviation"]) <= t * (1 + 1e-9), r.to_dict()


def test_laws_match_statsmodels_formula_api(fitted, real):
    """Our design matrices and evaluator give the estimates, standard errors and predictions of
    statsmodels' formula API (patsy) for every OLS law."""
    import statsmodels.formula.api as smf

    for name, fl in fitted.items():
        if fl.law.kind != "ols":
            continue
        ours = fl.predict(real)
        for key, piece in fl.pieces.items():
            rows = real if key == "pooled" else real[real["target"] == key]
            ref = smf.ols(fl.law.formula, data=rows).fit()
            np.testing.assert_allclose(piece.result.params.to_numpy(), ref.params.to_numpy(), rtol=1e-10, atol=1e-14)
            assert list(piece.result.params.index) == list(ref.params.index)
            np.testing.assert_allclose(piece.result.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-9)
            np.testing.assert_allclose(
                ours[rows.index.to_numpy()], ref.predict(rows).to_numpy(), atol=1e-13, err_msg=name
            )


def test_factor_law_has_no_level_for_unseen_target(fitted, real):
    fl = fitted["loglin_n_pooled"]
    new = real[real["target"] == "OPT-13B"].assign(target="Llama-3-70B")
    with pytest.raises(ValueError, match="no level for target 'Llama-3-70B'"):
        fl.predict(new)
    with pytest.raises(ValueError, match="no fit for target"):
        fitted["log_x"].predict(new)


def test_recovery_of_loglinear_law_coverage(real):
    """Seeded simulation of alpha = a_t + b ln N + noise: the pooled log-linear fit's 95 % CI for
    b (and for one target level) covers the truth in about 95 % of 200 data sets, and the mean
    estimate is unbiased."""
    rng = np.random.default_rng(20260225)
    law = _law("loglin_n_pooled")
    hits_b, hits_a, est = 0, 0, []
    for _ in range(200):
        sim, levels = _simulate(real, rng)
        t = law.fit(sim).parameters().set_index("parameter")
        hits_b += t.loc["ln_n", "ci_lower"] <= 0.025 <= t.loc["ln_n", "ci_upper"]
        a0 = levels[sorted(levels)[0]]  # reference level = Intercept
        hits_a += t.loc["Intercept", "ci_lower"] <= a0 <= t.loc["Intercept", "ci_upper"]
        est.append(t.loc["ln_n", "estimate"])
    assert 0.91 <= hits_b / 200 <= 0.985
    assert 0.91 <= hits_a / 200 <= 0.985
    assert np.mean(est) == pytest.approx(0.025, abs=3e-4)


def test_power_law_recovered_by_nonlinear_least_squares(real):
    rng = np.random.default_rng(7)
    sim = real.assign(alpha=1.3 * real["x"] ** -0.23 + rng.normal(0, 1e-4, len(real)))
    t = _law("power_x").fit(sim).parameters()
    for _, r in t.iterrows():
        truth = 1.3 if r["parameter"] == "p1" else -0.23
        assert r["ci_lower"] <= truth <= r["ci_upper"]
        assert r["estimate"] == pytest.approx(truth, rel=2e-2)


# -------------------------------------------------------------------------------- cross-validation


@dataclass
class _Memoriser:
    """Predicts a row's alpha if that (target, draft) row was in its training frame, else NaN;
    fitted means of the training rows are kept to check which rows it saw."""

    name: str = "memoriser"
    cross_target: bool = True
    refitted: bool = True

    def fit(self, frame):
        self.seen = dict(zip(zip(frame["target"], frame["draft"]), frame["alpha"]))
        self.train_mean = float(frame["alpha"].mean())
        return self

    def predict(self, frame):
        return np.array([self.seen.get(k, np.nan) for k in zip(frame["target"], frame["draft"])])


@pytest.mark.parametrize("scheme,folds,size", [("draft", 10, 5), ("target", 5, 10)])
def test_cv_never_uses_the_held_out_row(real, scheme, folds, size):
    res = cross_validate(_Memoriser(), real, scheme)
    assert res["predicted"].isna().all()  # a memoriser that saw a held-out row would return it
    assert len(res) == len(real) and not res.duplicated(["target", "draft"]).any()
    assert res["fold"].nunique() == folds and (res.groupby("fold").size() == size).all()
    assert (res[scheme] == res["fold"]).all()


@dataclass
class _TrainMean:
    name: str = "train_mean"
    cross_target: bool = True

    def fit(self, frame):
        self.mean = float(frame["alpha"].mean())
        return self

    def predict(self, frame):
        return np.full(len(frame), self.mean)


def test_cv_fits_on_exactly_the_other_rows(real):
    res = cross_validate(_TrainMean(), real, "draft")
    for draft, g in res.groupby("draft"):
        expected = real.loc[real["draft"] != draft, "alpha"].mean()
        np.testing.assert_allclose(g["predicted"], expected, rtol=1e-14)
    np.testing.assert_allclose(res["error"], res["predicted"] - res["alpha"])


def test_loto_refuses_laws_without_cross_target_structure(real):
    for name in ("linear_x", "loglin_n", "loglin_n_pooled", "target_mean"):
        with pytest.raises(ValueError, match="cannot predict a held-out target"):
            cross_validate(_law(name), real, "target")
    with pytest.raises(ValueError, match="scheme"):
        cross_validate(_law("plane"), real, "row")


def test_cv_prefers_the_true_law(real):
    """On data simulated from the pooled log-linear law, leave-one-draft-out ranks it first
    among itself, the per-target linear law in perplexity, the pooled linear law in perplexity
    and the per-target mean."""
    sim, _ = _simulate(real, np.random.default_rng(11))
    laws = [_law(n) for n in ("loglin_n_pooled", "linear_x", "linear_x_pooled", "target_mean")]
    pred = cv_predictions(sim, laws)
    tab = compare_laws(pred, sim, np.random.default_rng(0), laws, n_resamples=500)
    lodo = tab[tab["scheme"] == "leave one draft out"].set_index("law")
    assert lodo["rmse"].idxmin() == "loglin_n_pooled"
    assert lodo.loc["loglin_n_pooled", "rank"] == 1
    # the true law's held-out RMSE is close to the noise level 0.004
    assert 0.003 < lodo.loc["loglin_n_pooled", "rmse"] < 0.0055
    # and the wrong laws are worse by a margin whose paired interval excludes zero
    assert (lodo.drop("loglin_n_pooled")["diff_ci_lower"] > 0).all()


def test_bootstrap_rmse():
    e = np.random.default_rng(1).normal(0, 0.01, 60)
    rmse, lo, hi = bootstrap_rmse(e, np.random.default_rng(2), 1000)
    assert rmse == pytest.approx(np.sqrt(np.mean(e**2)), rel=1e-15)
    assert lo < rmse < hi
    assert bootstrap_rmse(e, np.random.default_rng(2), 1000) == (rmse, lo, hi)  # reproducible
    d, dlo, dhi = bootstrap_rmse(e, np.random.default_rng(3), 500, baseline=e)
    assert d == 0 and dlo == 0 and dhi == 0
    with pytest.raises(ValueError, match="level"):
        bootstrap_rmse(e, np.random.default_rng(2), level=1.5)


# -------------------------------------------------------------------------------- propagation


def test_plane_propagation_matches_optimal_draft_size(fitted):
    """The generic search over log N reproduces sdsl.optimal_draft_size for the paper's plane
    (Table 5's Qwen1.5-14B / OPT configuration), continuous and integer gamma."""
    for integer in (False, True):
        ours = law_optimal_draft_size(
            fitted["plane_paper"], "Qwen1.5-14B", 14_167_290_880, 180e9, 3e12, sdsl.BESIROGLU_2024, integer
        )
        ref = sdsl.optimal_draft_size(14_167_290_880, 180e9, 3e12, integer=integer)
        assert ours.status == "interior"
        assert ours.n_star == pytest.approx(ref.n_star, rel=1e-5)
        assert ours.tokens_per_flop == pytest.approx(ref.tokens_per_flop, rel=1e-9)


def test_table5_within_paper_precision(fitted):
    paper = data.load("paper_table5")
    for _, r in paper.iterrows():
        o = law_optimal_draft_size(fitted["plane_paper"], r["target"], r["m"], r["d_draft"], r["d_target"])
        assert o.n_star == pytest.approx(r["n_star"], rel=1e-3)


def test_no_interior_optimum_is_reported_not_returned(fitted):
    o = law_optimal_draft_size(fitted["target_mean"], "OPT-13B", 12_853_473_280, 180e9, 180e9)
    assert np.isnan(o.n_star) and o.status.startswith("no interior optimum") and "lower end" in o.status
    high = Law(
        "high",
        "alpha > 1",
        "fixed",
        cross_target=True,
        refitted=False,
        coefficients=sdsl.AcceptanceCoefficients(0.0, 0.0, 1.2),
    ).fit(pd.DataFrame({"a": [1]}))
    o = law_optimal_draft_size(high, "x", 1e10, 1e12, 1e12)
    assert np.isnan(o.n_star) and o.status == "no interior optimum: alpha lies outside (0, 1) on the whole search range"


def test_loglinear_law_that_reaches_one_is_flagged():
    """alpha = 0.3 + 0.1 ln(N / 1e6) passes 1 at N ~ 1.1e9 < M: the maximum sits where alpha
    reaches 1, which is reported, not returned as N*. (A gentler slope, 0.05, has an interior
    optimum at alpha ~ 0.80.)"""
    sim = pd.DataFrame(
        {
            "target": ["t"] * 3,
            "alpha": [0.3 + 0.1 * np.log(v / 1e6) for v in (1e7, 1e8, 1e9)],
            "ln_n": np.log([1e7, 1e8, 1e9]),
        }
    )
    fl = _law("loglin_n").fit(sim)
    o = law_optimal_draft_size(fl, "t", 1e12, 1e12, 1e12)
    assert np.isnan(o.n_star) and "alpha leaves (0, 1) just above" in o.status
    assert o.alpha_valid_range[1] == pytest.approx(np.exp(0.7 / 0.1) * 1e6, rel=0.04)
    gentle = _law("loglin_n").fit(sim.assign(alpha=0.3 + 0.05 * (sim["ln_n"] - np.log(1e6))))
    g = law_optimal_draft_size(gentle, "t", 1e12, 1e12, 1e12)
    assert g.status == "interior" and 0.7 < g.alpha < 0.9


def test_batched_solver_matches_one_at_a_time_and_brute_force(fitted):
    """law_optimal_draft_sizes (all variants in one array) gives, per configuration, what the
    one-configuration search gives, and the continuous-gamma optima agree with a brute-force
    maximum of T on a dense grid of log N."""
    rng = np.random.default_rng(7)
    cfg = configurations(ACCEPTANCE_TARGETS)
    for name in ("plane_paper", "log_x", "loglin_nd_pooled", "target_mean"):
        fl = fitted[name]
        rows = cfg.iloc[rng.choice(len(cfg), 5, replace=False)]
        consts = [sdsl.BESIROGLU_2024, sdsl.HOFFMANN_2022, sdsl.BESIROGLU_2024, sdsl.HOFFMANN_2022, sdsl.BESIROGLU_2024]
        integ = [False, True, True, False, False]
        batch = law_optimal_draft_sizes(
            fl, rows["target"].tolist(), rows["m"], rows["d_draft"], rows["d_target"], consts, integ
        )
        for (_, r), c, i, b in zip(rows.iterrows(), consts, integ, batch):
            one = law_optimal_draft_size(fl, r["target"], r["m"], r["d_draft"], r["d_target"], c, i)
            assert b.status == one.status
            if one.status != "interior":
                assert np.isnan(b.n_star)
                continue
            assert b.n_star == pytest.approx(one.n_star, rel=1e-12)
            if i:
                continue
            n = np.geomspace(one.n_star / 1.05, one.n_star * 1.05, 200_001)
            a = fl.alpha(optimum._features_at(n, r["m"], r["d_draft"], r["d_target"], c), r["target"])
            t = sdsl.tokens_per_flop(a, n, r["m"], sdsl.optimal_gamma(a, n, r["m"]))
            assert b.n_star == pytest.approx(n[np.argmax(t)], rel=2e-6)  # the dense grid's step is 5e-7
            assert b.tokens_per_flop >= t.max() * (1 - 1e-12)


def test_elasticities_match_scalar_optimiser():
    """The batched elasticities equal central differences of sdsl.optimal_draft_size (xatol
    1e-12) to the optimiser's noise floor: N* at a flat maximum is resolved to ~1e-8 relative,
    so elasticities with h = 1e-3 agree to ~1e-4."""
    m, d, dp = 14_167_290_880, 180e9, 3e12
    el = elasticities(m, d, dp).set_index("parameter")
    for name in ("A", "C", "E", "a"):
        base = el.loc[name, "value"]

        def f(v, name=name):
            co, cs = law_variants._perturbed(sdsl.PAPER_EQ5, sdsl.BESIROGLU_2024, name, v)
            return sdsl.optimal_draft_size(m, d, dp, constants=cs, coefficients=co)

        assert el.loc[name, "elasticity_n_star"] == pytest.approx(log_elasticity(lambda v: f(v).n_star, base), abs=1e-4)
        assert el.loc[name, "elasticity_t"] == pytest.approx(
            log_elasticity(lambda v: f(v).tokens_per_flop, base), abs=1e-9
        )


def test_variants_and_spread(fitted):
    cfg = configurations(targets=["OPT-13B"], families=["OPT"])
    v = n_star_variants({k: fitted[k] for k in ("plane_paper", "loglin_n", "target_mean")}, cfg)
    assert len(v) == 3 * 2 * 2
    sp = n_star_spread(v)
    assert sp.loc[0, "interior"] == 8 and sp.loc[0, "variants"] == 12
    assert sp.loc[0, "n_star_min"] <= sp.loc[0, "n_star_median"] <= sp.loc[0, "n_star_max"]
    # the log-linear law in ln N does not depend on the loss-law constants
    ll = v[(v["law"] == "loglin_n") & (v["gamma"] == "continuous")]["n_star"].to_numpy()
    assert ll[0] == pytest.approx(ll[1], rel=1e-12)


def test_ratio_rule_range():
    sweep = pd.DataFrame(
        {
            "law": "l",
            "draft_family": "f",
            "constants": "c",
            "gamma": "continuous",
            "m": [1e9, 1e10, 1e11, 1e12],
            "ratio": [40.0, 160.0, 290.0, 700.0],
            "status": "interior",
        }
    )
    r = ratio_rule_range(sweep).iloc[0]
    assert r["band_m_low"] == 1e10 and r["band_m_high"] == 1e11
    assert r["ratio_at_m_min"] == 40.0 and r["ratio_at_m_max"] == 700.0


# -------------------------------------------------------------------------------- elasticities


def test_log_elasticity_of_power_and_exponential():
    assert log_elasticity(lambda t: 3.0 * t**2.5, 1.7) == pytest.approx(2.5, abs=1e-12)
    # d ln exp(theta) / d ln theta = theta (second-order error h^2 theta^3 / 6)
    assert log_elasticity(np.exp, 0.8, h=1e-4) == pytest.approx(0.8, abs=1e-8)
    # the sign of theta is kept: f(theta) = theta**2 around a negative theta
    assert log_elasticity(lambda t: t**2, -0.5) == pytest.approx(2.0, abs=1e-12)
    with pytest.raises(ValueError, match="non-zero"):
        log_elasticity(np.exp, 0.0)


def test_elasticity_of_throughput_matches_envelope_theorem():
    """At the optimum, dT*/dtheta = dT/dtheta at fixed (N*, gamma*) (envelope theorem). For the
    Eq. 5 coefficients T depends on them only through alpha, so
    d ln T*/d ln theta = theta * (d alpha/d theta) * d ln E/d alpha, with
    dE/d alpha = (1 - (g+1) alpha^g + g alpha^(g+1)) / (1 - alpha)^2."""
    m, d, dp = 14_167_290_880, 180e9, 3e12
    el = elasticities(m, d, dp, h=1e-4).set_index("parameter")
    o = sdsl.optimal_draft_size(m, d, dp)
    a, g = o.alpha, o.gamma_star
    e = (1 - a ** (g + 1)) / (1 - a)
    de = (1 - (g + 1) * a**g + g * a ** (g + 1)) / (1 - a) ** 2
    x = float(sdsl.perplexity(o.n_star, d))
    y = float(sdsl.perplexity(m, dp))
    c = sdsl.PAPER_EQ5
    for name, dalpha in (("A", c.A * x), ("B", c.B * y), ("C", c.C)):
        assert el.loc[name, "elasticity_t"] == pytest.approx(dalpha * de / e, rel=2e-4), name


def test_elasticity_of_n_star_is_step_independent():
    m, d, dp = 12_853_473_280, 180e9, 180e9
    coarse = elasticities(m, d, dp, h=2e-3).set_index("parameter")
    fine = elasticities(m, d, dp, h=5e-4).set_index("parameter")
    np.testing.assert_allclose(coarse["elasticity_n_star"], fine["elasticity_n_star"], rtol=2e-3, atol=1e-5)
    assert set(coarse.index) == {"A", "B", "C", "E", "A_loss", "B_loss", "a", "b"}


def test_elasticity_summary_ranks_the_plane_slope_among_all_constants():
    """The rank of A by |elasticity of N*| and the constants before it, on a table made by hand
    (the ranking the chapter's summary states in words)."""
    values = {"a": -7.5, "E": 1.3, "A_loss": 1.2, "b": -1.1, "A": 0.7, "B_loss": 0.2, "C": -0.1, "B": 0.01}
    elast = pd.DataFrame(
        {
            "target": "Qwen1.5-14B",
            "draft_family": "OPT",
            "parameter": list(values),
            "elasticity_n_star": list(values.values()),
            "elasticity_t": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.6, 0.0],
        }
    )
    s = lc._elasticity_summary(elast, data.load("paper_table3"))
    assert (s["el_rank_A"], s["el_n_parameters"]) == (5, 8)
    assert s["el_before_A"] == "a (-7.50), E (1.30), A_loss (1.20) and b (-1.10)"
    assert s["el_ttop"] == "C"
    first = elast.assign(elasticity_n_star=np.where(elast["parameter"] == "A", -9.0, elast["elasticity_n_star"]))
    assert lc._elasticity_summary(first, data.load("paper_table3"))["el_before_A"] == "none"


# -------------------------------------------------------------------------------- the notebook

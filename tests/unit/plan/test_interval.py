"""sdsl.plan.interval: the N* interval over acceptance laws, loss-law constants and the plane's
coefficients, against a fresh fit, brute force and hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdsl import data
from sdsl import plan as P
from sdsl.model.laws import BESIROGLU_2024, HOFFMANN_2022, perplexity
from sdsl.model.optimum import brute_force, log_grid
from sdsl.plan import interval as I


@pytest.fixture(scope="module")
def llama():
    return P.check_inputs("llama-3-70b")


@pytest.fixture(scope="module")
def llama_report(llama):
    return I.n_star_intervals(llama, P.plan(llama).n_star)


# ------------------------------------------------------------------- the committed laws


def test_committed_laws_equal_a_fresh_statsmodels_fit():
    """data/acceptance_laws.csv is what tools/fit_acceptance_laws.py writes from a fresh fit. rtol
    1e-10: both are the same float64 OLS (statsmodels on the centred, scaled design of
    sdsl.model.fitting); another BLAS kernel may move the last bits, nothing more."""
    fresh = I.fit_law_rows()
    committed = data.records("acceptance_laws")
    assert [(r["law"], r["parameter"]) for r in committed] == [(r["law"], r["parameter"]) for r in fresh]
    for c, f in zip(committed, fresh):
        assert c["label"] == f["label"] and c["formula"] == f["formula"] and c["nobs"] == f["nobs"] == 50
        for k in ("estimate", "std_error", "r2"):
            assert c[k] == pytest.approx(f[k], rel=1e-10, abs=1e-15), (c["law"], c["parameter"], k)


def test_committed_laws_are_every_refitted_cross_target_law_of_the_registry():
    from sdsl.model.alpha_laws import LAWS

    want = [law.name for law in LAWS if law.cross_target and law.refitted]
    assert [law.name for law in I.committed_laws()] == want == ["plane", "loglin_n_y", "loglin_nd_y"]


def test_committed_file_records_the_data_it_was_fitted_on():
    meta = data.schema("acceptance_laws").meta
    assert meta["fitted_on"] == {n: data.sha256(data.data_path(n)) for n in ("acceptance", "models")}
    assert meta["sha256"] == data.sha256(data.data_path("acceptance_laws"))


def test_committed_law_evaluates_as_the_fitted_law():
    """CommittedLaw (numpy only) predicts what sdsl.model.alpha_laws' FittedLaw predicts, on the 50
    pairs (1e-12 absolute: the same sum of products in another order)."""
    from sdsl.model.alpha_laws import LAWS, fit_laws, law_data

    frame = law_data()
    fitted = fit_laws(frame, [law for law in LAWS if law.cross_target and law.refitted])
    feats = {c: frame[c].to_numpy(float) for c in ("x", "y", "ln_n", "ln_d")}
    for law in I.committed_laws():
        assert np.max(np.abs(law.alpha(feats) - fitted[law.name].predict(frame))) < 1e-12, law.name


def test_fitted_ranges_are_those_of_the_fifty_pairs():
    r = I.fitted_ranges()
    assert r["x"] == pytest.approx((12.5883894, 29.79318619)) and r["y"] == pytest.approx((10.41608143, 15.58453751))
    assert r["ln_n"] == (125239296.0, 3950369280.0) and r["ln_d"] == (180e9, 18e12)


def test_unknown_parameter_is_refused():
    with pytest.raises(ValueError, match="unknown parameter"):
        I.CommittedLaw("bad", "bad", (("Intercept", 0.5), ("z", 1.0)))


# ------------------------------------------------------------------- N* of every variant


def _brute(law: I.CommittedLaw, inputs, c) -> float:
    m, d, dt = inputs.target.params, inputs.draft_tokens[0], inputs.target.tokens

    def alpha(n, rows):
        x = perplexity(n, d, c)
        y = perplexity(m, dt, c)
        return law.alpha(
            {"x": x, "y": np.broadcast_to(y, np.shape(n)), "ln_n": np.log(n), "ln_d": np.full(np.shape(n), math.log(d))}
        )

    grid = log_grid([inputs.n_range[0]], [inputs.n_range[1]], 200_001)
    return float(brute_force(alpha, [m], grid)["n_star"][0])


def test_every_variant_is_the_brute_force_maximum(llama):
    """Each (law, constants) N* against the argmax of T on a 200,001-point log grid over the plan's
    range: the grid's spacing is 4.6e-5 in ln N, and T is flat at its maximum, so 1e-4 relative."""
    laws = [I.plane_law(llama.alpha), *I.committed_laws()]
    variants = I.law_constant_variants(llama, laws, [BESIROGLU_2024, HOFFMANN_2022])
    assert len(variants) == 8 and all(v.status == "interior" for v in variants)
    by = {law.name: law for law in laws}
    for v in variants:
        c = BESIROGLU_2024 if v.constants == "besiroglu2024" else HOFFMANN_2022
        assert v.n_star == pytest.approx(_brute(by[v.law], llama, c), rel=1e-4), (v.law, v.constants)


def test_the_plane_variant_is_the_plan(llama, llama_report):
    """The plane through law_optimal_draft_sizes and the plan through optimal_draft_size: one kernel,
    the same N* (1e-9: each root is located to ~1e-11, sdsl.model.optimum)."""
    opt = P.plan(llama)
    v = next(v for v in llama_report["variants"] if v["law"] == "plan" and v["constants"] == "besiroglu2024")
    assert v["n_star"] == pytest.approx(opt.n_star, rel=1e-9)
    hoff = P.plan(P.check_inputs("llama-3-70b", constants="hoffmann2022"))
    v = next(v for v in llama_report["variants"] if v["law"] == "plan" and v["constants"] == "hoffmann2022")
    assert v["n_star"] == pytest.approx(hoff.n_star, rel=1e-9)


def test_sources_are_the_ranges_of_their_variants(llama_report):
    r = llama_report
    at_c0 = [v["n_star"] for v in r["variants"] if v["constants"] == "besiroglu2024"]
    plane = [v["n_star"] for v in r["variants"] if v["law"] == "plan"]
    assert (r["by_source"]["law"]["low"], r["by_source"]["law"]["high"]) == (min(at_c0), max(at_c0))
    assert (r["by_source"]["constants"]["low"], r["by_source"]["constants"]["high"]) == (min(plane), max(plane))
    # the beyond chapter's factor: the laws move Llama-3-70B's N* by about 2.4
    assert 2.3 < r["by_source"]["law"]["high"] / r["by_source"]["law"]["low"] < 2.5


def test_without_a_bootstrap_the_headline_holds_laws_and_constants(llama_report):
    h = llama_report["headline"]
    assert h["sources"] == ["law", "constants"] and h["left_out"] == ["coefficients"]
    lows = [v["n_star"] for v in llama_report["variants"]]
    assert (h["low"], h["high"]) == (min(lows), max(lows))  # every law under every constant set
    assert not llama_report["by_source"]["coefficients"]["computed"]
    assert any("bootstrap" in e for e in llama_report["excludes"])


# ------------------------------------------------------------------- combination


def _v(law, c, n):
    return I.Variant(law, law, "", c, n, 0.6, 5.0, "interior" if math.isfinite(n) else "no interior optimum", ())


def test_envelope_by_hand():
    vs = [
        _v("plan", "a", 100.0),
        _v("plan", "b", 90.0),
        _v("l1", "a", 200.0),
        _v("l1", "b", 210.0),
        _v("l2", "a", float("nan")),
    ]
    ratios = {"a": (0.8, 1.1), "b": (0.9, 1.2)}
    assert I.envelope(vs) == {"low": 90.0, "high": 210.0, "variants": 4}  # the NaN variant is not used
    assert I.envelope(vs, ratios) == {"low": pytest.approx(80.0), "high": pytest.approx(252.0), "variants": 4}
    assert I.envelope(vs, ratios, laws=["plan"], constants=["a"]) == {
        "low": pytest.approx(80.0),
        "high": pytest.approx(110.0),
        "variants": 1,
    }
    assert I.envelope(vs, laws=["l2"]) is None


def test_bootstrap_source_is_the_plans_bootstrap_and_the_combination_holds_every_source():
    inp = P.check_inputs("opt-13b", n_boot=200, seed=3)
    r = I.n_star_intervals(inp)
    ci = P.n_star_interval(P.bootstrap_n_star(inp))
    co = r["by_source"]["coefficients"]
    assert (co["low"], co["high"], co["draws"], co["seed"]) == (ci["low"], ci["high"], 200, 3)
    h = r["headline"]
    assert h["sources"] == list(I.SOURCES) and h["left_out"] == [] and r["combined"]["sources"] == h["sources"]
    for k in I.SOURCES:
        assert h["low"] <= r["by_source"][k]["low"] and h["high"] >= r["by_source"][k]["high"], k
    # the rule of the module notes, by hand: each variant times its constants' relative quantiles
    rel = {
        c: (lo / p, hi / p)
        for c, (lo, hi) in co["by_constants"].items()
        for p in [next(v["n_star"] for v in r["variants"] if v["law"] == "plan" and v["constants"] == c)]
    }
    lo = min(v["n_star"] * rel[v["constants"]][0] for v in r["variants"])
    hi = max(v["n_star"] * rel[v["constants"]][1] for v in r["variants"])
    assert (h["low"], h["high"]) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))
    only = I.n_star_intervals(inp, headline=["coefficients"])["headline"]
    assert (only["low"], only["high"]) == (pytest.approx(ci["low"], rel=1e-12), pytest.approx(ci["high"], rel=1e-12))


def test_headline_sources_are_checked(llama):
    with pytest.raises(ValueError, match="headline sources must be among law, constants, coefficients, got tables"):
        I.n_star_intervals(llama, headline=["law", "tables"])
    with pytest.raises(ValueError, match="not computed: no bootstrap"):
        I.n_star_intervals(llama, headline=["coefficients"])
    with pytest.raises(ValueError, match=r"level must be a number in \(0, 1\)"):
        I.n_star_intervals(llama, level=1.5)


def test_a_refit_plane_is_not_counted_twice():
    r = I.n_star_intervals(P.check_inputs("llama-3-70b", alpha_source="refit"))
    assert [v["law"] for v in r["by_source"]["law"]["laws"]] == ["plan", "loglin_n_y", "loglin_nd_y"]


def test_extrapolated_covariates_are_named():
    q = I.n_star_intervals(P.check_inputs("qwen3-32b"))
    nd = next(v for v in q["by_source"]["law"]["laws"] if v["law"] == "loglin_nd_y")
    assert any(e.startswith("draft tokens D 3.6e+13 outside 1.8e+11 to 1.8e+13") for e in nd["extrapolated"])
    o = I.n_star_intervals(P.check_inputs("opt-13b"))
    nd = next(v for v in o["by_source"]["law"]["laws"] if v["law"] == "loglin_nd_y")
    assert any(e.startswith("draft size N 9.1e+07 outside 1.25e+08") for e in nd["extrapolated"])
    assert any("target perplexity y 8.36 outside 10.4 to 15.6" in e for e in o["extrapolated"])

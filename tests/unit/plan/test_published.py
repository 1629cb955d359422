"""The published deployments as the plan's inputs (sdsl.plan.published): the mapping of rows checked
by hand, the predictions equal to what `sdsl plan` prints, the extended acceptance law's fit equal
between numpy and statsmodels, a selection that can fail, `--alpha-source published --temperature`
end to end, and the committed error figures equal to a fresh computation."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from sdsl import data
from sdsl.cli import main
from sdsl.model.laws import PAPER_EQ5, perplexity
from sdsl.plan import published as P

ROWS = {d.row_id: d for d in P.deployments()}


def test_every_row_is_a_deployment_in_the_file_order():
    assert [d.row_id for d in P.deployments()] == [r["row_id"] for r in data.records("published_deployments")]


# ------------------------------------------------------------------ rows -> the plan's inputs, by hand


def test_a_tpu_row_without_published_tokens_assumes_twenty_per_parameter_and_says_so():
    d = ROWS["lev-01"]  # Leviathan et al. Table 2: T5-XXL (11B) with T5-small (77M), EnDe, T = 0, gamma 7
    assert (d.m, d.n) == (11e9, 77e6)
    assert d.d_target == 20 * 11e9 and d.d_draft == 20 * 77e6  # neither is published
    assert d.target_tokens_assumed and d.draft_tokens_assumed
    assert len(d.flags) == 2 and all("20 per parameter assumed" in f for f in d.flags)
    assert d.preset is None and d.hardware_class == "tpu"  # a TPU: the FLOP model
    assert (d.gamma, d.batch, d.batch_assumed, d.temperature, d.alpha, d.speedup) == (7, 1, False, 0.0, 0.75, 3.4)
    assert d.cost_ratio == 0.02 and d.target_key == "T5-XXL"
    assert d.target_shape is None and d.draft_shape is None


def test_a_vllm_row_on_an_h100_takes_the_presets_and_the_published_concurrency():
    d = ROWS["ruiz-26"]  # Qwen3-32B with Qwen3-1.7B on one H100, max concurrency 64, gamma 3
    presets = {r["preset"]: r for r in data.records("presets")}
    assert d.m == presets["qwen3-32b"]["params"] and d.d_target == presets["qwen3-32b"]["tokens"] == 36e12
    assert d.n == presets["qwen3-1.7b"]["params"] and d.d_draft == 36e12
    assert not (d.target_tokens_assumed or d.draft_tokens_assumed) and d.flags == ()
    assert d.preset == "h100-sxm" and d.gpus == 1 and d.batch == 64 and d.gamma == 3
    assert d.target_shape["layers"] == presets["qwen3-32b"]["layers"]
    assert d.draft_shape["hidden"] == presets["qwen3-1.7b"]["hidden"]
    assert d.alpha == pytest.approx(0.7120)


def test_an_amd_row_gets_the_flop_model_and_batch_one_flagged():
    d = ROWS["rocm-04"]  # Llama 3.1-405B with 3.1-8B on 4 MI300X, batch not published
    assert d.preset is None and d.gpus == 4 and d.gamma == 5
    assert d.batch == 1 and d.batch_assumed and "batch not published: 1 assumed" in d.flags
    assert d.temperature is None


def test_dynamic_gamma_and_device_counts():
    sb = ROWS["sb-02"]  # Spec-Bench on an A100: transformers' dynamic draft length
    assert sb.preset == "a100-80gb" and sb.gamma is None and sb.gamma_published == "dynamic"
    blog = ROWS["vllmblog-01"]  # Llama-3-70B on 4 x H100
    assert blog.preset == "h100-sxm" and blog.gpus == 4 and blog.target_shape is not None


def test_the_plan_refuses_the_small_gpt_pair_and_the_row_says_why():
    assert "outside the plan's" in P.plan_domain(ROWS["lev-19"])  # 97M target
    assert P.plan_domain(ROWS["lev-01"]) is None
    assert P.plan_domain(ROWS["ruiz-01"]) is None


def test_the_flop_speedup_is_theorem_38_by_hand():
    """c = N/M, v = 1: S = (1 - a^(g+1)) / ((1 - a)(g c + 1))."""
    d = ROWS["lev-01"]
    a, g, c = 0.75, 7, 77e6 / 11e9
    w = P.wall_clock(d, a, "flop", 7)
    assert w["gamma"] == 7 and w["cost_coefficient"] == pytest.approx(c, rel=1e-15)
    assert w["speedup"] == pytest.approx((1 - a ** (g + 1)) / ((1 - a) * (g * c + 1)), rel=1e-12)
    w = P.wall_clock(d, a, "source_c", 7)  # Leviathan's own c = 0.02
    assert w["speedup"] == pytest.approx((1 - a**8) / ((1 - a) * (7 * 0.02 + 1)), rel=1e-12)
    assert P.law_alpha(d) == pytest.approx(
        PAPER_EQ5.A * float(perplexity(77e6, 1.54e9)) + PAPER_EQ5.B * float(perplexity(11e9, 2.2e11)) + PAPER_EQ5.C
    )


# ------------------------------------------------------------------ the same numbers as sdsl plan


def _plan_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _argv(d, hardware: bool):
    argv = ["plan", "--draft-params", repr(d.n), "--json"]
    if d.target_shape is not None:
        argv += ["--preset", next(r["preset"] for r in data.records("presets") if r["params"] == d.m)]
        argv += ["--draft-tokens", repr(d.d_draft)]
    else:
        argv += ["--target-params", repr(d.m), "--target-tokens", repr(d.d_target), "--draft-tokens", repr(d.d_draft)]
    if hardware:
        argv += ["--hardware", d.preset, "--gpus", str(d.gpus), "--batch", str(d.batch)]
    if d.gamma is not None:
        argv += ["--gamma", str(d.gamma)]
    return argv


@pytest.mark.parametrize(
    "row_id, model",
    [("lev-01", "flop"), ("rocm-01", "flop"), ("ruiz-26", "step_time"), ("sb-02", "step_time"), ("hfdyn-03", "flop")],
)
def test_the_prediction_is_what_sdsl_plan_prints(capsys, row_id, model):
    """The chapter's prediction of a row equals the candidate `sdsl plan --draft-params N` prints for the
    row's inputs (alpha, draft length, speedup; rel 1e-12: the same functions). `sdsl plan` scales a
    candidate's architecture from the target's; the chapter uses the draft preset's where the row
    names one (1-3 % apart on the H100 rows), so the comparison drops it."""
    d = replace(ROWS[row_id], draft_shape=None)
    cand = _plan_json(capsys, _argv(d, model == "step_time"))["candidates"][0]
    alpha = P.law_alpha(d)
    w = P.wall_clock(d, alpha, model, d.gamma)
    assert cand["alpha"] == pytest.approx(alpha, rel=1e-12)
    assert cand["gamma"] == w["gamma"]
    assert cand["speedup"] == pytest.approx(w["speedup"], rel=1e-12)


# ------------------------------------------------------------------ the settings with a measured alpha


def test_settings_average_the_repeated_measurements_of_one_setting():
    s = P.alpha_settings()
    assert len(s) == 22  # 18 of Leviathan et al. (the 97M GPT pair is outside the plan) and 4 of vLLM's logs
    assert dict(s.excluded) == {
        r: "target size M = 9.7e+07 outside the plan's [1e+08, 1e+14]" for r in ("lev-19", "lev-20")
    }
    i = next(k for k, rows in enumerate(s.rows) if "ruiz-01" in rows)
    assert s.rows[i] == tuple(f"ruiz-0{k}" for k in range(1, 7))  # MT-Bench, 1.7B, gamma 1..6
    assert s.alpha[i] == pytest.approx(np.mean([ROWS[f"ruiz-0{k}"].alpha for k in range(1, 7)]), rel=1e-15)
    assert set(s.same_family) == {1.0}  # why no form has a same-family term


def _statsmodels_fit(form, s):
    import statsmodels.api as sm

    f = next(f for f in P.FORMS if f.name == form)
    X, offset = P.design(f, s)
    keep = [t == "one" or np.ptp(X[:, j]) > 0 for j, t in enumerate(f.terms)]
    fit = sm.OLS(s.alpha - offset, X[:, keep]).fit()
    out = dict.fromkeys(f.terms, 0.0)
    out.update(zip([t for t, k in zip(f.terms, keep) if k], fit.params))
    return out


@pytest.mark.parametrize("form", [f.name for f in P.FORMS])
@pytest.mark.parametrize("subset", ["all", "one source", "two targets"])
def test_the_numpy_fit_equals_statsmodels(form, subset):
    """The light install's least squares (numpy lstsq) and the chapter's statsmodels OLS give the same
    coefficients, also on a fold where a regressor is constant and is not estimated (1e-10
    absolute: the same float64 least squares by another factorisation)."""
    s = P.alpha_settings()
    if subset == "one source":  # every vLLM setting is greedy and has one target: T and y not estimable
        s = s.subset(np.array([x == "ruiz_vllm2026" for x in s.source_id]))
    elif subset == "two targets":
        s = s.subset(np.array([x != "Qwen/Qwen3-32B" for x in s.target_key]))
    ours, theirs = P.fit_form(form, s), _statsmodels_fit(form, s)
    assert ours.keys() == theirs.keys()
    for k in ours:
        assert ours[k] == pytest.approx(theirs[k], abs=1e-10), k


# ------------------------------------------------------------------ the selection, stated before the result


def test_the_published_law_beats_the_constant_under_both_schemes():
    law = P.published_law()
    assert law.form == P.select_form(law.skill) != "constant"
    for scheme in P.SCHEMES:
        own, base = law.held_out(scheme)
        assert own["mae"] < base["mae"], scheme


def test_the_selection_can_fail():
    """A data set where the temperature's effect flips sign from one target to the next: a term learnt
    on the other targets predicts a held-out target the wrong way, every form loses to the constant,
    and the published law is the constant."""
    s = P.alpha_settings()
    sign = np.where([k == "T5-XXL" for k in s.target_key], 1.0, -1.0)
    mutated = replace(s, alpha=s.alpha + 0.25 * s.temperature * sign)
    skill = P.skill_table(mutated)
    assert not any(r["beats_constant"] for r in skill if r["scheme"] == P.SELECTION_SCHEME and r["form"] != "constant")
    assert P.select_form(skill) == "constant"


def test_a_form_the_plan_cannot_serve_is_not_chosen():
    """A form that needs the draft-tuning flag, which `sdsl plan` does not ask for, is never selected
    even when it is the best."""
    skill = [dict(r) for r in P.published_law().skill]
    for r in skill:
        if r["form"] == "paper_slopes_temperature_tuned":
            r.update(mae=0.0, beats_constant=True)
    assert P.select_form(skill) != "paper_slopes_temperature_tuned"


# ------------------------------------------------------------------ sdsl plan --alpha-source published


def test_alpha_moves_with_the_temperature_as_fitted(capsys):
    law = P.published_law()
    argv = ["plan", "--preset", "llama-3-70b", "--draft-params", "1e9", "--alpha-source", "published", "--json"]
    cold = _plan_json(capsys, [*argv, "--temperature", "0"])
    hot = _plan_json(capsys, [*argv, "--temperature", "1"])
    a0, a1 = cold["candidates"][0]["alpha"], hot["candidates"][0]["alpha"]
    assert a1 - a0 == pytest.approx(law.coefficients["temperature"], rel=1e-9)
    assert law.coefficients["temperature"] < 0  # sampling at T = 1 accepts fewer tokens than greedy decoding
    A, B, C = law.plane(0.0)
    llama = next(r for r in data.records("presets") if r["preset"] == "llama-3-70b")
    x = float(perplexity(1e9, llama["draft_tokens"]))
    y = float(perplexity(llama["params"], llama["tokens"]))
    assert a0 == pytest.approx(A * x + B * y + C, rel=1e-12)
    assert "leave one target out" in cold["published_accuracy"]["alpha"]["line"]
    assert cold["published_accuracy"]["alpha"]["mae"] < cold["published_accuracy"]["alpha"]["constant_mae"]


def test_the_text_output_prints_the_skill_beside_alpha(capsys):
    assert main(["plan", "--preset", "llama-3-70b", "--alpha-source", "published", "--temperature", "0.8"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("alpha at N*"))
    assert lines[at + 1].lstrip().startswith("its typical error") and "out of sample" in lines[at + 1]


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--alpha-source", "published"], ["--temperature", "needs"]),
        (["--temperature", "0"], ["--temperature", "used only with --alpha-source 'published'"]),
        (["--alpha-source", "published", "--temperature", "-1"], ["--temperature", ">= 0"]),
    ],
)
def test_bad_temperature_is_one_line_and_exit_2(capsys, extra, words):
    assert main(["plan", "--preset", "llama-3-70b", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(w in err for w in words), err


# ------------------------------------------------------------------ what sdsl plan prints, and its file


def test_the_committed_error_figures_equal_a_fresh_computation():
    """data/published_accuracy.csv is what tools/published_accuracy.py writes now (rel 1e-12: the same
    float64 computation; counts exactly)."""
    committed, fresh = data.records("published_accuracy"), P.accuracy_rows()
    assert len(committed) == len(fresh)
    for c, f in zip(committed, fresh):
        for k in P.ACCURACY_COLUMNS:
            a, b = c[k], f[k]
            if isinstance(b, float):
                assert a == pytest.approx(b, rel=1e-12), (f, k)
            elif b in (None, ""):
                assert a is None or (isinstance(a, float) and math.isnan(a)) or a == "", (f, k)
            else:
                assert a == b, (f, k)


def test_the_committed_figures_record_the_data_they_were_computed_from():
    meta = data.schema("published_accuracy").meta
    names = ("published_deployments", "presets", "accelerators", "acceptance_laws", "paper_table3")
    assert meta["computed_from"] == {n: data.sha256(data.data_path(n)) for n in names}


def test_typical_error_by_source_and_cost_model():
    from sdsl.model.hardware import get_accelerator

    flop = P.typical_error("paper", "flop")
    row = next(
        r
        for r in data.records("published_accuracy")
        if (r["alpha_from"], r["cost_model"], r["hardware_class"]) == ("paper", "flop", "all")
    )
    assert (flop["speedup"]["n"], flop["speedup"]["within"]) == (row["n"], row["within"])
    assert f"within 20 % in {row['within']} of {row['n']}" in flop["speedup"]["line"]
    gpu = P.typical_error("paper", "hardware", get_accelerator("h100-sxm").times(4))
    assert "datacenter-GPU" in gpu["speedup"]["line"] and gpu["speedup"]["cost_model"] == "step_time"
    assert "not tested" in P.typical_error("paper", "hardware", get_accelerator("cpu-here"))["speedup"]["line"]
    assert "not tested" in P.typical_error("paper", "latencies")["speedup"]["line"]
    assert "not tested" in P.typical_error("measurements", "flop")["alpha"]["line"]


def test_a_constant_published_law_is_refused_with_its_reason(monkeypatch):
    """Where no form beats the constant, 'published' is the median alpha: it does not depend on the
    draft, the plan has no N*, and it says so in one line instead of an optimum at the range's edge."""
    from sdsl import plan as plan_api

    law = P.published_law()
    constant = replace(law, form="constant", coefficients={"one": 0.7, "A": 0.0, "B": 0.0}, terms=("one",))
    monkeypatch.setattr(P, "published_law", lambda: constant)
    with pytest.raises(ValueError) as err:
        plan_api.check_inputs("llama-3-70b", alpha_source="published", temperature=0)
    assert "constant alpha of 0.7000" in str(err.value) and "no N*" in str(err.value)
    assert "\n" not in str(err.value)

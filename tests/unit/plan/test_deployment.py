"""sdsl.plan.deployment: what sdsl plan adds to N* (integer draft length, wall clock, engines, warnings)."""

from __future__ import annotations

import pytest

from sdsl import plan as P
from sdsl.model import deploy as D
from sdsl.model import laws
from sdsl.model import speedup as S
from sdsl.model import throughput as theory
from sdsl.plan import deployment as DP


def _report(preset="llama-3-70b", **wall):
    inp = P.check_inputs(preset)
    opt = P.plan(inp)
    return inp, opt, DP.deployment_report(inp, opt, DP.check_wall_clock(**wall))


def test_default_wall_clock_is_theorem_38_at_n_over_m_and_equals_the_flop_ratio():
    inp, opt, rep = _report()
    w = rep["wall_clock"]
    assert w["cost_coefficient"] == pytest.approx(opt.n_star / opt.m)
    # Theorem 3.8 at c = N*/M with the integer gamma is Eq. 9 at that gamma: the ratio less the rounding loss
    assert w["speedup"] == pytest.approx(rep["tokens_per_flop_ratio"] * (1 - rep["rounding_loss"]), rel=1e-12)
    assert rep["gamma_star_integer"] == w["gamma_integer"] == 10
    assert rep["gamma_star_continuous"] == pytest.approx(opt.gamma_star)
    assert 0 <= rep["rounding_loss"] < 1e-3 and rep["rounding_loss_reoptimised"] <= rep["rounding_loss"]


def test_given_cost_ratio_and_latencies():
    _, opt, rep = _report(cost_ratio=0.05)
    r = S.speedup_report(opt.alpha, 0.05)
    assert rep["wall_clock"]["speedup"] == pytest.approx(r.speedup_at_best)
    assert rep["num_speculative_tokens"] == r.gamma_integer
    _, opt, rep = _report(draft_latency=0.002, target_latency=0.02, verify_latency=0.03, verify_tokens=6)
    assert rep["wall_clock"]["verify_cost_slope"] == pytest.approx(0.1)
    assert rep["wall_clock"]["break_even_alpha"] == pytest.approx(0.2)


def test_suggested_draft_is_the_best_published_one_of_the_tokenizer_group():
    inp, opt, rep = _report()
    s = rep["suggested_draft"]
    best = max(
        (
            theory.optimal_tokens_per_flop(
                float(laws.acceptance_rate(laws.perplexity(r["params"], r["tokens"]), laws.perplexity(opt.m, 15e12))),
                r["params"],
                opt.m,
                True,
            ),
            r["model"],
        )
        for r in P.preset_records()
        if r["tokenizer"] == "llama3" and r["params"] <= opt.m / 2
    )
    assert s["model"] == best[1] == "Llama-3.2-1B"
    assert s["share_of_optimum"] == pytest.approx(float(best[0]) / opt.tokens_per_flop)
    vllm = rep["engines"]["vllm"]["speculative_config"]
    assert vllm == {
        "method": "draft_model",
        "model": "meta-llama/Llama-3.2-1B",
        "num_speculative_tokens": s["gamma_integer"],
        "draft_tensor_parallel_size": 1,
    }
    # the candidates, best first, each with every engine's verdict
    assert [c["model"] for c in s["candidates"]][0] == "Llama-3.2-1B" and len(s["candidates"]) <= 3
    shares = [c["share_of_optimum"] for c in s["candidates"]]
    assert shares == sorted(shares, reverse=True)
    assert set(s["engines"]) == set(D.ENGINE_KEYS) and s["engines"]["vllm"] == "accepted"


def test_the_suggestion_skips_drafts_no_engine_accepts_and_each_engine_says_which_it_serves():
    """Qwen2.5-7B: every smaller Qwen2.5 has 151,936 tokens against its 152,064, which SGLang and
    TensorRT-LLM refuse; vLLM takes them with use_heterogeneous_vocab, llama.cpp within 128 tokens."""
    _, _, rep = _report("qwen2.5-7b")
    e = rep["engines"]
    assert e["sglang"]["command"] is None and "151936, not 152064" in e["sglang"]["refused"]
    assert e["trtllm"]["command"] is None and "vocabulary" in e["trtllm"]["refused"]
    assert e["vllm"]["speculative_config"]["use_heterogeneous_vocab"] is True
    assert e["vllm"]["requires"] == "vllm>=0.25.0"
    assert "--spec-type draft-simple" in e["llamacpp"]["command"]


def test_a_deployment_that_does_not_fit_gets_the_reason_and_the_smallest_gpus():
    _, _, rep = _report("llama-3-70b", hardware="h100-sxm")
    for key in D.ENGINE_KEYS:
        assert rep["engines"][key]["command"] is None
        assert "more than the 80 GB of 1 device: the smallest --gpus that fits is 2" in rep["engines"][key]["refused"]
    _, _, rep = _report("llama-3-70b", hardware="h100-sxm", gpus="2")
    assert all(rep["engines"][k]["command"] for k in D.ENGINE_KEYS)


def test_warnings_and_interval_sources():
    _, _, rep = _report()
    assert any("draft at N*" in w and "12.6 to 29.8" in w for w in rep["warnings"])  # data/acceptance.csv
    iv = rep["interval"]  # sdsl.plan.interval: laws and constants always, the coefficients with a bootstrap
    assert iv["headline"]["sources"] == ["law", "constants"] and iv["headline"]["left_out"] == ["coefficients"]
    assert "acceptance law" in iv["includes"][0] and "loss-law constants" in iv["includes"][1]
    assert any("standard errors" in x and "no bootstrap" in x for x in iv["excludes"])
    assert iv["headline"]["low"] < opt_n_star(rep) < iv["headline"]["high"]
    inp = P.check_inputs("llama-3-70b", n_boot=100, seed=1)  # at least 100 draws
    rep = DP.deployment_report(inp, P.plan(inp), DP.check_wall_clock())
    assert "standard errors" in rep["interval"]["includes"][2]
    assert rep["interval"]["headline"]["sources"] == ["law", "constants", "coefficients"]
    assert not any("standard errors" in x for x in rep["interval"]["excludes"])


def opt_n_star(rep):
    return rep["interval"]["n_star"]


def test_a_law_evaluated_beyond_its_data_is_warned():
    _, _, rep = _report("qwen3-32b")
    assert any("a + b ln N + c ln D + e y" in w and "draft tokens D 3.6e+13" in w for w in rep["warnings"])


def test_hardware_report_by_batch_and_context():
    _, opt, rep = _report(hardware="h200", dtype="fp8", batch="1,64", context=[0, "4096"])
    rows = rep["wall_clock"]["by_batch_and_context"]
    assert [(r["batch"], r["context"]) for r in rows] == [(1, 0), (1, 4096), (64, 0), (64, 4096)]
    assert rows[0]["gamma_star"] >= rows[2]["gamma_star"]
    assert rep["num_speculative_tokens"] >= 1


@pytest.mark.parametrize(
    "kw, msg",
    [
        (dict(cost_ratio=0.1, hardware="h200"), "give one source of the cost of drafting"),
        (dict(batch="8"), "batch needs hardware"),
        (dict(draft_latency=0.1), "need both draft_latency and target_latency"),
        (dict(hardware="h200", dtype="int4"), "dtype must be one of"),
        (dict(hardware="h200", batch="0"), "batch must be an integer >= 1"),
        (dict(hardware="h200", gpus="1.5"), r"gpus must be an integer in \[1, 1024\]"),
        (dict(cost_ratio="-1"), "cost_ratio must be a number >= 0"),
    ],
)
def test_bad_wall_clock_options(kw, msg):
    with pytest.raises(ValueError, match=msg):
        DP.check_wall_clock(**kw)


def test_engine_settings_follow_the_plan_per_batch():
    """Where the roofline gives different draft lengths per batch, each engine gets its own
    (TensorRT-LLM's schedule: batch 1 at max_draft_len, as it requires)."""
    _, _, rep = _report("llama-3.1-8b", hardware="h100-sxm", batch="1,256")
    by = {r["batch"]: r["gamma"] for r in rep["engines"]["sglang"]["by_batch"]}
    sched = rep["engines"]["vllm"]["speculative_config"]["num_speculative_tokens_per_batch_size"]
    assert sched == [[1, 1, by[1]], [2, 256, by[256]]]  # one vLLM server for both batch sizes
    rows = {r["batch"]: r for r in rep["wall_clock"]["by_batch_and_context"]}
    s = rep["suggested_draft"]
    assert by[1] == s["gamma_wall_clock"] and set(by) == set(rows) == {1, 256}
    sched = rep["engines"]["trtllm"]["speculative_config"].get("draft_len_schedule", {})
    assert sched["1"] == max(by.values()) == rep["engines"]["trtllm"]["speculative_config"]["max_draft_len"]
    assert sched["256"] == by[256]


def test_tensor_parallel_must_share_the_heads():
    assert D.check_tensor_parallel(4, 64, 8, "x") is None
    assert "64 attention heads" in D.check_tensor_parallel(3, 64, 8, "x")
    assert D.check_tensor_parallel(16, 64, 8, "x") is None  # 8 key-value heads replicated twice
    assert "key-value heads" in D.check_tensor_parallel(16, 48, 12, "x")  # 16 neither divides 12 nor is divided
    assert D.tensor_parallel_choices(64, 8) == [1, 2, 4, 8, 16, 32, 64]
    with pytest.raises(ValueError, match="gpus 3: 3 devices cannot share the 64 attention heads"):
        _report(hardware="h100-sxm", gpus="3")

"""SGLang and TensorRT-LLM scrapes (sdsl.measure.engines.sglang / .trtllm): alpha by inverting the
mean acceptance length, labelled valid for chain drafts only, with the interval the export allows
(delta method from a count of steps; none from a gauge alone)."""

from __future__ import annotations

import math

import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import read_files, read_text
from sdsl.measure.estimators import alpha_from_mean_tokens


def _value(text: str, name: str) -> float:
    return next(float(ln.rsplit(" ", 1)[1]) for ln in text.splitlines() if ln.startswith(name))


def test_sglang_counters_give_the_run_mean_with_an_interval():
    text = (ENG / "sglang.prom").read_text()
    (r,) = read_files([ENG / "sglang.prom"])
    (x,) = r.readings
    v, g, n = (
        _value(text, f"sglang:{m}")
        for m in ("spec_verify_calls_total", "generation_tokens_total", "num_requests_total")
    )
    ref = alpha_from_mean_tokens((g - n) / v, 3, int(v))
    assert x.gamma == 3  # accept_length / accept_rate = 4 draft tokens per step = k + 1
    assert x.estimate.alpha == pytest.approx(ref.alpha) and x.estimate.ci_high == pytest.approx(ref.ci_high)
    assert x.chain_only
    # simulated at 0.72; the seeded draw lies 2.7 standard errors off, inside 3 (fixture seed 16)
    assert abs(x.estimate.alpha - 0.72) < 3 * x.estimate.se


def test_sglang_gauges_alone_give_a_point_without_interval():
    (r,) = read_files([ENG / "sglang_gauges_only.prom"])
    (x,) = r.readings
    assert math.isnan(x.estimate.ci_low) and any("no sampling interval" in n for n in x.notes)
    length = _value((ENG / "sglang_gauges_only.prom").read_text(), "sglang:spec_accept_length{")
    assert x.estimate.alpha == pytest.approx(alpha_from_mean_tokens(length, 3, 1).alpha)


def _with_rate(text: str, factor: float) -> str:
    out = []
    for ln in text.splitlines():
        if ln.startswith("sglang:spec_accept_rate{"):
            head, v = ln.rsplit(" ", 1)
            ln = f"{head} {float(v) * factor!r}"
        out.append(ln)
    return "\n".join(out) + "\n"


def test_sglang_k_assumes_a_chain_and_gamma_overrides():
    text = (ENG / "sglang_gauges_only.prom").read_text()
    (x,) = read_text(_with_rate(text, 4 / 6), "six").readings  # 6 draft tokens per step: k = 5 for a chain
    assert x.gamma == 5 and any("assumes a chain draft" in n for n in x.notes)
    (y,) = read_text(_with_rate(text, 4 / 6), "six", gamma=3).readings  # a tree of 3 steps: the user says so
    assert y.gamma == 3 and not any("assumes a chain" in n for n in y.notes)
    r = read_text(_with_rate(text, 4 / 5.5), "odd")  # not a whole number of draft tokens per step
    assert not r.readings and "not a whole number" in r.skipped[0].reason


def test_sglang_idle_gauge():
    r = read_text('sglang:spec_accept_length{model_name="m"} 0.0\nsglang:spec_accept_rate{model_name="m"} 0.0\n', "s")
    assert not r.readings and r.skipped[0].reason.startswith("idle")


def test_trtllm_counters_with_the_draft_length_from_the_info_gauge():
    text = (ENG / "trtllm.prom").read_text()
    (r,) = read_files([ENG / "trtllm.prom"])
    (x,) = r.readings
    dt = _value(text, "trtllm_spec_decode_num_draft_tokens_total")
    acc = _value(text, "trtllm_spec_decode_num_accepted_tokens_total")
    ref = alpha_from_mean_tokens(1 + 3 * acc / dt, 3, int(dt / 3))
    assert x.gamma == 3 and x.estimate.alpha == pytest.approx(ref.alpha) and x.chain_only
    assert x.estimate.ci_low <= 0.66 <= x.estimate.ci_high  # simulated at 0.66
    assert any("last iteration" in n for n in r.notes)  # the gauge as a one-iteration cross-check


def test_trtllm_without_k_asks_for_it_and_fresh_server_is_idle():
    text = "".join(ln for ln in (ENG / "trtllm.prom").read_text().splitlines(keepends=True) if "config_info" not in ln)
    r = read_text(text, "t")
    assert not r.readings and "--gamma" in r.skipped[0].reason and "suggests about" in r.skipped[0].reason
    assert read_text(text, "t", gamma=3).readings[0].gamma == 3
    (f,) = read_files([ENG / "trtllm_fresh.prom"])
    assert not f.readings and "no sample yet" in f.skipped[0].reason


def test_trtllm_short_drafts_are_flagged():
    text = (ENG / "trtllm.prom").read_text()
    dt = _value(text, "trtllm_spec_decode_num_draft_tokens_total")
    (x,) = read_text(text.replace("_total{", "_total{", 1).replace(repr(dt), repr(dt - 1)), "t").readings
    assert x.short_drafts is not None and any("not a multiple of k" in n for n in x.notes)
    assert x.short_drafts.drafts_min == 1 and "more short drafts" in x.short_drafts.effect()


def test_sglang_tensor_parallel_ranks_are_read_once():
    text = (ENG / "sglang_gauges_only.prom").read_text()
    both = (
        text
        + "\n".join(ln.replace('tp_rank="0"', 'tp_rank="1"') for ln in text.splitlines() if ln.startswith("sglang:"))
        + "\n"
    )
    r = read_text(both, "tp2")
    assert len(r.readings) == 1 and "another rank of one engine" in r.skipped[0].reason

"""SGLang's per-request meta_info (sdsl.measure.engines.sglang_requests) and bench_serving result
(sdsl.measure.engines.sglang_bench): the request pasted in SGLang PR #33518 against the exact MLE
of its histogram, simulated requests and log lines against the alpha they were drawn at, the
bench_serving block of SGLang PR #13376 against the inversion of its acceptance length."""

from __future__ import annotations

import json

import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import detect_format, read_files, read_text
from sdsl.measure.engines.sglang_requests import parse_sglang_requests
from sdsl.measure.estimators import alpha_from_accepted, alpha_from_mean_tokens

PASTED = ENG / "sglang_meta_info_pr33518.json"


def test_the_pasted_request_gives_the_histogram_mle():
    (r,) = parse_sglang_requests(PASTED.read_text())
    assert (r.verify_ct, r.histogram, r.correct, r.proposed) == (43, (11, 14, 11, 4, 0, 3), 63, 215)
    (x,) = read_files([PASTED])[0].readings
    steps = [j for j, c in enumerate(r.histogram) for _ in range(c)]
    ref = alpha_from_accepted(steps, 5)  # 215 / 43 = 5 draft tokens per step
    assert x.gamma == 5 and x.estimate.alpha == pytest.approx(63 / (63 + 40))
    assert (x.estimate.ci_low, x.estimate.ci_high) == pytest.approx((ref.ci_low, ref.ci_high))


def test_simulated_requests_recover_alpha_with_a_bootstrap():
    (x,) = read_files([ENG / "sglang_requests.jsonl"])[0].readings
    assert x.gamma == 3 and x.num_drafts == sum(
        json.loads(ln)["meta_info"]["spec_verify_ct"] for ln in (ENG / "sglang_requests.jsonl").read_text().splitlines()
    )
    # simulated at 0.6 (seed 18): the point lies within the 95 % interval
    assert x.estimate.ci_low <= 0.6 <= x.estimate.ci_high
    assert x.bootstrap is not None or any("scipy" in n for n in x.notes)


def test_the_finish_log_lines_are_read():
    text = (ENG / "sglang_finish_log.txt").read_text()
    assert detect_format(text, "log")[0] == "sglang-requests"
    reqs = parse_sglang_requests(text)
    assert len(reqs) == 3 and all(r.histogram is not None and len(r.histogram) == 5 for r in reqs)
    (x,) = read_text(text, "log").readings
    assert x.gamma == 4 and any("last bucket" in n for n in x.notes)
    assert x.estimate.ci_low <= 0.7 <= x.estimate.ci_high  # simulated at 0.7
    (y,) = read_text(text, "log", gamma=6).readings  # a longer k than the histogram shows
    assert y.gamma == 6 and y.estimate.alpha < x.estimate.alpha


def test_without_a_histogram_the_mean_length_is_inverted():
    d = json.loads(PASTED.read_text())
    for key in ("spec_correct_drafts_histogram",):
        d.pop(key)
    (x,) = read_text(json.dumps({"meta_info": d}), "m").readings
    ref = alpha_from_mean_tokens(1 + 63 / 43, 5, 43)
    assert x.chain_only and x.estimate.alpha == pytest.approx(ref.alpha)
    d.pop("spec_num_correct_drafts")
    d["completion_tokens"] = 106
    (y,) = read_text(json.dumps({"meta_info": d}), "m").readings
    assert y.estimate.alpha == pytest.approx(ref.alpha)  # 106 / 43 = 1 + 63 / 43


def test_contradicting_requests_are_refused():
    d = json.loads(PASTED.read_text())
    d["spec_verify_ct"] = 44
    with pytest.raises(
        ValueError, match="request 0: spec_correct_drafts_histogram sums to 43 but spec_verify_ct is 44"
    ):
        read_text(json.dumps(d), "m")
    d = json.loads(PASTED.read_text())
    d["spec_num_correct_drafts"] = 64
    with pytest.raises(ValueError, match="the histogram gives 63 accepted tokens"):
        read_text(json.dumps(d), "m")


def test_sglang_bench_printout_needs_k_and_inverts_the_length():
    path = ENG / "sglang_bench_pr13376.txt"
    assert detect_format(path.read_text(), "b")[0] == "sglang-bench"
    (r,) = read_files([path])
    assert not r.readings and "--gamma" in r.skipped[0].reason
    (r,) = read_files([path], gamma=31)
    (x,) = r.readings
    steps = 512000 / 5.86
    ref = alpha_from_mean_tokens(5.86, 31, round(steps))
    assert x.estimate.alpha == pytest.approx(ref.alpha) and x.chain_only
    lo = alpha_from_mean_tokens(5.855, 31, round(steps))
    hi = alpha_from_mean_tokens(5.865, 31, round(steps))
    assert x.estimate.ci_low == pytest.approx(lo.ci_low) and x.estimate.ci_high == pytest.approx(hi.ci_high)


def test_sglang_bench_json_line():
    path = ENG / "sglang_bench.jsonl"
    assert detect_format(path.read_text(), "b")[0] == "sglang-bench"
    (x,) = read_files([path], gamma=3)[0].readings
    assert x.estimate.ci_low <= 0.7 <= x.estimate.ci_high  # simulated at 0.7, seed 18


def test_openai_responses_streams_and_older_meta_info():
    """The OpenAI-compatible response's sglext (completion tokens in usage), a stream that repeats a
    request's meta_info with the counts so far (the last is kept), and the meta_info of SGLang before
    the histogram (spec_verify_ct and completion_tokens only: k from --gamma)."""
    spec = json.loads(PASTED.read_text())
    oai = {
        "model": "deepseek-v4",
        "choices": [],
        "usage": {"completion_tokens": 106},
        "sglext": {"spec_tokens_details": spec},
    }
    (x,) = read_text(json.dumps(oai), "o").readings
    assert x.model == "deepseek-v4" and x.estimate.alpha == pytest.approx(63 / 103)
    early = dict(spec, id="r1", spec_verify_ct=10, spec_correct_drafts_histogram=[3, 4, 3, 0, 0, 0])
    early.update(spec_num_correct_drafts=10, spec_num_proposed_drafts=50)
    stream = (
        "".join(f"data: {json.dumps({'meta_info': m})}\n\n" for m in (early, dict(spec, id="r1"))) + "data: [DONE]\n"
    )
    (y,) = read_text(stream, "s").readings
    assert y.num_drafts == 43 and y.estimate.alpha == pytest.approx(63 / 103)
    old = json.dumps({"text": "...", "meta_info": {"id": "a", "completion_tokens": 106, "spec_verify_ct": 43}})
    r = read_text(old, "old")
    assert not r.readings and "--gamma" in r.skipped[0].reason
    (z,) = read_text(old, "old", gamma=5).readings
    assert z.estimate.alpha == pytest.approx(alpha_from_mean_tokens(106 / 43, 5, 43).alpha)

"""vLLM per-request acceptance metrics (sdsl.measure.engines.vllm_requests; vLLM PR #48915):
detailed arrays give the exact per-iteration MLE and a bootstrap over requests; summary
histograms bound it when drafts are shorter than k; streams and null metrics."""

from __future__ import annotations

import json

import numpy as np
import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import read_files, read_text
from sdsl.measure.engines.vllm_requests import parse_requests
from sdsl.measure.estimators import alpha_from_accepted


def test_the_pr_example_is_consistent():
    reqs, nulls = parse_requests((ENG / "vllm_requests_summary.json").read_text())
    pr = reqs[0]
    assert (pr.k, pr.histogram, pr.num_spec_steps, pr.num_accepted, pr.num_draft_tokens) == (
        3,
        (39, 1, 0, 3),
        43,
        10,
        129,
    )
    assert nulls == 1 and len(reqs) == 41


def test_detailed_arrays_give_the_exact_mle_and_a_bootstrap():
    (r,) = read_files([ENG / "vllm_requests_detailed.jsonl"])
    (x,) = r.readings
    lines = [
        json.loads(ln)["metrics"]["speculative_decoding"]
        for ln in (ENG / "vllm_requests_detailed.jsonl").read_text().splitlines()
    ]
    acc = np.concatenate([d["per_step_accepted"] for d in lines])
    gam = np.concatenate([d["per_step_drafted"] for d in lines])
    ref = alpha_from_accepted(acc, gam)
    assert x.estimate.alpha == ref.alpha and x.estimate.ci_low == ref.ci_low
    assert x.short_drafts.exact and x.short_drafts.drafts_min == int(np.sum(gam < 3))
    assert x.bootstrap.extra["n_prompts"] == 40 and x.bootstrap.ci_low < ref.alpha < x.bootstrap.ci_high
    assert x.estimate.ci_low <= 0.45 <= x.estimate.ci_high  # simulated at 0.45


def test_summary_histograms_bound_the_exact_estimate():
    """The same simulated requests without their per-step arrays (and the PR's request): the
    bounded interval contains the exact MLE of the detailed file."""
    (r,) = read_files([ENG / "vllm_requests_summary.json"])
    (x,) = r.readings
    (d,) = read_files([ENG / "vllm_requests_detailed.jsonl"])[0].readings
    assert not x.short_drafts.exact and x.short_drafts.missing_tokens == 731 + 0  # the PR request is full
    assert x.short_drafts.alpha_full <= x.estimate.alpha <= x.short_drafts.alpha_upper
    assert x.estimate.ci_low <= d.estimate.alpha <= x.estimate.ci_high
    assert "null" in r.notes[0]


def test_stream_chunks_are_read():
    (r,) = read_files([ENG / "vllm_requests_stream.txt"])
    (x,) = r.readings
    assert x.model == "test-model" and x.num_accepted_tokens == 17 and x.bootstrap is None


@pytest.mark.parametrize(
    "change, message",
    [
        ({"acceptance_histogram": [39, 1, 0]}, "has 3 entries, num_spec_tokens \\+ 1 = 4 expected"),
        ({"num_spec_steps": 44}, "sums to 43 but num_spec_steps is 44"),
        ({"num_accepted_draft_tokens": 11}, "gives 10 accepted tokens"),
        ({"num_draft_tokens": 130}, "num_draft_tokens <= k x num_spec_steps"),
        ({"num_spec_tokens": 0}, "num_spec_tokens must be a whole number >= 1"),
        ({"per_step_accepted": [0] * 43, "per_step_drafted": [3] * 42}, "must have num_spec_steps = 43"),
    ],
)
def test_invalid_requests_name_the_request(change, message):
    sd = {
        "mean_acceptance_length": 1.23,
        "draft_acceptance_rate": 0.08,
        "acceptance_histogram": [39, 1, 0, 3],
        "num_spec_steps": 43,
        "num_accepted_draft_tokens": 10,
        "num_draft_tokens": 129,
        "num_spec_tokens": 3,
    }
    sd.update(change)
    with pytest.raises(ValueError, match=message) as err:
        read_text(json.dumps({"model": "m", "metrics": {"speculative_decoding": sd}}), "r.json")
    assert str(err.value).startswith("r.json request 0: ")


def test_requests_that_drafted_nothing_are_idle():
    sd = {
        "acceptance_histogram": [0, 0, 0, 0],
        "num_spec_steps": 0,
        "num_accepted_draft_tokens": 0,
        "num_draft_tokens": 0,
        "num_spec_tokens": 3,
    }
    r = read_text(json.dumps([{"model": "m", "metrics": {"speculative_decoding": sd}}]), "r.json")
    assert not r.readings and "none of the 1 request(s) drafted" in r.skipped[0].reason

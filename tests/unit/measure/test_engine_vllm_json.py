"""vLLM's JSON outputs (sdsl.measure.engines.vllm_json) and SGLang's spec_num_steps gauges: the
alpha of each fixture equals the MLE by hand from the fixture's own counts, and damaged variants
(cut, keys missing, counts edited, another tool's JSON) are refused in one line naming the file."""

from __future__ import annotations

import json

import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import read_files, read_text
from sdsl.measure.estimators import alpha_from_mean_tokens

BENCH = ENG / "vllm_bench_serve.json"
METRICS = ENG / "vllm_get_metrics.json"
STEPS = ENG / "sglang_num_steps.prom"


@pytest.fixture
def run(capsys):
    """``sdsl alpha ARGS`` in-process: (exit status, stdout, stderr)."""
    from sdsl.cli import main

    def call(*args):
        code = main(["alpha", *map(str, args)])
        cap = capsys.readouterr()
        return code, cap.out, cap.err

    return call


def _refused(run, *args) -> str:
    code, out, err = run(*args)
    assert code == 2 and not out and err.startswith("sdsl alpha: error: ") and err.count("\n") == 1, (code, out, err)
    return err


def _by_hand(per_pos: list[int], drafts: int) -> float:
    """The truncated-geometric MLE: accepted / (drafts + drafts reaching positions 2..k)."""
    return sum(per_pos) / (drafts + sum(per_pos[:-1]))


def _write(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text)
    return p


# -- vllm bench serve --save-result ----------------------------------------------------------------


def test_bench_alpha_is_the_mle_of_its_counts():
    d = json.loads(BENCH.read_text())
    n = d["spec_decode_num_drafts"]
    per_pos = [round(r * n) for r in d["spec_decode_per_position_acceptance_rates"]]
    (r,) = read_files([BENCH])
    assert r.source == "vllm-bench"
    (x,) = r.readings
    assert x.gamma == 3 and x.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert x.num_drafts == n and x.num_accepted_tokens == d["spec_decode_accepted_tokens"] == sum(per_pos)
    # the same integer counts in the same order of operations: equal to the last bit or two
    assert x.estimate.alpha == pytest.approx(_by_hand(per_pos, n), rel=1e-12)
    assert x.mean_acceptance_length == pytest.approx(d["spec_decode_acceptance_length"], rel=1e-12)
    # simulated at 0.7 (seed 17): the interval covers it
    assert x.estimate.ci_low < 0.7 < x.estimate.ci_high


def test_bench_append_result_lines_are_runs(tmp_path):
    d = json.loads(BENCH.read_text())
    p = _write(tmp_path, "runs.json", json.dumps(d) + "\n" + json.dumps(d) + "\n")
    (r,) = read_files([p])
    assert [dict(x.labels)["line"] for x in r.readings] == ["1", "2"]
    assert r.readings[0].estimate.alpha == r.readings[1].estimate.alpha


def test_bench_without_per_position_rates_inverts_the_mean_length(tmp_path):
    d = json.loads(BENCH.read_text())
    d["spec_decode_per_position_acceptance_rates"] = []
    p = _write(tmp_path, "no_pos.json", json.dumps(d))
    (x,) = read_files([p])[0].readings
    n = d["spec_decode_num_drafts"]
    ref = alpha_from_mean_tokens(1 + d["spec_decode_accepted_tokens"] / n, 3, n)
    assert x.gamma == 3 and x.chain_only and x.estimate.alpha == pytest.approx(ref.alpha, rel=1e-12)


def _damaged(key: str, value):
    d = json.loads(BENCH.read_text())
    if value is KeyError:
        del d[key]
    else:
        d[key] = value
    return json.dumps(d)


@pytest.mark.parametrize(
    "text, says",
    [
        (BENCH.read_text()[:-40], "not valid JSON"),
        (BENCH.read_text()[: BENCH.read_text().index('"spec_decode_num_drafts"') + 10], "cut short"),
        (_damaged("spec_decode_accepted_tokens", KeyError), "spec_decode_accepted_tokens missing"),
        (_damaged("spec_decode_accepted_tokens", 1), "spec_decode_acceptance_length"),
        (_damaged("spec_decode_num_drafts", 5999.5), "whole number"),
        (_damaged("spec_decode_acceptance_rate", 0.62), "a percentage"),
        (_damaged("spec_decode_per_position_acceptance_rates", [0.7, 0.5]), "per-position counters sum"),
        (_damaged("spec_decode_per_position_acceptance_rates", [0.70001, 0.49, 0.34]), "not a whole number"),
        (_damaged("spec_decode_per_position_acceptance_rates", "0.7"), "must be a list"),
        ('{"backend": "openai", "request_throughput": 3.1, "model_id": "m"}', "without spec_decode_* keys"),
    ],
)
def test_bench_damaged_is_refused(tmp_path, run, text, says):
    p = _write(tmp_path, "bench.json", text)
    err = _refused(run, p)
    assert str(p) in err and says in err, err


def test_bench_gamma_against_its_k_is_refused(run):
    assert "conflicts with k = 3" in _refused(run, BENCH, "--gamma", "4")


# -- LLM.get_metrics() saved as JSON ---------------------------------------------------------------


def test_get_metrics_alpha_is_the_mle_of_its_counters():
    ms = json.loads(METRICS.read_text())
    val = {m["name"]: m.get("value", m.get("values")) for m in ms}
    per_pos, n = val["vllm:spec_decode_num_accepted_tokens_per_pos"], val["vllm:spec_decode_num_drafts"]
    (r,) = read_files([METRICS])
    assert r.source == "vllm-get-metrics"
    (x,) = r.readings
    assert x.gamma == 4 and x.label_dict == {"engine": "0", "model_name": "Qwen/Qwen3-8B"}
    assert x.num_draft_tokens == val["vllm:spec_decode_num_draft_tokens"] == 4 * n
    assert x.estimate.alpha == pytest.approx(_by_hand(per_pos, n), rel=1e-12)
    assert x.estimate.ci_low < 0.6 < x.estimate.ci_high  # simulated at 0.6 (seed 17)


def test_get_metrics_engines_of_one_model_are_pooled_and_idle_skipped():
    ms = json.loads(METRICS.read_text())
    extra = []
    for m in ms:
        if m["name"].startswith("vllm:spec_decode"):
            for e, scale in (("1", 1), ("2", 0)):
                c = dict(m, labels=dict(m["labels"], engine=e))
                c["values" if "values" in m else "value"] = (
                    [v * scale for v in m["values"]] if "values" in m else m["value"] * scale
                )
                extra.append(c)
    r = read_text(json.dumps(ms + extra), "dp.json")
    assert {dict(x.labels)["engine"] for x in r.readings} == {"0", "1", "all"}
    assert [dict(s.labels)["engine"] for s in r.skipped] == ["2"] and "idle" in r.skipped[0].reason
    pooled = next(x for x in r.readings if dict(x.labels)["engine"] == "all")
    assert pooled.estimate.alpha == pytest.approx(r.readings[0].estimate.alpha, rel=1e-12)  # twice the same counts


def _metrics_without(name: str) -> str:
    return json.dumps([m for m in json.loads(METRICS.read_text()) if m["name"] != name])


@pytest.mark.parametrize(
    "text, says",
    [
        (METRICS.read_text()[: METRICS.read_text().index("vllm:spec_decode_num_accepted_tokens_per_pos")], "cut short"),
        (_metrics_without("vllm:spec_decode_num_accepted_tokens_per_pos"), "num_accepted_tokens_per_pos missing"),
        (_metrics_without("vllm:spec_decode_num_drafts"), "vllm:spec_decode_num_drafts missing"),
        (
            METRICS.read_text().replace('"name": "vllm:spec_decode_num_drafts"', '"nom": "x"'),
            "not a metric object with a name",
        ),
        (
            json.dumps([m for m in json.loads(METRICS.read_text()) if not m["name"].startswith("vllm:spec")]),
            "without vllm:spec_decode_* counters",
        ),
        (
            json.dumps([dict(m, value=-3) if "value" in m else m for m in json.loads(METRICS.read_text())]),
            "whole number >= 0",
        ),
        ('[{"name": "vllm:spec_decode_num_drafts", "labels": {}}]', "value missing"),
    ],
)
def test_get_metrics_damaged_is_refused(tmp_path, run, text, says):
    p = _write(tmp_path, "metrics.json", text)
    err = _refused(run, p)
    assert str(p) in err and says in err, err


# -- SGLang's spec_num_steps / spec_num_draft_tokens gauges ----------------------------------------


def _value(text: str, name: str) -> float:
    return next(float(ln.rsplit(" ", 1)[1]) for ln in text.splitlines() if ln.startswith(name))


def test_sglang_k_comes_from_spec_num_steps():
    text = STEPS.read_text()
    (x,) = read_files([STEPS])[0].readings
    v, g, n = (
        _value(text, f"sglang:{m}")
        for m in ("spec_verify_calls_total", "generation_tokens_total", "num_requests_total")
    )
    ref = alpha_from_mean_tokens((g - n) / v, 4, int(v))
    assert x.gamma == 4 and x.estimate.alpha == pytest.approx(ref.alpha, rel=1e-12)
    assert any("from sglang:spec_num_steps" in s for s in x.notes) and any("a chain draft" in s for s in x.notes)
    # the two acceptance gauges of this SGLang do not give k (accept_length / accept_rate is not whole):
    # without spec_num_steps the same scrape has no usable gauge
    old = "\n".join(ln for ln in text.splitlines() if "spec_num_" not in ln) + "\n"
    r = read_text(old, "old")
    assert not r.readings and any("k unknown" in s.reason for s in r.skipped)


def test_sglang_tree_draft_is_said_and_off_is_skipped():
    text = STEPS.read_text()
    tree = text.replace('tp_rank="0"} 5.0', 'tp_rank="0"} 8.0')
    (x,) = read_text(tree, "tree").readings
    assert x.gamma == 4 and any("a tree draft" in s for s in x.notes)
    off = text.replace(
        'sglang:spec_num_steps{engine_type="unified",model_name="Qwen/Qwen3-8B",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 4.0',
        'sglang:spec_num_steps{engine_type="unified",model_name="Qwen/Qwen3-8B",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 0.0',
    )
    r = read_text(off, "off")
    assert any("speculative decoding off" in s.reason for s in r.skipped)


def test_sglang_gamma_against_spec_num_steps_is_refused(run):
    err = _refused(run, STEPS, "--gamma", "3")
    assert "conflicts with k = 4" in err and "spec_num_steps" in err
    assert run(STEPS, "--gamma", "4")[0] == 0

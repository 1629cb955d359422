"""The Prometheus exposition through prometheus_client (sdsl.measure.engines.prometheus): the old
fixtures parse to the same samples, Prometheus 3 quoted names and timestamps, errors by line, and
query-result tables: the fixture built in the layout of the one pasted in vLLM PR #24049 (its
registry entry says what differs from the paste) and rows of the paste itself."""

from __future__ import annotations

import pytest
from engine_fixtures import ENG, ROOT

from sdsl.measure.engines.prometheus import (
    counter_values,
    delta_values,
    looks_like_prometheus,
    parse_scrape,
)


def test_old_fixtures_parse_with_every_sample():
    s = parse_scrape((ROOT / "vllm_multi.txt").read_text())
    drafts = s.named("vllm:spec_decode_num_drafts_total")
    assert [dict(x.labels)["engine"] for x in drafts] == ["0", "1", "0"]
    assert dict(drafts[2].labels)["model_name"] == 'my "tuned" model\\v2'  # escapes undone
    assert len(s.named("vllm:spec_decode_num_accepted_tokens_per_pos_total")) == 15
    assert s.types["vllm:spec_decode_num_drafts"] == "counter"
    assert {x.value for x in s.named("vllm:spec_decode_num_drafts_created")} == {1.7721e9}


def test_quoted_utf8_names_timestamps_and_special_values():
    text = (
        '{"vllm:spec_decode_num_drafts_total", model_name="m", engine="0"} 5 1700000000000\n'
        'x_total{a="q\\"uote"} +Inf\n'
        "y NaN\n"
        "# EOF\n"
    )
    s = parse_scrape(text)
    a, b, c = s.samples
    assert a.name == "vllm:spec_decode_num_drafts_total" and a.timestamp == 1.7e9  # ms -> s
    assert dict(b.labels) == {"a": 'q"uote'} and b.value == float("inf")
    assert c.value != c.value  # NaN


def test_malformed_line_is_reported_by_number():
    with pytest.raises(ValueError, match=r"f line 3: not a Prometheus sample: 'bad\{a=\"x\} 1'"):
        parse_scrape('ok 1\n# c\nbad{a="x} 1\n', "f")


def test_pasted_query_table_becomes_samples():
    text = (ENG / "vllm_pr24049_table.txt").read_text()
    assert looks_like_prometheus(text)
    s = parse_scrape(text)
    assert s.table
    drafts = {dict(x.labels)["engine"]: x.value for x in s.named("vllm:spec_decode_num_drafts_total")}
    assert drafts == {str(e): float(n) for e, n in enumerate([22, 15, 29, 20, 25, 24, 27, 26])}  # PR #24049
    assert dict(s.samples[0].labels)["instance"] == "localhost:8000"


#: Rows of the table pasted in vLLM PR #24049, verbatim (the stored thread holds only parts of it):
#: the first rows, with the rule after the first, and rows of the fifth position (0-based 4).
PR24049_ROWS = """<details>
<summary> Prometheus Query `{__name__=~"vllm:spec.*"}` Result </summary>
vllm:spec_decode_num_drafts_total{engine="0", instance="localhost:8000", job="vllm", model_name="/home/models/Qwen3-0.6B"} | 22
-- | --
vllm:spec_decode_num_drafts_total{engine="1", instance="localhost:8000", job="vllm", model_name="/home/models/Qwen3-0.6B"} | 15
vllm:spec_decode_num_drafts_created{engine="0", instance="localhost:8000", job="vllm", model_name="/home/models/Qwen3-0.6B"} | 1756736798.733569
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0", instance="localhost:8000", job="vllm", model_name="/home/models/Qwen3-0.6B", position="0"} | 7
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0", instance="localhost:8000", job="vllm", model_name="/home/models/Qwen3-0.6B", position="4"} | 2
"""


def test_rows_of_the_real_paste_parse():
    s = parse_scrape(PR24049_ROWS, "paste")
    assert s.table and len(s.samples) == 5
    created = s.named("vllm:spec_decode_num_drafts_created")[0]
    assert created.value == 1756736798.733569
    pos = {dict(x.labels)["position"]: x.value for x in s.named("vllm:spec_decode_num_accepted_tokens_per_pos_total")}
    assert pos == {"0": 7.0, "4": 2.0}  # the paste has five positions; the built fixture has four


def test_counter_delta_detects_a_reset():
    before = parse_scrape('c_total{m="a"} 10\nc_created{m="a"} 100\n')
    same = parse_scrape('c_total{m="a"} 25\nc_created{m="a"} 100\n')
    restarted = parse_scrape('c_total{m="a"} 4\nc_created{m="a"} 200\n')
    d, notes = delta_values(counter_values(before, "c"), counter_values(same, "c"))
    assert d == {(("m", "a"),): 15.0} and not notes
    d, notes = delta_values(counter_values(before, "c"), counter_values(restarted, "c"))
    assert d == {(("m", "a"),): 4.0} and "reset" in notes[0]


def test_prometheus_http_api_answer_reads_like_the_scrape():
    import json

    from sdsl.measure.engines.detect import read_text

    text = (ROOT / "vllm_single.txt").read_text()
    result = [
        {"metric": {"__name__": s.name, **dict(s.labels), "job": "vllm"}, "value": [1756736800.1, repr(s.value)]}
        for s in parse_scrape(text).samples
    ]
    answer = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})
    api, scrape = read_text(answer, "api.json"), read_text(text, "scrape.txt")
    assert api.detected_by.startswith("Prometheus HTTP API answer")
    assert api.readings[0].estimate.alpha == scrape.readings[0].estimate.alpha

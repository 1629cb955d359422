"""sdsl.plan.lookup: the lookup table of `sdsl presets --plan` and the book."""

from __future__ import annotations

import math

import pytest

from sdsl import plan as P
from sdsl.model import hardware as H
from sdsl.model.deploy import integer_draft_length
from sdsl.plan.lookup import LOOKUP_COLUMNS, lookup_rows, lookup_table


@pytest.fixture(scope="module")
def rows():
    return {r["preset"]: r for r in lookup_rows()}


def test_every_target_preset_has_one_row_and_drafts_none(rows):
    targets = [r["preset"] for r in P.preset_records() if r["role"] == "target"]
    assert list(rows) == targets
    assert "opt-125m" not in rows and "qwen3-0.6b" not in rows
    assert all(set(r) >= set(LOOKUP_COLUMNS) for r in rows.values())


def test_planned_rows_are_the_plan(rows):
    for name in ("llama-3-70b", "qwen2.5-72b", "opt-13b", "llama-3.1-405b", "gemma-2-2b"):
        inp = P.check_inputs(name)
        o = P.plan(inp)
        il = integer_draft_length(o.alpha, o.n_star, o.m)
        r = rows[name]
        assert r["status"] == "planned" and r["n_star"] == o.n_star and r["alpha"] == o.alpha
        assert r["gamma_star_integer"] == il.gamma_integer and r["tokens_per_flop_ratio"] == o.tokens_per_flop * 2 * o.m
    assert rows["opt-13b"]["n_star"] == pytest.approx(117.3e6, rel=1e-3)  # method notes, section 3


def test_wall_clock_is_the_roofline_brute_force_on_enough_devices(rows):
    acc = H.get_accelerator("h100-sxm")
    r = rows["llama-3-70b"]
    t = P.get_preset("llama-3-70b")
    shape, known = H.target_shape(t.params, t.shape)
    assert known and r["gpus"] == 2  # 141 GB of bf16 weights: two 80 GB devices, not one
    assert (r["wall_clock_gamma"], r["wall_clock_speedup"]) == H.speedup_at(
        r["n_star"], r["alpha"], shape, acc.times(2)
    )
    # batch 1, empty cache: the FLOP model's limit but for the per-layer overhead, which makes each
    # draft step cost more than its parameters say: the wall clock stays below the tokens-per-FLOP ratio
    assert 1 < r["wall_clock_speedup"] < r["tokens_per_flop_ratio"]
    assert rows["llama-3.1-405b"]["gpus"] == 16


def test_unknown_architecture_and_tokens_are_said_to_be_unknown(rows):
    for name in ("qwen1.5-110b", "seed-oss-36b"):  # no architecture columns in data/presets.csv
        assert P.get_preset(name).shape is None
        r = rows[name]
        assert r["status"] == "planned" and r["wall_clock_speedup"] is None and "architecture unknown" in r["note"]
    m = rows["mistral-7b-v0.3"]
    assert m["status"] == "tokens unknown" and m["tokens"] is None and m["n_star"] is None
    assert "not stated" in m["refused"]


def test_mixture_of_experts_is_refused(rows):
    for name in ("qwen3-30b-a3b", "qwen3-235b-a22b", "mixtral-8x7b"):
        assert rows[name]["status"] == "refused: mixture of experts" and rows[name]["n_star"] is None
        assert "mixture-of-experts" in rows[name]["refused"]


def test_table_is_the_rows():
    df = lookup_table()
    assert list(df.columns) == list(LOOKUP_COLUMNS)
    rows = lookup_rows()
    assert df["preset"].tolist() == [r["preset"] for r in rows]
    planned = df[df["status"] == "planned"]
    assert planned["n_star"].tolist() == [r["n_star"] for r in rows if r["status"] == "planned"]
    assert math.isnan(df.set_index("preset").loc["mistral-7b-v0.3", "tokens"])


@pytest.mark.parametrize(
    "kw, msg",
    [(dict(batch=0), "batch"), (dict(context=-1), "context"), (dict(hardware="tpu"), "unknown hardware 'tpu'")],
)
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        lookup_rows(**kw)

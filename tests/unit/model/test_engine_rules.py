"""sdsl.model.engine_rules: every printed command passes each engine's own validation, over the whole
preset table at --gpus 1, 2, 4, 8 and --dtype bf16, fp8.

The commands are checked by :func:`engine_refusal`, written here from the engines' sources (not from
the rules it checks): it parses the printed command and says what the engine would refuse."""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
import re
import shlex

import pytest

from sdsl.data import provenance, records
from sdsl.model import deploy as D
from sdsl.model import engine_rules as ER
from sdsl.model import hardware as H

GPUS = (1, 2, 4, 8)
DTYPES = ("bf16", "fp8")
CONTEXT = 4096
PAIRS = [(1, 5), (16, 3), (64, 0)]

ROWS = records("presets")
BY_ID = {r["hf_id"]: r for r in ROWS}
TARGETS = [  # the dense targets whose architecture is known (Qwen1.5-110B's and Seed-OSS-36B's are not)
    r for r in ROWS if r["role"] == "target" and r["architecture"] == "dense" and r["heads"] == r["heads"] is not None
]


def _shards(tp: int, heads: int, kv: int) -> bool:
    """vLLM/SGLang/TensorRT-LLM: query heads split evenly; key-value heads split or replicated."""
    return heads % tp == 0 and (kv % tp == 0 if kv >= tp else tp % kv == 0)


def _flag(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def engine_refusal(engine: str, entry: dict, target: dict, draft: dict, tp: int, dtype: str) -> list[str]:
    """What the engine would refuse in a printed command (empty: it starts), from its sources:
    vLLM vllm/config/speculative.py and model.py, SGLang standalone_worker_v2.py and the models'
    head asserts, TensorRT-LLM py_executor_creator.py (shared mapping) and llm_args.py, llama.cpp
    common/speculative.cpp and tools/server/README.md."""
    bad = []
    if engine == "vllm":
        argv = shlex.split(entry["command"])
        cfg = json.loads(_flag(argv, "--speculative-config"))
        ttp = int(_flag(argv, "--tensor-parallel-size"))
        if "tensor_parallel_size" in cfg:
            bad.append("tensor_parallel_size in the speculative config")
        if "draft_tensor_parallel_size" not in cfg:
            bad.append("draft_tensor_parallel_size not written: the draft takes the target's")
        dtp = cfg.get("draft_tensor_parallel_size", ttp)
        if dtp not in (1, ttp):
            bad.append("draft_tensor_parallel_size neither 1 nor the target's")
        if not _shards(dtp, draft["heads"], draft["kv_heads"]):
            bad.append("the draft's heads do not divide draft_tensor_parallel_size")
        if not _shards(ttp, target["heads"], target["kv_heads"]):
            bad.append("the target's heads do not divide --tensor-parallel-size")
        if draft["vocab"] != target["vocab"] and cfg.get("use_heterogeneous_vocab") is not True:
            bad.append("vocabulary sizes differ")
        sched = cfg.get("num_speculative_tokens_per_batch_size")
        if sched:
            if sched[0][0] != 1 or any(b[0] != a[1] + 1 for a, b in zip(sched, sched[1:])):
                bad.append("schedule does not start at batch 1 or has gaps")
            if any(not 0 <= k <= cfg["num_speculative_tokens"] for _, _, k in sched):
                bad.append("schedule draft length outside [0, num_speculative_tokens]")
        if int(_flag(argv, "--max-model-len")) != CONTEXT:
            bad.append("--max-model-len is not the plan's context")
        if dtype == "fp8" and (_flag(argv, "--quantization") != "fp8" or cfg.get("quantization") != "fp8"):
            bad.append("fp8 not given to target and draft")
        if ttp != tp:
            bad.append("--tensor-parallel-size is not --gpus")
    elif engine == "sglang":
        for row in entry["by_batch"]:
            argv = shlex.split(row["command"])
            if "--speculative-algorithm" not in argv:  # draft length 0 at this batch size: plain decoding
                assert row["gamma"] == 0
                continue
            ttp = int(_flag(argv, "--tp"))
            if not _shards(ttp, draft["heads"], draft["kv_heads"]):
                bad.append("the draft's heads do not divide --tp (the draft shares it)")
            if draft["vocab"] != target["vocab"]:
                bad.append("vocabulary sizes differ")
            if int(_flag(argv, "--speculative-num-draft-tokens")) != int(_flag(argv, "--speculative-num-steps")) + 1:
                bad.append("num_draft_tokens is not num_steps + 1 at top-k 1")
            if int(_flag(argv, "--context-length")) != CONTEXT:
                bad.append("--context-length is not the plan's context")
            if dtype == "fp8" and _flag(argv, "--speculative-draft-model-quantization") != "fp8":
                bad.append("the draft is not quantised")
    elif engine == "trtllm":
        llm = entry["llm_args"]
        spec = llm["speculative_config"]
        if not _shards(llm["tensor_parallel_size"], draft["heads"], draft["kv_heads"]):
            bad.append("the draft's heads do not divide tensor_parallel_size (the draft shares the mapping)")
        if draft["vocab"] != target["vocab"]:
            bad.append("vocabulary sizes differ")
        if target["tokenizer"] in ("opt", "olmo2"):
            bad.append("no PyTorch-backend model for the architecture")
        if dtype == "fp8" and (llm["model"] == target["hf_id"] or spec["speculative_model"] == draft["hf_id"]):
            bad.append("a bf16 checkpoint given as an fp8 model")
        sched = spec.get("draft_len_schedule")
        if sched and (sched.get("1") != spec["max_draft_len"] or max(sched.values()) > spec["max_draft_len"]):
            bad.append("draft_len_schedule without batch 1 at max_draft_len")
        if llm.get("max_seq_len") != CONTEXT:
            bad.append("max_seq_len is not the plan's context")
        ast.parse(entry["command"])  # a line of Python
    elif engine == "llamacpp":
        for row in entry["by_batch"]:
            argv = shlex.split(row["command"])
            if "-md" not in argv:  # draft length 0 at this batch size: plain decoding
                assert row["gamma"] == 0
                continue
            if target["tokenizer"] == "opt":
                bad.append("no OPT model")
            if abs(draft["vocab"] - target["vocab"]) > 128 or draft["tokenizer"] != target["tokenizer"]:
                bad.append("vocabularies not compatible")
            if _flag(argv, "-ngl") != "all" or _flag(argv, "-ngld") != "all":
                bad.append("layers left on the CPU")
            if _flag(argv, "--spec-type") != "draft-simple":
                bad.append("no --spec-type draft-simple: the draft model is not used")
            if int(_flag(argv, "-c")) != CONTEXT * int(_flag(argv, "-np")):
                bad.append("-c is not the context per slot times the slots")
    return bad


def _commands(target: dict, draft: ER.ModelSpec, verdicts: dict, tp: int, dtype: str) -> dict:
    return D.engine_settings(
        5,
        target["hf_id"],
        draft.repo,
        tp,
        dtype,
        PAIRS,
        context=CONTEXT,
        verdicts={k: v.as_dict() for k, v in verdicts.items()},
    )


@functools.cache
def _table() -> dict[tuple[str, int, str], dict[str, int]]:
    """(target, gpus, dtype) -> engine -> the number of preset drafts it accepts; every command
    produced is checked on the way."""
    out = {}
    for t in TARGETS:
        for tp in GPUS:
            if not _shards(tp, t["heads"], t["kv_heads"]):
                continue  # sdsl plan refuses such a --gpus (the target's own heads)
            for dtype in DTYPES:
                counts = dict.fromkeys(D.ENGINE_KEYS, 0)
                for draft, verdicts in ER.compatible_drafts(t, tp, dtype, accepted_only=False):
                    e = _commands(t, draft, verdicts, tp, dtype)
                    for key, v in verdicts.items():
                        if not v.ok:
                            assert e[key]["command"] is None and e[key]["refused"], (t["model"], draft.name, key)
                            continue
                        counts[key] += 1
                        bad = engine_refusal(key, e[key], t, BY_ID[draft.repo], tp, dtype)
                        assert not bad, (t["model"], draft.name, tp, dtype, key, bad, e[key]["command"])
                out[(t["model"], tp, dtype)] = counts
    return out


def test_every_command_over_the_preset_table_passes_the_engines_validation():
    """The table is built by checking every command (see _table); here, its shape and the notable
    cases the engines' sources decide."""
    TABLE = _table()
    assert len({k[0] for k in TABLE}) == len(TARGETS) == 39
    assert len(TABLE) == 2 * (39 * 4 - 2)  # the heads of Qwen2.5-1.5B (12) and Qwen2.5-7B (28) do not shard 8 ways
    # every smaller Qwen2.5 has 151,936 tokens against Qwen2.5-7B's 152,064: SGLang and TensorRT-LLM take
    # none; vLLM takes them with use_heterogeneous_vocab, llama.cpp within its 128 tokens
    for tp in (1, 2, 4):
        for dtype in DTYPES:
            assert TABLE[("Qwen2.5-7B", tp, dtype)] == {"vllm": 3, "sglang": 0, "trtllm": 0, "llamacpp": 3}
    # Qwen2.5-72B at 8 devices: of its six smaller Qwen2.5, SGLang and TensorRT-LLM keep the two whose
    # vocabulary is its own and whose heads shard 8 ways (14B and 32B, 40 heads; not 7B, 28 heads)
    assert TABLE[("Qwen2.5-72B", 8, "bf16")] == {"vllm": 6, "sglang": 2, "trtllm": 2, "llamacpp": 6}
    # OPT: no model in TensorRT-LLM's PyTorch backend nor in llama.cpp; OPT-125M's 12 heads do not shard 8 ways
    for model in ("OPT-13B", "OPT-66B"):
        assert TABLE[(model, 1, "bf16")]["trtllm"] == TABLE[(model, 1, "bf16")]["llamacpp"] == 0
    assert TABLE[("OPT-66B", 8, "bf16")]["sglang"] == TABLE[("OPT-66B", 1, "bf16")]["sglang"] - 1 == 6
    assert TABLE[("OLMo-2-32B", 1, "bf16")]["trtllm"] == 0
    assert TABLE[("Llama-3.1-405B", 8, "fp8")] == dict.fromkeys(D.ENGINE_KEYS, 7)


def test_vllm_writes_the_draft_tensor_parallel_size_every_time_and_one_when_the_heads_do_not_divide():
    t = next(r for r in ROWS if r["model"] == "Qwen2.5-72B")
    d = ER.ModelSpec.from_preset(next(r for r in ROWS if r["model"] == "Qwen2.5-0.5B"))
    v = ER.check_pair(ER.ModelSpec.from_preset(t), d, 8, "bf16")
    assert v["vllm"].ok and v["vllm"].settings["draft_tp"] == 1  # 14 heads over 8 devices: one device
    assert not v["sglang"].ok and "14 attention heads" in v["sglang"].line()
    cfg = json.loads(_flag(shlex.split(_commands(t, d, v, 8, "bf16")["vllm"]["command"]), "--speculative-config"))
    assert cfg["draft_tensor_parallel_size"] == 1 and cfg["use_heterogeneous_vocab"] is True
    assert ER.check_pair(ER.ModelSpec.from_preset(t), d, 2)["vllm"].settings["draft_tp"] == 2


def test_the_rules_refuse_a_mutated_pair_and_the_checker_a_mutated_command():
    """The test can fail: a changed vocabulary or head count is refused, and a command with the
    draft's tensor parallel size left out is caught by the checker."""
    t = next(r for r in ROWS if r["model"] == "Llama-3.1-70B")
    drow = next(r for r in ROWS if r["model"] == "Llama-3.2-1B")
    ts, ds = ER.ModelSpec.from_preset(t), ER.ModelSpec.from_preset(drow)
    assert all(v.ok for v in ER.check_pair(ts, ds, 8, "bf16").values())
    other_vocab = ER.check_pair(ts, dataclasses.replace(ds, vocab=128000), 8, "bf16")
    assert not other_vocab["sglang"].ok and not other_vocab["trtllm"].ok and not other_vocab["llamacpp"].ok
    assert other_vocab["vllm"].settings["heterogeneous_vocab"] is True
    odd_heads = ER.check_pair(ts, dataclasses.replace(ds, heads=12, kv_heads=4), 8, "bf16")
    assert not odd_heads["sglang"].ok and odd_heads["vllm"].settings["draft_tp"] == 1
    assert not ER.check_pair(ts, dataclasses.replace(ds, tokenizer="qwen3"), 1)["llamacpp"].ok
    e = _commands(t, ds, ER.check_pair(ts, ds, 8, "bf16"), 8, "bf16")
    assert engine_refusal("vllm", e["vllm"], t, drow, 8, "bf16") == []
    argv = shlex.split(e["vllm"]["command"])
    cfg = json.loads(_flag(argv, "--speculative-config"))
    del cfg["draft_tensor_parallel_size"]
    argv[argv.index("--speculative-config") + 1] = json.dumps(cfg)
    broken = {**e["vllm"], "command": shlex.join(argv)}
    assert "draft_tensor_parallel_size not written: the draft takes the target's" in engine_refusal(
        "vllm", broken, t, drow, 8, "bf16"
    )
    first = e["llamacpp"]["by_batch"][0]
    ll = {**e["llamacpp"], "by_batch": [{**first, "command": first["command"].replace("-ngl all", "-ngl 99")}]}
    assert "layers left on the CPU" in engine_refusal("llamacpp", ll, t, drow, 8, "bf16")


def test_every_rule_cites_its_source():
    for r in ER.RULES:
        assert r.engine in D.ENGINE_KEYS and r.text and r.source
        assert re.search(r"(vllm-project/vllm|sgl-project/sglang|NVIDIA/TensorRT-LLM|ggml-org/llama.cpp) \S+", r.source)
    assert {r.engine for r in ER.RULES} == set(D.ENGINE_KEYS)
    assert "verify_equal_vocab_size_if_draft_model" in ER.rule("vllm", "vocab").source
    with pytest.raises(KeyError, match="no rule"):
        ER.rule("vllm", "nothing")


def test_compatible_drafts_lists_the_tokenizer_group_and_the_users_draft():
    t = next(r for r in ROWS if r["model"] == "Qwen2.5-7B")
    names = [d.name for d, _ in ER.compatible_drafts(t)]
    assert names == ["Qwen2.5-0.5B", "Qwen2.5-1.5B", "Qwen2.5-3B"]
    mine = ER.ModelSpec("my/draft", 5e8, "my/draft")  # shape unknown: accepted with caveats
    ((d, v),) = ER.compatible_drafts(t, drafts=[mine])
    assert d is mine and v["vllm"].ok and v["vllm"].caveats and v["vllm"].settings["draft_tp"] == 1


def test_memory_refusal_names_the_smallest_gpus():
    """Llama-3-70B in bf16: 141 GB of weights do not fit one 80 GB H100; 2 do. Llama-3.1-405B:
    811 GB, more than 8 H100s (640 GB); its 128 heads shard over 16, not 11."""
    h100 = H.get_accelerator("h100-sxm")
    t = ER.ModelSpec.from_preset(next(r for r in ROWS if r["model"] == "Llama-3-70B"))
    d = ER.ModelSpec.from_preset(next(r for r in ROWS if r["model"] == "Llama-3.2-1B"))
    fit = ER.memory_fit(t, d, h100, 1)
    weights = 2 * (t.params + d.params)
    assert fit.needed == pytest.approx(weights) and not fit.fits and fit.smallest_gpus == 2
    assert "the smallest --gpus that fits is 2" in fit.reason()
    assert ER.memory_fit(t, d, h100.times(2), 2).fits  # the per-device memory of a multi-device preset
    with_kv = ER.memory_fit(t, d, h100, 2, batch=64, context=8192)
    kv = 2 * 2 * 8192 * 64 * (80 * 8 * 128 + 16 * 8 * 64)  # keys and values of every layer, both models
    assert with_kv.needed == pytest.approx(weights + kv) and with_kv.smallest_gpus == 8  # 5 do not shard 64 heads
    big = ER.ModelSpec.from_preset(next(r for r in ROWS if r["model"] == "Llama-3.1-405B"))
    assert ER.memory_fit(big, d, h100, 8).smallest_gpus == 16
    assert ER.memory_fit(big, d, h100.with_bytes_per_param(1.0, "fp8"), 8).fits
    # the same count as the roofline plan's (sdsl.model.hardware.memory_needed is the one estimate)
    plan = H.plan_on_hardware(t.architecture(), lambda n: 0.6 + 0 * n, h100, (1e8, 2e9), 8, 2048)
    assert plan.memory_needed == pytest.approx(
        H.memory_needed(t.architecture(), H.draft_shape(plan.n_star, t.architecture()), 2.0, 8, 2048)
    )


def test_the_versions_table_loads_with_its_provenance():
    rows = records("engine_versions")
    prov = provenance("engine_versions")
    assert prov["source"] and prov["licence"] and set(prov["key"]) == {"engine", "feature"}
    assert {r["engine"] for r in rows} == set(D.ENGINE_KEYS)
    for r in rows:
        assert re.fullmatch(
            r"(vllm|sglang|tensorrt-llm)>=\d+\.\d+\.\d+(rc\d+)?|llama\.cpp build b\d+ or later", r["requirement"]
        )
        assert r["version"] in r["requirement"] and len(r["source"]) > 40
    for key in D.ENGINE_KEYS:
        e = D.ENGINES[key]
        assert e["requires"] == D.engine_requirement(key)["requirement"]
        assert "after" not in e["requires"] and "a release" not in e["requires"]
    assert (
        D.engine_requirement("vllm", ["use_heterogeneous_vocab", "num_speculative_tokens_per_batch_size"])[
            "requirement"
        ]
        == "vllm>=0.25.0"
    )
    with pytest.raises(KeyError, match="no vllm feature"):
        D.engine_requirement("vllm", ["warp drive"])

"""Shared helpers of the engine-reader tests: fixture paths, the provenance of every engine fixture
(:data:`FIXTURES`), and a seeded simulator of drafts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
ENG = ROOT / "engines"

#: How a fixture was made: copied as published; written in the published format from the engine's
#: source (its field names and format strings) with chosen counts; or in that format with counts
#: simulated from a known alpha by ``tests/fixtures/engines/make_fixtures.py``.
KINDS = ("verbatim", "built", "simulated")


@dataclass(frozen=True)
class Provenance:
    """Where a fixture comes from: ``kind`` (:data:`KINDS`), ``source`` (URL, pull request or issue,
    file and line or commit) and ``note`` (what it holds, and what is not as published)."""

    kind: str
    source: str
    note: str


_VLLM = "https://github.com/vllm-project/vllm"
_SGL = "https://github.com/sgl-project/sglang"
_TRT = "https://github.com/NVIDIA/TensorRT-LLM"
_LCPP = "https://github.com/ggml-org/llama.cpp"

#: Every engine fixture (a path relative to ``tests/fixtures``) with its provenance; a test checks
#: that each file has an entry and each entry a file.
FIXTURES: dict[str, Provenance] = {
    # -- vLLM ---------------------------------------------------------------------------------------
    "engines/vllm_dp_idle.prom": Provenance(
        "simulated",
        f"{_VLLM}/pull/24049 (model /home/models/Qwen3-0.6B, 8 engines, the PR's num_drafts per engine); "
        "vllm/v1/spec_decode/metrics.py SpecDecodingProm (names, HELP, _created)",
        "engines 0-6 at alpha 0.35, k 4 (seed 16); engine 7 idle with only two counters, both 0",
    ),
    "engines/vllm_pr24049_table.txt": Provenance(
        "built",
        f"{_VLLM}/pull/24049, description: the <details> 'Prometheus Query {{__name__=~\"vllm:spec.*\"}} Result' "
        "paste (its layout, labels and num_drafts per engine 22, 15, 29, 20, 25, 24, 27, 26)",
        "NOT the paste: counts simulated at alpha 0.35 with k 4 (the paste has five positions, 0-4, and other "
        "counts: engine 0 position 0 is 7 there, 9 here), _created as Go-style floats (the paste prints "
        "1756736798.733569), rows engine by engine (the paste orders the per-position rows by position); "
        "only parts of the paste are in the stored thread, so it could not be copied whole",
    ),
    "engines/vllm_fresh.prom": Provenance(
        "built",
        f'{_VLLM}/pull/41916 (label set engine="0",model_name="Qwen/Qwen3.6-35B-A3B-FP8", Go-style floats)',
        "a freshly started server: every counter pre-created at 0",
    ),
    "engines/vllm_fresh_later.prom": Provenance(
        "simulated", f"{_VLLM}/pull/41916 (as vllm_fresh.prom, same _created)", "40000 drafts at alpha 0.8, k 1"
    ),
    "engines/vllm_restarted.prom": Provenance(
        "simulated", f"{_VLLM}/pull/41916 (as vllm_fresh.prom, _created moved)", "15000 drafts since a restart"
    ),
    "engines/vllm_short_drafts.prom": Provenance(
        "simulated",
        f"{_VLLM}/pull/24127 test plan (facebook/opt-125m, ngram, num_speculative_tokens 5)",
        "40 % of the drafts shorter than k, alpha 0.7",
    ),
    "engines/vllm_log_v1.txt": Provenance(
        "verbatim",
        "https://github.com/eugr/spark-vllm-docker/pull/200 (SpecDecoding metrics lines, Qwen3.6-35B-A3B-FP8, k 2)",
        "two intervals: Accepted 419 / Drafted 434, Accepted 69 / Drafted 104",
    ),
    "engines/vllm_log_v1_old.txt": Provenance(
        "verbatim", f"{_VLLM}/pull/24127 (older line order, Draft acceptance rate first; k 5)", "one interval"
    ),
    "engines/vllm_log_v0.txt": Provenance(
        "verbatim", f"{_VLLM}/issues/7301 (V0 'Speculative metrics:' line, k 4)", "cumulative counts"
    ),
    "engines/vllm_log_short.txt": Provenance(
        "simulated",
        "vllm/v1/spec_decode/metrics.py SpecDecodingLogging.log format string",
        "ngram k 4, a third of the drafts shorter, 6 intervals at alpha 0.6",
    ),
    "engines/vllm_log_zero_accept.txt": Provenance(
        "built",
        "vllm/v1/spec_decode/metrics.py SpecDecodingLogging.log format string (vLLM main, "
        "commit 016a8587edb04ae53c913a1da9355a07dc0ca4ae) and the 'Engine 000:' line of vllm/v1/metrics/loggers.py",
        "an interval with nothing accepted: 0 of 1485 draft tokens, k 5 (297 drafts if every draft had 5 tokens)",
    ),
    "engines/vllm_requests_summary.json": Provenance(
        "simulated",
        f"{_VLLM}/pull/48915 (--per-request-spec-decode-metrics summary); the first response's "
        "metrics.speculative_decoding is the PR's example verbatim",
        "40 simulated requests (k 3, a quarter of the drafts shorter, alpha 0.45), one with speculative_decoding null",
    ),
    "engines/vllm_requests_detailed.jsonl": Provenance(
        "simulated", f"{_VLLM}/pull/48915 (detailed: per_step_accepted / per_step_drafted)", "the same 40 requests"
    ),
    "engines/vllm_requests_stream.txt": Provenance(
        "built",
        "https://github.com/mostlygeek/llama-swap/issues/1032 (the streamed final usage chunk as captured there)",
        "the metrics values are invented (the capture is cut in the thread)",
    ),
    "engines/vllm_bench_serve.json": Provenance(
        "simulated",
        "vllm/benchmarks/serve.py at commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1 (keys of --save-result; "
        f"{_VLLM}/pull/31739)",
        "6000 drafts at alpha 0.7, k 3 (seed 17); timings invented",
    ),
    "engines/vllm_get_metrics.json": Provenance(
        "simulated",
        "vllm/v1/metrics/reader.py at commit 08b782b3bbf9bb27c2a1f7098d752dda9d6a6463 (Counter, Vector, Gauge, "
        "Histogram saved with dataclasses.asdict)",
        "Qwen/Qwen3-8B, ngram k 4, 3000 drafts at alpha 0.6 (seed 17)",
    ),
    "engines/vllm_spec_decode_pr26498.txt": Provenance(
        "verbatim",
        f"{_VLLM}/pull/26498, description: two examples/offline_inference/spec_decode.py printouts (K=10; the "
        "second under '[SpecBench], Padding Enabled (Fixed), K=10'); the printout's format: "
        "examples/offline_inference/spec_decode.py at commit eb987dffa144e73e064c00de74f60f54da54ff99",
        "the first two of the PR's printouts, with their code fences and heading line",
    ),
    "engines/vllm_bench_text_pr48892.txt": Provenance(
        "verbatim",
        f"{_VLLM}/pull/48892, comment of 2026-08-03: 'vllm bench serve' Speculative Decoding sections of MTP 1 "
        "and MTP 8 (gsm8k, temp 0); format: vllm/benchmarks/serve.py",
        "two sections, k 1 and k 8, with their code fences and the 'vs MTP 8:' line between",
    ),
    # -- llama.cpp ----------------------------------------------------------------------------------
    "engines/llamacpp.prom": Provenance(
        "simulated",
        f"tools/server server_task_result_metrics::to_metrics ({_LCPP}/pull/26389): llamacpp: prefix, totals "
        "through std::stringstream (6 significant digits), per-position counts exact",
        "accepted total 2370367 printed 2.37037e+06, k 8, 30 % of drafts shorter, alpha 0.62",
    ),
    "engines/llamacpp_fresh.prom": Provenance(
        "built", "as llamacpp.prom, before the first speculative request", "counters 0, no per-position series"
    ),
    "engines/llamacpp_server_pr24536.log": Provenance(
        "verbatim",
        f"{_LCPP}/pull/24536, comment of 2026-06-15 (ruixiang63): llama-server print_timing and statistics lines "
        "of an EAGLE-3 request",
        "the lines from 'prompt eval time' to 'all slots are idle' (the two lines after them left out)",
    ),
    "engines/llamacpp_docs_statistics.txt": Provenance(
        "verbatim",
        f"{_LCPP}/blob/master/docs/speculative.md, section 'Statistics' (commit "
        "067318e633f77bbddc60f9eedc2a20142509f81d): the older statistics format (#calls = N, no rates)",
        "the first example block",
    ),
    "engines/llamacpp_speculative_pr3006.txt": Provenance(
        "verbatim",
        f"{_LCPP}/pull/3006, description, example 0 'Without heuristic': llama-speculative's printout "
        "(n_draft, n_predict, n_drafted, n_accept)",
        "the block and its 'decoded' line",
    ),
    "engines/llamacpp_server.log": Provenance(
        "simulated",
        "formats of llama.cpp tools/server print_timing and common/speculative.cpp "
        f"common_speculative_print_stats as in {_LCPP}/pull/24536",
        "20 requests, draft-simple, --spec-draft-n-max 4, a quarter of the drafts cut short, alpha 0.62 (seed 18)",
    ),
    # -- SGLang -------------------------------------------------------------------------------------
    "engines/sglang.prom": Provenance(
        "simulated",
        "SGLang python/sglang/srt/metrics/collector.py SchedulerMetricsCollector (interval gauges, counters)",
        "EAGLE chain, 3 steps, 4 draft tokens per step, alpha 0.72",
    ),
    "engines/sglang_gauges_only.prom": Provenance(
        "simulated", "as sglang.prom, an older SGLang without the counters", "gauges only"
    ),
    "engines/sglang_num_steps.prom": Provenance(
        "simulated",
        "SGLang python/sglang/srt/observability/metrics_collector.py at commit "
        "016d8605e45876180312e29d6988e1de06562472 (spec_num_steps, spec_num_draft_tokens gauges)",
        "EAGLE chain, 4 steps, 20000 steps at alpha 0.65 (seed 17)",
    ),
    "engines/sglang_meta_info_pr33518.json": Provenance(
        "verbatim",
        f"{_SGL}/pull/33518, comment of 2026-08-07 (ormandj): one request's spec fields (DeepSeek-V4-Flash, DSpark "
        "block size 5, completion_tokens 106)",
        "the JSON object as pasted",
    ),
    "engines/sglang_requests.jsonl": Provenance(
        "simulated",
        "SGLang fill_spec_decoding_meta (python/sglang/srt/managers/; spec_verify_ct from "
        f"{_SGL}/pull/3152, the histogram from {_SGL}/pull/18332) and the field names of {_SGL}/pull/33518",
        "30 /generate responses, EAGLE chain k 3, alpha 0.6 (seed 18)",
    ),
    "engines/sglang_finish_log.txt": Provenance(
        "simulated",
        f"the 'Finish: obj=..., out={{...}}' log line of --log-requests as in {_SGL}/pull/18332 and "
        f"{_SGL}/pull/11144 (Python's repr of the output dict; the older name spec_accept_histogram)",
        "3 requests, k 4, alpha 0.7 (seed 18); the GenerateReqInput fields shortened",
    ),
    "engines/sglang_bench_pr13376.txt": Provenance(
        "verbatim",
        f"{_SGL}/pull/13376, description: bench_serving result of the server with the threshold (NGRAM, "
        "speculative-num-draft-tokens 32)",
        "the result block up to 'Accept length: 5.86' (the latency lines after it left out)",
    ),
    "engines/sglang_bench.jsonl": Provenance(
        "simulated",
        "python/sglang/bench_serving.py: the result dict --output-file appends (a subset of its keys)",
        "EAGLE chain of 3 steps, 6000 steps at alpha 0.7 (seed 18); timings invented",
    ),
    # -- TensorRT-LLM -------------------------------------------------------------------------------
    "engines/trtllm.prom": Provenance(
        "simulated",
        "tensorrt_llm/metrics/collector.py MetricsCollector (num_draft_tokens / num_accepted_tokens counters, "
        f"acceptance_length gauge), trtllm_speculative_config_info of {_TRT}/pull/12545",
        "no per-position counts, EAGLE-3 chain k 3, alpha 0.66",
    ),
    "engines/trtllm_fresh.prom": Provenance(
        "built", "as trtllm.prom before the first step", "counters declared, no sample"
    ),
    "engines/trtllm_per_position.prom": Provenance(
        "simulated",
        f"{_TRT}/pull/12636: trtllm_spec_decode_{{drafted,accepted}}_tokens_total{{token_position}} "
        "(tensorrt_llm/metrics/collector.py, log_request_metrics_dict)",
        "k 3, 5000 drafts at alpha 0.66, 10 % shorter (seed 18)",
    ),
    "engines/trtllm_iteration_stats.json": Provenance(
        "simulated",
        f"GET /metrics of trtllm-serve: IterationStats JSON with specDecodingStats ({_TRT}/pull/19311; field "
        "names numDraftTokens, numAcceptedTokens, numRequestsWithDraftTokens, acceptanceLength, iterLatencyMS, "
        "draftOverhead as TensorRT-LLM's own tests read them)",
        "152 iterations, 2 context-only, 8 requests each, EAGLE-3 k 3, alpha 0.66 (seed 18)",
    ),
    # -- the older synthetic vLLM scrapes -----------------------------------------------------------
    "vllm_single.txt": Provenance(
        "simulated", "vllm/v1/spec_decode/metrics.py SpecDecodingProm", "one model, alpha 0.75, k 3, 4000 drafts"
    ),
    "vllm_multi.txt": Provenance("simulated", "as vllm_single.txt", "several models and engines"),
    "vllm_before.txt": Provenance("simulated", "as vllm_single.txt", "the earlier of two scrapes"),
    "vllm_after.txt": Provenance("simulated", "as vllm_single.txt", "the later scrape: 2000 drafts more"),
}


def simulate(rng: np.random.Generator, alpha: float, k: int, drafts: int, short: float = 0.0):
    """Draft lengths (``k``, or 1..k-1 with probability ``short``) and accepted counts under the
    truncated geometric law (method notes, section 9); the same law as make_fixtures.py."""
    g = np.full(drafts, k)
    if short:
        cut = rng.random(drafts) < short
        g[cut] = rng.integers(1, k, cut.sum())
    acc = np.minimum(rng.geometric(1.0 - alpha, drafts) - 1, g)
    return g, acc


def per_pos(acc: np.ndarray, k: int) -> list[int]:
    return [int(np.sum(acc > i)) for i in range(k)]

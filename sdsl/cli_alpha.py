"""The options of ``sdsl alpha``, apart from :mod:`sdsl.measure.report` that runs it: building the
command line's parser (every ``sdsl`` command builds all of it) then imports argparse only, and
``sdsl plan`` does not pay for importing the readers."""

from __future__ import annotations

import argparse

__all__ = ["add_arguments"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``sdsl alpha`` (argparse only: building the parser stays light)."""
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="a saved /metrics scrape (vLLM, llama.cpp, SGLang, TensorRT-LLM, or a pasted Prometheus "
        "query table), a vLLM log, vLLM per-request JSON, a 'vllm bench serve --save-result' JSON, or vLLM's "
        "LLM.get_metrics() saved as json.dump([dataclasses.asdict(m) for m in llm.get_metrics()], f); the "
        "format is detected; - reads standard input",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    p.add_argument(
        "--delta",
        action="store_true",
        help="FILES are successive scrapes of one server, earliest first: report the traffic between "
        "the first and the last (a restart is told from files in the wrong order through _created)",
    )
    p.add_argument(
        "--format",
        dest="fmt",
        metavar="FMT",
        help="skip detection: vllm-prometheus, llamacpp-prometheus, sglang-prometheus, trtllm-prometheus, "
        "vllm-log, vllm-requests, vllm-bench or vllm-get-metrics",
    )
    p.add_argument(
        "--gamma",
        metavar="K",
        help="draft length k, for exports that do not carry it (TensorRT-LLM without max_draft_len; "
        "SGLang without spec_num_steps, with tree drafts: the number of steps; a vllm bench serve result "
        "without per-position rates); refused when it differs from the k an export carries",
    )
    p.add_argument("--level", metavar="L", default="0.95", help="confidence level of the intervals (default 0.95)")
    p.add_argument(
        "--seed",
        metavar="S",
        help="seed of the bootstrap over requests of vLLM per-request JSON, an integer in [0, 2^63 - 1] (default 0)",
    )
    plan = p.add_argument_group("what alpha implies (optional): the target and the draft that was measured")
    plan.add_argument("--preset", metavar="NAME", help="target preset of data/presets.csv ('sdsl presets')")
    plan.add_argument("--target-params", metavar="M", help="target size M, in parameters")
    plan.add_argument("--target-tokens", metavar="D'", help="target pre-training tokens D'")
    plan.add_argument("--draft-params", metavar="N", help="size N of the measured draft, in parameters")
    plan.add_argument("--draft-tokens", metavar="D", help="pre-training tokens D of the draft family")

"""Readers of what serving engines export about speculative decoding, into alpha with its
uncertainty (method notes, section 9).

* :mod:`.prometheus` -- the text exposition through ``prometheus_client`` (samples, ``_created``);
* :mod:`.vllm` -- vLLM scrapes: several models and engines, idle engines skipped, zero counters,
  resets through ``_created``, differences of successive scrapes, engines pooled per model;
* :mod:`.llamacpp` -- llama.cpp (vLLM's schema, ``llamacpp:`` prefix, 6 significant digits);
* :mod:`.vllm_log` -- vLLM's ``SpecDecoding metrics:`` (V1) and ``Speculative metrics:`` (V0) lines;
* :mod:`.vllm_requests` -- vLLM's per-request acceptance histograms and per-step arrays;
* :mod:`.vllm_json` -- ``vllm bench serve --save-result`` results and saved ``LLM.get_metrics()``;
* :mod:`.vllm_printout` -- the printouts of ``examples/offline_inference/spec_decode.py`` and of
  ``vllm bench serve``;
* :mod:`.sglang` -- SGLang's scrape, mean acceptance length inverted (chain drafts only);
  :mod:`.sglang_requests` -- its per-request ``meta_info`` (histograms); :mod:`.sglang_bench` --
  ``bench_serving``'s acceptance length;
* :mod:`.trtllm` -- TensorRT-LLM's ``/prometheus/metrics`` (per-position counters, or the totals
  inverted); :mod:`.trtllm_stats` -- its ``GET /metrics`` iteration stats;
* :mod:`.llamacpp_log` -- llama.cpp's ``statistics`` and ``print_timing`` lines and
  ``llama-speculative``'s printout;
* :mod:`.estimate` -- the counts of each kind into an estimate (exact, bounded, or inverted);
* :mod:`.detect` -- which of these a file is, and :func:`read_files`.

Every reader returns an :class:`~.types.EngineRead` of :class:`~.types.AlphaReading` s.
"""

from sdsl.measure.engines.detect import (
    FORMATS,
    detect_format,
    read_files,
    read_text,
    read_texts,
)
from sdsl.measure.engines.types import AlphaReading, EngineRead, ShortDrafts, Skipped

__all__ = [
    "FORMATS",
    "detect_format",
    "read_files",
    "read_text",
    "read_texts",
    "AlphaReading",
    "EngineRead",
    "ShortDrafts",
    "Skipped",
]

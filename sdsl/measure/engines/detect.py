"""Which engine wrote a file, and reading it with the right reader.

Formats (:data:`FORMATS`): a Prometheus scrape of vLLM (``vllm:spec_decode_*``), llama.cpp
(``llamacpp:spec_decode_*``), SGLang (``sglang:spec_*``) or TensorRT-LLM (``trtllm_spec_decode_*``);
a vLLM log with ``SpecDecoding metrics:`` (V1) or ``Speculative metrics:`` (V0) lines; vLLM's
per-request JSON (``metrics.speculative_decoding``). :func:`detect_format` decides from the content,
not the file name, and says why.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sdsl.measure.engines.prometheus import looks_like_prometheus, parse_scrape
from sdsl.measure.engines.types import EngineRead

__all__ = ["FORMATS", "detect_format", "read_text", "read_files"]

#: Source formats, each with a one-line description.
FORMATS = {
    "vllm-prometheus": "vLLM /metrics scrape (vllm:spec_decode_* counters)",
    "llamacpp-prometheus": "llama.cpp /metrics scrape (llamacpp:spec_decode_* counters)",
    "sglang-prometheus": "SGLang /metrics scrape (sglang:spec_accept_length / spec_accept_rate gauges)",
    "trtllm-prometheus": "TensorRT-LLM /metrics scrape (trtllm_spec_decode_* counters and gauge)",
    "vllm-log": "vLLM log lines (SpecDecoding metrics: ... / Speculative metrics: ...)",
    "vllm-requests": "vLLM per-request JSON (metrics.speculative_decoding, --per-request-spec-decode-metrics)",
}
_SCRAPE_PREFIXES = (
    ("vllm:spec_decode", "vllm-prometheus"),
    ("llamacpp:spec_decode", "llamacpp-prometheus"),
    ("trtllm_spec_decode", "trtllm-prometheus"),
    ("sglang:spec_", "sglang-prometheus"),
)


def detect_format(text: str, where: str = "file") -> tuple[str, str]:
    """``(format, reason)`` of ``text``; ``ValueError`` naming ``where`` if none fits."""
    from sdsl.measure.engines.vllm_log import looks_like_vllm_log
    from sdsl.measure.engines.vllm_requests import looks_like_requests

    stripped = text.lstrip()
    if looks_like_requests(text) and stripped[:1] in ("{", "[", "d"):
        return "vllm-requests", "JSON with metrics.speculative_decoding (acceptance_histogram, num_spec_steps)"
    if looks_like_vllm_log(text):
        return "vllm-log", "log lines with 'SpecDecoding metrics:' or 'Speculative metrics:'"
    if stripped[:1] in ("{", "[") and '"speculative_decoding"' in text:
        return "vllm-requests", "JSON with metrics.speculative_decoding"
    if stripped[:1] == "{" and '"resultType"' in text:
        scrape = parse_scrape(text, where)
        for prefix, fmt in _SCRAPE_PREFIXES:
            if scrape.has_prefix(prefix):
                return fmt, f"Prometheus HTTP API answer with {prefix}* metrics"
    if looks_like_prometheus(text):
        scrape = parse_scrape(text, where)
        for prefix, fmt in _SCRAPE_PREFIXES:
            if scrape.has_prefix(prefix):
                kind = "query-result table" if scrape.table else "scrape"
                return fmt, f"Prometheus {kind} with {prefix}* metrics"
        raise ValueError(
            f"{where}: a Prometheus scrape without speculative-decoding metrics (vllm:spec_decode_*, "
            "llamacpp:spec_decode_*, sglang:spec_*, trtllm_spec_decode_*); is speculative decoding on?"
        )
    raise ValueError(f"{where}: not a recognised source ({'; '.join(FORMATS.values())})")


def _read_path(path: str | os.PathLike) -> str:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{path}: no such file")
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None


def read_text(
    text: str, path: str, *, fmt: str | None = None, level: float = 0.95, gamma: int | None = None, seed: int = 0
) -> EngineRead:
    """Read one source given as text (format detected unless ``fmt``)."""
    return read_texts([text], [path], fmt=fmt, level=level, gamma=gamma, seed=seed, delta=False)


def read_texts(
    texts: Sequence[str],
    paths: Sequence[str],
    *,
    fmt: str | None = None,
    level: float = 0.95,
    gamma: int | None = None,
    seed: int = 0,
    delta: bool = False,
) -> EngineRead:
    """Read one source, or with ``delta`` successive scrapes of one server (earlier first)."""
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    found = [detect_format(t, p) if fmt is None else (fmt, "given") for t, p in zip(texts, paths)]
    kinds = {f for f, _ in found}
    if len(kinds) != 1:
        raise ValueError(
            f"--delta needs scrapes of one engine, got {', '.join(f'{p}: {f}' for p, (f, _) in zip(paths, found))}"
        )
    kind, why = found[-1]
    if delta and kind in ("vllm-log", "vllm-requests"):
        raise ValueError(
            f"--delta applies to /metrics scrapes; {paths[0]} is {FORMATS[kind]} (its counts are "
            "already per interval or per request)"
        )
    if kind == "vllm-log":
        from sdsl.measure.engines.vllm_log import read_vllm_log

        return read_vllm_log(texts[0], paths[0], level=level, detected_by=why)
    if kind == "vllm-requests":
        from sdsl.measure.engines.vllm_requests import read_vllm_requests

        return read_vllm_requests(texts[0], paths[0], level=level, seed=seed, detected_by=why)
    scrapes = [parse_scrape(t, p) for t, p in zip(texts, paths)]
    if kind == "vllm-prometheus":
        from sdsl.measure.engines.vllm import read_scrapes

        return read_scrapes(scrapes, paths, level=level, delta=delta, detected_by=why)
    if kind == "llamacpp-prometheus":
        from sdsl.measure.engines.llamacpp import read_llamacpp

        return read_llamacpp(scrapes, paths, level=level, delta=delta, detected_by=why)
    if kind == "sglang-prometheus":
        from sdsl.measure.engines.sglang import read_sglang

        return read_sglang(scrapes, paths, level=level, gamma=gamma, delta=delta, detected_by=why)
    from sdsl.measure.engines.trtllm import read_trtllm

    return read_trtllm(scrapes, paths, level=level, gamma=gamma, delta=delta, detected_by=why)


def read_files(
    paths: Sequence[str | os.PathLike],
    *,
    fmt: str | None = None,
    level: float = 0.95,
    gamma: int | None = None,
    seed: int = 0,
    delta: bool = False,
) -> list[EngineRead]:
    """Read every file on its own, or with ``delta`` all of them as successive scrapes of one
    server (one :class:`EngineRead`).

    Parameters
    ----------
    paths : the files: Prometheus scrapes (vLLM, llama.cpp, SGLang, TensorRT-LLM), vLLM log lines or
        per-request JSON; the format is detected unless ``fmt`` names it.
    fmt : force a format (one of the readers' names).
    level : confidence level of the intervals, in (0, 1).
    gamma : the draft length ``k`` where the export does not carry it (TensorRT-LLM).
    seed : seed of the per-request bootstrap.
    delta : the files are successive scrapes of one server: alpha over the traffic between them.

    Returns
    -------
    list of EngineRead
        One per file (one in all with ``delta``), each with alpha per model and engine.
    """
    if not paths:
        raise ValueError("no file given")
    names = [str(p) for p in paths]
    texts = [_read_path(p) for p in paths]
    if delta:
        return [read_texts(texts, names, fmt=fmt, level=level, gamma=gamma, seed=seed, delta=True)]
    return [read_texts([t], [n], fmt=fmt, level=level, gamma=gamma, seed=seed) for t, n in zip(texts, names)]

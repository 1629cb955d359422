"""Which engine wrote a file, and reading it with the right reader.

Formats (:data:`FORMATS`): a Prometheus scrape of vLLM (``vllm:spec_decode_*``), llama.cpp
(``llamacpp:spec_decode_*``), SGLang (``sglang:spec_*``) or TensorRT-LLM (``trtllm_spec_decode_*``,
``GET /prometheus/metrics``); a vLLM log with ``SpecDecoding metrics:`` (V1) or ``Speculative
metrics:`` (V0) lines; vLLM's per-request JSON (``metrics.speculative_decoding``); the JSON of
``vllm bench serve --save-result`` (``spec_decode_*`` keys) and ``LLM.get_metrics()`` saved as a JSON
list (:mod:`.vllm_json`); the printouts of vLLM's ``examples/offline_inference/spec_decode.py`` and
of ``vllm bench serve`` (:mod:`.vllm_printout`); SGLang's per-request ``meta_info``
(:mod:`.sglang_requests`) and ``bench_serving`` result (:mod:`.sglang_bench`); llama.cpp's log lines
(:mod:`.llamacpp_log`); TensorRT-LLM's ``GET /metrics`` iteration stats (:mod:`.trtllm_stats`).
:func:`detect_format` decides from the content, not the file name, and says why; a file of no known
format is refused in one line that names every format read (:func:`refusal`).

A file name ``-`` is standard input (named ``<stdin>`` in messages). Files are UTF-8, or UTF-16 with
its byte-order mark; a UTF-8 byte-order mark and CRLF line ends are read as the text without them;
an empty file or a directory is refused saying so.
``gamma`` is for exports that do not carry ``k``: against one that does, a different value is
refused naming both (:func:`read_texts`).
"""

from __future__ import annotations

import codecs
import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from sdsl.measure.engines.prometheus import looks_like_prometheus, normalise_text, parse_scrape
from sdsl.measure.engines.types import EngineRead, label_text
from sdsl.validation import show, shown

__all__ = ["FORMATS", "STDIN", "detect_format", "refusal", "read_text", "read_texts", "read_files"]

#: Source formats, each with a one-line description.
FORMATS = {
    "vllm-prometheus": "vLLM /metrics scrape (vllm:spec_decode_* counters)",
    "llamacpp-prometheus": "llama.cpp /metrics scrape (llamacpp:spec_decode_* counters)",
    "sglang-prometheus": "SGLang /metrics scrape (sglang:spec_accept_length / spec_accept_rate gauges)",
    "trtllm-prometheus": "TensorRT-LLM GET /prometheus/metrics scrape (trtllm_spec_decode_* counters, per token_position)",
    "vllm-log": "vLLM log lines (SpecDecoding metrics: ... / Speculative metrics: ...)",
    "vllm-requests": "vLLM per-request JSON (metrics.speculative_decoding, --per-request-spec-decode-metrics)",
    "vllm-bench": "vllm bench serve --save-result JSON (spec_decode_* keys)",
    "vllm-get-metrics": "vLLM LLM.get_metrics() saved as a JSON list (vllm:spec_decode_* Counter and Vector)",
    "vllm-spec-decode": "vLLM examples/offline_inference/spec_decode.py printout (num_drafts: ..., acceptance at token i: ...)",
    "vllm-bench-text": "vllm bench serve printed result (its Speculative Decoding section)",
    "sglang-requests": "SGLang per-request meta_info JSON (spec_verify_ct, spec_correct_drafts_histogram)",
    "sglang-bench": "SGLang bench_serving result (Accept length: printed, accept_length in its JSON lines)",
    "llamacpp-log": "llama.cpp log lines (server print_timing draft acceptance, statistics #gen drafts, "
    "llama-speculative n_drafted / n_accept)",
    "trtllm-iteration-stats": "TensorRT-LLM GET /metrics iteration stats JSON (specDecodingStats)",
}
#: The name of standard input (the file ``-``) in messages and reports.
STDIN = "<stdin>"
#: Formats whose reader takes ``gamma`` (the export may not carry ``k``; the reader refuses one that
#: contradicts the ``k`` it carries).
_TAKES_GAMMA = (
    "sglang-prometheus",
    "trtllm-prometheus",
    "vllm-spec-decode",
    "vllm-bench-text",
    "sglang-requests",
    "sglang-bench",
    "llamacpp-log",
    "trtllm-iteration-stats",
)
#: Formats that are successive scrapes of one server's counters (``--delta`` applies).
_SCRAPES = ("vllm-prometheus", "llamacpp-prometheus", "sglang-prometheus", "trtllm-prometheus")
_SCRAPE_PREFIXES = (
    ("vllm:spec_decode", "vllm-prometheus"),
    ("llamacpp:spec_decode", "llamacpp-prometheus"),
    ("trtllm_spec_decode", "trtllm-prometheus"),
    ("sglang:spec_", "sglang-prometheus"),
)


def refusal(where: str) -> str:
    """The one line that refuses a file of no known format, naming every format read, by engine."""
    engines = {"vllm": "vLLM", "llamacpp": "llama.cpp", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
    groups = [
        f"{name} ({', '.join(k for k in FORMATS if k.split('-', 1)[0] == prefix)})" for prefix, name in engines.items()
    ]
    return (
        f"{where}: not a recognised source; sdsl alpha reads {', '.join(groups)}: the format is detected from the "
        "content or named with --format (sdsl alpha --help describes them)"
    )


def detect_format(text: str, where: str = "file") -> tuple[str, str]:
    """``(format, reason)`` of ``text``; ``ValueError`` naming ``where`` and the formats read if none fits."""
    text = normalise_text(text)
    from sdsl.measure.engines.llamacpp_log import looks_like_llamacpp_log
    from sdsl.measure.engines.sglang_bench import looks_like_sglang_bench
    from sdsl.measure.engines.sglang_requests import looks_like_sglang_requests
    from sdsl.measure.engines.trtllm_stats import looks_like_iteration_stats
    from sdsl.measure.engines.vllm_json import looks_like_vllm_bench, looks_like_vllm_metrics
    from sdsl.measure.engines.vllm_log import looks_like_vllm_log
    from sdsl.measure.engines.vllm_printout import looks_like_bench_text, looks_like_spec_decode_example
    from sdsl.measure.engines.vllm_requests import looks_like_requests

    stripped = text.lstrip()
    if looks_like_sglang_bench(text):
        return "sglang-bench", "SGLang bench_serving result (Backend: sglang / accept_length)"
    if looks_like_iteration_stats(text):
        return "trtllm-iteration-stats", "JSON iteration stats with specDecodingStats (TensorRT-LLM GET /metrics)"
    if looks_like_vllm_bench(text) and not looks_like_requests(text):
        return "vllm-bench", "JSON object with vllm bench serve's keys (spec_decode_*, request_throughput)"
    if looks_like_vllm_metrics(text) and not looks_like_requests(text):
        return "vllm-get-metrics", "JSON list of named vllm:* metrics (LLM.get_metrics())"
    if looks_like_requests(text) and stripped[:1] in ("{", "[", "d"):
        return "vllm-requests", "JSON with metrics.speculative_decoding (acceptance_histogram, num_spec_steps)"
    if looks_like_sglang_requests(text):
        return "sglang-requests", "meta_info with spec_verify_ct (SGLang per-request speculative stats)"
    if looks_like_vllm_log(text):
        return "vllm-log", "log lines with 'SpecDecoding metrics:' or 'Speculative metrics:'"
    if looks_like_bench_text(text):
        return "vllm-bench-text", "vllm bench serve printout with a 'Speculative Decoding' section"
    if looks_like_spec_decode_example(text):
        return "vllm-spec-decode", "spec_decode.py printout (num_drafts:, num_accepted_tokens:)"
    if looks_like_llamacpp_log(text):
        return "llamacpp-log", "llama.cpp draft acceptance / statistics / n_drafted lines"
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
    raise ValueError(refusal(where))


def _decode(data: bytes, where: str) -> str:
    """The text of a file's bytes: UTF-8 (a byte-order mark read as none), or UTF-16 that starts with
    its byte-order mark (what Windows PowerShell's ``>`` writes)."""
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    try:
        text = data.decode("utf-16" if utf16 else "utf-8")
    except UnicodeDecodeError as exc:
        what = "starts with a UTF-16 byte-order mark but is not UTF-16 text" if utf16 else "not a UTF-8 text file"
        raise ValueError(f"{where}: {what} (byte {exc.start} is {data[exc.start]:#04x})") from None
    text = normalise_text(text).replace("\r", "\n")  # universal newlines, as text mode reads a file
    if not data:
        raise ValueError(f"{where}: empty (0 bytes): nothing to read")
    if not text.strip():
        raise ValueError(f"{where}: empty (only whitespace): nothing to read")
    return text


def _read_path(path: str | os.PathLike) -> str:
    """The text of a file, or of standard input for ``-``."""
    if str(path) == "-":
        if sys.stdin is None or sys.stdin.closed:
            raise ValueError(f"- ({STDIN}): standard input is closed")
        stream = getattr(sys.stdin, "buffer", None)  # bytes: the encoding is the file's, not the locale's
        return _decode(stream.read() if stream is not None else sys.stdin.read().encode("utf-8"), STDIN)
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{path}: a directory, not a file (give the files in it)")
    if not p.exists():
        raise ValueError(f"{path}: no such file")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return _decode(data, str(path))


def _check_gamma(read: EngineRead, kind: str, gamma: int | None) -> EngineRead:
    """Refuse ``gamma`` against a series whose export carries another ``k``; say so when it is not
    used (the format's reader takes ``k`` from the export only)."""
    if gamma is None or kind in _TAKES_GAMMA:
        return read
    for r in read.readings:
        if r.gamma is not None and r.gamma != gamma:
            raise ValueError(
                f"{shown('gamma')} {gamma} conflicts with k = {r.gamma} that {read.path} carries for "
                f"{label_text(r.labels)}: drop {shown('gamma')}, which is for exports that do not carry k"
            )
    if not read.readings or any(r.gamma is None for r in read.readings):
        note = f"{shown('gamma')} {gamma} not used: the reader of a {FORMATS[kind]} takes k from the export only"
        return replace(read, notes=read.notes + (note,))
    return read


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
    for t, p in zip(texts, paths):
        if not isinstance(t, str):
            raise ValueError(f"{p}: expected text, got {type(t).__name__}")
    texts = [normalise_text(t) for t in texts]
    found = [detect_format(t, p) if fmt is None else (fmt, "given") for t, p in zip(texts, paths)]
    kinds = {f for f, _ in found}
    if len(kinds) != 1:
        raise ValueError(
            f"--delta needs scrapes of one engine, got {', '.join(f'{p}: {f}' for p, (f, _) in zip(paths, found))}"
        )
    kind, why = found[-1]
    if delta and kind not in _SCRAPES:
        raise ValueError(
            f"--delta applies to /metrics scrapes; {paths[0]} is {FORMATS[kind]} (its counts are "
            "already per interval or per request)"
        )
    return _check_gamma(_read_kind(kind, why, texts, paths, level, gamma, seed, delta), kind, gamma)


#: Formats whose reader bootstraps over requests (``seed``).
SEEDED = ("vllm-requests", "sglang-requests")
_SEEDED = SEEDED[1:]
#: The readers of one text that take ``gamma``: format -> (module, function).
_TEXT_READERS = {
    "vllm-spec-decode": ("vllm_printout", "read_spec_decode_example"),
    "vllm-bench-text": ("vllm_printout", "read_bench_text"),
    "sglang-requests": ("sglang_requests", "read_sglang_requests"),
    "sglang-bench": ("sglang_bench", "read_sglang_bench"),
    "llamacpp-log": ("llamacpp_log", "read_llamacpp_log"),
    "trtllm-iteration-stats": ("trtllm_stats", "read_iteration_stats"),
}


def _read_kind(
    kind: str,
    why: str,
    texts: Sequence[str],
    paths: Sequence[str],
    level: float,
    gamma: int | None,
    seed: int,
    delta: bool,
) -> EngineRead:
    """The reader of ``kind`` on the texts."""
    if kind in _TEXT_READERS:
        module, func = _TEXT_READERS[kind]
        reader = getattr(importlib.import_module(f"sdsl.measure.engines.{module}"), func)
        extra = {"seed": seed} if kind in _SEEDED else {}
        return reader(texts[0], paths[0], level=level, gamma=gamma, detected_by=why, **extra)
    if kind == "vllm-log":
        from sdsl.measure.engines.vllm_log import read_vllm_log

        return read_vllm_log(texts[0], paths[0], level=level, detected_by=why)
    if kind == "vllm-bench":
        from sdsl.measure.engines.vllm_json import read_vllm_bench

        return read_vllm_bench(texts[0], paths[0], level=level, gamma=gamma, detected_by=why)
    if kind == "vllm-get-metrics":
        from sdsl.measure.engines.vllm_json import read_vllm_metrics

        return read_vllm_metrics(texts[0], paths[0], level=level, detected_by=why)
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
    paths : the files: Prometheus scrapes (vLLM, llama.cpp, SGLang, TensorRT-LLM), vLLM log lines,
        per-request JSON, ``vllm bench serve`` results or saved ``LLM.get_metrics()``; the format is detected unless ``fmt`` names it. ``-`` is standard input.
    fmt : force a format (one of the readers' names).
    level : confidence level of the intervals, in (0, 1).
    gamma : the draft length ``k`` where the export does not carry it (TensorRT-LLM; SGLang's tree
        drafts: the number of steps; a ``vllm bench serve`` result without per-position rates); a
        different ``k`` carried by the export is refused.
    seed : seed of the per-request bootstrap.
    delta : the files are successive scrapes of one server: alpha over the traffic between them.

    Returns
    -------
    list of EngineRead
        One per file (one in all with ``delta``), each with alpha per model and engine.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise ValueError(f"paths must be a list of files, got {show(paths)} (a list of one: [{show(paths)}])")
    for i, p in enumerate(paths):  # a path as the user names a file: bytes (b'/x') have no encoding
        if not (isinstance(p, str) or (isinstance(p, os.PathLike) and isinstance(os.fspath(p), str))):
            raise ValueError(f"paths[{i}] must be a file's path (a str or pathlib.Path), got {show(p)}")
    if not paths:
        raise ValueError("no file given")
    names = [STDIN if str(p) == "-" else str(p) for p in paths]
    if names.count(STDIN) > 1:
        raise ValueError(f"- (standard input) given {names.count(STDIN)} times: it can be read once")
    texts = [_read_path(p) for p in paths]
    if delta:
        return [read_texts(texts, names, fmt=fmt, level=level, gamma=gamma, seed=seed, delta=True)]
    return [read_texts([t], [n], fmt=fmt, level=level, gamma=gamma, seed=seed) for t, n in zip(texts, names)]

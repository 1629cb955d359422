"""Measure the seconds of one forward pass on the user's device: ``sdsl steps measure``.

The step-time model (:func:`sdsl.model.hardware.step_time`) is fitted to measured passes
(:mod:`sdsl.model.calibration`). This module measures them, by the method of the committed H200
measurement (``data/h200_step_times.yml``), on whatever device the user has:

* a **shape** is a Llama-style dense decoder: from a preset of ``data/presets.csv``, from a Hugging
  Face ``config.json`` file (read, never downloaded) or from numbers (:func:`shape_from_preset`,
  :func:`shape_from_config`, :func:`shape`); ``max_layers`` keeps the first layers of a model too
  large for the device (Llama-3-70B's shape with 40 of its 80 layers), said so in its name;
* weights are drawn at random in the chosen precision (time does not depend on their values);
  untied models have an input embedding and a separate output head, tied ones share one matrix;
* per layer: RMSNorm, one fused QKV product, the new keys and values written into a preallocated
  cache of ``context + tokens`` positions per sequence, scaled-dot-product attention of the new
  queries against the whole cache, the output projection, RMSNorm, one fused gate-and-up product,
  SiLU times up, the down projection; then RMSNorm and the output head on the last position;
* each ``(batch, context, tokens)`` of the grid is timed in two attention layouts -- grouped-query
  attention through PyTorch's ``enable_gqa`` and the query heads of each key-value head folded into
  one query axis -- and the faster is kept;
* on a CUDA device the pass is captured once in a CUDA graph and replayed, as vLLM and SGLang run
  decoding (``graph_s``, median of ``repeats`` replays after warm-up timed with CUDA events), and
  also launched eagerly (``eager_s``); elsewhere it runs eagerly (``eager_s``, median of
  ``repeats`` after warm-up).

The CSV has the columns of :data:`sdsl.model.calibration.STEP_COLUMNS` and then the measured
seconds; a YAML record beside it holds the provenance (device, driver, torch, precision, graphs,
threads, date). Both appear whole or not at all, and an existing file is never overwritten.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdsl.model.calibration import STEP_COLUMNS
from sdsl.validation import shown

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "DTYPES",
    "METHOD",
    "shape",
    "shape_from_preset",
    "shape_from_config",
    "measure",
    "write_measurement",
    "read_passes",
    "format_passes",
]

#: The precisions a pass can be measured in (bytes per weight).
DTYPES = {"bf16": 2, "fp16": 2, "fp32": 4}

#: The method, as written into each measurement's provenance record.
METHOD = (
    "One forward pass of a Llama-style dense decoder with random weights: per layer RMSNorm, one fused QKV "
    "product, the new keys and values written into a preallocated cache of context + tokens positions, "
    "scaled-dot-product attention of the new queries against the whole cache, the output projection, RMSNorm, "
    "one fused gate-and-up product, SiLU times up, the down projection; then RMSNorm and the output head on the "
    "last position. The faster of two attention layouts (enable_gqa; query heads folded per key-value head). On a "
    "CUDA device: the pass captured in a CUDA graph and replayed (graph_s, median of the repeats timed with CUDA "
    "events after warm-up) and launched eagerly (eager_s); elsewhere eagerly (eager_s, median after warm-up)."
)


def shape(
    name: str,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    intermediate: int,
    vocab: int,
    tied: bool,
    max_layers: int | None = None,
) -> dict[str, Any]:
    """One shape's row of :data:`~sdsl.model.calibration.STEP_COLUMNS` (without the pass): its
    parameters counted as the H200 measurement counts them (the weights of the products, the norms'
    and the embeddings, tied ones once), the first ``max_layers`` layers only if given."""
    from sdsl import validation as V

    dims = {
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate": intermediate,
        "vocab": vocab,
    }
    d = {k: V.integer(v, k, low=1, what=f"{k.replace('_', ' ')} of shape {name}") for k, v in dims.items()}
    if d["heads"] % d["kv_heads"]:
        raise ValueError(
            f"shape {name}: {shown('heads')} {d['heads']} is not a multiple of {shown('kv_heads')} {d['kv_heads']} "
            f"(grouped-query attention shares each key-value head among a whole number of query heads)"
        )
    if max_layers is not None:
        cap = V.integer(max_layers, "max_layers", low=1, what="layers kept of each shape")
        if cap < d["layers"]:
            name, d["layers"] = f"{name}-{cap}L", cap
    h, q, kv = d["hidden"], d["heads"] * d["head_dim"], d["kv_heads"] * d["head_dim"]
    per_layer = h * (q + 2 * kv) + q * h + 3 * h * d["intermediate"] + 2 * h  # products and two norms
    emb = d["vocab"] * h
    return {
        "shape": str(name),
        **d,
        "tied": int(bool(tied)),
        "params": d["layers"] * per_layer + h + emb * (1 if tied else 2),  # and the final norm
        "embedding_params": emb,
    }


def shape_from_preset(name: str, max_layers: int | None = None) -> dict[str, Any]:
    """The shape of a preset of ``data/presets.csv`` (its configuration's widths, Llama-style)."""
    from sdsl.plan import preset_records
    from sdsl.validation import suggestion

    rows = {r["preset"]: r for r in preset_records()}
    row = rows.get(str(name).strip().lower())
    if row is None:
        hint = suggestion(str(name).strip().lower(), list(rows)).strip()
        raise ValueError(f"unknown {shown('preset')} {name!r}{'; ' + hint if hint else ''} ('sdsl presets' lists them)")
    dims = ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab")
    missing = [k for k in dims if not row.get(k) or row[k] != row[k]]  # empty, or NaN
    if missing or row["architecture"] != "dense":
        why = (
            "it is a mixture-of-experts model"
            if row["architecture"] != "dense"
            else f"its {', '.join(missing)} are unknown"
        )
        raise ValueError(f"{shown('preset')} {name!r} cannot be measured as a dense shape: {why}")
    return shape(
        row["preset"],
        int(row["layers"]),
        int(row["hidden"]),
        int(row["heads"]),
        int(row["kv_heads"]),
        int(row["head_dim"]),
        int(row["intermediate"]),
        int(row["vocab"]),
        bool(int(row["tied_embeddings"])),
        max_layers,
    )


def shape_from_config(path: str | os.PathLike, max_layers: int | None = None) -> dict[str, Any]:
    """The shape of a Hugging Face ``config.json`` file (``hidden_size``, ``num_hidden_layers``,
    ``num_attention_heads``, ``num_key_value_heads``, ``head_dim``, ``intermediate_size``,
    ``vocab_size``, ``tie_word_embeddings``; a multimodal config's ``text_config``), named after
    its folder. Nothing is downloaded."""
    p = Path(path)
    try:
        cfg = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{shown('config')} {str(p)!r} could not be read as JSON: {str(e).splitlines()[0]}") from None
    if isinstance(cfg, dict) and isinstance(cfg.get("text_config"), dict):
        cfg = {**cfg, **cfg["text_config"]}
    keys = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size")
    missing = [k for k in keys if not isinstance(cfg, dict) or k not in cfg]
    if missing:
        raise ValueError(f"{shown('config')} {str(p)!r} is not a decoder's config.json: it lacks {', '.join(missing)}")
    heads = cfg["num_attention_heads"]
    hd = cfg.get("head_dim") or (cfg["hidden_size"] // heads if isinstance(heads, int) and heads else heads)
    return shape(
        p.resolve().parent.name or p.stem,
        cfg["num_hidden_layers"],
        cfg["hidden_size"],
        heads,
        cfg.get("num_key_value_heads") or heads,
        hd,
        cfg["intermediate_size"],
        cfg["vocab_size"],
        bool(cfg.get("tie_word_embeddings", False)),
        max_layers,
    )


def _torch_dtype(dtype: str) -> torch.dtype:
    import torch

    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]


class _Pass:
    """One shape's weights and cache on a device, and its forward pass for one ``(batch, context,
    tokens)``; a pass writes only into buffers made here, so that a CUDA graph can replay it."""

    def __init__(self, s: Mapping[str, Any], device: torch.device, dtype: torch.dtype, seed: int) -> None:
        import torch

        g = torch.Generator(device=device).manual_seed(seed)
        self.s, self.device, self.dtype = s, device, dtype
        h, hd = int(s["hidden"]), int(s["head_dim"])
        q, kv, inter = int(s["heads"]) * hd, int(s["kv_heads"]) * hd, int(s["intermediate"])

        def w(*size: int) -> torch.Tensor:  # drawn on the device: the time of a pass does not depend on values
            return torch.empty(*size, device=device, dtype=dtype).normal_(0.0, 0.02, generator=g)

        self.emb = w(int(s["vocab"]), h)
        self.head = self.emb if int(s["tied"]) else w(int(s["vocab"]), h)
        self.layers = [
            {
                "n1": torch.ones(h, device=device, dtype=dtype),
                "qkv": w(h, q + 2 * kv),
                "o": w(q, h),
                "n2": torch.ones(h, device=device, dtype=dtype),
                "gu": w(h, 2 * inter),
                "down": w(inter, h),
            }
            for _ in range(int(s["layers"]))
        ]
        self.norm = torch.ones(h, device=device, dtype=dtype)

    def build(self, batch: int, context: int, tokens: int, layout: str) -> Callable[[], torch.Tensor]:
        """The pass as a function of no arguments over preallocated inputs and caches."""
        import torch
        import torch.nn.functional as F

        s, dev, dt = self.s, self.device, self.dtype
        H, KV, hd = int(s["heads"]), int(s["kv_heads"]), int(s["head_dim"])
        q_dim, kv_dim, inter = H * hd, KV * hd, int(s["intermediate"])
        ids = torch.randint(0, int(s["vocab"]), (batch, tokens), device=dev)
        total = context + tokens
        caches = [
            (torch.zeros(batch, KV, total, hd, device=dev, dtype=dt), torch.zeros(batch, KV, total, hd, device=dev, dtype=dt))
            for _ in self.layers
        ]  # fmt: skip
        groups = H // KV

        def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            if layout == "gqa":  # q (b, H, t, hd) against k, v (b, KV, L, hd)
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=groups > 1)
            # folded: the query heads of each key-value head as one axis of groups * t queries
            qf = q.reshape(batch, KV, groups * tokens, hd)
            return F.scaled_dot_product_attention(qf, k, v).reshape(batch, H, tokens, hd)

        def run() -> torch.Tensor:
            x = self.emb[ids]
            for lw, (kc, vc) in zip(self.layers, caches):
                y = F.rms_norm(x, (x.shape[-1],), lw["n1"])
                qkv = y @ lw["qkv"]
                q = qkv[..., :q_dim].view(batch, tokens, H, hd).transpose(1, 2)
                k = qkv[..., q_dim : q_dim + kv_dim].view(batch, tokens, KV, hd).transpose(1, 2)
                v = qkv[..., q_dim + kv_dim :].view(batch, tokens, KV, hd).transpose(1, 2)
                kc[:, :, context:] = k
                vc[:, :, context:] = v
                a = attend(q, kc, vc).transpose(1, 2).reshape(batch, tokens, q_dim)
                x = x + a @ lw["o"]
                y = F.rms_norm(x, (x.shape[-1],), lw["n2"]) @ lw["gu"]
                x = x + (F.silu(y[..., :inter]) * y[..., inter:]) @ lw["down"]
            last = F.rms_norm(x[:, -1], (x.shape[-1],), self.norm)
            return last @ self.head.T

        return run


def _median_seconds(fn: Callable[[], Any], repeats: int, warmup: int, cuda: bool) -> float:
    """Median seconds of ``fn`` over ``repeats`` calls after ``warmup`` calls (CUDA events on a GPU)."""
    import torch

    for _ in range(warmup):
        fn()
    if not cuda:
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return statistics.median(times)
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeats)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) / 1e3 for a, b in ev)


def _graphed(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` captured once in a CUDA graph; the returned function replays it."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def _device(device: str) -> torch.device:
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"{shown('device')} {device!r}: this torch build sees no CUDA device; give cpu or auto")
    try:
        return torch.device(device)
    except RuntimeError:
        raise ValueError(
            f"{shown('device')} {device!r} is not a device torch knows: give auto, cpu or cuda[:N]"
        ) from None


def provenance(device: torch.device, dtype: str, graphs: bool, repeats: int, warmup: int) -> dict[str, Any]:
    """What a reader of a measurement needs to know of the machine and the method."""
    import subprocess

    import torch

    rec: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device_type": device.type,
        "torch": str(torch.__version__),
        "dtype": dtype,
        "graphs": bool(graphs),
        "repeats": int(repeats),
        "warmup": int(warmup),
        "threads": torch.get_num_threads(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        rec.update(device=str(props.name), memory_bytes=int(props.total_memory), cuda=str(torch.version.cuda))
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
            )
            rec["driver"] = (
                out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else "unknown"
            )
        except (OSError, subprocess.SubprocessError):
            rec["driver"] = "unknown"
    else:
        rec.update(device=_cpu_name(), driver="none")
    return rec


def _cpu_name() -> str:
    """The processor's model name (Linux's /proc/cpuinfo), else the machine type."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def measure(
    shapes: Sequence[Mapping[str, Any]],
    batches: Sequence[int],
    contexts: Sequence[int],
    tokens: Sequence[int],
    device: str = "auto",
    dtype: str = "bf16",
    graphs: bool = True,
    repeats: int = 20,
    warmup: int = 3,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Time one forward pass of every shape at every ``(batch, context, tokens)`` of the grid.

    Parameters
    ----------
    shapes : sequence of mappings
        Rows of :func:`shape` (:func:`shape_from_preset`, :func:`shape_from_config`).
    batches, contexts, tokens : sequences of int
        The grid: sequences in the pass, tokens in each cache, new tokens per sequence.
    device : str
        ``auto`` (a CUDA device if torch sees one), ``cpu`` or ``cuda[:N]``.
    dtype : str
        One of :data:`DTYPES`.
    graphs : bool
        On a CUDA device, replay a CUDA graph of the pass (the figure engines see) besides the eager pass.
    repeats, warmup : int
        Timed passes (the median is kept) and passes run first.
    seed : int
        Seed of the random weights and token ids.
    log : callable, optional
        Receives one line per shape measured.

    Returns
    -------
    (list of dict, dict)
        The rows (:data:`~sdsl.model.calibration.STEP_COLUMNS`, then ``graph_s``, ``eager_s``,
        ``graph_s_gqa``, ``graph_s_folded`` on a CUDA device with graphs, else ``eager_s``,
        ``eager_s_gqa``, ``eager_s_folded``) and the provenance record.
    """
    import torch

    if dtype not in DTYPES:
        raise ValueError(f"{shown('dtype')} {dtype!r}: give one of {', '.join(DTYPES)}")
    dev = _device(device)
    cuda = dev.type == "cuda"
    use_graphs = bool(graphs) and cuda
    torch.manual_seed(seed)
    tdt = _torch_dtype(dtype)
    rows = []
    for s in shapes:
        start = time.perf_counter()
        model = _Pass(s, dev, tdt, seed)
        for b in batches:
            for c in contexts:
                for k in tokens:
                    found: dict[str, float] = {}
                    with torch.inference_mode():
                        for layout in ("gqa", "folded"):
                            fn = model.build(int(b), int(c), int(k), layout)
                            found[f"eager_{layout}"] = _median_seconds(fn, repeats, warmup, cuda)
                            if use_graphs:
                                found[f"graph_{layout}"] = _median_seconds(_graphed(fn), repeats, warmup, True)
                    row = {**{c_: s[c_] for c_ in STEP_COLUMNS if c_ in s}, "batch": b, "context": c, "tokens": k}
                    if use_graphs:
                        row.update(
                            graph_s=min(found["graph_gqa"], found["graph_folded"]),
                            eager_s=min(found["eager_gqa"], found["eager_folded"]),
                            graph_s_gqa=found["graph_gqa"],
                            graph_s_folded=found["graph_folded"],
                        )
                    else:
                        row.update(
                            eager_s=min(found["eager_gqa"], found["eager_folded"]),
                            eager_s_gqa=found["eager_gqa"],
                            eager_s_folded=found["eager_folded"],
                        )
                    rows.append(row)
        del model
        if cuda:
            torch.cuda.empty_cache()
        if log is not None:
            log(
                f"{s['shape']}: {len(batches) * len(contexts) * len(tokens)} passes in {time.perf_counter() - start:.1f} s"
            )
    return rows, provenance(dev, dtype, use_graphs, repeats, warmup)


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_measurement(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike, record: Mapping[str, Any]) -> Path:
    """Write the rows as CSV at ``path`` and the provenance beside it (``PATH.yml``), each whole or
    not at all; returns the record's path. Seconds are written to 7 significant digits."""
    import yaml

    p = Path(path)
    meta = p.with_name(p.name + ".yml")
    text = "# How the step times beside this file were measured (sdsl steps measure).\n"
    text += yaml.safe_dump({"measurement": p.name, **dict(record), "method": METHOD}, sort_keys=False, width=100)
    _atomic_write(p, format_passes(list(rows[0]), rows))
    _atomic_write(meta, text)
    return meta


#: The columns of a CSV of passes (the shape, then the pass), as :mod:`sdsl.data` validates them.
_PASS_COLUMNS: list[dict[str, Any]] = [
    {"name": "shape", "type": "str"},
    *(
        {"name": c, "type": "int", "min": 1}
        for c in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab")
    ),
    {"name": "tied", "type": "int", "allowed": [0, 1]},
    {"name": "params", "type": "float", "min_exclusive": 0},
    {"name": "embedding_params", "type": "float", "min": 0},
    {"name": "batch", "type": "int", "min": 1},
    {"name": "context", "type": "int", "min": 0},
    {"name": "tokens", "type": "int", "min": 1},
]


def read_passes(path: str | os.PathLike, source: str | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """The rows of a CSV of passes (``sdsl steps measure``'s output, ``data/h200_step_times.csv``, or
    the shape columns with ``batch``, ``context`` and ``tokens`` alone), each problem one
    :class:`sdsl.data.DataError` naming the file, line and column. Measured seconds (``seconds``,
    ``graph_s``, ``eager_s`` and any column ending in ``_s``) are checked as numbers > 0 where given;
    other columns are kept as text. Returns the header and the rows."""
    from sdsl.data import convert_column, read_csv_text, schema

    table = read_csv_text(Path(path), source)
    cols = list(_PASS_COLUMNS)
    missing = [c["name"] for c in cols if c["name"] not in table.header]
    if missing:
        raise ValueError(
            f"{table.source}: a CSV of passes needs the columns {', '.join(c['name'] for c in cols)}; "
            f"it lacks {', '.join(missing)}"
        )
    timed = [h for h in table.header if h == "seconds" or h.endswith("_s")]
    cols += [{"name": h, "type": "float", "min_exclusive": 0, "required": False} for h in timed]
    s = schema({"columns": cols})
    out: list[dict[str, Any]] = [{} for _ in table.rows]
    for j, h in enumerate(table.header):
        values = [r[j] for r in table.rows]
        conv = convert_column(s.column(h), values, [v.strip() for v in values], table.source, table.lines) if h in s.names else values  # fmt: skip
        for row, v in zip(out, conv):
            row[h] = v
    return list(table.header), out


def format_passes(header: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows as CSV text (floats to 7 significant digits, NaN as an empty cell)."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(
            [
                "" if isinstance(v, float) and math.isnan(v) else f"{v:.7g}" if isinstance(v, float) else v
                for v in (r.get(c) for c in header)
            ]  # fmt: skip
        )
    return buf.getvalue()

"""Measure the time of one decoding step on this CPU: data/cpu_step_times.csv and data/cpu_microbench.csv.

    .venv/bin/python tools/measure_cpu_step_times.py            # about 5 minutes on 2 shared cores
    .venv/bin/python tools/measure_cpu_step_times.py --quick    # a smoke run, written to build/

What it measures (the validation of the roofline cost model, :mod:`sdsl.model.hardware`):

* ``cpu_step_times.csv``: the wall time of one forward pass of randomly initialised GPT-2 (tied
  embeddings, multi-head attention) and Llama (untied embeddings, grouped-query attention)
  configurations of several sizes, for ``tokens`` new tokens per sequence, ``batch`` sequences and a
  KV cache of ``context`` tokens: the cost of drafting (``tokens = 1``) and of verifying ``gamma + 1``
  tokens. Timing does not depend on the weights' values, so no checkpoint is needed (nothing is
  downloaded). Median of ``repeats`` calls after two warm-up calls, one thread
  (``torch.set_num_threads(1)``): the machine has 2 cores shared with other users.
* ``cpu_microbench.csv``: the two numbers of the roofline measured independently of the models, the
  best matrix-multiplication rate (FLOP/s, float32) and the read bandwidth of a large array
  (bytes/s), which calibrate the ``cpu-here`` preset of ``data/accelerators.csv``.

No GPU was available to the session that made these files; the provenance files say so.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import hashlib
import io
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
import transformers
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from sdsl._machine import cpu_model

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: name -> (architecture, hidden, layers, heads, kv_heads, intermediate)
CONFIGS = {
    "gpt2-d256-l4": ("gpt2", 256, 4, 4, 4, 1024),
    "gpt2-d512-l8": ("gpt2", 512, 8, 8, 8, 2048),
    "gpt2-d768-l12": ("gpt2", 768, 12, 12, 12, 3072),
    "llama-d256-l4": ("llama", 256, 4, 4, 2, 688),
    "llama-d512-l8": ("llama", 512, 8, 8, 2, 1376),
    "llama-d1024-l8": ("llama", 1024, 8, 16, 4, 2752),
}
VOCAB = {"gpt2": 50257, "llama": 32000}
TOKENS = (1, 2, 4, 8, 16, 32, 64)
BATCHES = (1, 4)
CONTEXT = 256
#: the context sweep: one model, one token per sequence, batch 4
CONTEXT_SWEEP = ("llama-d512-l8", (64, 1024, 2048))

STEP_COLUMNS = [
    "config",
    "architecture",
    "params",
    "embedding_params",
    "tied_embeddings",
    "vocab",
    "hidden",
    "layers",
    "heads",
    "kv_heads",
    "head_dim",
    "intermediate",
    "batch",
    "context",
    "tokens",
    "seconds",
    "seconds_min",
    "repeats",
]
BENCH_COLUMNS = ["quantity", "value", "unit", "detail"]


def build(name: str):
    arch, d, layers, heads, kv, inter = CONFIGS[name]
    torch.manual_seed(0)  # the values do not matter for timing; fixed for reproducibility
    if arch == "gpt2":
        cfg = GPT2Config(
            vocab_size=VOCAB[arch], n_embd=d, n_layer=layers, n_head=heads, n_inner=inter, n_positions=4096
        )
        model = GPT2LMHeadModel(cfg)
        tied = True
    else:
        cfg = LlamaConfig(
            vocab_size=VOCAB[arch],
            hidden_size=d,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=kv,
            intermediate_size=inter,
            max_position_embeddings=4096,
            tie_word_embeddings=False,
        )
        model = LlamaForCausalLM(cfg)
        tied = False
    model.eval()
    params = sum(p.numel() for p in model.parameters())  # tied weights counted once
    emb = VOCAB[arch] * d
    info = {
        "config": name,
        "architecture": arch,
        "params": params,
        "embedding_params": emb,
        "tied_embeddings": int(tied),
        "vocab": VOCAB[arch],
        "hidden": d,
        "layers": layers,
        "heads": heads,
        "kv_heads": kv,
        "head_dim": d // heads,
        "intermediate": inter,
    }
    return model, info


def time_step(model, batch: int, context: int, tokens: int, repeats: int) -> tuple[float, float]:
    """Median and minimum seconds of one forward of ``tokens`` new tokens per sequence on a KV cache
    of ``context`` tokens (cropped back to ``context`` before every call)."""
    g = torch.Generator().manual_seed(1)
    vocab = model.config.vocab_size
    prompt = torch.randint(0, vocab, (batch, context), generator=g)
    new = torch.randint(0, vocab, (batch, tokens), generator=g)
    with torch.inference_mode():
        out = model(input_ids=prompt, use_cache=True)
        cache = getattr(out, "cache", None) or out.past_key_values
        times = []
        for i in range(repeats + 2):
            extra = cache.get_seq_length() - context
            if extra > 0:
                cache.crop(-extra)  # transformers 5: a negative count of tokens to drop
            t0 = time.perf_counter()
            model(input_ids=new, cache=cache, use_cache=True)
            dt = time.perf_counter() - t0
            if i >= 2:
                times.append(dt)
    return statistics.median(times), min(times)


def microbench(repeats: int) -> list[dict]:
    rows = []
    best = 0.0
    for m, k, n in ((256, 1024, 4096), (512, 2048, 2048), (1024, 1024, 1024)):
        a, b = torch.randn(m, k), torch.randn(k, n)
        torch.mm(a, b)
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            torch.mm(a, b)
            ts.append(time.perf_counter() - t0)
        rate = 2.0 * m * k * n / min(ts)
        best = max(best, rate)
        rows.append(
            {
                "quantity": "matmul_flops",
                "value": f"{rate:.4g}",
                "unit": "FLOP/s",
                "detail": f"float32 torch.mm {m}x{k} @ {k}x{n}; best of {repeats}",
            }
        )
    x = torch.randn(256 * 2**20 // 4)  # 256 MiB, far beyond the 32 MiB of L3
    x.sum()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        x.sum()
        ts.append(time.perf_counter() - t0)
    bw = x.numel() * 4 / min(ts)
    rows.append(
        {
            "quantity": "read_bandwidth",
            "value": f"{bw:.4g}",
            "unit": "bytes/s",
            "detail": f"float32 sum over a 256 MiB tensor; best of {repeats}",
        }
    )
    rows.append(
        {"quantity": "peak_flops", "value": f"{best:.4g}", "unit": "FLOP/s", "detail": "largest matmul_flops above"}
    )
    return rows


def write_csv(path: Path, columns: list[str], rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    text = buf.getvalue()
    path.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two configurations, few repeats, written to build/")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    out_dir = ROOT / ("build/cpu_step_times" if args.quick else "data")
    out_dir.mkdir(parents=True, exist_ok=True)
    repeats = 3 if args.quick else args.repeats
    names = list(CONFIGS)[:1] + ["llama-d256-l4"] if args.quick else list(CONFIGS)
    bench = microbench(repeats)
    for r in bench:
        print(f"{r['quantity']:>15}: {r['value']} {r['unit']}  ({r['detail']})", flush=True)
    rows = []
    for name in names:
        model, info = build(name)
        points = [(b, CONTEXT, k) for b in BATCHES for k in TOKENS]
        if name == CONTEXT_SWEEP[0]:
            points += [(4, c, 1) for c in CONTEXT_SWEEP[1]]
        for b, c, k in points:
            med, low = time_step(model, b, c, k, repeats)
            rows.append(
                {
                    **info,
                    "batch": b,
                    "context": c,
                    "tokens": k,
                    "seconds": f"{med:.4g}",
                    "seconds_min": f"{low:.4g}",
                    "repeats": repeats,
                }
            )
            print(
                f"{name:>15} params {info['params']:>10,} batch {b} context {c:>4} tokens {k:>3}: {med * 1e3:9.3f} ms",
                flush=True,
            )
    sha_steps = write_csv(out_dir / "cpu_step_times.csv", STEP_COLUMNS, rows)
    sha_bench = write_csv(out_dir / "cpu_microbench.csv", BENCH_COLUMNS, bench)
    when = _dt.date.today().isoformat()
    machine = (
        f"{cpu_model()}, {torch.get_num_threads()} thread of {torch.get_num_interop_threads()} "
        f"inter-op; Python {platform.python_version()}, torch {torch.__version__}, "
        f"transformers {transformers.__version__}; measured {when}"
    )
    print(f"machine: {machine}")
    print(f"sha256 cpu_step_times.csv {sha_steps}")
    print(f"sha256 cpu_microbench.csv {sha_bench}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The regeneration check under every CPU kernel a user's machine could pick (``make test``).

The baseline was made on one machine; a user's clone runs on another, whose BLAS (OpenBLAS picks
Haswell, SkylakeX or Zen kernels by CPU), numpy vector extensions (AVX-512 versions of ``exp`` and
``log``) and torch kernels (AVX2 or AVX-512) differ in the last bits. This module proves, on one
machine, that the check passes whichever are used: it runs :func:`sdsl.build.check.check` under
each combination and prints a pass/fail table.

Combinations (``python -m sdsl.build.matrix``):

* every chapter under ``OPENBLAS_CORETYPE`` = Haswell, SkylakeX and Zen;
* every chapter with numpy's AVX-512 group disabled (``NPY_DISABLE_CPU_FEATURES=X86_V4``), and with
  one-ulp noise on numpy's ``exp``, ``log``, ``power``, ``expm1``, ``log1p`` and ``sqrt``
  (``tools/ulp_noise``), which emulates another CPU's math kernels on any CPU;
* the chapters that run torch (their notebook imports it) under each ``OPENBLAS_CORETYPE`` and
  each ``ATEN_CPU_CAPABILITY`` in default, avx2 and avx512, with one torch thread (the default
  capability is part of the all-chapter runs above), and under each ``ATEN_CPU_CAPABILITY`` with
  two; the other chapters do not load torch, so ATen cannot change them.

The one-thread runs of the torch chapters go two at a time (each is one single-threaded notebook
process; CI has two cores), each with a diff folder of its own; every other combination runs alone.

A kernel this CPU cannot execute (SkylakeX or avx512 without AVX-512, X86_V4 where numpy did not
find it) is skipped with a message, never counted as passed. Exit status 1 when a combination
fails, 0 otherwise; the table is also written to ``build/check/matrix.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sdsl._machine import cpu_flags
from sdsl.build.parameters import load_runs
from sdsl.paths import BUILD, NOTEBOOKS, ROOT

__all__ = ["Combination", "torch_chapters", "combinations", "supported", "run_matrix", "main"]

ULP_NOISE = ROOT / "tools" / "ulp_noise"
CORETYPES = ("Haswell", "SkylakeX", "Zen")
ATEN = ("default", "avx2", "avx512")


@dataclass
class Combination:
    """One setting of the kernels and the chapters it checks."""

    name: str
    env: dict[str, str]
    chapters: list[str] | None  # None: every chapter
    threads: int | None = None  # torch threads of the torch chapters
    needs: list[str] = field(default_factory=list)  # CPU features the kernels need
    status: str = "not run"
    seconds: float = 0.0
    detail: str = ""


def torch_chapters() -> list[str]:
    """Chapters of ``runs.yml`` whose notebook imports torch."""
    return [c for c in load_runs() if "import torch" in (NOTEBOOKS / f"{c}.md").read_text(encoding="utf-8")]


def _numpy_has_v4() -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:
        return False
    return bool(__cpu_features__.get("X86_V4") or __cpu_features__.get("AVX512F"))


def supported(combo: Combination, flags: set[str] | None = None) -> str | None:
    """``None`` when this CPU can run the combination's kernels, else why not."""
    flags = cpu_flags() if flags is None else flags
    missing = [f for f in combo.needs if f != "numpy-x86-v4" and f not in flags]
    if missing:
        return f"this CPU lacks {', '.join(missing)}"
    if "numpy-x86-v4" in combo.needs and not _numpy_has_v4():
        return "numpy found no AVX-512 (X86_V4) kernels to disable on this CPU"
    return None


_NEEDS = {
    "Haswell": ["avx2", "fma"],
    "SkylakeX": ["avx512f"],
    "Zen": ["avx2"],
    "default": [],
    "avx2": ["avx2"],
    "avx512": ["avx512f", "avx512bw", "avx512vl", "avx512dq"],
}


def combinations(torch: list[str] | None = None) -> list[Combination]:
    """The combinations described in the module notes, in the order they run."""
    torch = torch_chapters() if torch is None else torch
    out = [
        Combination(
            f"OPENBLAS_CORETYPE={c} (torch: default capability, 1 thread)",
            {"OPENBLAS_CORETYPE": c},
            None,
            1,
            list(_NEEDS[c]),
        )
        for c in CORETYPES
    ]
    out.append(
        Combination(
            "NPY_DISABLE_CPU_FEATURES=X86_V4", {"NPY_DISABLE_CPU_FEATURES": "X86_V4"}, None, 1, ["numpy-x86-v4"]
        )
    )
    out.append(Combination("one-ulp noise on numpy's math (tools/ulp_noise)", {"PYTHONPATH": str(ULP_NOISE)}, None, 1))
    if torch:
        for c in CORETYPES:
            for a in ATEN[1:]:  # default: in the all-chapter run of this coretype
                env = {"OPENBLAS_CORETYPE": c, "ATEN_CPU_CAPABILITY": a}
                out.append(
                    Combination(
                        f"OPENBLAS_CORETYPE={c}, ATEN_CPU_CAPABILITY={a}, 1 torch thread",
                        env,
                        list(torch),
                        1,
                        sorted(set(_NEEDS[c] + _NEEDS[a])),
                    )
                )
        for a in ATEN:
            env = {} if a == "default" else {"ATEN_CPU_CAPABILITY": a}
            out.append(Combination(f"ATEN_CPU_CAPABILITY={a}, 2 torch threads", env, list(torch), 2, list(_NEEDS[a])))
    return out


def _run_one(combo: Combination, torch: list[str], baseline: Path | None) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES")
    }
    for k, v in combo.env.items():
        env[k] = v if k != "PYTHONPATH" or not env.get("PYTHONPATH") else v + os.pathsep + env["PYTHONPATH"]
    # a diff folder of its own: two combinations may run at once (_batches)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", combo.name).strip("-")
    cmd = [sys.executable, "-m", "sdsl.build.check", *(combo.chapters or [])]
    cmd += ["--diff-dir", str(BUILD / "check" / "matrix-diff" / slug)]
    if baseline is not None:
        cmd += ["--baseline", str(baseline)]
    for chapter in torch:
        if combo.chapters is None or chapter in combo.chapters:
            cmd += ["--set", f"{chapter}.threads={combo.threads}"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    combo.seconds = time.perf_counter() - t0
    combo.status = "pass" if proc.returncode == 0 else "FAIL"
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "IPKernelApp" not in ln]
        combo.detail = "\n".join(lines[-60:])


def run_matrix(only: list[str] | None = None, baseline: Path | None = None, dry_run: bool = False) -> list[Combination]:
    """Run every combination this CPU supports (those whose name contains one of ``only``)."""
    torch = torch_chapters()
    combos = combinations(torch)
    if only:
        combos = [c for c in combos if any(o in c.name for o in only)]
    flags = cpu_flags()
    runnable = []
    for combo in combos:
        why = supported(combo, flags)
        if why is not None:
            combo.status, combo.detail = "skipped", why
            print(f"SKIP  {combo.name}: {why}", flush=True)
        elif dry_run:
            combo.status = "would run"
        else:
            runnable.append(combo)
    for batch in _batches(runnable):
        for combo in batch:
            print(
                f"RUN   {combo.name} ({'all chapters' if combo.chapters is None else ', '.join(combo.chapters)})",
                flush=True,
            )
        with ThreadPoolExecutor(max_workers=len(batch)) as pool:
            list(pool.map(lambda c: _run_one(c, torch, baseline), batch))
        for combo in batch:
            print(f"{combo.status.upper():5} {combo.name} in {combo.seconds:.0f} s", flush=True)
            if combo.detail and combo.status == "FAIL":
                print(combo.detail, flush=True)
    return combos


def _batches(combos: list[Combination], width: int = 2) -> list[list[Combination]]:
    """The combinations in the order given, consecutive one-thread runs of a few chapters two at a
    time (each is one single-threaded notebook process; two fill the two cores of CI), every
    other alone (an all-chapter run already executes two notebooks at once, a two-thread run
    fills both cores)."""

    def pairable(c: Combination) -> bool:
        return c.chapters is not None and c.threads == 1

    out: list[list[Combination]] = []
    for combo in combos:
        if pairable(combo) and out and len(out[-1]) < width and all(map(pairable, out[-1])):
            out[-1].append(combo)
        else:
            out.append([combo])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sdsl.build.matrix", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TEXT",
        help="run only the combinations whose name contains TEXT (repeatable)",
    )
    parser.add_argument("--baseline", type=Path, default=None, help="baseline tree (default baseline/)")
    parser.add_argument("--dry-run", action="store_true", help="list the combinations and what would be skipped")
    args = parser.parse_args(argv)
    combos = run_matrix(args.only or None, args.baseline, args.dry_run)
    print("\nKernel matrix of the regeneration check:")
    for c in combos:
        chapters = "all chapters" if c.chapters is None else ", ".join(c.chapters)
        extra = f" ({c.detail})" if c.status == "skipped" else ""
        print(f"  {c.status:9} {c.seconds:5.0f} s  {c.name} [{chapters}]{extra}")
    if not args.dry_run:
        out = BUILD / "check" / "matrix.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps([asdict(c) for c in combos], indent=1) + "\n", encoding="utf-8")
    failed = [c for c in combos if c.status == "FAIL"]
    ran = [c for c in combos if c.status == "pass"]
    if not args.dry_run and not ran and not failed:
        print("no combination could run on this CPU", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

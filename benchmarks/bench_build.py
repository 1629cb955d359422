"""Time ``make book``, the command a user runs, in a fresh copy of this checkout.

    .venv/bin/python benchmarks/bench_build.py [--repeat 5] [--skip-scratch]

The copy (a temporary folder: the files git tracks or does not ignore, uncommitted changes
included) gets a ``.venv`` of links to this environment and its install stamp, so that ``make``'s
install step finds it installed, as it does on a user's second ``make book``, and nothing of this
checkout or its environment is written. Three cases, each ``make book`` as a fresh process:

1. from scratch (no executed notebook, no artifacts, no book), once;
2. nothing changed, ``--repeat`` times;
3. one notebook changed (a paragraph appended to ``notebooks/latency.md``, another each time),
   ``--repeat`` times: that notebook runs again, the book is rebuilt.

Two references are timed in the same run, in round robin with the cases: the interpreter
importing numpy (what any ``python -m sdsl...`` pays) and papermill executing a notebook of one
empty cell (a kernel's start and stop: what each notebook pays at least). Each case is printed
with its fastest and median wall time, as ratios of its reference (ratios move less than seconds
on a shared machine), with the notebooks' share that ``make book`` reports and the load average.
Targets: nothing changed at most 2 s; the notebooks from scratch at most 30 s on 2 cores.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_NOCHANGE_S = 2.0
TARGET_SCRATCH_NOTEBOOKS_S = 30.0
CHANGED = "latency"

EMPTY_NOTEBOOK = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

```{code-cell} ipython3
pass
```
"""


def _copy_checkout(dest: Path) -> None:
    """The files of this checkout that git tracks or does not ignore, copied to ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for rel in filter(None, (name.decode() for name in listed)):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _link_environment(dest: Path) -> None:
    """``dest/.venv``: links to every entry of this environment, and the install stamp the
    Makefile computes (the sha256 of the lock file and pyproject.toml), in a folder of its own."""
    venv = Path(sys.prefix)
    own = dest / ".venv"
    own.mkdir()
    for entry in venv.iterdir():
        if not entry.name.startswith(".installed-"):
            (own / entry.name).symlink_to(entry)
    digest = hashlib.sha256((dest / "requirements.lock").read_bytes() + (dest / "pyproject.toml").read_bytes())
    (own / f".installed-{digest.hexdigest()[:16]}").touch()


def _make_book(repo: Path, env: dict[str, str]) -> tuple[float, str]:
    """Wall time and output of one ``make book`` in ``repo``; raises when it fails."""
    t0 = time.perf_counter()
    proc = subprocess.run(["make", "--no-print-directory", "book"], cwd=repo, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"make book failed in {repo} (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return seconds, proc.stdout + proc.stderr


def _notebooks_seconds(output: str) -> float:
    """The notebooks' share that ``make book`` reports on its book line."""
    found = re.search(r"\(notebooks ([0-9.]+) s, book ([0-9.]+) s\)", output)
    return float(found.group(1)) if found else float("nan")


def _timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of the no-change and one-changed cases (default 5)")
    ap.add_argument("--skip-scratch", action="store_true", help="do not report the first build (from scratch)")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be an integer >= 1, got {args.repeat}")
    with tempfile.TemporaryDirectory(prefix="sdsl-bench-build-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        _copy_checkout(repo)
        _link_environment(repo)
        env = {k: v for k, v in os.environ.items() if k not in ("SDSL_ARTIFACTS", "PYTHONDONTWRITEBYTECODE")}
        env["PYTHONPATH"] = str(repo)  # the copy's sdsl, not the one the environment was installed from
        py = str(repo / ".venv" / "bin" / "python")
        empty = Path(tmp) / "empty"
        empty.mkdir()
        (empty / "empty.md").write_text(EMPTY_NOTEBOOK)
        subprocess.run(
            [py, "-m", "jupytext", "--to", "ipynb", "empty.md"], cwd=empty, env=env, check=True, capture_output=True
        )
        kernel = [py, "-m", "papermill", "--no-progress-bar", "-k", "python3", "empty.ipynb", "out.ipynb"]
        numpy = [py, "-c", "import numpy"]
        _timed(numpy, repo, env), _timed(kernel, empty, env)  # warm-up

        scratch_s, output = _make_book(repo, env)
        scratch_nb = _notebooks_seconds(output)
        if not args.skip_scratch:
            print(f"make book from scratch (load average {os.getloadavg()[0]:.1f}):")
            print("\n".join(f"  {line}" for line in output.strip().splitlines()))
        refs: dict[str, list[float]] = {"import numpy": [], "empty notebook": []}
        cases: dict[str, list[float]] = {"nothing changed": [], "one notebook changed": []}
        notebooks: list[float] = []
        source = repo / "notebooks" / f"{CHANGED}.md"
        text = source.read_text(encoding="utf-8")
        for i in range(args.repeat):  # round robin: a change of the background load reaches all alike
            refs["import numpy"].append(_timed(numpy, repo, env))
            refs["empty notebook"].append(_timed(kernel, empty, env))
            seconds, output = _make_book(repo, env)
            cases["nothing changed"].append(seconds)
            if "ran in" in output:  # something was not up to date: say what
                print(f"nothing changed, run {i + 1}, ran notebooks:\n{output}")
            source.write_text(f"{text}\nA paragraph the benchmark added ({i}).\n", encoding="utf-8")
            seconds, output = _make_book(repo, env)
            cases["one notebook changed"].append(seconds)
            notebooks.append(_notebooks_seconds(output))
    ref_of = {"nothing changed": "import numpy", "one notebook changed": "empty notebook"}
    print(f"\n{'case':<34}{'fastest':>9}{'median':>9}   ratio of its reference (median)")
    for name, times in refs.items():
        print(f"{'reference: ' + name:<34}{min(times):8.2f}s{statistics.median(times):8.2f}s")
    for name, times in cases.items():
        ref = statistics.median(refs[ref_of[name]])
        print(
            f"{'make book, ' + name:<34}{min(times):8.2f}s{statistics.median(times):8.2f}s"
            f"   {statistics.median(times) / ref:6.1f} x {ref_of[name]}"
        )
    if not args.skip_scratch:
        ref = statistics.median(refs["empty notebook"])
        print(f"{'make book, from scratch':<34}{scratch_s:8.2f}s{'':>9}   {scratch_s / ref:6.1f} x empty notebook")
    print(
        f"\nnothing changed: median {statistics.median(cases['nothing changed']):.2f} s "
        f"(target <= {TARGET_NOCHANGE_S:g} s); one notebook changed: its notebooks "
        f"{statistics.median(notebooks):.1f} s; from scratch: notebooks {scratch_nb:.1f} s "
        f"(target <= {TARGET_SCRATCH_NOTEBOOKS_S:g} s on 2 cores); load average {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

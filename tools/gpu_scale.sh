#!/usr/bin/env bash
# The GPU scale of the laptop-scale experiment in one device call.
#
#   tools/gpu_scale.sh prepare     # here, on the CPU machine: corpus, tokenizer and wheels
#   tools/gpu_scale.sh device      # there, on the GPU machine: train and measure, pack the results
#   tools/gpu_scale.sh unpack F    # here: F (the packed results) -> data/laptop_scale_gpu/
#
# `prepare` makes build/experiment/gpu/corpus (it needs Debian's bible-kjv, fortunes,
# python3.11-doc and linux-doc-6.1, which the GPU machine lacks: it installs them when it runs as
# root), compresses its token ids (.npy.xz), and downloads into .whl/ the pinned transformers,
# tokenizers and pandas for that machine's Python 3.12 (its own are other versions); no Ray: on one
# machine the runner's tasks run in a pool of worker processes that share the GPU. Both folders
# are ignored by git and must stay under the device tool's 64 MiB together (prepare checks); the
# device call carries them:
#
#   run(command="tools/gpu_scale.sh device", carry=["build/experiment/gpu", ".whl"], timeout_s=560)
#
# `device` resumes the prepared run with every model on cuda, WORKERS (default 8) tasks at a time
# on the one GPU, stops itself after LIMIT seconds (default 450, so that one call stays within 8
# minutes with the install) and writes $OUT/gpu_results.tar.gz once every task is done. A run that
# was stopped leaves its finished tasks in build/experiment/gpu on the machine, which keeps
# ignored folders between calls while it is warm: call `device` again at once and it continues
# from its last finished task. $OUT/gpu_progress.txt says how far it got.
#
# `budget` prints the scale's runs and FLOPs: python -m sdsl.experiment budget --scale gpu.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
out=build/experiment/gpu
mode=${1:-}

case "$mode" in
prepare)
  PY=${PYTHON:-.venv/bin/python}
  pkgs="bible-kjv fortunes python3.11-doc linux-doc-6.1"
  if ! dpkg -s $pkgs >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null
    else
      echo "the corpus needs Debian's $pkgs: apt-get install -y $pkgs" >&2
      exit 2
    fi
  fi
  rm -rf "$out"  # a fresh corpus-only run: its state records the settings of this checkout
  "$PY" -m sdsl.experiment run --scale gpu --corpus-only --out "$out" --no-progress
  "$PY" -m sdsl.experiment budget --scale gpu --out "$out" | tail -n 1
  # token ids of a byte-level table compress well; the device call restores them
  for f in "$out"/corpus/*.npy; do xz -T0 -6 -f "$f"; done
  pin() { grep -i "^$1==" requirements.lock | sed -E 's/^[^=]+==([^ ;\\]+).*/\1/'; }  # the version, without its hash continuation
  mkdir -p .whl
  exclude=$(git rev-parse --git-path info/exclude)  # a worktree's .git is a file: ask git where its exclude lies
  mkdir -p "$(dirname "$exclude")"
  grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >>"$exclude"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
    "transformers==$(pin transformers)" "tokenizers==$(pin tokenizers)" "pandas==$(pin pandas)"
  ls -l .whl
  du -sh "$out" .whl
  total=$(du -sbc "$out" .whl | tail -n 1 | cut -f1)
  if [ "$total" -gt $((62 * 1024 * 1024)) ]; then
    echo "the prepared folders hold $total bytes, more than the 62 MiB this script allows itself of the device tool's 64" >&2
    exit 2
  fi
  ;;
device)
  : "${OUT:?device mode writes its results under \$OUT (the output folder of the device tool)}"
  [ -f "$out/done/corpus.json" ] || { echo "no prepared corpus in $out: run 'tools/gpu_scale.sh prepare' here and carry it" >&2; exit 2; }
  ls .whl/*.whl >/dev/null 2>&1 || { echo "no wheels in .whl: run 'tools/gpu_scale.sh prepare' and carry .whl" >&2; exit 2; }
  for f in "$out"/corpus/*.npy.xz; do
    [ -e "$f" ] || continue
    [ -f "${f%.xz}" ] || python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$f" "${f%.xz}"
  done
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$repo PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
  python3 -c 'import torch, transformers; assert torch.cuda.is_available(), "no GPU"; print(torch.__version__, transformers.__version__, torch.cuda.get_device_name())'
  nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader || true
  rc=0
  timeout --signal=TERM "${LIMIT:-450}" python3 -m sdsl.experiment run --scale gpu --out "$out" --resume \
    --device cuda --workers "${WORKERS:-8}" --threads 1 2>&1 | tee -a "$OUT/gpu_log.txt" || rc=$?
  { echo "exit status $rc"; ls "$out/done" | sed 's/__.*//' | sort | uniq -c; } >"$OUT/gpu_progress.txt"
  cat "$OUT/gpu_progress.txt"
  if [ "$rc" = 0 ] && [ -f "$out/results/provenance.yml" ]; then
    tar -czf "$OUT/gpu_results.tar.gz" -C "$out" results
    ls -l "$OUT/gpu_results.tar.gz"
  else
    echo "not finished (exit $rc): call 'tools/gpu_scale.sh device' again while the machine is warm"
    exit 3
  fi
  ;;
unpack)
  f=${2:?usage: tools/gpu_scale.sh unpack RESULTS.tar.gz}
  tmp=$(mktemp -d)
  tar -xzf "$f" -C "$tmp"
  rm -rf data/laptop_scale_gpu.new
  mv "$tmp/results" data/laptop_scale_gpu.new
  rm -rf data/laptop_scale_gpu
  mv data/laptop_scale_gpu.new data/laptop_scale_gpu
  rmdir "$tmp"
  echo "unpacked into data/laptop_scale_gpu: check it with .venv/bin/python -c 'from sdsl.experiment.results import load_results; load_results(\"data/laptop_scale_gpu\")'"
  ;;
*)
  echo "usage: tools/gpu_scale.sh prepare | device | unpack RESULTS.tar.gz" >&2
  exit 2
  ;;
esac

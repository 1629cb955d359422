#!/usr/bin/env bash
# The GPU scale of the laptop-scale experiment in one device call.
#
#   tools/gpu_scale.sh prepare     # here, on the CPU machine: corpus, tokenizer and wheels
#   tools/gpu_scale.sh device      # there, on the GPU machine: train and measure, pack the results
#   tools/gpu_scale.sh unpack F    # here: F (the packed results) -> data/laptop_scale_gpu/
#
# `prepare` makes build/experiment/gpu/corpus (it needs Debian's bible-kjv, fortunes and
# python3.11-doc, which the GPU machine lacks) and downloads into .whl/ the pinned transformers and
# tokenizers and pandas for that machine's Python 3.12 (its own are other versions). Both folders are ignored
# by git; the device call carries them:
#
#   run(command="tools/gpu_scale.sh device", carry=["build/experiment/gpu", ".whl"], timeout_s=560)
#
# `device` resumes the prepared run with every model on cuda, stops itself after LIMIT seconds
# (default 500) so the call returns inside its limit, and writes $OUT/gpu_results.tar.gz once every
# task is done. A run that was stopped leaves its finished tasks in build/experiment/gpu on the
# machine, which keeps ignored folders between calls while it is warm: call `device` again at once
# and it continues from its last finished task. $OUT/gpu_progress.txt says how far it got.
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
  rm -rf "$out"  # a fresh corpus-only run: its state records the settings of this checkout
  "$PY" -m sdsl.experiment run --scale gpu --corpus-only --out "$out" --no-progress
  pin() { grep -i "^$1==" requirements.lock | cut -d= -f3; }
  mkdir -p .whl
  grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
    "transformers==$(pin transformers)" "tokenizers==$(pin tokenizers)" "pandas==$(pin pandas)"
  ls -l .whl
  du -sh "$out" .whl
  "$PY" -m sdsl.experiment budget --scale gpu --out "$out" | tail -n 1
  ;;
device)
  : "${OUT:?device mode writes its results under \$OUT (the output folder of the device tool)}"
  [ -f "$out/done/corpus.json" ] || { echo "no prepared corpus in $out: run 'tools/gpu_scale.sh prepare' here and carry it" >&2; exit 2; }
  ls .whl/*.whl >/dev/null 2>&1 || { echo "no wheels in .whl: run 'tools/gpu_scale.sh prepare' and carry .whl" >&2; exit 2; }
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$repo PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
  python3 -c 'import torch, transformers; assert torch.cuda.is_available(), "no GPU"; print(torch.__version__, transformers.__version__, torch.cuda.get_device_name())'
  nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader || true
  rc=0
  timeout --signal=TERM "${LIMIT:-500}" python3 -m sdsl.experiment run --scale gpu --out "$out" --resume \
    --device cuda --workers "${WORKERS:-8}" --threads 1 --no-progress 2>&1 | tee "$OUT/gpu_log.txt" || rc=$?
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

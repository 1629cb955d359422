#!/usr/bin/env bash
# Measure one forward pass of the presets' target and draft shapes on the CUDA device of this machine
# with `sdsl steps measure` (CUDA graphs and eager), then fit the step-time model to them and check it
# on each shape left out in turn. Needs python3 with torch, numpy, PyYAML and scipy; nothing is
# downloaded. Writes into $OUT (default ./gpu_steps): steps.csv, its provenance steps.csv.yml, the
# fitted accelerator gpu.yml, and the held-out error of the committed h200 preset on these passes.
#
#   tools/gpu_steps.sh            # about 4 minutes on one H200 (19 shapes x 18 passes)
#
# Commit the result with its provenance as data/<device>_step_times.csv (+ .yml) to hold the model
# against it (sdsl steps predict --hardware h200 data/<device>_step_times.csv).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu_steps}
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
targets="llama-3-8b llama-3.1-8b qwen2.5-7b qwen2.5-14b qwen3-8b qwen3-14b gemma-2-9b mistral-nemo-12b olmo-2-7b"
drafts="opt-125m opt-350m qwen2.5-0.5b qwen2.5-1.5b qwen3-0.6b qwen3-1.7b llama-3.2-1b llama-3.2-3b gemma-2-2b olmo-2-1b"
args=()
for p in $targets $drafts; do args+=(--preset "$p"); done
# the 70B targets with 40 of their 80 layers fit one device; the model scales per layer
"$py" -m sdsl.cli steps measure "${args[@]}" --batch 1,16,64 --context 512,8192 --tokens 1,4,8 \
  -o "$out/steps.csv" --repeats 20 --warmup 3
"$py" -m sdsl.cli steps measure --preset llama-3-70b --preset qwen2.5-72b --max-layers 40 \
  --batch 1,16,64 --context 512,8192 --tokens 1,4,8 -o "$out/steps_70b.csv" --repeats 20 --warmup 3
"$py" -m sdsl.cli steps fit "$out/steps.csv" -o "$out/gpu.yml" --json > "$out/fit.json"
"$py" -m sdsl.cli steps predict --hardware h200 "$out/steps.csv" > "$out/h200_preset_on_steps.csv"
"$py" -m sdsl.cli steps predict --hardware h200 "$out/steps_70b.csv" > "$out/h200_preset_on_70b.csv"
echo "written to $out"

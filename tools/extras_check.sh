#!/usr/bin/env bash
# Each optional extra of pyproject.toml, installed from the wheel into a fresh virtual environment
# of its own, runs what the extra claims to make possible, and its install size is reported:
#
#   analysis  every data file as a DataFrame, the acceptance plane refitted (sdsl plan --alpha-source
#             refit and a CSV of measurements), bootstrap intervals with scipy's p-value
#   plot      every chapter module imports, a chapter figure is drawn and saved
#   measure   alpha measured by speculative decoding of the committed local pair (torch, transformers),
#             with no Ray installed
#   measure-oldest  the same with the oldest transformers the extra admits (4.56.0, the oldest vLLM
#             accepts) instead of the lock's: an engine's environment keeps its own
#   experiment  Ray beside the measure extra; python -m sdsl.experiment's budget runs
#   book      the whole book built from a copy of the source tree with only that extra installed
#
#   tools/extras_check.sh [PYTHON]           # default python3.11; every extra
#   EXTRAS="plot measure" tools/extras_check.sh
#   KEEP=1 tools/extras_check.sh             # keep the work folder and print its path
#
# Versions are those of requirements.lock (as pip constraints, without the hashes). Run by .ci/run
# after the README's test command (a few minutes: the measure and book extras install torch).
# Its work folder and the wheel come from tools/wheel_common.sh (shared with tools/wheel_check.sh).
set -euo pipefail
PY=${1:-python3.11}
[ "$#" -le 1 ] || { echo "extras check: expected at most one argument (the Python), got $#" >&2; exit 2; }
"$PY" -c '' 2>/dev/null || { echo "extras check: the Python '$PY' cannot be run" >&2; exit 2; }
EXTRAS=${EXTRAS:-analysis plot measure measure-oldest experiment book}
for e in $EXTRAS; do
  case "$e" in analysis|plot|measure|measure-oldest|experiment|book) ;; *) echo "extras check: unknown extra '$e' in EXTRAS (allowed: analysis plot measure measure-oldest experiment book)" >&2; exit 2;; esac
done
#: the oldest transformers [measure] admits, and what it pulls in its own versions (not the lock's)
OLDEST_TRANSFORMERS="transformers==4.56.0"
CHECK="extras check"
# shellcheck source=tools/wheel_common.sh
source "$(dirname "$0")/wheel_common.sh"
build_wheel

declare -A size
for e in $EXTRAS; do
  "$PY" -m venv "$tmp/venv-$e"
  V="$tmp/venv-$e/bin"
  site=$("$V/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  before=$(du -sk "$site" | cut -f1)
  if [ "$e" = measure-oldest ]; then
    grep -viE '^(transformers|tokenizers|huggingface-hub|hf-xet)==' "$tmp/constraints.txt" > "$tmp/constraints-oldest.txt"
    pipq "$V/python" -m pip install --constraint "$tmp/constraints-oldest.txt" "${whl}[measure]" "$OLDEST_TRANSFORMERS"
  else
    pipq "$V/python" -m pip install --constraint "$tmp/constraints.txt" "${whl}[$e]"
  fi
  size[$e]=$(( ($(du -sk "$site" | cut -f1) - before) / 1024 ))
  cd "$tmp"
  case "$e" in
  analysis)
    "$V/python" - <<'PYEOF' || fail "[analysis]: the data files as DataFrames"
import sdsl.paths as paths
from sdsl import data
names = sorted(p.stem for p in paths.DATA.glob("*.csv"))
frames = {n: data.load(n) for n in names}
assert len(frames) >= 10 and all(len(f) for f in frames.values()), {n: len(f) for n, f in frames.items()}
print(f"[analysis] {len(frames)} data files load as DataFrames")
PYEOF
    out=$("$V/sdsl" plan --preset llama-3-70b --alpha-source refit) || fail "[analysis]: sdsl plan --alpha-source refit"
    grep -qF "N* (optimal draft size)" <<<"$out" || fail "[analysis]: sdsl plan --alpha-source refit printed no N*"
    "$V/python" -c "from sdsl import data; data.load('acceptance')[['draft_ppl', 'target_ppl', 'alpha']].to_csv('meas.csv', index=False)"
    "$V/sdsl" plan --preset llama-3-70b --alpha-source meas.csv >/dev/null || fail "[analysis]: sdsl plan --alpha-source CSV"
    out=$("$V/sdsl" alpha "$repo/tests/fixtures/vllm_single.txt") || fail "[analysis]: sdsl alpha"
    grep -q "no p-value" <<<"$out" && fail "[analysis]: sdsl alpha gives no p-value though scipy is installed"
    echo "[analysis] sdsl plan refits the plane (paper's tables and a CSV); sdsl alpha gives its p-value"
    ;;
  plot)
    MPLBACKEND=Agg "$V/python" - <<'PYEOF' || fail "[plot]: a chapter figure"
import importlib, pkgutil
import numpy as np
import sdsl.chapters
mods = [m.name for m in pkgutil.walk_packages(sdsl.chapters.__path__, "sdsl.chapters.")]
for m in mods:
    importlib.import_module(m)
from sdsl.chapters import optimal_draft as chapter
from sdsl.model.configurations import configurations, resolve_coefficients
from sdsl.model.laws import resolve_constants
coef = resolve_coefficients(None)
const = resolve_constants("besiroglu2024")
configs = configurations(["Qwen1.5-14B"], ["Qwen1.5"])
curves = chapter.throughput_curves(configs, np.geomspace(1e7, 1e10, 40), const, coef, False)
drafts = chapter.experiment_drafts(configs, const, coef, False)
fig = chapter.figure2(curves, drafts, chapter.table5(configs, const, coef))
fig.savefig("figure2.png")
print(f"[plot] {len(mods)} chapter modules import; Figure 2 drawn")
PYEOF
    ;;
  measure|measure-oldest)
    "$V/python" -c "import ray" 2>/dev/null && fail "[$e]: the measure extra pulls in Ray (only [experiment] may)"
    "$V/python" - "$e" <<'PYEOF' || fail "[$e]: alpha on the committed local pair"
import sys
import numpy as np
import transformers
from sdsl.measure import harness, local
draft, target = local.committed_pair()
m = harness.measure_acceptance(str(draft), str(target), ["the quick brown fox", "speculative decoding"],
                               gammas=(3,), max_new_tokens=8, progress=False)
s = harness.summarize_measurement(m, np.random.default_rng(0), n_resamples=50)
a = float(s["alpha"].iloc[0])
assert 0 < a < 1, s
print(f"[{sys.argv[1]}] transformers {transformers.__version__}, no Ray: alpha of the committed local pair, "
      f"2 prompts, gamma 3: {a:.3f}")
PYEOF
    if [ "$e" = measure-oldest ]; then
      "$V/python" -c "import transformers, sys; sys.exit(transformers.__version__ != '${OLDEST_TRANSFORMERS#*==}')" \
        || fail "[measure-oldest]: pip installed another transformers than ${OLDEST_TRANSFORMERS#*==}"
    fi
    ;;
  experiment)
    "$V/python" -c "import ray, sdsl.experiment.runner; print('[experiment] Ray', ray.__version__)" \
      || fail "[experiment]: Ray and the runner"
    out=$("$V/python" -m sdsl.experiment budget --scale smoke) || fail "[experiment]: python -m sdsl.experiment budget"
    grep -q "^scale smoke" <<<"$out" || fail "[experiment]: budget printed no totals"
    ;;
  book)
    # the source tree's notebooks and data, this venv's packages only
    cp -r "$tmp/src" "$tmp/book-src"
    (cd "$tmp/book-src" && PYTHONPATH="$tmp/book-src" "$V/python" -m sdsl.build.pipeline book) > "$tmp/book.log" 2>&1 \
      || { tail -n 40 "$tmp/book.log" >&2; fail "[book]: the book does not build with the book extra alone"; }
    [ -f "$tmp/book-src/book/_build/html/index.html" ] || fail "[book]: no book/_build/html/index.html"
    echo "[book] the book builds from a source copy with only [book] installed"
    ;;
  esac
done
for e in $EXTRAS; do echo "install size with [$e]: ${size[$e]} MB"; done
echo "extras check passed"

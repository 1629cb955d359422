#!/usr/bin/env bash
# Build the wheel, install it into a fresh virtual environment in a temporary folder outside the
# repository, and run the planning commands and `sdsl alpha` there: the package must work once
# installed, not only from a checkout, and its base install must stay light (at most 100 MB, no
# scipy). Then the same on every other Python 3.12+ found on the PATH. Called by `make test`.
#
#   tools/wheel_check.sh [PYTHON]        # default python3.11
#   KEEP=1 tools/wheel_check.sh          # keep the temporary folder and print its path
#   EXTRAS=plot tools/wheel_check.sh     # also install an extra and report the size it adds
#
# Dependencies are pinned by requirements.lock (its versions, without the hashes, as pip's
# --constraint), so the check installs the versions CI tests with; pip needs the package index (or
# its cache) for numpy, pyyaml and prometheus_client.
#
# Its work folder and the wheel come from tools/wheel_common.sh (shared with tools/extras_check.sh).
set -euo pipefail
PY=${1:-python3.11}
[ "$#" -le 1 ] || { echo "wheel check: expected at most one argument (the Python to build with), got $#" >&2; exit 2; }
"$PY" -c '' 2>/dev/null || { echo "wheel check: the Python '$PY' cannot be run; give another (tools/wheel_check.sh PYTHON)" >&2; exit 2; }
CHECK="wheel check"
# shellcheck source=tools/wheel_common.sh
source "$(dirname "$0")/wheel_common.sh"

# 1. the wheel
build_wheel
echo "built $(basename "$whl") ($(du -k "$whl" | cut -f1) kB)"
# the wheel's file list (python's zipfile: unzip may be missing); not piped into grep -q, whose early
# exit would fail the pipe under pipefail
listing=$("$PY" -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$whl")
for f in sdsl/_data/presets.csv sdsl/_data/accelerators.csv sdsl/_data/acceptance_laws.csv sdsl/_data/acceptance_laws.yml \
         sdsl/_data/local_pair/draft/model.safetensors sdsl/_data/local_pair/target/config.json \
         sdsl/py.typed sdsl/model/hardware.py sdsl/plan/interval.py sdsl/plan/lookup.py; do
  grep -qF "$f" <<<"$listing" || fail "the wheel lacks $f"
done

# 2. a fresh environment far from the repository: nothing may resolve to the checkout
"$PY" -m venv "$tmp/venv"
V="$tmp/venv/bin"
site=$("$V/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
before=$(du -sk "$site" | cut -f1)
pipq "$V/python" -m pip install --constraint "$tmp/constraints.txt" "$whl"
after=$(du -sk "$site" | cut -f1)
npkg=$("$V/python" -m pip list --format=freeze 2>/dev/null | grep -vc -E '^(pip|setuptools|wheel)==')
mb=$(( (after - before) / 1024 ))
echo "installed: $npkg packages, $mb MB (base dependencies: numpy, pyyaml, prometheus_client)"
[ "$mb" -le 100 ] || fail "the base install takes $mb MB, more than 100 MB"
"$V/python" -c "import scipy" 2>/dev/null && fail "the base install pulls in scipy"
cd "$tmp"

# 3. the commands a user runs, and their outputs
"$V/python" -c "import sdsl, sdsl.paths as p; assert 'site-packages' in str(p.DATA), p.DATA; print('import sdsl', sdsl.__version__, 'data at', p.DATA)" \
  || fail "import sdsl"
"$V/python" -c "import sys, sdsl.cli; import sdsl.plan; bad=[m for m in ('pandas','scipy','matplotlib','statsmodels') if m in sys.modules]; assert not bad, bad" \
  || fail "the planning path imports a heavy package"
# sdsl plan itself, in process: nothing beyond the base install
"$V/python" -c "import sys, io, contextlib, sdsl.cli
with contextlib.redirect_stdout(io.StringIO()):
    rc = sdsl.cli.main(['plan', '--preset', 'llama-3-70b'])
assert rc in (0, None), rc
bad = [m for m in ('pandas', 'scipy', 'matplotlib', 'statsmodels') if m in sys.modules]
assert not bad, bad" || fail "sdsl plan imports a package outside the base install"
out=$("$V/sdsl" plan --preset llama-3-70b) || fail "sdsl plan --preset llama-3-70b exited $?"
for label in "N* (optimal draft size)" "gamma* continuous / integer" "tokens per FLOP ratio" "wall-clock speedup" \
             "vLLM" "num_speculative_tokens" "SGLang" "--speculative-num-steps" "N* interval (headline)" \
             "by acceptance law" "by loss-law constants" "by plane's coefficients" "N* interval leaves out"; do
  grep -qF -- "$label" <<<"$out" || fail "sdsl plan output lacks '$label'"
done
json=$("$V/sdsl" plan --target-params 70.6e9 --target-tokens 15e12 --draft-tokens 15e12 --json) || fail "sdsl plan --json"
"$V/python" - "$json" <<'PYEOF' || fail "sdsl plan --json: wrong fields"
import json, sys
r = json.loads(sys.argv[1])
need = {"n_star", "gamma_star", "gamma_star_continuous", "gamma_star_integer", "rounding_loss", "alpha",
        "tokens_per_flop", "tokens_per_flop_ratio", "wall_clock", "num_speculative_tokens", "engines", "interval", "warnings"}
missing = need - set(r)
assert not missing, missing
assert 2.5e8 < r["n_star"] < 3.2e8, r["n_star"]
assert r["gamma_star_integer"] == int(r["gamma_star_integer"]) >= 1
assert r["engines"]["vllm"]["speculative_config"]["num_speculative_tokens"] == r["num_speculative_tokens"]
assert "speedup" in r["wall_clock"] and r["wall_clock"]["speedup"] > 1
iv = r["interval"]
h = iv["headline"]
assert h["sources"] == ["law", "constants"] and h["left_out"] == ["coefficients"], h
assert h["low"] < r["n_star"] < h["high"] and h["high"] / h["low"] > 2, h
assert len(iv["by_source"]["law"]["laws"]) == 4 and len(iv["by_source"]["constants"]["sets"]) == 2
print("sdsl plan --json: N* %.4g, gamma* %.4g -> %d, vLLM num_speculative_tokens %d; N* interval [%.4g, %.4g] over %s" % (
    r["n_star"], r["gamma_star_continuous"], r["gamma_star_integer"], r["num_speculative_tokens"],
    h["low"], h["high"], ", ".join(h["sources"])))
PYEOF
json=$("$V/sdsl" plan --preset opt-13b --bootstrap 200 --seed 1 --json) || fail "sdsl plan --bootstrap --json"
"$V/python" - "$json" <<'PYEOF' || fail "sdsl plan --bootstrap --json: wrong interval"
import json, sys
r = json.loads(sys.argv[1])
iv = r["interval"]
h, co = iv["headline"], iv["by_source"]["coefficients"]
assert h["sources"] == ["law", "constants", "coefficients"] and h["left_out"] == [], h
assert co["computed"] and co["draws"] == 200 and [co["low"], co["high"]] == r["n_star_ci95"], co
for k in ("law", "constants", "coefficients"):
    s = iv["by_source"][k]
    assert h["low"] <= s["low"] <= r["n_star"] * 1.000001 and s["high"] <= h["high"], (k, s, h)
assert any("draft size N" in w for w in r["warnings"]), r["warnings"]  # a log-linear law below its fitted N
print("sdsl plan --bootstrap 200 --json (OPT-13B): N* interval [%.4g, %.4g] over every source" % (h["low"], h["high"]))
PYEOF
out=$("$V/sdsl" presets) || fail "sdsl presets"
grep -q "llama-3.1-405b" <<<"$out" || fail "sdsl presets does not list llama-3.1-405b"
out=$("$V/sdsl" presets --plan) || fail "sdsl presets --plan"
grep -q "mixture of experts" <<<"$out" || fail "sdsl presets --plan does not refuse the mixture-of-experts presets"
grep -q "tokens unknown" <<<"$out" || fail "sdsl presets --plan does not say which tokens are unknown"
grep -qE "^llama-3-70b .* 2\.77[0-9]x +2\.42[0-9]x +6 +2$" <<<"$out" || fail "sdsl presets --plan: Llama-3-70B's wall-clock speedup on 2 H100s"
out=$("$V/sdsl" speedup --alpha 0.8 --cost-ratio 0.05 --gamma 5) || fail "sdsl speedup"
grep -q "2.9514x" <<<"$out" || fail "sdsl speedup: Theorem 3.8 at alpha 0.8, c 0.05, gamma 5 is 2.9514x"
"$V/sdsl" plan --preset qwen3-30b-a3b >/dev/null 2>"$tmp/err" && fail "a mixture-of-experts preset was planned"
[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "mixture-of-experts" "$tmp/err" || fail "the MoE refusal is not one line"
"$V/sdsl" plan --preset llama-3-70b --hardware h100-sxm --gpus 2 --batch 1,64 --json >/dev/null || fail "sdsl plan --hardware"
# a candidate draft's alpha, gamma and wall-clock speedup, and the step-time model's prediction, without pandas or scipy
json=$("$V/sdsl" plan --preset llama-3-8b --hardware h200 --draft-params 1.24e9 --gamma 3 --json) || fail "sdsl plan --draft-params"
"$V/python" -c 'import json, sys; c = json.loads(sys.argv[1])["candidates"][0]; assert c["gamma"] == 3 and 0 < c["alpha"] < 1 and c["speedup"] > 0, c' "$json" \
  || fail "sdsl plan --draft-params --json: no alpha, gamma and speedup per candidate"
"$V/sdsl" steps predict --hardware h200 "$repo/data/h200_step_times.csv" | head -n 2 | grep -q "predicted_s" || fail "sdsl steps predict"
"$V/sdsl" steps fit "$repo/data/h200_step_times.csv" -o "$tmp/gpu.yml" 2>"$tmp/err" && fail "sdsl steps fit ran without scipy"
grep -q "pip install 'sdsl\[analysis\]'" "$tmp/err" && [ "$(wc -l < "$tmp/err")" = 1 ] || fail "sdsl steps fit does not name the extra it needs"
out=$("$V/sdsl" plan --preset llama-3-70b --alpha-source published --temperature 0.7) || fail "sdsl plan --alpha-source published"
grep -q "out of sample (leave one target out)" <<<"$out" || fail "sdsl plan --alpha-source published: no held-out error beside alpha"

# sdsl alpha on engine output, from the base install (no scipy: the p-value is said to need it)
out=$("$V/sdsl" alpha "$repo/tests/fixtures/vllm_single.txt") || fail "sdsl alpha on a vLLM scrape exited $?"
grep -q "alpha = 0.7505" <<<"$out" || fail "sdsl alpha on a vLLM scrape: expected alpha = 0.7505, got: $out"
grep -q "no p-value: scipy is not installed" <<<"$out" || fail "sdsl alpha: the base install does not say the p-value needs scipy"
echo "sdsl alpha (base install): $(grep -o 'alpha = [^(]*' <<<"$out" | head -n 1)"
# a command that needs an extra says which, in one line, exit 2
status=0
"$V/python" -m sdsl.experiment run --scale smoke --out "$tmp/exp" >/dev/null 2>"$tmp/err" || status=$?
[ "$status" = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -qF "pip install 'sdsl[experiment]'" "$tmp/err" \
  || fail "python -m sdsl.experiment run in the base install: expected one line naming sdsl[experiment] and exit 2, got $status: $(head -c 300 "$tmp/err")"
[ ! -e "$tmp/exp" ] || fail "python -m sdsl.experiment run in the base install wrote $tmp/exp"
echo "python -m sdsl.experiment run (base install): $(cat "$tmp/err")"

# 4. the other Pythons of this machine: install the wheel and run the planning commands
for v in 3.12 3.13; do
  other=python$v
  # a pyenv shim exists for every installed version but runs only the selected ones: take the binary
  "$other" -c '' 2>/dev/null || other=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$v*/bin/python$v 2>/dev/null | head -n 1)
  [ -n "$other" ] && "$other" -c '' 2>/dev/null || { echo "python$v: not on this machine, not checked"; continue; }
  "$other" -m venv "$tmp/venv-$v"
  W="$tmp/venv-$v/bin"
  pipq "$W/python" -m pip install --constraint "$tmp/constraints.txt" "$whl"
  "$W/sdsl" plan --preset llama-3-70b >/dev/null || fail "python$v: sdsl plan --preset llama-3-70b"
  "$W/sdsl" presets >/dev/null || fail "python$v: sdsl presets"
  out=$("$W/sdsl" speedup --alpha 0.8 --cost-ratio 0.05 --gamma 5) && grep -q "2.9514x" <<<"$out" || fail "python$v: sdsl speedup"
  out=$("$W/sdsl" alpha "$repo/tests/fixtures/vllm_single.txt") && grep -q "alpha = 0.7505" <<<"$out" || fail "python$v: sdsl alpha"
  echo "$("$W/python" --version): sdsl plan, presets, speedup and alpha run from the wheel"
done

# 5. optional: what an extra adds
if [ -n "${EXTRAS:-}" ]; then
  pipq "$V/python" -m pip install --constraint "$tmp/constraints.txt" "${whl}[${EXTRAS}]"
  with=$(du -sk "$site" | cut -f1)
  echo "with [${EXTRAS}]: $(( (with - before) / 1024 )) MB"
fi
echo "wheel check passed"

# Shared by tools/wheel_check.sh and tools/extras_check.sh (sourced, not run): the work folder, the
# lock's pins as pip constraints and the wheel built from the source tree. The caller sets PY (the
# Python to build with) and CHECK (its name in words, "wheel check": messages, the work folder and the script named after it).
#
# The work folder is a new one made by mktemp and marked as the tools' (.sdsl-owned): the cleanup
# removes only that folder, and only while it carries the mark; nothing beside it is touched.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# What is checked is the installed wheel, in environments of its own: nothing of the caller's Python
# setup may reach pip or the checks. With the checkout on PYTHONPATH (PYTHONPATH=. or a value ending
# in ':', which adds the current folder) pip took the checkout's sdsl.egg-info for an installed sdsl
# and skipped the wheel; the checks would import the checkout instead of the wheel.
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP PYTHONUSERBASE PIP_TARGET PIP_PREFIX PIP_USER
export PYTHONNOUSERSITE=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sdsl-${CHECK// /-}.XXXXXX" 2>/dev/null) \
  || { echo "$CHECK: cannot make a work folder in ${TMPDIR:-/tmp} (TMPDIR): it must be a writable folder" >&2; exit 2; }
echo "Made by tools/${CHECK// /_}.sh, which removes this folder when it ends (KEEP=1 keeps it)." > "$tmp/.sdsl-owned"
cleanup() {
  if [ -n "${KEEP:-}" ]; then echo "kept $tmp"; elif [ -f "$tmp/.sdsl-owned" ]; then rm -rf -- "$tmp"; fi
}
trap cleanup EXIT
fail() { echo "$CHECK FAILED: $*" >&2; exit 1; }
# pip, quietly; when it fails, what pip said (its own error) and the command, and the check stops
pipq() {
  local out status=0
  out=$(cd "$tmp" && "$@" --quiet --disable-pip-version-check 2>&1) || status=$?
  out=$(grep -v "^WARNING: Location" <<<"$out" || true)
  if [ "$status" -ne 0 ]; then
    [ -z "$out" ] || echo "$out" >&2
    fail "pip exited with status $status (what it said is above): $(basename "$1") ${*:2:3} ..."
  fi
  [ -z "$out" ] || echo "$out"
}
# the lock's pins as constraints (a constraints file may not carry hashes); torch's local tag (+cpu)
# stays out so that the index's CPU build satisfies it
sed -n 's/^\([A-Za-z0-9._-]*==[^ ]*\).*/\1/p' "$repo/requirements.lock" | sed 's/+cpu$//' > "$tmp/constraints.txt"

# the wheel, built from a copy of the tracked and untracked-but-not-ignored files; sets $whl
build_wheel() {
  mkdir -p "$tmp/src" "$tmp/dist"
  (cd "$repo" && git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents {} "$tmp/src/" 2>/dev/null) \
    || fail "could not copy the source tree"
  "$PY" -m venv "$tmp/build-env"
  pipq "$tmp/build-env/bin/python" -m pip wheel --no-deps -w "$tmp/dist" "$tmp/src"
  whl=$(ls "$tmp"/dist/sdsl-*.whl 2>/dev/null | head -n 1)
  [ -n "$whl" ] || fail "no wheel was built"
}

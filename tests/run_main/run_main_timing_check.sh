#!/usr/bin/env bash
# scripts/run-main's step and total times are real: with a stand-in taskring
# that sleeps 0.3 s per call, every "(<step> done in X s)" must say at least
# 0.3 and the closing "all N steps passed in T s" at least N x 0.3 (lower
# bounds only: a loaded machine can only make them larger).
#   run_main_timing_check.sh <scratch dir>
set -euo pipefail
dir=$1
root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$dir"
mkdir -p "$dir"
cat >"$dir/fake-taskring" <<'FAKE'
#!/usr/bin/env bash
sleep 0.3
echo "fake taskring $*"
FAKE
chmod +x "$dir/fake-taskring"
out="$dir/terminal.txt"
fail() {
  cat "$out"
  echo "run_main_timing_check: $*" >&2
  exit 1
}
TASKRING_BIN="$dir/fake-taskring" RUN_MAIN_DIR="$dir/run" "$root/scripts/run-main" >"$out" 2>&1 ||
  fail "scripts/run-main failed"
mapfile -t times < <(sed -nE 's/^    \(([a-z_]+) done in ([0-9]+\.[0-9]) s\)$/\2/p' "$out")
steps=$(grep -cE '^==> \[[0-9]+/[0-9]+\]' "$out")
((steps > 0)) || fail "no step started"
((${#times[@]} == steps)) || fail "$steps steps started but ${#times[@]} printed a time"
for t in "${times[@]}"; do
  # tenths of a second, as an integer
  ((10#${t/./} >= 3)) || fail "a step that slept 0.3 s reported ${t} s"
done
total=$(sed -nE 's/^run-main: all [0-9]+ steps passed in ([0-9]+\.[0-9]) s$/\1/p' "$out")
[[ -n $total ]] || fail "no closing 'all N steps passed in T s' line"
((10#${total/./} >= 3 * steps)) || fail "$steps steps of 0.3 s each reported a total of ${total} s"
echo "run_main_timing_check: OK ($steps steps, ${times[*]} s, total $total s)"

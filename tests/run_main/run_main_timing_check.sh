#!/usr/bin/env bash
# scripts/run-main's step and total times are real: with a stand-in taskring
# that sleeps 0.01 s for `info` and 0.3 s for every other step, each
# "(<step> done in D)" must say at least that long (a 10 ms step must not read
# "0.0 s"), and the closing "all N steps passed in T" at least their sum.
# Lower bounds only: a loaded machine can only make the times larger.
#   run_main_timing_check.sh <scratch dir>
set -euo pipefail
dir=$1
root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$dir"
mkdir -p "$dir"
cat >"$dir/fake-taskring" <<'FAKE'
#!/usr/bin/env bash
if [[ $1 == info ]]; then sleep 0.01; else sleep 0.3; fi
echo "fake taskring $*"
FAKE
chmod +x "$dir/fake-taskring"
out="$dir/terminal.txt"
fail() {
  cat "$out"
  echo "run_main_timing_check: $*" >&2
  exit 1
}
# to_ms "43 ms" | "1.2 s": milliseconds as an integer.
to_ms() {
  case $1 in
  *" ms") echo "${1% ms}" ;;
  *.?" s") local t=${1% s}; echo $((10#${t/./} * 100)) ;;
  *) fail "not a duration: '$1'" ;;
  esac
}
TASKRING_BIN="$dir/fake-taskring" RUN_MAIN_DIR="$dir/run" "$root/scripts/run-main" >"$out" 2>&1 ||
  fail "scripts/run-main failed"
steps=$(grep -cE '^==> \[[0-9]+/[0-9]+\]' "$out")
((steps > 1)) || fail "fewer than two steps started"
mapfile -t lines < <(sed -nE 's/^    \(([a-z_]+) done in (.*)\)$/\1 \2/p' "$out")
((${#lines[@]} == steps)) || fail "$steps steps started but ${#lines[@]} printed a time"
sum=0
for line in "${lines[@]}"; do
  name=${line%% *}
  ms=$(to_ms "${line#* }")
  want=300
  [[ $name == info ]] && want=10
  ((ms >= want)) || fail "step $name slept $want ms but reported '${line#* }'"
  sum=$((sum + want))
done
total=$(sed -nE 's/^run-main: all [0-9]+ steps passed in (.*)$/\1/p' "$out")
[[ -n $total ]] || fail "no closing 'all N steps passed in T' line"
(($(to_ms "$total") >= sum)) || fail "the steps slept $sum ms in all but the total says '$total'"
echo "run_main_timing_check: OK ($steps steps, total $total)"

#!/usr/bin/env bash
# Runs scripts/run-main (what `make run` runs) against a built taskring and
# checks what a newcomer sees: every step passes, no raw span record reaches
# the terminal, and the summary names `taskring trace` commands that work.
#   run_main_check.sh <taskring binary> <scratch dir>
set -euo pipefail
bin=$1
dir=$2
root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$dir"
mkdir -p "$dir"
out="$dir/terminal.txt"
if ! TASKRING_BIN="$bin" RUN_MAIN_DIR="$dir/run" "$root/scripts/run-main" > "$out" 2>&1; then
  cat "$out"
  echo "run_main_check: scripts/run-main failed" >&2
  exit 1
fi
fail() {
  cat "$out"
  echo "run_main_check: $*" >&2
  exit 1
}
if grep -aE '\[STRACE\] v=|\[CLOCK_ANCHOR\] v=' "$out" > "$dir/raw.txt"; then
  fail "$(wc -l < "$dir/raw.txt") raw span line(s) on the terminal, e.g.: $(head -1 "$dir/raw.txt")"
fi
grep -qE "run-main: all [0-9]+ steps passed" "$out" || fail "no final summary"
ls "$dir"/run/spans/paged_attention/strace.*.log > /dev/null || fail "no span file for paged_attention"
# The two commands the summary prints must run as printed.
mapfile -t cmds < <(grep -E "^    .* trace " "$out" | sed 's/^    //')
[[ ${#cmds[@]} -eq 2 ]] || fail "expected 2 'taskring trace' commands in the summary, found ${#cmds[@]}"
[[ "${cmds[1]}" == *"--html "* ]] || fail "the summary does not name the --html command"
for c in "${cmds[@]}"; do
  if ! eval "$c" > "$dir/trace.txt" 2>&1; then
    cat "$dir/trace.txt"
    fail "the summary's command failed: $c"
  fi
done
echo "run_main_check: OK"

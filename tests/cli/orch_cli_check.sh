#!/usr/bin/env bash
# `taskring orch` under careless and hostile use (issue 38): each case checks
# the exit status and the message. Every run is bounded by `timeout`.
#   orch_cli_check.sh <taskring binary> <scratch dir> <case>
# Cases: bare_name, huge_tensor, throw_tmr, throw_hbg, extra_tensor,
# kernel_twice, name_twice, stdout_full, loop_tmr, loop_hbg.
set -uo pipefail
bin=$1
dir=$2
case_name=$3
root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$dir"
cache="$dir/cache"
vec_kernels=(--kernel 0=add --kernel 1=add_scalar --kernel 2=mul)
vec_tensors=(--tensor in:f32[64]=2 --tensor in:f32[64]=3 --tensor out:f32[64])

# run_case EXPECTED_RC REGEX -- command...: runs it (120 s at most), checks both.
run_case() {
  local want_rc=$1 regex=$2
  shift 3
  local out="$dir/$case_name.out"
  timeout 120 "$@" > "$out" 2>&1
  local rc=$?
  if [[ $rc -ne $want_rc ]] || ! grep -qE -- "$regex" "$out"; then
    cat "$out"
    echo "orch_cli_check $case_name: exit $rc (want $want_rc), output must match: $regex" >&2
    exit 1
  fi
  echo "orch_cli_check $case_name: OK"
}

case "$case_name" in
  bare_name)
    # A source named without a directory: the compiler got a bare -I that swallowed -o.
    cd "$root/tests/compat/orch" || exit 1
    run_case 0 "all 47" -- "$bin" orch vector_orch.cpp "${vec_kernels[@]}" "${vec_tensors[@]}" --cache-dir "$cache" ;;
  huge_tensor)
    # 16 GiB does not fit the default 16 GiB arena beside its heap rings: refused before
    # any byte is allocated (under a 4 GB address-space limit an allocation would fail).
    run_case 2 "needs 16384 MiB of device memory; the sim arena holds 16384 MiB" -- \
      bash -c 'ulimit -v 4000000 && exec "$0" "$@"' "$bin" orch "$root/tests/compat/orch/vector_orch.cpp" \
      "${vec_kernels[@]}" --tensor 'in:f32[1073741824x4]=2' --cache-dir "$cache" ;;
  throw_tmr | throw_hbg)
    run_case 1 "EXPLICIT_ORCH_FATAL: the orchestration threw an exception: boom from the orchestration" -- \
      "$bin" orch "$root/tests/cli/orch/throw_orch.cpp" --kernel 0=copy --tensor in:f32[64]=1 \
      --tensor out:f32[64] --runtime "${case_name#throw_}" --cache-dir "$cache" ;;
  extra_tensor)
    # docs/compat.md: the config's expected_arg_count is enforced; a stray --tensor too.
    run_case 1 "expects 3 arguments \(tensors \+ scalars\), got 4" -- \
      "$bin" orch "$root/tests/compat/orch/vector_orch.cpp" "${vec_kernels[@]}" "${vec_tensors[@]}" \
      --tensor in:f32[64] --cache-dir "$cache" ;;
  kernel_twice)
    run_case 2 "--kernel 0=mul: func id 0 is already mapped to 'add'" -- \
      "$bin" orch "$root/tests/compat/orch/vector_orch.cpp" "${vec_kernels[@]}" --kernel 0=mul "${vec_tensors[@]}" \
      --cache-dir "$cache" ;;
  name_twice)
    run_case 2 "--tensor x:in:f32\[64\]=3: the name 'x' is already taken by --tensor x:in:f32\[64\]=2" -- \
      "$bin" orch "$root/tests/compat/orch/vector_orch.cpp" "${vec_kernels[@]}" --tensor 'x:in:f32[64]=2' \
      --tensor 'x:in:f32[64]=3' --tensor out:f32[64] --cache-dir "$cache" ;;
  stdout_full)
    # The summary cannot be written: the run succeeded but the command did not.
    run_case 1 "could not write the output to stdout" -- bash -c 'exec "$0" "$@" > /dev/full' \
      "$bin" orch "$root/tests/compat/orch/vector_orch.cpp" "${vec_kernels[@]}" "${vec_tensors[@]}" \
      --cache-dir "$cache" ;;
  loop_tmr | loop_hbg)
    # An orchestration that never returns: the run timeout ends the run.
    run_case 1 "run did not finish within 2000 ms" -- \
      env TASKRING_RUN_TIMEOUT_MS=2000 TASKRING_STALL_TIMEOUT_MS=1000 \
      "$bin" orch "$root/tests/cli/orch/loop_orch.cpp" --kernel '*=noop' --runtime "${case_name#loop_}" \
      --cache-dir "$cache" ;;
  *)
    echo "orch_cli_check: unknown case $case_name" >&2
    exit 2 ;;
esac

#!/usr/bin/env bash
# The installed tree, as a user outside this repository meets it
# (tests/install/CMakeLists.txt registers one CTest test per mode):
#   prefix     BUILD PREFIX         cmake --install into a fresh PREFIX; the files that must be there
#   cmake      SRC PREFIX WORK      examples/consumer via find_package(taskring), static layers
#   pkgconfig  SRC PREFIX WORK      examples/consumer via taskring.pc (CMake and a plain g++ line), libtaskring.so
#   readme     SRC PREFIX WORK      the README's C++ example, extracted and built against PREFIX, run
#   python     PREFIX PYTHON        the installed Python package imports from PREFIX and runs a task
#   wheel      SRC BUILD WORK PYTHON TESTS...
#                                   pyproject.toml: `pip install .` and `python -m build --wheel` into a
#                                   venv (--system-site-packages, no network), then the pytest files
#                                   TESTS (under SRC/python/tests) against the installed package
set -euo pipefail
mode=$1
shift
fail() { echo "install_check $mode: $*" >&2; exit 1; }
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi

# quiet CMD...: runs CMD with its output kept back, shown only when it fails.
quiet() {
  local log
  if ! log=$("$@" 2>&1); then
    echo "$log"
    fail "failed: $*"
  fi
}

# run_consumer EXE: runs it and requires its closing line.
run_consumer() {
  local log
  log=$(TASKRING_LOG_LEVEL=WARN timeout 120 "$1" 2>&1) || { echo "$log"; fail "$1 exited non-zero"; }
  echo "$log"
  grep -qx "consumer: ok" <<<"$log" || fail "$1 did not print 'consumer: ok'"
}

case $mode in
prefix)
  build=$1 prefix=$2
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  for f in bin/taskring include/taskring/chip/chip_worker.hpp include/taskring/node/node_worker.hpp \
           include/taskring/c_api.h include/pto_orchestration_api.h \
           lib/libtaskring_chip.a lib/libtaskring_node.a lib/libtaskring_trace.a lib/libtaskring_base.a \
           lib/libtaskring.so lib/cmake/taskring/taskringConfig.cmake \
           lib/cmake/taskring/taskringConfigVersion.cmake lib/cmake/taskring/taskringTargets.cmake \
           lib/pkgconfig/taskring.pc; do
    [ -e "$prefix/$f" ] || fail "missing $prefix/$f"
  done
  real=$(readlink -f "$prefix/lib/libtaskring.so")
  soname=$(objdump -p "$real" | awk '$1 == "SONAME" { print $2 }')
  [ -n "$soname" ] || fail "$real has no SONAME"
  [ -e "$prefix/lib/$soname" ] || fail "SONAME $soname is not installed next to $real"
  case $(basename "$real") in libtaskring.so.*.*.*) ;; *) fail "$real is not a versioned file name" ;; esac
  ls "$prefix"/lib/python3*/site-packages/taskring/_taskring*.so >/dev/null 2>&1 ||
    fail "the Python package (with _taskring) is not under $prefix/lib/python3*/site-packages"
  TASKRING_LOG_LEVEL=WARN "$prefix/bin/taskring" info >/dev/null || fail "$prefix/bin/taskring info failed"
  echo "installed into $prefix: libtaskring.so -> $(basename "$real") (SONAME $soname), CLI, headers, CMake package, taskring.pc"
  ;;
cmake)
  src=$1 prefix=$2 work=$3
  rm -rf "$work"
  cmake -S "$src/examples/consumer" -B "$work" "${generator[@]}" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  quiet cmake --build "$work"
  run_consumer "$work/consumer"
  ;;
pkgconfig)
  src=$1 prefix=$2 work=$3
  rm -rf "$work"
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  [ "$(pkg-config --modversion taskring)" != "" ] || fail "pkg-config does not find taskring in $PKG_CONFIG_PATH"
  cmake -S "$src/examples/consumer" -B "$work/cmake" "${generator[@]}" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCONSUMER_USE_PKGCONFIG=ON >/dev/null
  quiet cmake --build "$work/cmake"
  # Linked against the shared library, not the archives.
  objdump -p "$work/cmake/consumer" | grep 'NEEDED.*libtaskring\.so' >/dev/null || fail "consumer does not need libtaskring.so"
  run_consumer "$work/cmake/consumer"
  # shellcheck disable=SC2046  # pkg-config's flags are meant to split
  ${CXX:-c++} -std=c++20 -O1 "$src/examples/consumer/main.cpp" $(pkg-config --cflags --libs taskring) \
    -Wl,-rpath,"$prefix/lib" -o "$work/consumer-cxx"
  run_consumer "$work/consumer-cxx"
  ;;
readme)
  src=$1 prefix=$2 work=$3
  rm -rf "$work" && mkdir -p "$work"
  # The block after the marker line, between its ```cpp fence and the closing one.
  awk '/<!-- example: readme_orchestration.cpp -->/ { on = 1; next }
       on == 1 && /^```cpp/ { on = 2; next }
       on == 2 && /^```/ { exit }
       on == 2 { print }' "$src/README.md" >"$work/readme_orchestration.cpp"
  [ -s "$work/readme_orchestration.cpp" ] || fail "no C++ example after '<!-- example: readme_orchestration.cpp -->' in README.md"
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  # shellcheck disable=SC2046
  ${CXX:-c++} -std=c++20 -O1 -Wall -Werror "$work/readme_orchestration.cpp" $(pkg-config --cflags --libs taskring) \
    -Wl,-rpath,"$prefix/lib" -o "$work/readme_orchestration"
  log=$(TASKRING_LOG_LEVEL=WARN timeout 60 "$work/readme_orchestration" 2>&1) || { echo "$log"; fail "the README example exited non-zero"; }
  echo "$log"
  ;;
python)
  prefix=$1 python=$2
  site=$(echo "$prefix"/lib/python3*/site-packages)
  cd "$(mktemp -d)"
  TASKRING_LOG_LEVEL=WARN PYTHONPATH=$site PYTHONDONTWRITEBYTECODE=1 timeout 120 "$python" - "$site" <<'PY'
import os, sys
import numpy as np
import taskring
site = os.path.realpath(sys.argv[1])
where = os.path.realpath(taskring.__file__)
assert where.startswith(site + os.sep), f"taskring imported from {where}, not from the prefix {site}"
a, b, f = np.full(4096, 2, np.float32), np.full(4096, 3, np.float32), np.zeros(4096, np.float32)
with taskring.ChipWorker() as w:
    w.run(taskring.Callable.workload("vector"),
          [(a, taskring.INPUT), (b, taskring.INPUT), (f, taskring.OUTPUT_EXISTING)])
assert (f == 47).all(), f"vector: f[0] = {f[0]}, want 47"
print(f"python: taskring from {where}: vector ok")
PY
  ;;
wheel)
  src=$1 build=$2 work=$3 python=$4
  shift 4
  rm -rf "$work" && mkdir -p "$work"
  "$python" -m venv --system-site-packages "$work/venv" || fail "python3 -m venv failed (scripts/bootstrap installs python3-venv)"
  venv_py=$work/venv/bin/python
  site=$("$venv_py" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
  # The extension comes from BUILD (already built by `make build`); setup.py
  # otherwise configures and builds build/pip-<abi> itself.
  export TASKRING_CMAKE_BUILD_DIR=$build PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
  quiet "$venv_py" -m pip install --no-build-isolation --no-deps "$src"
  where=$(cd "$work" && "$venv_py" -c 'import taskring, os; print(os.path.realpath(taskring.__file__))')
  [[ $where == "$(realpath "$site")"/* ]] || fail "pip install .: taskring imports from $where, not from $site"
  quiet "$venv_py" -m pip uninstall -y taskring
  quiet "$venv_py" -m build --wheel --no-isolation --outdir "$work/dist" "$src"
  wheels=("$work"/dist/taskring-*.whl)
  [ -e "${wheels[0]}" ] || fail "python -m build made no taskring wheel in $work/dist"
  "$venv_py" -m zipfile -l "${wheels[0]}" | grep 'taskring/_taskring.*\.so' >/dev/null || fail "${wheels[0]} lacks the _taskring extension"
  quiet "$venv_py" -m pip install --no-deps "${wheels[0]}"
  tests=()
  for t in "$@"; do tests+=("$src/python/tests/$t"); done
  # From a scratch directory with no PYTHONPATH: conftest.py refuses any
  # taskring but the one under $site (TASKRING_PY_EXPECT_INSTALLED).
  cd "$work"
  env -u PYTHONPATH TASKRING_PY_EXPECT_INSTALLED="$site" PYTHONDONTWRITEBYTECODE=1 TASKRING_LOG_LEVEL=WARN \
    timeout 500 "$venv_py" -m pytest -q -p no:cacheprovider "${tests[@]}"
  echo "wheel: $(basename "${wheels[0]}") installed into $work/venv; ${#tests[@]} test files passed against it"
  ;;
*)
  fail "unknown mode (prefix, cmake, pkgconfig, readme, python)"
  ;;
esac

# The two set-up commands (README.md): `make run` and `make test`.
# Both install what is missing first (scripts/bootstrap).
JOBS ?= $(shell nproc)
TASKRING = build/release/tools/taskring/taskring

.PHONY: run test test-release bootstrap build build-main test-asan test-tsan test-slow bench clean python-install install

bootstrap:
	@scripts/bootstrap

build: bootstrap
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

# `make run` builds only the `taskring` command (about half of the tree's
# objects: no test suites, benchmarks or Python bindings), so a first run
# starts sooner; `make build` / `make test` build everything.
build-main: bootstrap
	@start=$$(date +%s); \
	cmake --preset release >/dev/null && \
	cmake --build --preset release -j $(JOBS) --target taskring; rc=$$?; \
	echo "[make run] build of the taskring command: $$(( $$(date +%s) - start )) s"; exit $$rc

run: build-main
	scripts/run-main

# What CI runs (.ci/run): the whole Release suite, then the ASan+UBSan and the
# TSan builds of the suites labelled 'sanitize' (runtime/chip, graph, device,
# log, kernels, tensor, base, C ABI, node engine). TASKRING_SANITIZERS=0 skips
# the two sanitizer phases for a quick local run; `make test-release` is the
# Release suite alone. Each phase prints its wall time.
test:
	@$(MAKE) --no-print-directory test-release
	@if [ "$${TASKRING_SANITIZERS:-1}" != "0" ]; then \
	  $(MAKE) --no-print-directory test-asan && $(MAKE) --no-print-directory test-tsan; fi

test-release: build
	@start=$$(date +%s); \
	ctest --preset release -j $(JOBS) $(CTEST_ARGS); rc=$$?; \
	echo "[make test] release suite: $$(( $$(date +%s) - start )) s"; exit $$rc

# Sanitizer builds compile only the 'sanitize' test executables (target
# sanitize_tests; ASan also the fork-based 'asan' ones, target asan_tests)
# and run the tests so labelled (not 'slow'); the
# scalable suites run their sanitizer slice (tests/test_scale.hpp).
test-asan: bootstrap
	@start=$$(date +%s); \
	cmake --preset asan >/dev/null && \
	cmake --build --preset asan -j $(JOBS) --target sanitize_tests asan_tests && \
	ctest --preset asan -j $(JOBS) $(CTEST_ARGS); rc=$$?; \
	echo "[make test] asan+ubsan build and suite: $$(( $$(date +%s) - start )) s"; exit $$rc

test-tsan: bootstrap
	@start=$$(date +%s); \
	cmake --preset tsan >/dev/null && \
	cmake --build --preset tsan -j $(JOBS) --target sanitize_tests && \
	ctest --preset tsan -j $(JOBS) $(CTEST_ARGS); rc=$$?; \
	echo "[make test] tsan build and suite: $$(( $$(date +%s) - start )) s"; exit $$rc

# Full runs of the scalable suites (30000 differential programs, thousands of
# tiny-ring and bad-argument cases): opt-in, not in CI.
test-slow: build
	ctest --preset slow -j $(JOBS) $(CTEST_ARGS)

# Installs the `taskring` Python package (built by `make build`) for Debian's
# /usr/bin/python3, into its platlib (/usr/local/lib/python3.X/dist-packages).
python-install: build
	cmake --install build/release --component python

# Installs headers, libraries, the CLI, the Python package, the CMake package
# and taskring.pc under PREFIX (docs/install.md).
PREFIX ?= /usr/local
install: build
	cmake --install build/release --prefix $(PREFIX)

bench: build
	scripts/run-bench

clean:
	rm -rf build

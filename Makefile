# The two set-up commands (README.md): `make run` and `make test`.
# Both install what is missing first (scripts/bootstrap).
JOBS ?= $(shell nproc)
TASKRING = build/release/tools/taskring/taskring

.PHONY: run test bootstrap build test-asan test-tsan bench clean python-install

bootstrap:
	@scripts/bootstrap

build: bootstrap
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

run: build
	scripts/run-main

test: build
	ctest --preset release -j $(JOBS) $(CTEST_ARGS)
	@if [ -n "$${TASKRING_SANITIZERS:-}" ]; then $(MAKE) --no-print-directory test-asan test-tsan; fi

# Sanitizer builds run the tests labelled 'sanitize' (the concurrency and
# memory-safety suites), bounded so that CI stays well under its limit.
# Both run with TASKRING_SANITIZERS=1 (see README); not yet in CI.
test-asan: bootstrap
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -L sanitize -j $(JOBS)

test-tsan: bootstrap
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS)
	ctest --preset tsan -L sanitize -j $(JOBS)

# Installs the `taskring` Python package (built by `make build`) for Debian's
# /usr/bin/python3, into its platlib (/usr/local/lib/python3.X/dist-packages).
python-install: build
	cmake --install build/release --component python

bench: build
	scripts/run-bench

clean:
	rm -rf build

#!/usr/bin/python3
"""Per-task overhead quiet and beside one busy process, taskring and oneTBB in
the same minutes (issue 32, item 5: a runtime that doubles its cost when one
other CPU-bound process runs is not usable on a shared machine).

    bench/overhead/under_load.py [--pairs 4] [--tasks 100000] [--reps 5] [--json FILE]

Each pair runs every binary quiet, then with one `while true` process (a
forked Python child spinning) beside it, so host drift hits both conditions
alike. Binaries: build/release/bench/overhead/bench_overhead_taskring (rows
taskring and taskring-inline) and build/bench-peers/bench_overhead_tbb
(scripts/run-bench-peers builds it; skipped with a note when absent).
Prints per runtime and pattern the quiet and loaded medians (of the pairs'
medians) and their ratio: loaded / quiet.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINARIES = [ROOT / "build/release/bench/overhead/bench_overhead_taskring", ROOT / "build/bench-peers/bench_overhead_tbb"]


def run(binary, tasks, reps):
    env = dict(os.environ, TASKRING_LOG_LEVEL="WARN")
    r = subprocess.run([str(binary), "--tasks", str(tasks), "--reps", str(reps)], capture_output=True, text=True,
                       env=env)
    if r.returncode != 0:
        sys.exit(f"under_load: {binary} failed: {r.stderr[-1000:]}")
    out = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            j = json.loads(line)
            out[(j["runtime"], j["pattern"])] = j["ns_per_task"]
    return out


def busy_process():
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    time.sleep(0.2)  # let it reach the CPU
    return pid


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--tasks", type=int, default=100000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    binaries = [b for b in BINARIES if b.exists()]
    for b in BINARIES:
        if not b.exists():
            print(f"note: {b} not built, skipped", file=sys.stderr)
    if not binaries:
        sys.exit("under_load: no benchmark binary built (make build; scripts/run-bench-peers)")
    samples = {}  # (runtime, pattern, condition) -> [ns]
    load_start = Path("/proc/loadavg").read_text().split()[:3]
    for p in range(args.pairs):
        for condition in ("quiet", "loaded"):
            pid = busy_process() if condition == "loaded" else None
            try:
                for b in binaries:
                    for key, ns in run(b, args.tasks, args.reps).items():
                        samples.setdefault((*key, condition), []).append(ns)
            finally:
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
        print(f"[under_load] pair {p + 1}/{args.pairs} done", file=sys.stderr, flush=True)
    rows = []
    for (rt, pat, cond) in sorted(samples):
        if cond != "quiet" or (rt, pat, "loaded") not in samples:
            continue
        q = statistics.median(samples[(rt, pat, "quiet")])
        l = statistics.median(samples[(rt, pat, "loaded")])
        rows.append({"runtime": rt, "pattern": pat, "quiet_ns": q, "loaded_ns": l, "loaded_over_quiet": l / q,
                     "quiet_samples": samples[(rt, pat, "quiet")], "loaded_samples": samples[(rt, pat, "loaded")]})
    print(f"ns per task, median of {args.pairs} runs each; load {' '.join(load_start)} -> "
          f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print(f"{'runtime':<16} {'pattern':<12} {'quiet':>8} {'loaded':>8} {'loaded/quiet':>13}")
    for r in rows:
        print(f"{r['runtime']:<16} {r['pattern']:<12} {r['quiet_ns']:>8.0f} {r['loaded_ns']:>8.0f} "
              f"{r['loaded_over_quiet']:>12.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"schema": "taskring.bench.under-load/1", "pairs": args.pairs,
                                               "tasks": args.tasks, "reps": args.reps, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

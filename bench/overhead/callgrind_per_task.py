#!/usr/bin/python3
"""Instructions per task on the L2 hot path, counted by callgrind (exact and
repeatable, whatever the host's load: the figure to track when timings are
noise).

    bench/overhead/callgrind_per_task.py [--binary B] [--pattern chain] [--json FILE]

Runs bench_overhead_taskring under `valgrind --tool=callgrind
--separate-threads=yes` at two task counts with one executor, once for the
inline row and once for the threaded row (`--rows`), and divides the
difference of each thread's instruction count by the difference of the
task counts, so start-up and per-run costs cancel. Inline: the main thread
(submit + execute on one thread). Threaded: each busy thread and their sum
(callgrind serialises threads, so the split between orchestrator and
executor is its schedule's). OPENBLAS_NUM_THREADS=1: OpenBLAS's own worker thread, which spins
after the library loads, is left out.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def thread_totals(binary, pattern, tasks, outdir, row):
    prefix = os.path.join(outdir, f"cg.{row}.{tasks}")
    env = dict(os.environ, TASKRING_LOG_LEVEL="WARN", OPENBLAS_NUM_THREADS="1")
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={prefix}",
           str(binary), "--tasks", str(tasks), "--reps", "1", "--warmup", "0", "--pattern", pattern, "--threads", "1",
           "--rows", row]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"callgrind_per_task: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    totals = {}
    for f in glob.glob(prefix + "-*"):
        thread = int(f.rsplit("-", 1)[1])
        text = Path(f).read_text(errors="replace")
        m = re.search(r"^summary:\s+(\d+)", text, re.M) or re.search(r"^totals:\s+(\d+)", text, re.M)
        totals[thread] = int(m.group(1)) if m else 0
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=str(ROOT / "build/release/bench/overhead/bench_overhead_taskring"))
    ap.add_argument("--pattern", default="chain")
    ap.add_argument("--low", type=int, default=10000)
    ap.add_argument("--high", type=int, default=30000)
    ap.add_argument("--json")
    args = ap.parse_args()
    n = args.high - args.low
    per = {}
    with tempfile.TemporaryDirectory() as d:
        for row in ("taskring-inline", "taskring-threaded"):
            lo = thread_totals(args.binary, args.pattern, args.low, d, row)
            hi = thread_totals(args.binary, args.pattern, args.high, d, row)
            busy = [(t, (hi.get(t, 0) - lo.get(t, 0)) / n) for t in sorted(set(lo) | set(hi))]
            busy = [(t, v) for t, v in busy if abs(v) >= 1]
            if row == "taskring-inline":
                per["inline (submit + execute, one thread)"] = dict(busy).get(1, 0.0)
            else:
                # Callgrind runs one thread at a time, so how the work splits
                # between the orchestrator and the executor is the tool's
                # schedule, not the runtime's (the orchestrator runs ready
                # tasks itself when the executor falls behind); the sum is
                # the cost per task.
                for t, v in busy:
                    per[f"threaded: thread {t}"] = v
                per["threaded: all threads"] = sum(v for _, v in busy)
    print(f"callgrind instructions per task, pattern {args.pattern}, {args.binary}")
    for name, v in per.items():
        print(f"  {v:8.1f}  {name}")
    if args.json:
        out = {"pattern": args.pattern, "binary": args.binary, "per_task": per}
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

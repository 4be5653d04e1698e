#!/usr/bin/python3
"""Instructions per task on the L2 hot path, counted by callgrind (exact and
repeatable, whatever the host's load: the figure to track when timings are
noise).

    bench/overhead/callgrind_per_task.py [--binary B] [--pattern chain] [--json FILE]

Runs bench_overhead_taskring under `valgrind --tool=callgrind
--separate-threads=yes` at two task counts with one executor, and divides
the difference of each thread's instruction count by the difference of the
task counts, so start-up and per-run costs cancel. Threads: the threaded
runtime's orchestrator (instructions per submit) and its executor
(instructions per executed task); the main thread runs the inline row
(submit + execute on one thread).
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


def thread_totals(binary, pattern, tasks, outdir):
    prefix = os.path.join(outdir, f"cg.{tasks}")
    env = dict(os.environ, TASKRING_LOG_LEVEL="WARN")
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={prefix}",
           str(binary), "--tasks", str(tasks), "--reps", "1", "--warmup", "0", "--pattern", pattern, "--threads", "1"]
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
    with tempfile.TemporaryDirectory() as d:
        lo = thread_totals(args.binary, args.pattern, args.low, d)
        hi = thread_totals(args.binary, args.pattern, args.high, d)
    n = args.high - args.low
    per = {t: (hi.get(t, 0) - lo.get(t, 0)) / n for t in sorted(set(lo) | set(hi))}
    # Thread 1 is main (the inline row); the threaded worker starts its
    # orchestrator, then its executor, last of all threads.
    busy = [t for t, v in per.items() if abs(v) >= 1]
    names = {1: "inline (submit + execute, one thread)"}
    if len(busy) >= 3:
        names[busy[-2]] = "threaded: orchestrator, per submit"
        names[busy[-1]] = "threaded: executor, per executed task"
    print(f"callgrind instructions per task, pattern {args.pattern}, {args.binary}")
    for t, v in per.items():
        if abs(v) >= 1:
            print(f"  thread {t}: {v:8.1f}  {names.get(t, '')}")
    if args.json:
        out = {"pattern": args.pattern, "binary": args.binary,
               "per_task": {names.get(t, f"thread {t}"): v for t, v in per.items() if abs(v) >= 1}}
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

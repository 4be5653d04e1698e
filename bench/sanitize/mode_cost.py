#!/usr/bin/python3
"""Slowdown of each TASKRING_SANITIZE mode on the reference workloads, as
same-run ratios (docs/benchmarks.md, "Orchestration sanitizer").

    bench/sanitize/mode_cost.py [--taskring B] [--reps 3] [--rounds 3] [--json FILE]

For each workload and runtime it runs `taskring run W --json` with the
sanitizer off, `tags`, `schedule` (8 runs per program) and `tags,schedule`,
the modes interleaved within each repetition so every ratio compares runs of
the same minutes, and prints the median over the repetitions of
host_run_ms(mode) / host_run_ms(off).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODES = ["off", "tags", "schedule", "tags,schedule"]


def host_ms(binary, workload, runtime, mode, rounds):
    cmd = [binary, "run", workload, "--runtime", runtime, "--rounds", str(rounds), "--warmup", "1", "--json"]
    if mode != "off":
        cmd += ["--sanitize", mode]
    env = dict(os.environ, TASKRING_LOG_LEVEL="WARN")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"mode_cost: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    j = json.loads(r.stdout)
    if not j.get("passed"):
        sys.exit(f"mode_cost: {' '.join(cmd)} did not pass its golden")
    return j["summary"]["host_run_ms"]["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--taskring", default=str(ROOT / "build/release/tools/taskring/taskring"))
    ap.add_argument("--workloads", default="vector,bgemm,decode")
    ap.add_argument("--runtimes", default="tmr,hbg")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    load = os.getloadavg()
    for w in a.workloads.split(","):
        for rt in a.runtimes.split(","):
            ratios = {m: [] for m in MODES[1:]}
            offs = []
            for _ in range(a.reps):
                t = {m: host_ms(a.taskring, w, rt, m, a.rounds) for m in MODES}
                offs.append(t["off"])
                for m in MODES[1:]:
                    ratios[m].append(t[m] / t["off"])
            row = {"workload": w, "runtime": rt, "off_ms": statistics.median(offs)}
            row.update({m: statistics.median(v) for m, v in ratios.items()})
            rows.append(row)
            print(f"{w:8s} {rt:4s} off {row['off_ms']:9.3f} ms  " +
                  "  ".join(f"{m} {row[m]:6.2f}x" for m in MODES[1:]), flush=True)
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; after: " +
          " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "loadavg_before": load, "cpus": os.cpu_count()}, indent=1))


if __name__ == "__main__":
    main()

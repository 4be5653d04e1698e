#!/usr/bin/python3
"""MoE step across nodes vs one node (issue 14 "Measure"): the same 8-rank
layer as one comm domain over 2 nodes x 4 chips (mpirun -np 2, the domain
spans both, off-node traffic through MPI) and over 1 node x 8 chips.

Each configuration is `taskring bench moe ... --json` (every (rank, round)
cell validated from the chips' spans); runs alternate between the two so
drifting load hits both alike. Prints a table of medians and writes the
numbers, the commands and /proc/loadavg before each run as JSON.

  /usr/bin/python3 bench/net/run_moe_nodes_bench.py [--runs 3] [--rounds 8]
      [--warmup 2] [--balanced-routing] [--json out.json]
Timings on a loaded machine mean little: re-measure on a quiet one.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def one_run(cmd):
    env = dict(os.environ)
    env.pop("TASKRING_LOG_LEVEL", None)  # taskring bench validates the chips' spans: keep them on
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    try:
        d = json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.exit("run failed (rc %d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    if p.returncode != 0 or d.get("status") != "ok":
        sys.exit("run invalid (rc %d, status %s): %s\n%s" % (p.returncode, d.get("status"), " ".join(cmd),
                                                              p.stderr[-2000:]))
    s = d["stats"]
    m = d["matrix"]
    return {
        "cells": "%d/%d" % (m["valid_cells"], m["ranks"] * m["rounds"]),
        "effective_cell_median_us": s["effective_us"]["median"],
        "per_round_effective_median_us": s["per_round"]["effective_us"]["median"],
        "host_union_median_us": s["host_union_us"]["summary"]["median"],
    }


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--balanced-routing", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    tr = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build/release"), "tools/taskring/taskring")
    if not os.access(tr, os.X_OK):
        sys.exit("build taskring first (cmake --build --preset release --target taskring)")
    common = ["--rounds", str(a.rounds), "--warmup", str(a.warmup), "--json"]
    if a.balanced_routing:
        common.append("--balanced-routing")
    mpi = ["mpirun", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none", "-np", "2"]
    if os.geteuid() == 0:
        mpi.insert(1, "--allow-run-as-root")
    configs = {
        "1x8": [tr, "bench", "moe", "--chips", "8"] + common,
        "2x4": mpi + [tr, "bench", "moe", "--nodes", "2", "--chips", "4"] + common,
    }
    runs = {k: [] for k in configs}
    for i in range(a.runs):
        for k, cmd in configs.items():
            load = loadavg()
            r = one_run(cmd)
            r["load_before"] = load
            runs[k].append(r)
            print("run %d %s: load %s, cells %s, per-round effective median %.1f us" %
                  (i + 1, k, load, r["cells"], r["per_round_effective_median_us"]), file=sys.stderr)
    keys = ["per_round_effective_median_us", "effective_cell_median_us", "host_union_median_us"]
    summary = {k: {m: median([r[m] for r in runs[k]]) for m in keys} for k in configs}
    print("MoE step (8 ranks, 16 tokens/rank, hidden 64, 16 experts, top-2%s), median of %d runs x %d rounds"
          % (", balanced" if a.balanced_routing else "", a.runs, a.rounds))
    print("| metric (us) | 1 node x 8 chips | 2 nodes x 4 chips (MPI) | 2x4 / 1x8 |")
    print("| --- | --- | --- | --- |")
    for m in keys:
        x, y = summary["1x8"][m], summary["2x4"][m]
        print("| %s | %.1f | %.1f | %.2f |" % (m, x, y, y / x if x else float("nan")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "taskring.moe_nodes_bench/1", "commands": configs, "runs": runs,
                       "summary": summary, "rounds": a.rounds, "warmup": a.warmup}, f, indent=2)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""MoE step across nodes vs one node (issue 14 "Measure") vs the MPI anchor
(issue 36 item 4): the same 8-rank layer as one comm domain over 2 nodes x 4
chips (mpirun -np 2, the domain spans both, off-node traffic through MPI),
over 1 node x 8 chips, and written directly on MPI by hand (bench_moe_mpi
under mpirun -np 8: one process per rank, MPI_Alltoallv dispatch and
combine, taskring's gating and FFN kernels; docs/l4.md#the-mpi-anchor).

Each taskring configuration is `taskring bench moe ... --json` (every
(rank, round) cell validated from the chips' spans); the anchor is
`bench_moe_mpi --json` (its round: MPI_Barrier to MPI_Barrier, maximum over
the ranks; the moe workload's golden after every round). Every run must
pass its checks. Runs alternate between the three so drifting load hits all
alike. Prints the medians and the ratios taskring / anchor, and writes the
numbers, the ratios, the commands and /proc/loadavg before each run as JSON.

  /usr/bin/python3 bench/net/run_moe_nodes_bench.py [--runs 3] [--rounds 8]
      [--warmup 2] [--balanced-routing] [--no-anchor] [--json out.json]
      [--base LABEL=PATH/TO/taskring ...]

--base adds another build's taskring (e.g. a base commit's) to the same
alternation: its 1x8 and 2x4 run right after this build's in every run,
and the table gains its medians and ratios (a same-run A/B).
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


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"host": os.uname().nodename, "cpu": cpu, "cpus": os.cpu_count()}


def run_checked(cmd):
    """Runs cmd, which prints JSON with "status"; exits naming the command unless it is "ok" with rc 0."""
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
    return d


def one_run(cmd):
    d = run_checked(cmd)
    s = d["stats"]
    m = d["matrix"]
    return {
        "cells": "%d/%d" % (m["valid_cells"], m["ranks"] * m["rounds"]),
        "effective_cell_median_us": s["effective_us"]["median"],
        "per_round_effective_median_us": s["per_round"]["effective_us"]["median"],
        "host_union_median_us": s["host_union_us"]["summary"]["median"],
    }


def one_anchor_run(cmd):
    d = run_checked(cmd)  # status "ok": the moe golden passed on every rank, every round
    g = d["golden"]
    return {
        "golden": "%d/%d" % (g["passed_rounds"], g["checked_rounds"]),
        "round_median_us": d["stats"]["round_us"]["median"],
        "step_max_median_us": d["stats"]["step_max_us"]["median"],
        "phases_max_median_us": {k: v["median"] for k, v in d["stats"]["phases_max_us"].items()},
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
    ap.add_argument("--no-anchor", action="store_true", help="taskring only, without the MPI anchor")
    ap.add_argument("--json")
    ap.add_argument("--base", action="append", default=[], help="LABEL=PATH of another build's taskring")
    a = ap.parse_args()
    build = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build/release"))
    tr = os.path.join(build, "tools/taskring/taskring")
    if not os.access(tr, os.X_OK):
        sys.exit("build taskring first (cmake --build --preset release --target taskring)")
    anchor = os.path.join(build, "bench/net/bench_moe_mpi")
    if not a.no_anchor and not os.access(anchor, os.X_OK):
        sys.exit("build bench_moe_mpi first (cmake --build --preset release --target bench_moe_mpi), or --no-anchor")
    common = ["--rounds", str(a.rounds), "--warmup", str(a.warmup), "--json"]
    if a.balanced_routing:
        common.append("--balanced-routing")
    def mpi(np):
        m = ["mpirun", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none", "-np", str(np)]
        if os.geteuid() == 0:
            m.insert(1, "--allow-run-as-root")
        return m
    configs = {
        "1x8": [tr, "bench", "moe", "--chips", "8"] + common,
        "2x4": mpi(2) + [tr, "bench", "moe", "--nodes", "2", "--chips", "4"] + common,
    }
    bases = []
    for b in a.base:
        label, _, path = b.partition("=")
        if not label or not os.access(path, os.X_OK):
            sys.exit("--base %s: expected LABEL=PATH to an executable taskring" % b)
        bases.append(label)
        configs["1x8@" + label] = [path, "bench", "moe", "--chips", "8"] + common
        configs["2x4@" + label] = mpi(2) + [path, "bench", "moe", "--nodes", "2", "--chips", "4"] + common
    if not a.no_anchor:
        configs["anchor"] = mpi(8) + [anchor] + common
    runs = {k: [] for k in configs}
    for i in range(a.runs):
        for k, cmd in configs.items():
            load = loadavg()
            r = one_anchor_run(cmd) if k == "anchor" else one_run(cmd)
            r["load_before"] = load
            runs[k].append(r)
            if k == "anchor":
                print("run %d anchor: load %s, golden %s, round median %.1f us" %
                      (i + 1, load, r["golden"], r["round_median_us"]), file=sys.stderr)
            else:
                print("run %d %s: load %s, cells %s, per-round effective median %.1f us" %
                      (i + 1, k, load, r["cells"], r["per_round_effective_median_us"]), file=sys.stderr)
    keys = ["per_round_effective_median_us", "effective_cell_median_us", "host_union_median_us"]
    summary = {k: {m: median([r[m] for r in runs[k]]) for m in keys} for k in ("1x8", "2x4")}
    print("MoE step (8 ranks, 16 tokens/rank, hidden 64, 16 experts, top-2%s), median of %d runs x %d rounds"
          % (", balanced" if a.balanced_routing else "", a.runs, a.rounds))
    m = machine()
    print("machine: %s, %d CPUs; 1-minute load before the runs (by configuration) %s, after %s" %
          (m["cpu"], m["cpus"], " ".join(r["load_before"] for k in configs for r in runs[k]), loadavg()))
    print("| metric (us) | 1 node x 8 chips | 2 nodes x 4 chips (MPI) | 2x4 / 1x8 |")
    print("| --- | --- | --- | --- |")
    for m in keys:
        x, y = summary["1x8"][m], summary["2x4"][m]
        print("| %s | %.1f | %.1f | %.2f |" % (m, x, y, y / x if x else float("nan")))
    ratios = None
    for label in bases:
        for shape in ("1x8", "2x4"):
            k = shape + "@" + label
            summary[k] = {m: median([r[m] for r in runs[k]]) for m in keys}
        x, y = summary["1x8@" + label], summary["2x4@" + label]
        m = "per_round_effective_median_us"
        print("| %s (%s) | %.1f | %.1f | %.2f |" % (m, label, x[m], y[m], y[m] / x[m] if x[m] else float("nan")))
        print("this build / %s: 1x8 %.2f, 2x4 %.2f (per-round effective; < 1: this build faster)" %
              (label, summary["1x8"][m] / x[m], summary["2x4"][m] / y[m]))
    if "anchor" in configs:
        summary["anchor"] = {m: median([r[m] for r in runs["anchor"]])
                             for m in ("round_median_us", "step_max_median_us")}
        ratios = print_anchor(summary)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "taskring.moe_nodes_bench/2", "commands": configs, "runs": runs,
                       "summary": summary, "ratios_taskring_over_anchor": ratios, "rounds": a.rounds,
                       "warmup": a.warmup, "balanced_routing": a.balanced_routing, "machine": machine(),
                       "load_after": loadavg()}, f, indent=2)


def print_anchor(summary):
    """The ratios taskring / anchor (> 1: taskring slower), printed and returned.
    The anchor's figure is its round (barrier to barrier, max over ranks);
    taskring's are its per-round effective (max over chips) and host union."""
    an = summary["anchor"]["round_median_us"]
    print("\nMPI anchor (bench_moe_mpi, 8 ranks): round median %.1f us (step without the closing barrier %.1f us)"
          % (an, summary["anchor"]["step_max_median_us"]))
    print("| taskring metric / anchor round | 1 node x 8 chips | 2 nodes x 4 chips (MPI) |")
    print("| --- | --- | --- |")
    ratios = {}
    for m in ("per_round_effective_median_us", "host_union_median_us"):
        ratios[m] = {k: summary[k][m] / an if an else float("nan") for k in ("1x8", "2x4")}
        print("| %s | %.2f | %.2f |" % (m, ratios[m]["1x8"], ratios[m]["2x4"]))
    return ratios


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Inline vs threaded chip runs on a node: randomised A/B pairs of one `taskring bench` workload.

Each pair runs `taskring bench WORKLOAD --chips N --rounds 8 --warmup 2 --json [EXTRA...]` twice, once
with TASKRING_RUN_INLINE=0 (every chip child runs an orchestrator and executor threads) and once with
TASKRING_RUN_INLINE=1 (the child's one thread orchestrates and executes), in random order. Reported:
the median over the pairs of each side's cell median and per-round-maximum median, and the geometric
mean of the per-pair ratios inline / threaded of the round maximum (the step's time), with how many
pairs inline won. Every run must exit 0 with every cell valid. Run on a quiet machine; the load
average is printed before and after.

Usage: bench/node/inline_ab.py WORKLOAD CHIPS [--pairs 20] [--json FILE] [-- EXTRA bench args]
e.g.   bench/node/inline_ab.py dsv4 2 --pairs 30
       bench/node/inline_ab.py moe 2 -- --balanced-routing
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def one(taskring, workload, chips, extra, inline):
    cmd = [taskring, "bench", workload, "--chips", str(chips), "--rounds", "8", "--warmup", "2", "--json"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, TASKRING_RUN_INLINE=inline),
                       timeout=600)
    try:
        j = json.loads(p.stdout)
        m = j["matrix"]
        ok = p.returncode == 0 and m["invalid_cells"] == 0 and m["ranks"] == chips
    except (ValueError, KeyError):
        ok = False
    if not ok:
        sys.exit(f"inline_ab: {' '.join(cmd)} (TASKRING_RUN_INLINE={inline}) failed: exit {p.returncode}\n"
                 f"{p.stderr[-2000:]}")
    st = j["stats"]
    return st["effective_us"]["median"], st["per_round"]["effective_us"]["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload")
    ap.add_argument("chips", type=int)
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--taskring", default=os.path.join(ROOT, "build/release/tools/taskring/taskring"))
    ap.add_argument("--json")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    a.extra = extra
    load_before = os.getloadavg()
    res = {"0": [], "1": []}
    for i in range(a.pairs):
        order = ["0", "1"]
        random.shuffle(order)
        for v in order:
            res[v].append(one(a.taskring, a.workload, a.chips, a.extra, v))
        print(f"\r[{i + 1}/{a.pairs}]", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    ratios = [b[1] / t[1] for t, b in zip(res["0"], res["1"])]
    out = {
        "command": f"taskring bench {a.workload} --chips {a.chips} --rounds 8 --warmup 2 {' '.join(a.extra)}".strip(),
        "pairs": a.pairs, "load_before": load_before, "load_after": os.getloadavg(),
        "threaded": {"cell_median_us": statistics.median(x[0] for x in res["0"]),
                     "round_max_median_us": statistics.median(x[1] for x in res["0"])},
        "inline": {"cell_median_us": statistics.median(x[0] for x in res["1"]),
                   "round_max_median_us": statistics.median(x[1] for x in res["1"])},
        "paired_round_max_ratio_inline_over_threaded": math.exp(sum(map(math.log, ratios)) / len(ratios)),
        "inline_faster_pairs": sum(r < 1 for r in ratios),
        "runs": res,
    }
    print(f"{out['command']}: {a.pairs} randomised pairs, load {load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    for side in ("threaded", "inline"):
        print(f"  {side:<8} cell median {out[side]['cell_median_us']:.1f} us, "
              f"round max {out[side]['round_max_median_us']:.1f} us")
    print(f"  paired round-max ratio inline/threaded {out['paired_round_max_ratio_inline_over_threaded']:.3f}, "
          f"inline faster in {out['inline_faster_pairs']}/{a.pairs}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

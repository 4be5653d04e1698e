#!/usr/bin/python3
"""Same-run comparison of builds on the Python collectives bench (comm_overhead.py), rotating their order.

Each round runs `comm_overhead.py --ranks R --bytes B --runs N` once per build, in an order that rotates
from round to round, so a drift of the host's speed favours no build; prints each run's per-allreduce
medians with the load average before it, and the range per build. A build is NAME=DIR, DIR holding the
`taskring` package (a build's `python/` folder; for a base commit, configure its worktree with
TASKRING_BUILD_PYTHON=ON and build `taskring_python`).

    bench/python/comm_rotation.py 674158e=build/bench-compare/<sha>/build/py/python \\
        head=build/release/python [--rounds 3] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builds", nargs="+", help="NAME=DIR")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ranks", default="2")
    ap.add_argument("--bytes", default="4096")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--json")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.builds]
    if any(len(b) != 2 or not os.path.isdir(b[1]) for b in builds):
        sys.exit("comm_rotation: each build is NAME=DIR with an existing DIR")
    results = []
    for r in range(a.rounds):
        order = builds[r % len(builds):] + builds[:r % len(builds)]
        if r % 2:
            order.reverse()
        for name, path in order:
            load = os.getloadavg()[0]
            out = f"/tmp/comm_rotation.{os.getpid()}.json"
            cmd = [sys.executable, os.path.join(HERE, "comm_overhead.py"), "--ranks", a.ranks, "--bytes", a.bytes,
                   "--runs", str(a.runs), "--json", out]
            p = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=path), capture_output=True, text=True, timeout=900)
            if p.returncode != 0:
                sys.exit(f"comm_rotation: {name} failed:\n{p.stdout[-1000:]}{p.stderr[-2000:]}")
            with open(out) as f:
                rows = json.load(f)["rows"]
            os.unlink(out)
            for row in rows:
                row.update(build=name, round=r + 1, load=load)
                results.append(row)
                print(f"round {r + 1} load {load:.2f} {name:>10} {row['ranks']} ranks {row['bytes']} B "
                      f"{row['tensors']:>6}: {row['per_allreduce_us']:.1f} us per allreduce, "
                      f"empty run {row['empty_run_us']:.1f} us", flush=True)
    print("| build | tensors | per allreduce µs (min–max over rounds) | empty run µs |")
    print("| --- | --- | --- | --- |")
    for name, _ in builds:
        for t in ("shared", "chip"):
            v = [x["per_allreduce_us"] for x in results if x["build"] == name and x["tensors"] == t]
            e = [x["empty_run_us"] for x in results if x["build"] == name and x["tensors"] == t]
            if v:
                print(f"| {name} | {t} | {min(v):.1f}–{max(v):.1f} | {min(e):.1f}–{max(e):.1f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "taskring.bench.python_comm_rotation/1", "cpus": os.cpu_count(),
                       "builds": dict(builds), "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()

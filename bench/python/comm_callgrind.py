#!/usr/bin/python3
"""Instructions the Python process spends per run of comm_overhead.py's orch (callgrind, load-independent).

Runs the orch (one cached allocate_domain and --per-run 4 KiB allreduces on 2 ranks, over shared arrays or
chip buffers; or an empty run) --runs A and --runs B times under `valgrind --tool=callgrind` and prints, for
the parent process, (Ir(B) - Ir(A)) / (B - A) and the inclusive counts per run of the orchestration
(PyNodeWorker::submit) and per collective (py::submit_collective). The children run under valgrind too
(slowly); the parent's waits vary with that, by about +-10k instructions per run, the orchestration not.

    bench/python/comm_callgrind.py build/release/python [--what shared|chip|empty] [--runs 5,25]

docs/benchmarks.md#python-comm has the figures.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

CASE = r'''
import os, sys
os.environ.setdefault("TASKRING_LOG_LEVEL", "WARN")
import numpy as np, taskring
from taskring import CommBufferSpec
runs, what, per_run, ranks, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), 2, 1024
with taskring.NodeWorker(chips=ranks) as node:
    comm = node.register(taskring.Callable.comm())
    node.init()
    ins = [node.shared_array(n) for _ in range(ranks)]
    outs = [node.shared_array(n) for _ in range(ranks)]
    size = taskring.collective_scratch_bytes("allreduce", n, np.float32, ranks)
    spec = [CommBufferSpec("scratch", "float32", n, size)]
    if what == "chip":
        bufs = [(node.alloc_child_tensor(r, [n], np.float32), node.alloc_child_tensor(r, [n], np.float32))
                for r in range(ranks)]
        ins, outs = [b[0] for b in bufs], [b[1] for b in bufs]
    def orch(o):
        d = o.allocate_domain(name="bench", workers=list(range(ranks)), window_size=size, buffers=spec)
        for _ in range(per_run):
            o.allreduce(comm, d, ins, outs)
    f = (lambda o: None) if what == "empty" else orch
    for _ in range(runs + 1):
        node.run(f)
'''


def parent_profile(build: str, runs: int, what: str, per_run: int, out_dir: str) -> str:
    """Runs the case under callgrind; returns the parent's profile (valgrind runs its client in its own
    process, so the parent's pid is the one this starts; the forked children write their own files)."""
    case = os.path.join(out_dir, "case.py")
    with open(case, "w") as f:
        f.write(CASE)
    prefix = os.path.join(out_dir, f"{what}.{runs}")
    p = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}.%p", "/usr/bin/python3",
                          case, str(runs), what, str(per_run)], env=dict(os.environ, PYTHONPATH=build),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, err = p.communicate(timeout=1800)
    if p.returncode != 0:
        sys.exit(f"comm_callgrind: the case failed under valgrind:\n{err[-2000:]}")
    return f"{prefix}.{p.pid}"


def total(profile: str) -> int:
    with open(profile) as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
    sys.exit(f"comm_callgrind: no summary in {profile}")


def inclusive(profile: str, function: str) -> int:
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", profile], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        if function in line:
            return int(re.match(r"\s*([\d,]+)", line).group(1).replace(",", ""))
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="the folder holding the taskring package (a build's python/)")
    ap.add_argument("--what", choices=("shared", "chip", "empty"), default="shared")
    ap.add_argument("--runs", default="5,25")
    ap.add_argument("--per-run", type=int, default=8)
    a = ap.parse_args()
    lo, hi = map(int, a.runs.split(","))
    with tempfile.TemporaryDirectory(prefix="comm_callgrind.") as d:
        p_lo = parent_profile(a.build, lo, a.what, a.per_run, d)
        p_hi = parent_profile(a.build, hi, a.what, a.per_run, d)
        per_run = (total(p_hi) - total(p_lo)) / (hi - lo)
        print(f"{a.what}: parent instructions per run {per_run:,.0f} ((Ir({hi}) - Ir({lo})) / {hi - lo})")
        if a.what != "empty":
            orch = inclusive(p_hi, "PyNodeWorker::submit(")
            coll = inclusive(p_hi, "taskring::py::submit_collective(")
            print(f"  orchestration per run {orch / (hi + 1):,.0f}; per collective (C++) "
                  f"{coll / ((hi + 1) * a.per_run):,.0f}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Collectives from Python (taskring.comm): what a run with allreduces costs, by rank count and size.

For each (ranks, bytes per rank): the median wall time of `node.run(orch)` where orch allocates a
domain (the node's domain cache makes every allocation after the first a reuse) and submits
`--per-run` allreduces (algo "auto"), once over shared arrays (each task stages them into its chip and
back) and once over chip buffers (alloc_child_tensor, uploaded once); reported per run and per allreduce, with
the bus bandwidth 2(n-1)/n * bytes / (time per allreduce). The first runs (--warmup) are not timed.
An empty run (`node.run(lambda o: None)`) is timed the same way, as the floor.

This is the Python user's view: it includes the orch function, the domain reuse, one group task per
allreduce and the run's fence. bench/comm/bench_comm measures the kernels alone (docs/benchmarks.md).
Prints a table and the load average; --json writes the numbers.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/comm_overhead.py [--runs 200]
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings

os.environ.setdefault("TASKRING_LOG_LEVEL", "WARN")

import numpy as np  # noqa: E402

import taskring  # noqa: E402
from taskring import CommBufferSpec  # noqa: E402


def timed(node, orch, runs: int, warmup: int) -> list:
    for _ in range(warmup):
        node.run(orch)
    out = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        node.run(orch)
        out.append((time.perf_counter_ns() - t0) / 1e3)
    return out


def case(ranks: int, nbytes: int, per_run: int, runs: int, warmup: int, where: str) -> dict:
    n = nbytes // 4
    with taskring.NodeWorker(chips=ranks) as node:
        comm = node.register(taskring.Callable.comm())
        node.init()
        host_in = [node.shared_array(n) for _ in range(ranks)]
        host_out = [node.shared_array(n) for _ in range(ranks)]
        for r, a in enumerate(host_in):
            a[:] = r
        ins, outs = host_in, host_out
        if where == "chip":                            # uploaded once; the allreduces never leave the chips
            bufs = []
            def upload(o):
                for r in range(ranks):
                    bufs.append((o.alloc_child_tensor(r, [n], np.float32), o.alloc_child_tensor(r, [n], np.float32)))
                    o.copy_to(bufs[r][0], host_in[r])
            node.run(upload)
            ins, outs = [b[0] for b in bufs], [b[1] for b in bufs]
        size = taskring.collective_scratch_bytes("allreduce", n, np.float32, ranks)
        spec = [CommBufferSpec("scratch", "float32", n, size)]

        def orch(o):
            d = o.allocate_domain(name="bench", workers=list(range(ranks)), window_size=size, buffers=spec)
            for _ in range(per_run):
                o.allreduce(comm, d, ins, outs)

        empty = timed(node, lambda o: None, runs, warmup)
        full = timed(node, orch, runs, warmup)
        if where == "chip":
            node.run(lambda o: [o.copy_from(host_out[r], outs[r]) for r in range(ranks)])
        want = ranks * (ranks - 1) / 2
        if not all((out == want).all() for out in host_out):
            sys.exit(f"comm_overhead: wrong allreduce result at {ranks} ranks, {nbytes} B")
    run_us = statistics.median(full)
    per_op = run_us / per_run
    return {"ranks": ranks, "bytes": nbytes, "tensors": where, "allreduces_per_run": per_run, "runs": runs,
            "empty_run_us": statistics.median(empty), "run_us": run_us, "per_allreduce_us": per_op,
            "bus_gbps": 2 * (ranks - 1) / ranks * nbytes / (per_op * 1e3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--per-run", type=int, default=8)
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--bytes", default="4096,1048576")
    ap.add_argument("--json")
    a = ap.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)  # the generic-BLAS advice; no matmul here
    load = os.getloadavg()
    rows = [case(r, b, a.per_run, a.runs, a.warmup, w) for r in map(int, a.ranks.split(","))
            for b in map(int, a.bytes.split(",")) for w in ("shared", "chip")]
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} -> {os.getloadavg()[0]:.2f}; "
          f"{a.runs} timed runs each, median")
    print("| ranks | bytes/rank | tensors | empty run µs | run of %d allreduces µs | per allreduce µs | bus GB/s |"
          % a.per_run)
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['ranks']} | {r['bytes']} | {r['tensors']} | {r['empty_run_us']:.1f} | {r['run_us']:.1f} | "
              f"{r['per_allreduce_us']:.1f} | {r['bus_gbps']:.2f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "taskring.bench.python_comm/1", "machine": platform.processor() or platform.machine(),
                       "cpus": os.cpu_count(), "load_before": load, "load_after": os.getloadavg(), "rows": rows},
                      f, indent=1)


if __name__ == "__main__":
    main()

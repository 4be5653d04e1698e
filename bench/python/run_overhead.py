#!/usr/bin/python3
"""Python overhead per `worker.run` of the vector example (issue 13; goal <= 20 us added per run).

Same process, same ChipWorker, same arrays, same run, measured two ways:

* direct: for each Python `worker.run`, its wall time minus the time the
  extension spent inside ChipWorker::run (argument conversion, GIL hand-off,
  exception checks, the RunReport dataclass: everything Python adds);
* A/B: blocks of Python `worker.run` calls alternated with blocks of the same
  run issued from C++ (`_run_native`: arguments converted once, then
  ChipWorker::run in a C++ loop); the difference of the medians. The C++
  loop runs twice: back to back, and with a busy gap between runs equal to
  the direct overhead's median (the spacing a Python caller has), because the
  runtime's idle threads spin then park and so a run's cost depends on how
  soon the next one comes (docs/architecture.md, "few threads, no livelock").

Spans are off (TASKRING_LOG_LEVEL=WARN unless set) so that neither side pays
for logging. Prints a table and the load average; --json writes the numbers.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/run_overhead.py [--runtime tmr]
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("TASKRING_LOG_LEVEL", "WARN")

import numpy as np  # noqa: E402

import taskring  # noqa: E402


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runtime", default="tmr", choices=("tmr", "hbg"))
    p.add_argument("--size", type=int, default=1024, help="elements per tensor")
    p.add_argument("--runs", type=int, default=200, help="runs per block")
    p.add_argument("--blocks", type=int, default=10, help="alternating Python / C++ blocks")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--json", help="write the results here")
    a = p.parse_args(argv)

    n = a.size
    x = np.full(n, 2.0, np.float32)
    y = np.full(n, 3.0, np.float32)
    f = np.zeros(n, np.float32)
    args = [(x, taskring.INPUT), (y, taskring.INPUT), (f, taskring.OUTPUT_EXISTING)]
    vec = taskring.Callable.workload("vector")
    load_before = os.getloadavg()
    with taskring.ChipWorker(runtime=a.runtime) as w:
        impl = w._w
        for _ in range(a.warmup):
            w.run(vec, args)
        impl._run_native(vec._c, args, a.warmup)
        py_wall, py_added, native, spaced = [], [], [], []
        gap = 0
        clock = time.perf_counter_ns
        for _ in range(a.blocks):
            for _ in range(a.runs):
                t0 = clock()
                w.run(vec, args)
                t1 = clock()
                py_wall.append(t1 - t0)
                py_added.append(t1 - t0 - impl._last_native_ns)
            native.extend(impl._run_native(vec._c, args, a.runs))
            gap = int(statistics.median(py_added))
            spaced.extend(impl._run_native(vec._c, args, a.runs, gap))
        if not (f == 47.0).all():
            print("vector example: wrong result", file=sys.stderr)
            return 1
    load_after = os.getloadavg()

    us = lambda v: v / 1e3  # noqa: E731
    res = {
        "runtime": a.runtime, "size": n, "runs": a.runs * a.blocks,
        "python_run_us": {"median": us(statistics.median(py_wall)), "p10": us(pct(py_wall, 0.1)),
                          "p90": us(pct(py_wall, 0.9))},
        "cpp_run_us": {"median": us(statistics.median(native)), "p10": us(pct(native, 0.1)),
                       "p90": us(pct(native, 0.9))},
        "cpp_spaced_run_us": {"median": us(statistics.median(spaced)), "p10": us(pct(spaced, 0.1)),
                              "p90": us(pct(spaced, 0.9)), "gap_us": us(gap)},
        "added_direct_us": {"median": us(statistics.median(py_added)), "p10": us(pct(py_added, 0.1)),
                            "p90": us(pct(py_added, 0.9))},
        "added_ab_us": us(statistics.median(py_wall) - statistics.median(native)),
        "added_ab_spaced_us": us(statistics.median(py_wall) - statistics.median(spaced)),
        "added_ab_p10_us": us(pct(py_wall, 0.1) - pct(native, 0.1)),
        "loadavg_before": load_before, "loadavg_after": load_after,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__},
    }
    print(f"vector example, {a.runtime}, {n} floats/tensor, {res['runs']} runs per side "
          f"(load average {load_before[0]:.2f} before, {load_after[0]:.2f} after)")
    print(f"  {'':28} {'median':>9} {'p10':>9} {'p90':>9}  (us)")
    for key, label in (("python_run_us", "worker.run from Python"), ("cpp_run_us", "ChipWorker::run from C++"),
                       ("cpp_spaced_run_us", "same, C++, spaced by the gap"),
                       ("added_direct_us", "added by Python (direct)")):
        r = res[key]
        print(f"  {label:28} {r['median']:9.2f} {r['p10']:9.2f} {r['p90']:9.2f}")
    print(f"  added by Python (A/B of medians): {res['added_ab_us']:.2f} us back to back, "
          f"{res['added_ab_spaced_us']:.2f} us against C++ spaced by {us(gap):.2f} us; "
          f"p10 difference {res['added_ab_p10_us']:.2f} us")
    if a.json:
        with open(a.json, "w") as out:
            json.dump(res, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

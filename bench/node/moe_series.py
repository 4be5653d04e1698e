#!/usr/bin/python3
"""Issue 17's Done-when as a series, with the host's own speed next to it.

Runs `taskring bench moe --chips 8 --rounds 8 --warmup 2 --balanced-routing
--json` N times in a row. Each run counts only with exit 0, 64/64 valid cells
and 8 ranks; a run that fails is kept in full (stdout and stderr) under
--keep-dir and named in the report. Around every run, `bench_host --probe`
times a fixed compute chunk in lockstep on both CPUs (no process switch, no
taskring code): the host-speed control. Reported, as a table and as JSON:

  * the MoE medians (`stats.effective_us.median`, the Done-when's statistic)
    and the probe's, plus the bench's other summaries of the same run (the
    cells' trimmed mean, the median of the per-round maxima, the median host
    union), to see whether any of them is steadier;
  * the Done-when statistic for both: of the disjoint triples of consecutive
    runs, how many have (max - min) / min <= 5 % (and of the sliding ones);
  * the correlation of the MoE median with the probe, and of the sliding
    triples whose probe held within 5 %, how many MoE triples did (the
    product's share once the host's between-run moves are left out);
  * the bench's own host-speed control (`host_speed` of its JSON: a fixed
    chunk timed on each CPU before and after the ranks): how many runs had
    a steady host at both edges, and the Done-when statistic over the
    disjoint triples whose three runs all did.

When the probe itself misses the 5 % triples, the host moved faster than
the criterion allows, whatever the workload does.

Usage: bench/node/moe_series.py [--runs 30] [--taskring PATH]
       [--bench-host PATH] [--json FILE] [--keep-dir DIR]
Run it on a quiet machine (load average below 1); the load is recorded.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPREAD = 0.05


def spread(v):
    return (max(v) - min(v)) / min(v)


def triples(values):
    """(disjoint triples within SPREAD, disjoint triples, sliding within, sliding)."""
    disjoint = [values[i:i + 3] for i in range(0, len(values) - 2, 3)]
    sliding = [values[i:i + 3] for i in range(len(values) - 2)]
    return (sum(spread(t) <= SPREAD for t in disjoint), len(disjoint),
            sum(spread(t) <= SPREAD for t in sliding), len(sliding))


def correlation(x, y):
    n = len(x)
    if n < 3:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else None


def probe(bench_host):
    p = subprocess.run([bench_host, "--probe"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit(f"moe_series: {bench_host} --probe failed (exit {p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)["lockstep_median_us"]


def one_run(taskring, keep_dir, index):
    cmd = [taskring, "bench", "moe", "--chips", "8", "--rounds", "8", "--warmup", "2", "--balanced-routing", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    why = None
    try:
        j = json.loads(p.stdout)
        cells = j["matrix"]["valid_cells"]
        ranks = j["matrix"]["ranks"]
        if p.returncode != 0 or cells != 64 or ranks != 8:
            why = f"exit {p.returncode}, {cells}/64 cells, {ranks} ranks"
    except (ValueError, KeyError) as e:
        why = f"exit {p.returncode}, no report ({e})"
    if why is None:
        st = j["stats"]
        # The Done-when's statistic, and the others the bench reports, to see
        # whether any of them is steadier run to run.
        other = {"cell_trimmed_mean_us": st["effective_us"]["trimmed_mean"],
                 "round_max_median_us": st["per_round"]["effective_us"]["median"],
                 "host_union_median_us": st["host_union_us"]["summary"]["median"]}
        return st["effective_us"]["median"], j.get("host_speed"), other, None
    os.makedirs(keep_dir, exist_ok=True)
    path = os.path.join(keep_dir, f"moe_series_failed_{int(time.time())}_{index}.txt")
    with open(path, "w") as f:
        f.write(f"$ {' '.join(cmd)}\n{why}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
    return None, None, None, f"run {index + 1}: {why}; kept in {path}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--taskring", default=os.path.join(ROOT, "build/release/tools/taskring/taskring"))
    ap.add_argument("--bench-host", default=os.path.join(ROOT, "build/release/bench/host/bench_host"))
    ap.add_argument("--json", help="write every number here")
    ap.add_argument("--keep-dir", default="/tmp", help="where a failed run's output is kept")
    a = ap.parse_args()
    if a.runs < 3:
        ap.error("--runs must be at least 3 (one triple)")
    for path in (a.taskring, a.bench_host):
        if not os.access(path, os.X_OK):
            ap.error(f"{path} is not an executable; build first (make build)")

    load_before = os.getloadavg()
    runs, failures = [], []
    for i in range(a.runs):
        before = probe(a.bench_host)
        median, host_speed, other, failure = one_run(a.taskring, a.keep_dir, i)
        after = probe(a.bench_host)
        if failure:
            failures.append(failure)
        else:
            run = {"moe_median_us": median, "probe_us": (before + after) / 2, **other}
            if host_speed:
                run["host_speed"] = host_speed
            runs.append(run)
        print(f"\r[{i + 1}/{a.runs}] {len(failures)} failed", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    moe = [r["moe_median_us"] for r in runs]
    host = [r["probe_us"] for r in runs]
    result = {
        "command": "taskring bench moe --chips 8 --rounds 8 --warmup 2 --balanced-routing --json",
        "machine": {"node": platform.node(), "cpus": os.cpu_count(), "processor": platform.processor()},
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "runs": runs,
        "failures": failures,
    }
    if len(runs) >= 3:
        rows = []
        series = [("MoE step median", moe), ("host probe", host)]
        series += [(label, [r[key] for r in runs]) for label, key in (
            ("MoE cell trimmed mean", "cell_trimmed_mean_us"), ("MoE round-max median", "round_max_median_us"),
            ("MoE host-union median", "host_union_median_us"))]
        for name, v in series:
            d, dn, s, sn = triples(v)
            rows.append({"series": name, "min_us": min(v), "max_us": max(v), "disjoint_triples_within_5pct": [d, dn],
                         "sliding_triples_within_5pct": [s, sn]})
        n_series = len(rows)
        steady = [bool(r.get("host_speed", {}).get("steady")) for r in runs]
        kept = [moe[i:i + 3] for i in range(0, len(moe) - 2, 3) if all(steady[i:i + 3])]
        rows.append({"series": "MoE, steady host", "runs_with_steady_host": [sum(steady), len(runs)],
                     "disjoint_triples_within_5pct": [sum(spread(t) <= SPREAD for t in kept), len(kept)]})
        # The product's share: of the sliding triples whose probe held within
        # 5 % (the host did not move between them), how many MoE triples did.
        held = [i for i in range(len(moe) - 2) if spread(host[i:i + 3]) <= SPREAD]
        rows.append({"series": "MoE, probe held", "sliding_triples_probe_within_5pct": len(held),
                     "of_them_moe_within_5pct": sum(spread(moe[i:i + 3]) <= SPREAD for i in held)})
        result["summary"] = rows
        result["correlation_moe_probe"] = correlation(moe, host)
        print(f"{len(runs)} of {a.runs} runs valid; load {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
        print(f"{'series':<22} {'min us':>9} {'max us':>9} {'triples <= 5 %':>15} {'sliding':>9}")
        for r in rows[:n_series]:
            d, dn = r["disjoint_triples_within_5pct"]
            s, sn = r["sliding_triples_within_5pct"]
            print(f"{r['series']:<22} {r['min_us']:>9.1f} {r['max_us']:>9.1f} {f'{d} of {dn}':>15} {f'{s}/{sn}':>9}")
        st = rows[n_series]
        print(f"runs whose host held still at both edges (bench host_speed): {st['runs_with_steady_host'][0]} of "
              f"{st['runs_with_steady_host'][1]}; of the disjoint triples of such runs, "
              f"{st['disjoint_triples_within_5pct'][0]} of {st['disjoint_triples_within_5pct'][1]} within 5 %")
        h = rows[n_series + 1]
        print(f"sliding triples whose host probe held within 5 %: {h['sliding_triples_probe_within_5pct']}; "
              f"of them, MoE triples within 5 %: {h['of_them_moe_within_5pct']}")
        c = result["correlation_moe_probe"]
        print(f"correlation of the MoE median with the probe: {'n/a' if c is None else f'{c:.2f}'}")
    for f in failures:
        print("FAILED " + f)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

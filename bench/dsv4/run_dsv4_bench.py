#!/usr/bin/python3
"""dsv4 host-side benchmark: the pull request's table on taskring.

Runs `taskring run dsv4_chip` (one chip, every layer in one run, weights
resident in device memory) and `taskring run dsv4 --chips 2` (the node form:
over a comm domain, and one row through the host) with the full-shape preset on
hbg, Graph off vs on, per-layer submission upload (TASKRING_GRAPH_ARENA_BYTES=0)
vs one bulk upload, the link model off and on (TASKRING_SIM_LINK=17,25), and
prints host-submitted tasks, orchestration µs, bind µs, upload µs and H2D
calls per step as a table, with a JSON copy. Times are trim-means over the
measured rounds (the highest and lowest `--trim` dropped), as the pull request
measured (50 rounds, 10 dropped at each end). By default the device run is
skipped (TASKRING_SKIP_DEVICE_RUN=1): the host side alone, as the pull request
does; --device-run also executes and checks the golden every round.

Usage: bench/dsv4/run_dsv4_bench.py [--taskring PATH] [--rounds 50] [--trim 10]
       [--warmup 2] [--layers N] [--device-run] [--json FILE]
Timing on a loaded machine is noise: re-run on a quiet one.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

# The pull request's numbers (DeepSeek-V4 FLASH decode, host_build_graph, a2a3
# hardware, per rank): host-submitted tasks, Definition nodes, h2d_graph copies.
PR = {
    "host_tasks_graph_off": 15971,
    "host_tasks_graph_on": 1131,
    "definition_nodes": 744,
    "submission_copies_per_layer_upload": 41,
    "submission_copies_bulk_upload": 1,
}


def trim_mean(values, trim):
    v = sorted(values)
    if len(v) > 2 * trim:
        v = v[trim:len(v) - trim]
    return sum(v) / len(v) if v else float("nan")


def run(taskring, argv, env_extra):
    env = dict(os.environ)
    env["TASKRING_LOG_LEVEL"] = "warn"
    env.update(env_extra)
    p = subprocess.run([taskring, "run"] + argv + ["--json"], env=env, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        sys.exit("taskring run %s failed (%d):\n%s" % (" ".join(argv), p.returncode, p.stderr[-4000:]))
    return json.loads(p.stdout)


def chip_form(args, graph, arena, link):
    env = {"TASKRING_SIM_LINK": "17,25" if link else "off"}
    if not arena:
        env["TASKRING_GRAPH_ARENA_BYTES"] = "0"
    argv = ["dsv4_chip", "--runtime", "hbg", "--full-shape", "on", "--graph", "on" if graph else "off",
            "--rounds", str(args.rounds), "--warmup", str(args.warmup)] + args.extra
    if not args.device_run:
        argv.append("--skip-device-run")
    d = run(args.taskring, argv, env)
    rows = [r for r in d["rounds"] if not r["warmup"]]
    last = rows[-1]
    g = last["graph"]
    upload = [r["graph"]["graph_upload_ns"] + r["graph"]["arena_h2d_ns"] + r["graph"]["image_h2d_ns"] for r in rows]
    return {
        "form": "chip (1 chip, all layers in one run)",
        "graph": graph, "bulk_upload": arena, "link_model": link,
        "host_tasks": last["tasks_submitted"],
        "definition_nodes": d["rounds"][0]["graph"]["nodes_recorded"],  # recorded in the first round
        "orch_us": trim_mean([r["orch_ns"] for r in rows], args.trim) / 1e3,
        "bind_us": trim_mean([r["bind_ns"] for r in rows], args.trim) / 1e3,
        "upload_us": trim_mean(upload, args.trim) / 1e3,
        "h2d_calls": last["h2d_calls"],
        "runtime_h2d_calls": g["graph_upload_calls"] + g["arena_h2d_calls"] + g["image_h2d_calls"],
        "submission_h2d_calls": g["arena_h2d_calls"],
        "golden": sorted({r["golden"]["status"] for r in rows}),
    }


def node_form(args, graph, arena, link, comm=True):
    env = {"TASKRING_SIM_LINK": "17,25" if link else "off"}
    if not arena:
        env["TASKRING_GRAPH_ARENA_BYTES"] = "0"
    argv = ["dsv4", "--chips", "2", "--comm", "on" if comm else "off", "--runtime", "hbg", "--full-shape", "on",
            "--graph", "on" if graph else "off",
            "--rounds", str(args.rounds), "--warmup", str(args.warmup)] + args.extra
    if not args.device_run:
        argv.append("--skip-device-run")
    d = run(args.taskring, argv, env)
    rows = [r for r in d["rounds"] if not r["warmup"]]
    c0 = [r["chips"][0] for r in rows]  # per rank; counts are the same on every rank
    last = c0[-1]
    return {
        "form": "node, 2 chips, " + ("comm domain (1 run per chip)" if comm else "host exchange (1 run per layer)"),
        "graph": graph, "bulk_upload": arena, "link_model": link,
        "host_tasks": last["host_submitted_tasks"],
        "definition_nodes": d["rounds"][0]["chips"][0]["nodes_recorded"],  # recorded in the first round
        "orch_us": trim_mean([c["orch_ns"] for c in c0], args.trim) / 1e3,
        "bind_us": trim_mean([c["bind_ns"] for c in c0], args.trim) / 1e3,
        "upload_us": trim_mean([c["upload_ns"] for c in c0], args.trim) / 1e3,
        "h2d_calls": last["h2d_calls"],
        "runtime_h2d_calls": last["runtime_h2d_calls"],
        "submission_h2d_calls": last["submission_h2d_calls"],
        "golden": sorted({r["golden"]["status"] for r in rows}),
    }


def table(results):
    head = ("| form | Graph | submission upload | link | host tasks / step | Definition nodes | orch µs | bind µs "
            "| upload µs | H2D calls / step (runtime; submission images) | golden |")
    lines = [head, "|" + " --- |" * 11]
    for r in results:
        lines.append("| %s | %s | %s | %s | %d | %d | %.1f | %.1f | %.1f | %d (%d; %d) | %s |" % (
            r["form"], "on" if r["graph"] else "off",
            ("bulk" if r["bulk_upload"] else "per layer") if r["graph"] else "–",
            "17 µs + 25 GB/s" if r["link_model"] else "off", r["host_tasks"], r["definition_nodes"], r["orch_us"],
            r["bind_us"], r["upload_us"], r["h2d_calls"], r["runtime_h2d_calls"], r["submission_h2d_calls"],
            "/".join(r["golden"])))
    lines.append("")
    lines.append("pull request (a2a3, 43 layers, per rank): host tasks %d → %d, Definition %d nodes, submission "
                 "copies %d → %d per inference" % (PR["host_tasks_graph_off"], PR["host_tasks_graph_on"],
                                                   PR["definition_nodes"], PR["submission_copies_per_layer_upload"],
                                                   PR["submission_copies_bulk_upload"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--taskring", default=os.path.join(here, "..", "..", "build", "release", "tools", "taskring",
                                                       "taskring"))
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--trim", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--layers", type=int, default=0, help="override the preset's 43 layers")
    ap.add_argument("--device-run", action="store_true", help="execute every round and check the golden")
    # Under the build tree: result files never land in the source tree.
    ap.add_argument("--json", default=os.path.join(here, "..", "..", "build", "bench", "dsv4.json"))
    args = ap.parse_args()
    args.extra = ["--layers", str(args.layers)] if args.layers else []
    results = []
    for link in (False, True):
        results.append(chip_form(args, False, True, link))
        results.append(chip_form(args, True, False, link))
        results.append(chip_form(args, True, True, link))
        results.append(node_form(args, False, True, link))
        results.append(node_form(args, True, False, link))
        results.append(node_form(args, True, True, link))
        results.append(node_form(args, True, True, link, comm=False))
    out = {"machine": {"node": platform.node(), "cpus": os.cpu_count(), "load": os.getloadavg()},
           "rounds": args.rounds, "trim": args.trim, "warmup": args.warmup, "device_run": args.device_run,
           "pull_request": PR, "results": results}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=2)
    print(table(results))
    print("\nJSON: %s (load average %.1f %.1f %.1f)" % ((args.json,) + os.getloadavg()))


if __name__ == "__main__":
    main()

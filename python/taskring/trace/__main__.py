"""``python3 -m taskring.trace LOG...``: the `taskring trace` command in Python.

Same flags, same output, same exit status: 0 all expected cells valid and
nothing torn, 3 missing or torn data, 2 usage errors.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from ..errors import TaskringError
from ._analysis import analyse


def _positive(text: str) -> int:
    v = int(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return v


def _non_negative(text: str) -> int:
    v = int(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return v


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m taskring.trace",
                                description="analyse [STRACE] timing logs; validate ranks x rounds "
                                            "(exit 3 on missing/torn data)")
    p.add_argument("logs", nargs="+", help="log files ('-' = stdin)")
    p.add_argument("--rounds-table", action="store_true", help="per-dispatch table of the busiest callable")
    p.add_argument("--tree", action="store_true", help="per-callable tree of median stage durations")
    p.add_argument("--chrome", default="", help="write Chrome trace-event JSON (Perfetto) to this file")
    p.add_argument("--json", action="store_true", help="print the machine-readable report instead of text")
    p.add_argument("--expect-ranks", type=_positive, help="expected number of ranks")
    p.add_argument("--expect-rounds", type=_positive, help="expected measured rounds per rank")
    p.add_argument("--warmup", type=_non_negative, default=0, help="leading rounds per rank to exclude")
    p.add_argument("--dispatches-per-round", type=_positive, help="chip.run dispatches per round (default: inferred)")
    p.add_argument("--rank-by", choices=("auto", "pid", "attr"), default="auto",
                   help="rank identity: auto, pid or attr (rank= on chip.run)")
    p.add_argument("--allow-discarded", action="store_true",
                   help="do not fail the verdict for dispatches left out of the matrix")
    p.add_argument("--require", default="root,orch,sched",
                   help="spans a valid cell needs: comma list of root, orch, sched, or none")
    p.add_argument("--root", help="name of the run span")
    p.add_argument("--orch", help="dotted suffix of the orchestrator window")
    p.add_argument("--sched", help="dotted suffix of the scheduler window")
    p.add_argument("--device-wall", help="dotted suffix of the device window")
    a = p.parse_args(argv)  # exits 2 on a usage error, as the C++ command

    require = []
    for item in a.require.split(","):
        if item in ("root", "orch", "sched"):
            require.append(item)
        elif item and item != "none":
            print(f"taskring trace: --require: unknown span '{item}' (accepted: root, orch, sched, none)",
                  file=sys.stderr)
            return 2
    try:
        r = analyse(a.logs, expect_ranks=a.expect_ranks, expect_rounds=a.expect_rounds, warmup=a.warmup,
                    dispatches_per_round=a.dispatches_per_round, rank_by=a.rank_by, require=require, root=a.root,
                    orch=a.orch, sched=a.sched, device_wall=a.device_wall, allow_discarded=a.allow_discarded)
        if a.chrome:
            r.write_chrome(a.chrome)
    except TaskringError as e:
        print(f"taskring trace: {e.message}", file=sys.stderr)
        return 2
    if a.json:
        sys.stdout.write(r._a.render_json())
        return r.exit_code
    out = r.render(rounds_table=a.rounds_table, tree=a.tree)
    if a.chrome:
        out += f"chrome trace written to {a.chrome}\n"
    sys.stdout.write(out)
    return r.exit_code


if __name__ == "__main__":
    sys.exit(main())

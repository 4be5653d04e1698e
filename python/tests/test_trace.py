"""taskring.trace on a generated multi-rank log, and `python3 -m taskring.trace` vs `taskring trace`."""

import json
import os
import subprocess
import sys

import pytest

import taskring
import taskring.trace as tt

RANKS = 2
ROUNDS = 4  # 1 warmup + 3 measured

RANK_SCRIPT = """
import numpy as np, taskring
with taskring.ChipWorker() as w:
    vec = taskring.Callable.workload("vector")
    for _ in range({rounds}):
        a = np.full(256, 2, np.float32); b = np.full(256, 3, np.float32); f = np.zeros(256, np.float32)
        w.run(vec, [(a, taskring.INPUT), (b, taskring.INPUT), (f, taskring.OUTPUT_EXISTING)])
        assert (f == 47).all()
"""


@pytest.fixture(scope="module")
def rank_logs(tmp_path_factory):
    """One log per rank: each rank a separate process, as `taskring bench` forks them."""
    d = tmp_path_factory.mktemp("strace")
    for r in range(RANKS):
        env = dict(os.environ, TASKRING_LOG_LEVEL="TIMING", TASKRING_STRACE_DIR=str(d), TASKRING_RANK=str(r))
        p = subprocess.run([sys.executable, "-c", RANK_SCRIPT.format(rounds=ROUNDS)], env=env, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stderr
    logs = sorted(str(p) for p in d.iterdir())
    assert len(logs) == RANKS
    return logs


def test_a_complete_matrix(rank_logs):
    a = tt.analyse(rank_logs, expect_ranks=RANKS, expect_rounds=ROUNDS - 1, warmup=1)
    assert a.ok and a.exit_code == 0
    m = a.matrix
    assert (m.ranks, m.rounds, m.warmup, m.dispatches_per_round) == (RANKS, ROUNDS - 1, 1, 1)
    assert m.rank_source == "attr"  # TASKRING_RANK tags chip.run with rank=
    assert m.valid_cells == RANKS * (ROUNDS - 1) and m.invalid_cells == 0 and not m.problems
    assert [r.dispatches for r in m.rank_info] == [ROUNDS] * RANKS
    for rank in range(RANKS):
        for rnd in range(ROUNDS - 1):
            c = m.cell(rank, rnd)
            assert (c.rank, c.round, c.valid, c.missing) == (rank, rnd, True, [])
            assert c.effective_us > 0 and c.orch_us > 0 and c.sched_us > 0 and c.host_us >= c.effective_us
    assert m.cell_stats.n == RANKS * (ROUNDS - 1)
    assert m.cell_stats.min <= m.cell_stats.median <= m.cell_stats.max
    assert len(m.rank_stats) == RANKS and all(s.n == ROUNDS - 1 for s in m.rank_stats)
    assert len(m.round_values) == ROUNDS - 1 and all(v is not None for v in m.round_values)
    assert a.counts["torn"] == 0 and a.counts["parsed"] == a.counts["heads"] > 0
    assert a.counts["anchors"] == RANKS and a.sources == rank_logs
    assert a.invocation_count == RANKS * ROUNDS
    with pytest.raises(IndexError):
        m.cell(RANKS, 0)


def test_to_rows_is_plain_data(rank_logs):
    a = tt.analyse(rank_logs, expect_ranks=RANKS, expect_rounds=ROUNDS - 1, warmup=1)
    rows = a.to_rows()
    assert len(rows) == RANKS * (ROUNDS - 1)
    assert [(r["rank"], r["round"]) for r in rows] == [(k, j) for k in range(RANKS) for j in range(ROUNDS - 1)]
    assert set(rows[0]) == {"rank", "round", "valid", "missing", "effective_us", "host_us", "device_us", "orch_us",
                            "sched_us"}
    json.dumps(rows)  # nothing but plain values


def test_missing_rounds_and_ranks_are_reported_not_averaged(rank_logs):
    a = tt.analyse(rank_logs, expect_ranks=RANKS + 1, expect_rounds=ROUNDS + 1, warmup=1)
    assert not a.ok and a.exit_code == 3
    m = a.matrix
    assert m.invalid_cells > 0 and m.problems
    assert m.rank_info[RANKS].pids == []  # the expected rank that never ran
    bad = [c for c in m.cells if not c.valid]
    assert all(c.effective_us is None for c in bad)
    assert m.cell_stats.n == m.valid_cells
    assert m.round_values[-1] is None


def test_torn_records_fail_the_verdict(rank_logs, tmp_path):
    torn = tmp_path / "torn.log"
    with open(rank_logs[0]) as f:
        text = f.read()
    torn.write_text(text + "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=\n")
    a = tt.analyse([str(torn), rank_logs[1]], expect_ranks=RANKS, expect_rounds=ROUNDS - 1, warmup=1)
    assert a.counts["torn"] == 1 and a.exit_code == 3
    assert any(d.kind for d in a.diagnostics)


def test_nothing_valid_or_something_discarded_is_not_ok(rank_logs, tmp_path):
    one = tmp_path / "one.log"
    one.write_text("[STRACE] v=1 pid=7 tid=7 inv=1 hid=1 depth=0 name=chip.run ts=1000 dur=10 "
                   "rank=2147483647\n")
    a = tt.analyse(str(one), require=[])
    assert a.counts["parsed"] == 1 and a.matrix.valid_cells == 0
    assert not a.ok and a.exit_code == 3  # it was ok=True with 0/0 cells
    assert not tt.analyse(str(one), require=[], allow_discarded=True).ok
    # One rank's log more than expected: discarded, so not ok unless allowed.
    b = tt.analyse(rank_logs, expect_ranks=RANKS - 1, expect_rounds=ROUNDS - 1, warmup=1)
    assert b.matrix.discarded_dispatches == ROUNDS and not b.ok
    c = tt.analyse(rank_logs, expect_ranks=RANKS - 1, expect_rounds=ROUNDS - 1, warmup=1, allow_discarded=True)
    assert c.ok and c.matrix.allow_discarded


def test_views_and_reports(rank_logs, tmp_path):
    a = tt.analyse(rank_logs, expect_ranks=RANKS, expect_rounds=ROUNDS - 1, warmup=1)
    text = a.render()
    assert "chip.run" in text and "trace: OK" in text
    assert "Round" in a.render(rounds_table=True)
    report = a.to_json()
    assert isinstance(report, dict)
    chrome = tmp_path / "trace.json"
    a.write_chrome(chrome)
    assert "traceEvents" in json.loads(chrome.read_text())
    assert "valid" in repr(a)


def test_analyse_errors(rank_logs, tmp_path):
    with pytest.raises(taskring.NotFoundError, match="nope.log"):
        tt.analyse([str(tmp_path / "nope.log")])
    with pytest.raises(taskring.InvalidArgumentError, match="expect_rounds=0 must be >= 1"):
        tt.analyse(rank_logs, expect_rounds=0)
    with pytest.raises(taskring.InvalidArgumentError, match="warmup=-1"):
        tt.analyse(rank_logs, warmup=-1)
    with pytest.raises(taskring.InvalidArgumentError, match="rank_by 'rank'"):
        tt.analyse(rank_logs, rank_by="rank")
    with pytest.raises(taskring.InvalidArgumentError, match="unknown span"):
        tt.analyse(rank_logs, require=["root", "device"])
    with pytest.raises(taskring.InvalidArgumentError, match="no log paths"):
        tt.analyse([])


def test_a_single_path_and_relaxed_requirements(rank_logs):
    a = tt.analyse(rank_logs[0], require=[])
    assert a.matrix.ranks == 1 and a.ok


def run_cli(args, cmd):
    return subprocess.run(cmd + args, capture_output=True, text=True, timeout=120)


PY_CLI = [sys.executable, "-m", "taskring.trace"]


@pytest.mark.parametrize("flags,code", [
    (["--expect-ranks", str(RANKS), "--expect-rounds", str(ROUNDS - 1), "--warmup", "1"], 0),
    (["--expect-ranks", str(RANKS), "--expect-rounds", str(ROUNDS + 3)], 3),
    (["--expect-ranks", "0"], 2),
    (["--rank-by", "bogus"], 2),
    (["--require", "root,device"], 2),
])
def test_the_module_command_exits_like_taskring_trace(rank_logs, taskring_cli, flags, code):
    py = run_cli(rank_logs + flags, PY_CLI)
    cpp = run_cli(rank_logs + flags, [taskring_cli, "trace"])
    assert py.returncode == code, py.stderr
    assert cpp.returncode == code, cpp.stderr
    if code != 2:
        assert py.stdout == cpp.stdout


def test_the_module_command_on_a_missing_file(taskring_cli, tmp_path):
    missing = str(tmp_path / "absent.log")
    py = run_cli([missing], PY_CLI)
    assert py.returncode == 2 and "absent.log" in py.stderr
    assert run_cli([missing], [taskring_cli, "trace"]).returncode == 2


def test_the_module_command_json_matches(rank_logs, taskring_cli):
    flags = ["--json", "--expect-ranks", str(RANKS), "--expect-rounds", str(ROUNDS - 1), "--warmup", "1"]
    py = run_cli(rank_logs + flags, PY_CLI)
    cpp = run_cli(rank_logs + flags, [taskring_cli, "trace"])
    assert py.returncode == cpp.returncode == 0
    assert json.loads(py.stdout) == json.loads(cpp.stdout)


def test_the_module_command_views(rank_logs, taskring_cli):
    for flags in (["--tree"], ["--rounds-table"]):
        py = run_cli(rank_logs + flags, PY_CLI)
        cpp = run_cli(rank_logs + flags, [taskring_cli, "trace"])
        assert py.returncode == cpp.returncode == 0
        assert py.stdout == cpp.stdout


def test_the_module_command_reads_stdin_and_writes_chrome(rank_logs, taskring_cli, tmp_path):
    with open(rank_logs[0]) as f:
        log = f.read()
    chrome = tmp_path / "c.json"
    py = subprocess.run(PY_CLI + ["-", "--chrome", str(chrome)], input=log, capture_output=True, text=True,
                        timeout=120)
    cpp = subprocess.run([taskring_cli, "trace", "-"], input=log, capture_output=True, text=True, timeout=120)
    assert py.returncode == cpp.returncode == 0, py.stderr
    assert py.stdout == cpp.stdout + f"chrome trace written to {chrome}\n"
    assert "traceEvents" in json.loads(chrome.read_text())

"""Runs a test body in a fresh interpreter.

NodeWorker.init() forks, and needs a process with no other thread; the pytest process may hold
ChipWorkers of other tests. The body passes when the interpreter exits 0 after printing CASE-OK.
"""

import os
import subprocess
import sys
import textwrap


def run_case(prelude: str, body: str, timeout: int = 120) -> subprocess.CompletedProcess:
    code = textwrap.dedent(prelude) + textwrap.dedent(body) + "\nprint('CASE-OK')\n"
    env = os.environ.copy()
    env.setdefault("TASKRING_LOG_LEVEL", "WARN")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)
    assert r.returncode == 0 and "CASE-OK" in r.stdout, f"rc={r.returncode}\n{r.stdout}\n{r.stderr}"
    return r

"""The orchestration sanitizer from Python (docs/sanitizer.md): ChipWorker(sanitize=...)."""
import pathlib

import numpy as np
import pytest

import taskring


@pytest.mark.parametrize("runtime", ["tmr", "hbg"])
def test_a_kernel_writing_an_input_fails_the_run_naming_it(runtime, orch_one_task, kernel_so):
    # one_task_orch.cpp passes the entry tensors on as they reach the
    # orchestration (tagged INPUT); test_kernel_so.c writes element 0 of tensor 0.
    c = taskring.Callable.from_library(pathlib.Path(orch_one_task), {0: pathlib.Path(kernel_so)})
    x = np.zeros(4, np.int32)
    with taskring.ChipWorker(runtime, sanitize="tags") as w:
        with pytest.raises(taskring.TaskringError) as e:
            w.run(c, [(x, taskring.INPUT), 5])
    assert "KERNEL_FAILED" in str(e.value)
    assert "wrote byte 0 of argument 0 (INPUT)" in str(e.value)
    # Without the sanitizer the same run passes: the write goes unseen.
    with taskring.ChipWorker(runtime) as w:
        w.run(c, [(x, taskring.INPUT), 5])


@pytest.mark.parametrize("runtime", ["tmr", "hbg"])
def test_correct_runs_pass_with_both_modes(runtime):
    vec = taskring.Callable.workload("vector")
    a = np.full(4096, 2.0, np.float32)
    b = np.full(4096, 3.0, np.float32)
    f = np.zeros(4096, np.float32)
    with taskring.ChipWorker(runtime, sanitize="tags,schedule:3") as w:
        w.run(vec, [(a, taskring.INPUT), (b, taskring.INPUT), (f, taskring.OUTPUT_EXISTING)])
    assert (f == 47.0).all()


def test_a_bad_mode_names_the_knob():
    with pytest.raises(taskring.InvalidArgumentError, match="TASKRING_SANITIZE='tag'"):
        taskring.ChipWorker("tmr", sanitize="tag")

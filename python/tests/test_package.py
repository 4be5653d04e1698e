"""The package surface: import, names, dtype mapping, error classes."""

import os
import subprocess
import sys

import numpy as np
import pytest

import taskring
from taskring import errors


def test_import_from_a_fresh_interpreter_with_pythonpath():
    # What the README tells a newcomer to run.
    r = subprocess.run([sys.executable, "-c", "import taskring; print(taskring.__version__)"],
                       capture_output=True, text=True, timeout=60, env=os.environ.copy())
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == taskring.__version__


def test_every_public_name_exists():
    for name in taskring.__all__:
        assert hasattr(taskring, name), name


def test_tags_have_the_upstream_values():
    assert [int(t) for t in (taskring.INPUT, taskring.OUTPUT, taskring.INOUT, taskring.OUTPUT_EXISTING,
                             taskring.NO_DEP)] == [0, 1, 2, 3, 4]


NUMPY_TO_TASKRING = [
    (np.float32, taskring.FLOAT32), (np.float16, taskring.FLOAT16), (np.int8, taskring.INT8),
    (np.int16, taskring.INT16), (np.int32, taskring.INT32), (np.int64, taskring.INT64), (np.uint8, taskring.UINT8),
    (np.uint16, taskring.UINT16), (np.uint32, taskring.UINT32), (np.uint64, taskring.UINT64),
    (np.bool_, taskring.BOOL),
]


@pytest.mark.parametrize("np_type,t", NUMPY_TO_TASKRING)
def test_dtype_mapping_both_ways(np_type, t):
    assert taskring.data_type_of(np_type) == t
    assert t.numpy_dtype() == np.dtype(np_type)
    assert t.itemsize == np.dtype(np_type).itemsize


def test_bfloat16_is_held_as_uint16():
    assert taskring.BFLOAT16.numpy_dtype() == np.dtype(np.uint16)
    assert taskring.BFLOAT16.itemsize == 2
    assert taskring.BFLOAT16.short_name == "BF16"


@pytest.mark.parametrize("bad", [np.float64, np.complex64, np.dtype(">f4"), np.dtype("U3")])
def test_dtypes_without_a_taskring_type_are_rejected(bad):
    with pytest.raises(taskring.InvalidArgumentError, match="no taskring type"):
        taskring.data_type_of(bad)


def test_parse_data_type_accepts_both_spellings():
    from taskring.dtypes import parse_data_type

    assert parse_data_type("fp32") == taskring.FLOAT32
    assert parse_data_type("BFLOAT16") == taskring.BFLOAT16
    assert parse_data_type(6) == taskring.BFLOAT16
    assert parse_data_type(np.int8) == taskring.INT8
    with pytest.raises(taskring.InvalidArgumentError, match="unknown data type name 'fp33'"):
        parse_data_type("fp33")
    with pytest.raises(taskring.InvalidArgumentError, match="outside 0..11"):
        parse_data_type(12)


def test_bf16_helpers_round_trip_and_round_to_nearest_even():
    x = np.array([1.0, -2.5, 3.140625, 0.0, 65280.0], np.float32)  # all exact in bf16
    bits = taskring.bf16_from_float32(x)
    assert bits.dtype == np.uint16
    np.testing.assert_array_equal(taskring.float32_from_bf16(bits), x)
    # 1 + 2^-8 is halfway between two bf16 values: ties to even (1.0).
    assert taskring.bf16_from_float32(np.array([1.00390625], np.float32))[0] == 0x3F80
    assert taskring.bf16_from_float32(np.array([np.nan], np.float32))[0] == 0x7FC0


def test_builtin_kernels_and_workloads_are_listed():
    k = taskring.builtin_kernels()
    assert k["add"] == 896 and k["copy"] == 899 and k["moe_route"] == 910 and len(k) == 15
    assert "vector" in taskring.workloads()


_FIRST_CHIP = ("import warnings, taskring; warnings.simplefilter('default'); "
               "taskring.ChipWorker().close(); taskring.ChipWorker().close(); print(taskring.blas_info()['core'])")


def _python(code, **env):
    e = os.environ.copy()
    e.pop("OPENBLAS_CORETYPE", None)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=e)


def test_blas_info_names_the_kernel_set_and_a_generic_one_warns_once():
    info = taskring.blas_info()
    assert set(info) == {"config", "core", "better_core", "advice"}
    assert info["core"] and "OpenBLAS" in info["config"]
    r = _python(_FIRST_CHIP)
    assert r.returncode == 0, r.stderr
    plain = r.stdout.strip()
    if "OPENBLAS_CORETYPE" in os.environ:
        pytest.skip("OPENBLAS_CORETYPE is set for this test run")
    warned = r.stderr.count("RuntimeWarning")
    if not taskring.blas_info()["better_core"]:
        assert warned == 0, r.stderr  # a recognised CPU: nothing to say
        return
    # A generic set on a CPU with better vector units: the first chip says which
    # OPENBLAS_CORETYPE to start with, once; started with it, OpenBLAS uses it and
    # nothing is said.
    better = taskring.blas_info()["better_core"]
    assert warned == 1, r.stderr
    assert f"OPENBLAS_CORETYPE={better}" in r.stderr and "Python must start with it set" in r.stderr
    fixed = _python(_FIRST_CHIP, OPENBLAS_CORETYPE=better)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout.strip() == better != plain
    assert "RuntimeWarning" not in fixed.stderr, fixed.stderr


@pytest.mark.parametrize("cls", [errors.InvalidArgumentError, errors.OutOfRangeError, errors.NotFoundError,
                                 errors.AlreadyExistsError, errors.FailedPreconditionError,
                                 errors.ResourceExhaustedError, errors.DeadlineExceededError, errors.AbortedError,
                                 errors.InternalError, errors.UnimplementedError, errors.UnavailableError])
def test_each_status_code_maps_to_its_class(cls):
    e = errors._from_status(cls.code, cls.code_name, "what went wrong", None)
    assert type(e) is cls and isinstance(e, taskring.TaskringError)
    assert e.message == "what went wrong" and str(e) == f"{cls.code_name}: what went wrong"
    assert taskring._taskring._status_code_name(cls.code) == cls.code_name


def test_generic_handlers_still_catch():
    assert issubclass(taskring.InvalidArgumentError, ValueError)
    assert issubclass(taskring.OutOfRangeError, IndexError)
    assert issubclass(taskring.NotFoundError, LookupError)


def test_runtime_code_is_found_in_the_message():
    f = taskring._taskring._runtime_code_in
    assert f("run of 'x': KERNEL_FAILED: task 0:0 kernel 3 failed") == "KERNEL_FAILED"
    assert f("SCOPE_DEADLOCK: scope 2 holds 9 tasks") == "SCOPE_DEADLOCK"
    assert f("nothing to see") is None


def test_an_invalid_log_knob_fails_the_import():
    env = dict(os.environ, TASKRING_LOG_LEVEL="chatty")
    r = subprocess.run([sys.executable, "-c", "import taskring"], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode != 0
    assert "TASKRING_LOG_LEVEL" in r.stderr and "InvalidArgumentError" in r.stderr


def test_the_overhead_bench_runs(tmp_path):
    # Keeps bench/python working; timings are reported, never asserted.
    import json
    import pathlib

    script = pathlib.Path(__file__).resolve().parents[2] / "bench/python/run_overhead.py"
    out = tmp_path / "o.json"
    r = subprocess.run([sys.executable, str(script), "--runs", "5", "--blocks", "2", "--warmup", "2", "--size", "64",
                        "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    assert res["runs"] == 10 and res["python_run_us"]["median"] > 0 and res["cpp_run_us"]["median"] > 0


def test_the_orchestrators_comm_and_memory_calls_have_upstreams_signatures():
    # python/simpler/orchestrator.py and task_interface.py of hw-native-sys/simpler, as read for stop 19.
    import dataclasses
    import inspect

    O = taskring.NodeOrchestrator

    def params(f):
        return [(p.name, p.kind.name) for p in list(inspect.signature(f).parameters.values())[1:]]

    kw, pos = "KEYWORD_ONLY", "POSITIONAL_OR_KEYWORD"
    assert params(O.allocate_domain) == [("name", kw), ("workers", kw), ("window_size", kw), ("buffers", kw)]
    assert params(O.release_domain) == [("handle", pos)]
    assert params(O.alloc) == [("shape", pos), ("dtype", pos)]
    assert params(O.alloc_child_tensor) == [("worker_id", pos), ("shapes", pos), ("dtype", pos)]
    assert params(O.free) == [("handle", pos)]
    for f in (O.copy_to, O.copy_from):
        assert params(f) == [("dst", pos), ("src", pos), ("dst_offset", kw), ("src_offset", kw), ("nbytes", kw)]
    assert [f.name for f in dataclasses.fields(taskring.CommBufferSpec)] == [
        "name", "dtype", "count", "nbytes", "load_from_host", "store_to_host"]
    assert [f.name for f in dataclasses.fields(taskring.ChipDomainContext)] == [
        "name", "domain_rank", "domain_size", "device_ctx", "local_window_base", "actual_window_size", "buffer_ptrs"]
    for attr in ("name", "workers", "contexts", "released", "freed", "release", "__getitem__", "__enter__",
                 "__exit__"):
        assert hasattr(taskring.CommDomainHandle, attr), attr

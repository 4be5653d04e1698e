"""L2 from Python: the vector example, callables, arguments, device memory, reports."""

import pathlib
import threading
import time

import numpy as np
import pytest

import taskring

VECTOR_KERNELS = {0: "add", 1: "add_scalar", 2: "mul"}


def staged_h2d_calls(r):
    """Copies of tensor arguments (hbg also uploads its task image and graphs)."""
    g = r.graph
    return r.h2d_calls - g.image_h2d_calls - g.graph_upload_calls - g.arena_h2d_calls


def vector_args(shape, tag_f=taskring.OUTPUT_EXISTING):
    a = np.full(shape, 2.0, np.float32)
    b = np.full(shape, 3.0, np.float32)
    f = np.zeros(shape, np.float32)
    return f, [(a, taskring.INPUT), (b, taskring.INPUT), (f, tag_f)]


def test_vector_workload_is_47_everywhere(worker):
    vec = taskring.Callable.workload("vector")
    for _ in range(3):
        f, args = vector_args(4096)
        report = worker.run(vec, args)
        assert (f == 47.0).all()
        assert report.stats.tasks_submitted == 5 and report.stats.tasks_completed == 5
        assert staged_h2d_calls(report) == 2
        assert report.d2h_calls == 1 and report.d2h_bytes == 4096 * 4
        assert not report.skipped_device_run


def test_vector_from_an_orchestration_library_with_builtin_kernel_names(worker, orch_vector):
    vec = taskring.Callable.from_library(orch_vector, VECTOR_KERNELS, name="vector_lib")
    assert vec.name == "vector_lib" and vec.source == "library:" + orch_vector
    assert vec.kernels == VECTOR_KERNELS
    f, args = vector_args((32, 64), tag_f=taskring.OUTPUT)  # OUTPUT on an array: written by the run
    worker.run(vec, args)
    assert (f == 47.0).all()


def test_the_report_is_a_dataclass_with_windows(tmr_worker):
    f, args = vector_args(1024)
    r = tmr_worker.run(taskring.Callable.workload("vector"), args)
    assert isinstance(r, taskring.RunReport) and isinstance(r.stats, taskring.RunStats)
    assert r.stats.orch_end_ns >= r.stats.orch_start_ns > 0
    assert r.stats.sched_end_ns >= r.stats.sched_start_ns > 0
    assert r.orch_us >= 0 and r.sched_us >= 0
    assert r.stats.kernel_tasks == 5 and r.invocation_id > 0
    d = r.to_dict()
    assert d["stats"]["tasks_submitted"] == 5 and d["h2d_calls"] == 2 and "graph" in d
    import dataclasses
    assert dataclasses.is_dataclass(r) and dataclasses.is_dataclass(r.stats) and dataclasses.is_dataclass(r.graph)


def test_hbg_reports_its_graph_counters():
    with taskring.ChipWorker(runtime="hbg") as w:
        f, args = vector_args(256)
        r = w.run(taskring.Callable.workload("vector"), args)
        assert (f == 47.0).all()
        assert r.graph.host_tasks == 5
        assert w.runtime == "hbg" and w.device == "sim"


def test_register_returns_a_stable_id(tmr_worker, orch_vector):
    vec = taskring.Callable.workload("vector")
    lib = taskring.Callable.from_library(orch_vector, VECTOR_KERNELS)
    i = tmr_worker.register(vec)
    assert tmr_worker.register(vec) == i
    assert tmr_worker.register(lib) != i


def test_a_kernel_from_a_shared_library_and_int_scalars(tmr_worker, orch_one_task, kernel_so):
    # test_kernel_so.c writes int32(42 + scalar0) into element 0 of tensor 0.
    c = taskring.Callable.from_library(pathlib.Path(orch_one_task), {0: pathlib.Path(kernel_so)})
    x = np.zeros(4, np.int32)
    tmr_worker.run(c, [(x, taskring.INOUT), 5])
    assert x.tolist() == [47, 0, 0, 0]
    tmr_worker.run(c, [(x, taskring.INOUT), -5])
    assert x[0] == 37
    tmr_worker.run(c, [(x, taskring.INOUT), True])
    assert x[0] == 43
    tmr_worker.run(c, [(x, taskring.INOUT), np.int8(-2)])
    assert x[0] == 40


def test_float_scalars_are_float32_unless_numpy_says_otherwise(tmr_worker, orch_one_task, kernel_so):
    c = taskring.Callable.from_library(orch_one_task, {0: kernel_so})
    x = np.zeros(1, np.int32)
    f32_bits = int(np.array(1.5, np.float32).view(np.uint32))
    for scalar in (1.5, np.float32(1.5)):
        tmr_worker.run(c, [(x, taskring.INOUT), scalar])
        assert x[0] == np.int32(42 + f32_bits)
    # A double's bit pattern: the low 32 bits of 1.5 are zero.
    tmr_worker.run(c, [(x, taskring.INOUT), np.float64(1.5)])
    assert x[0] == 42


ALL_DTYPES = [np.float32, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64, np.bool_]


def sample(np_type, shape, seed):
    rng = np.random.default_rng(seed)
    if np_type is np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(np_type, np.floating):
        return rng.standard_normal(shape).astype(np_type)
    info = np.iinfo(np_type)
    return rng.integers(info.min, info.max, shape, dtype=np_type, endpoint=True)


@pytest.mark.parametrize("np_type", ALL_DTYPES, ids=lambda t: np.dtype(t).name)
def test_every_dtype_round_trips_through_a_run(worker, orch_one_task, np_type):
    copy = taskring.Callable.from_library(orch_one_task, {0: "copy"})
    src = sample(np_type, (8, 33), seed=1)
    dst = np.zeros_like(src)
    worker.run(copy, [(src, taskring.INPUT), (dst, taskring.OUTPUT_EXISTING)])
    np.testing.assert_array_equal(dst, src)
    assert dst.tobytes() == src.tobytes()


def test_bfloat16_round_trips_as_a_uint16_view(tmr_worker, orch_one_task):
    copy = taskring.Callable.from_library(orch_one_task, {0: "copy"})
    values = np.linspace(-4, 4, 64, dtype=np.float32)
    src = taskring.bf16_from_float32(values)
    dst = np.zeros_like(src)
    tmr_worker.run(copy, [taskring.Tensor(src, taskring.INPUT, dtype=taskring.BFLOAT16),
                          taskring.Tensor(dst, taskring.OUTPUT_EXISTING, dtype="bf16")])
    np.testing.assert_array_equal(dst, src)
    np.testing.assert_allclose(taskring.float32_from_bf16(dst), values, rtol=2 ** -8)


def test_a_view_copies_a_window(tmr_worker, orch_one_task):
    copy = taskring.Callable.from_library(orch_one_task, {0: "copy"})
    big = np.arange(100, dtype=np.int32)
    out = np.zeros(10, np.int32)
    tmr_worker.run(copy, [taskring.Tensor(big, taskring.INPUT, shape=(2, 5), strides=(10, 1), offset=20),
                          taskring.Tensor(out, taskring.OUTPUT_EXISTING, shape=(2, 5))])
    assert out.tolist() == [20, 21, 22, 23, 24, 30, 31, 32, 33, 34]


@pytest.mark.parametrize("np_type", ALL_DTYPES, ids=lambda t: np.dtype(t).name)
def test_device_memory_round_trips_every_dtype(tmr_worker, np_type):
    src = sample(np_type, (5, 7), seed=2)
    buf = tmr_worker.malloc(src.nbytes, tag="rt")
    assert buf.nbytes == src.nbytes and buf.tag == "rt" and not buf.freed and buf.addr != 0
    tmr_worker.copy_to(buf, src)
    back = np.empty_like(src)
    tmr_worker.copy_from(back, buf)
    np.testing.assert_array_equal(back, src)
    tmr_worker.free(buf)
    assert buf.freed


def test_offsets_in_device_copies(tmr_worker):
    buf = tmr_worker.malloc(64)
    tmr_worker.copy_to(buf, np.arange(4, dtype=np.int32), offset=16)
    out = np.zeros(4, np.int32)
    tmr_worker.copy_from(out, buf, offset=16)
    assert out.tolist() == [0, 1, 2, 3]
    tmr_worker.free(buf)


def test_the_vector_example_on_user_staged_device_buffers(worker):
    n = 2048
    a, b = (worker.malloc(n * 4, tag=t) for t in ("a", "b"))
    f = worker.malloc(n * 4, tag="f")
    worker.copy_to(a, np.full(n, 2.0, np.float32))
    worker.copy_to(b, np.full(n, 3.0, np.float32))
    r = worker.run(taskring.Callable.workload("vector"),
                   [taskring.Tensor(a, taskring.INPUT, shape=(n,)), taskring.Tensor(b, taskring.INPUT, shape=(n,)),
                    taskring.Tensor(f, taskring.OUTPUT_EXISTING, shape=(n,), dtype=taskring.FLOAT32)])
    assert staged_h2d_calls(r) == 0 and r.d2h_calls == 0  # nothing staged by the run
    out = np.zeros(n, np.float32)
    worker.copy_from(out, f)
    assert (out == 47.0).all()
    for buf in (a, b, f):
        worker.free(buf)


def test_worker_queries_and_close(orch_vector):
    w = taskring.ChipWorker()
    topo = w.topology()
    assert topo["cores"] == 3 * topo["clusters"] and topo["aiv"] == 2 * topo["aic"]
    before = w.counters()
    f, args = vector_args(128)
    w.run(taskring.Callable.workload("vector"), args)
    after = w.counters()
    assert after["h2d_calls"] == before["h2d_calls"] + 2 and after["d2h_calls"] == before["d2h_calls"] + 1
    assert repr(w) == "ChipWorker(runtime='tmr', device='sim')"
    w.close()
    w.close()  # idempotent
    assert w.closed and repr(w) == "ChipWorker(closed)"
    with pytest.raises(taskring.FailedPreconditionError, match="closed"):
        w.run(taskring.Callable.workload("vector"), args)


def test_the_gil_is_released_while_a_run_executes():
    # Two threads run on one worker. The worker's lock is held only inside
    # run(), and while holding it the GIL is released only around the
    # runtime's execution; so a thread can find the worker busy only if it ran
    # Python while the other thread was inside the runtime with the GIL
    # released. Were the GIL held for the whole run, nobody would ever see it busy.
    vec = taskring.Callable.workload("vector")
    seen_busy = threading.Event()
    errors = []
    with taskring.ChipWorker() as w:
        w.register(vec)

        def loop(n):
            try:
                deadline = time.monotonic() + 60
                while not seen_busy.is_set() and time.monotonic() < deadline:
                    f, args = vector_args(n)
                    try:
                        w.run(vec, args)
                    except taskring.FailedPreconditionError as e:
                        assert "another thread is using this worker" in e.message
                        seen_busy.set()
                        return
                    assert f[0] == 47.0 and f[-1] == 47.0
            except Exception as e:  # surfaced below
                errors.append(e)

        threads = [threading.Thread(target=loop, args=(n,)) for n in (1 << 18, 1 << 10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
            assert not t.is_alive()
    assert not errors, errors
    assert seen_busy.is_set(), "no thread ever observed a run in flight"


def test_runs_neither_leak_nor_steal_array_references(tmr_worker):
    import sys

    f, args = vector_args(64)
    a = args[0][0]
    before = (sys.getrefcount(a), sys.getrefcount(f))
    for _ in range(3):
        tmr_worker.run(taskring.Callable.workload("vector"), args)
    with pytest.raises(taskring.InvalidArgumentError):
        tmr_worker.run(taskring.Callable.workload("vector"), args + ["x"])
    assert (sys.getrefcount(a), sys.getrefcount(f)) == before


def test_callable_repr_and_workload_kernels(orch_vector):
    vec = taskring.Callable.workload("vector", {5: "mul"})
    assert repr(vec) == "Callable('vector', 'workload:vector')"
    assert vec.kernels == {5: "mul"}

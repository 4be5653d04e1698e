"""Misuse from Python is an exception with the runtime's message and code, never a crash."""

import numpy as np
import pytest

import taskring


@pytest.fixture
def copy(orch_one_task):
    return taskring.Callable.from_library(orch_one_task, {0: "copy"})


@pytest.fixture
def vec():
    return taskring.Callable.workload("vector")


def f32(n, v=0.0):
    return np.full(n, v, np.float32)


# ---- arrays ---------------------------------------------------------------

def test_wrong_dtype(tmr_worker, copy):
    with pytest.raises(taskring.InvalidArgumentError, match=r"argument 0: numpy dtype float64 has no taskring type"):
        tmr_worker.run(copy, [(np.zeros(4), taskring.INPUT), (f32(4), taskring.OUTPUT_EXISTING)])


def test_big_endian_array(tmr_worker, copy):
    with pytest.raises(taskring.InvalidArgumentError, match="argument 1: numpy dtype >f4"):
        tmr_worker.run(copy, [(f32(4), taskring.INPUT), (np.zeros(4, ">f4"), taskring.OUTPUT_EXISTING)])


@pytest.mark.parametrize("make", [lambda: f32(16)[::2], lambda: np.asfortranarray(np.zeros((4, 4), np.float32)),
                                  lambda: np.zeros((4, 4), np.float32).T])
def test_non_contiguous_array(tmr_worker, copy, make):
    with pytest.raises(taskring.InvalidArgumentError, match="argument 0: array is not C-contiguous"):
        tmr_worker.run(copy, [(make(), taskring.INPUT), (f32(8), taskring.OUTPUT_EXISTING)])


def test_read_only_output(tmr_worker, copy):
    out = f32(4)
    out.setflags(write=False)
    with pytest.raises(taskring.InvalidArgumentError, match="argument 1: array is read-only but the run writes it"):
        tmr_worker.run(copy, [(f32(4), taskring.INPUT), (out, taskring.OUTPUT_EXISTING)])
    # A read-only INPUT is fine.
    src = f32(4, 7.0)
    src.setflags(write=False)
    dst = f32(4)
    tmr_worker.run(copy, [(src, taskring.INPUT), (dst, taskring.OUTPUT_EXISTING)])
    assert (dst == 7.0).all()


@pytest.mark.parametrize("shape,msg", [((), "0 dimensions"), ((1, 1, 1, 1, 1, 2), "6 dimensions"),
                                       ((0,), "dimension 0 has 0 elements")])
def test_bad_rank_or_empty(tmr_worker, copy, shape, msg):
    with pytest.raises(taskring.InvalidArgumentError, match=msg):
        tmr_worker.run(copy, [(np.zeros(shape, np.float32), taskring.INPUT), (f32(1), taskring.OUTPUT_EXISTING)])


def test_array_too_small_for_its_view(tmr_worker, copy):
    a = f32(10)
    with pytest.raises(taskring.TaskringError, match="argument 0.*view extent exceeds the buffer") as e:
        tmr_worker.run(copy, [taskring.Tensor(a, taskring.INPUT, shape=(4, 4)), (f32(16), taskring.OUTPUT_EXISTING)])
    assert e.value.code_name in ("INVALID_ARGUMENT", "OUT_OF_RANGE")
    with pytest.raises(taskring.TaskringError, match="argument 0"):
        tmr_worker.run(copy, [taskring.Tensor(a, taskring.INPUT, shape=(2,), offset=9),
                              (f32(2), taskring.OUTPUT_EXISTING)])


def test_view_dtype_of_another_size(tmr_worker, copy):
    with pytest.raises(taskring.InvalidArgumentError, match="dtype BF16 \\(2 B\\) cannot view a float32 array"):
        tmr_worker.run(copy, [taskring.Tensor(f32(4), taskring.INPUT, dtype=taskring.BFLOAT16),
                              (f32(4), taskring.OUTPUT_EXISTING)])


def test_strides_without_shape(tmr_worker, copy):
    with pytest.raises(taskring.InvalidArgumentError, match="strides or offset need an explicit shape"):
        tmr_worker.run(copy, [taskring.Tensor(f32(4), taskring.INPUT, offset=1), (f32(3), taskring.OUTPUT_EXISTING)])


@pytest.mark.parametrize("kwargs,msg", [({"shape": (-1,)}, r"shape\[0\] = -1"), ({"shape": 3}, "sequence of integers"),
                                        ({"offset": -2}, "offset=-2 is negative"), ({"dtype": "fp99"}, "fp99")])
def test_tensor_constructor_checks(kwargs, msg):
    with pytest.raises(taskring.InvalidArgumentError, match=msg):
        taskring.Tensor(f32(4), taskring.INPUT, **kwargs)


def test_tensor_of_something_else():
    with pytest.raises(taskring.InvalidArgumentError, match="numpy array, a DeviceBuffer or a ChildBuffer, got list"):
        taskring.Tensor([1, 2], taskring.INPUT)
    with pytest.raises(ValueError):
        taskring.Tensor(f32(4), 9)  # not a tag


# ---- argument lists --------------------------------------------------------

@pytest.mark.parametrize("args,cls,msg", [
    ([f32(4)], taskring.InvalidArgumentError, "argument 0: a bare array"),
    (["x"], taskring.InvalidArgumentError, "argument 0: expected \\(array, tag\\).*got str"),
    ([(f32(4), 7)], taskring.InvalidArgumentError, "argument 0: tag 7 outside 0..4"),
    ([(f32(4), "in")], taskring.InvalidArgumentError, "argument 0: the tag must be"),
    ([1, (f32(4), taskring.INPUT)], taskring.InvalidArgumentError, "argument 1: .*after 1 scalar"),
    ([2 ** 70], taskring.OutOfRangeError, "argument 0: integer scalar does not fit 64 bits"),
    ([np.complex64(1)], taskring.InvalidArgumentError, "numpy scalar of dtype complex64"),
    # (x, tag) whose x is not an array: say what x is, not "got tuple".
    ([([1.0, 2.0], taskring.INPUT)], taskring.InvalidArgumentError,
     "argument 0: \\(array, tag\\) holds a Python list, not a numpy array; pass \\(numpy.asarray"),
    ([(memoryview(bytearray(16)), taskring.INPUT)], taskring.InvalidArgumentError,
     "argument 0: \\(array, tag\\) holds a memoryview, not a numpy array; pass \\(numpy.frombuffer"),
    ([(np.float32(1), taskring.INPUT)], taskring.InvalidArgumentError,
     "argument 0: \\(array, tag\\) holds a numpy scalar \\(numpy.float32, 0-d\\)"),
    ([(object(), taskring.INPUT)], taskring.InvalidArgumentError,
     "argument 0: \\(array, tag\\) holds a value of type object"),
])
def test_bad_arguments(tmr_worker, copy, args, cls, msg):
    with pytest.raises(cls, match=msg):
        tmr_worker.run(copy, args)


def test_too_many_tensors(tmr_worker, copy):
    a = f32(1)
    with pytest.raises(taskring.InvalidArgumentError, match="more than 256 tensor arguments|capacity 256"):
        tmr_worker.run(copy, [(a, taskring.INPUT)] * 257)


def test_args_and_callable_types(tmr_worker, copy):
    with pytest.raises(taskring.InvalidArgumentError, match="args must be a list or tuple, got dict"):
        tmr_worker.run(copy, {0: f32(4)})
    with pytest.raises(taskring.InvalidArgumentError, match="expected a taskring.Callable, got str"):
        tmr_worker.run("vector", [])


def test_too_few_arguments_for_the_orchestration(tmr_worker, vec):
    with pytest.raises(taskring.TaskringError) as e:
        tmr_worker.run(vec, [(f32(4), taskring.INPUT)])
    assert "3" in e.value.message  # the entry's expected argument count
    # The worker stays usable.
    f = f32(8)
    tmr_worker.run(vec, [(f32(8, 2), taskring.INPUT), (f32(8, 3), taskring.INPUT), (f, taskring.OUTPUT_EXISTING)])
    assert (f == 47).all()


# ---- callables and workers -------------------------------------------------

def test_unknown_runtime_and_device():
    with pytest.raises(taskring.TaskringError, match="xyz"):
        taskring.ChipWorker(runtime="xyz")
    with pytest.raises(taskring.TaskringError, match="gpu9"):
        taskring.ChipWorker(device="gpu9")


def test_unknown_workload():
    with pytest.raises(taskring.NotFoundError, match="unknown workload 'vectr' \\(known: vector"):
        taskring.Callable.workload("vectr")


def test_unknown_builtin_kernel_name(orch_one_task):
    with pytest.raises(taskring.NotFoundError, match="kernel 0 = 'cpy' is neither a built-in kernel \\(add, "):
        taskring.Callable.from_library(orch_one_task, {0: "cpy"})


@pytest.mark.parametrize("kernels,msg", [({"0": "add"}, "not an integer"), ({0: 3}, "got int")])
def test_kernel_map_types(orch_one_task, kernels, msg):
    with pytest.raises(taskring.InvalidArgumentError, match=msg):
        taskring.Callable.from_library(orch_one_task, kernels)


def test_kernel_id_out_of_range_is_rejected_at_register(tmr_worker, orch_one_task):
    c = taskring.Callable.from_library(orch_one_task, {2000: "add"})
    with pytest.raises(taskring.InvalidArgumentError, match="kernel func id 2000 outside \\[0, 1024\\)"):
        tmr_worker.register(c)


def test_missing_libraries(tmr_worker, orch_one_task, tmp_path):
    missing = str(tmp_path / "nope.so")
    with pytest.raises(taskring.NotFoundError, match="nope.so"):
        tmr_worker.register(taskring.Callable.from_library(missing, {}))
    with pytest.raises(taskring.NotFoundError, match="nope.so"):
        tmr_worker.register(taskring.Callable.from_library(orch_one_task, {0: missing}))


def test_a_kernel_failure_names_task_kernel_block_and_core(tmr_worker, orch_one_task, kernel_so):
    c = taskring.Callable.from_library(orch_one_task, {0: kernel_so})
    x = np.zeros(1, np.int32)
    with pytest.raises(taskring.AbortedError) as e:
        tmr_worker.run(c, [(x, taskring.INOUT), -1])  # test_kernel_so.c refuses -1
    err = e.value
    assert err.runtime_code == "KERNEL_FAILED" and err.code_name == "ABORTED" and err.code == 8
    for part in ("task 0:0", "kernel 0", "block 0/1", "core ", "so kernel: scalar -1 refused"):
        assert part in err.message, err.message
    tmr_worker.run(c, [(x, taskring.INOUT), 0])  # still usable
    assert x[0] == 42


# ---- device memory ---------------------------------------------------------

def test_freed_buffer(tmr_worker, vec):
    buf = tmr_worker.malloc(64)
    tmr_worker.free(buf)
    assert buf.freed and "freed" in repr(buf)
    for call in (lambda: tmr_worker.copy_to(buf, f32(4)), lambda: tmr_worker.copy_from(f32(4), buf),
                 lambda: tmr_worker.free(buf)):
        with pytest.raises(taskring.FailedPreconditionError, match=f"device buffer 0x{buf.addr:x} was freed"):
            call()
    with pytest.raises(taskring.FailedPreconditionError, match="argument 0.*was freed"):
        tmr_worker.run(vec, [taskring.Tensor(buf, taskring.INPUT, shape=(16,))] * 3)


def test_copies_outside_the_buffer(tmr_worker):
    buf = tmr_worker.malloc(16)
    with pytest.raises(taskring.OutOfRangeError, match="copy_to: 20 bytes at offset 0 exceed the 16 B device buffer"):
        tmr_worker.copy_to(buf, np.zeros(5, np.float32))
    with pytest.raises(taskring.OutOfRangeError, match="copy_from: 8 bytes at offset 12"):
        tmr_worker.copy_from(np.zeros(2, np.float32), buf, offset=12)
    with pytest.raises(taskring.InvalidArgumentError, match="offset=-1 is negative"):
        tmr_worker.copy_to(buf, np.zeros(1, np.float32), offset=-1)
    with pytest.raises(taskring.InvalidArgumentError, match="not C-contiguous"):
        tmr_worker.copy_to(buf, np.zeros(8, np.float32)[::2])
    ro = np.zeros(2, np.float32)
    ro.setflags(write=False)
    with pytest.raises(taskring.InvalidArgumentError, match="read-only"):
        tmr_worker.copy_from(ro, buf)
    tmr_worker.free(buf)


def test_device_view_outside_the_buffer(tmr_worker, vec):
    buf = tmr_worker.malloc(16)
    with pytest.raises(taskring.TaskringError, match="argument 0.*view extent exceeds the buffer"):
        tmr_worker.run(vec, [taskring.Tensor(buf, taskring.INPUT, shape=(8,))] * 3)
    with pytest.raises(taskring.InvalidArgumentError, match="argument 0: a device buffer needs shape="):
        tmr_worker.run(vec, [taskring.Tensor(buf, taskring.INPUT)] * 3)
    tmr_worker.free(buf)


def test_bad_malloc(tmr_worker):
    with pytest.raises(taskring.InvalidArgumentError, match="nbytes=0 must be positive"):
        tmr_worker.malloc(0)
    with pytest.raises(taskring.TaskringError, match="alignment"):
        tmr_worker.malloc(64, alignment=3)
    with pytest.raises(taskring.InvalidArgumentError, match="expected a DeviceBuffer, got int"):
        tmr_worker.free(1234)


def test_buffers_belong_to_their_worker(tmr_worker):
    with taskring.ChipWorker() as other:
        buf = other.malloc(16)
        with pytest.raises(taskring.InvalidArgumentError, match="belongs to another worker"):
            tmr_worker.copy_to(buf, np.zeros(4, np.float32))
        other.free(buf)


def test_a_buffer_outliving_its_worker():
    w = taskring.ChipWorker()
    buf = w.malloc(16)
    w.close()
    assert buf.freed
    with pytest.raises(taskring.FailedPreconditionError, match="closed"):
        w.copy_to(buf, np.zeros(4, np.float32))
    w2 = taskring.ChipWorker()
    with pytest.raises(taskring.FailedPreconditionError, match="the buffer's worker is closed"):
        w2.copy_to(buf, np.zeros(4, np.float32))
    w2.close()

"""L2 from Python: one chip (device + L2 runtime) behind :class:`ChipWorker`.

    import numpy as np, taskring
    with taskring.ChipWorker(runtime="tmr") as w:
        vec = taskring.Callable.workload("vector")
        a = np.full(1024, 2, np.float32); b = np.full(1024, 3, np.float32); f = np.zeros(1024, np.float32)
        report = w.run(vec, [(a, taskring.INPUT), (b, taskring.INPUT), (f, taskring.OUTPUT_EXISTING)])
        assert (f == 47).all()

Arguments of ``run`` (tensors first, then scalars, as the C++ API):

* ``(array, tag)``: a C-contiguous numpy array staged by the runtime. INPUT
  and INOUT are copied to the device before the run; OUTPUT_EXISTING, INOUT
  and OUTPUT (which, for an array, means "written by the run") are copied
  back into the array when it ends. NO_DEP is passed through.
* ``Tensor(data, tag, dtype=, shape=, strides=, offset=)``: a view over an
  array (e.g. bfloat16 over a uint16 array, a window, a strided view) or over
  a :class:`DeviceBuffer` from :meth:`ChipWorker.malloc` (not staged).
* a number: ``int`` (int64, sign-extended), ``float`` (float32, as the C++
  ``add_scalar(1.0f)``), ``bool`` (0/1), or a numpy scalar, which keeps its
  width (``np.float64(x)`` passes a double).
"""

from __future__ import annotations

import dataclasses
import enum
import os
import warnings
from typing import Mapping, Optional, Sequence, Union

import numpy as np

from . import _taskring
from .dtypes import DataType, parse_data_type
from .errors import FailedPreconditionError, InvalidArgumentError, UnimplementedError


class TensorArgType(enum.IntEnum):
    """How a task uses a tensor argument (upstream wire values)."""

    INPUT = 0
    OUTPUT = 1
    INOUT = 2
    OUTPUT_EXISTING = 3
    NO_DEP = 4


INPUT = TensorArgType.INPUT
OUTPUT = TensorArgType.OUTPUT
INOUT = TensorArgType.INOUT
OUTPUT_EXISTING = TensorArgType.OUTPUT_EXISTING
NO_DEP = TensorArgType.NO_DEP

#: Device memory from :meth:`ChipWorker.malloc` (``addr``, ``nbytes``, ``tag``, ``freed``).
DeviceBuffer = _taskring._DeviceBuffer
DeviceBuffer.__repr__ = lambda b: (f"DeviceBuffer(addr=0x{b.addr:x}, nbytes={b.nbytes}"
                                   f"{', tag=' + repr(b.tag) if b.tag else ''}{', freed' if b.freed else ''})")


def _dims(name: str, v) -> Optional[list]:
    if v is None:
        return None
    try:
        dims = [int(x) for x in v]
    except TypeError:
        raise InvalidArgumentError(f"Tensor {name}= must be a sequence of integers, got {type(v).__name__}") from None
    for i, x in enumerate(dims):
        if x < 0 or x >= 1 << 32:
            raise InvalidArgumentError(f"Tensor {name}[{i}] = {x} outside 0 .. 2^32-1")
    return dims


class TensorTransfer(enum.IntEnum):
    """Upstream's transfer request of a host tensor argument (``transfer=``): ``H2D`` copies it to the
    device before the run, ``NONE`` lets the device use the host memory in place. taskring stages an
    array argument by its tag (INPUT/INOUT in, OUTPUT_EXISTING/INOUT/OUTPUT back), so ``H2D`` on an
    INPUT array is that staging and is accepted; every other request is refused (``Tensor``)."""

    NONE = 0
    H2D = 1


def _check_transfer(data, tag, transfer) -> None:
    t = TensorTransfer(int(transfer))
    if t == TensorTransfer.H2D and isinstance(data, np.ndarray) and int(tag) == int(TensorArgType.INPUT):
        return
    raise UnimplementedError(
        f"Tensor transfer={t.name} for a {type(data).__name__} tagged {TensorArgType(int(tag)).name}: sim stages numpy "
        "arrays by their tag and cannot let a chip use host memory in place; only transfer=H2D on an INPUT "
        "array (the staging taskring does anyway) is accepted")


def Tensor(data, tag, *, dtype=None, shape=None, strides=None, offset: int = 0, transfer=None):
    """A tensor argument with an explicit view.

    ``data`` is a C-contiguous numpy array (whose bytes are the buffer), a
    :class:`DeviceBuffer`, or a node's chip buffer (:class:`~taskring.ChildBuffer`,
    in the tasks of its chip). ``dtype`` reinterprets the elements (same item
    size; for a device buffer it is the element type, default FLOAT32);
    ``shape`` (required for a device buffer), ``strides`` (in elements,
    default row-major) and ``offset`` (elements from the buffer start)
    describe the view. A view that leaves the buffer is an OutOfRangeError at
    ``run``. ``transfer`` is upstream's :class:`TensorTransfer` request (default: none given).
    """
    if not isinstance(data, (np.ndarray, DeviceBuffer, _taskring._ChildBuffer)):
        raise InvalidArgumentError("Tensor data must be a numpy array, a DeviceBuffer or a ChildBuffer, got "
                                   f"{type(data).__name__}")
    t = None if dtype is None else int(parse_data_type(dtype))
    if int(offset) < 0:
        raise InvalidArgumentError(f"Tensor offset={offset} is negative")
    if transfer is not None:
        _check_transfer(data, tag, transfer)
    return _taskring._Tensor(data, int(TensorArgType(int(tag))), t, _dims("shape", shape), _dims("strides", strides),
                             int(offset))


class Callable:
    """An orchestration plus its kernels, runnable on any :class:`ChipWorker`.

    Kernels are given as ``{func_id: spec}`` where spec is a built-in kernel
    name (``"add"``, ``"add_scalar"``, ``"mul"``, ... see
    :func:`builtin_kernels`) or the path of a shared library exporting
    ``kernel_entry``. Built-in kernels are also always available under their
    own ids (``builtin_kernels()[name]``).
    """

    __slots__ = ("_c",)

    def __init__(self, impl):
        self._c = impl

    @staticmethod
    def _kernels(kernels: Optional[Mapping]) -> dict:
        out = {}
        for k, v in (kernels or {}).items():
            if isinstance(k, bool) or not isinstance(k, int):
                raise InvalidArgumentError(f"kernel func id {k!r} is not an integer")
            if not isinstance(v, (str, os.PathLike)):
                raise InvalidArgumentError(f"kernel {k}: expected a built-in name or a library path, got {type(v).__name__}")
            spec = os.fspath(v)
            out[k] = os.path.abspath(spec) if isinstance(v, os.PathLike) and "/" not in spec else spec
        return out

    @classmethod
    def from_library(cls, path: Union[str, os.PathLike], kernels: Optional[Mapping] = None, *,
                     name: Optional[str] = None, entry_symbol: str = "aicpu_orchestration_entry",
                     config_symbol: str = "aicpu_orchestration_config") -> "Callable":
        """An orchestration shared library (upstream style: exports ``aicpu_orchestration_entry``).

        The library is loaded when the callable is first registered on a worker.
        """
        return cls(_taskring._Callable.from_library(os.fspath(path), cls._kernels(kernels), name or "",
                                                    entry_symbol, config_symbol))

    @classmethod
    def workload(cls, name: str, kernels: Optional[Mapping] = None) -> "Callable":
        """The orchestration of a built-in workload (:func:`workloads`), e.g. ``"vector"``.

        ``vector`` takes ``[a INPUT, b INPUT, f OUTPUT_EXISTING]``, float32 of one
        shape, and computes f = (a+b+1)*(a+b+2) + (a+b); docs/workloads.md lists
        the others' arguments.
        """
        return cls(_taskring._Callable.from_workload(name, cls._kernels(kernels)))

    @classmethod
    def comm(cls) -> "Callable":
        """The built-in collective kernels (``comm_call``), for ``orch.allreduce`` and the other
        collectives of a :class:`~taskring.NodeWorker` (``taskring.comm``); register it before init."""
        return cls(_taskring._Callable.comm())

    @property
    def name(self) -> str:
        return self._c.name

    @property
    def source(self) -> str:
        """``"library:<path>"``, ``"workload:<name>"`` or ``"builtin:comm_call"``."""
        return self._c.source

    @property
    def kernels(self) -> dict:
        """``{func_id: built-in name or library path}`` bound by this callable."""
        return dict(self._c.kernels)

    def __repr__(self) -> str:
        return f"Callable({self.name!r}, {self.source!r})"


@dataclasses.dataclass(slots=True)
class RunStats:
    """Counters and windows of one L2 run (C++ ``RunStats``); times are CLOCK_MONOTONIC ns."""

    tasks_submitted: int
    tasks_completed: int
    kernel_tasks: int
    dummy_tasks: int
    alloc_tasks: int
    kernel_calls: int
    orch_blocked: int
    heap_bytes: int
    orch_start_ns: int
    orch_end_ns: int
    sched_start_ns: int
    sched_end_ns: int


@dataclasses.dataclass(slots=True)
class GraphRunStats:
    """host_build_graph (``hbg``) counters of one run; all zero on ``tmr``."""

    host_tasks: int
    graph_tasks: int
    graph_nodes_run: int
    definitions_used: int
    definitions_recorded: int
    nodes_recorded: int
    fallbacks: int
    host_orch_ns: int
    record_ns: int
    graph_upload_ns: int
    graph_upload_calls: int
    graph_upload_bytes: int
    arena_h2d_ns: int
    arena_h2d_calls: int
    arena_h2d_bytes: int
    arena_submissions: int
    arena_fallback_submissions: int
    image_h2d_ns: int
    image_h2d_calls: int
    image_h2d_bytes: int


@dataclasses.dataclass(slots=True)
class RunReport:
    """What :meth:`ChipWorker.run` returns (C++ ``RunReport``)."""

    stats: RunStats
    h2d_calls: int
    h2d_bytes: int
    d2h_calls: int
    d2h_bytes: int
    bind_ns: int       # host-side stages of the run
    run_ns: int
    validate_ns: int
    invocation_id: int  # the `inv=` of this run's [STRACE] spans
    skipped_device_run: bool
    graph: GraphRunStats

    @classmethod
    def _from_raw(cls, raw) -> "RunReport":
        return cls(RunStats(*raw[0]), raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9],
                   GraphRunStats(*raw[10]))

    @property
    def orch_us(self) -> float:
        """Orchestrator window in µs."""
        return (self.stats.orch_end_ns - self.stats.orch_start_ns) / 1e3

    @property
    def sched_us(self) -> float:
        """First dispatch .. last completion in µs."""
        return (self.stats.sched_end_ns - self.stats.sched_start_ns) / 1e3

    def to_dict(self) -> dict:
        """Nested plain dict (JSON-ready)."""
        return dataclasses.asdict(self)


class ChipWorker:
    """One chip: a device (``"sim"``) and an L2 runtime (``"tmr"`` or ``"hbg"``).

    One run at a time per worker; a second thread calling into a busy worker
    gets FailedPreconditionError. The GIL is released while a run executes.
    ``close()`` (or leaving a ``with`` block) releases the chip; later calls
    raise FailedPreconditionError.
    """

    __slots__ = ("_w",)

    def __init__(self, runtime: str = "tmr", device: str = "sim", *, sanitize: Optional[str] = None):
        """``sanitize``: the orchestration sanitizer for this worker (``"tags"``, ``"schedule"``,
        ``"schedule:N"``, ``"tags,schedule"``; docs/sanitizer.md); None takes TASKRING_SANITIZE."""
        self._w = _taskring._ChipWorker(runtime, device, sanitize or "")
        _warn_if_generic_blas()

    def __enter__(self) -> "ChipWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def register(self, callable: Callable) -> int:
        """Registers (loads, validates) a callable now and returns its id; ``run`` does it on first use."""
        return self._w.register(_impl(callable))

    def run(self, callable: Callable, args: Sequence = (), *, timeout_ms: int = 0) -> RunReport:
        """Runs ``callable`` once: stage, launch, wait, copy outputs back. See the module doc for ``args``.

        ``timeout_ms`` 0 takes TASKRING_RUN_TIMEOUT_MS (default 60 s).
        """
        if not isinstance(args, (list, tuple)):
            raise InvalidArgumentError(f"run: args must be a list or tuple, got {type(args).__name__}")
        return RunReport._from_raw(self._w.run(_impl(callable), args, timeout_ms))

    def malloc(self, nbytes: int, *, alignment: int = 64, tag: str = "") -> DeviceBuffer:
        """Allocates device memory; ``free`` it (leaks are reported when the worker closes)."""
        if nbytes <= 0:
            raise InvalidArgumentError(f"malloc: nbytes={nbytes} must be positive")
        return self._w.malloc(int(nbytes), int(alignment), tag)

    def copy_to(self, dst: DeviceBuffer, src: np.ndarray, offset: int = 0) -> None:
        """Copies the bytes of C-contiguous ``src`` into ``dst`` at byte ``offset``."""
        self._w.copy_to(_buffer(dst, "copy_to"), _array(src, "copy_to"), _offset(offset, "copy_to"))

    def copy_from(self, dst: np.ndarray, src: DeviceBuffer, offset: int = 0) -> None:
        """Fills C-contiguous writable ``dst`` from ``src`` at byte ``offset``."""
        self._w.copy_from(_array(dst, "copy_from"), _buffer(src, "copy_from"), _offset(offset, "copy_from"))

    def free(self, buffer: DeviceBuffer) -> None:
        """Frees a buffer; using it afterwards raises FailedPreconditionError."""
        self._w.free(_buffer(buffer, "free"))

    def topology(self) -> dict:
        """``{"clusters", "executor_threads", "aic", "aiv", "cores"}``."""
        return self._w.topology()

    def counters(self) -> dict:
        """The device's cumulative transfer counters."""
        return self._w.counters()

    def close(self) -> None:
        """Releases the chip (idempotent)."""
        self._w.close()

    @property
    def closed(self) -> bool:
        return self._w.closed

    @property
    def runtime(self) -> str:
        return self._w.runtime

    @property
    def device(self) -> str:
        return self._w.device

    def __repr__(self) -> str:
        if self._w.closed:
            return "ChipWorker(closed)"
        return f"ChipWorker(runtime={self.runtime!r}, device={self.device!r})"


def _warn_if_generic_blas():
    # OpenBLAS picked its kernels while it loaded, before any taskring code
    # ran, and a CPU newer than the library gets generic ones (~2x slower
    # matmul tiles). The `taskring` tool re-executes itself with a better set;
    # a Python process cannot, so the first chip says what to set. Python
    # shows a warning from one place once per process.
    advice = _taskring._blas_info()["advice"]
    if advice:
        warnings.warn(f"taskring: {advice}. Python must start with it set (docs/python.md)", RuntimeWarning,
                      stacklevel=3)


def _impl(c):
    if isinstance(c, Callable):
        return c._c
    raise InvalidArgumentError(f"expected a taskring.Callable, got {type(c).__name__}")


def _buffer(b, op):
    if not isinstance(b, DeviceBuffer):
        raise InvalidArgumentError(f"{op}: expected a DeviceBuffer, got {type(b).__name__}")
    return b


def _array(a, op):
    if not isinstance(a, np.ndarray):
        raise InvalidArgumentError(f"{op}: expected a numpy array, got {type(a).__name__}")
    return a


def _offset(o, op):
    o = int(o)
    if o < 0:
        raise InvalidArgumentError(f"{op}: offset={o} is negative")
    return o


def builtin_kernels() -> dict:
    """``{name: func_id}`` of the built-in kernels (docs/kernels.md gives their arguments)."""
    return dict(_taskring._builtin_kernels())


def workloads() -> list:
    """Names of the built-in workloads :meth:`Callable.workload` accepts."""
    return list(_taskring._workloads())

"""taskring from Python: run task graphs on a (simulated) tile accelerator and analyse their traces.

* :class:`ChipWorker`, :class:`Callable`, :func:`Tensor`, :class:`DeviceBuffer`
  (L2, one chip; ``taskring.chip``)
* :class:`NodeWorker` (L3, N chips and SUB workers in forked processes; ``taskring.node``), with comm
  domains and collectives (:class:`CommDomainHandle`, ``orch.allreduce``...; ``taskring.comm``)
* :mod:`taskring.trace`: ``analyse(paths, expect_ranks=, expect_rounds=, warmup=)``
  and ``python3 -m taskring.trace LOG...``
* :mod:`taskring.errors`: every failure is a :class:`TaskringError`
* :mod:`taskring.dtypes`: numpy <-> taskring element types

docs/python.md is the guide. Logging knobs (TASKRING_LOG_LEVEL,
TASKRING_STRACE_DIR) are read once, at import.
"""

from . import _taskring
from .chip import (INOUT, INPUT, NO_DEP, OUTPUT, OUTPUT_EXISTING, Callable, ChipWorker, DeviceBuffer,
                   GraphRunStats, RunReport, RunStats, Tensor, TensorArgType, TensorTransfer, builtin_kernels,
                   workloads)
from .node import ChildBuffer, HeapTensor, NodeOrchestrator, NodeRunHandle, NodeWorker
from .comm import ChipDomainContext, CommBufferSpec, CommDomainHandle, collective_scratch_bytes
from .dtypes import DataType, bf16_from_float32, data_type_of, float32_from_bf16
from .errors import (AbortedError, AlreadyExistsError, DeadlineExceededError, FailedPreconditionError,
                     InternalError, InvalidArgumentError, KeyNotFoundError, NotFoundError, OutOfRangeError,
                     ResourceExhaustedError, TaskringError, UnavailableError, UnimplementedError)

FLOAT32 = DataType.FLOAT32
FLOAT16 = DataType.FLOAT16
BFLOAT16 = DataType.BFLOAT16
INT8 = DataType.INT8
INT16 = DataType.INT16
INT32 = DataType.INT32
INT64 = DataType.INT64
UINT8 = DataType.UINT8
UINT16 = DataType.UINT16
UINT32 = DataType.UINT32
UINT64 = DataType.UINT64
BOOL = DataType.BOOL

__version__ = "0.1.0"

# The C++ front ends read the logging knobs once at start-up; so does import.
_taskring._init_logging()


def blas_info() -> dict:
    """The BLAS library behind the matmul kernels and the CPU kernel set it picked when it loaded.

    Keys: ``config`` (OpenBLAS's version and build options), ``core`` (the kernel set, e.g.
    ``"SkylakeX"`` or the generic ``"Prescott"``), ``better_core`` and ``advice`` (both empty unless
    ``core`` is a generic fallback on a CPU whose vector units a better set uses: then the
    ``OPENBLAS_CORETYPE`` value to start Python with, and a sentence saying so). The first
    :class:`ChipWorker` of a process warns (RuntimeWarning) when ``advice`` is not empty.
    """
    return dict(_taskring._blas_info())


__all__ = [
    "ChipWorker", "Callable", "Tensor", "TensorTransfer", "DeviceBuffer", "RunReport", "RunStats", "GraphRunStats", "NodeWorker",
    "NodeRunHandle", "NodeOrchestrator", "HeapTensor", "ChildBuffer", "CommBufferSpec", "ChipDomainContext", "CommDomainHandle",
    "collective_scratch_bytes",
    "TensorArgType", "INPUT", "OUTPUT", "INOUT", "OUTPUT_EXISTING", "NO_DEP", "DataType", "data_type_of",
    "bf16_from_float32", "float32_from_bf16", "builtin_kernels", "workloads", "FLOAT32", "FLOAT16", "BFLOAT16",
    "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "BOOL", "TaskringError",
    "InvalidArgumentError", "OutOfRangeError", "NotFoundError", "KeyNotFoundError", "AlreadyExistsError",
    "FailedPreconditionError", "ResourceExhaustedError", "DeadlineExceededError", "AbortedError", "InternalError", "UnimplementedError",
    "UnavailableError", "blas_info",
]

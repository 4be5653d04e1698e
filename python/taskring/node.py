"""L3 from Python: one host, N sim chips and M SUB workers, each a process forked from this one.

    import numpy as np, taskring

    def scale(tensors, scalars):                 # runs in a SUB child
        tensors[0][...] *= scalars[0]

    with taskring.NodeWorker(chips=2, sub_workers=1) as node:
        vec = node.register(taskring.Callable.workload("vector"))
        sub = node.register(scale)
        node.init()                              # forks every child
        a, b = node.shared_array(1024), node.shared_array(1024)
        a[:], b[:] = 2, 3
        f = [node.shared_array(1024) for _ in range(2)]
        def orch(o):
            for chip in range(2):
                o.submit_next_level(vec, [(a, taskring.INPUT), (b, taskring.INPUT),
                                          (f[chip], taskring.OUTPUT_EXISTING)], worker=chip)
            o.submit_sub(sub, [(f[0], taskring.INOUT), 2])   # after chip 0 wrote f[0]
        node.run(orch)
        assert (f[0] == 94).all() and (f[1] == 47).all()

The children see only the node's shared heap, so every tensor argument is an array from
:meth:`NodeWorker.shared_array`; an array from anywhere else is refused at submit, naming the
argument. Dependencies come from the tags, as at L2 and in C++ (docs/node.md). A SUB function gets
``(tensors, scalars)``: numpy views of its tensor arguments (in place, in the shared heap; every view
is writable, the tags order the tasks) and its scalars as unsigned 64-bit integers. docs/python.md
has the rules and what is not bound.
"""

from __future__ import annotations

import atexit
import contextlib
import inspect
import types
import weakref
from typing import Callable as _PyCallable, Optional

import numpy as np

from . import _taskring
from .chip import Callable, _warn_if_generic_blas
from .dtypes import DataType, data_type_of, parse_data_type
from .errors import InvalidArgumentError

_DEFAULT_TIMEOUT_MS = 600_000


class NodeRunHandle:
    """The completion of one node run: ``wait()`` raises the run's first error; ``done``; ``counts()``."""

    __slots__ = ("_h",)

    def __init__(self, h):
        self._h = h

    def wait(self, timeout_ms: int = _DEFAULT_TIMEOUT_MS) -> dict:
        """Blocks (GIL released) until the run ends; returns :meth:`counts`. Idempotent."""
        self._h.wait(int(timeout_ms))
        return self._h.counts()

    @property
    def done(self) -> bool:
        return self._h.done

    def counts(self) -> dict:
        """Tasks of the run: ``submitted``, ``completed``, ``failed``, ``skipped`` (a group counts once)."""
        return self._h.counts()  # a new dict per call


class NodeWorker:
    """The L3 node: ``chips`` sim chips and ``sub_workers`` SUB workers, each a forked child process.

    ``shared_bytes``: the heap of :meth:`shared_array`; ``heap_ring_bytes``: the ring of
    ``Orchestrator.alloc``; ``comm_timeout_ms``: the deadline of a comm domain's allocation barrier
    and of every kernel wait in a domain; ``domain_cache``: comm domains kept mapped for reuse, 0..64
    (docs/comm.md). The C++ ``NodeConfig`` documents each.

    Life cycle: :meth:`register` every chip callable and SUB function, then :meth:`init` (forks the
    children and waits until each is ready), then :meth:`shared_array` / :meth:`run` as often as
    needed, then :meth:`close` (or leave a ``with`` block). ``init`` needs a process that runs no
    other thread (a fork copies only the calling thread): create the node before any
    :class:`~taskring.ChipWorker` of the same process, or close those first; it raises
    FailedPreconditionError otherwise. Children die with this process.
    """

    __slots__ = ("_n", "__weakref__")

    def __init__(self, chips: int = 1, sub_workers: int = 0, runtime: str = "tmr", *,
                 shared_bytes: int = 64 << 20, heap_ring_bytes: int = 64 << 20, comm_timeout_ms: int = 30000,
                 domain_cache: int = 4):
        for name, v in (("chips", chips), ("sub_workers", sub_workers), ("shared_bytes", shared_bytes),
                        ("heap_ring_bytes", heap_ring_bytes), ("comm_timeout_ms", comm_timeout_ms),
                        ("domain_cache", domain_cache)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise InvalidArgumentError(f"NodeWorker: {name} must be an integer >= 0, got {v!r}")
        self._n = _taskring._NodeWorker(chips, sub_workers, runtime, shared_bytes, heap_ring_bytes, comm_timeout_ms,
                                        domain_cache)
        _open_nodes.add(self)

    def __enter__(self) -> "NodeWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def register(self, target, name: Optional[str] = None) -> int:
        """Registers a chip callable (:class:`~taskring.Callable`) or a SUB function; returns its handle.

        A SUB function is any Python callable taking ``(tensors, scalars)``; ``name`` (default: its
        ``__name__``) names it in errors. Before :meth:`init` only. Registering the same Callable
        twice returns the same handle.
        """
        if isinstance(target, Callable):
            return self._n.register_chip(target._c)
        if callable(target):
            label = name if name is not None else getattr(target, "__name__", type(target).__name__)
            return self._n.register_sub(str(label), target)
        raise InvalidArgumentError(f"register: expected a taskring.Callable or a Python callable, "
                                   f"got {type(target).__name__}")

    def init(self) -> None:
        """Forks every chip and SUB child and waits until each reports ready."""
        self._n.init()
        if self._n.chips > 0:
            _warn_if_generic_blas()

    def shared_array(self, shape, dtype=np.float32) -> np.ndarray:
        """A zeroed array in the node's shared heap (every child sees it at the same address).

        ``shape`` is an int or a sequence of ints > 0; ``dtype`` a numpy dtype or a taskring
        :class:`~taskring.DataType` (BFLOAT16 is held as uint16). The memory lives as long as the
        worker or the last array over it, whichever is later; the heap is ``shared_bytes`` in all and
        is not reused.
        """
        return self._n.shared_array(_dims("shared_array", shape), int(_data_type(dtype)))

    def submit(self, orch_fn: _PyCallable, args=None, cfg=None) -> NodeRunHandle:
        """Runs the orch function on this thread and returns the run's handle.

        Upstream's form ``orch_fn(orchestrator, args, cfg)`` gets ``args`` and ``cfg`` as given
        (taskring reads neither); a function of one parameter is called as ``orch_fn(orchestrator)``
        and then takes neither (:func:`_orch_call`). The tasks start as soon as they are ready, while
        ``orch_fn`` still submits. If ``orch_fn`` raises, its unstarted tasks are cancelled, the
        started ones finish, and the exception propagates; the worker stays usable. A run waits for
        the previous one to end. Called from inside one of this node's orch functions, or in a forked
        copy of the process that called :meth:`init`, it raises ``FailedPreconditionError`` at once.
        A ``KeyboardInterrupt`` (Ctrl-C) while the run is awaited closes the node first (every child
        killed) and then propagates.
        """
        return NodeRunHandle(self._n.submit(_orch_call("submit", orch_fn, args, cfg)))

    def run(self, orch_fn: _PyCallable, args=None, cfg=None, timeout_ms: int = _DEFAULT_TIMEOUT_MS) -> dict:
        """``submit(orch_fn, args, cfg).wait(timeout_ms)``: the run's task counts, or its first error raised."""
        # The run stays with this thread, which waits at once (no hand-off to the engine's thread);
        # NodeRunHandle.wait without the wrapper object.
        h = self._n.submit(_orch_call("submit", orch_fn, args, cfg), True)
        h.wait(int(timeout_ms))
        return h.counts()

    # Upstream's Worker-level chip memory, outside a run: each is one run of a one-call orch
    # function, so it waits for the run before it and has the Orchestrator method's rules.
    def alloc_child_tensor(self, worker_id: int, shapes, dtype) -> "ChildBuffer":
        """``Orchestrator.alloc_child_tensor`` in a run of its own; the buffer outlives the run."""
        out = []
        self.run(lambda o: out.append(o.alloc_child_tensor(worker_id, shapes, dtype)))
        return out[0]

    def free(self, handle: "ChildBuffer") -> None:
        """``Orchestrator.free`` in a run of its own."""
        self.run(lambda o: o.free(handle))

    def copy_to(self, dst: "ChildBuffer", src: np.ndarray, *, dst_offset: int = 0, src_offset: int = 0,
                nbytes: Optional[int] = None) -> None:
        """``Orchestrator.copy_to`` (host -> chip) in a run of its own."""
        self.run(lambda o: o.copy_to(dst, src, dst_offset=dst_offset, src_offset=src_offset, nbytes=nbytes))

    def copy_from(self, dst: np.ndarray, src: "ChildBuffer", *, dst_offset: int = 0, src_offset: int = 0,
                  nbytes: Optional[int] = None) -> None:
        """``Orchestrator.copy_from`` (chip -> host) in a run of its own."""
        self.run(lambda o: o.copy_from(dst, src, dst_offset=dst_offset, src_offset=src_offset, nbytes=nbytes))

    def close(self) -> None:
        """Stops and reaps every child; idempotent. Arrays from :meth:`shared_array` stay valid."""
        self._n.close()

    @property
    def closed(self) -> bool:
        return self._n.closed

    @property
    def chips(self) -> int:
        return self._n.chips

    @property
    def sub_workers(self) -> int:
        return self._n.sub_workers

    def pids(self) -> list:
        """The children's process ids, chips first then SUB workers (empty before init / after close)."""
        return list(self._n.pids())


def _positional_params(fn) -> Optional[int]:
    """How many positional arguments ``fn`` takes (3 for ``*args``), or None when Python cannot tell."""
    if type(fn) is types.FunctionType and not fn.__dict__:
        # A plain function or lambda (no __wrapped__ or __signature__ to follow, which would live in its
        # __dict__): its code object says it. inspect.signature costs ~5 us, once per run (the empty
        # run went from 2 to 8 us with it, docs/benchmarks.md).
        code = fn.__code__
        return 3 if code.co_flags & inspect.CO_VARARGS else code.co_argcount
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    n = 0
    for p in params:
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            return 3
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            n += 1
    return n


def _orch_call(op: str, orch_fn, args, cfg):
    """The one-argument callable the node runs for ``orch_fn``: upstream's ``(orch, args, cfg)`` form
    when ``orch_fn`` takes three positional arguments (or Python cannot tell and args/cfg are given),
    else ``orch_fn(orch)``, which refuses args/cfg rather than drop them."""
    if not callable(orch_fn):
        raise InvalidArgumentError(f"{op}: orch_fn must be callable, got {type(orch_fn).__name__}")
    n = _positional_params(orch_fn)
    if n is None:
        n = 1 if args is None and cfg is None else 3
    if n >= 3:
        return lambda o: orch_fn(o, args, cfg)
    if n == 1:
        if args is not None or cfg is not None:
            raise InvalidArgumentError(f"{op}: orch_fn takes one argument (the orchestrator); args and cfg are "
                                       "passed only to an orch_fn(orch, args, cfg)")
        return orch_fn
    raise InvalidArgumentError(f"{op}: orch_fn must take (orch) or (orch, args, cfg), it takes {n} positional "
                               "argument(s)")


def _dims(op: str, shape) -> list:
    dims = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    if not dims or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and 0 < d < 2**32
                           for d in dims):
        raise InvalidArgumentError(f"{op}: shape must be ints in [1, 2^32), got {shape!r}")
    return [int(d) for d in dims]


def _data_type(dtype) -> DataType:
    return dtype if isinstance(dtype, DataType) else (
        parse_data_type(dtype) if isinstance(dtype, str) else data_type_of(dtype))


# What Orchestrator.alloc returns: ``shape`` (tuple), ``dtype`` (DataType value), ``nbytes``. No data
# access: its memory belongs to the run's tasks.
HeapTensor = _taskring._HeapTensor


def _orchestrator_alloc(self, shape, dtype) -> HeapTensor:
    """A tensor in the node's heap ring for the tasks of this run, upstream's ``alloc(shape, dtype)``.

    Name it in task arguments as ``(t, taskring.OUTPUT)`` on its producer and ``(t, taskring.INPUT)``
    on its consumers: the tags order them, as for shared arrays. Its memory goes back to the ring
    once the run's scope holding it ended and every task naming it finished, so it is an argument of
    this run's tasks only (another run's submit refuses it), and Python cannot read it: copy a result
    out in a task (a SUB function gets it as a numpy view), into a ``shared_array``. When the ring
    (``heap_ring_bytes``) is full, waits for earlier tasks to retire, then raises
    DeadlineExceededError naming the knob.
    """
    return self._alloc(_dims("alloc", shape), int(_data_type(dtype)))


# What Orchestrator.alloc_child_tensor returns: chip memory (``worker_id``, ``shape``, ``dtype``,
# ``nbytes``, ``freed``) that lives across runs until ``free`` or the node's close.
ChildBuffer = _taskring._ChildBuffer


def _count(op: str, name: str, v, allow_none: bool = False):
    if v is None and allow_none:
        return -1
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise InvalidArgumentError(f"{op}: {name} must be an integer >= 0, got {v!r}")
    return int(v)


def _orchestrator_alloc_child_tensor(self, worker_id: int, shapes, dtype) -> ChildBuffer:
    """Chip memory on chip ``worker_id`` for a tensor of ``shapes`` x ``dtype``, upstream's spelling.

    Name it in the arguments of that chip's tasks as ``(buf, tag)`` (its shape and dtype) or
    ``taskring.Tensor(buf, tag, shape=..., dtype=..., offset=...)`` (a view); a task on another chip
    or a SUB task refuses it. It lives across runs, until :meth:`free` or the node's close, so
    weights are uploaded once. Fill and read it with ``copy_to`` / ``copy_from``.
    """
    return self._alloc_child_tensor(_count("alloc_child_tensor", "worker_id", worker_id),
                                    _dims("alloc_child_tensor", shapes), int(_data_type(dtype)))


@contextlib.contextmanager
def _orchestrator_scope(self):
    """Upstream's ``with orch.scope():``: ``scope_begin()`` on entry, ``scope_end()`` on exit (also on an
    exception)."""
    self.scope_begin()
    try:
        yield self
    finally:
        self.scope_end()


def _orchestrator_free(self, handle: ChildBuffer) -> None:
    """Frees a chip buffer after the tasks this run submitted before have finished (docs/node.md)."""
    if not isinstance(handle, ChildBuffer):
        raise InvalidArgumentError(f"free: expected a ChildBuffer from alloc_child_tensor, got {type(handle).__name__}")
    self._free(handle)


def _orchestrator_copy_to(self, dst: ChildBuffer, src: np.ndarray, *, dst_offset: int = 0, src_offset: int = 0,
                          nbytes: Optional[int] = None) -> None:
    """Host -> chip: ``nbytes`` (default: the rest of ``src``) from byte ``src_offset`` of the shared
    array ``src`` to byte ``dst_offset`` of chip buffer ``dst``. Waits for the tasks this run submitted
    before (so none still reads what it overwrites), then for the copy."""
    if not isinstance(dst, ChildBuffer) or not isinstance(src, np.ndarray):
        raise InvalidArgumentError("copy_to: expected (dst: ChildBuffer, src: a shared_array), got "
                                   f"({type(dst).__name__}, {type(src).__name__})")
    self._copy(True, dst, src, _count("copy_to", "dst_offset", dst_offset), _count("copy_to", "src_offset", src_offset),
               _count("copy_to", "nbytes", nbytes, allow_none=True))


def _orchestrator_copy_from(self, dst: np.ndarray, src: ChildBuffer, *, dst_offset: int = 0, src_offset: int = 0,
                            nbytes: Optional[int] = None) -> None:
    """Chip -> host: ``nbytes`` (default: the rest of ``src``) from byte ``src_offset`` of chip buffer
    ``src`` to byte ``dst_offset`` of the shared array ``dst``. Waits for the tasks this run submitted
    before, so it reads what they wrote."""
    if not isinstance(src, ChildBuffer) or not isinstance(dst, np.ndarray):
        raise InvalidArgumentError("copy_from: expected (dst: a shared_array, src: ChildBuffer), got "
                                   f"({type(dst).__name__}, {type(src).__name__})")
    self._copy(False, src, dst, _count("copy_from", "src_offset", src_offset),
               _count("copy_from", "dst_offset", dst_offset), _count("copy_from", "nbytes", nbytes, allow_none=True))


for _name, _f in (("alloc", _orchestrator_alloc), ("alloc_child_tensor", _orchestrator_alloc_child_tensor),
                  ("free", _orchestrator_free), ("copy_to", _orchestrator_copy_to),
                  ("copy_from", _orchestrator_copy_from), ("scope", _orchestrator_scope)):
    setattr(_taskring._NodeOrchestrator, _name, _f)
del _name, _f


# Workers not closed by the program are closed when the interpreter exits, so
# their children are stopped and reaped instead of killed by the parent's
# death (they die either way: PR_SET_PDEATHSIG). Weak: a worker that is
# garbage-collected closes itself.
_open_nodes: "weakref.WeakSet[NodeWorker]" = weakref.WeakSet()


@atexit.register
def _close_open_nodes() -> None:
    for n in list(_open_nodes):
        try:
            n.close()
        except Exception:  # exiting anyway: a close that fails leaves the rest to PDEATHSIG
            pass


# The orchestrator an orch function receives (taskring._taskring._NodeOrchestrator), with upstream's
# signatures: submit_next_level(handle, args, config=None, *, worker), submit_next_level_group(handle,
# args_list, config=None, *, workers), submit_sub(handle, args=None), submit_sub_group(handle,
# args_list), scope_begin(), scope_end(), chips, sub_workers, alloc(shape, dtype), alloc_child_tensor,
# free, copy_to, copy_from (above), and (taskring.comm) allocate_domain,
# release_domain and the collectives. A CallConfig other than None raises UnimplementedError.
# Arguments take the forms of ChipWorker.run. It refuses every call once its function has returned.
NodeOrchestrator = _taskring._NodeOrchestrator


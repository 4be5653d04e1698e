"""Comm domains and collectives from a Python orch function (L3; docs/comm.md, docs/python.md).

    import numpy as np, taskring
    from taskring import CommBufferSpec

    with taskring.NodeWorker(chips=4) as node:
        comm = node.register(taskring.Callable.comm())       # the built-in collective kernels
        node.init()
        n = 1000
        ins = [node.shared_array(n) for _ in range(4)]
        outs = [node.shared_array(n) for _ in range(4)]
        for r, a in enumerate(ins):
            a[:] = r
        scratch = taskring.collective_scratch_bytes("allreduce", n, np.float32, 4, algo="ring")
        def orch(o):
            with o.allocate_domain(name="tp", workers=[0, 1, 2, 3], window_size=scratch,
                                   buffers=[CommBufferSpec("scratch", "float32", n, scratch)]) as tp:
                o.allreduce(comm, tp, ins, outs, algo="ring", scratch="scratch")
        node.run(orch)
        assert all((out == 6).all() for out in outs)

``allocate_domain``, ``release_domain``, :class:`CommBufferSpec`, :class:`ChipDomainContext` and
:class:`CommDomainHandle` have upstream's spelling (``python/simpler/orchestrator.py`` and
``task_interface.py`` of hw-native-sys/simpler). The collectives (``allreduce``, ``allgather``,
``reduce_scatter``, ``broadcast``, ``all_to_all``) are taskring's: each is one group task, rank i on
``domain.workers[i]``, over the kernels of :meth:`taskring.Callable.comm`. A chip kernel of your own
reaches the domain through ``ctx.device_ctx``, passed as a scalar (``include/taskring/kernels/comm.hpp``).
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

import numpy as np

from . import _taskring
from .dtypes import DataType, parse_data_type
from .errors import FailedPreconditionError, InvalidArgumentError, KeyNotFoundError, UnimplementedError


@dataclasses.dataclass
class CommBufferSpec:
    """A named slice of every rank's window, upstream's fields.

    Buffers are carved in declaration order, each at a 64-byte aligned offset, the same in every
    window; ``nbytes`` is the size taskring reserves (``dtype`` and ``count`` describe it).
    ``load_from_host`` / ``store_to_host`` (upstream's host staging of a buffer) are not supported:
    ``True`` raises UnimplementedError at ``allocate_domain``.
    """

    name: str
    dtype: str
    count: int
    nbytes: int
    load_from_host: bool = False
    store_to_host: bool = False


@dataclasses.dataclass
class ChipDomainContext:
    """One member's view of a domain, as its chip process sees it (upstream's fields).

    ``device_ctx`` is the address of the member's ``CommContext``: pass it to a kernel as a scalar.
    ``local_window_base`` and every ``buffer_ptrs[name]`` are addresses in that chip's process, not in
    this one; ``actual_window_size`` is the window's page-rounded size.
    """

    name: str
    domain_rank: int
    domain_size: int
    device_ctx: int
    local_window_base: int
    actual_window_size: int
    buffer_ptrs: dict


class CommDomainHandle:
    """A comm domain allocated by ``Orchestrator.allocate_domain``, upstream's handle.

    ``handle[chip]`` (or ``handle.contexts[chip]``) is that member's :class:`ChipDomainContext`;
    ``workers`` the member chips in rank order. A context manager: leaving the ``with`` block, or
    ``release()``, marks the handle released (indexing it or submitting a collective on it then
    raises). The memory itself stays until the run's completion fence, so tasks submitted before
    the release still see it; the node frees (or caches for reuse) every domain of a run there,
    released or not, after a run that passed or failed.
    """

    __slots__ = ("name", "workers", "_contexts", "_buffer_names", "_d")

    def __init__(self, d, buffer_names: Sequence[str]):
        self._d = d
        self.name = d.name
        self.workers = tuple(d.chips)
        self._buffer_names = buffer_names
        self._contexts = None

    @property
    def contexts(self) -> dict:
        """Member chip -> :class:`ChipDomainContext`, in rank order."""
        # Built on first use: an orch function that only submits collectives on the domain never reads
        # them, and building them was half of what allocate_domain cost in Python (2 members: ~6 us per
        # run of a reused domain). The C++ domain they come from is immutable, so later is the same.
        if self._contexts is None:
            d = self._d
            offsets = {b: d.buffer_offset(b) for b in self._buffer_names}
            contexts = {}
            for chip in self.workers:
                m = d.member(chip)
                contexts[chip] = ChipDomainContext(
                    name=d.name, domain_rank=m["rank"], domain_size=m["size"], device_ctx=m["device_ctx"],
                    local_window_base=m["window_base"], actual_window_size=m["window_size"],
                    buffer_ptrs={b: m["window_base"] + off for b, off in offsets.items()})
            self._contexts = contexts
        return self._contexts

    def __getitem__(self, chip: int) -> ChipDomainContext:
        if self.released:
            raise FailedPreconditionError(
                f"CommDomainHandle({self.name!r}) was released; tasks submitted before release() still see its "
                "memory until the run ends, but it takes no more indexing or submits")
        try:
            return self.contexts[chip]
        except KeyError:
            # A KeyError as well, as upstream's handle[chip] raises for a non-member.
            raise KeyNotFoundError(f"CommDomainHandle({self.name!r}): chip {chip!r} is not a member "
                                   f"(members: {list(self.workers)})") from None

    @property
    def size(self) -> int:
        """The number of ranks."""
        return len(self.workers)

    @property
    def window_size(self) -> int:
        return self._d.window_size

    @property
    def released(self) -> bool:
        """True once ``release()`` (or the ``with`` exit) ran; the memory goes at the run's fence."""
        return self._d.released

    @property
    def freed(self) -> bool:
        """True once the run's completion fence swept the domain (unmapped, or cached for reuse by a later
        allocation): an orch function never sees it True for a domain of its own run, as upstream's."""
        return self._d.swept

    def release(self) -> None:
        """Marks the handle released. Idempotent; non-blocking."""
        self._d.release()

    def __enter__(self) -> "CommDomainHandle":
        return self

    def __exit__(self, *_exc) -> None:
        self.release()

    def __repr__(self) -> str:
        state = "freed" if self.freed else "released" if self.released else "live"
        return f"CommDomainHandle(name={self.name!r}, workers={self.workers}, {state})"


def _int(name: str, v, minimum: int = 0, index: Optional[int] = None) -> int:
    """``v`` as an int >= ``minimum``; else InvalidArgumentError naming ``name`` (``name.format(index)`` when
    ``index`` is given, so that a call per list item builds no message unless the item is bad)."""
    if type(v) is int and v >= minimum:  # the common case first: one type check (bool is not int here)
        return v
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        label = name if index is None else name.format(index)
        raise InvalidArgumentError(f"{label} must be an integer >= {minimum}, got {v!r}")
    return int(v)


def _buffers(buffers) -> list:
    out = []
    for i, b in enumerate(buffers):
        if not isinstance(b, CommBufferSpec):
            raise InvalidArgumentError(f"allocate_domain: buffers[{i}] is a {type(b).__name__}, not a CommBufferSpec")
        if b.load_from_host or b.store_to_host:
            raise UnimplementedError(f"allocate_domain: buffers[{i}] ({b.name!r}): load_from_host / store_to_host "
                                     "are not supported; fill the buffer from a kernel")
        if not isinstance(b.name, str):
            raise InvalidArgumentError(f"allocate_domain: buffers[{i}].name must be a str, got {b.name!r}")
        out.append((b.name, _int("allocate_domain: buffers[{}].nbytes", b.nbytes, 0, i)))
    return out


def allocate_domain(self, *, name: str, workers: Sequence[int], window_size: int,
                    buffers: Sequence[CommBufferSpec] = ()) -> CommDomainHandle:
    """Allocates a comm domain over the chips ``workers`` (their order gives the ranks); upstream's signature.

    Returns once every member has mapped and zeroed its window and met the others. Validated before
    anything is allocated (InvalidArgumentError naming the rule): ``name`` 1..31 bytes, 1..64
    distinct chips of the node, ``window_size`` in [1, 2^34], buffer names unique and non-empty,
    sizes > 0, all of them (each 64-aligned) within ``window_size``. The domain lives until the
    run's completion fence (docs/comm.md).
    """
    if not isinstance(name, str):
        raise InvalidArgumentError(f"allocate_domain: name must be a str, got {type(name).__name__}")
    chips = [_int("allocate_domain: workers[{}]", w, 0, i) for i, w in enumerate(workers)]
    specs = _buffers(buffers)
    d = self._allocate_domain(name, chips, _int("allocate_domain: window_size", window_size), specs)
    return CommDomainHandle(d, [n for n, _ in specs])


def release_domain(self, handle: CommDomainHandle) -> None:
    """``handle.release()``, upstream's spelling."""
    handle.release()


def _dtype(dtype) -> int:
    if dtype is None:
        return -1
    return int(parse_data_type(dtype))


def _domain(op: str, domain) -> object:
    if not isinstance(domain, CommDomainHandle):
        raise InvalidArgumentError(f"{op}: domain must be a CommDomainHandle from allocate_domain, "
                                   f"got {type(domain).__name__}")
    return domain._d


def _collective(self, op: str, comm: int, domain, ins, outs, dtype, algo: str, root: int, scratch: str) -> None:
    # The per-rank lists are checked by the binding (a list or tuple, one array or ChildBuffer per rank),
    # so that a collective costs one Python frame here (node_comm.cpp).
    self._collective(op, comm, domain._d if type(domain) is CommDomainHandle else _domain(op, domain), ins, outs,
                     -1 if dtype is None else _dtype(dtype), algo, root, scratch)


def allreduce(self, comm: int, domain: CommDomainHandle, inputs, outputs, *, algo: str = "auto",
              scratch: str = "scratch", dtype=None) -> None:
    """``outputs[i] = sum over ranks of inputs[q]``, element-wise; FP32 or BFLOAT16 (summed in FP32).

    ``comm``: the handle of :meth:`taskring.Callable.comm`. ``inputs`` / ``outputs``: one per rank,
    rank i's on ``domain.workers[i]``: a ``shared_array`` (staged into the chip and back for the
    task) or a :class:`~taskring.ChildBuffer` of that chip (``alloc_child_tensor``: the data stays
    on the chip). ``algo``: ``"one_phase"``, ``"ring"``,
    ``"direct"`` or ``"auto"``. ``scratch`` names a window buffer of at least
    :func:`collective_scratch_bytes`. ``dtype``: the arrays' element type when it is not their own
    (``taskring.BFLOAT16`` for the uint16 arrays of ``shared_array(..., taskring.BFLOAT16)``).
    """
    _collective(self, "allreduce", comm, domain, inputs, outputs, dtype, algo, 0, scratch)


def allgather(self, comm: int, domain: CommDomainHandle, inputs, outputs, *, scratch: str = "scratch",
              dtype=None) -> None:
    """``outputs[i] = inputs[0] ++ inputs[1] ++ ...`` (every input the same size; any dtype)."""
    _collective(self, "allgather", comm, domain, inputs, outputs, dtype, "auto", 0, scratch)


def reduce_scatter(self, comm: int, domain: CommDomainHandle, inputs, outputs, *, scratch: str = "scratch",
                   dtype=None) -> None:
    """``outputs[i] = sum over q of inputs[q][i*m:(i+1)*m]`` (inputs of ranks * m elements; FP32 / BFLOAT16)."""
    _collective(self, "reduce_scatter", comm, domain, inputs, outputs, dtype, "auto", 0, scratch)


def broadcast(self, comm: int, domain: CommDomainHandle, buffers, *, root: int = 0, scratch: str = "scratch",
              dtype=None) -> None:
    """``buffers[i] = buffers[root]`` for every rank i (each buffer INOUT; any dtype)."""
    _collective(self, "broadcast", comm, domain, buffers, None, dtype, "auto",
                _int("broadcast: root", root), scratch)


def all_to_all(self, comm: int, domain: CommDomainHandle, inputs, outputs, *, scratch: str = "scratch",
               dtype=None) -> None:
    """``outputs[i][q*m:(q+1)*m] = inputs[q][i*m:(i+1)*m]`` (ranks * m elements each; any dtype)."""
    _collective(self, "all_to_all", comm, domain, inputs, outputs, dtype, "auto", 0, scratch)


def collective_scratch_bytes(op: str, elems: int, dtype, ranks: int, *, algo: str = "auto") -> int:
    """The bytes of window buffer ``op`` needs for ``elems`` input elements per rank of ``dtype``.

    Size the ``scratch`` buffer (and the window) with it. ``op``: ``"allreduce"``, ``"allgather"``,
    ``"reduce_scatter"``, ``"broadcast"``, ``"all_to_all"``; ``algo`` matters for allreduce only.
    """
    t = DataType(_dtype(dtype)) if dtype is not None else DataType.FLOAT32
    return int(_taskring._collective_scratch_bytes(op, _int("collective_scratch_bytes: elems", elems, 1),
                                                   t.itemsize, _int("collective_scratch_bytes: ranks", ranks, 1),
                                                   algo))


# The orchestrator an orch function receives is the compiled _NodeOrchestrator; these are its
# comm methods, attached once here so that the handle classes above stay plain Python.
for _f in (allocate_domain, release_domain, allreduce, allgather, reduce_scatter, broadcast, all_to_all):
    setattr(_taskring._NodeOrchestrator, _f.__name__, _f)
del _f

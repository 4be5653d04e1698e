"""Dataclasses over the C++ trace analysis (include/taskring/trace/matrix.hpp)."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Iterable, List, Optional, Sequence, Union

from .. import _taskring
from ..errors import InvalidArgumentError


@dataclasses.dataclass(frozen=True)
class Summary:
    """Statistics of a sample (µs). ``n == 0``: no sample, every value 0."""

    n: int
    min: float
    median: float
    mean: float
    max: float
    stdev: float
    trimmed_mean: Optional[float]  # drops floor(n/10) from each end; only when n > 20
    trimmed_each_side: int


@dataclasses.dataclass(frozen=True)
class Cell:
    """One (rank, round): sums over its dispatches in µs; None when the cell is invalid."""

    rank: int
    round: int  # measured round, 0-based (warmup excluded)
    valid: bool
    missing: List[str]  # what made it invalid, e.g. ["sched"]
    effective_us: Optional[float]  # orch ∪ sched
    host_us: Optional[float]
    device_us: Optional[float]
    orch_us: Optional[float]
    sched_us: Optional[float]


@dataclasses.dataclass(frozen=True)
class RankInfo:
    rank: int
    pids: List[int]  # empty: expected but never seen
    dispatches: int


@dataclasses.dataclass(frozen=True)
class Matrix:
    """The validated (rank, round) matrix; ``cells`` is rank-major."""

    ranks: int
    rounds: int
    warmup: int
    dispatches_per_round: int
    rank_source: str  # "pid" or "attr"
    rank_info: List[RankInfo]
    cells: List[Cell]
    valid_cells: int
    problems: List[str]
    warnings: List[str]
    discarded_dispatches: int  # dispatches left out of every cell (warmup excepted)
    allow_discarded: bool
    cell_stats: Summary
    rank_stats: List[Summary]
    round_values: List[Optional[float]]  # per round: max over ranks; None unless every rank's cell is valid
    round_stats: Summary
    host_union: List[Optional[float]]
    host_union_stats: Summary

    def cell(self, rank: int, round: int) -> Cell:
        if not (0 <= rank < self.ranks and 0 <= round < self.rounds):
            raise IndexError(f"cell ({rank}, {round}) outside {self.ranks} ranks x {self.rounds} rounds")
        return self.cells[rank * self.rounds + round]

    @property
    def invalid_cells(self) -> int:
        return len(self.cells) - self.valid_cells

    @classmethod
    def _from_dict(cls, d: dict) -> "Matrix":
        d = dict(d)
        d["rank_info"] = [RankInfo(**r) for r in d["rank_info"]]
        d["cells"] = [Cell(**c) for c in d["cells"]]
        for k in ("cell_stats", "round_stats", "host_union_stats"):
            d[k] = Summary(**d[k])
        d["rank_stats"] = [Summary(**s) for s in d["rank_stats"]]
        return cls(**d)


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    kind: str   # "TORN_RECORD", ...
    where: str  # "<source>:<line>"
    message: str


class Analysis:
    """A parsed and validated trace. ``exit_code`` is what `taskring trace` would exit with."""

    def __init__(self, impl):
        self._a = impl
        self.matrix: Matrix = Matrix._from_dict(impl.matrix())
        self.counts: dict = impl.counts()  # record accounting: heads == parsed + unknown_version + torn
        self.diagnostics: List[Diagnostic] = [Diagnostic(*d) for d in impl.diagnostics()]
        self.diagnostics_dropped: int = impl.diagnostics_dropped
        self.sources: List[str] = list(impl.sources)
        self.span_count: int = impl.span_count
        self.invocation_count: int = impl.invocation_count
        self.exit_code: int = impl.exit_code()

    @property
    def ok(self) -> bool:
        """At least one cell, every expected cell valid, no torn record, nothing discarded unless allowed."""
        return self.exit_code == 0

    def to_rows(self) -> List[dict]:
        """One plain dict per (rank, round) cell, in rank-major order."""
        return [dataclasses.asdict(c) for c in self.matrix.cells]

    def to_json(self) -> dict:
        """The machine-readable report of ``taskring trace --json`` (schema in docs/trace.md)."""
        return json.loads(self._a.render_json())

    def render(self, *, rounds_table: bool = False, tree: bool = False) -> str:
        """The text ``taskring trace`` prints (with the same view flags)."""
        out = ""
        if rounds_table:
            out += self._a.render_rounds_table()
        if tree:
            out += self._a.render_tree()
        if not rounds_table and not tree:
            out += self._a.render_summary()
        return out + "\n" + self._a.render_matrix()

    def write_chrome(self, path: Union[str, os.PathLike]) -> None:
        """Writes Chrome trace-event JSON (open in Perfetto / chrome://tracing)."""
        self._a.write_chrome(os.fspath(path))

    def __repr__(self) -> str:
        m = self.matrix
        return (f"Analysis({m.ranks} ranks x {m.rounds} rounds, {m.valid_cells}/{len(m.cells)} valid, "
                f"exit_code={self.exit_code})")


_REQUIRABLE = ("root", "orch", "sched")


def _count(name: str, v, minimum: int) -> Optional[int]:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise InvalidArgumentError(f"analyse: {name}={v!r} is not an integer")
    if v < minimum:
        raise InvalidArgumentError(f"analyse: {name}={v} must be >= {minimum}")
    return v


def analyse(paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]], *,
            expect_ranks: Optional[int] = None, expect_rounds: Optional[int] = None, warmup: int = 0,
            dispatches_per_round: Optional[int] = None, rank_by: str = "auto",
            require: Iterable[str] = _REQUIRABLE, root: Optional[str] = None, orch: Optional[str] = None,
            sched: Optional[str] = None, device_wall: Optional[str] = None,
            allow_discarded: bool = False) -> Analysis:
    """Parses logs (``"-"`` = stdin) and validates the (rank, round) matrix, as ``taskring trace``.

    ``require`` lists the spans a valid cell needs (any of root, orch, sched).
    ``root``/``orch``/``sched``/``device_wall`` override the span names.
    Dispatches the matrix leaves out (an unusable rank, beyond ``expect_ranks``
    or the expected rounds) make the result not ``ok`` unless
    ``allow_discarded``. Raises
    NotFoundError / UnavailableError for an unreadable file and
    InvalidArgumentError for impossible options; missing or torn data is not an
    exception: it shows in ``exit_code``, ``matrix.problems`` and ``counts``.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    req = set(require)
    unknown = req - set(_REQUIRABLE)
    if unknown:
        raise InvalidArgumentError(f"analyse: require: unknown span(s) {sorted(unknown)} (accepted: root, orch, sched)")
    impl = _taskring._analyse(paths, _count("expect_ranks", expect_ranks, 1), _count("expect_rounds", expect_rounds, 1),
                              _count("warmup", warmup, 0), _count("dispatches_per_round", dispatches_per_round, 1),
                              rank_by, "root" in req, "orch" in req, "sched" in req, root, orch, sched, device_wall,
                              bool(allow_discarded))
    return Analysis(impl)

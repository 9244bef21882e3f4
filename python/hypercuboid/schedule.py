"""Schedules: generate, read, verify, simulate and export per-rank communication programs.

A :class:`Schedule` wraps the Rust core's schedule (which stays in Rust memory: a 2^20-rank
schedule is never copied into Python). Results come back as plain values and NumPy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hypercuboid import _core

#: The formats :meth:`Schedule.save` writes: lossless text, GOAL, a C routine.
FORMATS: tuple[str, ...] = ("text", "goal", "c")

#: Names of op kinds, indexed by the codes in :attr:`Trace.op_kind` (the core's).
OP_KINDS: tuple[str, ...] = _core.OP_KINDS


def _ns(ps: int | float) -> float:
    return float(ps) / 1e3


@dataclass(frozen=True)
class Trace:
    """Per-op and per-message timings of one simulation (times in picoseconds, as integers)."""

    nranks: int
    op_rank: np.ndarray
    op_index: np.ndarray
    op_kind: np.ndarray
    op_start: np.ndarray
    op_end: np.ndarray
    msg_src: np.ndarray
    msg_dst: np.ndarray
    msg_src_op: np.ndarray
    msg_dst_op: np.ndarray
    msg_depart: np.ndarray
    msg_arrival: np.ndarray
    msg_bytes: np.ndarray

    def op_kind_names(self) -> list[str]:
        """The kind of every traced op, as a name."""
        return [OP_KINDS[k] for k in self.op_kind]

    def plot(self, path: str | Path, **kwargs) -> Path:
        """Draws the timeline as a PNG (see :func:`hypercuboid.plot.timeline`)."""
        from hypercuboid.plot import timeline

        return timeline(self, path, **kwargs)


@dataclass(frozen=True)
class SimResult:
    """What a simulation returns."""

    model: str
    completion_time_ps: int
    rank_finish_ps: np.ndarray
    ops: int
    messages: int
    trace: Trace | None = None

    @property
    def completion_time_ns(self) -> float:
        """Completion time of the slowest rank, in nanoseconds."""
        return _ns(self.completion_time_ps)

    @property
    def rank_finish_ns(self) -> np.ndarray:
        """Finish time of every rank, in nanoseconds."""
        return self.rank_finish_ps.astype(np.float64) / 1e3

    @property
    def skew_ns(self) -> float:
        """Spread of the ranks' finish times (latest minus earliest), in nanoseconds."""
        if len(self.rank_finish_ps) == 0:
            return 0.0
        return _ns(int(self.rank_finish_ps.max()) - int(self.rank_finish_ps.min()))

    def to_dict(self, per_rank: bool = True) -> dict:
        """JSON-ready summary (the CLI's ``--json`` object)."""
        d: dict = {
            "model": self.model,
            "completion_time_ns": self.completion_time_ns,
            "skew_ns": self.skew_ns,
            "ops": self.ops,
            "messages": self.messages,
        }
        if per_rank:
            d["rank_finish_ns"] = self.rank_finish_ns.tolist()
        return d


@dataclass(frozen=True)
class VerifyReport:
    """The verifier's findings. ``sound`` is true when nothing is wrong."""

    sound: bool
    problems: list[str]
    truncated: int
    semantics: dict | None
    stats: dict
    text: str = field(repr=False)

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return self.sound

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "sound": self.sound,
            "problems": self.problems,
            "truncated": self.truncated,
            "semantics": self.semantics,
            "stats": self.stats,
        }


class Schedule:
    """A per-rank communication schedule (programs of send / recv / reduce / copy / compute /
    sleep ops with GOAL dependencies)."""

    def __init__(self, core: _core.Schedule):
        self._core = core

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str, name: str = "<text>") -> Schedule:
        """Reads GOAL text or hypercuboid's lossless text form."""
        return cls(_core.parse_schedule(text, name))

    @classmethod
    def read(cls, path: str | Path) -> Schedule:
        """Reads a GOAL file or a file in hypercuboid's lossless text form."""
        return cls(_core.read_schedule(str(path)))

    # -- properties ---------------------------------------------------------------------------
    @property
    def nranks(self) -> int:
        """Number of ranks."""
        return self._core.nranks

    @property
    def total_ops(self) -> int:
        """Number of ops over all ranks."""
        return self._core.total_ops

    @property
    def meta(self) -> dict:
        """What the schedule computes: collective, count (elements of each buffer), dtype, op
        (None unless it reduces), name; an alltoall's also has block (its elements per pair
        of ranks)."""
        return self._core.meta

    @property
    def memory_bytes(self) -> int:
        """Approximate heap bytes the schedule occupies in the core."""
        return self._core.memory_bytes

    def __repr__(self) -> str:
        m = self.meta
        what = m["name"] or m["collective"]
        return f"<Schedule {what}: {self.nranks} ranks, {self.total_ops} ops>"

    # -- checking and running -----------------------------------------------------------------
    def verify(
        self,
        *,
        eager_limit: int = _core.DEFAULTS["verify"]["eager_limit"],
        semantics: bool = _core.DEFAULTS["verify"]["semantics"],
        max_problems: int = _core.DEFAULTS["verify"]["max_problems"],
    ) -> VerifyReport:
        """Checks matching, deadlock (structurally; a message above ``eager_limit`` bytes is
        treated as synchronous), buffer hazards and, for a collective with data semantics, the
        result and the reduction order on every rank."""
        r = self._core.verify(eager_limit, semantics, max_problems)
        return VerifyReport(
            sound=r["sound"],
            problems=list(r["problems"]),
            truncated=r["truncated"],
            semantics=r["semantics"],
            stats=r["stats"],
            text=r["text"],
        )

    def simulate(
        self,
        model: str,
        *,
        trace: bool = False,
        noise: str | None = None,
        seed: int = 0,
        chrome_trace: str | Path | None = None,
    ) -> SimResult:
        """Runs the schedule on a cost model (a spec such as
        ``"loggops:L=3000,o=1500,g=1000,G=6"``) and returns its completion time and per-rank
        finish times; with ``trace=True`` also every op's and message's timing."""
        want_trace = trace or chrome_trace is not None
        r = self._core.simulate(
            model, want_trace, noise, seed, None if chrome_trace is None else str(chrome_trace)
        )
        t = None
        if trace and r["trace"] is not None:
            t = Trace(nranks=self.nranks, **r["trace"])
        return SimResult(
            model=r["model"],
            completion_time_ps=r["completion_ps"],
            rank_finish_ps=r["rank_finish_ps"],
            ops=r["ops"],
            messages=r["messages"],
            trace=t,
        )

    # -- text ---------------------------------------------------------------------------------
    def to_goal(self, *, reduce_ns_per_byte: float = 0.0) -> str:
        """GOAL text that LogGOPSim's txt2bin accepts (sizes only; reductions become ``calc``)."""
        return self._core.to_goal(reduce_ns_per_byte)

    def to_text(self) -> str:
        """hypercuboid's lossless text form (GOAL plus buffer slices and the collective)."""
        return self._core.to_text()

    def to_c(self, name: str | None = None) -> str:
        """One self-contained C file: an MPI routine ``name`` (a C identifier; default
        ``hc_allreduce`` for an allreduce, ``hc_schedule`` for a sizes-only schedule) that runs
        this schedule, with the program tables of every rank and the native runner
        (``docs/native.md``, section 2)."""
        return self._core.to_c(name)

    def save(
        self,
        path: str | Path,
        *,
        format: str = "text",
        reduce_ns_per_byte: float = 0.0,
        name: str | None = None,
    ):
        """Writes the schedule to ``path`` as ``text`` (lossless), ``goal``, or ``c`` (the C
        routine of :meth:`to_c`, named ``name``). ``name`` applies to ``c`` only."""
        from hypercuboid.errors import ScheduleError

        if name is not None and format != "c":
            raise ScheduleError(f"name '{name}' applies to format 'c' only, not '{format}'")
        if format == "text":
            self._core.write_text(str(path))
        elif format == "goal":
            self._core.write_goal(str(path), reduce_ns_per_byte)
        elif format == "c":
            self._core.write_c(str(path), name)
        else:
            accepted = ", ".join(FORMATS)
            raise ScheduleError(f"unknown schedule format '{format}'; accepted: {accepted}")

    def show(self, ranks: list[int] | None = None) -> str:
        """The programs of ``ranks`` (default: all, up to 16) in readable form."""
        if ranks is None:
            ranks = list(range(min(self.nranks, 16)))
        out = []
        for r in ranks:
            out.append(f"rank {r}:")
            out.extend(f"  {line}" for line in self._core.program_text(r))
        return "\n".join(out)

    def program(self, rank: int) -> _core.Program:
        """Rank ``rank``'s program as columns (what the MPI back end executes), checked against
        the schedule's buffers: a :class:`hypercuboid._core.Program`, read like a dict of
        columns (``p["kind"]``, ``p["deps"]``)."""
        return self._core.program(rank)


def parse_model(spec: str) -> str:
    """Validates a cost-model spec and returns it in canonical form (all parameters spelled
    out)."""
    return _core.parse_model(spec)


def model_forms() -> list[dict[str, Any]]:
    """The cost models a spec may name, as the core's table has them: one dict per model
    (``name``, ``aliases``, ``summary``, ``keys`` as (name, help) pairs, ``usage``,
    ``example``)."""
    return _core.model_forms()


def noise_forms() -> list[dict[str, Any]]:
    """The noise distributions a ``noise`` spec may name (dicts as :func:`model_forms`)."""
    return _core.noise_forms()

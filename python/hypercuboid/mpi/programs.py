"""Where each rank's program comes from: one swappable function, and a cache of compiled plans.

The default source asks the Rust core for this rank's program only
(``_core.allreduce_program``, ``_core.alltoall_program``: O(the rank's own ops), whatever the
communicator size) when verification is off; with verification on it builds the whole schedule
(:func:`hypercuboid.schedules.allreduce`, :func:`hypercuboid.schedules.alltoall`), verifies
it, and keeps this rank's program. Any other
source plugs in with :func:`set_program_source`; nothing else changes.

No mpi4py here: this module is plain Python and NumPy.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import ScheduleError, VerificationError
from hypercuboid.mpi.engine import UFUNCS, Plan, compile_program

#: Reduction operators the executor accepts (MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN): the core's.
OPS: tuple[str, ...] = _core.REDUCE_OPS

#: dtypes the schedule generators know by name (the core's); any other dtype MPI can carry
#: runs with a stand-in of the same kind (the schedule's slices count elements, so only its
#: byte sizes differ, and the executor does not use them).
CORE_DTYPES: tuple[str, ...] = tuple(_core.DTYPES)


@dataclass(frozen=True)
class ProgramRequest:
    """What a program source is asked for."""

    algorithm: str
    nranks: int
    rank: int
    count: int
    """Allreduce: elements of the vector; alltoall: elements per pair of ranks."""
    dtype: str
    op: str | None
    """The reduction operator (None for an alltoall)."""
    verify: bool
    collective: str = "allreduce"
    """``allreduce`` or ``alltoall``."""


#: A program source: returns the rank's program (a :class:`hypercuboid._core.Program`, or a
#: dict of columns in its format, see :meth:`hypercuboid.Schedule.program`), raising
#: ScheduleError / VerificationError.
ProgramSource = Callable[[ProgramRequest], Any]


def core_program(req: ProgramRequest) -> _core.Program:
    """The default source. With ``verify``: the whole schedule from the Rust core, verified
    (every rank reaches the same verdict, as every rank builds the same schedule), then this
    rank's columns. Without: only this rank's program, built alone by the core."""
    from hypercuboid.schedules import allreduce, alltoall

    a2a = req.collective == "alltoall"
    if not req.verify:
        if a2a:
            return _core.alltoall_program(req.algorithm, req.nranks, req.rank, req.count, req.dtype)
        return _core.allreduce_program(
            req.algorithm, req.nranks, req.rank, req.count, req.dtype, req.op or "sum"
        )
    if a2a:
        sched = alltoall(req.algorithm, req.nranks, req.count, dtype=req.dtype)
    else:
        sched = allreduce(req.algorithm, req.nranks, req.count, dtype=req.dtype, op=req.op or "sum")
    if req.verify:
        require_sound(
            sched,
            f"{req.collective} '{req.algorithm}' on {req.nranks} ranks, {req.count} x "
            f"{req.dtype}: ",
        )
    return sched.program(req.rank)


def require_sound(schedule: Any, prefix: str = "") -> None:
    """Raises VerificationError (``prefix``, the count of problems and the first) unless
    ``schedule`` verifies: nothing is sent for a schedule that does not."""
    report = schedule.verify()
    if not report.sound:
        first = report.problems[0] if report.problems else str(report)
        raise VerificationError(
            f"{prefix}the schedule does not verify ({len(report.problems)} problem(s)); first: "
            f"{first}. Nothing was sent."
        )


_source: ProgramSource = core_program
_plans: OrderedDict[tuple, Plan] = OrderedDict()
_programs: OrderedDict[tuple, _core.Program] = OrderedDict()
_MAX_PLANS = 64
#: Bumped whenever cached plans become invalid (callers that keep plans compare it).
generation = 0


def set_program_source(source: ProgramSource | None) -> ProgramSource:
    """Replaces the function that produces a rank's program (``None`` restores the default)
    and empties the plan cache. Returns the previous source."""
    global _source, generation
    prev = _source
    _source = core_program if source is None else source
    _plans.clear()
    _programs.clear()
    generation += 1
    return prev


def clear_cache() -> None:
    """Forgets every compiled plan."""
    global generation
    _plans.clear()
    _programs.clear()
    generation += 1


def schedule_dtype(dtype: np.dtype) -> str:
    """The dtype name to ask the schedule generators for."""
    if dtype.name in CORE_DTYPES:
        return dtype.name
    if dtype.kind == "f":
        return "float32" if dtype.itemsize <= 4 else "float64"
    if dtype.kind == "c":
        return "float64"
    if dtype.kind == "i":
        return "int64"
    if dtype.kind == "u":
        return "uint64"
    raise ScheduleError(f"dtype {dtype} has no schedule stand-in")


def check_dtype_op(dtype: np.dtype, op: str) -> np.ufunc:
    """The ufunc of ``op`` on ``dtype``, or a ValueError naming what is accepted."""
    if op not in UFUNCS:
        raise ScheduleError(f"unknown reduction op '{op}'; accepted: {', '.join(OPS)}")
    if dtype.kind not in "iufc" or dtype.hasobject:
        raise ScheduleError(
            f"dtype {dtype} cannot be reduced: accepted are signed and unsigned integers, "
            "floating-point and complex types"
        )
    if dtype.kind == "c" and op in ("max", "min"):
        raise ScheduleError(f"op '{op}' is not defined on complex dtype {dtype} (MPI has none)")
    return UFUNCS[op]


def buffer_len(collective: str, nranks: int, count: int) -> int:
    """Elements of each rank's input and output buffers: ``count`` for an allreduce,
    ``nranks * count`` for an alltoall (``count`` per pair of ranks)."""
    return nranks * count if collective == "alltoall" else count


def program_for(
    algorithm: str,
    nranks: int,
    rank: int,
    count: int,
    dtype: np.dtype,
    op: str | None,
    verify: bool,
    collective: str = "allreduce",
) -> _core.Program:
    """The program of ``rank`` (checked by the core), from the cache or from the program
    source; what the native runner runs. ``count`` as in :class:`ProgramRequest`."""

    def make() -> _core.Program:
        req = ProgramRequest(
            algorithm, nranks, rank, count, schedule_dtype(dtype), op, verify, collective
        )
        program = _source(req)
        if isinstance(program, _core.Program):
            return program
        n = buffer_len(collective, nranks, count)
        return _core.Program.from_columns(
            program, rank=rank, nranks=nranks, input_len=n, output_len=n
        )

    key = (collective, algorithm, nranks, rank, count, dtype.str, op, verify)
    return _cached(_programs, key, make)


def plan_for(
    algorithm: str,
    nranks: int,
    rank: int,
    count: int,
    dtype: np.dtype,
    op: str | None,
    verify: bool,
    collective: str = "allreduce",
) -> Plan:
    """The compiled plan of ``rank`` (what the Python engine runs), from the cache or from
    :func:`program_for`."""
    key = (collective, algorithm, nranks, rank, count, dtype.str, op, verify)
    return _cached(
        _plans,
        key,
        lambda: compile_program(
            program_for(algorithm, nranks, rank, count, dtype, op, verify, collective),
            rank=rank,
            nranks=nranks,
            count=buffer_len(collective, nranks, count),
        ),
    )


def _cached(cache: OrderedDict, key: tuple, make: Callable[[], Any]) -> Any:
    """``cache[key]``, or ``make()`` kept there; the least recently used of more than
    :data:`_MAX_PLANS` entries is dropped."""
    value = cache.get(key)
    if value is not None:
        cache.move_to_end(key)
        return value
    value = cache[key] = make()
    if len(cache) > _MAX_PLANS:
        cache.popitem(last=False)
    return value

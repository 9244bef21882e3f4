"""Parallel sweeps: over MPI ranks under ``mpiexec`` (mpi4py.futures), local processes
otherwise.

Every point is an independent simulation, so a sweep is an embarrassingly parallel map. Under
``mpiexec -n K hypercuboid netsim run ...`` every rank runs the command; rank 0 hands the points
out with :class:`mpi4py.futures.MPICommExecutor` and the other K - 1 ranks simulate them (so
K >= 2 ranks are needed for work to happen in parallel), and only rank 0 gets the results. Without
MPI a :class:`concurrent.futures.ProcessPoolExecutor` (spawned processes) runs them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, wait
from typing import Any

from hypercuboid.errors import NetworkError
from hypercuboid.netsim._api import Point, run_point
from hypercuboid.netsim._report import Report

#: Environment variables through which MPI launchers announce the job size.
_MPI_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE")


def mpi_world_size() -> int:
    """Ranks of the MPI job this process belongs to (1 when not launched by mpiexec)."""
    for var in _MPI_SIZE_VARS:
        v = os.environ.get(var)
        if v and v.isdigit():
            return int(v)
    return 1


def executor_kind(jobs: int | None = None, npoints: int = 2, executor: str = "auto") -> str:
    """``mpi``, ``processes`` or ``serial``: what :func:`sweep` will use."""
    if executor not in ("auto", "mpi", "processes", "serial"):
        raise NetworkError(f"invalid executor '{executor}': accepted: auto, mpi, processes, serial")
    if executor != "auto":
        return executor
    if mpi_world_size() > 1:
        return "mpi"
    if jobs == 1 or npoints <= 1:
        return "serial"
    return "processes"


def _collect(
    ex: Executor,
    points: Sequence[Point],
    progress: Callable[[int, int, Point, Report], Any] | None,
) -> list[Report]:
    futures = {ex.submit(run_point, p): i for i, p in enumerate(points)}
    out: list[Report | None] = [None] * len(points)
    pending = set(futures)
    done_count = 0
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for f in sorted(done, key=lambda f: futures[f]):
            i = futures[f]
            out[i] = f.result()  # re-raises a worker's error (the first to finish)
            done_count += 1
            if progress is not None:
                progress(done_count, len(points), points[i], out[i])  # type: ignore[arg-type]
    return out  # type: ignore[return-value]


def sweep(
    points: Sequence[Point],
    *,
    jobs: int | None = None,
    executor: str = "auto",
    progress: Callable[[int, int, Point, Report], Any] | None = None,
) -> list[Report] | None:
    """Runs every point and returns their reports (:class:`Report`) in order.

    ``executor``: ``auto`` (MPI ranks when launched by mpiexec with several ranks, else
    ``jobs`` local processes, default the CPU count, or in-process for one job or one point),
    ``mpi``, ``processes`` or ``serial``. ``progress(done, total, point, report)`` is called as
    points finish. Under MPI, ranks other than 0 return None once the sweep is over. Points run
    side by side use one thread each unless their options say otherwise; points run one after
    the other use every core (option ``threads``; the results do not depend on it).

    Local processes are spawned, so a script that calls this must guard its top level with
    ``if __name__ == "__main__":`` (the rule of :mod:`multiprocessing`).
    """
    points = list(points)
    kind = executor_kind(jobs, len(points), executor)
    if kind == "serial":
        out = []
        for i, p in enumerate(points):
            out.append(run_point(p))
            if progress is not None:
                progress(i + 1, len(points), p, out[-1])
        return out
    if kind == "mpi":
        try:
            from mpi4py import MPI
            from mpi4py.futures import MPICommExecutor
        except ImportError as e:  # pragma: no cover - depends on the installation
            raise NetworkError(
                f"launched under MPI but mpi4py is not importable ({e}); install hypercuboid[mpi]"
            ) from None
        comm = MPI.COMM_WORLD
        if comm.Get_size() == 1:
            return sweep(points, jobs=jobs, executor="serial", progress=progress)
        points = _one_thread_each(points)
        with MPICommExecutor(comm, root=0) as ex:
            if ex is None:
                return None
            return _collect(ex, points, progress)  # type: ignore[arg-type]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    points = _one_thread_each(points)
    workers = min(jobs or os.cpu_count() or 1, len(points))
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as ex:
        return _collect(ex, points, progress)


def _one_thread_each(points: list[Point]) -> list[Point]:
    """Points that run side by side: one engine thread each, unless a point asks for more."""
    return [
        p
        if "threads" in dict(p.options)
        else dataclasses.replace(p, options=tuple(sorted(p.options + (("threads", 1),))))
        for p in points
    ]

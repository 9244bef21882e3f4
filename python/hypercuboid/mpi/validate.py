"""Validation: ``predict``'s grid run for real (under mpiexec), and how far the prediction is
from the measurement.

:func:`measure` times one algorithm at one size with the runner's own timing loop
(:meth:`hypercuboid.mpi.native.NativeBound.time`, or :func:`hypercuboid.mpi.bench.time_calls`
with the Python runner): OSU's iteration counts, a barrier after every call. A call's time is
its slowest rank's (the ranks start together after the barrier; the simulated time is when the
last rank finishes). :func:`report` (plain Python, no MPI) compares a
:class:`~hypercuboid.predict.Prediction` with the measured rows: per row the error
``predicted / measured − 1``, per size whether the predicted-best algorithm is the
measured-best (or predicted to take exactly as long: a tie the model cannot break) and what
a wrong pick costs (``measured time of the predicted pick / measured best − 1``), and the
median ``|error|`` and the picks right.

:func:`measure_halo` times a halo exchange of a halo grid
(:func:`hypercuboid.predict.predict_halo`) the same way. :func:`measure_reference` times the
:data:`REFERENCE` exchanges; :func:`reference` compares those at a validation's start and end
and warns when they moved by more than :data:`REFERENCE_THRESHOLD`: the machine changed under
the measurement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from hypercuboid.predict import HALO, Prediction, row_dict


def measure(
    comm: Any,
    collective: str,
    schedule: str,
    nbytes: int,
    dtype: Any,
    *,
    iterations: int | None = None,
    warmup: int | None = None,
    runner: str = "native",
    verify: bool = True,
) -> dict | None:
    """Times ``schedule`` (an algorithm spec that names one schedule: what a prediction's row
    ran) of ``collective`` on ``comm`` for ``nbytes`` bytes (per rank's vector; per pair of
    ranks for an alltoall). Returns on rank 0 the statistics of the calls' times (µs, each the
    slowest rank's: :func:`hypercuboid.mpi.bench.summarize`) with ``iterations`` and
    ``warmup``; None elsewhere. Collective."""
    from hypercuboid.mpi import bench as hb
    from hypercuboid.mpi import native
    from hypercuboid.mpi.check import make_input

    dt = np.dtype(dtype)
    size, rank = comm.Get_size(), comm.Get_rank()
    count = nbytes // dt.itemsize
    iters, warm = hb.osu_counts(nbytes, iterations, warmup)
    if collective == "allreduce":
        op: str | None = "sum"
        x = make_input(rank, size, count, dt, "sum")
    else:
        op = None
        x = hb.alltoall_input(rank, size, count, dt)
    y = np.zeros_like(x)
    in_c = native.use_native(native.check_runner(runner), dt)
    samples = hb.time_algorithm(
        comm, collective, schedule, x, y, op, count, in_c, (iters, warm, 1), verify
    )
    return _slowest(comm, samples, iters, warm)


def measure_halo(
    comm: Any,
    variant: str,
    subdomain: Sequence[int],
    decomp: Sequence[int],
    dtype: Any,
    *,
    iterations: int | None = None,
    warmup: int | None = None,
    runner: str = "native",
) -> dict | None:
    """Times the halo exchange ``variant`` of every rank's ``subdomain`` on ``decomp`` (ranks
    along x, y, z; their product ``comm``'s size) as :func:`hypercuboid.predict.predict_halo`
    predicts it: the D3Q19 lattice, every axis periodic, in place on each rank's array. The
    native runner's plan (persistent requests, packing in C) is timed by its C loop, the Python
    runner's by :func:`hypercuboid.mpi.bench.time_calls`; OSU's iteration counts for the
    rank's halo in bytes. Returns what :func:`measure` returns. Collective."""
    from hypercuboid import halo
    from hypercuboid.mpi import bench as hb
    from hypercuboid.mpi import halo as mh
    from hypercuboid.mpi import native
    from hypercuboid.predict import HALO_VALUES

    dt = np.dtype(dtype)
    rank = comm.Get_rank()
    d = halo.Decomposition.of_subdomain(tuple(subdomain), tuple(decomp))
    s = halo.schedule(variant, d, values=HALO_VALUES, bytes=dt.itemsize)
    f = np.full(d.local_shape(rank, HALO_VALUES), rank, dtype=dt)
    nbytes = halo.saving(d, rank)[0] * dt.itemsize
    iters, warm = hb.osu_counts(nbytes, iterations, warmup)
    in_c = native.use_native(native.check_runner(runner), dt)
    try:
        if in_c:
            samples = mh._plan(comm, s, f, "native").time(iters, warm)
        else:
            samples = hb.time_calls(
                comm, lambda: mh.halo_exchange(comm, s, f, runner="python"), iters, warm
            )
    finally:
        mh.clear_plans()
    return _slowest(comm, samples, iters, warm)


def _slowest(comm: Any, samples: np.ndarray, iters: int, warm: int) -> dict | None:
    """On rank 0, the statistics of each call's slowest rank with the iteration counts; None
    elsewhere. Collective."""
    from hypercuboid.mpi import bench as hb

    slowest = hb.slowest(comm, samples)
    if slowest is None:
        return None
    return {"iterations": iters, "warmup": warm, **hb.summarize(slowest)}


def measure_grid(
    comm: Any,
    p: Prediction,
    nbytes: int,
    *,
    iterations: int | None = None,
    warmup: int | None = None,
    runner: str = "native",
    progress: Callable[[str], None] | None = None,
) -> list[dict]:
    """Measures every row of ``p`` at size ``nbytes`` on ``comm``'s rank count that could be
    built (its ``schedule``); rows (rank 0; empty elsewhere): the algorithm, what ran and the
    statistics of :func:`measure`. Collective."""
    n = comm.Get_size()
    out = []
    for a in p.algorithms:
        row = p.row(n, nbytes, a)
        if row.schedule is None:
            continue
        if progress is not None and comm.Get_rank() == 0:
            where = f"{row.subdomain:>10}" if row.subdomain else f"{nbytes:>10} B"
            progress(f"{where}  {a}")
        if row.subdomain is not None and row.decomp is not None:
            sub, dims = _dims(row.subdomain), _dims(row.decomp)
            st = measure_halo(
                comm, row.schedule, sub, dims, p.dtype, iterations=iterations, warmup=warmup,
                runner=runner,
            )  # fmt: skip
        else:
            st = measure(
                comm, p.collective, row.schedule, nbytes, p.dtype, iterations=iterations,
                warmup=warmup, runner=runner,
            )  # fmt: skip
        if st is not None:
            halo = {"subdomain": row.subdomain, "decomp": row.decomp} if row.subdomain else {}
            out.append({"algorithm": a, "schedule": row.schedule, "bytes": nbytes, **halo, **st})
    return out


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("x"))


#: The reference validate measures at its start and its end, to see whether the machine
#: changed meanwhile: ``(bytes, iterations)`` of an exchange between ranks 0 and 1 (both send
#: and receive at once, one step of calibrate's exchange chains, timed by the native runner).
REFERENCE: tuple[tuple[int, int], ...] = ((8, 500), (1 << 20, 100))

#: How far a reference's median may move, ``|end / start − 1|``, before validate warns that
#: its error figures are not to be trusted (a VM's launch states differ about 1.9x).
REFERENCE_THRESHOLD = 0.25


def measure_reference(comm: Any, progress: Callable[[str], None] | None = None) -> dict | None:
    """The medians (µs) of the :data:`REFERENCE` exchanges, ``{bytes: median}`` on rank 0 (None
    elsewhere); a few hundred milliseconds. Collective."""
    from hypercuboid.mpi.calibrate import exchange

    out = {}
    for nbytes, iterations in REFERENCE:
        if progress is not None and comm.Get_rank() == 0:
            progress(f"reference exchange 0-1 {nbytes:>9} B")
        rows = exchange(comm, 1, [nbytes], iterations, max(1, iterations // 10))
        out.update({r["bytes"]: r["median_us"] for r in rows if r["steps"] == 1})
    return out if comm.Get_rank() == 0 else None


@dataclass(frozen=True)
class ReferenceRow:
    """One reference exchange at the start and at the end of a validation."""

    bytes: int
    start_us: float
    end_us: float | None
    """None: not measured (the validation was interrupted)."""
    change: float | None
    """``end / start − 1``."""


@dataclass(frozen=True)
class Reference:
    """The reference exchanges at the start and the end (:func:`reference`)."""

    rows: list[ReferenceRow]
    threshold: float
    warning: str | None
    """One line naming each exchange that moved more than ``threshold``; None if none did."""

    def text(self) -> str:
        """``reference exchange (start -> end): 8B 0.300 -> 0.310 us, ... (a warning beyond
        25 %)``."""
        from hypercuboid._core import format_size

        parts = [
            f"{format_size(r.bytes)} {r.start_us:.3f} -> "
            f"{'-' if r.end_us is None else f'{r.end_us:.3f}'} us"
            for r in self.rows
        ]
        return (
            f"reference exchange (start -> end): {', '.join(parts)} (a warning beyond "
            f"{100 * self.threshold:.0f} %)"
        )


def reference(
    start: dict[int, float], end: dict[int, float] | None, threshold: float = REFERENCE_THRESHOLD
) -> Reference:
    """The reference of a validation from the medians (µs, by bytes) measured at its ``start``
    and ``end`` (None: not measured), with a warning when one moved more than ``threshold``
    (relative): then the machine changed under the measurement (on a VM, a launch's fast or
    slow state can change mid-job) and a calibration taken at the start does not describe the
    rest."""
    from hypercuboid._core import format_size

    rows = []
    for b, t0 in start.items():
        t1 = None if end is None else end.get(b)
        rows.append(ReferenceRow(b, t0, t1, None if t1 is None else t1 / t0 - 1))
    moved = [r for r in rows if r.change is not None and abs(r.change) > threshold]
    warning = None
    if moved:
        what = "; ".join(
            f"the {format_size(r.bytes)} exchange took {r.start_us:.3f} us at the start and "
            f"{r.end_us:.3f} us at the end ({100 * r.change:+.1f} %)"
            for r in moved
            if r.change is not None and r.end_us is not None
        )
        warning = (
            f"the machine changed during the validation: {what}, more than the threshold of "
            f"{100 * threshold:.0f} %; the error figures are not to be trusted"
        )
    return Reference(rows=rows, threshold=threshold, warning=warning)


@dataclass(frozen=True)
class ValidationRow:
    """One measured grid point beside its prediction."""

    bytes: int
    algorithm: str
    schedule: str
    predicted_us: float | None
    median_us: float
    p25_us: float
    p75_us: float
    error: float | None
    """``predicted / measured median − 1`` (positive: the model says slower)."""
    subdomain: str | None = None
    """A halo row's subdomain (sites per rank, ``16x16x16``); None for a collective."""
    decomp: str | None = None
    """A halo row's ranks along x, y, z; None for a collective."""


@dataclass(frozen=True)
class SizeVerdict:
    """One size: the predicted-best and the measured-best algorithm."""

    bytes: int
    predicted_best: str | None
    measured_best: str
    right: bool
    wrong_pick_cost: float | None
    """``measured time of the predicted pick / measured best − 1`` (0 when right; None when the
    predicted pick was not measured)."""
    subdomain: str | None = None
    """A halo size's subdomain; None for a collective."""


@dataclass(frozen=True)
class Validation:
    """A prediction checked against measurements (:func:`report`)."""

    collective: str
    model: str
    nranks: int
    rows: list[ValidationRow]
    sizes: list[SizeVerdict]
    median_abs_error: float | None
    picks_right: int
    picks: int
    interrupted: bool
    reference: Reference | None = None
    """The reference exchanges at the start and the end (None: not measured)."""

    def summary(self) -> str:
        """``median |error| X %, picks right A of B``."""
        err = "-" if self.median_abs_error is None else f"{100 * self.median_abs_error:.1f}"
        return f"median |error| {err} %, picks right {self.picks_right} of {self.picks}"

    def to_dict(self) -> dict:
        """JSON-ready form (a halo row and size also have their subdomain)."""
        d = asdict(self)
        d["rows"] = [row_dict(r) for r in self.rows]
        d["sizes"] = [row_dict(r) for r in self.sizes]
        d["summary"] = self.summary()
        return d


def report(
    p: Prediction,
    measured: Sequence[dict],
    nranks: int,
    interrupted: bool = False,
    ref: Reference | None = None,
) -> Validation:
    """Compares ``p`` at ``nranks`` ranks with ``measured`` rows (:func:`measure_grid`'s: keys
    ``algorithm, schedule, bytes, median_us, p25_us, p75_us``). A size counts for the picks
    once every algorithm that could run there was measured. ``ref``: the reference exchanges
    (:func:`reference`), carried into the result."""
    rows = []
    for m in measured:
        pred = p.row(nranks, m["bytes"], m["algorithm"]).time_ns
        pred_us = None if pred is None else pred / 1e3
        rows.append(
            ValidationRow(
                bytes=m["bytes"],
                algorithm=m["algorithm"],
                schedule=m["schedule"],
                predicted_us=pred_us,
                median_us=m["median_us"],
                p25_us=m["p25_us"],
                p75_us=m["p75_us"],
                error=None if pred_us is None else pred_us / m["median_us"] - 1,
                subdomain=m.get("subdomain"),
                decomp=m.get("decomp"),
            )
        )
    verdicts = []
    for s in p.sizes:
        runnable = [a for a in p.algorithms if p.row(nranks, s, a).schedule is not None]
        mine = {r.algorithm: r for r in rows if r.bytes == s}
        if not runnable or any(a not in mine for a in runnable):
            continue
        measured_best = min(runnable, key=lambda a: (mine[a].median_us, runnable.index(a)))
        b = p.best(nranks, s)
        pick = None if b is None else b.algorithm
        # A pick is right when the measured best is the predicted best or predicted to take
        # exactly as long (a tie the model cannot break, such as recursive doubling and
        # recursive_multiplying:auto on 2 ranks, which are one schedule).
        right = b is not None and (
            pick == measured_best or p.row(nranks, s, measured_best).time_ns == b.time_ns
        )
        cost = None
        if pick in mine:
            cost = 0.0 if right else mine[pick].median_us / mine[measured_best].median_us - 1
        verdicts.append(
            SizeVerdict(
                bytes=s,
                predicted_best=pick,
                measured_best=measured_best,
                right=right,
                wrong_pick_cost=cost,
                subdomain=mine[measured_best].subdomain,
            )
        )
    errors = [abs(r.error) for r in rows if r.error is not None]
    return Validation(
        collective=p.collective,
        model=p.model,
        nranks=nranks,
        rows=rows,
        sizes=verdicts,
        median_abs_error=float(np.median(errors)) if errors else None,
        picks_right=sum(v.right for v in verdicts),
        picks=len(verdicts),
        interrupted=interrupted,
        reference=ref,
    )


def text_table(v: Validation) -> str:
    """The rows (µs) and, per size, the picks."""
    from hypercuboid.mpi.report import human_bytes, table

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:+.1f} %"

    rows = [
        {
            "size": r.subdomain or human_bytes(r.bytes),
            "algorithm": r.algorithm,
            "predicted": r.predicted_us,
            "median": r.median_us,
            "p25-p75": f"{r.p25_us:.3f}-{r.p75_us:.3f}",
            "error": pct(r.error),
        }
        for r in v.rows
    ]
    out = table(
        rows,
        [
            ("size", "size", ""),
            ("algorithm", "algorithm", ""),
            ("predicted", "predicted us", ".3f"),
            ("median", "measured us", ".3f"),
            ("p25-p75", "p25-p75 us", ""),
            ("error", "error", ""),
        ],
    )
    picks = [
        {
            "size": s.subdomain or human_bytes(s.bytes),
            "predicted": s.predicted_best or "-",
            "measured": s.measured_best,
            "right": "yes" if s.right else "no",
            "cost": pct(s.wrong_pick_cost),
        }
        for s in v.sizes
    ]
    if picks:
        out += "\n\n" + table(
            picks,
            [
                ("size", "size", ""),
                ("predicted", "predicted best", ""),
                ("measured", "measured best", ""),
                ("right", "right", ""),
                ("cost", "wrong pick costs", ""),
            ],
        )
    return out


def plot(v: Validation, path: Any) -> None:
    """Measured median (p25–p75 band, solid) and predicted time (dashed) against size, one
    colour per algorithm, log-log."""
    from hypercuboid.plot import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    algs = list(dict.fromkeys(r.algorithm for r in v.rows))
    for i, a in enumerate(algs):
        rs = sorted((r for r in v.rows if r.algorithm == a), key=lambda r: r.bytes)
        xs = [r.bytes for r in rs]
        c = f"C{i % 10}"
        ax.plot(xs, [r.median_us for r in rs], marker="o", ms=3, color=c, label=f"{a} measured")
        ax.fill_between(xs, [r.p25_us for r in rs], [r.p75_us for r in rs], color=c, alpha=0.2)
        pts = [(r.bytes, r.predicted_us) for r in rs if r.predicted_us is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), ls="--", marker="x", ms=4, color=c)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes of a rank's halo" if v.collective == HALO else "bytes")
    ax.set_ylabel("time (µs): measured (solid, p25–p75), predicted (dashed)")
    ax.set_title(f"{v.collective} on {v.nranks} ranks: {v.summary()}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = [
    "REFERENCE",
    "REFERENCE_THRESHOLD",
    "Reference",
    "ReferenceRow",
    "SizeVerdict",
    "Validation",
    "ValidationRow",
    "measure",
    "measure_grid",
    "measure_halo",
    "measure_reference",
    "plot",
    "reference",
    "report",
    "text_table",
]

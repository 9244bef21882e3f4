"""Benchmarks under mpiexec, after the OSU micro-benchmarks' conventions, and model fitting.

* :func:`bench_allreduce`: message-size sweep, warm-up then timed iterations (OSU's defaults:
  1000 / 100 up to 8 KiB, 100 / 10 above), a barrier after every timed call (not counted),
  statistics over every rank's samples; optionally blocks of calls timed together (the
  recursive-multiplying paper's §5.2 times blocks of 10).
* :func:`bench_alltoall`: ``osu_alltoall``'s conventions (size per pair of ranks, average,
  minimum and maximum over the ranks of each rank's mean latency, iterations).
* :func:`pingpong`: half round trip between ranks 0 and 1 over a size sweep, and the postal
  model's α and β fitted by least squares (:func:`fit_postal`).
* :func:`multicast`: the recursive-multiplying paper's §5.1: rank 0 issues 1..b non-blocking
  sends of 8 B; a regression of time against the number of messages gives the pipelined
  postal model's α_p (intercept) and α_r (slope) (:func:`fit_line`).

Times are measured with ``time.perf_counter_ns`` around the calls and reported in µs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from hypercuboid import _core, units
from hypercuboid.errors import HypercuboidError, UnitError

#: The allreduce defaults of the core (element type, operator).
_DEFAULT = _core.DEFAULTS["allreduce"]

#: OSU's boundary between small and large messages (``LARGE_MESSAGE_SIZE``).
LARGE_MESSAGE = 8192


class BenchError(HypercuboidError, ValueError):
    """Bad benchmark arguments (sizes, algorithms, counts)."""


def _size(text: str) -> int:
    """A size of :mod:`hypercuboid.units` (``8``, ``4K``, ``1MiB``, ``7.5KB``) in bytes."""
    try:
        return units.parse_size(text)
    except UnitError as err:
        raise BenchError(str(err)) from None


def parse_sizes(text: str) -> list[int]:
    """``MIN:MAX`` (every power of two from MIN to MAX, OSU's ``-m``), or a comma list of
    sizes (``8``, ``4K``, ``1MiB``, ``7.5KB``: :mod:`hypercuboid.units`); the result is sorted
    and without repeats."""
    text = text.strip()
    if ":" in text:
        lo_s, _, hi_s = text.partition(":")
        lo, hi = _size(lo_s), _size(hi_s)
        if lo > hi:
            raise BenchError(f"sizes '{text}': MIN {lo} is above MAX {hi}")
        sizes = [lo] if lo == 0 else []
        s = 1 if lo == 0 else lo
        while s <= hi:
            sizes.append(s)
            s *= 2
        return sorted(set(sizes))
    return sorted({_size(t) for t in text.split(",") if t.strip()})


def split_algorithms(text: str, known: Sequence[str]) -> list[str]:
    """Splits ``A,B,native`` into names. A schedule string may itself hold commas
    (``recursive_multiplying:a8,a3,a4``): a piece that is not a known algorithm name (or
    ``native``) and follows a name with a ``:`` continues it. ``;`` always separates."""
    names = set(known) | {"native"}
    out: list[str] = []
    for group in text.split(";"):
        cur: list[str] = []
        for piece in group.split(","):
            piece = piece.strip()
            if not piece:
                continue
            if cur and ":" in cur[-1] and piece.split(":", 1)[0] not in names:
                cur[-1] += "," + piece
            else:
                cur.append(piece)
        out.extend(cur)
    if not out:
        raise BenchError("no algorithm given")
    return out


def osu_counts(
    nbytes: int, iterations: int | None = None, warmup: int | None = None
) -> tuple[int, int]:
    """(iterations, warm-up) for a message size: ``iterations`` and ``warmup`` where given,
    else OSU's defaults."""
    iters, warm = (1000, 100) if nbytes <= LARGE_MESSAGE else (100, 10)
    return (iterations if iterations is not None else iters, warmup if warmup is not None else warm)


def summarize(samples_us: np.ndarray) -> dict:
    """min / p25 / median / p75 / max / mean of samples in µs."""
    s = np.asarray(samples_us, dtype=np.float64)
    if s.size == 0:
        return {k: None for k in ("min_us", "p25_us", "median_us", "p75_us", "max_us", "avg_us")}
    p = np.percentile(s, [0, 25, 50, 75, 100])
    return {
        "min_us": float(p[0]),
        "p25_us": float(p[1]),
        "median_us": float(p[2]),
        "p75_us": float(p[3]),
        "max_us": float(p[4]),
        "avg_us": float(s.mean()),
    }


def bus_bandwidth(nbytes: int, seconds: float, nranks: int) -> tuple[float, float]:
    """(algbw, busbw) in GB/s as nccl-tests define them for allreduce: algbw = bytes / time,
    busbw = algbw · 2(n−1)/n."""
    if seconds <= 0:
        return 0.0, 0.0
    alg = nbytes / seconds / 1e9
    return alg, alg * 2 * (nranks - 1) / nranks


def time_calls(
    comm: Any, fn: Callable[[], Any], iterations: int, warmup: int, block: int = 1
) -> np.ndarray:
    """Per-call times in µs on this rank: ``warmup`` untimed rounds, then ``iterations`` timed
    rounds of ``block`` back-to-back calls (the sample is the round's time / ``block``), with
    a barrier after every round, outside the timing."""
    clock = time.perf_counter_ns
    barrier = comm.Barrier
    out = np.empty(iterations, dtype=np.float64)
    barrier()
    for _ in range(warmup):
        for _ in range(block):
            fn()
        barrier()
    rng = range(block)
    for it in range(iterations):
        t0 = clock()
        for _ in rng:
            fn()
        t1 = clock()
        out[it] = (t1 - t0) / block / 1e3
        barrier()
    return out


def slowest(comm: Any, t: np.ndarray, ranks: Sequence[int] | None = None) -> np.ndarray | None:
    """On rank 0, the elementwise maximum of the samples ``t`` of ``ranks`` (every rank's by
    default): each round's slowest rank. None elsewhere. Collective."""
    mine = ranks is None or comm.Get_rank() in ranks
    got = comm.gather(t if mine else None, root=0)
    if comm.Get_rank() != 0:
        return None
    return np.max(np.stack([g for g in got if g is not None]), axis=0)


def _gather_samples(comm: Any, samples: np.ndarray) -> np.ndarray | None:
    parts = comm.gather(samples, root=0)
    if comm.Get_rank() != 0:
        return None
    return np.concatenate(parts)


def _sweep(
    comm: Any,
    algorithms: Sequence[str],
    sizes: Sequence[int],
    dt: np.dtype,
    iterations: int | None,
    warmup: int | None,
    progress: Callable[[str], None] | None,
    make_input: Callable[[int], np.ndarray],
) -> Iterator[tuple[str, int, int, int, int, np.ndarray, np.ndarray]]:
    """(algorithm, bytes, count, iterations, warm-up, input, output) of every point of a
    sweep: every size that is a positive multiple of ``dt`` (rank 0 reports the others
    skipped) with OSU's counts where not given, its input ``make_input(count)`` and a zeroed
    output made once for all ``algorithms``, each announced by rank 0."""
    rank = comm.Get_rank()
    for nbytes in sizes:
        if nbytes % dt.itemsize or nbytes == 0:
            if rank == 0 and progress:
                progress(f"skipping {nbytes} B: not a positive multiple of {dt} ({dt.itemsize} B)")
            continue
        count = nbytes // dt.itemsize
        iters, warm = osu_counts(nbytes, iterations, warmup)
        x = make_input(count)
        y = np.zeros_like(x)
        for alg in algorithms:
            if rank == 0 and progress:
                progress(f"{nbytes:>10} B  {alg}")
            yield alg, nbytes, count, iters, warm, x, y


def time_algorithm(
    comm: Any,
    collective: str,
    alg: str,
    x: np.ndarray,
    y: np.ndarray,
    op: str | None,
    count: int,
    in_c: bool,
    loop: tuple[int, int, int],
    verify: bool = True,
) -> np.ndarray:
    """This rank's samples (µs) of ``alg`` run on ``x`` → ``y``: a schedule (an algorithm
    spec, as :func:`~hypercuboid.mpi.programs.program_for` takes it with ``count``) run by
    the native runner and timed by its C loop when ``in_c``, else by the Python executor and
    timed by :func:`time_calls`; ``native`` is the library's own ``MPI_Allreduce`` /
    ``MPI_Alltoall``, timed by the same loop. ``loop``: iterations, warm-up, calls per sample
    (the C loop on a private communicator)."""
    from hypercuboid.mpi import executor, native, programs

    allreduce = collective == "allreduce"
    if in_c and alg == "native" and allreduce:
        return native.time_library_allreduce(comm, x, y, op, *loop)  # type: ignore[arg-type]
    if in_c and alg == "native":
        return native.time_library_alltoall(comm, x, y, *loop)
    if in_c:
        size, rank = comm.Get_size(), comm.Get_rank()
        prog = programs.program_for(alg, size, rank, count, x.dtype, op, verify, collective)
        bound = native.NativeBound(prog, x, y, op)
        try:
            return bound.time(executor.private_comm(comm), *loop)
        finally:
            bound.free()
    if alg == "native" and allreduce:
        from hypercuboid.mpi.check import mpi_datatype, mpi_op

        mdt = mpi_datatype(x.dtype)
        sb, rb, mop = [x, mdt], [y, mdt], mpi_op(op)  # type: ignore[arg-type]

        def fn() -> None:
            comm.Allreduce(sb, rb, mop)

    elif alg == "native":

        def fn() -> None:
            comm.Alltoall(x, y)

    else:
        kw: dict[str, Any] = {"op": op} if allreduce else {}
        run = executor.allreduce if allreduce else executor.alltoall

        def fn() -> None:
            run(comm, x, y, alg, verify=verify, runner="python", **kw)

    return time_calls(comm, fn, *loop)


def bench_allreduce(
    comm: Any,
    algorithms: Sequence[str],
    sizes: Sequence[int],
    *,
    dtype: Any = _DEFAULT["dtype"],
    op: str = _DEFAULT["op"],
    iterations: int | None = None,
    warmup: int | None = None,
    block: int = 1,
    check: bool = False,
    verify: bool = True,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    runner: str | None = None,
) -> list[dict]:
    """Times every algorithm (``native`` = the library's ``MPI_Allreduce``) at every size and
    returns one row per (size, algorithm) on rank 0 (an empty list elsewhere). Collective.

    ``runner`` (as :func:`hypercuboid.mpi.allreduce` takes it): with the native runner the
    schedules run in C and are timed by a C loop, and the library's ``MPI_Allreduce`` is timed
    by the same loop; with the Python runner both are timed by the Python loop of
    :func:`time_calls`. The row's ``runner`` says which.

    Row keys: ``algorithm, runner, bytes, count, dtype, op, nranks, iterations, warmup, block,
    min_us, p25_us, median_us, p75_us, max_us, avg_us`` (over all ranks' samples),
    ``algbw_GBps, busbw_GBps`` (from ``avg_us``), ``valid`` (``None`` without ``check``) and,
    with ``check``, ``check`` (the :class:`~hypercuboid.mpi.check.CheckResult` as a dict).
    """
    from hypercuboid.mpi import native
    from hypercuboid.mpi.check import check_allreduce, make_input, mpi_datatype
    from hypercuboid.mpi.programs import check_dtype_op

    dt = np.dtype(dtype)
    check_dtype_op(dt, op)
    runner = native.check_runner(runner)
    in_c = native.use_native(runner, dt)
    ran = "native" if in_c else "python"
    if "native" in algorithms:
        mpi_datatype(dt)  # the library's MPI_Allreduce needs one: a TypeError before any timing
    if block < 1:
        raise BenchError(f"block {block}: must be at least 1")
    size = comm.Get_size()
    rank = comm.Get_rank()
    rows: list[dict] = []

    def inputs(count: int) -> np.ndarray:
        return make_input(rank, size, count, dt, op, seed)

    for alg, nbytes, count, iters, warm, x, y in _sweep(
        comm, algorithms, sizes, dt, iterations, warmup, progress, inputs
    ):
        res = None
        if check:
            res = check_allreduce(
                comm, alg, count, dt, op, seed=seed + 1, verify=verify, runner=ran
            )
        loop = (iters, warm, block)
        samples = time_algorithm(comm, "allreduce", alg, x, y, op, count, in_c, loop, verify)
        allsamples = _gather_samples(comm, samples)
        if rank == 0:
            st = summarize(allsamples)  # type: ignore[arg-type]
            alg_bw, bus_bw = bus_bandwidth(nbytes, st["avg_us"] * 1e-6, size)
            row = {
                "algorithm": alg,
                "runner": ran,
                "bytes": nbytes,
                "count": count,
                "dtype": dt.name,
                "op": op,
                "nranks": size,
                "iterations": iters,
                "warmup": warm,
                "block": block,
                **st,
                "algbw_GBps": alg_bw,
                "busbw_GBps": bus_bw,
                "valid": None if res is None else res.valid,
            }
            if res is not None:
                row["check"] = res.to_dict()
            rows.append(row)
    return rows


# -- alltoall ---------------------------------------------------------------------------------


def alltoall_input(rank: int, nranks: int, count: int, dtype: Any, seed: int = 0) -> np.ndarray:
    """Rank ``rank``'s send buffer of an alltoall benchmark: ``nranks * count`` elements of
    random bits (seeded by ``seed`` and the rank), so that a block in the wrong place shows."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng([seed, rank])
    raw = rng.integers(0, 256, size=nranks * count * dt.itemsize, dtype=np.uint8)
    return raw.view(dt)


def bench_alltoall(
    comm: Any,
    algorithms: Sequence[str],
    sizes: Sequence[int],
    *,
    dtype: Any = "uint8",
    iterations: int | None = None,
    warmup: int | None = None,
    check: bool = False,
    verify: bool = True,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    runner: str | None = None,
) -> list[dict]:
    """Times every alltoall algorithm (``native`` = the library's ``MPI_Alltoall``) at every
    size, as OSU's ``osu_alltoall`` does: the size is the bytes each rank sends to each rank,
    OSU's iteration counts (1000 / 100 up to 8 KiB, 100 / 10 above), a barrier after every call
    (not timed); each rank's mean latency over the iterations, then the average, minimum and
    maximum of those means over the ranks. Returns one row per (size, algorithm) on rank 0 (an
    empty list elsewhere). Collective.

    ``runner`` as in :func:`bench_allreduce`: with the native runner the schedules and
    ``MPI_Alltoall`` are timed by the same C loop, with the Python runner by the Python loop.
    With ``check``, every algorithm's result is first compared bitwise with the library's
    ``MPI_Alltoall`` on every rank (``valid``).

    Row keys: ``algorithm, runner, bytes, count, dtype, nranks, iterations, warmup, avg_us,
    min_us, max_us, median_us`` (the median of every rank's samples) and ``valid`` (``None``
    without ``check``).
    """
    from mpi4py import MPI

    from hypercuboid.mpi import native
    from hypercuboid.mpi.executor import alltoall

    dt = np.dtype(dtype)
    if dt.kind not in "iufc" or dt.hasobject:
        raise BenchError(
            f"dtype {dt} cannot be exchanged: accepted are signed and unsigned integers, "
            "floating-point and complex types"
        )
    runner = native.check_runner(runner)
    in_c = native.use_native(runner, dt)
    ran = "native" if in_c else "python"
    size = comm.Get_size()
    rank = comm.Get_rank()
    rows: list[dict] = []

    def inputs(count: int) -> np.ndarray:
        return alltoall_input(rank, size, count, dt, seed)

    for alg, nbytes, count, iters, warm, x, y in _sweep(
        comm, algorithms, sizes, dt, iterations, warmup, progress, inputs
    ):
        valid = None
        if check:
            ref = np.empty_like(x)
            comm.Alltoall(x, ref)
            got = np.zeros_like(x)
            if alg == "native":
                comm.Alltoall(x, got)
            else:
                alltoall(comm, x, got, alg, verify=verify, runner=ran)
            valid = bool(comm.allreduce(got.tobytes() == ref.tobytes(), op=MPI.LAND))
        loop = (iters, warm, 1)
        samples = time_algorithm(comm, "alltoall", alg, x, y, None, count, in_c, loop, verify)
        means = comm.gather(float(samples.mean()), root=0)
        allsamples = _gather_samples(comm, samples)
        if rank == 0:
            m = np.asarray(means)
            rows.append(
                {
                    "algorithm": alg,
                    "runner": ran,
                    "bytes": nbytes,
                    "count": count,
                    "dtype": dt.name,
                    "nranks": size,
                    "iterations": iters,
                    "warmup": warm,
                    "avg_us": float(m.mean()),
                    "min_us": float(m.min()),
                    "max_us": float(m.max()),
                    "median_us": float(np.median(allsamples)),  # type: ignore[arg-type]
                    "valid": valid,
                }
            )
    return rows


# -- point to point ---------------------------------------------------------------------------


def pingpong(
    comm: Any,
    sizes: Sequence[int],
    *,
    iterations: int | None = None,
    warmup: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict]:
    """OSU latency: ranks 0 and 1 bounce a message; a sample is half a round trip. Other ranks
    wait. Returns rows (``bytes`` and the statistics of :func:`summarize`) on rank 0."""
    size = comm.Get_size()
    rank = comm.Get_rank()
    if size < 2:
        raise BenchError("pingpong needs at least 2 ranks (mpiexec -n 2)")
    rows = []
    buf = np.zeros(max(sizes, default=0), dtype=np.uint8)
    for nbytes in sizes:
        iters, warm = osu_counts(nbytes, iterations, warmup)
        if rank == 0 and progress:
            progress(f"{nbytes:>10} B")
        b = buf[:nbytes]
        samples = np.empty(iters, dtype=np.float64)
        comm.Barrier()
        if rank == 0:
            send, recv = comm.Send, comm.Recv
            clock = time.perf_counter_ns
            for it in range(-warm, iters):
                t0 = clock()
                send(b, 1, 1)
                recv(b, 1, 1)
                t1 = clock()
                if it >= 0:
                    samples[it] = (t1 - t0) / 2e3
            rows.append(
                {"bytes": nbytes, "iterations": iters, "warmup": warm, **summarize(samples)}
            )
        elif rank == 1:
            send, recv = comm.Send, comm.Recv
            for _ in range(warm + iters):
                recv(b, 0, 1)
                send(b, 0, 1)
        comm.Barrier()
    return rows


def fit_line(x: Sequence[float], y: Sequence[float], relative: bool = False) -> dict:
    """Least-squares line ``y = a + b x``; ``relative`` weighs each point by ``1/y`` (so that a
    sweep over decades fits every size, not only the largest). Returns ``a``, ``b``, ``r2``."""
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    if xa.size < 2 or np.unique(xa).size < 2:
        raise BenchError("a fit needs at least two different x values")
    w = 1.0 / np.maximum(ya, 1e-300) if relative else np.ones_like(ya)
    design = np.stack([np.ones_like(xa), xa], axis=1)
    coef, *_ = np.linalg.lstsq(design * w[:, None], ya * w, rcond=None)
    a, b = float(coef[0]), float(coef[1])
    pred = a + b * xa
    ss_res = float(np.sum((w * (ya - pred)) ** 2))
    ss_tot = float(np.sum((w * (ya - np.average(ya, weights=w))) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return {"a": a, "b": b, "r2": r2}


def fit_postal(rows: Sequence[dict], stat: str = "median_us") -> dict:
    """The postal model's α (µs) and β (ns per byte) from pingpong rows, by least squares
    relative to each size's time."""
    f = fit_line([r["bytes"] for r in rows], [r[stat] for r in rows], relative=True)
    return {"alpha_us": f["a"], "beta_ns_per_byte": f["b"] * 1e3, "r2": f["r2"], "stat": stat}


def measure_reduction(
    dtype: Any = _DEFAULT["dtype"], op: str = _DEFAULT["op"], nbytes: int = 1 << 20, small: int = 8
) -> tuple[float, float]:
    """(γ in ns per byte, δ in ns per reduction) of the executor's NumPy reductions: δ is the
    time of a ufunc call on ``small`` elements, γ the slope up to ``nbytes`` (minimum of 20
    runs each)."""
    from hypercuboid.mpi.engine import UFUNCS

    dt = np.dtype(dtype)
    f = UFUNCS[op]

    def best(n: int) -> float:
        a = np.ones(n, dtype=dt)
        b = np.ones(n, dtype=dt)
        t = float("inf")
        for _ in range(20):
            t0 = time.perf_counter_ns()
            f(a, b, out=b)
            t = min(t, time.perf_counter_ns() - t0)
        return t

    n_big = max(small + 1, nbytes // dt.itemsize)
    t_small = best(small)
    t_big = best(n_big)
    gamma = max(t_big - t_small, 0.0) / ((n_big - small) * dt.itemsize)
    return gamma, t_small


def multicast(
    comm: Any,
    max_messages: int = 8,
    *,
    nbytes: int = 8,
    iterations: int = 1000,
    warmup: int = 100,
    mode: str = "issue",
    progress: Callable[[str], None] | None = None,
) -> list[dict]:
    """The recursive-multiplying paper's multicast (§5.1): rank 0 issues ``b`` = 1..
    ``max_messages`` non-blocking sends of ``nbytes`` to ranks 1, 2, ... (round robin when
    there are fewer peers than messages) and waits for them.

    ``mode="issue"`` times, on rank 0, from before the first ``Isend`` to the end of the
    ``Waitall`` on the sends (the paper: "timing routines issued directly before and after the
    message initiation"). ``mode="ack"`` times until every peer has answered with an empty
    message after receiving all of its messages; subtract a one-way latency to get the
    delivery time. Returns one row per ``b`` (``messages``, ``peers`` and statistics) on
    rank 0.
    """
    if mode not in ("issue", "ack"):
        raise BenchError(f"multicast mode '{mode}'; accepted: issue, ack")
    size = comm.Get_size()
    rank = comm.Get_rank()
    if size < 2:
        raise BenchError("multicast needs at least 2 ranks (mpiexec -n 2 or more)")
    if max_messages < 2:
        raise BenchError("multicast needs at least 2 message counts to fit a line (-b 2 or more)")
    from mpi4py import MPI

    npeers = size - 1
    rows = []
    for b in range(1, max_messages + 1):
        if rank == 0 and progress:
            progress(f"{b} message(s)")
        targets = [1 + (j % npeers) for j in range(b)]
        mine = targets.count(rank) if rank else 0
        sbufs = [np.zeros(nbytes, dtype=np.uint8) for _ in range(b)]
        rbufs = [np.zeros(nbytes, dtype=np.uint8) for _ in range(max(mine, 1))]
        ack = np.zeros(0, dtype=np.uint8)
        peers = sorted(set(targets))
        samples = np.empty(iterations, dtype=np.float64)
        clock = time.perf_counter_ns
        comm.Barrier()
        for it in range(-warmup, iterations):
            if rank == 0:
                if mode == "ack":
                    acks = [comm.Irecv(ack, p, 2) for p in peers]
                t0 = clock()
                reqs = [comm.Isend(sbufs[j], targets[j], 1) for j in range(b)]
                MPI.Request.Waitall(reqs)
                if mode == "ack":
                    MPI.Request.Waitall(acks)
                t1 = clock()
                if it >= 0:
                    samples[it] = (t1 - t0) / 1e3
            elif mine:
                reqs = [comm.Irecv(rbufs[j], 0, 1) for j in range(mine)]
                MPI.Request.Waitall(reqs)
                if mode == "ack":
                    comm.Send(ack, 0, 2)
            comm.Barrier()
        if rank == 0:
            rows.append(
                {
                    "messages": b,
                    "peers": len(peers),
                    "bytes": nbytes,
                    "iterations": iterations,
                    "warmup": warmup,
                    "mode": mode,
                    **summarize(samples),
                }
            )
    return rows


def fit_pipelined(rows: Sequence[dict], stat: str, latency_us: float = 0.0) -> dict:
    """α_p (intercept) and α_r (slope), in µs, of multicast time against message count;
    ``latency_us`` is subtracted first (the return trip of ``ack`` mode)."""
    f = fit_line([r["messages"] for r in rows], [r[stat] - latency_us for r in rows])
    return {"alpha_p_us": f["a"], "alpha_r_us": f["b"], "r2": f["r2"], "stat": stat}


def stderr_progress(msg: str) -> None:
    """Progress lines on stderr."""
    print(msg, file=sys.stderr, flush=True)

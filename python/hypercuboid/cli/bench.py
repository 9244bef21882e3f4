"""``hypercuboid bench``: benchmarks under mpiexec (allreduce, alltoall, pingpong, multicast).

Run with ``mpiexec -n P hypercuboid bench ...``; rank 0 prints and writes files. Every check
that could stop one rank (an existing output file, a bad option) is decided on rank 0 and
shared, so that no rank is left waiting; an error while messages are in flight aborts the job
with a message naming the rank.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, NoReturn

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import error_message, op_option, usage_line

_LAUNCHER_RANK_VARS = cliopts.LAUNCHER_RANK_VARS
env_rank = cliopts.env_rank


class RankZeroErrors:
    """A click command under mpiexec: only rank 0 shows errors; every rank exits with the same
    status (bench, calibrate, validate)."""

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        # An option's own check (-i 0, --timeout nan) fails while the arguments are parsed,
        # before invoke: only rank 0 shows it too.
        try:
            return super().make_context(info_name, args, parent=parent, **extra)  # type: ignore[misc]
        except click.UsageError as e:
            _rank_zero_exit(usage_line(e))
        except click.ClickException as e:
            _rank_zero_exit(e)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)  # type: ignore[misc]
        except Exception as e:
            err = error_message(e)
            if err is None:
                raise
        _rank_zero_exit(err)


def _rank_zero_exit(err: click.ClickException) -> NoReturn:
    """Shows ``err`` on rank 0 only, lets the ranks leave together and exits every rank with
    its status."""
    if env_rank() == 0:
        err.show()
        sys.stderr.flush()
    _settle()
    raise click.exceptions.Exit(err.exit_code)


class BenchGroup(RankZeroErrors, click.Group):
    """The ``bench`` group: :class:`RankZeroErrors`."""


class RankZeroCommand(RankZeroErrors, click.Command):
    """A command of its own (calibrate, validate): :class:`RankZeroErrors`."""


def _launched() -> bool:
    return any(v in os.environ for v in _LAUNCHER_RANK_VARS)


def _settle(timeout: float = 10.0) -> None:
    """Lets the ranks leave together after an error: a rank that exits with a failure status
    first makes the launcher kill the others, and rank 0 could lose its message. Every rank
    meets in a non-blocking barrier (rank 0 after printing), waiting at most ``timeout`` seconds
    in case the error was not raised on every rank."""
    if not _launched():
        return
    from mpi4py import MPI

    if MPI.Is_finalized():
        return
    req = MPI.COMM_WORLD.Ibarrier()
    deadline = time.monotonic() + timeout
    while not req.Test():
        if time.monotonic() > deadline:
            return
        time.sleep(0.001)


@click.group(cls=BenchGroup)
def bench() -> None:
    """Benchmarks to run under mpiexec: allreduce schedules against MPI_Allreduce and alltoall
    schedules against MPI_Alltoall (OSU conventions), pingpong (postal α, β) and multicast
    (pipelined α_p, α_r).

    \b
    mpiexec -n 4 hypercuboid bench allreduce -a recursive_doubling,ring,native -m 8:1M --check
    mpiexec -n 4 hypercuboid bench alltoall -a linear,pairwise,bruck,native -m 1:1M --check
    mpiexec -n 2 hypercuboid bench pingpong --model-file postal.json
    mpiexec -n 2 hypercuboid bench multicast --model-file pipelined.json
    """


def _world() -> Any:
    from mpi4py import MPI

    return MPI.COMM_WORLD


def _agree(comm: Any, check: Callable[[], None]) -> None:
    """Runs ``check`` on rank 0 and raises its error (as a click error) on every rank."""
    msg = None
    if comm.Get_rank() == 0:
        try:
            check()
        except Exception as e:
            err = error_message(e)
            if err is None:
                raise
            msg = err.format_message()
    msg = comm.bcast(msg, root=0)
    if msg is not None:
        raise click.ClickException(msg)


def _outputs_free(force: bool, *paths: str | None) -> Callable[[], None]:
    return lambda: cliopts.outputs_free(force, *paths)


TIMEOUT_HELP = (
    "Abort the job when the command has not finished in SECONDS (a rank waiting for a peer "
    "that never comes) [no limit]."
)

#: ``--timeout``: seconds before an MPI job is aborted (every verb that runs under mpiexec).
timeout_option = click.option(
    "--timeout", type=cliopts.Finite(0, min_open=True), default=None, help=TIMEOUT_HELP
)


def _start(comm: Any, timeout: float | None, prog: str = "hypercuboid bench") -> None:
    """Every rank checks that all were started with its arguments, and arms --timeout."""
    from hypercuboid.mpi.launch import start

    start(comm, sys.argv[1:], timeout, prog)


#: How long a rank other than 0 waits before it prints its error and aborts the job: when
#: every rank fails alike, rank 0's abort ends the job first and one message is printed.
_QUIET_WAIT_S = 0.5


def _run_collective(comm: Any, body: Callable[[], Any], verb: str = "bench") -> Any:
    """Runs the measuring part: a failure on any rank aborts the job with the rank named
    (other ranks would otherwise wait for it forever). Rank 0 prints its error at once; any
    other rank only if the job is still alive :data:`_QUIET_WAIT_S` later, so that an error
    every rank meets is printed once."""
    try:
        return body()
    except Exception as e:
        if comm.Get_size() == 1:
            raise
        rank = comm.Get_rank()
        if rank != 0:
            time.sleep(_QUIET_WAIT_S)
        sys.stderr.write(f"hypercuboid {verb}: rank {rank}: {type(e).__name__}: {e}; aborting\n")
        sys.stderr.flush()
        comm.Abort(1)
        raise


def _progress(quiet: bool, progress: bool | None, comm: Any) -> Callable[[str], None] | None:
    if comm.Get_rank() != 0 or not cliopts.Progress(quiet, progress).on:
        return None
    from hypercuboid.mpi.bench import stderr_progress

    return stderr_progress


def _library() -> str:
    from mpi4py import MPI

    return MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0]


def _write_outputs(rows: list, as_json: str | None, as_csv: str | None) -> None:
    import tempfile

    from hypercuboid.mpi.report import write_csv, write_json

    for dest, write in ((as_json, write_json), (as_csv, write_csv)):
        if dest is None:
            continue
        if dest != "-":
            write(dest, rows)
            continue
        with tempfile.TemporaryDirectory() as d:  # the same text, on stdout
            tmp = Path(d) / "rows"
            write(tmp, rows)
            click.echo(tmp.read_text(encoding="utf-8"), nl=False)


def _echo(as_json: str | None, as_csv: str | None) -> Callable[..., None]:
    """click.echo, or nothing when stdout holds the JSON or the CSV rows."""
    return click.echo if _table(as_json, as_csv) else (lambda *a, **k: None)


def _sweep(run: Callable[[list[int]], list], sizes: list[int]) -> tuple[list, bool]:
    """Runs a sweep one size at a time (the rows of a size do not depend on the others), so
    that Ctrl-C keeps the rows of the sizes that finished: (rows, whether it was stopped)."""
    rows: list = []
    try:
        for size in sizes:
            rows += run([size])
    except KeyboardInterrupt:
        return rows, True
    return rows, False


def _given(**kw: Any) -> dict[str, Any]:
    """The options the user gave (None: left out, so that the callee's default applies)."""
    return {k: v for k, v in kw.items() if v is not None}


def _table(as_json: str | None, as_csv: str | None) -> bool:
    """Whether the table is printed: not when stdout holds the JSON or the CSV rows."""
    return "-" not in (as_json, as_csv)


_common = [
    cliopts.json_option("The rows as JSON"),
    cliopts.csv_option("The rows as CSV"),
    cliopts.force_option(),
    cliopts.quiet_option("No progress lines on stderr."),
    cliopts.progress_option(),
    timeout_option,
]


@dataclass(frozen=True)
class _Common:
    """The values of the options every bench verb takes (:data:`_common`)."""

    as_json: str | None
    as_csv: str | None
    force: bool
    quiet: bool
    progress: bool | None
    timeout: float | None

    @classmethod
    def take(cls, opts: dict[str, Any]) -> _Common:
        """Its values, taken out of a verb's other options."""
        return cls(**{f.name: opts.pop(f.name) for f in fields(cls)})

    def outputs_free(self, *more: str | None) -> Callable[[], None]:
        """The check that --json, --csv and `more` files may be written."""
        return _outputs_free(self.force, self.as_json, self.as_csv, *more)

    def start(self, *more: str | None, one_rank: str | None = None) -> Any:
        """Starts the job on every rank (:func:`_start`, --timeout) and agrees that the output
        files and `more` may be written; a job of one rank is refused with `one_rank` where a
        verb needs a peer. Returns the communicator."""
        comm = _world()
        _start(comm, self.timeout)
        if one_rank is not None and comm.Get_size() < 2:
            raise click.ClickException(one_rank)
        _agree(comm, self.outputs_free(*more))
        return comm

    def progress_of(self, comm: Any) -> Callable[[str], None] | None:
        """The progress callback (rank 0, unless quiet)."""
        return _progress(self.quiet, self.progress, comm)

    def table(self) -> bool:
        """Whether the table is printed (:func:`_table`)."""
        return _table(self.as_json, self.as_csv)


#: The spellings of release 0.x: -m was --sizes here, but it is --model everywhere else.
_old_sizes = cliopts.renamed("-m", target="sizes", new="--sizes")
_old_algorithms = cliopts.renamed("--algorithms", target="algorithms", new="--algorithm")
_old_gamma = cliopts.renamed(
    "--gamma/--no-gamma",
    target="measure_reductions",
    new="--measure-reductions/--no-measure-reductions",
    default=None,
)
_measure_reductions = click.option(
    "--measure-reductions/--no-measure-reductions",
    default=True,
    show_default=True,
    help="Measure γ and δ (per byte and per call of the executor's NumPy reductions) for the "
    "model; else 0.",
)


def _model_out(model: str) -> Callable:
    """``--measure-reductions`` and ``--model-file`` (written) of a verb that fits a `model`
    (pingpong, multicast)."""
    return cliopts.with_options(
        [
            _measure_reductions,
            click.option(
                "--model-file",
                type=click.Path(dir_okay=False),
                default=None,
                help=f"Write the fitted {model} model for 'simulate --model-file'.",
            ),
        ]
    )


_iterations = click.option(
    "--iterations",
    "-i",
    type=cliopts.Range(1),
    default=None,
    help="Timed iterations per size [OSU: 1000 up to 8 KiB, 100 above].",
)
_warmup = click.option(
    "--warmup",
    "-x",
    type=cliopts.Range(0),
    default=None,
    help="Untimed warm-up iterations [OSU: 100 / 10].",
)


def _algorithms(text: str, known: list[str]) -> list[str]:
    from hypercuboid.mpi import bench as hb

    algs = hb.split_algorithms(text, known)
    if any(not p.strip() for group in text.split(";") for p in group.split(",")):
        raise click.ClickException(f"--algorithm {cliopts.shown(text)}: an empty item in the list")
    cliopts.split_list(",".join(algs), "--algorithm")  # refuses a repeated algorithm
    return algs


def _sizes(text: str) -> list[int]:
    from hypercuboid.mpi import bench as hb

    if "," in text:
        cliopts.split_list(text, "--sizes")
    size_list = hb.parse_sizes(text)
    if not size_list:
        raise click.ClickException(f"--sizes '{text}' gives no size")
    return size_list


def _sweep_inputs(
    algorithms: str, known: list[str], sizes: str, dtype: str, check: bool
) -> tuple[list[str], list[int], Any]:
    """The --algorithm list, the --sizes and the NumPy --dtype of a collective sweep, checked
    in the order sizes, dtype (exact for --check), algorithms."""
    size_list = _sizes(sizes)
    dt = _check_dtype(dtype, check)
    return _algorithms(algorithms, known), size_list, dt


def _check_dtype(dtype: str, check: bool) -> Any:
    import numpy as np

    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise click.ClickException(f"--dtype '{dtype}' is not a NumPy dtype") from None
    if check and dt.kind in "fc" and dt.itemsize // (2 if dt.kind == "c" else 1) not in (2, 4, 8):
        raise click.ClickException(
            f"--dtype {dtype}: --check compares results exactly, which needs IEEE half, single "
            "or double precision (float16/32/64, complex64/128) or an integer type"
        )
    return dt


def _schedule_runs(native: str) -> list:
    """The options of how the schedules of a collective sweep run: --no-verify, --seed of the
    input data and --runner (`native` is the library's own call, timed beside them)."""
    return [
        click.option(
            "--no-verify", is_flag=True, help="Run schedules without verifying them first."
        ),
        click.option(
            "--seed",
            type=cliopts.SEED,
            default=None,
            help="Seed of the input data (0..2^64-1; default: the benchmark's).",
        ),
        click.option(
            "--runner",
            type=click.Choice(["auto", "native", "python"]),
            default=None,
            help=f"native: schedules run by the compiled C runner, timed (with {native}) by a C "
            "loop; python: the mpi4py engine and a Python loop; auto (default, or "
            "$HYPERCUBOID_RUNNER): native where it loads.",
        ),
    ]


def _collective_bench(
    bench_fn: Callable[..., list],
    algs: list[str],
    size_list: list[int],
    *,
    header: Callable[[int], str],
    table: Callable[[list], str],
    verdict: str,
    names_known: Callable[[], None] | None = None,
    plot: str | None = None,
    draw: Callable[[list, int, str], object] | None = None,
    no_verify: bool,
    seed: int | None,
    **kw: Any,
) -> None:
    """Starts the job (every rank: same arguments, --timeout, outputs free, `names_known`
    agreed) and runs `bench_fn` (``bench_allreduce`` or ``bench_alltoall``, with `kw` less the
    options of every verb, :class:`_Common`) over the sweep one size at a time. Rank 0 then
    prints `header(nranks)` and `table(rows)` (unless stdout holds the JSON or CSV), writes
    --json/--csv, draws `plot` with `draw(rows, nranks, plot)`, and reports a Ctrl-C or the
    rows that failed --check (`verdict`). The other ranks return, or raise KeyboardInterrupt
    once the sweep was stopped."""
    c = _Common.take(kw)
    comm = c.start(plot)
    if names_known is not None:
        _agree(comm, names_known)
    rows, stopped = _run_collective(
        comm,
        lambda: _sweep(
            lambda sizes: bench_fn(
                comm,
                algs,
                sizes,
                verify=not no_verify,
                **_given(seed=seed),
                progress=c.progress_of(comm),
                **kw,
            ),
            size_list,
        ),
    )
    if comm.Get_rank() != 0:
        if stopped:
            raise KeyboardInterrupt
        return
    n = comm.Get_size()
    if c.table():
        click.echo(f"{header(n)}; {_library()}")
        click.echo(table(rows))
    _write_outputs(rows, c.as_json, c.as_csv)
    if plot and draw is not None:
        draw(rows, n, plot)
    _failed(rows, stopped, verdict)


def _ranks(n: int) -> str:
    """``1 rank``, ``4 ranks``."""
    return f"{n} rank{'s' if n != 1 else ''}"


def _failed(rows: list, stopped: bool, verdict: str) -> None:
    """After the rows are out: KeyboardInterrupt if the sweep was stopped, else an error
    counting the rows that failed --check (`verdict`), with the first one's check if it has
    one."""
    if stopped:
        raise KeyboardInterrupt  # after the rows of the sizes that finished are out
    bad = [r for r in rows if r.get("valid") is False]
    if bad:
        raise click.ClickException(
            f"{len(bad)} result(s) {verdict}, first {bad[0]['algorithm']} at "
            f"{bad[0]['bytes']} B{': ' + bad[0]['check'] if 'check' in bad[0] else ''}"
        )


@bench.command("allreduce")
@click.option(
    "--algorithm",
    "-a",
    "algorithms",
    default="recursive_doubling,ring,native",
    show_default=True,
    help="Comma list of allreduce algorithms or schedule strings, and 'native' "
    "(the library's MPI_Allreduce). A schedule string's own commas are kept "
    "(recursive_multiplying:a8,a4,native); ';' also separates.",
)
@click.option(
    "--sizes",
    default="8:1M",
    show_default=True,
    help="Message sizes in bytes: MIN:MAX (powers of two, as OSU's -m) or a list 8,1K,1M.",
)
@click.option(
    "--dtype",
    default=_core.DEFAULTS["allreduce"]["dtype"],
    show_default=True,
    help="Element type: any NumPy type MPI carries (float16, complex128, ...).",
)
@op_option
@click.option(
    "--iterations",
    "-i",
    type=cliopts.Range(1),
    default=None,
    help="Timed iterations (blocks with --block) per size [OSU: 1000 up to 8 KiB, 100 above].",
)
@_warmup
@cliopts.int_option(
    "--block",
    least=1,
    default=1,
    help="Calls timed together per sample (the recursive-multiplying paper uses 10).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Compare every result with MPI_Allreduce and a fixed-order reference (exact, max "
    "ulp, identical bits on all ranks); fills the 'valid' column.",
)
@cliopts.with_options(_schedule_runs("MPI_Allreduce"))
@cliopts.plot_option("Draw median latency against size (log-log, one line per algorithm)")
@cliopts.with_options([*_common, _old_sizes, _old_algorithms])
def bench_allreduce_cmd(
    algorithms: str,
    sizes: str,
    dtype: str,
    op: str,
    block: int,
    check: bool,
    plot: str | None,
    **opts: Any,
) -> None:
    """Time allreduce algorithms and MPI_Allreduce over a message-size sweep (OSU style).

    Statistics are over every rank's samples: min / p25 / median / p75 / max and the mean
    (avg); bus bandwidth as nccl-tests: bytes / avg · 2(n−1)/n.
    """
    from hypercuboid.mpi import bench as hb
    from hypercuboid.mpi.report import allreduce_table, plot_latency

    algs, size_list, dt = _sweep_inputs(algorithms, _known_algorithms(), sizes, dtype, check)
    _collective_bench(
        hb.bench_allreduce,
        algs,
        size_list,
        header=lambda n: f"# allreduce, {_ranks(n)}, {dt.name} {op}, block {block}",
        table=allreduce_table,
        verdict="failed --check",
        plot=plot,
        draw=lambda rows, n, path: plot_latency(
            rows, path, title=f"allreduce on {n} ranks ({dt.name} {op})"
        ),
        dtype=dt,
        op=op,
        block=block,
        check=check,
        **opts,
    )


@bench.command("alltoall")
@click.option(
    "--algorithm",
    "-a",
    "algorithms",
    default="linear,pairwise,bruck,native",
    show_default=True,
    help="Comma list of alltoall algorithms (hypercuboid schedule list) and 'native' (the "
    "library's MPI_Alltoall); ';' also separates.",
)
@click.option(
    "--sizes",
    default="1:1M",
    show_default=True,
    help="Bytes each rank sends to each rank: MIN:MAX (powers of two, as OSU's -m) or a list.",
)
@click.option(
    "--dtype",
    default="uint8",
    show_default=True,
    help="Element type (integers, floating point, complex); uint8 moves bytes as OSU's MPI_CHAR.",
)
@_iterations
@_warmup
@click.option(
    "--check",
    is_flag=True,
    help="Compare every algorithm's result bitwise with MPI_Alltoall on every rank first; "
    "fills the 'valid' column.",
)
@cliopts.with_options(_schedule_runs("MPI_Alltoall"))
@cliopts.with_options([*_common, _old_sizes, _old_algorithms])
def bench_alltoall_cmd(
    algorithms: str,
    sizes: str,
    dtype: str,
    check: bool,
    **opts: Any,
) -> None:
    """Time alltoall algorithms and MPI_Alltoall over a message-size sweep with osu_alltoall's
    conventions: the size is per pair of ranks; avg / min / max are over the ranks of each
    rank's mean latency (µs)."""
    from hypercuboid.mpi import bench as hb
    from hypercuboid.mpi.report import alltoall_table
    from hypercuboid.schedules import algorithms as registry

    known = [a.name for a in registry("alltoall")]
    known += [alias for a in registry("alltoall") for alias in a.aliases]
    algs, size_list, dt = _sweep_inputs(algorithms, known, sizes, dtype, check)

    def names_known() -> None:
        from hypercuboid.schedules import alltoall

        for a in algs:
            if a != "native":
                alltoall(a, 1, 0)  # parses the name and its parameters: a one-line error

    _collective_bench(
        hb.bench_alltoall,
        algs,
        size_list,
        header=lambda n: f"# alltoall, {_ranks(n)}, {dt.name}",
        table=alltoall_table,
        verdict="differ from MPI_Alltoall",
        names_known=names_known,
        dtype=dt,
        check=check,
        **opts,
    )


#: The latency statistics' columns of the pingpong and multicast tables.
_LATENCY_COLUMNS = [
    (f"{stat}_us", f"{stat} us", ".3f") for stat in ("min", "p25", "median", "p75", "max")
]


def _known_algorithms() -> list[str]:
    try:
        from hypercuboid.schedules import allreduce_algorithms

        return allreduce_algorithms()
    except AttributeError:  # a core without the generators
        return []


def _reduction_cost(measure: bool) -> tuple[float, float]:
    """(γ ns/B, δ ns) of the executor's reductions, or zeros."""
    from hypercuboid.mpi.bench import measure_reduction

    return measure_reduction() if measure else (0.0, 0.0)


def _reduction_spec(gamma_ns: float, delta_ns: float) -> str:
    from hypercuboid.modelfile import fmt_time

    return f"gamma={fmt_time(gamma_ns * 1e-9, True)},delta={fmt_time(delta_ns * 1e-9, True)}"


@bench.command("pingpong")
@click.option("--sizes", default="1:1M", show_default=True, help="Message sizes (as allreduce).")
@_iterations
@_warmup
@cliopts.choice_option(
    "--stat", choices=["median", "min"], default="median", help="Statistic the model is fitted to."
)
@_model_out("postal")
@cliopts.with_options([*_common, _old_sizes, _old_gamma])
def bench_pingpong_cmd(
    sizes: str,
    iterations: int | None,
    warmup: int | None,
    stat: str,
    measure_reductions: bool,
    model_file: str | None,
    **common: Any,
) -> None:
    """Half round trip between ranks 0 and 1, and the postal model α + β·n fitted by least
    squares (each size weighted by 1/time, so every decade counts)."""
    from hypercuboid import modelfile
    from hypercuboid.mpi import bench as hb
    from hypercuboid.mpi.report import human_bytes, table

    size_list = _sizes(sizes)
    if len(size_list) < 2:
        raise click.ClickException(f"--sizes '{sizes}': a fit needs at least two sizes")
    c = _Common(**common)
    comm = c.start(
        model_file, one_rank="pingpong needs 2 ranks: mpiexec -n 2 hypercuboid bench ..."
    )
    rows = _run_collective(
        comm,
        lambda: hb.pingpong(
            comm,
            size_list,
            iterations=iterations,
            warmup=warmup,
            progress=c.progress_of(comm),
        ),
    )
    if comm.Get_rank() != 0:
        return
    fit = hb.fit_postal(rows, f"{stat}_us")
    g, d = _reduction_cost(measure_reductions)
    shown_rows = [{**r, "size": human_bytes(r["bytes"])} for r in rows]
    echo = _echo(c.as_json, c.as_csv)
    echo(f"# pingpong (half round trip), ranks 0 and 1; {_library()}")
    echo(
        table(
            shown_rows,
            [
                ("size", "size", ""),
                *_LATENCY_COLUMNS,
            ],
        )
    )
    echo(
        f"postal fit ({stat}): alpha = {fit['alpha_us']:.4g} us, beta = "
        f"{fit['beta_ns_per_byte']:.4g} ns/B ({1 / max(fit['beta_ns_per_byte'], 1e-12):.3g} "
        f"GB/s), R^2 = {fit['r2']:.4f}; reductions: gamma = {g:.4g} ns/B, delta = {d:.4g} ns"
    )
    _write_outputs(rows, c.as_json, c.as_csv)
    if model_file:
        alpha, beta = _clamped(fit["alpha_us"], fit["beta_ns_per_byte"])
        spec = (
            f"postal:alpha={modelfile.fmt_time(alpha * 1e-6)},"
            f"beta={modelfile.fmt_time(beta * 1e-9, True)},{_reduction_spec(g, d)}"
        )
        fitted = {
            **fit,
            "gamma_ns_per_byte": g,
            "delta_ns": d,
            "sizes": [r["bytes"] for r in rows],
            f"{stat}_us": [r[f"{stat}_us"] for r in rows],
        }
        _write_model(model_file, spec, "bench pingpong", fitted, comm, c.force, echo)


@bench.command("multicast")
@cliopts.int_option(
    "--messages",
    "-b",
    least=1,
    default=8,
    help="Largest number of messages rank 0 issues (1..b; the paper uses 1..8).",
)
@click.option(
    "--message", "nbytes", type=cliopts.Size(), default=8, show_default=True, help="Message size."
)
@cliopts.renamed("--bytes", target="nbytes", new="--message")
@click.option("--iterations", "-i", type=cliopts.Range(1), default=1000, show_default=True)
@click.option("--warmup", "-x", type=cliopts.Range(0), default=100, show_default=True)
@cliopts.choice_option(
    "--mode",
    choices=["issue", "ack"],
    default="issue",
    help="issue: time the Isends and their Waitall on rank 0 (the paper's §5.1); ack: until "
    "every peer acknowledged, less a one-way latency measured in the same run.",
)
@click.option(
    "--beta",
    default=None,
    help="β for the model file (e.g. 0.35ns); default: fitted from a short pingpong sweep "
    "(64K:1M) in the same run.",
)
@_model_out("pipelined postal")
@cliopts.with_options([*_common, _old_gamma])
def bench_multicast_cmd(
    messages: int,
    nbytes: int,
    iterations: int,
    warmup: int,
    mode: str,
    beta: str | None,
    measure_reductions: bool,
    model_file: str | None,
    **common: Any,
) -> None:
    """Rank 0 issues 1..b non-blocking sends of 8 B; the regression of time against b gives
    α_p (intercept) and α_r (slope) for min and median (the recursive-multiplying paper's
    Table 1: 1.34 / 0.34 µs min, 1.51 / 0.38 µs median on a Cray XC30)."""
    from hypercuboid import modelfile
    from hypercuboid.mpi import bench as hb
    from hypercuboid.mpi.report import table

    beta_s = None
    if beta is not None:
        beta_s = _parse_time(beta)
    c = _Common(**common)
    comm = c.start(model_file, one_rank="multicast needs 2 or more ranks: mpiexec -n 2 ...")
    prog = c.progress_of(comm)

    def body() -> tuple:
        rows = hb.multicast(
            comm,
            messages,
            nbytes=nbytes,
            iterations=iterations,
            warmup=warmup,
            mode=mode,
            progress=prog,
        )
        lat = hb.pingpong(comm, [nbytes], iterations=iterations, warmup=warmup)
        pp = []
        if beta_s is None and model_file:
            pp = hb.pingpong(comm, hb.parse_sizes("64K:1M"), iterations=50, warmup=5)
        return rows, lat, pp

    rows, lat, pp = _run_collective(comm, body)
    if comm.Get_rank() != 0:
        return
    echo = _echo(c.as_json, c.as_csv)
    echo(f"# multicast of {nbytes} B, mode {mode}, {comm.Get_size() - 1} peer(s); {_library()}")
    echo(
        table(
            rows,
            [
                ("messages", "messages", ""),
                ("peers", "peers", ""),
                *_LATENCY_COLUMNS,
            ],
        )
    )
    fits = {}
    for stat in ("min", "median"):
        latency = lat[0][f"{stat}_us"] if mode == "ack" else 0.0
        fits[stat] = hb.fit_pipelined(rows, f"{stat}_us", latency)
        echo(
            f"pipelined fit ({stat}): alpha_p = {fits[stat]['alpha_p_us']:.4g} us, alpha_r = "
            f"{fits[stat]['alpha_r_us']:.4g} us, R^2 = {fits[stat]['r2']:.4f}"
            + (f" (less one-way latency {latency:.3f} us)" if latency else "")
        )
    _write_outputs(rows, c.as_json, c.as_csv)
    if model_file:
        if beta_s is None:
            pf = hb.fit_postal(pp, "median_us")
            beta_s = max(pf["beta_ns_per_byte"], 0.0) * 1e-9
        g, d = _reduction_cost(measure_reductions)
        f = fits["median"]
        ap, ar = _clamped(f["alpha_p_us"], f["alpha_r_us"])
        spec = (
            f"pipelined:alpha_p={modelfile.fmt_time(ap * 1e-6)},"
            f"alpha_r={modelfile.fmt_time(ar * 1e-6)},beta={modelfile.fmt_time(beta_s, True)},"
            f"{_reduction_spec(g, d)}"
        )
        fitted = {
            "min": fits["min"],
            "median": fits["median"],
            "mode": mode,
            "one_way_latency_us": {s: lat[0][f"{s}_us"] for s in ("min", "median")},
            "beta_s_per_byte": beta_s,
            "beta_source": "--beta" if beta is not None else "pingpong 64K:1M (median)",
            "gamma_ns_per_byte": g,
            "delta_ns": d,
            "messages": [r["messages"] for r in rows],
            "peers": [r["peers"] for r in rows],
            "min_us": [r["min_us"] for r in rows],
            "median_us": [r["median_us"] for r in rows],
        }
        _write_model(model_file, spec, "bench multicast", fitted, comm, c.force, echo)


def _clamped(*fitted: float) -> list[float]:
    """The fitted values with a negative one taken as 0, and a warning on stderr if one was."""
    if any(v < 0 for v in fitted):
        click.echo("warning: a negative fitted value was clamped to 0", err=True)
    return [max(v, 0.0) for v in fitted]


def _write_model(
    path: str,
    spec: str,
    source: str,
    fitted: dict,
    comm: Any,
    force: bool,
    echo: Callable[..., None],
) -> None:
    """Writes the model file of a fit (with the machine and library it was measured on) and
    says so."""
    from hypercuboid import modelfile

    modelfile.write(
        path, spec, source, fitted, modelfile.machine_info(_library(), comm.Get_size()), force=force
    )
    echo(f"model file      {path}: {spec}")


def _parse_time(text: str) -> float:
    """``0.35ns``, ``1.2us``, ``500ps`` (a bare number is ns: :mod:`hypercuboid.units`) as
    seconds."""
    from hypercuboid import units
    from hypercuboid.errors import UnitError

    try:
        return units.parse_time_f64(text) * 1e-12
    except UnitError as err:
        raise click.ClickException(str(err)) from None


if __name__ == "__main__":  # python -m hypercuboid.cli.bench ...
    bench()

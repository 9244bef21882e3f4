"""``hypercuboid validate`` (under mpiexec): ``predict``'s grid run for real, and how far the
prediction is from the measurement.

Run with ``mpiexec -n P hypercuboid validate ...``; rank 0 predicts, prints and writes files.
As for ``bench``, every check that could stop one rank is decided on rank 0 and shared, and an
error while messages are in flight aborts the job naming the rank. Ctrl-C keeps the sizes
measured so far: their rows are printed and written, and the job exits with status 130.
"""

from __future__ import annotations

import click

from hypercuboid.cli import options as cliopts
from hypercuboid.cli.bench import (
    RankZeroCommand,
    _agree,
    _iterations,
    _library,
    _outputs_free,
    _progress,
    _run_collective,
    _start,
    _sweep,
    _warmup,
    _world,
    timeout_option,
)
from hypercuboid.cli.common import echo_json
from hypercuboid.cli.predict import (
    GRID_OPTIONS,
    grid_algorithms,
    grid_model,
    grid_predict,
    grid_sizes_of,
)
from hypercuboid.predict import row_dict


@click.command("validate", cls=RankZeroCommand)
@cliopts.with_options(GRID_OPTIONS)
@click.option(
    "--runner",
    type=click.Choice(["native", "python"]),
    default="native",
    show_default=True,
    help="native: the compiled C runner, timed by its C loop (what the model should "
    "predict); python: the mpi4py engine and a Python loop.",
)
@click.option(
    "--calibrate",
    "calibrate_to",
    type=cliopts.OutFile(),
    default=None,
    metavar="FILE",
    help="Calibrate in this job first (calibrate's sizes; -i/-x apply to both), write the "
    "model file FILE and "
    "predict with it: the prediction then sees the ranks' placement the measurement sees "
    "(on a VM a message's cost can differ 2x from one launch to the next).",
)
@_iterations
@_warmup
@cliopts.json_option("The rows, the picks and the summary as JSON")
@cliopts.csv_option("The rows as CSV")
@cliopts.plot_option("Draw predicted against measured time, one colour per algorithm")
@cliopts.force_option()
@cliopts.quiet_option("No progress lines on stderr.")
@cliopts.progress_option()
@timeout_option
def validate(
    collective,
    algorithms,
    sizes,
    counts,
    dtype,
    model,
    model_file,
    node,
    subdomains,
    decomp,
    runner,
    calibrate_to,
    iterations,
    warmup,
    as_json,
    as_csv,
    plot,
    force,
    quiet,
    progress,
    timeout,
):
    """Run predict's grid for real on the job's ranks with the native runner and report, per
    row, the predicted time, the measured median (p25-p75) and the error (predicted / measured
    - 1); per size, whether the predicted-best algorithm is the measured-best and what the
    wrong pick costs (its measured time / the measured best - 1); and the median |error| and
    the picks right. --collective halo measures the halo exchanges of --subdomain. A reference
    exchange timed at the start and the end says whether the machine changed in between (a
    warning when it moved more than 25 %).

    \b
    mpiexec -n 2 hypercuboid bench pingpong --model-file postal.json
    mpiexec -n 2 hypercuboid validate --model-file postal.json -a recursive_doubling,ring
    mpiexec -n 2 hypercuboid validate --calibrate cal.json -a recursive_doubling,ring
    """
    from hypercuboid.mpi import validate as hv

    if as_json == "-" and as_csv == "-":
        raise click.ClickException("--json and --csv cannot both go to stdout; give one a FILE")
    if calibrate_to is not None and (model is not None or model_file is not None):
        raise click.ClickException("give --calibrate FILE or --model/--model-file, not both")
    algs = grid_algorithms(collective, algorithms)
    size_list, subs, dims = grid_sizes_of(collective, sizes, counts, dtype, subdomains, decomp)
    comm = _world()
    _start(comm, timeout, "hypercuboid validate")
    n = comm.Get_size()
    if n < 2:
        raise click.ClickException(
            "validate needs 2 or more ranks to measure a collective: mpiexec -n 2 hypercuboid "
            "validate ..."
        )
    _agree(comm, _outputs_free(force, as_json, as_csv, plot, calibrate_to))
    say = _progress(quiet, progress, comm)
    ref_on = _reference_on(comm)
    start = hv.measure_reference(comm, say) if ref_on else None
    if calibrate_to is not None:
        from hypercuboid.cli.calibrate import measure_and_write

        done = measure_and_write(
            comm, calibrate_to, force, iterations=iterations, warmup=warmup, say=say
        )
        if done is not None:
            for w in done[0].warnings:
                click.echo(f"warning: {w}", err=True)
        model_file = calibrate_to
    box: dict = {}

    def predicted() -> None:
        spec, mf = grid_model(model, model_file, [n], library=_library())
        box["p"] = grid_predict(collective, algs, size_list, subs, dims, [n], spec, mf, node, dtype)

    _agree(comm, predicted)
    p = comm.bcast(box.get("p"), root=0)
    measured, stopped = _run_collective(
        comm,
        lambda: _sweep(
            lambda s: hv.measure_grid(
                comm,
                p,
                s[0],
                iterations=iterations,
                warmup=warmup,
                runner=runner,
                progress=say,
            ),
            p.sizes,
        ),
        verb="validate",
    )
    end = hv.measure_reference(comm, say) if ref_on and not stopped else None
    if comm.Get_rank() != 0:
        if stopped:
            raise KeyboardInterrupt
        return
    ref = None if start is None else hv.reference(start, end)
    v = hv.report(p, measured, n, interrupted=stopped, ref=ref)
    if as_json:
        echo_json(v.to_dict(), as_json)
    if as_csv:
        from hypercuboid.mpi.report import write_csv

        rows = [row_dict(r) | {"collective": p.collective, "nranks": n} for r in v.rows]
        if as_csv == "-":
            cliopts.write_out("-", _csv_text(rows))
        else:
            write_csv(as_csv, rows)
    if plot:
        hv.plot(v, plot)
    if "-" not in (as_json, as_csv):
        click.echo(f"# {collective} on {n} ranks under {p.model}, {p.dtype}; {_library()}")
        click.echo(hv.text_table(v))
        if ref is not None:
            click.echo(ref.text())
        click.echo(v.summary() + (" (interrupted: the sizes measured so far)" if stopped else ""))
    if ref is not None and ref.warning is not None:
        click.echo(f"warning: {ref.warning}", err=True)
    if stopped:
        raise KeyboardInterrupt  # after the rows measured so far are out


def _reference_on(comm) -> bool:
    """Whether the reference exchanges are measured (by the native runner: not where it does
    not load), as rank 0 decides. Collective."""
    from hypercuboid.mpi import native

    return bool(comm.bcast(native.available() if comm.Get_rank() == 0 else None, root=0))


def _csv_text(rows: list[dict]) -> str:
    import tempfile
    from pathlib import Path

    from hypercuboid.mpi.report import write_csv

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d) / "rows.csv"
        write_csv(tmp, rows)
        return tmp.read_text(encoding="utf-8")

"""``hypercuboid trace``: record an unmodified MPI application, see where its time went, convert
its communication to a schedule and replay it under other algorithms, models and networks
(docs/trace.md)."""

from __future__ import annotations

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import echo_json, refuse_overwrite


@click.group()
def trace() -> None:
    """Record an MPI application (PMPI, LD_PRELOAD) and replay its communication."""


def _load(path: str):
    from hypercuboid.apptrace import AppTrace

    return AppTrace.load(path)


# the options of convert; whatif shares --compute-scale and --partial
_COMPUTE_SCALE = cliopts.compute_scale_option()
_PARTIAL = click.option(
    "--partial",
    is_flag=True,
    help="Use a trace whose ranks stop before MPI_Finalize (a crashed run) up to where they stop.",
)


def _collectives_option(help: str):
    """``--collectives default|library``: whether the recorded MPI library's choice of
    collective algorithms is used (convert) or compared (whatif)."""
    return click.option(
        "--collectives",
        type=click.Choice(["default", "library"], case_sensitive=False),
        default="default",
        show_default=True,
        help=help,
    )


_convert_options = cliopts.with_options(
    [
        _COMPUTE_SCALE,
        click.option(
            "--allreduce",
            default=None,
            metavar="ALG",
            help="Allreduce algorithm of the replay (schedule list) "
            f"[default: {_core.TRACE_DEFAULTS['allreduce']}].",
        ),
        click.option(
            "--alltoall",
            default=None,
            metavar="ALG",
            help=f"Alltoall algorithm of the replay [default: {_core.TRACE_DEFAULTS['alltoall']}].",
        ),
        cliopts.reduce_ns_option(
            "Compute cost of the collectives' local reductions, in ns per byte."
        ),
        _collectives_option(
            "library: each allreduce and alltoall whose algorithm is not given as the "
            "recorded MPI library (Open MPI or MPICH) would run it."
        ),
        _PARTIAL,
    ]
)


@trace.command(
    "run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option("--output", "-o", type=cliopts.OutFile(), required=True, help="The trace (.hct).")
@click.option(
    "--recorder",
    type=cliopts.InputFile(),
    default=None,
    help="The recorder to preload (default: libhc_trace.so of make native for the launcher's "
    "MPI, Open MPI or MPICH).",
)
@click.option(
    "--flush-bytes",
    type=cliopts.Size(),
    default=None,
    help="Records a rank keeps in memory before appending them to its file (default 4MiB): "
    "what a crash can lose.",
)
@cliopts.force_option("an existing --output file")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def run(output: str, recorder: str | None, flush_bytes: int | None, force: bool, command) -> None:
    """Run COMMAND (e.g. -- mpiexec -n 4 ./app) with every rank recorded, and pack the ranks'
    records into OUTPUT. Exits with COMMAND's status."""
    from hypercuboid.apptrace import AppTrace, record

    path = refuse_overwrite(output, force)
    try:
        res = record(list(command), path, library=recorder, flush_bytes=flush_bytes)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    t = AppTrace.load(path)
    state = "complete" if t.complete else "partial: " + "; ".join(t.stops)
    click.echo(
        f"wrote {path} ({t.nranks} ranks, {sum(len(t.calls(r)) for r in range(t.nranks))} "
        f"records, {state})",
        err=True,
    )
    if res.returncode != 0:
        raise SystemExit(res.returncode)


@trace.command("convert")
@click.argument("trace_file", metavar="TRACE", type=cliopts.InputFile())
@click.option(
    "--output", "-o", type=cliopts.OutFile(), default=None, help="Write to FILE, not stdout."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["goal", "text"], case_sensitive=False),
    default="goal",
    show_default=True,
    help="goal: LogGOPSim's txt2bin input; text: the lossless form.",
)
@_convert_options
@cliopts.force_option("an existing --output file")
def convert(trace_file, output, fmt, force, partial, collectives, **opts) -> None:
    """Convert a recorded run to a schedule (GOAL): compute gaps as calc ops, point-to-point
    as sends and receives, each collective expanded by an algorithm."""
    conv = _load(trace_file).convert(partial=partial, library=collectives == "library", **opts)
    if conv.note:
        click.echo(conv.note, err=True)
    s = conv.schedule
    if output is None:
        click.echo(s.to_goal() if fmt == "goal" else s.to_text(), nl=False)
        return
    path = refuse_overwrite(output, force)
    s.save(path, format=fmt, force=force)
    click.echo(
        f"wrote {path} ({s.nranks} ranks, {s.total_ops} ops from {conv.records} records, {fmt})",
        err=True,
    )


def _ms(ns: float) -> str:
    return f"{ns / 1e6:,.3f}"


@trace.command("show")
@click.argument("trace_file", metavar="TRACE", type=cliopts.InputFile())
@cliopts.json_option("Print JSON")
@cliopts.plot_option("Draw the point-to-point communication matrix (bytes) to FILE.")
@cliopts.force_option("existing --json and --plot files")
def show(trace_file, as_json, plot, force) -> None:
    """Where the run's time went: compute, point-to-point and each collective, per rank and in
    total (ms), and the bytes between rank pairs."""
    cliopts.outputs_free(force, as_json, plot)
    t = _load(trace_file)
    s = t.summary()
    used = [c for c, name in enumerate(s.categories) if any(row[c] for row in s.calls)]
    if as_json:
        echo_json(
            {
                "nranks": t.nranks,
                "library": t.library,
                "complete": t.complete,
                "stops": t.stops,
                "categories": [s.categories[c] for c in used],
                "time_ns": [[row[c] for c in used] for row in s.time_ns],
                "calls": [[row[c] for c in used] for row in s.calls],
                "total_ns": s.total_ns,
                "matrix": s.matrix,
            },
            as_json,
        )
    if plot is not None:
        from hypercuboid.apptrace import matrix_plot

        matrix_plot(s.matrix, plot, title=f"{trace_file}: point-to-point bytes")
    if as_json == "-":
        return
    click.echo(f"{trace_file}: {t.nranks} ranks, {t.library.split(',')[0]}")
    if not t.complete:
        click.echo("partial: " + "; ".join(t.stops))
    names = [s.categories[c] for c in used]
    width = max([len(n) for n in names] + [10])
    click.echo(f"{'ms':>6} " + " ".join(f"{n:>{width}}" for n in names) + f" {'total':>{width}}")
    for r in range(t.nranks):
        cells = " ".join(f"{_ms(s.time_ns[r][c]):>{width}}" for c in used)
        click.echo(f"rank {r:<1} " + cells + f" {_ms(s.total_ns[r]):>{width}}")
    sums = " ".join(f"{_ms(sum(row[c] for row in s.time_ns)):>{width}}" for c in used)
    click.echo(f"{'all':>6} " + sums + f" {_ms(sum(s.total_ns)):>{width}}")
    if plot is not None:
        click.echo(f"matrix plot {plot}")


def _choices(text: str | None, option: str) -> list[str | None]:
    """The algorithms of a comma-separated option, or the default alone (None)."""
    if text is None:
        return [None]
    return list(cliopts.split_list(text, option))


@trace.command("whatif")
@click.argument("trace_file", metavar="TRACE", type=cliopts.InputFile())
@click.option(
    "--allreduce", default=None, metavar="ALG[,ALG...]", help="Allreduce algorithms to compare."
)
@click.option(
    "--alltoall", default=None, metavar="ALG[,ALG...]", help="Alltoall algorithms to compare."
)
@click.option("--model", "-m", default=None, help="The cost model (a spec).")
@click.option("--model-file", type=cliopts.InputFile(), default=None, help="A model file (JSON).")
@cliopts.topo_option("Replay on this network (a topology spec) instead of a cost model.")
@_COMPUTE_SCALE
@_collectives_option(
    "library: also the choice the recorded MPI library would make (allreduce, alltoall)."
)
@_PARTIAL
@cliopts.json_option("Print JSON")
@cliopts.plot_option("Draw the predicted time of each choice to FILE.")
@cliopts.force_option("existing --json and --plot files")
def whatif(
    trace_file,
    allreduce,
    alltoall,
    model,
    model_file,
    topo_spec,
    compute_scale,
    collectives,
    partial,
    as_json,
    plot,
    force,
) -> None:
    """Predicted application time for each choice of collective algorithms (every allreduce
    with every alltoall), on a cost model or a network, beside the measured time."""
    cliopts.outputs_free(force, as_json, plot)
    if model is not None and model_file is not None:
        raise click.ClickException("give --model or --model-file, not both")
    if model_file is not None:
        from hypercuboid.modelfile import load

        model = load(model_file)
    network = topo_spec
    if model is None and network is None:
        raise click.ClickException("missing --model, --model-file or --topo")
    t = _load(trace_file)
    rows = []
    measured = None
    lib = t.library.split(",")[0]
    choices = [
        (ar, aa, False)
        for ar in _choices(allreduce, "--allreduce")
        for aa in _choices(alltoall, "--alltoall")
    ]
    if collectives == "library":
        choices.append((None, None, True))
    for ar, aa, by_library in choices:
        conv = t.convert(
            allreduce=ar,
            alltoall=aa,
            compute_scale=compute_scale,
            partial=partial,
            library=by_library,
        )
        measured = conv.measured_ns
        kw = {"network": network} if network is not None else {}
        res = conv.schedule.simulate(model, **kw)
        rows.append(
            {
                "allreduce": f"{lib}'s" if by_library else ar or _core.TRACE_DEFAULTS["allreduce"],
                "alltoall": f"{lib}'s" if by_library else aa or _core.TRACE_DEFAULTS["alltoall"],
                "predicted_ns": res.completion_time_ns,
                "messages": res.messages,
            }
        )
    if as_json:
        echo_json(
            {
                "trace": trace_file,
                "nranks": t.nranks,
                "model": model,
                "topology": network,
                "measured_ns": measured,
                "choices": rows,
            },
            as_json,
        )
    if plot is not None:
        from hypercuboid.plot import bar_comparison

        bar_comparison(
            [f"measured ({t.library.split(',')[0]})"]
            + [f"{r['allreduce']} / {r['alltoall']}" for r in rows],
            [measured or 0.0] + [r["predicted_ns"] for r in rows],
            plot,
            title=f"{trace_file}: predicted application time",
        )
    if as_json == "-":
        return
    click.echo(f"{'allreduce':<24} {'alltoall':<18} {'predicted ms':>14} {'messages':>10}")
    for r in rows:
        click.echo(
            f"{r['allreduce']:<24} {r['alltoall']:<18} {_ms(r['predicted_ns']):>14} "
            f"{r['messages']:>10}"
        )
    click.echo(f"{'measured':<43} {_ms(measured or 0):>14}")


@trace.command("export")
@click.argument("trace_file", metavar="TRACE", type=cliopts.InputFile())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["chrome"], case_sensitive=False),
    default="chrome",
    show_default=True,
    help="chrome: Chrome / Perfetto JSON (ui.perfetto.dev), one track per rank.",
)
@click.option("--output", "-o", type=cliopts.OutFile(), required=True, help="The file to write.")
@cliopts.force_option("an existing --output file")
def export(trace_file, fmt, output, force) -> None:
    """Export the recorded calls for a trace viewer."""
    path = refuse_overwrite(output, force)
    t = _load(trace_file)
    t.export_chrome(path, force=force)
    click.echo(f"wrote {path} ({t.nranks} ranks, {fmt})", err=True)

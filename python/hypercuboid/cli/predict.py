"""``hypercuboid predict``: every algorithm of a collective x sizes x rank counts under one
model, the best of each size marked; JSON, CSV, a plot and the PMPI library's decision table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import echo_json
from hypercuboid.cli.simulate import MODEL_HELP, model_options
from hypercuboid.predict import HALO, HALO_SUBDOMAINS

if TYPE_CHECKING:
    from hypercuboid.predict import ModelFile


def _collectives() -> list[str]:
    from hypercuboid.predict import collectives

    return collectives()


#: The sizes of a grid given neither --sizes nor --count.
DEFAULT_SIZES = "8,1K,64K,1M"

#: The subdomains of a halo grid given no --subdomain.
DEFAULT_SUBDOMAINS = ",".join("x".join(map(str, s)) for s in HALO_SUBDOMAINS)

#: The options ``predict`` and ``validate`` share: what the grid is and the model.
GRID_OPTIONS: list[Callable] = [
    click.option(
        "--collective",
        type=click.Choice(_collectives()),
        default="allreduce",
        show_default=True,
        help="The collective whose algorithms are compared.",
    ),
    click.option(
        "--algorithm",
        "-a",
        "algorithms",
        default=None,
        help="Comma list of algorithms (a schedule string's own commas are kept; ';' also "
        "separates) [default: every registered algorithm of the collective that runs from its "
        "name, recursive_multiplying:auto for recursive multiplying].",
    ),
    click.option(
        "--sizes",
        default=None,
        help="Sizes in bytes (of each rank's vector; per pair of ranks for alltoall): MIN:MAX "
        f"(powers of two) or a list 8,1K,1M [default: {DEFAULT_SIZES}].",
    ),
    click.option(
        "--count",
        "-c",
        "counts",
        type=cliopts.COUNT,
        multiple=True,
        help="Elements per rank (per pair of ranks for alltoall) instead of --sizes; repeat for "
        "several.",
    ),
    click.option(
        "--dtype",
        default=None,
        help="Element type [default: float64 for allreduce, uint8 for alltoall].",
    ),
    *model_options("'hypercuboid bench pingpong' or 'calibrate'"),
    click.option(
        "--node",
        default=None,
        help="The node level on top of a loggops host model (node:ranks=R,bw=BW[,nic=BW]"
        "[,map=block|round_robin]): ranks of a node share its bandwidth (docs/simulate.md).",
    ),
    click.option(
        "--subdomain",
        "subdomains",
        default=None,
        help="halo: the sizes, sites of every rank's subdomain, a comma list of AxBxC or N "
        f"(NxNxN) [default: {DEFAULT_SUBDOMAINS}].",
    ),
    click.option(
        "--decomp",
        default=None,
        help="halo: ranks along x, y, z as PxQxR [default: as close to cubic as possible, "
        "MPI_Dims_create].",
    ),
]


def grid_sizes_of(
    collective: str,
    sizes: str | None,
    counts: Sequence[int],
    dtype: str | None,
    subdomains: str | None,
    decomp: str | None,
) -> tuple[list[int], list[tuple[int, int, int]] | None, tuple[int, int, int] | None]:
    """The grid's sizes in bytes (:func:`grid_sizes`; none for a halo grid), and a halo grid's
    subdomains and decomposition (None for a collective's)."""
    if collective != HALO:
        for given, opt in ((subdomains, "--subdomain"), (decomp, "--decomp")):
            if given is not None:
                raise click.ClickException(
                    f"{opt} is for --collective halo, not {collective}; a collective's sizes "
                    "are --sizes or --count"
                )
        return grid_sizes(sizes, counts, collective, dtype), None, None
    if sizes is not None or counts:
        raise click.ClickException(
            f"{'--sizes' if sizes is not None else '--count'}: a halo grid's sizes are "
            "subdomains; give --subdomain (a comma list of AxBxC or N sites per rank)"
        )
    from hypercuboid.predict import parse_subdomains

    subs = parse_subdomains(subdomains if subdomains is not None else DEFAULT_SUBDOMAINS)
    return [], subs, None if decomp is None else cliopts.dims(decomp, "--decomp")


def grid_predict(
    collective: str,
    algorithms: list[str] | None,
    sizes: list[int],
    subdomains: list[tuple[int, int, int]] | None,
    decomp: tuple[int, int, int] | None,
    ranks: list[int],
    spec: str,
    mf: ModelFile | None,
    node: str | None,
    dtype: str | None,
    threads: int = 0,
):
    """The grid's :class:`~hypercuboid.predict.Prediction`: :func:`hypercuboid.predict.predict`
    of a collective, :func:`hypercuboid.predict.predict_halo` of a halo grid (``subdomains``);
    a model file's node level, tuning model and call where it has them."""
    import hypercuboid.predict as hp

    node = node if node is not None or mf is None else mf.node
    call = None if mf is None else mf.call
    if subdomains is not None:
        return hp.predict_halo(
            subdomains, ranks, spec, variants=algorithms, decomp=decomp, dtype=dtype, node=node,
            call=call,
        )  # fmt: skip
    return hp.predict(
        collective, sizes, ranks, spec, algorithms=algorithms, dtype=dtype, threads=threads,
        node=node, tuning=None if mf is None else mf.tuning, call=call,
    )  # fmt: skip


def grid_algorithms(collective: str, text: str | None) -> list[str] | None:
    """The ``--algorithm`` list (None: the collective's defaults)."""
    if text is None:
        return None
    from hypercuboid.cli.bench import _algorithms
    from hypercuboid.predict import algorithms
    from hypercuboid.schedules import algorithms as registry

    known = [a.name for a in registry(collective)] + algorithms(collective)
    return _algorithms(text, known)


def grid_sizes(text: str | None, counts: Sequence[int], collective: str, dtype: str | None):
    """The sizes in bytes: ``--sizes``, or ``--count`` elements of the grid's element type."""
    from hypercuboid import _core
    from hypercuboid.cli.bench import _sizes

    if counts and text is not None:
        raise click.ClickException("give --sizes or --count, not both")
    if not counts:
        return _sizes(text if text is not None else DEFAULT_SIZES)
    from hypercuboid.predict import default_dtype

    name = dtype or default_dtype(collective)
    sizes = dict(_core.DTYPES)
    if name not in sizes:
        raise click.ClickException(f"--dtype '{name}'; accepted: {', '.join(sizes)}")
    return sorted({c * sizes[name] for c in counts})


def grid_model(model: str | None, model_file: str | None, ranks: Sequence[int], library=None):
    """The model spec, and the model file read (None without one; its ``node`` is the node
    level unless ``--node`` is given) with its mismatches (another MPI library, other rank
    counts) printed as warnings on stderr."""
    if model is not None and model_file is not None:
        raise click.ClickException("give --model or --model-file, not both")
    if model is None and model_file is None:
        raise click.ClickException("missing --model (or --model-file); " + MODEL_HELP)
    if model_file is None:
        return model, None
    from hypercuboid.predict import read_model_file

    mf = read_model_file(model_file)
    echo_mismatches(mf, ranks, library)
    return mf.model, mf


def echo_mismatches(mf: ModelFile, ranks: Sequence[int], library: str | None = None) -> None:
    """A model file's mismatches with where it is used (another MPI library, other rank
    counts), one warning line each on stderr."""
    from hypercuboid.predict import mismatches

    for m in mismatches(mf, library=library, ranks=ranks):
        click.echo(f"warning: {m}", err=True)


@click.command("predict")
@click.option(
    "--ranks",
    "-n",
    "nranks",
    type=cliopts.RANKS,
    multiple=True,
    required=True,
    help="Number of ranks (repeat for several: -n 2 -n 16).",
)
@cliopts.with_options(GRID_OPTIONS)
@cliopts.threads_option("Threads the grid runs on (0: every core; the result is the same)")
@cliopts.json_option()
@cliopts.csv_option("One row per grid point as CSV")
@cliopts.plot_option("Draw predicted time against size, one line per algorithm")
@click.option(
    "--emit-table",
    type=cliopts.OutFile(),
    default=None,
    metavar="FILE",
    help="Write the PMPI library's decision table (allreduce: size ranges -> the best "
    "algorithm) for HYPERCUBOID_ALLREDUCE_TABLE.",
)
@cliopts.force_option("existing --json, --csv, --plot, --emit-table files")
@cliopts.quiet_option()
@cliopts.progress_option()
def predict(
    nranks,
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
    threads,
    as_json,
    as_csv,
    plot,
    emit_table,
    force,
    quiet,
    progress,
):
    """Simulate every algorithm of a collective at every size and rank count under one model
    (the comparison otherwise written as loops over 'simulate') and mark the best of each
    size. 'validate' runs the same grid for real; 'tune' and the PMPI library's table
    (--emit-table) choose what this marks best."""
    import hypercuboid.predict as hp

    if as_json == "-" and as_csv == "-":
        raise click.ClickException("--json and --csv cannot both go to stdout; give one a FILE")
    if emit_table is not None and collective != "allreduce":
        raise click.ClickException(
            f"--emit-table: the PMPI library's table is for allreduce, not {collective}"
        )
    cliopts.outputs_free(force, as_json, as_csv, plot, emit_table)
    ranks = list(dict.fromkeys(nranks))
    algs = grid_algorithms(collective, algorithms)
    size_list, subs, dims = grid_sizes_of(collective, sizes, counts, dtype, subdomains, decomp)
    spec, mf = grid_model(model, model_file, ranks)
    say = cliopts.Progress(quiet, progress)
    npoints = len(algs or hp.algorithms(collective)) * len(subs or size_list) * len(ranks)
    say(f"predicting {npoints} points of {collective}")
    p = grid_predict(
        collective, algs, size_list, subs, dims, ranks, spec, mf, node, dtype, threads or 0
    )
    say("done")
    if as_json:
        echo_json(p.to_dict(), as_json)
    if as_csv:
        cliopts.write_out(as_csv, hp.csv_text(p))
    if plot:
        hp.plot(p, plot)
    if emit_table:
        hp.write_table(p, emit_table, force=force)
    if "-" in (as_json, as_csv):
        return
    what = "; a size is a rank's subdomain" if subs is not None else ""
    click.echo(
        f"# {collective} under {p.model}, {p.dtype}; times in us, * the best of each size{what}"
    )
    decomps = {r.nranks: f" ({r.decomp})" for r in p.rows if r.decomp is not None}
    for n in p.ranks:
        click.echo(f"## {n} rank{'s' if n != 1 else ''}{decomps.get(n, '')}")
        click.echo(hp.text_table(p, n))
    failed = [r for r in p.rows if r.error]
    if failed:
        r = failed[0]
        click.echo(
            f"- : {len(failed)} point(s) cannot run, e.g. {r.algorithm} on {r.nranks} ranks: "
            f"{r.error}"
        )
    for dest, what in ((as_json, "json"), (as_csv, "csv"), (plot, "plot"), (emit_table, "table")):
        if dest:
            click.echo(f"{what:<6} {dest}")

"""``hypercuboid alltoall``: contention-free phases of the all-to-all exchange on a topology."""

from __future__ import annotations

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import echo_json

#: Phases printed in the text output before the rest is summarised (``--show``).
DEFAULT_SHOW = 64


@click.group()
def alltoall() -> None:
    """All-to-all personalized communication on a topology (Faraj and Yuan's phases)."""


def _method_help() -> str:
    return "; ".join(f"{c.name}: {c.help}" for c in _core.choices("alltoall phase method"))


def _routing_help() -> str:
    return "; ".join(f"{c.name}: {c.help}" for c in _core.choices("alltoall phase routing"))


@alltoall.command("phases")
@cliopts.topo_option(
    "Topology spec: tree:fig1, tree:fig5b, tree:FILE.json, fattree:k=4,levels=3, "
    "slimfly:q=5, torus:dims=8x8, ... (see `hypercuboid topo list`).",
    required=True,
)
@click.option(
    "--method",
    default="auto",
    show_default=True,
    help=f"How the phases are built. {_method_help()}.",
)
@click.option(
    "--routing",
    "-r",
    default=_core.choices("alltoall phase routing")[0].name,
    show_default=True,
    help=f"Deterministic minimal routing off trees. {_routing_help()}.",
)
@cliopts.json_option("Print one JSON object (with the phases)")
@cliopts.plot_option("Draw the phase x link occupancy", name="plot_path")
@click.option(
    "--show",
    type=click.IntRange(min=0),
    default=DEFAULT_SHOW,
    show_default=True,
    help="Phases listed in the text output (0: all).",
)
@cliopts.force_option("existing --plot and --json files")
@cliopts.quiet_option()
@cliopts.progress_option()
def phases_cmd(
    topo_spec: str,
    method: str,
    routing: str,
    as_json: str | None,
    plot_path: str | None,
    show: int,
    force: bool,
    quiet: bool,
    progress: bool | None,
) -> None:
    """Contention-free phases of the all-to-all exchange on a topology.

    On a tree of switches with machines as leaves: the Faraj-Yuan schedule, as many phases as
    the bottleneck load |M0|x(|M|-|M0|). Elsewhere: a heuristic (first fit, iterated greedy, tabu
    search) under a deterministic minimal routing, against its lower bound (the largest
    directed-link load). Prints the
    phases, the load, the root and the three checks (complete, contention-free, optimal).
    Machines are numbered in the topology's endpoint order.
    """
    from hypercuboid import phases

    cliopts.outputs_free(force, plot_path, as_json)
    say = cliopts.Progress(quiet, progress)
    say(f"building the phases on {topo_spec} ({method})")
    r = phases.alltoall_phases(topo_spec, method, routing)
    say(f"{r.phases} phases")
    if plot_path is not None:
        phases.plot_occupancy(r, plot_path)
    if as_json:
        echo_json(phases.to_dict(r), as_json)
    if as_json == "-":
        return
    _print_text(r, show)
    if plot_path is not None:
        click.echo(f"occupancy plot: {plot_path}")


def _print_text(r, show: int) -> None:
    def yes(ok: bool) -> str:
        return "yes" if ok else "NO"

    complete, contention, optimal = r.violations
    rows = [
        ("topology", r.topology),
        ("method", r.method + ("" if r.subtrees else f" (routing {r.routing})")),
        ("machines", f"{r.machines} ({r.messages} messages)"),
        ("phases", f"{r.phases}"),
        ("load", f"{r.load} (lower bound on phases: the most messages on one directed link)"),
        ("gap", f"{r.gap} phases ({r.ratio:.3f} x the lower bound)"),
    ]
    if r.root is not None:
        rows.append(("root", r.root))
    if r.subtrees:
        sizes = ", ".join(f"t{i}: {len(s)}" for i, s in enumerate(r.subtrees))
        rows.append(("subtrees", sizes))
    rows.append(("complete", yes(r.complete) + (f" ({complete})" if complete else "")))
    rows.append(
        ("contention-free", yes(r.contention_free) + (f" ({contention})" if contention else ""))
    )
    rows.append(("optimal", yes(r.optimal) + (f" ({optimal})" if optimal else "")))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        click.echo(f"{k:<{width}}  {v}")
    sched = r.schedule()
    limit = len(sched) if show == 0 else min(show, len(sched))
    click.echo("")
    pw = len(str(max(len(sched) - 1, 0)))
    for p in range(limit):
        msgs = " ".join(f"{s}->{d}" for s, d in sched[p])
        click.echo(f"phase {p:>{pw}}: {msgs}")
    if limit < len(sched):
        click.echo(f"... {len(sched) - limit} more phases (--show 0 lists all, --json prints all)")


def _topo_option(f):
    return cliopts.topo_option(
        "The cluster: tree:PRESET (fig1, fig5a, fig5b, fig5c), tree:FILE.json, or any "
        "topology spec (the phase heuristic off trees).",
        required=True,
    )(f)


def _mapping_option(f):
    return click.option(
        "--mapping",
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help="The machine of every rank: one machine name (or index) a line, as a hostfile "
        "gives them ('#' comments). Default: rank r on machine r, one rank per machine.",
    )(f)


@alltoall.command("sync")
@_topo_option
@_mapping_option
@click.option(
    "--check",
    is_flag=True,
    help="Build every variant's schedule and check that its dependencies enforce the phases "
    "(happens-before between every pair of contending messages in different phases).",
)
@cliopts.json_output()
def sync_cmd(
    topo_spec: str, mapping: str | None, check: bool, as_json: str | None, force: bool
) -> None:
    """Synchronisation messages that keep the phases of `scheduled` apart (seed, section 5).

    pairwise: a zero-byte message a->c after a->b whenever a->b (phase p) and c->d (phase q > p)
    share a link; pairwise-reduced: the same without redundant synchronisations (a transitive
    reduction of the dependence graph); barrier: dissemination barriers between phases. With
    --check, exits 1 when a synchronising variant does not enforce the phases.
    """
    from hypercuboid import phases

    cliopts.outputs_free(force, as_json)
    r = phases.sync_counts(topo_spec, mapping, check)
    if as_json:
        echo_json(r.to_dict(), as_json)
    if as_json != "-":
        rows = [
            ("topology", r.topology),
            ("ranks", f"{r.ranks} ({r.messages} messages in {r.phases} phases)"),
            ("pairwise", f"{r.pairwise} synchronisation messages (before the reduction)"),
            ("pairwise-reduced", f"{r.pairwise_reduced} (after it)"),
            ("barrier", f"{r.barrier} zero-byte messages ({max(r.phases - 1, 0)} barriers)"),
        ]
        for name, c in r.checks.items():
            verdict = (
                f"enforces the phases ({c.pairs} pairs of contending messages)"
                if c.ok
                else f"does NOT enforce {c.violated} of {c.pairs} pairs; first: {c.violation}"
            )
            rows.append((f"check {name}", verdict))
        width = max(len(k) for k, _ in rows)
        for k, v in rows:
            click.echo(f"{k:<{width}}  {v}")
    if any(not c.ok for name, c in r.checks.items() if name != "none"):
        raise SystemExit(1)


@alltoall.command("generate")
@_topo_option
@_mapping_option
@cliopts.choice_option(
    "--sync",
    choices=[c.name for c in _core.choices("sync")],
    default="pairwise-reduced",
    help="How the phases are kept apart.",
    case_sensitive=False,
)
@click.option(
    "--min-size",
    default="0",
    show_default=True,
    metavar="BYTES",
    help="Blocks below this size (sendcount x type size; 32KB, 1MiB, ...) go to the library's "
    "MPI_Alltoall.",
)
@click.option("-o", "--output", required=True, type=cliopts.OutFile(), metavar="FILE")
@click.option("--pmpi", is_flag=True, help="Also define MPI_Alltoall, calling the routine.")
@click.option("--name", default="hc_alltoall", show_default=True, help="The routine's name.")
@click.option(
    "--compile",
    "compile_check",
    is_flag=True,
    help="Check that the file compiles: mpicc -c (HYPERCUBOID_MPICC, the venv's, or PATH).",
)
@cliopts.force_option("an existing -o file")
def generate_cmd(
    topo_spec: str,
    mapping: str | None,
    sync: str,
    min_size: str,
    output: str,
    pmpi: bool,
    name: str,
    compile_check: bool,
    force: bool,
) -> None:
    """Write a self-contained C file with an MPI_Alltoall routine for a cluster (the seed's
    automatic routine generator): int NAME(const void *sendbuf, int sendcount, MPI_Datatype
    sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm), the
    contention-free phases on point-to-point calls."""
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    from hypercuboid import phases
    from hypercuboid.errors import HypercuboidError
    from hypercuboid.units import parse_size

    try:
        min_bytes = parse_size(min_size)
    except (HypercuboidError, ValueError) as e:
        raise click.UsageError(f"--min-size {min_size}: {e}") from None
    argv = ["hypercuboid", "alltoall", "generate", *sys.argv[3:]] if len(sys.argv) > 3 else []
    r = phases.alltoall_routine(
        topo_spec,
        mapping=mapping,
        sync=sync,
        min_size=min_bytes,
        pmpi=pmpi,
        name=name,
        provenance=" ".join(shlex.quote(a) for a in argv)
        or f"hypercuboid alltoall generate --topo {topo_spec} --sync {sync}",
    )
    cliopts.outputs_free(force, output)  # after the inputs are checked, before anything is written
    Path(output).write_text(r.text)
    click.echo(
        f"wrote {output}: {name} for {r.ranks} ranks, {r.phases} phases, {r.messages} messages, "
        f"{r.syncs} synchronisation messages (sync={sync}), library below {min_bytes} bytes"
        + (", MPI_Alltoall defined" if pmpi else "")
    )
    if compile_check:
        from hypercuboid.errors import MPIError
        from hypercuboid.mpi.native import find_mpicc

        try:
            mpicc = find_mpicc()
        except MPIError as e:
            raise click.ClickException(f"cannot check that {output} compiles: {e}") from None
        obj = Path(output).with_suffix(".o")
        try:
            done = subprocess.run(
                [mpicc, "-c", "-Wall", str(output), "-o", str(obj)],
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError as e:
            raise click.ClickException(f"{mpicc} cannot run: {e.strerror}") from None
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["(no message)"])[0]
            raise click.ClickException(f"{output} does not compile with {mpicc}: {first}")
        click.echo(f"compiled: {obj}")

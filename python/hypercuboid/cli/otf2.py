"""``hypercuboid schedule import-otf2``: an OTF2 archive (Score-P) as a GOAL schedule."""

from __future__ import annotations

import click

from hypercuboid.cli import options as cliopts
from hypercuboid.cli.library import _libraries


@click.command("import-otf2")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=cliopts.OutFile(), help="GOAL file (default stdout).")
@click.option(
    "--allreduce",
    default="recursive_doubling",
    show_default=True,
    help="The algorithm an allreduce (and a barrier, as 1 B) is expanded into.",
)
@click.option(
    "--alltoall",
    default="pairwise",
    show_default=True,
    help="The algorithm an alltoall is expanded into.",
)
@click.option(
    "--library",
    type=click.Choice(_libraries(), case_sensitive=False),
    default=None,
    help="Expand each collective into what this MPI library would run (instead of "
    "--allreduce and --alltoall).",
)
@cliopts.compute_scale_option()
@cliopts.force_option("an existing -o file")
def import_otf2(
    archive: str,
    output: str | None,
    allreduce: str,
    alltoall: str,
    library: str | None,
    compute_scale: float,
    force: bool,
) -> None:
    """Convert the MPI events of an OTF2 ARCHIVE (its .otf2 anchor file, as Score-P writes
    it) to a GOAL schedule: point-to-point calls become sends and receives in program order,
    collectives are expanded through the registry, and the time between MPI calls becomes
    calc. The result passes schedule verify; docs/otf2.md says what is read."""
    from hypercuboid.otf2_import import otf2_to_goal

    cliopts.outputs_free(force, output)
    text = otf2_to_goal(
        archive,
        allreduce=allreduce,
        alltoall=alltoall,
        library=library,
        compute_scale=compute_scale,
    )
    if output is None:
        click.echo(text, nl=False)
    else:
        cliopts.write_out(output, text)
        click.echo(f"wrote {output}", err=True)

"""``hypercuboid demo``: the showcase."""

from __future__ import annotations

import click

from hypercuboid.cli import options as cliopts


@click.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="demo-out",
    show_default=True,
    help="Directory for the demo's files and pictures (created; only the demo's own files are "
    "written).",
)
@click.option(
    "--scale",
    "big_log2",
    type=click.IntRange(4, 22),
    default=18,
    show_default=True,
    help="log2 of the rank count of the scale run.",
)
@click.option(
    "--small",
    is_flag=True,
    help="Run the alltoall, Slim Fly and halo sections at small sizes (seconds).",
)
@click.option(
    "--mpi/--no-mpi",
    default=True,
    show_default=True,
    help="Run the section under mpiexec (skipped with a note when mpiexec is not available).",
)
@cliopts.quiet_option("Print nothing but errors.")
@cliopts.progress_option()
def demo(
    out: str, big_log2: int, small: bool, mpi: bool, quiet: bool, progress: bool | None
) -> None:
    """A short tour of the toolkit: allreduce schedules verified, simulated, drawn and scaled;
    alltoall phases on a switched tree and on Ethernet, and what MPI libraries would run; a
    Slim Fly at packet and flow level, exported for SimGrid; the halo exchanges; and under
    mpiexec: benchmarks, the LBM proxy, calibrate and predict, and a recorded trace."""
    from hypercuboid.demo import run

    say = cliopts.Progress(quiet, progress)
    say(f"demo: writing into {out}/")
    run(
        out,
        big_log2=big_log2,
        small=small,
        mpi=mpi,
        echo=(lambda *a, **k: None) if quiet else click.echo,
    )
    say("demo: done")

"""``hypercuboid demo``: the showcase."""

from __future__ import annotations

import click

from hypercuboid.cli import options as cliopts


@click.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="hypercuboid-demo",
    show_default=True,
    help="Directory for the demo's files (created; only the demo's own files are written).",
)
@click.option(
    "--scale",
    "big_log2",
    type=click.IntRange(4, 22),
    default=18,
    show_default=True,
    help="log2 of the rank count of the scale run.",
)
@cliopts.quiet_option("Print nothing but errors.")
@cliopts.progress_option()
def demo(out: str, big_log2: int, quiet: bool, progress: bool | None) -> None:
    """A short tour: verify, simulate, draw and scale the classic allreduce family."""
    from hypercuboid.demo import run

    say = cliopts.Progress(quiet, progress)
    say(f"demo: writing into {out}/")
    run(out, big_log2=big_log2, echo=(lambda *a, **k: None) if quiet else click.echo)
    say("demo: done")

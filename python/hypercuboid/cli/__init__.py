"""The ``hypercuboid`` command line."""

from __future__ import annotations

import click

from hypercuboid import __version__, _core
from hypercuboid.cli.common import HypercuboidGroup
from hypercuboid.cli.options import Size


@click.group(cls=HypercuboidGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hypercuboid")
@click.option(
    "--memory-limit",
    type=Size(),
    default=None,
    metavar="SIZE",
    help="Refuse a run whose memory estimate exceeds SIZE (e.g. 8GiB) instead of the memory "
    "the machine has available.",
)
def cli(memory_limit: int | None) -> None:
    """Design, verify, simulate and run the communication of HPC programs.

    Every verb speaks one vocabulary of options (docs/cli.md)."""
    if memory_limit is not None:
        before = _core.memory_limit()
        _core.set_memory_limit(memory_limit)
        click.get_current_context().call_on_close(lambda: _core.set_memory_limit(before))


from hypercuboid.cli.alltoall import alltoall  # noqa: E402
from hypercuboid.cli.bench import bench  # noqa: E402
from hypercuboid.cli.calibrate import calibrate  # noqa: E402
from hypercuboid.cli.demo import demo  # noqa: E402
from hypercuboid.cli.lbm import lbm  # noqa: E402
from hypercuboid.cli.library import library_cmd  # noqa: E402
from hypercuboid.cli.netsim import netsim  # noqa: E402
from hypercuboid.cli.otf2 import import_otf2  # noqa: E402
from hypercuboid.cli.predict import predict  # noqa: E402
from hypercuboid.cli.schedule import schedule  # noqa: E402
from hypercuboid.cli.simulate import simulate  # noqa: E402
from hypercuboid.cli.topo import topo  # noqa: E402
from hypercuboid.cli.trace import trace  # noqa: E402
from hypercuboid.cli.tune import tune  # noqa: E402
from hypercuboid.cli.validate import validate  # noqa: E402

cli.add_command(alltoall)
cli.add_command(bench)
cli.add_command(calibrate)
cli.add_command(demo)
cli.add_command(schedule)
cli.add_command(simulate)
cli.add_command(topo)
cli.add_command(tune)
cli.add_command(netsim)
cli.add_command(lbm)
cli.add_command(trace)
schedule.add_command(library_cmd)
schedule.add_command(import_otf2)
cli.add_command(predict)
cli.add_command(validate)


def main() -> None:
    """Entry point of the ``hypercuboid`` script."""
    cli()

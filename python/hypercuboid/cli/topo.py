"""``hypercuboid topo``: generate, analyse, compare and export topologies."""

from __future__ import annotations

import click


@click.group()
def topo() -> None:
    """Generate, analyse, compare and export network topologies."""

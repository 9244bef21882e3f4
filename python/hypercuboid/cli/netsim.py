"""``hypercuboid netsim``."""

from __future__ import annotations

import click


@click.group()
def netsim() -> None:
    """Simulate traffic on a network topology with routing."""

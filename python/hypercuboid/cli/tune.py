"""``hypercuboid tune``."""

from __future__ import annotations

import click


@click.group()
def tune() -> None:
    """Choose the best schedule for a machine model."""

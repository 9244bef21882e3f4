"""SimGrid platform XML: write a topology for SimGrid/SMPI, read a SimGrid user's platform.

The core does both (``hypercuboid_core::topology::simgrid``); docs/simgrid.md says what is
written and which subset of the platform format is read."""

from __future__ import annotations

import os

from hypercuboid import _core
from hypercuboid.errors import TopologyError

#: The spec prefix of a SimGrid platform file (``simgrid:platform.xml``).
PREFIX = "simgrid:"


def simgrid_path(spec: str) -> str | None:
    """The platform file a spec names: ``simgrid:FILE``, or a bare path ending in ``.xml``."""
    if spec.startswith(PREFIX):
        return spec[len(PREFIX) :]
    if spec.lower().endswith(".xml") and ":" not in spec.split("/")[-1]:
        return spec
    return None


def read_simgrid(path: str | os.PathLike[str]):
    """Reads a SimGrid platform file (version 4.1) into a topology."""
    path = os.fspath(path)
    try:
        text = _core.read_text(path)  # bounded: /dev/zero is refused, not read on
    except OSError as err:
        raise TopologyError(f"cannot access '{path}': {err.strerror}") from None
    return _core.topology_from_simgrid(text, path)


def to_simgrid(topology) -> str:
    """The topology as a SimGrid platform (``<platform version="4.1">``, one Floyd zone)."""
    return _core.topology_to_simgrid(topology)

"""Exceptions raised by hypercuboid.

Every error derives from :class:`HypercuboidError`. Errors caused by bad user input (a malformed
schedule string, an impossible topology parameter, an unknown name) also derive from
:class:`ValueError`, so ``except ValueError`` catches them as a Python user expects.
"""

from __future__ import annotations


class HypercuboidError(Exception):
    """Base class of every hypercuboid error."""


class ScheduleError(HypercuboidError, ValueError):
    """A schedule that cannot be built, generated, read or written as asked."""


class ModelError(HypercuboidError, ValueError):
    """A cost-model or noise specification that is malformed or out of range."""


class SimulationError(HypercuboidError):
    """A simulation that cannot complete (for example a deadlocked schedule)."""


class VerificationError(HypercuboidError):
    """A schedule that fails verification where a sound one is required."""


class TopologyError(HypercuboidError, ValueError):
    """A topology that cannot be generated, read or analysed with the given parameters."""


class NetworkError(HypercuboidError, ValueError):
    """A network simulation that is misconfigured or cannot proceed."""


class UnitError(HypercuboidError, ValueError):
    """A time, size or bandwidth that does not read (see :mod:`hypercuboid.units`)."""


class MPIError(HypercuboidError):
    """A failure of the MPI back end (the message names the rank and the op)."""

"""Exceptions raised by hypercuboid.

Every error derives from :class:`HypercuboidError`. Errors caused by bad user input (a malformed
schedule string, an impossible topology parameter, an unknown name) also derive from
:class:`ValueError`, so ``except ValueError`` catches them as a Python user expects; a
simulation that cannot complete (a deadlock) is not bad input and is not a ``ValueError``.

Each error of the Rust core becomes one of these classes, with its structure as attributes:

=============================  =========================================================
class                          attributes
=============================  =========================================================
every :class:`HypercuboidError`  ``accepted``: the names or keys a bad name would have
                               been (empty where the error names none)
:class:`DeadlockError`         ``stuck`` (:class:`StuckOp` list: the first op left waiting
                               on a few stuck ranks), ``unfinished_ops``, ``stuck_ranks``
:class:`NetworkDeadlockError`  ``cycle`` (``(from_router, to_router, vc)`` channels, each
                               full and waiting for the next), ``time_ps``, ``in_flight``
=============================  =========================================================

A bug in the core (a Rust panic) never aborts the interpreter: it raises the class of the call
that hit it, with the message ``<call>: internal error: <what went wrong>; please report``. A
long call stopped by Ctrl-C raises :class:`KeyboardInterrupt`.

::

    HypercuboidError
    ├── ScheduleError, ModelError, TopologyError, NetworkError, UnitError, LbmError
    │                                                               (ValueError too)
    ├── SimulationError
    │   └── DeadlockError
    │       └── NetworkDeadlockError
    ├── VerificationError
    └── MPIError
"""

from __future__ import annotations

from dataclasses import dataclass


class HypercuboidError(Exception):
    """Base class of every hypercuboid error."""

    #: The names or keys a bad name would have been (set by the core where the error names
    #: them, e.g. an unknown algorithm or model key).
    accepted: list[str] = []  # noqa: RUF012 - a class default, replaced per instance


class ScheduleError(HypercuboidError, ValueError):
    """A schedule that cannot be built, generated, read or written as asked."""


class TraceError(ScheduleError):
    """An application trace that cannot be read or converted: a file that is not a trace or
    whose header is damaged, a record that is wrong, a trace that stops before
    ``MPI_Finalize`` where a whole one was asked for. A :class:`ScheduleError`, which trace
    errors were before it existed. A schedule an algorithm refuses while converting is that
    algorithm's own error."""


class ModelError(HypercuboidError, ValueError):
    """A cost-model or noise specification that is malformed or out of range."""


class SimulationError(HypercuboidError):
    """A simulation that cannot complete: a schedule or a network that deadlocks, messages
    left unreceived, time that overflows."""


@dataclass(frozen=True)
class StuckOp:
    """An op a deadlocked schedule left waiting."""

    rank: int
    op: int
    text: str
    """The op, as text (``recv 8b from 1 tag 0``)."""
    waits_for: str
    """What it waits for, in words (``waits for a message from rank 1 with tag 0``)."""


class DeadlockError(SimulationError):
    """Nothing was left to happen but some ops never completed (a schedule simulation), or a
    network stopped delivering (:class:`NetworkDeadlockError`)."""

    stuck: list[StuckOp] = []  # noqa: RUF012 - a class default, replaced per instance
    unfinished_ops: int = 0
    stuck_ranks: int = 0


class NetworkDeadlockError(DeadlockError):
    """The packet simulator's watchdog found packets that stopped moving: ``cycle`` is a cycle
    of virtual channels ``(from_router, to_router, vc)``, each full and waiting for the next."""

    cycle: list[tuple[int, int, int]] = []  # noqa: RUF012 - a class default
    time_ps: int = 0
    in_flight: int = 0


class VerificationError(HypercuboidError):
    """A schedule that fails verification where a sound one is required."""


class TopologyError(HypercuboidError, ValueError):
    """A topology that cannot be generated, read or analysed with the given parameters."""


class NetworkError(HypercuboidError, ValueError):
    """A network simulation that is misconfigured (routing, traffic, parameters)."""


class UnitError(HypercuboidError, ValueError):
    """A time, size or bandwidth that does not read (see :mod:`hypercuboid.units`)."""


class LbmError(HypercuboidError, ValueError):
    """Bad input to the lattice-Boltzmann solver: a relaxation time, an initial condition, an
    array that does not hold a subdomain with its halo (see :mod:`hypercuboid.lbm`)."""


class ResourceError(HypercuboidError, MemoryError):
    """A request whose estimated memory exceeds the limit (``--memory-limit``, else the memory
    the machine has available), refused before anything was allocated. ``estimate`` and
    ``limit`` are in bytes."""

    estimate: int = 0
    limit: int = 0


class OutputExistsError(HypercuboidError, FileExistsError):
    """A writer (``Schedule.save``, :func:`hypercuboid.topology.export`, ...) asked to write a
    file that exists, without ``force=True``."""


class MPIError(HypercuboidError):
    """A failure of the MPI back end (the message names the rank and the op)."""

"""hypercuboid: design, verify, simulate and run the communication of HPC programs.

>>> import hypercuboid as hc
>>> s = hc.schedules.allreduce("recursive_doubling", nranks=8, count=1024)
>>> s.verify().sound
True
"""

from __future__ import annotations

import warnings

from hypercuboid import _core, halo, schedules
from hypercuboid.errors import (
    DeadlockError,
    HypercuboidError,
    ModelError,
    MPIError,
    NetworkDeadlockError,
    NetworkError,
    OutputExistsError,
    ScheduleError,
    SimulationError,
    TopologyError,
    UnitError,
    VerificationError,
)
from hypercuboid.schedule import (
    Schedule,
    SimResult,
    Trace,
    VerifyReport,
    parse_model,
)
from hypercuboid.schedules import allreduce_algorithms

__version__: str = _core.__version__


def allreduce(
    algorithm: str,
    nranks: int,
    count: int = _core.DEFAULTS["allreduce"]["count"],
    *,
    dtype: str = _core.DEFAULTS["allreduce"]["dtype"],
    op: str = _core.DEFAULTS["allreduce"]["op"],
) -> Schedule:
    """Deprecated spelling of :func:`hypercuboid.schedules.allreduce`, which builds a schedule
    (:func:`hypercuboid.mpi.allreduce` runs one over MPI)."""
    warnings.warn(
        "hc.schedules.allreduce(...) builds a schedule: call it as hc.schedules.allreduce(...) "
        "(hypercuboid.mpi.allreduce runs an allreduce over MPI); the old spelling will go",
        DeprecationWarning,
        stacklevel=2,
    )
    return schedules.allreduce(algorithm, nranks, count, dtype=dtype, op=op)


def read_schedule(path: str) -> Schedule:
    """Reads a GOAL file or a file in hypercuboid's lossless text form."""
    return Schedule.read(path)


def parse_schedule(text: str, name: str = "<text>") -> Schedule:
    """Parses GOAL text or hypercuboid's lossless text form."""
    return Schedule.parse(text, name)


__all__ = [
    "DeadlockError",
    "HypercuboidError",
    "MPIError",
    "ModelError",
    "NetworkDeadlockError",
    "NetworkError",
    "OutputExistsError",
    "Schedule",
    "ScheduleError",
    "SimResult",
    "SimulationError",
    "TopologyError",
    "Trace",
    "UnitError",
    "VerificationError",
    "VerifyReport",
    "__version__",
    "allreduce",
    "allreduce_algorithms",
    "halo",
    "parse_model",
    "parse_schedule",
    "read_schedule",
    "schedules",
]

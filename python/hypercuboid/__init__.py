"""hypercuboid: design, verify, simulate and run the communication of HPC programs.

>>> import hypercuboid as hc
>>> s = hc.allreduce("recursive_doubling", nranks=8, count=1024)
>>> s.verify().sound
True
"""

from __future__ import annotations

from hypercuboid import _core
from hypercuboid.errors import (
    HypercuboidError,
    ModelError,
    MPIError,
    NetworkError,
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
    allreduce,
    allreduce_algorithms,
    parse_model,
)

__version__: str = _core.__version__


def read_schedule(path: str) -> Schedule:
    """Reads a GOAL file or a file in hypercuboid's lossless text form."""
    return Schedule.read(path)


def parse_schedule(text: str, name: str = "<text>") -> Schedule:
    """Parses GOAL text or hypercuboid's lossless text form."""
    return Schedule.parse(text, name)


__all__ = [
    "HypercuboidError",
    "MPIError",
    "ModelError",
    "NetworkError",
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
    "parse_model",
    "parse_schedule",
    "read_schedule",
]

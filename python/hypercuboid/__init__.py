"""hypercuboid: design, verify, simulate and run the communication of HPC programs."""

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
    VerificationError,
)

__version__: str = _core.__version__

__all__ = [
    "HypercuboidError",
    "MPIError",
    "ModelError",
    "NetworkError",
    "ScheduleError",
    "SimulationError",
    "TopologyError",
    "VerificationError",
    "__version__",
]

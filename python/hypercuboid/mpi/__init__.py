"""hypercuboid's MPI back end: run any schedule for real with mpi4py, check it, benchmark it,
and fit cost models from measurements.

``import hypercuboid`` does not import this package, and importing this package does not
import mpi4py (nor initialise MPI): the names below load on first use, and
:mod:`hypercuboid.modelfile` needs no MPI. Install with ``pip install hypercuboid[mpi]``.

Main entry points::

    from mpi4py import MPI
    import hypercuboid.mpi as hmpi
    hmpi.allreduce(MPI.COMM_WORLD, sendbuf, recvbuf, algorithm="ring")
    hmpi.alltoall(MPI.COMM_WORLD, sendbuf, recvbuf, algorithm="bruck")
    hmpi.execute(MPI.COMM_WORLD, schedule, sendbuf, recvbuf)
    hmpi.check_allreduce(MPI.COMM_WORLD, "ring", count=1000)
    hmpi.halo_exchange(MPI.COMM_WORLD, halo_schedule, f)  # f: this rank's lattice + halo
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "allreduce": "hypercuboid.mpi.executor",
    "alltoall": "hypercuboid.mpi.executor",
    "execute": "hypercuboid.mpi.executor",
    "run_program": "hypercuboid.mpi.executor",
    "private_comm": "hypercuboid.mpi.executor",
    "clear_bindings": "hypercuboid.mpi.executor",
    "set_program_source": "hypercuboid.mpi.programs",
    "clear_cache": "hypercuboid.mpi.programs",
    "ProgramRequest": "hypercuboid.mpi.programs",
    "check_allreduce": "hypercuboid.mpi.check",
    "halo_exchange": "hypercuboid.mpi.halo",
    "halo_start": "hypercuboid.mpi.halo",
    "HaloRequest": "hypercuboid.mpi.halo",
    "CheckResult": "hypercuboid.mpi.check",
    "ulp_distance": "hypercuboid.mpi.check",
    "reference_allreduce": "hypercuboid.mpi.check",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'hypercuboid.mpi' has no attribute '{name}'")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

"""The environment each MPI's mpiexec needs in the tests, as ``make test-mpi`` and ``make
test-mpich`` run them (the Makefile's MPI_ENV and MPICH_ENV)."""

from __future__ import annotations

import subprocess

#: Open MPI: root allowed, the ob1 messaging layer over shared memory only.
OMPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,sm",
}

#: MPICH: waiting ranks yield (heavy yield), and the collectives are the library's own
#: point-to-point algorithms (its shared-memory device collectives spin without yielding, which
#: with more ranks than cores is most of a test's time).
MPICH_ENV = {
    "MPIR_CVAR_ENABLE_HEAVY_YIELD": "1",
    "MPIR_CVAR_DEVICE_COLLECTIVES": "none",
}

#: What Open MPI's launcher prints when its PMIx server cannot start, before any rank runs. It
#: happens now and then on this VM (and in other projects' CI: lfortran/lfortran#8610).
LAUNCH_FAILED = "The PMIx server's listener thread failed to start"


def launch(cmd: list[str], tries: int = 3, **kw) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)``, run again (at
    most ``tries`` times in all) only while the launcher failed before starting the program:
    whatever the program itself does, its first run is the result."""
    for _ in range(tries):
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)
        if LAUNCH_FAILED not in done.stdout + done.stderr:
            break
    return done

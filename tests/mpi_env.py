"""The environment each MPI's mpiexec needs in the tests, as ``make test-mpi`` and ``make
test-mpich`` run them (the Makefile's MPI_ENV and MPICH_ENV)."""

from __future__ import annotations

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

"""The environment Open MPI's mpiexec needs in the tests, as ``make test-mpi`` runs it (the
Makefile's MPI_ENV): root allowed, the ob1 messaging layer over shared memory only."""

from __future__ import annotations

OMPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,sm",
}

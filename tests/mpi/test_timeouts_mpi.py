"""Arguments of the MPI paths checked before anything waits (under mpiexec at any size):
timeouts, the communicator, and the comparison of every rank's arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypercuboid.mpi.launch import LaunchError, TimeoutValueError, check_timeout, same_command

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 0, -1.5])
def test_a_timeout_must_be_a_finite_positive_number(bad):
    import hypercuboid.mpi as hmpi
    from mpi4py import MPI

    with pytest.raises(TimeoutValueError) as e:
        hmpi.allreduce(MPI.COMM_WORLD, np.ones(3), timeout=bad)
    assert str(e.value) == f"timeout {bad!r}: must be a finite number of seconds above 0"
    with pytest.raises(TimeoutValueError):
        hmpi.alltoall(MPI.COMM_WORLD, np.ones(MPI.COMM_WORLD.size), timeout=bad)


@pytest.mark.parametrize("bad", ["5", True, [1]])
def test_a_timeout_of_another_type_is_a_type_error(bad):
    with pytest.raises(TypeError) as e:
        check_timeout(bad)
    assert str(e.value) == f"timeout must be a number of seconds or None, not {type(bad).__name__}"


def test_a_timeout_is_seconds():
    assert check_timeout(None) is None
    assert check_timeout(2) == 2.0
    assert check_timeout(np.float32(0.5)) == 0.5


def test_a_communicator_that_is_none_is_a_type_error():
    import hypercuboid.mpi as hmpi

    x = np.ones(4)
    for call in (hmpi.allreduce, hmpi.alltoall):
        with pytest.raises(TypeError) as e:
            call(None, x)
        assert str(e.value) == "comm must be an mpi4py communicator (MPI.Comm), not NoneType"


def test_allreduce_with_a_timeout_on_a_new_communicator():
    """The first call on a communicator (its private copy made behind a barrier) and the next
    ones, with a timeout: the sum of the ranks."""
    import hypercuboid.mpi as hmpi
    from mpi4py import MPI

    comm = MPI.COMM_WORLD.Dup()
    try:
        for _ in range(2):
            x = np.full(5, float(comm.rank))
            got = hmpi.allreduce(comm, x, timeout=60)
            assert got.tolist() == [comm.size * (comm.size - 1) / 2] * 5
    finally:
        comm.Free()


def test_same_command():
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    same_command(comm, ["bench", "allreduce", "-a", "ring"], timeout=60)
    if comm.size == 1:
        return
    odd = [str(comm.rank % 2)]
    with pytest.raises(LaunchError) as e:
        same_command(comm, odd, timeout=60)
    ranks = list(range(1, comm.size, 2))
    named = ", ".join(map(str, ranks))
    verb = "were" if len(ranks) > 1 else "was"
    assert str(e.value) == (
        f"rank{'s' if len(ranks) > 1 else ''} {named} of {comm.size} {verb} started with "
        "arguments other than rank 0's (an MPMD launch or different options): start every rank "
        "with the same command"
    )

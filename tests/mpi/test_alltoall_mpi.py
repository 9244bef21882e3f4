"""``hypercuboid.mpi.alltoall``: every generator run for real and compared bitwise with the
library's own ``MPI_Alltoall`` (issue 15, section 5). The runner is the session's
(``HYPERCUBOID_RUNNER``: ``make test-mpi`` runs the file with the Python engine and with the
native runner); one test forces each runner explicitly."""

from __future__ import annotations

import numpy as np
import pytest
from hypercuboid.errors import ScheduleError

pytestmark = pytest.mark.mpi

ALGORITHMS = [
    "linear",
    "linear_shifted",
    "scattered:block=1",
    "pairwise",
    "bruck",
    "k_bruck:k=3",
    "linear_sync",
    "linear_sync:max=1",
]


def _send(comm, count, dtype):
    """Rank r's send buffer: every element distinct across ranks and blocks."""
    n = comm.size * count
    base = np.arange(n, dtype=np.float64) + 1000.0 * comm.rank + 0.25
    if np.dtype(dtype).kind in "iu":
        base = np.arange(n) + 1000 * comm.rank + 7
    return base.astype(dtype)


def _reference(comm, x):
    ref = np.empty_like(x)
    comm.Alltoall(x, ref)
    return ref


@pytest.mark.parametrize("count", [0, 1, 3, 1000])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_alltoall_matches_mpi_alltoall(comm, algorithm, count):
    from hypercuboid.mpi import alltoall

    for dtype in (np.float64, np.int32):
        x = _send(comm, count, dtype)
        keep = x.copy()
        y = alltoall(comm, x, None, algorithm)
        assert y.dtype == x.dtype and y.size == x.size
        assert y.tobytes() == _reference(comm, x).tobytes(), (algorithm, count, dtype)
        assert x.tobytes() == keep.tobytes()  # the input is left alone


SCHEDULED = [
    "scheduled:topo=tree:fig1",
    "scheduled:topo=tree:fig1,sync=pairwise",
    "scheduled:topo=tree:fig1,sync=barrier",
    "scheduled:topo=tree:fig1,sync=none",
]


@pytest.mark.parametrize("count", [0, 1, 1000])
@pytest.mark.parametrize("algorithm", SCHEDULED)
def test_scheduled_matches_mpi_alltoall(comm, algorithm, count):
    """The Faraj-Yuan phases of fig1 (6 machines) on the first comm.size machines."""
    from hypercuboid.mpi import alltoall

    if comm.size > 6:
        pytest.skip("tree:fig1 has 6 machines: one rank each")
    for dtype in (np.float64, np.int32):
        x = _send(comm, count, dtype)
        y = alltoall(comm, x, None, algorithm)
        assert y.tobytes() == _reference(comm, x).tobytes(), (algorithm, count, dtype)


@pytest.mark.any_runner
@pytest.mark.parametrize("runner", ["python", "native"])
def test_both_runners_give_the_library_bits(comm, runner):
    from hypercuboid.mpi import alltoall

    for algorithm in ("pairwise", "bruck", "linear_sync:max=2"):
        for dtype in (np.float32, np.uint16, np.int64):
            x = _send(comm, 5, dtype)
            y = np.full_like(x, 99)
            alltoall(comm, x, y, algorithm, runner=runner, verify=False)
            assert y.tobytes() == _reference(comm, x).tobytes(), (algorithm, dtype, runner)


def test_complex_and_two_dimensional_buffers(comm):
    from hypercuboid.mpi import alltoall

    x = (_send(comm, 4, np.float64) * (1 + 2j)).reshape(comm.size, 4)
    y = alltoall(comm, x, None, "bruck")
    assert y.shape == (comm.size, 4)
    assert y.tobytes() == _reference(comm, x).tobytes()


def test_in_place(comm):
    from hypercuboid.mpi import alltoall
    from mpi4py import MPI

    x = _send(comm, 3, np.float64)
    ref = _reference(comm, x)
    buf = x.copy()
    out = alltoall(comm, MPI.IN_PLACE, buf, "pairwise")
    assert out is buf
    assert buf.tobytes() == ref.tobytes()


def test_repeated_calls_honour_new_data(comm):
    from hypercuboid.mpi import alltoall

    x = _send(comm, 2, np.float64)
    y = np.zeros_like(x)
    for k in range(3):
        alltoall(comm, x + k, y, "linear_shifted")
        assert y.tobytes() == _reference(comm, x + k).tobytes()


def test_the_repeated_call_fast_path_sees_new_data_and_new_arguments(comm):
    """The same buffers, algorithm and communicator as the last call skip every check; data
    changed in place, another algorithm or another dtype are honoured."""
    from hypercuboid.mpi import alltoall

    x = _send(comm, 3, np.float64)
    y = np.zeros_like(x)
    for alg in ("bruck", "bruck", "pairwise", "pairwise", "bruck"):
        x += 1.5
        out = alltoall(comm, x, y, alg)
        assert out is y
        assert y.tobytes() == _reference(comm, x).tobytes(), alg
    x32 = x.astype(np.float32)
    y32 = np.zeros_like(x32)
    for _ in range(2):
        alltoall(comm, x32, y32, "bruck")
        assert y32.tobytes() == _reference(comm, x32).tobytes()


def test_execute_runs_an_alltoall_schedule(comm):
    import hypercuboid as hc
    from hypercuboid.mpi import execute

    s = hc.schedules.alltoall("k_bruck:k=4", comm.size, 6, dtype="int16")
    x = _send(comm, 6, np.int16)
    y = execute(comm, s, x)
    assert y.tobytes() == _reference(comm, x).tobytes()


def test_bad_input_is_refused_with_the_accepted_values(comm):
    from hypercuboid.mpi import alltoall

    if comm.size > 1:  # every size is a multiple of 1
        x = np.zeros(comm.size * 2 + 1)
        with pytest.raises(ScheduleError) as e:
            alltoall(comm, x, None, "pairwise")
        assert str(e.value) == (
            f"the buffers have {x.size} elements, not a multiple of the {comm.size} ranks: an "
            "alltoall sends the same count to every rank"
        )
    with pytest.raises(ScheduleError) as e:
        alltoall(comm, np.zeros(comm.size), None, "ring")
    assert str(e.value) == (
        "unknown alltoall algorithm 'ring'; accepted: linear, linear_shifted, pairwise, bruck, "
        "k_bruck, linear_sync, scheduled"
    )
    with pytest.raises(ScheduleError) as e:
        alltoall(comm, np.zeros(comm.size, dtype=bool), None, "pairwise")
    assert str(e.value) == (
        "dtype bool cannot be exchanged: accepted are signed and unsigned integers, "
        "floating-point and complex types"
    )

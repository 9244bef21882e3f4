"""The native runner against the Python engine, on any number of ranks: the same bits for every
registered algorithm, dtype, operator and count, in place or not, and the same errors."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.any_runner]  # each test names its runners

DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DTYPES += ("float32", "float64")
OPS = ("sum", "prod", "max", "min")


def _algorithms(n: int) -> list[str]:
    """Every example of the registry that serves ``n`` ranks (schedule strings fit one N)."""
    import hypercuboid as hc

    out = []
    for a in hc.schedules.algorithms("allreduce"):
        for ex in (a.example, a.name):
            try:
                hc.schedules.allreduce(ex, n, 1)
            except hc.ScheduleError:
                continue
            out.append(ex)
            break
    return out


def _input(rank: int, count: int, dtype: str) -> np.ndarray:
    """Values that make every operator matter: signs, fractions, NaN-free, small enough that
    integer products wrap but do not all vanish."""
    i = np.arange(count, dtype=np.float64)
    v = np.sin(i * 0.7 + rank * 1.3) * 5 + (rank % 3)
    dt = np.dtype(dtype)
    if dt.kind == "u":
        v = np.abs(v)
    return v.astype(dt)


@pytest.mark.parametrize("algorithm", ["recursive_doubling", "ring", "tree", "rabenseifner"])
def test_both_runners_give_the_same_bits(comm, algorithm):
    from hypercuboid.mpi import allreduce

    for dtype in DTYPES:
        for op in OPS:
            for count in (0, 1, 7, comm.size + 1, 300):
                x = _input(comm.rank, count, dtype)
                a = allreduce(comm, x, None, algorithm, op=op, runner="python")
                b = allreduce(comm, x, None, algorithm, op=op, runner="native")
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (dtype, op, count)


def test_every_registered_algorithm_runs_natively_with_the_pythons_bits(comm):
    from hypercuboid.mpi import allreduce
    from mpi4py import MPI

    algorithms = _algorithms(comm.size)
    assert "recursive_doubling" in algorithms and len(algorithms) >= 7
    for alg in algorithms:
        for dtype, op in (("float64", "sum"), ("int32", "prod"), ("float32", "max")):
            x = _input(comm.rank, 33, dtype)
            a = allreduce(comm, x, None, alg, op=op, runner="python")
            b = allreduce(comm, x, None, alg, op=op, runner="native")
            assert a.tobytes() == b.tobytes(), (alg, dtype, op)
            # in place: the input is the receive buffer
            c = x.copy()
            allreduce(comm, MPI.IN_PLACE, c, alg, op=op, runner="native")
            assert c.tobytes() == a.tobytes(), (alg, dtype, op)


def test_a_native_plan_is_reused_and_follows_new_buffers(comm):
    from hypercuboid.mpi import allreduce

    x = np.arange(10, dtype=np.float64) + comm.rank
    y = np.empty_like(x)
    for _ in range(3):  # the same buffers: the bound plan is reused
        allreduce(comm, x, y, "ring", runner="native")
    ref = sum(np.arange(10, dtype=np.float64) + r for r in range(comm.size))
    assert np.array_equal(y, ref)
    x2 = x * 2
    y2 = np.empty_like(x2)
    allreduce(comm, x2, y2, "ring", runner="native")
    assert np.array_equal(y2, 2 * ref) and np.array_equal(y, ref)


def test_a_sizes_only_schedule_runs_natively(comm):
    import hypercuboid as hc
    from hypercuboid.mpi import execute

    n = comm.size
    lines = [f"num_ranks {n}"]
    for r in range(n):
        lines.append(f"rank {r} {{")
        lines.append(f"l0: send 64b to {(r + 1) % n} tag 3")
        lines.append(f"l1: recv 64b from {(r - 1) % n} tag 3")
        lines.append("l2: calc 1000")
        lines.append("l2 requires l1")
        lines.append("}")
    sched = hc.parse_schedule("\n".join(lines) + "\n")
    assert execute(comm, sched, runner="native") is None


def test_the_runners_refuse_what_they_cannot_run(comm):
    from hypercuboid.errors import ScheduleError
    from hypercuboid.mpi import allreduce

    x = np.ones(3, dtype=np.complex128)
    with pytest.raises(ScheduleError) as e:
        allreduce(comm, x, None, "ring", runner="native")
    assert str(e.value) == (
        "the native runner has no C type for dtype complex128; accepted: int8, int16, int32, "
        "int64, uint8, uint16, uint32, uint64, float32, float64 (runner='python' runs any "
        "dtype MPI carries)"
    )
    # auto runs it on the Python engine
    y = allreduce(comm, x, None, "ring", runner="auto")
    assert np.array_equal(y, np.full(3, comm.size, dtype=np.complex128))
    with pytest.raises(ScheduleError) as e:
        allreduce(comm, np.ones(1), None, "ring", runner="fortran")
    assert str(e.value) == "unknown runner 'fortran'; accepted: auto, native, python"


def test_c_timing_loops_give_one_sample_per_iteration(comm):
    from hypercuboid.mpi import native, programs
    from hypercuboid.mpi.executor import private_comm

    x = np.ones(4)
    y = np.empty_like(x)
    prog = programs.program_for("recursive_doubling", comm.size, comm.rank, 4, x.dtype, "sum", True)
    bound = native.NativeBound(prog, x, y, "sum")
    s = bound.time(private_comm(comm), 25, 5, 2)
    bound.free()
    assert s.shape == (25,) and (s > 0).all()
    assert np.array_equal(y, np.full(4, comm.size, dtype=np.float64))
    lib = native.time_library_allreduce(comm, x, y, "sum", 10, 2)
    assert lib.shape == (10,) and (lib > 0).all()
    assert np.array_equal(y, np.full(4, comm.size, dtype=np.float64))

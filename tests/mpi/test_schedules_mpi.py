"""Every allreduce generator of the Rust core, run for real under mpiexec: the result is valid
(within rounding of the fixed-order reference, exact for integers and max/min) and has the
same bits on every rank, for counts below, equal to and above the number of ranks and counts
the number of ranks does not divide."""

from __future__ import annotations

import numpy as np
import pytest
from hypercuboid.errors import ScheduleError, VerificationError

pytestmark = pytest.mark.mpi


def _algorithms() -> list[str]:
    try:
        from hypercuboid.schedules import allreduce_algorithms

        return allreduce_algorithms()
    except AttributeError:  # a core without the generators
        return []


ALGORITHMS = _algorithms()
needs_core = pytest.mark.skipif(not ALGORITHMS, reason="the core has no allreduce generators")


def _concrete(algorithm: str, nranks: int) -> list[str]:
    """The algorithm strings to run for a name: recursive multiplying needs a schedule, so every
    schedule the enumerator gives for ``nranks`` (factored, split and merged) is run."""
    if algorithm != "recursive_multiplying":
        return [algorithm]
    from hypercuboid.tune import schedules

    return [f"recursive_multiplying:{s}" for s in schedules(nranks)]


def _counts(nranks: int) -> list[int]:
    return sorted({1, max(1, nranks - 1), nranks + 1, 2 * nranks + 3, 1000})


def _same_order(algorithm: str, nranks: int) -> bool:
    """Whether the verifier says every rank reduces every element in the same order."""
    import hypercuboid.schedules as hcs

    sem = hcs.allreduce(algorithm, nranks, 3).verify().semantics
    return bool(sem["same_order_commutative"])


@needs_core
@pytest.mark.parametrize("algorithm", ALGORITHMS or ["-"])
def test_every_algorithm_every_count(comm, algorithm):
    """Valid for every count; consistent (same bits on all ranks) exactly when the verifier
    says all ranks reduce in the same order (ring_rotate's ranks do not)."""
    from hypercuboid.mpi import check_allreduce

    for alg in _concrete(algorithm, comm.size):
        same_order = _same_order(alg, comm.size)
        for count in _counts(comm.size):
            r = check_allreduce(comm, alg, count, "float64", "sum")
            assert r.valid and r.within_bound, (alg, count, r)
            assert r.native_identical_bits
            if same_order:
                assert r.identical_bits, (alg, count, r)
        # with 1000 random elements different orders show in the bits (deterministic inputs)
        assert r.identical_bits is same_order, alg


@needs_core
@pytest.mark.parametrize("algorithm", ALGORITHMS or ["-"])
@pytest.mark.parametrize("dtype, op", [("int32", "sum"), ("float32", "max"), ("int64", "prod")])
def test_every_algorithm_dtypes_and_ops(comm, algorithm, dtype, op):
    from hypercuboid.mpi import check_allreduce

    for alg in _concrete(algorithm, comm.size):
        r = check_allreduce(comm, alg, comm.size + 2, dtype, op)
        # integers and max/min are exact whatever the order: consistent, equal to MPI_Allreduce
        assert r.valid and r.identical_bits, alg
        assert r.exact_reference and r.exact_native, alg


@needs_core
def test_execute_runs_a_schedule_object(comm):
    import hypercuboid.schedules as hcs
    from hypercuboid.mpi import execute
    from hypercuboid.mpi.check import make_input, reference_allreduce, within_bound

    sched = hcs.allreduce(ALGORITHMS[0], comm.size, 11, dtype="float64", op="sum")
    x = make_input(comm.rank, comm.size, 11, "float64", "sum", 4)
    y = execute(comm, sched, x)
    ref, scale = reference_allreduce(comm.size, 11, "float64", "sum", 4)
    assert within_bound(y, ref, scale, comm.size, "sum")
    with pytest.raises(ScheduleError, match=f"^the schedule has {comm.size + 1} ranks, the comm"):
        execute(comm, hcs.allreduce(ALGORITHMS[0], comm.size + 1, 11), x)


@needs_core
def test_unknown_algorithm_is_refused_on_every_rank(comm):
    from hypercuboid.mpi import allreduce

    with pytest.raises(ScheduleError, match="nope"):
        allreduce(comm, np.zeros(2), np.zeros(2), "nope")
    comm.Barrier()


def test_schedule_failing_verification_is_refused_before_any_message(comm):
    """A GOAL schedule whose rank 0 sends a message nobody receives."""
    import hypercuboid.schedule as hs
    from hypercuboid.mpi import execute

    lines = [f"num_ranks {comm.size}"]
    for r in range(comm.size):
        lines.append(f"rank {r} {{")
        if r == 0:
            lines.append("l1: send 8b to 0 tag 3")
        lines.append("}")
    try:
        sched = hs.Schedule.parse("\n".join(lines) + "\n")
    except AttributeError:
        pytest.skip("the core cannot parse GOAL yet")
    with pytest.raises(VerificationError, match="Nothing was sent"):
        execute(comm, sched)
    comm.Barrier()


def test_execute_a_sizes_only_goal_schedule(comm):
    """An imported GOAL schedule (sizes only): a ring of 100-byte messages and a calc."""
    import hypercuboid.schedule as hs
    from hypercuboid.mpi import execute

    n = comm.size
    lines = [f"num_ranks {n}"]
    for r in range(n):
        lines += [
            f"rank {r} {{",
            f"l1: send 100b to {(r + 1) % n} tag 4",
            f"l2: recv 100b from {(r - 1) % n} tag 4",
            "l3: calc 2000",
            "l3 requires l2",
            "}",
        ]
    sched = hs.Schedule.parse("\n".join(lines) + "\n")
    assert execute(comm, sched) is None
    comm.Barrier()

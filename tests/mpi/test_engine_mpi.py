"""The executor's engine on hand-made programs, under mpiexec (any number of ranks)."""

from __future__ import annotations

import numpy as np
import pytest
from handmade import (
    IN,
    OUT,
    Program,
    chain_allreduce,
    doubling_allreduce,
    linear_allreduce,
    reference,
)
from hypercuboid.errors import MPIError

pytestmark = pytest.mark.mpi

COUNTS = [1, 2, 5, 1000]


def inputs(nranks: int, count: int, dtype, seed: int = 3) -> list[np.ndarray]:
    from hypercuboid.mpi.check import make_input

    return [make_input(r, nranks, count, dtype, "sum", seed) for r in range(nranks)]


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("build", [linear_allreduce, chain_allreduce])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128", "float16"])
def test_handmade_allreduce_is_the_fixed_order_reference(comm, build, count, dtype):
    from hypercuboid.mpi import run_program

    dt = np.dtype(dtype)
    xs = inputs(comm.size, count, dt)
    out = np.full(count, 99, dtype=dt)
    run_program(comm, build(comm.rank, comm.size, count, dt.itemsize), xs[comm.rank], out)
    want = reference(xs, np.add)
    assert out.tobytes() == want.tobytes()
    assert xs[comm.rank].tobytes() == inputs(comm.size, count, dt)[comm.rank].tobytes()


@pytest.mark.parametrize(
    "op, ufunc", [("max", np.maximum), ("min", np.minimum), ("prod", np.multiply)]
)
def test_handmade_ops(comm, op, ufunc):
    from hypercuboid.mpi import run_program
    from hypercuboid.mpi.check import make_input

    xs = [make_input(r, comm.size, 17, "float64", op, 1) for r in range(comm.size)]
    out = np.zeros(17)
    run_program(comm, chain_allreduce(comm.rank, comm.size, 17), xs[comm.rank], out, op=op)
    assert out.tobytes() == reference(xs, ufunc).tobytes()


def _pair_program(comm) -> tuple:
    """(this rank, an empty program with one 4-element scratch buffer, the partner among ranks
    0 and 1); skips on one rank."""
    if comm.size < 2:
        pytest.skip("needs 2 ranks")
    p = Program()
    p.scratch = [4]
    return comm.rank, p, 1 - comm.rank


def _run_subtracting(comm, p, r: int) -> tuple:
    """Runs rank ``r``'s program ``p`` of ranks 0 and 1 (inputs [10, 20, 30, 40] x (rank + 1))
    with np.subtract as the combine: (its input, its partner's input, its output, the bound
    program, the plan)."""
    from hypercuboid.mpi import engine
    from hypercuboid.mpi.executor import private_comm

    x = np.array([10.0, 20.0, 30.0, 40.0]) * (r + 1)
    y = np.zeros(4)
    plan = engine.compile_program(p.columns(), rank=r, nranks=comm.size, count=4)
    b = engine.Bound(plan, x, y, np.subtract)
    engine.run(private_comm(comm), b)
    return x, np.array([10.0, 20.0, 30.0, 40.0]) * (2 - r), y, b, plan


def test_combine_operand_order_with_a_noncommutative_ufunc(comm):
    """combine 1 is ``dst = incoming ⊕ dst``, 2 is ``dst = dst ⊕ incoming`` (receives) and
    reduce combine 1 is ``dst = src ⊕ dst``, 2 ``dst = dst ⊕ src``: checked with subtraction."""
    r, p, other = _pair_program(comm)
    if r < 2:
        c = p.copy((IN, 0, 4), (OUT, 0, 4))
        s3 = p.send(other, (IN, 0, 2), tag=3)
        s4 = p.send(other, (IN, 2, 2), tag=4)
        # output[0:2] = incoming - dst ; output[2:4] = dst - incoming
        r3 = p.after(p.recv(other, (OUT, 0, 2), tag=3, combine=1), c, s3)
        p.after(p.recv(other, (OUT, 2, 2), tag=4, combine=2), c, s4)
        # scratch = input, then scratch[0:2] = output[0:2] - scratch[0:2] (src ⊕ dst)
        k = p.copy((IN, 0, 4), (2, 0, 4))
        p.after(p.reduce((OUT, 0, 2), (2, 0, 2), combine=1), k, r3)
    x, xo, y, b, plan = _run_subtracting(comm, p, r)
    if r < 2:
        assert y.tolist() == [xo[0] - x[0], xo[1] - x[1], x[2] - xo[2], x[3] - xo[3]]
        # after the first reduce: scratch[0:2] = out[0:2] - x[0:2]
        assert b.bufs[2].tolist() == [y[0] - x[0], y[1] - x[1], x[2], x[3]]


def test_irequires_and_opaque_messages(comm):
    """``irequires`` lets an op start once another has started; sizes-only payloads move
    zero-filled bytes. Every rank sends 3 bytes to the next and receives from the previous."""
    from hypercuboid.mpi import engine
    from hypercuboid.mpi.executor import private_comm

    n = comm.size
    p = Program(itemsize=1)
    s = p.send_bytes((comm.rank + 1) % n, 3, tag=9)
    rv = p.after(p.recv_bytes((comm.rank - 1) % n, 3, tag=9), s, start=True)
    p.after(p.compute(1000), rv)
    plan = engine.compile_program(p.columns(), rank=comm.rank, nranks=n, count=0)
    assert plan.opaque_bytes == 3
    assert plan.after_start[s] == (rv,)
    engine.run(private_comm(comm), engine.Bound(plan, np.zeros(0), np.zeros(0), None))


def test_subcommunicators(comm):
    """Ranks are those of the communicator given: split the world in evens and odds."""
    from hypercuboid.mpi import run_program

    sub = comm.Split(comm.rank % 2, comm.rank)
    try:
        xs = inputs(sub.size, 9, np.float64, seed=comm.rank % 2)
        out = np.zeros(9)
        run_program(sub, linear_allreduce(sub.rank, sub.size, 9), xs[sub.rank], out)
        assert out.tobytes() == reference(xs, np.add).tobytes()
    finally:
        sub.Free()


def test_user_traffic_with_the_same_tags_does_not_interfere(comm):
    """The executor runs on a duplicate of the communicator: a message the user left pending
    on ``comm`` with the schedule's tag is not consumed."""
    from hypercuboid.mpi import run_program

    n = comm.size
    token = np.array([comm.rank * 1.5 + 0.25])
    req = comm.Isend(token, (comm.rank + 1) % n, 7)  # tag 7 = the linear program's tag
    xs = inputs(n, 3, np.float64)
    out = np.zeros(3)
    run_program(comm, linear_allreduce(comm.rank, n, 3), xs[comm.rank], out)
    got = np.zeros(1)
    comm.Recv(got, (comm.rank - 1) % n, 7)
    req.Wait()
    assert got[0] == ((comm.rank - 1) % n) * 1.5 + 0.25
    assert out.tobytes() == reference(xs, np.add).tobytes()


def test_truncated_receive_raises_naming_rank_and_op(comm):
    from hypercuboid.mpi import run_program

    if comm.size < 2:
        pytest.skip("needs 2 ranks")
    p = Program()
    if comm.rank == 0:
        p.send(1, (IN, 0, 4), tag=5)
    elif comm.rank == 1:
        p.recv(0, (OUT, 0, 2), tag=5)
    x = np.ones(4)
    y = np.zeros(4)
    if comm.rank == 1:
        with pytest.raises(MPIError) as e:
            run_program(comm, p.columns(), x, y, abort=False)
        msg = str(e.value)
        assert msg.startswith("rank 1: waiting for op 0 (recv output[0:2] from rank 0 tag 5):")
        assert "TRUNCATE" in msg.upper()
    else:
        run_program(comm, p.columns(), x, y, abort=False)
    comm.Barrier()


def test_timeout_names_the_waiting_ops_and_cancels_them(comm):
    from hypercuboid.mpi import run_program

    p = Program()
    p.recv(0, (OUT, 0, 1), tag=12345)  # nobody sends
    with pytest.raises(MPIError) as e:
        run_program(comm, p.columns(), np.ones(1), np.zeros(1), abort=False, timeout=0.2)
    assert str(e.value) == (
        f"rank {comm.rank}: timed out after 0.2 s waiting for 1 op(s): "
        "op 0 (recv output[0:1] from rank 0 tag 12345)"
    )
    comm.Barrier()


def test_dependency_cycle_is_an_error_not_a_hang(comm):
    from hypercuboid.mpi import run_program

    p = Program()
    a = p.copy((IN, 0, 1), (OUT, 0, 1))
    b = p.copy((OUT, 0, 1), (OUT, 0, 1))
    p.after(a, b)
    p.after(b, a)
    with pytest.raises(MPIError) as e:
        run_program(comm, p.columns(), np.ones(1), np.zeros(1), abort=False)
    assert str(e.value) == (
        f"rank {comm.rank}: the program cannot progress: 2 op(s) wait on ops that never run "
        "(a dependency cycle), first op 0 (copy input[0:1] -> output[0:1])"
    )


def test_receive_reduce_copy_operand_order_with_a_noncommutative_ufunc(comm):
    """A fused receive with an operand: combine 1 is ``dst = incoming ⊕ operand``, 2 is
    ``dst = operand ⊕ incoming``; an operand overlapping ``dst`` is read before the message
    overwrites anything."""
    r, p, other = _pair_program(comm)
    if r < 2:
        fill = p.copy((IN, 0, 4), (2, 0, 4))
        p.send(other, (IN, 0, 2), tag=1)
        p.send(other, (IN, 2, 2), tag=2)
        p.send(other, (IN, 0, 2), tag=3)
        p.recv(other, (OUT, 0, 2), tag=1, combine=1, operand=(IN, 0, 2))
        p.recv(other, (OUT, 2, 2), tag=2, combine=2, operand=(IN, 2, 2))
        # scratch[1:3] = incoming - scratch[0:2], operand and destination overlap
        p.after(p.recv(other, (2, 1, 2), tag=3, combine=1, operand=(2, 0, 2)), fill)
    x, xo, y, b, plan = _run_subtracting(comm, p, r)
    if r < 2:
        assert y.tolist() == [xo[0] - x[0], xo[1] - x[1], x[2] - xo[2], x[3] - xo[3]]
        assert b.bufs[2].tolist() == [x[0], xo[0] - x[0], xo[1] - x[1], x[3]]
        assert plan.describe(4) == (
            f"op 4 (recv output[0:2] from rank {other} tag 1 reducing as incoming ⊕ input[0:2])"
        )
        assert plan.describe(5) == (
            f"op 5 (recv output[2:4] from rank {other} tag 2 reducing as input[2:4] ⊕ incoming)"
        )


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_recursive_doubling_with_receive_reduce_copy(comm, dtype):
    """On the largest power-of-two sub-communicator: every rank holds the same bits, exact for
    integers, within rounding of the fixed-order reference for floats."""
    from hypercuboid.mpi import run_program
    from hypercuboid.mpi.check import reference_allreduce, same_bits, within_bound
    from mpi4py import MPI

    pof2 = 1 << (comm.size.bit_length() - 1)
    sub = comm.Split(0 if comm.rank < pof2 else MPI.UNDEFINED, comm.rank)
    if sub == MPI.COMM_NULL:
        comm.Barrier()
        return
    try:
        xs = inputs(pof2, 33, np.dtype(dtype))
        out = np.zeros(33, dtype=dtype)
        run_program(sub, doubling_allreduce(sub.rank, pof2, 33), xs[sub.rank], out)
        ref, scale = reference_allreduce(pof2, 33, dtype, "sum", 3)
        assert same_bits(ref, reference(xs, np.add))
        assert within_bound(out, ref, scale, pof2, "sum")
        everyone = sub.allgather(out)
        assert all(same_bits(o, out) for o in everyone)
    finally:
        sub.Free()
    comm.Barrier()

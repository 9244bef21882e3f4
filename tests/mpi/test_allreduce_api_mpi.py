"""``hypercuboid.mpi.allreduce`` and ``check_allreduce`` with a hand-made program source (the
Rust generators are tested in test_schedules_mpi.py)."""

from __future__ import annotations

import numpy as np
import pytest
from handmade import chain_allreduce, linear_allreduce, reference
from hypercuboid.errors import ScheduleError, VerificationError

pytestmark = pytest.mark.mpi


@pytest.fixture
def handmade_source():
    """Programs come from tests/mpi/handmade.py: ``linear`` and ``chain``; every request is
    recorded."""
    from hypercuboid.mpi import set_program_source

    calls = []

    def source(req):
        calls.append(req)
        if req.algorithm == "linear":
            return linear_allreduce(req.rank, req.nranks, req.count)
        if req.algorithm == "chain":
            return chain_allreduce(req.rank, req.nranks, req.count)
        if req.algorithm == "broken":
            raise VerificationError("allreduce 'broken': the schedule does not verify")
        raise ScheduleError(f"unknown allreduce algorithm '{req.algorithm}'")

    prev = set_program_source(source)
    yield calls
    set_program_source(prev)


def _inputs(comm, count, dtype, op="sum", seed=5):
    from hypercuboid.mpi.check import make_input

    return [make_input(r, comm.size, count, dtype, op, seed) for r in range(comm.size)]


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5, 1001])
@pytest.mark.parametrize("algorithm", ["linear", "chain"])
def test_allreduce_any_count(comm, handmade_source, algorithm, count):
    """Counts below, at and above the number of ranks, not divisible by it, and zero."""
    from hypercuboid.mpi import allreduce

    xs = _inputs(comm, count, np.float64)
    x = xs[comm.rank].copy()
    y = allreduce(comm, x, None, algorithm)
    assert y.tobytes() == reference(xs, np.add).tobytes()
    assert x.tobytes() == xs[comm.rank].tobytes()  # the input is left alone


def test_plans_and_bindings_are_cached_but_buffers_are_honoured(comm, handmade_source):
    from hypercuboid.mpi import allreduce

    xs = _inputs(comm, 6, np.float64)
    x1, y1 = xs[comm.rank].copy(), np.zeros(6)
    for _ in range(3):
        allreduce(comm, x1, y1, "linear")
    assert len(handmade_source) == 1  # built once, from the cache afterwards
    x2, y2 = 2 * x1, np.zeros(6)
    allreduce(comm, x2, y2, "linear")
    assert len(handmade_source) == 1
    assert y1.tobytes() == reference(xs, np.add).tobytes()
    assert y2.tobytes() == reference([2 * x for x in xs], np.add).tobytes()


def test_in_place(comm, handmade_source):
    from hypercuboid.mpi import allreduce
    from mpi4py import MPI

    xs = _inputs(comm, 7, np.float32)
    buf = xs[comm.rank].copy()
    out = allreduce(comm, MPI.IN_PLACE, buf, "linear")
    assert out is buf
    assert buf.tobytes() == reference(xs, np.add).tobytes()


@pytest.mark.parametrize(
    "dtype, op, stand_in",
    [
        ("complex64", "sum", "float64"),
        ("complex128", "prod", "float64"),
        ("float16", "max", "float32"),
        ("int8", "min", "int8"),
        ("uint16", "prod", "uint16"),
        ("longdouble", "sum", "float64"),
    ],
)
def test_any_dtype_mpi_carries(comm, handmade_source, dtype, op, stand_in):
    from hypercuboid.mpi import allreduce
    from hypercuboid.mpi.check import same_bits
    from hypercuboid.mpi.engine import UFUNCS

    xs = _inputs(comm, 9, np.dtype(dtype), op)
    y = np.zeros(9, dtype=dtype)
    allreduce(comm, xs[comm.rank], y, "linear", op=op)
    assert same_bits(y, reference(xs, UFUNCS[op]))
    assert handmade_source[-1].dtype == stand_in


def test_multidimensional_buffers_are_reduced_as_vectors(comm, handmade_source):
    from hypercuboid.mpi import allreduce

    xs = _inputs(comm, 12, np.float64)
    y = np.zeros((3, 4))
    allreduce(comm, xs[comm.rank].reshape(3, 4), y, "chain")
    assert y.reshape(-1).tobytes() == reference(xs, np.add).tobytes()


def test_argument_errors_are_raised_before_anything_is_sent(comm, handmade_source):
    from hypercuboid.mpi import allreduce

    x = np.zeros(4)
    cases = [
        (
            (x, np.zeros(5)),
            {},
            "sendbuf (4 x float64) and recvbuf (5 x float64) differ",
        ),
        (
            (x, np.zeros(4, np.float32)),
            {},
            "sendbuf (4 x float64) and recvbuf (4 x float32) differ",
        ),
        ((np.zeros(8)[::2], np.zeros(4)), {}, "sendbuf must be C-contiguous"),
        (
            (x, np.zeros(4)),
            {"op": "avg"},
            "unknown reduction op 'avg'; accepted: sum, prod, max, min",
        ),
        (
            (np.zeros(4, complex), np.zeros(4, complex)),
            {"op": "max"},
            "op 'max' is not defined on complex dtype complex128 (MPI has none)",
        ),
        (
            (np.zeros(4, bool), np.zeros(4, bool)),
            {},
            "dtype bool cannot be reduced: accepted are signed and unsigned integers, "
            "floating-point and complex types",
        ),
        ((x, x), {}, "sendbuf and recvbuf overlap; use MPI.IN_PLACE"),
        ([1.0, 2.0], {}, "sendbuf must be a NumPy array, not list"),
    ]
    for args, kw, msg in cases:
        if isinstance(args, list):
            args = (args, None)
        with pytest.raises(ScheduleError) as e:
            allreduce(comm, *args, "linear", **kw)
        assert str(e.value).startswith(msg), str(e.value)
    with pytest.raises(ScheduleError, match="^unknown allreduce algorithm 'nope'$"):
        allreduce(comm, x, np.zeros(4), "nope")
    assert [r.algorithm for r in handmade_source] == ["nope"]


def test_a_schedule_that_fails_verification_is_refused(comm, handmade_source):
    from hypercuboid.mpi import allreduce

    with pytest.raises(VerificationError, match="does not verify"):
        allreduce(comm, np.zeros(3), np.zeros(3), "broken")
    comm.Barrier()


@pytest.mark.parametrize("count", [1, 7])
def test_check_linear_is_valid_and_exactly_the_reference(comm, handmade_source, count):
    from hypercuboid.mpi import check_allreduce

    r = check_allreduce(comm, "linear", count, "float64", "sum")
    assert r.valid and r.identical_bits and r.within_bound
    assert r.exact_reference and r.max_ulp_reference == 0
    assert r.native_identical_bits is True
    assert r.exact_native is (comm.size <= 2 or r.max_ulp_native == 0)


def test_check_native(comm):
    from hypercuboid.mpi import check_allreduce

    r = check_allreduce(comm, "native", 100, "int64", "sum")
    # integer sums are exact in any order
    assert r.to_dict() == {
        "algorithm": "native",
        "nranks": comm.size,
        "count": 100,
        "dtype": "int64",
        "op": "sum",
        "valid": True,
        "identical_bits": True,
        "within_bound": True,
        "exact_reference": True,
        "max_ulp_reference": 0,
        "exact_native": True,
        "max_ulp_native": 0,
        "native_identical_bits": True,
        "native_error": None,
    }


def test_check_catches_a_wrong_result(comm, handmade_source):
    """A program that forgets rank 0's contribution on the last rank is found out: not within
    the bound and (with several ranks) not identical on all ranks."""
    from hypercuboid.mpi import check_allreduce, set_program_source

    def source(req):
        cols = linear_allreduce(req.rank, req.nranks, req.count)
        if req.rank == req.nranks - 1 and req.nranks > 1:
            # turn the copy of rank 0's slice into the output into a copy of the own input
            i = int(np.flatnonzero((cols["kind"] == 3) & (cols["buf_slot"] == 1))[0])
            cols["src_slot"][i] = 0
            cols["src_offset"][i] = 0
        return cols

    set_program_source(source)
    r = check_allreduce(comm, "linear", 5, "float64", "sum")
    if comm.size == 1:
        assert r.valid
    else:
        assert not r.valid and not r.within_bound and not r.identical_bits
        assert not r.exact_reference and r.max_ulp_reference > 1000

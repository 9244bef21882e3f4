"""``--check``: compare an allreduce with the MPI library's own and with a fixed-order reference.

For every rank the result is compared

* with ``MPI_Allreduce`` of the same inputs (exact equality, maximum ulp distance), and
* with the reference ``((x_0 ⊕ x_1) ⊕ x_2) ⊕ ... ⊕ x_{P-1}`` computed in that fixed order
  (exact equality, maximum ulp distance, and whether the difference is within the rounding
  error any summation order may make);

and across ranks: whether every rank holds identical bits (*consistency*: the MPI standard's
reductions give all processes the same result, and the recursive-multiplying paper's §1 asks
for bit-wise identical results across processes; an algorithm whose ranks reduce in different
orders, such as ``ring_rotate``, does not have it for floating-point sums).

A result is *valid* when every rank's is within the error bound of the reference: exact for
integers, ``max`` and ``min``; for a floating-point ``sum`` ``|r - ref| <= 2 (P-1) eps Σ|x_i|``
and for ``prod`` ``|r - ref| <= 4 (P-1) eps Π|x_i|`` (twice the classic bound γ_{P-1} of
recursive summation / multiplication in any order, Higham, *Accuracy and Stability of Numerical
Algorithms*, §3.1 and §4.2: one γ for the result, one for the reference). Validity and
consistency are reported separately.

Inputs are generated per rank from ``(seed, rank)``, so any rank can make any other rank's
input without communication; rank 0 computes the reference and broadcasts it.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from hypercuboid import _core
from hypercuboid.mpi.engine import UFUNCS

#: The allreduce defaults of the core (element type, operator).
_DEFAULT = _core.DEFAULTS["allreduce"]


def make_input(
    rank: int, nranks: int, count: int, dtype: Any, op: str, seed: int = 0
) -> np.ndarray:
    """Rank ``rank``'s input: random values whose reduction neither overflows nor underflows
    (for floats) and whose floating-point sum depends on the order of the operations."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng([seed, rank, 0x68797065])
    if dt.kind in "fc":
        parts = 2 if dt.kind == "c" else 1
        shape = (count, parts)
        if op == "sum":
            v = rng.uniform(-1.0, 1.0, shape) * np.exp2(rng.integers(-6, 7, shape))
        elif op == "prod":
            spread = min(0.25, 2.0 / max(nranks, 1))
            v = 1.0 + rng.uniform(-spread, spread, shape)
        else:
            v = rng.uniform(-1e3, 1e3, shape)
        if dt.kind == "c":
            out = np.empty(count, dtype=dt)
            out.real = v[:, 0]
            out.imag = v[:, 1]
            return out
        return v[:, 0].astype(dt)
    info = np.iinfo(dt)
    if op == "sum":
        hi = max(1, min(100, info.max // max(nranks, 1)))
        lo = 0 if info.min == 0 else -hi
        return rng.integers(lo, hi, count, endpoint=True).astype(dt)
    if op == "prod":
        choices = np.array([1, 2, 3] if info.min == 0 else [-2, -1, 1, 2])
        return rng.choice(choices, count).astype(dt)
    return rng.integers(info.min, info.max, count, endpoint=True, dtype=dt)


def reference_allreduce(
    nranks: int, count: int, dtype: Any, op: str, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-order reference ``((x_0 ⊕ x_1) ⊕ ...) ⊕ x_{P-1}`` of the inputs of
    :func:`make_input`, and the scale of its rounding error (``Σ|x_i|`` for a sum, ``Π|x_i|``
    for a product, in float64; zeros otherwise)."""
    f = UFUNCS[op]
    ref = make_input(0, nranks, count, dtype, op, seed)
    scale = np.abs(ref).astype(np.float64)
    for r in range(1, nranks):
        x = make_input(r, nranks, count, dtype, op, seed)
        with np.errstate(over="ignore"):
            f(ref, x, out=ref)
        if op == "sum":
            scale += np.abs(x)
        elif op == "prod":
            scale *= np.abs(x)
    return ref, scale


def _ordered(a: np.ndarray) -> np.ndarray:
    """Maps values to unsigned integers in the same order (floats: sign-magnitude bits folded
    so that adjacent floats differ by one)."""
    dt = a.dtype
    bits = dt.itemsize * 8
    u = a.view(np.dtype(f"u{dt.itemsize}")).astype(np.uint64)
    sign = np.uint64(1) << np.uint64(bits - 1)
    if dt.kind == "f":
        mask = np.uint64((1 << bits) - 1)
        return np.where(u & sign, (~u) & mask, u | sign)
    if dt.kind == "i":
        return u ^ sign
    return u


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise distance in units in the last place (for integers: the difference), as
    uint64. Complex values take the larger distance of their real and imaginary parts."""
    a = np.ascontiguousarray(a).reshape(-1)
    b = np.ascontiguousarray(b).reshape(-1)
    if a.dtype != b.dtype or a.shape != b.shape:
        raise ValueError(f"cannot compare {a.shape} {a.dtype} with {b.shape} {b.dtype}")
    if a.dtype.kind == "c":
        re = ulp_distance(a.real.copy(), b.real.copy())
        return np.maximum(re, ulp_distance(a.imag.copy(), b.imag.copy()))
    if a.dtype.kind == "f" and a.dtype.itemsize not in (2, 4, 8):
        # extended precision: measure in spacings of the larger magnitude
        with np.errstate(invalid="ignore"):
            d = np.abs(a - b) / np.spacing(np.maximum(np.abs(a), np.abs(b)))
        return np.where(a == b, 0, np.nan_to_num(d, nan=np.inf, posinf=2.0**63)).astype(np.uint64)
    oa = _ordered(a)
    ob = _ordered(b)
    return np.where(oa >= ob, oa - ob, ob - oa)


def value_bytes(a: np.ndarray) -> np.ndarray:
    """The bytes that hold ``a``'s values, one row per element: all of them, except the padding
    of x87 extended precision (``longdouble`` stored in 12 or 16 bytes holds 10 significant
    bytes per real part), whose contents are arbitrary."""
    a = np.ascontiguousarray(a).reshape(-1)
    raw = a.view(np.uint8).reshape(a.size, a.dtype.itemsize)
    real = np.dtype(a.dtype.char.lower()) if a.dtype.kind == "c" else a.dtype
    if real.kind == "f" and real.itemsize > 10 and np.finfo(real).nmant == 63:
        parts = 2 if a.dtype.kind == "c" else 1
        keep = np.concatenate([np.arange(10) + p * real.itemsize for p in range(parts)])
        return raw[:, keep]
    return raw


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays hold the same values bit for bit (padding ignored)."""
    return a.shape == b.shape and bool(np.array_equal(value_bytes(a), value_bytes(b)))


def fingerprint(a: np.ndarray) -> int:
    """A 64-bit digest of the bits of ``a``'s values (to compare results across ranks)."""
    h = hashlib.blake2b(np.ascontiguousarray(value_bytes(a)), digest_size=8)  # type: ignore[arg-type]
    return int.from_bytes(h.digest(), "little")


def within_bound(
    result: np.ndarray, ref: np.ndarray, scale: np.ndarray, nranks: int, op: str
) -> bool:
    """Whether ``result`` is within the rounding error any order of the reduction may make
    (exact for integers, ``max`` and ``min``)."""
    if result.dtype.kind in "iu" or op in ("max", "min") or nranks <= 2:
        return same_bits(result, ref)
    eps = float(np.finfo(result.dtype).eps)
    k = 2.0 if op == "sum" else 4.0
    bound = k * (nranks - 1) * eps * scale
    wide = np.result_type(result.dtype, np.float64)
    diff = np.abs(result.astype(wide) - ref.astype(wide))
    return bool(np.all(diff <= bound))


@dataclass(frozen=True)
class CheckResult:
    """What :func:`check_allreduce` found (the same on every rank)."""

    algorithm: str
    nranks: int
    count: int
    dtype: str
    op: str
    valid: bool
    identical_bits: bool
    within_bound: bool
    exact_reference: bool
    max_ulp_reference: int
    exact_native: bool | None
    max_ulp_native: int | None
    native_identical_bits: bool | None
    native_error: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return asdict(self)


def mpi_op(op: str) -> Any:
    """The MPI operator of ``sum``, ``prod``, ``max``, ``min``."""
    from mpi4py import MPI

    return {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}[op]


def mpi_datatype(dtype: Any) -> Any:
    """The predefined MPI datatype of a NumPy dtype (reductions need a predefined one)."""
    from mpi4py import MPI

    dt = np.dtype(dtype)
    found = MPI._typedict.get(dt.char)
    if found is None or found == MPI.DATATYPE_NULL:
        raise TypeError(f"MPI has no predefined datatype for NumPy dtype {dt}")
    return found


def native_allreduce(comm: Any, sendbuf: np.ndarray, recvbuf: np.ndarray, op: str) -> None:
    """``MPI_Allreduce`` with the predefined datatype MPI has for the NumPy dtype."""
    dt = mpi_datatype(sendbuf.dtype)
    comm.Allreduce([sendbuf, dt], [recvbuf, dt], op=mpi_op(op))


def check_allreduce(
    comm: Any,
    algorithm: str,
    count: int,
    dtype: Any = _DEFAULT["dtype"],
    op: str = _DEFAULT["op"],
    *,
    seed: int = 0,
    verify: bool = True,
    runner: str | None = None,
) -> CheckResult:
    """Runs ``algorithm`` (a hypercuboid allreduce on ``runner``, or ``native`` for
    ``MPI_Allreduce``) once on inputs made by :func:`make_input` and compares it as the module
    says. Collective."""
    from mpi4py import MPI

    from hypercuboid.mpi.executor import allreduce

    dt = np.dtype(dtype)
    size = comm.Get_size()
    rank = comm.Get_rank()
    x = make_input(rank, size, count, dt, op, seed)
    ours = np.zeros_like(x)
    if algorithm == "native":
        native_allreduce(comm, x, ours, op)
    else:
        allreduce(comm, x, ours, algorithm, op=op, verify=verify, runner=runner)
    nat: np.ndarray | None = np.zeros_like(x)
    native_error = None
    try:
        native_allreduce(comm, x, nat, op)  # type: ignore[arg-type]
    except Exception as e:  # noqa: BLE001 - an MPI without this type/op combination
        native_error = f"{type(e).__name__}: {e}"
        nat = None
    if rank == 0:
        ref, scale = reference_allreduce(size, count, dt, op, seed)
    else:
        ref = np.empty_like(x)
        scale = np.empty(count, dtype=np.float64)
    comm.Bcast(ref.view(np.uint8), root=0)
    comm.Bcast(scale, root=0)
    ulp_ref = int(ulp_distance(ours, ref).max(initial=0))
    exact_ref = same_bits(ours, ref)
    ok_bound = within_bound(ours, ref, scale, size, op)
    fp = fingerprint(ours)
    if nat is not None:
        ulp_nat = int(ulp_distance(ours, nat).max(initial=0))
        exact_nat = same_bits(ours, nat)
        fpn = fingerprint(nat)
    else:
        ulp_nat, exact_nat, fpn = 0, True, 0
    mine = np.array(
        [ulp_ref, ulp_nat, fp, fpn, fp, fpn],
        dtype=np.uint64,
    )
    flags = np.array([exact_ref, ok_bound, exact_nat], dtype=np.int32)
    agg = np.empty_like(mine)
    lo = np.empty_like(mine)
    comm.Allreduce(mine, agg, op=MPI.MAX)
    comm.Allreduce(mine, lo, op=MPI.MIN)
    fl = np.empty_like(flags)
    comm.Allreduce(flags, fl, op=MPI.MIN)
    # every rank reaches the same native_error (same library, same call) but make sure
    has_native = comm.allreduce(nat is not None, op=MPI.LAND)
    identical = bool(agg[2] == lo[2])
    inside = bool(fl[1])
    return CheckResult(
        algorithm=algorithm,
        nranks=size,
        count=count,
        dtype=dt.name,
        op=op,
        valid=inside,
        identical_bits=identical,
        within_bound=inside,
        exact_reference=bool(fl[0]),
        max_ulp_reference=int(agg[0]),
        exact_native=bool(fl[2]) if has_native else None,
        max_ulp_native=int(agg[1]) if has_native else None,
        native_identical_bits=bool(agg[3] == lo[3]) if has_native else None,
        native_error=native_error,
    )

"""The public executor: :func:`allreduce` and :func:`alltoall` by algorithm name,
:func:`execute` for any schedule."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import MPIError, ScheduleError
from hypercuboid.mpi import engine, launch, native, programs
from hypercuboid.mpi.programs import check_dtype_op, plan_for

#: The allreduce defaults of the core (element type, operator).
_DEFAULT = _core.DEFAULTS["allreduce"]

_keyval: int | None = None
_MAX_BOUND = 4


def _free_private(_comm: Any, _keyval: int, dup: Any) -> None:
    try:
        dup.Free()
    except Exception:  # noqa: BLE001 - at finalize the dup may already be gone
        pass


def private_comm(comm: Any, timeout: float | None = None) -> Any:
    """A duplicate of ``comm`` cached on it as an MPI attribute (freed with it), so that the
    schedule's tags cannot match user traffic on ``comm``. Collective on first use: the ranks
    first meet in a non-blocking barrier, and past ``timeout`` seconds (a rank that never
    calls) :class:`~hypercuboid.errors.MPIError` is raised instead of waiting in ``Dup``."""
    from mpi4py import MPI

    global _keyval
    if _keyval is None:
        _keyval = MPI.Comm.Create_keyval(delete_fn=_free_private)
    dup = comm.Get_attr(_keyval)
    if dup is None:
        if timeout is not None:
            try:
                launch.wait(comm.Ibarrier(), timeout, "every rank to call (its first call)")
            except MPIError as e:
                raise MPIError(f"rank {comm.Get_rank()}: {e}") from None
        dup = comm.Dup()
        comm.Set_attr(_keyval, dup)
    return dup


def _private(comm: Any, timeout: float | None, what: str, abort: bool) -> Any:
    """:func:`private_comm`, a timeout reported as a failure of the call ``what``."""
    try:
        return private_comm(comm, timeout)
    except MPIError as e:
        _fail(comm, MPIError(f"{what} ({comm.Get_size()} ranks): {e}"), abort)


def _check_comm(comm: Any) -> None:
    from mpi4py import MPI

    if not isinstance(comm, MPI.Comm):
        raise TypeError(
            f"comm must be an mpi4py communicator (MPI.Comm), not {type(comm).__name__}"
        )


def _as_vector(buf: Any, what: str) -> np.ndarray:
    if not isinstance(buf, np.ndarray):
        raise ScheduleError(f"{what} must be a NumPy array, not {type(buf).__name__}")
    if not buf.flags.c_contiguous:
        raise ScheduleError(f"{what} must be C-contiguous (pass np.ascontiguousarray(...))")
    return buf if buf.ndim == 1 else buf.reshape(-1)


def _fail(comm: Any, err: MPIError, abort: bool) -> None:
    if abort:
        sys.stderr.write(f"hypercuboid.mpi: {err}; aborting the job\n")
        sys.stderr.flush()
        comm.Abort(1)
    raise err


class _Binding:
    """Per-plan cache of buffers bound to views (strong references keep the ids valid)."""

    __slots__ = ("key", "bound", "refs")

    def __init__(self, key: tuple, bound: engine.Bound, refs: tuple) -> None:
        self.key = key
        self.bound = bound
        self.refs = refs


_bindings: dict[int, list[_Binding]] = {}


class _LastCall:
    """A collective's last non-in-place call: its buffers and communicator (by identity), what
    else decides its program (``key``: algorithm, op, verify, the programs' generation, the
    runner asked for), the result's dtype, and the private communicator and bound program it
    ran; a repeated identical call runs them again and skips every check."""

    __slots__ = ("sendbuf", "recvbuf", "comm", "key", "dtype", "pcomm", "bound")

    def __init__(self, sendbuf, recvbuf, comm, key: tuple, dtype, pcomm, bound) -> None:
        self.sendbuf, self.recvbuf, self.comm = sendbuf, recvbuf, comm
        self.key, self.dtype, self.pcomm, self.bound = key, dtype, pcomm, bound

    def repeats(self, sendbuf, recvbuf, comm, key: tuple) -> bool:
        return (
            self.sendbuf is sendbuf
            and self.recvbuf is recvbuf
            and self.comm is comm
            and self.key == key
            and recvbuf.dtype == self.dtype
        )


#: The last call of :func:`allreduce` and of :func:`alltoall`, by collective.
_last: dict[str, _LastCall] = {}


def _bind(
    source: Any,
    sendbuf: Any,
    recvbuf: np.ndarray,
    op: str | None,
    inplace: bool,
    make: Callable[[Any, np.ndarray, np.ndarray], Any],
) -> Any:
    """The bound program of ``source`` (a Python plan or a core program) on these buffers, from
    the cache or made by ``make(source, inbuf, outbuf)``."""
    key = (id(sendbuf), id(recvbuf), op)
    cache = _bindings.setdefault(id(source), [])
    for b in cache:
        if b.key == key and b.refs[0] is source:
            return b.bound
    out = recvbuf.reshape(-1)
    inp = np.empty_like(out) if inplace else sendbuf.reshape(-1)
    bound = make(source, inp, out)
    cache.insert(0, _Binding(key, bound, (source, sendbuf, recvbuf)))
    del cache[_MAX_BOUND:]
    if len(_bindings) > 256:
        _bindings.clear()
    return bound


def clear_bindings() -> None:
    """Forgets the buffers cached by earlier calls (they keep the arrays alive)."""
    _bindings.clear()
    _last.clear()


def allreduce(
    comm: Any,
    sendbuf: Any,
    recvbuf: np.ndarray | None = None,
    algorithm: str = "recursive_doubling",
    *,
    op: str = _DEFAULT["op"],
    verify: bool = True,
    abort: bool = True,
    timeout: float | None = None,
    runner: str | None = None,
) -> np.ndarray:
    """Allreduce with a hypercuboid schedule, run with non-blocking point-to-point calls.

    ``algorithm`` takes the simulator's names and schedule strings (``ring``, ``tree``,
    ``recursive_doubling``, ...). ``sendbuf`` is a C-contiguous NumPy array (or
    ``MPI.IN_PLACE``: the input is then ``recvbuf``); ``recvbuf`` gets the result (allocated
    when ``None``) and is returned. ``op`` is ``sum``, ``prod``, ``max`` or ``min``.

    Each rank builds (once, then from a cache) only its own program. With ``verify`` (the
    default) a schedule that fails verification raises
    :class:`~hypercuboid.errors.VerificationError` on every rank before any message is sent.
    Argument errors raise on the rank that has them. A failure while messages are in flight
    prints the rank and the op and aborts the job (``abort=False``: raises
    :class:`~hypercuboid.errors.MPIError` instead); ``timeout`` (seconds) turns a wait that
    never ends into such a failure.

    ``runner``: ``native`` (the compiled C runner, :mod:`hypercuboid.mpi.native`), ``python``
    (the mpi4py engine), ``auto`` (native when it loads and has a C type for the dtype, else
    Python), or None: ``$HYPERCUBOID_RUNNER`` when set, else ``auto``. Both runners run the
    same program in the same order and give the same bits.
    """
    return _collective(
        "allreduce",
        comm,
        sendbuf,
        recvbuf,
        algorithm,
        op,
        verify=verify,
        abort=abort,
        timeout=timeout,
        runner=runner,
    )


#: The alltoall defaults of the core.
_A2A = _core.DEFAULTS["alltoall"]


def alltoall(
    comm: Any,
    sendbuf: Any,
    recvbuf: np.ndarray | None = None,
    algorithm: str = "pairwise",
    *,
    verify: bool = True,
    abort: bool = True,
    timeout: float | None = None,
    runner: str | None = None,
) -> np.ndarray:
    """Alltoall with a hypercuboid schedule, run with non-blocking point-to-point calls:
    ``MPI_Alltoall(sendbuf, count, type, recvbuf, count, type, comm)`` with ``count`` =
    ``sendbuf.size // comm.size``.

    ``algorithm``: ``linear``, ``linear_shifted:block=B`` (or ``scattered``), ``pairwise``,
    ``bruck``, ``k_bruck:k=K``, ``linear_sync:max=M`` (``hypercuboid schedule list``).
    ``sendbuf`` is a C-contiguous NumPy array of ``comm.size`` blocks, block ``j`` for rank
    ``j`` (a 2-D ``(size, count)`` array reads naturally), or ``MPI.IN_PLACE`` (the input is
    then ``recvbuf``); ``recvbuf`` (allocated when ``None``, and returned) gets rank ``i``'s
    block for this rank at block ``i``. Integer, floating-point and complex dtypes.

    Programs, verification, errors, ``timeout`` and ``runner`` as in :func:`allreduce`.
    """
    return _collective(
        "alltoall",
        comm,
        sendbuf,
        recvbuf,
        algorithm,
        None,
        verify=verify,
        abort=abort,
        timeout=timeout,
        runner=runner,
    )


def _collective(
    collective: str,
    comm: Any,
    sendbuf: Any,
    recvbuf: np.ndarray | None,
    algorithm: str,
    op: str | None,
    *,
    verify: bool,
    abort: bool,
    timeout: float | None,
    runner: str | None,
) -> np.ndarray:
    """What :func:`allreduce` (``op`` its reduction) and :func:`alltoall` (``op`` None) do:
    repeat the last identical call at once, else check the buffers, bind this rank's program
    (native or Python runner) to them and run it."""
    last = _last.get(collective)
    key = (algorithm, op, verify, programs.generation, runner)
    if timeout is not None:
        timeout = launch.check_timeout(timeout)
    if last is not None and last.repeats(sendbuf, recvbuf, comm, key):
        # the same call as the last one (a benchmark loop): nothing to check or look up
        try:
            last.bound.run(last.pcomm, timeout)
        except MPIError as e:
            _fail(
                comm, MPIError(f"{collective} '{algorithm}' ({comm.Get_size()} ranks): {e}"), abort
            )
        return cast(np.ndarray, recvbuf)
    from mpi4py import MPI

    _check_comm(comm)
    if comm.Is_inter():
        raise ScheduleError(f"{collective} on an intercommunicator is not supported")
    inplace = sendbuf is MPI.IN_PLACE
    if recvbuf is None:
        if inplace:
            raise ScheduleError("MPI.IN_PLACE needs a recvbuf holding the input")
        src = _as_vector(sendbuf, "sendbuf")
        # an alltoall's result has sendbuf's shape ((size, count) reads naturally)
        recvbuf = np.empty_like(sendbuf if collective == "alltoall" else src)
    out = _as_vector(recvbuf, "recvbuf")
    if inplace:
        src = out
    else:
        src = _as_vector(sendbuf, "sendbuf")
        if src.dtype != out.dtype or src.size != out.size:
            raise ScheduleError(
                f"sendbuf ({src.size} x {src.dtype}) and recvbuf ({out.size} x {out.dtype}) differ"
            )
        if np.may_share_memory(src, out):  # exact for contiguous buffers
            raise ScheduleError("sendbuf and recvbuf overlap; use MPI.IN_PLACE")
    if not recvbuf.flags.writeable:
        raise ScheduleError("recvbuf is read only")
    size = comm.Get_size()
    rank = comm.Get_rank()
    if op is None:
        ufunc, count = None, _alltoall_count(out, size)
    else:
        ufunc, count = check_dtype_op(out.dtype, op), out.size
    asked = runner
    runner = native.check_runner(runner)
    if native.use_native(runner, out.dtype):
        program = programs.program_for(
            algorithm, size, rank, count, out.dtype, op, verify, collective
        )
        bound = _bind(
            program,
            sendbuf,
            recvbuf,
            op or collective,
            inplace,
            lambda p, i, o: native.NativeBound(p, i, o, op),
        )
    else:
        plan = plan_for(algorithm, size, rank, count, out.dtype, op, verify, collective)
        bound = _bind(
            plan,
            sendbuf,
            recvbuf,
            op or collective,
            inplace,
            lambda p, i, o: engine.Bound(p, i, o, ufunc),
        )
    if inplace:
        bound.inbuf[...] = out
    pcomm = _private(comm, timeout, f"{collective} '{algorithm}'", abort)
    if not inplace:
        key = (algorithm, op, verify, programs.generation, asked)
        _last[collective] = _LastCall(sendbuf, recvbuf, comm, key, out.dtype, pcomm, bound)
    try:
        bound.run(pcomm, timeout)
    except MPIError as e:
        _fail(comm, MPIError(f"{collective} '{algorithm}' ({size} ranks): {e}"), abort)
    return recvbuf


def _alltoall_count(out: np.ndarray, size: int) -> int:
    """The elements per pair of ranks of an alltoall's buffer ``out``, or the error."""
    if out.dtype.kind not in "iufc" or out.dtype.hasobject:
        raise ScheduleError(
            f"dtype {out.dtype} cannot be exchanged: accepted are signed and unsigned integers, "
            "floating-point and complex types"
        )
    if out.size % size != 0:
        raise ScheduleError(
            f"the buffers have {out.size} elements, not a multiple of the {size} ranks: an "
            "alltoall sends the same count to every rank"
        )
    return out.size // size


def execute(
    comm: Any,
    schedule: Any,
    sendbuf: np.ndarray | None = None,
    recvbuf: np.ndarray | None = None,
    *,
    verify: bool = True,
    abort: bool = True,
    timeout: float | None = None,
    runner: str | None = None,
) -> np.ndarray | None:
    """Runs any :class:`~hypercuboid.Schedule` on ``comm`` (one program per rank; the schedule
    must have ``comm.size`` ranks).

    A schedule with data semantics (an allreduce, an alltoall) needs ``sendbuf`` (and gets
    ``recvbuf``, allocated when ``None``, and returned); a sizes-only schedule (imported GOAL)
    moves zero-filled bytes and returns ``None``. Compute and sleep ops spin for their time.
    Verification, errors, ``timeout`` and ``runner`` as in :func:`allreduce`.
    """
    _check_comm(comm)
    timeout = launch.check_timeout(timeout)
    runner = native.check_runner(runner)
    size = comm.Get_size()
    rank = comm.Get_rank()
    if schedule.nranks != size:
        raise ScheduleError(f"the schedule has {schedule.nranks} ranks, the communicator {size}")
    meta = schedule.meta
    if meta["collective"] == "halo":
        raise ScheduleError(
            "a halo exchange updates each rank's local array in place: run it with "
            "hypercuboid.mpi.halo_exchange(comm, schedule, f)"
        )
    if verify:
        programs.require_sound(schedule)
    count = int(meta["count"])
    ufunc = None
    result = None
    if meta["collective"] == "none" or meta["dtype"] == "byte":
        inp = np.zeros(count, dtype=np.uint8)
        out = np.zeros(count, dtype=np.uint8)
    else:
        if sendbuf is None:
            raise ScheduleError(f"a {meta['collective']} schedule needs a sendbuf")
        inp = _as_vector(sendbuf, "sendbuf")
        if inp.size != count:
            raise ScheduleError(f"sendbuf has {inp.size} elements; the schedule {count}")
        if recvbuf is None:
            recvbuf = np.empty_like(inp)
        out = _as_vector(recvbuf, "recvbuf")
        if out.dtype != inp.dtype or out.size != count:
            raise ScheduleError("sendbuf and recvbuf differ in dtype or size")
        ufunc = None if meta["op"] is None else check_dtype_op(out.dtype, meta["op"])
        result = recvbuf
    program = schedule.program(rank)
    bound = _bound(program, inp, out, meta["op"], ufunc, runner)
    pcomm = _private(comm, timeout, "execute", abort)
    try:
        bound.run(pcomm, timeout)
    except MPIError as e:
        _fail(comm, MPIError(f"schedule '{meta['name']}' ({size} ranks): {e}"), abort)
    finally:
        bound.free()
    return result


def _bound(
    program: Any,
    inp: np.ndarray,
    out: np.ndarray,
    op: str | None,
    ufunc: np.ufunc | None,
    runner: str,
) -> Any:
    """``program`` (a checked core program) bound to the buffers for ``runner`` (checked)."""
    if native.use_native(runner, out.dtype):
        return native.NativeBound(program, inp, out, op)
    plan = engine.compile_program(
        program, rank=program.rank, nranks=program.nranks, count=program.input_len
    )
    return engine.Bound(plan, inp, out, ufunc)


def run_program(
    comm: Any,
    program: Any,
    sendbuf: np.ndarray,
    recvbuf: np.ndarray,
    *,
    op: str | None = _DEFAULT["op"],
    abort: bool = True,
    timeout: float | None = None,
    runner: str | None = None,
) -> np.ndarray:
    """Runs a program given as columns (this rank's part of a schedule: a
    :class:`hypercuboid._core.Program` or a dict in its format, checked by the core) on
    ``comm``: the engine without a schedule, for hand-made programs and tests. Nothing is
    verified. ``runner`` as in :func:`allreduce`."""
    _check_comm(comm)
    timeout = launch.check_timeout(timeout)
    runner = native.check_runner(runner)
    inp = _as_vector(sendbuf, "sendbuf")
    out = _as_vector(recvbuf, "recvbuf")
    ufunc = None if op is None else check_dtype_op(out.dtype, op)
    if not isinstance(program, _core.Program):
        program = _core.Program.from_columns(
            program,
            rank=comm.Get_rank(),
            nranks=comm.Get_size(),
            input_len=inp.size,
            output_len=out.size,
        )
    bound = _bound(program, inp, out, op, ufunc, runner)
    try:
        bound.run(private_comm(comm, timeout), timeout)
    except MPIError as e:
        _fail(comm, e, abort)
    finally:
        bound.free()
    return recvbuf

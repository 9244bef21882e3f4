"""The executor's engine: runs one rank's program with non-blocking MPI point-to-point calls.

A program arrives as columns (the dict of :meth:`hypercuboid.Schedule.program`). It is compiled
once into a :class:`Plan` (dependency counters, dependents lists, slices), bound to the caller's
buffers once (:class:`Bound`: NumPy views for every send, receive, reduce and copy), and then
run as many times as asked by :func:`run`:

* every op whose dependencies are satisfied is started in program order: a send becomes an
  ``Isend`` of a view of its slice, a receive an ``Irecv`` straight into its slice (or into a
  temporary when it reduces in place), a reduce or copy is done on the spot with a NumPy ufunc
  into the destination slice;
* when nothing more can start, one outstanding request is completed with ``Waitany`` (``Wait``
  when only one is left), which satisfies the dependents of the op that finished.

Dependencies follow GOAL: ``requires`` (kind 0) = start after the other op completes,
``irequires`` (kind 1) = start after it starts. Messages move as bytes (``MPI.BYTE``), so any
fixed-size NumPy dtype travels. Reductions use the dtype's ufuncs in the operand order the
schedule gives, which is what makes a non-commutative order, and the bits of a floating-point
result, the schedule's: a reduce with ``combine`` 1 is ``dst = src ⊕ dst``, 2 ``dst = dst ⊕
src``; a fused receive with ``combine`` 1 is ``dst = incoming ⊕ operand``, 2 ``dst = operand ⊕
incoming``, where the operand is its ``src`` slice (receive-reduce-copy: the message lands
straight in ``dst`` and is reduced there) or ``dst`` itself when it has none.

This module imports mpi4py only when a program runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import Any

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import MPIError, ScheduleError

#: Names of the op kinds, indexed by the ``kind`` column (the core's codes).
KIND_NAMES: tuple[str, ...] = _core.OP_KINDS
SEND, RECV, REDUCE, COPY, COMPUTE, SLEEP, PACK, UNPACK = (
    KIND_NAMES.index(k)
    for k in ("send", "recv", "reduce", "copy", "compute", "sleep", "pack", "unpack")
)
#: Combine codes (the core's): assign, dst = x ⊕ dst (before), dst = dst ⊕ x (after).
ASSIGN, BEFORE, AFTER = (_core.COMBINES.index(c) for c in ("assign", "before", "after"))
#: Dependency codes (the core's): after the other op completes, after it starts.
REQUIRES, IREQUIRES = (_core.DEP_KINDS.index(k) for k in ("requires", "irequires"))

#: NumPy ufunc of each reduction operator (the MPI names, lower case).
UFUNCS: dict[str, np.ufunc] = {
    "sum": np.add,
    "prod": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}
assert set(UFUNCS) == set(_core.REDUCE_OPS), "a reduction op without a ufunc"


def slot_name(slot: int) -> str:
    """``input``, ``output``, ``scratch k`` or ``none`` for a slot code."""
    if slot == _core.SLOT_NONE:
        return "none"
    if slot == _core.SLOT_INPUT:
        return "input"
    if slot == _core.SLOT_OUTPUT:
        return "output"
    return f"scratch{slot - _core.SLOT_SCRATCH}"


@dataclass(frozen=True, eq=False)
class Plan:
    """One rank's program, compiled for execution (independent of the buffers): the columns
    as lists, ``ndeps`` (unsatisfied dependencies of each op at the start), the dependents to
    release when an op starts (``after_start``, irequires) or completes (``after_complete``,
    requires), ``roots`` (ops free at the start, in program order), ``opaque_bytes`` (the
    largest sizes-only send) and ``messages`` (sends and receives)."""

    rank: int
    nranks: int
    count: int
    n: int
    kind: list[int]
    peer: list[int]
    tag: list[int]
    nbytes: list[int]
    combine: list[int]
    buf: list[tuple[int, int, int]]
    src: list[tuple[int, int, int]]
    time_ps: list[int]
    ndeps: list[int]
    after_start: list[tuple[int, ...]]
    after_complete: list[tuple[int, ...]]
    roots: list[int]
    scratch: list[int]
    opaque_bytes: int
    messages: int

    def describe(self, i: int) -> str:
        """Op ``i`` in readable form, as error messages name it."""
        k = self.kind[i]
        name = KIND_NAMES[k]
        slot, off, ln = self.buf[i]
        none = _core.SLOT_NONE
        dst = f"{slot_name(slot)}[{off}:{off + ln}]" if slot != none else f"{self.nbytes[i]} bytes"
        if k == SEND:
            return f"op {i} (send {dst} to rank {self.peer[i]} tag {self.tag[i]})"
        if k == RECV:
            s, so, sl = self.src[i]
            other = f"{slot_name(s)}[{so}:{so + sl}]" if s != none else "dst"
            how = {
                ASSIGN: "",
                BEFORE: f" reducing as incoming ⊕ {other}",
                AFTER: f" reducing as {other} ⊕ incoming",
            }[self.combine[i]]
            return f"op {i} (recv {dst} from rank {self.peer[i]} tag {self.tag[i]}{how})"
        if k in (REDUCE, COPY):
            s, so, sl = self.src[i]
            return f"op {i} ({name} {slot_name(s)}[{so}:{so + sl}] -> {dst})"
        return f"op {i} ({name} {self.time_ps[i]} ps)"


def compile_program(program: Any, *, rank: int, nranks: int, count: int) -> Plan:
    """Compiles one rank's program into a :class:`Plan`.

    ``program`` is a :class:`hypercuboid._core.Program` (from :meth:`Schedule.program` or the
    core's generators: checked by the core for ``nranks`` ranks and buffers of ``count``
    elements) or a dict of columns in its format, which the core checks here
    (``_core.Program.from_columns``): a malformed program raises
    :class:`~hypercuboid.errors.ScheduleError` naming the rank, the op and the problem (an
    unknown kind, a dependency on a missing op, a slice outside its buffer, a peer outside the
    communicator, a reduce whose source and destination differ in length). Nothing is checked
    twice: the plan is built from checked columns.
    """
    try:  # a malformed column is the core's to report, below
        kinds = [int(k) for k in program["kind"]] if "kind" in program else []
    except (TypeError, ValueError):
        kinds = []
    regional = [i for i, k in enumerate(kinds) if k in (PACK, UNPACK)]
    if regional:
        i = regional[0]
        raise ScheduleError(
            f"rank {rank}: op {i} is a {KIND_NAMES[kinds[i]]} of a 3-D region (a halo "
            "exchange): run it with hypercuboid.mpi.halo_exchange(comm, schedule, f) on the "
            "rank's local array"
        )
    if isinstance(program, _core.Program):
        if (program.rank, program.nranks, program.input_len) != (rank, nranks, count):
            raise ScheduleError(
                f"the program was built for rank {program.rank} of {program.nranks} with "
                f"{program.input_len} elements, not rank {rank} of {nranks} with {count}"
            )
    else:
        program = _core.Program.from_columns(
            program, rank=rank, nranks=nranks, input_len=count, output_len=count
        )
    kind = program["kind"].tolist()
    n = len(kind)

    def slices(column: str) -> list[tuple[int, int, int]]:
        """The (slot, offset, len) of every op's ``column`` (``buf`` or ``src``)."""
        parts = (program[f"{column}_{field}"].tolist() for field in ("slot", "offset", "len"))
        return list(zip(*parts, strict=True))

    buf = slices("buf")
    src = slices("src")
    nbytes = program["bytes"].tolist()
    messages = sum(1 for k in kind if k in (SEND, RECV))
    opaque = max(
        (nbytes[i] for i in range(n) if kind[i] == SEND and buf[i][0] == _core.SLOT_NONE),
        default=0,
    )
    ndeps = [0] * n
    after_start: list[list[int]] = [[] for _ in range(n)]
    after_complete: list[list[int]] = [[] for _ in range(n)]
    dep_op, dep_on, dep_kind = (c.tolist() for c in program.dep_columns)
    for op, on, dk in zip(dep_op, dep_on, dep_kind, strict=True):
        (after_complete if dk == REQUIRES else after_start)[on].append(op)
        ndeps[op] += 1
    return Plan(
        rank=rank,
        nranks=nranks,
        count=count,
        n=n,
        kind=kind,
        peer=program["peer"].tolist(),
        tag=program["tag"].tolist(),
        nbytes=nbytes,
        combine=program["combine"].tolist(),
        buf=buf,
        src=src,
        time_ps=program["time_ps"].tolist(),
        ndeps=ndeps,
        after_start=[tuple(a) for a in after_start],
        after_complete=[tuple(a) for a in after_complete],
        roots=[i for i in range(n) if ndeps[i] == 0],
        scratch=list(program["scratch"]),
        opaque_bytes=opaque,
        messages=messages,
    )


_MPI: Any = None


def _mpi() -> Any:
    global _MPI
    if _MPI is None:
        from mpi4py import MPI

        _MPI = MPI
    return _MPI


_OP_NAMES = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min"}


def _one_element(ufunc: np.ufunc, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> Any:
    """``out = a ⊕ b`` on one element without a ufunc call (a ufunc call costs about 1 µs;
    this a fifth), with the same bits: IEEE ``+`` and ``*`` of NumPy float scalars, integer
    arithmetic wrapped to the dtype's width like the ufunc's, ``max``/``min`` of integers.
    ``None`` where no such shortcut is exact (max/min of floats, complex, extended precision)."""
    name = _OP_NAMES.get(ufunc)  # type: ignore[call-overload]
    dt = out.dtype
    if dt.kind == "f" and dt.itemsize in (2, 4, 8) and name in ("sum", "prod"):
        if name == "sum":

            def act() -> None:
                out[0] = a[0] + b[0]

        else:

            def act() -> None:
                out[0] = a[0] * b[0]

        return act
    if dt.kind in "iu" and name is not None:
        bits = dt.itemsize * 8
        mask = (1 << bits) - 1
        top = (1 << (bits - 1)) if dt.kind == "i" else 1 << bits
        wrap = 1 << bits
        if name in ("max", "min"):
            pick = max if name == "max" else min

            def act() -> None:
                out[0] = pick(int(a[0]), int(b[0]))

            return act

        def act() -> None:
            x = int(a[0])
            y = int(b[0])
            v = ((x + y) if name == "sum" else (x * y)) & mask
            out[0] = v - wrap if v >= top else v

        return act
    return None


def _action(ufunc: np.ufunc, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> Any:
    if out.size == 1:
        act = _one_element(ufunc, a, b, out)
        if act is not None:
            return act
    return (ufunc, a, b, out)


class Bound:
    """A :class:`Plan` bound to an input, an output and fresh scratch buffers: every op's
    views are made once, so that a repeated call does no slicing, and every message becomes a
    persistent request (``MPI_Send_init`` / ``MPI_Recv_init``) on first use with a
    communicator, so that a repeated call only starts them.

    ``msgs[i]`` is the ``(buffer, MPI.BYTE)`` of a send or receive; ``acts[i]`` the local
    action of a reduce, copy or reducing receive: ``(ufunc, a, b, out)`` for ``out = a ⊕ b``
    (``ufunc`` None: ``out[...] = a``) or a function of no argument (one element), or the
    nanoseconds to spin for a compute or sleep. Empty reduces and copies have no action.
    """

    def __init__(
        self, plan: Plan, inbuf: np.ndarray, outbuf: np.ndarray, ufunc: np.ufunc | None
    ) -> None:
        MPI = _mpi()
        byte = MPI.BYTE
        self.plan = plan
        self.inbuf = inbuf
        self.outbuf = outbuf
        dtype = outbuf.dtype
        bufs = [inbuf, outbuf] + [np.zeros(s, dtype=dtype) for s in plan.scratch]
        self.bufs = bufs
        opaque = np.zeros(plan.opaque_bytes, dtype=np.uint8)
        self._comm: Any = None
        self._requests: list[Any] = []
        self.ops: list[tuple] = []

        def view(s: tuple[int, int, int]) -> np.ndarray:
            slot, off, ln = s
            return bufs[slot][off : off + ln]

        def need_ufunc(i: int) -> np.ufunc:
            if ufunc is None:
                raise ScheduleError(
                    f"rank {plan.rank}: {plan.describe(i)} reduces, but no reduction operator "
                    "was given"
                )
            return ufunc

        msgs: list[Any] = []
        acts: list[Any] = []
        for i in range(plan.n):
            k = plan.kind[i]
            c = plan.combine[i]
            msg = None
            act: Any = None
            if k == SEND or k == RECV:
                if plan.buf[i][0] == _core.SLOT_NONE:
                    # sizes only: sends share one zero buffer, each receive has its own
                    data = opaque if k == SEND else np.zeros(plan.nbytes[i], dtype=np.uint8)
                    msg = (data[: plan.nbytes[i]], byte)
                else:
                    dst = view(plan.buf[i])
                    if k == RECV and c != ASSIGN:
                        # fused receive-reduce: dst = incoming ⊕ operand (1) or
                        # operand ⊕ incoming (2); the operand is dst itself unless given
                        f = need_ufunc(i)
                        operand = view(plan.src[i]) if plan.src[i][0] != _core.SLOT_NONE else dst
                        if operand is not dst and not np.may_share_memory(operand, dst):
                            into = dst  # receive in place, then reduce in place: no copy
                        else:
                            into = np.zeros_like(dst)
                        msg = (into.view(np.uint8), byte)
                        if dst.size:
                            act = (
                                _action(f, into, operand, dst)
                                if c == BEFORE
                                else _action(f, operand, into, dst)
                            )
                    else:
                        msg = (dst.view(np.uint8), byte)
            elif k == REDUCE or k == COPY:
                dst = view(plan.buf[i])
                src = view(plan.src[i])
                if dst.size:
                    if k == COPY or c == ASSIGN:
                        act = (None, src, None, dst)
                    else:
                        f = need_ufunc(i)
                        # before: dst = src ⊕ dst; after: dst = dst ⊕ src
                        act = (
                            _action(f, src, dst, dst) if c == BEFORE else _action(f, dst, src, dst)
                        )
            else:
                act = plan.time_ps[i] // 1000
            msgs.append(msg)
            acts.append(act)
        self.msgs = msgs
        self.acts = acts

    def entries(self, comm: Any) -> list[tuple]:
        """Per op ``(kind, request, action, after_start, after_complete)`` with persistent
        requests on ``comm`` (made on the first call with that communicator)."""
        if comm is self._comm:
            return self.ops
        self.free()
        MPI = _mpi()
        plan = self.plan
        ops = []
        for i in range(plan.n):
            k = plan.kind[i]
            req = None
            if k == SEND or k == RECV:
                p = MPI.ANY_SOURCE if plan.peer[i] == -1 else plan.peer[i]
                t = MPI.ANY_TAG if plan.tag[i] == -1 else plan.tag[i]
                if k == SEND:
                    req = comm.Send_init(self.msgs[i], p, t)
                else:
                    req = comm.Recv_init(self.msgs[i], p, t)
                self._requests.append(req)
            ops.append((k, req, self.acts[i], plan.after_start[i], plan.after_complete[i]))
        self.ops = ops
        self._comm = comm
        return ops

    def run(self, comm: Any, timeout: float | None = None) -> None:
        """Runs the bound program once on ``comm`` (see :func:`run`)."""
        run(comm, self, timeout)

    def free(self) -> None:
        """Frees the persistent requests (they are made again on the next run)."""
        reqs, self._requests, self._comm, self.ops = self._requests, [], None, []
        if not reqs or _MPI is None or _MPI.Is_finalized():
            return
        for r in reqs:
            try:
                r.Free()
            except Exception:  # noqa: BLE001 - an active request after a failure
                pass

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # noqa: BLE001 - at interpreter exit
            pass


def _spin(ns: int) -> None:
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def run(comm: Any, bound: Bound, timeout: float | None = None) -> None:
    """Runs a bound program once on ``comm`` (the communicator its peers and tags refer to).

    Raises :class:`~hypercuboid.errors.MPIError` naming the rank and the op that failed, or,
    after ``timeout`` seconds, the ops still waiting.
    """
    MPI = _MPI or _mpi()
    plan = bound.plan
    ops = bound.entries(comm)
    left = plan.n
    pending = plan.ndeps.copy()
    ready = plan.roots.copy()  # sorted, hence a heap
    reqs: list[Any] = []  # outstanding requests and their ops
    rops: list[int] = []
    i = -1
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            while ready:
                i = heappop(ready)
                k, q, a, ast, acp = ops[i]
                if k < 2:
                    q.Start()
                    reqs.append(q)
                    rops.append(i)
                else:
                    if k < 4:
                        if a is not None:
                            if a.__class__ is tuple:
                                f, x, y, o = a
                                if f is None:
                                    o[...] = x
                                else:
                                    f(x, y, out=o)
                            else:
                                a()
                    elif a:
                        _spin(a)
                    left -= 1
                    for d in acp:
                        pending[d] -= 1
                        if not pending[d]:
                            heappush(ready, d)
                for d in ast:
                    pending[d] -= 1
                    if not pending[d]:
                        heappush(ready, d)
            if not left:
                return
            i = -1
            # nothing can start: complete one request (Waitany / Wait cost far less from
            # Python than Waitsome, and every completion is handled before waiting again)
            nreq = len(reqs)
            if nreq == 1:
                if deadline is None:
                    reqs[0].Wait()
                elif not _wait_until(reqs[0].Test, deadline):
                    raise _timeout(plan, rops, timeout)
                j = 0
            elif nreq:
                if deadline is None:
                    j = MPI.Request.Waitany(reqs)
                else:
                    found = _test_until(MPI.Request.Testany, reqs, deadline)
                    if found is None:
                        raise _timeout(plan, rops, timeout)
                    j = found
            else:
                stuck = [j for j in range(plan.n) if pending[j]]
                raise MPIError(
                    f"rank {plan.rank}: the program cannot progress: {len(stuck)} op(s) wait on "
                    f"ops that never run (a dependency cycle), first {plan.describe(stuck[0])}"
                )
            i = rops[j]
            del reqs[j]
            del rops[j]
            a = ops[i][2]
            if a is not None:
                if a.__class__ is tuple:
                    f, x, y, o = a
                    f(x, y, out=o)
                else:
                    a()
            left -= 1
            for d in ops[i][4]:
                pending[d] -= 1
                if not pending[d]:
                    heappush(ready, d)
            i = -1
    except MPIError:
        _cancel(reqs, rops, plan)
        bound.free()
        raise
    except Exception as e:
        if i >= 0:
            where = plan.describe(i)
        elif rops:
            where = "waiting for " + ", ".join(plan.describe(j) for j in rops[:4])
        else:
            where = "between ops"
        _cancel(reqs, rops, plan)
        bound.free()
        raise MPIError(f"rank {plan.rank}: {where}: {type(e).__name__}: {e}") from e


def _wait_until(test: Any, deadline: float) -> bool:
    while not test():
        if time.monotonic() > deadline:
            return False
    return True


def _test_until(testany: Any, reqs: list, deadline: float) -> int | None:
    while True:
        j, flag = testany(reqs)
        if flag and j >= 0:
            return j
        if time.monotonic() > deadline:
            return None


def _timeout(plan: Plan, rops: list[int], timeout: float | None) -> MPIError:
    waiting = ", ".join(plan.describe(j) for j in rops[:4])
    return MPIError(
        f"rank {plan.rank}: timed out after {timeout} s waiting for {len(rops)} op(s): {waiting}"
    )


def _cancel(reqs: list, rops: list[int], plan: Plan) -> None:
    """After a failure, cancels the receives still posted (so that they cannot match later
    traffic) and waits for them; sends cannot be cancelled portably and are left to finish."""
    for r, i in zip(reqs, rops, strict=False):
        if plan.kind[i] == RECV and r:
            try:
                r.Cancel()
                r.Wait()
            except Exception:  # noqa: BLE001 - best effort on an already failing path
                pass

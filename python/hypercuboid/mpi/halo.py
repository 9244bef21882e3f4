"""Halo exchanges over MPI: a halo schedule's program for this rank, run in place on the rank's
local array (logical shape ``(nx + 2, ny + 2, nz + 2, values)``, see :mod:`hypercuboid.halo`: a
C-order array, or any writeable view whose values fill one block of memory, such as the
``transpose(1, 2, 3, 0)`` of a ``(values, X, Y, Z)`` C-order array, the lattice-Boltzmann ``soa``
layout).

The program is compiled once per (communicator, schedule, array) into a plan, run by one of
two runners (``runner``, as :func:`hypercuboid.mpi.allreduce` takes it; ``auto``, the default,
is the native runner where it loads):

- **native**: the compiled C runner (:mod:`hypercuboid.mpi.native`) binds the program to the
  array once (its boxes as loops in the array's memory order, its messages as persistent
  requests, ``MPI_Ssend_init`` / ``MPI_Recv_init``, started with ``MPI_Startall``) and runs each
  exchange in one call (two for :func:`halo_start` and :meth:`HaloRequest.end`), packing and
  unpacking in C;
- **python**: every pack and unpack becomes ONE strided NumPy assignment between a 3-D box of
  the array (a slice of the last axis, or an index array for the reduced exchange's
  distributions) and a contiguous view of a scratch buffer, every send a persistent
  synchronous send (``MPI_Ssend_init``: the seed's ``MPI_Issend``) and every receive a
  persistent receive, both only started on each call.

Both walk the program's dependencies like :mod:`hypercuboid.mpi.engine`: every op whose
dependencies are met starts in program order; when nothing can start, one request is completed
(``Waitany``). Both move the same bytes into the same places: the array's bits after an
exchange do not depend on the runner.

:func:`halo_start` runs everything that can run without waiting (for the non-blocking
exchanges: every pack, receive and send) and returns a :class:`HaloRequest`;
:meth:`HaloRequest.end` completes the exchange. Work that needs no halo data goes between the
two. :func:`halo_exchange` is both in one call.
"""

from __future__ import annotations

import time
from heapq import heappop, heappush
from typing import Any

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import MPIError, ScheduleError
from hypercuboid.halo import decomposition_of
from hypercuboid.schedule import Schedule

_KINDS = _core.OP_KINDS
SEND, RECV, COPY, COMPUTE, SLEEP, PACK, UNPACK = (
    _KINDS.index(k) for k in ("send", "recv", "copy", "compute", "sleep", "pack", "unpack")
)
REQUIRES = _core.DEP_KINDS.index("requires")
_FIELDS = _core.REGION_FIELDS


def _copies(f: np.ndarray, row: list[int], flat: np.ndarray, pack: bool) -> list[tuple]:
    """The ``(source, destination)`` view pairs of a pack (box -> ``flat``) or an unpack
    (``flat`` -> box) of the region a region row names: one pair per run of consecutive values
    of its mask (one for every value; 3 at most for a D3Q19 crossing mask), each a strided
    NumPy view, so that the op is a few ``np.copyto`` calls."""
    _, _d0, _d1, _d2, d3, o0, o1, o2, e0, e1, e2, mask = row
    box = f[o0 : o0 + e0, o1 : o1 + e1, o2 : o2 + e2]
    if mask == (1 << 64) - 1:
        runs = [(0, d3)]
    else:
        idx = [v for v in range(min(d3, 64)) if mask >> v & 1]
        runs = []
        for v in idx:
            if runs and runs[-1][1] == v:
                runs[-1] = (runs[-1][0], v + 1)
            else:
                runs.append((v, v + 1))
    nv = sum(b - a for a, b in runs)
    view = flat.reshape(box.shape[:3] + (nv,))
    pairs = []
    at = 0
    for a, b in runs:
        part = view[..., at : at + b - a]
        pairs.append((box[..., a:b], part) if pack else (part, box[..., a:b]))
        at += b - a
    return pairs


def _check_array_ops(rank: int, kind: list[int], prog: Any, f: np.ndarray) -> None:
    """Refuses a send, receive or copy of the array itself when the array is not C-contiguous
    (a transposed array is reached through the views of its pack and unpack regions only)."""
    if f.flags.c_contiguous:
        return
    buf, src = prog["buf_slot"].tolist(), prog["src_slot"].tolist()
    for i, k in enumerate(kind):
        if k in (SEND, RECV, COPY) and 1 in (buf[i], src[i]):
            raise ScheduleError(
                f"rank {rank}: op {i} is a {_KINDS[k]} of the array itself, which needs a "
                "C-contiguous array; accepted for a transposed array: halo schedules that "
                "reach it through pack and unpack ops only"
            )


class _NativePlan:
    """One rank's halo program bound to its array by the C runner: boxes, scratch buffers and
    persistent requests on the private duplicate of ``comm``."""

    native = True

    def __init__(self, comm: Any, schedule: Schedule, f: np.ndarray) -> None:
        import ctypes

        from mpi4py import MPI

        from hypercuboid.mpi import native
        from hypercuboid.mpi.executor import private_comm

        rank = comm.Get_rank()
        self.rank = rank
        self.comm = private_comm(comm)
        prog = schedule.program(rank)
        _check_array_ops(rank, prog["kind"].tolist(), prog, f)
        self.lib = native.load()
        self.f = f
        cprog, keep = native.program_struct(prog)
        regs, keep_regions = native.regions_struct(prog, f)
        self._err = ctypes.create_string_buffer(1024)
        self._errlen = ctypes.c_size_t(len(self._err))
        self._failed = ctypes.c_int64(-1)
        self._failed_ref = ctypes.byref(self._failed)
        self._plan = ctypes.c_void_p()
        rc = self.lib.hc_plan_create_ex_at(
            ctypes.byref(cprog),
            ctypes.byref(regs),
            native.PLAN_PERSISTENT | native.PLAN_SSEND,
            _core.DTYPE_CODES[f.dtype.name],
            0,
            ctypes.c_void_p(f.ctypes.data),
            ctypes.c_void_p(f.ctypes.data),
            ctypes.c_uint64(f.size),
            ctypes.c_void_p(MPI._addressof(self.comm)),
            ctypes.byref(self._plan),
            self._err,
            self._errlen,
        )
        del keep, keep_regions
        if rc != 0:
            self._plan = ctypes.c_void_p()
            raise MPIError(f"rank {rank}: halo exchange: {self._error()}")
        self.active = False

    def _error(self) -> str:
        return self._err.value.decode(errors="replace")

    def start(self) -> bool:
        """Runs every op that needs no wait; whether the exchange is already complete."""
        self.active = True
        self._call(self.lib.hc_plan_start(self._plan, self._failed_ref, self._err, self._errlen))
        return False

    def finish(self) -> None:
        """Completes the exchange."""
        rc = self.lib.hc_plan_finish(self._plan, 0.0, self._failed_ref, self._err, self._errlen)
        self._call(rc)
        self.active = False

    def time(self, iterations: int, warmup: int) -> np.ndarray:
        """Per-exchange times in µs, timed by the C runner's loop (``hc_plan_time``: ``warmup``
        untimed exchanges, then ``iterations`` timed ones, a barrier after each, on the plan's
        communicator)."""
        out = np.empty(iterations, dtype=np.float64)
        rc = self.lib.hc_plan_time(
            self._plan, iterations, warmup, 1, out.ctypes.data, self._err, self._errlen
        )
        self._call(rc)
        return out

    def _call(self, rc: int) -> None:
        if rc != 0:
            self.active = False
            raise MPIError(f"rank {self.rank}: halo exchange, {self._error()}")

    def free(self) -> None:
        from hypercuboid.mpi.native import free_plan

        self._plan = free_plan(self.lib, self._plan)


class _Plan:
    """One rank's halo program bound to its array, scratch buffers and persistent requests
    (on the private duplicate of ``comm``, so that the schedule's tags never match the
    application's messages), run by the Python engine."""

    native = False

    def __init__(self, comm: Any, schedule: Schedule, f: np.ndarray) -> None:
        from mpi4py import MPI

        from hypercuboid.mpi.executor import private_comm

        rank = comm.Get_rank()
        comm = private_comm(comm)
        prog = schedule.program(rank)
        self.rank = rank
        kind = prog["kind"].tolist()
        _check_array_ops(rank, kind, prog, f)
        n = len(kind)
        self.n = n
        self.kind = kind
        dtype = f.dtype
        scratch = [np.zeros(s, dtype=dtype) for s in prog["scratch"]]
        # the array as a flat buffer (slot 1) only where that is a view in the logical order;
        # a transposed array (the lattice-Boltzmann soa layout) is reached through the views of
        # its pack and unpack regions only
        flat = f.reshape(-1) if f.flags.c_contiguous else f[..., :0].reshape(-1)
        bufs: list[np.ndarray] = [flat[:0], flat] + scratch
        regions = prog["regions"].tolist()
        region = prog["region"].tolist()
        buf = zip(
            prog["buf_slot"].tolist(),
            prog["buf_offset"].tolist(),
            prog["buf_len"].tolist(),
            strict=True,
        )
        src = zip(
            prog["src_slot"].tolist(),
            prog["src_offset"].tolist(),
            prog["src_len"].tolist(),
            strict=True,
        )
        peer = prog["peer"].tolist()
        tag = prog["tag"].tolist()
        time_ps = prog["time_ps"].tolist()
        self.acts: list[Any] = []
        self.reqs: list[Any] = []
        self.describe: list[str] = []
        for i, (b, s) in enumerate(zip(buf, src, strict=True)):
            k = kind[i]
            act: Any = None
            req: Any = None
            if k in (PACK, UNPACK):
                row = regions[region[i] * _FIELDS : (region[i] + 1) * _FIELDS]
                flat = (
                    bufs[b[0]][b[1] : b[1] + b[2]] if k == PACK else bufs[s[0]][s[1] : s[1] + s[2]]
                )
                act = (PACK, _copies(f, row, flat, k == PACK), None, None)
                self.describe.append(f"op {i} ({_KINDS[k]} of {flat.size} values)")
            elif k in (SEND, RECV):
                v = bufs[b[0]][b[1] : b[1] + b[2]].view(np.uint8)
                if k == SEND:
                    req = comm.Ssend_init((v, MPI.BYTE), peer[i], tag[i])
                else:
                    req = comm.Recv_init((v, MPI.BYTE), peer[i], tag[i])
                self.describe.append(
                    f"op {i} ({_KINDS[k]} {v.size} bytes {'to' if k == SEND else 'from'} "
                    f"rank {peer[i]} tag {tag[i]})"
                )
            elif k == COPY:
                act = (COPY, bufs[s[0]][s[1] : s[1] + s[2]], None, bufs[b[0]][b[1] : b[1] + b[2]])
                self.describe.append(f"op {i} (copy)")
            elif k in (COMPUTE, SLEEP):
                act = (COMPUTE, time_ps[i] // 1000, None, None)
                self.describe.append(f"op {i} ({_KINDS[k]})")
            else:
                raise ScheduleError(
                    f"rank {rank}: op {i} is a {_KINDS[k]}; a halo schedule has pack, unpack, "
                    "send, recv, copy and compute ops"
                )
            self.acts.append(act)
            self.reqs.append(req)
        self.ndeps = [0] * n
        after_start: list[list[int]] = [[] for _ in range(n)]
        after_complete: list[list[int]] = [[] for _ in range(n)]
        dep_op, dep_on, dep_kind = (c.tolist() for c in prog.dep_columns)
        for op, on, dk in zip(dep_op, dep_on, dep_kind, strict=True):
            (after_complete if dk == REQUIRES else after_start)[on].append(op)
            self.ndeps[op] += 1
        self.after_start = [tuple(a) for a in after_start]
        self.after_complete = [tuple(a) for a in after_complete]
        self.roots = [i for i in range(n) if self.ndeps[i] == 0]
        self.requests = [r for r in self.reqs if r is not None]
        self.active = False

    def free(self) -> None:
        for r in self.requests:
            try:
                r.Free()
            except Exception:  # noqa: BLE001 - at exit, or after a failure
                pass
        self.requests = []


def _run_act(a: Any) -> None:
    k, box, vals, view = a
    if k == PACK:  # a pack or an unpack: box holds its (source, destination) view pairs
        for src, dst in box:
            np.copyto(dst, src)
    elif k == COPY:
        view[...] = box
    else:  # compute or sleep: box holds the nanoseconds
        end = time.perf_counter_ns() + box
        while time.perf_counter_ns() < end:
            pass


class HaloRequest:
    """An exchange in progress (:func:`halo_start`): :meth:`end` completes it."""

    def __init__(self, plan: _Plan | _NativePlan) -> None:
        self._plan: Any = plan
        if isinstance(plan, _NativePlan):
            self._done = plan.start()
            return
        self._pending = plan.ndeps.copy()
        self._ready = plan.roots.copy()
        self._left = plan.n
        self._reqs: list[Any] = []
        self._rops: list[int] = []
        self._done = False
        plan.active = True
        self._progress(wait=False)

    def _release(self, deps: tuple[int, ...]) -> None:
        pending = self._pending
        for d in deps:
            pending[d] -= 1
            if not pending[d]:
                heappush(self._ready, d)

    def _progress(self, wait: bool) -> None:
        from mpi4py import MPI

        p = self._plan
        ready = self._ready
        i = -1
        try:
            while True:
                while ready:
                    i = heappop(ready)
                    q = p.reqs[i]
                    if q is not None:
                        q.Start()
                        self._reqs.append(q)
                        self._rops.append(i)
                    else:
                        _run_act(p.acts[i])
                        self._left -= 1
                        self._release(p.after_complete[i])
                    self._release(p.after_start[i])
                i = -1
                if not self._left:
                    self._done = True
                    p.active = False
                    return
                if not wait:
                    return
                if not self._reqs:
                    stuck = [j for j in range(p.n) if self._pending[j]]
                    raise MPIError(
                        f"rank {p.rank}: the halo program cannot progress: {len(stuck)} op(s) "
                        f"wait on ops that never run, first {p.describe[stuck[0]]}"
                    )
                if len(self._reqs) == 1:
                    self._reqs[0].Wait()
                    j = 0
                else:
                    j = MPI.Request.Waitany(self._reqs)
                i = self._rops[j]
                del self._reqs[j]
                del self._rops[j]
                self._left -= 1
                self._release(p.after_complete[i])
                i = -1
        except MPIError:
            p.active = False
            raise
        except Exception as e:
            p.active = False
            where = p.describe[i] if i >= 0 else "waiting"
            raise MPIError(f"rank {p.rank}: halo exchange, {where}: {type(e).__name__}: {e}") from e

    def end(self) -> None:
        """Completes the exchange: every halo value the schedule fills is in the array."""
        if self._done:
            return
        if self._plan.native:
            self._plan.finish()
            self._done = True
        else:
            self._progress(wait=True)

    @property
    def done(self) -> bool:
        """Whether the exchange has completed."""
        return self._done


# The plans of the last calls, keyed by communicator, schedule and array (a proxy that swaps
# two arrays keeps both); each holds its persistent requests.
_PLANS: dict[tuple, tuple[Any, Schedule, np.ndarray, _Plan | _NativePlan]] = {}
_MAX_PLANS = 8
_finalize_hook: Any = None


def _at_finalize(*_args: Any) -> None:
    clear_plans()


def _hook_finalize() -> None:
    """Frees the plans' persistent requests when MPI finalizes (the delete callback of an
    attribute of ``MPI_COMM_SELF`` runs first thing in ``MPI_Finalize``)."""
    global _finalize_hook
    if _finalize_hook is None:
        from mpi4py import MPI

        _finalize_hook = MPI.Comm.Create_keyval(delete_fn=_at_finalize)
        MPI.COMM_SELF.Set_attr(_finalize_hook, True)


def _check(comm: Any, schedule: Schedule, f: Any) -> None:
    if not isinstance(schedule, Schedule):
        raise ScheduleError(
            f"invalid schedule {schedule!r}: give a hypercuboid.Schedule from halo.schedule(...)"
        )
    d = decomposition_of(schedule)
    size, rank = comm.Get_size(), comm.Get_rank()
    if size != d.nranks:
        raise ScheduleError(
            f"the halo schedule is for {d.nranks} ranks ({d.dims[0]}x{d.dims[1]}x{d.dims[2]}), "
            f"the communicator has {size}"
        )
    values = schedule.meta["halo"]["values"]
    shape = d.local_shape(rank, values)
    dtype = np.dtype(schedule.meta["dtype"])
    if not isinstance(f, np.ndarray):
        raise ScheduleError(
            f"invalid array of type {type(f).__name__}: give a NumPy array of shape {shape}"
        )
    if f.shape != shape or f.dtype != dtype:
        raise ScheduleError(
            f"invalid array of shape {f.shape} and dtype {f.dtype} on rank {rank}: its local "
            f"array has shape {shape} (subdomain {d.subdomain(rank)} plus the halo, {values} "
            f"values per site) and dtype {dtype}"
        )
    if not f.flags.writeable:
        raise ScheduleError(
            f"invalid array on rank {rank}: it is read-only; accepted: a writeable array (the "
            "exchange updates its halo in place)"
        )
    if not _one_block(f):
        raise ScheduleError(
            f"invalid array on rank {rank}: strides {f.strides} (bytes) for shape {f.shape}; "
            "accepted: an array whose values fill one block of memory in some axis order (C "
            "order, or a transposed view such as a (values, X, Y, Z) C-order array's "
            ".transpose(1, 2, 3, 0))"
        )


def _one_block(f: np.ndarray) -> bool:
    """Whether the values of ``f`` fill one contiguous block of memory, each once: its axes,
    sorted by stride, are those of a C-order array (any axis order, positive strides)."""
    stride = f.itemsize
    for s, n in sorted(zip(f.strides, f.shape, strict=True)):
        if n == 1:
            continue
        if s != stride:
            return False
        stride *= n
    return True


def _plan(comm: Any, schedule: Schedule, f: np.ndarray, runner: str | None) -> Any:
    from hypercuboid.mpi import native

    runner = native.check_runner(runner)
    key = (id(comm), id(schedule), f.__array_interface__["data"][0], f.shape, f.strides, runner)
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is comm and hit[1] is schedule and hit[2] is f:
        return hit[3]
    _check(comm, schedule, f)
    in_c = native.use_native(runner, f.dtype)
    _hook_finalize()
    if hit is not None:
        hit[3].free()
    if len(_PLANS) >= _MAX_PLANS:
        old = next(iter(_PLANS))
        _PLANS.pop(old)[3].free()
    plan = (_NativePlan if in_c else _Plan)(comm, schedule, f)
    _PLANS[key] = (comm, schedule, f, plan)
    return plan


def halo_start(
    comm: Any, schedule: Schedule, f: np.ndarray, runner: str | None = None
) -> HaloRequest:
    """Starts the exchange of ``schedule`` (from :func:`hypercuboid.halo.schedule`) on this
    rank's array ``f``: runs every op that needs no wait (the non-blocking exchanges pack and
    post every message; the blocking one its first phase's) and returns the request whose
    :meth:`~HaloRequest.end` completes it. ``f`` must not be touched in between except for sites
    that neither send nor receive halo data (the interior, one site from every face).
    ``runner``: ``auto`` (default, or ``$HYPERCUBOID_RUNNER``), ``native`` or ``python``
    (see the module documentation)."""
    plan = _plan(comm, schedule, f, runner)
    if plan.active:
        raise MPIError(
            f"rank {plan.rank}: an exchange on this array is still in progress: call end() on "
            "its request first"
        )
    return HaloRequest(plan)


def halo_exchange(comm: Any, schedule: Schedule, f: np.ndarray, runner: str | None = None) -> None:
    """Runs the halo exchange of ``schedule`` on this rank's array ``f`` in place (every rank of
    ``comm`` calls it with its own array; ``runner`` as for :func:`halo_start`)."""
    halo_start(comm, schedule, f, runner).end()


def runner_of(comm: Any, schedule: Schedule, f: np.ndarray, runner: str | None = None) -> str:
    """Which runner (``native``, ``python``) runs the exchange of ``schedule`` on ``f`` with
    ``runner`` (the plan is made here when it is not yet)."""
    return "native" if _plan(comm, schedule, f, runner).native else "python"


def clear_plans() -> None:
    """Frees the cached plans and their persistent requests."""
    for _, _, _, p in _PLANS.values():
        p.free()
    _PLANS.clear()

"""OTF2 import: an MPI application's OTF2 archive (Score-P's trace format) as a GOAL schedule.

Needs the ``otf2`` package (``pip install 'hypercuboid[otf2]'``). What is read, per rank (an
OTF2 location of an MPI process):

- every MPI call (a region of the MPI paradigm, or named ``MPI_*``, between Enter and Leave)
  is one group of ops that start together once the program before the call allows it, so a
  ``MPI_Sendrecv`` posts its send and its receive at once;
- ``MpiSend`` → ``send``, ``MpiRecv`` → ``recv``; ``MpiIsend`` and ``MpiIrecvRequest`` post a
  send or a receive that later ops wait for only from the call that completes it
  (``MpiIsendComplete``, ``MpiIrecv``, which also names the source and the tag it matched);
- ``MpiCollectiveEnd`` of an allreduce or an alltoall is expanded into the registered
  algorithm given (``allreduce=``, ``alltoall=``) or the one ``library=`` (``openmpi``,
  ``mpich``) would run, with communicator ranks translated to world ranks and tags moved above
  2^30 (out of the application's way); a barrier is a one-byte allreduce;
- the time between two MPI calls is a ``calc`` of that time (times ``compute_scale``).

Other collectives, a completion of a request never posted and a peer outside its communicator
are errors that name the rank, the event number and the event.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from hypercuboid.errors import ScheduleError

#: Tags of collective expansions start here.
COLLECTIVE_TAG_BASE = 1 << 30

_OP = re.compile(r"^(?:(l\d+):\s*)?(.*)$")
_DEP = re.compile(r"^(l\d+) (requires|irequires) (l\d+)$")


def _otf2():
    try:
        import otf2
    except ImportError:
        raise ScheduleError(
            "OTF2 import needs the otf2 package (pip install 'hypercuboid[otf2]')"
        ) from None
    return otf2


@dataclass
class _Op:
    text: str
    requires: list[int] = field(default_factory=list)
    irequires: list[int] = field(default_factory=list)


@dataclass
class _Rank:
    """One rank's program as it is built."""

    ops: list[_Op] = field(default_factory=list)
    frontier: list[int] = field(default_factory=list)
    pending: dict[int, int] = field(default_factory=dict)
    # The current MPI call: what its ops require, its blocking ops, its completions.
    call_requires: list[int] | None = None
    call_blocking: list[int] = field(default_factory=list)
    call_done: list[int] = field(default_factory=list)
    depth: int = 0
    last_end: int | None = None

    def add(self, text: str, requires: list[int]) -> int:
        self.ops.append(_Op(text, list(requires)))
        return len(self.ops) - 1

    def start_call(self) -> None:
        self.call_requires = list(self.frontier)
        self.call_blocking = []
        self.call_done = []

    def end_call(self) -> None:
        if self.call_blocking:
            self.frontier = self.call_blocking + self.call_done
        else:
            self.frontier = self.frontier + [d for d in self.call_done if d not in self.frontier]
        self.call_requires = None


def _collective_programs(kind: str, algorithm: str, n: int, nbytes: int) -> list[list[str]]:
    """The GOAL lines of each rank of a collective on ``n`` ranks (our generators' output)."""
    from hypercuboid import schedules

    if kind == "allreduce":
        count, dtype = (nbytes // 8, "float64") if nbytes % 8 == 0 else (nbytes, "int8")
        s = schedules.allreduce(algorithm, nranks=n, count=count, dtype=dtype)
    else:
        count, dtype = (nbytes // 8, "float64") if nbytes % 8 == 0 else (nbytes, "int8")
        s = schedules.alltoall(algorithm, nranks=n, count=count, dtype=dtype)
    blocks: list[list[str]] = []
    cur: list[str] | None = None
    for line in s.to_goal().splitlines():
        line = line.strip()
        if line.startswith("rank "):
            cur = []
        elif line == "}":
            blocks.append(cur or [])
            cur = None
        elif cur is not None and line:
            cur.append(line)
    return blocks


class _Converter:
    def __init__(self, otf2, trace, options: dict[str, Any]):
        self.otf2 = otf2
        self.trace = trace
        self.o = options
        self.resolution = trace.timer_resolution
        defs = trace.definitions
        locations = None
        for g in defs.groups:
            if g.group_type == otf2.GroupType.COMM_LOCATIONS:
                locations = list(g.members)
                break
        if locations is None:
            locations = list(defs.locations)
        self.world = {loc: r for r, loc in enumerate(locations)}
        self.ranks = [_Rank() for _ in locations]
        self.cache: dict[tuple, list[list[str]]] = {}
        self.instances = 0

    def fail(self, rank: int, index: int, event: Any, why: str) -> ScheduleError:
        return ScheduleError(f"rank {rank}, event {index} ({type(event).__name__}): {why}")

    def world_rank(self, comm, peer: int, rank: int, index: int, event: Any) -> int:
        try:
            return self.world[comm.location(peer)]
        except (IndexError, KeyError):
            raise self.fail(
                rank, index, event, f"peer {peer} is not a rank of communicator '{comm.name}'"
            ) from None

    def ns(self, ticks: int) -> int:
        return round(ticks * 1e9 / self.resolution * self.o["compute_scale"])

    def is_mpi(self, region) -> bool:
        return region.paradigm == self.otf2.Paradigm.MPI or region.name.startswith("MPI_")

    def op(self, rk: _Rank, text: str, *, blocking: bool) -> int:
        """An op of the current call (a call of its own if none is open)."""
        alone = rk.call_requires is None
        if alone:
            rk.start_call()
        i = rk.add(text, rk.call_requires or [])
        if blocking:
            rk.call_blocking.append(i)
        if alone:
            rk.end_call()
        return i

    def compute(self, rk: _Rank, time: int) -> None:
        if rk.last_end is not None and time > rk.last_end:
            ns = self.ns(time - rk.last_end)
            if ns > 0:
                i = rk.add(f"calc {ns}", rk.frontier)
                rk.frontier = [i]

    def event(self, loc, index: int, ev) -> None:
        o = self.otf2.events
        rank = self.world.get(loc)
        if rank is None:
            return
        rk = self.ranks[rank]
        if rk.last_end is None:
            rk.last_end = ev.time
        if isinstance(ev, o.Enter):
            if self.is_mpi(ev.region):
                if rk.depth == 0:
                    self.compute(rk, ev.time)
                    rk.start_call()
                rk.depth += 1
        elif isinstance(ev, o.Leave):
            if self.is_mpi(ev.region) and rk.depth > 0:
                rk.depth -= 1
                if rk.depth == 0:
                    rk.end_call()
                    rk.last_end = ev.time
        elif isinstance(ev, (o.MpiSend, o.MpiIsend)):
            peer = self.world_rank(ev.communicator, ev.receiver, rank, index, ev)
            self.outside(rk, ev.time)
            i = self.op(rk, f"send {ev.msg_length}b to {peer} tag {ev.msg_tag}", blocking=False)
            if isinstance(ev, o.MpiSend):
                self.block(rk, i)
            else:
                rk.pending[ev.request_id] = i
        elif isinstance(ev, o.MpiRecv):
            peer = self.world_rank(ev.communicator, ev.sender, rank, index, ev)
            self.outside(rk, ev.time)
            i = self.op(rk, f"recv {ev.msg_length}b from {peer} tag {ev.msg_tag}", blocking=False)
            self.block(rk, i)
        elif isinstance(ev, o.MpiIrecvRequest):
            self.outside(rk, ev.time)
            rk.pending[ev.request_id] = self.op(rk, "", blocking=False)
        elif isinstance(ev, (o.MpiIrecv, o.MpiIsendComplete)):
            i = rk.pending.pop(ev.request_id, -1)
            if i < 0:
                raise self.fail(
                    rank, index, ev, f"request {ev.request_id} completes but was never posted"
                )
            if isinstance(ev, o.MpiIrecv):
                peer = self.world_rank(ev.communicator, ev.sender, rank, index, ev)
                rk.ops[i].text = f"recv {ev.msg_length}b from {peer} tag {ev.msg_tag}"
            self.outside(rk, ev.time)
            if rk.call_requires is None:
                rk.frontier.append(i)
            else:
                rk.call_done.append(i)
        elif isinstance(ev, o.MpiCollectiveBegin):
            # A call of its own (within its MPI region, if the trace has one).
            if rk.depth == 0:
                self.compute(rk, ev.time)
                rk.start_call()
            rk.depth += 1
        elif isinstance(ev, o.MpiCollectiveEnd):
            if rk.depth == 0:
                raise self.fail(rank, index, ev, "a collective ends that never began")
            self.collective(rk, rank, index, ev)
            rk.depth -= 1
            if rk.depth == 0:
                rk.end_call()
                rk.last_end = ev.time

    def outside(self, rk: _Rank, time: int) -> None:
        """An MPI event outside any MPI region: the time before it is compute."""
        if rk.depth == 0:
            self.compute(rk, time)
            rk.last_end = time

    def block(self, rk: _Rank, i: int) -> None:
        if rk.call_requires is not None:
            rk.call_blocking.append(i)
        else:
            rk.frontier = [i]

    def collective(self, rk: _Rank, rank: int, index: int, ev) -> None:
        op = str(ev.collective_op).rsplit(".", 1)[-1]
        name = op.lower()
        comm = ev.communicator
        try:
            members = [self.world[m] for m in comm.group.members]
        except KeyError:
            why = f"communicator '{comm.name}' has unknown members"
            raise self.fail(rank, index, ev, why) from None
        n = len(members)
        if name == "barrier":
            kind, nbytes = "allreduce", 1
        elif name == "allreduce":
            kind, nbytes = "allreduce", ev.size_sent
        elif name == "alltoall":
            kind = "alltoall"
            if ev.size_sent % n:
                raise self.fail(
                    rank, index, ev, f"alltoall sizeSent {ev.size_sent} is not {n} equal blocks"
                )
            nbytes = ev.size_sent // n
        else:
            raise self.fail(
                rank,
                index,
                ev,
                f"collective {op} is not expanded; accepted: ALLREDUCE, ALLTOALL, BARRIER",
            )
        algorithm = self.o[kind]
        if self.o["library"]:
            from hypercuboid import library

            dtype = "float64" if nbytes % 8 == 0 else "int8"
            algorithm = library.choice(self.o["library"], kind, n, nbytes, dtype=dtype).algorithm
        key = (kind, algorithm, n, nbytes)
        if key not in self.cache:
            self.cache[key] = _collective_programs(kind, algorithm, n, nbytes)
        me = members.index(rank)
        self.splice(rk, self.cache[key][me], members)

    def splice(self, rk: _Rank, lines: list[str], members: list[int]) -> None:
        alone = rk.call_requires is None
        if alone:
            rk.start_call()
        base = len(rk.ops)
        ops: list[str] = []
        deps: list[tuple[int, str, int]] = []
        for line in lines:
            m = _DEP.match(line)
            if m:
                deps.append((int(m.group(1)[1:]), m.group(2), int(m.group(3)[1:])))
                continue
            text = _OP.match(line).group(2)  # type: ignore[union-attr]
            parts = text.split()
            if parts[0] in ("send", "recv"):
                parts[3] = str(members[int(parts[3])])
                parts[5] = str(int(parts[5]) + COLLECTIVE_TAG_BASE)
            ops.append(" ".join(parts))
        has_deps = {a for a, _, _ in deps}
        depended = {b for _, _, b in deps}
        for k, text in enumerate(ops):
            rk.ops.append(_Op(text, [] if k in has_deps else list(rk.call_requires or [])))
        for a, kind, b in deps:
            target = rk.ops[base + a]
            (target.requires if kind == "requires" else target.irequires).append(base + b)
        rk.call_blocking.extend(base + k for k in range(len(ops)) if k not in depended)
        if alone:
            rk.end_call()

    def goal(self) -> str:
        out = [f"num_ranks {len(self.ranks)}", ""]
        for r, rk in enumerate(self.ranks):
            for req, i in rk.pending.items():
                if not rk.ops[i].text:
                    raise ScheduleError(
                        f"rank {r}: the receive of request {req} never completes (a trace cut "
                        "short?)"
                    )
            out.append(f"rank {r} {{")
            for i, op in enumerate(rk.ops):
                out.append(f"l{i}: {op.text}")
            for i, op in enumerate(rk.ops):
                out.extend(f"l{i} requires l{j}" for j in op.requires)
                out.extend(f"l{i} irequires l{j}" for j in op.irequires)
            out.append("}")
            out.append("")
        return "\n".join(out)


def _open(otf2, path: str):
    """``otf2.reader.open(path)`` with the OTF2 C library's own error lines (written to file
    descriptor 2) caught: a file that is not an archive is one error naming the path and what
    the library said."""
    import sys
    import tempfile

    failure = None
    with tempfile.TemporaryFile() as said:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(said.fileno(), 2)
        try:
            reader = otf2.reader.open(path)
        except Exception as err:  # the OTF2 library raises its own error types
            failure = err
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        said.seek(0)
        lines = said.read().decode(errors="replace").splitlines()
    if failure is None:
        return reader
    why = next((ln.split("error: ", 1)[1] for ln in lines if "error: " in ln), str(failure))
    raise ScheduleError(
        f"cannot read OTF2 archive {path}: {why.strip()} (give the .otf2 anchor file that "
        "Score-P writes)"
    )


def otf2_to_goal(
    archive: str | os.PathLike[str],
    *,
    allreduce: str = "recursive_doubling",
    alltoall: str = "pairwise",
    library: str | None = None,
    compute_scale: float = 1.0,
) -> str:
    """The GOAL schedule of an OTF2 archive (the path of its ``.otf2`` anchor file)."""
    otf2 = _otf2()
    path = os.fspath(archive)
    if not os.path.exists(path):
        raise ScheduleError(f"cannot access '{path}': No such file or directory")
    if not compute_scale >= 0 or compute_scale == float("inf"):
        raise ScheduleError(f"compute_scale={compute_scale}: must be finite and 0 or more")
    options = {
        "allreduce": allreduce,
        "alltoall": alltoall,
        "library": library,
        "compute_scale": compute_scale,
    }
    reader = _open(otf2, path)
    with reader as trace:
        conv = _Converter(otf2, trace, options)
        counts: dict[Any, int] = {}
        for loc, ev in trace.events:
            counts[loc] = counts.get(loc, 0) + 1
            conv.event(loc, counts[loc], ev)
    return conv.goal()

"""Schedules: generate, read, verify, simulate and export per-rank communication programs.

A :class:`Schedule` wraps the Rust core's schedule (which stays in Rust memory: a 2^20-rank
schedule is never copied into Python). Results come back as plain values and NumPy arrays.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import OutputExistsError


def refuse_existing(path: str | Path, force: bool) -> str:
    """``path`` as a string, or :class:`OutputExistsError` when it exists and ``force`` is
    false (a writer of the API refuses to overwrite a file, as the command line does)."""
    text = str(path)
    if not force and os.path.lexists(text):
        raise OutputExistsError(f"'{text}' exists; pass force=True to overwrite it")
    return text


#: The formats :meth:`Schedule.save` writes: lossless text, GOAL, a C routine (the core's table,
#: ``_core.choices("schedule format")``).
FORMATS: tuple[str, ...] = tuple(c.name for c in _core.choices("schedule format"))

#: Names of op kinds, indexed by the codes in :attr:`Trace.op_kind` (the core's).
OP_KINDS: tuple[str, ...] = _core.OP_KINDS


def _ns(ps: int | float) -> float:
    return float(ps) / 1e3


@dataclass(frozen=True)
class Trace:
    """Per-op and per-message timings of one simulation (times in picoseconds, as integers)."""

    nranks: int
    op_rank: np.ndarray
    op_index: np.ndarray
    op_kind: np.ndarray
    op_start: np.ndarray
    op_end: np.ndarray
    msg_src: np.ndarray
    msg_dst: np.ndarray
    msg_src_op: np.ndarray
    msg_dst_op: np.ndarray
    msg_depart: np.ndarray
    msg_arrival: np.ndarray
    msg_bytes: np.ndarray

    def op_kind_names(self) -> list[str]:
        """The kind of every traced op, as a name."""
        return [OP_KINDS[k] for k in self.op_kind]

    def plot(self, path: str | Path, **kwargs) -> Path:
        """Draws the timeline as a PNG (see :func:`hypercuboid.plot.timeline`)."""
        from hypercuboid.plot import timeline

        return timeline(self, path, **kwargs)


@dataclass(frozen=True)
class LinkLoad:
    """One directed link's load over a run on a network: its ends (as the topology names
    them), ``kind`` (``network``, ``injection`` or ``ejection``), the bytes it carried and
    the fraction of the run it was busy."""

    a: str
    b: str
    kind: str
    bytes: int
    utilisation: float
    link: int = 0


@dataclass(frozen=True)
class NetworkResult:
    """What a run on a network measured beyond the simulation's result.

    ``messages`` counts the network messages (eager data and rendezvous transfers),
    ``control`` messages (rendezvous requests, clear-to-send) and ``local`` ones (between
    ranks of one endpoint); ``transfer_ps`` sums the network messages' zero-load times and
    ``queued_ps`` the time beyond them (waiting at the NIC, in buffers, for a share of a
    link). ``worst`` is the message that waited longest (a dict, or None when none waited);
    ``records`` has one row per network message (NumPy columns ``src``, ``dst``, ``bytes``,
    ``injected_ps``, ``delivered_ps``, ``transfer_ps``, ``queued_ps``) when asked for."""

    level: str
    routing: str
    topology: str
    links: list[LinkLoad]
    mean_network_utilisation: float
    messages: int
    control: int
    local: int
    bytes: int
    transfer_ps: int
    queued_ps: int
    worst: dict | None
    placement: np.ndarray
    wire_units: int
    wire_events: int
    records: dict | None = None
    timeline: dict | None = None

    def to_dict(self, top_links: int = 10) -> dict:
        """JSON-ready summary: the ``top_links`` busiest links and the totals."""
        return {
            "level": self.level,
            "routing": self.routing,
            "topology": self.topology,
            "mean_network_utilisation": self.mean_network_utilisation,
            "network_messages": self.messages,
            "control_messages": self.control,
            "local_messages": self.local,
            "network_bytes": self.bytes,
            "transfer_ns": self.transfer_ps / 1e3,
            "queued_ns": self.queued_ps / 1e3,
            "worst": self.worst,
            "wire_units": self.wire_units,
            "wire_events": self.wire_events,
        }


@dataclass(frozen=True)
class SimResult:
    """What a simulation returns (``network`` when it ran on a network)."""

    model: str
    completion_time_ps: int
    rank_finish_ps: np.ndarray
    ops: int
    messages: int
    trace: Trace | None = None
    network: NetworkResult | None = None
    #: On a cost model, the threads the run was simulated on: those asked for (0: every core
    #: from 2^19 ops), or 1 when one thread ran it (a run that cannot be split, or one its
    #: threads stopped; ``docs/simulate.md``). None on a network. Not compared: the result is
    #: the same for any number.
    threads: int | None = field(default=None, compare=False)

    @property
    def completion_time_ns(self) -> float:
        """Completion time of the slowest rank, in nanoseconds."""
        return _ns(self.completion_time_ps)

    @property
    def rank_finish_ns(self) -> np.ndarray:
        """Finish time of every rank, in nanoseconds."""
        return self.rank_finish_ps.astype(np.float64) / 1e3

    @property
    def skew_ns(self) -> float:
        """Spread of the ranks' finish times (latest minus earliest), in nanoseconds."""
        if len(self.rank_finish_ps) == 0:
            return 0.0
        return _ns(int(self.rank_finish_ps.max()) - int(self.rank_finish_ps.min()))

    def to_dict(self, per_rank: bool = True, top_links: int = 10) -> dict:
        """JSON-ready summary (the CLI's ``--json`` object); on a network also ``links``, the
        ``top_links`` busiest links, and ``network``, the totals."""
        d: dict = {
            "model": self.model,
            "completion_time_ns": self.completion_time_ns,
            "skew_ns": self.skew_ns,
            "ops": self.ops,
            "messages": self.messages,
        }
        if per_rank:
            d["rank_finish_ns"] = self.rank_finish_ns.tolist()
        if self.network is not None:
            d["links"] = [
                {
                    "a": x.a,
                    "b": x.b,
                    "kind": x.kind,
                    "bytes": x.bytes,
                    "utilisation": x.utilisation,
                }
                for x in self.network.links[:top_links]
            ]
            d["network"] = self.network.to_dict()
        return d


@dataclass(frozen=True)
class VerifyReport:
    """The verifier's findings. ``sound`` is true when nothing is wrong."""

    sound: bool
    problems: list[str]
    truncated: int
    semantics: dict | None
    stats: dict
    text: str = field(repr=False)

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return self.sound

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "sound": self.sound,
            "problems": self.problems,
            "truncated": self.truncated,
            "semantics": self.semantics,
            "stats": self.stats,
        }


#: A network message's fields (``worst``, and the columns of ``records``).
_MESSAGE_FIELDS = ("src", "dst", "bytes", "injected_ps", "delivered_ps", "transfer_ps", "queued_ps")
_SEMANTICS_FIELDS = (
    "reduces",
    "correct",
    "same_order_commutative",
    "same_order_noncommutative",
    "canonical_order",
    "exact",
    "noncommutative_difference",
    "commutative_difference",
    "noncanonical",
)


def _fields(x: Any, names: tuple[str, ...]) -> dict:
    """The attributes ``names`` of a result of the core, as a dict in that order."""
    return {name: getattr(x, name) for name in names}


def _network_result(n: _core.NetworkRunResult) -> NetworkResult:
    m, w, rec, tl = n.messages, n.worst, n.records, n.timeline
    links = [
        LinkLoad(a=x.a, b=x.b, kind=x.kind, bytes=x.bytes, utilisation=x.utilisation, link=x.link)
        for x in n.links
    ]
    return NetworkResult(
        level=n.level,
        routing=n.routing,
        topology=n.topology,
        links=links,
        mean_network_utilisation=n.mean_network_utilisation,
        messages=m.network,
        control=m.control,
        local=m.local,
        bytes=m.bytes,
        transfer_ps=m.transfer_ps,
        queued_ps=m.queued_ps,
        worst=None if w is None else _fields(w, _MESSAGE_FIELDS),
        placement=n.placement,
        wire_units=n.wire_units,
        wire_events=n.wire_events,
        records=None if rec is None else _fields(rec, _MESSAGE_FIELDS),
        timeline=None
        if tl is None
        else {
            "times_ps": tl.times_ps,
            "links": [{"link": links[x.index], "utilisation": x.utilisation} for x in tl.links],
        },
    )


class Schedule:
    """A per-rank communication schedule (programs of send / recv / reduce / copy / compute /
    sleep ops with GOAL dependencies)."""

    def __init__(self, core: _core.Schedule):
        self._core = core

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str, name: str = "<text>") -> Schedule:
        """Reads GOAL text or hypercuboid's lossless text form."""
        return cls(_core.parse_schedule(text, name))

    @classmethod
    def read(cls, path: str | Path) -> Schedule:
        """Reads a GOAL file or a file in hypercuboid's lossless text form."""
        return cls(_core.read_schedule(str(path)))

    # -- properties ---------------------------------------------------------------------------
    @property
    def nranks(self) -> int:
        """Number of ranks."""
        return self._core.nranks

    @property
    def total_ops(self) -> int:
        """Number of ops over all ranks."""
        return self._core.total_ops

    @property
    def meta(self) -> dict:
        """What the schedule computes: collective, count (elements of each buffer), dtype, op
        (None unless it reduces), name; an alltoall's also has block (its elements per pair
        of ranks)."""
        m = self._core.meta
        d: dict = {"collective": m.collective, "count": m.count, "dtype": m.dtype, "op": m.op}
        if m.block is not None:
            d["block"] = m.block
        h = m.halo
        if h is not None:
            d["halo"] = _fields(h, ("lattice", "dims", "periodic", "values", "stencil"))
        d["name"] = m.name
        d["elem_size"] = m.elem_size
        return d

    @property
    def memory_bytes(self) -> int:
        """Approximate heap bytes the schedule occupies in the core."""
        return self._core.memory_bytes

    def sends_per_rank(self) -> np.ndarray:
        """The number of messages each rank's program sends (a uint32 array, one per rank)."""
        return self._core.sends_per_rank()

    def __repr__(self) -> str:
        m = self.meta
        what = m["name"] or m["collective"]
        return f"<Schedule {what}: {self.nranks} ranks, {self.total_ops} ops>"

    # -- checking and running -----------------------------------------------------------------
    def verify(
        self,
        *,
        eager_limit: int = _core.DEFAULTS["verify"]["eager_limit"],
        semantics: bool = _core.DEFAULTS["verify"]["semantics"],
        max_problems: int = _core.DEFAULTS["verify"]["max_problems"],
        threads: int = _core.DEFAULTS["verify"]["threads"],
    ) -> VerifyReport:
        """Checks matching, deadlock (structurally; a message above ``eager_limit`` bytes is
        treated as synchronous), buffer hazards and, for a collective with data semantics, the
        result and the reduction order on every rank. ``threads``: threads for matching and
        the deadlock check (0: every core for a schedule of 2^20 ops or more, else 1); the
        report does not depend on it."""
        if threads < 0:
            from hypercuboid.errors import ScheduleError

            raise ScheduleError(
                f"threads={threads}: must be >= 0 (0: every core for large schedules)"
            )
        r = self._core.verify(eager_limit, semantics, max_problems, threads)
        st, sem = r.stats, r.semantics
        return VerifyReport(
            sound=r.sound,
            problems=list(r.problems),
            truncated=r.truncated,
            semantics=None if sem is None else _fields(sem, _SEMANTICS_FIELDS),
            stats=_fields(st, ("ranks", "ops", "messages", "bytes")),
            text=r.text,
        )

    def simulate(
        self,
        model: str | None = None,
        *,
        trace: bool = False,
        noise: str | None = None,
        seed: int | None = None,
        chrome_trace: str | Path | None = None,
        network: Any = None,
        routing: str = "min",
        level: str = "packet",
        mapping: str | list[int] = "linear",
        ranks_per_endpoint: int = 1,
        nic: str = "fifo",
        packet_size: int | str = 256,
        buffer: int | str = "100KiB",
        switch_latency: int | str = "100ns",
        threads: int | None = None,
        records: bool = False,
        link_timeline: bool = False,
        calls: int = 1,
        node: str | None = None,
    ) -> SimResult:
        """Runs the schedule on a cost model (a spec such as
        ``"loggops:L=3000,o=1500,g=1000,G=6"``) and returns its completion time and per-rank
        finish times; with ``trace=True`` also every op's and message's timing.

        With ``network`` (a :class:`~hypercuboid.topology.Topology` or a topology spec such as
        ``"tree:fig5b"``), the messages cross that network: ``routing`` (``min``, ``inr``,
        ``ugal``, ``ugal-th``), ``level`` (``packet`` or ``flow``), ``mapping`` (``linear``,
        ``round_robin``, ``random[:seed=K]``, ``file:PATH`` or a list of endpoints, one per
        rank), ``ranks_per_endpoint``, ``nic`` (``fifo``: a NIC sends whole messages in the order
        they started; ``interleave``: it shares its link among them, one packet of each in
        turn), and the router parameters ``packet_size``, ``buffer``,
        ``switch_latency``, ``seed`` (of the network's random choices and of the noise,
        default 1; without a network, of the noise, default 0) and ``threads`` (the packet
        engine's, default 1). ``noise`` (a
        delay before every op, e.g. ``"exp:mean=1us"``) applies on a network as on a model.
        ``model`` is then the host model (a ``loggops:`` spec; default LogGOPSim's defaults),
        whose ``L`` and ``G`` apply only between ranks of one endpoint. The result's
        ``network`` holds the links' loads and the messages' queued times (``records=True``:
        one row per message; ``link_timeline=True``: the busiest links' utilisation over
        time). See ``docs/networks.md``.

        ``calls`` runs the schedule that many times back to back, each rank starting its next
        run when its own ops of the previous one are done (no barrier), as an application
        calling the collective in a loop (the seed's 2,000 halo calls); a trace records one
        run, so ``trace`` needs ``calls=1``.

        With ``node`` (a node spec such as ``"node:ranks=16,bw=12GB/s"``, optionally
        ``nic=BW`` and ``map=block|round_robin``), ranks are grouped into nodes whose
        concurrent transfers share the node's bandwidth (and NIC) by max-min fair flows, on
        top of ``model``, which must be a ``loggops:`` spec (see ``docs/simulate.md``, "The
        node level"). It does not combine with ``network`` and runs on one thread.

        On a cost model, ``threads`` is the number of threads to simulate on (default: every
        core for a schedule of 2^19 ops or more, else one); the result is the same for any
        number (``docs/simulate.md``, "On several threads"), and the result's ``threads`` says
        how many it ran on."""
        if threads is not None and threads < 0:
            from hypercuboid.errors import ScheduleError

            raise ScheduleError(
                f"threads={threads}: must be >= 0 (0: every core for 2^19 ops or more, else 1)"
            )
        if calls < 1:
            from hypercuboid.errors import SimulationError

            raise SimulationError(f"invalid calls {calls}: run the schedule at least once")
        if calls > 1 and (trace or chrome_trace is not None):
            from hypercuboid.errors import SimulationError

            raise SimulationError(
                f"invalid calls {calls} with a trace: a trace records one call (calls=1)"
            )
        want_trace = trace or chrome_trace is not None
        ct = None if chrome_trace is None else str(chrome_trace)
        if node is not None:
            from hypercuboid.errors import SimulationError

            if network is not None:
                raise SimulationError(
                    f"node={node!r} with a network: the node level replaces the network "
                    "(give one; on a network, ranks_per_endpoint groups ranks)"
                )
            if model is None:
                raise SimulationError(
                    f"node={node!r} needs a host model: a loggops:... spec (its o, g, O, L, S "
                    "per rank; its G is each rank's own limit)"
                )
            r = _core.simulate_node(
                self._core,
                model,
                node,
                want_trace,
                noise,
                0 if seed is None else seed,
                ct,
                int(calls),
            )
        elif network is not None:
            from hypercuboid.topology import Topology, generate
            from hypercuboid.units import parse_size, parse_time

            topo = network if isinstance(network, Topology) else generate(str(network))
            endpoints = None
            if not isinstance(mapping, str):
                endpoints = [int(x) for x in mapping]
                mapping = "list"
            r = self._core.simulate_network(
                topo,
                model,
                routing=routing,
                level=level,
                mapping=mapping,
                mapping_endpoints=endpoints,
                ranks_per_endpoint=int(ranks_per_endpoint),
                nic=nic,
                seed=1 if seed is None else int(seed),
                packet_bytes=parse_size(str(packet_size)),
                buffer_bytes=parse_size(str(buffer)),
                switch_latency_ps=parse_time(str(switch_latency)),
                threads=1 if threads is None else int(threads),
                trace=want_trace,
                chrome_trace=ct,
                records=bool(records),
                sample_links=bool(link_timeline),
                calls=int(calls),
                noise=noise,
            )
        elif model is None:
            from hypercuboid.errors import ModelError

            raise ModelError(
                "simulate needs a model (postal:..., pipelined:..., loggops:...) or a network"
            )
        else:
            r = self._core.simulate(
                model,
                want_trace,
                noise,
                0 if seed is None else seed,
                ct,
                int(calls),
                _core.DEFAULTS["simulate"]["threads"] if threads is None else int(threads),
            )
        return self._result(r, trace)

    def _result(self, r: _core.SimulationResult, trace: bool) -> SimResult:
        t = None
        c = r.trace
        if trace and c is not None:
            t = Trace(
                nranks=self.nranks,
                op_rank=c.op_rank,
                op_index=c.op_index,
                op_kind=c.op_kind,
                op_start=c.op_start,
                op_end=c.op_end,
                msg_src=c.msg_src,
                msg_dst=c.msg_dst,
                msg_src_op=c.msg_src_op,
                msg_dst_op=c.msg_dst_op,
                msg_depart=c.msg_depart,
                msg_arrival=c.msg_arrival,
                msg_bytes=c.msg_bytes,
            )
        n = r.network
        return SimResult(
            model=r.model,
            completion_time_ps=r.completion_ps,
            rank_finish_ps=r.rank_finish_ps,
            ops=r.ops,
            messages=r.messages,
            trace=t,
            network=None if n is None else _network_result(n),
            threads=r.threads,
        )

    # -- text ---------------------------------------------------------------------------------
    def to_goal(self, *, reduce_ns_per_byte: float = 0.0) -> str:
        """GOAL text that LogGOPSim's txt2bin accepts (sizes only; reductions become ``calc``)."""
        return self._core.to_goal(reduce_ns_per_byte)

    def to_text(self) -> str:
        """hypercuboid's lossless text form (GOAL plus buffer slices and the collective)."""
        return self._core.to_text()

    def to_c(self, name: str | None = None) -> str:
        """One self-contained C file: an MPI routine ``name`` (a C identifier; default
        ``hc_allreduce`` for an allreduce, ``hc_schedule`` for a sizes-only schedule) that runs
        this schedule, with the program tables of every rank and the native runner
        (``docs/native.md``, section 2)."""
        return self._core.to_c(name)

    def save(
        self,
        path: str | Path,
        *,
        format: str = "text",
        reduce_ns_per_byte: float = 0.0,
        name: str | None = None,
        force: bool = False,
    ):
        """Writes the schedule to ``path`` as ``text`` (lossless), ``goal``, or ``c`` (the C
        routine of :meth:`to_c`, named ``name``). ``name`` applies to ``c`` only. An existing
        ``path`` raises :class:`OutputExistsError` unless ``force=True``."""
        from hypercuboid.errors import ScheduleError

        try:
            fmt = _core.choice_name("schedule format", format)
        except ValueError as e:
            raise ScheduleError(str(e)) from None
        if name is not None and fmt != "c":
            raise ScheduleError(f"name '{name}' applies to format 'c' only, not '{format}'")
        target = refuse_existing(path, force)
        if fmt == "text":
            self._core.write_text(target)
        elif fmt == "goal":
            self._core.write_goal(target, reduce_ns_per_byte)
        else:
            self._core.write_c(target, name)

    def show(self, ranks: list[int] | None = None) -> str:
        """The programs of ``ranks`` (default: all, up to 16) in readable form."""
        if ranks is None:
            ranks = list(range(min(self.nranks, 16)))
        out = []
        for r in ranks:
            out.append(f"rank {r}:")
            out.extend(f"  {line}" for line in self._core.program_text(r))
        return "\n".join(out)

    def program(self, rank: int) -> _core.Program:
        """Rank ``rank``'s program as columns (what the MPI back end executes), checked against
        the schedule's buffers: a :class:`hypercuboid._core.Program`, read like a dict of
        columns (``p["kind"]``, ``p["deps"]``)."""
        return self._core.program(rank)


def parse_model(spec: str) -> str:
    """Validates a cost-model spec and returns it in canonical form (all parameters spelled
    out)."""
    return _core.parse_model(spec)


def model_forms() -> list[dict[str, Any]]:
    """The cost models a spec may name, as the core's table has them: one dict per model
    (``name``, ``aliases``, ``summary``, ``keys`` as (name, help) pairs, ``usage``,
    ``example``)."""
    return [_form(f) for f in _core.model_forms()]


def _form(f: _core.SpecForm) -> dict[str, Any]:
    return _fields(f, ("name", "aliases", "summary", "keys", "usage", "example"))


def noise_forms() -> list[dict[str, Any]]:
    """The noise distributions a ``noise`` spec may name (dicts as :func:`model_forms`)."""
    return [_form(f) for f in _core.noise_forms()]

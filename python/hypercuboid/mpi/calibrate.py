"""Calibration under mpiexec: measure the machine at the job's own scale and fit the cost models.

:func:`measure` runs on every rank of ``comm`` (collective) with the native runner's C loops:
the programs are schedules in the lossless text form, so what is timed is what the runner does
when it runs a collective:

* **ping-pong** between rank 0 and a peer over a size sweep (half round trips). Where the job
  spans nodes (``MPI_Comm_split_type(SHARED)`` groups), once with a peer on rank 0's node
  (``intra``) and once with a peer on another node (``inter``);
* **issue-rate trains** from rank 0 to the same peer: ``n`` back-to-back sends of 8 B timed to
  their completion (slope: the gap ``g``, and the pipelined model's ``α_r``, whose ``α_p`` is
  the rest of the small-message one-way time), and the same with a delay after the sends that
  lets the messages leave, so that only posting is timed (slope: the sender's CPU time per
  send, ``o``);
* **chains** of ``k = 1, 2, 4`` exchanges (both ranks send and receive at once) and of ``k``
  one-way messages (there and back), timed as ``validate`` times a collective: one step of
  each kind by size (:func:`fit_steps`: LogGOPS's ``L``, ``G``, the switches ``S``/``R`` and
  ``S2``/``R2``, ``X``, and the node's bandwidth for two flows) and the runner's cost per call;
* **contention**: ``k`` flows at once, ``k = 1 … N/2`` disjoint pairs, then every rank sending
  to the next: the per-flow bandwidth against the flows per node gives the node's shared
  bandwidth ``BW`` (``bw(k) ≈ min(1/G, BW/k)``);
* **reductions**: rank 0 alone runs the runner's reduce loop per dtype and op over a size
  sweep: ``γ`` per byte and ``δ`` per call.

:func:`fit` turns the measurements into a :class:`Calibration` with the core's fits
(``_core.fit_*``: non-negative least squares, piecewise lines with break points, the
contention fit and the node's bandwidth, LogGOPS from the ping-pong and trains, the chains'
``C + k·x(s)``, LogGOPS's step parameters); this module measures, names the fits' values and
writes the specs and warnings. A fit whose R² is below :data:`R2_THRESHOLD` is kept and named in
:attr:`Calibration.warnings`; nothing is clamped silently.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import HypercuboidError
from hypercuboid.mpi.bench import osu_counts, slowest, summarize

#: A fit with R² below this does not describe its measurements: a warning names it (the
#: core's, as is the warning, ``_core.poor_fit``).
R2_THRESHOLD: float = _core.R2_THRESHOLD
#: The size sweep of the ping-pong by default.
DEFAULT_SIZES = "1:4M"
#: The fewest sizes a calibration fits (a line and its residuals).
MIN_SIZES = 3
#: Message counts of the issue-rate trains.
TRAIN = (1, 2, 4, 8, 16, 32, 64)
#: Bytes of each message of a train.
TRAIN_BYTES = 8
#: Messages each flow of the contention test sends per round.
FLOW_MESSAGES = 2
#: Bytes of the reductions timed (each a multiple of every dtype's size).
REDUCE_BYTES = (64, 4096, 65536, 1 << 20)
#: Most segments of the ping-pong's piecewise fit.
MAX_SEGMENTS = 4
#: Steps of the exchange plans: ``k`` exchanges in a row, ``time(k, s) = C + k·x(s)``.
EXCHANGE_STEPS = (1, 2, 4)


class CalibrateError(HypercuboidError, ValueError):
    """Calibration that cannot run as asked (too few ranks or sizes)."""


Progress = Callable[[str], None] | None


def check_sizes(sizes: Sequence[int], text: str) -> None:
    """Refuses a sweep too short to fit (fewer than :data:`MIN_SIZES` sizes)."""
    if len(sizes) < MIN_SIZES:
        raise CalibrateError(
            f"--sizes '{text}' gives {len(sizes)} size{'s' if len(sizes) != 1 else ''}: "
            f"calibrate needs at least {MIN_SIZES} to fit a line and judge it (e.g. 1:4M)"
        )


# -- measuring -------------------------------------------------------------------------------


def node_of_ranks(comm: Any) -> list[int]:
    """The node of every rank (0, 1, ... in order of their first rank): the groups of
    ``MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)``, ranks that share memory. Collective."""
    from mpi4py import MPI

    shared = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    leader = shared.bcast(comm.Get_rank(), root=0)
    shared.Free()
    leaders = comm.allgather(leader)
    index: dict[int, int] = {}
    return [index.setdefault(x, len(index)) for x in leaders]


def _text(nranks: int, programs: dict[int, list[str]], header: str = "") -> str:
    """A schedule in the lossless text form: ``programs[rank]`` its lines (ranks left out have
    no ops), after the ``header`` lines."""
    out = [f"num_ranks {nranks}", header, ""]
    for r in range(nranks):
        out += [f"rank {r} {{", *programs.get(r, []), "}", ""]
    return "\n".join(out)


def _time_program(
    comm: Any,
    text: str,
    iterations: int,
    warmup: int,
    block: int = 1,
    data: tuple[str, str | None, int] | None = None,
) -> np.ndarray:
    """This rank's times (µs per run) of the schedule ``text`` run by the native runner on
    ``comm`` (``warmup`` untimed rounds, then ``iterations`` rounds of ``block`` runs, a
    barrier after each round). Collective over ``comm``. ``data``: (dtype, op, count) of the
    input and output a reduction or copy reads (op None: a copy); None: a program that moves
    sizes only."""
    from hypercuboid.mpi import native
    from hypercuboid.mpi.executor import private_comm
    from hypercuboid.schedule import Schedule

    prog = Schedule.parse(text, "calibrate").program(comm.Get_rank())
    dt, op, n = data if data is not None else ("uint8", None, 1)
    x = np.ones(n, dtype=dt)
    y = np.ones(n, dtype=dt)
    bound = native.NativeBound(prog, x, y, op)
    try:
        return bound.time(private_comm(comm), iterations, warmup, block)
    finally:
        bound.free()


def _chain(peer: int, s: int, k: int, both: bool) -> dict[int, list[str]]:
    """The programs of rank 0 and ``peer`` for ``k`` steps of ``s`` bytes in a row: with
    ``both`` every step an exchange (both ranks send and receive at once), else one message,
    from rank 0 at even steps and from ``peer`` at odd ones. A rank's send at step ``i`` waits
    for its receive at step ``i − 1``, as an allreduce's steps do."""
    progs: dict[int, list[str]] = {0: [], peer: []}
    deps: dict[int, list[str]] = {0: [], peer: []}
    for i in range(k):
        for me, other in ((0, peer), (peer, 0)):
            sends = both or (me == 0) == (i % 2 == 0)
            if sends:
                progs[me].append(f"s{i}: send {s}b to {other} tag {i}")
                if i > 0:
                    deps[me].append(f"s{i} requires r{i - 1}")
            if both or not sends:
                progs[me].append(f"r{i}: recv {s}b from {other} tag {i}")
    return {r: progs[r] + deps[r] for r in progs}


def _run_chains(
    comm: Any,
    peer: int,
    sizes: Sequence[int],
    steps: Sequence[int],
    both: bool,
    counts: tuple[int | None, int | None],
    progress: Progress,
    label: str,
) -> Iterator[tuple[int, int, int, np.ndarray]]:
    """Runs :func:`_chain` of every size of ``sizes`` and step count of ``steps``
    (``counts``: the iterations and warm-up rounds asked for): per chain its size, steps,
    iterations and this rank's times (µs per run). Collective."""
    for s in sizes:
        for k in steps:
            if progress:
                progress(f"{label} 0-{peer} {s:>9} B" + (f" x {k}" if len(steps) > 1 else ""))
            it, wu = osu_counts(s, *counts)
            text = _text(comm.Get_size(), _chain(peer, s, k, both))
            yield s, k, it, _time_program(comm, text, it, wu)


def pingpong(
    comm: Any,
    peer: int,
    sizes: Sequence[int],
    iterations: int | None,
    warmup: int | None,
    progress: Progress = None,
) -> list[dict]:
    """Half round trips between rank 0 and ``peer``, timed on rank 0 (rows on rank 0, empty
    elsewhere)."""
    chains = _run_chains(
        comm, peer, sizes, (2,), False, (iterations, warmup), progress, "ping-pong"
    )
    rows = [{"bytes": s, "iterations": it, **summarize(t / 2.0)} for s, _, it, t in chains]
    return rows if comm.Get_rank() == 0 else []


def train(
    comm: Any,
    peer: int,
    counts: Sequence[int],
    iterations: int | None,
    warmup: int | None,
    delay_us: float | None = None,
    progress: Progress = None,
) -> list[dict]:
    """Rank 0 posts ``n`` sends of :data:`TRAIN_BYTES` to ``peer`` back to back and waits for
    them, for every ``n`` of ``counts``; with ``delay_us``, rank 0 spins that long after
    posting (the messages leave meanwhile), so that its time is posting plus the delay. Rows
    (``messages`` and rank 0's statistics in µs) on rank 0."""
    size = comm.Get_size()
    rows = []
    for m in counts:
        if progress:
            progress(f"train 0-{peer} {m:>3} messages" + (" with delay" if delay_us else ""))
        mine = [f"send {TRAIN_BYTES}b to {peer} tag 0"] * m
        if delay_us:
            mine.append(f"calc {delay_us:.0f}us")
        text = _text(size, {0: mine, peer: [f"recv {TRAIN_BYTES}b from 0 tag 0"] * m})
        it, wu = osu_counts(TRAIN_BYTES, iterations, warmup)
        t = _time_program(comm, text, it, wu)
        if comm.Get_rank() == 0:
            rows.append({"messages": m, "iterations": it, **summarize(t)})
    return rows


def exchange(
    comm: Any,
    peer: int,
    sizes: Sequence[int],
    iterations: int | None,
    warmup: int | None,
    progress: Progress = None,
    both: bool = True,
) -> list[dict]:
    """``k`` steps in a row between rank 0 and ``peer`` (:func:`_chain`), for every ``k`` of
    :data:`EXCHANGE_STEPS` and ``s`` of ``sizes``: exchanges (``both``) or one-way messages
    (a chain of hops, there and back). Rows (``bytes``, ``steps`` and the statistics of each
    round's slower rank, µs) on rank 0."""
    label = "exchange" if both else "one-way"
    rows = []
    for s, k, it, t in _run_chains(
        comm, peer, sizes, EXCHANGE_STEPS, both, (iterations, warmup), progress, label
    ):
        worst = slowest(comm, t, (0, peer))
        if worst is not None:
            rows.append({"bytes": s, "steps": k, "iterations": it, **summarize(worst)})
    return rows


def flow_sets(nranks: int) -> list[tuple[str, list[tuple[int, int]]]]:
    """The contention test's flow sets: ``k`` disjoint pairs ``2i → 2i+1`` for ``k = 1 …
    N/2``, then every rank sending to the next (``r → r+1 mod N``)."""
    sets = [
        (f"{k} pair{'s' if k > 1 else ''}", [(2 * i, 2 * i + 1) for i in range(k)])
        for k in range(1, nranks // 2 + 1)
    ]
    sets.append(("all ranks", [(r, (r + 1) % nranks) for r in range(nranks)]))
    return sets


def flows_per_node(flows: Sequence[tuple[int, int]], nodes: Sequence[int]) -> int:
    """The most flows that touch one node (a flow inside a node counts once)."""
    count: dict[int, int] = {}
    for a, b in flows:
        for nd in {nodes[a], nodes[b]}:
            count[nd] = count.get(nd, 0) + 1
    return max(count.values())


def contention(
    comm: Any,
    nodes: Sequence[int],
    nbytes: int,
    iterations: int | None,
    warmup: int | None,
    progress: Progress = None,
) -> list[dict]:
    """Every flow set of :func:`flow_sets`, each flow :data:`FLOW_MESSAGES` messages of
    ``nbytes``: the mean over the flows of each receiver's median bandwidth (GB/s). Rows on
    rank 0."""
    size = comm.Get_size()
    rows = []
    for label, flows in flow_sets(size):
        if progress:
            progress(f"contention: {label} ({len(flows)} flow{'s' if len(flows) > 1 else ''})")
        progs: dict[int, list[str]] = {}
        for a, b in flows:
            progs.setdefault(a, []).extend([f"send {nbytes}b to {b} tag 0"] * FLOW_MESSAGES)
            progs.setdefault(b, []).extend([f"recv {nbytes}b from {a} tag 0"] * FLOW_MESSAGES)
        it, wu = osu_counts(nbytes, iterations, warmup)
        t = _time_program(comm, _text(size, progs), it, wu)
        receiving = any(b == comm.Get_rank() for _, b in flows)
        mine = float(np.median(t)) if receiving else None
        got = comm.gather(mine, root=0)
        if comm.Get_rank() == 0:
            times = [x for x in got if x is not None]
            bws = [FLOW_MESSAGES * nbytes / (x * 1e3) for x in times]  # B/ns = GB/s
            rows.append(
                {
                    "label": label,
                    "flows": len(flows),
                    "flows_per_node": flows_per_node(flows, nodes),
                    "bytes": nbytes,
                    "messages": FLOW_MESSAGES,
                    "iterations": it,
                    "median_us": float(np.median(times)),
                    "per_flow_GBps": float(np.mean(bws)),
                }
            )
    return rows


def _alone(dt: str, op: str | None, iterations: int | None, line: str, header: str) -> list[float]:
    """The median µs of the one-op program ``line`` (``{n}``: the element count) on
    ``MPI_COMM_SELF`` at every size of :data:`REDUCE_BYTES` of dtype ``dt``."""
    from mpi4py import MPI

    it = max(5, min(iterations if iterations is not None else 10, 10))
    med = []
    for nb in REDUCE_BYTES:
        n = nb // _core.DTYPES[dt]
        text = _text(1, {0: [line.format(n=n)]}, header.format(n=n))
        block = max(1, min(1000, (1 << 16) // nb))
        t = _time_program(MPI.COMM_SELF, text, it, 1, block, data=(dt, op, n))
        med.append(float(np.median(t)))
    return med


def reductions(
    comm: Any,
    iterations: int | None,
    progress: Progress = None,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> dict[str, dict]:
    """On rank 0 alone (the others wait): the runner's reduce loop per dtype and op (``pairs``;
    default every dtype and op the runner has) over :data:`REDUCE_BYTES`, as a one-op program
    on ``MPI_COMM_SELF``; per ``"dtype op"`` the bytes and the median µs per reduction. Empty
    elsewhere."""
    out: dict[str, dict] = {}
    if pairs is None:
        pairs = [(dt, op) for dt in _core.DTYPES for op in _core.REDUCE_OPS]
    if comm.Get_rank() == 0:
        for dt, op in pairs:
            if progress:
                progress(f"reductions: {dt} {op}")
            med = _alone(
                dt,
                op,
                iterations,
                "reduce in[0:{n}] into out[0:{n}] after",
                f"collective allreduce count {{n}} dtype {dt} op {op}",
            )
            out[f"{dt} {op}"] = {"bytes": list(REDUCE_BYTES), "median_us": med}
    comm.Barrier()
    return out


def copies(comm: Any, iterations: int | None, progress: Progress = None) -> dict | None:
    """On rank 0 alone: the runner's copy (``copy in into out``, what an alltoall's own block
    costs) over :data:`REDUCE_BYTES`; the bytes and the median µs per copy on rank 0, None
    elsewhere."""
    out = None
    if comm.Get_rank() == 0:
        if progress:
            progress("copies")
        med = _alone(
            "uint8",
            None,
            iterations,
            "copy in[0:{n}] to out[0:{n}]",
            "collective alltoall count {n} dtype uint8 block {n}",
        )
        out = {"bytes": list(REDUCE_BYTES), "median_us": med}
    comm.Barrier()
    return out


def measure(
    comm: Any,
    sizes: Sequence[int],
    *,
    iterations: int | None = None,
    warmup: int | None = None,
    nodes: Sequence[int] | None = None,
    reduce_pairs: Sequence[tuple[str, str]] | None = None,
    progress: Progress = None,
) -> dict | None:
    """Every measurement of a calibration (collective): on rank 0 a dict of the raw values
    (``nranks``, ``nodes``, ``links`` with each link's ``peer``, ``pingpong``, ``train``,
    ``delayed``, and ``contention``, ``reduction``), None elsewhere. ``nodes`` (the node of
    every rank) defaults to :func:`node_of_ranks`; ``reduce_pairs`` as :func:`reductions`."""
    from hypercuboid.mpi import native

    size = comm.Get_size()
    if size < 2:
        raise CalibrateError(
            "calibrate needs at least 2 ranks: mpiexec -n 2 (or more) hypercuboid calibrate ..."
        )
    check_sizes(sizes, ",".join(str(s) for s in sizes))
    native.load()  # a one-line MPIError naming what is missing
    nodes = list(nodes) if nodes is not None else node_of_ranks(comm)
    peers = {}
    same = [r for r in range(1, size) if nodes[r] == nodes[0]]
    other = [r for r in range(1, size) if nodes[r] != nodes[0]]
    if same:
        peers["intra"] = same[0]
    if other:
        peers["inter"] = other[0]
    links = {}
    for kind, peer in peers.items():
        pp = pingpong(comm, peer, sizes, iterations, warmup, progress)
        tr = train(comm, peer, TRAIN, iterations, warmup, progress=progress)
        # a delay twice the longest train, so that every message has left before it ends
        longest = comm.bcast(tr[-1]["median_us"] if comm.Get_rank() == 0 else None, root=0)
        delay = max(10.0, 2.0 * longest)
        dl = train(comm, peer, TRAIN, iterations, warmup, delay, progress)
        ex = exchange(comm, peer, sizes, iterations, warmup, progress)
        hops = exchange(comm, peer, sizes, iterations, warmup, progress, both=False)
        links[kind] = {
            "peer": peer,
            "pingpong": pp,
            "train": tr,
            "delayed": dl,
            "delay_us": delay,
            "exchange": ex,
            "oneway": hops,
        }
    cont = contention(comm, nodes, max(sizes), iterations, warmup, progress)
    red = reductions(comm, iterations, progress, reduce_pairs)
    cp = copies(comm, iterations, progress)
    if comm.Get_rank() != 0:
        return None
    per_node: dict[int, int] = {}
    for nd in nodes:
        per_node[nd] = per_node.get(nd, 0) + 1
    return {
        "nranks": size,
        "nodes": nodes,
        "nnodes": len(per_node),
        "ranks_per_node": max(per_node.values()),
        "links": links,
        "contention": cont,
        "reduction": red,
        "copy": cp,
    }


# -- fitting ---------------------------------------------------------------------------------


def _fmt_time_us(us: float, rate: bool = False) -> str:
    from hypercuboid.modelfile import fmt_time

    return fmt_time(us * 1e-6, rate)


def _fmt_gbps(gbps: float) -> str:
    """A bandwidth for a spec: 4 significant digits, no exponent (``12.35``, ``12350``)."""
    return f"{float(f'{gbps:.4g}'):f}".rstrip("0").rstrip(".")


@dataclass
class Calibration:
    """A calibration's result: the model specs, the node spec, each fit and the warnings."""

    model: str
    """The richest point-to-point model: LogGOPS (between nodes where the job spans several)."""
    models: dict[str, str]
    """Every fitted model spec by name (``postal``, ``pipelined``, ``loggops``; with an
    ``_intra`` suffix the ones within a node where the job spans several)."""
    node: str | None
    """``node:ranks=R,bw=BW`` from the contention test."""
    library: str
    nranks: int
    ranks_per_node: int
    fits: dict[str, Any]
    """Each fit's parameters, R², residuals and break points, and the raw medians."""
    warnings: list[str]
    """The fits that do not describe their measurements (also in the file's ``fits``)."""
    call_us: float | None = None
    """The native runner's cost per collective call beyond its messages (``C`` of
    :func:`fit_exchange`), the model file's ``call``; None where no exchange was measured."""

    def document(self, machine: dict | None = None, source: str = "calibrate") -> dict:
        """The model file's JSON object (see :func:`write_model_file`)."""
        lg = self.fits["links"][self.fits["primary"]]["loggops"]
        doc: dict[str, Any] = {"model": self.model}
        if self.node is not None:
            doc["node"] = self.node
        if self.call_us is not None:
            doc["call"] = _fmt_time_us(self.call_us)
        doc.update(
            {
                "models": self.models,
                "library": self.library,
                "nranks": self.nranks,
                "ranks_per_node": self.ranks_per_node,
                "fits": {**self.fits, "warnings": self.warnings},
                "source": source,
                "fitted": {k: lg[k] for k in ("L_us", "o_us", "g_us", "G_ns_per_byte", "S")},
                "machine": machine if machine is not None else {},
                "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            }
        )
        return doc


def write_model_file(path: str | Path, doc: dict, *, force: bool = False) -> Path:
    """Writes :meth:`Calibration.document` as a model file with
    :func:`hypercuboid.modelfile.write` (every spec checked by the core's parsers; the keys of
    the model-file contract); an existing file is kept unless ``force``
    (:class:`~hypercuboid.errors.OutputExistsError`)."""
    from hypercuboid import modelfile
    from hypercuboid.schedule import refuse_existing

    target = refuse_existing(path, force)
    return modelfile.write(
        target,
        doc["model"],
        doc.get("source", "calibrate"),
        doc.get("fitted", {}),
        doc.get("machine", {}),
        node=doc.get("node"),
        models=doc.get("models"),
        library=doc.get("library"),
        nranks=doc.get("nranks"),
        ranks_per_node=doc.get("ranks_per_node"),
        fits=doc.get("fits"),
        call=doc.get("call"),
        force=force,
    )


def _r2_warning(warnings: list[str], what: str, r2: float) -> None:
    said = _core.poor_fit(what, r2)
    if said is not None:
        warnings.append(said)


def _reduction_fits(measured: dict) -> dict[str, dict]:
    out = {}
    for key, m in measured.items():
        f = _core.fit_line([float(b) for b in m["bytes"]], m["median_us"], relative=True)
        out[key] = {
            "gamma_ns_per_byte": f.coef[1] * 1e3,
            "delta_ns": f.coef[0] * 1e3,
            "r2": f.r2,
            "residuals_us": f.residuals,
            **m,
        }
    return out


def fit_exchange(rows: Sequence[dict]) -> dict:
    """The runner's per-call cost ``C`` and the time ``x(s)`` of one step of every size from
    :func:`exchange`'s rows: ``time(k, s) = C + k·x(s)``, the core's non-negative fit
    (``_core.fit_chains``). Returns ``call_us``, ``bytes``, ``step_us`` (``x`` by size), ``r2``
    and ``residuals_us``."""
    f = _core.fit_chains(
        [float(r["bytes"]) for r in rows],
        [float(r["steps"]) for r in rows],
        [float(r["median_us"]) for r in rows],
    )
    return {
        "call_us": f.call,
        "bytes": [int(b) for b in f.sizes],
        "step_us": f.step,
        "r2": f.r2,
        "residuals_us": f.residuals,
    }


def fit_steps(o_us: float, one_way: dict, exchange: dict | None) -> dict:
    """LogGOPS's ``L``, ``G``, ``S``, ``R``, ``S2``, ``R2``, ``X`` and the per-byte time of two
    flows at once (``G2``), from one step by size (``bytes``, ``step_us``) of one-way messages
    and of exchanges (None: none measured), e.g. the steps of :func:`fit_exchange`; ``o_us`` is
    the train's ``o``. The fit is the core's (``_core.fit_steps``: the switches of piecewise
    fits, ``G`` and ``G2`` above ``S``, one non-negative fit of ``c``, ``R``, ``R2``, ``X``;
    docs/calibrate.md); this names its values as the model file does."""
    f = _core.fit_steps(
        o_us,
        [float(b) for b in one_way["bytes"]],
        list(one_way["step_us"]),
        None
        if exchange is None
        else ([float(b) for b in exchange["bytes"]], list(exchange["step_us"])),
        MAX_SEGMENTS,
    )
    return {
        "L_us": f.latency,
        "L_excess_us": f.latency_excess,
        "G_us": f.gap_per_byte,
        "G2_us": f.two_flows_gap_per_byte,
        "S": int(f.eager_limit),
        "S_found": f.eager_found,
        "R_us": f.rendezvous,
        "S2": None if f.second_limit is None else int(f.second_limit),
        "R2_us": f.second_rendezvous,
        "X_us": f.exchange_wait,
        "switches": [{"bytes": int(b), "jump_us": j} for b, j in f.switches],
        "breaks": f.breaks,
        "r2": f.r2,
        "rows": [
            {"bytes": s, "exchange": x, "step_us": t, "predicted_us": p}
            for s, x, t, p in zip(f.sizes, f.exchange, f.times, f.predicted, strict=True)
        ],
    }


def _steps(rows: list[dict] | None, what: str, kind: str, warnings: list[str]) -> dict | None:
    """:func:`fit_exchange` of ``rows``, or None (with a warning) when ``C`` leaves a size no
    time (a noisy or oversubscribed run: the steps cannot carry LogGOPS, whose times are > 0)."""
    if not rows:
        return None
    ex = fit_exchange(rows)
    if min(ex["step_us"]) <= 0:
        empty = ex["bytes"][ex["step_us"].index(min(ex["step_us"]))]
        instead = (
            "LogGOPS is fitted to the ping-pong and no per-call cost is written"
            if what == "exchange"
            else "LogGOPS's lone message is the ping-pong's"
        )
        warnings.append(
            f"{what} ({kind}): the fit C + k·x(s) leaves no time for a step of {empty} B "
            f"(C = {ex['call_us']:.4g} us): {instead} (measure on a quieter machine)"
        )
        return None
    _r2_warning(warnings, f"{what} fit C + k·x(s) of the {kind} {what}s", ex["r2"])
    return ex


def _fit_link(kind: str, link: dict, reduce_part: str, copy_part: str, warnings: list[str]) -> dict:
    """The postal, pipelined and LogGOPS fits of one link (ping-pong, trains and, where
    measured, chains of exchanges and of one-way messages), and their specs. With exchanges,
    the runner's per-call cost ``C`` (:func:`fit_exchange`) is taken out of the ping-pong (a
    round trip is ``C`` and two one-way messages); LogGOPS is :func:`fit_steps` of the one-way
    chain (the ping-pong where none was measured) and the exchanges."""
    pp = link["pingpong"]
    ex = _steps(link.get("exchange"), "exchange", kind, warnings)
    hops = _steps(link.get("oneway"), "one-way", kind, warnings) if ex is not None else None
    half_call = ex["call_us"] / 2.0 if ex is not None else 0.0
    x = [float(r["bytes"]) for r in pp]
    shortest = min(r["median_us"] for r in pp)
    if half_call >= shortest:
        warnings.append(
            f"exchange ({kind}): the runner's per-call cost C = {2 * half_call:.4g} us is not "
            f"below the shortest ping-pong round trip {2 * shortest:.4g} us: the ping-pong is "
            "fitted as measured (the measurements disagree; measure on a quieter machine)"
        )
        half_call = 0.0
    y = [r["median_us"] - half_call for r in pp]
    tn = [float(r["messages"]) for r in link["train"]]
    tt = [r["median_us"] for r in link["train"]]
    dn = [float(r["messages"]) for r in link["delayed"]]
    dt = [r["median_us"] for r in link["delayed"]]
    lg = _core.fit_loggops(x, y, tn, tt, dn, dt, MAX_SEGMENTS)
    st = fit_steps(lg.overhead, hops or {"bytes": x, "step_us": y}, ex)
    postal = _core.fit_line(x, y, relative=True)
    pw = lg.pingpong
    beta = lg.gap_per_byte
    # α_r: the issue cost per message (the train's slope); α_p: the rest of the small-message
    # one-way time, so that α_p + α_r + n·β is the ping-pong's first segment (the core's)
    alpha_r, alpha_p = lg.alpha_r, lg.alpha_p
    if lg.alpha_p_shortfall > 0:
        warnings.append(
            f"pipelined ({kind}): α_r = {alpha_r:.4g} us exceeds the small-message one-way "
            f"time {pw.segments[0].intercept:.4g} us: α_p is 0"
        )
    switch2 = f",S2={st['S2']},R2={_fmt_time_us(st['R2_us'])}" if st["R2_us"] > 0 else ""
    switch2 += f",X={_fmt_time_us(st['X_us'])}" if st["X_us"] > 0 else ""
    specs = {
        "postal": f"postal:alpha={_fmt_time_us(postal.coef[0])},"
        f"beta={_fmt_time_us(postal.coef[1], rate=True)},{reduce_part}",
        "pipelined": f"pipelined:alpha_p={_fmt_time_us(alpha_p)},"
        f"alpha_r={_fmt_time_us(alpha_r)},beta={_fmt_time_us(beta, rate=True)},{reduce_part}",
        "loggops": f"loggops:L={_fmt_time_us(st['L_us'])},o={_fmt_time_us(lg.overhead)},"
        f"g={_fmt_time_us(lg.gap)},G={_fmt_time_us(st['G_us'], rate=True)},O=0,S={st['S']},"
        f"{reduce_part}"
        f"{copy_part}" + (f",R={_fmt_time_us(st['R_us'])}" if st["R_us"] > 0 else "") + switch2,
    }
    _r2_warning(warnings, f"postal fit of the {kind} ping-pong", postal.r2)
    _r2_warning(warnings, f"pipelined fit (α_p, α_r) of the {kind} issue-rate train", lg.train.r2)
    _r2_warning(warnings, f"o fit of the {kind} delayed train", lg.overhead_train.r2)
    _r2_warning(warnings, f"piecewise fit of the {kind} ping-pong", pw.r2)
    on = ("one-way steps" if hops is not None else "ping-pong") + (
        " and exchange steps" if ex is not None else ""
    )
    _r2_warning(warnings, f"LogGOPS (with R, R2, X) on the {kind} {on}", st["r2"])
    if st["L_excess_us"] > 0:
        warnings.append(
            f"LogGOPS ({kind}): 2o = {2 * lg.overhead:.4g} us exceeds the small-message "
            f"step time by {st['L_excess_us']:.4g} us: L is 0 (o is over-estimated)"
        )
    return {
        "peer": link["peer"],
        "specs": specs,
        "postal": {
            "alpha_us": postal.coef[0],
            "beta_ns_per_byte": postal.coef[1] * 1e3,
            "r2": postal.r2,
            "residuals_us": postal.residuals,
        },
        "pipelined": {
            "alpha_p_us": alpha_p,
            "alpha_r_us": alpha_r,
            "issue_intercept_us": lg.train.coef[0],
            "beta_ns_per_byte": beta * 1e3,
            "r2": lg.train.r2,
            "residuals_us": lg.train.residuals,
        },
        "loggops": {
            "L_us": st["L_us"],
            "L_excess_us": st["L_excess_us"],
            "o_us": lg.overhead,
            "o_r2": lg.overhead_train.r2,
            "g_us": lg.gap,
            "g_r2": lg.train.r2,
            "G_ns_per_byte": st["G_us"] * 1e3,
            "G2_ns_per_byte": st["G2_us"] * 1e3,
            "O_ns_per_byte": 0.0,
            "S": st["S"],
            "S_source": "break point (eager/rendezvous switch)"
            if st["S_found"]
            else "no switch in the sizes measured: the largest size",
            "R_us": st["R_us"],
            "S2": st["S2"],
            "R2_us": st["R2_us"],
            "switches": st["switches"],
            "X_us": st["X_us"],
            "step_breaks": st["breaks"],
            "fitted_to": on,
            "r2": st["r2"],
            "rows": st["rows"],
        },
        "exchange": ex,
        "oneway": hops,
        "piecewise": {
            "breaks": pw.breaks,
            "r2": pw.r2,
            "sse": pw.sse,
            "segments": [
                {
                    "from_bytes": s.lo,
                    "to_bytes": s.hi,
                    "alpha_us": s.intercept,
                    "beta_ns_per_byte": s.slope * 1e3,
                    "r2": s.r2,
                }
                for s in pw.segments
            ],
            "residuals_us": pw.residuals,
        },
        "measured": {
            "pingpong": pp,
            "train": link["train"],
            "delayed": link["delayed"],
            "delay_us": link["delay_us"],
            "exchange": link.get("exchange"),
            "oneway": link.get("oneway"),
        },
    }


def _copy_fit(measured: dict | None, warnings: list[str]) -> dict | None:
    """The copy's time per byte (LogGOPS's ``copy``) and per call, by a line through
    :func:`copies`' medians; None when not measured or when the slope is 0."""
    if not measured:
        return None
    f = _core.fit_line([float(b) for b in measured["bytes"]], measured["median_us"], True)
    _r2_warning(warnings, "copy fit", f.r2)
    if f.coef[1] <= 0:
        return None
    return {
        "copy_ns_per_byte": f.coef[1] * 1e3,
        "per_call_ns": f.coef[0] * 1e3,
        "r2": f.r2,
        "residuals_us": f.residuals,
        **measured,
    }


def node_bandwidth(contention: dict, two_flows_g_ns: float | None) -> float:
    """The node level's shared bandwidth (GB/s): ``2/G2`` of the exchanges (two flows at
    once, one each way, at every size measured; ``G2`` ns per byte per flow), but the
    contention fit's where that is lower and saw more than 2 flows per node sharing; the
    contention fit's where no exchange was measured (the core's ``node_bandwidth``)."""
    return _core.node_bandwidth(
        contention["bandwidth_GBps"],
        contention["saturated"],
        float(max(r["flows_per_node"] for r in contention["measured"])),
        two_flows_g_ns,
    )


def _fit_contention(rows: list[dict], big_g_ns: float, warnings: list[str]) -> dict | None:
    if not rows:
        return None
    k = [float(r["flows_per_node"]) for r in rows]
    bw = [r["per_flow_GBps"] for r in rows]
    single, source = (1.0 / big_g_ns, "1/G") if big_g_ns > 0 else (max(bw), "the fastest flow")
    f = _core.fit_contention(k, bw, single)
    if len(set(k)) > 1 and f.saturated:
        _r2_warning(warnings, "contention fit min(1/G, BW/k)", f.r2)
    return {
        "bandwidth_GBps": f.bandwidth,
        "saturated": f.saturated,
        "single_GBps": single,
        "single_source": source,
        "r2": f.r2,
        "predicted_GBps": f.predicted,
        "residuals_GBps": f.residuals,
        "measured": rows,
    }


def fit(measured: dict, library: str = "") -> Calibration:
    """Fits every model to :func:`measure`'s values (rank 0's dict)."""
    warnings: list[str] = []
    red = _reduction_fits(measured["reduction"])
    default = f"{_core.DEFAULTS['allreduce']['dtype']} {_core.DEFAULTS['allreduce']['op']}"
    if default not in red and red:
        default = next(iter(red))  # the first pair measured
    gamma = red[default]["gamma_ns_per_byte"] if default in red else 0.0
    delta = red[default]["delta_ns"] if default in red else 0.0
    if default in red:
        _r2_warning(warnings, f"reduction fit ({default})", red[default]["r2"])
    rates = (_fmt_time_us(gamma * 1e-3, rate=True), _fmt_time_us(delta * 1e-3, rate=True))
    reduce_part = "gamma={},delta={}".format(*rates)
    cp = _copy_fit(measured.get("copy"), warnings)
    copy_part = f",copy={_fmt_time_us(cp['copy_ns_per_byte'] * 1e-3, rate=True)}" if cp else ""
    links = {
        kind: _fit_link(kind, link, reduce_part, copy_part, warnings)
        for kind, link in measured["links"].items()
    }
    primary = "inter" if "inter" in links else "intra"
    models = dict(links[primary]["specs"])
    if primary == "inter" and "intra" in links:
        models.update({f"{k}_intra": v for k, v in links["intra"]["specs"].items()})
    cont = _fit_contention(
        # the flows are one-way: the ping-pong's G (the pipelined model's β) is one flow's
        measured["contention"],
        links[primary]["pipelined"]["beta_ns_per_byte"],
        warnings,
    )
    rpn = measured["ranks_per_node"]
    node = None
    if cont is not None:
        lp = links[primary]["loggops"]
        cont["node_GBps"] = node_bandwidth(
            cont, lp["G2_ns_per_byte"] if links[primary]["exchange"] else None
        )
        node = f"node:ranks={rpn},bw={_fmt_gbps(cont['node_GBps'])}GB/s"
    fits = {
        "r2_threshold": R2_THRESHOLD,
        "primary": primary,
        "links": links,
        "contention": cont,
        "reduction": red,
        "reduction_model": default,
        "copy": cp,
        "nodes": measured["nodes"],
        "nnodes": measured["nnodes"],
    }
    return Calibration(
        model=models["loggops"],
        models=models,
        node=node,
        library=library,
        nranks=measured["nranks"],
        ranks_per_node=rpn,
        fits=fits,
        warnings=warnings,
        call_us=ex["call_us"] if (ex := links[primary]["exchange"]) is not None else None,
    )

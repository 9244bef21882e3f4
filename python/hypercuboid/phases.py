"""Contention-free phases of the all-to-all exchange (AAPC) on a topology.

On a tree of switches with machines as leaves the phases are Faraj and Yuan's optimal
construction (as many phases as the bottleneck link's load); on any other topology a first-fit
heuristic under deterministic minimal routing, reported against its lower bound (the largest
directed-link load)::

    from hypercuboid import phases

    r = phases.alltoall_phases("tree:fig1")
    r.phases, r.load, r.root, r.complete, r.contention_free, r.optimal   # 9, 9, 's1', True, ...
    r.schedule()[0]                                                      # [(0, 4), (3, 5), ...]
    phases.plot_occupancy(r, "fig1.png")

The scheduler and the checks run in Rust (``hypercuboid._core``); see docs/alltoall_phases.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypercuboid import _core
from hypercuboid.topology import Topology, generate

AlltoallPhases = _core.AlltoallPhases

#: Most phase × link cells :func:`plot_occupancy` draws (the core refuses larger matrices).
MAX_PLOT_CELLS = 4_000_000


def methods() -> list[_core.Choice]:
    """The methods ``alltoall_phases`` accepts (name, aliases, help), the core's table."""
    return _core.choices("alltoall phase method")


def routings() -> list[_core.Choice]:
    """The routings off trees (name, aliases, help), the default first: the core's table."""
    return _core.choices("alltoall phase routing")


def alltoall_phases(
    topology: Topology | str, method: str = "auto", routing: str = "dmodk"
) -> AlltoallPhases:
    """Builds the phases of ``topology`` (a :class:`Topology` or a spec string such as
    ``tree:fig5b`` or ``torus:dims=8x8``) by ``method`` (``auto``: Faraj-Yuan on a tree, the
    greedy heuristic elsewhere; ``faraj-yuan``; ``greedy``) and runs the three checks. Off
    trees, messages take the deterministic minimal paths of ``routing`` (``dmodk``: the
    destination's digits pick among the minimal next hops; ``first``: always the first)."""
    topo = generate(topology) if isinstance(topology, str) else topology
    return _core.alltoall_phases(topo, method, routing)


def random_tree(machines: int, switches: int, shape: str = "random", seed: int = 0) -> Topology:
    """A random switched tree (``random``, ``chain``, ``star``, ``deep`` or ``sparse``) of
    ``machines`` machines on ``switches`` switches, the same for the same seed."""
    return _core.alltoall_random_tree(machines, switches, shape, seed)


def random_tree_json(machines: int, switches: int, shape: str = "random", seed: int = 0) -> str:
    """The JSON description of :func:`random_tree`'s tree (write it to a file and name it
    ``tree:FILE``)."""
    return _core.alltoall_random_tree_json(machines, switches, shape, seed)


def to_dict(r: AlltoallPhases, *, schedule: bool = True) -> dict[str, Any]:
    """The JSON object of ``hypercuboid alltoall phases --json``."""
    complete, contention, optimal = r.violations
    d: dict[str, Any] = {
        "topology": r.topology,
        "method": r.method,
        "routing": r.routing,
        "machines": r.machines,
        "messages": r.messages,
        "phases": r.phases,
        "load": r.load,
        "lower_bound": r.lower_bound,
        "gap": r.gap,
        "ratio": r.ratio,
        "root": r.root,
        "subtrees": r.subtrees,
        "complete": r.complete,
        "contention_free": r.contention_free,
        "optimal": r.optimal,
        "violations": {
            "complete": complete,
            "contention_free": contention,
            "optimal": optimal,
        },
    }
    if schedule:
        d["schedule"] = [[[s, t] for s, t in p] for p in r.schedule()]
    return d


def plot_occupancy(r: AlltoallPhases, path: str | Path, *, title: str | None = None) -> Path:
    """Draws the phase × directed-link occupancy (a cell per link and phase: dark where one
    message uses the link, red where more than one would — contention) and saves it as PNG."""
    import numpy as np

    from hypercuboid.plot import _pyplot

    links, counts = r.occupancy()
    if counts.size > MAX_PLOT_CELLS:
        from hypercuboid.errors import ScheduleError

        raise ScheduleError(
            f"an occupancy plot of {len(links)} links x {r.phases} phases = {counts.size} cells "
            f"is too large to read (limit {MAX_PLOT_CELLS}); plot a smaller topology"
        )
    plt = _pyplot()
    from matplotlib.colors import ListedColormap

    rows, cols = counts.shape
    fig_w = min(16.0, 3.0 + cols * 0.06)
    fig_h = min(16.0, 1.5 + rows * 0.12)
    fig, ax = plt.subplots(figsize=(max(fig_w, 5.0), max(fig_h, 3.0)))
    shown = np.minimum(counts, 2)
    cmap = ListedColormap(["#FFFFFF", "#4C72B0", "#C44E52"])
    ax.imshow(shown, aspect="auto", interpolation="nearest", cmap=cmap, vmin=0, vmax=2)
    ax.set_xlabel("phase")
    ax.set_ylabel("directed link")
    if rows <= 80:
        ax.set_yticks(range(rows))
        ax.set_yticklabels(links, fontsize=6 if rows > 30 else 8)
    busy = int((counts > 0).sum())
    ax.set_title(
        title
        or (
            f"{r.topology}: {r.phases} phases ({r.method}), load {r.load}; "
            f"{busy / counts.size:.0%} of link-phases busy"
            + ("" if r.contention_free else "; CONTENTION in red")
        ),
        fontsize=9,
    )
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


#: The synchronisation variants of ``scheduled`` (``sync=``), the default first: the names of
#: the core's table (``_core.choices("sync")``).
SYNCS = tuple(c.name for c in _core.choices("sync"))


@dataclass(frozen=True)
class SyncCheck:
    """The happens-before check of one variant's schedule: ``pairs`` pairs of contending
    messages in different phases examined, ``violated`` of them not ordered by the
    dependencies, ``violation`` the first of those (``None``: every pair is enforced)."""

    pairs: int
    violated: int
    violation: str | None

    @property
    def ok(self) -> bool:
        return self.violation is None


@dataclass(frozen=True)
class SyncCounts:
    """Synchronisation messages of ``scheduled`` on a cluster (alltoall seed, section 5):
    ``pairwise`` before the removal of redundant synchronisations, ``pairwise_reduced`` after
    it, ``barrier`` the zero-byte messages of dissemination barriers between the phases; with
    ``check``, the happens-before check of each variant (``checks[sync]``)."""

    topology: str
    ranks: int
    messages: int
    phases: int
    pairwise: int
    pairwise_reduced: int
    barrier: int
    checks: dict[str, SyncCheck]

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["checks"] = {k: {"pairs": c.pairs, "violated": c.violated, "ok": c.ok,
                           "violation": c.violation}
                       for k, c in self.checks.items()}  # fmt: skip
        return d


def sync_counts(
    topology: Topology | str, mapping: str | Path | None = None, check: bool = False
) -> SyncCounts:
    """The synchronisation messages of every ``sync`` variant of the ``scheduled`` alltoall on
    ``topology``, ranks on the machines of the ``mapping`` file (one machine name or index a
    line) or one on each machine; with ``check``, each variant's schedule is built and the
    happens-before check run (``none`` is expected to fail it wherever phases share links)."""
    topo = generate(topology) if isinstance(topology, str) else topology
    d = _core.alltoall_sync_counts(topo, None if mapping is None else str(mapping), check)
    return SyncCounts(
        topology=topo.name,
        ranks=d.ranks,
        messages=d.messages,
        phases=d.phases,
        pairwise=d.pairwise,
        pairwise_reduced=d.pairwise_reduced,
        barrier=d.barrier,
        checks={c.sync: SyncCheck(c.pairs, c.violated, c.violation) for c in d.checks},
    )


@dataclass(frozen=True)
class Routine:
    """A generated ``MPI_Alltoall`` routine: its C ``text`` and what it runs."""

    text: str
    ranks: int
    phases: int
    messages: int
    syncs: int


def alltoall_routine(
    topology: Topology | str,
    *,
    mapping: str | Path | None = None,
    sync: str = "pairwise-reduced",
    min_size: int = 0,
    pmpi: bool = False,
    name: str = "hc_alltoall",
    provenance: str = "",
) -> Routine:
    """The self-contained C file of an ``MPI_Alltoall`` routine for ``topology`` (the seed's
    routine generator): ``int NAME(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)``, the ``scheduled``
    phases kept apart by ``sync``, falling back to ``PMPI_Alltoall`` for blocks below
    ``min_size`` bytes; ``pmpi`` also defines ``MPI_Alltoall``."""
    topo = generate(topology) if isinstance(topology, str) else topology
    text, d = _core.alltoall_routine(
        topo, None if mapping is None else str(mapping), sync, min_size, pmpi, name, provenance
    )
    return Routine(text=text, ranks=d.ranks, phases=d.phases, messages=d.messages, syncs=d.syncs)


__all__ = [
    "MAX_PLOT_CELLS",
    "SYNCS",
    "AlltoallPhases",
    "Routine",
    "SyncCheck",
    "SyncCounts",
    "alltoall_routine",
    "sync_counts",
    "alltoall_phases",
    "methods",
    "plot_occupancy",
    "random_tree",
    "random_tree_json",
    "routings",
    "to_dict",
]

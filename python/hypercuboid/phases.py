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

from pathlib import Path
from typing import Any

from hypercuboid import _core
from hypercuboid.topology import Topology, generate

AlltoallPhases = _core.AlltoallPhases

#: Most phase × link cells :func:`plot_occupancy` draws (the core refuses larger matrices).
MAX_PLOT_CELLS = 4_000_000


def methods() -> list[tuple[str, list[str], str]]:
    """The methods ``alltoall_phases`` accepts: (name, aliases, summary)."""
    return _core.alltoall_phase_methods()


def routings() -> list[tuple[str, str]]:
    """The routings off trees: (name, summary), the default first."""
    return _core.alltoall_phase_routings()


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

    occ = r.occupancy()
    counts = occ["counts"]
    links: list[str] = occ["links"]
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


__all__ = [
    "MAX_PLOT_CELLS",
    "AlltoallPhases",
    "alltoall_phases",
    "methods",
    "plot_occupancy",
    "random_tree",
    "random_tree_json",
    "routings",
    "to_dict",
]

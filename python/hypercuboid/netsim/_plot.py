"""Plots in the style of the diameter-two seed's Fig. 6-14."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from hypercuboid.errors import NetworkError
from hypercuboid.netsim._report import Report


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot(results: Iterable[Report], path: str | Path, *, title: str | None = None) -> Path:
    """Throughput vs offered load and average latency vs offered load, one row per traffic
    pattern, one line per (topology, routing): the seed's Fig. 6-12. Writes ``path`` (PNG,
    SVG or PDF by extension)."""
    rows: dict[str, dict[tuple[str, str], list[Report]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.effective_throughput is not None:  # an exchange
            continue
        rows[r.traffic][(r.topology, r.routing)].append(r)
    if not rows:
        raise NetworkError("nothing to plot: no synthetic load points in the results")
    plt = _pyplot()
    n = len(rows)
    fig, axes = plt.subplots(n, 2, figsize=(11, 3.8 * n), squeeze=False)
    topologies = sorted({k[0] for series in rows.values() for k in series})
    markers = "osD^v<>px*"
    for i, (traffic, series) in enumerate(rows.items()):
        ax_t, ax_l = axes[i]
        for (topo, routing), pts in series.items():
            pts = sorted(pts, key=lambda r: r.offered)
            x = [100 * r.offered for r in pts]
            label = routing if len(topologies) == 1 else f"{topo} {routing}"
            mk = markers[topologies.index(topo) % len(markers)]
            ax_t.plot(x, [100 * r.accepted for r in pts], marker=mk, ms=4, label=label)
            ax_l.plot(x, [r.latency_avg_ns for r in pts], marker=mk, ms=4, label=label)
        ax_t.plot([0, 100], [0, 100], color="#BBBBBB", ls="--", lw=0.8, zorder=0)
        ax_t.set_xlim(0, 100)
        ax_t.set_ylim(0, 100)
        ax_t.set_xlabel("offered load (% of injection bandwidth)")
        ax_t.set_ylabel("accepted throughput (%)")
        ax_t.set_title(f"{traffic}: throughput")
        ax_l.set_yscale("log")
        ax_l.set_xlim(0, 100)
        ax_l.set_xlabel("offered load (% of injection bandwidth)")
        ax_l.set_ylabel("average packet latency (ns)")
        ax_l.set_title(f"{traffic}: latency")
        for ax in (ax_t, ax_l):
            ax.grid(True, alpha=0.3)
        ax_t.legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_exchange(results: Iterable[Report], path: str | Path, *, title: str | None = None) -> Path:
    """Effective throughput of exchanges as grouped bars, one group per topology and one bar
    per routing: the seed's Fig. 13 and 14."""
    res = [r for r in results if r.effective_throughput is not None]
    if not res:
        raise NetworkError("nothing to plot: no exchange results")
    plt = _pyplot()
    topologies = list(dict.fromkeys(r.topology for r in res))
    routings = list(dict.fromkeys(r.routing for r in res))
    width = 0.8 / len(routings)
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(topologies), 3.6))
    for j, routing in enumerate(routings):
        xs, ys = [], []
        for i, topo in enumerate(topologies):
            for r in res:
                if r.topology == topo and r.routing == routing:
                    assert r.effective_throughput is not None  # res holds exchanges only
                    xs.append(i + (j - (len(routings) - 1) / 2) * width)
                    ys.append(100 * r.effective_throughput)
        bars = ax.bar(xs, ys, width, label=routing)
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.set_xticks(range(len(topologies)), topologies, fontsize=8)
    ax.set_ylim(0, 110)
    ax.set_ylabel("effective throughput (%)")
    patterns = sorted({r.traffic for r in res})
    ax.set_title(title or f"{', '.join(patterns)} exchange")
    ax.legend(fontsize=7, ncols=len(routings))
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

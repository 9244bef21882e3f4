"""The seed's Figure 3: endpoints against router radix for the diameter-two families (and
references), with the cost per endpoint."""

from __future__ import annotations

import os

from hypercuboid import _core
from hypercuboid.errors import TopologyError
from hypercuboid.schedule import refuse_existing

#: Families drawn by :func:`plot_compare` (labels of ``compare``), with line styles.
_STYLES = {
    "OFT": ("tab:red", "-"),
    "MLFM": ("tab:green", "-"),
    "Slim Fly (p=floor)": ("tab:blue", "-"),
    "Slim Fly (p=ceil)": ("tab:blue", "--"),
    "PolarFly (p=ceil)": ("tab:cyan", ":"),
    "2D HyperX": ("tab:purple", "-"),
    "Dragonfly": ("tab:olive", "-."),
    "2-level fat tree": ("tab:gray", "-"),
    "3-level fat tree": ("black", "--"),
}


def compare(radix: int = 64) -> list[dict]:
    """For each family, its largest balanced instance whose router radix is at most ``radix``:
    ``label``, ``spec``, ``endpoints``, ``routers``, ``router_radix``, ``network_radix``,
    ``diameter``, ``ports_per_endpoint``, ``links_per_endpoint`` (closed forms that the tests
    check against the generated graphs)."""
    if isinstance(radix, bool) or not isinstance(radix, int) or radix < 2:
        raise TopologyError(f"compare: radix={radix!r}; must be a whole number >= 2")
    return [
        {
            "label": r.label,
            "spec": r.spec,
            "endpoints": r.endpoints,
            "routers": r.routers,
            "network_links": r.network_links,
            "router_radix": r.router_radix,
            "network_radix": r.network_radix,
            "diameter": r.diameter,
            "ports_per_endpoint": r.ports_per_endpoint,
            "links_per_endpoint": r.links_per_endpoint,
        }
        for r in _core.topology_compare(radix)
    ]


def plot_compare(
    path: str | os.PathLike[str],
    *,
    radix: int = 64,
    radix_min: int = 8,
    radix_max: int = 128,
    force: bool = False,
) -> str:
    """Draws endpoints against router radix (log scale) for every family, with a table of the
    instances at ``radix`` and their cost per endpoint, as the seed's Figure 3; writes a PNG to
    ``path`` and returns the path (an existing ``path`` raises
    :class:`~hypercuboid.errors.OutputExistsError` unless ``force=True``)."""
    if not 2 <= radix_min < radix_max:
        raise TopologyError(
            f"plot_compare: radix range {radix_min}..{radix_max}; need 2 <= min < max"
        )
    path = refuse_existing(os.fspath(path), force)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    radices = list(range(radix_min, radix_max + 1))
    series: dict[str, list[float]] = {label: [] for label in _STYLES}
    for r in radices:
        rows = {row.label: row for row in _core.topology_compare(r)}
        for label in _STYLES:
            row = rows.get(label)
            series[label].append(row.endpoints if row else float("nan"))
    fig = Figure(figsize=(11, 5.2))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.07, 0.12, 0.46, 0.8))
    for label, (color, style) in _STYLES.items():
        ax.step(radices, series[label], where="post", color=color, linestyle=style, label=label)
    ax.axvline(radix, color="0.6", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("router radix")
    ax.set_ylabel("endpoints (largest instance within the radix)")
    ax.set_title("Scale of low-diameter topologies")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    table = fig.add_axes((0.56, 0.12, 0.43, 0.8))
    table.axis("off")
    cells = [
        [
            row["label"],
            row["spec"],
            f"{row['endpoints']:,}",
            str(row["diameter"]),
            f"{row['ports_per_endpoint']:.2f}",
            f"{row['links_per_endpoint']:.2f}",
        ]
        for row in compare(radix)
    ]
    t = table.table(
        cellText=cells,
        colLabels=["family", "instance", "N", "D", "ports/N", "links/N"],
        loc="center",
        cellLoc="left",
    )
    t.auto_set_font_size(False)
    t.set_fontsize(7)
    t.auto_set_column_width(list(range(6)))
    table.set_title(f"largest instances at radix {radix} and cost per endpoint", fontsize=9)
    try:
        fig.savefig(path, dpi=130)
    except OSError as err:
        raise TopologyError(f"cannot write '{path}': {err.strerror}") from None
    return path

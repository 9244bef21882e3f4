"""Plots: schedule timelines in the style of the recursive-multiplying paper's Fig. 18–23.

matplotlib is imported lazily (with the non-interactive Agg backend) so that importing
hypercuboid stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hypercuboid.schedule import Trace

# Op kinds as the trace encodes them (see hypercuboid.schedule.OP_KINDS).
_COLORS = {
    "send": "#4C72B0",
    "recv": "#DDDDDD",
    "reduce": "#DD8452",
    "copy": "#8C8C8C",
    "compute": "#55A868",
    "sleep": "#FFFFFF",
}

#: Timelines with more ranks than this are refused: the figure would be unreadable.
MAX_TIMELINE_RANKS = 256
#: Without ``ranks``, a timeline draws the first this many ranks (and says so in the figure).
MAX_AUTO_RANKS = 16
#: Titles wrap at this many characters (a long spec would be clipped at the figure's edge).
TITLE_WIDTH = 90


def wrap_title(title: str) -> str:
    """A title broken into lines of at most :data:`TITLE_WIDTH` characters, at commas and
    spaces where it can (a spec has no spaces)."""
    import textwrap

    spaced = title.replace(",", ", ")
    lines = textwrap.wrap(spaced, TITLE_WIDTH, break_long_words=True, break_on_hyphens=False)
    return "\n".join(line.replace(", ", ",") for line in lines)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _time_scale(t_max_ps: float) -> tuple[float, str]:
    if t_max_ps >= 1e9:
        return 1e9, "ms"
    if t_max_ps >= 1e6:
        return 1e6, "µs"
    return 1e3, "ns"


def timeline(
    trace: Trace,
    path: str | Path,
    *,
    title: str | None = None,
    ranks: Sequence[int] | None = None,
    arrows: bool = True,
) -> Path:
    """Draws one row per rank with send, receive, reduce and compute boxes and an arrow per
    message (from the end of the send's issue to the message's arrival), and saves it as PNG.

    Receives are drawn as thin light bars from when they are posted to when they complete, so
    waiting is visible without hiding the work. ``ranks`` limits the rows (and arrows) drawn;
    without it, the first :data:`MAX_AUTO_RANKS` ranks are drawn and a note says how many
    there are. The title (default: the ranks, ops and messages drawn) wraps when it is long.
    """
    path = Path(path)
    nranks = int(trace.nranks)
    note = None
    if ranks is None:
        rows = list(range(min(nranks, MAX_AUTO_RANKS)))
        if nranks > MAX_AUTO_RANKS:
            note = (
                f"ranks 0-{MAX_AUTO_RANKS - 1} of {nranks} drawn; choose with --plot-ranks "
                "(CLI) or ranks= (Python)"
            )
    else:
        rows = sorted(set(int(r) for r in ranks))
    if not rows:
        raise ValueError("timeline: no ranks to draw")
    if len(rows) > MAX_TIMELINE_RANKS:
        raise ValueError(
            f"timeline of {len(rows)} ranks would be unreadable; choose at most "
            f"{MAX_TIMELINE_RANKS} with ranks=[...] (or --plot-ranks on the CLI)"
        )
    row_of = {r: i for i, r in enumerate(rows)}
    plt = _pyplot()
    t_max = float(max(trace.op_end.max(initial=0), trace.msg_arrival.max(initial=0)))
    scale, unit = _time_scale(max(t_max, 1.0))
    height = max(2.0, 0.45 * len(rows) + 1.2)
    fig, ax = plt.subplots(figsize=(10, height))
    kinds = trace.op_kind_names()
    seen: set[str] = set()
    for i in range(len(trace.op_rank)):
        r = int(trace.op_rank[i])
        if r not in row_of:
            continue
        kind = kinds[i]
        start = trace.op_start[i] / scale
        width = (trace.op_end[i] - trace.op_start[i]) / scale
        y = row_of[r]
        if width <= 0 and kind != "recv":
            continue  # an instant op draws nothing: no box, no legend entry
        if kind == "recv":
            ax.barh(
                y,
                width,
                left=start,
                height=0.18,
                color=_COLORS[kind],
                edgecolor="#999999",
                linewidth=0.4,
                label=None if kind in seen else "recv (posted → complete)",
            )
        elif kind == "sleep":
            continue
        else:
            ax.barh(
                y,
                max(width, 0.0),
                left=start,
                height=0.6,
                color=_COLORS[kind],
                edgecolor="black",
                linewidth=0.4,
                label=None if kind in seen else kind,
            )
        seen.add(kind)
    if arrows:
        for k in range(len(trace.msg_src)):
            s, d = int(trace.msg_src[k]), int(trace.msg_dst[k])
            if s not in row_of or d not in row_of:
                continue
            x0 = trace.msg_depart[k] / scale
            x1 = trace.msg_arrival[k] / scale
            ax.annotate(
                "",
                xy=(x1, row_of[d]),
                xytext=(x0, row_of[s]),
                arrowprops={
                    "arrowstyle": "->",
                    "color": "#333333",
                    "lw": 0.6,
                    "shrinkA": 0,
                    "shrinkB": 0,
                },
            )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([str(r) for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_ylabel("rank")
    ax.set_xlabel(f"time ({unit})")
    ax.set_xlim(0, max(t_max / scale, 1e-9) * 1.02)
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    if title is None:
        title = f"{nranks} ranks, {len(trace.op_rank):,} ops, {len(trace.msg_src):,} messages"
    if title:
        title = wrap_title(title)
    if note is not None:
        title = f"{title}\n({note})" if title else f"({note})"
    if title:
        ax.set_title(title, fontsize="medium")
    if seen:
        ax.legend(
            loc="upper center",
            bbox_to_anchor=(0.5, -0.12 - 0.4 / height),
            ncol=min(len(seen), 5),
            frameon=False,
            fontsize="small",
        )
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def link_utilisation(result, path: str | Path, *, title: str | None = None) -> Path:
    """Draws the busiest links' utilisation over time of a run on a network (a
    :class:`~hypercuboid.schedule.SimResult` simulated with ``link_timeline=True``) as steps,
    one line per link, and saves it as PNG."""
    path = Path(path)
    net = getattr(result, "network", None)
    if net is None or net.timeline is None:
        raise ValueError(
            "link_utilisation needs a run on a network with link_timeline=True "
            "(simulate --network ... --plot-links FILE)"
        )
    tl = net.timeline
    plt = _pyplot()
    times = np.asarray(tl["times_ps"], dtype=np.float64)
    scale, unit = _time_scale(max(float(times.max(initial=1.0)), 1.0))
    fig, ax = plt.subplots(figsize=(13, 4.5))
    starts = np.concatenate([[0.0], times[:-1]]) / scale
    for x in tl["links"]:
        link = x["link"]
        u = np.asarray(x["utilisation"], dtype=np.float64)
        ax.step(starts, u, where="post", label=f"{link.a} → {link.b} ({link.kind})")
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("utilisation")
    ax.set_ylim(0, 1.05)
    # beside the axes, not on the data
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(wrap_title(title or f"busiest links on {net.topology} ({net.level} level)"))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def bar_comparison(
    labels: Sequence[str], values_ns: Sequence[float], path: str | Path, *, title: str
) -> Path:
    """Horizontal bars of simulated completion times (one per label), saved as PNG."""
    path = Path(path)
    plt = _pyplot()
    values = np.asarray(values_ns, dtype=float)
    scale, unit = _time_scale(float(values.max(initial=1.0)) * 1e3)
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(labels) + 1.2))
    ax.barh(range(len(labels)), values * 1e3 / scale, color="#4C72B0")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"simulated completion time ({unit})")
    ax.set_title(title)
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path

"""``hypercuboid alltoall``: contention-free phases of the all-to-all exchange on a topology."""

from __future__ import annotations

import click

from hypercuboid import _core
from hypercuboid.cli.common import echo_json

#: Phases printed in the text output before the rest is summarised (``--show``).
DEFAULT_SHOW = 64


@click.group()
def alltoall() -> None:
    """All-to-all personalized communication on a topology (Faraj and Yuan's phases)."""


def _method_help() -> str:
    return "; ".join(f"{name}: {summary}" for name, _, summary in _core.alltoall_phase_methods())


def _routing_help() -> str:
    return "; ".join(f"{name}: {summary}" for name, summary in _core.alltoall_phase_routings())


@alltoall.command("phases")
@click.option(
    "--topo",
    "topo_spec",
    required=True,
    metavar="SPEC",
    help="Topology spec: tree:fig1, tree:fig5b, tree:FILE.json, fattree:k=4,levels=3, "
    "slimfly:q=5, torus:dims=8x8, ... (see `hypercuboid topo list`).",
)
@click.option(
    "--method",
    default="auto",
    show_default=True,
    help=f"How the phases are built. {_method_help()}.",
)
@click.option(
    "--routing",
    default=_core.alltoall_phase_routings()[0][0],
    show_default=True,
    help=f"Deterministic minimal routing off trees. {_routing_help()}.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (with the phases).")
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Draw the phase x link occupancy to FILE (PNG).",
)
@click.option(
    "--show",
    type=click.IntRange(min=0),
    default=DEFAULT_SHOW,
    show_default=True,
    help="Phases listed in the text output (0: all).",
)
def phases_cmd(
    topo_spec: str, method: str, routing: str, as_json: bool, plot_path: str | None, show: int
) -> None:
    """Contention-free phases of the all-to-all exchange on a topology.

    On a tree of switches with machines as leaves: the Faraj-Yuan schedule, as many phases as
    the bottleneck load |M0|x(|M|-|M0|). Elsewhere: a heuristic (first fit, iterated greedy, tabu
    search) under a deterministic minimal routing, against its lower bound (the largest
    directed-link load). Prints the
    phases, the load, the root and the three checks (complete, contention-free, optimal).
    Machines are numbered in the topology's endpoint order.
    """
    from hypercuboid import phases

    r = phases.alltoall_phases(topo_spec, method, routing)
    if plot_path is not None:
        phases.plot_occupancy(r, plot_path)
    if as_json:
        echo_json(phases.to_dict(r))
        return
    _print_text(r, show)
    if plot_path is not None:
        click.echo(f"occupancy plot: {plot_path}")


def _print_text(r, show: int) -> None:
    def yes(ok: bool) -> str:
        return "yes" if ok else "NO"

    complete, contention, optimal = r.violations
    rows = [
        ("topology", r.topology),
        ("method", r.method + ("" if r.subtrees else f" (routing {r.routing})")),
        ("machines", f"{r.machines} ({r.messages} messages)"),
        ("phases", f"{r.phases}"),
        ("load", f"{r.load} (lower bound on phases: the most messages on one directed link)"),
        ("gap", f"{r.gap} phases ({r.ratio:.3f} x the lower bound)"),
    ]
    if r.root is not None:
        rows.append(("root", r.root))
    if r.subtrees:
        sizes = ", ".join(f"t{i}: {len(s)}" for i, s in enumerate(r.subtrees))
        rows.append(("subtrees", sizes))
    rows.append(("complete", yes(r.complete) + (f" ({complete})" if complete else "")))
    rows.append(
        ("contention-free", yes(r.contention_free) + (f" ({contention})" if contention else ""))
    )
    rows.append(("optimal", yes(r.optimal) + (f" ({optimal})" if optimal else "")))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        click.echo(f"{k:<{width}}  {v}")
    sched = r.schedule()
    limit = len(sched) if show == 0 else min(show, len(sched))
    click.echo("")
    pw = len(str(max(len(sched) - 1, 0)))
    for p in range(limit):
        msgs = " ".join(f"{s}->{d}" for s, d in sched[p])
        click.echo(f"phase {p:>{pw}}: {msgs}")
    if limit < len(sched):
        click.echo(f"... {len(sched) - limit} more phases (--show 0 lists all, --json prints all)")

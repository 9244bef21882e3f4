"""``hypercuboid netsim``: packet-level simulation of routing and traffic on a topology."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts
from hypercuboid.netsim._api import DEFAULTS
from hypercuboid.netsim._api import forms as netsim_forms

if TYPE_CHECKING:
    from hypercuboid.netsim import Report

#: The core's tables of routings, traffic patterns and exchanges, which the options' help and
#: choices read.
_FORMS = netsim_forms()


def _names(kind: str) -> str:
    return ", ".join(f["usage"] for f in _FORMS[kind])


@click.group()
def netsim() -> None:
    """Simulate traffic on a network topology with routing.

    Packet-level and event-driven (virtual cut-through, input-output buffered routers with
    virtual channels and credits), with the diameter-two seed's parameters by default:
    100 Gb/s links of 50 ns, 100 ns switch traversal, 100 KB buffers, 256 B packets.
    Routings: min, inr (Valiant), ugal, ugal-th (options as ugal:n=4,c=1 or ugal-th:t=10).
    Sweeps run in parallel over local processes, or over MPI ranks under mpiexec.
    """


def _split(values: tuple[str, ...], option: str = "--routing") -> list[str]:
    out: list[str] = []
    for v in values:
        if any(not p.strip() for p in v.split(",")):
            raise click.ClickException(f"{option} {cliopts.shown(v)}: an empty item in the list")
        # a comma inside a spec's options (ugal:n=4,c=1) is not a separator: split on commas
        # that start a known name
        parts = v.split(",")
        cur = parts[0]
        for p in parts[1:]:
            if "=" in p and ":" not in p:
                cur += "," + p
            else:
                out.append(cur)
                cur = p
        out.append(cur)
    items = [x.strip() for x in out if x.strip()]
    seen: set[str] = set()
    for x in items:
        if x.lower() in seen:
            raise click.ClickException(
                f"{option} {cliopts.shown(x)} is given twice; list each one once"
            )
        seen.add(x.lower())
    return items


def _time_option(*decls: str, key: str, help: str) -> Callable:
    """A simulated time, unset by default: the netsim API's default ``DEFAULTS[key]`` applies,
    and the help shows it."""
    return click.option(
        *decls, type=cliopts.Time(), default=None, help=f"{help} [default: {DEFAULTS[key]}]."
    )


def _router_options(f: Callable) -> Callable:
    opts = [
        cliopts.seed_option("Random seed"),
        cliopts.buffer_option(),
        cliopts.packet_size_option(),
        cliopts.renamed("--packet", target="packet_size", new="--packet-size", type=int),
        cliopts.switch_latency_option(),
        _time_option(
            "--watchdog",
            key="watchdog",
            help="Simulated time without a delivery after which to look for a deadlock",
        ),
        click.option(
            "--jobs",
            "-j",
            type=cliopts.Range(1),
            default=None,
            help="Local worker processes (default: CPU count; ignored under mpiexec).",
        ),
        cliopts.threads_option(
            type=int,  # type: ignore[arg-type]  # click takes a Python type too
            help="Engine threads per simulation (default: every core when points run one "
            "after the other on a network of 4096 ports or more, one when they run side by "
            "side). Results do not depend on it",
        ),
        cliopts.choice_option(
            "--executor",
            choices=["auto", "mpi", "processes", "serial"],
            default="auto",
            help="auto: MPI ranks under mpiexec, local processes otherwise.",
        ),
        cliopts.json_option("One JSON object per point"),
        cliopts.csv_option("CSV, one row per point"),
        click.option(
            "--top-links",
            type=cliopts.Range(0),
            default=None,
            help=f"Busiest links [default: {_core.DEFAULTS['netsim']['top_links']}, the core's].",
        ),
        click.option("--links", is_flag=True, help="Every link's utilisation in the JSON."),
        cliopts.force_option("existing --plot, --json, --csv files"),
        cliopts.quiet_option(),
        cliopts.progress_option(),
    ]
    return cliopts.with_options(opts)(f)


def _common(kw: dict[str, Any]) -> dict[str, Any]:
    """The simulator's options the user gave (the others: the core's defaults)."""
    given = {
        "threads": kw["threads"],
        "seed": kw["seed"],
        "buffer": kw["buffer"],
        "packet_bytes": kw["packet_size"],
        "switch_latency": kw["switch_latency"],
        "watchdog": kw["watchdog"],
        "top_links": kw["top_links"],
    }
    return {k: v for k, v in given.items() if v is not None} | {"links": kw["links"]}


def _run_sweep(points: list, kw: dict[str, Any]) -> list[Report] | None:
    from hypercuboid import netsim as ns

    say = cliopts.Progress(kw["quiet"], kw["progress"])
    kind = ns.executor_kind(kw["jobs"], len(points), kw["executor"])
    if not say.on:
        return ns.sweep(points, jobs=kw["jobs"], executor=kind)
    if not sys.stderr.isatty():  # a log: one line per point
        say(f"{len(points)} simulations ({kind})")

        def line(done: int, total: int, point, report) -> None:
            say(f"{done}/{total} {point.label()}")

        return ns.sweep(points, jobs=kw["jobs"], executor=kind, progress=line)
    with click.progressbar(  # type: ignore[var-annotated]
        length=len(points),
        label=f"{len(points)} simulations ({kind})",
        file=sys.stderr,
        show_pos=True,
        item_show_func=lambda p: p.label() if p is not None else "",
    ) as bar:

        def progress(done: int, total: int, point, report) -> None:
            bar.update(1, point)

        return ns.sweep(points, jobs=kw["jobs"], executor=kind, progress=progress)


_CSV_FIELDS = [
    "topology",
    "routing",
    "traffic",
    "offered",
    "generated",
    "accepted",
    "latency_avg_ns",
    "latency_p50_ns",
    "latency_p99_ns",
    "latency_max_ns",
    "hops_avg",
    "indirect_fraction",
    "link_utilisation_mean",
    "link_utilisation_max",
    "busiest_link",
    "busiest_link_utilisation",
    "completion_ns",
    "effective_throughput",
    "delivered",
    "events",
    "wall_seconds",
    "packets_per_second",
]


#: The most load points one --load gives: a sweep is a figure's points, not millions of runs.
MAX_LOADS = 1000


def _bounded_range(load: str) -> None:
    """Refuses a start:stop:step that would make more than :data:`MAX_LOADS` points, before
    they are made (``0.1:1:1e-7`` is nine million)."""
    parts = load.split(":")
    if len(parts) != 3:
        return
    try:
        start, stop, step = (float(p) for p in parts)
    except ValueError:
        return  # the parser names what is wrong
    if step > 0 and stop >= start and (stop - start) / step + 1 > MAX_LOADS:
        n = int((stop - start) / step) + 1
        raise click.ClickException(
            f"--load {cliopts.shown(load)}: {n:,} load points; at most {MAX_LOADS:,} "
            "(a larger step)"
        )


def _exclusive(kw: dict[str, Any]) -> None:
    if kw["as_json"] == "-" and kw["as_csv"] == "-":
        raise click.UsageError("--json and --csv cannot both go to stdout; give one a FILE")


def _csv_row(r: Report) -> dict:
    d = r.to_dict()
    row = {k: d.get(k, "") for k in _CSV_FIELDS}
    row["link_utilisation_mean"] = r.link_utilisation.mean
    row["link_utilisation_max"] = r.link_utilisation.max
    if r.top_links:
        t = r.top_links[0]
        row["busiest_link"] = f"r{t.from_}->r{t.to}"
        row["busiest_link_utilisation"] = t.utilisation
    return row


def _emit(results: list[Report], kw: dict[str, Any], text: Callable[[list[Report]], None]) -> None:
    """JSON lines and CSV go to stdout or to their files; the table is printed unless stdout
    holds one of them."""
    if kw["as_json"]:
        lines = [json.dumps(r.to_dict(), separators=(",", ":")) + "\n" for r in results]
        cliopts.write_out(kw["as_json"], "".join(lines))
    if kw["as_csv"]:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=_CSV_FIELDS, lineterminator="\n")
        w.writeheader()
        for r in results:
            w.writerow(_csv_row(r))
        cliopts.write_out(kw["as_csv"], buf.getvalue())
    if "-" not in (kw["as_json"], kw["as_csv"]):
        text(results)


def _busiest(r: Report) -> str:
    if not r.top_links:
        return "-"
    t = r.top_links[0]
    return f"r{t.from_}->r{t.to} {100 * t.utilisation:.0f}%"


def _print_run(results: list[Report]) -> None:
    from hypercuboid import netsim as ns

    click.echo(
        f"{'topology':18} {'routing':10} {'traffic':11} {'offered':>7} {'accepted':>8} "
        f"{'lat avg':>9} {'lat p99':>9} {'hops':>5} {'indir':>5}  busiest link"
    )
    for r in results:
        click.echo(
            f"{r.topology:18} {r.routing:10} {r.traffic:11} "
            f"{100 * r.offered:6.1f}% {100 * r.accepted:7.2f}% "
            f"{r.latency_avg_ns:7.0f}ns {r.latency_p99_ns:7.0f}ns "
            f"{r.hops_avg:5.2f} {100 * r.indirect_fraction:4.0f}%  {_busiest(r)}"
        )
    sat = ns.saturation(results)
    if any(len([r for r in results if r.routing == s["routing"]]) > 1 for s in sat):
        click.echo(
            f"\nsaturation (accepted < {ns.SATURATION_RATIO:g} x offered) and largest "
            "accepted throughput:"
        )
        for s in sat:
            where = (
                f"saturated from {100 * s['saturation_load']:.0f}% offered"
                + (f" (knee {100 * s['knee']:.1f}%)" if s["knee"] is not None else "")
                if s["saturation_load"] is not None
                else "not saturated in this sweep"
            )
            click.echo(
                f"  {s['topology']} {s['routing']} {s['traffic']}: {where}; "
                f"max accepted {100 * s['max_accepted']:.1f}%"
            )


def _check(topologies: list[str], routings: list[str], traffics: list[str] | None) -> None:
    """Fails fast, before any worker starts, on a bad name or an unservable combination."""
    from hypercuboid.topology import generate

    for r in routings:
        _core.netsim_routing(r)
    for t in traffics or []:
        _core.netsim_traffic(t)
    for spec in topologies:
        topo = generate(spec)
        for r in routings:
            for t in traffics or ["uniform"]:
                # builds the routing tables and resolves the pattern, simulates nothing
                _core.netsim_run(topo, r, t, [])


_topo_option = click.option(
    "--topo", "-t", "topologies", multiple=True, required=True, help="Topology spec (repeatable)."
)
_routing_option = click.option(
    "--routing",
    "-r",
    "routings",
    multiple=True,
    default=("min",),
    show_default=True,
    help=f"{_names('routings')} with options ("
    + ", ".join(f["example"] for f in _FORMS["routings"] if ":" in f["example"])
    + "); repeatable or comma-separated.",
)


@netsim.command("run")
@_topo_option
@_routing_option
@click.option(
    "--traffic",
    "traffics",
    multiple=True,
    default=("uniform",),
    show_default=True,
    help=f"{_names('traffics')} (repeatable or comma-separated).",
)
@click.option(
    "--load",
    default="0.1:1.0:0.1",
    show_default=True,
    help="Offered load(s) in (0, 1]: one value, a list 0.1,0.5 or a range start:stop:step.",
)
@_time_option("--warmup", "-x", key="warmup", help="Warm-up before measuring")
@_time_option("--time", "duration", key="duration", help="Simulated time")
@click.option("--drain", is_flag=True, help="After --time, run until every packet is delivered.")
@cliopts.plot_option("Draw throughput and latency vs load", name="plot_path")
@_router_options
def run_cmd(topologies, routings, traffics, load, warmup, duration, drain, plot_path, **kw):
    """Sweep synthetic traffic over offered loads.

    Per load point: offered and accepted throughput (fractions of the injection bandwidth),
    average and p99 packet latency, hops, the fraction routed indirectly and the busiest link.

    \b
    hypercuboid netsim run --topo oft:k=12 --routing ugal --traffic uniform --load 0.1:1.0:0.1
    hypercuboid netsim run -t mlfm:h=15 -r min,inr,ugal --traffic worst --plot wc.png
    mpiexec -n 8 hypercuboid netsim run -t slimfly:q=13,p=9 -r min,inr --json
    """
    from hypercuboid import netsim as ns

    _exclusive(kw)
    routings, traffics = _split(routings), _split(traffics, "--traffic")
    if "," in load:
        cliopts.split_list(load, "--load")
    _bounded_range(load)
    loads = ns.parse_loads(load)
    cliopts.outputs_free(kw["force"], plot_path, kw["as_json"], kw["as_csv"])
    _check(list(topologies), routings, traffics)
    windows = {k: v for k, v in (("warmup", warmup), ("duration", duration)) if v is not None}
    points = ns.grid(
        list(topologies), routings, traffics, loads, drain=drain, **windows, **_common(kw)
    )
    results = _run_sweep(points, kw)
    if results is None:  # an MPI worker rank
        return
    _emit(results, kw, _print_run)
    if plot_path:
        ns.plot(results, plot_path)
        click.echo(f"wrote {plot_path}", err=True)


def _print_exchange(results: list[Report]) -> None:
    click.echo(
        f"{'topology':18} {'routing':10} {'pattern':7} {'completion':>12} {'effective':>9} "
        f"{'lat avg':>10} {'hops':>5} {'indir':>5}  busiest link"
    )
    for r in results:
        assert r.completion_ns is not None and r.effective_throughput is not None  # exchanges
        click.echo(
            f"{r.topology:18} {r.routing:10} {r.traffic:7} "
            f"{r.completion_ns / 1000:10.1f}us {100 * r.effective_throughput:8.1f}% "
            f"{r.latency_avg_ns:8.0f}ns {r.hops_avg:5.2f} "
            f"{100 * r.indirect_fraction:4.0f}%  {_busiest(r)}"
        )


@netsim.command("exchange")
@click.option(
    "--pattern",
    type=click.Choice([f["name"] for f in _FORMS["exchanges"]]),
    required=True,
    help="; ".join(f"{f['name']}: {f['summary']}" for f in _FORMS["exchanges"]) + ".",
)
@_topo_option
@_routing_option
@click.option("--dims", default=None, help="nn torus XxYxZ (default: the largest that fits).")
@click.option(
    "--message",
    type=cliopts.Size(),
    default=None,
    help="Bytes per pair (default: 7.5KB for a2a, 512KB for nn).",
)
@cliopts.choice_option(
    "--order",
    choices=["interleaved", "sequential"],
    default="interleaved",
    help="a2a: packets interleaved over a random destination order, or whole messages.",
)
@cliopts.plot_option("Bar chart of effective throughput", name="plot_path")
@_router_options
def exchange_cmd(pattern, topologies, routings, dims, message, order, plot_path, **kw):
    """Run an all-to-all or nearest-neighbour exchange to completion.

    Effective throughput = data per node / completion time, as a fraction of the injection
    bandwidth (the seed's Fig. 13 and 14).

    \b
    hypercuboid netsim exchange --pattern a2a -t oft:k=12 -r min,inr,ugal
    hypercuboid netsim exchange --pattern nn -t mlfm:h=15 --dims 15x16x15 -r ugal
    """
    from hypercuboid import netsim as ns

    _exclusive(kw)
    if dims is not None and pattern != "nn":
        raise click.UsageError("--dims applies to --pattern nn")
    routings = _split(routings)
    cliopts.outputs_free(kw["force"], plot_path, kw["as_json"], kw["as_csv"])
    _check(list(topologies), routings, None)
    opts: dict[str, Any] = {"order": order, **_common(kw)}
    if dims is not None:
        opts["dims"] = ns._api._parse_dims(dims)
    if message is not None:
        opts["message"] = message
    points = [
        ns.Point(t, r, pattern, None, pattern, tuple(sorted(opts.items())))
        for t in topologies
        for r in routings
    ]
    results = _run_sweep(points, kw)
    if results is None:
        return
    _emit(results, kw, _print_exchange)
    if plot_path:
        ns.plot_exchange(results, plot_path)
        click.echo(f"wrote {plot_path}", err=True)


@netsim.command("cdg")
@click.option("--topo", "-t", "topology", required=True, help="Topology spec.")
@click.option(
    "--routing",
    "-r",
    "routings",
    multiple=True,
    default=("min", "inr", "ugal"),
    show_default=True,
    help="Routings to check (repeatable or comma-separated).",
)
@cliopts.json_output("One JSON object per routing")
def cdg_cmd(topology, routings, as_json, force):
    """Check that a routing is deadlock-free: its channel dependency graph and VCs."""
    from hypercuboid import netsim as ns

    cliopts.outputs_free(force, as_json)
    lines = []
    cyclic = []
    for r in _split(routings):
        g = ns.cdg(topology, r)
        if not g["acyclic"]:
            cyclic.append(g["routing"])
        if as_json:
            lines.append(json.dumps(g, separators=(",", ":")) + "\n")
            continue
        verdict = (
            "acyclic (deadlock-free)"
            if g["acyclic"]
            else "CYCLE: " + " => ".join(f"r{a}->r{b} vc{v}" for a, b, v in g["cycle"])
        )
        click.echo(
            f"{g['topology']} {g['routing']}: {g['vcs']} VC(s), {g['vc_scheme']} assignment, "
            f"{g['channels']} channels, {g['dependencies']} dependencies: {verdict}"
        )
    if as_json:
        cliopts.write_out(as_json, "".join(lines))
    if cyclic:
        # The report is printed; the exit status says that a routing can deadlock.
        raise click.ClickException(
            f"{topology}: the channel dependency graph of {', '.join(cyclic)} has a cycle "
            "(the routing can deadlock)"
        )


@netsim.command("list")
def list_cmd():
    """List routings, traffic patterns and exchanges."""
    from hypercuboid import netsim as ns

    n = ns.names()
    click.echo("routings:  " + ", ".join(n["routings"]))
    click.echo("  options: choice=random|lowest, vcs=auto|hop|phase|none; ugal and ugal-th:")
    click.echo("           n (indirect candidates, 4), c (penalty), cost=auto|ratio|const;")
    click.echo("           ugal-th: t (threshold, % of the output buffer, 10)")
    click.echo("traffic:   " + ", ".join(n["traffics"]))
    click.echo("exchanges: " + ", ".join(n["exchanges"]))

"""``hypercuboid topo``: generate, analyse, compare and export topologies."""

from __future__ import annotations

import json
import os
import sys

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts

_EXTENSIONS = {
    ".json": "json",
    ".graphml": "graphml",
    ".anynet": "anynet",
    ".dot": "dot",
    ".xml": "simgrid",
}

#: ``-o/--output``: the file export and preset write (stdout without one).
_output = click.option("-o", "--output", type=cliopts.OutFile(), help="File (default stdout).")


@click.group()
def topo() -> None:
    """Generate, analyse, compare and export network topologies.

    A topology is named by a spec string NAME:key=value,... such as slimfly:q=13,p=9,
    oft:k=12, mlfm:h=15, fattree:k=8,levels=3, hyperx:s=8x8,p=6 or tree:fig1
    (see `hypercuboid topo list`).
    """


@topo.command("list")
@cliopts.json_output("Print the families as JSON")
def list_families(as_json: str | None, force: bool) -> None:
    """List the topology families, their spec keys and an example each."""
    from hypercuboid import topology

    cliopts.outputs_free(force, as_json)
    fams = topology.families()
    if as_json:
        cliopts.write_out(as_json, json.dumps(fams, indent=2) + "\n")
        return
    for f in fams:
        click.echo(f"{f['name']:10} {f['summary']}")
        click.echo(f"{'':10} e.g. {f['example']}")
        if f["positional"]:
            click.echo(f"{'':10}   ARG     {f['positional']}")
        for key, meaning in f["keys"]:
            click.echo(f"{'':10}   {key:7} {meaning}")


def _fmt_split(b: dict) -> str:
    e, r = b["endpoints"], b["routers"]
    text = (
        f"{b['cut_links']} links cut, {b['cut_bandwidth_gbps']:g} Gb/s; "
        f"split {e[0]}/{e[1]} endpoints ({r[0]}/{r[1]} routers)"
    )
    if b.get("cut_endpoint_links"):
        text += f", {b['cut_endpoint_links']} endpoint links cut"
    if "metis_split" in b:
        m = b["metis_split"]
        text += (
            f"; best of {b['seeds']} METIS seeds, raw split {m['endpoints'][0]}/"
            f"{m['endpoints'][1]} endpoints ({m['routers'][0]}/{m['routers'][1]} routers), "
            f"{b['metis_cut']} links cut before repair"
        )
    else:
        text += f"; best of {b['seeds']} breadth-first starts"
    return text


def _print_info(info: dict) -> None:
    rows: list[tuple[str, str]] = []
    kinds = ", ".join(f"{k['count']} {k['name']}" for k in info["kinds"] if len(info["kinds"]) > 1)
    rows.append(("endpoints", f"{info['endpoints']}"))
    rows.append(("routers", f"{info['routers']}" + (f" ({kinds})" if kinds else "")))
    rows.append(("router radix", f"{info['router_radix']}"))
    rows.append(("network radix", f"{info['network_radix']}"))
    rows.append(
        (
            "ports per endpoint",
            f"{info['ports_per_endpoint']:.4f} ({info['total_ports']} router ports)",
        )
    )
    rows.append(
        (
            "links per endpoint",
            f"{info['links_per_endpoint']:.4f} ({info['total_links']} links, "
            f"{info['network_links']} between routers)",
        )
    )
    if info["diameter"] is None:
        rows.append(("diameter", "infinite (disconnected)"))
    else:
        rd = info["router_diameter"]
        extra = f" (between any routers: {rd})" if rd != info["diameter"] else ""
        rows.append(("diameter", f"{info['diameter']}{extra}"))
    rows.append(("average hops", f"{info['avg_hops']:.4f}"))
    pd = info["path_diversity"]
    by = "; ".join(
        f"d={b['distance']}: {b['pairs']} pairs, mean {b['mean_paths']:.3f}, max {b['max_paths']}"
        for b in pd["by_distance"]
    )
    rows.append(
        ("minimal paths", f"mean {pd['mean']:.3f}, max {pd['max']}" + (f" [{by}]" if by else ""))
    )
    if info["moore_bound"]:
        m = info["moore_bound"]
        rows.append(
            (
                "Moore bound",
                f"{m['bound']} routers for degree {m['degree']}, diameter {m['diameter']}: "
                f"R/bound = {m['fraction']:.4f}",
            )
        )
    if "bisection" in info:
        b = info["bisection"]
        rows.append(("bisection", f"{b['per_endpoint']:.4f} b per endpoint"))
        rows.append(("", _fmt_split(b)))
    if info["tree"]:
        t = info["tree"]
        subs = ", ".join(f"{s['top']} ({s['machines']})" for s in t["subtrees"])
        rows.append(
            (
                "tree bottleneck",
                f"{t['bottleneck']}: AAPC load {t['load']} = {t['m_u']} x {t['m_v']}, "
                f"peak aggregate throughput {t['peak_throughput_gbps']:.4g} Gb/s",
            )
        )
        rows.append(("tree root", f"{t['root_name']}; subtrees {subs}"))
    click.echo(info["name"])
    for k, v in rows:
        click.echo(f"  {k:20} {v}")


def _spec(spec: str | None, topo_spec: str | None) -> str:
    """The topology: the SPEC argument or ``--topo/-t SPEC`` (one of them)."""
    if (spec is None) == (topo_spec is None):
        raise click.UsageError("give the topology as SPEC or --topo SPEC (one of them)")
    return spec if spec is not None else topo_spec  # type: ignore[return-value]


@topo.command("show")
@click.argument("spec", required=False)
@cliopts.topo_option("The topology (instead of SPEC).")
@cliopts.json_option()
@click.option("--bisection", is_flag=True, help="Also estimate the bisection bandwidth.")
@cliopts.int_option("--seeds", least=1, default=8, help="Partitioner seeds for --bisection.")
@click.option(
    "--bisection-method",
    "method",
    type=click.Choice(["metis", "fm"]),
    default="metis",
    show_default=True,
    help="Bisection starts: METIS partitions or breadth-first-grown ones.",
)
@cliopts.renamed("--method", target="method", new="--bisection-method")
@cliopts.force_option("an existing --json file")
def show(
    spec: str | None,
    topo_spec: str | None,
    as_json: str | None,
    bisection: bool,
    seeds: int,
    method: str,
    force: bool,
) -> None:
    """Analyse the topology SPEC: size, radix, cost, diameter, hops, path diversity."""
    from hypercuboid import topology

    spec = _spec(spec, topo_spec)
    cliopts.outputs_free(force, as_json)
    info = topology.analyze(spec, bisection=bisection, seeds=seeds, method=method)
    if as_json:
        cliopts.write_out(as_json, json.dumps(info) + "\n")
    else:
        _print_info(info)


@topo.command("export")
@click.argument("spec", required=False)
@cliopts.topo_option("The topology (instead of SPEC).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice([c.name for c in _core.choices("export format")], case_sensitive=False),
    help="Output format (default: from the extension of -o).",
)
@_output
@click.option("--cycle", help="anynet: write link latencies in cycles of this time (e.g. 1ns).")
@click.option("--no-endpoints", is_flag=True, help="dot: draw routers only.")
@cliopts.force_option("an existing -o file")
def export_cmd(
    spec: str | None,
    topo_spec: str | None,
    fmt: str | None,
    output: str | None,
    cycle: str | None,
    no_endpoints: bool,
    force: bool,
) -> None:
    """Write the topology SPEC as JSON (our schema), GraphML, BookSim2 anynet, dot or a
    SimGrid platform (simgrid, version 4.1: one Floyd zone that smpirun -platform reads)."""
    from hypercuboid import topology

    spec = _spec(spec, topo_spec)
    if fmt is None:
        ext = os.path.splitext(output or "")[1].lower()
        fmt = _EXTENSIONS.get(ext)
        if fmt is None:
            raise click.BadParameter(
                "give --format (json, graphml, anynet, dot, simgrid), or an -o file with one "
                "of the extensions .json, .graphml, .anynet, .dot or .xml (simgrid)",
                param_hint="--format",
            )
    cycle_ps = None
    if cycle is not None:
        if fmt != "anynet":
            raise click.BadParameter(
                "--cycle applies to --format anynet only", param_hint="--cycle"
            )
        cycle_ps = _parse_ps(cycle)
    cliopts.outputs_free(force, output)
    text = topology.export(
        spec, fmt, output, cycle_ps=cycle_ps, endpoints=not no_endpoints, force=force
    )
    if output is None:
        click.echo(text, nl=False)
    else:
        click.echo(f"wrote {output} ({fmt})", err=True)


def _parse_ps(text: str) -> int:
    """A time of :mod:`hypercuboid.units` (``1ns``, ``500ps``, ``2.5ns``) in picoseconds,
    rounded; at least 1 ps."""
    from hypercuboid import units
    from hypercuboid.errors import UnitError

    try:
        value = units.parse_time_f64(text)
    except UnitError as err:
        raise click.BadParameter(str(err), param_hint="--cycle") from None
    if not value >= 1:
        raise click.BadParameter(f"'{text}': the cycle must be >= 1ps", param_hint="--cycle")
    return round(value)


@topo.command("compare")
@cliopts.int_option("--radix", least=1, default=64, help="Router radix of the table.")
@cliopts.plot_option("Draw the diameter-two seed's Figure 3 (endpoints against router radix)")
@cliopts.renamed("--png", target="plot", new="--plot", type=cliopts.PlotFile())
@cliopts.renamed("--no-png", target=None, new="no figure is drawn without --plot", is_flag=True)
@cliopts.int_option("--radix-max", least=1, default=128, help="Largest radix drawn.")
@cliopts.json_option("Print the table as JSON")
@cliopts.force_option("existing --plot and --json files")
def compare_cmd(
    radix: int, plot: str | None, radix_max: int, as_json: str | None, force: bool
) -> None:
    """Largest instance of each family within a router radix, with cost per endpoint, and
    with --plot the diameter-two seed's Figure 3 (endpoints against router radix)."""
    from hypercuboid import topology

    cliopts.outputs_free(force, plot, as_json)
    rows = topology.compare(radix)
    if plot is not None:
        topology.plot_compare(plot, radix=radix, radix_max=max(radix_max, radix + 1), force=force)
    if as_json:
        cliopts.write_out(as_json, json.dumps(rows) + "\n")
    if as_json != "-":
        click.echo(
            f"{'family':20} {'instance':26} {'endpoints':>10} {'routers':>8} {'radix':>6} "
            f"{'D':>2} {'ports/N':>8} {'links/N':>8}"
        )
        for r in rows:
            click.echo(
                f"{r['label']:20} {r['spec']:26} {r['endpoints']:>10,} {r['routers']:>8,} "
                f"{r['router_radix']:>6} {r['diameter']:>2} {r['ports_per_endpoint']:>8.3f} "
                f"{r['links_per_endpoint']:>8.3f}"
            )
    if plot is not None:
        click.echo(f"wrote {plot}", err=True)


@topo.command("preset")
@click.argument("name", type=click.Choice(["fig1", "fig5a", "fig5b", "fig5c"]))
@_output
@cliopts.force_option("an existing -o file")
def preset(name: str, output: str | None, force: bool) -> None:
    """Print the JSON description of an Ethernet tree preset (a template for tree:FILE)."""
    from hypercuboid import topology

    cliopts.outputs_free(force, output)
    text = topology.tree_preset(name)
    if output is None:
        click.echo(text, nl=False)
        return
    cliopts.write_out(output, text)
    print(f"wrote {output}", file=sys.stderr)

"""``hypercuboid simulate``: run a schedule on a cost model, or on a network."""

from __future__ import annotations

from collections.abc import Callable

import click

from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import echo_json, schedule_verb
from hypercuboid.modelfile import node_forms
from hypercuboid.plot import MAX_AUTO_RANKS, MAX_TIMELINE_RANKS
from hypercuboid.schedule import model_forms, noise_forms

MODEL_HELP = (
    "Cost model spec: "
    + " | ".join(f["example"] for f in model_forms())
    + " (a bare number is ns)."
)

#: ``--model/-m``: a cost-model spec.
model_option = click.option("--model", "-m", default=None, help=MODEL_HELP)


def model_options(written_by: str) -> list[Callable]:
    """``--model/-m`` and ``--model-file`` (simulate, predict, validate): a spec, or a model file
    that `written_by` names the writers of, whose ``node`` spec applies too unless ``--node`` is
    given."""
    return [
        model_option,
        click.option(
            "--model-file",
            type=cliopts.InputFile(),
            default=None,
            help="Read the model from a model file (JSON with a 'model' spec), e.g. one written "
            f"by {written_by}; its 'node' spec too, if it has one (--node wins).",
        ),
    ]


NOISE_HELP = "Per-op delay: " + " | ".join(f["example"] for f in noise_forms()) + "."


def _api_defaults() -> dict:
    """The defaults of :meth:`Schedule.simulate` (an option left out is not passed, so these
    apply): the help shows them, it does not type them again."""
    import inspect

    from hypercuboid.schedule import Schedule

    params = inspect.signature(Schedule.simulate).parameters.values()
    return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}


_API = _api_defaults()


#: The options of a run on a network, by parameter name: given without --topo, they are refused
#: (not silently ignored).
NETWORK_ONLY = {
    "routing": "--routing",
    "level": "--level",
    "mapping": "--mapping",
    "ranks_per_endpoint": "--ranks-per-endpoint",
    "nic": "--nic",
    "packet_size": "--packet-size",
    "buffer": "--buffer",
    "switch_latency": "--switch-latency",
    "as_csv": "--csv",
    "plot_links": "--plot-links",
}


def _simulate(
    sched,
    model,
    model_file,
    as_json,
    no_per_rank,
    trace,
    plot,
    plot_ranks,
    noise,
    seed,
    strict,
    force,
    network=None,
    top_links=None,
    calls=1,
    threads=None,
    quiet=False,
    progress=None,
    node=None,
    **net,
):
    say = cliopts.Progress(quiet, progress)
    if calls > 1 and (trace is not None or plot is not None):
        raise click.ClickException(
            f"--calls {calls}: --trace and --plot record one call; simulate --calls 1"
        )
    if model is not None and model_file is not None:
        raise click.ClickException("give --model or --model-file, not both")
    if node is not None and network is not None:
        raise click.ClickException(
            "--node with --network: the node level replaces the network (give one; on a "
            "network, --ranks-per-endpoint groups ranks)"
        )
    if model_file is not None:
        from hypercuboid.modelfile import load_file

        f = load_file(model_file)
        model = f.model
        if node is None and network is None:
            node = f.node
    if model is None and network is None:
        raise click.ClickException("missing --model (or --model-file); " + MODEL_HELP)
    given = {k: v for k, v in net.items() if v is not None}
    if as_json == "-" and given.get("as_csv") == "-":
        raise click.ClickException("--json and --csv cannot both go to stdout; give one a FILE")
    if network is None and given:
        raise click.ClickException(
            f"{NETWORK_ONLY[next(iter(given))]} applies to --network runs only"
        )
    ranks = _parse_ranks(plot_ranks, sched.nranks) if plot_ranks else None
    cliopts.outputs_free(force, trace, plot, net.get("as_csv"), net.get("plot_links"), as_json)
    if strict:
        say("verifying the schedule (--strict)")
        report = sched.verify()
        if not report.sound:
            first = report.problems[0] if report.problems else "see 'schedule verify'"
            raise click.ClickException(
                f"--strict: the schedule does not verify ({len(report.problems)} problem(s)); "
                f"first: {first}"
            )
    where = "a cost model" if network is None else f"the network {network}"
    say(f"simulating {sched.meta['name']} ({sched.nranks} ranks, {sched.total_ops} ops) on {where}")
    kw = {}
    if network is not None:
        csv_out = given.pop("as_csv", None)
        links_out = given.pop("plot_links", None)
        kw = {
            "network": network,
            **given,
            "records": csv_out is not None,
            "link_timeline": links_out is not None,
        }
    res = sched.simulate(
        model,
        trace=plot is not None,
        noise=noise,
        seed=seed,
        chrome_trace=trace,
        calls=calls,
        threads=threads,
        **kw,
        **({} if node is None else {"node": node}),
    )
    say(f"simulated: completion time {res.completion_time_ns:,.3f} ns")
    if network is not None:
        if csv_out is not None:
            _write_messages(res, csv_out)
        if links_out is not None:
            from hypercuboid.plot import link_utilisation

            link_utilisation(res, links_out)
    if plot is not None:
        from hypercuboid.plot import timeline

        timeline(res.trace, plot, title=f"{sched.meta['name']} — {res.model}", ranks=ranks)
    if as_json:
        d = res.to_dict(per_rank=not no_per_rank, top_links=top_links)
        d["nranks"] = sched.nranks
        d["calls"] = calls
        d["completion_time_ns"] = res.completion_time_ns
        d["time_per_call_ns"] = res.completion_time_ns / calls
        if not no_per_rank:
            d["messages_per_rank"] = (sched.sends_per_rank() * calls).tolist()
        echo_json(d, as_json)
    if as_json == "-" or (network is not None and csv_out == "-"):
        return  # stdout holds the JSON or the CSV
    click.echo(f"schedule        {sched.meta['name']} ({sched.nranks} ranks, {res.ops} ops)")
    click.echo(_model_line(res))
    if calls > 1:
        click.echo(f"calls           {calls} (back to back, no barrier)")
    click.echo(f"completion time {res.completion_time_ns:,.3f} ns")
    if calls > 1:
        click.echo(f"per call        {res.completion_time_ns / calls:,.3f} ns (mean)")
    click.echo(f"finish skew     {res.skew_ns:,.3f} ns")
    click.echo(f"messages        {res.messages}")
    if not no_per_rank and sched.nranks <= 16:
        finish = ", ".join(f"{t:,.1f}" for t in res.rank_finish_ns)
        click.echo(f"rank finish ns  {finish}")
    if res.network is not None:
        _print_network(res, top_links)
    if network is not None and csv_out is not None:
        click.echo(f"messages csv    {csv_out}")
    if network is not None and links_out is not None:
        click.echo(f"link plot       {links_out}")
    if trace is not None:
        click.echo(f"trace           {trace} (Chrome / Perfetto JSON)")
    if plot is not None:
        capped = ranks is None and sched.nranks > MAX_AUTO_RANKS
        click.echo(
            f"timeline        {plot}"
            + (
                f" (ranks 0-{MAX_AUTO_RANKS - 1} of {sched.nranks}; choose with --plot-ranks)"
                if capped
                else ""
            )
        )
    if as_json:
        click.echo(f"json            {as_json}")


#: The LogGOPS parameters of a host model that a network replaces: they time only messages
#: between ranks of one endpoint.
_LOCAL_ONLY = ("L", "G")


def _model_line(res) -> str:
    """The model; on a network where no message stays within an endpoint, without the host
    model's parameters that do not apply (L and G time messages between ranks of one endpoint,
    the network times the others)."""
    if res.network is None or res.network.local or ":" not in res.model:
        return f"model           {res.model}"
    name, params = res.model.split(":", 1)
    kept = [p for p in params.split(",") if p.split("=", 1)[0] not in _LOCAL_ONLY]
    return (
        f"host model      {name}:{','.join(kept)} (L, G: between ranks of one endpoint; "
        "no message stayed within one)"
    )


def _print_network(res, top_links: int) -> None:
    n = res.network
    click.echo(f"network         {n.topology}, {n.level} level, routing {n.routing}")
    click.echo(
        f"network msgs    {n.messages} ({n.bytes:,} B), {n.control} control, {n.local} local"
    )
    if n.messages:
        tr, q = n.transfer_ps / 1e3, n.queued_ps / 1e3
        click.echo(
            f"per message     {tr / n.messages:,.1f} ns transferring (zero-load), "
            f"{q / n.messages:,.1f} ns queued on average"
        )
    if n.worst is not None:
        w = n.worst
        click.echo(
            f"waited longest  rank {w['src']} -> {w['dst']}, {w['bytes']:,} B: "
            f"{w['queued_ps'] / 1e3:,.1f} ns queued, {w['transfer_ps'] / 1e3:,.1f} ns transfer"
        )
    click.echo(f"mean link util  {n.mean_network_utilisation:.3f} (router-to-router links)")
    if n.links:
        click.echo(f"busiest links   (of {len(n.links)} that carried data)")
        for x in n.links[:top_links]:
            click.echo(f"  {x.a} -> {x.b}  {x.kind:<9}  {x.bytes:>14,} B  {x.utilisation:6.3f}")


def _write_messages(res, path: str) -> None:
    import csv
    import io

    r = res.network.records
    cols = ["src", "dst", "bytes", "injected_ps", "delivered_ps", "transfer_ps", "queued_ps"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in zip(*(r[c].tolist() for c in cols), strict=True):
        w.writerow(row)
    cliopts.write_out(path, buf.getvalue())


def _parse_ranks(text: str, nranks: int) -> list[int]:
    out: list[int] = []
    for part in cliopts.split_list(text, "--plot-ranks"):
        try:
            a, b = (int(x) for x in part.split("-", 1)) if "-" in part else (int(part),) * 2
        except ValueError:
            raise click.ClickException(
                f"--plot-ranks {cliopts.shown(text)}: expected ranks like 0-7,12"
            ) from None
        if a > b:
            raise click.ClickException(
                f"--plot-ranks {cliopts.shown(text)}: the range {part} runs down; write {b}-{a}"
            )
        if not (0 <= a and b < nranks):
            bad = a if not 0 <= a < nranks else b
            raise click.ClickException(
                f"--plot-ranks {cliopts.shown(text)}: rank {bad} is not in 0..{nranks - 1}"
            )
        out.extend(range(a, b + 1))
    if len(set(out)) > MAX_TIMELINE_RANKS:
        raise click.ClickException(
            f"--plot-ranks {cliopts.shown(text)}: {len(set(out))} ranks; a timeline draws at most "
            f"{MAX_TIMELINE_RANKS}"
        )
    return out


simulate = schedule_verb(
    "simulate",
    "Simulate a schedule on a cost model, or on a network (--topo): completion time, "
    "per-rank finish times, and optionally a Chrome trace and a timeline figure; on a network "
    "also the busiest links and the time messages spent queued.",
    [
        *model_options("'hypercuboid bench pingpong', 'bench multicast' or 'calibrate'"),
        click.option(
            "--node",
            default=None,
            help="The node level on top of a loggops host model: "
            + " | ".join(f["example"] for f in node_forms())
            + " [,nic=BW][,map=block|round_robin]: ranks of a node share its bandwidth (and "
            "NIC) by max-min fair flows (docs/simulate.md).",
        ),
        cliopts.json_option(),
        click.option("--no-per-rank", is_flag=True, help="Omit per-rank finish times."),
        click.option(
            "--trace",
            type=cliopts.OutFile(),
            default=None,
            help="Write a Chrome / Perfetto trace (JSON) of every op and message.",
        ),
        cliopts.plot_option("Draw a timeline"),
        click.option(
            "--plot-ranks",
            default=None,
            help="Ranks to draw, e.g. 0-15 or 0,4,8 (default: the first "
            f"{MAX_AUTO_RANKS}, with a note when there are more).",
        ),
        click.option("--noise", default=None, help=NOISE_HELP),
        cliopts.seed_option(
            "Seed of the noise and, on a network, of its random choices (the core's default: "
            "0 on a model, 1 on a network)"
        ),
        cliopts.topo_option(
            "Run on this topology (a spec: tree:fig5b, slimfly:q=5, fattree:k=8,levels=3, "
            "...); --model is then the host model (loggops:o=...,g=...,S=...).",
            name="network",
            extra=("--network",),
            default=None,
        ),
        click.option(
            "--routing",
            "-r",
            default=None,
            help=f"min | inr | ugal | ugal-th [default: {_API['routing']}].",
        ),
        click.option(
            "--level",
            default=None,
            help=f"packet | flow (max-min fair) [default: {_API['level']}].",
        ),
        click.option(
            "--mapping",
            default=None,
            help="Rank -> endpoint: linear | round_robin | random[:seed=K] | file:PATH (one "
            f"endpoint per line) [default: {_API['mapping']}].",
        ),
        click.option(
            "--ranks-per-endpoint",
            type=cliopts.Range(1),
            default=None,
            help="Ranks per endpoint (cores per node); their messages go through memory "
            f"[default: {_API['ranks_per_endpoint']}].",
        ),
        click.option(
            "--nic",
            default=None,
            help="fifo (a NIC sends whole messages in start order) | interleave (it shares its "
            f"link among them: one packet of each in turn) [default: {_API['nic']}].",
        ),
        cliopts.packet_size_option(),
        cliopts.buffer_option(),
        cliopts.switch_latency_option(),
        cliopts.int_option(
            "--top-links",
            least=0,
            default=cliopts.DEFAULTS["netsim"]["top_links"],
            help="Busiest links shown.",
        ),
        cliopts.csv_option("Write one row per network message (queued vs transfer time)"),
        cliopts.renamed("--messages-csv", target="as_csv", new="--csv", type=cliopts.OutFile()),
        click.option(
            "--plot-links",
            type=cliopts.PlotFile(),
            default=None,
            help="Draw the busiest links' utilisation over time (FILE.png, .pdf, .svg, ...).",
        ),
        click.option(
            "--strict", is_flag=True, help="Refuse to simulate a schedule that does not verify."
        ),
        cliopts.force_option("existing --trace, --plot, --csv, --json files"),
        cliopts.int_option(
            "--calls",
            least=1,
            default=1,
            help="Run the schedule this many times back to back, each rank starting its next "
            "call when its own ops of the last are done (e.g. the seed's 2,000 halo calls).",
        ),
        cliopts.threads_option(
            type=cliopts.Range(
                0, cliopts.MAX_THREADS, note=" (0: every core for 2^19 ops or more, else 1)"
            ),
            help="Threads to simulate on. On a model: default every core for 2^19 ops or more, "
            "else 1; the result is the same for any number. With --topo: the packet "
            "engine's (default 1)",
        ),
        cliopts.quiet_option(),
        cliopts.progress_option(),
    ],
    _simulate,
)

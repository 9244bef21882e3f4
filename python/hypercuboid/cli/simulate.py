"""``hypercuboid simulate``: run a schedule on a cost model, or on a network."""

from __future__ import annotations

import click

from hypercuboid.cli.common import echo_json, refuse_overwrite, schedule_verb
from hypercuboid.schedule import model_forms, noise_forms

MODEL_HELP = (
    "Cost model spec: "
    + " | ".join(f["example"] for f in model_forms())
    + " (a bare number is ns)."
)
NOISE_HELP = "Per-op delay: " + " | ".join(f["example"] for f in noise_forms()) + "."


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
    routing="min",
    level="packet",
    mapping="linear",
    ranks_per_endpoint=1,
    nic="fifo",
    packet_size="256",
    buffer="100KiB",
    switch_latency="100ns",
    top_links=10,
    messages_csv=None,
    plot_links=None,
    calls=1,
    threads=None,
):
    if threads is not None and threads < 0:
        raise click.ClickException(
            f"--threads {threads}: must be >= 0 (0: every core for 2^19 ops or more, else 1)"
        )
    if calls < 1:
        raise click.ClickException(f"--calls {calls}: run the schedule at least once")
    if calls > 1 and (trace is not None or plot is not None):
        raise click.ClickException(
            f"--calls {calls}: --trace and --plot record one call; simulate --calls 1"
        )
    if model is not None and model_file is not None:
        raise click.ClickException("give --model or --model-file, not both")
    if model_file is not None:
        from hypercuboid.modelfile import load

        model = load(model_file)
    if model is None and network is None:
        raise click.ClickException("missing --model (or --model-file); " + MODEL_HELP)
    if network is None:
        given = [
            o
            for o, v, d in (
                ("--routing", routing, "min"),
                ("--level", level, "packet"),
                ("--mapping", mapping, "linear"),
                ("--ranks-per-endpoint", ranks_per_endpoint, 1),
                ("--nic", nic, "fifo"),
                ("--messages-csv", messages_csv, None),
                ("--plot-links", plot_links, None),
            )
            if v != d
        ]
        if given:
            raise click.ClickException(f"{given[0]} applies to --network runs only")
    if strict:
        report = sched.verify()
        if not report.sound:
            first = report.problems[0] if report.problems else "see 'schedule verify'"
            raise click.ClickException(
                f"--strict: the schedule does not verify ({len(report.problems)} problem(s)); "
                f"first: {first}"
            )
    chrome = None
    if trace is not None:
        chrome = refuse_overwrite(trace, force)
    if plot is not None:
        refuse_overwrite(plot, force)
        if plot_ranks is None and sched.nranks > 64:
            raise click.ClickException(
                f"--plot of {sched.nranks} ranks would be unreadable; choose ranks with "
                "--plot-ranks 0-15 (at most 256)"
            )
    if messages_csv is not None:
        refuse_overwrite(messages_csv, force)
    if plot_links is not None:
        refuse_overwrite(plot_links, force)
    if network is None:
        res = sched.simulate(
            model,
            trace=plot is not None,
            noise=noise,
            seed=seed,
            chrome_trace=chrome,
            calls=calls,
            threads=threads,
        )
    else:
        res = sched.simulate(
            model,
            trace=plot is not None,
            noise=noise,
            seed=seed if seed is not None else None,
            chrome_trace=chrome,
            network=network,
            routing=routing,
            level=level,
            mapping=mapping,
            ranks_per_endpoint=ranks_per_endpoint,
            nic=nic,
            packet_size=packet_size,
            buffer=buffer,
            switch_latency=switch_latency,
            records=messages_csv is not None,
            link_timeline=plot_links is not None,
            calls=calls,
            threads=threads,
        )
        if messages_csv is not None:
            _write_messages(res, messages_csv)
        if plot_links is not None:
            from hypercuboid.plot import link_utilisation

            link_utilisation(res, plot_links)
    if plot is not None:
        from hypercuboid.plot import timeline

        ranks = _parse_ranks(plot_ranks, sched.nranks) if plot_ranks else None
        timeline(res.trace, plot, title=f"{sched.meta['name']} — {res.model}", ranks=ranks)
    if as_json:
        d = res.to_dict(per_rank=not no_per_rank, top_links=top_links)
        d["nranks"] = sched.nranks
        d["calls"] = calls
        d["completion_time_ns"] = res.completion_time_ns
        if not no_per_rank:
            d["messages_per_rank"] = (sched.sends_per_rank() * calls).tolist()
        echo_json(d)
        return
    click.echo(f"schedule        {sched.meta['name']} ({sched.nranks} ranks, {res.ops} ops)")
    click.echo(f"model           {res.model}")
    if calls > 1:
        click.echo(f"calls           {calls} (back to back, no barrier)")
    click.echo(f"completion time {res.completion_time_ns:,.3f} ns")
    click.echo(f"finish skew     {res.skew_ns:,.3f} ns")
    click.echo(f"messages        {res.messages}")
    if not no_per_rank and sched.nranks <= 16:
        finish = ", ".join(f"{t:,.1f}" for t in res.rank_finish_ns)
        click.echo(f"rank finish ns  {finish}")
    if res.network is not None:
        _print_network(res, top_links)
    if messages_csv is not None:
        click.echo(f"messages csv    {messages_csv}")
    if plot_links is not None:
        click.echo(f"link plot       {plot_links}")
    if trace is not None:
        click.echo(f"trace           {trace} (Chrome / Perfetto JSON)")
    if plot is not None:
        click.echo(f"timeline        {plot}")


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

    r = res.network.records
    cols = ["src", "dst", "bytes", "injected_ps", "delivered_ps", "transfer_ps", "queued_ps"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for row in zip(*(r[c].tolist() for c in cols), strict=True):
            w.writerow(row)


def _parse_ranks(text: str, nranks: int) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                out.extend(range(int(a), int(b) + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise click.ClickException(
                f"--plot-ranks '{text}': expected ranks like 0-7,12"
            ) from None
    bad = [r for r in out if not 0 <= r < nranks]
    if bad:
        raise click.ClickException(f"--plot-ranks: rank {bad[0]} is not in 0..{nranks - 1}")
    return out


simulate = schedule_verb(
    "simulate",
    "Simulate a schedule on a cost model, or on a network (--network): completion time, "
    "per-rank finish times, and optionally a Chrome trace and a timeline PNG; on a network "
    "also the busiest links and the time messages spent queued.",
    [
        click.option("--model", "-m", default=None, help=MODEL_HELP),
        click.option(
            "--model-file",
            type=click.Path(dir_okay=False),
            default=None,
            help="Read the model from a model file (JSON with a 'model' spec), e.g. one written "
            "by 'hypercuboid bench pingpong' or 'bench multicast'.",
        ),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object."),
        click.option("--no-per-rank", is_flag=True, help="Omit per-rank finish times."),
        click.option(
            "--trace",
            type=click.Path(dir_okay=False),
            default=None,
            help="Write a Chrome / Perfetto trace (JSON) of every op and message.",
        ),
        click.option(
            "--plot", type=click.Path(dir_okay=False), default=None, help="Draw a timeline PNG."
        ),
        click.option("--plot-ranks", default=None, help="Ranks to draw, e.g. 0-15 or 0,4,8."),
        click.option(
            "--noise",
            default=None,
            help=NOISE_HELP,
        ),
        click.option(
            "--seed",
            type=int,
            default=None,
            help="Noise seed (default 0); with --network, seed of its random choices and of "
            "the noise (default 1).",
        ),
        click.option(
            "--network",
            default=None,
            help="Run on this topology (a spec: tree:fig5b, slimfly:q=5, fattree:k=8,levels=3, "
            "...); --model is then the host model (loggops:o=...,g=...,S=...).",
        ),
        click.option(
            "--routing", default="min", show_default=True, help="min | inr | ugal | ugal-th."
        ),
        click.option(
            "--level", default="packet", show_default=True, help="packet | flow (max-min fair)."
        ),
        click.option(
            "--mapping",
            default="linear",
            show_default=True,
            help="Rank -> endpoint: linear | round_robin | random[:seed=K] | file:PATH (one "
            "endpoint per line).",
        ),
        click.option(
            "--ranks-per-endpoint",
            type=int,
            default=1,
            show_default=True,
            help="Ranks per endpoint (cores per node); their messages go through memory.",
        ),
        click.option(
            "--nic",
            default="fifo",
            show_default=True,
            help="fifo (a NIC sends whole messages in start order) | interleave (it shares its "
            "link among them: one packet of each in turn).",
        ),
        click.option("--packet-size", default="256", show_default=True, help="Packet size."),
        click.option("--buffer", default="100KiB", show_default=True, help="Buffer per port."),
        click.option("--switch-latency", default="100ns", show_default=True),
        click.option(
            "--top-links", type=int, default=10, show_default=True, help="Busiest links shown."
        ),
        click.option(
            "--messages-csv",
            type=click.Path(dir_okay=False),
            default=None,
            help="Write one row per network message (queued vs transfer time) to a CSV file.",
        ),
        click.option(
            "--plot-links",
            type=click.Path(dir_okay=False),
            default=None,
            help="Draw the busiest links' utilisation over time (PNG).",
        ),
        click.option(
            "--strict", is_flag=True, help="Refuse to simulate a schedule that does not verify."
        ),
        click.option("--force", is_flag=True, help="Overwrite existing --trace/--plot files."),
        click.option(
            "--calls",
            type=int,
            default=1,
            show_default=True,
            help="Run the schedule this many times back to back, each rank starting its next "
            "call when its own ops of the last are done (e.g. the seed's 2,000 halo calls).",
        ),
        click.option(
            "--threads",
            type=int,
            default=None,
            help="Threads to simulate on. On a model: default every core for 2^19 ops or more, "
            "else 1; the result is the same for any number. With --network: the packet "
            "engine's (default 1).",
        ),
    ],
    _simulate,
)

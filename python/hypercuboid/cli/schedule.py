"""``hypercuboid schedule``: generate, show, verify and export schedules."""

from __future__ import annotations

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import echo_json, refuse_overwrite, schedule_verb
from hypercuboid.schedule import FORMATS


@click.group()
def schedule() -> None:
    """Generate, show, verify and export per-rank communication schedules."""


def _out_options() -> list:
    return [
        click.option(
            "--output",
            "-o",
            type=cliopts.OutFile(),
            default=None,
            help="Write to this file instead of stdout.",
        ),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(list(FORMATS), case_sensitive=False),
            default="text",
            show_default=True,
            help="text: lossless (GOAL plus buffer slices); goal: LogGOPSim txt2bin input; c: a "
            "self-contained C file with an MPI routine that runs the schedule (docs/native.md).",
        ),
        click.option(
            "--name",
            default=None,
            help="C export: the routine's name, a C identifier (default: hc_allreduce for an "
            "allreduce, hc_alltoall for an alltoall, hc_schedule for a sizes-only schedule).",
        ),
        cliopts.reduce_ns_option("GOAL export: calc cost of reductions, in ns per reduced byte."),
        cliopts.force_option("an existing output file"),
    ]


def _write(sched, output, fmt, name, reduce_ns_per_byte, force):
    if name is not None and fmt != "c":
        raise click.ClickException(f"--name {name}: it names the C routine of --format c only")
    if output is None:
        if fmt == "text":
            text = sched.to_text()
        elif fmt == "goal":
            text = sched.to_goal(reduce_ns_per_byte=reduce_ns_per_byte)
        else:
            text = sched.to_c(name)
        click.echo(text, nl=False)
        return
    path = refuse_overwrite(output, force)
    sched.save(path, format=fmt, reduce_ns_per_byte=reduce_ns_per_byte, name=name, force=force)
    click.echo(f"wrote {path} ({sched.nranks} ranks, {sched.total_ops} ops, {fmt})", err=True)


def _generate(sched, output, fmt, name, reduce_ns_per_byte, force):
    _write(sched, output, fmt, name, reduce_ns_per_byte, force)


schedule.add_command(
    schedule_verb(
        "generate",
        "Generate a schedule and write it (lossless text by default, GOAL, or a C routine).",
        _out_options(),
        _generate,
    )
)
schedule.add_command(
    schedule_verb(
        "export",
        "Export a schedule as GOAL (for LogGOPSim), as lossless text, or as a C routine.",
        _out_options(),
        _generate,
    )
)


def _show(sched, ranks, as_json, force):
    ranks = list(ranks) or None
    for r in ranks or []:
        if not 0 <= r < sched.nranks:
            raise click.ClickException(f"--rank {r}: the schedule has ranks 0..{sched.nranks - 1}")
    cliopts.outputs_free(force, as_json)
    if as_json:
        shown = ranks if ranks is not None else list(range(min(sched.nranks, 16)))
        echo_json(
            {
                "nranks": sched.nranks,
                "total_ops": sched.total_ops,
                "meta": sched.meta,
                "programs": {str(r): sched._core.program_text(r) for r in shown},
            },
            as_json,
        )
        return
    m = sched.meta
    op = f", op {m['op']}" if m["op"] is not None else ""
    if m.get("block") is not None:
        op += f", {m['block']} per rank pair"
    click.echo(
        f"{m['name'] or 'schedule'}: {sched.nranks} ranks, {sched.total_ops} ops, "
        f"collective {m['collective']}, count {m['count']} x {m['dtype']}{op}"
    )
    click.echo(sched.show(ranks))
    if ranks is None and sched.nranks > 16:
        click.echo(f"... ({sched.nranks - 16} more ranks; choose with --rank R)")


schedule.add_command(
    schedule_verb(
        "show",
        "Print the per-rank programs of a schedule.",
        [
            click.option("--rank", "ranks", type=int, multiple=True, help="Rank to show."),
            cliopts.renamed("-r", target="ranks", new="--rank", type=int, multiple=True),
            cliopts.json_output("Print JSON"),
        ],
        _show,
    )
)


def _verify(
    sched, eager_limit, no_semantics, as_json, max_problems, threads, force, quiet, progress
):
    cliopts.outputs_free(force, as_json)
    say = cliopts.Progress(quiet, progress)
    say(f"verifying {sched.meta['name']} ({sched.nranks} ranks, {sched.total_ops} ops)")
    given = {
        k: v
        for k, v in (
            ("eager_limit", eager_limit),
            ("max_problems", max_problems),
            ("threads", threads),
        )
        if v is not None
    }
    report = sched.verify(semantics=not no_semantics, **given)
    say("verified: " + ("sound" if report.sound else f"{len(report.problems)} problem(s)"))
    if as_json:
        d = report.to_dict()
        # the notes of the text report (its lines after the schedule's header), as printed
        d["notes"] = [line for line in report.text.splitlines()[1:] if line.strip()]
        echo_json(d, as_json)
    if as_json != "-":
        click.echo(report.text)
    if not report.sound:
        raise SystemExit(1)


schedule.add_command(
    schedule_verb(
        "verify",
        "Prove a schedule sound: every message matched, no deadlock, no buffer race, and (for a "
        "collective) the right result: for an allreduce with the same reduction order on every "
        "rank, for an alltoall every block where it belongs. Exits 0 when sound, 1 when not.",
        [
            click.option(
                "--eager-limit",
                type=cliopts.Range(0),
                default=None,
                help="Messages up to this many bytes are buffered (eager); larger ones are "
                "synchronous. 0 checks that the schedule is safe without any buffering "
                f"[default: {_core.DEFAULTS['verify']['eager_limit']}].",
            ),
            click.option(
                "--no-semantics", is_flag=True, help="Skip the symbolic check of the result."
            ),
            cliopts.json_option("Print JSON (with the notes of the text report)"),
            click.option(
                "--max-problems",
                type=cliopts.Range(0),
                default=None,
                help="Report at most this many problems "
                f"[default: {_core.DEFAULTS['verify']['max_problems']}].",
            ),
            click.option(
                "--threads",
                type=cliopts.Range(
                    0, cliopts.MAX_THREADS, note=" (0: every core for 2^20 ops or more, else 1)"
                ),
                default=None,
                help="Threads for matching and the deadlock check (0..1024; 0, the default: "
                "every core for a schedule of 2^20 ops or more, else 1). The report does not "
                "depend on it.",
            ),
            cliopts.force_option("an existing --json file"),
            cliopts.quiet_option(),
            cliopts.progress_option(),
        ],
        _verify,
    )
)


@schedule.command("list")
@cliopts.json_output("Print JSON")
def list_algorithms(as_json: str | None, force: bool) -> None:
    """List the collectives and their algorithms: how to name each (with its parameters), what
    its schedules guarantee, and its closed-form cost where one is exact."""
    from dataclasses import asdict

    from hypercuboid.schedules import collectives

    cs = collectives()
    if as_json:
        cliopts.outputs_free(force, as_json)
        echo_json([asdict(c) for c in cs], as_json)
        return
    for c in cs:
        click.echo(f"{c.name}: {c.summary}")
        for a in c.algorithms:
            click.echo(f"  {a.usage}")
            click.echo(f"      {a.summary}")
            for k, help_ in a.keys.items():
                click.echo(f"      {k}=  {help_}")
            if a.aliases:
                click.echo(f"      also: {', '.join(a.aliases)}")
            if a.needs_topology:
                click.echo("      needs a topology")
            g = "".join(f"; {p} ({w})" for p, w in a.guarantees.items())
            click.echo(f"      guarantees: sound{g}")
            if a.cost:
                click.echo(f"      closed form: {a.cost}")
            click.echo(f"      e.g. {a.example}")

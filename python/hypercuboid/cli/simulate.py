"""``hypercuboid simulate``: run a schedule on a cost model."""

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
):
    if model is not None and model_file is not None:
        raise click.ClickException("give --model or --model-file, not both")
    if model_file is not None:
        from hypercuboid.modelfile import load

        model = load(model_file)
    if model is None:
        raise click.ClickException("missing --model (or --model-file); " + MODEL_HELP)
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
    res = sched.simulate(model, trace=plot is not None, noise=noise, seed=seed, chrome_trace=chrome)
    if plot is not None:
        from hypercuboid.plot import timeline

        ranks = _parse_ranks(plot_ranks, sched.nranks) if plot_ranks else None
        timeline(res.trace, plot, title=f"{sched.meta['name']} — {res.model}", ranks=ranks)
    if as_json:
        d = res.to_dict(per_rank=not no_per_rank)
        d["nranks"] = sched.nranks
        d["completion_time_ns"] = res.completion_time_ns
        echo_json(d)
        return
    click.echo(f"schedule        {sched.meta['name']} ({sched.nranks} ranks, {res.ops} ops)")
    click.echo(f"model           {res.model}")
    click.echo(f"completion time {res.completion_time_ns:,.3f} ns")
    click.echo(f"finish skew     {res.skew_ns:,.3f} ns")
    click.echo(f"messages        {res.messages}")
    if not no_per_rank and sched.nranks <= 16:
        finish = ", ".join(f"{t:,.1f}" for t in res.rank_finish_ns)
        click.echo(f"rank finish ns  {finish}")
    if trace is not None:
        click.echo(f"trace           {trace} (Chrome / Perfetto JSON)")
    if plot is not None:
        click.echo(f"timeline        {plot}")


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
    "Simulate a schedule on a cost model: completion time, per-rank finish times, and "
    "optionally a Chrome trace and a timeline PNG.",
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
        click.option("--seed", type=int, default=0, show_default=True, help="Noise seed."),
        click.option(
            "--strict", is_flag=True, help="Refuse to simulate a schedule that does not verify."
        ),
        click.option("--force", is_flag=True, help="Overwrite existing --trace/--plot files."),
    ],
    _simulate,
)

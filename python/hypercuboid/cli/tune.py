"""``hypercuboid tune``: choose the best schedule for a machine model."""

from __future__ import annotations

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import count_option, dtype_option, echo_json, ranks_option


@click.group()
def tune() -> None:
    """Choose the best schedule for a machine model."""


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e3:,.3f}"


def _elapsed(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


@tune.command("allreduce")
@ranks_option(required=True, help="Number of ranks N.")
@click.option(
    "--alpha-p",
    help="α_p: latency that overlaps with later sends (e.g. 1.34us; a bare number is ns).",
)
@click.option("--alpha-r", help="α_r: per-message cost serialised at the sender (e.g. 0.34us).")
@click.option("--beta", default="0", show_default=True, help="β: time per byte sent.")
@click.option("--gamma", default="0", show_default=True, help="γ: time per byte reduced.")
@click.option("--delta", default="0", show_default=True, help="δ: time per reduction.")
@click.option(
    "--model-file",
    type=cliopts.InputFile(),
    help="Read the model from a model file (JSON with a 'model' spec, postal or pipelined) "
    "instead of --alpha-p/--alpha-r.",
)
@count_option
@dtype_option
@click.option(
    "--top",
    type=cliopts.Range(1),
    default=_core.DEFAULTS["tune"]["top"],
    show_default=True,
    help="Rows to print.",
)
@click.option(
    "--simulate",
    is_flag=True,
    help="Also simulate the --pool best schedules on the model and rank them by simulated time.",
)
@click.option(
    "--pool",
    type=cliopts.Range(0),
    default=_core.DEFAULTS["tune"]["pool"],
    show_default=True,
    help="How many schedules --simulate runs (the best by the closed form).",
)
@click.option(
    "--max-schedules",
    type=cliopts.Range(0),
    default=_core.DEFAULTS["tune"]["max_schedules"],
    show_default=True,
    help="Enumerate at most this many schedules (0: no cap); beyond, only the dynamic program "
    "runs.",
)
@click.option("--no-split", is_flag=True, help="Leave out collapse/expand schedules.")
@click.option("--no-merged", is_flag=True, help="Leave out merged schedules.")
@cliopts.json_option()
@cliopts.force_option("an existing --json file")
@cliopts.quiet_option()
@cliopts.progress_option()
def allreduce(
    nranks,
    alpha_p,
    alpha_r,
    beta,
    gamma,
    delta,
    model_file,
    count,
    dtype,
    top,
    simulate,
    pool,
    max_schedules,
    no_split,
    no_merged,
    as_json,
    force,
    quiet,
    progress,
):
    """Rank the recursive multiplying schedules of N ranks (recursive_multiplying:SCHEDULE)
    by the pipelined postal model's closed form Σ(α_p + b_i α_r + ...) and, with --simulate, by
    simulation. Large N (more schedules than --max-schedules) gets the model-optimal factored
    schedule from a dynamic program over the divisors of N."""
    import hypercuboid.tune as t

    cliopts.outputs_free(force, as_json)
    if model_file is not None:
        if alpha_p is not None or alpha_r is not None:
            raise click.ClickException("give --alpha-p/--alpha-r or --model-file, not both")
        model = t.load_model_file(model_file)
    else:
        if alpha_p is None or alpha_r is None:
            raise click.ClickException(
                "give --alpha-p and --alpha-r (e.g. --alpha-p 1.34us --alpha-r 0.34us, the "
                "paper's Table 1 minimum), or --model-file"
            )
        model = t.pipelined_model(alpha_p, alpha_r, beta, gamma, delta)
    say = cliopts.Progress(quiet, progress)
    say(f"ranking the schedules of {nranks:,} ranks" + (" (and simulating)" if simulate else ""))
    res = t.tune_allreduce(
        nranks,
        model,
        count=count,
        dtype=dtype,
        top=top,
        simulate=simulate,
        pool=pool,
        max_schedules=max_schedules,
        split=not no_split,
        merged=not no_merged,
    )
    say(f"done: {res.method}")
    if as_json:
        echo_json(res.to_dict(), as_json)
    if as_json == "-":
        return
    nbytes = count * t.DTYPE_SIZES.get(dtype, 0)
    click.echo(f"allreduce on {nranks:,} ranks, {count} x {dtype} ({nbytes} bytes)")
    click.echo(f"model      {res.model}")
    if res.b_opt is not None:
        click.echo(
            f"b_opt      {res.b_opt:.3f} messages per stage (eq. 5; stages of about "
            f"{res.b_opt + 1:.1f} ranks)"
        )
    if res.method == "exhaustive":
        c: dict = res.counts  # type: ignore[assignment]  # set by the exhaustive method
        click.echo(
            f"search     exhaustive: {c['total']:,} schedules ({c['factored']:,} factored, "
            f"{c['split']:,} split, {c['merged']:,} merged) ranked by the closed form in "
            f"{_elapsed(res.elapsed_s)}"
        )
    else:
        click.echo(
            f"search     dynamic program only ({res.reason}): the model-optimal factored "
            f"schedule over the {res.divisors} divisors of {nranks:,}, in "
            f"{_elapsed(res.elapsed_s)}"
        )
    if simulate:
        click.echo(
            f"simulated  {res.simulated} schedules (the best by the closed form), ranked by "
            "simulated time"
        )
    rows = [
        (str(r.rank), r.schedule, str(r.stages), _us(r.predicted_ns), _us(r.simulated_ns))
        for r in res.rows
    ]
    head = ("rank", "schedule", "stages", "predicted (us)", "simulated (us)")
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(5)]
    fmt = (
        f"{{:>{widths[0]}}}  {{:<{widths[1]}}}  {{:>{widths[2]}}}  {{:>{widths[3]}}}  "
        f"{{:>{widths[4]}}}"
    )
    click.echo(fmt.format(*head))
    for r in rows:
        click.echo(fmt.format(*r))

"""``hypercuboid tune``: choose the best schedule for a machine model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

import click

from hypercuboid import _core
from hypercuboid.cli import options as cliopts
from hypercuboid.cli.common import count_option, dtype_option, echo_json, ranks_option
from hypercuboid.cli.simulate import model_option


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


def _tune_option(flag: str, least: int, help: str) -> Callable:
    """An int option of at least ``least`` whose default is the core's tune default of the
    same name."""
    key = flag.removeprefix("--").replace("-", "_")
    return cliopts.int_option(flag, least=least, default=_core.DEFAULTS["tune"][key], help=help)


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
@_tune_option("--top", 1, "Rows to print.")
@click.option(
    "--simulate",
    is_flag=True,
    help="Also simulate the --pool best schedules on the model and rank them by simulated time.",
)
@_tune_option("--pool", 0, "How many schedules --simulate runs (the best by the closed form).")
@_tune_option(
    "--max-schedules",
    0,
    "Enumerate at most this many schedules (0: no cap); beyond, only the dynamic program runs.",
)
@click.option(
    "--algorithm",
    "-a",
    "algorithms",
    default=None,
    help="Also rank these allreduce algorithms by simulated time, as 'hypercuboid predict' "
    "does: a comma list, or 'all' (every registered one, recursive_multiplying:auto "
    "among them).",
)
@click.option("--no-split", is_flag=True, help="Leave out collapse/expand schedules.")
@click.option("--no-merged", is_flag=True, help="Leave out merged schedules.")
@cliopts.json_output()
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
    algorithms,
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
    schedule from a dynamic program over the divisors of N. Then every registered allreduce
    algorithm, ranked by simulated time as 'hypercuboid predict' ranks it."""
    import hypercuboid.tune as t

    cliopts.outputs_free(force, as_json)
    if model_file is not None:
        if alpha_p is not None or alpha_r is not None:
            raise click.ClickException("give --alpha-p/--alpha-r or --model-file, not both")
        from hypercuboid.cli.predict import echo_mismatches
        from hypercuboid.predict import read_model_file

        mf = read_model_file(model_file)
        model = mf.model
        if model.split(":")[0] not in ("postal", "pipelined"):
            # the closed form is the pipelined postal model's: a calibrated file carries one
            if mf.tuning is None:
                raise click.ClickException(
                    f"{model_file}: its model is {model.split(':')[0]} and it has no "
                    "models.pipelined; tune ranks by the pipelined postal model's closed form "
                    "(give a postal or pipelined model file, or one from calibrate)"
                )
            model = mf.tuning
        echo_mismatches(mf, [nranks])
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
        algorithms=_chosen(algorithms),
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
        click.echo(_b_opt_line(res.b_opt, res.b_opt_integer))
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
    _print_algorithms(res.algorithms)


def _chosen(text: str | None) -> bool | list[str]:
    """``--algorithm``: False (none), True (``all``) or the list."""
    if text is None:
        return False
    if text.strip() == "all":
        return True
    from hypercuboid.cli.predict import grid_algorithms

    return grid_algorithms("allreduce", text) or []


def _b_opt_line(b: float, whole: int | None) -> str:
    """Eq. 5's b_opt; below 1 (α_p < α_r, and 0 for the postal model, where α_p = 0) no
    latency overlaps enough to pay for a second message per stage: the whole number is 1."""
    if b < 1:
        return (
            f"b_opt      {b:.3f} (eq. 5): below 1 message per stage, as for the postal model "
            f"(alpha_p = 0, nothing overlaps); best whole number {whole or 1} (pairwise stages)"
        )
    return f"b_opt      {b:.3f} messages per stage (eq. 5; stages of about {b + 1:.1f} ranks)"


def _print_algorithms(algs) -> None:
    """Every registered algorithm ranked by simulated time (what 'predict' marks best)."""
    if not algs:
        return
    rows = [
        (
            str(a.rank),
            a.algorithm,
            a.schedule or "-",
            _us(a.simulated_ns) if a.error is None else f"- ({a.error})",
        )
        for a in algs
    ]
    head = ("rank", "algorithm", "runs", "simulated (us)")
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(3)]
    fmt = f"{{:>{widths[0]}}}  {{:<{widths[1]}}}  {{:<{widths[2]}}}  {{}}"
    click.echo("every algorithm, by simulated time (as 'hypercuboid predict' ranks them):")
    click.echo(fmt.format(*head))
    for r in rows:
        click.echo(fmt.format(*r))


@tune.command("alltoall")
@ranks_option(required=True, help="Number of ranks N.")
@model_option
@click.option(
    "--model-file",
    type=cliopts.InputFile(),
    help="Read the model from a model file (JSON with a 'model' spec).",
)
@click.option(
    "--count",
    "-c",
    type=cliopts.COUNT,
    default=_core.DEFAULTS["alltoall"]["count"],
    show_default=True,
    help="Elements each rank sends to each rank.",
)
@click.option("--dtype", default="uint8", show_default=True, help="Element type.")
@click.option(
    "--algorithm",
    "-a",
    "algorithms",
    default=None,
    help="A comma list of alltoall algorithms [default: every registered one that runs from "
    "its name].",
)
@cliopts.json_output()
def alltoall(nranks, model, model_file, count, dtype, algorithms, as_json, force):
    """Rank every registered alltoall algorithm by its simulated time under the model (what
    'hypercuboid predict --collective alltoall' marks best)."""
    import hypercuboid.tune as t
    from hypercuboid.cli.predict import grid_model

    cliopts.outputs_free(force, as_json)
    spec, _ = grid_model(model, model_file, [nranks])
    nbytes = t._bytes(count, dtype)
    if nbytes == 0:
        raise click.ClickException(f"--count {count}: an alltoall of 0 bytes has nothing to rank")
    from hypercuboid.cli.predict import grid_algorithms

    chosen = grid_algorithms("alltoall", algorithms)
    algs = t.rank_algorithms("alltoall", nranks, nbytes, spec, dtype, chosen)
    if as_json:
        echo_json(
            {
                "nranks": nranks,
                "model": spec,
                "count": count,
                "dtype": dtype,
                "algorithms": [asdict(a) for a in algs],
            },
            as_json,
        )
    if as_json == "-":
        return
    click.echo(f"alltoall on {nranks:,} ranks, {count} x {dtype} per pair ({nbytes} bytes)")
    click.echo(f"model      {spec}")
    _print_algorithms(algs)

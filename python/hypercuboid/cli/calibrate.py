"""``hypercuboid calibrate``: measure the machine under mpiexec and write a model file.

Run with ``mpiexec -n N hypercuboid calibrate -o model.json`` (N >= 2); rank 0 prints, shows
progress and writes the files. What is measured and how it is fitted: :mod:`hypercuboid.mpi.
calibrate` and docs/calibrate.md.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

import click

from hypercuboid.cli import options as cliopts
from hypercuboid.mpi.calibrate import DEFAULT_SIZES, MIN_SIZES, R2_THRESHOLD

# the module (the package's attribute `bench` is the click group of the same name)
_bench = importlib.import_module("hypercuboid.cli.bench")


def _reduce_pairs(dtype: str | None, op: str | None) -> list[tuple[str, str]]:
    """The (dtype, op) pairs of ``--dtype`` and ``--op`` (default: all the runner has)."""
    from hypercuboid import _core

    def chosen(text: str | None, option: str, accepted: list[str]) -> list[str]:
        if text is None:
            return accepted
        items = cliopts.split_list(text, option)
        for x in items:
            if x not in accepted:
                raise click.ClickException(
                    f"{option} '{cliopts.shown(x)}': not one the native runner reduces; accepted: "
                    + ", ".join(accepted)
                )
        return items

    dts = chosen(dtype, "--dtype", list(_core.DTYPES))
    ops = chosen(op, "--op", list(_core.REDUCE_OPS))
    return [(d, o) for d in dts for o in ops]


def _progress(quiet: bool, progress: bool | None, comm: Any) -> cliopts.Progress | None:
    """Progress lines with the time since the start, on rank 0 only."""
    shown = cliopts.Progress(quiet, progress)
    return shown if shown.on and comm.Get_rank() == 0 else None


def _summary(cal: Any, measured: dict, seconds: float, output: str) -> list[str]:
    from hypercuboid.modelfile import fmt_time

    nn = measured["nnodes"]
    lines = [
        f"# calibrate: {cal.nranks} ranks on {nn} node{'s' if nn > 1 else ''} "
        f"({cal.ranks_per_node} per node); {cal.library}; {seconds:.1f} s"
    ]
    for kind, lk in cal.fits["links"].items():
        po, pi, lg = lk["postal"], lk["pipelined"], lk["loggops"]
        lines += [
            f"link {kind} (ranks 0 and {lk['peer']}):",
            f"  postal     alpha = {po['alpha_us']:.4g} us, beta = "
            f"{po['beta_ns_per_byte']:.4g} ns/B  (R^2 {po['r2']:.3f})",
            f"  pipelined  alpha_p = {pi['alpha_p_us']:.4g} us, alpha_r = "
            f"{pi['alpha_r_us']:.4g} us  (R^2 {pi['r2']:.3f})",
            f"  loggops    L = {lg['L_us']:.4g} us, o = {lg['o_us']:.4g} us, g = "
            f"{lg['g_us']:.4g} us, G = {lg['G_ns_per_byte']:.4g} ns/B, S = {lg['S']}, R = "
            f"{lg['R_us']:.4g} us"
            + (f", S2 = {lg['S2']}, R2 = {lg['R2_us']:.4g} us" if lg["R2_us"] > 0 else "")
            + f"  (R^2 {lg['r2']:.3f} on the {lg['fitted_to']})",
        ]
        segs = "; ".join(
            f"{s['from_bytes']:.0f}..{s['to_bytes']:.0f} B: {s['alpha_us']:.4g} us + "
            f"{s['beta_ns_per_byte']:.4g} ns/B"
            for s in lk["piecewise"]["segments"]
        )
        lines.append(f"  segments   {segs}")
        ex = lk["exchange"]
        if ex is not None:
            lines.append(
                f"  exchange   per call C = {ex['call_us']:.4g} us (R^2 {ex['r2']:.3f}); two "
                f"flows at once: G2 = {lg['G2_ns_per_byte']:.4g} ns/B each"
            )
    cont = cal.fits["contention"]
    if cont is not None:
        pts = ", ".join(
            f"{r['flows_per_node']}: {r['per_flow_GBps']:.3g}" for r in cont["measured"]
        )
        bound = "" if cont["saturated"] else " (a lower bound: no flow count was limited)"
        lines.append(
            f"contention per-flow GB/s by flows per node {pts}; "
            f"BW = {cont['bandwidth_GBps']:.4g} GB/s{bound} (R^2 {cont['r2']:.3f})"
        )
        if cont.get("node_GBps", cont["bandwidth_GBps"]) != cont["bandwidth_GBps"]:
            lines.append(f"  node level {cont['node_GBps']:.4g} GB/s: 2/G2 of the exchanges")
    key = cal.fits["reduction_model"]
    red = cal.fits["reduction"].get(key)
    if red is not None:
        lines.append(
            f"reductions {key}: gamma = {red['gamma_ns_per_byte']:.4g} ns/B, delta = "
            f"{red['delta_ns']:.4g} ns (R^2 {red['r2']:.3f}; {len(cal.fits['reduction'])} "
            "dtype/op pairs in the file)"
        )
    cp = cal.fits.get("copy")
    if cp is not None:
        lines.append(f"copies     {cp['copy_ns_per_byte']:.4g} ns/B (R^2 {cp['r2']:.3f})")
    lines.append(f"model file {output}")
    if cal.call_us is not None:
        lines.append(f"  call     {fmt_time(cal.call_us * 1e-6)}")
    lines.append(f"  model    {cal.model}")
    if cal.node is not None:
        lines.append(f"  node     {cal.node}")
    return lines


def measure_and_write(
    comm: Any,
    output: str,
    force: bool,
    *,
    sizes: list[int] | None = None,
    iterations: int | None = None,
    warmup: int | None = None,
    pairs: list[tuple[str, str]] | None = None,
    say: Callable[[str], None] | None = None,
) -> tuple[Any, dict, dict, float] | None:
    """calibrate's work, in this job: measure on every rank, then on rank 0 fit and write the
    model file ``output``. Returns (the calibration, the file's document, the measurements,
    the seconds they took) on rank 0, None elsewhere. Collective; ``validate --calibrate``
    runs it in its own job so that prediction and measurement see the same placement."""
    from hypercuboid import modelfile
    from hypercuboid.mpi import calibrate as cal_mod
    from hypercuboid.mpi import native

    _bench._agree(comm, native.load)
    t0 = time.monotonic()
    measured = _bench._run_collective(
        comm,
        lambda: cal_mod.measure(
            comm,
            sizes if sizes is not None else _bench._sizes(DEFAULT_SIZES),
            iterations=iterations,
            warmup=warmup,
            reduce_pairs=pairs if pairs is not None else _reduce_pairs(None, None),
            progress=say,
        ),
        verb="calibrate",
    )
    seconds = time.monotonic() - t0
    if comm.Get_rank() != 0:
        return None
    library = _bench._library()
    cal = cal_mod.fit(measured, library)
    doc = cal.document(modelfile.machine_info(library, comm.Get_size()))
    doc["fits"]["seconds"] = seconds
    cal_mod.write_model_file(output, doc, force=force)
    return cal, doc, measured, seconds


@click.command("calibrate", cls=_bench.RankZeroCommand)
@click.option(
    "--output",
    "-o",
    type=cliopts.OutFile(),
    required=True,
    help="The model file to write (for simulate --model-file, tune).",
)
@click.option(
    "--sizes",
    default=DEFAULT_SIZES,
    show_default=True,
    help=f"Ping-pong sizes: MIN:MAX (powers of two) or a list (at least {MIN_SIZES}); the "
    "largest is also the contention test's message.",
)
@_bench._iterations
@_bench._warmup
@click.option(
    "--dtype",
    default=None,
    help="Reductions timed: a comma list of element types [every type the runner reduces].",
)
@click.option(
    "--op",
    default=None,
    help="Reductions timed: a comma list of operators [sum, prod, max, min].",
)
@cliopts.json_option("The model file's JSON")
@cliopts.plot_option("Draw fit against measurement (one-way time by size; contention)")
@cliopts.force_option()
@cliopts.quiet_option("No progress lines on stderr.")
@cliopts.progress_option()
@_bench.timeout_option
def calibrate(
    output: str,
    sizes: str,
    iterations: int | None,
    warmup: int | None,
    dtype: str | None,
    op: str | None,
    as_json: str | None,
    plot: str | None,
    force: bool,
    quiet: bool,
    progress: bool | None,
    timeout: float | None,
) -> None:
    """Measure this machine at the job's scale and write a model file (run under mpiexec,
    2 or more ranks).

    Ping-pong by size (piecewise segments and the eager/rendezvous switch; within and between
    nodes where the job spans several), issue-rate trains (o, g; alpha_p, alpha_r), chains of
    1, 2 and 4 one-way messages and of 1, 2 and 4 exchanges by size (the runner's cost per
    call, C; LogGOPS's L, G, the switches S, R and S2, R2, and X, what an exchange costs
    beyond a lone message; the node's bandwidth for two flows), k flows at once (the node's
    shared bandwidth) and the native runner's reductions (gamma, delta per dtype and op) and
    copies. The file's model is the fitted
    LogGOPS, with the postal and pipelined fits, the runner's per-call cost, the node spec,
    every fit's R^2 and residuals, and the raw medians. A fit with R^2 below
    """
    from hypercuboid.mpi import calibrate as cal_mod

    size_list = _bench._sizes(sizes)
    try:
        cal_mod.check_sizes(size_list, sizes)
    except cal_mod.CalibrateError as e:
        raise click.ClickException(str(e)) from None
    pairs = _reduce_pairs(dtype, op)
    comm = _bench._world()
    _bench._start(comm, timeout, "hypercuboid calibrate")
    if comm.Get_size() < 2:
        raise click.ClickException(
            "calibrate needs at least 2 ranks: mpiexec -n 2 (or more) hypercuboid calibrate ..."
        )
    _bench._agree(comm, _bench._outputs_free(force, output, as_json, plot))
    done = measure_and_write(
        comm,
        output,
        force,
        sizes=size_list,
        iterations=iterations,
        warmup=warmup,
        pairs=pairs,
        say=_progress(quiet, progress, comm),
    )
    if done is None:
        return
    cal, doc, measured, seconds = done
    for w in cal.warnings:
        click.echo(f"warning: {w}", err=True)
    if _bench._table(as_json, None):
        click.echo("\n".join(_summary(cal, measured, seconds, output)))
    if as_json is not None:
        import json

        cliopts.write_out(as_json, json.dumps(doc, indent=2) + "\n")
    if plot:
        draw(cal, plot)


calibrate.help = (calibrate.help or "").rstrip() + f" {R2_THRESHOLD} is named in a warning."


# -- the figure ------------------------------------------------------------------------------


def draw(cal: Any, path: str, title: str | None = None) -> None:
    """Fit against measurement: one-way time against size (measured medians, the piecewise
    segments, LogGOPS and postal; break points dashed) and, where measured, per-flow bandwidth
    against flows per node with ``min(1/G, BW/k)``."""
    import numpy as np

    from hypercuboid.plot import _pyplot, wrap_title

    plt = _pyplot()
    cont = cal.fits["contention"]
    ncols = 2 if cont is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(6.5 * ncols, 4.5), dpi=120, squeeze=False)
    ax = axes[0][0]
    for kind, lk in cal.fits["links"].items():
        pp = lk["measured"]["pingpong"]
        ex = lk["exchange"]
        half_call = ex["call_us"] / 2 if ex is not None else 0.0
        x = np.array([r["bytes"] for r in pp], dtype=float)
        y = [r["median_us"] - half_call for r in pp]
        pts = ax.plot(x, y, "o", ms=4, label=f"ping-pong, half ({kind})")[0]
        color = pts.get_color()
        steps = (
            (lk["exchange"], "s", "exchange step"),
            (lk.get("oneway"), "^", "one-way step"),
        )
        for st, marker, what in steps:
            if st is not None:
                ax.plot(
                    st["bytes"],
                    st["step_us"],
                    marker,
                    ms=4,
                    mfc="none",
                    color=color,
                    label=f"{what} ({kind}), C = {st['call_us']:.3g} us",
                )
        for s in lk["piecewise"]["segments"]:
            xs = np.geomspace(max(s["from_bytes"], 1.0), max(s["to_bytes"], 1.0), 20)
            ax.plot(xs, s["alpha_us"] + s["beta_ns_per_byte"] * 1e-3 * xs, "-", color=color)
        for part in (False, True):  # one step of each kind
            one = [r for r in lk["loggops"]["rows"] if r["exchange"] == part]
            ax.plot([r["bytes"] for r in one], [r["predicted_us"] for r in one], ":", color=color)
        ax.plot([], [], ":", color=color, label=f"LogGOPS ({kind})")
        po = lk["postal"]
        ax.plot(
            x,
            po["alpha_us"] + po["beta_ns_per_byte"] * 1e-3 * x,
            "--",
            color=color,
            alpha=0.5,
            label=f"postal ({kind})",
        )
        for b in lk["piecewise"]["breaks"]:
            ax.axvline(b, color=color, ls="--", lw=0.8, alpha=0.6)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes); dashed verticals: break points")
    ax.set_ylabel("time (µs, median; the runner's per-call C taken out)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    if cont is not None:
        ax2 = axes[0][1]
        rows = cont["measured"]
        k = [r["flows_per_node"] for r in rows]
        ax2.plot(k, [r["per_flow_GBps"] for r in rows], "o", label="measured")
        ks = np.linspace(1, max(k), 50)
        ax2.plot(
            ks,
            np.minimum(cont["single_GBps"], cont["bandwidth_GBps"] / ks),
            "-",
            label=f"min(1/G, BW/k), BW = {cont['bandwidth_GBps']:.3g} GB/s"
            + ("" if cont["saturated"] else " (lower bound)"),
        )
        ax2.set_xlabel("flows per node")
        ax2.set_ylabel("per-flow bandwidth (GB/s)")
        ax2.set_ylim(bottom=0)
        ax2.grid(True, alpha=0.3)
        ax2.legend(fontsize=8)
    fig.suptitle(wrap_title(title or f"calibrate: {cal.nranks} ranks; {cal.model}"), fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

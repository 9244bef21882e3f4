"""``hypercuboid lbm``: the D3Q19 lattice-Boltzmann proxy application under mpiexec.

``mpiexec -n P hypercuboid lbm run --lattice 64x64x64 --steps 100 --halo blocking [--overlap]``
runs without mpiexec too (one rank). As for ``bench``, every check that could stop one rank is
decided on rank 0 and shared, and only rank 0 prints (its errors once).
"""

from __future__ import annotations

from typing import Any

import click

from hypercuboid.cli import options as cliopts
from hypercuboid.cli.bench import (
    BenchGroup,
    _agree,
    _run_collective,
    _start,
    _world,
    timeout_option,
)
from hypercuboid.cli.common import echo_json


@click.group(cls=BenchGroup)
def lbm() -> None:
    """The D3Q19 lattice-Boltzmann proxy application (run under mpiexec).

    \b
    mpiexec -n 4 hypercuboid lbm run --lattice 64x64x64 --steps 100 --halo nonblocking --overlap
    hypercuboid lbm run --lattice 32x32x32 --steps 10 --init uniform:0.05,0,0 --json
    """


@lbm.command("run")
@click.option("--lattice", required=True, help="Global lattice XxYxZ (64x64x64).")
@click.option(
    "--decomp",
    default=None,
    help="Ranks along x, y, z (2x2x2; their product is the number of ranks) "
    "[MPI_Dims_create's choice].",
)
@click.option("--steps", type=int, default=100, show_default=True, help="Time steps.")
@click.option(
    "--halo",
    "halo_variant",
    default="blocking",
    show_default=True,
    help="Halo exchange: blocking (6 messages), nonblocking (26), "
    "nonblocking:unpack=on_arrival, reduced (only the distributions a step reads).",
)
@click.option(
    "--overlap",
    is_flag=True,
    help="Start the exchange, update the interior, end the exchange, update the boundary shell.",
)
@click.option(
    "--tau",
    type=float,
    default=0.8,
    show_default=True,
    help="BGK relaxation time (> 0.5); viscosity (tau - 0.5)/3.",
)
@click.option(
    "--init",
    default="taylor-green",
    show_default=True,
    help="Initial condition: taylor-green[:U0], uniform:UX,UY,UZ or file:PATH.npy (the global "
    "lattice, float64, shape (X, Y, Z, 19)).",
)
@click.option(
    "--layout",
    default="soa",
    show_default=True,
    help="Memory layout of the distributions: soa (19 arrays, one per velocity: the faster "
    "kernel) or aos (the 19 values of a site contiguous).",
)
@click.option(
    "--runner",
    type=click.Choice(["auto", "native", "python"]),
    default=None,
    help="Who runs the halo exchange: native (the compiled C runner: packing in C, persistent "
    "requests), python (the mpi4py engine, NumPy packing) or auto (default, or "
    "$HYPERCUBOID_RUNNER): native where it loads. Same bits either way.",
)
@cliopts.json_output("Print one JSON object (rank 0)")
@cliopts.quiet_option("No per-step lines.")
@cliopts.progress_option()
@timeout_option
def run_cmd(
    lattice: str,
    decomp: str | None,
    steps: int,
    halo_variant: str,
    overlap: bool,
    tau: float,
    init: str,
    layout: str,
    runner: str | None,
    as_json: str | None,
    force: bool,
    quiet: bool,
    progress: bool | None,
    timeout: float | None,
) -> None:
    """Run the D3Q19 BGK solver with a halo exchange over MPI and report, per step and in
    total, the time in the halo exchange and in the kernel, MLUPS, the effective bandwidth
    B_eff (eq. 4.3 of the seed) and the updates per core per second N (eq. 4.4)."""
    from hypercuboid.lbm import proxy
    from hypercuboid.mpi import native

    comm = _world()
    _start(comm, timeout, "hypercuboid lbm")
    built: dict[str, Any] = {}

    def check() -> None:
        cliopts.outputs_free(force, as_json)
        dims = cliopts.dims(lattice, "--lattice")
        parts = cliopts.dims(decomp, "--decomp") if decomp is not None else None
        built["run"] = proxy.configure(
            comm.Get_size(),
            dims,
            parts,
            steps,
            halo_variant,
            overlap,
            tau,
            init,
            layout,
            native.check_runner(runner),
        )

    _agree(comm, check)
    if comm.Get_rank() != 0:
        check()
    cfg, d, s = built["run"]
    say = (
        cliopts.Progress(quiet, progress) if comm.Get_rank() == 0 else cliopts.Progress(True, False)
    )
    say(f"lbm: {steps} steps of a {lattice} lattice on {comm.Get_size()} rank(s)")
    res = _run_collective(comm, lambda: proxy.run(comm, cfg, d, s), verb="lbm")
    if comm.Get_rank() != 0:
        return
    say(f"lbm: done in {res.elapsed_s:.3f} s")
    if as_json:
        echo_json(res.to_json(), as_json)
    if as_json == "-":
        return
    _print(res, quiet)


def _print(res: Any, quiet: bool) -> None:
    dims = "x".join(map(str, res.lattice))
    click.echo(
        f"# lbm D3Q19 BGK, lattice {dims}, {res.ranks} rank{'s' if res.ranks != 1 else ''} "
        f"({'x'.join(map(str, res.decomp))}, subdomain {'x'.join(map(str, res.subdomain))}), "
        f"halo {res.halo}{' with overlap' if res.overlap else ''}, tau {res.tau} "
        f"(nu {res.viscosity:.6g}), init {res.init}, layout {res.layout}, runner {res.runner}"
    )
    if not quiet:
        click.echo(f"{'step':>6} {'halo ms':>10} {'kernel ms':>10}")
        for n, t in enumerate(res.per_step, 1):
            click.echo(f"{n:>6} {t.halo_s * 1e3:>10.3f} {t.kernel_s * 1e3:>10.3f}")
    click.echo(
        f"total {res.elapsed_s:.4f} s: halo {res.halo_s:.4f} s, kernel {res.kernel_s:.4f} s; "
        f"{res.mlups:.2f} MLUPS; B_eff {res.b_eff / 1e6:.1f} MB/s; "
        f"N {res.updates_per_core_s:.4g} updates/core/s"
    )
    click.echo(
        f"kinetic energy {res.kinetic_energy_initial:.6e} -> {res.kinetic_energy:.6e}; "
        f"mass {res.mass:.10g}"
    )

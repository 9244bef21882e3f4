"""The proxy application: the D3Q19 solver over MPI with the halo exchanges of
:mod:`hypercuboid.halo` (``mpiexec -n P hypercuboid lbm run ...``).

Each step exchanges the halo of the current array and updates the other one from it (then the
two swap). The exchange runs on the native runner (packing and unpacking in C, persistent
requests) unless ``runner`` says ``python`` (the mpi4py engine with NumPy packing); both give
the same bits. With ``overlap``, the exchange is started, the interior sites (those that need no
halo data) are updated while it is in flight, the exchange is ended and the boundary shell is
updated: Ludwig's work–communication overlap (the seed's chapter 6).

Times are measured per rank with ``MPI.Wtime`` and reduced over the ranks once, after the loop:
per step, the largest halo and kernel time of any rank; in total, the largest per-rank sums.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from hypercuboid import _core, lbm
from hypercuboid.errors import LbmError


@dataclass(frozen=True)
class Config:
    """A checked run: every value valid, the decomposition and the schedule built."""

    lattice: tuple[int, int, int]
    decomp: tuple[int, int, int]
    ranks: int
    steps: int
    halo: str
    overlap: bool
    tau: float
    init: str
    layout: str = "soa"
    """The memory layout of the distribution arrays (``soa``, ``aos``; see
    :mod:`hypercuboid.lbm`)."""
    runner: str = "auto"
    """Who runs the halo exchange: ``native``, ``python`` or ``auto`` (native where it
    loads; see :mod:`hypercuboid.mpi.halo`)."""


@dataclass(frozen=True)
class StepTime:
    """One step: the largest time any rank spent in the halo exchange and in the kernel."""

    halo_s: float
    kernel_s: float


@dataclass(frozen=True)
class RunResult:
    """What a run measured (the fields of ``hypercuboid lbm run --json``)."""

    lattice: list[int]
    decomp: list[int]
    ranks: int
    subdomain: list[int]
    """The largest subdomain (subdomains differ by at most one site per side)."""
    steps: int
    halo: str
    overlap: bool
    tau: float
    viscosity: float
    init: str
    layout: str
    """The memory layout of the distribution arrays (``soa``, ``aos``)."""
    runner: str
    """Who ran the halo exchange (``native``, ``python``)."""
    elapsed_s: float
    """Wall time of the stepping loop (the slowest rank)."""
    halo_s: float
    """Time in the halo exchange (the largest per-rank sum; with overlap: start and end)."""
    kernel_s: float
    """Time in the collide–stream kernel (the largest per-rank sum)."""
    mlups: float
    """Million lattice updates per second: sites × steps / elapsed."""
    b_eff: float
    """The seed's effective bandwidth (eq. 4.3), bytes/s: the halo sites of the largest
    subdomain × 19 × 8 bytes / the halo time of one step."""
    updates_per_core_s: float
    """The seed's N (eq. 4.4): the sites of the largest subdomain / the halo time of one step."""
    kinetic_energy_initial: float
    kinetic_energy: float
    """``Σ ½ ρ|u|²`` over the lattice after the last step."""
    mass: float
    per_step: list[StepTime] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON object (one per run)."""
        return asdict(self)


def parse_dims(text: str, what: str) -> tuple[int, int, int]:
    """``XxYxZ`` as three positive integers (the core's reader); a bad value raises
    :class:`~hypercuboid.errors.LbmError` naming ``what``."""
    try:
        x, y, z = _core.parse_dims(text, what)
    except ValueError as e:
        raise LbmError(str(e)) from None
    return (x, y, z)


def configure(
    ranks: int,
    lattice: tuple[int, int, int],
    decomp: tuple[int, int, int] | None = None,
    steps: int = 100,
    halo: str = "blocking",
    overlap: bool = False,
    tau: float = 0.8,
    init: str = "taylor-green",
    layout: str = "soa",
    runner: str = "auto",
) -> tuple[Config, Any, Any]:
    """Checks a run and builds its decomposition and halo schedule: ``(config, decomposition,
    schedule)``. Raises the one-line error of the first bad value."""
    from hypercuboid import halo as hh
    from hypercuboid.mpi import native

    native.check_runner(runner)
    if steps < 1:
        raise LbmError(f"--steps {steps}: accepted a positive number of steps")
    lbm.viscosity(tau)
    kind = lbm.parse_init(init)
    layout = lbm.parse_layout(layout)
    d = hh.Decomposition(lattice=lattice, ranks=ranks, decomp=decomp, periodic=(True,) * 3)
    for r in range(ranks):
        sub = d.subdomain(r)
        if min(sub) < 1:
            raise LbmError(
                f"lattice {'x'.join(map(str, lattice))} over decomposition "
                f"{'x'.join(map(str, d.dims))} leaves rank {r} an empty subdomain; accepted: at "
                "least one site per rank along each side"
            )
    s = hh.schedule(halo, d, values=19, bytes=8)
    if kind == "file":
        path = init.split(":", 1)[1]
        with open(path, "rb"):
            pass  # an unreadable file is reported here, once; its contents by the core
    cfg = Config(
        tuple(lattice),  # type: ignore[arg-type]
        tuple(d.dims),  # type: ignore[arg-type]
        ranks,
        steps,
        halo,
        overlap,
        tau,
        init,
        layout,
        runner,
    )
    return cfg, d, s


def run(comm: Any, cfg: Config, decomposition: Any, schedule: Any) -> RunResult:
    """Runs the proxy on ``comm`` (every rank calls it); the result is complete on every rank."""
    from mpi4py import MPI

    import hypercuboid.mpi as hmpi
    from hypercuboid.mpi.halo import runner_of

    rank = comm.Get_rank()
    sub = tuple(decomposition.subdomain(rank))
    offset = tuple(decomposition.offset(rank))
    f = lbm.allocate(sub, cfg.layout)
    g = lbm.allocate(sub, cfg.layout)
    lbm.initialise(f, offset, cfg.lattice, cfg.init)
    e0 = comm.allreduce(lbm.totals(f).kinetic_energy, op=MPI.SUM)
    # both arrays' plans made (collectively) before the timed loop
    ran = runner_of(comm, schedule, f, cfg.runner)
    runner_of(comm, schedule, g, cfg.runner)
    times = np.zeros((cfg.steps, 2))
    comm.Barrier()
    start = MPI.Wtime()
    for n in range(cfg.steps):
        t0 = MPI.Wtime()
        if cfg.overlap:
            h = hmpi.halo_start(comm, schedule, f, cfg.runner)
            t1 = MPI.Wtime()
            lbm.step(f, g, cfg.tau, "interior")
            t2 = MPI.Wtime()
            h.end()
            t3 = MPI.Wtime()
            lbm.step(f, g, cfg.tau, "shell")
            t4 = MPI.Wtime()
            times[n] = ((t1 - t0) + (t3 - t2), (t2 - t1) + (t4 - t3))
        else:
            hmpi.halo_exchange(comm, schedule, f, cfg.runner)
            t1 = MPI.Wtime()
            lbm.step(f, g, cfg.tau, "all")
            t2 = MPI.Wtime()
            times[n] = (t1 - t0, t2 - t1)
        f, g = g, f
    elapsed = MPI.Wtime() - start
    elapsed = comm.allreduce(elapsed, op=MPI.MAX)
    per_step = np.empty_like(times)
    comm.Allreduce(times, per_step, op=MPI.MAX)
    sums = np.array(times.sum(axis=0))
    totals_max = np.empty_like(sums)
    comm.Allreduce(sums, totals_max, op=MPI.MAX)
    t = lbm.totals(f)
    energy = comm.allreduce(t.kinetic_energy, op=MPI.SUM)
    mass = comm.allreduce(t.mass, op=MPI.SUM)
    largest = [max(decomposition.subdomain(r)[a] for r in range(comm.Get_size())) for a in range(3)]
    sites = largest[0] * largest[1] * largest[2]
    halo_sites = (largest[0] + 2) * (largest[1] + 2) * (largest[2] + 2) - sites
    halo_s, kernel_s = float(totals_max[0]), float(totals_max[1])
    per_exchange = halo_s / cfg.steps
    total_sites = cfg.lattice[0] * cfg.lattice[1] * cfg.lattice[2]
    return RunResult(
        lattice=list(cfg.lattice),
        decomp=list(cfg.decomp),
        ranks=comm.Get_size(),
        subdomain=largest,
        steps=cfg.steps,
        halo=cfg.halo,
        overlap=cfg.overlap,
        tau=cfg.tau,
        viscosity=lbm.viscosity(cfg.tau),
        init=cfg.init,
        layout=cfg.layout,
        runner=ran,
        elapsed_s=elapsed,
        halo_s=halo_s,
        kernel_s=kernel_s,
        mlups=total_sites * cfg.steps / elapsed / 1e6,
        b_eff=halo_sites * 19 * 8 / per_exchange if per_exchange > 0 else float("inf"),
        updates_per_core_s=sites / per_exchange if per_exchange > 0 else float("inf"),
        kinetic_energy_initial=e0,
        kinetic_energy=energy,
        mass=mass,
        per_step=[StepTime(float(a), float(b)) for a, b in per_step],
    )


def evolve(comm: Any, cfg: Config, decomposition: Any, schedule: Any) -> np.ndarray:
    """Runs ``cfg.steps`` steps (untimed) and returns this rank's final distribution array."""
    import hypercuboid.mpi as hmpi

    rank = comm.Get_rank()
    sub = tuple(decomposition.subdomain(rank))
    f = lbm.allocate(sub, cfg.layout)
    g = lbm.allocate(sub, cfg.layout)
    lbm.initialise(f, tuple(decomposition.offset(rank)), cfg.lattice, cfg.init)
    for _ in range(cfg.steps):
        if cfg.overlap:
            h = hmpi.halo_start(comm, schedule, f, cfg.runner)
            lbm.step(f, g, cfg.tau, "interior")
            h.end()
            lbm.step(f, g, cfg.tau, "shell")
        else:
            hmpi.halo_exchange(comm, schedule, f, cfg.runner)
            lbm.step(f, g, cfg.tau, "all")
        f, g = g, f
    return f


def gather(comm: Any, decomposition: Any, f: np.ndarray, root: int = 0) -> np.ndarray | None:
    """The global lattice ``(X, Y, Z, 19)`` (subdomain sites only) on ``root``; None elsewhere."""
    rank = comm.Get_rank()
    mine = np.ascontiguousarray(f[1:-1, 1:-1, 1:-1])
    parts = comm.gather((tuple(decomposition.offset(rank)), mine), root=root)
    if rank != root:
        return None
    x, y, z = (
        max(o[a] + p.shape[a] for o, p in parts)  # the lattice the parts tile
        for a in range(3)
    )
    out = np.empty((x, y, z, 19))
    for (ox, oy, oz), p in parts:
        out[ox : ox + p.shape[0], oy : oy + p.shape[1], oz : oz + p.shape[2]] = p
    return out

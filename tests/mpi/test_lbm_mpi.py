"""The lattice-Boltzmann proxy under mpiexec: after k steps the lattice is bitwise the
single-rank run's, for every halo variant, with and without overlap, at any number of ranks
(``make test-mpi`` runs 1, 3 and 4; ``MPI_NPS="1 2 3 4 8"`` adds 2 and 8)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.mpi

LATTICE = (12, 10, 9)
VARIANTS = ["blocking", "nonblocking", "nonblocking:unpack=on_arrival", "reduced"]
STEPS = 3


@pytest.fixture(scope="module")
def init_file():
    """A global lattice of distinct values (so that a value put in the wrong place shows),
    written by rank 0 where every rank reads it."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    path = None
    if comm.rank == 0:
        rng = np.random.default_rng(16)
        from hypercuboid import lbm

        f = lbm.allocate(LATTICE)
        lbm.initialise(f, (0, 0, 0), LATTICE, "taylor-green:0.04")
        glob = f[1:-1, 1:-1, 1:-1] * (1 + rng.uniform(-0.05, 0.05, size=(*LATTICE, 19)))
        path = str(Path(tempfile.mkdtemp(prefix="hc-lbm-")) / "init.npy")
        np.save(path, np.ascontiguousarray(glob))
    path = comm.bcast(path, root=0)
    yield path
    comm.Barrier()
    if comm.rank == 0:
        Path(path).unlink()
        Path(path).parent.rmdir()


def serial(init: str, steps: int, tau: float) -> np.ndarray:
    """The undivided lattice after ``steps``, without MPI (the halo wraps around)."""
    from hypercuboid import lbm

    f, g = lbm.allocate(LATTICE), lbm.allocate(LATTICE)
    lbm.initialise(f, (0, 0, 0), LATTICE, init)
    for _ in range(steps):
        lbm.periodic_halo(f)
        lbm.step(f, g, tau)
        f, g = g, f
    return f[1:-1, 1:-1, 1:-1]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool((a.view(np.uint64) == b.view(np.uint64)).all())


@pytest.mark.parametrize("overlap", [False, True], ids=["plain", "overlap"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_evolves_as_one_rank_bitwise(comm, init_file, variant, overlap):
    from hypercuboid.lbm import proxy

    init = f"file:{init_file}"
    cfg, d, s = proxy.configure(comm.size, LATTICE, None, STEPS, variant, overlap, 0.7, init)
    f = proxy.evolve(comm, cfg, d, s)
    glob = proxy.gather(comm, d, f)
    if comm.rank == 0:
        want = serial(init, STEPS, 0.7)
        assert same_bits(glob, want), f"{variant} overlap={overlap} on {comm.size} ranks"
        # the run did move the values: not the initial lattice
        assert not same_bits(glob, serial(init, 0, 0.7))
    else:
        assert glob is None


@pytest.mark.parametrize("variant", ["blocking", "nonblocking", "reduced"])
def test_the_aos_layout_evolves_as_the_soa_one(comm, init_file, variant):
    from hypercuboid import lbm
    from hypercuboid.lbm import proxy

    init = f"file:{init_file}"
    got = {}
    for layout in ("soa", "aos"):
        cfg, d, s = proxy.configure(
            comm.size, LATTICE, None, STEPS, variant, True, 0.7, init, layout
        )
        assert cfg.layout == layout
        f = proxy.evolve(comm, cfg, d, s)
        assert lbm.layout_of(f) == layout
        got[layout] = proxy.gather(comm, d, f)
    if comm.rank == 0:
        assert same_bits(got["soa"], got["aos"]), f"{variant} on {comm.size} ranks"
        assert same_bits(got["soa"], serial(init, STEPS, 0.7))


def test_the_halo_exchange_takes_transposed_arrays_and_refuses_gaps(comm):
    from hypercuboid import halo as hh
    from hypercuboid import lbm
    from hypercuboid.errors import ScheduleError
    from hypercuboid.mpi import halo_exchange

    d = hh.Decomposition(lattice=LATTICE, ranks=comm.size, periodic=(True,) * 3)
    s = hh.schedule("nonblocking", d, values=19, bytes=8)
    sub = tuple(d.subdomain(comm.rank))
    shape = d.local_shape(comm.rank, 19)
    # the soa layout: every halo cell gets the value of the boundary cell it mirrors
    f = lbm.allocate(sub, "soa")
    lbm.initialise(f, tuple(d.offset(comm.rank)), LATTICE, "taylor-green:0.04")
    halo_exchange(comm, s, f)
    glob = lbm.allocate(LATTICE, "aos")
    lbm.initialise(glob, (0, 0, 0), LATTICE, "taylor-green:0.04")
    lbm.periodic_halo(glob)
    ox, oy, oz = d.offset(comm.rank)
    want = glob[ox : ox + sub[0] + 2, oy : oy + sub[1] + 2, oz : oz + sub[2] + 2]
    assert same_bits(np.ascontiguousarray(f), np.ascontiguousarray(want))
    gappy = np.zeros(shape[:2] + (2 * shape[2], 19))[:, :, ::2]
    with pytest.raises(ScheduleError) as e:
        halo_exchange(comm, s, gappy)
    assert str(e.value) == (
        f"invalid array on rank {comm.rank}: strides {gappy.strides} (bytes) for shape "
        f"{gappy.shape}; accepted: an array whose values fill one block of memory in some axis "
        "order (C order, or a transposed view such as a (values, X, Y, Z) C-order array's "
        ".transpose(1, 2, 3, 0))"
    )
    ro = lbm.allocate(sub, "soa")
    ro.flags.writeable = False
    with pytest.raises(ScheduleError) as e:
        halo_exchange(comm, s, ro)
    assert str(e.value) == (
        f"invalid array on rank {comm.rank}: it is read-only; accepted: a writeable array (the "
        "exchange updates its halo in place)"
    )


@pytest.mark.parametrize("variant", ["blocking", "reduced"])
def test_thin_subdomains_along_z(comm, init_file, variant):
    # all ranks along z: 9 sites over up to 8 ranks leaves subdomains 1 or 2 sites thick,
    # whose interior is empty (the overlap updates only the shell)
    from hypercuboid.lbm import proxy

    init = f"file:{init_file}"
    cfg, d, s = proxy.configure(comm.size, LATTICE, (1, 1, comm.size), 2, variant, True, 0.9, init)
    glob = proxy.gather(comm, d, proxy.evolve(comm, cfg, d, s))
    if comm.rank == 0:
        assert same_bits(glob, serial(init, 2, 0.9))


def run_cli(args):
    from hypercuboid.cli.lbm import lbm

    return CliRunner().invoke(lbm, args, catch_exceptions=False)


def test_cli_json_contract(comm):
    res = run_cli(
        ["run", "--lattice", "12x10x9", "--steps", "4", "--halo", "nonblocking", "--overlap"]
        + ["--init", "taylor-green:0.03", "--json"]
    )
    assert res.exit_code == 0, res.output
    if comm.rank != 0:
        assert res.output == ""
        return
    out = json.loads(res.output)
    assert {"mlups", "halo_s", "kernel_s", "steps", "lattice", "decomp"} <= set(out)
    assert out["steps"] == 4 and out["lattice"] == [12, 10, 9] and out["ranks"] == comm.size
    assert int(np.prod(out["decomp"])) == comm.size
    assert out["halo"] == "nonblocking" and out["overlap"] is True
    assert out["layout"] == "soa"
    assert len(out["per_step"]) == 4
    assert out["mlups"] > 0 and out["b_eff"] > 0 and out["updates_per_core_s"] > 0
    assert out["halo_s"] >= max(s["halo_s"] for s in out["per_step"])
    assert 0 < out["kinetic_energy"] < out["kinetic_energy_initial"]
    assert out["mass"] == pytest.approx(12 * 10 * 9, rel=1e-12)
    assert out["viscosity"] == pytest.approx((0.8 - 0.5) / 3)


def test_cli_text_report(comm):
    res = run_cli(["run", "--lattice", "8x8x8", "--steps", "2", "--halo", "reduced"])
    assert res.exit_code == 0, res.output
    if comm.rank != 0:
        assert res.output == ""
        return
    lines = res.output.splitlines()
    assert lines[0].startswith("# lbm D3Q19 BGK, lattice 8x8x8, ")
    assert "halo reduced, tau 0.8 (nu 0.1), init taylor-green, layout soa" in lines[0]
    assert lines[1].split() == ["step", "halo", "ms", "kernel", "ms"]
    assert [ln.split()[0] for ln in lines[2:4]] == ["1", "2"]
    assert lines[4].startswith("total ") and "MLUPS" in lines[4]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tau", "0.5"], "tau 0.5: must be a number greater than 0.5 (the viscosity "
         "(tau - 0.5)/3 must be positive)"),
        (["--init", "vortex"], "initial condition 'vortex': unknown form; accepted: "
         "taylor-green, taylor-green:U0, uniform:UX,UY,UZ, file:PATH.npy"),
        (["--lattice", "8x8"], "--lattice '8x8': accepted XxYxZ with three positive integers "
         "(64x64x64)"),
        (["--steps", "0"], "--steps 0: accepted a positive number of steps"),
        (["--layout", "aosoa"], "unknown layout 'aosoa'; accepted: soa, aos"),
    ],
)  # fmt: skip
def test_cli_errors_print_once(comm, args, message):
    base = {"--lattice": "8x8x8", "--steps": "1"}
    opts = dict(zip(args[::2], args[1::2], strict=True))
    argv = ["run"] + [x for k, v in {**base, **opts}.items() for x in (k, v)]
    res = run_cli(argv)
    assert res.exit_code == 1
    assert res.output == (f"Error: {message}\n" if comm.rank == 0 else "")


def test_cli_refuses_decompositions_and_halos_that_do_not_fit(comm):
    res = run_cli(["run", "--lattice", "8x8x8", "--decomp", f"{comm.size + 1}x1x1"])
    assert res.exit_code == 1
    if comm.rank == 0:
        assert res.output.startswith("Error: ") and res.output.count("\n") == 1
        assert f"{comm.size + 1}" in res.output
    res = run_cli(["run", "--lattice", "8x8x8", "--halo", "diagonal"])
    assert res.exit_code == 1
    if comm.rank == 0:
        assert res.output.startswith("Error: ") and "diagonal" in res.output
        assert "blocking" in res.output and res.output.count("\n") == 1
    # more ranks along x than sites: an empty subdomain
    if comm.size > 1:
        res = run_cli(["run", "--lattice", f"{comm.size - 1 or 1}x8x8", "--decomp",
                       f"{comm.size}x1x1"])  # fmt: skip
        assert res.exit_code == 1
        if comm.rank == 0:
            assert res.output.startswith("Error: ") and res.output.count("\n") == 1

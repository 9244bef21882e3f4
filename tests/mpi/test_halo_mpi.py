"""``hypercuboid.mpi.halo_exchange``: the seed's ``test_halo`` over MPI for every halo variant
and every decomposition of the job's ranks (1, 2, 3, 4, 8, ...: a rank is its own neighbour
wherever an axis has one rank, two ranks are both neighbours wherever an axis has two),
periodic and not. Boundary sites hold distinct non-zero values, every other element zero;
after the exchange every halo value must equal the boundary value it mirrors (computed here
from global coordinates, independently of the core), for ``reduced`` only the D3Q19
distributions crossing into the subdomain, every other element unchanged."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypercuboid import halo
from hypercuboid.errors import MPIError, ScheduleError

pytestmark = pytest.mark.mpi  # halo exchanges run on either runner ($HYPERCUBOID_RUNNER)

VARIANTS = ["blocking", "nonblocking", "nonblocking:unpack=on_arrival", "reduced"]
PERIODIC = [(True, True, True), (False, False, False), (True, False, True)]


def _decomps(p: int) -> list[tuple[int, int, int]]:
    out = []
    for a in range(1, p + 1):
        for b in range(1, p + 1):
            if p % (a * b) == 0:
                out.append((a, b, p // (a * b)))
    return out


def _value(g, lattice, q, values):
    """A distinct non-zero value of distribution ``q`` of global site ``g``."""
    x, y, z = g
    return float(((x * lattice[1] + y) * lattice[2] + z) * values + q + 1)


def _initial(d: halo.Decomposition, rank: int, values: int) -> np.ndarray:
    """The seed's test_halo state: boundary sites distinct non-zero, the rest zero."""
    nx, ny, nz = d.subdomain(rank)
    x0, y0, z0 = d.offset(rank)
    f = np.zeros((nx + 2, ny + 2, nz + 2, values))
    n = (nx, ny, nz)
    for i, j, k in itertools.product(range(1, nx + 1), range(1, ny + 1), range(1, nz + 1)):
        s = (i, j, k)
        if any(s[a] in (1, n[a]) for a in range(3)):
            g = (x0 + i - 1, y0 + j - 1, z0 + k - 1)
            for q in range(values):
                f[i, j, k, q] = _value(g, d.lattice, q, values)
    return f


def _expected(d: halo.Decomposition, rank: int, values: int, reduced: bool, f0: np.ndarray):
    nx, ny, nz = d.subdomain(rank)
    x0, y0, z0 = d.offset(rank)
    want = f0.copy()
    n = (nx, ny, nz)
    for i, j, k in itertools.product(range(nx + 2), range(ny + 2), range(nz + 2)):
        s = (i, j, k)
        dirn = tuple(-1 if s[a] == 0 else (1 if s[a] == n[a] + 1 else 0) for a in range(3))
        if dirn == (0, 0, 0):
            continue
        g = [(x0, y0, z0)[a] + s[a] - 1 for a in range(3)]
        inside = True
        for a in range(3):
            if not 0 <= g[a] < d.lattice[a]:
                if d.periodic[a]:
                    g[a] %= d.lattice[a]
                else:
                    inside = False
        if not inside:
            continue
        for q in range(values):
            if reduced:
                c = halo.D3Q19_VELOCITIES[q]
                if any(dirn[a] != 0 and c[a] != -dirn[a] for a in range(3)):
                    continue
                if sum(1 for x in dirn if x) == 3:
                    continue
            want[i, j, k, q] = _value(tuple(g), d.lattice, q, values)
    return want


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("periodic", PERIODIC)
def test_halo_every_decomposition(comm, variant, periodic):
    values = 19
    for dims in _decomps(comm.size):
        lattice = tuple(2 * p + 1 for p in dims)  # uneven: subdomains of 2 and 3 sites
        d = halo.Decomposition(lattice, comm.size, dims, periodic)
        s = halo.schedule(variant, d, values=values)
        f0 = _initial(d, comm.rank, values)
        f = f0.copy()
        hmpi_exchange(comm, s, f)
        want = _expected(d, comm.rank, values, variant == "reduced", f0)
        bad = np.argwhere(f != want)
        assert bad.size == 0, (
            f"{variant} {dims} periodic {periodic} rank {comm.rank}: {len(bad)} wrong, first "
            f"at {tuple(bad[0])}: {f[tuple(bad[0])]} != {want[tuple(bad[0])]}"
        )
        # a second call on the same array reuses the plan and gives the same halo
        f[...] = f0
        hmpi_exchange(comm, s, f)
        assert np.array_equal(f, want)


def hmpi_exchange(comm, s, f):
    from hypercuboid.mpi import halo_exchange

    halo_exchange(comm, s, f)


@pytest.mark.parametrize("variant", VARIANTS)
def test_start_and_end_around_interior_work(comm, variant):
    from hypercuboid.mpi import halo_start

    dims = halo.Decomposition((8, 8, 8), comm.size).dims
    lattice = tuple(4 * p for p in dims)
    d = halo.Decomposition(lattice, comm.size, dims)
    s = halo.schedule(variant, d)
    f0 = _initial(d, comm.rank, 19)
    f = f0.copy()
    h = halo_start(comm, s, f)
    # the interior (sites 2..n-1) needs no halo and sends none: free to update
    f[2:-2, 2:-2, 2:-2, :] = -1.0
    with pytest.raises(MPIError, match="still in progress"):
        halo_start(comm, s, f)
    h.end()
    assert h.done
    want = _expected(d, comm.rank, 19, variant == "reduced", f0)
    want[2:-2, 2:-2, 2:-2, :] = -1.0
    assert np.array_equal(f, want)


def test_bad_arrays_and_schedules_are_named(comm):
    from hypercuboid.mpi import halo_exchange

    d = halo.Decomposition((4 * comm.size, 4, 4), comm.size)
    s = halo.schedule("blocking", d)
    shape = d.local_shape(comm.rank)
    with pytest.raises(ScheduleError) as e:
        halo_exchange(comm, s, np.zeros((3, 3, 3, 19)))
    assert str(e.value) == (
        f"invalid array of shape (3, 3, 3, 19) and dtype float64 on rank {comm.rank}: its local "
        f"array has shape {shape} (subdomain {d.subdomain(comm.rank)} plus the halo, 19 values "
        "per site) and dtype float64"
    )
    other = halo.schedule("blocking", halo.Decomposition((8, 8, 8), comm.size + 1))
    with pytest.raises(ScheduleError, match=f"for {comm.size + 1} ranks"):
        halo_exchange(comm, other, np.zeros(shape))


def test_the_generic_executor_refuses_halo_schedules(comm):
    from hypercuboid.mpi import execute

    d = halo.Decomposition((2 * comm.size, 2, 2), comm.size)
    s = halo.schedule("nonblocking", d)
    f = np.zeros(d.local_shape(comm.rank))
    with pytest.raises(ScheduleError) as e:
        execute(comm, s, f.reshape(-1)[:0], f.reshape(-1))
    assert str(e.value) == (
        "a halo exchange updates each rank's local array in place: run it with "
        "hypercuboid.mpi.halo_exchange(comm, schedule, f)"
    )
    from hypercuboid.mpi.engine import compile_program

    with pytest.raises(ScheduleError) as e:
        compile_program(s.program(comm.rank), rank=comm.rank, nranks=comm.size, count=0)
    assert str(e.value).startswith(f"rank {comm.rank}: op ")
    assert "of a 3-D region (a halo exchange): run it with hypercuboid.mpi.halo_exchange" in (
        str(e.value)
    )

"""Halo exchanges of a 3-D Cartesian decomposition (Ludwig's lattice-Boltzmann halos).

A global lattice ``(X, Y, Z)`` is split over ``px × py × pz`` ranks (``MPI_Cart_create`` order,
z fastest; ``MPI_Dims_create``-style dimensions by default; subdomains differing by at most one
site, the first ``X mod px`` ranks along x getting the extra one). Each rank holds a C-order
array of shape ``(nx + 2, ny + 2, nz + 2, values)``: its subdomain with a halo of width 1,
subdomain site ``(i, j, k)`` at index ``(i + 1, j + 1, k + 1)``. A halo schedule updates the
halo of that array in place: every halo value ends as the value of the neighbour's subdomain
site it mirrors (for ``reduced``, only the D3Q19 distributions that cross into the subdomain:
5 per face, 1 per edge; the rest untouched). Halo sites across a non-periodic boundary are left
to the application.

>>> from hypercuboid import halo
>>> d = halo.Decomposition(lattice=(64, 48, 32), ranks=24)
>>> d.dims, d.subdomain(0), d.neighbour(0, (-1, 0, 0))
((4, 3, 2), (16, 16, 16), 18)
>>> s = halo.schedule("nonblocking", d)
>>> s.verify(eager_limit=0).sound
True

The D3Q19 velocity order (distribution ``q`` of a site is value ``q`` of the array) is
:data:`D3Q19_VELOCITIES`, the core's one table (Ludwig's order: rest first, then decreasing
``cx``, ``cy``, ``cz``). Run an exchange over MPI with :func:`hypercuboid.mpi.halo_exchange`.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypercuboid import _core
from hypercuboid.errors import ScheduleError
from hypercuboid.schedule import Schedule

#: The variants users type (``halo.schedule``); the registry also accepts ``halo_<variant>``.
VARIANTS: tuple[str, ...] = (
    "blocking",
    "nonblocking",
    "nonblocking:unpack=on_arrival",
    "reduced",
)

#: The 26 neighbour directions in tag order: a message travelling in ``DIRECTIONS[t]`` (from its
#: sender) has tag ``t``.
DIRECTIONS: tuple[tuple[int, int, int], ...] = tuple(_core.HALO_DIRECTIONS)

#: The D3Q19 velocities ``c_q`` in the core's order (Ludwig's).
D3Q19_VELOCITIES: tuple[tuple[int, int, int], ...] = tuple(_core.D3Q19_VELOCITIES)


def _triple(name: str, value: Sequence[int] | None) -> tuple[int, int, int] | None:
    if value is None:
        return None
    t = tuple(value)
    if len(t) != 3 or not all(isinstance(x, int) and not isinstance(x, bool) for x in t):
        raise ScheduleError(f"invalid {name} {value!r}: give three integers (x, y, z)")
    return (int(t[0]), int(t[1]), int(t[2]))


class Decomposition:
    """``lattice`` ``(X, Y, Z)`` on ``ranks`` ranks, split as ``decomp`` ``(px, py, pz)`` (by
    default as close to cubic as possible, non-increasing: ``MPI_Dims_create``), periodic per
    axis as ``periodic`` says.

    Bad input (a lattice smaller than the decomposition, ``ranks`` not ``px·py·pz``,
    non-positive sizes) raises :class:`~hypercuboid.errors.ScheduleError` naming the value and
    what is accepted.
    """

    def __init__(
        self,
        lattice: Sequence[int],
        ranks: int,
        decomp: Sequence[int] | None = None,
        periodic: Sequence[bool] = (True, True, True),
    ) -> None:
        lat = _triple("lattice", lattice)
        assert lat is not None
        per = tuple(bool(p) for p in periodic)
        if len(per) != 3:
            raise ScheduleError(f"invalid periodic {periodic!r}: give three booleans (x, y, z)")
        self._core = _core.HaloDecomposition(lat, int(ranks), _triple("decomposition", decomp), per)

    @classmethod
    def of_subdomain(
        cls,
        subdomain: Sequence[int],
        decomp: Sequence[int],
        periodic: Sequence[bool] = (True, True, True),
    ) -> Decomposition:
        """The decomposition whose every rank has a ``subdomain`` of sites on ``decomp``."""
        sub = _triple("subdomain", subdomain)
        dims = _triple("decomposition", decomp)
        per = tuple(bool(p) for p in periodic)
        self = cls.__new__(cls)
        self._core = _core.HaloDecomposition.of_subdomain(sub, dims, per)  # type: ignore[arg-type]
        return self

    @classmethod
    def _of(cls, core: _core.HaloDecomposition) -> Decomposition:
        self = cls.__new__(cls)
        self._core = core
        return self

    @property
    def lattice(self) -> tuple[int, int, int]:
        """Sites of the global lattice along x, y, z."""
        return self._core.lattice

    @property
    def dims(self) -> tuple[int, int, int]:
        """Ranks along x, y, z."""
        return self._core.dims

    @property
    def periodic(self) -> tuple[bool, bool, bool]:
        """Whether each axis wraps round."""
        return self._core.periodic

    @property
    def nranks(self) -> int:
        """Number of ranks."""
        return self._core.nranks

    def coords(self, rank: int) -> tuple[int, int, int]:
        """The coordinates of ``rank`` in the rank grid (``MPI_Cart_coords``)."""
        return self._core.coords(rank)

    def rank_at(self, coords: Sequence[int]) -> int:
        """The rank at grid coordinates ``coords`` (``MPI_Cart_rank``, no wrapping)."""
        c = _triple("coordinates", coords)
        assert c is not None
        return self._core.rank_at(c)

    def subdomain(self, rank: int) -> tuple[int, int, int]:
        """The sites ``(nx, ny, nz)`` of ``rank``'s subdomain."""
        return self._core.subdomain(rank)

    def offset(self, rank: int) -> tuple[int, int, int]:
        """The global coordinates ``(x0, y0, z0)`` of ``rank``'s first site."""
        return self._core.offset(rank)

    def neighbour(self, rank: int, d: Sequence[int]) -> int | None:
        """The neighbour of ``rank`` in direction ``d`` (components -1, 0, 1), wrapping round
        periodic axes; None across a non-periodic boundary. It may be ``rank`` itself."""
        t = _triple("direction", d)
        assert t is not None
        return self._core.neighbour(rank, t)

    def local_shape(self, rank: int, values: int = 19) -> tuple[int, int, int, int]:
        """The shape of ``rank``'s local array: ``(nx + 2, ny + 2, nz + 2, values)``."""
        nx, ny, nz = self.subdomain(rank)
        return (nx + 2, ny + 2, nz + 2, int(values))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Decomposition):
            return NotImplemented
        return (self.lattice, self.dims, self.periodic) == (
            other.lattice,
            other.dims,
            other.periodic,
        )

    def __hash__(self) -> int:
        return hash((self.lattice, self.dims, self.periodic))

    def __repr__(self) -> str:
        return (
            f"Decomposition(lattice={self.lattice}, ranks={self.nranks}, decomp={self.dims}, "
            f"periodic={self.periodic})"
        )


def schedule(
    variant: str,
    decomposition: Decomposition,
    values: int = 19,
    bytes: int = 8,  # noqa: A002 - the contract's name
    *,
    kernel: str | int | None = None,
) -> Schedule:
    """The halo-exchange schedule of ``variant`` (``blocking``, ``nonblocking``,
    ``nonblocking:unpack=on_arrival``, ``reduced``; also ``halo_<variant>`` and the keys of
    :func:`hypercuboid.schedules.algorithms`\\ ``("halo")``, e.g. ``nonblocking:overlap=on``) on
    ``decomposition``, ``values`` values of ``bytes`` bytes per site (8: float64).

    ``kernel`` (a time per site such as ``"20ns"``, or picoseconds) adds the lattice update to
    the schedule for simulation: after the exchange, or with ``overlap=on`` the interior between
    posting and waiting and the boundary shell after. ``reduced`` needs ``values=19``.
    """
    if not isinstance(decomposition, Decomposition):
        raise ScheduleError(
            f"invalid decomposition {decomposition!r}: give a hypercuboid.halo.Decomposition"
        )
    kernel_ps = 0 if kernel is None else _kernel_ps(kernel)
    return Schedule(_core.halo(variant, decomposition._core, int(values), int(bytes), kernel_ps))


def _kernel_ps(kernel: str | int) -> int:
    from hypercuboid.units import parse_time

    if isinstance(kernel, str):
        return int(parse_time(kernel))
    return int(kernel)


def program(
    variant: str,
    decomposition: Decomposition,
    rank: int,
    values: int = 19,
    bytes: int = 8,  # noqa: A002 - the contract's name
) -> _core.Program:
    """The program of ``rank`` alone (what an MPI rank needs), checked against its array."""
    return _core.halo_program(variant, decomposition._core, int(rank), int(values), int(bytes))


def decomposition_of(s: Schedule) -> Decomposition:
    """The decomposition a halo schedule was made for."""
    h = s.meta.get("halo")
    if h is None:
        raise ScheduleError(
            f"the schedule is not a halo exchange (collective {s.meta['collective']!r})"
        )
    lat, dims, per = h["lattice"], h["dims"], h["periodic"]
    return Decomposition(lat, dims[0] * dims[1] * dims[2], dims, per)


def saving(decomposition: Decomposition, rank: int = 0) -> tuple[int, int]:
    """Values ``rank`` sends per exchange, ``(full, reduced)``: every value of the 26
    directions against the D3Q19-reduced exchange (5 per face, 1 per edge)."""
    return _core.halo_saving(decomposition._core, int(rank))


__all__ = [
    "D3Q19_VELOCITIES",
    "DIRECTIONS",
    "VARIANTS",
    "Decomposition",
    "decomposition_of",
    "program",
    "saving",
    "schedule",
]

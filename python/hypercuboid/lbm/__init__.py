"""The D3Q19 lattice-Boltzmann solver (BGK) of the proxy application ``hypercuboid lbm run``.

A rank's distributions are one ``float64`` array of logical shape ``(nx + 2, ny + 2, nz + 2, 19)``:
its subdomain with a halo of width 1 (subdomain site ``(i, j, k)`` at ``(i + 1, j + 1, k + 1)``),
the 19 values of a site in the order of :data:`VELOCITIES`, the layout-free view the halo
exchanges of :mod:`hypercuboid.halo` fill. In memory it is one of two :data:`LAYOUTS`:

- ``soa`` (structure of arrays, the default and the faster kernel): a C-contiguous
  ``(19, nx + 2, ny + 2, nz + 2)`` array, handed around as its view ``transpose(1, 2, 3, 0)``;
- ``aos`` (array of structures): a C-contiguous ``(nx + 2, ny + 2, nz + 2, 19)`` array.

:func:`allocate` makes either; every other function reads the layout from the strides
(:func:`layout_of`). The kernel works in place on these arrays (no copy, the GIL released),
between two arrays of one layout the caller swaps::

    from hypercuboid import lbm
    f, g = lbm.allocate((32, 32, 32)), lbm.allocate((32, 32, 32))
    lbm.initialise(f, offset=(0, 0, 0), lattice=(32, 32, 32), init="taylor-green")
    for _ in range(100):
        lbm.periodic_halo(f)               # one rank: the halo wraps around
        lbm.step(f, g, tau=0.8)
        f, g = g, f
    print(lbm.totals(f).kinetic_energy)

Under MPI, :func:`hypercuboid.lbm.proxy.run` runs the same loop with the halo exchange of a
:mod:`hypercuboid.halo` schedule (``hypercuboid lbm run`` on the command line).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import LbmError

#: The 19 velocities ``(cx, cy, cz)`` in the order of the last axis of a distribution array.
VELOCITIES: list[tuple[int, int, int]] = [(c[0], c[1], c[2]) for c in _core.LBM_VELOCITIES]
#: Their lattice weights (1/3, 1/18, 1/36).
WEIGHTS: list[float] = list(_core.LBM_WEIGHTS)
#: Bytes a lattice update moves at least: 19 values read and 19 written, 8 bytes each.
BYTES_PER_UPDATE: int = _core.LBM_BYTES_PER_UPDATE
#: The forms of an initial condition.
INIT_FORMS: list[str] = list(_core.LBM_INIT_FORMS)
#: The regions of a step: every site, those needing no halo data, the rest.
REGIONS = ("all", "interior", "shell")
#: The memory layouts of a distribution array (the first is the default).
LAYOUTS: tuple[str, ...] = tuple(_core.LBM_LAYOUTS)

__all__ = [
    "BYTES_PER_UPDATE",
    "INIT_FORMS",
    "LAYOUTS",
    "REGIONS",
    "VELOCITIES",
    "WEIGHTS",
    "Totals",
    "allocate",
    "initialise",
    "layout_of",
    "macroscopic",
    "parse_init",
    "parse_layout",
    "periodic_halo",
    "region_sites",
    "step",
    "subdomain_of",
    "totals",
    "viscosity",
]


@dataclass(frozen=True)
class Totals:
    """Sums over a subdomain's sites."""

    mass: float
    """``Σ ρ``."""
    momentum: tuple[float, float, float]
    """``Σ ρu``."""
    kinetic_energy: float
    """``Σ ½ ρ|u|²``."""


def allocate(subdomain: tuple[int, int, int], layout: str = "soa") -> np.ndarray:
    """A zeroed distribution array for an ``nx × ny × nz`` subdomain (with its halo): the
    logical ``(nx + 2, ny + 2, nz + 2, 19)`` view of memory in ``layout`` (``soa``: a
    ``(19, nx + 2, ny + 2, nz + 2)`` C-order array transposed; ``aos``: C order)."""
    nx, ny, nz = subdomain
    layout = _core.lbm_parse_layout(layout)
    if min(nx, ny, nz) < 1:
        raise LbmError(f"subdomain {nx}x{ny}x{nz}: every side must be at least 1")
    if layout == "soa":
        return np.zeros((19, nx + 2, ny + 2, nz + 2), dtype=np.float64).transpose(1, 2, 3, 0)
    return np.zeros((nx + 2, ny + 2, nz + 2, 19), dtype=np.float64)


def _check(f: np.ndarray, what: str = "distribution") -> np.ndarray:
    if not isinstance(f, np.ndarray) or f.dtype != np.float64:
        kind = f.dtype if isinstance(f, np.ndarray) else type(f).__name__
        raise LbmError(
            f"{what} array of type {kind}; accepted: a float64 array of shape "
            "(nx + 2, ny + 2, nz + 2, 19) from lbm.allocate (layout soa or aos)"
        )
    return f


def layout_of(f: np.ndarray) -> str:
    """The memory layout (``soa``, ``aos``) of a distribution array, from its strides; an
    :class:`LbmError` for any other array."""
    _check(f)
    return _core.lbm_layout(f)


def subdomain_of(f: np.ndarray) -> tuple[int, int, int]:
    """The subdomain ``(nx, ny, nz)`` a distribution array holds."""
    _check(f)
    if f.ndim != 4:
        raise LbmError(
            f"distribution array of shape {list(f.shape)}: accepted (nx + 2, ny + 2, nz + 2, 19)"
        )
    return (f.shape[0] - 2, f.shape[1] - 2, f.shape[2] - 2)


def step(src: np.ndarray, dst: np.ndarray, tau: float, region: str = "all") -> None:
    """One collide–stream step: reads ``src`` (its halo filled), writes ``region`` of ``dst``
    (``all``, ``interior``: the sites needing no halo data, ``shell``: the others)."""
    _check(src, "source")
    _check(dst, "destination")
    if np.shares_memory(src, dst):
        raise LbmError("source and destination arrays overlap; accepted: two distinct arrays")
    _core.lbm_step(src, dst, tau, region)


def initialise(
    f: np.ndarray,
    offset: tuple[int, int, int],
    lattice: tuple[int, int, int],
    init: str = "taylor-green",
) -> None:
    """Sets the subdomain of ``f`` whose first site is ``offset`` in the global ``lattice`` to
    the initial condition ``init`` (one of :data:`INIT_FORMS`); zeroes the halo."""
    _check(f)
    _core.lbm_initialise(f, list(offset), list(lattice), init)


def parse_init(init: str) -> str:
    """The kind of an initial condition (``taylor-green``, ``uniform``, ``file``), or
    :class:`LbmError` naming the accepted forms. Reads no file."""
    return _core.lbm_parse_init(init)


def parse_layout(layout: str) -> str:
    """A layout name checked (one of :data:`LAYOUTS`), or :class:`LbmError` naming them."""
    return _core.lbm_parse_layout(layout)


def viscosity(tau: float) -> float:
    """The kinematic viscosity ``(tau − ½)/3`` (lattice units); ``tau`` must exceed ½."""
    return _core.lbm_viscosity(tau)


def totals(f: np.ndarray) -> Totals:
    """Mass, momentum and kinetic energy of the subdomain sites of ``f``."""
    _check(f)
    mass, momentum, energy = _core.lbm_totals(f)
    return Totals(mass, (momentum[0], momentum[1], momentum[2]), energy)


def macroscopic(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Density ``(nx, ny, nz)`` and velocity ``(nx, ny, nz, 3)`` of the subdomain sites."""
    nx, ny, nz = subdomain_of(f)
    rho, u = _core.lbm_macroscopic(f)
    return rho.reshape(nx, ny, nz), u


def region_sites(subdomain: tuple[int, int, int], region: str) -> int:
    """Number of sites of a region of an ``nx × ny × nz`` subdomain."""
    return _core.lbm_region_sites(list(subdomain), region)


def periodic_halo(f: np.ndarray) -> None:
    """Fills the halo of ``f`` as if its subdomain were the whole periodic lattice (what the
    halo exchange does on one rank)."""
    _check(f)
    _core.lbm_periodic_halo(f)

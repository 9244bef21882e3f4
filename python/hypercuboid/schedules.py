"""Schedule generators: ``hc.schedules.allreduce(...)`` and ``hc.schedules.alltoall(...)``
build the schedule of an algorithm (they do not run it: :func:`hypercuboid.mpi.allreduce` and
:func:`hypercuboid.mpi.alltoall` run one over MPI).

The algorithms, their parameters and the guarantees their schedules make come from the Rust
core's registry (:func:`collectives`); nothing here lists them again.

>>> import hypercuboid as hc
>>> s = hc.schedules.allreduce("recursive_doubling", nranks=8, count=1024)
>>> s.verify().sound
True
"""

from __future__ import annotations

from dataclasses import dataclass

from hypercuboid import _core
from hypercuboid.schedule import Schedule

_DEFAULTS = _core.DEFAULTS["allreduce"]
_A2A = _core.DEFAULTS["alltoall"]


@dataclass(frozen=True)
class AlgorithmInfo:
    """One algorithm of the registry: how to name it and what it promises."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    keys: dict[str, str]
    """Its parameters (``key=value`` in the spec) and what each means, with its default."""
    positional: str | None
    """What its positional argument is (``SCHEDULE`` of recursive multiplying), if any."""
    usage: str
    example: str
    needs_topology: bool
    cost: str | None
    """The closed form of its time in the postal model, where one is exact."""
    guarantees: dict[str, str]
    """Property (``same_bits``, ``same_expression``, ``rank_order``) → when it holds."""


@dataclass(frozen=True)
class CollectiveInfo:
    """A collective and its algorithms."""

    name: str
    summary: str
    algorithms: tuple[AlgorithmInfo, ...]


def collectives() -> list[CollectiveInfo]:
    """Every collective with generators and its algorithms, from the core's registry."""
    out = []
    for c in _core.collectives():
        algs = tuple(
            AlgorithmInfo(
                name=a.form.name,
                aliases=tuple(a.form.aliases),
                summary=a.form.summary,
                keys=dict(a.form.keys),
                positional=a.form.positional,
                usage=a.form.usage,
                example=a.form.example,
                needs_topology=a.needs_topology,
                cost=a.cost,
                guarantees=dict(a.guarantees),
            )
            for a in c.algorithms
        )
        out.append(CollectiveInfo(name=c.name, summary=c.summary, algorithms=algs))
    return out


def algorithms(collective: str = "allreduce") -> list[AlgorithmInfo]:
    """The algorithms of ``collective``."""
    for c in collectives():
        if c.name == collective:
            return list(c.algorithms)
    from hypercuboid.errors import ScheduleError

    names = ", ".join(c.name for c in collectives())
    raise ScheduleError(f"unknown collective '{collective}'; accepted: {names}")


def allreduce(
    algorithm: str,
    nranks: int,
    count: int = _DEFAULTS["count"],
    *,
    dtype: str = _DEFAULTS["dtype"],
    op: str = _DEFAULTS["op"],
) -> Schedule:
    """The allreduce schedule of ``algorithm`` (``ring_rotate``, ``ring``, ``tree``,
    ``recursive_doubling``, ``recursive_multiplying:a8,a3,a4``, ...; see
    :func:`algorithms`) on ``nranks`` ranks for ``count`` elements of ``dtype``."""
    return Schedule(_core.allreduce(algorithm, nranks, count, dtype, op))


def alltoall(
    algorithm: str,
    nranks: int,
    count: int = _A2A["count"],
    *,
    dtype: str = _A2A["dtype"],
) -> Schedule:
    """The alltoall schedule of ``algorithm`` (``linear``, ``linear_shifted:block=32`` or
    ``scattered``, ``pairwise``, ``bruck``, ``k_bruck:k=4``, ``linear_sync:max=8``; see
    :func:`algorithms`) on ``nranks`` ranks, each sending ``count`` elements of ``dtype`` to
    every rank (MPI's ``sendcount``): both buffers have ``nranks * count`` elements.

    >>> import hypercuboid as hc
    >>> s = hc.schedules.alltoall("bruck", nranks=6, count=2)
    >>> s.meta["block"], s.meta["count"], s.verify(eager_limit=0).sound
    (2, 12, True)
    """
    return Schedule(_core.alltoall(algorithm, nranks, count, dtype))


def allreduce_algorithms() -> list[str]:
    """Names of the allreduce algorithms."""
    return list(_core.allreduce_algorithms())


__all__ = [
    "AlgorithmInfo",
    "CollectiveInfo",
    "algorithms",
    "allreduce",
    "allreduce_algorithms",
    "alltoall",
    "collectives",
]

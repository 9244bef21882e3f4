"""What an MPI library would run: Open MPI 5's and MPICH 4's default choice of collective
algorithm, by rank count and message size, mapped onto this package's algorithms.

::

    from hypercuboid import library

    c = library.choice("openmpi", "allreduce", nranks=64, nbytes=1 << 20)
    c.algorithm, c.native, c.note     # ('rabenseifner', 'rabenseifner', '')

The rules and their sources (the libraries' decision functions, by file and version) are in
docs/library-selection.md; the core holds them (``hypercuboid_core::collectives::library``).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypercuboid import _core

LibraryChoice = _core.LibraryChoice


@dataclass(frozen=True)
class Library:
    """An MPI library whose choice :func:`choice` reproduces."""

    name: str
    aliases: tuple[str, ...]
    help: str
    source: str


#: The libraries, in the order listed.
LIBRARIES: tuple[Library, ...] = tuple(
    Library(name, tuple(aliases), help, source)
    for name, aliases, help, source in _core.library_names()
)

#: The collectives whose choice is known.
COLLECTIVES: tuple[str, ...] = tuple(_core.library_collectives())


def choice(
    library: str, collective: str, nranks: int, nbytes: int, *, dtype: str | None = None
) -> LibraryChoice:
    """What ``library`` (``openmpi``, ``mpich``) runs for ``collective`` (``allreduce``,
    ``alltoall``) on ``nranks`` ranks with ``nbytes`` bytes (allreduce: the vector; alltoall:
    one peer's block) of ``dtype`` elements (default float64; the element count decides the
    libraries' fallbacks for short vectors). Returns our algorithm (a spec that
    :func:`hypercuboid.schedule.generate` reads), the library's own name and a note on how
    the two differ."""
    for name, value in (("nranks", nranks), ("nbytes", nbytes)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not 1 <= nranks <= 2**32 - 2:
        raise _core_error(f"nranks={nranks}: a communicator has 1 ..= 4294967294 ranks")
    if not 0 <= nbytes < 2**64:
        raise _core_error(f"nbytes={nbytes}: a size is 0 ..= 2^64 - 1 bytes")
    return _core.library_choice(library, collective, nranks, nbytes, dtype)


def _core_error(message: str) -> Exception:
    from hypercuboid.errors import ScheduleError

    return ScheduleError(message)

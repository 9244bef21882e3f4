"""Times, sizes and bandwidths: the one grammar of quantities with units, read by the Rust core.

Every verb and option that takes one reads it here, so that a size that parses in one verb
parses in every verb.

=========  ==============================================  ============================
quantity   accepted                                        a bare number is
=========  ==============================================  ============================
time       ``500ps``, ``1.5ns``, ``2us`` (``µs``), ``3ms``  nanoseconds
size       ``256``, ``256B``, ``7.5KB``, ``1K``, ``1MiB``   bytes (K = KB = KiB = 1024)
bandwidth  ``100Gbps``, ``400Mbps``, ``12.5GB/s``           Gb/s (decimal: 1 Gbps = 10^9)
=========  ==============================================  ============================

A text that does not read raises :class:`~hypercuboid.errors.UnitError` (a ``ValueError``)
whose message names the text and what is accepted.
"""

from __future__ import annotations

from hypercuboid import _core


def parse_time(text: str) -> int:
    """A duration in whole picoseconds: ``parse_time("1.5us") == 1_500_000``."""
    return _core.parse_time(text)


def parse_time_f64(text: str) -> float:
    """A duration or a time per byte in picoseconds, fractions kept:
    ``parse_time_f64("0.4ps") == 0.4``."""
    return _core.parse_time_f64(text)


def parse_size(text: str) -> int:
    """A size in bytes: ``parse_size("7.5KB") == 7680``."""
    return _core.parse_size(text)


def parse_bandwidth(text: str) -> float:
    """A bandwidth in Gb/s: ``parse_bandwidth("12.5GB/s") == 100.0``."""
    return _core.parse_bandwidth(text)


def format_size(nbytes: int) -> str:
    """A byte count in the largest binary unit that holds it exactly: ``format_size(102400) ==
    "100KiB"``; :func:`parse_size` reads it back."""
    return _core.format_size(nbytes)


__all__ = ["format_size", "parse_bandwidth", "parse_size", "parse_time", "parse_time_f64"]


def format_time_exact(ps: int) -> str:
    """Whole picoseconds in the largest unit that holds them exactly, as specs are written:
    ``format_time_exact(20_000_000) == "20us"``; :func:`parse_time` reads it back."""
    return _core.format_time_exact(ps)

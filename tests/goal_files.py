"""Shared by the tests that simulate hand-written GOAL schedules."""

from __future__ import annotations

from hypercuboid.schedule import Schedule


def one_message(tmp_path, nbytes: int, nranks: int, src: int, dst: int, tag: int) -> Schedule:
    """A schedule of ``nranks`` ranks whose only op pair is ``nbytes`` from ``src`` to
    ``dst`` with ``tag`` (GOAL text in ``tmp_path``, read back)."""
    f = tmp_path / "one.goal"
    f.write_text(
        f"num_ranks {nranks}\n"
        f"rank {src} {{\nl0: send {nbytes}b to {dst} tag {tag}\n}}\n"
        f"rank {dst} {{\nl0: recv {nbytes}b from {src} tag {tag}\n}}\n"
    )
    return Schedule.read(f)

"""Where the benchmark scripts write: ``--out DIR`` (default ``out/`` in the current directory,
git-ignored at the repository's root, or ``$HYPERCUBOID_BENCH_OUT``), not the repository's
record ``benchmarks/results/``, which ``benchmarks/run.py`` (``make bench``) writes. An ``--out``
that ends in ``.json`` names the script's JSON file itself (as the scripts' ``--out FILE`` did).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

#: The default directory: ``$HYPERCUBOID_BENCH_OUT`` or ``out/`` in the current directory.
OUT = Path(os.environ.get("HYPERCUBOID_BENCH_OUT", "out"))


def add(ap: argparse.ArgumentParser, name: str) -> None:
    """Adds ``--out`` (the directory of the files, or the JSON file ``name`` itself)."""
    ap.add_argument(
        "--out",
        default=str(OUT),
        help=f"directory for the results ({name} there; default {OUT}/, or "
        "$HYPERCUBOID_BENCH_OUT); a name ending in .json is the JSON file itself",
    )


def path(out: str | Path, name: str) -> Path:
    """The file ``name`` of ``--out`` (or ``--out`` itself when it is a .json file), with its
    directory created."""
    p = Path(out) if str(out).endswith(".json") else Path(out) / name
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def directory(out: str | Path) -> Path:
    """The directory of ``--out`` (created) for a script's further files."""
    d = Path(out).parent if str(out).endswith(".json") else Path(out)
    d.mkdir(parents=True, exist_ok=True)
    return d


def write_json(out: str | Path, name: str, result: dict) -> Path:
    """Writes ``result`` after a ``machine`` key (CPUs, Python, platform) to the file ``name``
    of ``--out`` (indented by 2), says so, and returns its path."""
    p = path(out, name)
    machine = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    with open(p, "w", encoding="utf-8") as f:
        json.dump({"machine": machine, **result}, f, indent=2)
    print(f"wrote {p}")
    return p


def dump(path: Path, result: Any, indent: int = 1) -> Path:
    """Writes ``result`` as JSON (indented by ``indent``, ending in a newline) to ``path``, its
    directory created, says so, and returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=indent) + "\n")
    print(f"wrote {path}")
    return path


def timed(f: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median wall time of ``repeat`` calls of ``f`` (seconds) and its last result."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def table(columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Any]]) -> None:
    """Prints the columns' titles, a rule as long as that header, and ``rows``: each cell
    formatted with its column's spec (``"26"``: left-aligned in 26, ``">9"``: right-aligned
    in 9), one space apart."""

    def line(cells: Sequence[Any]) -> str:
        return " ".join(format(c, spec) for c, (_, spec) in zip(cells, columns, strict=True))

    head = line([title for title, _ in columns])
    print(head)
    print("-" * len(head))
    for r in rows:
        print(line(r))

"""Benchmark output: aligned tables, JSON, CSV and latency plots (plain Python, no MPI)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def human_bytes(n: int) -> str:
    """``8``, ``4K``, ``1M`` (binary multiples, exact only)."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def _fmt(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def table(rows: Sequence[dict], columns: Sequence[tuple[str, str, str]]) -> str:
    """An aligned text table; ``columns`` are ``(key, header, format spec)``; text columns
    are left-aligned, numbers right-aligned."""
    cells = [[h for _, h, _ in columns]]
    for r in rows:
        cells.append([_fmt(r.get(k), spec) for k, _, spec in columns])
    widths = [max(len(c[i]) for c in cells) for i in range(len(columns))]
    left = [
        all(isinstance(r.get(k), (str, bool)) or r.get(k) is None for r in rows)
        for k, _, _ in columns
    ]
    lines = []
    for c in cells:
        parts = [c[i].ljust(widths[i]) if left[i] else c[i].rjust(widths[i]) for i in range(len(c))]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _sweep_table(
    rows: Sequence[dict], columns: Sequence[tuple[str, str, str]], checked_columns: int
) -> str:
    """The table of a benchmark's rows with their ``bytes`` as a human ``size``; the last
    ``checked_columns`` of ``columns`` only where some row was checked (``valid`` set)."""
    shown = [{**r, "size": human_bytes(r["bytes"])} for r in rows]
    checked = any(r.get("valid") is not None for r in rows)
    return table(shown, columns if checked else columns[:-checked_columns])


# The columns every sweep table starts with: what ran, on which runner, at which size.
_SWEEP_COLUMNS = [("algorithm", "algorithm", ""), ("runner", "runner", ""), ("size", "size", "")]
_VALID = ("valid", "valid", "")

ALLREDUCE_COLUMNS = [
    *_SWEEP_COLUMNS,
    ("min_us", "min us", ".2f"),
    ("p25_us", "p25 us", ".2f"),
    ("median_us", "median us", ".2f"),
    ("p75_us", "p75 us", ".2f"),
    ("max_us", "max us", ".2f"),
    ("avg_us", "avg us", ".2f"),
    ("busbw_GBps", "busbw GB/s", ".3f"),
    _VALID,
    ("same_bits", "same bits", ""),
]


def allreduce_table(rows: Sequence[dict]) -> str:
    """The ``bench allreduce`` table (one line per size and algorithm)."""
    shown = [{**r, "same_bits": r.get("check", {}).get("identical_bits")} for r in rows]
    return _sweep_table(shown, ALLREDUCE_COLUMNS, checked_columns=2)


ALLTOALL_COLUMNS = [
    *_SWEEP_COLUMNS,
    ("avg_us", "avg latency us", ".2f"),
    ("min_us", "min latency us", ".2f"),
    ("max_us", "max latency us", ".2f"),
    ("iterations", "iterations", ""),
    _VALID,
]


def alltoall_table(rows: Sequence[dict]) -> str:
    """The ``bench alltoall`` table: ``osu_alltoall``'s columns (size in bytes per pair of
    ranks; average, minimum and maximum over the ranks of each rank's mean latency;
    iterations), one line per size and algorithm."""
    return _sweep_table(rows, ALLTOALL_COLUMNS, checked_columns=1)


def write_json(path: str | Path, obj: Any) -> None:
    """Writes ``obj`` as indented JSON."""
    Path(path).write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


def write_csv(path: str | Path, rows: Sequence[dict]) -> None:
    """Writes rows as CSV (nested values such as ``check`` are flattened as ``check.key``)."""
    flat = []
    for r in rows:
        f: dict = {}
        for k, v in r.items():
            if isinstance(v, dict):
                for k2, v2 in v.items():
                    f[f"{k}.{k2}"] = v2
            else:
                f[k] = v
        flat.append(f)
    keys: list[str] = []
    for f in flat:
        keys.extend(k for k in f if k not in keys)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(flat)


def plot_latency(
    rows: Sequence[dict],
    path: str | Path,
    *,
    title: str | None = None,
    x: str = "bytes",
    xlabel: str = "message size (bytes)",
) -> Path:
    """Median latency against size, one line per algorithm, log-log, with the p25–p75 band
    (the coursework seed's Fig. 3)."""
    from hypercuboid.plot import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    algs: list[str] = []
    for r in rows:
        if r["algorithm"] not in algs:
            algs.append(r["algorithm"])
    for alg in algs:
        rs = sorted((r for r in rows if r["algorithm"] == alg), key=lambda r: r[x])
        xs = [r[x] for r in rs]
        ax.plot(xs, [r["median_us"] for r in rs], marker="o", ms=3, label=alg)
        ax.fill_between(xs, [r["p25_us"] for r in rs], [r["p75_us"] for r in rs], alpha=0.2)
    ax.set_xscale("log", base=2)
    if x == "bytes":
        from matplotlib.ticker import FuncFormatter

        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda v, _: human_bytes(int(v)) if v >= 1 and v == int(v) else "")
        )
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("latency (µs, median; band p25–p75)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    fig.tight_layout()
    p = Path(path)
    fig.savefig(p)
    plt.close(fig)
    return p

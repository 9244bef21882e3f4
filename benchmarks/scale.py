"""The schedule simulator at whole-machine scale (issue 17, section 2): generate + simulate an
allreduce of 8 B on up to 2^24 ranks, each case in a fresh process (its own wall time and peak
resident memory), next to the postal closed form where one is exact.

Cases: recursive doubling, the binomial tree and factored recursive multiplying (radix 2, which
shares one program shape across ranks; radix 4, whose ranks have 3^stages shapes) under
``postal:alpha=1us,beta=1ns,gamma=1ns``, and recursive doubling and the binomial tree under
LogGOPS at 2^17 and 2^20 (the bars: the tree's generate + simulate in 0.030 s at 2^17 and
0.30 s at 2^20; recursive doubling 1.5 s and 600 MB at 2^20). Prints a table with the
schedule's size and the peak bytes per op, and merges its rows into
``benchmarks/results/scale.json`` (a row per algorithm, size and model: a run of
``--sizes 24`` keeps the 2^20 rows). Needs about 6 GB of memory at 2^24. ``--threads 1,0``
runs every case on one thread and with the engine's default (every core from 2^19 ops), one
after the other, and prints the ratio.

    .venv/bin/python benchmarks/scale.py [--sizes 17,20,24] [--threads 1,0]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import _out

POSTAL = "postal:alpha=1us,beta=1ns,gamma=1ns"
LOGGOPS = "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535"


def rm(radix: int, log2n: int) -> str:
    """Factored recursive multiplying of ``log2n`` bits in stages of ``radix``."""
    k = radix.bit_length() - 1
    return "recursive_multiplying:" + ",".join([f"a{radix}"] * (log2n // k))


CHILD = r"""
import json, os, resource, sys, time
# numpy's OpenBLAS worker busy-waits for 60-100 ms after the import and slows the engine
# (docs/performance.md, "A thread that is not ours"); the simulators use no BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import hypercuboid as hc
from hypercuboid import _core
from hypercuboid.errors import ScheduleError
alg, n, model, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
s = hc.schedules.allreduce(alg, n, 1, dtype="int64")
t1 = time.perf_counter()
r = s.simulate(model, threads=threads)
t2 = time.perf_counter()
closed = None
if model.startswith("postal:"):
    try:
        closed = _core.allreduce_cost(alg, n, 1, "int64", 1_000_000, 1000.0, 1000.0)
    except ScheduleError:
        pass
print(json.dumps({
    "generate_s": t1 - t0, "simulate_s": t2 - t1, "total_s": t2 - t0,
    "ops": r.ops, "messages": r.messages, "completion_ps": r.completion_time_ps,
    "closed_form_ps": closed, "schedule_mb": s.memory_bytes / 2**20,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "threads": r.threads,
}))
"""


def cases(sizes: list[int]) -> list[tuple[str, int, str]]:
    out = []
    for log2n in sizes:
        if log2n in (17, 20):
            out += [("recursive_doubling", log2n, LOGGOPS), ("tree", log2n, LOGGOPS)]
        out += [
            ("recursive_doubling", log2n, POSTAL),
            ("tree", log2n, POSTAL),
            (rm(2, log2n), log2n, POSTAL),
        ]
        if log2n <= 20 and log2n % 2 == 0:  # radix-4 stages need an even exponent
            out.append((rm(4, log2n), log2n, POSTAL))
    return out


def run(alg: str, log2n: int, model: str, threads: int) -> dict:
    n = 1 << log2n
    p = subprocess.run(
        [sys.executable, "-c", CHILD, alg, str(n), model, str(threads)],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        raise SystemExit(f"{alg} on 2^{log2n} ranks failed: {p.stderr.strip()[-400:]}")
    row = {"algorithm": alg, "log2n": log2n, "nranks": n, "model": model, **json.loads(p.stdout)}
    row["asked_threads"] = threads
    row["closed_form_equal"] = (
        None if row["closed_form_ps"] is None else row["closed_form_ps"] == row["completion_ps"]
    )
    row["bytes_per_op"] = row["peak_rss_mb"] * 2**20 / row["ops"]
    row["load"] = os.getloadavg()[0]
    return row


def short(alg: str) -> str:
    if alg.startswith("recursive_multiplying:"):
        stages = alg.split(":")[1].split(",")
        return f"rm {stages[0]} x{len(stages)}"
    return alg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,24", help="log2 of the rank counts")
    ap.add_argument(
        "--threads",
        default="0",
        help="thread counts to run each case on, one after the other (0: the engine's default)",
    )
    _out.add(ap, "scale.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "scale.json")
    asked = [int(t) for t in args.threads.split(",")]
    print(
        f"{'algorithm':20} {'model':8} {'ranks':>6} {'ops':>13} {'thr':>3} {'generate s':>10} "
        f"{'simulate s':>10} {'total s':>8} {'peak MB':>8} {'sched MB':>8} {'B/op':>5} "
        f"{'closed form':>11} {'load':>5}"
    )
    rows = []
    for alg, log2n, model in cases([int(k) for k in args.sizes.split(",")]):
        first = None
        for threads in asked:
            row = run(alg, log2n, model, threads)
            rows.append(row)
            eq = {None: "-", True: "equal", False: "DIFFERENT"}[row["closed_form_equal"]]
            if first is not None and row["completion_ps"] != first["completion_ps"]:
                eq = "THREADS DIFFER"
                row["closed_form_equal"] = False
            print(
                f"{short(alg):20} {model.split(':')[0]:8} {'2^' + str(log2n):>6} "
                f"{row['ops']:>13,} {row['threads']:>3} "
                f"{row['generate_s']:10.4f} {row['simulate_s']:10.3f} {row['total_s']:8.3f} "
                f"{row['peak_rss_mb']:8.0f} {row['schedule_mb']:8.1f} {row['bytes_per_op']:5.1f} "
                f"{eq:>11} {row['load']:5.1f}",
                flush=True,
            )
            if first is None:
                first = row
            else:
                ratio = first["simulate_s"] / row["simulate_s"]
                print(f"{'':20} simulate on {row['threads']} thread(s): {ratio:.2f}x", flush=True)
    out = Path(args.out)
    out.parent.mkdir(exist_ok=True)
    key = lambda r: (r["algorithm"], r["log2n"], r["model"], r.get("asked_threads", 0))  # noqa: E731
    new = {key(r) for r in rows}
    kept = json.loads(out.read_text())["rows"] if out.exists() else []
    merged = [r for r in kept if key(r) not in new] + rows
    merged.sort(key=lambda r: (r["log2n"], r["model"] != LOGGOPS))
    out.write_text(
        json.dumps(
            {"machine": platform.machine(), "cpus": os.cpu_count(), "rows": merged}, indent=2
        )
        + "\n"
    )
    print(f"wrote {out}")
    if any(r["closed_form_equal"] is False for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()

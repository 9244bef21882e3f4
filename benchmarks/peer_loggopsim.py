"""LogGOPSim and hypercuboid side by side on the same schedules (the LogGOPSim part of
``benchmarks/peers.py``).

Each case is an allreduce of 8 B (one int64) that hypercuboid generates; its GOAL export goes
through LogGOPSim's ``txt2bin`` and both simulators run it under the same LogGOPS parameters
(``L=3000,o=1500,g=1000,G=6``, ``O=0``, ``S=65535``; hypercuboid with ``order=gcc``, a stock
build's issue order) in the same benchmark run, one after the other. Every run is a fresh
process whose wall time and peak resident memory are its own (``os.wait4``). hypercuboid's
time is generate + simulate (and simulate alone); LogGOPSim's is its simulation of the binary
schedule, with ``txt2bin`` apart. Events per second are each
simulator's own count (hypercuboid: ops executed + messages delivered; LogGOPSim: its
``Events``, which also counts an op tried again when its CPU or NIC was busy). Both completion
times must be equal.

LogGOPSim (spcl/LogGOPSim, public) is built outside this repository and never copied into it:
set ``LOGGOPSIM`` (its binary) and ``TXT2BIN`` (default: the ``txt2bin`` beside it), or
``LOGGOPSIM_SRC`` to a checkout, which ``benchmarks/loggopsim_order.py``'s ``build`` copies to
``$TMPDIR/hypercuboid-loggopsim/`` and builds with ``make`` (needs g++, gengetopt, re2c and
libcgraph). Without either, only hypercuboid runs and the table says so.

    .venv/bin/python benchmarks/peer_loggopsim.py [--sizes 17,20] [--algorithms tree]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _out

PARAMS = {"L": 3000, "o": 1500, "g": 1000, "G": 6, "O": 0, "S": 65535}
#: ``order=gcc``: ops freed together issue in the order a stock LogGOPSim's ``std::sort`` leaves
#: them (the binomial tree's root frees log2 N > 16 sends at once; docs/simulate.md).
MODEL = "loggops:" + ",".join(f"{k}={v}" for k, v in PARAMS.items()) + ",order=gcc"
ALGORITHMS = ("recursive_doubling", "tree")
SIZES = (17, 20)

#: hypercuboid in a fresh process: generate, simulate, report, then (outside the measurement)
#: write the GOAL export for LogGOPSim.
CHILD = r"""
import json, os, resource, sys, time
# numpy's OpenBLAS worker busy-waits for 60-100 ms after the import and slows the engine
# (docs/performance.md, "A thread that is not ours"); the simulators use no BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import hypercuboid as hc
alg, n, model, goal = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
t0 = time.perf_counter()
s = hc.schedules.allreduce(alg, n, 1, dtype="int64")
t1 = time.perf_counter()
r = s.simulate(model)
t2 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({
    "generate_s": t1 - t0, "simulate_s": t2 - t1, "peak_rss_mb": rss,
    "ops": r.ops, "messages": r.messages, "completion_ns": r.completion_time_ns,
    "threads": r.threads,
}), flush=True)
if goal:
    s.save(goal, format="goal")
"""


@dataclass
class Loggopsim:
    """A LogGOPSim build: its simulator and its ``txt2bin``."""

    binary: Path
    txt2bin: Path
    origin: str


@dataclass
class Run:
    """A child process's wall time, peak resident memory and standard output."""

    wall_s: float
    peak_rss_mb: float
    stdout: str


def find_loggopsim() -> Loggopsim | None:
    """The build the environment names (``LOGGOPSIM`` [+ ``TXT2BIN``] or ``LOGGOPSIM_SRC``)."""
    if os.environ.get("LOGGOPSIM"):
        binary = Path(os.environ["LOGGOPSIM"])
        txt2bin = Path(os.environ.get("TXT2BIN", binary.parent / "txt2bin"))
        for p in (binary, txt2bin):
            if not p.is_file():
                raise SystemExit(f"LOGGOPSIM / TXT2BIN: {p} does not exist")
        return Loggopsim(binary, txt2bin, f"LOGGOPSIM={binary}")
    if os.environ.get("LOGGOPSIM_SRC"):
        sys.path.insert(0, str(Path(__file__).parent))
        from loggopsim_order import build

        b = build(Path(os.environ["LOGGOPSIM_SRC"]), "stock")
        return Loggopsim(
            b.binary, b.txt2bin, f"built from LOGGOPSIM_SRC={os.environ['LOGGOPSIM_SRC']}"
        )
    return None


def measured(args: list[str]) -> Run:
    """Runs ``args`` to completion: wall time, peak RSS (this child's alone) and its output."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(args, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise SystemExit(
                f"{' '.join(args[:3])} ... failed ({p.returncode}): {err.read()[-500:]}"
            )
        return Run(wall, usage.ru_maxrss / 1024, out.read())


def ours(alg: str, n: int, goal: Path | None) -> dict:
    run = measured([sys.executable, "-c", CHILD, alg, str(n), MODEL, str(goal or "")])
    row = json.loads(run.stdout.splitlines()[0])
    row["total_s"] = row["generate_s"] + row["simulate_s"]
    row["events"] = row["ops"] + row["messages"]
    row["events_per_s"] = row["events"] / row["simulate_s"]
    return row


def theirs(lgs: Loggopsim, goal: Path) -> dict:
    binfile = goal.with_suffix(".bin")
    conv = measured([str(lgs.txt2bin), "-i", str(goal), "-o", str(binfile)])
    args = [str(lgs.binary), "-f", str(binfile), "-b"]
    for k, v in PARAMS.items():
        args += [f"-{k}", str(v)]
    sim = measured(args)
    binfile.unlink()
    done = re.search(r"^Maximum finishing time at host \d+: (\d+)", sim.stdout, re.M)
    events = re.search(r"Events: (\d+)", sim.stdout)
    if not done or not events:
        raise SystemExit(f"{lgs.binary} printed no finishing time or event count:\n{sim.stdout}")
    return {
        "simulate_s": sim.wall_s,
        "peak_rss_mb": sim.peak_rss_mb,
        "txt2bin_s": conv.wall_s,
        "txt2bin_rss_mb": conv.peak_rss_mb,
        "events": int(events.group(1)),
        "events_per_s": int(events.group(1)) / sim.wall_s,
        "completion_ns": float(done.group(1)),
    }


def run(
    algorithms: tuple[str, ...] = ALGORITHMS,
    sizes: tuple[int, ...] = SIZES,
    repeat: int = 1,
    log=print,
) -> dict:
    """Runs every case (``repeat`` times each, side by side; the fastest of each kept) and
    returns the ``"loggopsim"`` record of ``benchmarks/results/peers.json``; ``log`` gets the
    table's lines as they come."""
    lgs = find_loggopsim()
    if lgs is None:
        log(
            "LogGOPSim: not found (set LOGGOPSIM [and TXT2BIN] to a build, or LOGGOPSIM_SRC to "
            "a checkout of spcl/LogGOPSim; docs/performance.md, section Scale): hypercuboid alone"
        )
    else:
        log(f"LogGOPSim: {lgs.origin}")
    log(f"allreduce of 8 B under {MODEL}; best of {repeat}; load {os.getloadavg()[0]:.1f}")
    log(header())
    work = Path(tempfile.mkdtemp(prefix="hc-peers-"))
    rows = []
    try:
        for alg in algorithms:
            for log2n in sizes:
                n = 1 << log2n
                best: dict = {}
                for _ in range(repeat):
                    goal = work / f"{alg}_{n}.goal" if lgs else None
                    o = ours(alg, n, goal)
                    t = theirs(lgs, goal) if lgs and goal else None
                    if goal:
                        goal.unlink()
                    if not best or o["total_s"] < best["ours"]["total_s"]:
                        best["ours"] = o
                    if t and (
                        "theirs" not in best or t["simulate_s"] < best["theirs"]["simulate_s"]
                    ):
                        best["theirs"] = t
                row = {"algorithm": alg, "nranks": n, "load": os.getloadavg()[0], **best}
                if "theirs" in best:
                    th, o = best["theirs"], best["ours"]
                    row["speedup_total"] = th["simulate_s"] / o["total_s"]
                    row["speedup_simulate"] = th["simulate_s"] / o["simulate_s"]
                    row["same_completion"] = th["completion_ns"] == o["completion_ns"]
                rows.append(row)
                log(line(row))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout if lgs else ""
    return {
        "model": MODEL,
        "loggopsim": lgs.origin if lgs else None,
        "compiler": gxx.splitlines()[0] if gxx else None,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "repeat": repeat,
        "rows": rows,
    }


def header() -> str:
    return (
        f"{'case':20} {'ranks':>8} | {'thr':>3} {'ours s':>7} {'sim s':>6} {'MB':>5} "
        f"{'Mev/s':>6} | "
        f"{'theirs s':>8} {'txt2bin':>7} {'MB':>5} {'Mev/s':>6} | {'ratio':>6} {'sim ratio':>9} | "
        f"{'ours ns':>10} {'theirs ns':>10} {'same':>4}"
    )


def line(row: dict) -> str:
    o = row["ours"]
    text = (
        f"{row['algorithm']:20} {row['nranks']:>8} | {o.get('threads', 1):>3} "
        f"{o['total_s']:7.2f} {o['simulate_s']:6.2f} "
        f"{o['peak_rss_mb']:5.0f} {o['events_per_s'] / 1e6:6.1f} | "
    )
    th = row.get("theirs")
    if th is None:
        return (
            text
            + f"{'-':>8} {'-':>7} {'-':>5} {'-':>6} | {'-':>6} {'-':>9} | "
            + f"{o['completion_ns']:10.0f} {'-':>10} {'-':>4}"
        )
    same = "yes" if row["same_completion"] else "NO"
    return text + (
        f"{th['simulate_s']:8.2f} {th['txt2bin_s']:7.2f} {th['peak_rss_mb']:5.0f} "
        f"{th['events_per_s'] / 1e6:6.2f} | "
        f"{row['speedup_total']:5.1f}x {row['speedup_simulate']:8.1f}x | "
        f"{o['completion_ns']:10.0f} {th['completion_ns']:10.0f} {same:>4}"
    )


def save(record: dict, path: Path) -> None:
    """Stores ``record`` under ``"loggopsim"`` in ``path``, keeping the file's other keys."""
    data = json.loads(path.read_text()) if path.is_file() else {}
    data["loggopsim"] = record
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="log2 of the rank counts")
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS))
    ap.add_argument("--repeat", type=int, default=1)
    _out.add(ap, "peers.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "peers.json")
    record = run(
        tuple(args.algorithms.split(",")),
        tuple(int(k) for k in args.sizes.split(",")),
        args.repeat,
    )
    save(record, Path(args.out))
    print(f"wrote {args.out}")
    bad = [r for r in record["rows"] if "theirs" in r and not r["same_completion"]]
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()

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
times must be equal. Ratios: ``ratio`` is LogGOPSim's wall time over ours (generate +
simulate), ``cpu`` its CPU time (user + system) over ours (every thread's): on a shared
machine the wall times depend on the load, the CPU times less (but they do: shared caches).

LogGOPSim (spcl/LogGOPSim, public) is built outside this repository and never copied into it,
as its users would build it for speed: ``-O3`` (its own Makefile compiles ``-O0 -g``, about three
times slower; issue 37). The ratios are to the ``-O3`` build; the ``-O0 -g`` build, when given,
is a second column. Set ``LOGGOPSIM`` to the ``-O3`` binary (``TXT2BIN``: default the ``txt2bin``
beside it; a binary whose debug information says ``-O0`` is refused) and optionally
``LOGGOPSIM_O0`` to the Makefile's build; or ``LOGGOPSIM_SRC`` to a checkout, which this script
copies to ``$TMPDIR/hypercuboid-loggopsim/`` and builds both ways (needs g++, make, gengetopt,
re2c and libcgraph; Debian: ``gengetopt re2c libgraphviz-dev``)::

    cp -r LogGOPSim/src/LogGOPSim lgs-o3 && make -C lgs-o3 \\
        CXXFLAGS="-std=c++11 -O3 -DNDEBUG -Wno-deprecated" CCFLAGS=-O3      # the -O3 build
    cp -r LogGOPSim/src/LogGOPSim lgs-o0 && make -C lgs-o0                 # the -O0 -g build

Without either, only hypercuboid runs and the table says so.

    .venv/bin/python benchmarks/peer_loggopsim.py [--sizes 17,20] [--algorithms tree]
"""

from __future__ import annotations

import argparse
import hashlib
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
threads = int(sys.argv[5]) if sys.argv[5] else None
def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime
c0, t0 = cpu(), time.perf_counter()
s = hc.schedules.allreduce(alg, n, 1, dtype="int64")
t1 = time.perf_counter()
r = s.simulate(model, threads=threads)
t2, c2 = time.perf_counter(), cpu()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({
    "generate_s": t1 - t0, "simulate_s": t2 - t1, "cpu_s": c2 - c0, "peak_rss_mb": rss,
    "ops": r.ops, "messages": r.messages, "completion_ns": r.completion_time_ns,
    "threads": r.threads,
}), flush=True)
if goal:
    s.save(goal, format="goal")
"""


#: The two builds: ``make`` variables over LogGOPSim's own Makefile (none: its ``-O0 -g``).
BUILDS = {
    "O3": ["CXXFLAGS=-std=c++11 -O3 -DNDEBUG -Wno-deprecated", "CCFLAGS=-O3"],
    "O0": [],
}


@dataclass
class Loggopsim:
    """A LogGOPSim build: its simulator, its ``txt2bin``, where it came from and its flags."""

    binary: Path
    txt2bin: Path
    origin: str
    flags: str


@dataclass
class Run:
    """A child process's wall time, peak resident memory and standard output."""

    wall_s: float
    peak_rss_mb: float
    #: User + system CPU time (every thread's).
    cpu_s: float
    stdout: str


def unoptimised(binary: Path) -> bool:
    """Whether ``binary``'s debug information says it was compiled ``-O0`` (GCC records its
    flags in each unit's DWARF producer string; an ``-O3`` build without ``-g`` has none)."""
    return re.search(rb"GNU C[^\0]{0,400} -O0", binary.read_bytes()) is not None


def build(src: Path, kind: str) -> Loggopsim:
    """Copies the LogGOPSim sources of checkout ``src`` to ``$TMPDIR/hypercuboid-loggopsim/``
    and builds them ``kind`` (``O3`` or ``O0``, :data:`BUILDS`), once per source and kind."""
    folder = src / "src" / "LogGOPSim" if (src / "src" / "LogGOPSim").is_dir() else src
    if not (folder / "LogGOPSim.cpp").is_file():
        raise SystemExit(f"LOGGOPSIM_SRC={src}: no LogGOPSim.cpp in {folder}")
    digest = hashlib.sha256()
    for f in sorted(folder.iterdir()):
        if f.is_file():
            digest.update(f.name.encode() + b"\0" + f.read_bytes())
    root = (
        Path(tempfile.gettempdir()) / "hypercuboid-loggopsim" / f"{kind}-{digest.hexdigest()[:12]}"
    )
    if not (root / "LogGOPSim").is_file() or not (root / "txt2bin").is_file():
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(folder, root)
        r = subprocess.run(["make", *BUILDS[kind]], cwd=root, capture_output=True, text=True)
        if r.returncode != 0:
            tail = (r.stderr or r.stdout).strip().splitlines()[-1:]
            raise SystemExit(
                f"building LogGOPSim -{kind} in {root} failed: {' '.join(tail)}; it needs g++, "
                "make, gengetopt, re2c and libcgraph (Debian: gengetopt re2c libgraphviz-dev)"
            )
    flags = " ".join(BUILDS[kind]) or "its Makefile (-O0 -g)"
    return Loggopsim(root / "LogGOPSim", root / "txt2bin", f"built from {src}", flags)


def given(var: str) -> Loggopsim | None:
    """The build environment variable ``var`` names (with ``TXT2BIN`` or the ``txt2bin``
    beside it), if set."""
    if not os.environ.get(var):
        return None
    binary = Path(os.environ[var])
    txt2bin = Path(os.environ.get("TXT2BIN", binary.parent / "txt2bin"))
    for p in (binary, txt2bin):
        if not p.is_file():
            raise SystemExit(f"{var} / TXT2BIN: {p} does not exist")
    o0 = unoptimised(binary)
    if var == "LOGGOPSIM" and o0:
        raise SystemExit(
            f"LOGGOPSIM={binary} was compiled -O0 (its debug information says so): the ratios "
            "are to an -O3 build (see this script's docstring); give this one as LOGGOPSIM_O0"
        )
    flags = "-O0 -g" if o0 else "optimised (no -O0 in its debug information)"
    return Loggopsim(binary, txt2bin, f"{var}={binary}", flags)


def find_loggopsim() -> tuple[Loggopsim | None, Loggopsim | None]:
    """The ``-O3`` build and the ``-O0 -g`` build the environment names or builds (``LOGGOPSIM``,
    ``LOGGOPSIM_O0``, or both from ``LOGGOPSIM_SRC``); either may be ``None``."""
    o3, o0 = given("LOGGOPSIM"), given("LOGGOPSIM_O0")
    src = os.environ.get("LOGGOPSIM_SRC")
    if src:
        o3 = o3 or build(Path(src), "O3")
        o0 = o0 or build(Path(src), "O0")
    if o0 is not None and o3 is None:
        raise SystemExit("LOGGOPSIM_O0 is a second column: set LOGGOPSIM to an -O3 build too")
    return o3, o0


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
        cpu = usage.ru_utime + usage.ru_stime
        return Run(wall, usage.ru_maxrss / 1024, cpu, out.read())


def ours(alg: str, n: int, goal: Path | None, threads: int | None = None) -> dict:
    """hypercuboid in a fresh process (:data:`CHILD`) on ``threads`` engine threads (``None``:
    the engine's choice, every core from 2^19 ops)."""
    args = [alg, str(n), MODEL, str(goal or ""), "" if threads is None else str(threads)]
    run = measured([sys.executable, "-c", CHILD, *args])
    row = json.loads(run.stdout.splitlines()[0])
    row["total_s"] = row["generate_s"] + row["simulate_s"]
    row["events"] = row["ops"] + row["messages"]
    row["events_per_s"] = row["events"] / row["simulate_s"]
    return row


def convert(lgs: Loggopsim, goal: Path) -> tuple[Path, Run]:
    """``goal`` through LogGOPSim's ``txt2bin``: the binary schedule and the conversion's run."""
    binfile = goal.with_suffix(".bin")
    return binfile, measured([str(lgs.txt2bin), "-i", str(goal), "-o", str(binfile)])


def theirs(lgs: Loggopsim, binfile: Path, conv: Run) -> dict:
    args = [str(lgs.binary), "-f", str(binfile), "-b"]
    for k, v in PARAMS.items():
        args += [f"-{k}", str(v)]
    sim = measured(args)
    done = re.search(r"^Maximum finishing time at host \d+: (\d+)", sim.stdout, re.M)
    events = re.search(r"Events: (\d+)", sim.stdout)
    if not done or not events:
        raise SystemExit(f"{lgs.binary} printed no finishing time or event count:\n{sim.stdout}")
    return {
        "simulate_s": sim.wall_s,
        "cpu_s": sim.cpu_s,
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
    o0_sizes: tuple[int, ...] | None = None,
    threads: int | None = None,
) -> dict:
    """Runs every case (``repeat`` times each, side by side: ours, LogGOPSim ``-O3``, LogGOPSim
    ``-O0``, this one only at ``o0_sizes``, default every size: it is slow; the fastest of each
    kept; ours on ``threads`` engine threads, ``None`` for the engine's choice) and returns the
    ``"loggopsim"`` record of
    ``benchmarks/results/peers.json``; ``log`` gets the table's lines as they come."""
    o3, o0 = find_loggopsim()
    builds = {"theirs": o3, "theirs_o0": o0}
    builds = {k: b for k, b in builds.items() if b is not None}
    if o3 is None:
        log(
            "LogGOPSim: not found (set LOGGOPSIM to an -O3 build [and LOGGOPSIM_O0 to its "
            "Makefile's], or LOGGOPSIM_SRC to a checkout of spcl/LogGOPSim): hypercuboid alone"
        )
    for key, b in builds.items():
        log(f"LogGOPSim {'-O3' if key == 'theirs' else '-O0'}: {b.origin} ({b.flags})")
    log(f"allreduce of 8 B under {MODEL}; best of {repeat}; load {os.getloadavg()[0]:.1f}")
    log(header())
    work = Path(tempfile.mkdtemp(prefix="hc-peers-"))
    rows = []
    try:
        for alg in algorithms:
            for log2n in sizes:
                n = 1 << log2n
                best: dict = {}
                loads = []
                for _ in range(repeat):
                    loads.append(os.getloadavg()[0])
                    goal = work / f"{alg}_{n}.goal" if o3 else None
                    o = ours(alg, n, goal, threads)
                    if not best or o["total_s"] < best["ours"]["total_s"]:
                        best["ours"] = o
                    if goal is None:
                        continue
                    binfile, conv = convert(o3, goal)
                    goal.unlink()
                    for key, b in builds.items():
                        if key == "theirs_o0" and o0_sizes is not None and log2n not in o0_sizes:
                            continue
                        t = theirs(b, binfile, conv)
                        if key not in best or t["simulate_s"] < best[key]["simulate_s"]:
                            best[key] = t
                    binfile.unlink()
                row = {"algorithm": alg, "nranks": n, "load": [min(loads), max(loads)], **best}
                o = best["ours"]
                for key, suffix in (("theirs", ""), ("theirs_o0", "_o0")):
                    if key in best:
                        th = best[key]
                        row["speedup_total" + suffix] = th["simulate_s"] / o["total_s"]
                        row["speedup_simulate" + suffix] = th["simulate_s"] / o["simulate_s"]
                        row["speedup_cpu" + suffix] = th["cpu_s"] / o["cpu_s"]
                        row["same_completion" + suffix] = th["completion_ns"] == o["completion_ns"]
                rows.append(row)
                log(line(row))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout if o3 else ""
    return {
        "model": MODEL,
        "loggopsim": o3.origin if o3 else None,
        "loggopsim_flags": o3.flags if o3 else None,
        "loggopsim_o0": o0.origin if o0 else None,
        "loggopsim_o0_flags": o0.flags if o0 else None,
        "compiler": gxx.splitlines()[0] if gxx else None,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "repeat": repeat,
        "threads_asked": threads,
        "rows": rows,
    }


def header() -> str:
    return (
        f"{'case':18} {'ranks':>8} | {'thr':>3} {'ours s':>6} {'sim s':>6} {'MB':>5} "
        f"{'Mev/s':>6} | {'-O3 s':>6} {'MB':>5} {'Mev/s':>6} {'ratio':>6} {'cpu':>6} | "
        f"{'-O0 s':>7} {'Mev/s':>6} {'ratio':>6} | {'ours ns':>8} {'theirs ns':>9} {'same':>4}"
    )


def line(row: dict) -> str:
    o = row["ours"]
    text = (
        f"{row['algorithm']:18} {row['nranks']:>8} | {o.get('threads', 1):>3} "
        f"{o['total_s']:6.2f} {o['simulate_s']:6.2f} "
        f"{o['peak_rss_mb']:5.0f} {o['events_per_s'] / 1e6:6.1f} | "
    )
    th, t0 = row.get("theirs"), row.get("theirs_o0")
    if th is None:
        text += f"{'-':>6} {'-':>5} {'-':>6} {'-':>6} {'-':>6} | "
    else:
        text += (
            f"{th['simulate_s']:6.2f} {th['peak_rss_mb']:5.0f} {th['events_per_s'] / 1e6:6.2f} "
            f"{row['speedup_total']:5.1f}x {row['speedup_cpu']:5.1f}x | "
        )
    if t0 is None:
        text += f"{'-':>7} {'-':>6} {'-':>6} | "
    else:
        text += (
            f"{t0['simulate_s']:7.2f} {t0['events_per_s'] / 1e6:6.2f} "
            f"{row['speedup_total_o0']:5.1f}x | "
        )
    text += f"{o['completion_ns']:8.0f} "
    if th is None:
        return text + f"{'-':>9} {'-':>4}"
    return text + f"{th['completion_ns']:9.0f} {'yes' if agree(row) else 'NO':>4}"


def agree(row: dict) -> bool:
    """Whether every LogGOPSim build of ``row`` gave hypercuboid's completion time."""
    return all(row.get(k, True) for k in ("same_completion", "same_completion_o0"))


def save(record: dict, path: Path) -> None:
    """Stores ``record`` under ``"loggopsim"`` in ``path``, keeping the file's other keys."""
    data = json.loads(path.read_text()) if path.is_file() else {}
    data["loggopsim"] = record
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _log2_list(text: str) -> tuple[int, ...]:
    """A comma-separated list of log2 rank counts (``17,20``); ``none`` is the empty list."""
    if text.strip().lower() == "none":
        return ()
    try:
        sizes = tuple(int(k) for k in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected log2 rank counts such as 17,20 (or none)"
        ) from None
    if any(not 1 <= k <= 30 for k in sizes):
        raise argparse.ArgumentTypeError(f"{text!r}: each log2 rank count must be 1 to 30")
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes",
        type=_log2_list,
        default=SIZES,
        help="log2 of the rank counts, comma-separated",
    )
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument(
        "--o0-sizes",
        type=_log2_list,
        default=None,
        help="sizes that also run the -O0 build (default: all; none: no -O0 runs)",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="hypercuboid's engine threads (default: its choice, every core from 2^19 ops)",
    )
    _out.add(ap, "peers.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "peers.json")
    record = run(
        tuple(args.algorithms.split(",")),
        tuple(args.sizes),
        args.repeat,
        o0_sizes=args.o0_sizes,
        threads=args.threads,
    )
    save(record, Path(args.out))
    print(f"wrote {args.out}")
    bad = [r for r in record["rows"] if not agree(r)]
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()

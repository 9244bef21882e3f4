"""BookSim2 and hypercuboid's packet engine side by side on one network, in one run.

The case (issue 17): the seed's Slim Fly (``slimfly:q=13,p=9``, 338 routers, 3042 endpoints),
uniform random traffic at 30 % offered load, minimal routing. BookSim2 reads our anynet export
of the network (``hypercuboid topo export --format anynet``) and runs its input-queued router
with 1-flit packets and 4 VCs of ``--vc-buf`` flits each (100 by default: our 100 KB buffer per
port holds 400 packets of 256 B, split over 4 VCs); hypercuboid runs its packet engine on the
same topology (packets of 256 B, virtual cut-through, 200 us simulated, the first tenth a
warm-up) with one thread and with two. Both rates count the unit each simulator moves:
BookSim2's flits per second of its own measured simulation time (``Total run time``, without
reading the network), ours the delivered packets per second of engine time. One packet is one
flit in both runs, so the ratio compares like with like. BookSim2 runs ``--cycles`` cycles
(plus its drain), so that the benchmark stays within minutes: its rate does not depend on the
run length once the network is loaded.

Each simulator runs in a child process of its own, whose peak resident memory comes from
``wait4``. ``--repeat`` runs every row that many times, alternately, and keeps the fastest.

BookSim2 is not part of this repository: build it from its public source (booksim/booksim2,
``cd src && make``, needs g++, flex and bison) and give the binary in ``BOOKSIM``. Without it
the script says so and runs ours alone.

    BOOKSIM=/path/to/booksim2/src/booksim \\
        python benchmarks/peer_booksim.py [--cycles 2000] [--threads 1,2] [--repeat 1]

:func:`run` returns the rows as a dict; ``benchmarks/peers.py`` stores it in
``benchmarks/results/peers.json`` (key ``booksim``). Run alone, this script prints the table
and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOPOLOGY = "slimfly:q=13,p=9"
ROUTING = "min"
LOAD = 0.3

# One hypercuboid run in a child process: prints its figures as JSON on the last line.
_OURS = """
import json, os, sys, time
# numpy's OpenBLAS worker busy-waits for 60-100 ms after the import and slows the engine
# (docs/performance.md, "A thread that is not ours"); the simulators use no BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from hypercuboid import netsim, units
from hypercuboid.topology import generate
a = json.loads(sys.argv[1])
t = time.perf_counter()
topo = generate(a["topology"])
warmup = units.format_time_exact(units.parse_time(a["duration"]) // 10)
r = netsim.run(topo, a["routing"], "uniform", a["load"], duration=a["duration"],
               warmup=warmup, threads=a["threads"])
print(json.dumps({"engine_seconds": r.wall_seconds, "delivered": r.delivered_total,
                  "threads": r.threads, "accepted": r.accepted, "events": r.events,
                  "latency_avg_ns": r.latency_avg_ns, "hops_avg": r.hops_avg,
                  "total_seconds": time.perf_counter() - t}))
"""


def _child(
    cmd: list[str], cwd: str | None = None, ok: tuple[int, ...] = (0,)
) -> tuple[str, float, float, float]:
    """Runs ``cmd``; returns its standard output, its wall seconds, its CPU seconds (user and
    system) and its peak resident memory in MB (``wait4``'s usage of this child alone).
    Raises with its error output if it exits with a status not in ``ok``."""
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
    if p.returncode not in ok:
        tail = (errors or text).strip().splitlines()[-5:]
        raise RuntimeError(f"{cmd[0]} exited with {p.returncode}: " + " | ".join(tail))
    return text, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def run_ours(topology: str, routing: str, load: float, duration: str, threads: int) -> dict:
    """One run of hypercuboid's packet engine in a child process."""
    args = {
        "topology": topology,
        "routing": routing,
        "load": load,
        "duration": duration,
        "threads": threads,
    }
    text, wall, cpu, rss = _child([sys.executable, "-c", _OURS, json.dumps(args)])
    r = json.loads(text.strip().splitlines()[-1])
    r.update(process_seconds=wall, cpu_seconds=cpu, peak_rss_mb=rss)
    r["rate"] = r["delivered"] / r["engine_seconds"]
    return r


def booksim_config(network_file: str, load: float, cycles: int, vcs: int, vc_buf: int) -> str:
    """BookSim2's configuration for the case: anynet ``network_file``, minimal routing,
    uniform traffic at ``load`` flits per cycle per node, 1-flit packets, ``vcs`` VCs of
    ``vc_buf`` flits; one warm-up period and one measured period of ``cycles / 2`` each, then
    its drain."""
    half = max(1, cycles // 2)
    return (
        "topology = anynet;\n"
        f"network_file = {network_file};\n"
        "routing_function = min;\n"
        "traffic = uniform;\n"
        f"injection_rate = {load};\n"
        "packet_size = 1;\n"
        f"num_vcs = {vcs};\n"
        f"vc_buf_size = {vc_buf};\n"
        "sim_type = latency;\n"
        "warmup_periods = 1;\n"
        f"sample_period = {half};\n"
        "max_samples = 2;\n"
        "seed = 1;\n"
    )


def run_booksim(
    binary: str, network_file: str, nodes: int, load: float, cycles: int, vcs: int, vc_buf: int
) -> dict:
    """One run of BookSim2 in a child process on ``network_file``; its flits are its cycles
    times the flits per cycle its nodes accepted in the measured period."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "booksim.cfg"
        cfg.write_text(booksim_config(network_file, load, cycles, vcs, vc_buf))
        # BookSim2's main returns -1 (status 255) when its simulation succeeded, 0 when not.
        text, wall, cpu, rss = _child([binary, str(cfg)], cwd=tmp, ok=(255,))
    ran = re.search(r"Time taken is (\d+) cycles", text)
    sim = re.search(r"Total run time ([0-9.eE+-]+)", text)
    acc = re.findall(r"Accepted flit rate average = ([0-9.eE+-]+)", text)
    if not (ran and sim and acc):
        raise RuntimeError(
            f"{binary}: no 'Time taken', 'Total run time' or 'Accepted flit rate average' "
            "in its output; is it BookSim2?"
        )
    cycles_run = int(ran.group(1))
    seconds = float(sim.group(1))
    accepted = float(acc[-1])
    flits = accepted * nodes * cycles_run
    return {
        "cycles": cycles_run,
        "sim_seconds": seconds,
        "process_seconds": wall,
        "cpu_seconds": cpu,
        "peak_rss_mb": rss,
        "accepted": accepted,
        "flits": flits,
        "rate": flits / seconds,
    }


def run(
    booksim: str | None = None,
    *,
    cycles: int = 2000,
    threads: tuple[int, ...] = (1, 2),
    repeat: int = 1,
    duration: str = "200us",
    vcs: int = 4,
    vc_buf: int = 100,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Runs the case with BookSim2 (binary ``booksim``, default ``$BOOKSIM``; skipped when
    absent) and with hypercuboid on each of ``threads``, every row ``repeat`` times
    alternately (the fastest kept); prints the side-by-side table through ``log`` and returns
    the rows, the machine's load and how each simulator was run."""
    from hypercuboid import topology

    if repeat < 1:
        raise ValueError(f"invalid repeat {repeat}: expected a whole number of runs >= 1")
    if cycles < 2:
        raise ValueError(f"invalid cycles {cycles}: expected >= 2 (a warm-up and a sample)")
    if not threads or min(threads) < 1:
        raise ValueError(f"invalid threads {threads}: expected engine thread counts >= 1")
    booksim = booksim if booksim is not None else os.environ.get("BOOKSIM")
    if booksim and not (os.path.isfile(booksim) and os.access(booksim, os.X_OK)):
        log(f"BookSim2 binary {booksim} is not an executable file: running ours alone")
        booksim = None
    elif not booksim:
        log(
            "BookSim2 not found (set BOOKSIM to its binary, built from booksim/booksim2 with "
            "`cd src && make`): running ours alone"
        )
    topo = topology.generate(TOPOLOGY)
    nodes = topo.num_endpoints
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        network_file = str(Path(tmp) / "slimfly13.anynet")
        topology.export(topo, "anynet", network_file)
        for _ in range(repeat):
            if booksim:
                b = run_booksim(booksim, network_file, nodes, LOAD, cycles, vcs, vc_buf)
                if "booksim" not in best or b["rate"] > best["booksim"]["rate"]:
                    best["booksim"] = b
            for th in threads:
                r = run_ours(TOPOLOGY, ROUTING, LOAD, duration, th)
                key = f"ours_{th}"
                if key not in best or r["rate"] > best[key]["rate"]:
                    best[key] = r
    ref = best.get("booksim")
    first = best[f"ours_{threads[0]}"]
    for th in threads:
        r = best[f"ours_{th}"]
        same = all(
            r[k] == first[k] for k in ("delivered", "accepted", "latency_avg_ns", "hops_avg")
        )
        if not same:
            raise RuntimeError(f"{th} threads changed the results of the packet engine")
    rows = []
    if ref:
        rows.append(
            {
                "simulator": "BookSim2",
                "threads": 1,
                "simulated": f"{ref['cycles']} cycles",
                "wall_seconds": ref["sim_seconds"],
                "process_seconds": ref["process_seconds"],
                "cpu_seconds": ref["cpu_seconds"],
                "peak_rss_mb": ref["peak_rss_mb"],
                "units": ref["flits"],
                "unit": "flits",
                "rate": ref["rate"],
                "ratio": 1.0,
            }
        )
    for th in threads:
        r = best[f"ours_{th}"]
        rows.append(
            {
                "simulator": "hypercuboid",
                "threads": r["threads"],
                "simulated": duration,
                "wall_seconds": r["engine_seconds"],
                "process_seconds": r["process_seconds"],
                "cpu_seconds": r["cpu_seconds"],
                "peak_rss_mb": r["peak_rss_mb"],
                "units": r["delivered"],
                "unit": "packets",
                "rate": r["rate"],
                "ratio": r["rate"] / ref["rate"] if ref else None,
            }
        )
    log(
        f"{TOPOLOGY}, uniform {LOAD:.0%}, {ROUTING} routing; BookSim2: 1-flit packets, {vcs} VCs "
        f"x {vc_buf} flits; best of {repeat}"
    )
    log(
        f"{'simulator':12} {'thr':>3} {'simulated':>12} {'sim s':>8} {'process s':>9} {'cpu s':>7} "
        f"{'peak MB':>8} {'delivered':>12} {'per second':>11} {'ratio':>7}"
    )
    for w in rows:
        ratio = f"{w['ratio']:6.1f}x" if w["ratio"] is not None else "      -"
        log(
            f"{w['simulator']:12} {w['threads']:3d} {w['simulated']:>12} "
            f"{w['wall_seconds']:8.2f} {w['process_seconds']:9.2f} {w['cpu_seconds']:7.2f} "
            f"{w['peak_rss_mb']:8.0f} "
            f"{w['units']:12.0f} {w['rate']:9.3e}/s {ratio}"
        )
    load_avg = os.getloadavg()
    log(f"load average {load_avg[0]:.1f} on {os.cpu_count()} CPUs")
    return {
        "case": {
            "topology": TOPOLOGY,
            "routing": ROUTING,
            "traffic": "uniform",
            "load": LOAD,
            "duration": duration,
            "booksim_cycles_asked": cycles,
            "booksim_vcs": vcs,
            "booksim_vc_buf_flits": vc_buf,
            "repeat": repeat,
        },
        "booksim": booksim,
        "rows": rows,
        "load_average": load_avg,
        "cpus": os.cpu_count(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--booksim", help="BookSim2 binary (default: $BOOKSIM)")
    ap.add_argument("--cycles", type=int, default=2000, help="BookSim2 cycles before its drain")
    ap.add_argument("--threads", default="1,2", help="hypercuboid engine threads, comma list")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row; the fastest is kept")
    ap.add_argument("--duration", default="200us", help="hypercuboid simulated time")
    ap.add_argument("--vc-buf", type=int, default=100, help="BookSim2 flits per VC buffer")
    a = ap.parse_args()
    run(
        a.booksim,
        cycles=a.cycles,
        threads=tuple(int(x) for x in a.threads.split(",")),
        repeat=a.repeat,
        duration=a.duration,
        vc_buf=a.vc_buf,
    )


if __name__ == "__main__":
    main()

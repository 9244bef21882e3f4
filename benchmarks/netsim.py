"""Packet simulator speed on the seed's Slim Fly (q = 13, p = 9, 3042 nodes): uniform traffic,
30 % and 90 % offered load, 200 us simulated (20 us warm-up).

Each point runs with one engine thread and with every core (``--threads 1,0``; 0 = every
core), alternately, ``--repeat`` times; the fastest run of each is kept, so the speed-up is
measured side by side under the same machine conditions. The runs of a point must report the
same network results whatever the thread count (checked here, and in the tests).

Prints delivered packets, events, wall time and delivered packets per wall second, next to the
bars of issue 17: 200x BookSim2's 44.7 k flits/s measured on the same network and machine
(2026-11-23; one packet of 256 B is one flit here: the strictest reading) = 8.94e6/s for the
30 % case, and 1.5e6/s for UGAL at 90 %. ``benchmarks/peer_booksim.py`` runs BookSim2 itself
beside us. Also prints packets per CPU second (the process's CPU time, all threads), which a
machine shared with other jobs disturbs less than wall time, the average router hops and
indirect share of the packets (every router a packet crosses costs the engine an input and an
output event), and the process's peak resident memory so far (run one point alone for its own,
e.g. ``--topo slimfly:q=29,p=21 --routing min --loads 0.3 --duration 100us --threads 2``).
Writes ``benchmarks/results/netsim.json``.

    python benchmarks/netsim.py [--topo slimfly:q=13,p=9] [--routing min,ugal]
                                [--loads 0.3,0.9] [--duration 200us] [--threads 1,0]
                                [--repeat 1] [--out benchmarks/results/netsim.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from pathlib import Path

import _out
from hypercuboid import netsim
from hypercuboid.topology import generate

BOOKSIM_FLITS_PER_S = 44.7e3
BAR = 200 * BOOKSIM_FLITS_PER_S
UGAL_90_BAR = 1.5e6


def bar(routing: str, load: float) -> float:
    """The bar of issue 17 for a point: 1.5e6 packets/s for UGAL at 90 %, else 200x
    BookSim2."""
    return UGAL_90_BAR if routing.startswith("ugal") and load >= 0.9 else BAR


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topo", default="slimfly:q=13,p=9")
    ap.add_argument("--routing", default="min,ugal")
    ap.add_argument("--loads", default="0.3,0.9")
    ap.add_argument("--duration", default="200us")
    ap.add_argument("--threads", default="1,0", help="engine threads to compare (0: every core)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per point; the fastest is kept")
    _out.add(ap, "netsim.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "netsim.json")

    t0 = time.perf_counter()
    topo = generate(args.topo)
    print(
        f"{args.topo}: {topo.num_endpoints} endpoints, generated in "
        f"{time.perf_counter() - t0:.2f} s"
    )
    rows = []
    threads = [int(x) for x in args.threads.split(",")]
    print(
        f"{'routing':8} {'load':>5} {'thr':>3} {'accepted':>8} {'delivered':>11} "
        f"{'events':>12} {'wall s':>7} {'pkt/s':>10} {'x bar':>6} {'speed-up':>8} "
        f"{'cpu s':>7} {'pkt/cpu-s':>10} {'hops':>5} {'indirect':>8} {'peak MB':>8}"
    )
    for routing in args.routing.split(","):
        for load in netsim.parse_loads(args.loads):
            best: dict[int, tuple] = {}
            for _ in range(args.repeat):
                for th in threads:
                    t, c = time.perf_counter(), time.process_time()
                    r = netsim.run(
                        topo, routing, "uniform", load, duration=args.duration, threads=th
                    )
                    total, cpu = time.perf_counter() - t, time.process_time() - c
                    if th not in best or r.wall_seconds < best[th][0].wall_seconds:
                        best[th] = (r, total, cpu)
            first = best[threads[0]][0]
            for th in threads:
                r, total, cpu = best[th]
                same = all(
                    getattr(r, k) == getattr(first, k)
                    for k in ("delivered_total", "accepted", "latency_avg_ns", "hop_histogram")
                )
                if not same:
                    raise SystemExit(f"{routing} {load}: {th} threads changed the results")
                pps = r.delivered_total / r.wall_seconds
                target = bar(routing, load)
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                speedup = first.wall_seconds / r.wall_seconds
                rows.append(
                    {
                        "topology": args.topo,
                        "routing": routing,
                        "load": load,
                        "duration": args.duration,
                        "threads_asked": th,
                        "threads": r.threads,
                        "accepted": r.accepted,
                        "delivered_total": r.delivered_total,
                        "events": r.events,
                        "engine_seconds": r.wall_seconds,
                        "total_seconds": total,
                        "cpu_seconds": cpu,
                        "packets_per_cpu_second": r.delivered_total / cpu,
                        "packets_per_second": pps,
                        "bar_packets_per_second": target,
                        "times_bar": pps / target,
                        "peak_rss_mb_so_far": rss,
                        "speedup_vs_first": speedup,
                        "events_per_second": r.events / r.wall_seconds,
                        "hops_avg": r.hops_avg,
                        "indirect_fraction": r.indirect_fraction,
                    }
                )
                print(
                    f"{routing:8} {load:5.2f} {r.threads:3d} {100 * r.accepted:7.2f}% "
                    f"{r.delivered_total:11d} {r.events:12d} {r.wall_seconds:7.2f} "
                    f"{pps:10.3e} {pps / target:6.2f} {speedup:7.2f}x {cpu:7.2f} "
                    f"{r.delivered_total / cpu:10.3e} {r.hops_avg:5.2f} "
                    f"{100 * r.indirect_fraction:7.1f}% {rss:8.0f}",
                    flush=True,
                )
    meta = {
        "machine": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "bar_packets_per_second": BAR,
        "ugal_90_bar_packets_per_second": UGAL_90_BAR,
    }
    Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print(
        f"bars: {BAR:.2e} packets/s (200 x BookSim2's {BOOKSIM_FLITS_PER_S:.3g} flits/s), "
        f"UGAL at 90 % {UGAL_90_BAR:.2e}/s; "
        f"load average during the run {meta['load_average'][0]:.1f} on {meta['cpus']} CPUs"
    )


if __name__ == "__main__":
    main()

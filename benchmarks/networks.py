"""Schedules on networks (issue 14): the two levels' speed and agreement, side by side.

1. **Packet level against synthetic traffic.** A pairwise alltoall of 2 KB per rank pair on
   the seed's Slim Fly (q = 13, p = 9: 3042 ranks, 9.25 M messages) at packet level, and
   ``netsim run`` of uniform traffic at 30 % on the same network, alternately, one engine
   thread each: delivered packets per wall second of both and their ratio (bar: the schedule
   run at ≥ 0.7 × the synthetic rate), and the schedule run's peak memory (bar: ≤ 4 GB).
   Each run is a separate process so that its peak memory is its own.
2. **Flow level.** A pairwise alltoall of 1 MB per rank pair on ``fattree:k=8,levels=3`` (128
   ranks): wall time at flow level (bar: ≤ 10 s) and at packet level, the speed-up (bar:
   ≥ 20 ×) and the two completion times.
3. **Agreement.** Completion times at both levels on contention-free schedules (ring allreduce
   on a full mesh, pairwise alltoall on one switch: bar 2 %) and congested ones (alltoall on
   ``tree:fig5b`` at 64 KB: bar 15 %), every alltoall algorithm.

Writes ``benchmarks/results/networks.json``.

    python benchmarks/networks.py [--quick] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import _out

HOST = "loggops:o=100ns,g=10ns,S=64KiB"
CHILD = r"""
import json, os, resource, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import hypercuboid as hc
from hypercuboid import netsim
job = json.loads(sys.argv[1])
t0 = time.perf_counter()
if job["kind"] == "schedule":
    coll, alg, n, count = job["schedule"]
    build = hc.schedules.alltoall if coll == "alltoall" else hc.schedules.allreduce
    s = build(alg, n, count=count)
    gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = s.simulate(job["host"], network=job["network"], level=job["level"])
    wall = time.perf_counter() - t0
    out = {"generate_s": gen, "wall_s": wall, "completion_ns": r.completion_time_ns,
           "units": r.network.wire_units, "messages": r.network.messages,
           "queued_ns": r.network.queued_ps / 1e3}
else:
    rep = netsim.run(job["network"], "min", "uniform", 0.3, threads=1)
    wall = time.perf_counter() - t0
    out = {"wall_s": rep.wall_seconds, "units": rep.delivered_total,
           "rate": rep.packets_per_second}
out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def child(job: dict) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(job)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if p.returncode != 0:
        raise SystemExit(f"benchmark child failed: {p.stderr.strip().splitlines()[-1:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["wall_s"])


def packet_rate(args) -> dict:
    net = "slimfly:q=13,p=9" if not args.quick else "slimfly:q=7"
    n = 3042 if not args.quick else 588
    sched, synth = [], []
    for _ in range(args.repeat):
        sched.append(
            child(
                {
                    "kind": "schedule",
                    "schedule": ["alltoall", "pairwise", n, 256],
                    "host": HOST,
                    "network": net,
                    "level": "packet",
                }
            )
        )
        synth.append(child({"kind": "synthetic", "network": net}))
    s, y = best(sched), best(synth)
    rate = s["units"] / s["wall_s"]
    ratio = rate / y["rate"]
    print(f"\n1. packet level on {net}: pairwise alltoall, 2 KB per pair, {n} ranks")
    print(f"   {'run':34} {'packets':>12} {'wall s':>8} {'Mpkt/s':>8} {'peak MB':>8}")
    print(
        f"   {'schedule (' + str(s['messages']) + ' messages)':34} {s['units']:>12,} "
        f"{s['wall_s']:>8.2f} {rate / 1e6:>8.2f} {s['max_rss_mb']:>8.0f}"
    )
    print(
        f"   {'netsim run uniform 30 %':34} {y['units']:>12,} {y['wall_s']:>8.2f} "
        f"{y['rate'] / 1e6:>8.2f} {y['max_rss_mb']:>8.0f}"
    )
    print(f"   ratio {ratio:.2f} (bar >= 0.7); generate {s['generate_s']:.2f} s")
    return {"network": net, "ranks": n, "schedule": s, "synthetic": y, "ratio": ratio}


def flow_speed(args) -> dict:
    net = "fattree:k=8,levels=3"
    out = {}
    for level in ("flow", "packet"):
        out[level] = best(
            [
                child(
                    {
                        "kind": "schedule",
                        "schedule": ["alltoall", "pairwise", 128, 131072],
                        "host": HOST,
                        "network": net,
                        "level": level,
                    }
                )
                for _ in range(args.repeat)
            ]
        )
    f, p = out["flow"], out["packet"]
    speedup = p["wall_s"] / f["wall_s"]
    print(f"\n2. flow level on {net}: pairwise alltoall, 1 MB per pair, 128 ranks")
    print(f"   {'level':8} {'wall s':>8} {'completion ms':>14} {'peak MB':>8}")
    for level in ("flow", "packet"):
        r = out[level]
        print(
            f"   {level:8} {r['wall_s']:>8.3f} {r['completion_ns'] / 1e6:>14.3f} "
            f"{r['max_rss_mb']:>8.0f}"
        )
    print(f"   speed-up {speedup:.0f}x (bar >= 20x); flow wall (bar <= 10 s)")
    return {"network": net, **out, "speedup": speedup}


AGREEMENT = [
    ("contention-free", "allreduce", "ring", 16, 1 << 17, "fullmesh:n=16"),
    ("contention-free", "alltoall", "pairwise", 24, 8192, "tree:fig5a"),
    ("congested", "alltoall", "pairwise", 32, 8192, "tree:fig5b"),
    ("congested", "alltoall", "linear_shifted", 32, 8192, "tree:fig5b"),
    ("congested", "alltoall", "bruck", 32, 8192, "tree:fig5b"),
    ("congested", "alltoall", "linear", 32, 8192, "tree:fig5b"),
]


#: (label, NIC order, packet-level routing) of the agreement table: LogGOPS's FIFO NIC and
#: the routers' default virtual channels (a tree needs one), then NICs that share their link,
#: then also hop-indexed virtual channels (three on these trees), which relieve head-of-line
#: blocking in the switches' input buffers.
CONFIGS = [
    ("fifo", "fifo", "min"),
    ("interleave", "interleave", "min"),
    ("interleave+vcs=hop", "interleave", "min:vcs=hop"),
]


def agreement() -> list[dict]:
    """Flow against packet level in each of ``CONFIGS``."""
    import hypercuboid as hc

    rows = []
    print("\n3. flow against packet level: flow / packet completion time")
    print(
        f"   {'case':16} {'schedule':34} {'network':14} " + " ".join(f"{c[0]:>19}" for c in CONFIGS)
    )
    for kind, coll, alg, n, count, net in AGREEMENT:
        build = hc.schedules.alltoall if coll == "alltoall" else hc.schedules.allreduce
        s = build(alg, n, count=count)
        row = {
            "case": kind,
            "collective": coll,
            "algorithm": alg,
            "ranks": n,
            "count": count,
            "network": net,
        }
        cells = []
        for label, nic, routing in CONFIGS:
            packet = s.simulate(HOST, network=net, nic=nic, routing=routing).completion_time_ns
            flow = s.simulate(HOST, network=net, level="flow", nic=nic).completion_time_ns
            ratio = flow / packet
            row[label] = {"packet_ns": packet, "flow_ns": flow, "ratio": ratio}
            cells.append(f"{ratio:>19.3f}")
        name = f"{coll} {alg} {n}x{count * 8 // 1024}KB"
        print(f"   {kind:16} {name:34} {net:14} " + " ".join(cells))
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Slim Fly q = 7 instead of q = 13")
    ap.add_argument("--repeat", type=int, default=1, help="runs per point; the fastest is kept")
    _out.add(ap, "networks.json")
    ap.add_argument(
        "--agreement",
        action="store_true",
        help="only the flow-against-packet table (merged into --out's other figures)",
    )
    args = ap.parse_args()
    args.out = _out.path(args.out, "networks.json")
    t0 = time.perf_counter()
    if args.agreement:
        out = Path(args.out)
        result = json.loads(out.read_text()) if out.exists() else {}
        result["agreement"] = agreement()
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"\nwrote {args.out} (agreement only, {time.perf_counter() - t0:.0f} s)")
        return
    result = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "host_model": HOST,
        "packet_rate": packet_rate(args),
        "flow_speed": flow_speed(args),
        "agreement": agreement(),
    }
    result["wall_s"] = time.perf_counter() - t0
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwrote {args.out} ({result['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()

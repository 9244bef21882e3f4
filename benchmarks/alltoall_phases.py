"""Contention-free alltoall phases (docs/alltoall_phases.md): wall time of the scheduler plus
all three checks (complete, contention-free, optimal) in one call, on random switched trees of
1,024 machines (1,047,552 messages; bar: 2 s, release build) and 256 machines; then the
section 6 heuristic on a fat tree, a Slim Fly and an 8x8 torus: phases against the lower bound
(the largest directed-link load) and the gap.

Run: .venv/bin/python benchmarks/alltoall_phases.py [--repeat 3]
Prints two tables and writes benchmarks/results/alltoall_phases.json.
"""

from __future__ import annotations

import argparse

import _out
from hypercuboid import _core, phases, topology

#: Bar of issue 15 for the 1,024-machine tree (seconds).
BAR_S = 2.0

# (label, machines, switches, shape, seed)
TREES = [
    ("random tree, 1024 machines", 1024, 64, "random", 1),
    ("deep tree, 1024 machines", 1024, 64, "deep", 2),
    ("star of switches, 1024 machines", 1024, 32, "star", 3),
    ("random tree, 256 machines", 256, 16, "random", 4),
]

GENERAL = [
    (spec, routing)
    for routing in ("dmodk", "first")
    for spec in ("fattree:k=4,levels=3", "slimfly:q=5", "torus:dims=8x8")
]


def row(label: str, topo, seconds: float, r) -> dict:
    return {
        "label": label,
        "topology": r.topology,
        "method": r.method,
        "machines": r.machines,
        "routers": topo.num_routers,
        "messages": r.messages,
        "phases": r.phases,
        "lower_bound": r.lower_bound,
        "gap": r.gap,
        "ratio": r.ratio,
        "root": r.root,
        "subtrees": len(r.subtrees),
        "complete": r.complete,
        "contention_free": r.contention_free,
        "optimal": r.optimal,
        "seconds": seconds,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3, help="median of this many runs")
    _out.add(ap, "alltoall_phases.json")
    args = ap.parse_args()

    trees = []
    for label, machines, switches, shape, seed in TREES:
        t = phases.random_tree(machines, switches, shape, seed)
        s, r = _out.timed(lambda t=t: _core.alltoall_phases(t, "auto"), args.repeat)
        trees.append(row(label, t, s, r) | {"shape": shape, "switches": switches, "seed": seed})
    general = []
    for spec, routing in GENERAL:
        t = topology.generate(spec)
        s, r = _out.timed(lambda t=t, g=routing: _core.alltoall_phases(t, "auto", g), args.repeat)
        general.append(row(spec, t, s, r) | {"routing": routing})

    def checks(ok: bool) -> str:
        return "pass" if ok else "FAIL"

    def ms(seconds: float) -> str:
        return f"{seconds * 1e3:.0f}ms"

    def bar(x: dict) -> str:
        return ("ok" if x["seconds"] <= BAR_S else "MISS") if x["machines"] == 1024 else ""

    _out.table(
        [("tree (scheduler + 3 checks)", "34"), ("messages", ">9"), ("phases", ">7")]
        + [("load", ">7"), ("checks", ">7"), ("time", ">9"), ("bar", ">5")],
        [
            [x["label"], x["messages"], x["phases"], x["lower_bound"]]
            + [checks(x["complete"] and x["contention_free"] and x["optimal"])]
            + [ms(x["seconds"]), bar(x)]
            for x in trees
        ],
    )
    print()
    _out.table(
        [("topology (section 6)", "24"), ("N", ">5"), ("routing", ">8"), ("phases", ">7")]
        + [("bound", ">6"), ("gap", ">5"), ("ratio", ">6"), ("checks", ">7"), ("time", ">9")],
        [
            [x["label"], x["machines"], x["routing"], x["phases"], x["lower_bound"], x["gap"]]
            + [f"{x['ratio']:.3f}", checks(x["complete"] and x["contention_free"])]
            + [ms(x["seconds"])]
            for x in general
        ],
    )
    _out.write_json(
        args.out,
        "alltoall_phases.json",
        {
            "repeat": args.repeat,
            "bar_seconds": BAR_S,
            "trees": trees,
            "general": general,
        },
    )


if __name__ == "__main__":
    main()

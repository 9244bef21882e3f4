"""Generation + analysis time of the diameter-two seed's topologies, without and with the
bisection (METIS, 8 seeds, plus the exact-balance repair).

Run: .venv/bin/python benchmarks/topology.py [--repeat 3] [--seeds 8]
Prints a table and writes benchmarks/results/topology.json.
"""

from __future__ import annotations

import argparse

import _out
from hypercuboid import topology

INSTANCES = [
    ("SF q=13, p=9", "slimfly:q=13,p=9"),
    ("OFT k=12", "oft:k=12"),
    ("MLFM h=15", "mlfm:h=15"),
    ("SF radix 64 (q=29, p=21)", "slimfly:q=29,p=21"),
    ("OFT radix 64 (k=32)", "oft:k=32"),
    ("MLFM radix 64 (h=32)", "mlfm:h=32"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3, help="median of this many runs")
    ap.add_argument("--seeds", type=int, default=8, help="METIS seeds of the bisection")
    _out.add(ap, "topology.json")
    args = ap.parse_args()
    rows = []
    for label, spec in INSTANCES:
        gen, t = _out.timed(lambda spec=spec: topology.generate(spec), args.repeat)
        ana, info = _out.timed(lambda t=t: t.analyze(), args.repeat)
        bis, b = _out.timed(lambda t=t: topology.bisection(t, seeds=args.seeds), 1)
        rows.append(
            {
                "label": label,
                "spec": t.name,
                "endpoints": info.endpoints,
                "routers": info.routers,
                "router_radix": info.router_radix,
                "diameter": info.diameter,
                "generate_s": gen,
                "analyze_s": ana,
                "bisection_s": bis,
                "total_without_bisection_s": gen + ana,
                "total_with_bisection_s": gen + ana + bis,
                "bisection_per_endpoint": b["per_endpoint"],
            }
        )
    _out.table(
        [("instance", "26"), ("N", ">7"), ("R", ">5"), ("r", ">3"), ("D", ">2")]
        + [("generate", ">9"), ("analyze", ">9"), ("without bis.", ">12")]
        + [("bisection", ">10"), ("with bis.", ">10"), ("bis./N", ">7")],
        [
            [r["label"], r["endpoints"], r["routers"], r["router_radix"], r["diameter"]]
            + [f"{r['generate_s'] * 1e3:.2f}ms", f"{r['analyze_s'] * 1e3:.1f}ms"]
            + [f"{r['total_without_bisection_s'] * 1e3:.1f}ms", f"{r['bisection_s']:.2f}s"]
            + [f"{r['total_with_bisection_s']:.2f}s", f"{r['bisection_per_endpoint']:.3f}"]
            for r in rows
        ],
    )
    _out.write_json(
        args.out,
        "topology.json",
        {
            "repeat": args.repeat,
            "seeds": args.seeds,
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()

"""Many ops ready at once on one rank (issue 34): the engine's time per op as the number of
ready ops grows from 10^4 to 10^6, for three GOAL shapes on one rank, under the postal and
the LogGOPS models:

- ``independent``: n ``calc`` ops without dependencies, all ready at time 0;
- ``fan-out``: one ``calc`` that n ``calc`` ops require, all freed by its completion;
- ``fan-in``: n independent ``calc`` ops that one ``calc`` requires.

Every op costs 1 us on the rank's one CPU, so that each start leaves the others waiting.
The time is that of ``Schedule.simulate`` alone (the GOAL text is parsed before the clock
starts), the best of ``--repeat`` runs. The bar: 200,000 independent ops in at most 1 s, and
the time per op flat from 10^4 to 10^6. The table prints the load average, since the machine
may be shared. Writes JSON to ``--out``.

    PYTHONPATH=python .venv/bin/python benchmarks/ready_ops.py [--sizes 10000,100000,1000000]
        [--repeat 3] [--out /tmp/ready_ops.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import hypercuboid as hc

MODELS = ("postal:alpha=1us", "loggops:L=3us,o=1us,g=1us,G=0")
SHAPES = ("independent", "fan-out", "fan-in")
CALC_US = 1


def goal(shape: str, n: int) -> str:
    """The GOAL text of `shape` with `n` ready ops on one rank."""
    lines = ["num_ranks 1", "rank 0 {"]
    if shape == "independent":
        lines += [f"l{i}: calc {CALC_US}us" for i in range(n)]
    elif shape == "fan-out":
        lines.append(f"l0: calc {CALC_US}us")
        for i in range(1, n + 1):
            lines += [f"l{i}: calc {CALC_US}us", f"l{i} requires l0"]
    elif shape == "fan-in":
        lines += [f"l{i}: calc {CALC_US}us" for i in range(n)]
        lines.append(f"l{n}: calc {CALC_US}us")
        lines += [f"l{n} requires l{i}" for i in range(n)]
    else:
        raise ValueError(f"unknown shape {shape!r}; accepted: {', '.join(SHAPES)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="/tmp/ready_ops.json")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = []
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'shape':<12} {'model':<32} {'ops':>9} {'seconds':>9} {'ns/op':>8} {'completion':>14}")
    for shape in SHAPES:
        for n in sizes:
            s = hc.Schedule.parse(goal(shape, n), f"{shape}-{n}")
            for model in MODELS:
                best = None
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    r = s.simulate(model)
                    dt = time.perf_counter() - t0
                    best = dt if best is None else min(best, dt)
                ops = r.ops
                row = {
                    "shape": shape,
                    "model": model,
                    "ready_ops": n,
                    "ops": ops,
                    "seconds": best,
                    "ns_per_op": best / ops * 1e9,
                    "completion_ps": r.completion_time_ps,
                }
                rows.append(row)
                print(
                    f"{shape:<12} {model:<32} {ops:>9} {best:>9.3f} {row['ns_per_op']:>8.0f} "
                    f"{r.completion_time_ps // 1000:>11} ns"
                )
    load = os.getloadavg()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in load)}")
    out = {
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "load_average": load,
        "repeat": args.repeat,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

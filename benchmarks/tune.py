"""End-to-end benchmark: recursive multiplying schedule search through the Python API.

Exhaustive enumeration + ranking by the closed form (N = 720, 5040, 65536), the same with the
40 best simulated (N = 720, 5040), and the dynamic program's model-optimal factored schedule
(N = 10^6, 2^20, 720720), all for the paper's Table 1 minimum fit (α_p = 1.34 µs,
α_r = 0.34 µs). Best of ``--repeat`` runs; prints a table and writes
``benchmarks/results/tune.json``.

    .venv/bin/python benchmarks/tune.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import _out
import hypercuboid.tune as t

MODEL = t.pipelined_model(*t.TABLE1["minimum"])


def best_of(repeat: int, f):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    _out.add(ap, "tune.json")
    args = ap.parse_args()
    rows = []
    for n, sim in [(720, False), (5040, False), (65536, False), (720, True), (5040, True)]:
        s, r = best_of(
            args.repeat if not sim else 1,
            lambda n=n, sim=sim: t.tune_allreduce(n, MODEL, simulate=sim, pool=40),
        )
        rows.append(
            {
                "task": "enumerate + rank" + (" + simulate 40" if sim else ""),
                "nranks": n,
                "schedules": r.counts["total"],
                "seconds": s,
                "best": r.best.schedule,
                "predicted_us": r.best.predicted_ns / 1e3,
            }
        )
    for n in [1_000_000, 1 << 20, 720_720]:
        s, (sched, ns) = best_of(args.repeat, lambda n=n: t.optimal_schedule(n, MODEL))
        rows.append(
            {
                "task": "dynamic program",
                "nranks": n,
                "schedules": t.count_schedules(n, split=False, merged=False)["factored"],
                "seconds": s,
                "best": sched,
                "predicted_us": ns / 1e3,
            }
        )
    print(f"recursive multiplying schedule search, {MODEL}")
    print(f"{'task':<28} {'ranks':>9} {'schedules':>10} {'time':>10}  best (predicted µs)")
    for r in rows:
        tm = r["seconds"]
        if tm >= 1:
            ts = f"{tm:.2f} s"
        elif tm >= 1e-3:
            ts = f"{tm * 1e3:.2f} ms"
        else:
            ts = f"{tm * 1e6:.0f} µs"
        print(
            f"{r['task']:<28} {r['nranks']:>9,} {r['schedules']:>10,} {ts:>10}  "
            f"{r['best']} ({r['predicted_us']:.3f})"
        )
    out = _out.path(args.out, "tune.json")
    out.write_text(
        json.dumps({"model": MODEL, "machine": platform.platform(), "rows": rows}, indent=1) + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

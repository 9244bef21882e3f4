"""Reading, converting and simulating a trace of 10^6 records (the bar: <= 5 s). The trace is
synthetic (hypercuboid.apptrace.synthetic): RANKS ranks, each iteration a 2 us compute gap, a
1 KiB exchange with both ring neighbours (Isend, Irecv, Waitall) and an 8-byte allreduce
(recursive doubling).

    python benchmarks/trace_convert.py [--ranks 8] [--records 1000000]

Writes benchmarks/results/trace_convert.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--records", type=int, default=1_000_000)
    args = ap.parse_args()
    from hypercuboid.apptrace import AppTrace, synthetic

    iters = max(1, args.records // (4 * args.ranks))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.hct"
        n = synthetic(args.ranks, iters, path)
        t0 = time.perf_counter()
        t = AppTrace.load(path)
        t1 = time.perf_counter()
        conv = t.convert()
        t2 = time.perf_counter()
        res = conv.schedule.simulate("loggops:L=3000,o=1500,g=1000,G=6")
        t3 = time.perf_counter()
    steps = {"read": t1 - t0, "convert": t2 - t1, "simulate": t3 - t2}
    total = t3 - t0
    print(f"{n:,} records, {args.ranks} ranks, {conv.schedule.total_ops:,} ops")
    for k, v in steps.items():
        print(f"{k:10} {v:8.3f} s")
    print(f"{'total':10} {total:8.3f} s (bar: <= 5 s)")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    out = ROOT / "benchmarks" / "results" / "trace_convert.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "records": n,
                "ranks": args.ranks,
                "ops": conv.schedule.total_ops,
                "seconds": steps,
                "total_seconds": total,
                "completion_time_ns": res.completion_time_ns,
                "loadavg": load,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()

"""End-to-end benchmark: generate + simulate recursive-doubling allreduce of 8 B under LogGOPS.

Each size runs in a fresh subprocess so that its peak resident memory is its own. Prints a
table and writes ``benchmarks/results/simulate.json``. The bar (issue "Foundation"): 2^20 ranks
end to end in <= 8 s with <= 1 GB peak.

    .venv/bin/python benchmarks/simulate.py [--sizes 14,17,20]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys

import _out

MODEL = "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535"

CHILD = r"""
import json, resource, sys, time
import hypercuboid
n = int(sys.argv[1])
t0 = time.perf_counter()
s = hypercuboid.schedules.allreduce("recursive_doubling", n, 1, dtype="int64")
t1 = time.perf_counter()
r = s.simulate(sys.argv[2])
t2 = time.perf_counter()
print(json.dumps({
    "nranks": n, "ops": r.ops, "generate_s": t1 - t0, "simulate_s": t2 - t1,
    "total_s": t2 - t0, "completion_ns": r.completion_time_ns,
    "schedule_mb": s.memory_bytes / 2**20,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def run(log2n: int) -> dict:
    n = 1 << log2n
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), MODEL], check=True, capture_output=True, text=True
    )
    row = json.loads(out.stdout)
    expected = log2n * 6042.0  # 2o + L + 7G per step (issue "Foundation", section 4)
    row["expected_ns"] = expected
    row["matches_closed_form"] = row["completion_ns"] == expected
    row["ops_per_s"] = row["ops"] / row["simulate_s"] if row["simulate_s"] > 0 else float("inf")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="14,17,20", help="log2 of the rank counts")
    _out.add(ap, "simulate.json")
    args = ap.parse_args()
    rows = [run(int(k)) for k in args.sizes.split(",")]
    print(f"recursive-doubling allreduce, 8 B, {MODEL}")
    print(
        f"{'ranks':>9} {'ops':>11} {'generate s':>11} {'simulate s':>11} {'total s':>8} "
        f"{'Mops/s':>8} {'peak MB':>8} {'sim = closed form':>18}"
    )
    for r in rows:
        print(
            f"{r['nranks']:>9} {r['ops']:>11} {r['generate_s']:>11.3f} {r['simulate_s']:>11.3f}"
            f" {r['total_s']:>8.3f} {r['ops_per_s'] / 1e6:>8.2f} {r['peak_rss_mb']:>8.0f}"
            f" {str(r['matches_closed_form']):>18}"
        )
    _out.dump(
        _out.path(args.out, "simulate.json"),
        {
            "machine": platform.machine(),
            "python": platform.python_version(),
            "model": MODEL,
            "rows": rows,
        },
        indent=2,
    )


if __name__ == "__main__":
    main()

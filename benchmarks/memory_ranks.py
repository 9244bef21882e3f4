"""Peak memory per rank of the schedule engine (issue 37: 2^27 ranks of recursive doubling must
fit a node of 128 GB). Generates and simulates recursive doubling of 8 B under LogGOPS on
``--sizes`` (log2 of the rank count) and ``--threads``, each in a fresh process, and reports
its peak resident memory (``ru_maxrss``), the same of a process that only imports hypercuboid
(the fixed part), and the bytes per rank of the difference; then extrapolates linearly from the
two largest sizes to ``--target`` ranks. Writes ``memory_ranks.json``.

    .venv/bin/python benchmarks/memory_ranks.py [--sizes 20,22] [--threads 1,2] [--target 27]
"""

from __future__ import annotations

import argparse
import json
import os

import _out
from contention import MODEL, child

CHILD = r"""
import json, os, resource, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import hypercuboid as hc
alg, n, model, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
if n:
    s = hc.schedules.allreduce(alg, n, 1, dtype="int64")
    r = s.simulate(model, threads=threads)
    done, used = r.completion_time_ns, r.threads
else:
    done, used = 0, 0
print(json.dumps({"wall_s": time.perf_counter() - t0, "completion_ns": done, "threads": used,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,22", help="log2 of the rank counts")
    ap.add_argument("--threads", default="1,2", help="engine thread counts")
    ap.add_argument("--algorithm", default="recursive_doubling")
    ap.add_argument("--target", type=int, default=27, help="log2 of the ranks to extrapolate to")
    _out.add(ap, "memory_ranks.json")
    args = ap.parse_args()
    sizes = sorted(int(k) for k in args.sizes.split(","))
    counts = [int(t) for t in args.threads.split(",")]
    if len(sizes) < 2:
        raise SystemExit(f"--sizes {args.sizes}: need two sizes or more to extrapolate")
    fixed = child(CHILD, args.algorithm, 0, 1)["peak_mb"]
    print(
        f"{args.algorithm} under {MODEL}; load average {os.getloadavg()[0]:.1f}; "
        f"a process that imports hypercuboid: {fixed:.0f} MB"
    )
    print(f"{'ranks':>7} {'threads':>7} {'wall s':>7} {'peak MB':>8} {'B/rank':>7}")
    rows = []
    for t in counts:
        for k in sizes:
            r = child(CHILD, args.algorithm, 1 << k, t)
            per_rank = (r["peak_mb"] - fixed) * 2**20 / (1 << k)
            rows.append({"log2n": k, "threads_asked": t, **r, "bytes_per_rank": per_rank})
            print(f"2^{k:<5} {t:>7} {r['wall_s']:7.2f} {r['peak_mb']:8.0f} {per_rank:7.1f}")
    print(f"extrapolated to 2^{args.target} ranks (slope of the two largest sizes):")
    target = {}
    for t in counts:
        a, b = [r for r in rows if r["threads_asked"] == t][-2:]
        slope = (b["peak_mb"] - a["peak_mb"]) * 2**20 / ((1 << b["log2n"]) - (1 << a["log2n"]))
        gb = (b["peak_mb"] * 2**20 + slope * ((1 << args.target) - (1 << b["log2n"]))) / 1e9
        target[str(t)] = {"bytes_per_rank": slope, "peak_gb": gb}
        print(f"  {t} thread(s): {slope:.1f} bytes per rank, {gb:.1f} GB")
    out = _out.path(args.out, "memory_ranks.json")
    record = {
        "algorithm": args.algorithm,
        "model": MODEL,
        "load": os.getloadavg()[0],
        "import_mb": fixed,
        "rows": rows,
        "target_log2n": args.target,
        "target": target,
    }
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

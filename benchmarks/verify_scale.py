"""The verifier at scale (issue 17, section 2): matching and deadlock check of the
recursive-doubling allreduce at 2^20 ranks x 40 ops (one program shape shared by every rank,
one ``float64`` a rank, semantics off, every send synchronous: ``eager_limit = 0``), against
the 3 s bar, on one thread and on every core side by side (the runs alternate between the
thread counts, so that both see the same machine). Each repetition runs in a fresh process
(its own wall time and peak resident memory, the schedule's included); the table prints each,
and per thread count the best and the median, and the ratio of the medians.
Writes ``benchmarks/results/verify_scale.json``.

    .venv/bin/python benchmarks/verify_scale.py [--log2n 20] [--repeat 3] [--threads 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

import _out

BAR_S = 3.0

CHILD = r"""
import json, os, resource, sys, time
# numpy's OpenBLAS worker busy-waits for 60-100 ms after the import and slows the engine
# (docs/performance.md, "A thread that is not ours"); the simulators use no BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import hypercuboid as hc
alg, n, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0 = time.perf_counter()
s = hc.schedules.allreduce(alg, n, 1, dtype="float64")
t1 = time.perf_counter()
rep = s.verify(eager_limit=0, semantics=False, threads=threads)
t2 = time.perf_counter()
print(json.dumps({
    "generate_s": t1 - t0, "verify_s": t2 - t1, "sound": rep.sound,
    "ops": rep.stats["ops"], "messages": rep.stats["messages"],
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def run(alg: str, log2n: int, threads: int) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, alg, str(1 << log2n), str(threads)],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        raise SystemExit(f"verify {alg} on 2^{log2n} ranks failed: {p.stderr.strip()[-400:]}")
    row = json.loads(p.stdout)
    if not row["sound"]:
        raise SystemExit(f"{alg} on 2^{log2n} ranks was reported unsound")
    row["load"] = os.getloadavg()[0]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2n", type=int, default=20, help="log2 of the rank count")
    ap.add_argument("--repeat", type=int, default=3, help="fresh processes to run")
    cpus = os.cpu_count() or 1
    ap.add_argument(
        "--threads",
        default=f"1,{cpus}",
        help=f"comma-separated thread counts to compare (default 1,{cpus}: one and every core)",
    )
    _out.add(ap, "verify_scale.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "verify_scale.json")
    if not 1 <= args.log2n <= 24:
        raise SystemExit(f"invalid --log2n {args.log2n}: accepted: 1 to 24")
    if args.repeat < 1:
        raise SystemExit(f"invalid --repeat {args.repeat}: accepted: 1 or more")
    try:
        counts = [int(x) for x in args.threads.split(",")]
    except ValueError:
        counts = []
    if not counts or any(t < 1 for t in counts):
        raise SystemExit(
            f"invalid --threads {args.threads!r}: accepted: comma-separated counts >= 1"
        )
    alg = "recursive_doubling"
    print(
        f"{'run':>3} {'threads':>7} {'ranks':>6} {'ops':>12} {'messages':>11} {'generate s':>10} "
        f"{'verify s':>8} {'peak MB':>8} {'load':>5}"
    )
    rows = []
    for i in range(args.repeat):
        for t in counts:
            row = run(alg, args.log2n, t)
            row["threads"] = t
            rows.append(row)
            print(
                f"{i + 1:>3} {t:>7} {'2^' + str(args.log2n):>6} {row['ops']:>12,} "
                f"{row['messages']:>11,} {row['generate_s']:>10.2f} {row['verify_s']:>8.2f} "
                f"{row['peak_rss_mb']:>8.0f} {row['load']:>5.1f}",
                flush=True,
            )
    summary = {}
    for t in counts:
        times = [r["verify_s"] for r in rows if r["threads"] == t]
        summary[t] = {"best_s": min(times), "median_s": statistics.median(times)}
        verdict = "met" if min(times) <= BAR_S else "missed"
        print(
            f"{t} thread{'s' if t > 1 else ''}: verify (matching + deadlock) best "
            f"{min(times):.2f} s, median {statistics.median(times):.2f} s; bar {BAR_S:.0f} s "
            f"at 2^20: {verdict if args.log2n == 20 else 'n/a'}"
        )
    base = summary[counts[0]]["median_s"]
    for t in counts[1:]:
        print(
            f"median speed-up of {t} threads over {counts[0]}: "
            f"{base / summary[t]['median_s']:.2f}x (same run, alternating)"
        )
    _out.dump(
        args.out,
        {
            "algorithm": alg,
            "log2n": args.log2n,
            "runs": rows,
            "by_threads": {str(t): v for t, v in summary.items()},
            "bar_s": BAR_S,
            "machine": platform.processor() or platform.machine(),
            "cpus": cpus,
        },
    )


if __name__ == "__main__":
    main()

"""The schedule engine on a machine busy with other work (issue 37, item 5): more runnable
threads than cores, so that a lane's thread is descheduled while the other waits for it at a
barrier. Starts ``--busy`` background processes that spin (``nice 0``, one loop each), then runs
recursive doubling of 8 B under LogGOPS on 1 and on 2 engine threads, alternating, each run a
fresh process timed end to end (generate + simulate); the busy processes are stopped at the end.
Two threads must not be slower than one (the issue measured 9.7 s on 2 threads against 7.7 s on
1 at 2^20 under a load average of 5). Every run must give the same completion time. Prints a
table (best and median of each thread count) and writes ``contention.json``.

    .venv/bin/python benchmarks/contention.py [--busy 4] [--log2n 20] [--repeat 3] \\
        [--threads 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import _out

MODEL = "loggops:L=3000,o=1500,g=1000,G=6"

#: One run in a fresh process: generate + simulate on ``threads`` engine threads.
CHILD = r"""
import json, os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import hypercuboid as hc
alg, n, model, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
c0 = time.process_time()
s = hc.schedules.allreduce(alg, n, 1, dtype="int64")
r = s.simulate(model, threads=threads)
print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                  "completion_ns": r.completion_time_ns, "threads": r.threads}))
"""

#: A busy process: one core's worth of demand, forever (stopped by the parent).
SPIN = "while True:\n    pass\n"


def child(code: str, alg: str, n: int, threads: int) -> dict:
    """Runs ``code`` (one of the scripts' children) in a fresh process on ``alg``, ``n`` ranks
    and ``threads`` engine threads: the JSON object it prints last."""
    out = subprocess.run(
        [sys.executable, "-c", code, alg, str(n), MODEL, str(threads)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{alg} on {n} ranks, {threads} threads failed: {out.stderr[-500:]}")
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", type=int, default=4, help="spinning background processes")
    ap.add_argument("--log2n", type=int, default=20, help="log2 of the rank count")
    ap.add_argument("--algorithm", default="recursive_doubling")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each thread count")
    ap.add_argument("--threads", default="1,2", help="engine thread counts to compare")
    _out.add(ap, "contention.json")
    args = ap.parse_args()
    if args.busy < 0 or args.repeat < 1:
        raise SystemExit(f"--busy {args.busy} / --repeat {args.repeat}: need >= 0 and >= 1")
    counts = [int(t) for t in args.threads.split(",")]
    n = 1 << args.log2n
    busy = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
    runs: dict[int, list[dict]] = {t: [] for t in counts}
    loads = []
    try:
        time.sleep(2.0 if busy else 0.0)
        for _ in range(args.repeat):
            for t in counts:
                loads.append(os.getloadavg()[0])
                runs[t].append(child(CHILD, args.algorithm, n, t))
    finally:
        for p in busy:
            p.kill()
            p.wait()
    completions = {r["completion_ns"] for rs in runs.values() for r in rs}
    print(
        f"{args.algorithm} 2^{args.log2n} under {MODEL}; {args.busy} busy processes on "
        f"{os.cpu_count()} CPUs; load average {min(loads):.1f}-{max(loads):.1f}; "
        f"{args.repeat} fresh runs each"
    )
    print(f"{'threads':>7} {'best s':>7} {'median s':>8} {'cpu s':>6} {'vs 1':>6}")
    rows = []
    base = statistics.median(r["wall_s"] for r in runs[counts[0]])
    for t in counts:
        walls = [r["wall_s"] for r in runs[t]]
        med = statistics.median(walls)
        cpu = statistics.median(r["cpu_s"] for r in runs[t])
        rows.append(
            {"threads": t, "wall_s": walls, "best_s": min(walls), "median_s": med, "cpu_s": cpu}
        )
        print(f"{t:>7} {min(walls):7.2f} {med:8.2f} {cpu:6.2f} {med / base:5.2f}x")
    out = _out.path(args.out, "contention.json")
    record = {
        "algorithm": args.algorithm,
        "nranks": n,
        "model": MODEL,
        "busy": args.busy,
        "cpus": os.cpu_count(),
        "load": [min(loads), max(loads)],
        "completion_ns": sorted(completions),
        "rows": rows,
    }
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}")
    if len(completions) != 1:
        sys.exit(f"the thread counts disagree on the completion time: {sorted(completions)}")


if __name__ == "__main__":
    main()

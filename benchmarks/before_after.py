"""Before/after: the same workloads on an earlier build of hypercuboid and on this one, side by
side in one run, so that a restructuring can show it changed neither results nor speed.

Workloads (each run in a fresh process, so that peak memory is its own):

* ``rd20``: generate and simulate recursive doubling of 8 B on 2^20 ranks under
  ``loggops:L=3000,o=1500,g=1000,G=6`` (completion 120,840 ns);
* ``min30``: the packet simulator on Slim Fly q=13 p=9, uniform traffic at 30 % with minimal
  routing, 200 us simulated (20 us warm-up), one engine thread;
* ``ugal90``: the same at 90 % with UGAL.

The builds alternate (before, after, before, after, ...) ``--repeat`` times and the fastest run
of each is kept, which is what a noisy shared machine allows. Every run's results (completion
time; accepted load, delivered packets, latencies) must be equal between the builds: the
script stops if they differ. Prints a table with the ratio after / before and writes
``benchmarks/results/before_after.json``.

The earlier build is a directory holding its ``hypercuboid`` package (with its compiled
``_core``): ``make baseline REV=<commit>`` builds one under ``.baseline/<commit>``.

    python benchmarks/before_after.py --before .baseline/8f05597 [--repeat 3] [--only rd20]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import _out

HERE = Path(__file__).resolve().parent
AFTER = str(HERE.parent / "python")

# Each child prints one JSON object: "time_s" and the results to compare. The children speak
# to both builds: the schedule generators moved to hc.schedules, netsim results became objects.
CHILD = {
    "rd20": r"""
import json, resource, time, warnings
warnings.simplefilter("ignore")
import hypercuboid as hc
gen = getattr(hc, "schedules", hc)
t0 = time.perf_counter()
s = gen.allreduce("recursive_doubling", 1 << 20, 1, dtype="int64")
r = s.simulate("loggops:L=3000,o=1500,g=1000,G=6")
t = time.perf_counter() - t0
print(json.dumps({"time_s": t, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "results": {"completion_ns": r.completion_time_ns, "ops": r.ops}}))
""",
    "netsim": r"""
import json, resource, sys, time
from hypercuboid import netsim
from hypercuboid.topology import generate
routing, load = sys.argv[1], float(sys.argv[2])
topo = generate("slimfly:q=13,p=9")
t0 = time.perf_counter()
r = netsim.run(topo, routing=routing, traffic="uniform", load=load, threads=1)
t = time.perf_counter() - t0
d = r if isinstance(r, dict) else r.to_dict()
keep = ("accepted", "generated", "delivered", "delivered_total", "latency_avg_ns",
        "latency_p99_ns", "hops_avg", "indirect_fraction")
print(json.dumps({"time_s": t, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "packets_per_s": d["delivered_total"] / t,
                  "results": {k: d[k] for k in keep}}))
""",
}

WORKLOADS = {
    "rd20": ("recursive doubling 2^20, LogGOPS", "rd20", []),
    "min30": ("SF q=13 uniform 30 % MIN, 1 thread", "netsim", ["min", "0.3"]),
    "ugal90": ("SF q=13 uniform 90 % UGAL, 1 thread", "netsim", ["ugal", "0.9"]),
}


def run(pythonpath: str, child: str, args: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    out = subprocess.run(
        [sys.executable, "-c", CHILD[child], *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--before",
        default=None,
        help="directory holding the earlier package (default: the newest under .baseline/)",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=",".join(WORKLOADS), help="workloads, comma separated")
    _out.add(ap, "before_after.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "before_after.json")
    if args.before is None:
        built = sorted(
            (p for p in (HERE.parent / ".baseline").glob("*") if (p / "hypercuboid").is_dir()),
            key=lambda p: p.stat().st_mtime,
        )
        if not built:
            print("no earlier build to compare with: make baseline REV=<commit> builds one")
            return
        args.before = str(built[-1])
    before = str(Path(args.before).resolve())
    if not (Path(before) / "hypercuboid").is_dir():
        sys.exit(f"{before} holds no hypercuboid package; build one with make baseline REV=...")
    rows = []
    print(
        f"{'workload':38} {'before s':>9} {'after s':>9} {'after/before':>12} {'MB before':>9} "
        f"{'MB after':>9}  results"
    )
    for key in args.only.split(","):
        what, child, cargs = WORKLOADS[key]
        best: dict[str, dict] = {}
        for _ in range(args.repeat):
            for side, path in (("before", before), ("after", AFTER)):
                r = run(path, child, cargs)
                if side in best and r["results"] != best[side]["results"]:
                    sys.exit(f"{key}: the {side} build gave different results on a rerun")
                if side not in best or r["time_s"] < best[side]["time_s"]:
                    best[side] = r
        same = best["before"]["results"] == best["after"]["results"]
        row = {
            "workload": key,
            "what": what,
            "before": best["before"],
            "after": best["after"],
            "ratio": best["after"]["time_s"] / best["before"]["time_s"],
            "same_results": same,
        }
        rows.append(row)
        print(
            f"{what:38} {best['before']['time_s']:>9.3f} {best['after']['time_s']:>9.3f} "
            f"{row['ratio']:>12.3f} {best['before']['peak_mb']:>9.0f} "
            f"{best['after']['peak_mb']:>9.0f}  {'identical' if same else 'DIFFERENT'}",
            flush=True,
        )
        if not same:
            print(f"  before: {best['before']['results']}\n  after:  {best['after']['results']}")
    Path(args.out).parent.mkdir(exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "machine": platform.machine(),
                "cpus": os.cpu_count(),
                "before": before,
                "repeat": args.repeat,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {args.out}")
    if not all(r["same_results"] for r in rows):
        sys.exit("results differ between the builds")


if __name__ == "__main__":
    main()

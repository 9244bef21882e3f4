"""The `scheduled` alltoall's synchronisation and its generated MPI_Alltoall routine
(docs/alltoall.md, "scheduled"):

1. Synchronisation messages before and after the removal of redundant ones for the seed's
   clusters (fig1, fig5a/b/c), and the wall time of building the plan (phases + pairwise
   synchronisation + its transitive reduction + the C file) on random trees of 256 machines
   (bar of issue 15: 10 s).
2. Over MPI on this machine, np = 4 and 8 (two switches, half the machines on each): the
   generated C routine vs the library's MPI_Alltoall (both timed by one C loop, interleaved)
   vs our Python executor running the same `scheduled` schedule (hypercuboid bench alltoall
   --runner python), 1 KB - 1 MB a block, one run, as ratios. This machine has 2 cores: np 8
   is oversubscribed 4x, so those times measure the scheduler of the OS as much as MPI.

Run: .venv/bin/python benchmarks/alltoall_sync.py [--skip-mpi] [--iterations 20]
Prints the tables and writes benchmarks/results/alltoall_sync.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _out
from hypercuboid import phases

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
#: Bar of issue 15 for the synchronisation with redundancy removal on 256 machines (s).
BAR_S = 10.0
SIZES = [1024, 4096, 16384, 65536, 262144, 1048576]
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,sm",
    "OMPI_MCA_mpi_yield_when_idle": "1",
}
MPIEXEC = [str(BIN / "mpiexec"), "--oversubscribe", "--bind-to", "none"]


def counts_table() -> list[dict]:
    rows = []
    for spec in ("tree:fig1", "tree:fig5a", "tree:fig5b", "tree:fig5c"):
        c = phases.sync_counts(spec)
        rows.append(
            {
                "topology": spec,
                "ranks": c.ranks,
                "messages": c.messages,
                "phases": c.phases,
                "pairwise": c.pairwise,
                "pairwise_reduced": c.pairwise_reduced,
                "barrier": c.barrier,
            }
        )
    return rows


def plan_times(repeat: int) -> list[dict]:
    rows = []
    for shape, switches, seed in (("random", 16, 4), ("star", 16, 5), ("deep", 16, 6)):
        topo = phases.random_tree(256, switches, shape, seed)
        out = {"tree": f"{shape}, 256 machines, {switches} switches (seed {seed})"}
        for sync in ("none", "pairwise-reduced"):
            times, r = [], None
            for _ in range(repeat):
                t0 = time.perf_counter()
                r = phases.alltoall_routine(topo, sync=sync)
                times.append(time.perf_counter() - t0)
            out[f"{sync}_s"] = statistics.median(times)
            out[f"{sync}_syncs"] = r.syncs
        out["phases"] = r.phases
        out["messages"] = r.messages
        rows.append(out)
    return rows


def two_switch_tree(n: int, path: Path) -> str:
    half = n // 2
    machines = [f"n{i}" for i in range(n)]
    links = [["s0", "s1"]] + [[m, "s0" if i < half else "s1"] for i, m in enumerate(machines)]
    desc = {"name": f"two-switch-{n}", "switches": ["s0", "s1"], "machines": machines}
    desc["links"] = links
    path.write_text(json.dumps(desc))
    return f"tree:{path}"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{done.stdout}\n{done.stderr}")
    return done


def mpi_table(nps: list[int], iterations: int, warmup: int) -> list[dict]:
    rows = []
    env = {**os.environ, **MPI_ENV}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for n in nps:
            spec = two_switch_tree(n, t / f"tree{n}.json")
            src = t / f"a2a{n}.c"
            src.write_text(phases.alltoall_routine(spec, name="hc_alltoall").text)
            exe = t / f"bench{n}"
            run(
                [str(BIN / "mpicc"), "-O2", "-DROUTINE=hc_alltoall", "-o", str(exe),
                 str(ROOT / "benchmarks" / "native" / "alltoall_routine_bench.c"), str(src)]
            )  # fmt: skip
            sizes = [str(s) for s in SIZES]
            out = run([*MPIEXEC, "-n", str(n), str(exe), str(iterations), str(warmup), *sizes],
                      env=env, timeout=1800)  # fmt: skip
            c = {}
            for line in out.stdout.splitlines():
                size, routine_us, library_us = line.split()
                c[int(size)] = (float(routine_us), float(library_us))
            js = t / f"py{n}.json"
            run(
                [*MPIEXEC, "-n", str(n), str(BIN / "hypercuboid"), "bench", "alltoall", "-a",
                 f"scheduled:topo={spec}", "--runner", "python", "--sizes", ",".join(sizes),
                 "-i", str(iterations), "-x", str(warmup), "--json", str(js), "-q"],
                env=env, timeout=3600,
            )  # fmt: skip
            py = {
                r["bytes"]: r["avg_us"]
                for r in json.loads(js.read_text())
                if r["algorithm"].startswith("scheduled")
            }
            for s in SIZES:
                routine, library = c[s]
                rows.append(
                    {
                        "np": n,
                        "size": s,
                        "routine_us": routine,
                        "library_us": library,
                        "python_us": py.get(s),
                        "routine_over_library": routine / library,
                        "python_over_routine": (py[s] / routine) if s in py else None,
                    }
                )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--skip-mpi", action="store_true")
    ap.add_argument("--nps", default="4,8")
    _out.add(ap, "alltoall_sync.json")
    a = ap.parse_args()
    counts = counts_table()
    print("synchronisation messages (scheduled; pairwise before, pairwise-reduced after the")
    print("removal of redundant synchronisations; barrier: dissemination barriers)")
    print(f"{'cluster':<12}{'ranks':>6}{'messages':>10}{'phases':>8}{'pairwise':>10}"
          f"{'reduced':>9}{'barrier':>9}")  # fmt: skip
    for r in counts:
        print(f"{r['topology']:<12}{r['ranks']:>6}{r['messages']:>10}{r['phases']:>8}"
              f"{r['pairwise']:>10}{r['pairwise_reduced']:>9}{r['barrier']:>9}")  # fmt: skip
    times = plan_times(a.repeat)
    print(f"\nplan + C file on 256 machines (median of {a.repeat}; bar {BAR_S} s with reduction)")
    print(f"{'tree':<42}{'phases':>8}{'sync=none':>11}{'reduced':>10}{'syncs':>8}")
    for r in times:
        print(f"{r['tree']:<42}{r['phases']:>8}{r['none_s']:>10.2f}s"
              f"{r['pairwise-reduced_s']:>9.2f}s{r['pairwise-reduced_syncs']:>8}")  # fmt: skip
    mpi = []
    if not a.skip_mpi:
        mpi = mpi_table([int(x) for x in a.nps.split(",")], a.iterations, a.warmup)
        print("\nover MPI (Open MPI wheel, shared memory; avg latency over ranks, us; one run;")
        print(" 2 cores: np 8 is oversubscribed 4x)")
        print(f"{'np':>3}{'size':>9}{'routine':>11}{'MPI_Alltoall':>14}{'python':>11}"
              f"{'routine/lib':>13}{'python/routine':>16}")  # fmt: skip
        for r in mpi:
            py = r["python_us"]
            pr = r["python_over_routine"]
            print(f"{r['np']:>3}{r['size']:>9}{r['routine_us']:>11.1f}{r['library_us']:>14.1f}"
                  f"{(py if py is not None else float('nan')):>11.1f}"
                  f"{r['routine_over_library']:>13.2f}"
                  f"{(pr if pr is not None else float('nan')):>16.2f}")  # fmt: skip
    out = _out.path(a.out, "alltoall_sync.json")
    out.write_text(
        json.dumps(
            {
                "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
                "command": " ".join(["benchmarks/alltoall_sync.py", *sys.argv[1:]]),
                "sync_counts": counts,
                "plan_256": times,
                "bar_s": BAR_S,
                "mpi": mpi,
                "mpi_settings": {"iterations": a.iterations, "warmup": a.warmup, "sizes": SIZES},
            },
            indent=1,
        )
        + "\n"
    )
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()

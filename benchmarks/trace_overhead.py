"""The recorder's overhead (docs/trace.md), in fresh processes, interleaved: each repetition runs
the program without the recorder and then with each recorder, so that the machine's load falls
on every column alike. The figures are the fastest run (the recorder's own cost: the runs that
held their cores) and the median; the load average is printed with them.

Programs (--app):
  loop    an OSU-style loop of 8-byte MPI_Allreduce calls (1,000 warm-up calls, then ITERS timed
          ones; the latency is the mean per call of the slowest rank), bar <= 5 %;
  lbm     `hypercuboid lbm run --lattice L --steps S` (its elapsed_s), bar <= 1 %;
  pair    the recorder's cost per call inside one launch: each of ROUNDS rounds runs ITERS
          8-byte allreduces through MPI_Allreduce (the recorder) and ITERS through
          PMPI_Allreduce (none), so that both see the same launch (this VM's launches land in a
          fast or a slow state) and the same load; the figures are each launch's fastest round
          of each, their difference, and the median of the rounds' differences;
  wrapper the recorder's own cost per call, without MPI's: `pair` on one rank, linked against a
          stub MPI_Allreduce and PMPI_Allreduce (a library before libmpi, which spins a random
          16 to 31 loads so that its loop's exit mispredicts as a spin-wait's does; without the
          recorder, MPI_ and PMPI_ are the same stub). It needs no second core, so it holds on a
          loaded machine where `pair` does not;
  clocks  what one reading of each clock costs on this machine (rdtsc, rdtscp, lfence + rdtsc,
          clock_gettime through the vDSO, and the thread's CPU time, a system call), the
          fastest of 300 rounds of 100,000 back to back.

    make native
    python benchmarks/trace_overhead.py [--app loop|lbm|pair|wrapper|clocks] [--np 2]
        [--iters 20000] [--reps 15] [--rounds 100] [--mpi openmpi] [--recorder NAME=PATH ...]

--recorder adds a recorder to compare (e.g. an older build: old=/path/libhc_trace.so); the
default compares none with this tree's build. `pair` and `wrapper` run the two sides of a round
in either order in every other round. Writes trace_overhead[_APP].json (loop:
trace_overhead.json) into ``--out`` (default ``out/``, see ``_out.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _out

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

LOOP = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int iters = atoi(argv[1]), rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = 1, y = 0, t = 0;
    for (int i = 0; i < 1000 + iters; i++) {
        if (i == 1000) { MPI_Barrier(MPI_COMM_WORLD); t = MPI_Wtime(); }
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    t = (MPI_Wtime() - t) / iters * 1e6;
    double worst;
    MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%.4f\n", worst);
    MPI_Finalize();
    return 0;
}
"""

# rounds of ITERS allreduces through the recorder (MPI_) and past it (PMPI_), in turn
PAIR = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int iters = atoi(argv[1]), rounds = atoi(argv[2]), rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = 1, y = 0, *d = malloc(rounds * sizeof *d), best[2] = {1e30, 1e30};
    for (int i = 0; i < 1000; i++) PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int r = 0; r < rounds; r++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int m = k ^ (r & 1); /* either goes first in every other round */
            PMPI_Barrier(MPI_COMM_WORLD);
            double s = PMPI_Wtime();
            for (int i = 0; i < iters; i++)
                if (m == 0) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            s = (PMPI_Wtime() - s) / iters * 1e6;
            PMPI_Allreduce(&s, &t[m], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (t[m] < best[m]) best[m] = t[m];
        }
        d[r] = t[0] - t[1];
    }
    qsort(d, rounds, sizeof *d, cmp);
    if (rank == 0) printf("%.5f %.5f %.5f\n", best[1], best[0], d[rounds / 2]);
    MPI_Finalize();
    return 0;
}
"""

# --app wrapper: PAIR linked against a stub MPI_Allreduce and PMPI_Allreduce (no MPI inside;
# the recorder's MPI_Allreduce, preloaded, comes first), which pair's one-rank reductions of its
# timings also go through
STUB = r"""
#include <mpi.h>
#include <stdint.h>
static volatile int flag[64];
static uint64_t st = 88172645463325252ull;
int PMPI_Allreduce(const void *s, void *r, int n, MPI_Datatype dt, MPI_Op op, MPI_Comm c) {
    st ^= st << 13;
    st ^= st >> 7;
    st ^= st << 17;
    for (int i = 0, k = 16 + (int)(st >> 60); i < k; i++) (void)flag[i & 63];
    *(double *)r = *(const double *)s;
    return 0;
}
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype dt, MPI_Op op, MPI_Comm c) {
    return PMPI_Allreduce(s, r, n, dt, op, c);
}
"""

CLOCKS = r"""
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>
static double ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
#define N 100000
volatile uint64_t sink;
#define BENCH(NAME, READ)                                                                  \
    {                                                                                      \
        double best = 1e30;                                                                \
        for (int r = 0; r < 300; r++) {                                                    \
            uint64_t acc = 0;                                                              \
            double a = ns();                                                               \
            for (int i = 0; i < N; i++) { READ; }                                          \
            sink = acc;                                                                    \
            double b = (ns() - a) / N;                                                     \
            if (b < best) best = b;                                                        \
        }                                                                                  \
        printf("%s\t%.2f\n", NAME, best);                                                  \
    }
int main(void) {
    unsigned aux;
    struct timespec ts;
    BENCH("rdtsc", acc += __rdtsc());
    BENCH("rdtscp", acc += __rdtscp(&aux));
    BENCH("lfence; rdtsc", _mm_lfence(); acc += __rdtsc());
    BENCH("clock_gettime(CLOCK_MONOTONIC)", clock_gettime(CLOCK_MONOTONIC, &ts); acc += ts.tv_nsec);
    BENCH("clock_gettime(CLOCK_MONOTONIC_RAW)",
          clock_gettime(CLOCK_MONOTONIC_RAW, &ts); acc += ts.tv_nsec);
    BENCH("clock_gettime(CLOCK_MONOTONIC_COARSE)",
          clock_gettime(CLOCK_MONOTONIC_COARSE, &ts); acc += ts.tv_nsec);
    BENCH("clock_gettime(CLOCK_THREAD_CPUTIME_ID)",
          clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); acc += ts.tv_nsec);
    return 0;
}
"""

OMPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,sm",
}


def _measure(cmd: list[str], env: dict[str, str], app: str) -> float:
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    if app == "loop":
        return float(out.stdout.split()[-1])
    return json.loads(out.stdout.strip().splitlines()[-1])["elapsed_s"]


def _write(out_dir: str, name: str, result: dict) -> None:
    _out.path(out_dir, name).write_text(json.dumps(result, indent=1) + "\n")


def _clocks(tmp: str, out_dir: str) -> None:
    """--app clocks: the cost of one reading of each clock."""
    src, exe = Path(tmp) / "clocks.c", Path(tmp) / "clocks"
    src.write_text(CLOCKS)
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", str(exe), str(src)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    ns = {line.split("\t")[0]: float(line.split("\t")[1]) for line in out.splitlines()}
    load = os.getloadavg()
    print("one clock reading, back to back (fastest of 300 rounds of 100,000)")
    for k, v in ns.items():
        print(f"{k:40} {v:>7.2f} ns")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    _write(out_dir, "trace_overhead_clocks.json", {"app": "clocks", "ns": ns, "loadavg": load})


def _pair(args, recorders: dict[str, str], mpiexec: list[str], base_env: dict, exe: Path) -> None:
    """--app pair: MPI_ (through the recorder) against PMPI_ rounds inside each launch."""
    runs: dict[str, list[list[float]]] = {"without": [], **{k: [] for k in recorders}}
    for _ in range(args.reps):
        for mode in runs:
            env = dict(base_env)
            if mode != "without":
                env["LD_PRELOAD"] = recorders[mode]
                env["HYPERCUBOID_TRACE_PREFIX"] = str(exe.parent / "rank")
            cmd = [*mpiexec, "-n", str(args.np), str(exe), str(args.iters), str(args.rounds)]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            runs[mode].append([float(x) for x in out.stdout.split()[-3:]])
    load = os.getloadavg()
    what = "stub" if args.app == "wrapper" else "8-byte"
    print(
        f"{what} MPI_Allreduce, {args.np} ranks, {args.mpi}: {args.rounds} rounds of "
        f"{args.iters} calls through MPI_ and PMPI_ in turn, in each of {args.reps} launches"
    )
    print("each launch's fastest round of each, their difference; the rounds' median difference")
    print(f"{'':10} {'PMPI_ us':>9} {'MPI_ us':>9} {'+ns':>7} {'+%':>7} {'+ns median':>11}")
    summary = {}
    for k, rows in runs.items():
        # a launch's two fastest rounds share its state (fast or slow); then the median launch
        diff = [(r[1] - r[0]) * 1e3 for r in rows]
        pct = [(r[1] / r[0] - 1) * 100 for r in rows]
        med = [r[2] * 1e3 for r in rows]
        summary[k] = {
            "pmpi_us": statistics.median(r[0] for r in rows),
            "mpi_us": statistics.median(r[1] for r in rows),
            "diff_ns": statistics.median(diff),
            "diff_percent": statistics.median(pct),
            "median_round_diff_ns": statistics.median(med),
        }
        for n, (r, d, p, m) in enumerate(zip(rows, diff, pct, med, strict=True)):
            name = k if n == 0 else ""
            print(f"{name:10} {r[0]:>9.4f} {r[1]:>9.4f} {d:>+7.1f} {p:>+6.1f}% {m:>+11.1f}")
        v = summary[k]
        print(
            f"{'  median':10} {v['pmpi_us']:>9.4f} {v['mpi_us']:>9.4f} {v['diff_ns']:>+7.1f} "
            f"{v['diff_percent']:>+6.1f}% {v['median_round_diff_ns']:>+11.1f}"
        )
    bar = "bar: <= 5 %; " if args.app == "pair" else ""
    print(f"{bar}load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    result = {"app": args.app, "np": args.np, "mpi": args.mpi, "iters": args.iters}
    result |= {"rounds": args.rounds, "recorders": recorders, "runs": runs, "summary": summary}
    _write(args.out, f"trace_overhead_{args.app}.json", {**result, "loadavg": load})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--app", choices=("loop", "lbm", "pair", "wrapper", "clocks"), default="loop")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20000, help="loop: timed calls; pair: a round's")
    ap.add_argument("--rounds", type=int, default=100, help="pair: rounds per launch")
    ap.add_argument("--lattice", default="32x32x32", help="lbm: the lattice")
    ap.add_argument("--steps", type=int, default=50, help="lbm: time steps")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--mpi", choices=("openmpi", "mpich"), default="openmpi")
    ap.add_argument("--recorder", action="append", default=[], metavar="NAME=PATH")
    _out.add(ap, "trace_overhead[_APP].json")
    args = ap.parse_args()
    from hypercuboid.apptrace import library_path

    if args.app == "clocks":
        with tempfile.TemporaryDirectory() as tmp:
            _clocks(tmp, args.out)
        return

    venv = ROOT / (".venv" if args.mpi == "openmpi" else ".venv-mpich")
    if not venv.exists():
        venv = Path("/work/main") / venv.name  # a worktree shares the main checkout's venvs
    recorders = {"with": str(library_path(args.mpi))}
    for spec in args.recorder:
        name, _, path = spec.partition("=")
        if not path or not Path(path).exists():
            ap.error(f"--recorder {spec!r}: expected NAME=PATH of an existing libhc_trace.so")
        recorders[name] = path
    bar = 5 if args.app == "loop" else 1
    unit = "us" if args.app == "loop" else "s"
    with tempfile.TemporaryDirectory() as tmp:
        mpiexec = [str(venv / "bin" / "mpiexec")]
        if args.mpi == "openmpi":
            mpiexec += ["--oversubscribe", "--bind-to", "none"]
        base_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        base_env.update(OMPI_ENV if args.mpi == "openmpi" else {})
        base_env["PYTHONPATH"] = str(ROOT / "python")
        if args.app in ("loop", "pair", "wrapper"):
            exe = Path(tmp) / args.app
            src = Path(tmp) / f"{args.app}.c"
            src.write_text(LOOP if args.app == "loop" else PAIR)
            cc = [str(venv / "bin" / "mpicc"), "-O2", "-o", str(exe), str(src)]
            if args.app == "wrapper":  # the stub first, and one rank
                (Path(tmp) / "stub.c").write_text(STUB)
                stub = [*cc[:2], "-O2", "-shared", "-fPIC", "-o", f"{tmp}/libstub.so"]
                subprocess.run([*stub, f"{tmp}/stub.c"], check=True)
                cc += [f"-L{tmp}", "-lstub", f"-Wl,-rpath,{tmp}"]
                args.np = 1
            subprocess.run(cc, check=True)
            prog = [str(exe), str(args.iters)]
            if args.app != "loop":
                _pair(args, recorders, mpiexec, base_env, exe)
                return
        else:
            hc = shutil.which("hypercuboid") or str(venv / "bin" / "hypercuboid")
            prog = [hc, "lbm", "run", "--lattice", args.lattice, "--steps", str(args.steps)]
            prog += ["-q", "--json"]
        times: dict[str, list[float]] = {"without": [], **{k: [] for k in recorders}}
        for _ in range(args.reps):
            for mode in times:
                env = dict(base_env)
                if mode != "without":
                    env["LD_PRELOAD"] = recorders[mode]
                    env["HYPERCUBOID_TRACE_PREFIX"] = str(Path(tmp) / "rank")
                cmd = [*mpiexec, "-n", str(args.np), *prog]
                times[mode].append(_measure(cmd, env, args.app))
    load = os.getloadavg()
    med = {k: statistics.median(v) for k, v in times.items()}
    low = {k: min(v) for k, v in times.items()}
    what = (
        f"8-byte MPI_Allreduce, {args.iters} calls"
        if args.app == "loop"
        else f"lbm run --lattice {args.lattice} --steps {args.steps}"
    )
    print(f"{what}, {args.np} ranks, {args.mpi}, {args.reps} interleaved runs each")
    print(f"{'':10} {'min ' + unit:>10} {'median ' + unit:>10} {'+min':>8} {'+median':>8}")
    for k in times:
        d_low = (low[k] / low["without"] - 1) * 100
        d_med = (med[k] / med["without"] - 1) * 100
        print(f"{k:10} {low[k]:>10.4f} {med[k]:>10.4f} {d_low:>+7.1f}% {d_med:>+7.1f}%")
    print(f"bar: <= {bar} %; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    name = "trace_overhead.json" if args.app == "loop" else "trace_overhead_lbm.json"
    _write(
        args.out,
        name,
        {
            "app": args.app,
            "np": args.np,
            "mpi": args.mpi,
            "iters": args.iters,
            "lattice": args.lattice,
            "steps": args.steps,
            "recorders": recorders,
            "times": times,
            "min": low,
            "median": med,
            "overhead_min_percent": {k: (low[k] / low["without"] - 1) * 100 for k in recorders},
            "loadavg": load,
        },
    )


if __name__ == "__main__":
    main()

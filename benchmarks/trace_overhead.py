"""The recorder's overhead (docs/trace.md), in fresh processes, interleaved: each repetition runs
the program without the recorder and then with each recorder, so that the machine's load falls
on every column alike. The figures are the fastest run (the recorder's own cost: the runs that
held their cores) and the median; the load average is printed with them.

Programs (--app):
  loop  an OSU-style loop of 8-byte MPI_Allreduce calls (1,000 warm-up calls, then ITERS timed
        ones; the latency is the mean per call of the slowest rank), bar <= 5 %;
  lbm   `hypercuboid lbm run --lattice L --steps S` (its elapsed_s), bar <= 1 %.

    make native
    python benchmarks/trace_overhead.py [--app loop|lbm] [--np 2] [--iters 20000] [--reps 15]
        [--mpi openmpi] [--recorder NAME=PATH ...]

--recorder adds a recorder to compare (e.g. an older build: old=/path/libhc_trace.so); the
default compares none with this tree's build. Writes benchmarks/results/trace_overhead[_lbm].json.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--app", choices=("loop", "lbm"), default="loop")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20000, help="loop: timed calls")
    ap.add_argument("--lattice", default="32x32x32", help="lbm: the lattice")
    ap.add_argument("--steps", type=int, default=50, help="lbm: time steps")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--mpi", choices=("openmpi", "mpich"), default="openmpi")
    ap.add_argument("--recorder", action="append", default=[], metavar="NAME=PATH")
    args = ap.parse_args()
    from hypercuboid.apptrace import library_path

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
        if args.app == "loop":
            exe = Path(tmp) / "loop"
            src = Path(tmp) / "loop.c"
            src.write_text(LOOP)
            cc = [str(venv / "bin" / "mpicc"), "-O2", "-o", str(exe), str(src)]
            subprocess.run(cc, check=True)
            prog = [str(exe), str(args.iters)]
        else:
            hc = shutil.which("hypercuboid") or str(venv / "bin" / "hypercuboid")
            prog = [hc, "lbm", "run", "--lattice", args.lattice, "--steps", str(args.steps)]
            prog += ["-q", "--json"]
        base_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        base_env.update(OMPI_ENV if args.mpi == "openmpi" else {})
        base_env["PYTHONPATH"] = str(ROOT / "python")
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
    out = ROOT / "benchmarks" / "results" / name
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
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
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()

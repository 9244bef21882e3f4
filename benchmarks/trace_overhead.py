"""The recorder's overhead (docs/trace.md): an OSU-style loop of 8-byte MPI_Allreduce calls
(1,000 warm-up calls, then ITERS timed ones; the latency is the mean per call of the slowest
rank), run without and with libhc_trace.so preloaded, alternating, REPS times each, side by side
in one run. The figure is the median over the repetitions; the load average is printed with it
(this machine is shared: compare the two columns of one run, not runs of different days).

    make native
    python benchmarks/trace_overhead.py [--np 2] [--iters 20000] [--reps 5] [--mpi openmpi]

Writes benchmarks/results/trace_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mpi", choices=("openmpi", "mpich"), default="openmpi")
    args = ap.parse_args()
    from hypercuboid.apptrace import library_path

    venv = ROOT / (".venv" if args.mpi == "openmpi" else ".venv-mpich")
    if not venv.exists():
        venv = Path("/work/main") / venv.name  # a worktree shares the main checkout's venvs
    lib = library_path(args.mpi)
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "loop"
        src = Path(tmp) / "loop.c"
        src.write_text(LOOP)
        subprocess.run([str(venv / "bin" / "mpicc"), "-O2", "-o", str(exe), str(src)], check=True)
        mpiexec = [str(venv / "bin" / "mpiexec")]
        if args.mpi == "openmpi":
            mpiexec += ["--oversubscribe", "--bind-to", "none"]
        base_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        base_env.update(OMPI_ENV if args.mpi == "openmpi" else {})
        times: dict[str, list[float]] = {"without": [], "with": []}
        for _ in range(args.reps):
            for mode in ("without", "with"):
                env = dict(base_env)
                if mode == "with":
                    env["LD_PRELOAD"] = str(lib)
                    env["HYPERCUBOID_TRACE_PREFIX"] = str(Path(tmp) / "rank")
                out = subprocess.run(
                    [*mpiexec, "-n", str(args.np), str(exe), str(args.iters)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                times[mode].append(float(out.stdout.split()[-1]))
    load = os.getloadavg()
    med = {k: statistics.median(v) for k, v in times.items()}
    overhead = (med["with"] / med["without"] - 1) * 100
    print(f"8-byte MPI_Allreduce, {args.np} ranks, {args.mpi}, {args.iters} calls x {args.reps}")
    print(f"{'':10} {'median us':>10} {'min us':>10}")
    for k in ("without", "with"):
        print(f"{k:10} {med[k]:>10.3f} {min(times[k]):>10.3f}")
    print(f"overhead   {overhead:+.1f} % (bar: <= 5 %)")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    out = ROOT / "benchmarks" / "results" / "trace_overhead.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "np": args.np,
                "mpi": args.mpi,
                "iters": args.iters,
                "times_us": times,
                "median_us": med,
                "overhead_percent": overhead,
                "loadavg": load,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()

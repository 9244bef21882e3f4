"""End-to-end benchmark: the alltoall generators over MPI against the library's MPI_Alltoall.

For each rank count (default 4 and 8, oversubscribed on this machine's cores) and each runner
(the compiled native runner, whose C loop also times ``MPI_Alltoall``; the mpi4py engine, timed
by the Python loop with ``comm.Alltoall`` beside it), one ``mpiexec`` job runs
``hypercuboid bench alltoall --check`` over 1 KiB – 1 MiB per pair of ranks (osu_alltoall's
conventions: avg / min / max over the ranks of each rank's mean latency). The table printed
puts every algorithm's average latency beside the library's, as a ratio (> 1: slower than
``MPI_Alltoall``). Results go to ``benchmarks/results/alltoall.json``.

    .venv/bin/python benchmarks/alltoall.py [--np 4,8] [--runners native,python]
        [--sizes 1K:1M] [--iterations 50] [--mpi openmpi,mpich]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
ALGORITHMS = "linear,linear_shifted,pairwise,bruck,k_bruck:k=4,linear_sync,native"

#: (venv, mpiexec arguments, environment) of each MPI.
MPIS = {
    "openmpi": (
        ROOT / ".venv",
        ["--oversubscribe", "--bind-to", "none"],
        {
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_pml": "ob1",
            "OMPI_MCA_btl": "self,sm",
            "OMPI_MCA_mpi_yield_when_idle": "1",
        },
    ),
    "mpich": (ROOT / ".venv-mpich", [], {"PYTHONPATH": str(ROOT / "python")}),
}


def run(mpi: str, nprocs: int, runner: str, sizes: str, iterations: int) -> list[dict]:
    venv, args, env = MPIS[mpi]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        hc = [str(venv / "bin" / "python"), "-c", "from hypercuboid.cli import main; main()"]
        cmd = [
            str(venv / "bin" / "mpiexec"),
            "-n",
            str(nprocs),
            *args,
            *hc,
            "bench",
            "alltoall",
            "-a",
            ALGORITHMS,
            "-m",
            sizes,
            "-i",
            str(iterations),
            "-x",
            str(max(1, iterations // 10)),
            "--check",
            "--runner",
            runner,
            "--quiet",
            "--json",
            str(out),
        ]
        print("$", " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, env={**os.environ, **env}, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def table(rows: list[dict]) -> str:
    algs = [a for a in ALGORITHMS.split(",") if a != "native"]
    lines = ["size      MPI_Alltoall us  " + "  ".join(f"{a:>14}" for a in algs)]
    for size in sorted({r["bytes"] for r in rows}):
        at = {r["algorithm"]: r for r in rows if r["bytes"] == size}
        lib = at["native"]["avg_us"]
        cells = [f"{at[a]['avg_us'] / lib:>13.2f}x" for a in algs]
        lines.append(f"{size:>8}  {lib:>15.1f}  " + "  ".join(cells))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", default="4,8")
    ap.add_argument("--runners", default="native,python")
    ap.add_argument("--sizes", default="1K:1M")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--mpi", default="openmpi")
    a = ap.parse_args()
    results = []
    for mpi in a.mpi.split(","):
        for n in (int(x) for x in a.np.split(",")):
            for runner in a.runners.split(","):
                rows = run(mpi, n, runner, a.sizes, a.iterations)
                bad = [r for r in rows if r["valid"] is not True]
                if bad:
                    raise SystemExit(f"{mpi} np {n} {runner}: results differ from MPI_Alltoall")
                print(f"\n{mpi}, {n} ranks, {runner} runner: avg latency ratio to MPI_Alltoall")
                print(table(rows))
                results.append({"mpi": mpi, "nranks": n, "runner": runner, "rows": rows})
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "alltoall.json"
    path.write_text(json.dumps({"iterations": a.iterations, "results": results}, indent=1))
    print(f"\nwrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()

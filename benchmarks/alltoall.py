"""End-to-end benchmark: the alltoall generators over MPI against the library's MPI_Alltoall.

For each rank count (default 4 and 8, oversubscribed on this machine's cores) and each runner
(the compiled native runner, whose C loop also times ``MPI_Alltoall``; the mpi4py engine, timed
by the Python loop with ``comm.Alltoall`` beside it), one ``mpiexec`` job runs
``hypercuboid bench alltoall --check`` over 1 KiB – 1 MiB per pair of ranks (osu_alltoall's
conventions: avg / min / max over the ranks of each rank's mean latency). The table printed
puts every algorithm's latency beside the library's, as a ratio (> 1: slower than
``MPI_Alltoall``), of the **medians** over every rank's samples: with more ranks than cores the
means are dominated by the few calls during which a rank was descheduled (milliseconds for a
microsecond call), the medians much less so. Each configuration runs ``--rounds`` times,
the rounds of all configurations interleaved, and the table takes each (size, algorithm)'s
smallest median over the rounds: the machine is shared, and a round that ran while others
computed is not the figure. The JSON keeps every round's rows. Results go to
``benchmarks/results/alltoall.json``; ``--table`` prints the tables of that file again.

    .venv/bin/python benchmarks/alltoall.py [--np 2,4] [--runners native,python]
        [--sizes 1K:1M] [--iterations 20] [--rounds 3] [--mpi openmpi,mpich] [--table]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _out

ROOT = Path(__file__).resolve().parent.parent
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
            "--sizes",
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


def table(rows: list[dict], stat: str = "median_us") -> str:
    algs = [a for a in ALGORITHMS.split(",") if a != "native"]
    lines = ["size      MPI_Alltoall us  " + "  ".join(f"{a:>14}" for a in algs)]
    for size in sorted({r["bytes"] for r in rows}):
        at = {r["algorithm"]: r for r in rows if r["bytes"] == size}
        lib = at["native"][stat]
        cells = [f"{at[a][stat] / lib:>13.2f}x" for a in algs]
        lines.append(f"{size:>8}  {lib:>15.1f}  " + "  ".join(cells))
    return "\n".join(lines)


def best(rounds: list[list[dict]]) -> list[dict]:
    """Each (size, algorithm)'s row of the round with the smallest median."""
    out: dict[tuple, dict] = {}
    for rows in rounds:
        for r in rows:
            key = (r["bytes"], r["algorithm"])
            if key not in out or r["median_us"] < out[key]["median_us"]:
                out[key] = r
    return [out[k] for k in sorted(out)]


def show(results: list[dict]) -> None:
    for r in results:
        print(
            f"\n{r['mpi']}, {r['nranks']} ranks, {r['runner']} runner: median latency (best of "
            f"{len(r['rounds'])} rounds), ratio to MPI_Alltoall"
        )
        print(table(best(r["rounds"])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", default="2,4")
    ap.add_argument("--runners", default="native,python")
    ap.add_argument("--sizes", default="1K:1M")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mpi", default="openmpi")
    ap.add_argument("--table", action="store_true", help="print the tables of the saved results")
    _out.add(ap, "alltoall.json")
    a = ap.parse_args()
    path = _out.path(a.out, "alltoall.json")
    if a.table:
        show(json.loads(path.read_text())["results"])
        return
    configs = [
        (mpi, int(n), runner)
        for mpi in a.mpi.split(",")
        for n in a.np.split(",")
        for runner in a.runners.split(",")
    ]
    results = [{"mpi": m, "nranks": n, "runner": r, "rounds": []} for m, n, r in configs]
    for _ in range(a.rounds):
        for (mpi, n, runner), res in zip(configs, results, strict=True):
            rows = run(mpi, n, runner, a.sizes, a.iterations)
            if any(r["valid"] is not True for r in rows):
                raise SystemExit(f"{mpi} np {n} {runner}: results differ from MPI_Alltoall")
            res["rounds"].append(rows)
    show(results)
    path.write_text(dump({"iterations": a.iterations, "results": results}))
    print(f"\nwrote {path}", file=sys.stderr)


#: The statistics a saved row keeps (the configuration is the result's).
KEEP = ("algorithm", "bytes", "avg_us", "min_us", "max_us", "median_us", "valid")


def dump(doc: dict) -> str:
    """The results as JSON, one row a line, each row with the keys of :data:`KEEP`."""
    lines = ["{", f' "iterations": {doc["iterations"]},', ' "results": [']
    for i, r in enumerate(doc["results"]):
        head = {k: r[k] for k in ("mpi", "nranks", "runner")}
        lines.append("  {" + json.dumps(head)[1:-1] + ', "rounds": [')
        for j, rows in enumerate(r["rounds"]):
            lines.append("   [")
            body = [
                "    "
                + json.dumps({k: round(x[k], 3) if k.endswith("_us") else x[k] for k in KEEP})
                for x in rows
            ]
            lines.append(",\n".join(body))
            lines.append("   ]" + ("," if j + 1 < len(r["rounds"]) else ""))
        lines.append("  ]}" + ("," if i + 1 < len(doc["results"]) else ""))
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

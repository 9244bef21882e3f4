"""End-to-end benchmark: the native runner against the MPI library's own algorithm, forced.

For each MPI this repository installs (Open MPI in ``.venv``, MPICH in ``.venv-mpich`` when
``make test-mpich`` or ``make bench`` made it) and each rank count (2 and 4), one ``mpiexec``
job per comparison times, side by side and in alternating rounds:

* recursive doubling at 8 B run by the native runner, against ``MPI_Allreduce`` with the
  library's recursive doubling forced (Open MPI: ``coll_tuned_use_dynamic_rules=1``,
  ``coll_tuned_allreduce_algorithm=3``; MPICH:
  ``MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling``), both timed by the same C loop;
* ring at 1 MiB the same way (Open MPI's algorithm 4, MPICH's ``ring``);
* for the record, the Python runner and ``MPI_Allreduce`` timed by the Python loop.

The figure is the ratio of medians (OSU style: a barrier after each call, every rank's samples)
of the schedule to the library; the issue's bar is 1.10. Results go to
``benchmarks/results/native.json``.

    .venv/bin/python benchmarks/native.py [--np 2,4] [--rounds 5] [--mpi openmpi,mpich]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import _out

ROOT = Path(__file__).resolve().parent.parent

#: (schedule, bytes, C-loop iterations, Python-loop iterations) compared.
CASES = (("recursive_doubling", 8, 20000, 5000), ("ring", 1 << 20, 1000, 300))

#: How each MPI is told to use its own algorithm of the same name.
FORCE = {
    "openmpi": {
        "recursive_doubling": {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_allreduce_algorithm": "3",
        },
        "ring": {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_allreduce_algorithm": "4",
        },
    },
    "mpich": {
        "recursive_doubling": {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "recursive_doubling"},
        "ring": {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring"},
    },
}


def child(alg: str, nbytes: int, iters: int, py_iters: int, rounds: int) -> None:
    """Under mpiexec: ``rounds`` alternating rounds of (schedule, library) in C, then in
    Python; rank 0 prints one JSON object."""
    import numpy as np
    from hypercuboid.mpi.bench import bench_allreduce
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    medians: dict[str, list[float]] = {}
    valid = True
    for r in range(rounds):
        for runner, n in (("native", iters), ("python", py_iters)):
            rows = bench_allreduce(
                comm,
                [alg, "native"],
                [nbytes],
                iterations=n,
                warmup=n // 10,
                check=r == 0,
                runner=runner,
            )
            for row in rows:
                who = "library" if row["algorithm"] == "native" else "schedule"
                medians.setdefault(f"{runner}_{who}", []).append(row["median_us"])
                if row["valid"] is False:
                    valid = False
    if comm.Get_rank() == 0:
        out = {k: float(np.median(v)) for k, v in medians.items()}
        out["valid"] = valid
        out["library"] = MPI.Get_library_version().strip("\x00 \n\t").splitlines()[0]
        print(json.dumps(out))


def mpis(wanted: list[str]) -> dict[str, tuple[list[str], Path, dict[str, str]]]:
    """The MPIs available: name -> (launcher prefix, python, environment)."""
    found = {}
    venv = ROOT / ".venv" / "bin"
    env = {
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_pml": "ob1",
        "OMPI_MCA_btl": "self,sm",
    }
    if "openmpi" in wanted and (venv / "mpiexec").exists():
        launcher = [str(venv / "mpiexec"), "--oversubscribe", "--bind-to", "none"]
        found["openmpi"] = (launcher, venv / "python", env)
    mvenv = ROOT / ".venv-mpich" / "bin"
    if "mpich" in wanted and (mvenv / "mpiexec").exists():
        found["mpich"] = ([str(mvenv / "mpiexec")], mvenv / "python", {})
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", default="2,4", help="Comma list of rank counts.")
    ap.add_argument("--rounds", type=int, default=5, help="Alternating rounds per comparison.")
    ap.add_argument("--mpi", default="openmpi,mpich", help="Comma list: openmpi, mpich.")
    ap.add_argument("--child", nargs=5, metavar=("ALG", "BYTES", "IT", "PYIT", "ROUNDS"))
    _out.add(ap, "native.json")
    a = ap.parse_args()
    if a.child:
        alg, nbytes, it, pyit, rounds = a.child
        child(alg, int(nbytes), int(it), int(pyit), int(rounds))
        return
    wanted = a.mpi.split(",")
    found = mpis(wanted)
    for name in wanted:
        if name not in found:
            print(f"{name}: not installed here (make test-mpich makes .venv-mpich); skipped")
    rows = []
    print(
        f"{'MPI':<8} {'np':>2} {'case':<22} {'native':>9} {'library':>9} {'ratio':>6}"
        f" {'python':>9} {'library':>9} {'ratio':>6}  (median µs; C loop | Python loop)"
    )
    for name, (launcher, python, extra) in found.items():
        for np_ in (int(n) for n in a.np.split(",")):
            for alg, nbytes, it, pyit in CASES:
                env = dict(os.environ)
                env.pop("HYPERCUBOID_RUNNER", None)
                env.update(extra)
                env.update(FORCE[name][alg])
                env["PYTHONPATH"] = str(ROOT / "python")
                cmd = [*launcher, "-n", str(np_), str(python), __file__, "--child", alg]
                cmd += [str(nbytes), str(it), str(pyit), str(a.rounds)]
                done = subprocess.run(
                    cmd, env=env, text=True, capture_output=True, timeout=1800, check=False
                )
                if done.returncode:
                    sys.stderr.write(done.stdout + done.stderr)
                    sys.exit(done.returncode)
                res = json.loads(done.stdout.strip().splitlines()[-1])
                row = {
                    "mpi": name,
                    "library": res["library"],
                    "forced": FORCE[name][alg],
                    "nranks": np_,
                    "algorithm": alg,
                    "bytes": nbytes,
                    "rounds": a.rounds,
                    "iterations_c": it,
                    "iterations_python": pyit,
                    "native_us": res["native_schedule"],
                    "library_c_us": res["native_library"],
                    "ratio_native": res["native_schedule"] / res["native_library"],
                    "python_us": res["python_schedule"],
                    "library_python_us": res["python_library"],
                    "ratio_python": res["python_schedule"] / res["python_library"],
                    "valid": res["valid"],
                }
                rows.append(row)
                case = f"{alg} {nbytes if nbytes < 1024 else nbytes >> 20}"
                case += " B" if nbytes < 1024 else " MiB"
                print(
                    f"{name:<8} {np_:>2} {case:<22} {row['native_us']:>9.3f} "
                    f"{row['library_c_us']:>9.3f} {row['ratio_native']:>6.3f} "
                    f"{row['python_us']:>9.3f} {row['library_python_us']:>9.3f} "
                    f"{row['ratio_python']:>6.3f}" + ("" if row["valid"] else "  INVALID"),
                    flush=True,
                )
    _out.path(a.out, "native.json").write_text(json.dumps(rows, indent=1) + "\n")
    worst = max((r["ratio_native"] for r in rows), default=0.0)
    print(f"worst native-runner ratio: {worst:.3f} (bar 1.10)")


if __name__ == "__main__":
    main()

"""End-to-end benchmark: the PMPI library's MPI_Allreduce against the MPI library's own.

One unmodified C program (``benchmarks/native/allreduce_loop.c``: 10^5 MPI_Allreduce calls of
one double, 8 B, timed OSU-style in rounds of 100 with a barrier between rounds) runs at 2 and
4 ranks under Open MPI and MPICH (the wheels of .venv and .venv-mpich), without the library
and with it (``LD_PRELOAD=libhc_pmpi.so``), the same algorithm forced in both: recursive
doubling (Open MPI ``coll_tuned_allreduce_algorithm=3`` with dynamic rules, MPICH
``MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling``; ``HYPERCUBOID_ALLREDUCE=
recursive_doubling``). The two run alternately, ``--repeats`` times each; the figure is the
median of each run's median, and their ratio (with / without, the bar: at most 1.10).

A run takes at most about ``--seconds`` (fewer calls when they would take longer: MPICH with
more ranks than cores spends milliseconds in each call). Builds the libraries with
``make native`` first, prints the table and writes ``benchmarks/results/pmpi.json``.

    .venv/bin/python benchmarks/pmpi.py [--np 2,4] [--calls 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import _out

ROOT = Path(__file__).resolve().parent.parent
LOOP = ROOT / "benchmarks" / "native" / "allreduce_loop.c"
BAR = 1.10

# (name, venv, the environment that forces recursive doubling in the library's own allreduce)
MPIS = (
    (
        "openmpi",
        ROOT / ".venv",
        {
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_pml": "ob1",
            "OMPI_MCA_btl": "self,sm",
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_allreduce_algorithm": "3",
        },
    ),
    (
        "mpich",
        ROOT / ".venv-mpich",
        {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "recursive_doubling"},
    ),
)


def native_dir() -> Path:
    if "HYPERCUBOID_NATIVE_DIR" in os.environ:
        return Path(os.environ["HYPERCUBOID_NATIVE_DIR"])
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "native"


def command(name: str, venv: Path, np_: int, exe: Path, args: list[str], lib: Path | None):
    mpiexec = str(venv / "bin" / "mpiexec")
    if name == "openmpi":
        cmd = [mpiexec, "--oversubscribe", "--bind-to", "none", "-n", str(np_)]
        if lib:
            cmd += ["-x", f"LD_PRELOAD={lib}", "-x", "HYPERCUBOID_ALLREDUCE=recursive_doubling"]
    else:
        cmd = [mpiexec, "-n", str(np_)]
        if lib:
            cmd += ["-genv", "LD_PRELOAD", str(lib)]
            cmd += ["-genv", "HYPERCUBOID_ALLREDUCE", "recursive_doubling"]
    return cmd + [str(exe), *args]


def run(cmd: list[str], env: dict[str, str], timeout: float) -> dict:
    done = subprocess.run(
        cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"failed: {' '.join(cmd)}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    if not row["correct"]:
        raise SystemExit(f"wrong results: {' '.join(cmd)}")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", default="2,4", help="Rank counts, comma-separated.")
    ap.add_argument("--calls", type=int, default=100_000, help="Timed calls per run.")
    ap.add_argument("--block", type=int, default=100, help="Calls per timed round.")
    ap.add_argument("--repeats", type=int, default=3, help="Runs of each variant, alternating.")
    ap.add_argument("--seconds", type=float, default=20.0, help="Time cap of one run.")
    ap.add_argument("--no-build", action="store_true", help="Use the libraries as they are.")
    _out.add(ap, "pmpi.json")
    a = ap.parse_args()
    nps = [int(x) for x in a.np.split(",")]
    if not a.no_build:
        subprocess.run(["make", "--no-print-directory", "native"], cwd=ROOT, check=True)
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HYPERCUBOID_", "OMPI_", "PMIX_", "PMI_", "MPIR_CVAR_"))
        and k != "LD_PRELOAD"
    }
    rows = []
    for name, venv, forced in MPIS:
        lib = native_dir() / name / "libhc_pmpi.so"
        exe = native_dir() / name / "allreduce_loop"
        cc = [str(venv / "bin" / "mpicc"), "-std=c99", "-O2", "-Wall", "-Werror"]
        subprocess.run([*cc, "-o", str(exe), str(LOOP)], check=True)
        env = {**base, **forced}
        args = [str(a.calls), str(a.block), str(a.seconds)]
        for np_ in nps:
            runs: dict[str, list[dict]] = {"without": [], "with": []}
            for _ in range(a.repeats):
                for variant in ("without", "with"):
                    cmd = command(name, venv, np_, exe, args, lib if variant == "with" else None)
                    runs[variant].append(run(cmd, env, timeout=10 * a.seconds + 120))
            med = {v: statistics.median(r["median_us"] for r in runs[v]) for v in runs}
            rows.append(
                {
                    "mpi": name,
                    "np": np_,
                    "bytes": 8,
                    "calls": runs["without"][0]["calls"],
                    "calls_with": runs["with"][0]["calls"],
                    "without_us": med["without"],
                    "with_us": med["with"],
                    "ratio": med["with"] / med["without"],
                    "served": runs["with"][0]["served"],
                    "runs": runs,
                }
            )
            r = rows[-1]
            print(
                f"{name:<8} np={np_}  without {r['without_us']:9.3f} us  with "
                f"{r['with_us']:9.3f} us  x{r['ratio']:.3f}  ({r['calls']} / {r['calls_with']} "
                "calls)",
                flush=True,
            )
    print(f"\nMPI_Allreduce of 8 B, recursive doubling forced, median of {a.repeats} runs' medians")
    head = ("MPI", "np", "without (us)", "with PMPI (us)", "ratio", f"<= {BAR:.2f}", "calls")
    print(
        f"{head[0]:<8} {head[1]:>3} {head[2]:>13} {head[3]:>15} {head[4]:>6} {head[5]:>7}  "
        f"{head[6]}"
    )
    for r in rows:
        ok = "yes" if r["ratio"] <= BAR else "NO"
        print(
            f"{r['mpi']:<8} {r['np']:>3} {r['without_us']:>13.3f} {r['with_us']:>15.3f} "
            f"{r['ratio']:>6.3f} {ok:>7}  {r['calls']} / {r['calls_with']}"
        )
    out = _out.path(a.out, "pmpi.json")
    doc = {
        "benchmark": "PMPI library vs the MPI library's MPI_Allreduce, 8 B, recursive doubling",
        "machine": {"host": platform.node(), "cpus": os.cpu_count()},
        "calls": a.calls,
        "block": a.block,
        "repeats": a.repeats,
        "seconds": a.seconds,
        "bar": BAR,
        "rows": rows,
    }
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

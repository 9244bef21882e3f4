"""End-to-end benchmark: the Python executor against the MPI library's own MPI_Allreduce.

Launches ``mpiexec -n NP hypercuboid bench allreduce --runner python`` (the venv's Open MPI,
shared memory, oversubscription and root allowed) for recursive doubling, ring and ``native``
at 8 B and 1 MiB, with ``--check``, prints the table and writes
``benchmarks/results/mpi_allreduce.json``.
The issue's expectation: a few µs of Python overhead per step at 8 B; equal to native at 1 MiB.

    .venv/bin/python benchmarks/mpi_allreduce.py [--np 2] [--sizes 8,1M] [--iterations 1000]

Then the model fits of the same machine (``bench pingpong``, ``bench multicast``) are run and
their α, β, α_p, α_r printed (model files in ``benchmarks/results/``).
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


def mpiexec(np_: int, args: list[str]) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "mpiexec"
    env = dict(os.environ)
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_pml="ob1",
        OMPI_MCA_btl="self,sm",
    )
    cmd = [str(exe), "--oversubscribe", "--bind-to", "none", "-n", str(np_), sys.executable]
    cmd += ["-m", "hypercuboid.cli.bench", *args]
    return subprocess.run(cmd, env=env, text=True, capture_output=True, timeout=1800, check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--sizes", default="8,1M")
    ap.add_argument("--algorithms", default="recursive_doubling,ring,native")
    ap.add_argument(
        "--runner", default="python", help="python (this table) or native (see native.py)."
    )
    ap.add_argument("--iterations", type=int, default=1000, help="Timed calls per size.")
    ap.add_argument("--no-fits", action="store_true", help="Skip pingpong and multicast.")
    _out.add(ap, "mpi_allreduce.json")
    a = ap.parse_args()
    out = _out.path(a.out, "mpi_allreduce.json")
    args = ["allreduce", "--runner", a.runner, "-a", a.algorithms, "--sizes", a.sizes, "--check"]
    args += ["-q"]
    args += ["--json", str(out), "--force"]
    if a.iterations:
        args += ["-i", str(a.iterations)]
    res = mpiexec(a.np, args)
    sys.stdout.write(res.stdout)
    if res.returncode:
        sys.stderr.write(res.stderr)
        sys.exit(res.returncode)
    rows = json.loads(out.read_text())
    native = {r["bytes"]: r["median_us"] for r in rows if r["algorithm"] == "native"}
    print("\nmedian relative to native MPI_Allreduce:")
    for r in rows:
        if r["algorithm"] != "native" and r["bytes"] in native:
            ratio = r["median_us"] / native[r["bytes"]]
            extra = r["median_us"] - native[r["bytes"]]
            print(f"  {r['algorithm']:<22} {r['bytes']:>8} B  x{ratio:5.2f}  (+{extra:.2f} us)")
    if a.no_fits:
        return
    for verb, extra in (
        ("pingpong", ["--sizes", "1:1M"]),
        ("multicast", ["-b", "8", "--mode", "issue"]),
        ("multicast", ["-b", "8", "--mode", "ack"]),
    ):
        mode = extra[-1] if verb == "multicast" else "postal"
        mf = _out.directory(a.out) / f"model_{verb}_{mode}.json"
        res = mpiexec(2, [verb, *extra, "--model-file", str(mf), "--force", "-q"])
        if res.returncode:
            sys.stderr.write(res.stderr)
            sys.exit(res.returncode)
        print()
        print("\n".join(ln for ln in res.stdout.splitlines() if "fit" in ln or "model" in ln))


if __name__ == "__main__":
    main()

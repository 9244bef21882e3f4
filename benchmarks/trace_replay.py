"""Replay accuracy (docs/trace.md, "Validation"): records each program with `hypercuboid trace run`
at each rank count, replays the trace on a model file (from `calibrate` or `bench pingpong`)
with `trace whatif --json`, and compares the predicted application time with the measured one
(MPI_Init to MPI_Finalize of the slowest rank, from the trace). The bar is 25 %.

    make native
    mpiexec -n 2 hypercuboid calibrate -o cal.json
    python benchmarks/trace_replay.py --model-file cal.json --np 2,4 \\
        --program "lbm=hypercuboid lbm run --lattice 32x32x32 --steps 20 -q" \\
        --program "hpcg=/tmp/hpcg/build/bin/xhpcg --nx=16 --ny=16 --nz=16 --rt=1"

Each program runs in a fresh temporary directory (HPCG writes its reports into the current
one); --reps records each several times. The load average is printed with each row: on a
shared machine the measured time holds the waits of ranks that had no core, which the replay
does not see. Writes trace_replay.json into ``--out`` (default ``out/``, see ``_out.py``).

Open MPI runs with `--oversubscribe --bind-to none`: with more ranks than cores it then sets
mpi_yield_when_idle itself (a waiting rank calls sched_yield between polls). --env KEY=VALUE
sets a variable for the recorded runs (repeatable), e.g. the other yield strategy,
OMPI_MCA_threads_pthreads_yield_strategy=nanosleep, or MPICH's MPIR_CVAR_ENABLE_HEAVY_YIELD=1
(--mpiexec of the MPICH venv; Hydra gets no Open MPI options).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import _out

ROOT = Path(__file__).resolve().parent.parent

OMPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,sm",
}


def _programs(specs: list[str], ap: argparse.ArgumentParser) -> dict[str, list[str]]:
    out = {}
    for spec in specs:
        name, _, cmd = spec.partition("=")
        if not name or not cmd.strip():
            ap.error(f"--program {spec!r}: expected NAME=COMMAND")
        out[name] = shlex.split(cmd)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-file", required=True)
    ap.add_argument("--program", action="append", required=True, metavar="NAME=COMMAND")
    ap.add_argument("--np", default="2,4", help="rank counts, comma-separated")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--mpiexec", default=str(Path(sys.executable).parent / "mpiexec"))
    ap.add_argument("--keep", default=None, help="keep the traces in this directory")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    _out.add(ap, "trace_replay.json")
    args = ap.parse_args()
    programs = _programs(args.program, ap)
    extra = {}
    for spec in args.env:
        key, eq, value = spec.partition("=")
        if not key or not eq:
            ap.error(f"--env {spec!r}: expected KEY=VALUE")
        extra[key] = value
    sys.path.insert(0, str(ROOT / "python"))
    from hypercuboid.apptrace import which_mpi

    openmpi = which_mpi(args.mpiexec) == "openmpi"
    nps = [int(n) for n in args.np.split(",")]
    hc = [str(Path(sys.executable).parent / "hypercuboid")]
    env = {**os.environ, **(OMPI_ENV if openmpi else {}), **extra}
    env["PYTHONPATH"] = str(ROOT / "python")
    if extra:
        print("with " + " ".join(f"{k}={v}" for k, v in extra.items()))
    rows = []
    print(f"{'program':10} {'np':>3} {'measured ms':>12} {'predicted ms':>13} {'error':>8} load")
    for name, cmd in programs.items():
        for np_ in nps:
            for rep in range(args.reps):
                with tempfile.TemporaryDirectory() as tmp:
                    keep = Path(args.keep) if args.keep else Path(tmp)
                    keep.mkdir(parents=True, exist_ok=True)
                    hct = keep / f"{name}{np_}-{rep}.hct"
                    launch = [args.mpiexec]
                    launch += ["--oversubscribe", "--bind-to", "none"] if openmpi else []
                    launch += ["-n", str(np_), *cmd]
                    rec = [*hc, "trace", "run", "-o", str(hct), "--force", "--", *launch]
                    subprocess.run(rec, env=env, cwd=tmp, check=True, capture_output=True)
                    load = os.getloadavg()[0]
                    what = [*hc, "trace", "whatif", str(hct), "--model-file", args.model_file]
                    out = subprocess.run(
                        [*what, "--collectives", "library", "--json"],
                        env=env,
                        check=True,
                        capture_output=True,
                        text=True,
                    )
                    res = json.loads(out.stdout)
                    measured = res["measured_ns"]
                    predicted = res["choices"][-1]["predicted_ns"]  # the library's choice
                    err = (predicted / measured - 1) * 100
                    rows.append(
                        {
                            "program": name,
                            "np": np_,
                            "measured_ns": measured,
                            "predicted_ns": predicted,
                            "error_percent": err,
                            "loadavg": load,
                            "command": cmd,
                            "env": extra,
                        }
                    )
                    print(
                        f"{name:10} {np_:>3} {measured / 1e6:>12.1f} {predicted / 1e6:>13.1f} "
                        f"{err:>+7.1f}% {load:.1f}"
                    )
    out = _out.path(args.out, "trace_replay.json")
    out.write_text(json.dumps({"model_file": args.model_file, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

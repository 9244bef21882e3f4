"""Behaviour snapshot: run a fixed list of CLI commands and record what each printed.

A consolidation or refactoring changes no result. This script runs the commands below (every
capability that runs without MPI: schedules, verification, simulation on models and networks,
topologies, network simulation, the alltoall phases, tuning, halo exchanges) and writes their
exit status and standard output to a folder, one file per command plus ``index.json`` (command,
exit status, SHA-256 of stdout). ``--compare DIR`` runs them again and lists every command whose
status or output differs from DIR's. Standard error is not compared: it carries progress and
deprecation lines. Wall-clock readings are not results: a JSON line is compared without its
timing keys (``VOLATILE``), and may gain keys (every old key keeps its value); a text line is
compared with its durations (``in 953 µs``) blanked.

    python benchmarks/snapshot.py --out /tmp/snap-before        # on the old commit
    python benchmarks/snapshot.py --compare /tmp/snap-before    # on the new one
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LOGGOPS = "loggops:L=3000,o=1500,g=1000,G=6"
COMMANDS: list[str] = [
    "schedule list",
    "schedule verify allreduce --algorithm ring_rotate --ranks 5",
    "schedule verify allreduce -a recursive_doubling -n 7 --json",
    "schedule verify allreduce -a rabenseifner -n 12 -c 1000",
    "schedule verify alltoall -a bruck -n 9",
    "schedule verify halo --variant nonblocking --decomp 4x3x2 --subdomain 16x16x16",
    "schedule show allreduce -a tree -n 8",
    "schedule generate --format goal allreduce -a recursive_doubling -n 16",
    "schedule generate --format text allreduce -a ring -n 4 -c 8",
    f"simulate allreduce -a recursive_doubling -n 1048576 -c 1 --model {LOGGOPS}",
    "simulate allreduce -a tree -n 64 -c 1 --model postal:alpha=1us,beta=0.4ns --json",
    "simulate allreduce -a ring -n 16 -c 65536 --model pipelined:alpha_p=500ns,alpha_r=100ns,"
    "beta=0.4ns,gamma=0,delta=10ns --json",
    f"simulate allreduce -a recursive_multiplying:a4,a4 -n 16 -c 1024 --model {LOGGOPS} --json",
    f"simulate alltoall -a pairwise -n 16 -c 1024 --model {LOGGOPS} --json",
    "simulate --network tree:fig5b alltoall -a linear -n 32 -c 8192",
    "simulate --network slimfly:q=5 allreduce -a ring -n 50 -c 4096 --json",
    "simulate halo --variant blocking --decomp 4x3x2 --subdomain 32x32x32 --calls 20 "
    f"--model {LOGGOPS} --json",
    "topo show slimfly:q=13,p=9 --json",
    "topo show tree:fig5b --json",
    "topo show dragonfly:a=4,h=2,p=2 --json",
    "netsim run --topo slimfly:q=5 --routing ugal --traffic uniform --load 0.6 "
    "--time 20us --warmup 5us -j 1 --seed 1 --json",
    "netsim run --topo oft:k=6 --routing min,valiant --traffic uniform --load 0.2,0.4 "
    "--time 10us --warmup 2us -j 1 --seed 1 --json",
    "alltoall phases --topo tree:fig5b --json",
    "alltoall phases --topo tree:fig1 --json",
    "tune allreduce -n 4096 --alpha-p 1.34us --alpha-r 0.34us --beta 0.4ns",
    "tune allreduce -n 96 --alpha-p 1.34us --alpha-r 0.34us --beta 0.4ns --simulate",
]


VOLATILE = {"wall_seconds", "packets_per_second", "wall_s", "events_per_second", "seconds"}
DURATION = re.compile(r"\bin [0-9.,]+ ?(ps|ns|µs|us|ms|s)\b")


def same_output(old: str, new: str) -> bool:
    """Whether `new` prints the results of `old` (see the module doc)."""
    a, b = old.splitlines(), new.splitlines()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        try:
            jx, jy = json.loads(x), json.loads(y)
        except ValueError:
            if DURATION.sub("in <time>", x) != DURATION.sub("in <time>", y):
                return False
            continue
        if isinstance(jx, dict) and isinstance(jy, dict):
            if any(k not in jy or jy[k] != v for k, v in jx.items() if k not in VOLATILE):
                return False
        elif jx != jy:
            return False
    return True


def run_all(exe: str) -> list[dict]:
    rows = []
    for i, cmd in enumerate(COMMANDS):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run(
                [exe, *cmd.split()], capture_output=True, text=True, cwd=tmp, timeout=600
            )
        rows.append(
            {
                "index": i,
                "command": cmd,
                "status": p.returncode,
                "sha256": hashlib.sha256(p.stdout.encode()).hexdigest(),
                "stdout": p.stdout,
                "stderr_tail": p.stderr[-300:],
            }
        )
        print(f"{i:3d} exit {p.returncode}  {cmd[:90]}", file=sys.stderr)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", type=Path, help="write the snapshot to this new folder")
    g.add_argument("--compare", type=Path, help="compare with the snapshot in this folder")
    ap.add_argument("--exe", default=shutil.which("hypercuboid") or "hypercuboid")
    a = ap.parse_args()
    a.exe = str(Path(a.exe).resolve()) if Path(a.exe).exists() else a.exe
    rows = run_all(a.exe)
    if a.out:
        if a.out.exists():
            ap.error(f"{a.out} exists; choose a new folder")
        a.out.mkdir(parents=True)
        for r in rows:
            (a.out / f"{r['index']:03d}.out").write_text(r["stdout"])
        index = [{k: r[k] for k in ("index", "command", "status", "sha256")} for r in rows]
        (a.out / "index.json").write_text(json.dumps(index, indent=1) + "\n")
        print(f"{len(rows)} commands written to {a.out}")
        return 0
    old = {r["command"]: r for r in json.loads((a.compare / "index.json").read_text())}
    differ = 0
    for r in rows:
        o = old.get(r["command"])
        if o is None:
            print(f"new      {r['command']}")
        elif o["status"] != r["status"] or not same_output(
            (a.compare / f"{o['index']:03d}.out").read_text(), r["stdout"]
        ):
            differ += 1
            print(f"DIFFERS  {r['command']}  (exit {o['status']} -> {r['status']})")
    print(f"{len(rows) - differ} of {len(rows)} commands print the same results")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

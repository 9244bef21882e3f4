"""Runs every end-to-end benchmark script in this folder (each prints its table and writes its
JSON under ``benchmarks/results/``, the record: run alone, a script writes under ``out/`` or its
``--out``), one after the other."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def main() -> None:
    here = Path(__file__).parent
    # peer_*.py are the parts of peers.py (one peer simulator each), run through it.
    scripts = sorted(
        p for p in here.glob("*.py") if p.name != "run.py" and not p.name.startswith(("peer_", "_"))
    )
    # the record the docs cite: the scripts' own default is out/ in the current directory
    env = {**os.environ, "HYPERCUBOID_BENCH_OUT": str(here.resolve() / "results")}
    for script in scripts:
        print(f"== {script.name}", flush=True)
        subprocess.run([sys.executable, str(script)], check=True, env=env)


if __name__ == "__main__":
    main()

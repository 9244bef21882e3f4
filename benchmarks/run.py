"""Runs every end-to-end benchmark script in this folder (each prints its table and writes its
JSON under ``benchmarks/results/``), one after the other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> None:
    here = Path(__file__).parent
    # peer_*.py are modules that peers.py calls (each peer beside us in one table).
    scripts = sorted(
        p for p in here.glob("*.py") if p.name != "run.py" and not p.name.startswith("peer_")
    )
    for script in scripts:
        print(f"== {script.name}", flush=True)
        subprocess.run([sys.executable, str(script)], check=True)


if __name__ == "__main__":
    main()

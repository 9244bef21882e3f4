"""Runs every end-to-end benchmark script in this folder, one after the other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTS = ["simulate.py"]


def main() -> None:
    here = Path(__file__).parent
    for name in SCRIPTS:
        if (here / name).exists():
            print(f"== {name}", flush=True)
            subprocess.run([sys.executable, str(here / name)], check=True)


if __name__ == "__main__":
    main()

"""hypercuboid side by side with the simulators it is measured against, in one run (issue 17,
section 1): LogGOPSim on the schedule simulator's cases (``peer_loggopsim.py``) and BookSim2
on the packet simulator's (``peer_booksim.py``: Slim Fly q = 13, p = 9, uniform 30 %). Each
peer runs only where its build is found (environment variables; ``docs/performance.md`` says
how to build both from their public sources); without it, hypercuboid runs alone and the
table says so. Both peers are built for speed (LogGOPSim ``-O3``, with its Makefile's ``-O0 -g``
build as a second column; BookSim2's Makefile builds ``-O3``): ``peer_loggopsim.py``'s
docstring has the build commands, and ``LOGGOPSIM_SRC`` (a checkout) builds both LogGOPSim
builds here. Prints each table and writes ``benchmarks/results/peers.json`` (one key per peer;
each row holds every simulator's own events per second).

    LOGGOPSIM=/path/to/lgs-o3/LogGOPSim LOGGOPSIM_O0=/path/to/lgs-o0/LogGOPSim \\
        BOOKSIM=/path/to/booksim \\
        .venv/bin/python benchmarks/peers.py [--repeat 2] [--cycles 2000]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import _out

sys.path.insert(0, str(Path(__file__).parent))

import peer_booksim  # noqa: E402
import peer_loggopsim  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs of each case (fastest kept)")
    ap.add_argument("--cycles", type=int, default=2000, help="BookSim2 cycles before its drain")
    ap.add_argument(
        "--o0-sizes", default=None, help="sizes (log2) that also run LogGOPSim -O0 (default: all)"
    )
    _out.add(ap, "peers.json")
    args = ap.parse_args()
    args.out = _out.path(args.out, "peers.json")
    out = Path(args.out)
    print("== LogGOPSim")
    o0 = tuple(int(k) for k in args.o0_sizes.split(",")) if args.o0_sizes else None
    record = peer_loggopsim.run(repeat=args.repeat, o0_sizes=o0)
    peer_loggopsim.save(record, out)
    print("\n== BookSim2")
    booksim = peer_booksim.run(cycles=args.cycles, repeat=args.repeat)
    data = json.loads(out.read_text())
    data["booksim"] = booksim
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {out}")
    if not all(peer_loggopsim.agree(r) for r in record["rows"]):
        sys.exit("LogGOPSim and hypercuboid disagree on a completion time")


if __name__ == "__main__":
    main()

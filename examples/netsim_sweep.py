"""A load sweep on a small Multi-Layer Full-Mesh (h = 8, 576 nodes): minimal, Valiant and UGAL
routing under uniform and worst-case traffic, with the busiest link of each point, the
saturation table and the throughput / latency figure. Takes about half a minute.

    python examples/netsim_sweep.py [--out DIR]   (default out/: DIR/netsim_sweep.png)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hypercuboid import netsim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out", help="directory for the figure (default out/)")
    out_dir = Path(ap.parse_args().out)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / "netsim_sweep.png"
    points = netsim.grid(
        ["mlfm:h=8"],
        ["min", "inr", "ugal"],
        ["uniform", "worst"],
        netsim.parse_loads("0.1:1.0:0.1"),
        duration="50us",
        warmup="10us",
    )
    results = netsim.sweep(points)  # local processes; MPI ranks under mpiexec
    if results is None:
        return
    for r in results:
        link = r.top_links[0]
        print(
            f"{r.routing:5} {r.traffic:8} offered {100 * r.offered:5.1f}%  "
            f"accepted {100 * r.accepted:5.1f}%  latency {r.latency_avg_ns:7.0f} ns  "
            f"busiest r{link.from_}->r{link.to} {100 * link.utilisation:3.0f}%"
        )
    for s in netsim.saturation(results):
        print(
            f"{s['routing']:5} {s['traffic']:8} saturates at {s['saturation_load']}, "
            f"max accepted {100 * s['max_accepted']:.1f}%"
        )
    netsim.plot(results, out)
    print(f"wrote {out}")


if __name__ == "__main__":  # local worker processes re-import this file
    main()

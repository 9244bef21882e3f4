"""Write a Slim Fly for BookSim2 (anynet), Graphviz and our JSON, and read the JSON back.

Run: .venv/bin/python examples/topology_export_booksim.py [--out DIR]   (default out/)
"""

import argparse
from pathlib import Path

from hypercuboid import topology

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--out", default="out", help="directory for the files (default out/)")
out = Path(ap.parse_args().out)
out.mkdir(parents=True, exist_ok=True)
sf = topology.generate("slimfly:q=5,p=floor")
topology.export(
    sf, "anynet", out / "sf5.anynet", cycle_ps=1000, force=True
)  # latencies in 1 ns cycles
topology.export(sf, "dot", out / "sf5.dot", endpoints=False)
topology.export(sf, "json", out / "sf5.json")
assert topology.load(out / "sf5.json") == sf
print((out / "sf5.anynet").read_text().splitlines()[0])
print(f"wrote {out}/sf5.anynet, sf5.dot, sf5.json ({sf.num_routers} routers)")

"""An Ethernet switched tree from a description: AAPC bottleneck, load and root (alltoall
seed, Faraj and Yuan, sections 3 and 4.1).

Run: .venv/bin/python examples/topology_ethernet_tree.py
"""

import json
import tempfile
from pathlib import Path

from hypercuboid import topology

# Two racks of 4 machines joined through a core switch that also holds 2 machines.
cluster = {
    "name": "two-racks",
    "bandwidth_gbps": 1,
    "latency": "1us",
    "switches": ["core", "rack0", "rack1"],
    "machines": [f"m{i}" for i in range(10)],
    "links": [["core", "rack0"], ["core", "rack1"], ["m8", "core"], ["m9", "core"]]
    + [[f"m{i}", "rack0"] for i in range(4)]
    + [[f"m{i}", "rack1"] for i in range(4, 8)],
}
path = Path(tempfile.mkdtemp()) / "cluster.json"
path.write_text(json.dumps(cluster, indent=2))

for spec in [f"tree:{path}", "tree:fig1", "tree:fig5b", "tree:fig5c"]:
    t = topology.analyze(spec)["tree"]
    subtrees = ", ".join(f"{s['top']}({s['machines']})" for s in t["subtrees"][:4])
    print(
        f"{spec.split('/')[-1]:14} bottleneck {t['bottleneck']:12} load {t['load']:4} "
        f"= {t['m_u']}x{t['m_v']}, root {t['root_name']}: {subtrees}"
    )

"""Contention-free alltoall phases (docs/alltoall_phases.md): Faraj and Yuan's optimal phases
of a switched cluster, checked, and the heuristic's phases on topologies that are not trees.

Run: .venv/bin/python examples/alltoall_phases.py
"""

import tempfile
from pathlib import Path

from hypercuboid import phases

# The seed's Figure 1 cluster: Table 4, with n0..n5 = t_{0,0}, t_{0,1}, t_{0,2}, t_{1,0},
# t_{1,1}, t_{2,0}.
r = phases.alltoall_phases("tree:fig1")
print(f"{r.topology}: {r.phases} phases, load {r.load}, root {r.root}, subtrees {r.subtrees}")
for p, msgs in enumerate(r.schedule()):
    print(f"  phase {p}: " + "  ".join(f"n{s}->n{d}" for s, d in msgs))
print(f"  complete {r.complete}, contention-free {r.contention_free}, optimal {r.optimal}")

# A random cluster of 200 machines on 20 switches: still exactly the bottleneck load.
t = phases.random_tree(200, 20, "random", seed=5)
r = phases.alltoall_phases(t)
print(f"random tree: {r.messages} messages in {r.phases} phases = load {r.load}: {r.optimal}")

# Not trees: the heuristic against the largest directed-link load.
for spec in ["fattree:k=4,levels=3", "torus:dims=8x8", "torus:dims=4x4x4"]:
    r = phases.alltoall_phases(spec)
    print(f"{spec}: {r.phases} phases, lower bound {r.lower_bound}, gap {r.gap}")

out = Path(tempfile.mkdtemp()) / "fig5b.png"
phases.plot_occupancy(phases.alltoall_phases("tree:fig5b"), out)
print(f"occupancy of fig5b: {out}")

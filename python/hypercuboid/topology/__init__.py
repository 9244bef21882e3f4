"""Network topologies: generate, analyse, bisect, compare and export.

Every topology is named by a spec string ``NAME:key=value,...`` (see :func:`families`)::

    from hypercuboid import topology

    sf = topology.generate("slimfly:q=13,p=9")
    info = topology.analyze(sf, bisection=True)
    info["endpoints"], info["diameter"], info["bisection"]["per_endpoint"]
    topology.export(sf, "anynet", "sf13.anynet")

The graph work (generation, distances, minimal paths, the bisection repair) runs in Rust
(``hypercuboid._core``); METIS (``pymetis``) proposes the bisection partitions, networkx reads
GraphML and converts graphs.
"""

from __future__ import annotations

from hypercuboid.topology._api import (
    EXPORT_FORMATS,
    Topology,
    analyze,
    bisection,
    distances,
    export,
    families,
    from_json,
    generate,
    load,
    ml3b,
    tree_preset,
)
from hypercuboid.topology._compare import compare, plot_compare
from hypercuboid.topology._io import from_networkx, read_graphml, to_networkx
from hypercuboid.topology._simgrid import read_simgrid, to_simgrid

__all__ = [
    "EXPORT_FORMATS",
    "Topology",
    "analyze",
    "bisection",
    "compare",
    "distances",
    "export",
    "families",
    "from_json",
    "from_networkx",
    "generate",
    "load",
    "ml3b",
    "plot_compare",
    "read_graphml",
    "read_simgrid",
    "to_networkx",
    "to_simgrid",
    "tree_preset",
]

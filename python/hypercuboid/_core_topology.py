"""The topology part of the extension ``hypercuboid._core`` under a name of its own, for its
stubs: ``_core_topology.pyi`` declares these names (``_core.pyi`` re-exports them) and
``make lint`` checks it against them here (mypy's stubtest). Import them from
``hypercuboid._core``.
"""

from hypercuboid._core import (  # noqa: F401 (the names the stubs declare)
    Bisection,
    CompareRow,
    Topology,
    TopologyAnalysis,
    TreeAnalysis,
    topology_compare,
    topology_families,
    topology_from_json,
    topology_from_parts,
    topology_from_simgrid,
    topology_generate,
    topology_graphml_source,
    topology_ml3b,
    topology_to_simgrid,
    topology_tree_preset,
)

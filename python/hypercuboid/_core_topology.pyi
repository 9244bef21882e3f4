"""Type stubs of the topology part of the Rust extension ``hypercuboid._core``: the
``Topology`` class, its analyses, the ``topology_*`` functions and SimGrid platforms
(``hypercuboid.topology`` wraps them). ``_core.pyi`` re-exports every name here, and no module
of this name exists at run time: import them from ``hypercuboid._core``. Conventions as in
``_core.pyi``; ``make lint`` checks them against the module through it (mypy's stubtest).
"""

from typing import Final, final

from hypercuboid._core import SpecForm

@final
class Topology:
    """A topology held in Rust memory."""

    name: Final[str]
    family: Final[str]
    params: Final[list[tuple[str, str]]]
    num_routers: Final[int]
    num_endpoints: Final[int]
    num_links: Final[int]
    kinds: Final[list[str]]
    coord_names: Final[list[str]]
    def router_kinds(self) -> list[int]: ...
    def coords(self) -> list[list[int]]: ...
    def endpoint_routers(self) -> list[int]: ...
    def endpoint_links(self) -> list[tuple[float, int]]: ...
    def links(self) -> list[tuple[int, int, float, int]]: ...
    def csr(self) -> tuple[list[int], list[int], list[int]]: ...
    def router_endpoints(self, r: int) -> list[int]: ...
    def router_names(self) -> list[str] | None: ...
    def endpoint_names(self) -> list[str] | None: ...
    def analyze(self) -> TopologyAnalysis: ...
    def distances(self) -> bytes: ...
    def refine_bisection(self, sides: list[bool]) -> Bisection: ...
    def bisect(self, starts: int = ..., seed: int = ...) -> Bisection: ...
    def to_json(self) -> str: ...
    def to_graphml(self) -> str: ...
    def to_anynet(self, cycle_ps: int | None = ...) -> str: ...
    def to_dot(self, endpoints: bool = ...) -> str: ...

def topology_generate(spec: str) -> Topology: ...
def topology_from_json(text: str, what: str = ...) -> Topology: ...
def topology_from_parts(
    name: str,
    family: str,
    params: list[tuple[str, str]],
    kinds: list[str],
    router_kinds: list[int],
    coord_names: list[str],
    coords: list[int],
    endpoint_routers: list[int],
    endpoint_links: list[tuple[float, int]],
    links: list[tuple[int, int, float, int]],
    router_names: list[str] | None = ...,
    endpoint_names: list[str] | None = ...,
) -> Topology: ...

class _Size:
    """A topology's size (the core's ``topology::Size``): counts, radices, ratios."""

    endpoints: Final[int]
    routers: Final[int]
    network_links: Final[int]
    router_radix: Final[int]
    network_radix: Final[int]
    ports_per_endpoint: Final[float]
    links_per_endpoint: Final[float]

@final
class TopologyAnalysis(_Size):
    """A topology's graph analysis (``hypercuboid.topology.analyze`` gives it as a dict):
    ``kinds`` as (name, count, network_degree, endpoints), ``path_histogram`` as (paths,
    pairs), ``paths_by_distance`` as (distance, pairs, mean_paths, max_paths),
    ``moore_bound`` as (degree, diameter, bound, fraction)."""

    endpoint_routers: Final[int]
    kinds: Final[list[tuple[str, int, tuple[int, int], tuple[int, int]]]]
    total_ports: Final[int]
    total_links: Final[int]
    connected: Final[bool]
    diameter: Final[int | None]
    router_diameter: Final[int | None]
    avg_hops: Final[float]
    avg_router_distance: Final[float]
    distance_histogram: Final[list[int]]
    path_histogram: Final[list[tuple[int, int]]]
    path_mean: Final[float]
    path_max: Final[int]
    paths_by_distance: Final[list[tuple[int, int, float, int]]]
    moore_bound: Final[tuple[int, int, int, float] | None]
    tree: Final[TreeAnalysis | None]

@final
class TreeAnalysis:
    """The all-to-all analysis of a tree; ``subtrees`` as (top, machines)."""

    bottleneck: Final[str]
    bottleneck_link: Final[int | None]
    bottleneck_endpoint: Final[int | None]
    m_u: Final[int]
    m_v: Final[int]
    load: Final[int]
    endpoint_load: Final[int]
    bottleneck_bandwidth_gbps: Final[float]
    peak_throughput_gbps: Final[float]
    root: Final[int]
    root_name: Final[str]
    subtrees: Final[list[tuple[str, int]]]
    link_loads: Final[list[int]]

@final
class Bisection:
    router_side: Final[list[bool]]
    endpoint_side: Final[list[bool]]
    endpoints: Final[list[int]]
    routers: Final[list[int]]
    cut_links: Final[int]
    cut_endpoint_links: Final[int]
    cut_bandwidth_gbps: Final[float]
    per_endpoint: Final[float]

@final
class CompareRow(_Size):
    label: Final[str]
    spec: Final[str]
    diameter: Final[int]

def topology_families() -> list[SpecForm]: ...
def topology_graphml_source(spec: str) -> tuple[str, int] | None: ...
def topology_compare(radix: int) -> list[CompareRow]: ...
def topology_tree_preset(name: str) -> str: ...
def topology_ml3b(k: int) -> list[list[int]]: ...

# -- SimGrid platforms (topology::simgrid) ------------------------------------------------------

def topology_to_simgrid(topology: Topology) -> str:
    """The topology as a SimGrid platform (version 4.1, one Floyd zone)."""

def topology_from_simgrid(text: str, what: str = ...) -> Topology:
    """Reads a SimGrid platform; errors name ``what`` and the line."""

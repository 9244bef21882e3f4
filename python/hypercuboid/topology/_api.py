"""Generation, analysis, bisection and export (thin layer over ``hypercuboid._core``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import TopologyError
from hypercuboid.schedule import refuse_existing

Topology = _core.Topology

#: Formats accepted by :func:`export` (the core's table; :func:`export` also writes
#: ``simgrid``, a SimGrid platform: docs/simgrid.md).
EXPORT_FORMATS = tuple(c.name for c in _core.choices("export format"))


def families() -> list[dict[str, Any]]:
    """The topology families a spec string may name, with their keys and an example."""
    return [
        {
            "name": f.name,
            "summary": f.summary,
            "keys": list(f.keys),
            "positional": f.positional,
            "example": f.example,
        }
        for f in _core.topology_families()
    ]


def generate(spec: str) -> Topology:
    """Builds the topology named by ``spec`` (``slimfly:q=13,p=9``, ``oft:k=12``,
    ``tree:fig1``, ``json:file.json``, ``graphml:file.graphml,p=2``, a SimGrid platform
    ``simgrid:platform.xml`` or ``platform.xml``, ...)."""
    if not isinstance(spec, str):
        raise TopologyError(f"a topology spec must be a string, got {type(spec).__name__}")
    from hypercuboid.topology._simgrid import read_simgrid, simgrid_path

    platform = simgrid_path(spec)
    if platform is not None:
        return read_simgrid(platform)
    graphml = _core.topology_graphml_source(spec)  # the core parses every spec
    if graphml is not None:
        from hypercuboid.topology._io import read_graphml

        path, p = graphml
        return read_graphml(path, endpoints_per_router=p)
    return _core.topology_generate(spec)


def _topology(topology: Topology | str) -> Topology:
    return generate(topology) if isinstance(topology, str) else topology


def load(path: str | os.PathLike[str]) -> Topology:
    """Reads a topology written by ``export(topology, "json", path)``, or a SimGrid platform
    (a path ending in ``.xml``)."""
    path = os.fspath(path)
    if path.lower().endswith(".xml"):
        from hypercuboid.topology._simgrid import read_simgrid

        return read_simgrid(path)
    try:
        text = _core.read_text(path)  # bounded: /dev/zero is refused, not read on
    except OSError as err:
        if err.errno:
            raise TopologyError(f"cannot access '{path}': {err.strerror}") from None
        raise TopologyError(
            f"{path}: not a topology file ({err.strerror}; expected the JSON that "
            "export(topology, 'json', path) writes)"
        ) from None
    return _core.topology_from_json(text, path)


def from_json(text: str, what: str = "<json>") -> Topology:
    """Parses our topology JSON (the schema of docs/topologies.md)."""
    return _core.topology_from_json(text, what)


def tree_preset(name: str) -> str:
    """The JSON description of an Ethernet tree preset (``fig1``, ``fig5a``, ``fig5b``,
    ``fig5c``): a starting point for a description file."""
    return _core.topology_tree_preset(name)


def ml3b(k: int) -> list[list[int]]:
    """The tabular k-ML3B of the two-level OFT (row i: the L1 routers of L0 router i)."""
    return _core.topology_ml3b(k)


def distances(topology: Topology | str) -> np.ndarray:
    """All-pairs router distances as an R×R ``uint16`` array (65535 = unreachable)."""
    t = _topology(topology)
    r = t.num_routers
    return np.frombuffer(t.distances(), dtype="<u2").reshape(r, r)


def _metis_graph(t: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Simple undirected CSR of the router graph (parallel links merged, weights summed)."""
    r = t.num_routers
    links = t.links()
    if not links:
        return np.zeros(r + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), None
    arr = np.array([(a, b) for a, b, _, _ in links], dtype=np.int64)
    bw = np.array([x[2] for x in links], dtype=np.float64)
    lo, hi = arr.min(axis=1), arr.max(axis=1)
    keys, inverse = np.unique(lo * r + hi, return_inverse=True)
    weight = np.zeros(len(keys))
    np.add.at(weight, inverse, bw)
    a, b = keys // r, keys % r
    src = np.concatenate([a, b])
    dst = np.concatenate([b, a])
    w = np.concatenate([weight, weight])
    order = np.lexsort((dst, src))
    src, dst, w = src[order], dst[order], w[order]
    xadj = np.zeros(r + 1, dtype=np.int32)
    np.add.at(xadj, src + 1, 1)
    xadj = np.cumsum(xadj, dtype=np.int32)
    eweights = None
    if not np.allclose(w, w[0]):
        eweights = np.maximum(1, np.rint(w / w.min())).astype(np.int32)
    return xadj, dst.astype(np.int32), eweights


def _metis_partition(xadj, adjncy, vweights, eweights, seed: int) -> list[int]:
    import pymetis

    options = pymetis.Options(seed=seed)
    if hasattr(pymetis, "CSRAdjacency"):
        result = pymetis.part_graph(
            2,
            pymetis.CSRAdjacency(xadj, adjncy),
            vweights=vweights,
            eweights=eweights,
            options=options,
        )
    else:  # pymetis before 2025.2
        result = pymetis.part_graph(
            2, xadj=xadj, adjncy=adjncy, vweights=vweights, eweights=eweights, options=options
        )
    return list(result[1])


def bisection(topology: Topology | str, *, seeds: int = 8, method: str = "metis") -> dict:
    """Bisection bandwidth: the smallest cut found that splits the endpoints exactly in half.

    ``method="metis"``: METIS (pymetis) partitions the router graph (vertex weights = endpoints)
    with ``seeds`` seeds; each partition is repaired to an exact ⌊N/2⌋/⌈N/2⌉ endpoint split and
    refined by balance-preserving Fiduccia–Mattheyses swaps (Rust); the best cut is kept.
    ``method="fm"``: the same refinement from breadth-first-grown starts, without METIS.

    Returns ``cut_links``, ``cut_endpoint_links``, ``cut_bandwidth_gbps``, ``per_endpoint`` (cut
    bandwidth / (⌊N/2⌋ · endpoint-link bandwidth)), the ``endpoints`` and ``routers`` per side,
    the sides themselves, and for METIS the raw partition's ``metis_split`` (endpoints and
    routers per side before the repair) and ``metis_cut``.
    """
    t = _topology(topology)
    if seeds < 1:
        raise TopologyError(f"bisection: seeds={seeds}; at least 1 seed is needed")
    if method == "fm":
        result = _bisection_dict(t.bisect(seeds, 0))
        result.update(method="fm", seeds=seeds)
        return result
    if method != "metis":
        raise TopologyError(f"bisection: unknown method '{method}'; accepted: metis, fm")
    try:
        import pymetis  # noqa: F401
    except ImportError:
        raise TopologyError(
            "bisection with METIS needs pymetis (pip install 'hypercuboid[topo]'), "
            "or use method='fm'"
        ) from None
    xadj, adjncy, eweights = _metis_graph(t)
    r = t.num_routers
    vweights = np.zeros(r, dtype=np.int32)
    np.add.at(vweights, np.array(t.endpoint_routers(), dtype=np.int64), 1)
    best = None
    for seed in range(seeds):
        part = _metis_partition(xadj, adjncy, vweights, eweights, seed)
        sides = [p == 1 for p in part]
        refined = _bisection_dict(t.refine_bisection(sides))
        if best is None or refined["cut_bandwidth_gbps"] < best["cut_bandwidth_gbps"] - 1e-9:
            side = np.array(sides)
            raw_cut = int(sum(1 for a, b, _, _ in t.links() if side[a] != side[b]))
            refined.update(
                metis_split={
                    "endpoints": [int(vweights[~side].sum()), int(vweights[side].sum())],
                    "routers": [int((~side).sum()), int(side.sum())],
                },
                metis_cut=raw_cut,
                seed=seed,
            )
            best = refined
    assert best is not None  # seeds >= 1
    best.update(method="metis", seeds=seeds)
    return best


_bisection = bisection


def _bisection_dict(b: _core.Bisection) -> dict:
    return {
        "router_side": list(b.router_side),
        "endpoint_side": list(b.endpoint_side),
        "endpoints": list(b.endpoints),
        "routers": list(b.routers),
        "cut_links": b.cut_links,
        "cut_endpoint_links": b.cut_endpoint_links,
        "cut_bandwidth_gbps": b.cut_bandwidth_gbps,
        "per_endpoint": b.per_endpoint,
    }


def _analysis_dict(a: _core.TopologyAnalysis) -> dict[str, Any]:
    """The keys of docs/topologies.md, in order, from the core's analysis."""
    d: dict[str, Any] = {k: getattr(a, k) for k in _ANALYSIS_HEAD}
    d["kinds"] = [
        {"name": n, "count": c, "network_degree": list(deg), "endpoints": list(eps)}
        for n, c, deg, eps in a.kinds
    ]
    d.update((k, getattr(a, k)) for k in _ANALYSIS_BODY)
    d["path_diversity"] = {
        "histogram": [list(h) for h in a.path_histogram],
        "mean": a.path_mean,
        "max": a.path_max,
        "by_distance": [
            dict(zip(("distance", "pairs", "mean_paths", "max_paths"), b, strict=True))
            for b in a.paths_by_distance
        ],
    }
    m = a.moore_bound
    d["moore_bound"] = None if m is None else dict(zip(_MOORE_KEYS, m, strict=True))
    d["tree"] = None if a.tree is None else _tree_dict(a.tree)
    return d


_MOORE_KEYS = ("degree", "diameter", "bound", "fraction")
_ANALYSIS_HEAD = (
    "endpoints",
    "routers",
    "endpoint_routers",
    "network_links",
    "router_radix",
    "network_radix",
)
_ANALYSIS_BODY = (
    "total_ports",
    "ports_per_endpoint",
    "total_links",
    "links_per_endpoint",
    "connected",
    "diameter",
    "router_diameter",
    "avg_hops",
    "avg_router_distance",
    "distance_histogram",
)


_TREE_BODY = (
    "m_u",
    "m_v",
    "load",
    "endpoint_load",
    "bottleneck_bandwidth_gbps",
    "peak_throughput_gbps",
    "root",
    "root_name",
)


def _tree_dict(t: _core.TreeAnalysis) -> dict[str, Any]:
    d: dict[str, Any] = {"bottleneck": t.bottleneck}
    if t.bottleneck_link is not None:
        d["bottleneck_link"] = t.bottleneck_link
    else:
        d["bottleneck_endpoint"] = t.bottleneck_endpoint
    d.update((k, getattr(t, k)) for k in _TREE_BODY)
    d["subtrees"] = [{"top": top, "machines": m} for top, m in t.subtrees]
    d["link_loads"] = list(t.link_loads)
    return d


def analyze(
    topology: Topology | str,
    *,
    bisection: bool = False,
    seeds: int = 8,
    method: str = "metis",
) -> dict:
    """Analysis of a topology: the keys of docs/topologies.md (``endpoints``, ``routers``,
    ``router_radix``, ``network_radix``, ``ports_per_endpoint``, ``links_per_endpoint``,
    ``diameter``, ``avg_hops``, ``path_diversity``, ``moore_bound``, ``tree``, ...), and with
    ``bisection=True`` a ``bisection`` entry (without the per-router sides)."""
    t = _topology(topology)
    info = {"name": t.name, "family": t.family, "params": dict(t.params)}
    info.update(_analysis_dict(t.analyze()))
    if bisection:
        b = _bisection(t, seeds=seeds, method=method)
        b.pop("router_side", None)
        b.pop("endpoint_side", None)
        info["bisection"] = b
    return info


def export(
    topology: Topology | str,
    fmt: str,
    path: str | os.PathLike[str] | None = None,
    *,
    cycle_ps: int | None = None,
    endpoints: bool = True,
    force: bool = False,
) -> str:
    """Writes the topology as ``json`` (our schema), ``graphml``, ``anynet`` (BookSim2; link
    latencies in cycles of ``cycle_ps`` if given), ``simgrid`` (a SimGrid platform, version
    4.1) or ``dot`` (with endpoints unless
    ``endpoints=False``); returns the text and writes it to ``path`` if given (an existing
    ``path`` raises :class:`~hypercuboid.errors.OutputExistsError` unless ``force=True``)."""
    try:
        fmt = _core.choice_name("export format", fmt)
    except ValueError as e:
        raise TopologyError(str(e)) from None
    if path is not None:
        path = refuse_existing(os.fspath(path), force)
    t = _topology(topology)
    if fmt == "simgrid":
        text = _core.topology_to_simgrid(t)
    elif fmt == "json":
        text = t.to_json()
    elif fmt == "graphml":
        text = t.to_graphml()
    elif fmt == "anynet":
        text = t.to_anynet(cycle_ps)
    else:
        text = t.to_dot(endpoints)
    if path is not None:
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as err:
            raise TopologyError(f"cannot write '{path}': {err.strerror}") from None
    return text

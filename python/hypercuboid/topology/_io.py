"""GraphML and networkx conversions (networkx does the parsing)."""

from __future__ import annotations

import os
from typing import Any

from hypercuboid import _core
from hypercuboid.errors import TopologyError

_DEFAULT_BW = 100.0
_DEFAULT_LAT_PS = 50_000


def _nx():
    try:
        import networkx
    except ImportError:
        raise TopologyError(
            "GraphML and networkx support needs networkx (pip install 'hypercuboid[topo]')"
        ) from None
    return networkx


def _edge_params(data: dict[str, Any], where: str) -> tuple[float, int]:
    try:
        bw = float(data.get("bandwidth_gbps", _DEFAULT_BW))
        lat = int(data.get("latency_ps", _DEFAULT_LAT_PS))
    except (TypeError, ValueError):
        raise TopologyError(
            f"{where}: bandwidth_gbps must be a number and latency_ps an integer"
        ) from None
    return bw, lat


def _from_graph(graph, *, name: str, family: str, endpoints_per_router: int):
    """Topology from a networkx graph: nodes with ``type`` = ``endpoint`` become endpoints
    (each with exactly one link, to a router); every other node is a router. Without endpoint
    nodes, every router gets ``endpoints_per_router`` endpoints."""
    if endpoints_per_router < 0:
        raise TopologyError(f"endpoints_per_router={endpoints_per_router}; must be >= 0")
    gattr = dict(graph.graph)
    nodes = list(graph.nodes(data=True))
    is_ep = {n: str(d.get("type", "router")) == "endpoint" for n, d in nodes}
    routers = [n for n, _ in nodes if not is_ep[n]]
    endpoints = [n for n, _ in nodes if is_ep[n]]
    if not routers:
        raise TopologyError(f"{name}: the graph has no routers")
    rindex = {n: i for i, n in enumerate(routers)}
    eindex = {n: i for i, n in enumerate(endpoints)}
    kinds: list[str] = [k for k in str(gattr.get("kinds", "")).split(",") if k]
    router_kinds = []
    for n, d in nodes:
        if is_ep[n]:
            continue
        kind = str(d.get("kind", "router"))
        if kind not in kinds:
            kinds.append(kind)
        router_kinds.append(kinds.index(kind))
    coord_names = [c for c in str(gattr.get("coord_names", "")).split(",") if c]
    coords: list[int] = []
    for n, d in nodes:
        if is_ep[n]:
            continue
        text = str(d.get("coords", ""))
        values = [v for v in text.split(",") if v] if text else []
        if len(values) != len(coord_names):
            raise TopologyError(
                f"{name}: router {n} has coords '{text}', expected {len(coord_names)} values "
                f"({', '.join(coord_names)})"
            )
        try:
            coords.extend(int(v) for v in values)
        except ValueError:
            raise TopologyError(f"{name}: router {n} has coords '{text}'") from None
    links: list = []
    ep_router: list[int | None] = [None] * len(endpoints)
    ep_link: list[tuple[float, int]] = [(_DEFAULT_BW, _DEFAULT_LAT_PS)] * len(endpoints)
    for u, v, d in graph.edges(data=True):
        where = f"{name}: edge {u}-{v}"
        bw, lat = _edge_params(d, where)
        if is_ep[u] and is_ep[v]:
            raise TopologyError(f"{where} joins two endpoints")
        if is_ep[u] or is_ep[v]:
            e, r = (u, v) if is_ep[u] else (v, u)
            if ep_router[eindex[e]] is not None:
                raise TopologyError(f"{name}: endpoint {e} has more than one link")
            ep_router[eindex[e]] = rindex[r]
            ep_link[eindex[e]] = (bw, lat)
        else:
            if u == v:
                raise TopologyError(f"{where} is a self-loop")
            a, b = rindex[u], rindex[v]
            if "link_a" in d and int(d["link_a"]) == b:
                a, b = b, a
            links.append((int(d.get("link", -1)), a, b, bw, lat))
    # Our export numbers the links: restore their order; other graphs keep networkx's order.
    if links and all(x[0] >= 0 for x in links):
        links.sort(key=lambda x: x[0])
    links = [x[1:] for x in links]
    if endpoints:
        missing = [str(endpoints[i]) for i, r in enumerate(ep_router) if r is None]
        if missing:
            raise TopologyError(f"{name}: endpoint {missing[0]} has no link to a router")
        endpoint_routers = [int(r) for r in ep_router]  # type: ignore[arg-type]
    else:
        endpoint_routers = [r for r in range(len(routers)) for _ in range(endpoints_per_router)]
        ep_link = [(_DEFAULT_BW, _DEFAULT_LAT_PS)] * len(endpoint_routers)
    params_text = str(gattr.get("params", ""))
    params: list[Any] = [tuple(kv.split("=", 1)) for kv in params_text.split(",") if "=" in kv]
    if not params and not endpoints:
        params = [("p", str(endpoints_per_router))]

    def labels(items, data):
        return [str(data[n].get("label", n)) for n in items]

    data = dict(nodes)
    has_labels = any("label" in data[n] for n in routers) or not any("type" in d for _, d in nodes)
    return _core.topology_from_parts(
        str(gattr.get("name", name)),
        str(gattr.get("family", family)),
        params,
        kinds,
        router_kinds,
        coord_names,
        coords,
        endpoint_routers,
        ep_link,
        links,
        router_names=labels(routers, data) if has_labels else None,
        endpoint_names=(
            labels(endpoints, data) if any("label" in data[n] for n in endpoints) else None
        ),
    )


def read_graphml(path: str | os.PathLike[str], *, endpoints_per_router: int = 1):
    """Reads GraphML: our export (nodes typed ``router``/``endpoint``) round-trips exactly; any
    other graph gives a router per node with ``endpoints_per_router`` endpoints each, edge
    attributes ``bandwidth_gbps`` and ``latency_ps`` if present."""
    nx = _nx()
    path = os.fspath(path)
    if not os.path.exists(path):
        raise TopologyError(f"cannot access '{path}': No such file or directory")
    try:
        graph = nx.read_graphml(path)
    except Exception as err:  # networkx raises several types on malformed XML
        raise TopologyError(f"cannot read {path}: {err}") from None
    if graph.is_directed():
        graph = graph.to_undirected(as_view=False)
    return _from_graph(
        graph, name=path, family="graphml", endpoints_per_router=endpoints_per_router
    )


def from_networkx(graph, *, endpoints_per_router: int = 1, name: str = "networkx"):
    """Topology from a networkx graph. Nodes with attribute ``type="endpoint"`` are endpoints
    (one link each, to a router); other nodes are routers (kind from the ``kind`` attribute).
    Without endpoint nodes every router gets ``endpoints_per_router`` endpoints. Edge attributes
    ``bandwidth_gbps`` and ``latency_ps`` are used if present."""
    nx = _nx()
    if not isinstance(graph, nx.Graph):
        raise TopologyError(f"from_networkx expects a networkx graph, got {type(graph).__name__}")
    if graph.is_directed():
        graph = graph.to_undirected(as_view=False)
    return _from_graph(
        graph, name=name, family="networkx", endpoints_per_router=endpoints_per_router
    )


def to_networkx(topology, *, endpoints: bool = True):
    """The topology as a networkx graph (a MultiGraph if it has parallel links): routers
    ``r<i>`` and endpoints ``e<j>`` with ``type``, ``kind``, ``coords``; edges with
    ``bandwidth_gbps`` and ``latency_ps`` (router links also with their index ``link`` and first
    end ``link_a``, so that :func:`from_networkx` restores the topology exactly); graph
    attributes ``name``, ``family``, ``params``."""
    nx = _nx()
    from hypercuboid.topology._api import _topology

    t = _topology(topology)
    links = t.links()
    pairs = {(min(a, b), max(a, b)) for a, b, _, _ in links}
    g = nx.MultiGraph() if len(pairs) != len(links) else nx.Graph()
    g.graph.update(
        name=t.name,
        family=t.family,
        params=",".join(f"{k}={v}" for k, v in t.params),
        kinds=",".join(t.kinds),
        coord_names=",".join(t.coord_names),
    )
    kinds = t.kinds
    names = t.router_names()
    for r, (k, c) in enumerate(zip(t.router_kinds(), t.coords(), strict=True)):
        attrs = {"type": "router", "kind": kinds[k], "coords": ",".join(map(str, c))}
        if names is not None:
            attrs["label"] = names[r]
        g.add_node(f"r{r}", **attrs)
    for i, (a, b, bw, lat) in enumerate(links):
        g.add_edge(f"r{a}", f"r{b}", bandwidth_gbps=bw, latency_ps=lat, link=i, link_a=a)
    if endpoints:
        enames = t.endpoint_names()
        ep_links = zip(t.endpoint_routers(), t.endpoint_links(), strict=True)
        for e, (r, (bw, lat)) in enumerate(ep_links):
            attrs = {"type": "endpoint"}
            if enames is not None:
                attrs["label"] = enames[e]
            g.add_node(f"e{e}", **attrs)
            g.add_edge(f"e{e}", f"r{r}", bandwidth_gbps=bw, latency_ps=lat)
    return g

"""Shared by the netsim tests."""

#: The keys of a synthetic run's JSON, in order: what the report dict of the binding had and
#: ``hypercuboid netsim run --json`` printed before reports became objects.
REPORT_KEYS = [
    "topology",
    "routing",
    "vc_scheme",
    "vcs",
    "traffic",
    "offered",
    "generated",
    "accepted",
    "latency_avg_ns",
    "latency_p50_ns",
    "latency_p99_ns",
    "latency_min_ns",
    "latency_max_ns",
    "hops_avg",
    "hop_histogram",
    "indirect_fraction",
    "delivered",
    "generated_packets",
    "injected_total",
    "delivered_total",
    "in_flight",
    "source_queued",
    "window_ns",
    "end_ns",
    "events",
    "wall_seconds",
    "threads",
    "packets_per_second",
    "link_utilisation",
    "top_links",
]


def core_report_dict(c) -> dict:
    """The JSON form of the core's report ``c`` (a ``_core.NetReport``), built key by key from
    its attributes as the binding's report dict was: the keys above in order, then ``links``,
    ``completion_ns``, ``effective_throughput`` and ``dims`` where the run has them."""
    link = ("from", "to", "link", "packets", "utilisation")
    d = {k: getattr(c, k) for k in REPORT_KEYS}
    d["hop_histogram"] = list(c.hop_histogram)
    d["window_ns"] = list(c.window_ns)
    util = ("mean", "max", "endpoint_mean")
    d["link_utilisation"] = dict(zip(util, c.link_utilisation, strict=True))
    d["top_links"] = [dict(zip(link, x, strict=True)) for x in c.top_links]
    if c.links is not None:
        d["links"] = [dict(zip(link, x, strict=True)) for x in c.links]
    if c.completion_ns is not None:
        d["completion_ns"] = c.completion_ns
        d["effective_throughput"] = c.effective_throughput
    if c.dims is not None:
        d["dims"] = list(c.dims)
    return d

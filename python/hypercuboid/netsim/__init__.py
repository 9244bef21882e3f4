"""Packet-level network simulation: routing, traffic, load sweeps (diameter-two seed, sections 3-4).

::

    from hypercuboid import netsim

    r = netsim.run("oft:k=12", routing="ugal", traffic="uniform", load=0.5)
    r.offered, r.accepted, r.latency_avg_ns, r.top_links[0]
    reps = netsim.run_loads("oft:k=12", "ugal", "uniform", "0.1:1.0:0.1")  # one per load

    points = netsim.grid(["mlfm:h=15"], ["min", "inr"], ["uniform", "worst"],
                         netsim.parse_loads("0.1:1.0:0.1"))
    results = netsim.sweep(points, jobs=2)          # local processes, or MPI ranks
    netsim.plot(results, "mlfm.png")
    netsim.saturation(results)

    netsim.exchange("mlfm:h=15", routing="ugal", pattern="nn", dims=(15, 16, 15))

Routings: ``min``, ``inr`` (Valiant), ``ugal`` (UGAL-L), ``ugal-th`` (UGAL-L with a
threshold), with options as ``ugal:n=4,c=1``, ``ugal-th:t=10``, ``min:choice=lowest``,
``inr:vcs=none``. Traffic: ``uniform``, ``worst``, ``permutation``, ``shift:K``. Exchanges:
``a2a``, ``nn``. The simulator itself runs in Rust (``hypercuboid._core``) with the GIL released;
see docs/diameter-two.md for the model.

A run's report is a :class:`Report` (:func:`run`, :func:`exchange` and :func:`run_point` return
one, :func:`run_loads` and :func:`sweep` a list): ``offered``, ``generated`` and ``accepted``
(fractions of the injection bandwidth), ``latency_avg_ns``, ``latency_p50_ns``,
``latency_p99_ns``, ``latency_min_ns``, ``latency_max_ns`` (generation to delivery of the packets
delivered in the measurement window), ``hops_avg``, ``hop_histogram``, ``indirect_fraction``,
``link_utilisation`` (a :class:`LinkUtilisation`: mean, max over directed router links, endpoint
links' mean), ``top_links`` (:class:`LinkUse` of the most utilised directed links: where the
bottleneck is), packet counts, ``events``, ``wall_seconds``, ``threads``,
``packets_per_second``; exchanges add ``completion_ns`` and ``effective_throughput`` (None for
synthetic traffic). ``report.to_dict()`` is the JSON that ``hypercuboid netsim run --json``
prints, ``Report.from_dict`` reads it back.
"""

from __future__ import annotations

from hypercuboid.netsim._api import (
    DEFAULTS,
    Point,
    cdg,
    exchange,
    fit_torus,
    forms,
    grid,
    names,
    parse_loads,
    parse_size,
    parse_time,
    pattern,
    run,
    run_loads,
    run_point,
    zero_load_latency,
)
from hypercuboid.netsim._plot import plot, plot_exchange
from hypercuboid.netsim._report import LinkUse, LinkUtilisation, Report
from hypercuboid.netsim._summary import SATURATION_RATIO, saturation
from hypercuboid.netsim._sweep import executor_kind, sweep

__all__ = [
    "DEFAULTS",
    "SATURATION_RATIO",
    "LinkUse",
    "LinkUtilisation",
    "Point",
    "Report",
    "cdg",
    "exchange",
    "executor_kind",
    "fit_torus",
    "forms",
    "grid",
    "names",
    "parse_loads",
    "parse_size",
    "parse_time",
    "pattern",
    "plot",
    "plot_exchange",
    "run",
    "run_loads",
    "run_point",
    "saturation",
    "sweep",
    "zero_load_latency",
]

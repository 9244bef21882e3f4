"""Saturation points of load sweeps."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from hypercuboid.netsim._report import Report

#: A load point is saturated when the accepted throughput falls below this fraction of the
#: offered load (the network no longer carries what the sources generate; their queues grow).
SATURATION_RATIO = 0.97


def saturation(results: Iterable[Report], ratio: float = SATURATION_RATIO) -> list[dict]:
    """Per (topology, routing, traffic) series of a synthetic sweep:

    * ``saturation_load``: the smallest offered load whose accepted throughput is below
      ``ratio`` × offered (None if no point of the sweep saturates);
    * ``last_stable_load``: the largest load below it that is not saturated;
    * ``knee``: the offered load at which accepted / offered crosses ``ratio``, interpolated
      linearly between those two points (None without both);
    * ``max_accepted``: the largest accepted throughput of the sweep (the plateau past
      saturation: what the seed's Fig. 6 calls the saturation throughput);
    * ``low_load_latency_ns``: average latency at the smallest offered load.
    """
    groups: dict[tuple[str, str, str], list[Report]] = defaultdict(list)
    order: list[tuple[str, str, str]] = []
    for r in results:
        if r.effective_throughput is not None:  # an exchange
            continue
        key = (r.topology, r.routing, r.traffic)
        if key not in groups:
            order.append(key)
        groups[key].append(r)
    out = []
    for key in order:
        pts = sorted(groups[key], key=lambda r: r.offered)
        sat = next((r for r in pts if r.accepted < ratio * r.offered), None)
        stable = None
        knee = None
        if sat is not None:
            below = [r for r in pts if r.offered < sat.offered]
            stable = below[-1] if below else None
            if stable is not None:
                r0 = stable.accepted / stable.offered
                r1 = sat.accepted / sat.offered
                x0, x1 = stable.offered, sat.offered
                knee = x0 + (r0 - ratio) / (r0 - r1) * (x1 - x0) if r0 != r1 else x0
        out.append(
            {
                "topology": key[0],
                "routing": key[1],
                "traffic": key[2],
                "saturation_load": sat.offered if sat else None,
                "last_stable_load": stable.offered if stable else None,
                "knee": knee,
                "max_accepted": max(r.accepted for r in pts),
                "low_load_latency_ns": pts[0].latency_avg_ns,
            }
        )
    return out

"""The report of one simulation (a load point or an exchange) as a typed object."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from hypercuboid.errors import NetworkError

if TYPE_CHECKING:
    from hypercuboid import _core


@dataclass(frozen=True)
class LinkUse:
    """One directed router-to-router link in the measurement window. In the JSON the router
    the link leaves is ``"from"`` (a Python keyword, hence ``from_`` here)."""

    #: Router the link leaves.
    from_: int
    #: Router the link enters.
    to: int
    #: Index of the link in the topology.
    link: int
    #: Packets sent over the link in the window.
    packets: int
    #: Fraction of the window the link was busy sending.
    utilisation: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``from``, ``to``, ``link``, ``packets``, ``utilisation``."""
        return {
            "from": self.from_,
            "to": self.to,
            "link": self.link,
            "packets": self.packets,
            "utilisation": self.utilisation,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LinkUse:
        """From the JSON form (the inverse of :meth:`to_dict`)."""
        _check_keys("link", d, ("from", "to", "link", "packets", "utilisation"), ())
        return cls(d["from"], d["to"], d["link"], d["packets"], d["utilisation"])


@dataclass(frozen=True)
class LinkUtilisation:
    """Utilisation of the links in the measurement window."""

    #: Mean over the directed router-to-router links.
    mean: float
    #: Largest over the directed router-to-router links.
    max: float
    #: Mean over the endpoint links.
    endpoint_mean: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``mean``, ``max``, ``endpoint_mean``."""
        return {"mean": self.mean, "max": self.max, "endpoint_mean": self.endpoint_mean}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LinkUtilisation:
        """From the JSON form (the inverse of :meth:`to_dict`)."""
        _check_keys("link utilisation", d, ("mean", "max", "endpoint_mean"), ())
        return cls(d["mean"], d["max"], d["endpoint_mean"])


@dataclass(frozen=True)
class Report:
    """What one simulation measured: a load point of synthetic traffic
    (:func:`hypercuboid.netsim.run`) or an exchange (:func:`hypercuboid.netsim.exchange`).

    The fields are those of the JSON that ``hypercuboid netsim run --json`` prints, in its order;
    :meth:`to_dict` gives that JSON form and :meth:`from_dict` reads it back. Rates are fractions
    of the injection bandwidth, times are ns; the measurement window is ``window_ns``
    [warm-up, end). The last four fields are None when a run has no such value (the JSON then
    lacks the key): ``links`` without the option ``links``, ``completion_ns`` and
    ``effective_throughput`` for synthetic traffic, ``dims`` but for the ``nn`` exchange.
    """

    #: Topology, canonical spec.
    topology: str
    #: Routing, canonical spec.
    routing: str
    #: VC assignment (``hop``, ``phase``, ``none``).
    vc_scheme: str
    #: Virtual channels per network port.
    vcs: int
    #: Traffic pattern or exchange (``a2a``, ``nn``).
    traffic: str
    #: Offered load (exchanges: 1).
    offered: float
    #: Packets generated in the window, as a fraction of the injection bandwidth.
    generated: float
    #: Packets delivered in the window, as a fraction of the injection bandwidth.
    accepted: float
    #: Latency (generation to delivery) of the packets delivered in the window: mean.
    latency_avg_ns: float
    #: ... median.
    latency_p50_ns: float
    #: ... 99th percentile.
    latency_p99_ns: float
    #: ... smallest.
    latency_min_ns: float
    #: ... largest.
    latency_max_ns: float
    #: Mean router-to-router hops of the packets delivered in the window.
    hops_avg: float
    #: Packets delivered in the window by hops: ``hop_histogram[h]``.
    hop_histogram: tuple[int, ...]
    #: Fraction of the packets delivered in the window that took an indirect path.
    indirect_fraction: float
    #: Packets delivered in the window.
    delivered: int
    #: Packets generated in the window.
    generated_packets: int
    #: Packets injected into the network in the whole run.
    injected_total: int
    #: Packets delivered in the whole run.
    delivered_total: int
    #: Packets still in the network when the run stopped.
    in_flight: int
    #: Packets generated but not yet injected (source queues) when the run stopped.
    source_queued: int
    #: Measurement window [start, end).
    window_ns: tuple[float, float]
    #: Simulated time at which the run stopped.
    end_ns: float
    #: Events processed.
    events: int
    #: Wall-clock seconds of the run.
    wall_seconds: float
    #: Engine threads the run used (the other fields do not depend on it).
    threads: int
    #: Packets delivered in the whole run per wall-clock second.
    packets_per_second: float
    #: Utilisation of the router links (mean, max) and the endpoint links (mean).
    link_utilisation: LinkUtilisation
    #: The busiest directed router links, busiest first: where the bottleneck is.
    top_links: tuple[LinkUse, ...]
    #: Every directed router link (option ``links``), else None.
    links: tuple[LinkUse, ...] | None = field(default=None, repr=False)
    #: Exchanges: first injection to last delivery.
    completion_ns: float | None = None
    #: Exchanges: data per node / completion time, as a fraction of the injection bandwidth.
    effective_throughput: float | None = None
    #: The nn exchange: torus dimensions X, Y, Z.
    dims: tuple[int, int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, as ``hypercuboid netsim run --json`` prints it: the fields in order,
        nested parts as dicts, sequences as lists, and no key for an optional field that is
        None."""
        d: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None and f.name in _OPTIONAL:
                continue
            if isinstance(v, LinkUtilisation):
                v = v.to_dict()
            elif f.name in ("top_links", "links"):
                v = [x.to_dict() for x in v]
            elif isinstance(v, tuple):
                v = list(v)
            d[f.name] = v
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Report:
        """From the JSON form (a line of ``--json`` output read back):
        the inverse of :meth:`to_dict`. Raises :class:`NetworkError` on a missing or unknown
        key."""
        _check_keys("report", d, _REQUIRED, _OPTIONAL)
        kw: dict[str, Any] = dict(d)
        kw["hop_histogram"] = tuple(d["hop_histogram"])
        kw["window_ns"] = tuple(d["window_ns"])
        kw["link_utilisation"] = LinkUtilisation.from_dict(d["link_utilisation"])
        kw["top_links"] = tuple(LinkUse.from_dict(x) for x in d["top_links"])
        if "links" in d:
            kw["links"] = tuple(LinkUse.from_dict(x) for x in d["links"])
        if "dims" in d:
            kw["dims"] = tuple(d["dims"])
        return cls(**kw)

    @classmethod
    def _of_core(cls, c: _core.NetReport) -> Report:
        """From the core's report (its fields by name; links as rows)."""
        kw: dict[str, Any] = {f: getattr(c, f) for f in _FIELDS}
        kw["hop_histogram"] = tuple(c.hop_histogram)
        kw["link_utilisation"] = LinkUtilisation(*c.link_utilisation)
        kw["top_links"] = tuple(LinkUse(*x) for x in c.top_links)
        if c.links is not None:
            kw["links"] = tuple(LinkUse(*x) for x in c.links)
        return cls(**kw)

    # -- the dict a report used to be ----------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        """Deprecated: ``report["accepted"]`` is ``report.accepted``. Returns the value of the
        JSON form (:meth:`to_dict`), as the report dict did."""
        _deprecated(f"report[{key!r}]", f"report.{key}" if key in _FIELDS else "its attributes")
        return self.to_dict()[key]

    def __contains__(self, key: object) -> bool:
        """Deprecated: whether the report dict had ``key``; an optional field absent from the
        JSON is None."""
        _deprecated(f"{key!r} in report", "report.<field> is not None")
        return key in self.to_dict()

    def get(self, key: str, default: Any = None) -> Any:
        """Deprecated: ``report.get("completion_ns")`` is ``report.completion_ns``."""
        _deprecated(f"report.get({key!r})", f"report.{key}" if key in _FIELDS else "getattr")
        return self.to_dict().get(key, default)

    def __iter__(self):
        # Without it, iter() would fall back to __getitem__(0), (1), ... and fail on a KeyError.
        raise TypeError(
            "a Report is not iterable (it is no longer a dict): iterate over "
            "dataclasses.fields(report) or report.to_dict()"
        )


_FIELDS = tuple(f.name for f in fields(Report))
#: The fields that a report may lack (None here, no key in the JSON).
_OPTIONAL = ("links", "completion_ns", "effective_throughput", "dims")
_REQUIRED = tuple(n for n in _FIELDS if n not in _OPTIONAL)


def _check_keys(
    what: str, d: Mapping[str, Any], required: tuple[str, ...], optional: tuple[str, ...]
) -> None:
    missing = [k for k in required if k not in d]
    unknown = [k for k in d if k not in required and k not in optional]
    if missing or unknown:
        problems = []
        if missing:
            problems.append("missing " + ", ".join(missing))
        if unknown:
            problems.append("unknown " + ", ".join(map(str, unknown)))
        raise NetworkError(
            f"invalid netsim {what}: {'; '.join(problems)}; its keys are "
            + ", ".join(required + optional)
        )


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"{old}: netsim reports are Report objects, read {new} instead (dict-style access "
        "returns the JSON form of report.to_dict() and will go)",
        DeprecationWarning,
        stacklevel=3,
    )

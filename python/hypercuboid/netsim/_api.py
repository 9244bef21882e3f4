"""Single runs, option parsing and sweep points."""

from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass, field
from typing import Any

from hypercuboid import _core, units
from hypercuboid.errors import NetworkError, UnitError
from hypercuboid.netsim._report import Report
from hypercuboid.schedule import _form
from hypercuboid.topology import Topology, generate

_CORE = _core.DEFAULTS["netsim"]

#: Defaults of the simulator, the core's (the seed's section 4.1: 100 KiB = 102 400 B per port
#: and direction, 256 B packets, 100 ns switch traversal; windows of 20 us warm-up and 200 us),
#: written as the options take them.
DEFAULTS: dict[str, Any] = {
    "seed": _CORE["seed"],
    "warmup": units.format_time_exact(_CORE["warmup_ps"]),
    "duration": units.format_time_exact(_CORE["duration_ps"]),
    "drain": _CORE["drain"],
    "packet_bytes": _CORE["packet_bytes"],
    "buffer": units.format_size(_CORE["buffer_bytes"]),
    "switch_latency": units.format_time_exact(_CORE["switch_latency_ps"]),
    "watchdog": units.format_time_exact(_CORE["watchdog_ps"]),
    "top_links": _CORE["top_links"],
    "links": _CORE["links"],
    "threads": _CORE["threads"],
}


def parse_size(text: str | int) -> int:
    """Bytes from ``100KB``, ``7.5KB``, ``512KiB``, ``256`` (the units grammar of
    :mod:`hypercuboid.units`: KB = KiB = 1024 B, as the seed's buffer of 100 KB holding 400
    packets of 256 B); an int >= 0 is taken as bytes."""
    if isinstance(text, int) and text >= 0:
        return text
    try:
        return units.parse_size(str(text))
    except UnitError as err:
        raise NetworkError(str(err)) from None


def parse_time(text: str | int) -> int:
    """Picoseconds from ``20us``, ``100ns``, ``1.5us`` (a bare number is nanoseconds; an int is
    taken as picoseconds)."""
    if isinstance(text, int):
        return text
    try:
        return units.parse_time(str(text))
    except UnitError as err:
        raise NetworkError(str(err)) from None


def parse_loads(text: str | float | list[float]) -> list[float]:
    """Offered loads from ``0.1:1.0:0.1`` (start:stop:step, stop included), ``0.1,0.5,0.9`` or
    one number. Every load must be in (0, 1]."""
    if isinstance(text, (int, float)):
        loads = [float(text)]
    elif isinstance(text, list):
        loads = [float(x) for x in text]
    else:
        t = str(text).strip()
        try:
            if ":" in t:
                parts = [float(x) for x in t.split(":")]
                if len(parts) != 3:
                    raise ValueError
                start, stop, step = parts
                if step <= 0 or stop < start:
                    raise NetworkError(
                        f"invalid load range '{text}': expected start:stop:step with "
                        "start <= stop and step > 0"
                    )
                n = int(round((stop - start) / step)) + 1
                loads = [round(start + i * step, 10) for i in range(n)]
                loads = [x for x in loads if x <= stop + 1e-9]
            else:
                loads = [float(x) for x in t.split(",") if x.strip()]
        except ValueError:
            raise NetworkError(
                f"invalid load '{text}': expected a number, a list 0.1,0.5 or a range "
                "start:stop:step"
            ) from None
    if not loads:
        raise NetworkError(f"invalid load '{text}': no load given")
    for x in loads:
        if not (x > 0.0 and x <= 1.0):
            raise NetworkError(
                f"invalid load {x:g}: the offered load is a fraction of the injection "
                "bandwidth, in (0, 1]"
            )
    return loads


def _topology(t: Topology | str) -> Topology:
    return generate(t) if isinstance(t, str) else t


def _core_options(opts: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The core's keyword arguments of ``opts`` (checked, defaults filled in): the engine and
    report options that runs and exchanges share, and a run's measurement window."""
    unknown = set(opts) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}; accepted: {sorted(DEFAULTS)}")
    o = {**DEFAULTS, **opts}
    buffer = parse_size(o["buffer"])
    engine = {
        "seed": int(o["seed"]),
        "packet_bytes": int(o["packet_bytes"]),
        "buffer_bytes": buffer,
        "switch_latency_ps": parse_time(o["switch_latency"]),
        "watchdog_ps": parse_time(o["watchdog"]),
        "top_links": int(o["top_links"]),
        "links": bool(o["links"]),
        "threads": _threads(o["threads"]),
    }
    window = {
        "warmup_ps": parse_time(o["warmup"]),
        "duration_ps": parse_time(o["duration"]),
        "drain": bool(o["drain"]),
    }
    return engine, window


def _threads(value: Any) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = -1
    if n < 0 or n > 255 or (isinstance(value, float) and value != n):
        raise NetworkError(
            f"invalid threads {value!r}: expected a whole number from 1 to 255, or 0 for "
            "automatic (every core for a network of 4096 ports or more)"
        )
    return n


def run(
    topology: Topology | str,
    routing: str = "min",
    traffic: str = "uniform",
    load: float = 0.5,
    **options: Any,
) -> Report:
    """Simulates synthetic ``traffic`` at one offered ``load`` (a number in (0, 1]) and returns
    its :class:`Report` (:func:`run_loads` runs several loads). Options (defaults in
    :data:`DEFAULTS`): ``seed``, ``warmup``, ``duration``, ``drain``, ``packet_bytes``,
    ``buffer``, ``switch_latency``, ``watchdog``, ``top_links``, ``links`` (every link's
    utilisation), ``threads`` (0: automatic; the results do not depend on it)."""
    if not isinstance(load, numbers.Real):
        raise NetworkError(
            f"invalid load {load!r}: run takes one offered load, a number; "
            "run_loads(topology, routing, traffic, loads) takes a list, a range "
            "start:stop:step or a comma list and returns one report per load"
        )
    return run_loads(topology, routing, traffic, float(load), **options)[0]


def run_loads(
    topology: Topology | str,
    routing: str,
    traffic: str,
    loads: float | list[float] | str,
    **options: Any,
) -> list[Report]:
    """Simulates synthetic ``traffic`` at each offered load of ``loads`` (a list, a range
    ``start:stop:step`` with stop included, a comma list ``0.1,0.5`` or one number; each in
    (0, 1]) and returns one :class:`Report` per load, in order. The network and its routing
    tables are built once. Options as :func:`run`."""
    loads = parse_loads(loads)
    engine, window = _core_options(options)
    reps = _core.netsim_run(_topology(topology), routing, traffic, loads, **window, **engine)
    return [Report._of_core(r) for r in reps]


def exchange(
    topology: Topology | str,
    routing: str = "min",
    pattern: str = "a2a",
    *,
    dims: tuple[int, int, int] | str | None = None,
    message: str | int | None = None,
    order: str = "interleaved",
    **options: Any,
) -> Report:
    """Simulates one exchange to completion: ``a2a`` (every node sends ``message``, default
    7.5 KB, to every other; ``order`` ``interleaved`` packets over a random destination order,
    or ``sequential`` whole messages) or ``nn`` (3-D torus ``dims``, default the largest that
    fits, ``message`` default 512 KB to each of 6 neighbours). Reports ``completion_ns`` and
    ``effective_throughput`` (data per node / completion time / injection bandwidth) in its
    :class:`Report`."""
    if order not in ("interleaved", "sequential"):
        raise NetworkError(f"invalid order '{order}': accepted: interleaved, sequential")
    if isinstance(dims, str):
        dims = _parse_dims(dims)
    engine, _ = _core_options(options)
    rep = _core.netsim_exchange(
        _topology(topology),
        routing,
        pattern,
        dims=list(dims) if dims is not None else None,  # type: ignore[arg-type]
        message_bytes=parse_size(message) if message is not None else None,
        interleave=order == "interleaved",
        **engine,
    )
    return Report._of_core(rep)


def _parse_dims(text: str) -> tuple[int, int, int]:
    try:
        x, y, z = _core.parse_dims(text, "invalid torus")
    except ValueError as e:
        raise NetworkError(str(e)) from None
    return (x, y, z)


def cdg(topology: Topology | str, routing: str) -> dict:
    """The channel dependency graph of ``routing`` on ``topology``: ``vc_scheme``, ``vcs``,
    ``channels``, ``dependencies``, ``acyclic`` and a ``cycle`` of (from, to, vc) if any."""
    g = _core.netsim_cdg(_topology(topology), routing)
    return {
        "topology": g.topology,
        "routing": g.routing,
        "vc_scheme": g.vc_scheme,
        "vcs": g.vcs,
        "channels": g.channels,
        "dependencies": g.dependencies,
        "acyclic": g.acyclic,
        "cycle": None if g.cycle is None else list(g.cycle),
        "diameter": g.diameter,
        "ugal_cost": g.ugal_cost,
    }


def pattern(topology: Topology | str, traffic: str, *, seed: int = 1) -> list[int] | None:
    """The destination endpoint of every endpoint under ``traffic`` (None for uniform)."""
    return _core.netsim_pattern(_topology(topology), traffic, seed=seed)


def forms() -> dict[str, list[dict[str, Any]]]:
    """The routings, traffic patterns and exchanges a spec may name, as the core's tables have
    them: ``{"routings": [...], "traffics": [...], "exchanges": [...]}``, one dict per entry
    (``name``, ``aliases``, ``summary``, ``keys`` as (name, help) pairs, ``usage``,
    ``example``)."""
    routings, traffics, exchanges = _core.netsim_forms()
    return {
        "routings": [_form(f) for f in routings],
        "traffics": [_form(f) for f in traffics],
        "exchanges": [_form(f) for f in exchanges],
    }


def names() -> dict[str, list[str]]:
    """The routing, traffic and exchange names, as error messages list them (``shift:K``)."""
    return {kind: [f["usage"] for f in fs] for kind, fs in forms().items()}


def fit_torus(n: int) -> tuple[int, int, int]:
    """The largest 3-D torus of at most ``n`` processes (X <= Y <= Z <= 2X, most cubic)."""
    d = _core.netsim_fit_torus(n)
    if d is None:
        raise NetworkError(f"invalid node count {n}: no torus fits")
    return tuple(d)  # type: ignore[return-value]


def zero_load_latency(
    topology: Topology | str, hops: int, *, packet_bytes: int = 256, switch_latency="100ns"
) -> float:
    """Zero-load latency in ns of a path of ``hops`` router-to-router hops:
    (hops + 2)·L + (hops + 1)·S + σ."""
    ps = _core.netsim_zero_load_latency(
        _topology(topology),
        hops,
        packet_bytes=packet_bytes,
        switch_latency_ps=parse_time(switch_latency),
    )
    return ps / 1000.0


@dataclass(frozen=True)
class Point:
    """One simulation of a sweep: synthetic ``traffic`` at ``load``, or an ``exchange``
    (``a2a``/``nn``, with ``load`` None)."""

    topology: str
    routing: str
    traffic: str = "uniform"
    load: float | None = None
    exchange: str | None = None
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def label(self) -> str:
        what = self.exchange or f"{self.traffic}@{self.load:g}"
        return f"{self.topology} {self.routing} {what}"


def grid(
    topologies: list[str],
    routings: list[str],
    traffics: list[str],
    loads: list[float],
    **options: Any,
) -> list[Point]:
    """Every (topology, routing, traffic, load) combination, in that nesting order."""
    opts = tuple(sorted(options.items()))
    return [
        Point(t, r, tr, ld, None, opts)
        for t, r, tr, ld in itertools.product(topologies, routings, traffics, loads)
    ]


def run_point(point: Point) -> Report:
    """Runs one sweep point (in whatever process calls it)."""
    opts = dict(point.options)
    if point.exchange is not None:
        ex = {k: opts.pop(k) for k in ("dims", "message", "order") if k in opts}
        return exchange(point.topology, point.routing, point.exchange, **ex, **opts)
    return run(point.topology, point.routing, point.traffic, float(point.load), **opts)  # type: ignore[arg-type]

"""hypercuboid.netsim: single runs, exchanges, sweeps (serial, local processes, MPI), summaries,
plots and errors. Small topologies and short windows keep this fast."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
import subprocess
import sys

import hypercuboid as hc
import pytest
from hypercuboid import NetworkError, netsim
from hypercuboid.topology import generate
from netsim_keys import REPORT_KEYS, core_report_dict

SHORT = {"duration": "20us", "warmup": "5us"}


def test_report_fields_and_offered_load():
    r = netsim.run("mlfm:h=4", "min", "uniform", 0.4, **SHORT)
    assert type(r) is netsim.Report
    assert [f.name for f in dataclasses.fields(r)] == REPORT_KEYS + [
        "links",
        "completion_ns",
        "effective_throughput",
        "dims",
    ]
    # a synthetic run without the option links has none of the optional fields
    assert (r.links, r.completion_ns, r.effective_throughput, r.dims) == (None,) * 4
    assert r.offered == 0.4
    assert r.topology == "mlfm:h=4,l=4,p=4"
    assert (r.routing, r.vc_scheme, r.vcs) == ("min", "phase", 1)
    assert abs(r.accepted - r.generated) < 0.01
    # MLFM minimal paths have 0 (same router) or 2 hops
    assert [h for h, c in enumerate(r.hop_histogram) if c] == [0, 2]
    assert r.latency_min_ns == pytest.approx(220.48)  # 2 links, 1 switch, 1 serialisation
    top = r.top_links
    assert len(top) == 10
    assert all(type(t) is netsim.LinkUse for t in top)
    assert top[0].utilisation >= top[-1].utilisation
    assert type(r.link_utilisation) is netsim.LinkUtilisation
    assert r.link_utilisation.max == top[0].utilisation


def test_several_loads_and_a_topology_object():
    t = generate("oft:k=4")
    reps = netsim.run_loads(t, "inr", "worst", "0.1,0.2", **SHORT)
    assert [r.offered for r in reps] == [0.1, 0.2]
    assert all(r.hop_histogram[4] == r.delivered for r in reps)  # worst: no local pairs


def test_zero_load_latency_closed_form():
    # (h + 2) L + (h + 1) S + sigma with L = 50 ns, S = 100 ns, sigma = 20.48 ns
    assert netsim.zero_load_latency("mlfm:h=4", 2) == pytest.approx(520.48)
    assert netsim.zero_load_latency("slimfly:q=5", 1) == pytest.approx(370.48)
    assert netsim.zero_load_latency("mlfm:h=4,bw=50", 0) == pytest.approx(240.96)


def test_parse_loads_and_sizes():
    assert netsim.parse_loads("0.1:1.0:0.1") == [round(0.1 * i, 10) for i in range(1, 11)]
    assert netsim.parse_loads("0.05:0.15:0.05") == [0.05, 0.1, 0.15]
    assert netsim.parse_loads(1) == [1.0]
    with pytest.raises(NetworkError) as e:
        netsim.parse_loads("0:1:0.5")
    assert str(e.value) == (
        "invalid load 0: the offered load is a fraction of the injection bandwidth, in (0, 1]"
    )
    with pytest.raises(NetworkError, match=r"invalid load 1.2: "):
        netsim.parse_loads("0.5,1.2")
    with pytest.raises(NetworkError, match=r"^invalid load 'half': expected a number"):
        netsim.parse_loads("half")
    assert netsim.parse_size("100KB") == 102400
    assert netsim.parse_size("7.5KB") == 7680
    assert netsim.parse_size("512KiB") == 524288
    assert netsim.parse_size(256) == 256
    with pytest.raises(NetworkError, match=r"^invalid size '3 parsecs'"):
        netsim.parse_size("3 parsecs")
    assert netsim.parse_time("20us") == 20_000_000
    assert netsim.fit_torus(3192) == (12, 14, 19)


def test_errors_are_network_errors_and_value_errors():
    with pytest.raises(NetworkError) as e:
        netsim.run("mlfm:h=4", "dor", "uniform", 0.5)
    assert str(e.value) == "unknown routing 'dor'; accepted: min, inr, ugal, ugal-th"
    assert isinstance(e.value, ValueError)
    with pytest.raises(NetworkError) as e:
        netsim.run("mlfm:h=4", "min", "tornado", 0.5)
    assert str(e.value) == (
        "unknown traffic 'tornado'; accepted: uniform, worst, permutation, shift:K"
    )
    with pytest.raises(NetworkError, match=r"^invalid load 0: "):
        netsim.run("mlfm:h=4", "min", "uniform", 0.0)
    with pytest.raises(TypeError, match="unknown option"):
        netsim.run("mlfm:h=4", "min", "uniform", 0.5, bogus=1)


def test_threads_do_not_change_the_report():
    one = netsim.run("slimfly:q=5", "ugal", "uniform", 0.8, threads=1, **SHORT)
    two = netsim.run("slimfly:q=5", "ugal", "uniform", 0.8, threads=2, **SHORT)
    assert (one.threads, two.threads) == (1, 2)
    engine = ("threads", "wall_seconds", "packets_per_second", "events")
    for f in dataclasses.fields(one):
        if f.name not in engine:
            assert getattr(one, f.name) == getattr(two, f.name), f.name
    assert netsim.run("slimfly:q=5", "min", "uniform", 0.1, **SHORT).threads == 1  # small
    for bad in (-1, 256, "two", 1.5):
        with pytest.raises(NetworkError) as e:
            netsim.run("slimfly:q=5", "min", "uniform", 0.1, threads=bad, **SHORT)
        assert str(e.value) == (
            f"invalid threads {bad!r}: expected a whole number from 1 to 255, or 0 for "
            "automatic (every core for a network of 4096 ports or more)"
        )


def test_forced_deadlock_raises_with_the_cycle():
    with pytest.raises(hc.NetworkDeadlockError) as e:
        netsim.run("torus:dims=8", "min:vcs=none", "uniform", 1.0, buffer="1KB", **SHORT)
    msg = str(e.value)
    assert msg.startswith("deadlock at ")
    assert "cycle of 8 waiting channels: r" in msg
    # a deadlock is a simulation that cannot complete, not bad input
    assert isinstance(e.value, hc.DeadlockError) and isinstance(e.value, hc.SimulationError)
    assert not isinstance(e.value, ValueError)
    cycle = e.value.cycle
    assert len(cycle) == 8
    # the channels chain around the ring of 8 routers, each ending where the next begins
    for (a, b, vc), (c, _, _) in zip(cycle, cycle[1:] + cycle[:1], strict=True):
        assert b == c and vc == 0 and (b - a) % 8 in (1, 7)
    assert e.value.in_flight > 0 and e.value.time_ps > 0


def test_exchanges():
    a = netsim.exchange("mlfm:h=4", "min", "a2a")
    assert type(a) is netsim.Report
    assert a.traffic == "a2a"
    assert a.delivered_total == 80 * 79 * 30
    assert 0.95 < a.effective_throughput <= 1.0
    assert a.completion_ns * a.effective_throughput == pytest.approx(79 * 30 * 20.48)
    assert a.dims is None  # a2a has no torus
    assert list(a.to_dict())[-2:] == ["completion_ns", "effective_throughput"]
    s = netsim.exchange("mlfm:h=4", "min", "a2a", order="sequential")
    assert s.effective_throughput < a.effective_throughput
    n = netsim.exchange("mlfm:h=4", "ugal", "nn", dims="4x5x4", message="16KB")
    assert n.dims == (4, 5, 4)
    assert n.to_dict()["dims"] == [4, 5, 4]
    assert n.delivered_total == 80 * 6 * 64
    with pytest.raises(NetworkError, match="^invalid torus '4x5'"):
        netsim.exchange("mlfm:h=4", "min", "nn", dims="4x5")


def test_cdg_and_pattern():
    g = netsim.cdg("slimfly:q=5", "min")
    assert (g["vcs"], g["vc_scheme"], g["acyclic"], g["cycle"]) == (2, "hop", True, None)
    g = netsim.cdg("slimfly:q=5", "min:vcs=none")
    assert g["acyclic"] is False
    nxt = g["cycle"][1:] + g["cycle"][:1]
    assert all(a[1] == b[0] for a, b in zip(g["cycle"], nxt, strict=True))
    p = netsim.pattern("mlfm:h=4", "worst")
    assert p == [(e + 4) % 80 for e in range(80)]
    assert netsim.pattern("mlfm:h=4", "uniform") is None


def _strip(rs):
    """The reports without their timings (wall-clock seconds and what derives from them)."""
    return [dataclasses.replace(r, wall_seconds=0.0, packets_per_second=0.0) for r in rs]


def test_sweep_in_processes_equals_serial():
    pts = netsim.grid(["mlfm:h=3"], ["min", "ugal"], ["uniform", "worst"], [0.3, 0.6], **SHORT)
    assert len(pts) == 8
    seen = []
    serial = netsim.sweep(pts, executor="serial", progress=lambda d, n, p, r: seen.append(d))
    assert seen == list(range(1, 9))
    assert netsim.executor_kind(jobs=2, npoints=8) == "processes"
    par = netsim.sweep(pts, jobs=2)
    assert _strip(par) == _strip(serial)
    assert all(type(r) is netsim.Report for r in par)
    assert [(r.routing, r.traffic, r.offered) for r in par] == [
        (p.routing, p.traffic, p.load) for p in pts
    ]


def test_executor_detection(monkeypatch):
    monkeypatch.delenv("OMPI_COMM_WORLD_SIZE", raising=False)
    monkeypatch.delenv("PMI_SIZE", raising=False)
    monkeypatch.delenv("PMIX_SIZE", raising=False)
    assert netsim.executor_kind(jobs=1) == "serial"
    assert netsim.executor_kind(jobs=4, npoints=1) == "serial"
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    assert netsim.executor_kind(jobs=1) == "mpi"
    with pytest.raises(NetworkError, match="^invalid executor 'gpu'"):
        netsim.executor_kind(executor="gpu")


def _mpiexec() -> str | None:
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return exe if os.path.exists(exe) else shutil.which("mpiexec")


@pytest.mark.skipif(_mpiexec() is None, reason="no mpiexec")
def test_sweep_over_mpi_ranks_equals_serial():
    code = (
        "import json; from hypercuboid import netsim as ns\n"
        "pts = ns.grid(['mlfm:h=3'], ['min', 'inr'], ['uniform'], [0.2, 0.4],"
        " duration='10us', warmup='2us')\n"
        "res = ns.sweep(pts)\n"
        "if res is not None: print(json.dumps([ns.executor_kind(), "
        "[r.accepted for r in res]]))\n"
    )
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(
        [_mpiexec(), "--oversubscribe", "-n", "3", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    import json

    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("[")]
    assert len(lines) == 1  # only rank 0 gets results
    kind, accepted = json.loads(lines[0])
    assert kind == "mpi"
    pts = netsim.grid(
        ["mlfm:h=3"], ["min", "inr"], ["uniform"], [0.2, 0.4], duration="10us", warmup="2us"
    )
    assert accepted == [r.accepted for r in netsim.sweep(pts, executor="serial")]


def test_saturation_summary_and_plots(tmp_path):
    pts = netsim.grid(["mlfm:h=4"], ["min", "inr"], ["worst"], [0.1, 0.2, 0.3, 0.6], **SHORT)
    res = netsim.sweep(pts, executor="serial")
    sat = {s["routing"]: s for s in netsim.saturation(res)}
    # MIN on the MLFM worst case saturates at 1/h = 25 %
    assert sat["min"]["saturation_load"] == 0.3
    assert sat["min"]["last_stable_load"] == 0.2
    assert 0.2 < sat["min"]["knee"] < 0.3
    assert sat["min"]["max_accepted"] == pytest.approx(0.25, abs=0.002)
    assert sat["inr"]["saturation_load"] == 0.6
    assert sat["inr"]["max_accepted"] < 0.5
    png = netsim.plot(res, tmp_path / "wc.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ex = [netsim.exchange("mlfm:h=3", r, "a2a") for r in ("min", "inr")]
    png = netsim.plot_exchange(ex, tmp_path / "a2a.png")
    assert png.stat().st_size > 1000
    with pytest.raises(NetworkError, match="nothing to plot"):
        netsim.plot(ex, tmp_path / "x.png")


def test_run_takes_one_load_and_run_loads_several():
    for loads, shown in (([0.1, 0.2], "[0.1, 0.2]"), ("0.1:0.3:0.1", "'0.1:0.3:0.1'")):
        with pytest.raises(NetworkError) as e:
            netsim.run("mlfm:h=3", "min", "uniform", loads, **SHORT)
        assert str(e.value) == (
            f"invalid load {shown}: run takes one offered load, a number; "
            "run_loads(topology, routing, traffic, loads) takes a list, a range "
            "start:stop:step or a comma list and returns one report per load"
        )
    loads = [0.1, 0.2, 0.3]
    for spec in (loads, "0.1:0.3:0.1", "0.1,0.2,0.3"):
        many = netsim.run_loads("mlfm:h=3", "ugal", "worst", spec, **SHORT)
        assert all(type(r) is netsim.Report for r in many)
        one = [netsim.run("mlfm:h=3", "ugal", "worst", x, **SHORT) for x in loads]
        assert [r.offered for r in many] == loads
        for a, b in zip(_strip(many), _strip(one), strict=True):
            for f in dataclasses.fields(a):
                assert getattr(a, f.name) == getattr(b, f.name), f.name
    (single,) = netsim.run_loads("mlfm:h=3", "ugal", "worst", 0.2, **SHORT)
    assert _strip([single]) == _strip([one[1]])
    with pytest.raises(NetworkError, match=r"^invalid load 1.5: "):
        netsim.run_loads("mlfm:h=3", "min", "uniform", [0.5, 1.5])


def test_report_to_dict_is_the_binding_dict_and_round_trips():
    topo = generate("slimfly:q=5")
    for c, r in (
        (
            hc._core.netsim_run(
                topo, "ugal", "uniform", [0.6], warmup_ps=5_000_000, duration_ps=20_000_000
            )[0],
            netsim.run(topo, "ugal", "uniform", 0.6, **SHORT),
        ),
        (
            hc._core.netsim_run(
                topo, "min", "worst", [0.3], warmup_ps=5_000_000, duration_ps=20_000_000, links=True
            )[0],
            netsim.run(topo, "min", "worst", 0.3, links=True, **SHORT),
        ),
        (hc._core.netsim_exchange(topo, "min", "a2a"), netsim.exchange(topo, "min", "a2a")),
        (
            hc._core.netsim_exchange(topo, "inr", "nn", dims=[2, 3, 4], message_bytes=4096),
            netsim.exchange(topo, "inr", "nn", dims=(2, 3, 4), message=4096),
        ),
    ):
        d = core_report_dict(c)  # the binding's dict, as it was
        # the same run the old way (the binding's dict) and the new (a Report)
        timing = {"wall_seconds": r.wall_seconds, "packets_per_second": r.packets_per_second}
        assert r.to_dict() == d | timing
        assert list(r.to_dict()) == list(d)  # key order, optional keys absent as before
        assert netsim.Report.from_dict(r.to_dict()) == r
        assert netsim.Report.from_dict(json.loads(json.dumps(r.to_dict()))) == r
        assert pickle.loads(pickle.dumps(r)) == r
    assert list(d) == REPORT_KEYS + ["completion_ns", "effective_throughput", "dims"]
    assert r.dims == (2, 3, 4)
    links = netsim.run(topo, "min", "uniform", 0.3, links=True, **SHORT).links
    assert len(links) == 50 * 7  # every directed router link of SF q=5 (50 routers, degree 7)
    assert links[0] == netsim.LinkUse.from_dict(links[0].to_dict())
    assert set(links[0].to_dict()) == {"from", "to", "link", "packets", "utilisation"}


def test_report_from_dict_refuses_other_keys():
    d = netsim.run("mlfm:h=3", "min", "uniform", 0.3, **SHORT).to_dict()
    del d["threads"]
    d["thread_count"] = 1
    with pytest.raises(NetworkError) as e:
        netsim.Report.from_dict(d)
    assert str(e.value) == (
        "invalid netsim report: missing threads; unknown thread_count; its keys are "
        + ", ".join(REPORT_KEYS + ["links", "completion_ns", "effective_throughput", "dims"])
    )


def test_dict_style_access_is_deprecated():
    r = netsim.run("mlfm:h=3", "min", "uniform", 0.3, **SHORT)
    with pytest.warns(DeprecationWarning) as w:
        assert r["accepted"] == r.accepted
    assert len(w) == 1 and w[0].filename == __file__
    assert str(w[0].message) == (
        "report['accepted']: netsim reports are Report objects, read report.accepted instead "
        "(dict-style access returns the JSON form of report.to_dict() and will go)"
    )
    with pytest.warns(DeprecationWarning, match=r"^report\['top_links'\]: "):
        assert r["top_links"][0]["from"] == r.top_links[0].from_  # the JSON form, as before
    with pytest.warns(DeprecationWarning, match=r"^'effective_throughput' in report: .* read "):
        assert "effective_throughput" not in r
    with pytest.warns(DeprecationWarning, match=r"^report.get\('completion_ns'\): .* read "):
        assert r.get("completion_ns", "") == ""
    with pytest.warns(DeprecationWarning), pytest.raises(KeyError):
        r["dims"]  # an nn exchange's field: the dict had no such key
    with pytest.raises(TypeError, match="^a Report is not iterable"):
        list(r)


def test_defaults_are_the_cores():
    core = hc._core.DEFAULTS["netsim"]
    assert core == {
        "seed": 1,
        "warmup_ps": 20_000_000,
        "duration_ps": 200_000_000,
        "drain": False,
        "packet_bytes": 256,
        "buffer_bytes": 102_400,
        "switch_latency_ps": 100_000,
        "watchdog_ps": 50_000_000,
        "top_links": 10,
        "links": False,
        "threads": 0,
    }
    d = netsim.DEFAULTS
    assert (d["warmup"], d["duration"], d["buffer"]) == ("20us", "200us", "100KiB")
    assert netsim.parse_time(d["switch_latency"]) == core["switch_latency_ps"]
    assert netsim.parse_size(d["buffer"]) == core["buffer_bytes"]
    assert netsim.parse_time(d["watchdog"]) == core["watchdog_ps"]

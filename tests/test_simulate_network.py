"""Schedules on networks through the Python API and the CLI (issue 14, section 1): exact
zero-load timings at packet and flow level, the JSON contract, link loads and queued times,
the timeline and trace outputs, determinism, and bad input."""

from __future__ import annotations

import csv
import json

import goal_files
import hypercuboid as hc
import numpy as np
import pytest
from click.testing import CliRunner
from hypercuboid.cli import cli
from hypercuboid.errors import ModelError, NetworkError
from hypercuboid.schedule import Schedule

HOST = "loggops:o=700ns,g=10ns,S=1MiB"
SWITCH_NS = 100.0
LINK_NS = 50.0


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def one_message(tmp_path, nbytes: int) -> Schedule:
    return goal_files.one_message(tmp_path, nbytes, 5, 0, 4, 3)


@pytest.mark.parametrize("nbytes", [8, 1000, 65536])
def test_one_message_on_an_idle_network_costs_overheads_latency_and_bytes_over_bandwidth(
    tmp_path, nbytes
):
    # mlfm:h=4: endpoints 0 and 4 are two router hops apart, links 100 Gb/s and 50 ns.
    s = one_message(tmp_path, nbytes)
    path_ns = 4 * LINK_NS + 3 * SWITCH_NS
    packet = s.simulate(HOST, network="mlfm:h=4")
    serialisation_ns = 256 * 8 / 100  # one 256 B packet at 100 Gb/s
    wire = path_ns + -(-nbytes // 256) * serialisation_ns
    assert packet.completion_time_ns == pytest.approx(700 + wire + 700, abs=1e-6)
    assert packet.network.queued_ps == 0
    assert packet.network.transfer_ps == round(wire * 1000)
    flow = s.simulate(HOST, network="mlfm:h=4", level="flow")
    wire = path_ns + nbytes * 8 / 100
    assert flow.completion_time_ns == pytest.approx(700 + wire + 700, abs=1e-3)
    assert (flow.network.level, packet.network.level) == ("flow", "packet")


def test_flow_and_packet_level_agree_on_contention_free_schedules():
    ring = hc.schedules.allreduce("ring", 16, count=1 << 17)
    a = ring.simulate(HOST, network="fullmesh:n=16")
    b = ring.simulate(HOST, network="fullmesh:n=16", level="flow")
    assert b.completion_time_ps == a.completion_time_ps
    pairwise = hc.schedules.alltoall("pairwise", 24, count=8192)
    a = pairwise.simulate(HOST, network="tree:fig5a")
    b = pairwise.simulate(HOST, network="tree:fig5a", level="flow")
    assert abs(b.completion_time_ps / a.completion_time_ps - 1) < 0.02


@pytest.mark.parametrize("algorithm", ["pairwise", "bruck", "linear_shifted", "linear"])
def test_flow_and_packet_level_agree_within_15_percent_on_congested_alltoalls(algorithm):
    # 32 x 64 KB on fig5b: both levels with interleaving NICs, and at packet level three
    # virtual channels (hop-indexed), which keep head-of-line blocking small.
    s = hc.schedules.alltoall(algorithm, 32, count=8192)
    host = "loggops:o=100ns,g=10ns,S=64KiB"
    packet = s.simulate(host, network="tree:fig5b", nic="interleave", routing="min:vcs=hop")
    flow = s.simulate(host, network="tree:fig5b", nic="interleave", level="flow")
    ratio = flow.completion_time_ps / packet.completion_time_ps
    assert 0.85 <= ratio <= 1.15, ratio
    # The flow level never beats the bottleneck bound: 8 x 24 messages each way over one of
    # s0's 100 Mb/s links.
    assert flow.completion_time_ps >= 8 * 24 * 65536 * 8 / 100e6 * 1e12


def test_contention_shows_in_link_loads_and_queued_time():
    s = hc.schedules.alltoall("linear", 32, count=8192)
    r = s.simulate(HOST, network="tree:fig5b")
    n = r.network
    assert n.messages == 32 * 31
    assert n.bytes == 32 * 31 * 65536
    assert n.queued_ps > 0
    top = n.links[0]
    # Bottleneck links of fig5b: between s0 and the other switches, 8 x 24 messages each way.
    assert top.kind == "network" and "s0" in (top.a, top.b)
    assert top.bytes == 8 * 24 * 65536
    # The run is deterministic: LAM's post-everything keeps the bottleneck busy under half
    # of the time (the switches' input buffers block behind messages to busy outputs).
    assert top.utilisation == pytest.approx(0.4893663936032291, rel=1e-12)
    assert [x.utilisation for x in n.links] == sorted(
        (x.utilisation for x in n.links), reverse=True
    )


def test_nic_order_fifo_or_interleave_at_both_levels():
    # Rank 0 alone sends 32 messages of 64 KB to the other ranks (LAM's linear alltoall
    # restricted to one sender is every rank's first step); a FIFO NIC delivers them one
    # after another, 64 KB / 100 Mb/s = 5.24 ms apart, an interleaving one all at the end.
    s = hc.schedules.alltoall("linear", 32, count=8192)
    runs = {
        (level, nic): s.simulate(HOST, network="tree:fig5b", level=level, nic=nic)
        for level in ("packet", "flow")
        for nic in ("fifo", "interleave")
    }
    # The default is FIFO, as LogGOPS's NIC.
    default = s.simulate(HOST, network="tree:fig5b")
    assert default.completion_time_ps == runs["packet", "fifo"].completion_time_ps
    # Every message crosses the network whatever the order: same bytes on the same links.
    for r in runs.values():
        assert r.network.messages == 32 * 31 and r.network.bytes == 32 * 31 * 65536
    # Sharing a NIC spreads each sender over all destinations at once: no destination is
    # the target of all 31 senders at the same time, and the bottleneck bound is nearly met
    # at flow level (1,006.6 ms: 8 x 24 messages of 64 KB each way over s0's links).
    bound = 8 * 24 * 65536 * 8 / 100e6 * 1e12
    assert runs["flow", "interleave"].completion_time_ps == pytest.approx(bound, rel=1e-3)
    # FIFO: every sender sends to destination 0 first, then 1, ...: the destinations'
    # links are the hot spot, at both levels (packet 2.06 s, flow 2.60 s).
    assert runs["packet", "fifo"].completion_time_ps > 2 * bound
    assert runs["flow", "fifo"].completion_time_ps > 2.5 * bound
    assert runs["packet", "interleave"].completion_time_ps < 1.3 * bound


def test_runs_are_deterministic_and_do_not_depend_on_threads():
    s = hc.schedules.allreduce("recursive_doubling", 64, count=512)
    runs = [
        s.simulate(HOST, network="slimfly:q=5", routing="ugal", mapping="random:seed=4", threads=t)
        for t in (1, 2, 1)
    ]
    for r in runs[1:]:
        assert r.completion_time_ps == runs[0].completion_time_ps
        assert np.array_equal(r.rank_finish_ps, runs[0].rank_finish_ps)
        assert r.network.links == runs[0].network.links


def test_ranks_of_one_endpoint_talk_through_memory(tmp_path):
    s = one_message(tmp_path, 1001)
    r = s.simulate("loggops:L=300ns,o=100ns,G=1ns,S=1MiB", network="mlfm:h=4", ranks_per_endpoint=8)
    assert r.completion_time_ns == pytest.approx(100 + 300 + 100 + 1000)
    assert (r.network.local, r.network.messages) == (1, 0)
    assert r.network.links == []


def test_cli_json_contract(tmp_path):
    goal = tmp_path / "a2a.goal"
    hc.schedules.alltoall("pairwise", 8, count=1024).save(goal, format="goal")
    res = run(
        "simulate",
        "--network",
        "tree:fig5b",
        "--level",
        "flow",
        "--routing",
        "min",
        "--mapping",
        "linear",
        "--goal",
        str(goal),
        "--json",
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["completion_time_ns"] > 0
    assert len(d["rank_finish_ns"]) == 8
    assert max(d["rank_finish_ns"]) == d["completion_time_ns"]
    assert d["links"], d
    for x in d["links"]:
        assert set(x) >= {"a", "b", "bytes", "utilisation"}
        assert 0 <= x["utilisation"] <= 1
    assert d["network"]["level"] == "flow"
    assert d["network"]["network_messages"] == 8 * 7


def test_cli_outputs_messages_csv_link_plot_and_trace_tracks(tmp_path):
    csv_path, png, trace = tmp_path / "m.csv", tmp_path / "links.png", tmp_path / "t.json"
    args = [
        *"simulate --network tree:fig5b --model".split(),
        HOST,
        "--messages-csv",
        str(csv_path),
        "--plot-links",
        str(png),
        "--trace",
        str(trace),
        "alltoall",
        "-a",
        "linear",
        "-n",
        "8",
        "-c",
        "1024",
    ]
    res = run(*args)
    assert res.exit_code == 0, res.output
    assert "busiest links" in res.output
    with csv_path.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 56
    for row in rows:
        total = int(row["delivered_ps"]) - int(row["injected_ps"])
        assert total == int(row["transfer_ps"]) + int(row["queued_ps"])
    assert png.read_bytes()[:4] == b"\x89PNG"
    events = json.loads(trace.read_text())["traceEvents"]
    counters = [e for e in events if e.get("ph") == "C"]
    assert counters and all(0 <= e["args"]["utilisation"] <= 1 for e in counters)
    names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert "links" in names
    # Nothing the user gave is overwritten.
    res = CliRunner().invoke(cli, args)
    assert res.exit_code != 0 and "exists" in res.output


def test_bad_input_is_refused_in_one_line(tmp_path):
    s = hc.schedules.allreduce("ring", 33, count=64)
    with pytest.raises(NetworkError) as e:
        s.simulate(HOST, network="tree:fig5b")
    assert str(e.value) == (
        "invalid rank count 33: the network has 32 endpoints × 1 rank per endpoint = 32 slots "
        "(raise --ranks-per-endpoint or take a larger topology)"
    )
    s8 = hc.schedules.allreduce("ring", 8, count=64)
    with pytest.raises(NetworkError, match="invalid mapping 'snake': accepted: linear, "):
        s8.simulate(HOST, network="tree:fig5b", mapping="snake")
    dup = tmp_path / "map.txt"
    dup.write_text("0\n1\n2\n3\n4\n5\n6\n6\n")
    with pytest.raises(NetworkError) as e:
        s8.simulate(HOST, network="tree:fig5b", mapping=f"file:{dup}")
    assert str(e.value) == (
        "invalid mapping file line 8: endpoint 6: endpoint 6 appears more than 1 time (the ranks "
        "per endpoint); duplicates are refused"
    )
    with pytest.raises(NetworkError, match="endpoint 40: the network has endpoints 0 to 31"):
        s8.simulate(HOST, network="tree:fig5b", mapping=[0, 1, 2, 3, 4, 5, 6, 40])
    with pytest.raises(NetworkError, match="the flow level routes min or inr"):
        s8.simulate(HOST, network="slimfly:q=5", level="flow", routing="ugal")
    with pytest.raises(ModelError, match="a network needs a host model with CPU and NIC costs"):
        s8.simulate("postal:alpha=1us", network="tree:fig5b")
    with pytest.raises(NetworkError, match="invalid level 'fluid': accepted: packet, flow"):
        s8.simulate(HOST, network="tree:fig5b", level="fluid")
    with pytest.raises(NetworkError) as e:
        s8.simulate(HOST, network="tree:fig5b", nic="round_robin")
    assert str(e.value) == "invalid nic 'round_robin': accepted: fifo, interleave"
    res = CliRunner().invoke(
        cli,
        ["simulate", "--model", HOST, "--nic", "interleave", "allreduce", "-a", "ring", "-n", "4"],
    )
    assert res.exit_code == 1
    assert res.output.strip() == "Error: --nic applies to --network runs only"
    res = CliRunner().invoke(
        cli,
        ["simulate", "--model", HOST, "--routing", "ugal", "allreduce", "-a", "ring", "-n", "4"],
    )
    assert res.exit_code == 1
    assert res.output.strip() == "Error: --routing applies to --network runs only"
    res = CliRunner().invoke(
        cli,
        "simulate --network tree:fig5b --mapping file:/nonexistent allreduce -a ring -n 4".split(),
    )
    assert res.exit_code == 1
    assert "invalid mapping file /nonexistent" in res.output

"""The Ethernet switch model (``switch=ethernet``, issue 14, section 2) through Python and the
CLI: exact zero-load timing of store-and-forward frames, the topology's keys, and the
refusals (flow level, engine parameters the switch model sets)."""

from __future__ import annotations

import goal_files
import hypercuboid as hc
import pytest
from click.testing import CliRunner
from hypercuboid import topology
from hypercuboid.cli import cli
from hypercuboid.errors import NetworkError, TopologyError
from hypercuboid.schedule import Schedule

HOST = "loggops:o=10us,g=10ns,S=1MiB"
#: A 1538-byte frame at 100 Mb/s, the presets' link latency and the switch's delay (ns).
SIGMA_NS = 123_040.0
LINK_NS = 50.0
SWITCH_NS = 4_000.0


def one_message(tmp_path, nbytes: int) -> Schedule:
    return goal_files.one_message(tmp_path, nbytes, 32, 0, 31, 1)


def frame_ns(payload: int) -> float:
    """A frame of ``payload`` bytes at 100 Mb/s: 80 ns a byte of max(payload + 78, 84)."""
    return min(max(payload + 78, 84), 1538) * 80.0


@pytest.mark.parametrize("nbytes", [0, 1, 1460, 1461, 8192])
def test_store_and_forward_frames_on_an_idle_chain(tmp_path, nbytes):
    # fig5c: n0 on s0, n31 on s3, three switch-to-switch links: 4 switches store and forward.
    # Full frames pipeline; a short last frame waits at each switch for the one ahead.
    s = one_message(tmp_path, nbytes)
    r = s.simulate(HOST, network="tree:fig5c,switch=ethernet")
    frames = max(-(-nbytes // 1460), 1)
    last = frame_ns(nbytes - (frames - 1) * 1460)
    first = SIGMA_NS if frames > 1 else last
    wire = 5 * LINK_NS + 4 * (SWITCH_NS + first) + (frames - 1) * SIGMA_NS + last
    assert r.completion_time_ns == pytest.approx(10_000 + wire + 10_000, abs=1e-6)
    assert r.network.queued_ps == 0
    # The same topology with its default switches cuts 256-byte packets through.
    vct = s.simulate(HOST, network="tree:fig5c")
    assert vct.completion_time_ns < r.completion_time_ns


def test_the_switch_model_is_a_topology_key():
    t = topology.generate("tree:fig5b,switch=ethernet,buffer=4")
    assert t.name == "tree:fig5b,switch=ethernet,buffer=4"
    assert topology.generate("tree:fig5b").name == "tree:fig5b"
    with pytest.raises(TopologyError) as e:
        topology.generate("tree:fig5b,switch=wifi")
    assert str(e.value) == (
        "invalid topology spec 'tree:fig5b,switch=wifi': switch=wifi: accepted: vct, ethernet"
    )


def test_refusals_are_one_line():
    s = hc.schedules.alltoall("pairwise", 8, count=64, dtype="uint8")
    with pytest.raises(NetworkError) as e:
        s.simulate(HOST, network="tree:fig5b,switch=ethernet", level="flow")
    assert str(e.value) == (
        "the flow level cannot run on tree:fig5b,switch=ethernet: its switch model is ethernet "
        "(store-and-forward frames, PAUSE back-pressure), which flows do not have: use the "
        "packet level"
    )
    with pytest.raises(NetworkError) as e:
        s.simulate(HOST, network="tree:fig5b,switch=ethernet", packet_size=512)
    assert str(e.value) == (
        "invalid packet size 512 B: the switch model of tree:fig5b,switch=ethernet sets it "
        "(topology key mtu); leave the simulator's default"
    )
    res = CliRunner().invoke(
        cli,
        (
            "simulate --network tree:fig5b,switch=ethernet --buffer 4KiB alltoall -a linear -n 8"
        ).split(),
    )
    assert res.exit_code == 1
    assert res.output.strip() == (
        "Error: invalid buffer 4096 B: the switch model of tree:fig5b,switch=ethernet sets it "
        "(topology key buffer); leave the simulator's default"
    )


def test_an_uncoordinated_alltoall_is_deterministic_and_bounded_by_the_bottleneck():
    s = hc.schedules.alltoall("linear", 32, count=8192, dtype="uint8")
    a = s.simulate(HOST, network="tree:fig5b,switch=ethernet")
    b = s.simulate(HOST, network="tree:fig5b,switch=ethernet", threads=2)
    assert a.completion_time_ps == b.completion_time_ps
    assert (a.rank_finish_ps == b.rank_finish_ps).all()
    # 192 messages of 6 frames each way over each switch-to-switch link of the star.
    assert a.completion_time_ns > 192 * 6 * SIGMA_NS

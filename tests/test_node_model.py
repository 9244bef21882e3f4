"""The node level from Python and the CLI: ``Schedule.simulate(node=...)``, ``simulate --node``,
the model file's ``node`` key (``--node`` wins), ``modelfile.write``'s new keys and
``modelfile.load_file``, and the bad inputs' one-line messages."""

from __future__ import annotations

import json

import hypercuboid as hc
import pytest
from click.testing import CliRunner
from hypercuboid import modelfile
from hypercuboid.cli import cli
from hypercuboid.errors import ModelError, SimulationError

HOST = "loggops:L=1us,o=2us,g=500ns,G=0,O=0,S=2MiB"
OV, L, N = 2_000_000, 1_000_000, 1 << 20


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def pairs_text(k: int, n: int = N) -> str:
    """GOAL text: ranks 0..k send n bytes each to ranks k..2k at once."""
    text = f"num_ranks {2 * k}\n\n"
    for r in range(k):
        text += f"rank {r} {{\nl0: send {n}b to {r + k} tag 0\n}}\n\n"
    for r in range(k, 2 * k):
        text += f"rank {r} {{\nl0: recv {n}b from {r - k} tag 0\n}}\n\n"
    return text


def pairs(k: int, n: int = N) -> hc.Schedule:
    return hc.Schedule.parse(pairs_text(k, n), "pairs")


@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_k_equal_transfers_share_the_node_bandwidth_exactly(k):
    # 8 GB/s: 125 ps a byte, shared k ways.
    r = pairs(k).simulate(HOST, node=f"node:ranks={2 * k},bw=8GB/s")
    shared = N * k * 125
    assert r.completion_time_ps == OV + shared + L + OV
    assert list(r.rank_finish_ps) == [OV] * k + [OV + shared + L + OV] * k
    assert r.model.endswith(f" + node:ranks={2 * k},bw=64Gbps")


def test_one_rank_per_node_is_loggops():
    s = hc.schedules.allreduce("recursive_doubling", 8, 4096)
    host = "loggops:L=3us,o=1.5us,g=1us,G=6ns,S=4096"
    plain = s.simulate(host)
    node = s.simulate(host, node="node:ranks=1,bw=1GB/s")
    assert node.completion_time_ps == plain.completion_time_ps
    assert list(node.rank_finish_ps) == list(plain.rank_finish_ps)
    shared = s.simulate(host, node="node:ranks=8,bw=1GB/s")
    assert shared.completion_time_ps > plain.completion_time_ps


def test_bad_node_input_is_one_clear_error():
    s = pairs(1)
    with pytest.raises(ModelError) as e:
        s.simulate(HOST, node="node:ranks=0,bw=1GB/s")
    assert str(e.value) == (
        "invalid node spec 'node:ranks=0,bw=1GB/s': ranks=0: accepted: a whole number of ranks "
        "per node, 1 or more"
    )
    with pytest.raises(ModelError, match=r"unknown key 'cores' for node; accepted: ranks, bw"):
        s.simulate(HOST, node="node:ranks=2,bw=1GB/s,cores=4")
    with pytest.raises(ModelError, match=r"bw=0: a bandwidth must be > 0"):
        s.simulate(HOST, node="node:ranks=2,bw=0")
    with pytest.raises(ModelError) as e:
        s.simulate("postal:alpha=1us", node="node:ranks=2,bw=1GB/s")
    assert "a node level needs a host model with CPU and NIC costs" in str(e.value)
    with pytest.raises(SimulationError, match=r"needs a host model"):
        s.simulate(node="node:ranks=2,bw=1GB/s")
    with pytest.raises(SimulationError, match=r"the node level replaces the network"):
        s.simulate(HOST, node="node:ranks=2,bw=1GB/s", network="tree:fig5b")


def _cli_completion(*args: str) -> float:
    r = run("simulate", "--goal", *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["completion_time_ns"]


def test_cli_node_option_and_model_file_node_key(tmp_path):
    goal = tmp_path / "pairs.goal"
    goal.write_text(pairs_text(3))
    g = str(goal)
    alone = (OV + L + OV) / 1e3
    shared_8 = (OV + N * 3 * 125 + L + OV) / 1e3
    shared_4 = (OV + N * 3 * 250 + L + OV) / 1e3
    assert _cli_completion(g, "--model", HOST) == alone
    assert _cli_completion(g, "--model", HOST, "--node", "node:ranks=6,bw=8GB/s") == shared_8
    f = modelfile.write(
        tmp_path / "m.json", HOST, "test", {}, {}, node="node:ranks=6,bw=8GB/s", nranks=6
    )
    # The file's node spec is used; an explicit --node wins.
    assert _cli_completion(g, "--model-file", str(f)) == shared_8
    assert _cli_completion(g, "--model-file", str(f), "--node", "node:ranks=6,bw=4GB/s") == (
        shared_4
    )
    # A file without one runs on LogGOPS alone, as before.
    plain = modelfile.write(tmp_path / "p.json", HOST, "test", {}, {})
    assert _cli_completion(g, "--model-file", str(plain)) == alone
    r = run("simulate", "--goal", g, "--model", HOST, "--node", "node:ranks=-1,bw=1GB/s")
    assert r.exit_code == 1
    assert r.output == (
        "Error: invalid node spec 'node:ranks=-1,bw=1GB/s': ranks=-1: accepted: a whole number "
        "of ranks per node, 1 or more\n"
    )
    node = "node:ranks=2,bw=1GB/s"
    r = run("simulate", "--goal", g, "--model", HOST, "--node", node, "--topo", "tree:fig5b")
    assert r.exit_code == 1
    assert r.output.startswith("Error: --node with --network: the node level replaces")


def test_model_file_round_trip_with_the_new_keys(tmp_path):
    p = modelfile.write(
        tmp_path / "m.json",
        HOST,
        "calibrate",
        {"x": 1},
        {"host": "h"},
        node=" node:ranks=16,bw=12GB/s ",
        models={"postal": "postal:alpha=1us", "pipelined": "pipelined:alpha_p=1us"},
        library="Open MPI v5.0.8",
        nranks=16,
        ranks_per_node=16,
        fits={"postal": {"r2": 0.99, "residuals": [0.1, -0.2]}},
    )
    f = modelfile.load_file(p)
    assert f.model == HOST
    assert f.node == "node:ranks=16,bw=12GB/s"
    assert f.models == {"pipelined": "pipelined:alpha_p=1us", "postal": "postal:alpha=1us"}
    assert f.library == "Open MPI v5.0.8"
    assert (f.nranks, f.ranks_per_node) == (16, 16)
    assert f.fits == {"postal": {"r2": 0.99, "residuals": [0.1, -0.2]}}
    assert modelfile.load(p) == HOST
    # The old positional call writes the old keys only, and reads back with Nones.
    old = modelfile.write(tmp_path / "old.json", HOST, "bench pingpong", {}, {})
    assert set(json.loads(old.read_text())) == {"model", "source", "fitted", "machine", "date"}
    g = modelfile.load_file(old)
    assert (g.node, g.models, g.library, g.nranks, g.ranks_per_node, g.fits) == (
        None,
        {},
        None,
        None,
        None,
        None,
    )


def test_model_file_bad_new_keys(tmp_path):
    with pytest.raises(ModelError, match=r"ranks=0: accepted: a whole number of ranks per node"):
        modelfile.write(tmp_path / "a.json", HOST, "t", {}, {}, node="node:ranks=0,bw=1GB/s")
    with pytest.raises(ModelError, match=r"nranks must be a whole number from 1 to"):
        modelfile.write(tmp_path / "b.json", HOST, "t", {}, {}, nranks=0)
    with pytest.raises(ModelError, match=r"unknown model 'hockney'"):
        modelfile.write(tmp_path / "c.json", HOST, "t", {}, {}, models={"h": "hockney"})
    assert not any(tmp_path.iterdir())
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": "loggops", "node": "node:ranks=4"}')
    with pytest.raises(ModelError) as e:
        modelfile.load_file(bad)
    assert str(e.value).startswith(f"{bad}: its 'node': invalid node spec 'node:ranks=4': ")
    assert "bw (or nic)" in str(e.value)
    r = run("simulate", "--goal", str(bad), "--model-file", str(bad))
    assert r.exit_code == 1
    assert "Traceback" not in r.output

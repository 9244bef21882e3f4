"""``hypercuboid alltoall phases`` and ``hypercuboid.phases``: the Faraj-Yuan phases of the
seed's trees, the heuristic elsewhere, the JSON contract, the plot, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypercuboid import phases
from hypercuboid.cli import cli
from hypercuboid.errors import ScheduleError, TopologyError

# The seed's Table 4 (Faraj and Yuan, "Message Scheduling for All-to-All Personalized
# Communication on Ethernet Switched Clusters"), with t_{0,0..2} = n0..n2, t_{1,0..1} = n3, n4,
# t_{2,0} = n5: global messages of t0, t1, t2, then local messages of t0, t1.
TABLE_4 = [
    [[0, 4], [3, 5], [5, 1], [1, 0]],
    [[1, 3], [4, 5], [5, 2], [2, 1]],
    [[2, 4], [5, 0], [0, 2]],
    [[0, 3], [3, 2], [2, 0]],
    [[1, 4], [3, 0], [0, 1], [4, 3]],
    [[2, 3], [3, 1], [1, 2]],
    [[0, 5], [4, 0]],
    [[1, 5], [4, 1], [5, 3], [3, 4]],
    [[2, 5], [4, 2], [5, 4]],
]


def run(*args: str):
    return CliRunner().invoke(cli, ["alltoall", "phases", *args])


def test_json_contract_fig1_is_table_4():
    r = run("--topo", "tree:fig1", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["phases"] == 9
    assert d["load"] == 9
    assert d["root"] == "s1"
    assert d["complete"] is True
    assert d["contention_free"] is True
    assert d["optimal"] is True
    assert d["schedule"] == TABLE_4
    assert d["lower_bound"] == 9 and d["gap"] == 0
    assert d["method"] == "faraj-yuan"
    assert d["subtrees"] == [[0, 1, 2], [3, 4], [5]]
    assert d["violations"] == {"complete": None, "contention_free": None, "optimal": None}


@pytest.mark.parametrize(
    ("spec", "load", "root"),
    [("tree:fig5a", 23, "s0"), ("tree:fig5b", 192, "s0"), ("tree:fig5c", 256, "s1")],
)
def test_presets(spec, load, root):
    d = json.loads(run("--topo", spec, "--json").output)
    assert (d["phases"], d["load"], d["root"]) == (load, load, root)
    assert d["complete"] and d["contention_free"] and d["optimal"]
    assert len(d["schedule"]) == load
    n = 24 if spec == "tree:fig5a" else 32
    assert sum(len(p) for p in d["schedule"]) == n * (n - 1)


def test_text_output_fig5b():
    r = run("--topo", "tree:fig5b", "--show", "2")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert "phases           192" in lines
    assert "root             s0" in lines
    singles = ", ".join(f"t{i}: 1" for i in range(3, 11))
    assert f"subtrees         t0: 8, t1: 8, t2: 8, {singles}" in lines
    assert "complete         yes" in lines
    assert "contention-free  yes" in lines
    assert "optimal          yes" in lines
    assert lines[-1] == "... 190 more phases (--show 0 lists all, --json prints all)"


@pytest.mark.parametrize(
    ("spec", "routing", "load", "phases_"),
    [
        ("fattree:k=4,levels=3", "dmodk", 15, 15),
        ("slimfly:q=5", "dmodk", 208, 219),
        ("torus:dims=8x8", "dmodk", 95, 95),
        ("fattree:k=4,levels=3", "first", 48, 48),
        ("torus:dims=8x8", "first", 180, 180),
    ],
)
def test_section_6_topologies(spec, routing, load, phases_):
    d = json.loads(run("--topo", spec, "--routing", routing, "--json").output)
    assert (d["method"], d["routing"]) == ("greedy", routing)
    assert (d["load"], d["lower_bound"], d["phases"]) == (load, load, phases_)
    assert d["gap"] == phases_ - load
    assert d["complete"] and d["contention_free"]
    assert d["optimal"] is (phases_ == load)
    assert d["root"] is None


def test_python_api_and_arrays():
    r = phases.alltoall_phases("tree:fig1")
    off, msgs = r.arrays()
    assert off.dtype == np.uint32 and msgs.shape == (30, 2)
    assert off.tolist() == [0, 4, 8, 11, 14, 18, 21, 23, 27, 30]
    assert msgs[:4].tolist() == TABLE_4[0]
    links, counts = r.occupancy()
    assert counts.dtype == np.uint16 and counts.shape == (len(links), 9)
    assert counts.max() == 1
    # s0->s1 (the bottleneck) is busy in every phase.
    row = links.index("s0->s1")
    assert counts[row].tolist() == [1] * 9
    assert phases.to_dict(r, schedule=False).keys() >= {"phases", "load", "root"}


def test_random_tree_through_a_file(tmp_path: Path):
    text = phases.random_tree_json(40, 7, "deep", 3)
    path = tmp_path / "deep.json"
    path.write_text(text)
    d = json.loads(run("--topo", f"tree:{path}", "--json").output)
    t = phases.random_tree(40, 7, "deep", 3)
    r = phases.alltoall_phases(t)
    assert d["schedule"] == [[list(m) for m in p] for p in r.schedule()]
    assert d["complete"] and d["contention_free"] and d["optimal"]


def test_plot(tmp_path: Path):
    out = tmp_path / "fig5b.png"
    r = run("--topo", "tree:fig5b", "--plot", str(out), "--show", "0")
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert r.output.splitlines()[-1] == f"occupancy plot: {out}"


def test_bad_input(tmp_path: Path):
    r = run("--topo", "torus:dims=8x8", "--method", "faraj-yuan")
    assert r.exit_code == 1
    assert r.output == (
        "Error: the Faraj-Yuan tree scheduler needs a tree of switches with machines as leaves, "
        "and torus:dims=8x8,p=1 is not one: it has 64 routers and 128 links, and a tree has "
        "routers - 1 links; use method auto or greedy\n"
    )
    r = run("--topo", "tree:fig1", "--method", "ring")
    assert r.exit_code == 1
    assert r.output == (
        "Error: unknown alltoall phase method 'ring'; accepted: auto, faraj-yuan, greedy\n"
    )
    inner = tmp_path / "inner.json"
    inner.write_text(
        '{"switches": ["s0"], "machines": ["n0", "n1", "n2"],'
        ' "links": [["n0", "s0"], ["n1", "s0"], ["n1", "n2"]]}'
    )
    r = run("--topo", f"tree:{inner}")
    assert r.exit_code == 1
    assert r.output == (
        "Error: not a tree: link n1-n2 joins two machines; a machine must hang off a switch\n"
    )
    one = tmp_path / "one.json"
    one.write_text('{"switches": ["s0"], "machines": ["n0"], "links": [["n0", "s0"]]}')
    r = run("--topo", f"tree:{one}")
    assert r.exit_code == 1
    assert r.output == f"Error: alltoall phases need at least 2 machines, and tree:{one} has 1\n"
    r = run("--topo", "torus:dims=4x4", "--routing", "ecmp")
    assert r.exit_code == 1
    assert r.output == "Error: unknown alltoall phase routing 'ecmp'; accepted: dmodk, first\n"
    zero = tmp_path / "zero.json"
    zero.write_text('{"switches": ["s0"], "machines": [], "links": []}')
    r = run("--topo", f"tree:{zero}")
    assert r.exit_code == 1
    assert r.output == f"Error: cannot read {zero}: no machines\n"
    with pytest.raises(ScheduleError) as e:
        phases.alltoall_phases("tree:fig1", "ring")
    assert e.value.accepted == ["auto", "faraj-yuan", "greedy"]
    with pytest.raises(TopologyError, match="unknown random tree shape 'ring'") as e:
        phases.random_tree(4, 2, "ring")
    assert e.value.accepted == ["random", "chain", "star", "deep", "sparse"]
    for machines, switches, bad in ((0, 2, "machines=0"), (4, 65537, "switches=65537")):
        with pytest.raises(TopologyError) as e:
            phases.random_tree(machines, switches)
        name = bad.split("=")[0]
        assert str(e.value) == f"random tree: invalid {bad}: a random tree has 1 to 65536 {name}"


def test_plot_refuses_unreadable_sizes(tmp_path: Path):
    r = phases.alltoall_phases(phases.random_tree(256, 16, "random", 4))
    assert (r.phases, r.load, r.optimal) == (14940, 14940, True)
    with pytest.raises(ScheduleError) as e:
        phases.plot_occupancy(r, tmp_path / "big.png")
    assert str(e.value) == (
        "an occupancy plot of 542 links x 14940 phases = 8097480 cells is too large to read "
        "(limit 4000000); plot a smaller topology"
    )
    assert not (tmp_path / "big.png").exists()

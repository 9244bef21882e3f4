"""Topologies from Python and the ``hypercuboid topo`` CLI.

Seed numbers cite the diameter-two seed (Kathareios et al., SC15) and the alltoall seed
(Faraj and Yuan, IPDPS 2005)."""

from __future__ import annotations

import json
import re

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner
from hypercuboid import TopologyError, topology
from hypercuboid.cli import cli

CONTRACT = (
    "endpoints",
    "routers",
    "router_radix",
    "network_radix",
    "diameter",
    "ports_per_endpoint",
    "links_per_endpoint",
)


def run(*args: str):
    return CliRunner().invoke(cli, ["topo", *args])


def show_json(spec: str, *extra: str) -> dict:
    result = run("show", spec, "--json", *extra)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


@pytest.mark.parametrize(
    ("spec", "n", "r", "radix", "network_radix"),
    [
        # Seed section 4.1.
        ("slimfly:q=13,p=9", 3042, 338, 28, 19),
        ("slimfly:q=13,p=10", 3380, 338, 29, 19),
        ("mlfm:h=15", 3600, 360, 30, 30),
        ("oft:k=12", 3192, 399, 24, 24),
    ],
)
def test_show_json_seed_configurations(spec, n, r, radix, network_radix):
    info = show_json(spec)
    for key in CONTRACT:
        assert key in info
    assert (info["endpoints"], info["routers"]) == (n, r)
    assert (info["router_radix"], info["network_radix"]) == (radix, network_radix)
    assert info["diameter"] == 2


def test_cost_per_endpoint_section_2_1_2():
    # 3.11 ports / 2.05 links (p=9) vs 2.9 / 1.95 (p=10): total ports / N and
    # (router links + endpoint links) / N; 6253/3042 = 2.0556 is printed 2.05 by the seed.
    info = show_json("slimfly:q=13,p=9")
    assert info["ports_per_endpoint"] == pytest.approx(9464 / 3042)
    assert info["links_per_endpoint"] == pytest.approx(6253 / 3042)
    info = show_json("slimfly:q=13,p=10")
    assert info["ports_per_endpoint"] == pytest.approx(2.9)
    assert info["links_per_endpoint"] == pytest.approx(1.95)


def test_show_human_output():
    result = run("show", "oft:k=4")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "oft:k=4,p=4"
    assert "  endpoints            104" in lines
    assert "  routers              39 (13 L0, 13 L1, 13 L2)" in lines
    assert "  diameter             2 (between any routers: 3)" in lines


def test_show_tree_bottleneck():
    info = show_json("tree:fig1")
    t = info["tree"]
    assert (t["bottleneck"], t["load"], t["root_name"]) == ("s0-s1", 9, "s1")
    assert [(s["top"], s["machines"]) for s in t["subtrees"]] == [("s0", 3), ("s3", 2), ("n5", 1)]
    result = run("show", "tree:fig5b")
    assert "  tree bottleneck      s0-s1: AAPC load 192 = 24 x 8" in result.output


# Seed section 2.3.2 (Figure 4): bisection per endpoint in link bandwidths, roughly OFT
# 0.81-0.89, SF 0.71 (p = floor) and 0.67 (p = ceil), MLFM 0.5. METIS cuts are upper bounds on
# the bisection; with the balance-preserving refinement we find cuts up to 0.07 b smaller for the
# OFT, so we accept the seed's value +- 0.08 and check the seed's ordering.
SEED_BISECTION = {
    "oft:k=12": 0.81,
    "slimfly:q=13,p=9": 0.71,
    "slimfly:q=13,p=10": 0.67,
    "mlfm:h=15": 0.5,
}


def test_bisection_within_seed_ranges():
    got = {}
    for spec, seed in SEED_BISECTION.items():
        b = topology.bisection(spec, seeds=4)
        n = topology.generate(spec).num_endpoints
        assert b["endpoints"] == [n // 2, n - n // 2]
        assert abs(b["per_endpoint"] - seed) <= 0.08, (spec, b["per_endpoint"])
        got[spec] = b["per_endpoint"]
    order = ["oft:k=12", "slimfly:q=13,p=9", "slimfly:q=13,p=10", "mlfm:h=15"]
    assert [got[s] for s in order] == sorted(got.values(), reverse=True)


def test_bisection_radix_64_oft():
    # Large OFT approaches the seed's 0.89.
    b = topology.bisection("oft:k=32", seeds=2)
    assert 0.81 <= b["per_endpoint"] <= 0.89
    assert b["endpoints"] == [31776, 31776]


def test_bisection_json_reports_split_and_repair():
    info = show_json("polarfly:q=7", "--bisection", "--seeds", "3")
    b = info["bisection"]
    assert b["endpoints"] == [114, 114]
    assert b["cut_endpoint_links"] == 2
    assert "router_side" not in b
    assert sum(b["metis_split"]["endpoints"]) == 228
    assert b["method"] == "metis" and b["seeds"] == 3
    fm = topology.bisection("polarfly:q=7", method="fm", seeds=3)
    assert fm["method"] == "fm" and fm["endpoints"] == [114, 114]


def test_bisection_cut_recount():
    t = topology.generate("slimfly:q=5")
    b = topology.bisection(t, seeds=2)
    side = np.array(b["router_side"])
    cut = sum(side[a] != side[c] for a, c, _, _ in t.links())
    assert cut == b["cut_links"]
    assert b["per_endpoint"] == pytest.approx(cut / 100)


def test_export_json_round_trip(tmp_path):
    out = tmp_path / "oft.json"
    result = run("export", "oft:k=5", "--format", "json", "-o", str(out))
    assert result.exit_code == 0, result.output
    back = topology.load(out)
    assert back == topology.generate("oft:k=5")
    assert show_json(f"json:{out}") == show_json("oft:k=5") | {"family": "oft"}


def test_export_infers_format_and_writes_stdout(tmp_path):
    out = tmp_path / "sf.anynet"
    assert run("export", "slimfly:q=3", "-o", str(out)).exit_code == 0
    result = run("export", "slimfly:q=3", "--format", "anynet")
    assert result.output == out.read_text()


def test_anynet_file_format(tmp_path):
    out = tmp_path / "mlfm.anynet"
    result = run("export", "mlfm:h=3", "--format", "anynet", "-o", str(out), "--cycle", "10ns")
    assert result.exit_code == 0
    t = topology.generate("mlfm:h=3")
    lines = out.read_text().splitlines()
    assert len(lines) == t.num_routers
    nodes = []
    grammar = re.compile(r"^router (\d+)((?: node \d+)*)((?: router \d+ \d+)*)$")
    for i, line in enumerate(lines):
        m = grammar.match(line)
        assert m, line
        assert int(m.group(1)) == i
        nodes += [int(x) for x in re.findall(r"node (\d+)", line)]
        # 50 ns links at a 10 ns cycle: weight 5.
        assert all(w == "5" for w in re.findall(r"router \d+ (\d+)", m.group(3)))
    assert sorted(nodes) == list(range(t.num_endpoints))


def test_graphml_round_trip(tmp_path):
    for spec in ["tree:fig1", "oft:k=3", "torus:dims=3x3,bw=25"]:
        t = topology.generate(spec)
        out = tmp_path / "t.graphml"
        topology.export(t, "graphml", out, force=True)
        assert topology.read_graphml(out) == t
        assert topology.generate(f"graphml:{out}") == t


def test_generic_graphml_and_networkx(tmp_path):
    petersen = nx.petersen_graph()
    out = tmp_path / "petersen.graphml"
    nx.write_graphml(petersen, out)
    t = topology.generate(f"graphml:{out},p=2")
    info = topology.analyze(t)
    # The Petersen graph is a Moore graph: degree 3, diameter 2, 3^2 + 1 = 10 vertices.
    assert (info["routers"], info["endpoints"], info["diameter"]) == (10, 20, 2)
    assert info["moore_bound"]["fraction"] == 1.0
    t2 = topology.from_networkx(petersen, endpoints_per_router=2)
    assert t2.links() == t.links()
    g = topology.to_networkx("oft:k=3")
    assert g.number_of_nodes() == 21 + 42
    assert topology.from_networkx(g) == topology.generate("oft:k=3")


def test_distances():
    d = topology.distances("oft:k=3")
    assert d.shape == (21, 21) and d.dtype == np.uint16
    assert d.max() == 3 and (np.diag(d) == 0).all() and (d == d.T).all()


def test_compare_table_and_png(tmp_path):
    png = tmp_path / "compare.png"
    result = CliRunner().invoke(cli, ["topo", "compare", "--plot", str(png), "--radix-max", "70"])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = {
        r["label"]: r for r in json.loads(run("compare", "--json").output.strip().splitlines()[0])
    }
    assert rows["OFT"]["endpoints"] == 63552
    assert rows["MLFM"]["endpoints"] == 33792
    assert rows["Slim Fly (p=floor)"]["spec"] == "slimfly:q=29,p=21"
    assert "OFT                  oft:k=32" in result.output


def test_list_and_preset(tmp_path):
    result = run("list")
    assert "slimfly    Slim Fly (MMS graph), diameter 2" in result.output
    out = tmp_path / "fig5c.json"
    assert run("preset", "fig5c", "-o", str(out)).exit_code == 0
    assert show_json(f"tree:{out}")["tree"]["load"] == 256


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["show", "slimfly:q=6"],
            "Error: slimfly: invalid q=6: not a prime power; q must be a prime power 4w+δ with "
            "w ≥ 1 and δ ∈ {-1, 0, 1} (3, 4, 5, 7, 8, 9, 11, 13, 16, ...); the nearest valid q "
            "is 5 or 7",
        ),
        (
            ["show", "oft:k=7"],
            "Error: oft: invalid k=7: k-1=6 is not a prime power; k-1 must be a prime power "
            "(k = 3, 4, 5, 6, 8, 9, 10, 12, 14, ...); the nearest valid k is 6 or 8",
        ),
        (
            ["show", "mlfm:h=1"],
            "Error: mlfm: invalid h=1: must be >= 2 (h + 1 local routers a layer)",
        ),
        (
            ["show", "torus"],
            "Error: invalid topology spec 'torus': torus needs dims, e.g. torus:dims=4x4x4",
        ),
        (
            ["export", "json:/nonexistent/x.json", "--format", "dot"],
            "Error: cannot access '/nonexistent/x.json': No such file or directory",
        ),
        (
            ["show", "graphml:/nonexistent/x.graphml"],
            "Error: cannot access '/nonexistent/x.graphml': No such file or directory",
        ),
    ],
)
def test_errors_exit_nonzero_with_one_line(args, message):
    result = run(*args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [message]
    assert "Traceback" not in result.output


def test_tree_file_that_is_not_a_tree(tmp_path):
    bad = tmp_path / "loop.json"
    bad.write_text(
        json.dumps(
            {
                "switches": ["s0", "s1", "s2"],
                "machines": ["n0", "n1"],
                "links": [["n0", "s0"], ["n1", "s1"], ["s0", "s1"], ["s1", "s2"], ["s2", "s0"]],
            }
        )
    )
    result = run("show", f"tree:{bad}")
    assert result.exit_code == 1
    assert result.output.strip() == "Error: not a tree: link s2-s0 closes a loop s0 - s1 - s2 - s0"


def test_export_usage_errors():
    result = run("export", "slimfly:q=3", "-o", "x.txt")
    assert result.exit_code == 2
    assert "give --format (json, graphml, anynet, dot, simgrid)" in result.output
    result = run("export", "slimfly:q=3", "--format", "dot", "--cycle", "1ns")
    assert result.exit_code == 2
    parallel = nx.MultiGraph([(0, 1), (0, 1)])
    t = topology.from_networkx(parallel)
    with pytest.raises(TopologyError, match="anynet keeps one link per pair"):
        topology.export(t, "anynet")


def test_python_errors_are_value_errors():
    with pytest.raises(ValueError, match="nearest valid q is 5 or 7"):
        topology.generate("slimfly:q=6")
    with pytest.raises(TopologyError, match="unknown export format 'png'"):
        topology.export("slimfly:q=3", "png")
    with pytest.raises(TopologyError, match="unknown method 'kl'; accepted: metis, fm"):
        topology.bisection("slimfly:q=3", method="kl")

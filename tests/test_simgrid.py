"""SimGrid platform XML export and import (docs/simgrid.md)."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest
from click.testing import CliRunner
from hypercuboid import topology
from hypercuboid.cli import cli
from hypercuboid.errors import TopologyError

SPECS = [
    "tree:fig1",
    "slimfly:q=5",
    "dragonfly:p=2",
    "torus:dims=3x4",
    "fattree:k=4,levels=2",
    "fullmesh:n=3,bw=50",
]

CLUSTER = """\
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix=".lab" radical="0-3" speed="1Gf"
           bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"/>
</platform>
"""


def _graph(t):
    return (
        t.num_routers,
        t.links(),
        t.endpoint_routers(),
        t.endpoint_links(),
    )


@pytest.mark.parametrize("spec", SPECS)
def test_round_trip(tmp_path, spec):
    t = topology.generate(spec)
    path = tmp_path / "p.xml"
    text = topology.export(t, "simgrid", path)
    assert text.startswith("<?xml version='1.0'?>")
    back = topology.load(path)
    assert _graph(back) == _graph(t)
    assert back.family == "simgrid"
    # Through the spec of every verb, too.
    assert _graph(topology.generate(f"simgrid:{path}")) == _graph(t)
    assert _graph(topology.generate(str(path))) == _graph(t)


def test_four_host_cluster(tmp_path):
    path = tmp_path / "cluster.xml"
    path.write_text(CLUSTER)
    t = topology.read_simgrid(path)
    assert (t.num_routers, t.num_endpoints, t.num_links) == (1, 4, 0)
    assert t.endpoint_names() == ["node-0.lab", "node-1.lab", "node-2.lab", "node-3.lab"]
    assert t.router_names() == ["node-c_router.lab"]
    # 125 MBps = 1 Gb/s; 50 us + 500 us / 2 on each host's link.
    assert t.endpoint_links() == [(1.0, 300_000_000)] * 4
    assert ("bb_bw", "18Gbps") in t.params


def test_hand_written_floyd_zone():
    xml = textwrap.dedent("""\
        <platform version="4.1">
          <zone id="z" routing="Floyd">
            <host id="h0" speed="1Gf"/>
            <host id="h1" speed="1Gf"/>
            <router id="sw0"/>
            <router id="sw1"/>
            <link id="a" bandwidth="10Gbps" latency="1us"/>
            <link id="b" bandwidth="10Gbps" latency="1us"/>
            <link id="up" bandwidth="40Gbps" latency="100ns" sharing_policy="SPLITDUPLEX"/>
            <route src="h0" dst="sw0"><link_ctn id="a"/></route>
            <route src="h1" dst="sw1"><link_ctn id="b"/></route>
            <route src="sw0" dst="sw1"><link_ctn id="up" direction="UP"/></route>
          </zone>
        </platform>
        """)
    from hypercuboid import _core

    t = _core.topology_from_simgrid(xml, "z.xml")
    assert t.router_names() == ["sw0", "sw1"]
    assert t.endpoint_routers() == [0, 1]
    assert t.links() == [(0, 1, 40.0, 100_000)]
    assert t.endpoint_links() == [(10.0, 1_000_000), (10.0, 1_000_000)]


def test_bad_xml_is_one_line_with_the_line(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text('<platform version="4.1">\n<zone id="z" routing="Floyd">\n</platform>\n')
    with pytest.raises(TopologyError) as e:
        topology.load(path)
    assert str(e.value) == (
        f"cannot read {path}: line 3: expected 'zone' tag, not 'platform' at 3:1"
    )
    r = CliRunner().invoke(cli, ["topo", "show", str(path)])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        f"Error: cannot read {path}: line 3: expected 'zone' tag, not 'platform' at 3:1"
    ]


def test_cli_export_by_extension(tmp_path):
    out = tmp_path / "sf.xml"
    r = CliRunner().invoke(cli, ["topo", "export", "slimfly:q=5", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "wrote" in r.output and "(simgrid)" in r.output
    assert out.read_text().count("<host ") == topology.generate("slimfly:q=5").num_endpoints
    r = CliRunner().invoke(cli, ["topo", "show", str(out), "--json"])
    assert r.exit_code == 0, r.output


SIMGRID_CHECK = """
import sys, simgrid
e = simgrid.Engine(["check"])
e.load_platform(sys.argv[1])
getattr(e, "seal_platform", e.run)()  # SimGrid 3.32 seals in run()
hosts = e.all_hosts
links, latency = hosts[0].route_to(hosts[-1])
# the first and the last hosts' own links, in their UP and DOWN halves
print(len(hosts), hosts[0].name, hosts[-1].name, links[0].name, links[-1].name, latency > 0)
"""


@pytest.mark.parametrize("spec", SPECS)
def test_simgrid_loads_the_export(tmp_path, spec):
    """SimGrid itself reads the platform (Debian's python3-simgrid, system Python)."""
    python = shutil.which("python3", path="/usr/bin")
    if (
        python is None
        or subprocess.run([python, "-c", "import simgrid"], capture_output=True).returncode
    ):
        pytest.skip("SimGrid's Python binding (python3-simgrid) is not installed")
    path = tmp_path / "p.xml"
    t = topology.generate(spec)
    topology.export(t, "simgrid", path)
    r = subprocess.run(
        [python, "-c", SIMGRID_CHECK, str(path)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-2000:]
    n, first, last, up, down, positive = r.stdout.split()
    names = t.endpoint_names() or [f"e{j}" for j in range(t.num_endpoints)]
    assert int(n) == t.num_endpoints and positive == "True"
    assert (up, down) == (f"el{names.index(first)}_UP", f"el{names.index(last)}_DOWN")

"""``hypercuboid calibrate`` under mpiexec (every rank runs the command in-process): the model
file it writes is read by the core and used by ``simulate --model-file``. Small sizes and few
iterations: this checks the plumbing, not the machine."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytestmark = [pytest.mark.mpi, pytest.mark.any_runner]

FAST = ["--sizes", "1:64", "-i", "3", "-x", "1", "--dtype", "float64", "--op", "sum,max"]


def run(args):
    from hypercuboid.cli import cli

    return CliRunner().invoke(cli, ["calibrate", *args], catch_exceptions=False)


def test_calibrate_writes_a_model_file_simulate_reads(comm, tmp_path):
    from hypercuboid import modelfile
    from hypercuboid.cli import cli

    mf = tmp_path / "model.json"
    png = tmp_path / "fit.png"
    res = run(["-o", str(mf), *FAST, "--plot", str(png), "-q"])
    if comm.size < 2:
        assert (res.exit_code, res.output) == (
            1,
            "Error: calibrate needs at least 2 ranks: mpiexec -n 2 (or more) hypercuboid "
            "calibrate ...\n",
        )
        assert not mf.exists()
        return
    assert res.exit_code == 0, res.output
    # nothing the user has is overwritten (rank 0 decides for every rank)
    again = run(["-o", str(mf), *FAST, "-q"])
    assert again.exit_code == 1
    if comm.rank != 0:
        assert res.output == again.output == "" and not mf.exists()
        return
    assert again.output == f"Error: {mf} exists; pass --force to overwrite it\n"
    doc = json.loads(mf.read_text())
    assert modelfile.load(mf) == doc["model"] and doc["model"].startswith("loggops:L=")
    assert sorted(doc["models"]) == ["loggops", "pipelined", "postal"]
    assert doc["nranks"] == comm.size and doc["source"] == "calibrate"
    assert doc["node"].startswith(f"node:ranks={doc['ranks_per_node']},bw=")
    assert sorted(doc["fits"]["reduction"]) == ["float64 max", "float64 sum"]
    cont = doc["fits"]["contention"]["measured"]
    assert [r["flows"] for r in cont] == [*range(1, comm.size // 2 + 1), comm.size]
    pp = doc["fits"]["links"][doc["fits"]["primary"]]["measured"]["pingpong"]
    assert [r["bytes"] for r in pp] == [1, 2, 4, 8, 16, 32, 64]
    assert all(r["iterations"] == 3 for r in pp)
    measured = doc["fits"]["links"][doc["fits"]["primary"]]["measured"]
    for chains in (measured["exchange"], measured["oneway"]):
        assert [(r["bytes"], r["steps"]) for r in chains] == [
            (s, k) for s in (1, 2, 4, 8, 16, 32, 64) for k in (1, 2, 4)
        ]
    # the per-call cost, unless the exchanges left a size no time (a loaded run): then a warning
    if "call" in doc:
        assert doc["call"] == modelfile.check_call(doc["call"])
    else:
        assert any(w.startswith("exchange (") for w in doc["fits"]["warnings"])
    assert (",copy=" in doc["model"]) == (doc["fits"]["copy"] is not None)
    # stderr (warnings of fits that R² finds poor at these few sizes) is in res.output too
    lines = [x for x in res.output.splitlines() if not x.startswith("warning: ")]
    assert lines[0].startswith(f"# calibrate: {comm.size} ranks on ")
    assert lines[-2:] == [f"  model    {doc['model']}", f"  node     {doc['node']}"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sim = CliRunner().invoke(
        cli,
        ["simulate", "allreduce", "-a", "ring", "-n", "4", "--model-file", str(mf), "--json"],
        catch_exceptions=False,
    )
    assert sim.exit_code == 0, sim.output
    assert json.loads(sim.output)["completion_time_ns"] > 0


def test_ranks_on_two_nodes_are_measured_within_and_between(comm):
    from hypercuboid.mpi import calibrate as cal

    if comm.size < 2:
        pytest.skip("needs 2 ranks")
    # the first half of the ranks on node 0, the rest on node 1 (as Split_type would say)
    nodes = [2 * r // comm.size for r in range(comm.size)]
    m = cal.measure(
        comm, [1, 8, 64], iterations=3, warmup=1, nodes=nodes, reduce_pairs=[("float64", "sum")]
    )
    if comm.rank != 0:
        assert m is None
        return
    peers = {kind: link["peer"] for kind, link in m["links"].items()}
    inter = nodes.index(1)
    assert peers == ({"intra": 1, "inter": inter} if comm.size > 2 else {"inter": 1})
    c = cal.fit(m)
    assert c.fits["primary"] == "inter"
    assert ("postal_intra" in c.models) == (comm.size > 2)
    assert c.ranks_per_node == (comm.size + 1) // 2

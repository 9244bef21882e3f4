"""``hypercuboid bench`` under mpiexec (every rank runs the command in-process)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from handmade import linear_allreduce
from hypercuboid.schedule import parse_model

pytestmark = pytest.mark.mpi


@pytest.fixture
def linear_source():
    from hypercuboid.mpi import set_program_source

    prev = set_program_source(lambda req: linear_allreduce(req.rank, req.nranks, req.count))
    yield
    set_program_source(prev)


def run(args):
    from hypercuboid.cli.bench import bench

    return CliRunner().invoke(bench, args, catch_exceptions=False)


def test_bench_allreduce_json_contract(comm, tmp_path, linear_source):
    out = tmp_path / "rows.json"
    csv = tmp_path / "rows.csv"
    res = run(
        ["allreduce", "-a", "linear,native", "--sizes", "8:32", "-i", "5", "-x", "1", "--check"]
        + ["--json", str(out), "--csv", str(csv), "-q"]
    )
    assert res.exit_code == 0, res.output
    if comm.rank != 0:
        assert res.output == "" and not out.exists()
        return
    rows = json.loads(out.read_text())
    assert [(r["algorithm"], r["bytes"]) for r in rows] == [
        (a, b) for b in (8, 16, 32) for a in ("linear", "native")
    ]
    for r in rows:
        assert {"algorithm", "bytes", "median_us", "min_us", "max_us", "valid"} <= set(r)
        assert r["min_us"] <= r["p25_us"] <= r["median_us"] <= r["p75_us"] <= r["max_us"]
        assert r["valid"] is True and r["check"]["identical_bits"] is True
        assert r["nranks"] == comm.size and r["iterations"] == 5 and r["warmup"] == 1
        assert r["count"] == r["bytes"] // 8
    # the linear program reduces in rank order: exactly the fixed-order reference
    assert all(r["check"]["exact_reference"] for r in rows if r["algorithm"] == "linear")
    lines = res.output.splitlines()
    ranks = "1 rank" if comm.size == 1 else f"{comm.size} ranks"
    assert lines[0].startswith(f"# allreduce, {ranks}, float64 sum, block 1; ")
    assert lines[1].split() == [
        "algorithm", "runner", "size", "min", "us", "p25", "us", "median", "us", "p75", "us",
        "max", "us",
        "avg", "us", "busbw", "GB/s", "valid", "same", "bits",
    ]  # fmt: skip
    assert len(lines) == 2 + len(rows)
    header = csv.read_text().splitlines()[0]
    assert header.startswith("algorithm,runner,bytes,count,dtype,op,nranks")


def test_bench_allreduce_refuses_to_overwrite(comm, tmp_path):
    out = tmp_path / "rows.json"
    out.write_text("keep")
    res = run(["allreduce", "-a", "native", "--sizes", "8", "-i", "1", "--json", str(out), "-q"])
    assert res.exit_code == 1
    if comm.rank == 0:
        assert res.output == f"Error: {out} exists; pass --force to overwrite it\n"
    assert out.read_text() == "keep"


def test_bench_blocks_of_ten_and_plot(comm, tmp_path):
    png = tmp_path / "lat.png"
    res = run(["allreduce", "-a", "native", "--sizes", "8:16", "-i", "3", "-x", "0"]
              + ["--block", "10", "--plot", str(png), "-q"])  # fmt: skip
    assert res.exit_code == 0, res.output
    if comm.rank == 0:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_pingpong_writes_a_postal_model_file(comm, tmp_path):
    from hypercuboid import modelfile

    mf = tmp_path / "postal.json"
    res = run(["pingpong", "--sizes", "1:1K", "-i", "5", "-x", "1", "--model-file", str(mf), "-q"])
    if comm.size < 2:
        assert res.exit_code == 1
        assert res.output == "Error: pingpong needs 2 ranks: mpiexec -n 2 hypercuboid bench ...\n"
        return
    assert res.exit_code == 0, res.output
    if comm.rank == 0:
        spec = modelfile.load(mf)
        assert spec.startswith("postal:alpha=") and ",beta=" in spec
        assert ",gamma=" in spec and ",delta=" in spec
        assert parse_model(spec).startswith("postal:alpha=")  # the simulator reads it
        doc = json.loads(mf.read_text())
        assert doc["source"] == "bench pingpong"
        assert doc["fitted"]["sizes"] == [1 << k for k in range(11)]
        assert "postal fit (median): alpha = " in res.output


def test_bench_multicast_writes_a_pipelined_model_file(comm, tmp_path):
    from hypercuboid import modelfile

    mf = tmp_path / "pipe.json"
    args = "multicast -b 3 -i 5 -x 1 --beta 0.4ns --no-measure-reductions -q".split()
    res = run([*args, "--model-file", str(mf), "--mode", "ack"])
    if comm.size < 2:
        assert res.exit_code == 1
        return
    assert res.exit_code == 0, res.output
    if comm.rank == 0:
        spec = modelfile.load(mf)
        assert spec.startswith("pipelined:alpha_p=")
        assert spec.endswith(",beta=400ps,gamma=0,delta=0")
        assert parse_model(spec).endswith(",beta=400ps,gamma=0,delta=0")
        doc = json.loads(mf.read_text())
        assert doc["fitted"]["messages"] == [1, 2, 3]
        assert doc["fitted"]["peers"] == [1, min(2, comm.size - 1), min(3, comm.size - 1)]
        assert "pipelined fit (median): alpha_p = " in res.output


def test_bench_alltoall_json_contract(comm, tmp_path):
    """osu_alltoall's conventions: size per pair of ranks, avg / min / max over the ranks of
    each rank's mean latency, iterations; --check compares with MPI_Alltoall bitwise."""
    out = tmp_path / "a2a.json"
    res = run(
        ["alltoall", "-a", "linear,bruck,scattered:block=2,native", "--sizes", "1:4", "-i", "4"]
        + ["-x", "1", "--check", "--json", str(out), "-q"]
    )
    assert res.exit_code == 0, res.output
    if comm.rank != 0:
        assert res.output == "" and not out.exists()
        return
    rows = json.loads(out.read_text())
    algs = ("linear", "bruck", "scattered:block=2", "native")
    assert [(r["algorithm"], r["bytes"]) for r in rows] == [(a, b) for b in (1, 2, 4) for a in algs]
    for r in rows:
        assert set(r) == {
            "algorithm", "runner", "bytes", "count", "dtype", "nranks", "iterations", "warmup",
            "avg_us", "min_us", "max_us", "median_us", "valid",
        }  # fmt: skip
        assert r["min_us"] <= r["avg_us"] <= r["max_us"]
        assert r["valid"] is True and r["dtype"] == "uint8" and r["count"] == r["bytes"]
        assert r["nranks"] == comm.size and r["iterations"] == 4 and r["warmup"] == 1
    lines = res.output.splitlines()
    ranks = "1 rank" if comm.size == 1 else f"{comm.size} ranks"
    assert lines[0].startswith(f"# alltoall, {ranks}, uint8; ")
    assert lines[1].split() == [
        "algorithm", "runner", "size", "avg", "latency", "us", "min", "latency", "us", "max",
        "latency", "us", "iterations", "valid",
    ]  # fmt: skip
    assert len(lines) == 2 + len(rows)


def test_bench_alltoall_refuses_an_unknown_algorithm(comm):
    res = run(["alltoall", "-a", "ring", "--sizes", "8", "-i", "1", "-q"])
    assert res.exit_code == 1
    if comm.rank == 0:
        assert "unknown alltoall algorithm 'ring'; accepted: linear, linear_shifted" in res.output

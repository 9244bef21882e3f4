"""What Open MPI and MPICH would run (docs/library-selection.md): the Python API and the CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypercuboid import library, schedules
from hypercuboid.cli import cli
from hypercuboid.errors import ScheduleError


def _alg(lib, coll, n, nbytes, dtype=None):
    return library.choice(lib, coll, n, nbytes, dtype=dtype).algorithm


@pytest.mark.parametrize(
    ("n", "nbytes", "expected"),
    [
        (8, 8184, "recursive_doubling"),  # < 8192 on 8..15 ranks
        (8, 8192, "rabenseifner"),
        (16, 56, "recursive_doubling"),  # segmented ring -> ring -> count 7 < 16
        (16, 4088, "recursive_doubling"),
        (16, 4096, "rabenseifner"),
        (128, 131064, "tree"),  # nonoverlapping: tuned reduce + bcast
        (128, 131072, "recursive_doubling"),
        (128, 262144, "rabenseifner"),
        (4096, 2040, "tree"),
        (4096, 2048, "recursive_doubling"),  # segmented ring -> ring -> count 256 < 4096
    ],
)
def test_open_mpi_allreduce_edges(n, nbytes, expected):
    assert _alg("openmpi", "allreduce", n, nbytes) == expected


def test_open_mpi_alltoall_edges():
    assert [
        library.choice("openmpi", "alltoall", 2, b, dtype="int8").native
        for b in (1, 2, 3, 4, 15, 16)
    ] == ["pairwise", "two_proc", "two_proc", "pairwise", "pairwise", "two_proc"]
    c = library.choice("openmpi", "alltoall", 16, 511, dtype="int8")
    assert (c.algorithm, c.native) == ("bruck", "modified_bruck")
    c = library.choice("openmpi", "alltoall", 16, 512, dtype="int8")
    assert (c.algorithm, c.native) == ("linear_sync:max=0", "linear_sync")
    assert "max_requests defaults to 0" in c.note
    assert _alg("openmpi", "alltoall", 100, 262144) == "pairwise"


def test_mpich_edges():
    assert _alg("mpich", "allreduce", 64, 8) == "recursive_doubling"
    assert _alg("mpich", "allreduce", 64, 504) == "recursive_doubling"  # count 63 < 64
    assert _alg("mpich", "allreduce", 64, 512) == "rabenseifner"
    assert _alg("mpich", "allreduce", 64, 16, dtype="int8") == "recursive_doubling"
    assert _alg("mpich", "alltoall", 8, 256, dtype="int8") == "bruck"
    assert _alg("mpich", "alltoall", 8, 257, dtype="int8") == "linear_shifted:block=32"
    assert _alg("mpich", "alltoall", 7, 8, dtype="int8") == "linear_shifted:block=32"
    assert _alg("mpich", "alltoall", 8, 32768, dtype="int8") == "linear_shifted:block=32"
    c = library.choice("mpich", "alltoall", 8, 32769, dtype="int8")
    assert (c.algorithm, c.native, c.note) == ("pairwise", "MPIR_Alltoall_intra_pairwise", "")


def test_every_choice_generates_a_verified_schedule():
    for lib in ("openmpi", "mpich"):
        for n in (2, 3, 5, 8, 16):
            for nbytes in (8, 64, 8192, 1 << 20):
                a = _alg(lib, "allreduce", n, nbytes)
                assert schedules.allreduce(a, nranks=n, count=nbytes // 8).verify()
                a = _alg(lib, "alltoall", n, nbytes)
                assert schedules.alltoall(a, nranks=n, count=nbytes // 8).verify()


def test_bad_input():
    with pytest.raises(ScheduleError, match="unknown MPI library 'lam'; accepted: openmpi, mpich"):
        library.choice("lam", "allreduce", 4, 8)
    with pytest.raises(ScheduleError, match="'bcast'.*accepted: allreduce, alltoall"):
        library.choice("mpich", "bcast", 4, 8)
    with pytest.raises(ScheduleError, match="not a whole number of 8-byte elements"):
        library.choice("mpich", "allreduce", 4, 12)
    with pytest.raises(ScheduleError, match="nranks=0: a communicator has 1 ..= 4294967294"):
        library.choice("mpich", "allreduce", 0, 8)
    with pytest.raises(ScheduleError, match="unknown dtype 'float128'"):
        library.choice("mpich", "allreduce", 4, 8, dtype="float128")


def test_cli_table_and_json(tmp_path):
    r = CliRunner().invoke(
        cli, ["schedule", "library", "-n", "16", "--sizes", "56,4K"], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "allreduce on 16 ranks (float64; size = the vector)"
    assert lines[2].split() == ["56B", "openmpi", "recursive_doubling", "segmented_ring", "[1]"]
    assert lines[3].split()[1:] == [
        "mpich",
        "recursive_doubling",
        "MPIR_Allreduce_intra_recursive_doubling",
        "[2]",
    ]
    assert "[2] count < pof2 (7 < 16)" in lines
    assert lines[4].split()[:3] == ["4KiB", "openmpi", "rabenseifner"]
    out = tmp_path / "c.json"
    r = CliRunner().invoke(
        cli,
        [
            "schedule",
            "library",
            "--library",
            "mpich",
            "--collective",
            "alltoall",
            "-n",
            "8",
            "--sizes",
            "256,257",
            "--dtype",
            "int8",
            "--json",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert [c["algorithm"] for c in doc["choices"]] == ["bruck", "linear_shifted:block=32"]
    assert doc["sources"]["mpich"].startswith("MPICH v4.3.2")
    r = CliRunner().invoke(cli, ["schedule", "library", "-n", "4", "--library", "lam"])
    assert r.exit_code == 2 and "'lam' is not one of 'openmpi', 'mpich'" in r.output


def test_cli_ranks_are_refused_in_the_words_of_every_verb():
    r = CliRunner().invoke(cli, ["schedule", "library", "-n", "0"])
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == "Error: --ranks 0: the number of ranks must be >= 1"

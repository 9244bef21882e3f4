"""Alltoall schedules exported as C routines (``schedule export --format c alltoall ...``),
compiled with each MPI wheel's ``mpicc -c -Wall -Werror``, linked into
``tests/native/alltoall_export_test.c`` and run under ``mpiexec -n 3`` and ``-n 4``: every
routine's result, out of place and in place, equals the library's ``MPI_Alltoall`` bit for
bit."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypercuboid.cli import cli
from mpi_env import launch
from test_export_c import WHEELS, _run, _wheel

ROOT = Path(__file__).resolve().parent.parent
TEST_PROGRAM = ROOT / "tests" / "native" / "alltoall_export_test.c"

#: (routine, algorithm, ranks, count, dtype)
ROUTINES = [
    ("hc_a2a_pairwise4", "pairwise", 4, 3, "float64"),
    ("hc_a2a_bruck4", "bruck", 4, 5, "int32"),
    ("hc_a2a_kbruck3", "k_bruck:k=3", 3, 2, "float32"),
    ("hc_a2a_scattered3", "scattered:block=2", 3, 7, "int64"),
    ("hc_a2a_linear3", "linear", 3, 1, "float64"),
    ("hc_a2a_sync4", "linear_sync:max=1", 4, 4, "int32"),
]

C_TYPES = {
    "int32": ("int32_t", "MPI_INT32_T"),
    "int64": ("int64_t", "MPI_INT64_T"),
    "float32": ("float", "MPI_FLOAT"),
    "float64": ("double", "MPI_DOUBLE"),
}


@pytest.mark.parametrize("mpi", sorted(WHEELS))
def test_exported_alltoall_routines_equal_mpi_alltoall(mpi, tmp_path):
    bindir, mpiexec_flags, mpi_env = _wheel(mpi)
    mpicc = str(bindir / "mpicc")
    objects = []
    for name, algorithm, n, count, dtype in ROUTINES:
        src = tmp_path / f"{name}.c"
        r = CliRunner().invoke(
            cli,
            ["schedule", "export", "--format", "c", "-o", str(src), "--name", name,
             "alltoall", "-a", algorithm, "-n", str(n), "-c", str(count), "--dtype", dtype],
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        obj = src.with_suffix(".o")
        done = _run([mpicc, "-c", "-Wall", "-Werror", str(src), "-o", str(obj)])
        assert done.returncode == 0, f"{name}:\n{done.stderr}"
        objects.append(str(obj))
    lines = [
        f"X({name}, {n}, {C_TYPES[dtype][0]}, {C_TYPES[dtype][1]}, {count})"
        for name, _, n, count, dtype in ROUTINES
    ]
    header = "#define ROUTINES(X) \\\n    " + " \\\n    ".join(lines) + "\n"
    (tmp_path / "routines.h").write_text(header)
    exe = tmp_path / "alltoall_export_test"
    done = _run(
        [mpicc, "-Wall", "-Werror", f"-I{tmp_path}", "-o", str(exe), str(TEST_PROGRAM), *objects]
    )
    assert done.returncode == 0, done.stderr
    env = {**os.environ, **mpi_env}
    for n in (3, 4):
        done = launch(
            [str(bindir / "mpiexec"), *mpiexec_flags, "-n", str(n), str(exe)],
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, f"-n {n}:\n{done.stdout}\n{done.stderr}"
        expected = 2 * n * sum(1 for r in ROUTINES if r[2] == n)
        m = re.fullmatch(
            rf"alltoall_export_test: {len(ROUTINES)} routines, (\d+) checks, 0 failures\n",
            done.stdout,
        )
        assert m and int(m.group(1)) == expected, f"-n {n}: {done.stdout!r}\n{done.stderr}"

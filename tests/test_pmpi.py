"""The PMPI library (docs/native.md, section 3) under an unmodified C application.

tests/native/allreduce_app.c calls MPI_Allreduce with several counts, types and operators,
MPI_IN_PLACE, sub-communicators and an intercommunicator, and checks every result against a
reference it computes itself. It runs here under Open MPI and MPICH (the wheels of .venv and
.venv-mpich), at 1, 3 and 4 ranks, without the library and with it (LD_PRELOAD) for several
HYPERCUBOID_ALLREDUCE values; with the library it also checks, call by call, that the library
served what it serves and passed the rest to PMPI_Allreduce (hc_pmpi_counts).

`make native` builds the libraries (`make test` does it first); the directory is
$HYPERCUBOID_NATIVE_DIR, else target/native ($CARGO_TARGET_DIR/native).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from mpi_env import MPICH_ENV, OMPI_ENV, launch

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "tests" / "native" / "allreduce_app.c"
ERRORS = ROOT / "tests" / "native" / "allreduce_errors.c"
NPS = (1, 3, 4)
ALGORITHMS = ("recursive_doubling", "ring", "rabenseifner", "recursive_multiplying:auto")
TIMEOUT = 300


def native_dir() -> Path:
    if "HYPERCUBOID_NATIVE_DIR" in os.environ:
        return Path(os.environ["HYPERCUBOID_NATIVE_DIR"])
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "native"


@dataclass(frozen=True)
class Mpi:
    name: str  # openmpi | mpich: the directory of its libhc_pmpi.so
    venv: Path

    @property
    def library(self) -> Path:
        return native_dir() / self.name / "libhc_pmpi.so"

    def command(self, np: int, app: Path, mode: str, preload: bool) -> list[str]:
        """mpiexec of the app; LD_PRELOAD reaches the ranks only, not the launcher."""
        exe = str(self.venv / "bin" / "mpiexec")
        if self.name == "openmpi":
            cmd = [exe, "--oversubscribe", "--bind-to", "none", "-n", str(np)]
            if preload:
                cmd += ["-x", f"LD_PRELOAD={self.library}"]
            return cmd + [str(app), mode]
        cmd = [exe, "-n", str(np)]
        if preload:
            cmd += ["-genv", "LD_PRELOAD", str(self.library)]
        return cmd + [str(app), mode]

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("HYPERCUBOID_", "OMPI_", "PMIX_", "PMI_")) and k != "LD_PRELOAD"
        }
        env.update(OMPI_ENV if self.name == "openmpi" else MPICH_ENV)
        env.update(extra)
        return env


MPIS = {
    "openmpi": Mpi("openmpi", ROOT / ".venv"),
    "mpich": Mpi("mpich", ROOT / ".venv-mpich"),
}


@pytest.fixture(scope="module", params=sorted(MPIS))
def mpi(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Each MPI with the app compiled by its mpicc."""
    m = MPIS[request.param]
    mpicc = m.venv / "bin" / "mpicc"
    if not mpicc.exists():
        pytest.skip(f"no {mpicc}: make test sets up {m.venv}")
    if not m.library.exists():
        pytest.skip(f"no {m.library}: run make native")
    return m, compiled(m, APP, tmp_path_factory)


def compiled(m: Mpi, source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`source` compiled by the MPI's mpicc."""
    app = tmp_path_factory.mktemp(f"pmpi-{m.name}") / source.stem
    cc = [str(m.venv / "bin" / "mpicc"), "-std=c99", "-O2", "-Wall", "-Werror"]
    done = subprocess.run(
        [*cc, "-o", str(app), str(source), "-lm"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return app


def run(mpi, np: int, mode: str, preload: bool = True, **env: str):
    m, app = mpi
    done = launch(m.command(np, app, mode, preload), env=m.env(**env), timeout=TIMEOUT)
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"{m.name} -n {np} {mode} {env}:\n{out[-6000:]}"
    assert "calls checked" in done.stdout and "FAILED" not in done.stdout, out[-6000:]
    return done


@pytest.mark.parametrize("np", NPS)
def test_without_the_library(mpi, np):
    """The application alone: its references are right."""
    done = run(mpi, np, "none", preload=False)
    assert "(0 served, 0 passed)" in done.stdout


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("np", NPS)
def test_served_by_the_library(mpi, np, algorithm):
    """With the library every result is right, and every call it serves was served."""
    done = run(mpi, np, "library", HYPERCUBOID_ALLREDUCE=algorithm)
    assert " served, " in done.stdout and "(0 served" not in done.stdout
    assert "hypercuboid:" not in done.stderr, done.stderr


def test_verbose_names_the_schedule(mpi):
    """HYPERCUBOID_VERBOSE=1: rank 0 of each communicator says what runs, once per (size,
    count, type, op) and process, and why a call goes to the MPI library."""
    done = run(
        mpi, 4, "library", HYPERCUBOID_ALLREDUCE="recursive_doubling", HYPERCUBOID_VERBOSE="1"
    )
    lines = done.stderr.splitlines()
    assert (
        "hypercuboid: MPI_Allreduce of 1000 x MPI_DOUBLE (MPI_SUM) on 4 ranks: "
        "recursive_doubling" in lines
    )
    assert "hypercuboid: MPI_Allreduce of 7 x MPI_INT (MPI_MAX) on 2 ranks: recursive_doubling" in (
        lines
    )
    assert (
        "hypercuboid: MPI_Allreduce of 7 x MPI_INT (MPI_BAND) on 4 ranks: the MPI library's own "
        "(an operator other than MPI_SUM, MPI_PROD, MPI_MAX or MPI_MIN)" in lines
    )
    assert (
        "hypercuboid: MPI_Allreduce of 1 x MPI_LONG_DOUBLE (MPI_SUM) on 4 ranks: the MPI "
        "library's own (a datatype other than a predefined integer, MPI_FLOAT or MPI_DOUBLE)"
        in lines
    )
    assert any(x.endswith("(an intercommunicator)") for x in lines)


def test_auto_under_a_model_file(mpi, tmp_path):
    """recursive_multiplying:auto tunes for each communicator's size under the model file: with
    α_p far above α_r one stage of N - 1 messages wins (a4 on 4 ranks, a2 on 2)."""
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"model": "pipelined:alpha_p=50us,alpha_r=10ns", "source": "test"}))
    done = run(
        mpi,
        4,
        "library",
        HYPERCUBOID_ALLREDUCE="recursive_multiplying:auto",
        HYPERCUBOID_MODEL_FILE=str(model),
        HYPERCUBOID_VERBOSE="1",
    )
    under = (
        "under pipelined:alpha_p=50us,alpha_r=10ns,beta=0,gamma=0,delta=0, from "
        f"HYPERCUBOID_MODEL_FILE={model})"
    )
    assert (
        "hypercuboid: MPI_Allreduce of 7 x MPI_INT (MPI_SUM) on 4 ranks: "
        f"recursive_multiplying:a4 (recursive_multiplying:auto {under}" in done.stderr
    ), done.stderr
    assert (
        "hypercuboid: MPI_Allreduce of 7 x MPI_INT (MPI_SUM) on 2 ranks: "
        "recursive_multiplying:a2 (recursive_multiplying:auto " in done.stderr
    ), done.stderr


def test_a_small_cache(mpi):
    """Two programs per communicator: every call of the suite evicts one, and results stay
    right."""
    run(mpi, 3, "library", HYPERCUBOID_ALLREDUCE="rabenseifner", HYPERCUBOID_PMPI_CACHE="2")


@pytest.mark.parametrize(
    ("env", "line"),
    [
        ({}, None),
        ({"HYPERCUBOID_ALLREDUCE": "  "}, None),
        (
            {"HYPERCUBOID_ALLREDUCE": "rign"},
            "hypercuboid: HYPERCUBOID_ALLREDUCE='rign': unknown allreduce algorithm 'rign'; "
            "accepted: ring_rotate, ring, tree, recursive_doubling, rabenseifner, elimination, "
            "recursive_multiplying:SCHEDULE, mpich_recursive_multiplying (or "
            "recursive_multiplying:auto, tuned for the communicator); MPI_Allreduce stays the "
            "MPI library's own",
        ),
        (
            {
                "HYPERCUBOID_ALLREDUCE": "recursive_multiplying:auto",
                "HYPERCUBOID_MODEL_FILE": "/nonexistent/model.json",
            },
            "hypercuboid: HYPERCUBOID_MODEL_FILE: /nonexistent/model.json: cannot read it (No "
            "such file or directory (os error 2)); MPI_Allreduce stays the MPI library's own",
        ),
    ],
)
def test_passed_through(mpi, env, line):
    """Unset, empty or refused: the library passes every call, and a refused value is one line
    on stderr from rank 0 (never an abort)."""
    done = run(mpi, 3, "passthrough", **env)
    said = [x for x in done.stderr.splitlines() if x.startswith("hypercuboid:")]
    assert said == ([line] if line else []), done.stderr


def test_a_schedule_that_does_not_fit_goes_to_pmpi(mpi):
    """A schedule string for 2 ranks on 4: the calls on the communicators of 4 ranks pass to the
    MPI library (their rank 0 says why, once), those on the communicators of 2 ranks run it."""
    done = run(mpi, 4, "results", HYPERCUBOID_ALLREDUCE="recursive_multiplying:a2")
    said = sorted({x for x in done.stderr.splitlines() if x.startswith("hypercuboid:")})
    assert len(said) == 1, done.stderr
    assert said[0].startswith(
        "hypercuboid: HYPERCUBOID_ALLREDUCE='recursive_multiplying:a2' on 4 ranks (rank 0): "
    ), said
    assert said[0].endswith("; those calls run the MPI library's own"), said
    served, passed = (
        int(x) for x in done.stdout.split("(")[1].split(" passed")[0].split(" served, ")
    )
    assert served > 0 and passed > 0, done.stdout


# The erroneous calls of tests/native/allreduce_errors.c, each run in a process of its own: the
# MPI libraries check different things (the MPICH wheel crashes on a negative count,
# MPI_DATATYPE_NULL and overlapping buffers, Open MPI on a NULL buffer and a freed
# communicator), and the library must end as the MPI library alone ends.
ERRONEOUS = (
    "aliased-first",
    "aliased",
    "aliased-double",
    "aliased-one",
    "inplace-recv",
    "inplace-both",
    "null-send",
    "null-recv",
    "negative-count",
    "null-type",
    "null-op",
    "null-comm",
    "uncommitted",
    "maxloc",
    "freed-comm",
    "overlap",
)


@pytest.fixture(scope="module")
def errors_app(mpi, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compiled(mpi[0], ERRORS, tmp_path_factory)


def run_case(mpi, app: Path, case: str, preload: bool) -> tuple[bool, list[str]]:
    """Whether the program ended well, and the lines it printed."""
    m, _ = mpi
    done = launch(
        m.command(3, app, case, preload), env=m.env(HYPERCUBOID_ALLREDUCE="ring"), timeout=TIMEOUT
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("allreduce_errors:")]
    return done.returncode == 0, lines


COUNTED = "allreduce_errors: 2 calls checked ("


@pytest.mark.parametrize("case", ERRONEOUS)
def test_an_erroneous_call_ends_as_without_the_library(mpi, errors_app, case):
    """MPI_ERRORS_RETURN: the same error class on every rank as the MPI library alone returns
    (or the same crash where it crashes), the call passed to PMPI_Allreduce, never served, and
    the valid call after it right."""
    alone = run_case(mpi, errors_app, case, preload=False)
    served = run_case(mpi, errors_app, case, preload=True)
    assert served[0] == alone[0], (served, alone)
    assert not any("FAILED" in x for x in served[1]), served[1]
    if not alone[0]:
        assert served[1] == alone[1]
        return
    # the valid call after it served (and, for freed-comm, the one on the copy before it)
    counted = "2 served, 1 passed)" if case == "freed-comm" else "1 served, 1 passed)"
    assert served[1] == [*alone[1][:-1], COUNTED + counted]
    assert alone[1][-1] == COUNTED + "0 served, 0 passed)"


@pytest.mark.parametrize("case", ["aliased", "inplace-recv"])
def test_the_issue_s_cases_are_errors(mpi, errors_app, case):
    """MPI_Allreduce(x, x, ...) and recvbuf = MPI_IN_PLACE: MPI_ERR_BUFFER (class 1 in both
    libraries), as the library returns; they were served (a wrong result) and a segfault."""
    ok, lines = run_case(mpi, errors_app, case, preload=True)
    assert ok, lines
    assert ": class 1 (" in lines[0], lines

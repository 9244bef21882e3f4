"""Jobs that would hang without a bound (launched with the venv's mpiexec from an ordinary
test): ranks started with different arguments stop at once with one line from rank 0, a rank
that never comes ends the job at --timeout, and ``timeout=`` covers the private
communicator's creation."""

from __future__ import annotations

import sys
import textwrap

import pytest
from test_launch import MPIEXEC, mpirun

pytestmark = pytest.mark.skipif(not MPIEXEC.exists(), reason="no mpiexec next to the interpreter")

BENCH = [sys.executable, "-m", "hypercuboid.cli.bench", "allreduce", "-m", "8", "-q"]
LBM = [sys.executable, "-c", "from hypercuboid.cli.lbm import lbm; lbm()", "run"]
IDLE = [sys.executable, "-c", "import time; from mpi4py import MPI; time.sleep(60)"]


def mpmd(*parts: list[str]) -> list[str]:
    """One rank per part: `-n 1 A : -n 1 B ...` (the first -n is mpirun's)."""
    out = list(parts[0])
    for p in parts[1:]:
        out += [":", "-n", "1", *p]
    return out


def test_an_mpmd_launch_of_bench_stops_at_once(tmp_path):
    res = mpirun(1, mpmd([*BENCH, "-a", "ring"], [*BENCH, "-a", "recursive_doubling"]), tmp_path)
    assert res.returncode == 1
    line = (
        "Error: rank 1 of 2 was started with arguments other than rank 0's (an MPMD launch or "
        "different options): start every rank with the same command\n"
    )
    assert res.stderr.count(line) == 1, res.stderr
    assert res.stderr.count("Error:") == 1, res.stderr


def test_lbm_ranks_with_different_options_stop_at_once(tmp_path):
    run = [*LBM, "--lattice", "8x8x8", "--quiet"]
    res = mpirun(
        1, mpmd([*run, "--steps", "1"], [*run, "--steps", "1"], [*run, "--steps", "2"]), tmp_path
    )
    assert res.returncode == 1
    assert res.stderr.count("Error: rank 2 of 3 was started with arguments other") == 1


def test_timeout_ends_a_job_whose_peer_never_comes(tmp_path):
    res = mpirun(1, mpmd([*BENCH, "-a", "ring", "--timeout", "2"], IDLE), tmp_path)
    assert res.returncode != 0
    assert (
        "hypercuboid bench: rank 0: not finished after --timeout 2 s; aborting the job"
        in res.stderr
    ), res.stderr


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("nan", "expected a finite number"),
        ("inf", "expected a finite number"),
        ("0", "must be > 0"),
        ("-1", "must be > 0"),
    ],
)
def test_a_timeout_that_is_no_bound_is_refused(tmp_path, value, why):
    """Refused at the edge, by the option's type, before MPI is started."""
    res = mpirun(2, [*BENCH, "-a", "ring", "--timeout", value], tmp_path)
    assert res.returncode == 1
    assert res.stderr.count(f"Error: --timeout {value}: {why}\n") == 1, res.stderr


def test_timeout_covers_the_private_communicator(tmp_path):
    """Rank 1 never calls: rank 0's first allreduce on a communicator (whose private copy is
    made then) gives up after the timeout instead of waiting in MPI_Comm_dup."""
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            """
            import time
            import numpy as np
            from mpi4py import MPI
            import hypercuboid.mpi as hmpi
            from hypercuboid.errors import MPIError

            comm = MPI.COMM_WORLD
            if comm.rank == 0:
                try:
                    hmpi.allreduce(comm, np.ones(4), timeout=1, abort=False)
                except MPIError as e:
                    print(f"raised: {e}", flush=True)
                comm.Abort(3)
            time.sleep(60)
            """
        )
    )
    res = mpirun(2, [sys.executable, str(script)], tmp_path)
    assert res.returncode != 0
    assert (
        "raised: allreduce 'recursive_doubling' (2 ranks): rank 0: timed out after 1 s waiting "
        "for every rank to call (its first call)\n" in res.stdout
    ), res.stdout + res.stderr

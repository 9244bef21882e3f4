"""Jobs launched with the venv's mpiexec from an ordinary test: a rank that fails while
messages are in flight aborts the whole job with a message naming the rank and the op."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

MPIEXEC = Path(sys.executable).parent / "mpiexec"
HERE = Path(__file__).parent

pytestmark = pytest.mark.skipif(not MPIEXEC.exists(), reason="no mpiexec next to the interpreter")


def mpirun(n: int, args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    from hypercuboid.demo import _mpiexec

    launcher = _mpiexec()  # the demo's: a small shared-memory run, as `make test-mpi`
    assert launcher is not None, "mpiexec or mpi4py is missing"
    cmd, env = launcher
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(HERE.parent.parent / "python")])
    cmd = [*cmd, "-n", str(n), *args]
    # the timeout only guards against a hang; it asserts nothing about speed
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_failing_rank_aborts_the_job_naming_rank_and_op(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            """
            import numpy as np
            from mpi4py import MPI
            from handmade import IN, OUT, Program
            from hypercuboid.mpi import run_program

            comm = MPI.COMM_WORLD
            p = Program()
            if comm.rank == 0:
                p.send(1, (IN, 0, 4), tag=5)
                p.recv(1, (OUT, 0, 4), tag=6)  # never sent: rank 0 would wait forever
            else:
                p.recv(0, (OUT, 0, 2), tag=5)  # too short: MPI_ERR_TRUNCATE
            run_program(comm, p.columns(), np.ones(4), np.zeros(4))
            print("not reached", flush=True)
            """
        )
    )
    res = mpirun(2, [sys.executable, str(script)], tmp_path)
    assert res.returncode != 0
    assert "not reached" not in res.stdout
    assert (
        "hypercuboid.mpi: rank 1: waiting for op 0 (recv output[0:2] from rank 0 tag 5): "
        in res.stderr
    )
    assert "aborting the job" in res.stderr


def test_cli_usage_errors_are_printed_once(tmp_path):
    res = mpirun(
        3,
        [sys.executable, "-m", "hypercuboid.cli.bench", "allreduce", "-a", "native", "-m", "8:x"],
        tmp_path,
    )
    assert res.returncode == 1
    message = (
        "invalid size 'x': unknown unit 'x'; accepted units are B, K/KB/KiB, M/MB/MiB, "
        "G/GB/GiB, T/TB/TiB (binary: 1 KB = 1024 B; a bare number is bytes)\n"
    )
    assert res.stderr.count(message) == 1

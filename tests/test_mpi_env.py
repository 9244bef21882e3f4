"""The tests' launcher helper: it runs a command again only while Open MPI's launcher failed
before the program started, never when the program itself failed."""

from __future__ import annotations

from mpi_env import LAUNCH_FAILED, launch


def _counting(tmp_path, message: str, code: int) -> list[str]:
    """A command that counts its runs in a file, prints ``message`` and exits ``code``."""
    count = tmp_path / "runs"
    script = f'echo x >> {count}; echo "{message}" >&2; exit {code}'
    return ["sh", "-c", script]


def test_a_launcher_failure_is_run_again_at_most_tries_times(tmp_path):
    done = launch(_counting(tmp_path, LAUNCH_FAILED + ". We cannot", 213), tries=3)
    assert done.returncode == 213 and LAUNCH_FAILED in done.stderr
    assert (tmp_path / "runs").read_text() == "x\n" * 3


def test_a_program_failure_is_the_result_of_its_first_run(tmp_path):
    done = launch(_counting(tmp_path, "rank 1: wrong bytes", 1), tries=3)
    assert done.returncode == 1 and done.stderr == "rank 1: wrong bytes\n"
    assert (tmp_path / "runs").read_text() == "x\n"

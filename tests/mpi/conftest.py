"""pytest under mpiexec: every rank runs the same tests; only rank 0's output is shown.

A test that fails on any rank prints its report (with the rank) on that rank's real stderr
and aborts the job: the other ranks may be waiting for it in a message, and a failing run
must end, non-zero, instead of hanging. Outside mpiexec nothing changes.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import time

import pytest


def _launcher(var_sets: tuple[tuple[str, str], ...]) -> tuple[int, int] | None:
    for rank_var, size_var in var_sets:
        r, s = os.environ.get(rank_var), os.environ.get(size_var)
        if r is not None and s is not None and r.isdigit() and s.isdigit():
            return int(r), int(s)
    return None


_WHERE = _launcher(
    (
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
        ("PMIX_RANK", "PMIX_SIZE"),
    )
)
RANK, SIZE = _WHERE if _WHERE else (0, 1)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Every rank gets a temporary directory of its own (ranks sharing pytest's numbered
    directories race when they clean them up), removed when the rank exits."""
    if _WHERE is not None and config.option.basetemp is None:
        base = tempfile.mkdtemp(prefix=f"hypercuboid-mpi-rank{RANK}-")
        atexit.register(shutil.rmtree, base, ignore_errors=True)
        config.option.basetemp = base


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Only rank 0 reports: the other ranks lose their terminal reporter. A run meant for the
    native runner (``HYPERCUBOID_RUNNER`` auto or native) stops at once if it cannot load,
    instead of passing on the Python runner."""
    config = session.config
    if os.environ.get("HYPERCUBOID_RUNNER") in ("auto", "native") and _WHERE is not None:
        from hypercuboid.mpi import native

        try:
            native.load()
        except Exception as e:  # noqa: BLE001 - reported as the reason the session stops
            pytest.exit(f"the native runner does not load: {e}", returncode=3)
    if _WHERE is not None and RANK != 0:
        reporter = config.pluginmanager.getplugin("terminalreporter")
        if reporter is not None:
            config.pluginmanager.unregister(reporter)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and _WHERE is not None and SIZE > 1:
        capman = item.config.pluginmanager.getplugin("capturemanager")
        if capman is not None:
            capman.suspend_global_capture(in_=True)
        sys.stderr.write(
            f"\n[rank {RANK} of {SIZE}] {item.nodeid} failed ({rep.when}):\n"
            f"{rep.longreprtext}\n[rank {RANK}] aborting the job\n"
        )
        sys.stderr.flush()
        time.sleep(1.0)  # let mpiexec forward the report before the job is killed
        from mpi4py import MPI

        MPI.COMM_WORLD.Abort(1)


@pytest.fixture
def comm():
    """MPI_COMM_WORLD (MPI is initialised on first use only)."""
    from mpi4py import MPI

    return MPI.COMM_WORLD

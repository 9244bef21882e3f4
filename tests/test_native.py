"""The native runner's build and load path (outside mpiexec): where the compiler wrapper and
the cache come from, what a missing or failing compiler says, and the runner names accepted.

Each case runs in a fresh interpreter (a singleton MPI process), since the loader keeps the
library, or the reason it cannot load, for the life of the process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypercuboid import _core
from hypercuboid.errors import ScheduleError
from hypercuboid.mpi import native

pytest.importorskip("mpi4py")

PYTHON_DIR = Path(__file__).resolve().parents[1] / "python"


def _child(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.pop("HYPERCUBOID_RUNNER", None)
    full.update(
        {
            "PYTHONPATH": str(PYTHON_DIR),
            "OMPI_MCA_pml": "ob1",
            "OMPI_MCA_btl": "self,sm",
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "HYPERCUBOID_CACHE": str(tmp_path / "cache"),
            **env,
        }
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120
    )


LOAD = """
from hypercuboid.mpi import native
from hypercuboid.errors import MPIError
try:
    native.load()
except MPIError as e:
    print("MPIError:", e)
else:
    print("loaded")
print("available:", native.available())
"""


def test_missing_compiler_is_named(tmp_path: Path) -> None:
    done = _child(LOAD, tmp_path, HYPERCUBOID_MPICC=str(tmp_path / "no-such-mpicc"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        f"MPIError: the native runner cannot be compiled: {tmp_path / 'no-such-mpicc'} "
        "cannot run (No such file or directory)",
        "available: False",
    ]
    # nothing was left behind but the empty build directory
    assert not list((tmp_path / "cache").rglob("*.so"))


def test_compiler_failure_is_named(tmp_path: Path) -> None:
    failing = tmp_path / "badcc"
    failing.write_text("#!/bin/sh\necho 'badcc: error: no licence for C' >&2\nexit 4\n")
    failing.chmod(0o755)
    done = _child(LOAD, tmp_path, HYPERCUBOID_MPICC=str(failing))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"MPIError: the native runner cannot be compiled with {failing}: "
        "badcc: error: no licence for C",
        "available: False",
    ]
    assert not list((tmp_path / "cache").rglob("*.so"))
    assert not list((tmp_path / "cache").rglob("*.tmp"))


def test_built_into_the_cache_once(tmp_path: Path) -> None:
    done = _child(LOAD, tmp_path)  # the MPI wheel the repo installs ships mpicc
    assert done.stdout.splitlines() == ["loaded", "available: True"], done.stderr
    libs = list((tmp_path / "cache" / "native").glob("*/libhc_runner.so"))
    assert len(libs) == 1
    src = libs[0].parent / "src"
    # the sources are the core's, with the codes header it generates
    assert sorted(p.name for p in src.iterdir()) == sorted(dict(_core.native_sources()))
    assert (src / "hc_codes.h").read_text() == _core.c_codes_header()
    stamp = libs[0].stat().st_mtime_ns
    again = _child(LOAD, tmp_path)
    assert again.stdout.splitlines() == ["loaded", "available: True"]
    assert libs[0].stat().st_mtime_ns == stamp  # reused, not rebuilt


def test_runner_runs_a_singleton_allreduce(tmp_path: Path) -> None:
    code = """
import numpy as np
from mpi4py import MPI
from hypercuboid.mpi import allreduce
x = np.arange(5, dtype=np.int32)
print(allreduce(MPI.COMM_WORLD, x, algorithm="ring", runner="native").tolist())
"""
    done = _child(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0, 1, 2, 3, 4]"


def test_runner_names() -> None:
    assert native.RUNNERS == ("auto", "native", "python")
    assert native.check_runner("python") == "python"
    with pytest.raises(ScheduleError) as e:
        native.check_runner("fast")
    assert str(e.value) == "unknown runner 'fast'; accepted: auto, native, python"


def test_runner_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYPERCUBOID_RUNNER", "native")
    assert native.check_runner(None) == "native"
    monkeypatch.setenv("HYPERCUBOID_RUNNER", "c")
    with pytest.raises(ScheduleError) as e:
        native.check_runner(None)
    assert str(e.value) == "HYPERCUBOID_RUNNER=c: unknown runner; accepted: auto, native, python"
    monkeypatch.delenv("HYPERCUBOID_RUNNER")
    assert native.check_runner(None) == "auto"


def test_dtypes_without_a_c_type() -> None:
    import numpy as np

    assert native.supports(np.dtype(np.float64))
    assert not native.supports(np.dtype(">f8"))  # byte-swapped: MPI carries it, C cannot add it
    assert not native.supports(np.dtype(np.complex128))
    assert not native.use_native("auto", np.dtype(np.complex128))
    with pytest.raises(ScheduleError) as e:
        native.use_native("native", np.dtype(np.complex128))
    assert str(e.value) == (
        "the native runner has no C type for dtype complex128; accepted: "
        f"{', '.join(native.DTYPES)} (runner='python' runs any dtype MPI carries)"
    )


def test_cache_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HYPERCUBOID_CACHE", str(tmp_path / "a"))
    assert native.cache_dir() == tmp_path / "a"
    monkeypatch.delenv("HYPERCUBOID_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert native.cache_dir() == tmp_path / "x" / "hypercuboid"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert native.cache_dir() == tmp_path / "h" / ".cache" / "hypercuboid"

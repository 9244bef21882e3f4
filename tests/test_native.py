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
from mpi_env import OMPI_ENV

pytest.importorskip("mpi4py")

PYTHON_DIR = Path(__file__).resolve().parents[1] / "python"


def _child(code: str, tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.pop("HYPERCUBOID_RUNNER", None)
    full.update(
        {
            "PYTHONPATH": str(PYTHON_DIR),
            **OMPI_ENV,
            "HYPERCUBOID_CACHE": str(tmp_path / "cache"),
            **env,
        }
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
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


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One runner cache for the tests below (the runner is compiled once)."""
    return tmp_path_factory.mktemp("runner")


WAIT = """
import numpy as np
from mpi4py import MPI
from hypercuboid import schedules
from hypercuboid.errors import MPIError
from hypercuboid.mpi import native
x = np.arange(8.0)
y = np.zeros(8)
b = native.NativeBound(schedules.allreduce("ring", 1, 8).program(0), x, y, "sum")
try:
    b.run(MPI.COMM_WORLD)
except MPIError as e:
    print(e)
else:
    print("policy", b.lib.hc_plan_wait_policy(b._plan), bool((y == x).all()))
"""


@pytest.mark.parametrize(
    ("env", "out"),
    [
        ({"HYPERCUBOID_WAIT": "block"}, "policy 1 True"),
        ({"HYPERCUBOID_WAIT": "yield"}, "policy 0 True"),
        ({"OMPI_COMM_WORLD_LOCAL_SIZE": "1"}, "policy 1 True"),  # a core per rank: block
        ({"MPI_LOCALNRANKS": "1"}, "policy 1 True"),  # (MPICH's Hydra)
        ({"OMPI_COMM_WORLD_LOCAL_SIZE": "100000"}, "policy 0 True"),  # oversubscribed: yield
        ({"HYPERCUBOID_WAIT": "auto", "MPI_LOCALNRANKS": "100000"}, "policy 0 True"),
        ({}, "policy 0 True"),  # the launcher does not say: yield
        (
            {"HYPERCUBOID_WAIT": "sometimes"},
            "rank 0: HYPERCUBOID_WAIT=sometimes: accepted block, yield or auto",
        ),
    ],
)
def test_how_a_rank_waits(env: dict[str, str], out: str, cache: Path) -> None:
    clean = {"OMPI_COMM_WORLD_LOCAL_SIZE": "", "MPI_LOCALNRANKS": "", "SLURM_NTASKS_PER_NODE": ""}
    done = _child(WAIT, cache, **{**clean, **env})
    assert done.stdout.strip() == out, done.stderr


HALO = """
import sys
import numpy as np
from mpi4py import MPI
from hypercuboid import halo, lbm
from hypercuboid.mpi.halo import halo_exchange, halo_start, runner_of
comm = MPI.COMM_WORLD
same = []
for variant in ("blocking", "nonblocking", "nonblocking:unpack=on_arrival", "reduced"):
    for layout in ("soa", "aos"):
        d = halo.Decomposition(lattice=(7, 6, 5), ranks=comm.size, periodic=(True,) * 3)
        s = halo.schedule(variant, d, values=19, bytes=8)
        sub = tuple(d.subdomain(comm.rank))
        ran = {}
        for runner in ("python", "native"):
            f = lbm.allocate(sub, layout)
            rng = np.random.default_rng(comm.rank)
            f[...] = rng.uniform(-1, 1, size=f.shape)
            f[0, 0, 0, 0] = np.nan  # a halo cell the exchange overwrites
            for _ in range(2):
                halo_exchange(comm, s, f, runner)
            h = halo_start(comm, s, f, runner)
            h.end()
            assert h.done and runner_of(comm, s, f, runner) == runner
            ran[runner] = f.copy().view(np.uint64)
        same.append(bool(np.array_equal(ran["python"], ran["native"])))
ok = comm.allreduce(all(same) and len(same) == 8, op=MPI.LAND)
if comm.rank == 0:
    print("identical" if ok else f"differ {same}")
"""


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_the_halo_exchange_on_the_native_runner_gives_the_pythons_bits(
    ranks: int, cache: Path
) -> None:
    """Every halo variant on both layouts, random values: after three exchanges (the plans
    reused, one through halo_start) the whole array, halo included, is bitwise the Python
    runner's, on 1, 2 and 4 ranks (4 oversubscribed)."""
    if ranks == 1:
        done = _child(HALO, cache)
    else:
        mpiexec = Path(sys.executable).parent / "mpiexec"
        if not mpiexec.exists():
            pytest.skip("no mpiexec next to the Python executable")
        code = cache / "halo_bits.py"
        code.write_text(HALO)
        launch = [str(mpiexec), "--oversubscribe", "--bind-to", "none", "-n", str(ranks)]
        run = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
        done = _child(run, cache, *launch, sys.executable, str(code))
    assert done.stdout.strip() == "identical", done.stderr[-2000:]


REGIONS = """
import numpy as np
from mpi4py import MPI
from hypercuboid import halo, lbm, schedules
from hypercuboid.errors import MPIError
from hypercuboid.mpi import native
d = halo.Decomposition(lattice=(4, 4, 4), ranks=1, periodic=(True,) * 3)
prog = halo.schedule("blocking", d, values=19, bytes=8).program(0)
f = lbm.allocate((4, 4, 4), "aos")
lib = native.load()
import ctypes
cprog, keep = native.program_struct(prog)
err = ctypes.create_string_buffer(256)
plan = ctypes.c_void_p()
def create(regs, count):
    rc = lib.hc_plan_create_ex_at(ctypes.byref(cprog), regs, 0, 9, 0, f.ctypes.data,
        f.ctypes.data, count, MPI._addressof(MPI.COMM_WORLD), ctypes.byref(plan), err, 256)
    print(rc, err.value.decode())
create(None, f.size)
regs, keep2 = native.regions_struct(prog, f)
create(ctypes.byref(regs), 100)
regs.dims[3] = 18
create(ctypes.byref(regs), f.size)
"""


def test_a_pack_needs_its_array_and_stays_inside_it(cache: Path) -> None:
    lines = _child(REGIONS, cache).stdout.splitlines()
    assert lines == [
        "-1 op 0 (pack): a pack or unpack needs the array's regions (hc_plan_create_ex)",
        "-1 region 0 leaves its 100-element array",
        "-1 region 0 is of an array of 19 along axis 3, the array has 18",
    ]

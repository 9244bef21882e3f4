"""The native runner: one rank's program executed by compiled C (``native/hc_runner.c``) at the
MPI library's own speed, the same program and issue order as the Python engine.

The C sources come from the Rust core (``_core.native_sources()``: the runner and the codes
header it generates), so the runner always matches the encoding. They are compiled once
against the MPI that mpi4py loaded, with that MPI's compiler wrapper (``mpicc`` next to the
Python executable, as the Open MPI and MPICH wheels install it, else on ``PATH``;
``HYPERCUBOID_MPICC`` names another), into a cache keyed by the MPI library's version string
and the sources (``$HYPERCUBOID_CACHE``, else ``$XDG_CACHE_HOME/hypercuboid``, else
``~/.cache/hypercuboid``), and loaded with ctypes. The communicator crosses as the address of
its handle (``MPI._addressof``), so the same code serves every MPI ABI. Ranks that compile at
the same time take turns on a file lock; the library is renamed into place when complete.

A missing compiler wrapper, or a C compiler it cannot run, is a one-line
:class:`~hypercuboid.errors.MPIError` naming what is missing (:func:`load`);
:func:`available` says whether the runner can be used at all (the executor's default runner
falls back to Python when it cannot, or for a dtype the runner has no C type for).
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hypercuboid import _core
from hypercuboid.errors import MPIError, ScheduleError

#: The runners an entry point accepts: ``native`` (compiled C), ``python`` (mpi4py + NumPy),
#: ``auto`` (native where it loads and has a C type for the dtype, else Python: the default).
RUNNERS: tuple[str, ...] = ("auto", "native", "python")

#: NumPy dtypes the runner reduces (the core's numeric dtypes).
DTYPES: tuple[str, ...] = tuple(_core.DTYPES)

_lib: Any = None
_error: MPIError | None = None


class _Program(ctypes.Structure):
    _fields_ = [
        ("nops", ctypes.c_int64),
        ("kind", ctypes.c_void_p),
        ("peer", ctypes.c_void_p),
        ("tag", ctypes.c_void_p),
        ("bytes", ctypes.c_void_p),
        ("combine", ctypes.c_void_p),
        ("time_ps", ctypes.c_void_p),
        ("buf_slot", ctypes.c_void_p),
        ("buf_offset", ctypes.c_void_p),
        ("buf_len", ctypes.c_void_p),
        ("src_slot", ctypes.c_void_p),
        ("src_offset", ctypes.c_void_p),
        ("src_len", ctypes.c_void_p),
        ("ndeps", ctypes.c_int64),
        ("dep_op", ctypes.c_void_p),
        ("dep_on", ctypes.c_void_p),
        ("dep_kind", ctypes.c_void_p),
        ("nscratch", ctypes.c_int64),
        ("scratch", ctypes.c_void_p),
    ]


class _Regions(ctypes.Structure):
    _fields_ = [
        ("region", ctypes.c_void_p),
        ("nregions", ctypes.c_int64),
        ("rows", ctypes.c_void_p),
        ("dims", ctypes.c_int64 * 4),
        ("stride", ctypes.c_int64 * 4),
    ]


#: Flags of ``hc_plan_create_ex`` (``native/hc_runner.h``): persistent requests started with
#: ``MPI_Startall``; synchronous sends.
PLAN_PERSISTENT, PLAN_SSEND = 1, 2


def cache_dir() -> Path:
    """Where compiled runners are kept."""
    env = os.environ.get("HYPERCUBOID_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "hypercuboid"


def find_mpicc() -> str:
    """The MPI compiler wrapper to build with: ``$HYPERCUBOID_MPICC``, else ``mpicc`` next to
    the Python executable (where the MPI wheels put it), else on ``PATH``."""
    env = os.environ.get("HYPERCUBOID_MPICC")
    if env:
        return env
    here = Path(sys.executable).parent / "mpicc"
    if here.exists():
        return str(here)
    found = shutil.which("mpicc")
    if found:
        return found
    raise MPIError(
        f"the native runner needs an MPI C compiler wrapper: no mpicc in {here.parent} or on "
        "PATH (install the MPI wheel, set HYPERCUBOID_MPICC, or use runner='python')"
    )


def _library_version() -> str:
    from mpi4py import MPI

    # some libraries count the terminating NUL in the string's length
    return MPI.Get_library_version().strip("\x00 \n\t")


def _build(mpicc: str, out: Path, sources: dict[str, str]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.parent / "src"
    src.mkdir(exist_ok=True)
    for name, text in sources.items():
        (src / name).write_text(text)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    # -ffp-contract=off: no fused multiply-adds NumPy would not make (hc_runner.c says so too)
    cmd = [
        mpicc,
        "-std=c99",
        "-O2",
        "-fPIC",
        "-shared",
        "-ffp-contract=off",
        "-Wall",
        "-Werror",
        "-o",
        str(tmp),
        str(src / "hc_runner.c"),
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        raise MPIError(
            f"the native runner cannot be compiled: {mpicc} cannot run ({e.strerror})"
        ) from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        first = lines[0] if lines else f"exit status {done.returncode}"
        raise MPIError(f"the native runner cannot be compiled with {mpicc}: {first}")
    os.replace(tmp, out)


def _declare(lib: Any) -> None:
    """Sets the C prototype of each entry point of the runner (all return an int status but
    ``hc_plan_free``); ``err`` is the caller's buffer for an error message and its length."""
    vp, i, u64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64
    err = [ctypes.c_char_p, ctypes.c_size_t]
    create = [ctypes.POINTER(_Program), i, i, vp, vp, u64, vp, ctypes.POINTER(vp), *err]
    run = [vp, ctypes.c_double, ctypes.POINTER(ctypes.c_int64), *err]
    prototypes: dict[str, list[Any]] = {
        "hc_plan_create_at": create,
        "hc_plan_create_ex_at": [
            ctypes.POINTER(_Program),
            ctypes.POINTER(_Regions),
            i,
            *create[1:],
        ],
        "hc_plan_run": run,
        "hc_plan_finish": run,
        "hc_plan_start": [run[0], *run[2:]],
        "hc_plan_wait_policy": [vp],
        "hc_plan_time": [vp, i, i, i, vp, *err],
        "hc_time_library_allreduce": [vp, vp, u64, i, i, vp, i, i, i, vp, *err],
        "hc_time_library_alltoall": [vp, vp, u64, i, vp, i, i, i, vp, *err],
    }
    for name, args in prototypes.items():
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int
        fn.argtypes = args
    lib.hc_plan_free.restype = None
    lib.hc_plan_free.argtypes = [vp]


def load() -> Any:
    """The compiled runner (built into the cache on first use), or MPIError saying what is
    missing."""
    global _lib, _error
    if _lib is not None:
        return _lib
    if _error is not None:
        raise _error
    try:
        version = _library_version()
        sources = dict(_core.native_sources())
        mpicc = find_mpicc()
        key = hashlib.sha256("\0".join([version, mpicc, *sources.values()]).encode()).hexdigest()[
            :16
        ]
        vendor = version.split(",")[0].split()[0].lower() if version else "mpi"
        out = cache_dir() / "native" / f"{vendor}-{key}" / "libhc_runner.so"
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            with open(out.parent / ".lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not out.exists():
                    _build(mpicc, out, sources)
        lib = ctypes.CDLL(str(out), mode=ctypes.RTLD_GLOBAL)
        buf = ctypes.create_string_buffer(8192)
        lib.hc_runner_library_version(buf, ctypes.c_size_t(len(buf)))
        built_for = buf.value.decode(errors="replace").strip("\x00 \n\t")
        if built_for != version:
            raise MPIError(
                f"the native runner in {out} runs on '{built_for.splitlines()[0]}' but mpi4py "
                f"loaded '{version.splitlines()[0]}'; set HYPERCUBOID_MPICC to that MPI's mpicc"
            )
        _declare(lib)
    except MPIError as e:
        _error = e
        raise
    _lib = lib
    return lib


def free_plan(lib: Any, plan: ctypes.c_void_p) -> ctypes.c_void_p:
    """Frees ``plan`` (nothing when it is null, or when MPI is finalized and took its requests
    with it); the null plan that replaces it."""
    if plan:
        from mpi4py import MPI

        if not MPI.Is_finalized():
            lib.hc_plan_free(plan)
    return ctypes.c_void_p()


def available() -> bool:
    """Whether the native runner can be built and loaded here."""
    try:
        load()
    except MPIError:
        return False
    return True


def supports(dtype: np.dtype) -> bool:
    """Whether the runner has a C type for ``dtype`` (the core's numeric dtypes)."""
    return dtype.name in DTYPES and dtype.byteorder in ("=", "|")


def check_runner(runner: str | None) -> str:
    """``runner`` if it is one of :data:`RUNNERS`; None means ``$HYPERCUBOID_RUNNER`` when set,
    else ``auto``. Anything else is a ScheduleError."""
    if runner is None:
        runner = os.environ.get("HYPERCUBOID_RUNNER") or "auto"
        if runner not in RUNNERS:
            raise ScheduleError(
                f"HYPERCUBOID_RUNNER={runner}: unknown runner; accepted: {', '.join(RUNNERS)}"
            )
        return runner
    if runner not in RUNNERS:
        raise ScheduleError(f"unknown runner '{runner}'; accepted: {', '.join(RUNNERS)}")
    return runner


def use_native(runner: str, dtype: np.dtype) -> bool:
    """Whether a call with ``runner`` (checked by :func:`check_runner`) on ``dtype`` runs
    natively: ``auto`` picks native when the runner loads and has a C type for the dtype;
    ``native`` insists (MPIError when it cannot load, ScheduleError for a dtype it has no type
    for)."""
    if runner == "python":
        return False
    if runner == "auto":
        return supports(dtype) and available()
    if not supports(dtype):
        raise ScheduleError(
            f"the native runner has no C type for dtype {dtype}; accepted: "
            f"{', '.join(DTYPES)} (runner='python' runs any dtype MPI carries)"
        )
    load()
    return True


_COLS = {
    "kind": np.uint8,
    "peer": np.int64,
    "tag": np.int32,
    "bytes": np.uint64,
    "combine": np.int8,
    "time_ps": np.uint64,
    "buf_slot": np.int32,
    "buf_offset": np.uint64,
    "buf_len": np.uint64,
    "src_slot": np.int32,
    "src_offset": np.uint64,
    "src_len": np.uint64,
}


def program_struct(program: Any) -> tuple[_Program, list[np.ndarray]]:
    """The ``hc_program`` of a program's columns, and the arrays it points into (keep them
    alive while the struct is used)."""
    cols = {k: np.ascontiguousarray(program[k], dtype=t) for k, t in _COLS.items()}
    deps = [
        np.ascontiguousarray(c, dtype=t)
        for c, t in zip(program.dep_columns, (np.uint32, np.uint32, np.uint8), strict=True)
    ]
    scratch = np.ascontiguousarray(program["scratch"], dtype=np.uint64)
    prog = _Program(
        nops=len(cols["kind"]),
        ndeps=len(deps[0]),
        nscratch=len(scratch),
        dep_op=deps[0].ctypes.data,
        dep_on=deps[1].ctypes.data,
        dep_kind=deps[2].ctypes.data,
        scratch=scratch.ctypes.data,
        **{k: v.ctypes.data for k, v in cols.items()},
    )
    return prog, [*cols.values(), *deps, scratch]


def regions_struct(program: Any, f: np.ndarray) -> tuple[_Regions, list[np.ndarray]]:
    """The ``hc_regions`` of a program's pack and unpack ops on the array ``f`` (its logical
    dims and its strides in elements), and the arrays it points into."""
    region = np.ascontiguousarray(program["region"], dtype=np.int64)
    rows = np.ascontiguousarray(program["regions"], dtype=np.uint64)
    regs = _Regions(
        region=region.ctypes.data,
        nregions=len(rows) // _core.REGION_FIELDS,
        rows=rows.ctypes.data,
        dims=(ctypes.c_int64 * 4)(*f.shape),
        stride=(ctypes.c_int64 * 4)(*(s // f.itemsize for s in f.strides)),
    )
    return regs, [region, rows]


class NativeBound:
    """A program bound to an input, an output and its reduction operator, run by the C runner:
    the plan (scratch buffers, temporaries, persistent requests) is made on first use with a
    communicator and reused while the communicator stays the same."""

    def __init__(self, program: Any, inbuf: np.ndarray, outbuf: np.ndarray, op: str | None) -> None:
        self.lib = load()
        self.program = program
        self.inbuf = inbuf
        self.outbuf = outbuf
        self.dtype_code = _core.DTYPE_CODES[outbuf.dtype.name]
        self.op_code = _core.REDUCE_OPS.index(op) if op is not None else 0
        self._plan = ctypes.c_void_p()
        self._comm: Any = None
        # what every run passes, made once (a run costs one ctypes call)
        self._err = ctypes.create_string_buffer(1024)
        self._errlen = ctypes.c_size_t(len(self._err))
        self._failed = ctypes.c_int64(-1)
        self._failed_ref = ctypes.byref(self._failed)
        self._run = self.lib.hc_plan_run

    def _make(self, comm: Any) -> None:
        from mpi4py import MPI

        self.free()
        prog, _keep = program_struct(self.program)
        err = ctypes.create_string_buffer(1024)
        handle = ctypes.c_void_p(MPI._addressof(comm))
        rc = self.lib.hc_plan_create_at(
            ctypes.byref(prog),
            self.dtype_code,
            self.op_code,
            ctypes.c_void_p(self.inbuf.ctypes.data),
            ctypes.c_void_p(self.outbuf.ctypes.data),
            ctypes.c_uint64(self.outbuf.size),
            handle,
            ctypes.byref(self._plan),
            err,
            ctypes.c_size_t(len(err)),
        )
        if rc != 0:
            self._plan = ctypes.c_void_p()
            raise MPIError(f"rank {comm.Get_rank()}: {err.value.decode(errors='replace')}")
        self._comm = comm

    def run(self, comm: Any, timeout: float | None = None) -> None:
        """Runs the program once on ``comm``; MPIError names the rank and the op that failed."""
        if comm is not self._comm:
            self._make(comm)
        rc = self._run(self._plan, timeout or 0.0, self._failed_ref, self._err, self._errlen)
        if rc != 0:
            self._raise(comm)

    def time(self, comm: Any, iterations: int, warmup: int, block: int = 1) -> np.ndarray:
        """Per-run times in µs, timed in C as OSU times a collective (``warmup`` untimed
        rounds, then ``iterations`` rounds of ``block`` runs, a barrier after each round)."""
        if comm is not self._comm:
            self._make(comm)
        out = np.empty(iterations, dtype=np.float64)
        rc = self.lib.hc_plan_time(
            self._plan, iterations, warmup, block, out.ctypes.data, self._err, self._errlen
        )
        if rc != 0:
            self._raise(comm)
        return out

    def _raise(self, comm: Any) -> None:
        msg = self._err.value.decode(errors="replace")
        if self._failed.value >= 0:
            # name the ops as the Python engine does ("op 3 (recv)" -> "op 3 (recv out[0:4]
            # from rank 1 tag 0)")
            from hypercuboid.mpi.engine import compile_program

            plan = compile_program(
                self.program,
                rank=self.program.rank,
                nranks=self.program.nranks,
                count=self.program.input_len,
            )
            msg = re.sub(r"op (\d+) \([a-z]+\)", lambda m: plan.describe(int(m[1])), msg)
        self.free()
        raise MPIError(f"rank {comm.Get_rank()}: {msg}")

    def free(self) -> None:
        """Frees the plan (made again on the next run)."""
        self._plan = free_plan(self.lib, self._plan)
        self._comm = None

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # noqa: BLE001 - at interpreter exit
            pass


def time_library_allreduce(
    comm: Any,
    sendbuf: np.ndarray,
    recvbuf: np.ndarray,
    op: str,
    iterations: int,
    warmup: int,
    block: int = 1,
) -> np.ndarray:
    """The library's own ``MPI_Allreduce`` timed by the same C loop as
    :meth:`NativeBound.time`: per-call times in µs."""
    return _time_library(
        "allreduce",
        comm,
        sendbuf,
        recvbuf,
        recvbuf.size,
        [_core.REDUCE_OPS.index(op)],
        iterations,
        warmup,
        block,
    )


def time_library_alltoall(
    comm: Any,
    sendbuf: np.ndarray,
    recvbuf: np.ndarray,
    iterations: int,
    warmup: int,
    block: int = 1,
) -> np.ndarray:
    """The library's own ``MPI_Alltoall`` (``sendbuf.size // comm.size`` elements per pair of
    ranks) timed by the same C loop as :meth:`NativeBound.time`: per-call times in µs."""
    count = recvbuf.size // comm.Get_size()
    return _time_library("alltoall", comm, sendbuf, recvbuf, count, [], iterations, warmup, block)


def _time_library(
    collective: str,
    comm: Any,
    sendbuf: np.ndarray,
    recvbuf: np.ndarray,
    count: int,
    extra: list[int],
    iterations: int,
    warmup: int,
    block: int,
) -> np.ndarray:
    """The library's own ``collective`` timed by the runner's ``hc_time_library_<collective>``
    (``count`` elements, then ``extra`` arguments such as the op): per-call times in µs."""
    from mpi4py import MPI

    out = np.empty(iterations, dtype=np.float64)
    err = ctypes.create_string_buffer(1024)
    rc = getattr(load(), f"hc_time_library_{collective}")(
        sendbuf.ctypes.data,
        recvbuf.ctypes.data,
        count,
        _core.DTYPE_CODES[recvbuf.dtype.name],
        *extra,
        MPI._addressof(comm),
        iterations,
        warmup,
        block,
        out.ctypes.data,
        err,
        len(err),
    )
    if rc != 0:
        raise MPIError(f"rank {comm.Get_rank()}: {err.value.decode(errors='replace')}")
    return out

"""Application traces (docs/trace.md): record an unmodified MPI program with ``libhc_trace.so``,
read the trace, see where its time went, and replay its communication as a schedule.

>>> t = AppTrace.load("app.hct")                     # doctest: +SKIP
>>> t.summary().compute_ns                           # doctest: +SKIP
>>> conv = t.convert(allreduce="ring")               # doctest: +SKIP
>>> conv.schedule.simulate("loggops:L=3000,o=1500,g=1000,G=6").completion_time_ns  # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypercuboid import _core
from hypercuboid.schedule import Schedule

#: The MPI libraries the recorder is built for, by the name of their directory under the
#: native build directory (``make native``).
LIBRARIES = ("openmpi", "mpich")


def native_dir() -> Path:
    """Where ``make native`` put the libraries: ``$HYPERCUBOID_NATIVE_DIR``, else
    ``target/native`` of the source tree (``$CARGO_TARGET_DIR/native``)."""
    if os.environ.get("HYPERCUBOID_NATIVE_DIR"):
        return Path(os.environ["HYPERCUBOID_NATIVE_DIR"])
    root = Path(__file__).resolve().parents[2]
    return Path(os.environ.get("CARGO_TARGET_DIR", root / "target")) / "native"


def which_mpi(launcher: str) -> str:
    """``openmpi`` or ``mpich``: the MPI whose launcher ``launcher`` is (its ``--version``)."""
    exe = shutil.which(launcher) or launcher
    try:
        out = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError as e:
        raise ValueError(f"cannot run {launcher} --version: {e}") from None
    text = (out.stdout + out.stderr).lower()
    if "open mpi" in text or "open-mpi" in text or "openrte" in text or "prte" in text:
        return "openmpi"
    if "hydra" in text or "mpich" in text:
        return "mpich"
    raise ValueError(
        f"{launcher} --version names neither Open MPI nor MPICH; give --recorder PATH "
        "(a libhc_trace.so built with the application's MPI)"
    )


def library_path(mpi: str) -> Path:
    """The recorder built for ``mpi`` (one of :data:`LIBRARIES`)."""
    if mpi not in LIBRARIES:
        raise ValueError(f"MPI {mpi!r}: accepted: {', '.join(LIBRARIES)}")
    path = native_dir() / mpi / "libhc_trace.so"
    if not path.exists():
        raise ValueError(f"no {path}: build it with 'make native'")
    return path


@dataclass(frozen=True)
class RunResult:
    """What :func:`record` did: the trace written, the command's exit status and the ranks
    recorded."""

    path: Path
    returncode: int
    ranks: int


def record(
    command: list[str],
    output: str | Path,
    *,
    library: str | Path | None = None,
    flush_bytes: int | None = None,
    env: dict[str, str] | None = None,
) -> RunResult:
    """Runs ``command`` (``["mpiexec", "-n", "4", "./app"]``) with the recorder preloaded in
    every process it starts, and packs the ranks' files into ``output`` (``.hct``). The
    recorder is the one built for the launcher's MPI (``command[0] --version``) unless
    ``library`` names one. A command that fails still leaves the trace of what its ranks
    recorded (a partial trace: :meth:`AppTrace.convert` with ``partial=True``)."""
    if not command:
        raise ValueError("no command to record: give it after --, e.g. -- mpiexec -n 4 ./app")
    lib = Path(library) if library is not None else library_path(which_mpi(command[0]))
    if not lib.is_file():
        raise ValueError(f"--recorder {lib}: no such file")
    with open(lib, "rb") as fh:
        if fh.read(4) != b"\x7fELF":
            # else the loader says so on every process and the run records nothing
            raise ValueError(
                f"--recorder {lib}: not a shared library (no ELF header); give the "
                "libhc_trace.so that 'make native' builds"
            )
    out = Path(output)
    with tempfile.TemporaryDirectory(prefix="hctrace-") as tmp:
        prefix = Path(tmp) / "rank"
        e = dict(os.environ if env is None else env)
        pre = e.get("LD_PRELOAD", "")
        e["LD_PRELOAD"] = f"{lib.resolve()}:{pre}" if pre else str(lib.resolve())
        e["HYPERCUBOID_TRACE_PREFIX"] = str(prefix)
        if flush_bytes is not None:
            e["HYPERCUBOID_TRACE_FLUSH"] = str(flush_bytes)
        try:
            done = subprocess.run(command, env=e, check=False)
        except OSError as err:
            raise ValueError(f"cannot run {command[0]}: {err}") from None
        files = sorted(
            Path(tmp).glob("rank.*"),
            key=lambda p: int(p.suffix[1:]) if p.suffix[1:].isdigit() else -1,
        )
        if not files:
            raise ValueError(
                f"{' '.join(command)} exited with {done.returncode} and no rank recorded anything "
                "(is it an MPI program built with the same MPI as the recorder?)"
            )
        _core.trace_pack([str(f) for f in files], str(out))
    return RunResult(out, done.returncode, len(files))


@dataclass(frozen=True)
class Summary:
    """Where the time of a run went: ``categories`` (``compute``, ``point-to-point``, each
    collective, ``other``), per rank ``time_ns`` and ``calls`` per category, each rank's
    ``total_ns``, and ``matrix[i][j]``: bytes rank i sent rank j point-to-point."""

    categories: list[str]
    time_ns: list[list[int]]
    calls: list[list[int]]
    total_ns: list[int]
    matrix: list[list[int]]

    def totals(self) -> dict[str, int]:
        """Each category's time over all ranks (ns), the categories with calls only."""
        out = {}
        for c, name in enumerate(self.categories):
            if any(row[c] for row in self.calls):
                out[name] = sum(row[c] for row in self.time_ns)
        return out


@dataclass(frozen=True)
class Converted:
    """A converted trace: its ``schedule``, the ``records`` converted, a ``note`` for a
    partial trace, and the run's ``measured_ns`` (the latest MPI_Finalize of any rank)."""

    schedule: Schedule
    records: int
    note: str | None
    measured_ns: float


class AppTrace:
    """A recorded run (``AppTrace.load("app.hct")``)."""

    def __init__(self, core: _core.AppTrace, path: str):
        self._core = core
        self.path = path

    @classmethod
    def load(cls, path: str | Path) -> AppTrace:
        """Reads a packed trace (``trace run``'s output) or one rank's file."""
        return cls(_core.AppTrace.load(str(path)), str(path))

    @property
    def nranks(self) -> int:
        return self._core.nranks

    @property
    def library(self) -> str:
        return self._core.library

    @property
    def complete(self) -> bool:
        """Whether every rank reached MPI_Finalize."""
        return self._core.complete

    @property
    def stops(self) -> list[str]:
        """Where the ranks that did not reach MPI_Finalize stop."""
        return [s for s in self._core.stops if s is not None]

    def calls(self, rank: int) -> list[str]:
        """The MPI call of each record of ``rank``, in order (record 0 is MPI_Init)."""
        return self._core.calls(rank)

    def summary(self) -> Summary:
        s = self._core.summary()
        n = self.nranks
        m = s.matrix
        return Summary(
            s.categories, s.time, s.calls, s.total, [m[i * n : (i + 1) * n] for i in range(n)]
        )

    def convert(
        self,
        *,
        compute_scale: float = 1.0,
        allreduce: str | None = None,
        alltoall: str | None = None,
        reduce_ns_per_byte: float = 0.0,
        partial: bool = False,
        name: str | None = None,
        library: bool = False,
    ) -> Converted:
        """The run as a schedule: compute gaps (times ``compute_scale``) as compute ops,
        point-to-point calls as sends and receives in program order, each collective expanded
        with ``allreduce`` / ``alltoall`` (registry specs; defaults in
        ``_core.TRACE_DEFAULTS``) or the default expansion of docs/trace.md. ``partial``
        converts a trace whose ranks stop before MPI_Finalize up to where they stop.
        ``library`` expands each allreduce and alltoall whose algorithm is not given as the
        recorded MPI library (Open MPI or MPICH) would run it (docs/library-selection.md)."""
        c = self._core.convert(
            compute_scale=compute_scale,
            allreduce=allreduce,
            alltoall=alltoall,
            reduce_ns_per_byte=reduce_ns_per_byte,
            partial=partial,
            name=name if name is not None else f"trace {Path(self.path).name}",
            library=library,
        )
        return Converted(Schedule(c.schedule), c.records, c.note, c.measured / 1000.0)

    def export_chrome(self, path: str | Path, *, force: bool = False) -> None:
        """Writes the recorded calls as a Chrome / Perfetto trace (JSON); an existing ``path``
        raises :class:`~hypercuboid.errors.OutputExistsError` unless ``force=True``."""
        from hypercuboid.schedule import refuse_existing

        self._core.write_chrome(refuse_existing(path, force))


def matrix_plot(matrix: list[list[int]], path: str | Path, *, title: str) -> Path:
    """The bytes rank i sent rank j (rows: senders) as a heat map, saved to ``path``."""
    import numpy as np

    from hypercuboid.plot import _pyplot, wrap_title

    plt = _pyplot()
    m = np.asarray(matrix, dtype=float)
    n = len(matrix)
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    im = ax.imshow(m, cmap="viridis", origin="upper")
    fig.colorbar(im, ax=ax, label="bytes")
    ax.set_xlabel("receiver rank")
    ax.set_ylabel("sender rank")
    if n <= 32:
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
    ax.set_title(wrap_title(title))
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return Path(path)


#: One record of the format (docs/trace.md), as NumPy lays it out.
RECORD = [
    ("call", "<u2"),
    ("op", "<u2"),
    ("comm", "<u4"),
    ("t0", "<u8"),
    ("t1", "<u8"),
    ("peer", "<i4"),
    ("tag", "<i4"),
    ("src", "<i4"),
    ("mtag", "<i4"),
    ("bytes", "<u8"),
    ("rbytes", "<u8"),
    ("req", "<u4"),
    ("nextra", "<u4"),
]


def synthetic(nranks: int, iterations: int, path: str | Path, *, gap_ns: int = 2000) -> int:
    """Writes a synthetic trace of ``nranks`` ranks (for benchmarks and tests): per iteration
    each rank computes ``gap_ns``, exchanges 1 KiB with both ring neighbours (Isend, Irecv,
    Waitall) and makes an 8-byte allreduce; returns the number of records (4 per iteration
    and rank, plus MPI_Init and MPI_Finalize)."""
    import numpy as np

    rec = np.dtype(RECORD)
    block = np.dtype(
        [("isend", rec), ("irecv", rec), ("waitall", rec), ("done", "<u8", 6), ("allreduce", rec)]
    )
    files = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(nranks):
            b = np.zeros(iterations, dtype=block)
            start = 1000 + np.arange(iterations, dtype=np.uint64) * (gap_ns + 4000)
            right, left = (r + 1) % nranks, (r - 1) % nranks
            for name, call, off in (
                ("isend", 14, 0),
                ("irecv", 21, 500),
                ("waitall", 31, 1000),
                ("allreduce", 53, 2000),
            ):
                b[name]["call"] = call
                b[name]["t0"] = start + gap_ns + off
                b[name]["t1"] = start + gap_ns + off + 400
                b[name]["peer"] = -2
                b[name]["src"] = -2
                b[name]["mtag"] = -1
            ids = 1 + 2 * np.arange(iterations, dtype=np.uint64)
            b["isend"]["peer"], b["isend"]["tag"], b["isend"]["bytes"] = right, 7, 1024
            b["isend"]["req"] = ids
            b["irecv"]["peer"], b["irecv"]["tag"], b["irecv"]["rbytes"] = left, 7, 1024
            b["irecv"]["req"] = ids + 1
            b["waitall"]["nextra"] = 6
            neg2 = np.uint64(0xFFFFFFFE) << np.uint64(32)
            b["done"][:, 0] = ids | neg2
            b["done"][:, 1] = 0xFFFFFFFF
            b["done"][:, 3] = (ids + 1) | (np.uint64(left) << np.uint64(32))
            b["done"][:, 4] = 7
            b["done"][:, 5] = 1024
            b["allreduce"]["op"], b["allreduce"]["tag"], b["allreduce"]["bytes"] = 1, 8, 8
            head = b"HCTRACE\0" + np.array([1, r, nranks, 4], "<u4").tobytes() + b"synt"
            init = np.zeros(1, rec)
            init["peer"], init["src"], init["mtag"] = -2, -2, -1
            fin = init.copy()
            fin["call"] = 1
            fin["t0"] = fin["t1"] = int(start[-1]) + gap_ns + 6000 if iterations else 10
            f = Path(tmp) / f"rank.{r}"
            f.write_bytes(head + init.tobytes() + b.tobytes() + fin.tobytes())
            files.append(str(f))
        _core.trace_pack(files, str(path))
    return nranks * (4 * iterations + 2)

"""Predict: the simulated time of every algorithm of a collective on a grid of message sizes
and rank counts under one cost model, with the best algorithm of each (rank count, size).

The grid runs in the Rust core (``hypercuboid_core::predict``): every point builds the
algorithm's schedule and simulates it on the model, in parallel over the points.
``recursive_multiplying:auto`` is resolved per point as the PMPI library resolves it.
``hypercuboid tune`` and the PMPI library's decision table (:func:`write_table`) take their
choice from here, so the three agree. The halo exchanges of a 3-D decomposition
(:func:`predict_halo`) have a grid of their own, whose sizes are the ranks' subdomains.

>>> import hypercuboid.predict as hp
>>> p = hp.predict("allreduce", [8, 1 << 20], [4], "postal:alpha=1us,beta=1ns",
...                algorithms=["recursive_doubling", "ring"])
>>> [p.best(4, s).algorithm for s in (8, 1 << 20)]
['recursive_doubling', 'ring']
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hypercuboid import _core, units

#: The grid whose sizes are subdomains: the halo exchange of a 3-D decomposition
#: (:func:`predict_halo`).
HALO = "halo"


def collectives() -> list[str]:
    """The collectives predict knows (:data:`HALO` last)."""
    return [name for name, _ in _core.predict_collectives()] + [HALO]


def default_dtype(collective: str) -> str:
    """The element type a grid of ``collective`` uses unless told (float64 for allreduce,
    uint8 for alltoall)."""
    return dict(_core.predict_collectives()).get(collective, "float64")


def algorithms(collective: str = "allreduce") -> list[str]:
    """The algorithms a grid of ``collective`` runs unless told: every registered one that runs
    from its name alone, ``recursive_multiplying:auto`` in the place of
    ``recursive_multiplying``; for :data:`HALO`, :func:`halo_variants`."""
    if collective == HALO:
        return halo_variants()
    return list(_core.predict_algorithms(collective))


@dataclass(frozen=True)
class Row:
    """One grid point."""

    nranks: int
    bytes: int
    algorithm: str
    """As the grid gave it."""
    schedule: str | None
    """What ran (``recursive_multiplying:auto`` resolved); None if it could not be built."""
    time_ns: float | None
    """The simulated completion time; None with ``error``."""
    error: str | None
    best: bool
    """The least time of its (nranks, bytes), the first algorithm on a tie."""
    subdomain: str | None = None
    """A halo row's subdomain (``16x16x16``: sites per rank); None for a collective."""
    decomp: str | None = None
    """A halo row's ranks along x, y, z (``2x1x1``); None for a collective."""


@dataclass(frozen=True)
class Prediction:
    """A grid's predictions (:func:`predict`)."""

    collective: str
    model: str
    dtype: str
    algorithms: list[str]
    sizes: list[int]
    ranks: list[int]
    rows: list[Row]

    def best(self, nranks: int, nbytes: int) -> Row | None:
        """The best row of ``(nranks, nbytes)``, None if no algorithm ran there."""
        for r in self.rows:
            if r.best and r.nranks == nranks and r.bytes == nbytes:
                return r
        return None

    def row(self, nranks: int, nbytes: int, algorithm: str) -> Row:
        """The row of one point."""
        for r in self.rows:
            if (r.nranks, r.bytes, r.algorithm) == (nranks, nbytes, algorithm):
                return r
        raise KeyError((nranks, nbytes, algorithm))

    def label(self, nbytes: int) -> str:
        """How tables name a size: a halo size's subdomain (``16x16x16``), else the bytes
        (``1M``)."""
        from hypercuboid.mpi.report import human_bytes

        for r in self.rows:
            if r.bytes == nbytes and r.subdomain is not None:
                return r.subdomain
        return human_bytes(nbytes)

    def to_dict(self) -> dict:
        """JSON-ready form (a halo row also has its ``subdomain`` and ``decomp``)."""
        d = asdict(self)
        d["rows"] = [row_dict(r) for r in self.rows]
        return d


def row_dict(r: Any) -> dict:
    """A row (of a prediction or a validation) as a dict, without the halo keys ``subdomain``
    and ``decomp`` where they are None (a collective's)."""
    return {k: v for k, v in asdict(r).items() if v is not None or k not in HALO_KEYS}


#: The keys only a halo row has.
HALO_KEYS = ("subdomain", "decomp")


def predict(
    collective: str,
    sizes: Sequence[int],
    ranks: Sequence[int],
    model: str,
    *,
    algorithms: Sequence[str] | None = None,
    dtype: str | None = None,
    threads: int = 0,
    node: str | None = None,
    tuning: str | None = None,
    call: str | None = None,
) -> Prediction:
    """Simulates every algorithm (None: :func:`algorithms`) of ``collective`` at every size in
    ``sizes`` (bytes of each rank's vector; per pair of ranks for an alltoall) and rank count in
    ``ranks`` under ``model`` (a spec), on ``threads`` threads (0: every core). An unknown
    algorithm, an empty grid or a size that is not a multiple of the element size is a
    :class:`~hypercuboid.errors.ScheduleError`; an algorithm that cannot run at a point is that
    row's ``error``. With ``node`` (``node:ranks=R,bw=BW``, see ``docs/simulate.md``) the
    points run on the node level, ``model`` its LogGOPS host model. ``tuning`` (a postal or
    pipelined spec, such as a calibrated model file's ``models["pipelined"]``) is the model
    ``recursive_multiplying:auto`` is tuned under when ``model`` is LogGOPS. ``call`` (a time
    such as ``201.3ns``, a calibrated model file's ``call``: the native runner's cost per
    collective call beyond its messages) is added to every simulated time, and named after
    the model; it shifts every algorithm of a point alike, so the best stays the same. The halo
    exchanges are :func:`predict_halo`'s."""
    if collective == HALO:
        from hypercuboid.errors import ScheduleError

        raise ScheduleError(
            "predict('halo', ...): a halo grid's sizes are subdomains; call "
            "predict_halo(subdomains, ranks, model, ...)"
        )
    p = _core.predict(
        collective,
        None if algorithms is None else list(algorithms),
        [int(s) for s in sizes],
        [int(n) for n in ranks],
        model,
        dtype,
        threads,
        node,
        tuning,
    )
    call_ps = 0 if call is None else units.parse_time(call)
    rows = [
        Row(
            nranks=r.nranks,
            bytes=r.bytes,
            algorithm=r.algorithm,
            schedule=r.schedule,
            time_ns=None if r.time_ps is None else (r.time_ps + call_ps) / 1e3,
            error=r.error,
            best=r.best,
        )
        for r in p.rows
    ]
    algs = list(dict.fromkeys(r.algorithm for r in rows))
    return Prediction(
        collective=p.collective,
        model=p.model if call is None else f"{p.model} + call={call}",
        dtype=p.dtype,
        algorithms=algs,
        sizes=[int(s) for s in sizes],
        ranks=[int(n) for n in ranks],
        rows=rows,
    )


# -- halo exchanges ---------------------------------------------------------------------------

#: The subdomains of a halo grid unless told: cubes of 8, 16 and 32 sites per rank.
HALO_SUBDOMAINS: tuple[tuple[int, int, int], ...] = ((8, 8, 8), (16, 16, 16), (32, 32, 32))

#: Values per lattice site of a halo grid: the 19 D3Q19 distributions (Ludwig's, and what the
#: reduced exchange needs).
HALO_VALUES = 19


def halo_variants() -> list[str]:
    """The halo exchanges a grid runs unless told: every registered one, by its short name
    (``blocking``, ``nonblocking``, ``reduced``)."""
    from hypercuboid.schedules import algorithms as registry

    return [a.aliases[0] if a.aliases else a.name for a in registry(HALO)]


def parse_subdomains(text: str) -> list[tuple[int, int, int]]:
    """A comma list of subdomains, each ``AxBxC`` or ``N`` (``NxNxN``) sites per rank; a bad
    item is a :class:`~hypercuboid.errors.ScheduleError` naming it and what is accepted."""
    from hypercuboid.errors import ScheduleError

    out = []
    for item in text.split(","):
        t = item.strip()
        try:
            dims = (int(t),) * 3 if t.isdigit() else tuple(_core.parse_dims(t, "subdomain"))
        except ValueError:
            dims = (0,)
        if len(dims) != 3 or min(dims) < 1:
            raise ScheduleError(
                f"invalid subdomain '{t}' in '{text}': accepted a comma list of AxBxC or N "
                "(NxNxN) sites per rank, each at least 1, e.g. 8,16,32x32x16"
            )
        out.append((dims[0], dims[1], dims[2]))
    return out


def halo_dims(nranks: int, decomp: Sequence[int] | None = None) -> tuple[int, int, int]:
    """The ranks along x, y, z of a halo grid on ``nranks`` ranks: ``decomp`` (its product must
    be ``nranks``: a :class:`~hypercuboid.errors.ScheduleError` naming both otherwise), by
    default as close to cubic as possible (``MPI_Dims_create``, the decomposition's)."""
    from hypercuboid import halo
    from hypercuboid.errors import ScheduleError

    if isinstance(nranks, bool) or not isinstance(nranks, int) or not 1 <= nranks < 1 << 32:
        raise ScheduleError(
            f"invalid number of ranks {nranks!r}: a grid's rank counts are whole numbers from "
            "1 to 2^32 - 1"
        )
    if decomp is None:
        # a lattice of nranks sites along each axis splits over any factorization of nranks
        return halo.Decomposition((nranks,) * 3, nranks).dims
    px, py, pz = (int(x) for x in decomp)
    if px * py * pz != nranks:
        raise ScheduleError(
            f"invalid decomposition {px}x{py}x{pz}: it has {px * py * pz} ranks, the grid "
            f"{nranks}; accepted: PxQxR with P*Q*R = {nranks}"
        )
    return (px, py, pz)


def _subdomain(s: Sequence[int]) -> tuple[int, int, int]:
    from hypercuboid.errors import ScheduleError

    t = tuple(s)
    if len(t) != 3 or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in t):
        raise ScheduleError(
            f"invalid subdomain {s!r}: accepted three whole numbers (A, B, C), each at least 1"
        )
    return (t[0], t[1], t[2])


def _triple_text(t: Sequence[int]) -> str:
    return "x".join(str(x) for x in t)


def predict_halo(
    subdomains: Sequence[Sequence[int]],
    ranks: Sequence[int],
    model: str,
    *,
    variants: Sequence[str] | None = None,
    decomp: Sequence[int] | None = None,
    dtype: str | None = None,
    node: str | None = None,
    call: str | None = None,
) -> Prediction:
    """Simulates every halo exchange of ``variants`` (None: :func:`halo_variants`) of the
    D3Q19 lattice (:data:`HALO_VALUES` values of ``dtype``, default float64, per site; every
    axis periodic) for each subdomain of ``subdomains`` (sites per rank, ``(A, B, C)``) on
    each rank count of ``ranks``, decomposed as ``decomp`` (:func:`halo_dims`), under ``model``
    (with ``node`` on the node level; ``call`` added to every time, as :func:`predict` does).

    A size (a row's ``bytes``) is the rank's halo in bytes: the values around its subdomain,
    what the full (``nonblocking``) exchange moves per rank; the row's ``subdomain`` and
    ``decomp`` name the point. An unknown variant, an empty grid or two subdomains of one halo
    size is a :class:`~hypercuboid.errors.ScheduleError`; a variant that cannot run at a point
    is that row's ``error``."""
    from hypercuboid import halo
    from hypercuboid.errors import ScheduleError

    names = halo_variants() if variants is None else [str(v) for v in variants]
    subs = [_subdomain(s) for s in subdomains]
    if not names or not subs or not ranks:
        raise ScheduleError(
            "invalid halo grid: it is empty; give at least one variant "
            f"({', '.join(halo_variants())}), subdomain and rank count"
        )
    dt = dtype or "float64"
    elem = dict(_core.DTYPES).get(dt)
    if elem is None:
        raise ScheduleError(f"invalid dtype '{dt}'; accepted: {', '.join(dict(_core.DTYPES))}")
    one = halo.Decomposition.of_subdomain((1, 1, 1), (1, 1, 1))
    for v in names:  # an unknown variant stops the grid, naming the accepted ones
        halo.schedule(v, one, values=HALO_VALUES, bytes=elem)
    dims = {n: halo_dims(n, decomp) for n in ranks}
    size_of: dict[int, tuple[int, int, int]] = {}
    for sub in subs:
        b = halo.saving(halo.Decomposition.of_subdomain(sub, (1, 1, 1)), 0)[0] * elem
        if b in size_of and size_of[b] != sub:
            raise ScheduleError(
                f"invalid subdomains {_triple_text(size_of[b])} and {_triple_text(sub)}: both "
                f"have a halo of {b} B, the grid's size; accepted: one of them"
            )
        size_of[b] = sub
    sizes = sorted(size_of)
    call_ps = 0 if call is None else units.parse_time(call)
    rows: list[Row] = []
    spec = None
    for n, d in dims.items():
        for b in sizes:
            dec = halo.Decomposition.of_subdomain(size_of[b], d)
            group: list[tuple[str, str | None, float | None, str | None]] = []
            for v in names:
                try:
                    s = halo.schedule(v, dec, values=HALO_VALUES, bytes=elem)
                except ScheduleError as e:
                    group.append((v, None, None, str(e)))
                    continue
                r = s.simulate(model) if node is None else s.simulate(model, node=node)
                spec = r.model
                name = s.meta["name"].removeprefix("halo ")
                group.append((v, name, (r.completion_time_ps + call_ps) / 1e3, None))
            times = [(t, i) for i, (_, _, t, _) in enumerate(group) if t is not None]
            best = min(times)[1] if times else -1
            rows += [
                Row(n, b, v, name, t, err, i == best, _triple_text(size_of[b]), _triple_text(d))
                for i, (v, name, t, err) in enumerate(group)
            ]
    if spec is None:  # no point ran: the model's canonical form all the same
        from hypercuboid.schedule import parse_model

        spec = parse_model(model) + ("" if node is None else f" + {node}")
    return Prediction(
        collective=HALO,
        model=spec if call is None else f"{spec} + call={call}",
        dtype=dt,
        algorithms=names,
        sizes=sizes,
        ranks=list(dims),
        rows=rows,
    )


# -- model files ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelFile:
    """A model file's spec and where it was measured (None where the file does not say)."""

    path: str
    model: str
    node: str | None
    library: str | None
    nranks: int | None
    tuning: str | None = None
    """The file's pipelined model (``models["pipelined"]``): what ``recursive_multiplying:auto``
    is tuned under when ``model`` is LogGOPS."""
    call: str | None = None
    """The file's ``call``: the native runner's cost per collective call (None: not
    measured), which :func:`predict` adds to every simulated time."""


def read_model_file(path: str | Path) -> ModelFile:
    """Reads a model file with the core's reader (:func:`hypercuboid.modelfile.load_file`): its
    model and node specs, and the MPI library and rank count it was measured with (the keys
    ``library`` and ``nranks``, else ``machine.mpi_library`` and ``machine.nranks`` as
    ``bench pingpong`` writes them)."""
    from hypercuboid.modelfile import load_file

    f = load_file(path)
    doc: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    machine = doc.get("machine") if isinstance(doc.get("machine"), dict) else {}
    library = f.library if f.library is not None else machine.get("mpi_library")
    nranks = f.nranks if f.nranks is not None else machine.get("nranks")
    return ModelFile(
        path=str(path),
        model=f.model,
        node=f.node,
        library=library if isinstance(library, str) else None,
        nranks=nranks if isinstance(nranks, int) and not isinstance(nranks, bool) else None,
        tuning=f.models.get("pipelined"),
        call=None if doc.get("call") is None else _call_of(path, doc["call"]),
    )


def _call_of(path: str | Path, text: Any) -> str:
    """A model file's ``call``, checked (a :class:`~hypercuboid.errors.ModelError` starting
    with the path)."""
    from hypercuboid.errors import ModelError
    from hypercuboid.modelfile import check_call

    try:
        return check_call(text)
    except ModelError as e:
        raise ModelError(f"{path}: its {e}") from None


class ModelFileWarning(UserWarning):
    """A model file measured elsewhere than where it is used (another MPI library or version,
    another rank count)."""


def mismatches(
    mf: ModelFile, *, library: str | None = None, ranks: Sequence[int] = ()
) -> list[str]:
    """What differs between where ``mf`` was measured and where it is used: the MPI library
    (compared by its first line) and the rank counts, each naming both."""
    out = []
    if library is not None and mf.library is not None:
        mine, theirs = library.splitlines()[0].strip(), mf.library.splitlines()[0].strip()
        if mine != theirs:
            out.append(f"model file {mf.path} was measured with '{theirs}', this run uses '{mine}'")
    other = sorted({int(n) for n in ranks if mf.nranks is not None and int(n) != mf.nranks})
    if other:
        out.append(
            f"model file {mf.path} was measured on {mf.nranks} ranks, this grid has "
            f"{', '.join(map(str, other))} ranks"
        )
    return out


def warn_mismatches(
    mf: ModelFile, *, library: str | None = None, ranks: Sequence[int] = ()
) -> list[str]:
    """:func:`mismatches`, each also issued as a :class:`ModelFileWarning`."""
    out = mismatches(mf, library=library, ranks=ranks)
    for m in out:
        warnings.warn(m, ModelFileWarning, stacklevel=2)
    return out


# -- the PMPI library's decision table --------------------------------------------------------

#: The first line of a decision table (the PMPI library checks it).
TABLE_HEADER = "# hypercuboid allreduce table 1"


def table_rows(p: Prediction) -> list[tuple[int, int | None, str]]:
    """The decision table of an allreduce prediction: ``(nranks, max_bytes, schedule)``, for
    each rank count the best schedule of each size, a size range reaching up to the geometric
    mean of two neighbouring sizes of the grid (None: no bound), neighbours with the same
    schedule merged."""
    if p.collective != "allreduce":
        from hypercuboid.errors import ScheduleError

        raise ScheduleError(
            f"a decision table is for the PMPI library's MPI_Allreduce; this prediction is of "
            f"{p.collective}"
        )
    out: list[tuple[int, int | None, str]] = []
    sizes = sorted(p.sizes)
    for n in p.ranks:
        bests = [(s, p.best(n, s)) for s in sizes]
        picks = [(s, b.schedule) for s, b in bests if b is not None and b.schedule]
        mine: list[tuple[int, int | None, str]] = []
        for i, (s, sched) in enumerate(picks):
            bound = None if i + 1 == len(picks) else int((s * picks[i + 1][0]) ** 0.5)
            if mine and mine[-1][2] == sched:
                mine[-1] = (n, bound, sched)
            else:
                mine.append((n, bound, sched))
        out += mine
    return out


def table_text(p: Prediction) -> str:
    """The decision table as the PMPI library reads it (``HYPERCUBOID_ALLREDUCE_TABLE``): a
    header line, comments, then ``NRANKS MAX_BYTES ALGORITHM`` per line (``-``: no bound); a
    call of B bytes on N ranks runs the first line of N whose MAX_BYTES is at least B."""
    lines = [
        TABLE_HEADER,
        f"# predicted under {p.model} (hypercuboid predict)",
        "# nranks max_bytes algorithm",
    ]
    for n, bound, sched in table_rows(p):
        lines.append(f"{n} {'-' if bound is None else bound} {sched}")
    return "\n".join(lines) + "\n"


def write_table(p: Prediction, path: str | Path, *, force: bool = False) -> Path:
    """Writes :func:`table_text` to ``path`` (an existing one raises
    :class:`~hypercuboid.errors.OutputExistsError` unless ``force=True``)."""
    from hypercuboid.schedule import refuse_existing

    out = Path(refuse_existing(path, force))
    out.write_text(table_text(p), encoding="utf-8")
    return out


# -- output -----------------------------------------------------------------------------------


def text_table(p: Prediction, nranks: int) -> str:
    """The rows of one rank count: a line per size (a halo grid's: its subdomain), a column
    per algorithm (µs, ``*`` the best, ``-`` where it cannot run), and the best algorithm."""
    head = ["size", *p.algorithms, "best"]
    body = []
    for s in p.sizes:
        cells = [p.label(s)]
        for a in p.algorithms:
            r = p.row(nranks, s, a)
            cells.append(
                "-" if r.time_ns is None else f"{r.time_ns / 1e3:,.3f}{'*' if r.best else ''}"
            )
        b = p.best(nranks, s)
        cells.append("-" if b is None else b.algorithm)
        body.append(cells)
    widths = [max(len(h), *(len(c[i]) for c in body)) for i, h in enumerate(head)]
    fmt = "  ".join(
        f"{{:<{w}}}" if i in (0, len(head) - 1) else f"{{:>{w}}}" for i, w in enumerate(widths)
    )
    return "\n".join(fmt.format(*x).rstrip() for x in [head, *body])


CSV_COLUMNS = ["collective", "nranks", "bytes", "algorithm", "schedule", "time_us", "best", "error"]


def csv_text(p: Prediction) -> str:
    """One CSV line per grid point (:data:`CSV_COLUMNS`; a halo grid's also its
    :data:`HALO_KEYS`)."""
    import csv
    import io

    halo = p.collective == HALO
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS + (list(HALO_KEYS) if halo else []))
    for r in p.rows:
        t = "" if r.time_ns is None else f"{r.time_ns / 1e3:.6f}"
        w.writerow(
            [
                p.collective,
                r.nranks,
                r.bytes,
                r.algorithm,
                r.schedule or "",
                t,
                int(r.best),
                r.error or "",
            ]
            + ([r.subdomain, r.decomp] if halo else [])
        )
    return buf.getvalue()


def plot(p: Prediction, path: str | Path) -> None:
    """Predicted time against size, log-log, one line per algorithm, one panel per rank
    count; the best of each size circled."""
    from hypercuboid.plot import _pyplot

    plt = _pyplot()
    fig, axes = plt.subplots(
        1, len(p.ranks), figsize=(6 * len(p.ranks), 4.5), squeeze=False, sharey=True
    )
    for ax, n in zip(axes[0], p.ranks, strict=True):
        for a in p.algorithms:
            pts = [(s, p.row(n, s, a).time_ns) for s in p.sizes]
            pts = [(s, t / 1e3) for s, t in pts if t is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", ms=3, label=a)
        best = [(s, b.time_ns / 1e3) for s in p.sizes if (b := p.best(n, s)) and b.time_ns]
        if best:
            ax.scatter(*zip(*best, strict=True), s=80, facecolors="none", edgecolors="k")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes of a rank's halo" if p.collective == HALO else "bytes")
        ax.set_title(f"{p.collective}, {n} ranks")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("predicted time (µs)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(p.model, fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = [
    "CSV_COLUMNS",
    "HALO",
    "HALO_KEYS",
    "HALO_SUBDOMAINS",
    "HALO_VALUES",
    "TABLE_HEADER",
    "ModelFile",
    "ModelFileWarning",
    "Prediction",
    "Row",
    "algorithms",
    "collectives",
    "csv_text",
    "default_dtype",
    "halo_dims",
    "halo_variants",
    "mismatches",
    "parse_subdomains",
    "plot",
    "predict",
    "predict_halo",
    "read_model_file",
    "row_dict",
    "table_rows",
    "table_text",
    "text_table",
    "warn_mismatches",
    "write_table",
]

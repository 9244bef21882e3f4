"""Schedule search for recursive multiplying allreduce (Ruefenacht, Bull and Booth, Parallel
Computing 2017): enumerate the schedules of N ranks, rank them by the pipelined postal model's
closed form and by simulation, find the model-optimal factored schedule of large N, and
``b_opt`` (the paper's eq. 5).

>>> import hypercuboid.tune as t
>>> t.optimal_schedule(1_000_000, t.pipelined_model("1.34us", "0.34us"))[0]
'a5,a5,a5,a5,a5,a5,a4,a4,a4'

:func:`rank_algorithms` ranks every registered algorithm of a collective by simulation, with
:mod:`hypercuboid.predict`'s grid function (one point), so ``tune`` and ``predict`` choose
alike.

Models are cost-model spec strings (``pipelined:alpha_p=1.34us,alpha_r=0.34us`` or
``postal:alpha=1us``); :func:`pipelined_model` builds one from times with units.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from hypercuboid import _core
from hypercuboid.errors import ModelError

#: Schedules beyond this many are not enumerated: the dynamic program runs instead.
DEFAULT_MAX_SCHEDULES: int = _core.DEFAULTS["tune"]["max_schedules"]

#: Bytes per element of each dtype name (the core's).
DTYPE_SIZES: dict[str, int] = dict(_core.DTYPES)

#: The paper's Table 1 fits of α_p and α_r (non-blocking sends on ARCHER, a Cray XC30).
TABLE1 = {
    "minimum": ("1.34us", "0.34us"),
    "median": ("1.51us", "0.38us"),
}


def _time(v: str | float | int, name: str) -> str:
    """A time for a spec string: numbers are nanoseconds, strings keep their unit."""
    if isinstance(v, bool):
        raise ModelError(f"{name} must be a time such as 500ns or 1.5us, not {v!r}")
    if isinstance(v, (int, float)):
        return f"{v!r}ns"
    return str(v).strip()


def pipelined_model(
    alpha_p: str | float,
    alpha_r: str | float,
    beta: str | float = 0,
    gamma: str | float = 0,
    delta: str | float = 0,
) -> str:
    """The pipelined postal model spec with these parameters (times with units, or numbers of
    nanoseconds; ``beta`` and ``gamma`` per byte, ``delta`` per reduction), checked and in
    canonical form."""
    spec = (
        f"pipelined:alpha_p={_time(alpha_p, 'alpha_p')},alpha_r={_time(alpha_r, 'alpha_r')},"
        f"beta={_time(beta, 'beta')},gamma={_time(gamma, 'gamma')},delta={_time(delta, 'delta')}"
    )
    return _core.parse_model(spec)


def load_model_file(path: str | Path) -> str:
    """The model spec of a model file (JSON ``{"model": "pipelined:..."}``); raises
    :class:`~hypercuboid.errors.ModelError` saying what is wrong with the file."""
    from hypercuboid.modelfile import load

    return load(path)


def _bytes(count: int, dtype: str) -> int:
    if dtype not in DTYPE_SIZES:
        raise ValueError(f"unknown dtype '{dtype}'; accepted: {', '.join(DTYPE_SIZES)}")
    if count < 0:
        raise ValueError(f"invalid count {count}: must be >= 0")
    return count * DTYPE_SIZES[dtype]


def b_opt(alpha_p: float, alpha_r: float | None = None) -> float:
    """Eq. 5: ``b_opt = e^{W((α_p − α_r)/(e α_r)) + 1} − 1``, the number of messages per stage
    that minimises ``(α_p + b α_r) log_{b+1} N``. Give the ratio ``α_p/α_r``, or both times
    (in the same unit). Ratio 1 gives ``e − 1 ≈ 1.718``."""
    ratio = alpha_p if alpha_r is None else alpha_p / alpha_r
    return _core.b_opt(float(ratio))


def b_opt_integer(alpha_p: float, alpha_r: float | None = None) -> int:
    """The best whole number of messages per stage for the ratio ``α_p/α_r``."""
    ratio = alpha_p if alpha_r is None else alpha_p / alpha_r
    return _core.b_opt_integer(float(ratio))


def check_schedule(schedule: str, nranks: int) -> None:
    """Raises :class:`~hypercuboid.errors.ScheduleError` if ``schedule`` does not fit
    ``nranks`` ranks, saying why and suggesting schedules that fit."""
    _core.rm_fit(schedule, nranks)


def parse_schedule_string(schedule: str) -> dict:
    """``{text, stages, factored, nranks}``: the canonical text, the stages as tuples
    (``('a', B, 0, 0)``, ``('c', T, B, 0)``, ``('e', T, B, 0)``, ``('m', R, G, B)``,
    ``('n', R, G, B)``), whether only ``a`` stages, and the number of ranks it fits."""
    s = _core.rm_parse(schedule)
    return {
        "text": s.text,
        "stages": [tuple(x) for x in s.stages],
        "factored": s.factored,
        "nranks": s.nranks,
    }


def suggest(nranks: int) -> list[str]:
    """A few schedules that fit ``nranks`` ranks."""
    return list(_core.rm_suggest(nranks))


def schedules(
    nranks: int,
    *,
    factored: bool = True,
    split: bool = True,
    merged: bool = True,
    max_schedules: int = DEFAULT_MAX_SCHEDULES,
) -> list[str]:
    """Every schedule of ``nranks`` ranks in the selected families: ordered factorisations,
    and the split (collapse/expand) and merged variants that avoid a large prime factor (see
    ``docs/recursive-multiplying.md``). Refuses more than ``max_schedules`` (0: no cap)."""
    return list(_core.rm_enumerate(nranks, factored, split, merged, max_schedules))


def count_schedules(
    nranks: int, *, factored: bool = True, split: bool = True, merged: bool = True
) -> dict:
    """``{factored, split, merged, total}``: how many schedules each family has."""
    return _counts(_core.rm_count(nranks, factored, split, merged))


def _counts(c: _core.ScheduleCounts) -> dict:
    return {"factored": c.factored, "split": c.split, "merged": c.merged, "total": c.total}


def estimate(
    schedule: str, nranks: int, model: str, count: int = 0, dtype: str = "float64"
) -> float:
    """The closed-form time in nanoseconds of ``schedule`` on ``nranks`` ranks (exact for
    factored schedules; an estimate for split and merged ones)."""
    return _core.rm_estimate(schedule, nranks, model, _bytes(count, dtype)) / 1e3


def optimal_schedule(
    nranks: int, model: str, count: int = 0, dtype: str = "float64"
) -> tuple[str, float]:
    """The factored schedule with the least closed-form time and that time in nanoseconds,
    by dynamic programming over the divisors of ``nranks`` (fast at any N)."""
    o = _core.rm_optimal(nranks, model, _bytes(count, dtype))
    return o.schedule, o.time_ps / 1e3


@dataclass(frozen=True)
class TuneRow:
    """One ranked schedule."""

    rank: int
    schedule: str
    stages: int
    predicted_ns: float
    simulated_ns: float | None


@dataclass(frozen=True)
class AlgorithmRow:
    """One registered algorithm of the collective, ranked by its simulated time
    (:func:`hypercuboid.predict.predict` at the one point)."""

    rank: int
    algorithm: str
    schedule: str | None
    simulated_ns: float | None
    error: str | None


@dataclass(frozen=True)
class TuneResult:
    """What :func:`tune_allreduce` found."""

    nranks: int
    model: str
    count: int
    dtype: str
    b_opt: float | None
    b_opt_integer: int | None
    """The best whole number of messages per stage for α_p/α_r (1 for the postal model,
    whose ``b_opt`` is 0: no latency overlaps)."""
    method: str
    reason: str | None
    counts: dict | None
    divisors: int | None
    simulated: int
    rows: list[TuneRow]
    elapsed_s: float
    algorithms: list[AlgorithmRow]
    """With ``tune_allreduce(algorithms=...)``, the algorithms ranked by simulated time (empty
    otherwise, and for an empty vector): what ``hypercuboid predict`` marks best comes first."""

    @property
    def best(self) -> TuneRow:
        """The first row."""
        return self.rows[0]

    @property
    def best_algorithm(self) -> AlgorithmRow | None:
        """The first of :attr:`algorithms`, if any ran."""
        first = self.algorithms[0] if self.algorithms else None
        return first if first is not None and first.simulated_ns is not None else None

    def to_dict(self) -> dict:
        """JSON-ready form."""
        d = asdict(self)
        d["rows"] = [asdict(r) for r in self.rows]
        d["algorithms"] = [asdict(r) for r in self.algorithms]
        return d


def rank_algorithms(
    collective: str,
    nranks: int,
    nbytes: int,
    model: str,
    dtype: str | None = None,
    algorithms: Sequence[str] | None = None,
) -> list[AlgorithmRow]:
    """``algorithms`` (None: every one :func:`hypercuboid.predict.algorithms` lists for
    ``collective``), ranked by the time :func:`hypercuboid.predict.predict` simulates for
    ``nbytes`` bytes on ``nranks`` ranks under ``model`` (the best first, as predict marks it;
    those that cannot run last)."""
    from hypercuboid.predict import predict

    p = predict(
        collective, [nbytes], [nranks], model, algorithms=algorithms, dtype=dtype, threads=0
    )
    order = sorted(
        range(len(p.rows)),
        key=lambda i: (
            not p.rows[i].best,
            p.rows[i].time_ns is None,
            p.rows[i].time_ns or 0.0,
            i,
        ),
    )
    return [
        AlgorithmRow(
            rank=k + 1,
            algorithm=p.rows[i].algorithm,
            schedule=p.rows[i].schedule,
            simulated_ns=p.rows[i].time_ns,
            error=p.rows[i].error,
        )
        for k, i in enumerate(order)
    ]


def tune_allreduce(
    nranks: int,
    model: str,
    *,
    count: int = _core.DEFAULTS["allreduce"]["count"],
    dtype: str = _core.DEFAULTS["allreduce"]["dtype"],
    top: int = _core.DEFAULTS["tune"]["top"],
    simulate: bool = False,
    pool: int = _core.DEFAULTS["tune"]["pool"],
    max_schedules: int = DEFAULT_MAX_SCHEDULES,
    factored: bool = True,
    split: bool = True,
    merged: bool = True,
    algorithms: bool | Sequence[str] = False,
) -> TuneResult:
    """Ranks the recursive multiplying schedules of ``nranks`` ranks under ``model`` (a postal
    or pipelined spec) for ``count`` elements of ``dtype``.

    With at most ``max_schedules`` schedules, all are enumerated and ranked by the closed form;
    otherwise the dynamic program's optimum alone is returned (``method ==
    "dynamic_program"``, ``reason`` says why). With ``simulate``, the ``pool`` best by the
    closed form are simulated on the same model and ranked by simulated time.

    With ``algorithms`` True, every registered allreduce algorithm (``recursive_multiplying:
    auto`` among them), or with a list those, is also ranked by its simulated time
    (``TuneResult.algorithms``, :func:`rank_algorithms`): the same function as ``hypercuboid
    predict``, so both choose the same algorithm. (Off by default: simulating every algorithm
    of a million ranks is not the seconds the schedule search takes.)
    """
    if top < 1:
        raise ValueError(f"invalid top {top}: at least one row")
    t0 = time.perf_counter()
    r = _core.tune_allreduce(
        nranks,
        model,
        count,
        dtype,
        top,
        simulate,
        pool,
        max_schedules,
        factored,
        split,
        merged,
    )
    rows = [
        TuneRow(
            rank=i + 1,
            schedule=x.schedule,
            stages=x.stages,
            predicted_ns=x.predicted_ps / 1e3,
            simulated_ns=None if x.simulated_ps is None else x.simulated_ps / 1e3,
        )
        for i, x in enumerate(r.rows)
    ]
    nbytes = _bytes(count, dtype)
    algs = []
    if algorithms is not False and nbytes:
        chosen = None if algorithms is True else list(algorithms)  # type: ignore[arg-type]
        algs = rank_algorithms("allreduce", nranks, nbytes, r.model, dtype, chosen)
    elapsed = time.perf_counter() - t0
    ratio = r.params.alpha_p_ps / r.params.alpha_r_ps if r.params.alpha_r_ps else None
    return TuneResult(
        nranks=r.nranks,
        model=r.model,
        count=count,
        dtype=dtype,
        b_opt=r.b_opt,
        b_opt_integer=None if ratio is None else b_opt_integer(ratio),
        method=r.method,
        reason=r.reason,
        counts=None if r.counts is None else _counts(r.counts),
        divisors=r.divisors,
        simulated=r.simulated,
        rows=rows,
        elapsed_s=elapsed,
        algorithms=algs,
    )


__all__ = [
    "DEFAULT_MAX_SCHEDULES",
    "AlgorithmRow",
    "TABLE1",
    "TuneResult",
    "TuneRow",
    "b_opt",
    "b_opt_integer",
    "check_schedule",
    "count_schedules",
    "estimate",
    "load_model_file",
    "optimal_schedule",
    "parse_schedule_string",
    "pipelined_model",
    "rank_algorithms",
    "schedules",
    "suggest",
    "tune_allreduce",
]

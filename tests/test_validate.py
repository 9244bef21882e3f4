"""hypercuboid validate's report (plain Python): errors, picks, what a wrong pick costs, the
summary line, a partial (interrupted) run, the reference exchanges' warning; and np = 1
refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import hypercuboid.predict as hp
import pytest
from hypercuboid.mpi.validate import REFERENCE_THRESHOLD, reference, report, text_table

POSTAL = "postal:alpha=1us,beta=1ns"


def measured(p, times: dict) -> list[dict]:
    """Rows as measure_grid gives them, median `times[(bytes, alg)]` µs, p25/p75 ±10 %."""
    return [
        {
            "algorithm": a,
            "schedule": p.row(4, b, a).schedule,
            "bytes": b,
            "median_us": t,
            "p25_us": 0.9 * t,
            "p75_us": 1.1 * t,
        }
        for (b, a), t in times.items()
    ]


@pytest.fixture
def p():
    return hp.predict(
        "allreduce", [8, 1 << 20], [4], POSTAL, algorithms=["recursive_doubling", "ring"]
    )


def test_report_errors_picks_and_summary(p):
    pred = {(b, a): p.row(4, b, a).time_ns / 1e3 for b in (8, 1 << 20) for a in p.algorithms}
    # 8 B: measured 2x the prediction, the same best; 1 MiB: the ring measured slower than
    # recursive doubling, so the predicted pick (ring) is wrong and costs 25 %.
    times = {
        (8, "recursive_doubling"): 2 * pred[(8, "recursive_doubling")],
        (8, "ring"): 2 * pred[(8, "ring")],
        (1 << 20, "recursive_doubling"): 1000.0,
        (1 << 20, "ring"): 1250.0,
    }
    v = report(p, measured(p, times), 4)
    assert [(r.bytes, r.algorithm) for r in v.rows] == list(times)
    assert v.rows[0].error == pytest.approx(-0.5)
    assert v.rows[3].error == pytest.approx(pred[(1 << 20, "ring")] / 1250 - 1)
    assert [(s.bytes, s.predicted_best, s.measured_best, s.right) for s in v.sizes] == [
        (8, "recursive_doubling", "recursive_doubling", True),
        (1 << 20, "ring", "recursive_doubling", False),
    ]
    assert v.sizes[0].wrong_pick_cost == 0
    assert v.sizes[1].wrong_pick_cost == pytest.approx(0.25)
    errs = sorted(abs(r.error) for r in v.rows)
    assert v.median_abs_error == pytest.approx((errs[1] + errs[2]) / 2)
    assert v.summary() == f"median |error| {100 * v.median_abs_error:.1f} %, picks right 1 of 2"
    d = v.to_dict()
    assert d["summary"] == v.summary() and len(d["rows"]) == 4 and d["interrupted"] is False
    lines = text_table(v).splitlines()
    assert lines[0].split() == [
        "size", "algorithm", "predicted", "us", "measured", "us", "p25-p75", "us", "error",
    ]  # fmt: skip
    assert lines[1].split()[-2:] == ["-50.0", "%"]
    assert lines[-1].split() == ["1M", "ring", "recursive_doubling", "no", "+25.0", "%"]


def test_a_tie_the_model_cannot_break_is_a_right_pick():
    # On 2 ranks recursive_multiplying:auto is recursive doubling: the same predicted time, so
    # whichever measures faster, the pick is right and costs nothing.
    q = hp.predict(
        "allreduce", [8], [2], POSTAL,
        algorithms=["recursive_doubling", "recursive_multiplying:auto", "ring"],
    )  # fmt: skip
    t = {a: q.row(2, 8, a).time_ns for a in q.algorithms}
    assert t["recursive_doubling"] == t["recursive_multiplying:auto"] < t["ring"]
    rows = [
        {"algorithm": a, "schedule": q.row(2, 8, a).schedule, "bytes": 8, "median_us": m,
         "p25_us": m, "p75_us": m}
        for a, m in [("recursive_doubling", 1.1), ("recursive_multiplying:auto", 1.0),
                     ("ring", 2.0)]
    ]  # fmt: skip
    v = report(q, rows, 2)
    (s,) = v.sizes
    assert (s.predicted_best, s.measured_best, s.right, s.wrong_pick_cost) == (
        "recursive_doubling", "recursive_multiplying:auto", True, 0.0,
    )  # fmt: skip
    # ring measured fastest: a wrong pick, costing what the predicted pick takes over it.
    rows[2]["median_us"] = 0.5
    (s,) = report(q, rows, 2).sizes
    assert (s.right, s.wrong_pick_cost) == (False, pytest.approx(1.1 / 0.5 - 1))


def test_an_interrupted_run_counts_the_sizes_it_finished(p):
    times = {(8, "recursive_doubling"): 3.0, (8, "ring"): 5.0, (1 << 20, "recursive_doubling"): 9.0}
    v = report(p, measured(p, times), 4, interrupted=True)
    assert len(v.rows) == 3 and v.interrupted
    assert (v.picks_right, v.picks) == (1, 1)


def test_one_rank_is_refused():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "PMIX_"))}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self")
    done = subprocess.run(
        [sys.executable, "-c", "from hypercuboid.cli import main; main()", "validate", "-m",
         POSTAL, "-a", "ring", "--sizes", "8"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "Error: validate needs 2 or more ranks to measure a collective: mpiexec -n 2 "
        "hypercuboid validate ..."
    )


def test_the_reference_warns_when_the_machine_changed(p):
    # a VM launch's slow state beginning mid-job: the 8 B exchange 0.30 -> 0.57 us
    ref = reference({8: 0.30, 1 << 20: 100.0}, {8: 0.57, 1 << 20: 110.0})
    assert [(r.bytes, r.start_us, r.end_us) for r in ref.rows] == [
        (8, 0.30, 0.57), (1 << 20, 100.0, 110.0),
    ]  # fmt: skip
    assert ref.rows[0].change == pytest.approx(0.9) and ref.rows[1].change == pytest.approx(0.1)
    assert ref.warning == (
        "the machine changed during the validation: the 8B exchange took 0.300 us at the start "
        "and 0.570 us at the end (+90.0 %), more than the threshold of 25 %; the error figures "
        "are not to be trusted"
    )
    assert ref.text() == (
        "reference exchange (start -> end): 8B 0.300 -> 0.570 us, 1MiB 100.000 -> 110.000 us "
        "(a warning beyond 25 %)"
    )
    # both moved (faster counts as well), one line naming each
    both = reference({8: 0.57, 1 << 20: 100.0}, {8: 0.30, 1 << 20: 60.0}, threshold=0.2)
    assert both.warning == (
        "the machine changed during the validation: the 8B exchange took 0.570 us at the start "
        "and 0.300 us at the end (-47.4 %); the 1MiB exchange took 100.000 us at the start and "
        "60.000 us at the end (-40.0 %), more than the threshold of 20 %; the error figures "
        "are not to be trusted"
    )
    assert "\n" not in both.warning
    # within the threshold (exactly at it too), or no end (interrupted): no warning
    assert reference({8: 0.30}, {8: 0.36}).warning is None
    assert reference({8: 1.0}, {8: 1.25}).warning is None
    none = reference({8: 0.30, 1 << 20: 100.0}, None)
    assert none.warning is None and [r.end_us for r in none.rows] == [None, None]
    assert none.text().startswith("reference exchange (start -> end): 8B 0.300 -> - us")
    # carried into the report and its JSON
    v = report(p, [], 4, ref=ref)
    d = json.loads(json.dumps(v.to_dict()))
    assert d["reference"] == {
        "rows": [
            {"bytes": 8, "start_us": 0.30, "end_us": 0.57, "change": ref.rows[0].change},
            {"bytes": 1 << 20, "start_us": 100.0, "end_us": 110.0, "change": ref.rows[1].change},
        ],
        "threshold": REFERENCE_THRESHOLD,
        "warning": ref.warning,
    }
    assert report(p, [], 4).to_dict()["reference"] is None

"""predict's halo grid: the registered halo exchanges x subdomains x rank counts, each point
the simulated exchange, the best marked; its table, JSON and CSV; validate's report of it;
and bad input in one line."""

from __future__ import annotations

import json

import hypercuboid.predict as hp
import pytest
from click.testing import CliRunner
from hypercuboid import halo
from hypercuboid.cli import cli
from hypercuboid.errors import ScheduleError
from hypercuboid.mpi.validate import report, text_table

POSTAL = "postal:alpha=1us,beta=1ns"
LOGGOPS = "loggops:L=1us,o=200ns,g=100ns,G=0.1ns,O=0,S=0"


def run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def test_postal_times_are_the_closed_forms():
    # An 8x8x8 subdomain of 19 float64 values per site, under postal (alpha 1 us, beta 1 ns
    # per byte; a rank's sends go one after another):
    # - nonblocking: 26 messages (6 faces of 64 sites, 12 edges of 8, 8 corners of 1: 488
    #   sites, 74,176 B): 26 alpha + 74,176 beta = 100.176 us;
    # - blocking: per dimension two messages of the face with the halo already filled
    #   (8x8, 10x8, 10x10 sites: 9,728 + 12,160 + 15,200 B each): 6 alpha + 2 x 37,088 beta
    #   = 80.176 us;
    # - reduced: 6 faces x 5 distributions + 12 edges x 1 (18 messages, 2,016 values,
    #   16,128 B): 18 alpha + 16,128 beta = 34.128 us.
    p = hp.predict_halo([(8, 8, 8)], [2, 8], POSTAL)
    assert p.collective == "halo" and p.algorithms == ["blocking", "nonblocking", "reduced"]
    assert p.sizes == [74_176] and p.ranks == [2, 8] and p.dtype == "float64"
    assert p.model == "postal:alpha=1us,beta=1ns,gamma=0,delta=0"
    assert [(r.nranks, r.decomp, r.subdomain, r.algorithm, r.time_ns, r.best) for r in p.rows] == [
        (n, d, "8x8x8", a, t, a == "reduced")
        for n, d in ((2, "2x1x1"), (8, "2x2x2"))
        for a, t in (("blocking", 80_176.0), ("nonblocking", 100_176.0), ("reduced", 34_128.0))
    ]
    assert [r.schedule for r in p.rows[:3]] == ["halo_blocking", "halo_nonblocking", "halo_reduced"]
    assert p.best(2, 74_176).algorithm == "reduced"
    assert p.label(74_176) == "8x8x8"


def test_rows_equal_simulate_point_by_point_and_keep_the_order_of_sizes():
    subs = [(16, 8, 8), (4, 4, 4), (8, 8, 8)]
    variants = ["nonblocking:unpack=on_arrival", "halo_blocking", "reduced"]
    node = "node:ranks=2,bw=1GB/s"
    p = hp.predict_halo(subs, [4], LOGGOPS, variants=variants, decomp=(1, 2, 2), node=node)
    assert p.algorithms == variants
    # sizes ordered by the rank's halo in bytes
    assert [p.label(b) for b in p.sizes] == ["4x4x4", "8x8x8", "16x8x8"]
    for r in p.rows:
        sub = tuple(int(x) for x in r.subdomain.split("x"))
        d = halo.Decomposition.of_subdomain(sub, (1, 2, 2))
        s = halo.schedule(r.algorithm, d)
        assert r.bytes == halo.saving(d, 0)[0] * 8
        assert r.time_ns == s.simulate(LOGGOPS, node=node).completion_time_ps / 1e3, r
        assert r.decomp == "1x2x2"
    assert p.model.endswith(" + node:ranks=2,bw=8Gbps")
    for b in p.sizes:
        group = [p.row(4, b, a) for a in variants]
        assert [r.best for r in group].count(True) == 1
        assert min(r.time_ns for r in group) == p.best(4, b).time_ns


def test_call_is_added_and_named():
    a = hp.predict_halo([(4, 4, 4)], [2], POSTAL, variants=["reduced"])
    b = hp.predict_halo([(4, 4, 4)], [2], POSTAL, variants=["reduced"], call="500ns")
    assert b.rows[0].time_ns == a.rows[0].time_ns + 500
    assert b.model == a.model + " + call=500ns"


def test_json_and_csv_carry_the_subdomain_and_a_collective_does_not():
    p = hp.predict_halo([(4, 4, 2)], [2], POSTAL, variants=["reduced", "blocking"])
    d = json.loads(json.dumps(p.to_dict()))
    assert d["rows"][0] == {
        "nranks": 2, "bytes": 17_024, "algorithm": "reduced", "schedule": "halo_reduced",
        "time_ns": 20_880.0, "error": None, "best": True, "subdomain": "4x4x2", "decomp": "2x1x1",
    }  # fmt: skip
    assert hp.csv_text(p).splitlines() == [
        "collective,nranks,bytes,algorithm,schedule,time_us,best,error,subdomain,decomp",
        "halo,2,17024,reduced,halo_reduced,20.880000,1,,4x4x2,2x1x1",
        "halo,2,17024,blocking,halo_blocking,23.024000,0,,4x4x2,2x1x1",
    ]
    q = hp.predict("allreduce", [8], [2], POSTAL, algorithms=["ring"])
    assert set(q.to_dict()["rows"][0]) == {
        "nranks", "bytes", "algorithm", "schedule", "time_ns", "error", "best",
    }  # fmt: skip
    assert hp.csv_text(q).splitlines()[0] == ",".join(hp.CSV_COLUMNS)


def test_cli_table():
    code, out = run(
        "predict", "-n", "2", "--collective", "halo", "-m", POSTAL, "--subdomain", "8,4x4x2"
    )
    assert code == 0, out
    assert out.splitlines() == [
        "# halo under postal:alpha=1us,beta=1ns,gamma=0,delta=0, float64; times in us, * the "
        "best of each size; a size is a rank's subdomain",
        "## 2 ranks (2x1x1)",
        "size   blocking  nonblocking  reduced  best",
        "4x4x2    23.024       43.024  20.880*  reduced",
        "8x8x8    80.176      100.176  34.128*  reduced",
    ]
    code, out = run(
        "predict", "-n", "4", "--collective", "halo", "-m", POSTAL, "--decomp", "1x1x4",
        "-a", "reduced", "--subdomain", "4", "--json", "-",
    )  # fmt: skip
    assert code == 0, out
    assert [(r["decomp"], r["subdomain"]) for r in json.loads(out)["rows"]] == [("1x1x4", "4x4x4")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--sizes", "8"],
            "Error: --sizes: a halo grid's sizes are subdomains; give --subdomain (a comma list "
            "of AxBxC or N sites per rank)",
        ),
        (
            ["-c", "8"],
            "Error: --count: a halo grid's sizes are subdomains; give --subdomain (a comma list "
            "of AxBxC or N sites per rank)",
        ),
        (
            ["--subdomain", "8,2x0x1"],
            "Error: invalid subdomain '2x0x1' in '8,2x0x1': accepted a comma list of AxBxC or N "
            "(NxNxN) sites per rank, each at least 1, e.g. 8,16,32x32x16",
        ),
        (
            ["--subdomain", "8,"],
            "Error: invalid subdomain '' in '8,': accepted a comma list of AxBxC or N (NxNxN) "
            "sites per rank, each at least 1, e.g. 8,16,32x32x16",
        ),
        (
            ["--decomp", "2x2x1"],
            "Error: invalid decomposition 2x2x1: it has 4 ranks, the grid 2; accepted: PxQxR "
            "with P*Q*R = 2",
        ),
        (
            ["-a", "diagonal"],
            "Error: unknown halo algorithm 'diagonal'; accepted: halo_blocking, "
            "halo_nonblocking, halo_reduced",
        ),
        (
            # 8x4x4: 160 face, 64 edge and 8 corner sites, x 19 values x 8 B
            ["--subdomain", "8x4x4,4x8x4"],
            "Error: invalid subdomains 8x4x4 and 4x8x4: both have a halo of 35264 B, the "
            "grid's size; accepted: one of them",
        ),
        (
            ["--dtype", "complex7"],
            "Error: invalid dtype 'complex7'; accepted: "
            + ", ".join(dict(__import__("hypercuboid")._core.DTYPES)),
        ),
    ],
)
def test_bad_halo_input_is_one_line(args, message):
    code, out = run("predict", "-n", "2", "--collective", "halo", "-m", POSTAL, *args)
    assert code == 1
    assert out.strip() == message


def test_halo_options_are_for_halo_only():
    for opt, value in (("--subdomain", "8"), ("--decomp", "2x1x1")):
        code, out = run("predict", "-n", "2", "-m", POSTAL, opt, value)
        assert code == 1
        assert out.strip() == (
            f"Error: {opt} is for --collective halo, not allreduce; a collective's sizes are "
            "--sizes or --count"
        )
    with pytest.raises(ScheduleError, match=r"^predict\('halo', \.\.\.\): a halo grid's sizes"):
        hp.predict("halo", [8], [2], POSTAL)
    with pytest.raises(ScheduleError, match="it is empty; give at least one variant"):
        hp.predict_halo([], [2], POSTAL)


def test_validate_report_of_a_halo_grid():
    p = hp.predict_halo([(4, 4, 4), (8, 8, 8)], [2], POSTAL, variants=["blocking", "reduced"])
    rows = []
    for b in p.sizes:
        for a, m in (("blocking", 10.0), ("reduced", 20.0)):
            r = p.row(2, b, a)
            rows.append(
                {"algorithm": a, "schedule": r.schedule, "bytes": b, "median_us": m,
                 "p25_us": m, "p75_us": m, "subdomain": r.subdomain, "decomp": r.decomp}
            )  # fmt: skip
    v = report(p, rows, 2)
    assert [(s.subdomain, s.predicted_best, s.measured_best, s.right) for s in v.sizes] == [
        ("4x4x4", "reduced", "blocking", False),
        ("8x8x8", "reduced", "blocking", False),
    ]
    assert v.sizes[0].wrong_pick_cost == pytest.approx(1.0)
    # 4x4x4 reduced: 18 alpha + (6 x 16 x 5 + 12 x 4) x 8 beta = 22.224 us, measured 20
    assert v.rows[1].error == pytest.approx(22.224 / 20 - 1)
    d = v.to_dict()
    assert (d["rows"][0]["subdomain"], d["rows"][0]["decomp"]) == ("4x4x4", "2x1x1")
    assert d["sizes"][1]["subdomain"] == "8x8x8"
    lines = text_table(v).splitlines()
    assert lines[1].split()[:2] == ["4x4x4", "blocking"]
    assert lines[-1].split()[:3] == ["8x8x8", "reduced", "blocking"]


@pytest.mark.parametrize(
    ("subdomains", "ranks", "message"),
    [
        ([(8, 8)], [2], "invalid subdomain (8, 8): accepted three whole numbers (A, B, C), each"),
        ([(8, 0, 8)], [2], "invalid subdomain (8, 0, 8): accepted three whole numbers"),
        ([(4, 4, 4)], [0], "invalid number of ranks 0: a grid's rank counts are whole numbers"),
        ([(4, 4, 4)], [1 << 70], f"invalid number of ranks {1 << 70}: a grid's rank counts"),
        ([(4, 4, 4)], ["2"], "invalid number of ranks '2': a grid's rank counts"),
    ],
)
def test_bad_python_arguments_are_schedule_errors(subdomains, ranks, message):
    with pytest.raises(ScheduleError) as e:
        hp.predict_halo(subdomains, ranks, POSTAL)
    assert str(e.value).startswith(message)

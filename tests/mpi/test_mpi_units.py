"""Parts of the MPI back end that need no MPI: program compilation, comparison arithmetic,
fits, size parsing, model files, output. These run in the ordinary test suite."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from handmade import IN, OUT, Program
from hypercuboid.errors import ModelError, ScheduleError


def test_importing_the_package_does_not_import_mpi4py():
    code = (
        "import sys, hypercuboid, hypercuboid.mpi, hypercuboid.modelfile, "
        "hypercuboid.mpi.engine, hypercuboid.mpi.check, hypercuboid.cli.bench; "
        "print('mpi4py' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- compiling programs -----------------------------------------------------------------------


def _compile(p: Program, count: int = 4, nranks: int = 2, rank: int = 0):
    from hypercuboid.mpi.engine import compile_program

    return compile_program(p.columns(), rank=rank, nranks=nranks, count=count)


def test_compile_builds_dependency_counters_and_dependents():
    p = Program()
    a = p.send(1, (IN, 0, 4))
    b = p.recv(1, (OUT, 0, 4), combine=2)
    c = p.after(p.copy((OUT, 0, 2), (OUT, 2, 2)), a, b)
    d = p.after(p.compute(5000), c, start=True)
    plan = _compile(p)
    assert plan.n == 4 and plan.messages == 2
    assert plan.ndeps == [0, 0, 2, 1]
    assert plan.roots == [a, b]
    assert plan.after_complete == [(c,), (c,), (), ()]
    assert plan.after_start == [(), (), (d,), ()]
    assert (
        plan.describe(b) == "op 1 (recv output[0:4] from rank 1 tag 0 reducing as dst ⊕ incoming)"
    )
    assert plan.describe(c) == "op 2 (copy output[0:2] -> output[2:4])"
    assert plan.describe(d) == "op 3 (compute 5000 ps)"


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda p: p.send(1, (OUT, 2, 3)),
            "rank 0 op 0: send slice out[2:5] is outside the output buffer (4 elements)",
        ),
        (
            lambda p: p.send(2, (IN, 0, 1)),
            "rank 0 op 0: send to rank 2 but the schedule has ranks 0..2",
        ),
        (
            lambda p: p.send(-1, (IN, 0, 1)),
            "rank 0 op 0: send to rank -1 (any) but the schedule has ranks 0..2",
        ),
        (
            lambda p: p.recv(1, (IN, 0, 1)),
            "rank 0 op 0: recv into in[0:1]: the input buffer is read-only",
        ),
        (
            lambda p: p.recv(1, (3, 0, 1)),
            "rank 0 op 0: recv slice scratch1[0:1] is outside scratch buffer 1 (0 elements)",
        ),
        (
            lambda p: p.reduce((IN, 0, 2), (OUT, 0, 3)),
            "rank 0 op 0: reduce of in[0:2] into out[0:3]: lengths differ",
        ),
        (
            lambda p: p.after(p.copy((IN, 0, 1), (OUT, 0, 1)), 0),
            "rank 0 op 0 depends on op 0: an op cannot depend on itself",
        ),
        (
            lambda p: p.after(p.copy((IN, 0, 1), (OUT, 0, 1)), 5),
            "rank 0 op 0 depends on op 5: op index out of range (the rank has 1 ops)",
        ),
    ],
)
def test_compile_refuses_malformed_programs(build, message):
    p = Program()
    build(p)
    with pytest.raises(ScheduleError) as e:
        _compile(p)
    assert str(e.value) == message


def test_compile_refuses_missing_and_ragged_columns():
    from hypercuboid.mpi.engine import compile_program

    p = Program()
    p.send(1, (IN, 0, 1))
    cols = p.columns()
    del cols["tag"]
    with pytest.raises(ScheduleError, match="^program has no 'tag' column; expected kind, peer"):
        compile_program(cols, rank=0, nranks=2, count=1)
    cols = p.columns()
    cols["peer"] = np.array([1, 1])
    with pytest.raises(ScheduleError) as e:
        compile_program(cols, rank=0, nranks=2, count=1)
    assert str(e.value) == "invalid program column 'peer': it has 2 entries; the program has 1 ops"


# -- comparison arithmetic --------------------------------------------------------------------


def test_ulp_distance_counts_representable_values_between():
    from hypercuboid.mpi.check import ulp_distance

    one = np.array([1.0, 1.0, -1.0, 0.0, 5e-324])
    up = np.array([np.nextafter(1.0, 2), 1.0, np.nextafter(-1.0, 0), -0.0, -5e-324])
    # -0.0 and +0.0 differ in their bits: adjacent values, distance 1;
    # -denormal_min .. +denormal_min: -dmin, -0, +0, +dmin = 3 steps
    assert ulp_distance(one, up).tolist() == [1, 0, 1, 1, 3]
    f32 = np.array([1.0], np.float32)
    assert ulp_distance(f32, f32 + np.float32(2**-23) * 4).tolist() == [4]
    assert ulp_distance(np.array([-128], np.int8), np.array([127], np.int8)).tolist() == [255]
    assert ulp_distance(np.array([0], np.uint64), np.array([2**64 - 1], np.uint64)).tolist() == [
        2**64 - 1
    ]
    big = np.array([np.finfo(np.float64).max])
    assert ulp_distance(big, -big).tolist() == [2 * 0x7FEFFFFFFFFFFFFF + 1]
    z = np.array([1 + 1j])
    assert ulp_distance(z, np.array([np.nextafter(1.0, 2) + 1j])).tolist() == [1]


def test_value_bytes_ignores_extended_precision_padding():
    from hypercuboid.mpi.check import fingerprint, same_bits, value_bytes

    a = np.array([1.5, -2.25], dtype=np.longdouble)
    b = a.copy()
    if np.finfo(np.longdouble).nmant == 63 and a.itemsize > 10:
        b.view(np.uint8).reshape(2, -1)[:, 10:] = 0xAB  # scribble on the padding
        assert value_bytes(a).shape == (2, 10)
    assert same_bits(a, b) and fingerprint(a) == fingerprint(b)
    assert not same_bits(a, a + 1)


def test_reference_is_the_left_to_right_fold():
    from hypercuboid.mpi.check import make_input, reference_allreduce

    xs = [make_input(r, 5, 8, np.float32, "sum", 7) for r in range(5)]
    want = (((xs[0] + xs[1]) + xs[2]) + xs[3]) + xs[4]
    ref, scale = reference_allreduce(5, 8, np.float32, "sum", 7)
    assert ref.tobytes() == want.tobytes()
    assert np.array_equal(scale, sum(np.abs(x).astype(np.float64) for x in xs))
    # inputs depend on (seed, rank) only
    assert make_input(3, 5, 8, np.float32, "sum", 7).tobytes() == xs[3].tobytes()
    assert make_input(3, 5, 8, np.float32, "sum", 8).tobytes() != xs[3].tobytes()


def test_within_bound_accepts_reordering_and_rejects_a_missing_term():
    from hypercuboid.mpi.check import make_input, reference_allreduce, within_bound

    n = 8
    xs = [make_input(r, n, 1000, np.float32, "sum", 1) for r in range(n)]
    ref, scale = reference_allreduce(n, 1000, np.float32, "sum", 1)
    backwards = xs[-1].copy()
    for x in reversed(xs[:-1]):
        backwards += x
    assert backwards.tobytes() != ref.tobytes()  # the order shows in the bits ...
    assert within_bound(backwards, ref, scale, n, "sum")  # ... within rounding error
    wrong = ref - xs[3]
    assert not within_bound(wrong, ref, scale, n, "sum")
    ints = np.arange(4)
    assert not within_bound(ints + 1, ints, np.zeros(4), 3, "sum")


# -- bench helpers ----------------------------------------------------------------------------


def test_parse_sizes_osu_style():
    from hypercuboid.mpi.bench import BenchError, parse_sizes

    assert parse_sizes("8:4M") == [8 << k for k in range(20)]
    assert parse_sizes("0:4") == [0, 1, 2, 4]
    assert parse_sizes("3:20") == [3, 6, 12]
    assert parse_sizes("1M,8,1KiB,8") == [8, 1024, 1 << 20]
    # The core's size grammar, as every verb reads it: 8:1MiB, 7.5KB.
    assert parse_sizes("8:1MiB") == [8 << k for k in range(18)]
    assert parse_sizes("7.5KB,1e3") == [1000, 7680]
    with pytest.raises(BenchError) as e:
        parse_sizes("8:4X")
    assert str(e.value) == (
        "invalid size '4X': unknown unit 'X'; accepted units are B, K/KB/KiB, M/MB/MiB, "
        "G/GB/GiB, T/TB/TiB (binary: 1 KB = 1024 B; a bare number is bytes)"
    )
    with pytest.raises(BenchError, match="^sizes '64:8': MIN 64 is above MAX 8$"):
        parse_sizes("64:8")


def test_split_algorithms_keeps_schedule_strings_whole():
    from hypercuboid.mpi.bench import split_algorithms

    known = ["ring", "recursive_doubling", "recursive_multiplying", "tree"]
    assert split_algorithms("recursive_doubling,recursive_multiplying:a8,a3,a4,native", known) == [
        "recursive_doubling",
        "recursive_multiplying:a8,a3,a4",
        "native",
    ]
    assert split_algorithms("recursive_multiplying:a2,a2;tree", known) == [
        "recursive_multiplying:a2,a2",
        "tree",
    ]
    assert split_algorithms(" ring , native ", known) == ["ring", "native"]


def test_osu_counts_and_bus_bandwidth():
    from hypercuboid.mpi.bench import bus_bandwidth, osu_counts

    assert osu_counts(8) == (1000, 100)
    assert osu_counts(8192) == (1000, 100)
    assert osu_counts(8193) == (100, 10)
    # nccl-tests: 1 GB in 1 s on 4 ranks: algbw 1 GB/s, busbw 2 * 3/4 = 1.5 GB/s
    assert bus_bandwidth(10**9, 1.0, 4) == (1.0, 1.5)
    assert bus_bandwidth(10**9, 0.5, 1) == (2.0, 0.0)


def test_fits_recover_exact_parameters():
    from hypercuboid.mpi.bench import fit_line, fit_pipelined, fit_postal, summarize

    sizes = [1 << k for k in range(21)]
    rows = [{"bytes": n, "median_us": 1.2 + 0.35e-3 * n} for n in sizes]  # α 1.2 µs, β 0.35 ns/B
    f = fit_postal(rows)
    assert f["alpha_us"] == pytest.approx(1.2, rel=1e-9)
    assert f["beta_ns_per_byte"] == pytest.approx(0.35, rel=1e-9)
    assert f["r2"] == pytest.approx(1.0)
    # Table 1 of the recursive-multiplying paper as a synthetic multicast: α_p 1.34, α_r 0.34
    rows = [{"messages": b, "min_us": 1.34 + 0.34 * b + 0.5} for b in range(1, 9)]
    g = fit_pipelined(rows, "min_us", latency_us=0.5)
    assert g["alpha_p_us"] == pytest.approx(1.34) and g["alpha_r_us"] == pytest.approx(0.34)
    line = fit_line([0, 1, 2], [1, 2, 4])
    assert line["a"] == pytest.approx(5 / 6) and line["b"] == pytest.approx(1.5)
    s = summarize(np.array([4.0, 1.0, 3.0, 2.0, 5.0]))
    assert s == {
        "min_us": 1.0,
        "p25_us": 2.0,
        "median_us": 3.0,
        "p75_us": 4.0,
        "max_us": 5.0,
        "avg_us": 3.0,
    }


# -- model files ------------------------------------------------------------------------------


def test_model_file_round_trip(tmp_path):
    from hypercuboid import modelfile

    spec = "pipelined:alpha_p=1.34us,alpha_r=340ns,beta=0.4ns,gamma=0"
    p = modelfile.write(tmp_path / "m.json", spec, "bench multicast", {"x": 1}, {"host": "h"})
    assert modelfile.load(p) == spec
    doc = json.loads(p.read_text())
    assert set(doc) == {"model", "source", "fitted", "machine", "date"}
    assert modelfile.fmt_time(1.34e-6) == "1.34us"
    assert modelfile.fmt_time(3.5e-10) == "350ps"
    assert modelfile.fmt_time(0.0) == "0"
    # a time below 1 ns is whole picoseconds (the parser refuses a fraction of one); a rate
    # (time per byte) keeps its digits. A postal fit with alpha = 374.8 ps once wrote a model
    # file that predict and validate refused.
    assert modelfile.fmt_time(374.8e-12) == "375ps"
    assert modelfile.fmt_time(27.61e-12, rate=True) == "27.61ps"
    from hypercuboid.schedule import parse_model

    postal = (
        f"postal:alpha={modelfile.fmt_time(374.8e-12)},beta={modelfile.fmt_time(27.61e-12, True)}"
    )
    assert parse_model(postal) == "postal:alpha=375ps,beta=27.61ps,gamma=0,delta=0"


@pytest.mark.parametrize(
    "content, message",
    [
        (
            "{not json",
            "not a model file (invalid JSON at line 1, column 2: key must be a string",
        ),
        ("[1, 2]", "not a model file (expected a JSON object, got a list)"),
        ('{"source": "x"}', "not a model file (no 'model' key; keys: source)"),
        (
            '{"model": 3}',
            "its 'model' must be a model spec string such as "
            "'pipelined:alpha_p=1.34us,alpha_r=0.34us', not a number",
        ),
        (
            '{"model": "hockney:alpha=1us"}',
            "unknown model 'hockney'; accepted: postal, pipelined, loggops",
        ),
        (
            '{"model": "postal:alpha=1us,epsilon=2"}',
            "invalid model spec 'postal:alpha=1us,epsilon=2': unknown key 'epsilon' for postal; "
            "accepted: alpha, beta, gamma, delta",
        ),
        (
            '{"model": "postal:alpha=-1us"}',
            "invalid model spec 'postal:alpha=-1us': alpha=-1us: negative; times must be >= 0",
        ),
        (
            '{"model": "postal:alpha=1us,alpha=2us"}',
            "invalid model spec 'postal:alpha=1us,alpha=2us': key 'alpha' given twice",
        ),
    ],
)
def test_model_file_errors_say_what_is_wrong(tmp_path, content, message):
    from hypercuboid import modelfile

    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(ModelError) as e:
        modelfile.load(p)
    assert str(e.value).startswith(f"{p}: {message}")


def test_model_file_that_is_not_text(tmp_path):
    from hypercuboid import modelfile

    p = tmp_path / "bin.json"
    p.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ModelError) as e:
        modelfile.load(p)
    assert str(e.value) == f"{p}: not a model file (not UTF-8 text)"


# -- output -----------------------------------------------------------------------------------


def test_table_and_csv(tmp_path):
    from hypercuboid.mpi.report import allreduce_table, human_bytes, write_csv

    rows = [
        {"algorithm": "ring", "runner": "native", "bytes": 8, "min_us": 1.0, "p25_us": 1.5,
         "median_us": 2.0, "p75_us": 2.5, "max_us": 30.25, "avg_us": 2.125,
         "busbw_GBps": 0.004, "valid": True, "check": {"max_ulp_native": 0}},
        {"algorithm": "native", "runner": "python", "bytes": 1 << 20, "min_us": 100.0,
         "p25_us": 101.0, "median_us": 102.0, "p75_us": 103.0, "max_us": 1000.0, "avg_us": 110.0,
         "busbw_GBps": 9.5, "valid": False},
    ]  # fmt: skip
    rows[0]["check"]["identical_bits"] = False
    assert allreduce_table(rows).splitlines() == [
        "algorithm  runner  size  min us  p25 us  median us  p75 us   max us  avg us  busbw GB/s"
        "  valid  same bits",
        "ring       native  8       1.00    1.50       2.00    2.50    30.25    2.12       0.004"
        "  yes    NO",
        "native     python  1M    100.00  101.00     102.00  103.00  1000.00  110.00       9.500"
        "  NO     -",
    ]
    assert [human_bytes(n) for n in (0, 8, 1024, 1536, 4 << 20, 1 << 30)] == [
        "0", "8", "1K", "1536", "4M", "1G",
    ]  # fmt: skip
    write_csv(tmp_path / "r.csv", rows)
    lines = (tmp_path / "r.csv").read_text().splitlines()
    assert lines[0].split(",")[-2:] == ["check.max_ulp_native", "check.identical_bits"]
    assert len(lines) == 3


def test_bench_group_help_lists_its_commands():
    from click.testing import CliRunner
    from hypercuboid.cli.bench import bench

    res = CliRunner().invoke(bench, ["--help"])
    assert res.exit_code == 0
    listed = [ln.split()[0] for ln in res.output.split("Commands:")[1].strip().splitlines()]
    assert listed == ["allreduce", "alltoall", "multicast", "pingpong"]

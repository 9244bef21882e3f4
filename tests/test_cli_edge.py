"""Input checked at the edge of the CLI (issue 34, item 5): a bad value is one line naming it
and what is accepted, before any work starts; never a traceback."""

import pytest
from click.testing import CliRunner
from hypercuboid import _core
from hypercuboid.cli import cli
from hypercuboid.cli.common import optional_files

SIM = ["simulate", "allreduce", "-a", "ring", "-n", "4", "-m", "postal:alpha=1us"]
NET = ["simulate", "allreduce", "-a", "ring", "-n", "4", "-t", "fullmesh:n=4"]
ACCEPTED_PLOTS = ".png, .pdf, .svg, .svgz, .eps, .ps, .jpg, .jpeg, .tif, .tiff, .webp"


def _run(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [*SIM, "--seed", "-1"],
            "--seed -1: a seed must be >= 0",
        ),
        (
            [*SIM, "--seed", "99999999999999999999999"],
            "--seed 99999999999999999999999: a seed must be <= 18446744073709551615",
        ),
        ([*SIM, "--seed", "x"], "--seed x: expected a whole number"),
        (
            [*SIM, "--threads", "2000"],
            "--threads 2000: must be <= 1024 (0: every core for 2^19 ops or more, else 1)",
        ),
        ([*SIM, "--top-links", "-1"], "--top-links -1: must be >= 0"),
        ([*SIM, "--calls", "0"], "--calls 0: must be >= 1"),
        ([*NET, "--ranks-per-endpoint", "-1"], "--ranks-per-endpoint -1: must be >= 1"),
        (
            ["netsim", "run", "-t", "fullmesh:n=3", "--packet", "-1"],
            "invalid size '-1': negative; sizes must be >= 0",
        ),
        (["netsim", "run", "-t", "fullmesh:n=3", "-j", "-1"], "--jobs -1: must be >= 1"),
        (
            ["netsim", "run", "-t", "fullmesh:n=3", "--load", "0.1,,0.2"],
            "--load 0.1,,0.2: an empty item in the list",
        ),
        (
            ["netsim", "run", "-t", "fullmesh:n=3", "--load", "0.1:1:1e-7"],
            "--load 0.1:1:1e-7: 9,000,001 load points; at most 1,000 (a larger step)",
        ),
        (
            ["netsim", "run", "-t", "fullmesh:n=3", "-r", "min,,inr"],
            "--routing min,,inr: an empty item in the list",
        ),
        (
            ["schedule", "verify", "allreduce", "-a", "ring", "-n", "4", "--max-problems", "-1"],
            "--max-problems -1: must be >= 0",
        ),
        (
            "tune allreduce -n 8 --alpha-p 1us --alpha-r 1us --pool -1".split(),
            "--pool -1: must be >= 0",
        ),
        (
            ["schedule", "export", "allreduce", "-a", "ring", "-n", "4", "-o", ""],
            "--output '': give a file name (or leave the option out)",
        ),
        (
            ["schedule", "export", "allreduce", "-a", "ring", "-n", "4", "--format", "goal"]
            + ["--reduce-ns-per-byte", "nan"],
            "--reduce-ns-per-byte nan: expected a finite number",
        ),
        (
            ["lbm", "run", "--lattice", "8x8x8", "--tau", "inf"],
            "tau inf: must be a number greater than 0.5 (the viscosity (tau - 0.5)/3 must be "
            "positive)",
        ),
        (
            ["netsim", "run", "-t", "fullmesh:n=3", "--switch-latency", "nan"],
            "invalid time 'nan': unknown unit 'nan'; accepted units are ps, ns, us, ms, s (a bare "
            "number is ns)",
        ),
        (
            [*SIM, "--plot", "out.xyz"],
            f"--plot out.xyz: unknown figure format 'xyz'; accepted: {ACCEPTED_PLOTS}",
        ),
        (
            [*NET, "--plot-links", "links"],
            f"--plot-links links: unknown figure format '(no extension)'; accepted: "
            f"{ACCEPTED_PLOTS}",
        ),
        (
            ["alltoall", "phases", "-t", "tree:fig1", "--plot", "p.gif"],
            f"--plot p.gif: unknown figure format 'gif'; accepted: {ACCEPTED_PLOTS}",
        ),
        (
            [*SIM, "--plot", "t.png", "--plot-ranks", "3-1"],
            "--plot-ranks 3-1: the range 3-1 runs down; write 1-3",
        ),
        (
            [*SIM, "--plot", "t.png", "--plot-ranks", "0-9"],
            "--plot-ranks 0-9: rank 9 is not in 0..3",
        ),
        (
            [*SIM, "--plot", "t.png", "--plot-ranks", "a"],
            "--plot-ranks a: expected ranks like 0-7,12",
        ),
        ([*SIM, "--packet-size", "1K"], "--packet-size applies to --network runs only"),
        ([*NET, "--json", "--csv"], "--json and --csv cannot both go to stdout; give one a FILE"),
        ([*SIM, "--buffer", "1K"], "--buffer applies to --network runs only"),
        (["bench", "allreduce", "-a", "ring,ring"], "--algorithm ring,ring: ring is given twice"),
        (
            ["bench", "alltoall", "-a", "linear,,bruck"],
            "--algorithm linear,,bruck: an empty item in the list",
        ),
        (["bench", "allreduce", "--sizes", "8,,16"], "--sizes 8,,16: an empty item in the list"),
        (
            ["bench", "allreduce", "--check", "--dtype", "float128"],
            "--dtype float128: --check compares results exactly, which needs IEEE half, single or "
            "double precision (float16/32/64, complex64/128) or an integer type",
        ),
    ],
)
def test_a_bad_value_is_one_line_before_the_run(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    r = _run(*args)
    assert r.exit_code == 1, r.output
    assert r.output.splitlines()[-1] == f"Error: {message}"
    assert r.stdout == "" and "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []  # nothing ran, nothing was written


def test_a_huge_value_is_quoted_short():
    r = _run(*SIM, "--seed", "9" * 100_000)
    assert r.output == f"Error: --seed {'9' * 40}... (100000 characters): a seed must be <= " + (
        "18446744073709551615\n"
    )


def test_the_largest_seed_runs():
    r = _run(*SIM, "--noise", "exp:mean=1ns", "--seed", str(2**64 - 1), "--json")
    assert r.exit_code == 0, r.output


def test_memory_limit_is_set_for_the_run_and_restored(monkeypatch):
    seen = []
    from hypercuboid.schedule import Schedule

    real = Schedule.simulate

    def spy(self, *a, **kw):
        seen.append(_core.memory_limit())
        return real(self, *a, **kw)

    monkeypatch.setattr(Schedule, "simulate", spy)
    before = _core.memory_limit()
    r = _run("--memory-limit", "3GiB", *SIM)
    assert r.exit_code == 0, r.output
    assert seen == [3 << 30]
    assert _core.memory_limit() == before
    r = _run("--memory-limit", "lots", *SIM)
    assert r.exit_code == 1
    assert r.output.startswith("Error: invalid size 'lots': unknown unit 'lots'")


def test_ctrl_c_is_one_line_and_status_130(monkeypatch):
    from hypercuboid.schedule import Schedule

    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(Schedule, "simulate", interrupted)
    r = _run(*SIM)
    assert r.exit_code == 130
    assert r.stderr == "hypercuboid: interrupted\n"
    assert r.stdout == ""


def test_optional_files_read_only_file_names():
    assert (
        optional_files(["simulate", "--json", "allreduce", "-a", "ring"])
        == "simulate --json=- allreduce -a ring".split()
    )
    assert (
        optional_files(["x", "--json", "out.json", "--csv", "m.CSV"])
        == "x --json out.json --csv m.CSV".split()
    )
    assert optional_files(["x", "--json", "-q"]) == ["x", "--json", "-q"]
    assert optional_files(["x", "--", "--json", "a"]) == ["x", "--", "--json", "a"]


def test_network_options_are_passed_only_when_given(monkeypatch):
    from hypercuboid.schedule import Schedule

    calls = []
    real = Schedule.simulate

    def spy(self, *a, **kw):
        calls.append(kw)
        return real(self, *a, **kw)

    monkeypatch.setattr(Schedule, "simulate", spy)
    assert _run(*NET).exit_code == 0
    assert set(calls[0]) == {
        "trace",
        "noise",
        "seed",
        "chrome_trace",
        "calls",
        "threads",
        "network",
        "records",
        "link_timeline",
    }
    assert _run(*NET, "--packet-size", "1KiB", "--switch-latency", "50ns").exit_code == 0
    assert (calls[1]["packet_size"], calls[1]["switch_latency"]) == (1024, "50ns")


def test_help_names_the_defaults_it_does_not_pass():
    import inspect

    from hypercuboid.schedule import Schedule

    api = inspect.signature(Schedule.simulate).parameters
    text = " ".join(_run("simulate", "--help").stdout.split())
    for option, name in (("--nic", "nic"), ("--level", "level"), ("--routing", "routing")):
        assert f"[default: {api[name].default}]" in text, option
    assert "Packet size [default: 256B]" in text

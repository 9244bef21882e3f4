"""What a new user tripped on (issue 33, item 10): timelines of many ranks, long titles, legends,
notes missing from JSON, per-call times, host-model parameters that do not apply on a network,
and error lines under mpiexec."""

import importlib
import json
import struct
from pathlib import Path

import matplotlib.figure
import pytest
from click.testing import CliRunner
from hypercuboid.cli import cli
from hypercuboid.plot import MAX_AUTO_RANKS, TITLE_WIDTH, wrap_title
from hypercuboid.schedules import allreduce

POSTAL = "postal:alpha=1us,beta=1ns"


def _run(*args):
    return CliRunner().invoke(cli, list(args))


def _png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.fixture
def figures(monkeypatch):
    """The figures saved while the test runs (drawn, so that their extents are known)."""
    saved = []
    real = matplotlib.figure.Figure.savefig

    def spy(self, *a, **kw):
        self.canvas.draw()
        saved.append(self)
        return real(self, *a, **kw)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    return saved


def test_a_timeline_of_many_ranks_draws_the_first_ones_and_says_so(tmp_path, figures):
    png = tmp_path / "t.png"
    r = _run("simulate", "allreduce", "-a", "ring", "-n", "64", "-m", POSTAL, "--plot", str(png))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1] == (
        f"timeline        {png} (ranks 0-15 of 64; choose with --plot-ranks)"
    )
    width, height = _png_size(png)
    assert height < 1200 and width == 1300
    ax = figures[0].axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(i) for i in range(MAX_AUTO_RANKS)]
    assert ax.get_title().split("\n")[-1] == (
        "(ranks 0-15 of 64 drawn; choose with --plot-ranks (CLI) or ranks= (Python))"
    )
    chosen = tmp_path / "c.png"
    r = _run(
        "simulate", "allreduce", "-a", "ring", "-n", "64", "-m", POSTAL, "--plot", str(chosen),
        "--plot-ranks", "60-63",
    )  # fmt: skip
    assert r.stdout.splitlines()[-1] == f"timeline        {chosen}"
    assert [t.get_text() for t in figures[1].axes[0].get_yticklabels()] == ["60", "61", "62", "63"]
    assert "\n" not in figures[1].axes[0].get_title()


def test_long_titles_wrap():
    spec = "recursive_multiplying:" + ",".join(f"a{i}" for i in range(2, 60))
    title = wrap_title(f"allreduce {spec} — loggops:L=2500ns,o=1500ns,g=1us,G=6ns")
    lines = title.split("\n")
    assert len(lines) > 1 and all(len(line) <= TITLE_WIDTH for line in lines)
    assert title.replace("\n", " ").replace(", ", ",") == (
        f"allreduce {spec} — loggops:L=2500ns,o=1500ns,g=1us,G=6ns"
    )
    assert wrap_title("short") == "short"


def test_python_trace_plot_has_a_title_and_no_copy_it_does_not_draw(tmp_path, figures):
    s = allreduce("ring", 4, 1)
    res = s.simulate(POSTAL, trace=True)
    res.trace.plot(tmp_path / "t.png")
    ax = figures[0].axes[0]
    assert ax.get_title() == f"4 ranks, {s.total_ops} ops, 6 messages"
    _, labels = ax.get_legend_handles_labels()
    # the ring's copies take no time on this model: drawn as nothing, so not in the legend
    assert "copy" in res.trace.op_kind_names()
    assert labels == ["send", "recv (posted → complete)"]


def test_link_legend_sits_beside_the_data(tmp_path, figures):
    png = tmp_path / "l.png"
    r = _run(
        "simulate", "alltoall", "-a", "linear", "-n", "8", "-c", "1024", "-t", "tree:fig5b",
        "--plot-links", str(png),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    ax = figures[0].axes[0]
    legend = ax.get_legend()
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    assert legend.get_texts()[0].get_text() == "s0 → n0 (ejection)"


def test_verify_json_has_the_notes_of_the_text():
    args = ["schedule", "verify", "allreduce", "-a", "ring", "-n", "4"]
    d = json.loads(_run(*args, "--json").stdout)
    text = _run(*args).stdout.splitlines()
    assert d["notes"] == [line for line in text[1:] if line.strip()]
    assert d["notes"][0].startswith("SOUND: every message matched")


def test_repeated_calls_report_the_time_per_call():
    args = [
        "simulate", "halo", "-a", "blocking", "--decomp", "2x1x1", "--subdomain", "2x2x2",
        "-m", "postal:alpha=1us", "--calls", "3",
    ]  # fmt: skip
    d = json.loads(_run(*args, "--json").stdout)
    assert (d["completion_time_ns"], d["time_per_call_ns"], d["calls"]) == (18000.0, 6000.0, 3)
    lines = _run(*args).stdout.splitlines()
    assert "per call        6,000.000 ns (mean)" in lines


def test_a_network_run_shows_only_the_host_parameters_that_apply():
    base = ["simulate", "allreduce", "-a", "ring", "-n", "4", "-t", "fullmesh:n=4"]
    lines = _run(*base).stdout.splitlines()
    assert lines[1] == (
        "host model      loggops:o=1500ns,g=1us,O=0,S=65535,gamma=0,delta=0 (L, G: between ranks "
        "of one endpoint; no message stayed within one)"
    )
    # two ranks per endpoint: messages stay within one, so L and G apply and are shown
    shared = _run(*base, "--ranks-per-endpoint", "2").stdout.splitlines()
    assert (
        shared[1]
        == "model           loggops:L=2500ns,o=1500ns,g=1us,G=6ns,O=0,S=65535,gamma=0,delta=0"
    )


class _FakeComm:
    def __init__(self, rank):
        self.rank = rank
        self.aborted = None

    def Get_size(self):
        return 4

    def Get_rank(self):
        return self.rank

    def Abort(self, code):
        self.aborted = code


def test_lbm_errors_name_lbm_and_rank_zero_prints_at_once(monkeypatch, capsys):
    bench = importlib.import_module("hypercuboid.cli.bench")
    monkeypatch.setattr(bench, "_QUIET_WAIT_S", 0.0)

    def body():
        raise MemoryError("Unable to allocate 480 GiB")

    comm = _FakeComm(0)
    with pytest.raises(MemoryError):
        bench._run_collective(comm, body, verb="lbm")
    assert comm.aborted == 1
    assert capsys.readouterr().err == (
        "hypercuboid lbm: rank 0: MemoryError: Unable to allocate 480 GiB; aborting\n"
    )


def test_a_rank_other_than_zero_waits_before_it_prints(monkeypatch, capsys):
    bench = importlib.import_module("hypercuboid.cli.bench")
    waited = []
    monkeypatch.setattr(bench.time, "sleep", waited.append)

    def body():
        raise ValueError("bad")

    comm = _FakeComm(3)
    with pytest.raises(ValueError):
        bench._run_collective(comm, body, verb="lbm")
    assert waited == [bench._QUIET_WAIT_S] and bench._QUIET_WAIT_S > 0
    assert capsys.readouterr().err == "hypercuboid lbm: rank 3: ValueError: bad; aborting\n"


ROOT = Path(__file__).resolve().parent.parent


def test_examples_write_under_out_in_the_current_directory(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    script = ROOT / "examples" / "topology_export_booksim.py"
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "sf5.anynet",
        "sf5.dot",
        "sf5.json",
    ]
    assert done.stdout.splitlines()[-1] == "wrote out/sf5.anynet, sf5.dot, sf5.json (50 routers)"


def test_benchmarks_write_under_out_unless_told(tmp_path, monkeypatch):
    import argparse
    import sys

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    monkeypatch.delenv("HYPERCUBOID_BENCH_OUT", raising=False)
    sys.modules.pop("_out", None)
    out = importlib.import_module("_out")
    monkeypatch.chdir(tmp_path)
    ap = argparse.ArgumentParser()
    out.add(ap, "x.json")
    assert out.path(ap.parse_args([]).out, "x.json") == Path("out/x.json")
    assert (tmp_path / "out").is_dir()
    assert out.path(ap.parse_args(["--out", "d"]).out, "x.json") == Path("d/x.json")
    named = ap.parse_args(["--out", "r/y.json"]).out
    assert (str(out.path(named, "x.json")), str(out.directory(named))) == ("r/y.json", "r")


class _OneRank:
    def Get_rank(self):
        return 0

    def Get_size(self):
        return 1

    def bcast(self, obj, root=0):
        return obj


def test_ctrl_c_in_a_bench_sweep_keeps_the_rows_it_finished(monkeypatch, tmp_path):
    bench = importlib.import_module("hypercuboid.cli.bench")
    hb = importlib.import_module("hypercuboid.mpi.bench")
    asked = []

    def sweep(comm, algorithms, sizes, **kw):
        asked.append(list(sizes))
        if sizes == [16]:
            raise KeyboardInterrupt
        return [{"algorithm": a, "bytes": sizes[0], "valid": None} for a in algorithms]

    monkeypatch.setattr(bench, "_world", _OneRank)
    monkeypatch.setattr(bench, "_library", lambda: "an MPI")
    monkeypatch.setattr(hb, "bench_allreduce", sweep)
    out = tmp_path / "rows.json"
    r = _run("bench", "allreduce", "-a", "ring,native", "--sizes", "8,16,32", "--json", str(out))
    assert r.exit_code == 130
    assert r.stderr == "hypercuboid: interrupted\n"
    assert asked == [[8], [16]]  # one size at a time; 32 never started
    assert json.loads(out.read_text()) == [
        {"algorithm": "ring", "bytes": 8, "valid": None},
        {"algorithm": "native", "bytes": 8, "valid": None},
    ]

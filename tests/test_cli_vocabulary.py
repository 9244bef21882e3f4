"""The CLI speaks one vocabulary (docs/cli.md): every option of every command, walked from the
top-level group, has one meaning and one spelling, and its old spellings still work for one
release with a line on stderr."""

from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypercuboid.cli import cli
from hypercuboid.cli.options import renamed
from hypercuboid.cli.vocabulary import MEANINGS, markdown, problems, walk

ROOT = Path(__file__).resolve().parent.parent


def test_every_command_speaks_the_vocabulary():
    assert problems(cli) == []


def test_the_walker_reaches_every_command():
    paths = {path for path, _ in walk(cli)}
    for verb in (
        "simulate halo",
        "schedule verify alltoall",
        "netsim exchange",
        "bench multicast",
        "topo compare",
        "alltoall generate",
        "lbm run",
        "tune allreduce",
    ):
        assert verb in paths


def test_the_check_catches_two_meanings_two_spellings_and_unknown_names():
    @click.group()
    def g():
        pass

    @g.command("a")
    @click.option("--sizes", "-m", default="8")  # -m is --model
    @click.option("--topo", "topo", default=None)  # without -t
    @click.option("--png", default=None)  # not in the table
    @click.option("--seed", default=None)  # a seed is an int
    def a(sizes, topo, png, seed):
        pass

    assert problems(g) == [
        "'a' --sizes/-m: its names have 2 meanings",
        "'a' --sizes/-m: spelled without --model (The cost model (host model on a network): a "
        "spec)",
        "'a' --topo: spelled without -t (The topology: a spec (slimfly:q=5, tree:fig5b, ...))",
        "'a' --png: --png is not in the vocabulary (MEANINGS)",
        "'a' --seed: takes a text, the vocabulary says int",
    ]


def test_the_table_gives_each_name_once():
    names = [n for m in MEANINGS for n in (*m.names, *m.aliases)]
    assert len(names) == len(set(names))


def test_docs_cli_md_is_the_generated_table():
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == markdown(cli)


def _run(*args, **kw):
    return CliRunner().invoke(cli, list(args), **kw)


def test_an_old_spelling_works_and_says_what_to_use(tmp_path):
    png = tmp_path / "c.png"
    r = _run("topo", "compare", "--png", str(png), "--radix-max", "70")
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines()[0] == "hypercuboid: --png is deprecated, use --plot"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = _run("topo", "compare", "--no-png", "--json")
    assert r.exit_code == 0
    assert r.stderr == ("hypercuboid: --no-png is deprecated, no figure is drawn without --plot\n")
    r = _run("schedule", "show", "allreduce", "-a", "ring", "-n", "4", "-r", "2")
    assert r.exit_code == 0
    assert r.stderr == "hypercuboid: -r is deprecated, use --rank\n"
    assert r.stdout.splitlines()[1] == "rank 2:"
    new = _run("schedule", "show", "allreduce", "-a", "ring", "-n", "4", "--rank", "2")
    assert new.stdout == r.stdout and new.stderr == ""


def test_old_and_new_spelling_together_are_refused():
    r = _run("schedule", "show", "allreduce", "-a", "ring", "-n", "4", "-r", "2", "--rank", "1")
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == "Error: -r and its new spelling given together"


def test_a_renamed_option_hands_its_value_over():
    @click.command()
    @click.option("--plot", default=None)
    @renamed("--png", target="plot", new="--plot")
    def c(plot):
        click.echo(f"plot={plot}")

    r = CliRunner().invoke(c, ["--png", "a.png"])
    assert (r.stdout, r.stderr) == (
        "plot=a.png\n",
        "hypercuboid: --png is deprecated, use --plot\n",
    )
    r = CliRunner().invoke(c, [])
    assert (r.stdout, r.stderr) == ("plot=None\n", "")


def test_json_takes_an_optional_file(tmp_path):
    base = ["schedule", "verify", "allreduce", "-a", "ring", "-n", "4"]
    out = _run(*base, "--json")
    assert out.exit_code == 0 and out.stdout.startswith('{"sound":true')
    before = _run("schedule", "verify", "--json", "allreduce", "-a", "ring", "-n", "4")
    assert before.stdout == out.stdout  # --json before a subcommand: stdout
    f = tmp_path / "v.json"
    r = _run(*base, "--json", str(f))
    assert r.exit_code == 0
    assert f.read_text() == out.stdout
    assert r.stdout.startswith("schedule 'allreduce ring': 4 ranks")  # the text report too
    r = _run(*base, "--json", str(f))
    assert r.exit_code == 1
    assert r.output == f"Error: {f} exists; pass --force to overwrite it\n"
    g = tmp_path / "v.out"
    assert _run(*base, f"--json={g}").exit_code == 0 and g.read_text() == out.stdout
    r = _run("topo", "show", "--json", "fullmesh:n=3")
    assert r.exit_code == 0 and r.stdout.startswith('{"name": "fullmesh:n=3,p=1"')


def test_csv_takes_an_optional_file(tmp_path):
    base = ["simulate", "allreduce", "-a", "ring", "-n", "4", "-t", "fullmesh:n=4"]
    r = _run(*base, "--csv")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "src,dst,bytes,injected_ps,delivered_ps,transfer_ps,queued_ps"
    assert len(lines) == 1 + 6  # the ring's six messages, the text output left out
    f = tmp_path / "m.csv"
    old = _run(*base, "--messages-csv", str(f))
    assert old.exit_code == 0
    assert old.stderr == "hypercuboid: --messages-csv is deprecated, use --csv\n"
    assert f.read_text() == r.stdout


def test_writers_refuse_to_overwrite_without_force(tmp_path):
    f = tmp_path / "x.json"
    f.write_text("mine")
    for args in (
        ["topo", "export", "fullmesh:n=3", "-o", str(f)],
        ["topo", "preset", "fig1", "-o", str(f)],
        ["topo", "list", "--json", str(f)],
    ):
        r = _run(*args)
        assert r.exit_code == 1, args
        assert r.output == f"Error: {f} exists; pass --force to overwrite it\n"
        assert f.read_text() == "mine"
    assert _run("topo", "preset", "fig1", "-o", str(f), "--force").exit_code == 0
    assert f.read_text().startswith("{")
    c = tmp_path / "a.c"
    c.write_text("mine")
    r = _run("alltoall", "generate", "-t", "tree:fig1", "-o", str(c))
    assert r.output == f"Error: {c} exists; pass --force to overwrite it\n"
    assert c.read_text() == "mine"
    p = tmp_path / "p.png"
    p.write_text("mine")
    r = _run("alltoall", "phases", "-t", "tree:fig1", "--plot", str(p))
    assert r.output == f"Error: {p} exists; pass --force to overwrite it\n"


def test_progress_goes_to_stderr_when_asked():
    base = ["simulate", "allreduce", "-a", "ring", "-n", "4", "-m", "postal:alpha=1us"]
    quiet = _run(*base)
    assert quiet.stderr == ""  # not a terminal: no progress by default
    r = _run(*base, "--progress")
    lines = [line.split("] ", 1)[1] for line in r.stderr.splitlines()]
    assert lines == [
        "simulating allreduce ring (4 ranks, 15 ops) on a cost model",
        "simulated: completion time 6,000.000 ns",
    ]
    assert r.stdout == quiet.stdout
    assert _run(*base, "-q", "--no-progress").stderr == ""
    r = _run("schedule", "verify", "allreduce", "-a", "ring", "-n", "4", "--progress")
    assert [line.split("] ", 1)[1] for line in r.stderr.splitlines()] == [
        "verifying allreduce ring (4 ranks, 15 ops)",
        "verified: sound",
    ]


def test_every_long_verb_takes_quiet_and_progress():
    long_verbs = {
        "simulate",
        "schedule verify",
        "netsim run",
        "netsim exchange",
        "bench allreduce",
        "bench alltoall",
        "bench pingpong",
        "bench multicast",
        "lbm run",
        "tune allreduce",
        "alltoall phases",
        "demo",
    }
    have: dict[str, set[str]] = {}
    for path, opt in walk(cli):
        have.setdefault(path, set()).update(opt.opts)
    for verb in long_verbs:
        assert {"--quiet", "--progress"} <= have[verb], verb


def _quiet_demo(tmp_path, *sizes):
    r = _run("demo", "--scale", "4", *sizes, "-q", "--progress", "--out", str(tmp_path / "d"))
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert [line.split("] ", 1)[1] for line in r.stderr.splitlines()] == [
        f"demo: writing into {tmp_path / 'd'}/",
        "demo: done",
    ]
    assert (tmp_path / "d").is_dir()


def test_demo_quiet_prints_nothing_and_progress_goes_to_stderr(tmp_path):
    """Every section says its lines through the one echo that -q silences: the small sizes
    without MPI here, the whole demo in make test-long."""
    _quiet_demo(tmp_path, "--small", "--no-mpi")


@pytest.mark.long
def test_the_whole_demo_quiet_prints_nothing_and_progress_goes_to_stderr(tmp_path):
    _quiet_demo(tmp_path)

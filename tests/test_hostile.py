"""Hostile input (issue 34): a fast selection of the cases of ``benchmarks/probe.py``. Each bad
input gives exactly one line on stderr that names it (no traceback, no usage block), with exit
status 1 (2 for a usage error), and no file that existed is overwritten."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypercuboid import HypercuboidError, topology
from hypercuboid.cli import cli
from hypercuboid.errors import TopologyError
from hypercuboid.schedule import OutputExistsError
from hypercuboid.schedules import allreduce

SIM = ["simulate", "allreduce", "-a", "ring", "-n", "4", "-c", "8", "-m", "postal:alpha=1us"]
VER = ["schedule", "verify", "allreduce", "-a", "ring", "-n", "4"]
TREE = ["simulate", "-t", "tree:fig5b", "-m", "loggops:o=1us,g=1us,S=64KiB"]
BIG = "9" * 200_000
KEEP = b"KEEP: this file existed before the run\n"


def _one_line(args: list[str], status: int = 1) -> str:
    """Runs the CLI and returns its one stderr line, after checking the exit status and that
    nothing else (a traceback, a usage block) was printed."""
    r = CliRunner().invoke(cli, args, prog_name="hypercuboid")
    assert isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == status, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    return lines[0]


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "dir").mkdir()
    (tmp_path / "garbage").write_bytes(b"\x00\xff\xfe garbage \x80\x81\n" * 64)
    (tmp_path / "comment.map").write_text("# nothing but a comment\n\n")
    (tmp_path / "short.map").write_text("0\n1\n2\n")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*SIM[:4], "-n", "-1", *SIM[6:]], "--ranks -1: the number of ranks must be >= 1"),
        ([*SIM[:4], "-n", "nan", *SIM[6:]], "--ranks nan: expected a whole number"),
        ([*SIM[:6], "-c", "-1", *SIM[8:]], "--count -1: the element count must be >= 0"),
        ([*SIM[:6], "-c", "1e999", *SIM[8:]], "--count 1e999: expected a whole number"),
        ([*SIM, "--calls", "-1"], "--calls -1: must be >= 1"),
        ([*VER, "--eager-limit", "-1"], "--eager-limit -1: must be >= 0"),
        (["tune", "allreduce", "-n", "8", "--pool", "-1"], "--pool -1: must be >= 0"),
        (["topo", "compare", "--radix", "-1", "--no-png"], "--radix -1: must be >= 1"),
        (
            [*SIM[:8], "-m", "postal:alpha=-1us"],
            "invalid model spec 'postal:alpha=-1us': alpha=-1us: negative; times must be >= 0",
        ),
        (
            [*SIM[:8], "-m", "postal:alpha=1us,alpha=2us"],
            "invalid model spec 'postal:alpha=1us,alpha=2us': key 'alpha' given twice",
        ),
        (
            [*SIM[:8], "-m", "postal:zz=1"],
            "invalid model spec 'postal:zz=1': unknown key 'zz' for postal; accepted: alpha, "
            "beta, gamma, delta",
        ),
        (
            [*SIM[:8], "-m", "nosuch:a=1"],
            "unknown model 'nosuch'; accepted: postal, pipelined, loggops",
        ),
        (
            [*SIM[:8], "-m", f"postal:alpha={BIG}"],
            f"invalid model spec 'postal:alpha={'9' * 47}... (200013 bytes)': "
            f"alpha={'9' * 60}... (200000 bytes): not a finite number",
        ),
        (
            [*SIM, "--noise", "nosuch"],
            "unknown noise 'nosuch'; accepted: none, exp, uniform, normal",
        ),
        (
            ["topo", "show", "slimfly:q=5,q=7"],
            "invalid topology spec 'slimfly:q=5,q=7': key 'q' given twice",
        ),
        (
            ["topo", "show", "slimfly:zz=1"],
            "invalid topology spec 'slimfly:zz=1': unknown key 'zz' for slimfly; accepted: q, "
            "p, bw, lat, switch, buffer, mtu, delay",
        ),
        (
            ["topo", "show", f"slimfly:q={BIG[:2000]}"],
            f"invalid topology spec 'slimfly:q={'9' * 50}... (2010 bytes)': "
            f"q={'9' * 60}... (2000 bytes): not a whole number in range",
        ),
        (
            [*VER[:3], "-a", "nosuch", "-n", "4"],
            "unknown allreduce algorithm 'nosuch'; accepted: ring_rotate, ring, tree, "
            "recursive_doubling, rabenseifner, elimination, recursive_multiplying:SCHEDULE, "
            "mpich_recursive_multiplying",
        ),
        ([*VER, "--op", "avg"], "unknown reduction op 'avg'; accepted: sum, prod, max, min"),
        (
            ["schedule", "verify", "halo", "-a", "blocking", "--decomp", "9" * 5000 + "x2x2"]
            + ["--subdomain", "2x2x2"],
            "--decomp '9999999999999999999999999999999999999999... (5004 characters)': accepted "
            "XxYxZ with three positive integers (64x64x64)",
        ),
        (
            ["schedule", "verify", "halo", "-a", "blocking", "--decomp", "0x2x2"]
            + ["--subdomain", "2x2x2"],
            "--decomp '0x2x2': accepted XxYxZ with three positive integers (64x64x64)",
        ),
        (
            ["lbm", "run", "--lattice", "0x4x4", "--steps", "1"],
            "--lattice '0x4x4': accepted XxYxZ with three positive integers (64x64x64)",
        ),
        ([*SIM, "--plot-ranks", "3-1"], "--plot-ranks 3-1: the range 3-1 runs down; write 1-3"),
        (
            ["netsim", "cdg", "-t", "slimfly:q=5", "-r", "nosuch"],
            "unknown routing 'nosuch'; accepted: min, inr, ugal, ugal-th",
        ),
        (
            ["netsim", "cdg", "-t", "slimfly:q=5", "-r", "min:vcs=none"],
            "slimfly:q=5: the channel dependency graph of min:vcs=none has a cycle (the routing "
            "can deadlock)",
        ),
        (
            ["netsim", "run", "-t", "slimfly:q=5", "--traffic", "shift:abc", "--load", "0.1"],
            "invalid traffic spec 'shift:abc': K=abc: not a whole number in range",
        ),
        (
            ["netsim", "run", "-t", "slimfly:q=5", "--traffic", "uniform,uniform", "--load", "0.1"],
            "--traffic uniform is given twice; list each one once",
        ),
        (
            ["netsim", "run", "-t", "slimfly:q=5", "--load", "2"],
            "invalid load 2: the offered load is a fraction of the injection bandwidth, in (0, 1]",
        ),
        (
            ["netsim", "run", "-t", "slimfly:q=5", "--load", "0.1", "--time", "nan"],
            "invalid time 'nan': unknown unit 'nan'; accepted units are ps, ns, us, ms, s (a bare "
            "number is ns)",
        ),
        (["--memory-limit", "-1B", *VER], "invalid size '-1B': negative; sizes must be >= 0"),
        (
            [*TREE, "allreduce", "-a", "ring", "-n", "4", "--packet-size", "0"],
            "invalid packet size 0 B: a packet needs at least 1 byte",
        ),
        (
            ["topo", "export", "slimfly:q=5", "-o", ""],
            "-o '': give a file name (or leave the option out)",
        ),
        ([*SIM, "--trace", ""], "--trace '': give a file name (or leave the option out)"),
        (
            [*SIM[:8], "--model-file", "/dev/zero"],
            "--model-file /dev/zero: not a regular file (a device or a pipe is not read)",
        ),
        (
            [*SIM, "--calls", "99999999999999999999999"],
            "--calls 99999999999999999999999: must be <= 9223372036854775807",
        ),
        (
            [*SIM, "--calls", "9999999999999999"],
            "--calls: a number too large for the core (out of range integral type conversion "
            "attempted)",
        ),
    ],
)
def test_bad_value_is_one_line(args: list[str], message: str) -> None:
    assert _one_line(args) == f"Error: {message}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["frobnicate"], "No such command 'frobnicate'."),
        (["--frob"], "No such option '--frob'."),
        (
            ["simulate", "--frob"],
            "No such option '--frob'. Did you mean '--force'?",
        ),
        (
            ["simulate", "-m", "postal:alpha=1us"],
            "give a schedule: --goal FILE, or a generator subcommand (allreduce, alltoall, halo)",
        ),
        (
            ["topo", "preset"],
            "Missing argument '{fig1|fig5a|fig5b|fig5c}'. Choose from: fig1, fig5a, fig5b, fig5c",
        ),
    ],
)
def test_usage_error_is_one_line(args: list[str], message: str) -> None:
    assert _one_line(args, status=2) == f"Error: {message}"


@pytest.mark.parametrize(
    ("args", "message", "status"),
    [
        (
            ["schedule", "verify", "--goal", "{d}/missing"],
            "{d}/missing: No such file or directory (os error 2)",
            1,
        ),
        (
            ["schedule", "verify", "--goal", "{d}/empty"],
            "line 1, column 1: missing 'num_ranks N': the file never says how many ranks it has",
            1,
        ),
        (
            ["schedule", "verify", "--goal", "/dev/zero"],
            "line 1, column 1: line longer than 1048576 bytes: not a GOAL schedule",
            1,
        ),
        (
            ["schedule", "verify", "--goal", "{d}/dir"],
            "Invalid value for '--goal' / '--file': File '{d}/dir' is a directory.",
            2,
        ),
        (
            [*TREE, "allreduce", "-a", "ring", "-n", "4", "--mapping", "file:{d}/comment.map"],
            "invalid mapping file of 0 lines: it needs one endpoint per rank: 4 lines",
            1,
        ),
        (
            [*TREE, "allreduce", "-a", "ring", "-n", "4", "--mapping", "file:{d}/short.map"],
            "invalid mapping file of 3 lines: it needs one endpoint per rank: 4 lines",
            1,
        ),
        (
            ["topo", "show", "tree:{d}/garbage"],
            "cannot access '{d}/garbage': not UTF-8 text",
            1,
        ),
        (
            ["topo", "export", "slimfly:q=5", "-o", "{d}/nodir/x.json"],
            "{d}/nodir/x.json: directory {d}/nodir does not exist",
            1,
        ),
    ],
)
def test_bad_file_is_one_line(files: Path, args: list[str], message: str, status: int) -> None:
    args = [a.replace("{d}", str(files)) for a in args]
    assert _one_line(args, status) == "Error: " + message.replace("{d}", str(files))


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["topo", "export", "slimfly:q=5", "-o", "{f}"], "keep.json"),
        (["schedule", "generate", "allreduce", "-a", "ring", "-n", "4", "-o", "{f}"], "keep.txt"),
        ([*SIM, "--json", "{f}"], "keep.json"),
        ([*SIM, "--trace", "{f}"], "keep.json"),
        (["alltoall", "phases", "-t", "tree:fig5b", "--plot", "{f}"], "keep.png"),
        (["alltoall", "generate", "-t", "tree:fig5b", "-o", "{f}"], "keep.c"),
        (["netsim", "cdg", "-t", "slimfly:q=5", "--json", "{f}"], "keep.json"),
    ],
)
def test_existing_output_is_kept(tmp_path: Path, args: list[str], name: str) -> None:
    f = tmp_path / name
    f.write_bytes(KEEP)
    line = _one_line([a.replace("{f}", str(f)) for a in args])
    assert line == f"Error: {f} exists; pass --force to overwrite it"
    assert f.read_bytes() == KEEP


def test_cdg_reports_the_cycle_and_fails() -> None:
    r = CliRunner().invoke(cli, ["netsim", "cdg", "-t", "slimfly:q=5", "-r", "min:vcs=none,min"])
    assert r.exit_code == 1
    out = r.stdout.splitlines()
    assert out[0].startswith("slimfly:q=5,p=4 min:vcs=none: 1 VC(s), none assignment, ")
    assert ": CYCLE: r" in out[0]
    assert out[1].endswith(": acyclic (deadlock-free)")


def test_topology_api_refuses_a_binary_file_and_a_radix_that_is_not_a_number(
    tmp_path: Path,
) -> None:
    f = tmp_path / "blob.json"
    f.write_bytes(b"\x00\xd0\xff" * 10)
    with pytest.raises(TopologyError) as e:
        topology.load(f)
    assert str(e.value) == (
        f"{f}: not a topology file (not UTF-8 text; expected the JSON that "
        "export(topology, 'json', path) writes)"
    )
    for radix in ("a", 1, True, 2.5):
        with pytest.raises(TopologyError) as e:
            topology.compare(radix=radix)  # type: ignore[arg-type]
        assert str(e.value) == f"compare: radix={radix!r}; must be a whole number >= 2"


def test_save_refuses_an_existing_file(tmp_path: Path) -> None:
    f = tmp_path / "s.txt"
    f.write_bytes(KEEP)
    s = allreduce("ring", 4)
    for fmt in ("text", "goal", "c"):
        with pytest.raises(OutputExistsError) as e:
            s.save(f, format=fmt)
        assert str(e.value) == f"'{f}' exists; pass force=True to overwrite it"
        assert isinstance(e.value, FileExistsError) and isinstance(e.value, HypercuboidError)
        assert f.read_bytes() == KEEP
    s.save(f, force=True)
    assert f.read_text() == s.to_text()


def test_topology_writers_refuse_an_existing_file(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_bytes(KEEP)
    with pytest.raises(OutputExistsError, match="exists; pass force=True to overwrite it"):
        topology.export("slimfly:q=5", "json", f)
    with pytest.raises(OutputExistsError, match="exists; pass force=True to overwrite it"):
        topology.plot_compare(f)
    assert f.read_bytes() == KEEP
    text = topology.export("slimfly:q=5", "json", f, force=True)
    assert f.read_text() == text


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    # `hypercuboid schedule show ... | head -1`: no "Error: [Errno 32] Broken pipe", the exit
    # status a shell tool has on SIGPIPE.
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-c", "from hypercuboid.cli import main; main()", "schedule", "show",
         "allreduce", "-a", "ring", "-n", "512", "-c", "512"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert p.stdout is not None and p.stderr is not None
    assert p.stdout.readline().startswith(b"allreduce ring: 512 ranks")
    p.stdout.close()
    with p.stderr:
        err = p.stderr.read()
    assert (p.wait(timeout=120), err) == (141, b"")

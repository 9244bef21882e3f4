"""``hypercuboid netsim``: the JSON/CSV contract, text output and error messages."""

from __future__ import annotations

import csv
import io
import json

from click.testing import CliRunner
from hypercuboid import _core
from hypercuboid.cli import cli
from hypercuboid.topology import generate
from netsim_keys import REPORT_KEYS, core_report_dict

FAST = ["--time", "20us", "--warmup", "5us", "--executor", "serial"]


def invoke(*args: str):
    return CliRunner().invoke(cli, ["netsim", *args])


def test_run_json_one_object_per_load_point():
    r = invoke(
        "run",
        "--topo",
        "oft:k=4",
        "--routing",
        "ugal",
        "--traffic",
        "uniform",
        "--load",
        "0.2:0.6:0.2",
        "--json",
        *FAST,
    )
    assert r.exit_code == 0, r.output
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["offered"] for o in objs] == [0.2, 0.4, 0.6]
    for o in objs:
        assert {"offered", "accepted", "latency_avg_ns"} <= set(o)
        assert isinstance(o["accepted"], float) and 0 < o["accepted"] <= 1
        assert o["latency_avg_ns"] > 220.48  # above the zero-load latency of 0 hops
        assert (o["topology"], o["routing"], o["traffic"]) == ("oft:k=4,p=4", "ugal", "uniform")
        assert len(o["top_links"]) == 10  # the core's default
        assert set(o["top_links"][0]) == {"from", "to", "link", "packets", "utilisation"}


def _old_json(d: dict, printed: dict) -> str:
    """The line the CLI printed for the binding's report dict ``d`` before reports became
    objects (echo_json of the dict), with the wall-clock timings of the run that printed
    ``printed``."""
    d = d | {k: printed[k] for k in ("wall_seconds", "packets_per_second")}
    return json.dumps(d, separators=(",", ":"))


def test_json_output_is_the_report_dict_byte_for_byte():
    r = invoke(
        "run", "-t", "slimfly:q=5", "-r", "ugal", "--load", "0.7", "--links", "--json", *FAST
    )
    assert r.exit_code == 0, r.output
    c = _core.netsim_run(
        generate("slimfly:q=5"),
        "ugal",
        "uniform",
        [0.7],
        warmup_ps=5_000_000,
        duration_ps=20_000_000,
        links=True,
    )[0]
    d = core_report_dict(c)
    assert r.stdout == _old_json(d, json.loads(r.stdout)) + "\n"
    assert list(json.loads(r.stdout)) == [*REPORT_KEYS, "links"]
    r = invoke(
        "exchange", "--pattern", "nn", "-t", "mlfm:h=3", "--message", "8KB", "--json",
        "--executor", "serial",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    c = _core.netsim_exchange(generate("mlfm:h=3"), "min", "nn", message_bytes=8192)
    d = core_report_dict(c)
    assert r.stdout == _old_json(d, json.loads(r.stdout)) + "\n"
    assert list(json.loads(r.stdout))[-3:] == ["completion_ns", "effective_throughput", "dims"]


def test_threads_option_reaches_the_engine():
    args = ["run", "--topo", "slimfly:q=5", "--load", "0.5", "--json", *FAST]
    one = json.loads(invoke(*args).stdout)
    three = json.loads(invoke(*args, "--threads", "3").stdout)
    assert (one["threads"], three["threads"]) == (1, 3)  # 1: a small network, automatic
    assert (one["accepted"], one["latency_avg_ns"]) == (three["accepted"], three["latency_avg_ns"])
    r = invoke(*args, "--threads", "-2")
    assert r.exit_code != 0
    assert r.output.splitlines()[-1] == (
        "Error: invalid threads -2: expected a whole number from 1 to 255, or 0 for "
        "automatic (every core for a network of 4096 ports or more)"
    )


def test_single_load_json_parses_as_one_document():
    r = invoke("run", "-t", "mlfm:h=3", "--load", "0.5", "--json", *FAST)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["offered"] == 0.5


def test_several_routings_and_traffics_text_and_csv():
    args = [
        *"run -t mlfm:h=4 -r min,ugal:n=2,c=1 --traffic worst --load 0.1,0.4".split(),
        *FAST,
    ]
    r = invoke(*args)
    assert r.exit_code == 0, r.output
    table = r.stdout.split("\n\n")[0].splitlines()
    assert table[0].split()[:5] == ["topology", "routing", "traffic", "offered", "accepted"]
    assert sum(" ugal:n=2,c=1 " in ln for ln in table) == 2
    assert "saturation (accepted < 0.97 x offered)" in r.stdout
    assert "mlfm:h=4,l=4,p=4 min worst: saturated from 40% offered" in r.stdout
    r = invoke(*args, "--csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["routing"], x["offered"]) for x in rows] == [
        ("min", "0.1"),
        ("min", "0.4"),
        ("ugal:n=2,c=1", "0.1"),
        ("ugal:n=2,c=1", "0.4"),
    ]
    assert rows[1]["busiest_link"].startswith("r")
    assert float(rows[1]["busiest_link_utilisation"]) > 0.99


def test_error_messages():
    cases = [
        (
            ["run", "-t", "mlfm:h=4", "-r", "dor"],
            "Error: unknown routing 'dor'; accepted: min, inr, ugal, ugal-th",
        ),
        (
            ["run", "-t", "mlfm:h=4", "--traffic", "tornado"],
            "Error: unknown traffic 'tornado'; accepted: uniform, worst, permutation, shift:K",
        ),
        *(
            (
                ["run", "-t", "mlfm:h=4", "--load", load],
                f"Error: invalid load {load}: the offered load is a fraction of the injection "
                "bandwidth, in (0, 1]",
            )
            for load in ("1.5", "0")
        ),
        (
            ["run", "-t", "fullmesh:n=2", "-r", "inr"],
            "Error: routing inr cannot run on fullmesh:n=2,p=1: it needs an intermediate router "
            "other than the source and destination routers, and only 2 routers have endpoints",
        ),
        (
            ["run", "-t", "torus:dims=18x18", "-r", "ugal"],
            "Error: routing ugal cannot run on torus:dims=18x18,p=1: the hop-index VC assignment "
            "needs 36 virtual channels (diameter 18, twice for indirect paths) and at most 32 are "
            "supported",
        ),
        (
            ["run", "-t", "fattree:k=4", "--traffic", "worst"],
            "Error: traffic worst cannot run on fattree:k=4,levels=2: a worst-case pattern is "
            "defined for direct topologies of diameter 2 (slimfly, polarfly, 2-D hyperx), mlfm and "
            "oft, not for fattree; use shift:K or permutation",
        ),
        (
            ["run", "-t", "slimfly:q=6"],
            "Error: slimfly: invalid q=6: not a prime power; q must be a prime power 4w+δ with "
            "w ≥ 1 and δ ∈ {-1, 0, 1} (3, 4, 5, 7, 8, 9, 11, 13, 16, ...); the nearest valid q is "
            "5 or 7",
        ),
        (
            ["run", "-t", "mlfm:h=4", "-r", "ugal-th:t=200"],
            "Error: invalid routing spec 'ugal-th:t=200': t=200: the threshold is a percentage "
            "of the output buffer, 0 to 100",
        ),
    ]
    for args, msg in cases:
        r = invoke(*args)
        assert r.exit_code == 1, (args, r.output)
        assert r.output.strip().splitlines()[-1] == msg, r.output
        assert "Traceback" not in r.output


def test_exchange_json_and_plot(tmp_path):
    png = tmp_path / "a2a.png"
    r = invoke(
        "exchange",
        "--pattern",
        "a2a",
        "-t",
        "mlfm:h=3",
        "-r",
        "min,inr",
        "--json",
        "--plot",
        str(png),
        "--executor",
        "serial",
    )
    assert r.exit_code == 0, r.output
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["routing"] for o in objs] == ["min", "inr"]
    assert objs[0]["effective_throughput"] > 0.9 > 0.55 > objs[1]["effective_throughput"]
    assert objs[0]["traffic"] == "a2a" and objs[0]["completion_ns"] > 0
    assert png.exists()
    r = invoke("exchange", "--pattern", "a2a", "-t", "mlfm:h=3", "--plot", str(png))
    assert r.exit_code == 1
    assert r.output.strip() == f"Error: {png} exists; pass --force to overwrite it"
    r = invoke("exchange", "--pattern", "a2a", "-t", "mlfm:h=3", "--dims", "2x2x3")
    assert r.exit_code == 2 and "--dims applies to --pattern nn" in r.output
    r = invoke(
        "exchange",
        "--pattern",
        "nn",
        "-t",
        "mlfm:h=3",
        "--dims",
        "3x4x3",
        "--message",
        "8KB",
        "--executor",
        "serial",
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1].split()[:3] == ["mlfm:h=3,l=3,p=3", "min", "nn"]


def test_run_plot_and_cdg(tmp_path):
    png = tmp_path / "sweep.png"
    r = invoke(
        "run", "-t", "mlfm:h=3", "-r", "min,inr", "--load", "0.2,0.5", "--plot", str(png), *FAST
    )
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:4] == b"\x89PNG"
    r = invoke("cdg", "-t", "mlfm:h=4", "-r", "min,inr,inr:vcs=none")
    # A cyclic graph is reported on stdout and fails the command (issue 34).
    assert r.exit_code == 1, r.output
    assert r.stderr == (
        "Error: mlfm:h=4: the channel dependency graph of inr:vcs=none has a cycle "
        "(the routing can deadlock)\n"
    )
    lines = r.stdout.splitlines()
    assert lines[0].startswith("mlfm:h=4,l=4,p=4 min: 1 VC(s), phase assignment,")
    assert lines[0].endswith("acyclic (deadlock-free)")
    assert lines[1].startswith("mlfm:h=4,l=4,p=4 inr: 2 VC(s), phase assignment,")
    assert ": CYCLE: r" in lines[2]
    r = invoke("list")
    assert "routings:  min, inr, ugal, ugal-th" in r.stdout

"""Schedule search from Python and the ``hypercuboid tune allreduce`` CLI."""

import json

import hypercuboid.tune as t
import pytest
from click.testing import CliRunner
from expected import EXPECTED
from hypercuboid.cli import cli
from hypercuboid.errors import ModelError, ScheduleError

TABLE1_MIN = t.pipelined_model("1.34us", "0.34us")


def run(args):
    return CliRunner().invoke(cli, args)


def test_pipelined_model_is_canonical():
    assert TABLE1_MIN == "pipelined:alpha_p=1340ns,alpha_r=340ns,beta=0,gamma=0,delta=0"
    assert t.pipelined_model(500, 100, "0.4ns", 0, "10ns") == (
        "pipelined:alpha_p=500ns,alpha_r=100ns,beta=400ps,gamma=0,delta=10ns"
    )
    with pytest.raises(ModelError):
        t.pipelined_model("1.34 parsecs", "0.34us")


def test_b_opt_eq5():
    assert t.b_opt(4.0) == pytest.approx(3.970625759544232, abs=1e-12)
    assert t.b_opt(1.0, 0.25) == pytest.approx(3.970625759544232, abs=1e-12)
    assert t.b_opt_integer(1.0) == 2
    with pytest.raises(ValueError, match="overlap ratio"):
        t.b_opt(-2.0)


def test_schedules_and_counts():
    assert t.schedules(7) == EXPECTED["recursive_multiplying_schedules_of_7"]
    assert t.schedules(8, split=False, merged=False) == ["a2,a2,a2", "a2,a4", "a4,a2", "a8"]
    assert t.count_schedules(720) == {"factored": 1888, "split": 7, "merged": 7, "total": 1902}
    with pytest.raises(ScheduleError, match="more than the cap of 100"):
        t.schedules(720, max_schedules=100)


def test_parse_estimate_and_check():
    d = t.parse_schedule_string("m1g2a3,n1g3a2")
    assert d == {
        "text": "m1g2a3,n1g3a2",
        "stages": [("m", 1, 2, 3), ("n", 1, 3, 2)],
        "factored": False,
        "nranks": 7,
    }
    # Σ (α_p + b_i α_r): 3 x 1.34 + (7 + 2 + 3) x 0.34 µs.
    assert t.estimate("a8,a3,a4", 96, TABLE1_MIN) == pytest.approx(8100.0)
    t.check_schedule("c6m2,a2,a2,e6m2", 7)
    with pytest.raises(ScheduleError, match="does not fit 8 ranks"):
        t.check_schedule("c6m2,a2,a2,e6m2", 8)
    assert t.suggest(7) == ["a7", "c6m2,a2,a2,e6m2", "m1g2a3,n1g3a2"]


def test_optimal_schedule_at_scale():
    assert t.optimal_schedule(1 << 20, TABLE1_MIN) == ("a4,a4,a4,a4,a4,a4,a4,a4,a4,a4", 23600.0)
    assert t.optimal_schedule(1_000_000, TABLE1_MIN) == ("a5,a5,a5,a5,a5,a5,a4,a4,a4", 23280.0)


def test_tune_allreduce_ranks_and_falls_back():
    r = t.tune_allreduce(8, TABLE1_MIN, top=2)
    assert r.method == "exhaustive"
    assert [(x.schedule, x.predicted_ns) for x in r.rows] == [("a8", 3720.0), ("a2,a4", 4040.0)]
    big = t.tune_allreduce(1_000_000, TABLE1_MIN)
    assert big.method == "dynamic_program"
    assert big.reason == "287682 schedules (287648 factored) exceed the cap of 200000"
    assert big.best.schedule == "a5,a5,a5,a5,a5,a5,a4,a4,a4"
    d = big.to_dict()
    assert d["rows"][0]["predicted_ns"] == 23280.0


def test_cli_table():
    res = run(["tune", "allreduce", "--ranks", "8", "--alpha-p", "1.34us", "--alpha-r", "0.34us"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "allreduce on 8 ranks, 1 x float64 (8 bytes)"
    assert lines[1] == "model      pipelined:alpha_p=1340ns,alpha_r=340ns,beta=0,gamma=0,delta=0"
    assert lines[2] == "b_opt      3.934 messages per stage (eq. 5; stages of about 4.9 ranks)"
    assert lines[3].startswith(
        "search     exhaustive: 4 schedules (4 factored, 0 split, 0 merged) ranked by the "
        "closed form in "
    )
    assert lines[4:] == [
        "rank  schedule  stages  predicted (us)  simulated (us)",
        "   1  a8             1           3.720               -",
        "   2  a2,a4          2           4.040               -",
        "   3  a4,a2          2           4.040               -",
        "   4  a2,a2,a2       3           5.040               -",
    ]


def test_cli_simulate_json():
    res = run(
        [
            "tune", "allreduce", "--ranks", "7", "--alpha-p", "500ns", "--alpha-r", "100ns",
            "--beta", "0.4ns", "--delta", "10ns", "--dtype", "int64", "--simulate", "--top",
            "3", "--json",
        ]
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["simulated"] == 7
    assert [(r["schedule"], r["simulated_ns"]) for r in d["rows"]] == [
        ("a7", 1179.2),
        ("m1g2a3,n1g3a2", 1452.8),
        ("m3g2a2,n3g2a2", 1452.8),
    ]


def test_cli_dynamic_program_message():
    res = run(["tune", "allreduce", "-n", "1048576", "--alpha-p", "1.34us", "--alpha-r", "0.34us"])
    assert res.exit_code == 0, res.output
    assert (
        "search     dynamic program only (524288 schedules (524288 factored) exceed the cap of "
        "200000): the model-optimal factored schedule over the 21 divisors of 1,048,576"
    ) in res.output
    assert "a4,a4,a4,a4,a4,a4,a4,a4,a4,a4      10          23.600" in res.output


def test_cli_model_file(tmp_path):
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"model": "pipelined:alpha_p=1.51us,alpha_r=0.38us"}))
    res = run(["tune", "allreduce", "-n", "96", "--model-file", str(f), "--top", "1"])
    assert res.exit_code == 0, res.output
    assert "   1  a4,a4,a6       3           8.710" in res.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"notmodel": 1}')
    res = run(["tune", "allreduce", "-n", "96", "--model-file", str(bad)])
    assert res.exit_code == 1
    assert "no 'model' key; keys: notmodel" in res.output


def test_cli_model_file_of_loggops_uses_its_pipelined_fit_or_refuses_in_one_line(tmp_path):
    cal = tmp_path / "cal.json"
    doc = {
        "model": "loggops:L=1us,o=100ns,g=100ns,G=0.1ns",
        "models": {"pipelined": "pipelined:alpha_p=1.51us,alpha_r=0.38us"},
        "nranks": 2,
    }
    cal.write_text(json.dumps(doc))
    args = ["tune", "allreduce", "-n", "96", "--model-file", str(cal), "--top", "1"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert (
        res.stderr == f"warning: model file {cal} was measured on 2 ranks, this grid has 96 ranks\n"
    )
    # the file's pipelined fit ranks, as in test_cli_model_file
    assert "   1  a4,a4,a6       3           8.710" in res.stdout
    del doc["models"]
    cal.write_text(json.dumps(doc))
    res = CliRunner().invoke(cli, args)
    assert (res.exit_code, res.stderr) == (
        1,
        f"Error: {cal}: its model is loggops and it has no models.pipelined; tune ranks by the "
        "pipelined postal model's closed form (give a postal or pipelined model file, or one "
        "from calibrate)\n",
    )


def test_cli_errors():
    res = run(["tune", "allreduce", "-n", "8"])
    assert res.exit_code == 1
    assert "give --alpha-p and --alpha-r" in res.output
    res = run(["tune", "allreduce", "-n", "0", "--alpha-p", "1us", "--alpha-r", "1us"])
    assert "--ranks 0: the number of ranks must be >= 1" in res.output
    res = run(["tune", "allreduce", "-n", "8", "--alpha-p", "1 lightyear", "--alpha-r", "1us"])
    assert res.exit_code == 1
    assert "alpha_p" in res.output
    res = run(
        ["tune", "allreduce", "-n", "8", "--alpha-p", "1us", "--alpha-r", "1us", "--model-file",
         "x.json"]
    )  # fmt: skip
    assert "not both" in res.output

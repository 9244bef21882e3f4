"""The Python API and CLI of schedules: generate, verify, simulate, export (issue "Foundation")."""

from __future__ import annotations

import json

import hypercuboid as hc
import numpy as np
import pytest
from click.testing import CliRunner
from expected import EXPECTED
from hypercuboid.cli import cli

LOGGOPS = "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535"

DEADLOCK_GOAL = """num_ranks 2
rank 0 {
l0: recv 8b from 1 tag 0
l1: send 8b to 1 tag 0
l1 requires l0
}
rank 1 {
l0: recv 8b from 0 tag 0
l1: send 8b to 0 tag 0
l1 requires l0
}
"""


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# -- API ----------------------------------------------------------------------------------------


#: The allreduce algorithms, in the registry's order (the core's tests assert the same list).
ALLREDUCE_NAMES = EXPECTED["allreduce_algorithms"]


def test_allreduce_generates_and_verifies_every_algorithm():
    for alg in ["ring_rotate", "ring", "tree", "recursive_doubling"]:
        s = hc.schedules.allreduce(alg, nranks=6, count=10)
        assert s.nranks == 6
        assert s.meta == {
            "collective": "allreduce",
            "count": 10,
            "dtype": "float64",
            "op": "sum",
            "name": f"allreduce {alg}",
            "elem_size": 8,
        }
        rep = s.verify()
        assert rep.sound and bool(rep), rep.text
        assert rep.semantics["correct"] is True


def test_loggops_pins_recursive_doubling():
    # Issue "Foundation", section 4: log2(N) x 6042 ns (2o + L + 7G per step).
    for log2n in (1, 3, 10):
        r = hc.schedules.allreduce("recursive_doubling", 1 << log2n, 1, dtype="int64").simulate(
            LOGGOPS
        )
        assert r.completion_time_ps == log2n * 6_042_000
        assert r.completion_time_ns == log2n * 6042.0
        assert r.rank_finish_ps.dtype == np.uint64
        assert len(r.rank_finish_ps) == 1 << log2n
        assert r.skew_ns == 0.0


def test_postal_simulation_equals_the_closed_forms():
    # Ruefenacht et al. eq. 1 and the coursework's T_ring, T_tree (section 3.1).
    alpha, beta = 1_000_000, 100.0  # 1 us, 0.1 ns per byte
    model = "postal:alpha=1us,beta=0.1ns,gamma=0"
    for alg, n, count in [
        ("recursive_doubling", 16, 100),
        ("ring_rotate", 5, 7),
        ("tree", 8, 64),
        ("ring", 4, 40),
    ]:
        s = hc.schedules.allreduce(alg, n, count)
        t = s.simulate(model).completion_time_ps
        assert t == hc._core.allreduce_cost(alg, n, count, "float64", alpha, beta, 0.0)
    b = 8 * 100
    assert hc.schedules.allreduce("recursive_doubling", 16, 100).simulate(
        model
    ).completion_time_ps == (4 * (alpha + round(b * beta)))


def test_trace_columns_and_chrome_trace(tmp_path):
    s = hc.schedules.allreduce("recursive_doubling", 4, 2)
    path = tmp_path / "t.json"
    r = s.simulate("postal:alpha=1us,beta=0,gamma=0", trace=True, chrome_trace=path)
    t = r.trace
    assert len(t.op_rank) == s.total_ops == 16
    assert set(t.op_kind_names()) == {"send", "recv"}
    assert len(t.msg_src) == r.messages == 8
    assert (t.msg_arrival - t.msg_depart == 1_000_000).all()
    events = json.loads(path.read_text())["traceEvents"]
    assert any(e.get("ph") == "X" for e in events)


def test_noise_is_deterministic_for_a_seed():
    s = hc.schedules.allreduce("tree", 16, 4)
    a = s.simulate(LOGGOPS, noise="exp:mean=200ns", seed=7)
    b = s.simulate(LOGGOPS, noise="exp:mean=200ns", seed=7)
    c = s.simulate(LOGGOPS, noise="exp:mean=200ns", seed=8)
    quiet = s.simulate(LOGGOPS)
    assert (a.rank_finish_ps == b.rank_finish_ps).all()
    assert a.completion_time_ps != c.completion_time_ps
    assert a.completion_time_ps > quiet.completion_time_ps


def test_text_round_trip_and_goal_export(tmp_path):
    s = hc.schedules.allreduce("ring", 5, 13, dtype="int32", op="max")
    back = hc.parse_schedule(s.to_text())
    assert back.meta == s.meta
    assert back.to_text() == s.to_text()
    assert back.verify().sound
    goal = s.to_goal()
    assert goal.startswith("num_ranks 5\n")
    assert "\nrank 0 {\n" in goal and goal.endswith("}\n")
    assert not any(line.startswith((" ", "\t")) for line in goal.splitlines())
    g = hc.parse_schedule(goal, "g")
    assert g.meta["collective"] == "none"
    assert g.verify().semantics is None
    path = tmp_path / "s.hcs"
    s.save(path)
    assert hc.read_schedule(path).to_text() == s.to_text()


def test_program_columns_of_one_rank_alone_equal_the_schedule():
    s = hc.schedules.allreduce("recursive_doubling", 6, 3)
    for r in range(6):
        a = s.program(r)
        b = hc._core.allreduce_program("recursive_doubling", 6, r, 3)
        for k in a:
            if k == "deps":
                assert sorted(a[k]) == sorted(b[k])
            elif isinstance(a[k], np.ndarray):
                assert (a[k] == b[k]).all(), k
            else:
                assert a[k] == b[k], k
    # rank 1 collapses rank 0's input: receive-reduce-copy with the input as local operand
    p = s.program(1)
    assert p["kind"][0] == 1 and p["peer"][0] == 0
    assert p["combine"][0] == 1  # incoming (rank 0) ⊕ own: rank order
    assert p["src_slot"][0] == 0  # operand: the input


def test_errors_are_value_errors_with_the_accepted_values():
    with pytest.raises(hc.ScheduleError, match="unknown allreduce algorithm 'butterfly'; accepted"):
        hc.schedules.allreduce("butterfly", 4)
    with pytest.raises(ValueError, match="invalid number of ranks 0"):
        hc.schedules.allreduce("ring", 0)
    with pytest.raises(ValueError, match="invalid count -1"):
        hc.schedules.allreduce("ring", 4, -1)
    with pytest.raises(hc.ScheduleError, match="unknown dtype 'float128'"):
        hc.schedules.allreduce("ring", 4, 1, dtype="float128")
    with pytest.raises(hc.ModelError, match="unknown model 'foo'; accepted: postal, pipelined"):
        hc.parse_model("foo:x=1")
    with pytest.raises(hc.ModelError, match="negative"):
        hc.schedules.allreduce("ring", 2).simulate("postal:alpha=-1us")
    with pytest.raises(
        hc.ScheduleError, match="line 3, column 8: expected 'b' after the send size"
    ):
        hc.parse_schedule("num_ranks 2\nrank 0 {\nsend 8 to 1\n}\n")
    with pytest.raises(hc.DeadlockError, match="deadlock") as e:
        hc.parse_schedule(DEADLOCK_GOAL).simulate(LOGGOPS)
    assert not isinstance(e.value, ValueError) and isinstance(e.value, hc.SimulationError)
    assert (e.value.unfinished_ops, e.value.stuck_ranks) == (4, 2)
    assert e.value.stuck[0] == hc.errors.StuckOp(
        rank=0,
        op=0,
        text="recv 8b from 1 tag 0",
        waits_for="waits for a message from rank 1 with tag 0",
    )
    assert issubclass(hc.ModelError, hc.HypercuboidError)
    with pytest.raises(hc.ScheduleError) as e:
        hc.schedules.allreduce("butterfly", 4)
    # the names, recursive_multiplying with its positional argument
    assert e.value.accepted == [
        f"{n}:SCHEDULE" if n == "recursive_multiplying" else n for n in ALLREDUCE_NAMES
    ]
    with pytest.raises(hc.ModelError) as e:
        hc.parse_model("postal:alpha=1us,x=2")
    assert e.value.accepted == ["alpha", "beta", "gamma", "delta"]
    with pytest.raises(hc.ScheduleError) as e:
        hc.schedules.allreduce("a8,a3", 7)
    assert e.value.accepted == ["a7", "c6m2,a2,a2,e6m2", "m1g2a3,n1g3a2"]
    assert hc.ScheduleError("x").accepted == []


# -- CLI ----------------------------------------------------------------------------------------


def test_cli_simulate_json_contract(tmp_path):
    r = run(
        "simulate",
        "allreduce",
        "--algorithm",
        "recursive_doubling",
        "--ranks",
        "8",
        "--count",
        "1",
        "--dtype",
        "int64",
        "--model",
        LOGGOPS,
        "--json",
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["completion_time_ns"] == 3 * 6042.0
    assert d["rank_finish_ns"] == [18126.0] * 8
    # the same through a GOAL file, and options before the subcommand
    goal = tmp_path / "rd.goal"
    assert (
        run(
            "schedule",
            "generate",
            "--format",
            "goal",
            "-o",
            str(goal),
            *"allreduce -a recursive_doubling -n 8 --dtype int64".split(),
        ).exit_code
        == 0
    )
    r = run("simulate", "--goal", str(goal), "--model", LOGGOPS, "--json", "--no-per-rank")
    d = json.loads(r.output)
    assert d["completion_time_ns"] == 18126.0 and "rank_finish_ns" not in d


def test_cli_verify_exit_codes(tmp_path):
    r = run("schedule", "verify", "allreduce", "--algorithm", "ring", "--ranks", "5")
    assert r.exit_code == 0 and r.output.startswith("schedule 'allreduce ring'")
    bad = tmp_path / "dead.goal"
    bad.write_text(DEADLOCK_GOAL)
    r = run("schedule", "verify", "--goal", str(bad))
    assert r.exit_code == 1
    assert "deadlock" in r.output
    r = run("schedule", "verify", "--goal", str(bad), "--json")
    assert r.exit_code == 1 and json.loads(r.output)["sound"] is False
    r = run("simulate", "--goal", str(bad), "--model", LOGGOPS, "--strict")
    assert r.exit_code == 1
    assert r.output.startswith("Error: --strict: the schedule does not verify")


def test_verify_threads_give_the_same_report(tmp_path):
    bad = tmp_path / "dead.goal"
    bad.write_text(DEADLOCK_GOAL)
    dead = hc.Schedule.read(bad)
    for s in (hc.schedules.allreduce("recursive_doubling", 64, 4), dead):
        one = s.verify(threads=1)
        for t in (0, 2, 3):
            r = s.verify(threads=t)
            assert (r.sound, r.problems, r.truncated, r.stats, r.text) == (
                one.sound,
                one.problems,
                one.truncated,
                one.stats,
                one.text,
            )
    assert not dead.verify(threads=2).sound
    with pytest.raises(ValueError, match=r"threads=-1: must be >= 0"):
        dead.verify(threads=-1)
    r = run("schedule", "verify", "--goal", str(bad), "--threads", "2")
    assert r.exit_code == 1 and "deadlock" in r.output
    r = run("schedule", "verify", "--goal", str(bad), "--threads", "-2")
    assert r.exit_code == 1
    assert r.output.startswith("Error: --threads -2: must be >= 0 (0: every core for 2^20 ops")


def test_simulate_threads_give_the_same_result():
    # Lanes split the ranks of a schedule whose sends are all eager (LogGOPS with S above the
    # messages, postal); noise makes most times distinct. Every thread count gives every
    # rank's finish time of one thread.
    # Each result says the threads it ran on: the default is one below 2^19 ops, and the
    # alltoall's windows are too small to pay for their barriers, so one thread runs it.
    cases = [
        (hc.schedules.allreduce("recursive_doubling", 1024, 1), LOGGOPS, None, (1, 2, 3)),
        (
            hc.schedules.allreduce("tree", 1000, 1),
            "postal:alpha=1us,beta=1ns",
            "exp:mean=1us",
            (1, 2, 3),
        ),
        (hc.schedules.alltoall("pairwise", 96, 2), LOGGOPS, "uniform:min=0,max=2us", (1, 1, 1)),
    ]
    for s, model, noise, used in cases:
        one = s.simulate(model, noise=noise, seed=3, threads=1)
        assert one.threads == 1
        for t, u in zip((0, 2, 3), used, strict=True):
            r = s.simulate(model, noise=noise, seed=3, threads=t)
            assert r.completion_time_ns == one.completion_time_ns
            assert np.array_equal(r.rank_finish_ns, one.rank_finish_ns)
            assert (r.ops, r.messages) == (one.ops, one.messages)
            assert r.threads == u, (model, t)
    assert cases[0][0].simulate(LOGGOPS, threads=2, trace=True).threads == 1
    assert cases[2][0].simulate(LOGGOPS, network="slimfly:q=5").threads is None
    with pytest.raises(ValueError, match=r"threads=-1: must be >= 0 \(0: every core for 2\^19"):
        cases[0][0].simulate(LOGGOPS, threads=-1)
    args = ["simulate", "allreduce", "-a", "recursive_doubling", "-n", "64", "--model", LOGGOPS]
    one = json.loads(run(*args, "--json", "--threads", "1").output)
    two = json.loads(run(*args, "--json", "--threads", "2").output)
    assert one == two and one["completion_time_ns"] == 6 * 6042.0
    r = run(*args, "--threads", "-2")
    assert r.exit_code == 1
    assert r.output.startswith("Error: --threads -2: must be >= 0 (0: every core for 2^19 ops")


def test_cli_errors_are_one_line(tmp_path):
    cases = [
        (
            ["simulate", "allreduce", "-a", "nope", "-n", "4", "--model", LOGGOPS],
            "Error: unknown allreduce algorithm 'nope'; accepted: ",
        ),
        (
            ["simulate", "allreduce", "-a", "ring", "-n", "0", "--model", LOGGOPS],
            "Error: --ranks 0: the number of ranks must be >= 1",
        ),
        (
            ["simulate", "allreduce", "-a", "ring", "-n", "4", "--model", "postal:alpha=5 parsecs"],
            "Error: ",
        ),
        (
            ["simulate", "allreduce", "-a", "ring", "-n", "4"],
            "Error: missing --model (or --model-file); ",
        ),
        (["simulate", "--goal", str(tmp_path / "missing.goal"), "--model", LOGGOPS], "Error: "),
    ]
    for args, start in cases:
        r = run(*args)
        assert r.exit_code == 1, (args, r.output)
        assert r.output.startswith(start), (args, r.output)
        assert len(r.output.strip().splitlines()) == 1, r.output
        assert "Traceback" not in r.output


def test_cli_plot_trace_and_no_overwrite(tmp_path):
    png, trace = tmp_path / "t.png", tmp_path / "t.json"
    args = [
        *"simulate allreduce -a tree -n 6 --model".split(),
        LOGGOPS,
        "--plot",
        str(png),
        "--trace",
        str(trace),
    ]
    assert run(*args).exit_code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    json.loads(trace.read_text())
    r = run(*args)
    assert r.exit_code == 1 and "exists; pass --force" in r.output
    assert run(*args, "--force").exit_code == 0


def test_cli_show_and_help():
    r = run("schedule", "show", "allreduce", "-a", "recursive_doubling", "-n", "4", "--rank", "3")
    assert r.exit_code == 0
    assert "rank 3:" in r.output
    assert "recv out[0:1] from 1 tag 1 reduce before with scratch0[0:1]" in r.output
    for verb in (["schedule", "verify"], ["simulate"], ["demo"], ["topo"], ["tune"], ["netsim"]):
        assert run(*verb, "--help").exit_code == 0


def test_cli_model_file(tmp_path):
    from hypercuboid import modelfile

    f = modelfile.write(tmp_path / "m.json", LOGGOPS, "test", {}, {})
    r = run(
        "simulate",
        "allreduce",
        "-a",
        "recursive_doubling",
        "-n",
        "4",
        "--dtype",
        "int64",
        "--model-file",
        str(f),
        "--json",
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["completion_time_ns"] == 2 * 6042.0
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": "postal:alpha=1us,epsilon=2"}')
    r = run("simulate", "allreduce", "-a", "ring", "-n", "4", "--model-file", str(bad))
    assert r.exit_code == 1
    assert r.output == (
        f"Error: {bad}: invalid model spec 'postal:alpha=1us,epsilon=2': unknown key 'epsilon' "
        "for postal; accepted: alpha, beta, gamma, delta\n"
    )
    r = run(
        "simulate", "allreduce", "-a", "ring", "-n", "4", "--model-file", str(f), "--model", LOGGOPS
    )
    assert r.output == "Error: give --model or --model-file, not both\n"


def test_the_old_spelling_builds_the_same_schedule_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"hc\.schedules\.allreduce"):
        old = hc.allreduce("ring", 5, 7, dtype="int32", op="max")
    new = hc.schedules.allreduce("ring", 5, 7, dtype="int32", op="max")
    assert old.to_text() == new.to_text()


def test_the_registry_names_every_algorithm_once_with_its_promises():
    ar, a2a, halo = hc.schedules.collectives()
    assert (ar.name, a2a.name, halo.name) == ("allreduce", "alltoall", "halo")
    assert [a.name for a in halo.algorithms] == [
        "halo_blocking",
        "halo_nonblocking",
        "halo_reduced",
    ]
    names = [a.name for a in ar.algorithms]
    assert names == hc.allreduce_algorithms()
    assert names == ALLREDUCE_NAMES
    by = {a.name: a for a in ar.algorithms}
    assert by["recursive_multiplying"].usage == "recursive_multiplying:SCHEDULE"
    assert by["mpich_recursive_multiplying"].keys == {
        "k": "the radix, 2 ..= 65536 (default 2, as MPICH)"
    }
    assert by["elimination"].guarantees == {
        "same_bits": "always",
        "same_expression": "always",
        "rank_order": "N a power of two, or 3",
    }
    assert by["ring_rotate"].cost == "(P - 1)(α + nβ + nγ); exact"
    assert not any(a.needs_topology for a in ar.algorithms)
    # every example of the registry builds and verifies
    for a in ar.algorithms:
        s = hc.schedules.allreduce(a.example, 96 if a.name == "recursive_multiplying" else 24, 5)
        assert s.verify().sound, a.example
    with pytest.raises(
        hc.ScheduleError, match="unknown collective 'bcast'; accepted: allreduce, alltoall, halo$"
    ):
        hc.schedules.algorithms("bcast")


def test_program_columns_use_the_cores_codes_and_are_checked():
    s = hc.schedules.allreduce("recursive_doubling", 4, 3)
    p = s.program(1)
    assert (p.rank, p.nranks, p.input_len, p.output_len) == (1, 4, 3, 3)
    assert list(p) == list(hc._core.PROGRAM_COLUMNS)
    assert [hc._core.OP_KINDS[k] for k in p["kind"]][:2] == ["send", "recv"]
    assert hc._core.COMBINES == ("assign", "before", "after")
    assert hc._core.DEP_KINDS == ("requires", "irequires")
    assert (hc._core.SLOT_INPUT, hc._core.SLOT_OUTPUT, hc._core.SLOT_SCRATCH) == (0, 1, 2)
    assert hc._core.SLOT_NONE == -1
    assert hc._core.DTYPES["float64"] == 8 and "byte" not in hc._core.DTYPES
    d = dict(p)
    q = hc._core.Program.from_columns(d, rank=1, nranks=4, input_len=3, output_len=3)
    assert q["deps"] == p["deps"] and (q["buf_len"] == p["buf_len"]).all()
    with pytest.raises(hc.ScheduleError) as e:
        hc._core.Program.from_columns(d, rank=1, nranks=4, input_len=2, output_len=3)
    assert str(e.value) == (
        "rank 1 op 0: send slice in[0:3] is outside the input buffer (2 elements)"
    )
    with pytest.raises(KeyError, match="'deps2': a program has columns kind, peer"):
        p["deps2"]

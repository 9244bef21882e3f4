"""Alltoall generators through the Python API and the CLI (issue 15, section 1): generate,
verify, show, simulate on every cost model (with the postal closed forms), the text form, the
registry, and errors."""

from __future__ import annotations

import json

import hypercuboid as hc
import pytest
from click.testing import CliRunner
from hypercuboid.cli import cli

ALGORITHMS = [
    "linear",
    "linear_shifted",
    "scattered:block=2",
    "pairwise",
    "bruck",
    "k_bruck:k=3",
    "linear_sync:max=2",
]

MODELS = [
    "postal:alpha=1us,beta=0.4ns",
    "pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns",
    "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535",
]


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_every_algorithm_generates_and_verifies_with_synchronous_sends():
    for alg in ALGORITHMS:
        for n in (1, 2, 5, 8, 13):
            s = hc.schedules.alltoall(alg, n, 3, dtype="int32")
            assert s.meta["collective"] == "alltoall"
            assert (s.meta["block"], s.meta["count"], s.meta["op"]) == (3, 3 * n, None)
            rep = s.verify(eager_limit=0)
            assert rep.sound, rep.text
            assert rep.semantics["correct"] and not rep.semantics["reduces"]
            assert "rank j's output block i is rank i's input block j" in rep.text


def test_postal_simulation_equals_the_closed_forms():
    """Postal model, α = 1 µs, β = 0.4 ns/B, 16 ranks, 1000 float64 (8000 B) per pair:
    pairwise is N − 1 steps of α + βm; Bruck is log2 N steps of α + β·(N/2)·m (copies are
    free)."""
    model = "postal:alpha=1us,beta=0.4ns"
    alpha, beta, m, n = 1000.0, 0.4, 8000, 16
    pw = hc.schedules.alltoall("pairwise", n, 1000).simulate(model)
    assert pw.completion_time_ns == pytest.approx((n - 1) * (alpha + beta * m), abs=1e-6)
    br = hc.schedules.alltoall("bruck", n, 1000).simulate(model)
    assert br.completion_time_ns == pytest.approx(4 * (alpha + beta * (n // 2) * m), abs=1e-6)


@pytest.mark.parametrize("model", MODELS)
def test_cli_simulates_every_algorithm_on_every_model(model):
    times = {}
    for alg in ALGORITHMS:
        r = run(
            "simulate", "alltoall", "-a", alg, "-n", "8", "-c", "16", "--model", model, "--json"
        )
        assert r.exit_code == 0, r.output
        d = json.loads(r.output)
        assert d["completion_time_ns"] > 0
        times[alg] = d["completion_time_ns"]
    # deterministic: the same run twice gives the same time
    r = run(
        "simulate", "alltoall", "-a", "bruck", "-n", "8", "-c", "16", "--model", model, "--json"
    )
    assert json.loads(r.output)["completion_time_ns"] == times["bruck"]


def test_cli_generate_verify_show(tmp_path):
    r = run("schedule", "verify", "alltoall", "--algorithm", "bruck", "--ranks", "6", "-c", "2")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[:3] == [
        "schedule 'alltoall bruck': 6 ranks, 142 ops, 18 messages (672 bytes)",
        "SOUND: every message matched; no deadlock with eager delivery or with sends above 0 "
        "bytes synchronous",
        "result: correct on every rank (rank j's output block i is rank i's input block j, for "
        "every i and j)",
    ]
    r = run("schedule", "show", "alltoall", "-a", "pairwise", "-n", "4", "-c", "2", "--rank", "1")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        "alltoall pairwise: 4 ranks, 28 ops, collective alltoall, count 8 x float64, 2 per rank "
        "pair",
        "rank 1:",
        "     0: copy in[2:4] to out[2:4]",
        "     1: recv out[0:2] from 0 tag 0",
        "     2: send in[0:2] to 0 tag 0",
        "     3: recv out[6:8] from 3 tag 0   after 1, 2",
        "     4: send in[6:8] to 3 tag 0   after 1, 2",
        "     5: recv out[4:6] from 2 tag 0   after 3, 4",
        "     6: send in[4:6] to 2 tag 0   after 3, 4",
    ]
    out = tmp_path / "a2a.txt"
    r = run("schedule", "generate", "-o", str(out), "alltoall", "-a", "k_bruck:k=4", "-n", "9")
    assert r.exit_code == 0, r.output
    assert out.read_text().splitlines()[1] == "collective alltoall count 9 dtype float64 block 1"
    back = hc.Schedule.read(out)
    assert back.meta == hc.schedules.alltoall("k_bruck:k=4", 9).meta
    r = run("schedule", "verify", "--goal", str(out), "--eager-limit", "0")
    assert r.exit_code == 0, r.output


def test_the_registry_lists_the_alltoall_algorithms():
    names = [a.name for a in hc.schedules.algorithms("alltoall")]
    assert names == [
        "linear",
        "linear_shifted",
        "pairwise",
        "bruck",
        "k_bruck",
        "linear_sync",
        "scheduled",
    ]
    by = {a.name: a for a in hc.schedules.algorithms("alltoall")}
    assert by["linear_shifted"].aliases == ("scattered",)
    assert by["k_bruck"].keys == {"k": "the radix, 2 ..= 32768 (default 2)"}
    # scheduled names its topology in its spec (topo=...): nothing else is needed.
    assert not any(a.needs_topology for a in by.values())
    assert by["scheduled"].example == "scheduled:topo=tree:fig1,sync=pairwise"
    for a in by.values():
        # 6 ranks: scheduled's example runs on tree:fig1, one rank on each of its 6 machines.
        assert hc.schedules.alltoall(a.example, 6, 2).verify(eager_limit=0).sound, a.example
    r = run("schedule", "list")
    assert "alltoall: every rank j ends with rank i's block j at block i" in r.output
    assert "      also: scattered" in r.output


def test_errors_name_the_bad_value_and_the_accepted_ones():
    with pytest.raises(hc.ScheduleError) as e:
        hc.schedules.alltoall("ring", 4)
    assert str(e.value) == (
        "unknown alltoall algorithm 'ring'; accepted: linear, linear_shifted, pairwise, bruck, "
        "k_bruck, linear_sync, scheduled"
    )
    assert isinstance(e.value, ValueError)
    with pytest.raises(hc.ScheduleError, match=r"k=1: k is 2 \.\.= 32768$"):
        hc.schedules.alltoall("k_bruck:k=1", 4)
    with pytest.raises(hc.ScheduleError, match="block=0: block is 1 ..= 2147483647$"):
        hc.schedules.alltoall("scattered:block=0", 4)
    with pytest.raises(hc.ScheduleError, match="an alltoall moves typed elements"):
        hc.schedules.alltoall("linear", 4, dtype="byte")
    r = CliRunner().invoke(cli, ["schedule", "verify", "alltoall", "-a", "bruck", "-n", "0"])
    assert r.exit_code == 1
    assert r.output == "Error: --ranks 0: the number of ranks must be >= 1\n"
    r = CliRunner().invoke(cli, ["schedule", "verify", "alltoall", "-a", "nope", "-n", "3"])
    assert r.exit_code == 1 and r.output.count("\n") == 1
    accepted = "linear, linear_shifted, pairwise, bruck, k_bruck, linear_sync, scheduled"
    assert f"accepted: {accepted}" in r.output


def test_one_rank_alone_equals_its_program_in_the_schedule():
    import numpy as np
    from hypercuboid import _core

    for alg in ALGORITHMS:
        s = hc.schedules.alltoall(alg, 6, 2, dtype="uint16")
        for rank in range(6):
            a = s.program(rank)
            b = _core.alltoall_program(alg, 6, rank, 2, "uint16")
            assert (a.input_len, b.input_len) == (12, 12)
            for k in a:
                if k == "deps":
                    assert sorted(a[k]) == sorted(b[k])
                elif isinstance(a[k], np.ndarray):
                    assert (a[k] == b[k]).all(), (alg, rank, k)
                else:
                    assert a[k] == b[k], (alg, rank, k)


def test_c_export_names_the_routine_hc_alltoall():
    c = hc.schedules.alltoall("pairwise", 4, 2).to_c()
    assert "int hc_alltoall(const void *sendbuf, void *recvbuf, MPI_Comm comm)" in c
    assert "MPI_Alltoall(sendbuf, 2, MPI_DOUBLE, recvbuf, 2, MPI_DOUBLE, comm)" in c

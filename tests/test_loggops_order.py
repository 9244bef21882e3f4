"""LogGOPS issue order from Python and the CLI: ``loggops:...,order=program|gcc`` (issue 14,
section 5). The expected times are LogGOPSim's (spcl/LogGOPSim 76451de, g++ 12.2; a stock build
for ``order=gcc``, one with ``std::stable_sort`` for the default), as in
``crates/hypercuboid-core/tests/data/loggops/order/``."""

from __future__ import annotations

import json

import hypercuboid as hc
import pytest
from click.testing import CliRunner
from hypercuboid.cli import cli

P1 = "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535"
DEFAULT = "loggops:L=2500ns,o=1500ns,g=1us,G=6ns,O=0,S=65535,gamma=0,delta=0"


def trailer(payload: int) -> str:
    """Rank 0: a payload to rank 1, one message to each of ranks 2..16, an 8-byte trailer to
    rank 1 (same tag). Rank 1: receive the payload, then the trailer."""
    lines = ["num_ranks 17", "", "rank 0 {", f"l0: send {payload}b to 1 tag 0"]
    lines += [f"l{p - 1}: send {payload}b to {p} tag 0" for p in range(2, 17)]
    lines += ["l16: send 8b to 1 tag 0", "}", "", "rank 1 {"]
    lines += [f"l0: recv {payload}b from 0 tag 0", "l1: recv 8b from 0 tag 0", "}", ""]
    for r in range(2, 17):
        lines += [f"rank {r} {{", f"l0: recv {payload}b from 0 tag 0", "}", ""]
    return "\n".join(lines)


def alltoall_linear(n: int, size: int) -> str:
    lines = [f"num_ranks {n}", ""]
    for r in range(n):
        peers = [p for p in range(n) if p != r]
        ops = [f"recv {size}b from {p} tag 0" for p in peers]
        ops += [f"send {size}b to {p} tag 0" for p in peers]
        lines += [f"rank {r} {{", *[f"l{k}: {op}" for k, op in enumerate(ops)], "}", ""]
    return "\n".join(lines)


def test_order_is_program_by_default_and_prints_only_when_gcc():
    assert hc.parse_model("loggops") == DEFAULT
    assert hc.parse_model("loggops:order=program") == DEFAULT
    assert hc.parse_model("loggops:order=gcc") == DEFAULT + ",order=gcc"
    assert hc.parse_model(hc.parse_model("loggops:order=gcc")) == DEFAULT + ",order=gcc"
    loggops = next(f for f in hc.schedule.model_forms() if f["name"] == "loggops")
    assert [k[0] for k in loggops["keys"]][-1] == "order"


def test_a_bad_order_names_the_accepted_values():
    with pytest.raises(hc.ModelError) as e:
        hc.parse_model("loggops:order=stable")
    assert isinstance(e.value, ValueError)
    assert str(e.value) == (
        "invalid model spec 'loggops:order=stable': order=stable: accepted: program, gcc"
    )


def test_both_orders_agree_with_loggopsim_on_every_rank():
    s = hc.parse_schedule(alltoall_linear(12, 1024))
    stock = [103518, 156260, 156260, 148622, 145622, 139346, 131708, 128708, 120432, 118294]
    stock += [109156, 109156]
    stable = [103518, 103518, 112656, 114794, 123070, 126070, 133708, 139984, 142984, 150622]
    stable += [156898, 159898]
    assert s.simulate(P1 + ",order=gcc").rank_finish_ns.tolist() == stock
    assert s.simulate(P1).rank_finish_ns.tolist() == stable


def test_stock_order_pairs_the_trailer_with_the_payloads_receive():
    s = hc.parse_schedule(trailer(100000))
    for order, pairs in [
        ("", [(0, 0, 100000), (16, 1, 8)]),
        (",order=gcc", [(16, 0, 8), (0, 1, 100000)]),
    ]:
        t = s.simulate(P1 + order, trace=True).trace
        assert t is not None
        got = [
            (int(a), int(b), int(n))
            for a, b, n, d in zip(t.msg_src_op, t.msg_dst_op, t.msg_bytes, t.msg_dst, strict=True)
            if d == 1
        ]
        assert got == pairs, order


def test_cli_order_gcc(tmp_path):
    goal = tmp_path / "trailer.goal"
    goal.write_text(trailer(100000))
    runner = CliRunner()
    out = {}
    for order in ["", ",order=program", ",order=gcc"]:
        r = runner.invoke(cli, ["simulate", "--goal", str(goal), "--model", P1 + order, "--json"])
        assert r.exit_code == 0, r.output
        out[order] = json.loads(r.output)
    assert out[",order=gcc"]["model"].endswith(",delta=0,order=gcc")
    assert out[""]["model"] == out[",order=program"]["model"]
    assert out[""]["model"].endswith(",delta=0")
    assert out[",order=gcc"]["completion_time_ns"] == 9622404.0
    assert out[""]["completion_time_ns"] == 9621946.0
    assert out[""]["rank_finish_ns"][:3] == [9617404.0, 9621946.0, 1206988.0]
    assert out[",order=gcc"]["rank_finish_ns"][:3] == [9020910.0, 5415446.0, 9622404.0]
    r = runner.invoke(cli, ["simulate", "--goal", str(goal), "--model", P1 + ",order=libc++"])
    assert r.exit_code != 0
    assert r.output == (
        f"Error: invalid model spec '{P1},order=libc++': order=libc++: accepted: program, gcc\n"
    )

"""``hypercuboid calibrate``'s fits on synthetic measurements (no MPI), its model file, its
figure and the command line's bad input. The measuring under mpiexec is in
tests/mpi/test_calibrate_mpi.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypercuboid import _core, modelfile
from hypercuboid.cli import cli
from hypercuboid.cli.calibrate import draw
from hypercuboid.errors import ModelError, OutputExistsError
from hypercuboid.mpi import calibrate as cal
from hypercuboid.schedule import parse_model

# A known machine (µs, bytes): LogGOPS L, o, g, G; eager up to S, then a rendezvous handshake;
# and a second switch above S2 (a library's inline-send limit) that costs R2.
L, OVH, GAP, G_US, S = 0.5, 0.08, 0.1, 1e-4, 4096
RENDEZVOUS = 2.0
S2, R2 = 256, 0.3
BW, SINGLE = 25.0, 1.0 / (G_US * 1e3)  # GB/s: 10 GB/s per flow, 25 GB/s shared
GAMMA_US, DELTA_US = 2e-5, 0.01
SIZES = [1 << k for k in range(23)]


def _noise(n: int, amp: float, seed: int) -> np.ndarray:
    return 1.0 + amp * np.random.default_rng(seed).uniform(-1.0, 1.0, n)


def _rows(xs, ys, key="bytes"):
    return [{key: x, "median_us": float(y)} for x, y in zip(xs, ys, strict=True)]


# The exchange steps of the known machine: its two flows share the node, so a byte costs G_X
# per flow, and a message waits X longer at a rank that is sending too; every call through the
# runner costs CALL more; a copy costs COPY_US per byte.
CALL, G_X, X, COPY_US = 0.2, 1.5e-4, 0.15, 1e-5


def step_time(s: int, per_byte: float = G_US, latency: float = L) -> float:
    """One step of ``s`` bytes on the known machine."""
    switches = (RENDEZVOUS if s > S else 0.0) + (R2 if s > S2 else 0.0)
    return latency + 2 * OVH + (s - 1) * per_byte + switches


def exchange_rows(amp: float = 0.01, one_way: bool = False) -> list[dict]:
    """:func:`cal.exchange`'s rows for the known machine: ``CALL + k·x(s)`` (exchanges; with
    ``one_way``, the chains of one-way messages)."""
    rows = []
    for j, s in enumerate(SIZES):
        step = step_time(s) if one_way else step_time(s, G_X) + X
        for k in cal.EXCHANGE_STEPS:
            t = (CALL + k * step) * _noise(1, amp, 100 * j + k)[0]
            rows.append({"bytes": s, "steps": k, "median_us": float(t)})
    return rows


def synthetic(one_way=None, amp: float = 0.01, links=("intra",), exchange=False) -> dict:
    """What :func:`cal.measure` returns, for the known machine with ``amp`` relative noise;
    with ``exchange``, also the exchanges and copies (and the ping-pong pays ``CALL``)."""
    x = np.array(SIZES, dtype=float)
    if one_way is None:
        one_way = np.array([step_time(s) for s in SIZES])
    n = np.array(cal.TRAIN, dtype=float)
    half_call = CALL / 2 if exchange else 0.0
    link = {
        "peer": 1,
        "pingpong": _rows(SIZES, (one_way + half_call) * _noise(len(x), amp, 1)),
        "train": _rows(cal.TRAIN, (0.05 + GAP * n) * _noise(len(n), amp, 2), "messages"),
        "delayed": _rows(cal.TRAIN, 20.0 + OVH * n * _noise(len(n), amp, 3), "messages"),
        "delay_us": 20.0,
    }
    if exchange:
        link["exchange"] = exchange_rows(amp)
        link["oneway"] = exchange_rows(amp, one_way=True)
    k = np.arange(1, 9, dtype=float)
    bw = np.minimum(SINGLE, BW / k) * _noise(len(k), amp, 4)
    contention = [
        {"label": f"{int(i)}", "flows": int(i), "flows_per_node": int(i), "per_flow_GBps": b}
        for i, b in zip(k, bw, strict=True)
    ]
    rb = np.array(cal.REDUCE_BYTES, dtype=float)
    red = {
        "float64 sum": {
            "bytes": list(cal.REDUCE_BYTES),
            "median_us": list(DELTA_US + GAMMA_US * rb),
        }
    }
    rb_copy = np.array(cal.REDUCE_BYTES, dtype=float)
    copy = {"bytes": list(cal.REDUCE_BYTES), "median_us": list(0.005 + COPY_US * rb_copy)}
    return {
        **({"copy": copy} if exchange else {}),
        "nranks": 16,
        "nodes": [0] * 8 + [1] * 8 if len(links) > 1 else [0] * 16,
        "nnodes": len(links),
        "ranks_per_node": 8 if len(links) > 1 else 16,
        "links": {kind: dict(link, peer=1 + 8 * j) for j, kind in enumerate(links)},
        "contention": contention,
        "reduction": red,
    }


def close(got: float, want: float, rel: float = 0.02) -> bool:
    return abs(got - want) <= rel * abs(want)


def test_the_fits_recover_a_known_machine_within_two_percent():
    c = cal.fit(synthetic(), "Open MPI test")
    lg = c.fits["links"]["intra"]["loggops"]
    assert close(lg["L_us"], L) and close(lg["o_us"], OVH) and close(lg["g_us"], GAP)
    assert close(lg["G_ns_per_byte"], G_US * 1e3) and lg["G2_ns_per_byte"] == lg["G_ns_per_byte"]
    assert lg["S"] == S and lg["S_source"] == "break point (eager/rendezvous switch)"
    assert lg["fitted_to"] == "ping-pong"
    pw = c.fits["links"]["intra"]["piecewise"]
    assert pw["breaks"] == [2 * S2, 2 * S]
    assert close(pw["segments"][2]["alpha_us"], L + 2 * OVH + R2 + RENDEZVOUS)
    cont = c.fits["contention"]
    assert cont["saturated"] and close(cont["bandwidth_GBps"], BW)
    red = c.fits["reduction"]["float64 sum"]
    assert close(red["gamma_ns_per_byte"], GAMMA_US * 1e3) and close(
        red["delta_ns"], DELTA_US * 1e3
    )
    pi = c.fits["links"]["intra"]["pipelined"]
    assert close(pi["alpha_r_us"], GAP)
    assert close(pi["alpha_p_us"] + pi["alpha_r_us"], L + 2 * OVH)
    # the specs: LogGOPS is the model, every spec parses, the node spec carries BW
    assert c.model == c.models["loggops"]
    assert sorted(c.models) == ["loggops", "pipelined", "postal"]
    assert c.model.startswith("loggops:L=") and ",S=4096,gamma=" in c.model
    for spec in c.models.values():
        assert parse_model(spec)
    assert c.node == "node:ranks=16,bw=" + cal._fmt_gbps(cont["bandwidth_GBps"]) + "GB/s"
    assert [cal._fmt_gbps(b) for b in (25.0, 12345.6, 0.00123456)] == ["25", "12350", "0.001235"]
    # the rendezvous handshake is R and the second switch R2 above S2, the segments' jumps
    assert close(lg["R_us"], RENDEZVOUS) and close(lg["R2_us"], R2) and lg["S2"] == S2
    assert [w["bytes"] for w in lg["switches"]] == [S, S2]
    assert c.model.endswith(
        f",R={cal._fmt_time_us(lg['R_us'])},S2={S2},R2={cal._fmt_time_us(lg['R2_us'])}"
    )
    assert ",R=" in parse_model(c.model) and f",S2={S2},R2=" in parse_model(c.model)
    assert lg["r2"] > 0.99
    assert c.warnings == []


def test_the_exchange_and_one_way_chains_give_the_call_cost_g_x_and_the_node_within_two_percent():
    # C is an intercept of 2 to 4 steps: its error is several times the noise, so 0.2 %
    c = cal.fit(synthetic(exchange=True, amp=0.002), "Open MPI test")
    lk = c.fits["links"]["intra"]
    ex = lk["exchange"]
    assert close(ex["call_us"], CALL) and ex["bytes"] == SIZES and ex["r2"] > 0.99
    for s, step in zip(SIZES, ex["step_us"], strict=True):
        assert close(step, step_time(s, G_X) + X)
    for s, step in zip(SIZES, lk["oneway"]["step_us"], strict=True):
        assert close(step, step_time(s))
    # LogGOPS fitted to both kinds of step: G of one flow alone (the one-way chains), G2 of the
    # exchanges' two flows (the node's bandwidth 2/G2), X what an exchange step costs beyond a
    # lone message; L, S, R, S2, R2 of both; o and g of the trains; the call's C the exchanges'
    lg = lk["loggops"]
    assert lg["fitted_to"] == "one-way steps and exchange steps"
    assert c.call_us == ex["call_us"] and len(lg["rows"]) == 2 * len(SIZES)
    assert close(lg["L_us"], L) and close(lg["G_ns_per_byte"], G_US * 1e3)
    assert close(lg["G2_ns_per_byte"], G_X * 1e3) and close(lg["X_us"], X)
    assert close(lg["o_us"], OVH) and close(lg["g_us"], GAP) and lg["S"] == S
    assert close(lg["R_us"], RENDEZVOUS) and lg["S2"] == S2 and close(lg["R2_us"], R2)
    assert lg["r2"] > 0.99
    cont = c.fits["contention"]
    assert close(cont["node_GBps"], 2.0 / (G_X * 1e3))
    assert c.node == f"node:ranks=16,bw={cal._fmt_gbps(cont['node_GBps'])}GB/s"
    # the ping-pong less C/2 is the one-way time: its segments and the pipelined model are
    # those of the machine without the call cost
    pw = lk["piecewise"]
    assert close(pw["segments"][0]["alpha_us"], L + 2 * OVH)
    assert close(lk["pipelined"]["alpha_p_us"] + lk["pipelined"]["alpha_r_us"], L + 2 * OVH)
    assert close(lk["pipelined"]["beta_ns_per_byte"], G_US * 1e3)
    # the copy: LogGOPS's copy per byte
    assert close(c.fits["copy"]["copy_ns_per_byte"], COPY_US * 1e3)
    assert parse_model(c.model)
    copy = cal._fmt_time_us(c.fits["copy"]["copy_ns_per_byte"] * 1e-3, rate=True)
    assert f",copy={copy},R={cal._fmt_time_us(lg['R_us'])},S2={S2}," in c.model
    assert c.model.endswith(f",X={cal._fmt_time_us(lg['X_us'])}")
    assert c.document()["call"] == cal._fmt_time_us(ex["call_us"])
    assert c.warnings == []


def test_the_fitted_model_simulates_the_steps_it_was_fitted_to():
    # LogGOPS with the node level, simulated on chains of 1, 2 and 4 steps as calibrate times
    # them, gives k times the step the fit predicts: X and R2 are what the simulator charges
    from hypercuboid.schedule import Schedule

    c = cal.fit(synthetic(exchange=True, amp=0.0), "Open MPI test")
    for row in c.fits["links"]["intra"]["loggops"]["rows"]:
        s = int(row["bytes"])
        if s > S:
            continue  # the node level's rendezvous takes a clear-to-send more than LogGOPS's
        for k in cal.EXCHANGE_STEPS:
            text = cal._text(2, cal._chain(1, s, k, row["exchange"]))
            t = Schedule.parse(text, "chain").simulate(c.model, node=c.node).completion_time_ps
            want = k * row["predicted_us"] * 1e6
            assert abs(t - want) <= 0.002 * want, (s, k, row["exchange"], t, want)


def test_node_bandwidth_takes_two_exchange_flows_unless_more_flows_saw_less():
    rows = [{"flows_per_node": k} for k in (1, 2, 4)]
    cont = {"bandwidth_GBps": 25.0, "saturated": True, "measured": rows}
    assert cal.node_bandwidth(cont, 0.05) == 25.0 and cal.node_bandwidth(cont, 0.1) == 20.0
    assert cal.node_bandwidth(cont, None) == 25.0
    two = {"bandwidth_GBps": 25.0, "saturated": True, "measured": rows[:2]}
    assert cal.node_bandwidth(two, 0.05) == 40.0
    assert cal.node_bandwidth(dict(cont, saturated=False), 0.05) == 40.0


def test_an_exchange_fit_that_leaves_a_step_no_time_falls_back_to_the_ping_pong():
    # MPICH at 3 ranks once measured exchanges below the others' C: C took all of a size, and a step
    # time of 0 cannot carry LogGOPS (every fitted time is > 0)
    m = synthetic(exchange=True, amp=0.002)
    rows = m["links"]["intra"]["exchange"]
    first = min(r["bytes"] for r in rows)
    for r in rows:
        if r["bytes"] == first:
            r["median_us"] = 0.01
    c = cal.fit(m, "MPICH test")
    lk = c.fits["links"]["intra"]
    assert lk["exchange"] is None and lk["loggops"]["fitted_to"] == "ping-pong"
    assert c.call_us is None and "call" not in c.document()
    (w,) = [w for w in c.warnings if w.startswith("exchange (intra)")]
    assert w.startswith(
        f"exchange (intra): the fit C + k·x(s) leaves no time for a step of {first} B (C = "
    )
    assert w.endswith(
        "us): LogGOPS is fitted to the ping-pong and no per-call cost is written (measure on a "
        "quieter machine)"
    )
    assert parse_model(c.model)


def test_the_call_cost_round_trips_and_predict_adds_it_exactly(tmp_path):
    from hypercuboid import predict as hp

    c = cal.fit(synthetic(exchange=True), "Open MPI test")
    path = tmp_path / "model.json"
    cal.write_model_file(path, c.document())
    doc = json.loads(path.read_text())
    assert doc["call"] == c.document()["call"]
    assert list(doc) == [
        "model", "node", "models", "library", "nranks", "ranks_per_node", "fits", "call",
        "source", "fitted", "machine", "date",
    ]  # fmt: skip
    mf = hp.read_model_file(path)
    assert mf.call == doc["call"] and modelfile.load(path) == c.model
    from hypercuboid.units import parse_time

    call_ns = parse_time(mf.call) / 1e3
    args = ("allreduce", [8, 65536], [2, 4], mf.model)
    kw = {"algorithms": ["recursive_doubling", "ring"]}
    plain = hp.predict(*args, **kw)
    with_call = hp.predict(*args, **kw, call=mf.call)
    assert with_call.model == f"{plain.model} + call={mf.call}"
    for a, b in zip(plain.rows, with_call.rows, strict=True):
        assert b.time_ns == (parse_time(mf.call) + round(a.time_ns * 1e3)) / 1e3
        assert b.best == a.best
    assert abs(with_call.rows[0].time_ns - plain.rows[0].time_ns - call_ns) < 1e-9
    # a file without 'call' reads as before; a bad one is a one-line error naming it
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"model": "postal:alpha=1us"}))
    assert hp.read_model_file(old).call is None
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model": "postal:alpha=1us", "call": 3}))
    with pytest.raises(ModelError) as e:
        hp.read_model_file(bad)
    assert str(e.value) == (
        f"{bad}: its 'call' must be a time such as '200ns' or '0.2us' (the runner's cost per "
        "call), not 3"
    )
    with pytest.raises(ModelError) as e:
        modelfile.write(tmp_path / "w.json", "postal:alpha=1us", "t", {}, {}, call="fast")
    assert str(e.value).endswith("not 'fast'")


def test_one_line_gives_postal_alpha_and_beta_and_no_switch():
    x = np.array(SIZES, dtype=float)
    c = cal.fit(synthetic(one_way=1.2 + 0.35e-3 * x, amp=0.02))
    po = c.fits["links"]["intra"]["postal"]
    assert close(po["alpha_us"], 1.2) and close(po["beta_ns_per_byte"], 0.35)
    lg = c.fits["links"]["intra"]["loggops"]
    assert c.fits["links"]["intra"]["piecewise"]["breaks"] == []
    assert lg["S"] == SIZES[-1]
    assert lg["S_source"] == "no switch in the sizes measured: the largest size"
    assert c.warnings == []


def test_a_model_that_does_not_fit_is_said_never_clamped():
    # times that fall with size: a line with a slope >= 0 cannot follow them
    x = np.array(SIZES, dtype=float)
    c = cal.fit(synthetic(one_way=50.0 - 10.0 * np.log2(x + 1) / 23, amp=0.0))
    po = c.fits["links"]["intra"]["postal"]
    assert po["beta_ns_per_byte"] == 0.0 and po["alpha_us"] > 0
    assert any(
        w.startswith("postal fit of the intra ping-pong: R² = ")
        and w.endswith(" is below 0.9: the model does not fit these measurements")
        for w in c.warnings
    )
    assert "LogGOPS (intra): 2o = " not in " ".join(c.warnings)


def test_nnls_is_never_negative_and_errors_are_one_line():
    rng = np.random.default_rng(5)
    for _ in range(20):
        cols = rng.uniform(-1, 1, (3, 12)).tolist()
        f = _core.fit_least_squares(cols, rng.uniform(-1, 1, 12).tolist(), nonnegative=True)
        assert all(c >= 0 for c in f.coef)
    free = _core.fit_least_squares([[1.0] * 3, [1.0, 2.0, 3.0]], [3.0, 2.0, 1.0])
    assert free.coef[1] == pytest.approx(-1.0)
    with pytest.raises(ModelError) as e:
        _core.fit_line([1.0, 1.0], [1.0, 2.0])
    assert str(e.value) == "a line needs at least 2 points with different x, got 1"
    with pytest.raises(ModelError) as e:
        _core.fit_piecewise([1.0, 2.0, 3.0], [1.0, -2.0, 3.0])
    assert str(e.value) == "y[1] = -2: a finite number > 0"


def test_two_nodes_give_intra_and_inter_models():
    c = cal.fit(synthetic(links=("intra", "inter")))
    assert c.fits["primary"] == "inter"
    assert sorted(c.models) == [
        "loggops", "loggops_intra", "pipelined", "pipelined_intra", "postal", "postal_intra",
    ]  # fmt: skip
    assert c.model == c.models["loggops"] and c.ranks_per_node == 8
    assert c.node.startswith("node:ranks=8,bw=")


def test_flow_sets_and_flows_per_node():
    assert cal.flow_sets(5) == [
        ("1 pair", [(0, 1)]),
        ("2 pairs", [(0, 1), (2, 3)]),
        ("all ranks", [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]),
    ]
    nodes = [0, 0, 1, 1]
    assert cal.flows_per_node([(0, 1), (2, 3)], nodes) == 1
    assert cal.flows_per_node([(0, 1), (1, 2), (2, 3), (3, 0)], nodes) == 3


def test_the_model_file_is_read_by_the_core_and_simulate(tmp_path):
    c = cal.fit(synthetic(), "Open MPI test")
    path = tmp_path / "model.json"
    cal.write_model_file(path, c.document({"host": "x"}))
    doc = json.loads(path.read_text())
    assert list(doc) == [
        "model", "node", "models", "library", "nranks", "ranks_per_node", "fits", "source",
        "fitted", "machine", "date",
    ]  # fmt: skip
    assert (doc["library"], doc["nranks"], doc["ranks_per_node"]) == ("Open MPI test", 16, 16)
    assert doc["fits"]["links"]["intra"]["measured"]["pingpong"][0]["bytes"] == 1
    assert doc["fits"]["warnings"] == c.warnings
    assert modelfile.load(path) == c.model
    r = CliRunner().invoke(
        cli,
        ["simulate", "allreduce", "-a", "ring", "-n", "4", "-c", "1024", "--model-file", str(path)]
        + ["--json"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["completion_time_ns"] > 0
    with pytest.raises(OutputExistsError) as e:
        cal.write_model_file(path, c.document())
    assert str(e.value) == f"'{path}' exists; pass force=True to overwrite it"
    cal.write_model_file(path, c.document(), force=True)


def test_the_figure(tmp_path):
    png = tmp_path / "fit.png"
    draw(cal.fit(synthetic(links=("intra", "inter"))), png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def run(*args: str):
    return CliRunner().invoke(cli, ["calibrate", *args], catch_exceptions=False)


def test_bad_input_on_the_command_line(tmp_path):
    out = str(tmp_path / "m.json")
    r = run("-o", out, "--sizes", "8,16")
    assert (r.exit_code, r.output) == (
        1,
        "Error: --sizes '8,16' gives 2 sizes: calibrate needs at least 3 to fit a line and "
        "judge it (e.g. 1:4M)\n",
    )
    r = run("-o", out, "--sizes", "8")
    assert r.output.startswith("Error: --sizes '8' gives 1 size: calibrate needs at least 3")
    r = run("-o", out, "--dtype", "complex64")
    assert r.exit_code == 1
    assert r.output == (
        "Error: --dtype 'complex64': not one the native runner reduces; accepted: "
        + ", ".join(_core.DTYPES)
        + "\n"
    )
    r = run("-o", out, "--op", "sum,sum")
    assert r.output == "Error: --op sum,sum: sum is given twice\n"
    r = run("--bogus")
    assert (r.exit_code, r.output) == (2, "Error: No such option '--bogus'.\n")
    r = run()
    assert (r.exit_code, r.output) == (2, "Error: Missing option '--output' / '-o'.\n")
    r = run("-o", out, "--plot", "fit.bmpx")
    assert (r.exit_code, r.output) == (
        1,
        "Error: --plot fit.bmpx: unknown figure format 'bmpx'; accepted: .png, .pdf, .svg, "
        ".svgz, .eps, .ps, .jpg, .jpeg, .tif, .tiff, .webp\n",
    )


def test_loggops_r_delays_only_messages_above_s_and_is_absent_by_default():
    from hypercuboid import schedules

    spec = "loggops:L=1us,o=100ns,g=100ns,G=1ns,S=64"
    for count, delayed in ((4, False), (64, True)):  # 32 B (eager) and 512 B (rendezvous)
        s = schedules.allreduce("recursive_doubling", 2, count)
        base = s.simulate(spec).completion_time_ps
        assert s.simulate(spec + ",R=0").completion_time_ps == base
        # one exchange step: each rank's message arrives R later above S
        assert s.simulate(spec + ",R=1us").completion_time_ps == base + (10**6 if delayed else 0)
    # the canonical spec names R only when it is set
    assert parse_model(spec) == "loggops:L=1us,o=100ns,g=100ns,G=1ns,O=0,S=64,gamma=0,delta=0"
    assert parse_model(spec + ",R=2.5us").endswith(",delta=0,R=2500ns")


def _added(algorithm: str, count: int, spec: str, extra: str, node: str | None) -> int:
    """What ``extra`` adds to ``spec``'s time of ``algorithm`` on 2 ranks (ps)."""
    from hypercuboid import schedules

    s = schedules.allreduce(algorithm, 2, count)
    with_extra = s.simulate(spec + extra, node=node).completion_time_ps
    return with_extra - s.simulate(spec, node=node).completion_time_ps


@pytest.mark.parametrize("node", [None, "node:ranks=2,bw=10GB/s"])
def test_loggops_r2_and_x_delay_only_their_messages_and_are_absent_by_default(node):
    spec = "loggops:L=1us,o=100ns,g=100ns,G=1ns,S=64,R=1us"
    for count in (1, 4, 64):  # 8 B, 32 B (above S2), 512 B (above S2 and S)
        rd = ("recursive_doubling", count, spec)
        for nothing in (",S2=16,R2=0", ",S2=1G,R2=1us", ",X=0"):
            assert _added(*rd, nothing, node) == 0
        # one exchange step: above S2 each rank's message arrives R2 later (on top of R above
        # S), and it waits X at a rank that is sending too
        assert _added(*rd, ",S2=16,R2=300ns", node) == (300_000 if count > 1 else 0)
        assert _added(*rd, ",X=250ns", node) == 250_000
        # the tree on 2 ranks sends one way, then back: no rank receives while it sends
        assert _added("tree", count, spec, ",X=250ns", node) == 0
    assert parse_model(spec + ",S2=256,R2=150ns,X=0").endswith(",R=1us,S2=256,R2=150ns")
    assert parse_model(spec + ",S2=256").endswith(",R=1us,S2=256")
    assert parse_model(spec + ",X=0.25us").endswith(",R=1us,X=250ns")


def test_one_way_chains_that_leave_a_step_no_time_give_way_to_the_ping_pong():
    m = synthetic(exchange=True, amp=0.002)
    for r in m["links"]["intra"]["oneway"]:
        if r["bytes"] == 1:
            r["median_us"] = 0.01
    c = cal.fit(m, "MPICH test")
    lk = c.fits["links"]["intra"]
    assert lk["oneway"] is None and lk["exchange"] is not None and c.call_us is not None
    assert lk["loggops"]["fitted_to"] == "ping-pong and exchange steps"
    (w,) = [w for w in c.warnings if w.startswith("one-way (intra)")]
    assert w.endswith(
        "us): LogGOPS's lone message is the ping-pong's (measure on a quieter machine)"
    )
    assert close(lk["loggops"]["L_us"], L) and close(lk["loggops"]["X_us"], X)
    assert parse_model(c.model)


def test_the_core_fits_chains_and_steps_and_says_what_is_wrong_in_one_line():
    # the chains of the known machine: C and every step, as fit_exchange names them
    ex = cal.fit_exchange(exchange_rows(amp=0.0))
    assert ex["bytes"] == SIZES and abs(ex["call_us"] - CALL) < 1e-9
    assert all(
        abs(x - (step_time(s, G_X) + X)) < 1e-9 for s, x in zip(SIZES, ex["step_us"], strict=True)
    )
    st = cal.fit_steps(OVH, cal.fit_exchange(exchange_rows(amp=0.0, one_way=True)), ex)
    assert (st["S"], st["S2"], st["S_found"]) == (S, S2, True)
    assert type(st["S"]) is int and type(st["S2"]) is int
    assert abs(st["L_us"] - L) < 1e-9 and abs(st["X_us"] - X) < 1e-9
    assert [r["exchange"] for r in st["rows"]] == [False] * len(SIZES) + [True] * len(SIZES)
    with pytest.raises(ModelError) as e:
        _core.fit_steps(0.1, [1.0, 2.0], [1.0, 1.0])
    assert (
        str(e.value) == "a fit of the one-way steps needs at least 3 points with different x, got 2"
    )
    with pytest.raises(ModelError) as e:
        _core.fit_steps(0.1, [1.0, 2.0, 4.0], [1.0, 1.0, 2.0], ([1.0, 2.0, 4.0], [1.0, 0.0, 1.0]))
    assert str(e.value) == "exchange step times[1] = 0: a finite number > 0"
    with pytest.raises(ModelError) as e:
        _core.fit_steps(-1.0, [1.0, 2.0, 4.0], [1.0, 1.0, 2.0])
    assert str(e.value) == "o = -1: a finite time >= 0"
    rows = exchange_rows(amp=0.0)
    rows[4]["median_us"] = -0.5
    with pytest.raises(ModelError) as e:
        cal.fit_exchange(rows)
    assert str(e.value) == "chain times[4] = -0.5: a finite number > 0"

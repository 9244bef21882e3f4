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
from hypercuboid.errors import ModelError, OutputExistsError
from hypercuboid.mpi import calibrate as cal
from hypercuboid.schedule import parse_model

# A known machine (µs, bytes): LogGOPS L, o, g, G; eager up to S, then a rendezvous handshake.
L, OVH, GAP, G_US, S = 0.5, 0.08, 0.1, 1e-4, 4096
RENDEZVOUS = 2.0
BW, SINGLE = 25.0, 1.0 / (G_US * 1e3)  # GB/s: 10 GB/s per flow, 25 GB/s shared
GAMMA_US, DELTA_US = 2e-5, 0.01
SIZES = [1 << k for k in range(23)]


def _noise(n: int, amp: float, seed: int) -> np.ndarray:
    return 1.0 + amp * np.random.default_rng(seed).uniform(-1.0, 1.0, n)


def _rows(xs, ys, key="bytes"):
    return [{key: x, "median_us": float(y)} for x, y in zip(xs, ys, strict=True)]


# The exchange steps of the known machine: both ranks busy costs more (L_X, G_X), and every
# call through the runner costs CALL more; a copy costs COPY_US per byte.
CALL, L_X, G_X, COPY_US = 0.2, 0.6, 1.5e-4, 1e-5


def exchange_rows(amp: float = 0.01) -> list[dict]:
    """:func:`cal.exchange`'s rows for the known machine: ``CALL + k·x(s)``."""
    rows = []
    for j, s in enumerate(SIZES):
        step = L_X + 2 * OVH + (s - 1) * G_X + (RENDEZVOUS if s > S else 0.0)
        for k in cal.EXCHANGE_STEPS:
            t = (CALL + k * step) * _noise(1, amp, 100 * j + k)[0]
            rows.append({"bytes": s, "steps": k, "median_us": float(t)})
    return rows


def synthetic(one_way=None, amp: float = 0.01, links=("intra",), exchange=False) -> dict:
    """What :func:`cal.measure` returns, for the known machine with ``amp`` relative noise;
    with ``exchange``, also the exchanges and copies (and the ping-pong pays ``CALL``)."""
    x = np.array(SIZES, dtype=float)
    if one_way is None:
        one_way = L + 2 * OVH + (x - 1) * G_US + np.where(x > S, RENDEZVOUS, 0.0)
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
    assert close(lg["G_ns_per_byte"], G_US * 1e3)
    assert lg["S"] == S and lg["S_source"] == "break point (eager/rendezvous switch)"
    pw = c.fits["links"]["intra"]["piecewise"]
    assert pw["breaks"] == [2 * S]
    assert close(pw["segments"][1]["alpha_us"], L + 2 * OVH + RENDEZVOUS)
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
    # the rendezvous handshake is R, the segments' jump: without it the line does not fit
    assert close(lg["R_us"], RENDEZVOUS) and lg["R_raw_us"] == lg["R_us"]
    assert c.model.endswith(",R=" + cal._fmt_time_us(lg["R_us"]))
    assert ",R=" in parse_model(c.model)
    assert lg["r2"] > 0.99 and 0.9 < lg["r2_without_R"] < 0.95
    assert c.warnings == []


def test_the_exchange_gives_the_call_cost_and_loggops_of_busy_steps_within_two_percent():
    # C is an intercept of 2 to 4 steps: its error is several times the noise, so 0.2 %
    c = cal.fit(synthetic(exchange=True, amp=0.002), "Open MPI test")
    lk = c.fits["links"]["intra"]
    ex = lk["exchange"]
    assert close(ex["call_us"], CALL) and c.call_us == ex["call_us"]
    assert ex["bytes"] == SIZES and ex["r2"] > 0.99
    for s, step in zip(SIZES, ex["step_us"], strict=True):
        assert close(step, L_X + 2 * OVH + (s - 1) * G_X + (RENDEZVOUS if s > S else 0.0))
    # LogGOPS is fitted to the exchange steps: L and G of both ranks busy, o and g as before
    lg = lk["loggops"]
    assert lg["fitted_to"] == "exchange steps" and lg["bytes"] == [float(s) for s in SIZES]
    assert close(lg["L_us"], L_X) and close(lg["G_ns_per_byte"], G_X * 1e3)
    assert close(lg["o_us"], OVH) and close(lg["g_us"], GAP) and lg["S"] == S
    assert close(lg["R_us"], RENDEZVOUS)
    # the ping-pong less C/2 is the one-way time: its segments and the pipelined model are
    # those of the machine without the call cost
    pw = lk["piecewise"]
    assert close(pw["segments"][0]["alpha_us"], L + 2 * OVH)
    assert close(lk["pipelined"]["alpha_p_us"] + lk["pipelined"]["alpha_r_us"], L + 2 * OVH)
    assert close(lk["pipelined"]["beta_ns_per_byte"], G_US * 1e3)
    # the copy: LogGOPS's copy per byte
    assert close(c.fits["copy"]["copy_ns_per_byte"], COPY_US * 1e3)
    assert parse_model(c.model)
    copy = cal._fmt_time_us(c.fits["copy"]["copy_ns_per_byte"] * 1e-3)
    assert f",copy={copy},R={cal._fmt_time_us(lg['R_us'])}" in c.model
    assert c.document()["call"] == cal._fmt_time_us(ex["call_us"])
    # the node's bandwidth is the contention fit's (25 GB/s) unless 2 exchange flows moved more
    assert c.fits["contention"]["node_GBps"] == c.fits["contention"]["bandwidth_GBps"]
    assert cal.node_bandwidth(25.0, 0.05) == 40.0 and cal.node_bandwidth(25.0, 0.1) == 25.0
    assert cal.node_bandwidth(25.0, None) == 25.0
    assert c.warnings == []


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
    cal.plot(cal.fit(synthetic(links=("intra", "inter"))), png)
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

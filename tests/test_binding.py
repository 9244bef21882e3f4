"""The binding's boundaries (issues 33 and 34): a Rust panic becomes the structured error of its
call, Ctrl-C stops a long call, and a bad argument's message names the parameter."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import hypercuboid as hc
import hypercuboid.topology
import numpy as np
import pytest
from hypercuboid import _core
from hypercuboid.errors import NetworkError, ScheduleError, SimulationError

ROOT = Path(__file__).resolve().parent.parent

# -- panics ---------------------------------------------------------------------------------


def test_a_panic_becomes_the_error_of_its_call():
    with pytest.raises(ScheduleError) as e:
        _core._panic_for_test("boom")
    assert str(e.value) == "_panic_for_test: internal error: boom; please report"
    # A ValueError like every ScheduleError, not pyo3's PanicException (a BaseException).
    assert isinstance(e.value, ValueError)


def test_a_panic_in_a_worker_thread_is_the_error_of_its_call_and_prints_nothing(capfd):
    with pytest.raises(ScheduleError) as e:
        _core._panic_for_test("boom in a worker", worker=True)
    assert str(e.value) == "_panic_for_test: internal error: boom in a worker; please report"
    assert capfd.readouterr() == ("", "")


def test_a_panic_with_the_gil_released_becomes_the_error_of_its_call():
    # Duration::from_secs_f64(NaN) panics inside the detached loop.
    with pytest.raises(SimulationError) as e:
        _core._wait_for_test(float("nan"))
    assert re.fullmatch(r"_wait_for_test: internal error: .+; please report", str(e.value))
    assert "NaN" in str(e.value)


def test_the_module_still_works_after_a_panic():
    with pytest.raises(ScheduleError):
        _core._panic_for_test("again")
    assert hc.schedules.allreduce("ring", nranks=4, count=8).verify().sound


# -- Ctrl-C ---------------------------------------------------------------------------------


#: The child takes SIGINT as an interactive Python does, whatever the test runner inherited: a
#: shell's background job starts with SIGINT ignored, Python keeps an ignored SIGINT, and the
#: core (rightly) leaves an ignored SIGINT ignored.
_AS_AT_A_TERMINAL = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"


def _python(code: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.Popen(
        [sys.executable, "-c", _AS_AT_A_TERMINAL + textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _interrupt_after_ready(p: subprocess.Popen) -> tuple[str, str]:
    """Waits for the child's ``ready`` line, lets it enter its call, sends SIGINT; returns
    the child's remaining stdout and its stderr (a hang fails on the timeout)."""
    assert p.stdout is not None
    try:
        assert p.stdout.readline() == "ready\n"
        try:
            p.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        p.send_signal(signal.SIGINT)
        return p.communicate(timeout=60)
    finally:
        p.kill()
        p.wait()


def test_ctrl_c_stops_a_long_call_and_restores_pythons_handler():
    p = _python(
        """
        import os, signal, sys, time
        from hypercuboid import _core
        print("ready", flush=True)
        try:
            _core._wait_for_test(120.0)
            print("not interrupted")
        except KeyboardInterrupt as e:
            print("KeyboardInterrupt:", e)
        # Python's own handler is back: a second SIGINT is Python's KeyboardInterrupt.
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(60)
        except KeyboardInterrupt:
            print("python's handler")
        sys.exit(130)
        """
    )
    out, err = _interrupt_after_ready(p)
    assert (p.returncode, out, err) == (
        130,
        "KeyboardInterrupt: interrupted\npython's handler\n",
        "",
    )


def test_calls_off_the_main_thread_run_and_convert_their_panics():
    # Only the main thread installs the SIGINT handler; a call on another thread runs as usual.
    results: list[object] = []

    def run() -> None:
        results.append(_core._wait_for_test(0.01) > 0)
        try:
            _core._wait_for_test(float("nan"))
        except SimulationError as e:
            results.append(str(e).startswith("_wait_for_test: internal error: "))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert results == [True, True]


def test_ctrl_c_stops_a_large_simulation():
    p = _python(
        """
        import sys
        import hypercuboid as hc
        s = hc.schedules.allreduce("recursive_doubling", nranks=2**16, count=1)
        print("ready", flush=True)
        try:
            # Hours without the core's polls (the test's timeout fails it); stops at Ctrl-C.
            s.simulate("postal:alpha=1us", threads=1, calls=10**6)
            print("not interrupted")
        except KeyboardInterrupt as e:
            print("KeyboardInterrupt:", e)
            sys.exit(130)
        """
    )
    out, err = _interrupt_after_ready(p)
    assert (p.returncode, out, err) == (130, "KeyboardInterrupt: interrupted\n", "")


# -- arguments ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"nranks": "4"}, "nranks: expected an int, got str '4'"),
        ({"nranks": True}, "nranks: expected an int, got bool True"),
        ({"nranks": 4.0}, "nranks: expected an int, got float 4.0"),
        ({"count": float("nan")}, "count: expected an int, got float nan"),
        ({"algorithm": 123}, "algorithm: expected a str, got int 123"),
        ({"dtype": 8}, "dtype: expected a str, got int 8"),
        ({"op": None}, "op: expected a str, got NoneType None"),
    ],
)
def test_a_bad_argument_type_names_the_parameter(kwargs, message):
    args = {"algorithm": "ring", "nranks": 4, "count": 8, "dtype": "float64", "op": "sum"}
    args.update(kwargs)
    with pytest.raises(TypeError) as e:
        hc.schedules.allreduce(args.pop("algorithm"), args.pop("nranks"), args.pop("count"), **args)
    assert str(e.value) == message


def test_a_long_value_is_quoted_as_a_bounded_prefix():
    with pytest.raises(TypeError) as e:
        _core.alltoall("linear", "x" * 100_000)
    assert str(e.value) == "nranks: expected an int, got str '" + "x" * 39 + "..."


def test_one_rank_check_in_the_cores_words():
    accepted = "a schedule has 1 to 4294967294 ranks"
    for n in (0, -3, 2**32 - 1, 2**32, 2**70):
        for call, args in (
            (_core.allreduce, ("ring", n)),
            (_core.alltoall, ("linear", n)),
            (_core.allreduce_cost, ("ring", n, 1, "float64", 1, 0.0)),
            (_core.rm_suggest, (n,)),
        ):
            with pytest.raises(ScheduleError) as e:
                call(*args)
            assert str(e.value) == f"invalid number of ranks {n}: {accepted}"


def test_numpy_integers_are_counts():
    s = hc.schedules.allreduce("ring", np.int64(4), np.uint32(8))
    assert (s.nranks, s.meta["count"]) == (4, 8)


def test_a_negative_count_is_refused():
    with pytest.raises(ScheduleError) as e:
        hc.schedules.alltoall("linear", 4, -1)
    assert str(e.value) == "invalid count -1: must be >= 0"


def test_torus_dimensions_are_refused_for_an_all_to_all_exchange():
    topo = hc.topology.generate("fullmesh:n=3")
    with pytest.raises(NetworkError) as e:
        _core.netsim_exchange(topo, "min", "a2a", dims=[2, 3, 4])
    assert str(e.value) == "invalid torus dimensions 2x3x4: they apply to the nn exchange, not a2a"


def test_a_spec_of_the_wrong_type_names_its_parameter():
    s = hc.schedules.allreduce("ring", nranks=4, count=8)
    with pytest.raises(TypeError) as e:
        s.simulate(123)
    assert str(e.value) == "model: expected a str, got int 123"
    with pytest.raises(TypeError) as e:
        s.simulate(network="fullmesh:n=4", routing=None)
    assert str(e.value) == "routing: expected a str, got NoneType None"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: s.simulate("postal:alpha=1us", noise="exp:mean=1us", seed=-1),
            "invalid seed -1: accepted 0 to 2^64 - 1",
        ),
        (
            lambda s: s.simulate("postal:alpha=1us", noise="exp:mean=1us", seed=2**80),
            "invalid seed 1208925819614629174706176: accepted 0 to 2^64 - 1",
        ),
        (lambda s: s.verify(eager_limit=-1), "invalid eager_limit -1: accepted 0 to 2^64 - 1"),
        (lambda s: s.verify(max_problems=-3), "invalid max_problems -3: accepted 0 to 2^64 - 1"),
        (lambda s: hc._core.topology_ml3b(-1), "invalid k -1: accepted 0 to 2^32 - 1"),
    ],
)
def test_an_unsigned_argument_out_of_range_names_it(call, message):
    """Not a bare OverflowError: the parameter, the value and the accepted range."""
    s = hc.schedules.allreduce("ring", nranks=4, count=8)
    with pytest.raises(hc.ScheduleError) as e:
        call(s)
    assert str(e.value) == message

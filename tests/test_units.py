"""The one grammar of times, sizes and bandwidths (the Rust core's, through ``hypercuboid.units``),
and the verbs that read it: exact values and exact messages."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypercuboid import netsim, topology, units
from hypercuboid.cli import cli
from hypercuboid.errors import (
    HypercuboidError,
    NetworkError,
    TopologyError,
    UnitError,
)

SIZE_UNITS = (
    "accepted units are B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (binary: 1 KB = 1024 B; a "
    "bare number is bytes)"
)
TIME_UNITS = "accepted units are ps, ns, us, ms, s (a bare number is ns)"


def _refused(parse, text: str) -> str:
    """The message of the UnitError that ``parse(text)`` raises."""
    with pytest.raises(UnitError) as e:
        parse(text)
    return str(e.value)


def _gives(f, cases: dict) -> None:
    """Asserts that ``f`` maps each key of ``cases`` to its value."""
    for arg, value in cases.items():
        assert f(arg) == value, arg


def test_times():
    _gives(units.parse_time, {"500ns": 500_000, "1.5us": 1_500_000, "1.5µs": 1_500_000})
    _gives(units.parse_time, {"3000": 3_000_000, "2ms": 2_000_000_000, "1s": 10**12, "0": 0})
    _gives(units.parse_time_f64, {"0.4ps": 0.4, "0.0004ns": 0.4})
    assert (
        _refused(units.parse_time, "5 parsecs")
        == f"invalid time '5 parsecs': unknown unit 'parsecs'; {TIME_UNITS}"
    )
    assert _refused(units.parse_time, "0.0001ns") == (
        "invalid time '0.0001ns': finer than one picosecond, the simulator's resolution"
    )
    assert (
        _refused(units.parse_time_f64, "-1ns")
        == "invalid time '-1ns': negative; times must be >= 0"
    )


def test_sizes():
    _gives(units.parse_size, {"256": 256, "256B": 256, "7.5KB": 7680, "1K": 1024})
    _gives(units.parse_size, {"1M": 1 << 20, "1MiB": 1 << 20, "2GB": 2 << 30, "1T": 1 << 40})
    _gives(units.parse_size, {"18446744073709551615": 2**64 - 1})
    assert _refused(units.parse_size, "1.5B") == "invalid size '1.5B': not a whole number of bytes"
    assert (
        _refused(units.parse_size, "3 parsecs")
        == f"invalid size '3 parsecs': unknown unit 'parsecs'; {SIZE_UNITS}"
    )
    assert _refused(units.parse_size, "") == (
        "invalid size '': empty; expected a number with an optional unit (B, K/KB/KiB, "
        "M/MB/MiB, G/GB/GiB, T/TB/TiB)"
    )
    _gives(units.format_size, {102_400: "100KiB", 1000: "1000B", 3 << 30: "3GiB"})
    for b in (0, 1, 1000, 7680, 1 << 20, 2**64 - 1):
        assert units.parse_size(units.format_size(b)) == b


def test_bandwidths():
    _gives(units.parse_bandwidth, {"100": 100.0, "100Gbps": 100.0, "100 Gb/s": 100.0})
    _gives(units.parse_bandwidth, {"400Mbps": 0.4, "1Tbps": 1000.0, "12.5GB/s": 100.0})
    assert _refused(units.parse_bandwidth, "0") == "invalid bandwidth '0': a bandwidth must be > 0"
    assert (
        _refused(units.parse_bandwidth, "-5")
        == "invalid bandwidth '-5': negative; bandwidths must be > 0"
    )


def test_unit_errors_are_value_errors():
    with pytest.raises(ValueError) as e:
        units.parse_size("x")
    assert isinstance(e.value, HypercuboidError)
    assert isinstance(e.value, UnitError)


def test_netsim_keeps_its_names_and_exception_class():
    # Strings go to the core; ints pass through (sizes in bytes, times in picoseconds).
    assert netsim.parse_size("100KB") == 102_400
    assert netsim.parse_size("1MiB") == 1 << 20
    assert netsim.parse_size(256) == 256
    assert netsim.parse_time("20us") == 20_000_000
    assert netsim.parse_time(5) == 5
    with pytest.raises(NetworkError) as e:
        netsim.parse_size("1x")
    assert str(e.value) == f"invalid size '1x': unknown unit 'x'; {SIZE_UNITS}"
    with pytest.raises(NetworkError) as e:
        netsim.parse_size(-1)
    assert str(e.value) == "invalid size '-1': negative; sizes must be >= 0"
    with pytest.raises(NetworkError) as e:
        netsim.parse_time("5 parsecs")
    assert str(e.value) == f"invalid time '5 parsecs': unknown unit 'parsecs'; {TIME_UNITS}"


def test_a_size_parses_in_every_verb():
    # netsim exchange reads the same grammar as bench (MiB, decimal sizes).
    a = CliRunner().invoke(
        cli,
        ["netsim", "exchange", "--pattern", "a2a", "-t", "fullmesh:n=3", "--json"]
        + ["--message", "7.5KB", "--executor", "serial"],
    )
    b = CliRunner().invoke(
        cli,
        ["netsim", "exchange", "--pattern", "a2a", "-t", "fullmesh:n=3", "--json"]
        + ["--message", "7680", "--executor", "serial"],
    )
    assert a.exit_code == 0, a.output
    assert json.loads(a.stdout)["completion_ns"] == json.loads(b.stdout)["completion_ns"]
    r = CliRunner().invoke(
        cli, ["netsim", "run", "-t", "fullmesh:n=3", "--buffer", "1 parsec", "--load", "0.5"]
    )
    assert r.exit_code == 1
    assert r.output == f"Error: invalid size '1 parsec': unknown unit 'parsec'; {SIZE_UNITS}\n"


def test_topology_links_take_units():
    t = topology.generate("fullmesh:n=3,bw=12.5GB/s,lat=0.05us")
    assert t == topology.generate("fullmesh:n=3,bw=100,lat=50ns")
    with pytest.raises(TopologyError) as e:
        topology.generate("fullmesh:n=3,bw=100Gbit")
    assert str(e.value) == (
        "invalid topology spec 'fullmesh:n=3,bw=100Gbit': bw=100Gbit: unknown unit 'Gbit'; "
        "accepted units are bps, Kbps, Mbps, Gbps, Tbps, Gb/s, B/s, KB/s, MB/s, GB/s, TB/s "
        "(decimal: 1 Gbps = 10^9 bit/s; a bare number is Gb/s)"
    )
    r = CliRunner().invoke(
        cli, ["topo", "export", "fullmesh:n=3", "--format", "anynet", "--cycle", "1parsec"]
    )
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] == (
        "Error: Invalid value for --cycle: invalid time '1parsec': unknown unit 'parsec'; "
        f"{TIME_UNITS}"
    )


def test_graphml_specs_are_read_by_the_core_grammar():
    with pytest.raises(TopologyError) as e:
        topology.generate("graphml:t.graphml,q=1")
    assert str(e.value) == (
        "invalid topology spec 'graphml:t.graphml,q=1': unknown key 'q' for graphml; accepted: p"
    )
    with pytest.raises(TopologyError) as e:
        topology.generate("graphml")
    assert str(e.value) == (
        "invalid topology spec 'graphml': graphml needs a file, e.g. graphml:topology.graphml"
    )
    with pytest.raises(TopologyError) as e:
        topology.generate("graphml:t.graphml,p=x")
    assert str(e.value) == (
        "invalid topology spec 'graphml:t.graphml,p=x': p=x: not a whole number in range"
    )

"""The core's choice tables, its "XxYxZ" reader and its model-file reader, as Python sees them
(crates/hypercuboid-py/src/tables.rs)."""

from __future__ import annotations

import json

import click
import pytest
from hypercuboid import _core, modelfile, phases
from hypercuboid.errors import LbmError, ModelError, NetworkError, ScheduleError, TopologyError

SYNCS = ["pairwise-reduced", "pairwise", "barrier", "none"]


def test_every_table_is_listed():
    assert _core.choice_tables() == [
        "sync",
        "alltoall phase method",
        "alltoall phase routing",
        "level",
        "nic",
        "mapping",
        "routing",
        "export format",
        "schedule format",
        "layout",
    ]
    for what in _core.choice_tables():
        listed = _core.choices(what)
        assert listed, what
        assert all(isinstance(c, _core.Choice) and c.help for c in listed), what
        assert len({c.name for c in listed}) == len(listed), what


def test_a_choice_is_a_frozen_typed_result():
    syncs = _core.choices("sync")
    assert [c.name for c in syncs] == SYNCS
    assert syncs[0].aliases == []
    assert syncs[0] == _core.choices("sync")[0]
    assert syncs[0] != syncs[1]
    assert hash(syncs[0]) == hash(_core.choices("sync")[0])
    with pytest.raises(AttributeError):
        syncs[0].name = "x"  # type: ignore[misc]
    method = _core.choices("alltoall phase method")[1]
    assert (method.name, method.aliases) == ("faraj-yuan", ["tree", "faraj_yuan"])
    assert method.help == "the optimal phases of a switched tree (Faraj and Yuan, section 4)"
    assert repr(_core.choices("level")[1]) == (
        'Choice(name="flow", aliases=[], help="max-min fair sharing of link bandwidth")'
    )
    assert [(c.name, c.aliases) for c in _core.choices("mapping")] == [
        ("linear", []),
        ("round_robin", ["round-robin"]),
        ("random", []),
        ("file", []),
    ]
    assert [c.name for c in _core.choices("routing")] == ["min", "inr", "ugal", "ugal-th"]
    assert _core.choices("routing")[2].aliases == ["ugal-l"]
    assert [c.name for c in _core.choices("nic")] == ["fifo", "interleave"]
    assert [c.name for c in _core.choices("alltoall phase routing")] == ["dmodk", "first"]
    assert [c.name for c in _core.choices("layout")] == list(_core.LBM_LAYOUTS) == ["soa", "aos"]


def test_an_unknown_table_or_name_says_what_is_accepted():
    with pytest.raises(ValueError) as e:
        _core.choices("colour")
    assert str(e.value) == (
        "unknown choice table 'colour'; accepted: sync, alltoall phase method, alltoall phase "
        "routing, level, nic, mapping, routing, export format, schedule format, layout"
    )
    assert _core.choice_name("export format", " DOT ") == "dot"
    assert _core.choice_name("alltoall phase method", "Tree") == "faraj-yuan"
    assert _core.choice_name("routing", "UGAL-L") == "ugal"
    with pytest.raises(ValueError) as e:
        _core.choice_name("sync", "all")
    assert str(e.value) == "unknown sync 'all'; accepted: pairwise-reduced, pairwise, barrier, none"


def test_python_and_the_cli_read_the_tables():
    from hypercuboid.cli.alltoall import alltoall
    from hypercuboid.cli.topo import topo

    assert phases.SYNCS == tuple(SYNCS)
    (sync,) = [p for p in alltoall.commands["generate"].params if p.name == "sync"]
    assert isinstance(sync.type, click.Choice)
    assert list(sync.type.choices) == SYNCS
    assert sync.type.case_sensitive is False
    (fmt,) = [p for p in topo.commands["export"].params if p.name == "fmt"]
    assert list(fmt.type.choices) == ["json", "graphml", "anynet", "dot", "simgrid"]


def test_schedule_formats_come_from_the_core(tmp_path):
    from hypercuboid.cli.schedule import schedule
    from hypercuboid.schedule import FORMATS
    from hypercuboid.schedules import allreduce

    assert FORMATS == ("text", "goal", "c")
    export = schedule.commands["export"]
    assert isinstance(export, click.Group)
    (fmt,) = [p for p in export.commands["allreduce"].params if p.name == "fmt"]
    assert list(fmt.type.choices) == ["text", "goal", "c"]
    s = allreduce("ring", 2, 4)
    s.save(tmp_path / "a.txt", format="TEXT")
    s.save(tmp_path / "b.txt", format="text")
    assert (tmp_path / "a.txt").read_text() == (tmp_path / "b.txt").read_text()
    with pytest.raises(ScheduleError) as e:
        s.save(tmp_path / "r.x", format="png")
    assert str(e.value) == "unknown schedule format 'png'; accepted: text, goal, c"


def test_topology_export_formats_come_from_the_core():
    from hypercuboid import topology

    assert topology.EXPORT_FORMATS == ("json", "graphml", "anynet", "dot", "simgrid")
    assert topology.export("tree:fig1", " JSON") == topology.export("tree:fig1", "json")
    with pytest.raises(TopologyError) as e:
        topology.export("tree:fig1", "png")
    assert str(e.value) == (
        "unknown export format 'png'; accepted: json, graphml, anynet, dot, simgrid"
    )


def test_parse_dims():
    assert _core.parse_dims("64x64x64", "--lattice") == [64, 64, 64]
    assert _core.parse_dims(" 4 X 3x2 ", "--decomp") == [4, 3, 2]
    assert _core.parse_dims("8x8", "s", None) == [8, 8]
    assert _core.parse_dims("8x8", "s", 2) == [8, 8]
    for bad in ["8x8", "0x4x4", "4x-4x4", "4x4x4x4", "axbxc", "", "4x4x1.5"]:
        with pytest.raises(ValueError) as e:
            _core.parse_dims(bad, "--lattice")
        assert str(e.value) == (
            f"--lattice '{bad}': accepted XxYxZ with three positive integers (64x64x64)"
        )
    with pytest.raises(ValueError) as e:
        _core.parse_dims("8xq", "s", None)
    assert str(e.value) == "s '8xq': accepted positive integers joined by 'x' (8x8 or 4x4x4)"


def test_the_python_readers_of_dims_are_the_core_s():
    from hypercuboid.cli.common import _triple_option
    from hypercuboid.lbm import proxy
    from hypercuboid.netsim import _api

    assert proxy.parse_dims("4x5x6", "--lattice") == (4, 5, 6)
    with pytest.raises(LbmError) as e:
        proxy.parse_dims("8x8", "--lattice")
    assert str(e.value) == "--lattice '8x8': accepted XxYxZ with three positive integers (64x64x64)"
    assert _api._parse_dims("12x14x19") == (12, 14, 19)
    with pytest.raises(NetworkError) as e:
        _api._parse_dims("4x5")
    assert str(e.value) == (
        "invalid torus '4x5': accepted XxYxZ with three positive integers (64x64x64)"
    )
    assert _triple_option("2x2x1", "--decomp") == (2, 2, 1)
    assert _triple_option(None, "--decomp") is None
    with pytest.raises(click.ClickException) as e:
        _triple_option("2x1", "--decomp")
    assert e.value.message == (
        "--decomp '2x1': accepted XxYxZ with three positive integers (64x64x64)"
    )


def test_model_files_are_read_by_the_core(tmp_path):
    spec = "pipelined:alpha_p=1.34us,alpha_r=340ns,beta=0.4ns,gamma=0"
    p = modelfile.write(tmp_path / "m.json", spec, "test", {"x": 1}, {"host": "h"})
    assert _core.read_model_file(str(p)) == spec
    assert modelfile.load(p) == spec
    padded = tmp_path / "padded.json"
    padded.write_text(json.dumps({"model": "  postal:alpha=1us  "}))
    assert modelfile.load(padded) == "postal:alpha=1us"
    cases = {
        '{"notmodel": 1}': "not a model file (no 'model' key; keys: notmodel)",
        "[1]": "not a model file (expected a JSON object, got a list)",
        '{"model": "hockney"}': "unknown model 'hockney'; accepted: postal, pipelined, loggops",
    }
    for content, message in cases.items():
        bad = tmp_path / "bad.json"
        bad.write_text(content)
        with pytest.raises(ModelError) as e:
            modelfile.load(bad)
        assert str(e.value) == f"{bad}: {message}"
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ModelError) as e:
        modelfile.load(binary)
    assert str(e.value) == f"{binary}: not a model file (not UTF-8 text)"
    missing = tmp_path / "missing.json"
    with pytest.raises(ModelError) as e:
        modelfile.load(missing)
    assert str(e.value).startswith(f"{missing}: cannot read it: No such file or directory")

"""The showcase (``hypercuboid demo``): its sections run at small sizes, give the figures the
simulators give (exact: the runs are deterministic), and write their pictures."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from hypercuboid import demo
from hypercuboid.cli import cli

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory):
    """One run of the whole demo through the CLI, small sizes, without MPI."""
    out = tmp_path_factory.mktemp("demo")
    r = CliRunner().invoke(cli, ["demo", "--out", str(out), "--scale", "6", "--small", "--no-mpi"])
    assert r.exit_code == 0, r.output
    return out, r.output, json.loads((out / "summary.json").read_text())


def test_the_allreduce_family_is_sound_and_the_scale_run_exact(small_demo):
    out, _, summary = small_demo
    assert all(row["sound"] for row in summary["verify"])
    assert summary["scale"]["completion_ns"] == summary["scale"]["expected_ns"] == 6 * 6042.0
    for f in ("rd7.png", "ring8.png", "rd7.trace.json", "rd7.goal", "rd7.hcs"):
        assert (out / f).stat().st_size > 0
    closed = [row for row in summary["simulate"] if row["postal_closed_form"] != "-"]
    assert closed and all(
        math.isclose(float(row["postal_closed_form"].replace(",", "")), row["postal"], abs_tol=0.05)
        for row in closed
    )


def test_every_section_writes_its_pictures(small_demo):
    out, output, summary = small_demo
    pictures = [
        "rd7.png",
        "ring8.png",
        "fig5b-phases.png",
        "fig5b-alltoall.png",
        "slimfly-packet.png",
        "slimfly-flow.png",
        "halo-variants.png",
    ]
    for name in pictures:
        assert (out / name).read_bytes()[:8] == PNG, name
        assert str(out / name) in summary["files"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*pictures, "rd7.trace.json", "rd7.goal", "rd7.hcs", "slimfly.xml", "summary.json"]
        + ["summary.txt"]
    )
    assert str(out / "slimfly.xml") in summary["files"]
    assert "slimfly.xml: the same network as a SimGrid platform; read back: 50 routers, 200 " in (
        output
    )
    # what the two libraries would run for the seed's 8 KB alltoall on 32 ranks
    assert summary["alltoall"]["library"] == {
        "openmpi": ["linear_sync:max=0"],
        "mpich": ["linear_shifted:block=32"],
    }
    for heading in ("5. Alltoall", "6. A schedule on a Slim Fly", "7. Halo exchanges"):
        assert heading in output
    assert "8. MPI: skipped (--no-mpi)" in output
    assert (out / "summary.txt").read_text() == output


def test_the_scheduled_alltoall_beats_lams_on_the_seeds_ethernet_tree(small_demo):
    a2a = small_demo[2]["alltoall"]
    # Faraj and Yuan: the phases of fig5b are as many as the bottleneck link's messages
    assert (a2a["phases"], a2a["load"], a2a["optimal"]) == (192, 192, True)
    (run,) = a2a["runs"]
    assert run["kb"] == 8
    assert run["ms"] == {
        "LAM (linear)": 268.96463,
        "MPICH (linear_shifted)": 199.67199,
        "ours (scheduled)": 165.31176,
    }  # docs/networks.md's table, fig5b at 8 KB
    assert run["seed_ms"] == {
        "LAM (linear)": 199.0,
        "MPICH (linear_shifted)": 155.0,
        "ours (scheduled)": 212.0,
    }


def test_the_slim_fly_runs_at_packet_and_flow_level(small_demo):
    sf = small_demo[2]["slimfly"]
    assert sf["packet"]["messages"] == sf["flow"]["messages"] == 2 * 149 * 150
    assert sf["packet"]["completion_ns"] == 678523.52
    assert sf["flow"]["completion_ns"] == 673773.96


def test_the_halo_variants_are_sound_and_the_reduced_one_is_fastest(small_demo):
    h = small_demo[2]["halo"]
    assert {v: (x["ops"], x["sound"]) for v, x in h.items()} == {
        "blocking": (600, True),
        "nonblocking": (2520, True),
        "nonblocking:overlap=on": (2544, True),
        "reduced": (1752, True),
    }
    assert {v: x["per_call_ns"] for v, x in h.items()} == {
        "blocking": 483580.0,
        "nonblocking": 583272.0,
        "nonblocking:overlap=on": 581841.0,
        "reduced": 173281.0,
    }


def test_without_mpiexec_the_mpi_section_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "_mpiexec", lambda: None)
    lines: list[str] = []
    files: list[str] = []
    assert demo._mpi(tmp_path, lines.append, files) is None
    assert lines == [
        "8. MPI: skipped, no mpiexec with mpi4py here (pip install 'hypercuboid[mpi]')",
        "",
    ]
    assert files == [] and list(tmp_path.iterdir()) == []


@pytest.mark.long
def test_the_mpi_section_runs_the_native_runner_and_the_lbm_proxy(tmp_path):
    if demo._mpiexec() is None:
        pytest.skip("no mpiexec with mpi4py")
    lines: list[str] = []
    files: list[str] = []
    res = demo._mpi(tmp_path, lines.append, files)
    assert res is not None
    rows = res["bench"]
    assert sorted((r["algorithm"], r["bytes"]) for r in rows) == sorted(
        (a, b) for a in ("recursive_doubling", "ring", "native") for b in (8, 65536)
    )
    assert all(r["runner"] == "native" and r["nranks"] == 4 for r in rows)
    assert all(r["valid"] and r["check"]["identical_bits"] for r in rows)
    lbm = res["lbm"]
    assert (lbm["ranks"], lbm["steps"], lbm["halo"], lbm["overlap"]) == (4, 10, "reduced", True)
    assert lbm["mass"] == pytest.approx(32 * 32 * 32, rel=1e-12)
    for name in ("mpi-bench.png", "mpi-lbm.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG
    # calibrate wrote a model file with a node level that predict took
    assert res["model"].startswith("loggops:") and res["node"].startswith("node:ranks=2,")
    assert any("hypercuboid predict with it at 16 ranks" in line for line in lines)

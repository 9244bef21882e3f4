"""``hypercuboid validate`` under mpiexec (every rank runs the command in-process)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.mpi

POSTAL = "postal:alpha=1us,beta=1ns"


def test_validate_table_json_and_summary(comm, tmp_path):
    from hypercuboid.cli.validate import validate

    if comm.size < 2:
        pytest.skip("validate measures on 2 or more ranks")
    out = tmp_path / "v.json"
    res = CliRunner().invoke(
        validate,
        ["-m", POSTAL, "-a", "recursive_doubling,ring", "--sizes", "8,1K", "-i", "5", "-x", "1"]
        + ["--json", str(out), "-q"],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    if comm.rank != 0:
        assert res.output == ""
        return
    d = json.loads(out.read_text())
    assert [(r["bytes"], r["algorithm"]) for r in d["rows"]] == [
        (b, a) for b in (8, 1024) for a in ("recursive_doubling", "ring")
    ]
    for r in d["rows"]:
        assert r["p25_us"] <= r["median_us"] <= r["p75_us"]
        assert r["error"] == pytest.approx(r["predicted_us"] / r["median_us"] - 1)
    assert [s["bytes"] for s in d["sizes"]] == [8, 1024]
    assert d["picks"] == 2 and d["nranks"] == comm.size
    lines = res.output.splitlines()
    assert lines[0].startswith(f"# allreduce on {comm.size} ranks under {POSTAL}")
    assert lines[-1] == d["summary"]
    assert lines[-1].startswith("median |error| ") and lines[-1].endswith(" of 2")


def test_ctrl_c_keeps_the_sizes_measured(comm, tmp_path, monkeypatch):
    """Ctrl-C during the second size: the first size's rows are written, exit status 130."""
    from hypercuboid.cli import cli
    from hypercuboid.mpi import validate as hv

    if comm.size < 2:
        pytest.skip("validate measures on 2 or more ranks")
    real = hv.measure_grid

    def stop_at_1k(comm, p, nbytes, **kw):
        if nbytes == 1024:
            raise KeyboardInterrupt
        return real(comm, p, nbytes, **kw)

    monkeypatch.setattr(hv, "measure_grid", stop_at_1k)
    out = tmp_path / "v.json"
    res = CliRunner().invoke(
        cli,
        ["validate", "-m", POSTAL, "-a", "ring", "--sizes", "8,1K", "-i", "3", "-x", "1"]
        + ["--json", str(out), "-q"],
    )
    assert res.exit_code == 130, res.output
    if comm.rank != 0:
        return
    d = json.loads(out.read_text())
    assert d["interrupted"] is True
    assert [(r["bytes"], r["algorithm"]) for r in d["rows"]] == [(8, "ring")]
    assert d["summary"].endswith("picks right 1 of 1")
    assert "(interrupted: the sizes measured so far)" in res.output

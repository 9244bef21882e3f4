"""``hypercuboid validate`` under mpiexec (every rank runs the command in-process)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.mpi

POSTAL = "postal:alpha=1us,beta=1ns"


def validated(comm, tmp_path, args: list[str]) -> tuple[list[str], list[str], dict] | None:
    """validate with ``args`` (5 iterations, 1 warm-up, JSON to a file) on 2 or more ranks:
    on rank 0 its output's lines without the warnings, the warnings, and the JSON; None
    elsewhere (where it prints nothing). Every row's error is its predicted / measured − 1."""
    from hypercuboid.cli.validate import validate

    if comm.size < 2:
        pytest.skip("validate measures on 2 or more ranks")
    out = tmp_path / "v.json"
    res = CliRunner().invoke(
        validate, [*args, "-i", "5", "-x", "1", "--json", str(out), "-q"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    if comm.rank != 0:
        assert res.output == ""
        return None
    d = json.loads(out.read_text())
    for r in d["rows"]:
        assert 0 < r["p25_us"] <= r["median_us"] <= r["p75_us"]
        assert r["error"] == pytest.approx(r["predicted_us"] / r["median_us"] - 1)
    lines = res.output.splitlines()
    warned = [x for x in lines if x.startswith("warning: ")]
    return [x for x in lines if x not in warned], warned, d


def test_validate_table_json_and_summary(comm, tmp_path):
    got = validated(
        comm, tmp_path, ["-m", POSTAL, "-a", "recursive_doubling,ring", "--sizes", "8,1K"]
    )
    if got is None:
        return
    lines, warned, d = got
    assert [(r["bytes"], r["algorithm"]) for r in d["rows"]] == [
        (b, a) for b in (8, 1024) for a in ("recursive_doubling", "ring")
    ]
    assert [s["bytes"] for s in d["sizes"]] == [8, 1024]
    assert d["picks"] == 2 and d["nranks"] == comm.size
    assert lines[0].startswith(f"# allreduce on {comm.size} ranks under {POSTAL}")
    assert lines[-1] == d["summary"]
    assert lines[-1].startswith("median |error| ") and lines[-1].endswith(" of 2")
    # the reference exchanges at the start and the end, in the JSON and above the summary
    ref = d["reference"]
    assert [r["bytes"] for r in ref["rows"]] == [8, 1 << 20]
    assert ref["threshold"] == 0.25
    for r in ref["rows"]:
        assert r["start_us"] > 0 and r["end_us"] > 0
        assert r["change"] == pytest.approx(r["end_us"] / r["start_us"] - 1)
    moved = [r for r in ref["rows"] if abs(r["change"]) > 0.25]
    assert (ref["warning"] is None) == (not moved)
    # (a loaded machine moves them: then the warning is one line on stderr)
    assert warned == ([] if ref["warning"] is None else [f"warning: {ref['warning']}"])
    assert lines[-2].startswith("reference exchange (start -> end): 8B ")


def test_validate_calibrates_in_its_own_job(comm, tmp_path):
    from hypercuboid import modelfile
    from hypercuboid.cli.validate import validate
    from hypercuboid.schedule import parse_model

    mf, out = tmp_path / "cal.json", tmp_path / "v.json"
    both = CliRunner().invoke(validate, ["--calibrate", str(mf), "-m", POSTAL, "-q"])
    assert both.exit_code == 1 and not mf.exists()
    if comm.rank == 0:
        assert both.output == "Error: give --calibrate FILE or --model/--model-file, not both\n"
    if comm.size < 2:
        return
    args = ["--calibrate", str(mf), "-a", "recursive_doubling", "--sizes", "8,64K"]
    res = CliRunner().invoke(
        validate, [*args, "-i", "3", "-x", "1", "--json", str(out), "-q"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    # the file is the user's now: a second run (every rank: it is collective) refuses to
    # overwrite it
    again = CliRunner().invoke(validate, [*args, "-i", "3", "-x", "1", "-q"])
    assert again.exit_code == 1
    if comm.rank != 0:
        assert again.output == ""
        assert not any(x for x in res.output.splitlines() if not x.startswith("warning: "))
        return
    assert again.output == f"Error: {mf} exists; pass --force to overwrite it\n"
    model = modelfile.load(mf)
    assert model.startswith("loggops:L=")
    d = json.loads(out.read_text())
    # the prediction ran under the file just written (its model, then its node level)
    assert d["model"].startswith(parse_model(model) + " + node:ranks=")
    assert [r["bytes"] for r in d["rows"]] == [8, 65536]


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


def test_validate_halo_rows_json_and_summary(comm, tmp_path):
    """The halo grid measured for real: each variant's exchange on the job's decomposition."""
    from hypercuboid.predict import halo_dims

    args = ["--collective", "halo", "-m", POSTAL, "-a", "blocking,reduced", "--subdomain"]
    got = validated(comm, tmp_path, [*args, "4,2x2x4"])
    if got is None:
        return
    lines, _, d = got
    dims = "x".join(map(str, halo_dims(comm.size)))
    assert [(r["subdomain"], r["algorithm"], r["decomp"]) for r in d["rows"]] == [
        (s, a, dims) for s in ("2x2x4", "4x4x4") for a in ("blocking", "reduced")
    ]
    assert [s["subdomain"] for s in d["sizes"]] == ["2x2x4", "4x4x4"]
    assert d["collective"] == "halo" and d["picks"] == 2
    assert lines[0].startswith(f"# halo on {comm.size} ranks under {POSTAL}")
    assert lines[2].split()[:2] == ["2x2x4", "blocking"]
    assert lines[-1] == d["summary"]

"""Regressions of the hostile-input probe's cases for the verbs of the second stop
(``benchmarks/probe_verbs.py``): each class of problem it found, with the exact message now
given. Readers of text and traces refuse ``/dev/zero`` instead of reading it without bound;
whole-number arguments of ``predict`` and ``AppTrace.calls`` are refused with their name and
range, not an ``OverflowError``; the Python writers keep an existing file unless ``force=True``;
the OTF2 library's and the loader's own lines are not printed beside ours; and under mpiexec
an option's own check is printed by rank 0 only."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypercuboid import modelfile, topology
from hypercuboid import predict as hp
from hypercuboid.apptrace import AppTrace, synthetic
from hypercuboid.cli import cli
from hypercuboid.errors import ScheduleError, TopologyError
from hypercuboid.schedule import OutputExistsError

KEEP = b"KEEP: this file existed before the run\n"
POSTAL = "postal:alpha=1us"
TOO_BIG = "more than 268 MB (a text file of this kind is smaller)"


def test_simgrid_and_topology_readers_refuse_dev_zero():
    with pytest.raises(TopologyError) as e:
        topology.generate("simgrid:/dev/zero")
    assert str(e.value) == f"cannot access '/dev/zero': {TOO_BIG}"
    with pytest.raises(TopologyError) as e:
        topology.read_simgrid("/dev/zero")
    assert str(e.value) == f"cannot access '/dev/zero': {TOO_BIG}"
    with pytest.raises(TopologyError) as e:
        topology.load("/dev/zero")
    assert str(e.value) == (
        f"/dev/zero: not a topology file ({TOO_BIG}; expected the JSON that "
        "export(topology, 'json', path) writes)"
    )


def test_trace_reader_refuses_what_is_not_a_file():
    with pytest.raises(ScheduleError) as e:
        AppTrace.load("/dev/zero")
    assert str(e.value) == (
        "cannot read the trace /dev/zero: not a regular file (a trace is the file that "
        "'trace run' writes)"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sizes": [-8]}, "invalid sizes -8: accepted 0 to 2^64 - 1"),
        ({"ranks": [2**70]}, f"invalid ranks {2**70}: accepted 0 to 2^32 - 1"),
        ({"threads": -1}, "invalid threads -1: accepted 0 to 2^64 - 1"),
    ],
)
def test_predict_names_a_whole_number_out_of_range(kwargs, message):
    args = {"sizes": [8], "ranks": [4], **kwargs}
    threads = args.pop("threads", 0)
    with pytest.raises(ScheduleError) as e:
        hp.predict("allreduce", args["sizes"], args["ranks"], POSTAL, threads=threads)
    assert str(e.value) == message


def test_trace_calls_names_a_negative_rank(tmp_path):
    path = tmp_path / "s.hct"
    synthetic(2, 1, path)
    t = AppTrace.load(path)
    with pytest.raises(ScheduleError) as e:
        t.calls(-1)
    assert str(e.value) == "invalid rank -1: accepted 0 to 2^32 - 1"
    assert t.calls(1)[0] == "MPI_Init"


def _kept(path: Path, write) -> None:
    """``write(path, force)`` refuses an existing file without force and replaces it with."""
    path.write_bytes(KEEP)
    with pytest.raises(OutputExistsError) as e:
        write(path, False)
    assert str(e.value) == f"'{path}' exists; pass force=True to overwrite it"
    assert path.read_bytes() == KEEP
    write(path, True)
    assert path.read_bytes() != KEEP


def test_python_writers_keep_an_existing_file(tmp_path):
    _kept(
        tmp_path / "m.json",
        lambda p, force: modelfile.write(p, POSTAL, "test", {}, {}, force=force),
    )
    grid = hp.predict("allreduce", [8], [4], POSTAL)
    _kept(tmp_path / "table.txt", lambda p, force: hp.write_table(grid, p, force=force))
    synthetic(2, 1, tmp_path / "s.hct")
    t = AppTrace.load(tmp_path / "s.hct")
    _kept(tmp_path / "c.json", lambda p, force: t.export_chrome(p, force=force))


def test_trace_run_refuses_a_recorder_that_is_not_a_library(tmp_path):
    bad = tmp_path / "lib.so"
    bad.write_bytes(b"\x00\xff garbage")
    r = CliRunner().invoke(
        cli, ["trace", "run", "-o", str(tmp_path / "t.hct"), "--recorder", str(bad), "--", "true"]
    )
    assert r.exit_code == 1
    assert r.output == (
        f"Error: --recorder {bad}: not a shared library (no ELF header); give the "
        "libhc_trace.so that 'make native' builds\n"
    )


def _cli(*args: str, env: dict | None = None, prefix: tuple[str, ...] = ()):
    code = "from hypercuboid.cli import main; main()"
    return subprocess.run(
        [*prefix, sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_import_otf2_of_a_file_that_is_not_an_archive_is_one_line(tmp_path):
    pytest.importorskip("otf2")
    bad = tmp_path / "x.otf2"
    bad.write_bytes(b"\x00\xff garbage" * 10)
    r = _cli("schedule", "import-otf2", str(bad))
    assert r.returncode == 1
    # one line, the OTF2 library's own error line (on file descriptor 2) folded into ours
    assert r.stderr == (
        f"Error: cannot read OTF2 archive {bad}: Invalid or inconsistent record data: This is "
        "no chunk header! (give the .otf2 anchor file that Score-P writes)\n"
    )


def test_an_option_check_under_mpiexec_is_printed_once(tmp_path):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    if not mpiexec.exists() and shutil.which("mpiexec") is None:
        pytest.skip("no mpiexec")
    env = {
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_pml": "ob1",
        "OMPI_MCA_btl": "self,sm",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
    }
    launcher = str(mpiexec) if mpiexec.exists() else "mpiexec"
    out = str(tmp_path / "m.json")
    r = _cli("calibrate", "-o", out, "-i", "0", env=env, prefix=(launcher, "-n", "2"))
    assert r.returncode == 1
    assert r.stderr.count("Error: --iterations 0: must be >= 1\n") == 1, r.stderr

"""The recorder's repeated records (native/hc_trace.c, repeat()): tests/native/trace_repeat.c,
recorded under Open MPI and MPICH at 2 ranks, calls the same collectives and sends with the same
arguments several times in a row, between calls that change one argument each, and frees and
makes again datatypes and communicators. Every record must carry its own call's fields: the
communicator, peer, tag (a collective's datatype size) and bytes that the exported trace shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypercuboid.apptrace import AppTrace
from test_trace import record_app

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "tests" / "native" / "trace_repeat.c"

# (call, comm, peer, tag, bytes): -2 is no peer (docs/trace.md)
D = ("MPI_Allreduce", 0, -2, 8, 8)
WORLD_HEAD = [("MPI_Init", 0, -2, 0, 0), D, D, D]
WORLD_HEAD += [("MPI_Allreduce", 0, -2, 8, 16), ("MPI_Allreduce", 0, -2, 4, 4)]
WORLD_HEAD += [D, D]  # MPI_MAX: the operator is not exported, the record is the same here
SENDS = [("MPI_Send", 0, 1, 5, 16)] * 2 + [("MPI_Send", 0, 1, 6, 16), ("MPI_Send", 0, 1, 6, 32)]
RECVS = [("MPI_Recv", 0, 0, 5, 0)] * 2 + [("MPI_Recv", 0, 0, 6, 0)] * 2
TAIL = [("MPI_Bcast", 0, 0, 8, 24)] * 2 + [("MPI_Bcast", 0, 1, 8, 24)]
TAIL += [("MPI_Reduce", 0, 0, 8, 8)] * 2 + [("MPI_Reduce", 0, 1, 8, 8)]
TAIL += [("MPI_Barrier", 0, -2, 0, 0)] * 2
TAIL += [("MPI_Comm_dup", 0, -2, 0, 2)]
TAIL += [("MPI_Barrier", 2, -2, 0, 0)] * 2 + [("MPI_Allreduce", 2, -2, 8, 8)] * 2
TAIL += [("MPI_Barrier", 0, -2, 0, 0)]
TAIL += [("MPI_Bcast", 0, 0, 24, 24)] * 2 + [("MPI_Bcast", 0, 0, 40, 40)] * 2
TAIL += [("MPI_Comm_dup", 0, -2, 0, 2)]
TAIL += [("MPI_Barrier", 3, -2, 0, 0)] * 2
TAIL += [("MPI_Finalize", 0, -2, 0, 0)]
EXPECTED = [WORLD_HEAD + SENDS + TAIL, WORLD_HEAD + RECVS + TAIL]


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_repeated_calls_keep_their_own_fields(mpi, tmp_path):
    t = AppTrace.load(record_app(mpi, APP, 2, tmp_path))
    assert t.complete
    t.export_chrome(tmp_path / "app.json")
    events = json.loads((tmp_path / "app.json").read_text())["traceEvents"]
    for rank in range(2):
        got = [
            (e["name"], e["args"]["comm"], e["args"]["peer"], e["args"]["tag"], e["args"]["bytes"])
            for e in events
            if e.get("ph") == "X" and e["tid"] == rank and e["name"].startswith("MPI_")
        ]
        assert got == EXPECTED[rank], rank

"""OTF2 import: archives written here with the otf2 package's writer, converted to GOAL."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

otf2 = pytest.importorskip("otf2", reason="OTF2 import needs the otf2 package (hypercuboid[otf2])")

from hypercuboid.errors import ScheduleError  # noqa: E402
from hypercuboid.otf2_import import COLLECTIVE_TAG_BASE, otf2_to_goal  # noqa: E402
from hypercuboid.schedule import Schedule  # noqa: E402
from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole  # noqa: E402

NS = 1_000_000_000  # timer ticks per second: one tick per ns


def _archive(tmp_path, nranks, body):
    """Writes an archive of ``nranks`` ranks; ``body(w, comm, region)`` writes the events."""
    path = tmp_path / "app"
    with otf2.writer.open(str(path), timer_resolution=NS) as trace:
        d = trace.definitions
        node = d.system_tree_node("node")
        locs = [
            d.location("master", group=d.location_group(f"rank {r}", system_tree_parent=node))
            for r in range(nranks)
        ]
        d.group(
            "locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs
        )
        world = d.group(
            "world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=range(nranks)
        )
        comm = d.comm("MPI_COMM_WORLD", group=world)

        def region(name):
            if not name.startswith("MPI_"):
                return d.region(name)
            return d.region(name, paradigm=Paradigm.MPI, region_role=RegionRole.POINT2POINT)

        writers = [trace.event_writer_from_location(loc) for loc in locs]
        body(writers, comm, region)
    return path / "traces.otf2"


@contextmanager
def _span(w, region, enter, leave):
    """The events written inside it, between entering ``region`` at ``enter`` and leaving it
    at ``leave`` on writer ``w``: one MPI call."""
    w.enter(enter, region)
    yield
    w.leave(leave, region)


def _pingpong(w, comm, region):
    send, recv = region("MPI_Send"), region("MPI_Recv")
    main = region("main")
    w[0].enter(0, main)
    w[1].enter(0, main)
    # rank 0: 1000 ns compute, send 64 B, receive 64 B back
    with _span(w[0], send, 1000, 1200):
        w[0].mpi_send(1000, 1, comm, 7, 64)
    with _span(w[0], recv, 1200, 3000):
        w[0].mpi_recv(3000, 1, comm, 8, 64)
    # rank 1: receive, 500 ns compute, send back
    with _span(w[1], recv, 0, 1500):
        w[1].mpi_recv(1500, 0, comm, 7, 64)
    with _span(w[1], send, 2000, 2100):
        w[1].mpi_send(2000, 0, comm, 8, 64)


def test_pingpong_with_compute(tmp_path):
    goal = otf2_to_goal(_archive(tmp_path, 2, _pingpong))
    assert goal.splitlines()[:6] == [
        "num_ranks 2",
        "",
        "rank 0 {",
        "l0: calc 1000",
        "l1: send 64b to 1 tag 7",
        "l2: recv 64b from 1 tag 8",
    ]
    assert "l2 requires l1" in goal
    rank1 = goal.split("rank 1 {")[1]
    assert rank1.splitlines()[1:4] == [
        "l0: recv 64b from 0 tag 7",
        "l1: calc 500",
        "l2: send 64b to 0 tag 8",
    ]
    s = Schedule.parse(goal, "app.goal")
    assert s.nranks == 2 and s.total_ops == 6
    assert s.verify()
    # Half the compute: calcs halve.
    half = otf2_to_goal(_archive(tmp_path / "h", 2, _pingpong), compute_scale=0.5)
    assert "l0: calc 500" in half and "l1: calc 250" in half


def _nonblocking_and_collectives(w, comm, region):
    isend, irecv, wait = region("MPI_Isend"), region("MPI_Irecv"), region("MPI_Waitall")
    allreduce, alltoall = region("MPI_Allreduce"), region("MPI_Alltoall")
    for r in range(4):
        peer = r ^ 1
        t = 0
        with _span(w[r], irecv, t, t + 1):
            w[r].mpi_irecv_request(t, 100 + r)
        with _span(w[r], isend, t + 2, t + 3):
            w[r].mpi_isend(t + 2, peer, comm, 3, 32, 200 + r)
        with _span(w[r], wait, t + 10, t + 13):
            w[r].mpi_irecv(t + 11, peer, comm, 3, 32, 100 + r)
            w[r].mpi_isend_complete(t + 12, 200 + r)
        with _span(w[r], allreduce, t + 20, t + 31):
            w[r].mpi_collective_begin(t + 20)
            w[r].mpi_collective_end(t + 30, CollectiveOp.ALLREDUCE, comm, 0xFFFFFFFF, 64, 64)
        with _span(w[r], alltoall, t + 40, t + 51):
            w[r].mpi_collective_begin(t + 40)
            w[r].mpi_collective_end(t + 50, CollectiveOp.ALLTOALL, comm, 0xFFFFFFFF, 4 * 16, 64)


def test_nonblocking_and_collectives_verify(tmp_path):
    arch = _archive(tmp_path, 4, _nonblocking_and_collectives)
    goal = otf2_to_goal(arch, allreduce="ring", alltoall="bruck")
    s = Schedule.parse(goal, "app.goal")
    assert s.nranks == 4
    assert s.verify()
    rank0 = goal.split("rank 0 {")[1].split("}")[0]
    # The receive posted first, 1 ns of compute, the send, 7 ns, the wait (no op), 7 ns.
    assert rank0.splitlines()[1:6] == [
        "l0: recv 32b from 1 tag 3",
        "l1: calc 1",
        "l2: send 32b to 1 tag 3",
        "l3: calc 7",
        "l4: calc 7",
    ]
    # The send starts after the compute; the compute after the receive is posted only; the
    # compute after the wait waits for both requests.
    assert "l2 requires l1" in rank0 and "l1 requires l0" not in rank0
    assert "l4 requires l0" in rank0 and "l4 requires l2" in rank0
    # The collectives' messages carry tags above 2^30 and world ranks.
    assert f"tag {COLLECTIVE_TAG_BASE}" in rank0
    # Open MPI on 4 ranks: 64 B allreduce -> recursive doubling (exchanges with 1 and 2),
    # 16 B alltoall blocks -> linear_sync:max=0.
    lib = otf2_to_goal(arch, library="openmpi")
    assert Schedule.parse(lib, "lib.goal").verify()
    assert lib != goal


def test_bad_archives(tmp_path):
    with pytest.raises(ScheduleError, match="cannot access 'nope.otf2'"):
        otf2_to_goal("nope.otf2")

    def bcast(w, comm, region):
        for r in range(2):
            w[r].mpi_collective_begin(0)
            w[r].mpi_collective_end(5, CollectiveOp.BCAST, comm, 0, 8, 8)

    with pytest.raises(
        ScheduleError,
        match=r"^rank 0, event 2 \(MpiCollectiveEnd\): collective BCAST is not expanded; "
        r"accepted: ALLREDUCE, ALLTOALL, BARRIER$",
    ):
        otf2_to_goal(_archive(tmp_path / "b", 2, bcast))

    def orphan(w, comm, region):
        w[0].mpi_isend_complete(5, 42)

    with pytest.raises(
        ScheduleError,
        match=r"^rank 0, event 1 \(MpiIsendComplete\): request 42 completes but was never posted$",
    ):
        otf2_to_goal(_archive(tmp_path / "o", 2, orphan))

    def stranger(w, comm, region):
        w[0].mpi_send(0, 5, comm, 0, 8)

    with pytest.raises(
        ScheduleError, match=r"peer 5 is not a rank of communicator 'MPI_COMM_WORLD'"
    ):
        otf2_to_goal(_archive(tmp_path / "s", 2, stranger))


def test_cli_writes_goal(tmp_path):
    from click.testing import CliRunner
    from hypercuboid.cli import cli

    arch = _archive(tmp_path, 2, _pingpong)
    out = tmp_path / "app.goal"
    r = CliRunner().invoke(
        cli, ["schedule", "import-otf2", str(arch), "-o", str(out), "--compute-scale", "2"]
    )
    assert r.exit_code == 0, r.output
    assert "l0: calc 2000" in out.read_text()
    r = CliRunner().invoke(cli, ["schedule", "verify", "--goal", str(out)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["schedule", "import-otf2", str(tmp_path / "none.otf2")])
    assert r.exit_code == 1
    assert (
        r.output == f"Error: cannot access '{tmp_path / 'none.otf2'}': No such file or directory\n"
    )


def test_receive_never_completed(tmp_path):
    def cut(w, comm, region):
        w[0].mpi_irecv_request(0, 9)

    with pytest.raises(
        ScheduleError,
        match=r"^rank 0: the receive of request 9 never completes \(a trace cut short\?\)$",
    ):
        otf2_to_goal(_archive(tmp_path, 2, cut))

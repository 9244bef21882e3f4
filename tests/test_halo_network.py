"""Halo exchanges on a network (docs/halo.md, "On a network"): an idle network gives the
hand-computed completion time exactly, and with many ranks per endpoint (cores per node) every
node's injection and ejection links carry exactly the halo bytes that leave and enter the node,
counted from the decomposition independently of the schedule generator."""

from __future__ import annotations

import itertools

import pytest
from hypercuboid import halo

# Eager (S = 1 MiB) so that no rendezvous control message crosses the network; the host's L
# and G apply only between ranks of one endpoint.
HOST = "loggops:o=1us,g=1us,O=0,S=1MiB,copy=0.25ns"
VALUES, BYTES = 19, 8
DIRECTIONS = [d for d in itertools.product((-1, 0, 1), repeat=3) if d != (0, 0, 0)]


@pytest.mark.parametrize("variant", ["blocking", "nonblocking"])
def test_two_ranks_on_an_idle_network_take_the_hand_computed_time(variant):
    # 2x1x1 ranks, not periodic, 4^3 sites each: one x-face message each way, 4*4 sites of
    # 19 float64 = 2,432 bytes. fullmesh:n=2: one endpoint per router, one router hop,
    # links 100 Gb/s and 50 ns, switches 100 ns.
    d = halo.Decomposition.of_subdomain((4, 4, 4), (2, 1, 1), periodic=(False, False, False))
    s = halo.schedule(variant, d)
    nbytes = 4 * 4 * VALUES * BYTES
    assert nbytes == 2432
    copy_ns = nbytes * 0.25  # pack, and unpack, at 0.25 ns per byte
    path_ns = 3 * 50 + 2 * 100  # (h+2) links and (h+1) switches, h = 1
    # pack; send: o, then the wire; the receiver's o; unpack (both ranks alike).
    flow = copy_ns + 1000 + path_ns + nbytes * 8 / 100 + 1000 + copy_ns
    packet = copy_ns + 1000 + path_ns + 10 * (256 * 8 / 100) + 1000 + copy_ns  # 10 packets
    assert (flow, packet) == (3760.56, 3770.8)
    for level, expected in (("flow", flow), ("packet", packet)):
        r = s.simulate(HOST, network="fullmesh:n=2", level=level)
        assert r.completion_time_ps == round(expected * 1000), level
        assert list(r.rank_finish_ps) == [round(expected * 1000)] * 2
        assert (r.network.messages, r.network.local, r.network.queued_ps) == (2, 0, 0)


def region_sites(sub: tuple[int, int, int], d: tuple[int, int, int], variant: str) -> int:
    """Sites of the message a rank with subdomain ``sub`` sends in direction ``d``: the
    non-blocking exchange sends each face, edge and corner directly; the blocking one sends
    planes only, x first (ny*nz), then y spanning the x halo ((nx+2)*nz), then z spanning
    both ((nx+2)*(ny+2))."""
    nx, ny, nz = sub
    if variant == "nonblocking":
        return (1 if d[0] else nx) * (1 if d[1] else ny) * (1 if d[2] else nz)
    return {0: ny * nz, 1: (nx + 2) * nz, 2: (nx + 2) * (ny + 2)}[[abs(c) for c in d].index(1)]


def directions(variant: str) -> list[tuple[int, int, int]]:
    """The directions a rank sends in: all 26, or the blocking exchange's 6 planes."""
    return (
        DIRECTIONS if variant == "nonblocking" else [x for x in DIRECTIONS if sum(map(abs, x)) == 1]
    )


def node_bytes(d: halo.Decomposition, variant: str, rpe: int, packet: int | None):
    """Bytes leaving and entering each node (rank r on node r // rpe), counted message by
    message from the decomposition; at packet level each message is whole packets."""
    dirs = directions(variant)
    nodes = -(-d.nranks // rpe)
    out, into = [0] * nodes, [0] * nodes
    for r in range(d.nranks):
        for x in dirs:
            nb = d.neighbour(r, x)
            if nb is None or nb // rpe == r // rpe:
                continue
            b = region_sites(d.subdomain(r), x, variant) * VALUES * BYTES
            if packet is not None:
                b = -(-b // packet) * packet
            out[r // rpe] += b
            into[nb // rpe] += b
    return out, into


@pytest.mark.parametrize("variant", ["blocking", "nonblocking"])
@pytest.mark.parametrize(
    ("sub", "dims", "rpe", "topology"),
    [
        # the seed's 8 nodes of 24 cores, 8x6x4 ranks: every node an x-slab
        ((3, 4, 5), (8, 6, 4), 24, "fullmesh:n=8"),
        # 8 cores a node on 4x3x2: nodes cut across x and y, and z has 2 ranks (left and right
        # neighbour are one rank)
        ((5, 3, 4), (4, 3, 2), 8, "fullmesh:n=3"),
    ],
)
@pytest.mark.parametrize("level", ["flow", "packet"])
def test_each_node_link_carries_exactly_the_halo_bytes_that_cross_the_node(
    variant, sub, dims, rpe, topology, level
):
    d = halo.Decomposition.of_subdomain(sub, dims)
    s = halo.schedule(variant, d)
    r = s.simulate(HOST, network=topology, ranks_per_endpoint=rpe, level=level)
    out, into = node_bytes(d, variant, rpe, 256 if level == "packet" else None)
    assert all(out) and all(into)
    inj = {int(x.a.split()[1]): x.bytes for x in r.network.links if x.kind == "injection"}
    ej = {int(x.b.split()[1]): x.bytes for x in r.network.links if x.kind == "ejection"}
    assert inj == dict(enumerate(out))
    assert ej == dict(enumerate(into))
    assert r.network.control == 0
    crossing = sum(
        1
        for rank in range(d.nranks)
        for x in directions(variant)
        if d.neighbour(rank, x) // rpe != rank // rpe
    )
    per_rank = 26 if variant == "nonblocking" else 6
    assert (r.network.messages, r.network.local) == (crossing, d.nranks * per_rank - crossing)


def test_the_seeds_8_nodes_send_only_x_messages_off_node():
    # 8x6x4 on 8 nodes of 24: a node holds one x-slab (rank (cx*6+cy)*4+cz), so the
    # messages that leave it are a rank's 2 x-faces (blocking: y and z planes stay on the
    # node) or its 18 directions with dx != 0 (non-blocking: 2 faces, 8 edges, 8 corners).
    d = halo.Decomposition.of_subdomain((32, 32, 32), (8, 6, 4))
    assert {r // 24 for r in range(d.nranks)} == set(range(8))
    assert all(d.coords(r)[0] == r // 24 for r in range(d.nranks))
    blocking, _ = node_bytes(d, "blocking", 24, None)
    nonblocking, _ = node_bytes(d, "nonblocking", 24, None)
    assert blocking == [24 * 2 * 32 * 32 * 152] * 8  # 7,471,104
    assert nonblocking == [24 * (2 * 32 * 32 + 8 * 32 + 8) * 152] * 8  # 8,433,408


@pytest.mark.parametrize("variant", ["blocking", "nonblocking"])
@pytest.mark.parametrize("level", ["flow", "packet"])
def test_one_node_on_a_network_costs_exactly_what_loggops_alone_costs(variant, level):
    # 24 ranks 4x3x2 on one endpoint: every message goes through memory at the host model's
    # L, o, g and G (the sender's NIC busy (s-1)*G as in LogGOPS), over repeated calls.
    host = "loggops:L=1us,o=1us,g=1us,G=2.778ns,O=0,S=0,copy=0.25ns"
    d = halo.Decomposition.of_subdomain((16, 24, 32), (4, 3, 2))
    s = halo.schedule(variant, d)
    alone = s.simulate(host, calls=3)
    r = s.simulate(host, network="fullmesh:n=2", ranks_per_endpoint=24, level=level, calls=3)
    assert r.completion_time_ps == alone.completion_time_ps
    assert list(r.rank_finish_ps) == list(alone.rank_finish_ps)
    assert (r.network.messages, r.network.local) == (
        0,
        3 * 24 * (26 if variant == "nonblocking" else 6),
    )


NODE = "loggops:L=1us,o=1us,g=1us,G=2.778ns,O=0,S=0,copy=0.25ns"


@pytest.mark.parametrize("variant", ["blocking", "nonblocking"])
def test_noise_on_one_node_of_a_network_is_loggops_with_the_same_noise(variant):
    # The noise draws depend on (seed, rank, op, call) only, each delays its op from the later
    # of when the op is freed and when its CPU is free, and one node of a network costs what
    # LogGOPS alone costs, rendezvous matches included: repeated calls agree exactly. (Before
    # the delay was counted from the CPU's free time even when that was past, and the two
    # drifted apart from the second non-blocking call on: 1,689,854,115 ps against
    # 1,688,887,374 ps for 2 calls.)
    d = halo.Decomposition.of_subdomain((8, 12, 16), (4, 3, 2))
    s = halo.schedule(variant, d)
    alone = s.simulate(NODE, noise="exp:mean=1us", seed=5, calls=3)
    r = s.simulate(
        NODE, network="fullmesh:n=2", ranks_per_endpoint=24, level="flow",
        noise="exp:mean=1us", seed=5, calls=3,
    )  # fmt: skip
    quiet = s.simulate(NODE, calls=3)
    assert r.completion_time_ps == alone.completion_time_ps
    assert list(r.rank_finish_ps) == list(alone.rank_finish_ps)
    assert r.completion_time_ps != quiet.completion_time_ps  # the noise was applied


def test_noise_on_a_network_is_deterministic_for_a_seed_and_changes_with_it():
    d = halo.Decomposition.of_subdomain((8, 8, 8), (8, 6, 4))
    s = halo.schedule("blocking", d)

    def run(**kw):
        return s.simulate(
            NODE, network="fullmesh:n=8", ranks_per_endpoint=24, level="flow", calls=3, **kw
        ).completion_time_ps

    a, b, c, quiet = (
        run(noise="exp:mean=1us", seed=3),
        run(noise="exp:mean=1us", seed=3),
        run(noise="exp:mean=1us", seed=4),
        run(seed=3),
    )
    assert a == b
    assert len({a, c, quiet}) == 3


def test_cli_noise_with_a_network_matches_the_python_api():
    import json

    from click.testing import CliRunner
    from hypercuboid.cli import cli

    args = [
        "simulate", "halo", "--variant", "blocking", "--decomp", "8x6x4", "--subdomain",
        "4x4x4", "--model", NODE, "--network", "fullmesh:n=8", "--ranks-per-endpoint", "24",
        "--level", "flow", "--noise", "exp:mean=1us", "--seed", "5", "--calls", "2", "--json",
    ]  # fmt: skip
    out = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    d = halo.Decomposition.of_subdomain((4, 4, 4), (8, 6, 4))
    r = halo.schedule("blocking", d).simulate(
        NODE, network="fullmesh:n=8", ranks_per_endpoint=24, level="flow",
        noise="exp:mean=1us", seed=5, calls=2,
    )  # fmt: skip
    assert json.loads(out.output)["completion_time_ns"] == r.completion_time_ps / 1000

"""hypercuboid.halo: the decomposition, the schedules, their verification and simulation, and
the CLI verbs of the interface contract (issue 16)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypercuboid import halo
from hypercuboid.cli import cli as main
from hypercuboid.errors import ScheduleError, SimulationError

MODEL = "loggops:L=2us,o=1us,g=1us,G=2.78ns,O=0,S=64KiB,copy=0.25ns"


def test_decomposition_follows_mpi_cart_create():
    d = halo.Decomposition(lattice=(64, 48, 32), ranks=24)
    assert d.dims == (4, 3, 2)
    assert d.coords(0) == (0, 0, 0)
    assert d.coords(1) == (0, 0, 1)  # z fastest
    assert d.coords(23) == (3, 2, 1)
    assert d.rank_at((3, 2, 1)) == 23
    assert d.subdomain(5) == (16, 16, 16)
    assert d.offset(23) == (48, 32, 16)
    assert d.neighbour(0, (-1, 0, 0)) == 18
    assert d.neighbour(0, (0, 0, 1)) == 1
    assert d.local_shape(0) == (18, 18, 18, 19)
    # uneven: the first X mod px ranks along x get one more site
    u = halo.Decomposition((10, 7, 5), 24, (4, 3, 2), periodic=(True, True, False))
    assert [u.subdomain(u.rank_at((c, 0, 0)))[0] for c in range(4)] == [3, 3, 2, 2]
    assert u.neighbour(1, (0, 0, 1)) is None
    # a rank that is its own neighbour
    one = halo.Decomposition((4, 4, 4), 1)
    assert one.neighbour(0, (1, 1, 1)) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            dict(lattice=(3, 3, 3), ranks=8, decomp=(4, 2, 1)),
            "invalid lattice '3x3x3': a 4x2x1 decomposition needs at least 4 sites along x "
            "(one per rank), the lattice has 3",
        ),
        (
            dict(lattice=(8, 8, 8), ranks=6, decomp=(2, 2, 2)),
            "invalid decomposition '2x2x2': it has 8 ranks, not 6; give px x py x pz = 6 "
            "(default 3x2x1)",
        ),
        (
            dict(lattice=(8, 0, 8), ranks=1),
            "invalid lattice '8x0x8': every dimension is a positive integer below 2^32",
        ),
        (
            dict(lattice=(8, 8, 8), ranks=0),
            "invalid number of ranks 0: a halo exchange has 1 to 4294967294",
        ),
    ],
)
def test_bad_decompositions_are_one_line_errors(args, message):
    with pytest.raises(ScheduleError) as e:
        halo.Decomposition(**args)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)


def test_bad_variants_and_values_name_the_accepted_ones():
    d = halo.Decomposition((8, 8, 8), 8)
    with pytest.raises(ScheduleError) as e:
        halo.schedule("fast", d)
    assert str(e.value) == (
        "unknown halo algorithm 'fast'; accepted: halo_blocking, halo_nonblocking, halo_reduced"
    )
    with pytest.raises(ScheduleError) as e:
        halo.schedule("reduced", d, values=5)
    assert str(e.value) == (
        "invalid values '5': the D3Q19 stencil moves the 19 distributions of a site; accepted: 19"
    )
    with pytest.raises(ScheduleError) as e:
        halo.schedule("blocking", d, bytes=3)
    assert str(e.value) == "invalid bytes '3': bytes per value; accepted: 1, 2, 4, 8"


@pytest.mark.parametrize("variant", halo.VARIANTS)
@pytest.mark.parametrize("periodic", [(True, True, True), (False, True, False)])
def test_every_variant_verifies(variant, periodic):
    d = halo.Decomposition((9, 7, 5), 12, (3, 2, 2), periodic)
    s = halo.schedule(variant, d)
    r = s.verify(eager_limit=0)
    assert r.sound, r.text
    assert "every halo value the exchange fills holds the boundary site it mirrors" in r.text
    assert s.meta["halo"] == {
        "lattice": (9, 7, 5),
        "dims": (3, 2, 2),
        "periodic": periodic,
        "values": 19,
        "stencil": "d3q19" if variant == "reduced" else "full",
    }


def test_message_counts_and_the_reduced_saving():
    d = halo.Decomposition.of_subdomain((16, 16, 16), (3, 3, 3))
    sends = {v: halo.schedule(v, d).sends_per_rank()[13] for v in halo.VARIANTS}
    assert sends == {
        "blocking": 6,
        "nonblocking": 26,
        "nonblocking:unpack=on_arrival": 26,
        "reduced": 18,
    }
    full, reduced = halo.saving(d, 13)
    assert full == (6 * 256 + 12 * 16 + 8) * 19
    assert reduced == 6 * 256 * 5 + 12 * 16
    assert halo.D3Q19_VELOCITIES[0] == (0, 0, 0)
    assert len(halo.DIRECTIONS) == 26 and halo.DIRECTIONS[0] == (-1, -1, -1)


def test_calls_repeat_the_exchange_back_to_back():
    d = halo.Decomposition.of_subdomain((8, 8, 8), (2, 2, 2))
    s = halo.schedule("nonblocking", d)
    one = s.simulate(MODEL)
    ten = s.simulate(MODEL, calls=10)
    assert ten.messages == 10 * one.messages == 10 * 8 * 26
    assert ten.ops == 10 * one.ops
    # no barrier between calls: ranks drift out of step and later calls wait on their
    # neighbours' earlier ones, so ten calls take longer than ten times one (exact, deterministic)
    assert one.completion_time_ps == 331180340
    assert ten.completion_time_ps == 3764842900
    with pytest.raises(SimulationError, match="invalid calls 0"):
        s.simulate(MODEL, calls=0)
    with pytest.raises(SimulationError) as e:
        s.simulate(MODEL, calls=2, trace=True)
    assert str(e.value) == "invalid calls 2 with a trace: a trace records one call (calls=1)"
    # deterministic
    assert (
        s.simulate(MODEL, calls=3).completion_time_ps
        == s.simulate(MODEL, calls=3).completion_time_ps
    )


def test_copy_cost_charges_packing():
    d = halo.Decomposition.of_subdomain((16, 16, 16), (2, 1, 1))
    s = halo.schedule("blocking", d)
    free = s.simulate("loggops:L=2us,o=1us,g=1us,G=2.78ns,S=64KiB").completion_time_ps
    paid = s.simulate("loggops:L=2us,o=1us,g=1us,G=2.78ns,S=64KiB,copy=1ns").completion_time_ps
    # every packed and unpacked byte costs 1 ns on the CPU, in sequence within a phase
    assert paid > free
    prog = s.program(0)
    copied = sum(int(b) for k, b in zip(prog["kind"], prog["bytes"], strict=True) if k in (6, 7))
    assert copied > 0 and (paid - free) <= copied * 1000


def test_program_columns_carry_the_regions():
    d = halo.Decomposition((4, 4, 4), 1)
    p = halo.program("reduced", d, 0)
    kinds = p["kind"].tolist()
    packs = [i for i, k in enumerate(kinds) if k == 6]
    assert len(packs) == 18
    rows = p["regions"].reshape(-1, 12)
    first = rows[p["region"][packs[0]]]
    # slot out, array 6x6x6x19, a face box, the 5 crossing distributions
    assert list(first[:5]) == [1, 6, 6, 6, 19]
    assert bin(int(first[11])).count("1") == 5


def test_cli_verify_simulate_and_export(tmp_path):
    run = CliRunner().invoke
    r = run(
        main,
        "schedule verify halo --variant blocking --decomp 4x3x2 --subdomain 4x4x4".split(),
    )
    assert r.exit_code == 0, r.output
    assert "SOUND" in r.output
    r = run(
        main,
        "schedule verify halo --variant reduced --lattice 9x8x7 --ranks 8 --periodic xz".split(),
    )
    assert r.exit_code == 0, r.output
    r = run(
        main,
        [
            *"simulate halo --variant nonblocking --decomp 2x2x2 --subdomain 8x8x8 --model".split(),
            MODEL,
            "--json",
            "--calls",
            "3",
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["calls"] == 3
    assert d["messages"] == 3 * 8 * 26
    assert d["messages_per_rank"] == [78] * 8
    assert d["completion_time_ns"] > 0
    r = run(
        main,
        (
            "schedule export halo --variant blocking --decomp 2x1x1 --subdomain 4x4x4 --format goal"
        ).split(),
    )
    assert r.exit_code == 0, r.output
    assert r.output.startswith("num_ranks 2")
    r = run(
        main,
        (
            "schedule export halo --variant blocking --decomp 2x1x1 --subdomain 4x4x4 --format c"
        ).split(),
    )
    assert r.exit_code == 1
    assert "invalid format 'c': the C export runs contiguous slices" in r.output
    r = run(main, ["schedule", "verify", "halo", "--variant", "blocking", "--decomp", "2x1x1"])
    assert r.exit_code == 1
    assert "give the sites as --subdomain AxBxC or --lattice XxYxZ (one)" in r.output
    r = run(
        main,
        "schedule verify halo --variant blocking --decomp 2x1 --subdomain 4x4x4".split(),
    )
    assert r.exit_code == 1
    assert "--decomp '2x1': accepted XxYxZ with three positive integers (64x64x64)" in r.output
    r = run(
        main,
        "schedule show halo --variant reduced --decomp 1x1x1 --subdomain 2x2x2 --rank 0".split(),
    )
    assert r.exit_code == 0, r.output
    assert "pack out<4x4x4x19>[" in r.output

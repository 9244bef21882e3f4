"""Recursive multiplying and the other issue-3 allreduce algorithms from Python: names,
verification, the seed's simulated timelines (Figs. 18-23), errors."""

import math

import hypercuboid as hc
import numpy as np
import pytest
from hypercuboid.errors import ScheduleError

SEED_MODEL = "pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.4ns,gamma=0,delta=10ns"


def test_algorithm_names_are_listed():
    names = hc.allreduce_algorithms()
    for n in (
        "rabenseifner",
        "elimination",
        "recursive_multiplying",
        "mpich_recursive_multiplying",
    ):
        assert n in names


@pytest.mark.parametrize(
    "algorithm,nranks",
    [
        ("recursive_multiplying:a8,a3,a4", 96),
        ("a8,a3,a4", 96),
        ("c6m2,a2,a2,e6m2", 7),
        ("m1g2a3,n1g3a2", 7),
        ("m3g2a2,n3g2a2", 7),
        ("rabenseifner", 13),
        ("elimination", 13),
        ("mpich_recursive_multiplying", 13),
        ("mpich_recursive_multiplying:k=4", 13),
    ],
)
def test_new_algorithms_verify(algorithm, nranks):
    s = hc.schedules.allreduce(algorithm, nranks, 5)
    rep = s.verify()
    assert rep.sound, rep.text
    assert rep.semantics["correct"]
    assert rep.semantics["same_order_noncommutative"]


def test_schedule_shorthand_names_the_algorithm():
    s = hc.schedules.allreduce("a3,a2", 6)
    assert s.meta["name"] == "allreduce recursive_multiplying:a3,a2"


def test_a_schedule_that_does_not_fit_says_why():
    with pytest.raises(ScheduleError) as e:
        hc.schedules.allreduce("a8,a3", 7)
    assert str(e.value) == (
        "invalid schedule 'a8,a3': it does not fit 7 ranks: the factors 8 x 3 multiply to 24, "
        "not 7; schedules that fit 7 ranks include 'a7', 'c6m2,a2,a2,e6m2', 'm1g2a3,n1g3a2'"
    )
    with pytest.raises(ValueError, match="stage 2: 'x3' is not a stage"):
        hc.schedules.allreduce("recursive_multiplying:a8,x3", 24)
    with pytest.raises(ValueError, match="needs a schedule"):
        hc.schedules.allreduce("recursive_multiplying", 24)


@pytest.mark.parametrize(
    "algorithm,nranks,completion_ps",
    [
        # Fig. 18: three stages of 500 + 100 + 3.2 + 10 ns.
        ("a2,a2,a2", 8, 1_839_600),
        # Fig. 19: 500 + 7 x (103.2 + 10) ns.
        ("a8", 8, 1_292_400),
        ("c6m2,a2,a2,e6m2", 7, 2_442_800),
        ("m1g2a3,n1g3a2", 7, 1_452_800),
        ("m3g2a2,n3g2a2", 7, 1_452_800),
        ("elimination", 6, 1_942_800),
    ],
)
def test_seed_figures_simulated(algorithm, nranks, completion_ps):
    r = hc.schedules.allreduce(algorithm, nranks, 1, dtype="int64").simulate(SEED_MODEL, trace=True)
    assert r.completion_time_ps == completion_ps
    assert r.trace is not None


def test_merging_beats_splitting_by_about_a_microsecond():
    def sim(a):
        return hc.schedules.allreduce(a, 7, 1, dtype="int64").simulate(SEED_MODEL)

    split, merge = sim("c6m2,a2,a2,e6m2"), sim("m1g2a3,n1g3a2")
    assert split.completion_time_ns - merge.completion_time_ns == pytest.approx(990.0)
    assert split.skew_ns == pytest.approx(1010.0)
    assert merge.skew_ns == pytest.approx(123.2)
    assert np.array_equal(
        merge.rank_finish_ps,
        [1_442_800, 1_339_600, 1_329_600, 1_339_600, 1_339_600, 1_349_600, 1_452_800],
    )


def test_timeline_plot(tmp_path):
    r = hc.schedules.allreduce("m1g2a3,n1g3a2", 7, 1, dtype="int64").simulate(
        SEED_MODEL, trace=True
    )
    out = r.trace.plot(tmp_path / "fig21.png", title="m1g2a3,n1g3a2")
    assert out.stat().st_size > 1000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_one_rank_program_matches_the_schedule():
    # The MPI back end builds only its own rank: the same ops as the whole schedule's.
    s = hc.schedules.allreduce("m3g2a2,n3g2a2", 7, 3)
    for r in range(7):
        whole = s._core.program(r)
        alone = hc._core.allreduce_program("m3g2a2,n3g2a2", 7, r, 3)
        for k in ("kind", "peer", "tag", "buf_slot", "src_slot"):
            assert np.array_equal(whole[k], alone[k]), (r, k)


def test_eq5_at_ratio_one_is_e_minus_one():
    import hypercuboid.tune as t

    assert t.b_opt(1.0) == pytest.approx(math.e - 1, abs=1e-12)

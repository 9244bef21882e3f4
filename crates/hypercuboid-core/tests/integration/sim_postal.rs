//! The postal and pipelined postal models against their closed forms (Ruefenacht, Bull and
//! Booth, "Generalisation of recursive doubling for AllReduce: now with simulation", Parallel
//! Computing 2017, section 3, equations (1)–(3) and the recursive multiplying stage cost; ring
//! rotation and binomial tree forms from the textbook postal analysis). Where nothing contends
//! the simulator must equal them to the picosecond.

use crate::common;

use common::*;
use hypercuboid_core::model::{parse_model, ModelSpec, PostalModel};
use hypercuboid_core::schedule::{Program, Schedule};
use hypercuboid_core::sim::{simulate, SimOptions, SimResult};
use hypercuboid_core::units::{ns, per_byte, us, Time};

fn run(s: &Schedule, spec: &str) -> Time {
    simulate(s, &parse_model(spec).unwrap(), &SimOptions::default())
        .unwrap()
        .completion
}

/// When each rank of `s` finishes under the model `spec`.
fn rank_finish(s: &Schedule, spec: &str) -> Vec<Time> {
    simulate(s, &parse_model(spec).unwrap(), &SimOptions::default())
        .unwrap()
        .rank_finish
}

fn postal(alpha: Time, beta: f64, gamma: f64) -> ModelSpec {
    ModelSpec::Postal(PostalModel::postal(alpha, beta, gamma, 0))
}

/// `s` simulated in the postal model of `alpha`, `beta` and `gamma`.
fn on_postal(s: &Schedule, alpha: Time, beta: f64, gamma: f64) -> SimResult {
    simulate(s, &postal(alpha, beta, gamma), &SimOptions::default()).unwrap()
}

#[test]
fn recursive_doubling_is_alpha_n_beta_n_gamma_log_n() {
    // Equation (1): (α + nβ + nγ)·log2 N.
    let (alpha, beta, gamma) = (us(1), 400.0, 250.0);
    for n in [2u32, 4, 8, 64, 1024] {
        for bytes in [0u64, 8, 1000, 1 << 20] {
            let s = recursive_doubling(n, bytes);
            let r = on_postal(&s, alpha, beta, gamma);
            let step = alpha + per_byte(bytes, beta) + per_byte(bytes, gamma);
            assert_eq!(
                r.completion,
                step * n.trailing_zeros() as u64,
                "N={n} n={bytes}"
            );
            assert!(r.rank_finish.iter().all(|&t| t == r.completion));
            assert_eq!(r.messages, (n * n.trailing_zeros()) as u64);
        }
    }
}

#[test]
fn delta_adds_per_reduction() {
    // "compute 10 ns" per reduction as in the paper's figures: log2 N reductions on the path.
    let s = recursive_doubling(16, 8);
    let t = run(&s, "postal:alpha=1us,delta=10ns");
    assert_eq!(t, 4 * (us(1) + ns(10)));
}

#[test]
fn mpich_non_power_of_two_small_message_is_alpha_floor_log_plus_two() {
    // Equation (2): α(⌊log2 N⌋ + 2) for N not a power of two (terms in n vanish), and
    // α·log2 N for powers of two.
    let alpha = us(2);
    for n in 2u32..=70 {
        let s = mpich_recursive_doubling(n, 8);
        let floor_log = 31 - n.leading_zeros();
        let extra = if n.is_power_of_two() { 0 } else { 2 };
        assert_eq!(
            run(&s, "postal:alpha=2us"),
            alpha * (floor_log + extra) as u64,
            "N={n}"
        );
    }
}

#[test]
fn mpich_three_ranks_with_bandwidth_serialises_at_the_sender() {
    // Equation (2) holds only as n → 0. With n > 0 rank 1 (the survivor of the pair 0,1)
    // finishes its exchange with rank 2 early (rank 2's message is already there), but its
    // send back to rank 0 must wait for the port: derived by hand,
    // link + nγ (pair) + link (send to rank 2) + link (send back) with link = α + nβ; rank 2
    // receives the send to rank 2 and reduces it: 2·link + 2nγ.
    let (alpha, beta, gamma) = (us(1), 400.0, 100.0);
    let bytes = 4096;
    let s = mpich_recursive_doubling(3, bytes);
    let link = alpha + per_byte(bytes, beta);
    let r = on_postal(&s, alpha, beta, gamma);
    assert_eq!(r.rank_finish[0], 3 * link + per_byte(bytes, gamma));
    assert_eq!(r.rank_finish[2], 2 * link + 2 * per_byte(bytes, gamma));
    assert_eq!(r.completion, 3 * link + per_byte(bytes, gamma));
}

/// Asserts that the schedule `make(P, n)` completes in `form(P, α + nβ)` in the postal model
/// of `alpha` and `beta` (no γ), for every P of `nps` and n of `sizes`.
fn assert_link_form(
    alpha: Time,
    beta: f64,
    nps: &[u32],
    sizes: &[u64],
    make: fn(u32, u64) -> Schedule,
    form: fn(u32, Time) -> Time,
) {
    for &np in nps {
        for &bytes in sizes {
            let got = on_postal(&make(np, bytes), alpha, beta, 0.0).completion;
            assert_eq!(got, form(np, alpha + per_byte(bytes, beta)), "P={np}");
        }
    }
}

#[test]
fn ring_rotation_is_p_minus_one_alpha_beta_n() {
    let (nps, sizes) = ([2, 3, 5, 8, 33], [8, 100_000]);
    assert_link_form(ns(1500), 400.0, &nps, &sizes, ring_rotation, |np, link| {
        (np - 1) as u64 * link
    });
}

#[test]
fn binomial_reduce_bcast_is_two_log_p_alpha_beta_n() {
    let (nps, sizes) = ([2, 4, 8, 16, 256], [8, 65536]);
    assert_link_form(
        us(1),
        1000.0,
        &nps,
        &sizes,
        binomial_reduce_bcast,
        |np, link| 2 * np.trailing_zeros() as u64 * link,
    );
}

#[test]
fn pipelined_b_way_stage_is_alpha_p_plus_b_alpha_r() {
    // Section 3: a stage in which each rank sends to b peers costs α_p + b·α_r for small n,
    // α_p + b·(α_r + nβ) in general (equation (3) with γ = 0).
    for b in 1u32..=9 {
        let s = multi_send_stage(b, 8);
        let t = run(&s, "pipelined:alpha_p=500ns,alpha_r=100ns");
        assert_eq!(t, ns(500) + b as u64 * ns(100), "b={b}");
        let t = run(&s, "pipelined:alpha_p=500ns,alpha_r=100ns,beta=0.5ns");
        assert_eq!(t, ns(500) + b as u64 * (ns(100) + ns(4)), "b={b}");
    }
}

#[test]
fn pipelined_with_alpha_p_zero_is_postal() {
    for s in [
        recursive_doubling(32, 64),
        ring_rotation(7, 1000),
        binomial_reduce_bcast(16, 8),
        mpich_recursive_doubling(13, 8),
    ] {
        assert_eq!(
            run(&s, "pipelined:alpha_p=0,alpha_r=1us,beta=0.4ns,gamma=0.1ns"),
            run(&s, "postal:alpha=1us,beta=0.4ns,gamma=0.1ns")
        );
    }
}

#[test]
fn pipelined_recursive_doubling_pays_alpha_p_every_step() {
    // b = 1: (α_p + α_r)·log2 N.
    let s = recursive_doubling(64, 8);
    assert_eq!(
        run(&s, "pipelined:alpha_p=700ns,alpha_r=300ns"),
        6 * ns(1000)
    );
}

#[test]
fn sends_are_serialised_and_cpu_work_is_too() {
    // One rank sends three 1000-byte messages to three ranks; the port serialises them.
    let mut progs = vec![Program::new(); 4];
    for k in 1..4 {
        send(&mut progs[0], k, 0, 1000);
        recv(&mut progs[k as usize], 0, 0, 1000, false);
    }
    let s = schedule("fan-out", progs);
    let finish = rank_finish(&s, "postal:alpha=1us,beta=1ns");
    assert_eq!(finish, vec![ns(6000), ns(2000), ns(4000), ns(6000)]);

    // Two receive-reduces that arrive together share the CPU: the second waits for the first.
    let mut progs = vec![Program::new(); 3];
    send(&mut progs[1], 0, 0, 1000);
    send(&mut progs[2], 0, 0, 1000);
    recv(&mut progs[0], 1, 0, 1000, true);
    recv(&mut progs[0], 2, 0, 1000, true);
    let s = schedule("fan-in", progs);
    let finish = rank_finish(&s, "postal:alpha=1us,gamma=2ns");
    assert_eq!(finish[0], ns(1000 + 2000 + 2000));
}

#[test]
fn receive_posted_late_completes_when_posted() {
    // Rank 1 computes 5 us before posting its receive; the message arrived at 1 us.
    let mut progs = vec![Program::new(); 2];
    send(&mut progs[0], 1, 0, 8);
    let c = progs[1].compute(us(5));
    let rv = recv(&mut progs[1], 0, 0, 8, false);
    progs[1].requires(rv, c);
    let s = schedule("late", progs);
    let finish = rank_finish(&s, "postal:alpha=1us");
    assert_eq!(finish, vec![us(1), us(5)]);
}

#[test]
fn sleep_delays_without_occupying() {
    // A sleep and a compute on the same CPU run side by side; the send after the sleep goes
    // at 3 us, not after the compute.
    let mut progs = vec![Program::new(); 2];
    let sl = progs[0].sleep(us(3));
    progs[0].compute(us(10));
    let sd = send(&mut progs[0], 1, 0, 8);
    progs[0].requires(sd, sl);
    recv(&mut progs[1], 0, 0, 8, false);
    let s = schedule("sleep", progs);
    let finish = rank_finish(&s, "postal:alpha=1us");
    assert_eq!(finish, vec![us(10), us(4)]);
}

#[test]
fn irequires_starts_with_its_dependency() {
    // The send irequires the receive: it starts when the receive is posted (time 0), not when
    // it completes, so both ranks finish at α.
    let s = send_after_recv(true);
    assert_eq!(run(&s, "postal:alpha=1us"), us(1));
    // With requires instead, it deadlocks (both wait to receive first).
    let s = send_after_recv(false);
    assert!(simulate(
        &s,
        &parse_model("postal:alpha=1us").unwrap(),
        &SimOptions::default()
    )
    .is_err());
}

use super::*;
use crate::collectives::{allreduce, alltoall};
use crate::model::{parse_model, parse_noise, ModelSpec};
use crate::schedule::{
    Combine, Dtype, Meta, Op, OpKind, Payload, Program, ReduceOp, ANY_SOURCE, ANY_TAG,
};

/// Runs `s` with and without deferred receives; asserts equal results (traces included
/// when `opts` asks for one) and returns the events handled each way.
fn both(s: &Schedule, model: &ModelSpec, opts: &SimOptions, what: &str) -> (u64, u64) {
    fn go<M: CostModel>(
        s: &Schedule,
        m: &M,
        opts: &SimOptions,
        defer: bool,
    ) -> (Result<SimResult, SimError>, u64) {
        let mut events = 0;
        let r = run_with(s, m, opts, defer, &mut events).map(|(r, _)| r);
        (r, events)
    }
    let ((a, ea), (b, eb)) = match model {
        ModelSpec::Postal(m) | ModelSpec::Pipelined(m) => {
            (go(s, m, opts, false), go(s, m, opts, true))
        }
        ModelSpec::LogGops(m) => (go(s, m, opts, false), go(s, m, opts, true)),
    };
    assert_eq!(a, b, "{what}");
    (ea, eb)
}

pub(super) const MODELS: [&str; 6] = [
    "loggops:L=3000,o=1500,g=1000,G=6,order=gcc",
    "loggops:L=3us,o=1.5us,g=1us,G=6ns,S=16,gamma=0.5ns,delta=200ns",
    "loggops:L=0,o=0,g=0,G=0",
    "loggops:L=100ns,o=2us,g=3us,G=0.1ns,O=1ns",
    "postal:alpha=1us,beta=1ns,gamma=1ns",
    "pipelined:alpha_r=300ns,alpha_p=700ns,beta=1ns",
];

/// Every allreduce (7 B of int64 sums) and alltoall (3 B of float64 a pair) the engine
/// tests run on `n` ranks, by name: ten schedules.
pub(super) fn collective_schedules(n: u32) -> Vec<(&'static str, Schedule)> {
    let mut schedules = Vec::new();
    for alg in [
        "ring_rotate",
        "ring",
        "tree",
        "recursive_doubling",
        "rabenseifner",
        "elimination",
        "mpich_recursive_multiplying:k=3",
    ] {
        let a = allreduce::Algorithm::parse(alg).unwrap();
        let spec = allreduce::AllreduceSpec::new(n, 7, Dtype::Int64, ReduceOp::Sum);
        schedules.push((alg, allreduce::generate(&a, &spec).unwrap()));
    }
    for alg in ["linear", "pairwise", "bruck"] {
        let a = alltoall::Algorithm::parse(alg).unwrap();
        let spec = alltoall::AlltoallSpec::new(n, 3, Dtype::Float64);
        schedules.push((alg, alltoall::generate(&a, &spec).unwrap()));
    }
    schedules
}

#[test]
fn deferred_receives_change_nothing_in_the_collectives() {
    let mut saved = 0;
    for model in MODELS.map(|m| parse_model(m).unwrap()) {
        for n in [1, 2, 5, 8, 13, 64] {
            for (alg, s) in &collective_schedules(n) {
                for opts in [
                    SimOptions {
                        trace: true,
                        ..SimOptions::default()
                    },
                    SimOptions {
                        noise: Some(parse_noise("exp:mean=1us").unwrap()),
                        seed: 7,
                        calls: 3,
                        ..SimOptions::default()
                    },
                ] {
                    let (ea, eb) = both(s, &model, &opts, &format!("{alg} on {n} ranks"));
                    assert!(eb <= ea, "{alg} on {n} ranks: {eb} events > {ea}");
                    saved += ea - eb;
                }
            }
        }
    }
    // Receives were deferred, and most then took no event of their own.
    assert!(saved > 20_000, "{saved} events saved");
}

#[test]
fn recursive_doubling_takes_two_events_a_step_and_rank() {
    let a = allreduce::Algorithm::parse("recursive_doubling").unwrap();
    let spec = allreduce::AllreduceSpec::new(1024, 1, Dtype::Int64, ReduceOp::Sum);
    let s = allreduce::generate(&a, &spec).unwrap();
    let model = parse_model("loggops:L=3000,o=1500,g=1000,G=6,order=gcc").unwrap();
    // 10 steps of a send, a receive and a message on 1024 ranks; the receives' events go.
    assert_eq!(
        both(&s, &model, &SimOptions::default(), "recursive doubling"),
        (3 * 10 * 1024, 2 * 10 * 1024)
    );
}

/// A xorshift generator from `seed`: `rnd(k)` is in `0..k`.
pub(super) fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move |k: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % k
    }
}

/// The options the random schedules run under: with a trace, and with noise over 2 calls.
pub(super) fn traced_and_noisy(seed: u64) -> [SimOptions; 2] {
    [
        SimOptions {
            trace: true,
            ..SimOptions::default()
        },
        SimOptions {
            noise: Some(parse_noise("uniform:min=0,max=2us").unwrap()),
            seed,
            calls: 2,
            ..SimOptions::default()
        },
    ]
}

/// Random programs on `n` ranks: messages (a send and its receive, with a wildcard now
/// and then, tags repeated, sizes on both sides of an eager limit), local work and sleeps,
/// on two CPUs, each op with `requires` and `irequires` dependencies on earlier ops of its
/// rank. Ops are made in one global order and depend only on earlier ones, so most
/// schedules complete; wildcards make some deadlock or leave messages unreceived.
pub(super) fn random_schedule(seed: u64, n: u32) -> Schedule {
    let mut rnd = xorshift(seed);
    let mut programs: Vec<Program> = (0..n).map(|_| Program::new()).collect();
    let add = |p: &mut Program, mut op: Op, cpu: u16, rnd: &mut dyn FnMut(u64) -> u64| {
        op.cpu = cpu;
        let id = p.push(op);
        for _ in 0..rnd(3) {
            if id > 0 {
                let on = rnd(id as u64) as u32;
                if rnd(3) == 0 {
                    p.irequires(id, on);
                } else {
                    p.requires(id, on);
                }
            }
        }
    };
    for _ in 0..4 * n {
        let src = rnd(n as u64) as u32;
        let cpu = rnd(2) as u16;
        match rnd(8) {
            0 => {
                let op = Op::new(OpKind::Compute {
                    time: rnd(3) * 500_000,
                });
                add(&mut programs[src as usize], op, cpu, &mut rnd);
            }
            1 => {
                let op = Op::new(OpKind::Sleep {
                    time: rnd(3) * 700_000,
                });
                add(&mut programs[src as usize], op, cpu, &mut rnd);
            }
            _ => {
                let dst = (src + 1 + rnd(n as u64 - 1) as u32) % n;
                let tag = rnd(3) as i32;
                let bytes = [8, 64, 4096][rnd(3) as usize];
                let send = Op::new(OpKind::Send {
                    peer: dst,
                    tag,
                    data: Payload::Bytes(bytes),
                });
                add(&mut programs[src as usize], send, cpu, &mut rnd);
                let recv = Op::new(OpKind::Recv {
                    peer: if rnd(10) == 0 { ANY_SOURCE } else { src },
                    tag: if rnd(10) == 0 { ANY_TAG } else { tag },
                    data: Payload::Bytes(bytes),
                    combine: if rnd(2) == 0 {
                        Combine::Assign
                    } else {
                        Combine::After
                    },
                    operand: None,
                });
                let cpu = rnd(2) as u16;
                add(&mut programs[dst as usize], recv, cpu, &mut rnd);
            }
        }
    }
    Schedule::from_programs(Meta::sizes_only("random"), programs).unwrap()
}

#[test]
fn deferred_receives_change_nothing_in_random_schedules() {
    let (mut ok, mut failed, mut saved) = (0, 0, 0);
    for seed in 0..300 {
        let s = random_schedule(seed, 2 + seed as u32 % 7);
        for model in MODELS.map(|m| parse_model(m).unwrap()) {
            for opts in traced_and_noisy(seed) {
                let (ea, eb) = both(&s, &model, &opts, &format!("seed {seed}"));
                saved += ea - eb;
                match simulate_with_model(&s, &model, &opts) {
                    Ok(_) => ok += 1,
                    Err(_) => failed += 1,
                }
            }
        }
    }
    // Both outcomes, and deferrals, were exercised.
    assert!(
        ok > 300 && failed > 300 && saved > 1000,
        "{ok} {failed} {saved}"
    );
}

fn simulate_with_model(
    s: &Schedule,
    model: &ModelSpec,
    opts: &SimOptions,
) -> Result<SimResult, SimError> {
    crate::sim::simulate(s, model, opts)
}

//! Engine behaviour common to all models: errors, noise, traces.

use crate::common;

use common::*;
use hypercuboid_core::model::{parse_model, parse_noise, NoiseSpec};
use hypercuboid_core::schedule::{Op, OpKind, Program, Schedule, ANY_SOURCE};
use hypercuboid_core::sim::{
    simulate, write_chrome_trace, SimError, SimOptions, SimResult, TraceKind, Wait,
};
use hypercuboid_core::units::{ns, us};

fn opts() -> SimOptions {
    SimOptions::default()
}

/// The message of the error that simulating `s` under the model `spec` gives.
fn sim_err(s: &Schedule, spec: &str) -> String {
    simulate(s, &parse_model(spec).unwrap(), &opts())
        .unwrap_err()
        .to_string()
}

/// `s` under the model `spec` with its trace recorded.
fn traced(s: &Schedule, spec: &str) -> SimResult {
    let o = SimOptions {
        trace: true,
        ..Default::default()
    };
    simulate(s, &parse_model(spec).unwrap(), &o).unwrap()
}

#[test]
fn unmatched_receives_are_a_deadlock_naming_the_sender() {
    let mut progs = vec![Program::new(); 2];
    recv(&mut progs[0], 1, 0, 8, false);
    recv(&mut progs[1], 0, 0, 8, false);
    let s = schedule("deadlock", progs);
    for model in ["postal:alpha=1us", "loggops"] {
        let e = simulate(&s, &parse_model(model).unwrap(), &opts()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "deadlock: 2 ops on 2 ranks never completed: \
             rank 0 op 0 (recv 8b from 1 tag 0) waits for a message from rank 1 with tag 0; \
             rank 1 op 0 (recv 8b from 0 tag 0) waits for a message from rank 0 with tag 0"
        );
        let SimError::Deadlock {
            unfinished_ops,
            stuck_ranks,
            stuck,
        } = e
        else {
            panic!()
        };
        assert_eq!((unfinished_ops, stuck_ranks), (2, 2));
        assert_eq!(stuck[1].wait, Wait::Message { from: 0, tag: 0 });
    }
}

#[test]
fn a_deadlock_over_several_calls_counts_the_unfinished_ops_of_every_call() {
    // Ranks 1 and 2 wait for each other; ranks 0 and 3 exchange two messages and finish every
    // call, so more ops complete (8) than one call has (6): the count once underflowed.
    let mut progs = vec![Program::new(); 4];
    recv(&mut progs[1], 2, 0, 8, false);
    recv(&mut progs[2], 1, 0, 8, false);
    for _ in 0..2 {
        send(&mut progs[0], 3, 7, 8);
        recv(&mut progs[3], 0, 7, 8, false);
    }
    let s = schedule("deadlock", progs);
    for model in ["postal:alpha=1us", "loggops"] {
        let o = SimOptions { calls: 2, ..opts() };
        let e = simulate(&s, &parse_model(model).unwrap(), &o).unwrap_err();
        assert_eq!(
            e.to_string(),
            "deadlock: 4 ops on 2 ranks never completed: \
             rank 1 op 0 (recv 8b from 2 tag 0) waits for a message from rank 2 with tag 0; \
             rank 2 op 0 (recv 8b from 1 tag 0) waits for a message from rank 1 with tag 0",
            "{model}"
        );
    }
}

#[test]
fn deadlock_names_dependencies_and_rendezvous_waits() {
    // Rank 0: op 0 (send) requires op 1 (a receive nobody serves). Rank 1 sends with tag 1
    // (rendezvous under S = 0) but rank 0 receives tag 5; rank 2 waits for any source.
    let mut progs = vec![Program::new(); 3];
    let sd = send(&mut progs[0], 1, 0, 8);
    let rv = recv(&mut progs[0], 1, 5, 8, false);
    progs[0].requires(sd, rv);
    send(&mut progs[1], 0, 1, 8);
    recv(&mut progs[2], ANY_SOURCE, 3, 8, false);
    let s = schedule("deadlock", progs);
    assert_eq!(
        sim_err(&s, "loggops:S=0"),
        "deadlock: 4 ops on 3 ranks never completed: \
         rank 0 op 0 (send 8b to 1 tag 0) waits for op 1 to complete; \
         rank 1 op 0 (send 8b to 0 tag 1) waits for rank 0 to post a receive with tag 1 \
         (rendezvous); \
         rank 2 op 0 (recv 8b from any tag 3) waits for a message from any rank with tag 3"
    );
}

#[test]
fn deadlock_report_is_capped() {
    let progs = (0..10u32)
        .map(|r| {
            let mut p = Program::new();
            recv(&mut p, (r + 1) % 10, 0, 1, false);
            p
        })
        .collect();
    let s = schedule("ring of receives", progs);
    let text = sim_err(&s, "postal");
    assert!(text.starts_with("deadlock: 10 ops on 10 ranks never completed: rank 0 op 0"));
    assert!(text.ends_with("; ..."), "{text}");
    assert_eq!(text.matches("waits for").count(), 4);
}

#[test]
fn messages_never_received_are_reported() {
    let mut progs = vec![Program::new(); 2];
    send(&mut progs[0], 1, 3, 8);
    let e = sim_err(&schedule("unreceived", progs), "postal:alpha=1us");
    assert_eq!(
        e,
        "1 message was sent but never received: rank 0 op 0 (to rank 1 tag 3)"
    );
}

#[test]
fn too_many_cpus_is_refused() {
    let progs = (0..40_000)
        .map(|_| {
            let mut p = Program::new();
            p.push(Op {
                kind: OpKind::Compute { time: 1 },
                cpu: 65535,
                nic: 0,
            });
            p
        })
        .collect();
    let s = schedule("wide", progs);
    assert_eq!(
        sim_err(&s, "postal"),
        "schedule too large to simulate: 40000 ranks × 65536 CPUs per rank (limit 2147483648)"
    );
}

#[test]
fn noise_is_deterministic_per_seed() {
    let s = recursive_doubling(64, 8);
    let m = parse_model("postal:alpha=1us").unwrap();
    let noisy = |spec: &str, seed| SimOptions {
        trace: true,
        noise: Some(parse_noise(spec).unwrap()),
        seed,
        calls: 1,
        threads: 1,
    };
    let base = simulate(&s, &m, &opts()).unwrap().completion;
    assert_eq!(base, us(6));
    for spec in [
        "exp:mean=100ns",
        "uniform:min=0,max=1us",
        "normal:mean=200ns,sd=100ns",
    ] {
        let a = simulate(&s, &m, &noisy(spec, 7)).unwrap();
        let b = simulate(&s, &m, &noisy(spec, 7)).unwrap();
        let c = simulate(&s, &m, &noisy(spec, 8)).unwrap();
        assert_eq!(a, b, "{spec}");
        assert_ne!(a.completion, c.completion, "{spec}");
        assert!(a.completion > base && c.completion > base, "{spec}");
    }
    // "none" is no noise.
    let n = simulate(&s, &m, &noisy("none", 7)).unwrap();
    assert_eq!(n.completion, base);
}

#[test]
fn noise_draws_are_a_pure_function_of_seed_rank_op() {
    // Pinned so that a seed gives the same simulation in every version.
    let n = NoiseSpec::Uniform { min: 0.0, max: 1e6 };
    let draws: Vec<u64> = (0..4).map(|op| n.delay(42, 3, op)).collect();
    assert_eq!(draws, vec![224_831, 616_757, 369_595, 978_163]);
    let e = NoiseSpec::Exp { mean: 1e5 };
    let draws_exp: Vec<u64> = (0..4).map(|op| e.delay(42, 3, op)).collect();
    assert_eq!(draws_exp, vec![25_467, 95_909, 46_139, 382_415]);
    assert_ne!(n.delay(42, 3, 0), n.delay(43, 3, 0));
    assert_ne!(n.delay(42, 3, 0), n.delay(42, 4, 0));
    assert!(draws.iter().all(|&d| d < 1_000_000));
    // A uniform draw on [5 ns, 5 ns] is exactly 5 ns.
    let fixed = NoiseSpec::Uniform {
        min: 5000.0,
        max: 5000.0,
    };
    let s = recursive_doubling(8, 8);
    let r = simulate(
        &s,
        &parse_model("postal:alpha=1us").unwrap(),
        &SimOptions {
            trace: false,
            noise: Some(fixed),
            seed: 1,
            calls: 1,
            threads: 1,
        },
    )
    .unwrap();
    // Every op is delayed 5 ns after it becomes ready: 3 steps of 1 us + 5 ns.
    assert_eq!(r.completion, 3 * (us(1) + ns(5)));
}

#[test]
fn trace_records_ops_and_messages() {
    // Two ranks exchange 1000 B under postal α = 1 us, β = 1 ns, γ = 1 ns.
    let s = recursive_doubling(2, 1000);
    let r = traced(&s, "postal:alpha=1us,beta=1ns,gamma=1ns");
    let t = r.trace.unwrap();
    assert_eq!(t.num_ops(), 4);
    assert_eq!(t.op_rank, vec![0, 0, 1, 1]);
    assert_eq!(t.op_index, vec![0, 1, 0, 1]);
    assert_eq!(
        t.op_kind,
        vec![
            TraceKind::Send,
            TraceKind::Recv,
            TraceKind::Send,
            TraceKind::Recv
        ]
    );
    // Send 0..2 us; receive posted at 0, message at 2 us, reduction 2..3 us.
    assert_eq!(t.op_start, vec![0, 0, 0, 0]);
    assert_eq!(t.op_end, vec![us(2), us(3), us(2), us(3)]);
    assert_eq!(t.num_messages(), 2);
    assert_eq!(t.msg_src, vec![0, 1]);
    assert_eq!(t.msg_dst, vec![1, 0]);
    assert_eq!(t.msg_src_op, vec![0, 0]);
    assert_eq!(t.msg_dst_op, vec![1, 1]);
    assert_eq!(t.msg_start, vec![0, 0]);
    assert_eq!(t.msg_arrival, vec![us(2), us(2)]);
    assert_eq!(t.msg_bytes, vec![1000, 1000]);
    assert_eq!(r.completion, us(3));
}

#[test]
fn chrome_trace_is_valid_json() {
    let s = binomial_reduce_bcast(8, 64);
    let r = traced(&s, "loggops");
    let t = r.trace.unwrap();
    let mut buf = Vec::new();
    write_chrome_trace(&t, &mut buf).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(count("X"), t.num_ops());
    assert_eq!(count("s"), t.num_messages());
    assert_eq!(count("f"), t.num_messages());
    assert_eq!(count("M"), 2 * 8);
    assert_eq!(
        events
            .iter()
            .find(|e| e["ph"] == "M" && e["pid"] == 3 && e["name"] == "process_name")
            .unwrap()["args"]["name"],
        "rank 3"
    );
    // Timestamps are microseconds with picosecond digits. Rank 1's send starts at 0 and lasts
    // o = 1.5 us; rank 0's receive of it is posted at 0 and ends after the message arrives
    // (o + L = 4 us) and is taken in (o + 63·G = 1.878 us).
    let x = |pid: u32, name: &str| {
        events
            .iter()
            .find(|e| e["ph"] == "X" && e["pid"] == pid && e["name"] == name)
            .unwrap()
    };
    assert_eq!(x(1, "send")["ts"].as_f64().unwrap(), 0.0);
    assert_eq!(x(1, "send")["dur"].as_f64().unwrap(), 1.5);
    assert_eq!(x(0, "recv")["dur"].as_f64().unwrap(), 5.878);
    let last_end = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!((last_end - r.completion as f64 / 1e6).abs() < 1e-9);
}

#[test]
fn results_count_ops_and_messages() {
    let s = ring_rotation(5, 8);
    let r = simulate(&s, &parse_model("pipelined:alpha_r=1us").unwrap(), &opts()).unwrap();
    assert_eq!(r.ops, 40);
    assert_eq!(r.messages, 20);
    assert_eq!(r.rank_finish.len(), 5);
    assert!(r.trace.is_none());
}

/// One rank: `k` sleeps of 1..=k us, then a compute of 5 us that requires every sleep (and,
/// with `stuck`, a receive nobody serves).
fn fan_in(k: u32, stuck: bool) -> hypercuboid_core::schedule::Schedule {
    let mut p = Program::new();
    let sleeps: Vec<u32> = (1..=k)
        .map(|i| p.push(Op::new(OpKind::Sleep { time: us(i as u64) })))
        .collect();
    let last = p.compute(us(5));
    p.requires_all(last, &sleeps);
    if stuck {
        let rv = recv(&mut p, 0, 9, 8, false);
        p.requires(last, rv);
    }
    schedule("fan-in", vec![p])
}

#[test]
fn a_noise_delay_counts_from_when_its_op_is_freed_even_if_its_cpu_was_free_before() {
    // Without noise LogGOPS starts the compute at its CPU's free time (0: sleeps occupy
    // nothing), as LogGOPSim does. A noise delay is OS jitter after the op could run: it
    // counts from the later of that time and the time the op is freed (the last sleep's end),
    // as on a network, where time never goes back.
    let s = fan_in(3, false);
    let noise = parse_noise("exp:mean=1us").unwrap();
    for model in ["loggops", "postal:alpha=1us"] {
        let r = simulate(
            &s,
            &parse_model(model).unwrap(),
            &SimOptions {
                trace: true,
                noise: Some(noise.clone()),
                seed: 7,
                ..Default::default()
            },
        )
        .unwrap();
        // Sleep i (of i + 1 us) starts after its own delay; the last to end frees the compute.
        let freed = (0..3)
            .map(|i| noise.delay(7, 0, i) + us(i as u64 + 1))
            .max()
            .unwrap();
        let start = r.trace.unwrap().op_start[3];
        assert_eq!(start, freed + noise.delay(7, 0, 3), "{model}");
        assert!(noise.delay(7, 0, 3) > 0);
    }
}

#[test]
fn ops_with_many_dependencies_wait_for_all_of_them() {
    // The engine counts up to 30 dependencies in an op's state byte and more in a side table:
    // both sides of that limit, in both models. Under postal the op starts when its last
    // dependency (the k-us sleep) completes.
    for k in [1, 29, 30, 31, 32, 40, 300] {
        let s = fan_in(k, false);
        for model in ["postal:alpha=1us", "loggops"] {
            let r = traced(&s, model);
            let t = r.trace.unwrap();
            // LogGOPS queues a freed local op at its CPU's free time (0 here: sleeps occupy
            // nothing), as LogGOPSim does; postal starts it when it is freed.
            let freed = if model == "loggops" { 0 } else { us(k as u64) };
            assert_eq!(t.op_start[k as usize], freed, "{k} deps, {model}");
            assert_eq!(r.ops, k as u64 + 1);
        }
    }
    for k in [30, 31, 300] {
        let e = simulate(&fan_in(k, true), &parse_model("loggops").unwrap(), &opts()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "deadlock: 2 ops on 1 rank never completed: rank 0 op {k} (compute 5.000 us) \
                 waits for op {} to complete",
                k + 1
            )
        );
    }
}

/// Every thread count gives one thread's result on schedules large enough that the default
/// (`threads` 0) splits them (2^19 ops or more): recursive doubling and the binomial tree under
/// LogGOPS and postal, with and without noise, each run saying it ran on the threads asked
/// for (a trace: on one); and a schedule that deadlocks reports one thread's error whatever
/// the count.
#[test]
fn threads_give_one_threads_result() {
    use hypercuboid_core::collectives::allreduce::{generate, Algorithm, AllreduceSpec};
    use hypercuboid_core::schedule::{Dtype, ReduceOp};
    use hypercuboid_core::sim::{simulate_on_threads, threads_for, PARALLEL_OPS};
    let cases = [("recursive_doubling", 1 << 15), ("tree", 1 << 17)];
    for (alg, n) in cases {
        let spec = AllreduceSpec::new(n, 1, Dtype::Int64, ReduceOp::Sum);
        let s = generate(&Algorithm::parse(alg).unwrap(), &spec).unwrap();
        assert!(
            s.total_ops() >= PARALLEL_OPS,
            "{alg}: {} ops",
            s.total_ops()
        );
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(threads_for(&s, 0), cores, "{alg}");
        for model in [
            "loggops:L=3000,o=1500,g=1000,G=6,O=0,S=65535,order=gcc",
            "postal:alpha=1us,beta=1ns,gamma=1ns",
        ] {
            let m = parse_model(model).unwrap();
            for noise in [None, Some("exp:mean=200ns")] {
                let with = |threads| SimOptions {
                    noise: noise.map(|x| parse_noise(x).unwrap()),
                    seed: 5,
                    threads,
                    ..SimOptions::default()
                };
                let (one, used) = simulate_on_threads(&s, &m, &with(1)).unwrap();
                assert_eq!(used, 1);
                for threads in [0, 2, 3] {
                    let (r, used) = simulate_on_threads(&s, &m, &with(threads)).unwrap();
                    let case = format!("{alg} on {n} ranks, {model}, noise {noise:?}");
                    assert_eq!(r, one, "{case}, {threads} threads");
                    // Split across the threads asked for (0: every core), not left to one.
                    assert_eq!(used, threads_for(&s, threads), "{case}, {threads} threads");
                }
                // A trace is recorded by one thread, whatever was asked.
                let traced = SimOptions {
                    trace: true,
                    ..with(2)
                };
                let (r, used) = simulate_on_threads(&s, &m, &traced).unwrap();
                assert_eq!((r.completion, used), (one.completion, 1));
            }
        }
    }
    // Below 2^19 ops the default is one thread; an explicit count is taken as it is.
    let small = generate(
        &Algorithm::parse("recursive_doubling").unwrap(),
        &AllreduceSpec::new(1024, 1, Dtype::Int64, ReduceOp::Sum),
    )
    .unwrap();
    assert_eq!(threads_for(&small, 0), 1);
    assert_eq!(threads_for(&small, 5), 5);
    let mut progs = vec![Program::new(); 2];
    recv(&mut progs[0], 1, 0, 8, false);
    recv(&mut progs[1], 0, 0, 8, false);
    let s = schedule("deadlock", progs);
    let m = parse_model("postal:alpha=1us").unwrap();
    let one = simulate(&s, &m, &opts()).unwrap_err().to_string();
    for threads in [2, 3] {
        let o = SimOptions { threads, ..opts() };
        assert_eq!(simulate(&s, &m, &o).unwrap_err().to_string(), one);
    }
}

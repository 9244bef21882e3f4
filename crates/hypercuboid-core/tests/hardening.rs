//! Inputs that crashed or hung the core (issue 34), each now a clear error or a result.

use hypercuboid_core::schedule::goal;
use hypercuboid_core::schedule::ScheduleError;
use hypercuboid_core::topology::{compare, generate, try_analyze, TopologyError};
use std::io::Read;

#[test]
fn compare_at_radix_256_leaves_out_what_it_cannot_build() {
    // The balanced dragonfly of radix 256 (p = 64) has 67,117,056 endpoints, more than a
    // topology may have: it has no row, where it was a panic.
    let rows = compare::largest_within_radix(256);
    assert!(rows.iter().all(|r| r.label != "Dragonfly"));
    assert!(rows.iter().any(|r| r.label == "2-level fat tree"));
}

#[test]
fn the_path_analysis_of_a_large_torus_is_refused() {
    let t = generate("torus:dims=200x200").unwrap();
    assert_eq!(
        try_analyze(&t).unwrap_err(),
        TopologyError::Analysis {
            reason: "40000 routers: the path analysis searches from every router and takes at \
                     most 32768; analyse a smaller instance"
                .into()
        }
    );
    let small = generate("torus:dims=4x4").unwrap();
    assert_eq!(try_analyze(&small).unwrap().router_diameter, Some(4));
}

#[test]
fn a_goal_reader_refuses_a_file_without_lines() {
    // What `/dev/zero` gives: bytes without end and without a newline.
    let zeros = std::io::repeat(0).take(1 << 30);
    let e = goal::parse_reader(std::io::BufReader::new(zeros), "/dev/zero").unwrap_err();
    assert_eq!(
        e,
        ScheduleError::Parse {
            line: 1,
            column: 1,
            message: "line longer than 1048576 bytes: not a GOAL schedule".into()
        }
    );
}

#[test]
fn a_goal_error_quotes_a_bounded_prefix_of_a_huge_number() {
    let digits = "9".repeat(1_000_000);
    let e = goal::parse(&format!("num_ranks {digits}\n"), "big").unwrap_err();
    assert_eq!(
        e,
        ScheduleError::Parse {
            line: 1,
            column: 11,
            message: format!(
                "num_ranks {}... (1000000 bytes) is out of range (1 to 4294967294)",
                "9".repeat(60)
            )
        }
    );
}

#[test]
fn a_million_threads_are_refused() {
    use hypercuboid_core::collectives::allreduce;
    use hypercuboid_core::model::parse_model;
    use hypercuboid_core::schedule::verify::{try_verify, VerifyOptions};
    use hypercuboid_core::schedule::{Dtype, ReduceOp};
    use hypercuboid_core::sim::{simulate, SimError, SimOptions};
    let a = allreduce::Algorithm::parse("ring").unwrap();
    let spec = allreduce::AllreduceSpec::new(4, 1, Dtype::Float64, ReduceOp::Sum);
    let s = allreduce::generate(&a, &spec).unwrap();
    let opts = VerifyOptions {
        threads: 1_000_000,
        ..VerifyOptions::default()
    };
    assert_eq!(
        try_verify(&s, &opts).unwrap_err(),
        ScheduleError::BadParameter {
            name: "threads".into(),
            value: "1000000".into(),
            reason: "0 (every core) or 1 to 1024 threads".into()
        }
    );
    let opts = SimOptions {
        threads: 1_000_000,
        ..SimOptions::default()
    };
    let m = parse_model("postal:alpha=1us").unwrap();
    let e = simulate(&s, &m, &opts).unwrap_err();
    assert_eq!(
        e,
        SimError::Threads {
            value: 1_000_000,
            limit: 1024
        }
    );
    assert_eq!(
        e.to_string(),
        "invalid threads 1000000: accepted 0 (the engine's choice) to 1024"
    );
}

#[test]
fn a_spec_error_quotes_a_bounded_prefix_of_a_huge_spec() {
    use hypercuboid_core::model::parse_model;
    let sixty = "x".repeat(60);
    let name = "x".repeat(200_000);
    assert_eq!(
        parse_model(&name).unwrap_err().to_string(),
        parse_model("zz")
            .unwrap_err()
            .to_string()
            .replace("'zz'", &format!("'{sixty}... (200000 bytes)'"))
    );
    let spec = format!("torus:dims={name}");
    let e = generate(&spec).unwrap_err().to_string();
    assert!(
        e.starts_with("invalid topology spec 'torus:dims=xxxx"),
        "{e}"
    );
    assert!(e.contains("... (200011 bytes)': dims=xxxx"), "{e}");
    assert!(e.contains("... (200000 bytes): "), "{e}");
    assert!(e.len() < 400, "{} bytes: {e}", e.len());
}

#[test]
fn the_sync_count_of_a_large_star_is_refused() {
    use hypercuboid_core::collectives::alltoall::scheduled::sync_counts;
    // 1001 machines on one switch: each of the 2002 links carries 1000 messages, so counting
    // the pairwise synchronisations visits 2002 · 1000² pairs (the count grew as P³: 45 s at
    // 2000 machines).
    let p = 1001;
    let machines: Vec<String> = (0..p).map(|i| format!("\"n{i}\"")).collect();
    let links: Vec<String> = (0..p).map(|i| format!("[\"n{i}\", \"s0\"]")).collect();
    let json = format!(
        "{{\"name\": \"star\", \"switches\": [\"s0\"], \"machines\": [{}], \"links\": [{}]}}",
        machines.join(","),
        links.join(",")
    );
    let path = std::env::temp_dir().join(format!("hardening-star-{}.json", std::process::id()));
    std::fs::write(&path, json).unwrap();
    let t = generate(&format!("tree:{}", path.display())).unwrap();
    std::fs::remove_file(&path).unwrap();
    let machine_of: Vec<u32> = (0..p).collect();
    assert_eq!(
        sync_counts(&t, &machine_of).unwrap_err(),
        ScheduleError::BadParameter {
            name: "topo".into(),
            value: t.name().into(),
            reason: "counting the pairwise synchronisations of 1001 ranks visits 2002000000 \
                     pairs of messages on shared links, more than 2000000000: use fewer \
                     machines"
                .into()
        }
    );
}

#[test]
fn a_ring_with_fewer_elements_than_ranks_is_generated_in_time_linear_in_ranks() {
    use hypercuboid_core::collectives::allreduce;
    use hypercuboid_core::schedule::{Dtype, ReduceOp};
    // count < P: only `count` chunks are non-empty, so a rank visits ≤ 2·count steps of each
    // phase instead of P − 1 (2^18 ranks took P² ≈ 7·10^10 steps before). Every non-empty chunk
    // travels P − 1 hops in each phase; ranks holding their own non-empty chunk copy the rest.
    let a = allreduce::Algorithm::parse("ring").unwrap();
    let p: u64 = 1 << 18;
    for count in [1u64, 3] {
        let spec = allreduce::AllreduceSpec::new(p as u32, count, Dtype::Float64, ReduceOp::Sum);
        let s = allreduce::generate(&a, &spec).unwrap();
        let messages = 2 * count * (p - 1);
        // Each message is one send and one receive. Ranks count.. own an empty chunk and copy
        // the whole input once; ranks 0..count copy what lies on each side of their chunk
        // (2(count − 1) copies among them).
        let copies = (p - count) + 2 * (count - 1);
        assert_eq!(s.total_ops(), 2 * messages + copies, "count {count}");
    }
}

use super::super::tests::{collective_schedules, random_schedule, MODELS};
use super::super::{run_with, SimError};
use super::*;
use crate::collectives::allreduce;
use crate::model::{parse_model, parse_noise, LogGopsModel, ModelSpec};
use crate::schedule::{Dtype, ReduceOp};

/// Runs `s` on one thread and on 2, 3 and 5 lanes; asserts that every run the lanes
/// finish has one thread's result and events, and that a run one thread fails is left to
/// it. Counts each outcome: `[finished, Unsplittable, Stopped, Unfinished]`, then the
/// finished runs whose last window ran free with events in it.
fn check(s: &Schedule, model: &ModelSpec, opts: &SimOptions, what: &str, n: &mut [u32; 5]) {
    fn go<M: CostModel + Sync>(s: &Schedule, m: &M, opts: &SimOptions, what: &str, n: &mut [u32; 5])
    where
        M::State: Send,
    {
        // (Lanes queue a waiting local op again as one thread did before it parked them:
        // the same events as one thread without parking, and the same results as with it,
        // which `wait`'s tests compare.)
        let mut one_events = 0;
        super::super::wait::PARK.with(|p| p.set(false));
        let one: Result<SimResult, SimError> =
            run_with(s, m, opts, true, &mut one_events).map(|(r, _)| r);
        super::super::wait::PARK.with(|p| p.set(true));
        for threads in [2, 3, 5] {
            let mut stats = LaneStats::default();
            match run(s, m, opts, threads, 0, &mut stats) {
                Ok(r) => {
                    n[0] += 1;
                    n[4] += u32::from(stats.free_events > 0);
                    assert_eq!(Ok(&r), one.as_ref(), "{what}, {threads} threads");
                    assert_eq!(
                        stats.events, one_events,
                        "{what}, {threads} threads: events"
                    );
                }
                Err(why) => {
                    assert_eq!(stats.events, 0, "{what}");
                    n[1 + why as usize] += 1;
                    if why == OneThread::Unfinished {
                        assert!(one.is_err(), "{what}, {threads} threads: {why:?}");
                    }
                }
            }
        }
    }
    match model {
        ModelSpec::Postal(m) | ModelSpec::Pipelined(m) => go(s, m, opts, what, n),
        ModelSpec::LogGops(m) => go(s, m, opts, what, n),
    }
}

#[test]
fn random_schedules_give_one_threads_results() {
    let mut n = [0; 5];
    for seed in 0..300 {
        let s = random_schedule(seed, 2 + seed as u32 % 11);
        for model in MODELS.map(|m| parse_model(m).unwrap()) {
            for opts in [
                SimOptions::default(),
                SimOptions {
                    noise: Some(parse_noise("uniform:min=0,max=2us").unwrap()),
                    seed,
                    ..SimOptions::default()
                },
            ] {
                check(&s, &model, &opts, &format!("seed {seed}"), &mut n);
            }
        }
    }
    // Every outcome was exercised (runs of the model without lookahead, and of the one
    // whose sends above 16 bytes wait for their receives, are unsplittable).
    let [done, unsplittable, stopped, unfinished, free] = n;
    assert!(
        done > 3000 && unsplittable > 3000 && stopped > 500 && unfinished > 1000,
        "{n:?}"
    );
    // Every finished run ends free: at least the last messages between lanes arrive
    // after the last send between lanes.
    assert_eq!(free, done, "{n:?}");
}

/// Every collective on each of `sizes` ranks under every model, with and without noise, on one
/// thread and on lanes.
fn collectives_give_one_threads_results_on(sizes: &[u32]) {
    for model in MODELS {
        let (mut n, mut large) = ([0; 5], 0);
        let spec = parse_model(model).unwrap();
        for &ranks in sizes {
            for (alg, s) in &collective_schedules(ranks) {
                let (info, _, _) = shape_infos(s, &LogGopsModel::default()).unwrap();
                let largest = info
                    .iter()
                    .flat_map(|sh| &sh.ops)
                    .filter(|o| o.kind == super::super::K_SEND)
                    .map(|o| o.bytes)
                    .max()
                    .unwrap_or(0);
                large += u32::from(largest > 16);
                for opts in [
                    SimOptions::default(),
                    SimOptions {
                        noise: Some(parse_noise("exp:mean=1us").unwrap()),
                        seed: 7,
                        ..SimOptions::default()
                    },
                ] {
                    let what = format!("{alg} on {ranks} ranks under {model}");
                    check(s, &spec, &opts, &what, &mut n);
                }
            }
        }
        // The sizes, 10 algorithms, 2 options, 3 thread counts. The collectives never stop
        // a run (no message of theirs leaves before its window's end), and only two
        // models leave some to one thread: one without lookahead (L = o = 0), all of
        // them; one whose sends of more than 16 bytes wait for their receives, the
        // schedules with such a send.
        let (runs, large) = (sizes.len() as u32 * 10 * 2 * 3, large * 2 * 3);
        let want = if model.contains("L=0,") {
            [0, runs, 0, 0]
        } else if model.contains("S=16") {
            [runs - large, large, 0, 0]
        } else {
            [runs, 0, 0, 0]
        };
        assert_eq!(n[..4], want, "{model}");
        assert_eq!(n[4], n[0], "{model}: runs that ended free");
    }
}

#[test]
fn collectives_give_one_threads_results() {
    collectives_give_one_threads_results_on(&[5, 8, 13]);
}

/// The larger rank counts, most of the time of the two (make test-long).
#[test]
#[ignore = "long: make test-long"]
fn collectives_on_64_and_100_ranks_give_one_threads_results() {
    collectives_give_one_threads_results_on(&[64, 100]);
}

/// The binomial tree's broadcast sends across lanes once (the root to the upper half), so
/// the lanes run most of it free, each to its end (12,250 of 22,511 events on 2^12
/// ranks), while recursive doubling's last step sends across lanes from every rank, and
/// only its 4,096 arrivals are left for the free window.
#[test]
fn the_trees_broadcast_runs_free() {
    let model = LogGopsModel::default();
    let schedule = |alg: &str| {
        let a = allreduce::Algorithm::parse(alg).unwrap();
        let spec = allreduce::AllreduceSpec::new(1 << 12, 1, Dtype::Int64, ReduceOp::Sum);
        allreduce::generate(&a, &spec).unwrap()
    };
    for (alg, windows, free_events) in [("tree", 14, 12250), ("recursive_doubling", 13, 4096)] {
        let s = schedule(alg);
        let mut one_events = 0;
        let (want, _) =
            run_with(&s, &model, &SimOptions::default(), true, &mut one_events).unwrap();
        let mut stats = LaneStats::default();
        let got = run(&s, &model, &SimOptions::default(), 2, 0, &mut stats).unwrap();
        assert_eq!(got, want, "{alg}");
        assert_eq!(
            (stats.events, stats.windows, stats.free_events),
            (one_events, windows, free_events),
            "{alg}"
        );
    }
    // On 8 and 16 lanes too, the tree's lanes hold whole subtrees (their bounds aligned:
    // `aligned`), so most of its broadcast runs free; with the ops-balanced bounds, a few
    // ranks off, they sent to each other at every level and nothing ran free.
    let s = schedule("tree");
    let (want, _) = run_with(&s, &model, &SimOptions::default(), true, &mut 0).unwrap();
    for threads in [8, 16] {
        let mut stats = LaneStats::default();
        let got = run(&s, &model, &SimOptions::default(), threads, 0, &mut stats).unwrap();
        assert_eq!(got, want, "{threads} lanes");
        assert!(
            stats.free_events * 5 > stats.events * 2,
            "{threads} lanes: {} of {} events free",
            stats.free_events,
            stats.events
        );
        assert_eq!(stats.events, 22_511, "{threads} lanes");
    }
}

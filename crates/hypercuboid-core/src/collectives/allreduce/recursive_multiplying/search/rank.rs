//! The model-optimal factored schedule by dynamic programming, suggestions for a number of
//! ranks, and ranking schedules by the closed form and by simulation.

use super::enumerate::DivisorTable;
use super::*;

/// A schedule and its closed-form time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Optimum {
    /// The schedule (factors largest first).
    pub schedule: ScheduleString,
    /// Its closed-form time (exact for a factored schedule).
    pub time: Time,
    /// How many divisors of `N` the program visited.
    pub divisors: usize,
}

/// The factored schedule of `n` ranks with the least closed-form time, by dynamic programming
/// over the divisors of `n`: `best(d) = min over factors f of d of stage(f) + best(d / f)`,
/// `best(1) = 0`, exact because a factored schedule's time is the sum of its stages' and does
/// not depend on their order. Ties go to fewer stages, then to the larger factor. Work:
/// `O(d(n)²)` for `d(n)` divisors (240 for the highly composite 720720, 49 for 10⁶), plus
/// `O(√n)` to find them.
pub fn optimal_factored(n: u32, p: &Params) -> Result<Optimum, TuningError> {
    p.validate()?;
    if n == 0 {
        return Err(bad("nranks", n, "an allreduce has at least 1 rank"));
    }
    let table = DivisorTable::new(n);
    let divs = &table.divs;
    // (cost, stages, first factor)
    let mut best: Vec<(u128, u32, u32)> = vec![(0, 0, 0); divs.len()];
    for i in 1..divs.len() {
        let d = divs[i];
        let mut b: Option<(u128, u32, u32)> = None;
        for &f in &divs[1..=i] {
            if !d.is_multiple_of(f) {
                continue;
            }
            let (c, s, _) = best[table.index(d / f)];
            let cand = (c + p.factor_stage(f), s + 1, f);
            b = Some(match b {
                None => cand,
                Some(cur) => {
                    if (cand.0, cand.1) < (cur.0, cur.1)
                        || ((cand.0, cand.1) == (cur.0, cur.1) && cand.2 > cur.2)
                    {
                        cand
                    } else {
                        cur
                    }
                }
            });
        }
        best[i] = b.expect("d divides itself");
    }
    let mut factors = Vec::new();
    let mut d = n;
    while d > 1 {
        let f = best[table.index(d)].2;
        factors.push(f);
        d /= f;
    }
    factors.sort_unstable_by(|a, b| b.cmp(a));
    Ok(Optimum {
        schedule: ScheduleString::factored(&factors).expect("factors >= 2"),
        time: clamp(best[divs.len() - 1].0),
        divisors: divs.len(),
    })
}

// ---------------------------------------------------------------------------------------------
// Suggestions
// ---------------------------------------------------------------------------------------------

/// A few schedules that fit `n` ranks, for error messages: the model-optimal factored schedule
/// for the paper's Table 1 minimum fit, the prime factorisation (largest first), and when `n`
/// is not a power of two, MPICH's fix `c{2r}m2,a2,…,e{2r}m2` and, when `n − 1` factors, the merge
/// of one rank. Every suggestion fits `n`.
pub fn suggest(n: u32) -> Vec<ScheduleString> {
    let mut out: Vec<ScheduleString> = Vec::new();
    let mut add = |s: ScheduleString| {
        if !out.contains(&s) && out.len() < 4 {
            out.push(s);
        }
    };
    if n == 0 {
        return Vec::new();
    }
    if n == 1 {
        add(ScheduleString::empty());
        return out;
    }
    if let Ok(o) = optimal_factored(n, &Params::table1_minimum()) {
        add(o.schedule);
    }
    let mut pf = prime_factors(n);
    pf.reverse();
    if let Ok(s) = ScheduleString::factored(&pf) {
        add(s);
    }
    if !n.is_power_of_two() && n > 2 {
        let pof2 = 1u32 << (31 - n.leading_zeros());
        let rem = n - pof2;
        let mut st = vec![Stage::Collapse {
            threshold: 2 * rem,
            base: 2,
        }];
        st.extend(std::iter::repeat_n(
            Stage::Factor(2),
            pof2.trailing_zeros() as usize,
        ));
        st.push(Stage::Expand {
            threshold: 2 * rem,
            base: 2,
        });
        if let Ok(s) = ScheduleString::new(st) {
            add(s);
        }
        let m = n - 1;
        let mut f = prime_factors(m);
        if f.len() >= 2 {
            f.reverse();
            let k = f.len() - 1;
            let mut st = vec![Stage::Merge {
                remainder: 1,
                groups: m / f[0],
                base: f[0],
            }];
            st.extend(f[1..k].iter().map(|&b| Stage::Factor(b)));
            st.push(Stage::InverseMerge {
                remainder: 1,
                groups: m / f[k],
                base: f[k],
            });
            if let Ok(s) = ScheduleString::new(st) {
                add(s);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Ranking
// ---------------------------------------------------------------------------------------------

/// One ranked schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranked {
    /// The schedule.
    pub schedule: ScheduleString,
    /// Its closed-form time.
    pub predicted: Time,
    /// Its simulated completion time, when simulated.
    pub simulated: Option<Time>,
}

/// How the schedules were searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// Every enumerated schedule was ranked by the closed form.
    Exhaustive {
        /// The families' sizes.
        counts: Counts,
    },
    /// Too many schedules (or too many ranks) to enumerate: the dynamic program's optimum only.
    DynamicProgram {
        /// Why enumeration was skipped.
        reason: String,
        /// Divisors of `N` the program visited.
        divisors: usize,
    },
}

/// What [`rank_schedules`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// Number of ranks.
    pub nranks: u32,
    /// The model's parameters.
    pub params: Params,
    /// `b_opt` of eq. 5 for the parameters' `α_p / α_r` (None when `α_r = 0`).
    pub b_opt: Option<f64>,
    /// How the schedules were searched.
    pub method: Method,
    /// The best schedules, best first: by simulated time when simulated, else by the closed
    /// form (ties: fewer stages, then the schedule's text).
    pub rows: Vec<Ranked>,
    /// How many schedules were simulated.
    pub simulated: usize,
}

/// Options of [`rank_schedules`].
#[derive(Clone, Debug, PartialEq)]
pub struct RankOptions {
    /// How many rows to return.
    pub top: usize,
    /// Which families, and the cap beyond which only the dynamic program runs.
    pub enumerate: EnumerateOptions,
    /// Simulate the `pool` best schedules by the closed form on this model, and rank those by
    /// simulated time.
    pub simulate: Option<ModelSpec>,
    /// How many schedules to simulate (at least `top`).
    pub pool: usize,
    /// Element count and type of the simulated vectors (`count × size` must equal the
    /// parameters' bytes).
    pub count: u64,
    /// Element type.
    pub dtype: Dtype,
}

impl Default for RankOptions {
    fn default() -> Self {
        RankOptions {
            top: 10,
            enumerate: EnumerateOptions::default(),
            simulate: None,
            pool: 40,
            count: 1,
            dtype: Dtype::Float64,
        }
    }
}

/// Simulated completion time of recursive multiplying with `schedule` on `n` ranks.
pub fn simulate_schedule(
    schedule: &ScheduleString,
    n: u32,
    count: u64,
    dtype: Dtype,
    model: &ModelSpec,
) -> Result<Time, TuningError> {
    let spec = AllreduceSpec::new(n, count, dtype, ReduceOp::Sum);
    let s = allreduce::generate(&Algorithm::RecursiveMultiplying(schedule.clone()), &spec)?;
    Ok(sim::simulate(&s, model, &SimOptions::default())?.completion)
}

/// Ranks the schedules of `n` ranks: enumerates them when there are at most
/// `opts.enumerate.max_schedules` (and `n ≤` [`MAX_ENUMERATE_RANKS`]), keeping the `top` (or
/// `pool`) best by the closed form, else returns the dynamic program's optimum alone; then
/// optionally simulates and re-ranks.
pub fn rank_schedules(n: u32, p: &Params, opts: &RankOptions) -> Result<Ranking, TuningError> {
    p.validate()?;
    if n == 0 {
        return Err(bad("nranks", n, "an allreduce has at least 1 rank"));
    }
    if opts.top == 0 {
        return Err(bad("top", 0, "at least one row"));
    }
    let keep = if opts.simulate.is_some() {
        opts.pool.max(opts.top)
    } else {
        opts.top
    };
    let counts = if n <= MAX_ENUMERATE_RANKS {
        Some(count_schedules(n, &opts.enumerate)?)
    } else {
        None
    };
    let cap = opts.enumerate.max_schedules;
    let too_many = match counts {
        None => Some(format!(
            "{n} ranks is beyond the enumerator's {MAX_ENUMERATE_RANKS}"
        )),
        Some(c) if cap > 0 && c.total() > cap as u128 => Some(format!(
            "{} schedules ({} factored) exceed the cap of {cap}",
            c.total(),
            c.factored
        )),
        Some(c) if c.total() == 0 => Some("no family selected".to_string()),
        _ => None,
    };
    let mut rows: Vec<Ranked>;
    let method;
    if let Some(reason) = too_many {
        let o = optimal_factored(n, p)?;
        rows = vec![Ranked {
            schedule: o.schedule,
            predicted: o.time,
            simulated: None,
        }];
        method = Method::DynamicProgram {
            reason,
            divisors: o.divisors,
        };
    } else {
        // Keep the `keep` best by (time, stages, text) with a bounded max-heap.
        use std::collections::BinaryHeap;
        #[derive(PartialEq, Eq, PartialOrd, Ord)]
        struct Key(Time, usize, String);
        let mut heap: BinaryHeap<(Key, usize)> = BinaryHeap::new();
        let mut store: Vec<Option<ScheduleString>> = Vec::new();
        let counts = for_each_schedule(n, &opts.enumerate, &mut |s| {
            let t = clamp(s.stages().iter().map(|st| p.stage(st)).sum());
            let key = Key(t, s.len(), s.to_string());
            if heap.len() < keep {
                store.push(Some(s.clone()));
                heap.push((key, store.len() - 1));
            } else if let Some(top) = heap.peek() {
                if key < top.0 {
                    let (_, slot) = heap.pop().expect("non-empty");
                    store[slot] = Some(s.clone());
                    heap.push((key, slot));
                }
            }
        })?;
        let mut v = heap.into_vec();
        v.sort();
        rows = v
            .into_iter()
            .map(|(Key(t, _, _), slot)| Ranked {
                schedule: store[slot].take().expect("stored"),
                predicted: t,
                simulated: None,
            })
            .collect();
        method = Method::Exhaustive { counts };
    }
    let mut simulated = 0;
    if let Some(model) = &opts.simulate {
        let es = opts.dtype.size() as u64;
        if opts.count.checked_mul(es) != Some(p.bytes) {
            return Err(bad(
                "count",
                opts.count,
                format!(
                    "count x {} bytes must equal the model's vector of {} bytes",
                    es, p.bytes
                ),
            ));
        }
        for r in rows.iter_mut() {
            r.simulated = Some(simulate_schedule(
                &r.schedule,
                n,
                opts.count,
                opts.dtype,
                model,
            )?);
            simulated += 1;
        }
        rows.sort_by(|a, b| {
            (
                a.simulated,
                a.predicted,
                a.schedule.len(),
                a.schedule.to_string(),
            )
                .cmp(&(
                    b.simulated,
                    b.predicted,
                    b.schedule.len(),
                    b.schedule.to_string(),
                ))
        });
    }
    rows.truncate(opts.top);
    Ok(Ranking {
        nranks: n,
        params: *p,
        b_opt: (p.model.alpha_r > 0)
            .then(|| b_opt(p.model.alpha_p as f64 / p.model.alpha_r as f64).ok())
            .flatten(),
        method,
        rows,
        simulated,
    })
}

//! The verifier: matching, deadlock, buffer hazards and the data semantics of a schedule.
//!
//! [`verify`] checks, without simulating time:
//! 1. **Matching** (MPI rules): per channel (source, destination, tag) the k-th send meets the
//!    k-th receive, in each rank's local start order. Reported: unmatched sends and receives,
//!    size mismatches (a send larger than its receive is MPI_ERR_TRUNCATE; a data-semantic
//!    schedule must match lengths exactly; a smaller send into a larger receive is legal MPI and
//!    accepted for size-only schedules), and same-channel messages whose pairing depends on
//!    timing (unordered and different). Receives with `ANY_SOURCE` / `ANY_TAG` (imported GOAL)
//!    are matched in one canonical execution order, and the report says so.
//! 2. **Deadlock**, structurally: the wait-for graph of start and end events is peeled (see the
//!    `graph` module); what never fires is explained by unmatched ops or by a cycle, reported
//!    with the ranks and ops involved. First with eager delivery (any cycle is a deadlock),
//!    then with sends above `eager_limit` bytes synchronous (a new cycle means the schedule
//!    relies on MPI buffering: reported as unsafe), then, only as a note, with every send
//!    synchronous. Synchronous sends only add waits, so when neither the symbolic execution nor
//!    wildcard matching needs the eager run and the synchronous one completes, it is skipped.
//! 3. **Buffer races** within a rank (data-semantic schedules): overlapping accesses, one a
//!    write, not ordered by completion.
//! 4. **Semantics** (collectives `allreduce` and `alltoall`): symbolic execution along the eager run (an order
//!    consistent with dependencies and matching; the results of a race-free schedule do not
//!    depend on which); every output element must be the reduction of every rank's input
//!    element exactly once. Also
//!    reported: whether the reduction order is the same on every rank (bitwise-identical
//!    results, for a commutative floating-point op and for a non-commutative one), and whether
//!    it is the canonical order `x0 ⊕ x1 ⊕ … ⊕ x(N-1)` a non-commutative op needs. For an
//!    alltoall, every output element of rank `j` in block `i` must be exactly the element at
//!    the same offset of rank `i`'s input block `j` (a data check of every element, not a
//!    count of bytes): a symbolic value is a rank's input read at an offset, compared exactly.
//!
//! Schedules with only sizes (`Collective::None` or `Payload::Bytes` messages) get 1 and 2.
//!
//! Cost: linear in the number of ops for 1 and 2 (8 bytes of state an op, partner and pending
//! word side by side, plus, while matching, 8 bytes a send and 8 bytes a rank per thread, plus
//! the schedule; an op may have up to 2^29 dependencies), both on [`VerifyOptions::threads`]
//! threads with a report that does not depend on their number; 3 runs once per distinct
//! program shape; 4 keeps one interval map per
//! buffer and one node per distinct partial result (O(N log N) for recursive doubling, O(N²)
//! for the ring algorithms, whose N² partial results are all distinct). Measured (release, one
//! core, other work on the machine): the `recursive_doubling` generator on 2^20 ranks × 40
//! ops, matching and deadlock, 2.9–3.0 s and 0.69 GB peak including the schedule (on a slower
//! 2-core machine 3.2–4.5 s on one thread, 1.9–3.0 s on two, 0.41 GB); 2^20
//! distinct programs × 40 ops 11 s; with semantics, 4096 ranks in 0.04 s, ring rotation on
//! 1024 ranks (4M ops) in 0.5 s (`tests/integration/verify_scale.rs`, `docs/performance.md`).

mod graph;
mod halo;
mod matching;
mod order;
mod peel;
mod problem;
mod symbolic;

pub use halo::MAX_ELEMENTS as HALO_MAX_ELEMENTS;
pub use problem::{CycleStep, Problem, Unmatched, Wait};

use crate::schedule::{Rank, Schedule, ScheduleError};
use graph::{Engine, NoExec, Protocol};
use std::fmt;

/// What to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Check the data semantics (buffer races, symbolic execution) when the schedule has them.
    pub semantics: bool,
    /// Sends of at most this many bytes are delivered eagerly (buffered); larger ones are
    /// synchronous. A schedule that deadlocks only because of synchronous sends is unsound
    /// (it relies on buffering); one that needs the eager limit to run gets a note.
    pub eager_limit: u64,
    /// At most this many problems are listed (0: all); the rest are counted in
    /// [`Report::truncated`].
    pub max_problems: usize,
    /// Threads for matching and the structural peel (0: as many as the machine has cores for
    /// a schedule of [`PARALLEL_OPS`] ops or more, else 1). The report does not depend on it.
    pub threads: usize,
}

/// Ops from which [`VerifyOptions::threads`]` = 0` uses every core.
pub const PARALLEL_OPS: u64 = 1 << 20;

impl Default for VerifyOptions {
    fn default() -> VerifyOptions {
        VerifyOptions {
            semantics: true,
            eager_limit: 0,
            max_problems: 20,
            threads: 0,
        }
    }
}

/// Size of the verified schedule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Ranks.
    pub ranks: u32,
    /// Ops over all ranks.
    pub ops: u64,
    /// Matched messages.
    pub messages: u64,
    /// Bytes of matched messages.
    pub bytes: u64,
}

/// A reduction result at one element of one rank, rendered (`xq` is rank q's input element).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprAt {
    /// The rank.
    pub rank: Rank,
    /// The output element.
    pub element: u64,
    /// The value, rendered (truncated with `…` when long).
    pub expr: String,
}

/// Two ranks whose results at one element are computed in different orders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Rank 0's result.
    pub a: ExprAt,
    /// The first rank whose result differs.
    pub b: ExprAt,
}

/// What a correct result means, by collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Meaning {
    /// Allreduce: every input element reduced exactly once into every output.
    Reduction,
    /// Alltoall: every block where it belongs.
    Blocks,
    /// Halo exchange: every required halo value mirrors its neighbour's boundary site, every
    /// other element unchanged.
    Halo,
}

/// The data semantics of a collective schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Semantics {
    /// What `correct` means.
    pub meaning: Meaning,
    /// Whether the collective reduces (an allreduce), so that the order flags below say
    /// something. An alltoall combines nothing: every output element is one input element,
    /// identical whatever the order, and its order flags equal `correct`.
    pub reduces: bool,
    /// Allreduce: every output element of every rank is the reduction of every rank's input
    /// element at the same position, each exactly once. Alltoall: every rank `j`'s output
    /// block `i` is exactly rank `i`'s input block `j`, element by element.
    pub correct: bool,
    /// Every rank computes every element in the same order up to swapping the operands of `⊕`:
    /// bitwise-identical results for a commutative op such as floating-point sum (commutative
    /// but not associative).
    pub same_order_commutative: bool,
    /// Every rank computes every element by the same expression: identical results for any op.
    pub same_order_noncommutative: bool,
    /// Every result reads its operands in rank order `x0, x1, …, x(N-1)`: right for a
    /// non-commutative (associative) op.
    pub canonical_order: bool,
    /// Whether every correct result was confirmed by an exact walk of its leaves (beyond a
    /// budget of node visits, by a 128-bit fingerprint of the leaf multiset only).
    pub exact: bool,
    /// The first element where a rank's expression differs from rank 0's.
    pub noncommutative_difference: Option<Difference>,
    /// The first element where they differ even with operands of `⊕` in canonical order.
    pub commutative_difference: Option<Difference>,
    /// The first result not in canonical order.
    pub noncanonical: Option<ExprAt>,
}

impl Semantics {
    /// The semantics of a collective that moves data without combining it (alltoall, halo
    /// exchange): every element checked exactly, and the order flags equal `correct`.
    pub(crate) fn data_movement(meaning: Meaning, correct: bool) -> Semantics {
        Semantics {
            meaning,
            reduces: false,
            correct,
            same_order_commutative: correct,
            same_order_noncommutative: correct,
            canonical_order: correct,
            exact: true,
            noncommutative_difference: None,
            commutative_difference: None,
            noncanonical: None,
        }
    }
}

/// What [`verify`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The schedule's name ([`crate::schedule::Meta::name`]).
    pub name: String,
    /// Problems, most fundamental first: matching, deadlock, ambiguous matching, out-of-bounds
    /// slices, buffer races, uninitialized reads, wrong results.
    pub problems: Vec<Problem>,
    /// Problems found but not listed (beyond [`VerifyOptions::max_problems`]).
    pub truncated: usize,
    /// The data semantics, when checked (see [`Report::notes`] when not).
    pub semantics: Option<Semantics>,
    /// Sizes.
    pub stats: Stats,
    /// The eager limit the deadlock check assumed.
    pub eager_limit: u64,
    /// What was assumed or left unchecked.
    pub notes: Vec<String>,
}

impl Report {
    /// Whether no problem was found. Order flags of [`Semantics`] do not count: a correct but
    /// non-reproducible allreduce is sound.
    pub fn is_sound(&self) -> bool {
        self.problems.is_empty() && self.truncated == 0
    }
}

/// Categories of problems, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cat {
    Matching = 0,
    Deadlock = 1,
    Ambiguous = 2,
    Bounds = 3,
    Race = 4,
    Uninit = 5,
    Wrong = 6,
}

const CATS: usize = 7;

/// The categories, by index.
const CAT_ORDER: [Cat; CATS] = [
    Cat::Matching,
    Cat::Deadlock,
    Cat::Ambiguous,
    Cat::Bounds,
    Cat::Race,
    Cat::Uninit,
    Cat::Wrong,
];

/// Collects problems, at most `max` per category (0: all), counting the rest.
pub(crate) struct Collector {
    pub(crate) max: usize,
    lists: [Vec<Problem>; CATS],
    dropped: [usize; CATS],
}

impl Collector {
    pub(crate) fn new(max: usize) -> Collector {
        Collector {
            max,
            lists: Default::default(),
            dropped: [0; CATS],
        }
    }

    pub(crate) fn push(&mut self, cat: Cat, p: Problem) {
        let l = &mut self.lists[cat as usize];
        if self.max == 0 || l.len() < self.max {
            l.push(p);
        } else {
            self.dropped[cat as usize] += 1;
        }
    }

    /// Takes `other`'s problems as if they had been pushed here after this one's.
    pub(crate) fn absorb(&mut self, other: Collector) {
        for (k, l) in other.lists.into_iter().enumerate() {
            let cat = CAT_ORDER[k];
            for p in l {
                self.push(cat, p);
            }
            self.dropped[k] += other.dropped[k];
        }
    }

    fn any(&self, cat: Cat) -> bool {
        !self.lists[cat as usize].is_empty() || self.dropped[cat as usize] > 0
    }

    fn finish(self) -> (Vec<Problem>, usize) {
        let mut out = Vec::new();
        let mut truncated: usize = self.dropped.iter().sum();
        for mut l in self.lists {
            l.sort_by_key(|p| p.rank());
            for p in l {
                if self.max == 0 || out.len() < self.max {
                    out.push(p);
                } else {
                    truncated += 1;
                }
            }
        }
        (out, truncated)
    }
}

/// Bytes the verifier allocates per op for matching and deadlock: the op's partner and
/// pending word, and while matching a send's place (see the module documentation).
pub const VERIFY_BYTES_PER_OP: u64 = 16;
/// Bytes the verifier allocates per rank and thread while matching.
pub const VERIFY_BYTES_PER_RANK: u64 = 8;

/// [`verify`], refused before it allocates when its memory estimate exceeds the limit
/// ([`crate::resources::check`]), and stopped with [`ScheduleError::Interrupted`] on a request
/// to stop ([`crate::cancel`]).
pub fn try_verify(s: &Schedule, opts: &VerifyOptions) -> Result<Report, ScheduleError> {
    if opts.threads > crate::resources::MAX_THREADS {
        return Err(ScheduleError::BadParameter {
            name: "threads".into(),
            value: opts.threads.to_string(),
            reason: format!(
                "0 (every core) or 1 to {} threads",
                crate::resources::MAX_THREADS
            ),
        });
    }
    let threads = crate::barrier::threads(opts.threads, s.total_ops() >= PARALLEL_OPS) as u64;
    let estimate = s
        .total_ops()
        .saturating_mul(VERIFY_BYTES_PER_OP)
        .saturating_add(
            (s.nranks() as u64)
                .saturating_mul(VERIFY_BYTES_PER_RANK)
                .saturating_mul(threads),
        );
    crate::resources::check(
        || format!("verifying {} ops on {} ranks", s.total_ops(), s.nranks()),
        estimate,
        "verify fewer ranks",
    )?;
    crate::cancel::check()?;
    let report = verify(s, opts);
    // (A request to stop ends the verifier's loops early: what they left is no report.)
    crate::cancel::check()?;
    Ok(report)
}

/// Verifies a schedule. Never panics on a schedule the builder accepted; the work is linear in
/// the number of ops for matching and deadlock (see the module documentation).
pub fn verify(s: &Schedule, opts: &VerifyOptions) -> Report {
    let meta = s.meta();
    let mut col = Collector::new(opts.max_problems);
    let mut notes = Vec::new();
    let orders: Vec<order::ShapeOrder> = s.shapes().iter().map(order::topo).collect();
    let has_bytes = orders.iter().any(|o| o.has_bytes);
    let data = meta.collective.has_data() && !has_bytes;

    // 1. Matching and per-program checks.
    let threads = crate::barrier::threads(opts.threads, s.total_ops() >= PARALLEL_OPS);
    let links = matching::match_static(s, &orders, data, &mut col, threads);
    let by_shape = order::RanksByShape::new(s);
    order::check_shapes(
        s,
        &orders,
        &by_shape,
        data,
        &|r| links.is_dynamic(r),
        &mut col,
    );
    drop(by_shape);
    if links.any_dynamic {
        let n = (0..s.nranks()).filter(|&r| links.is_dynamic(r)).count();
        notes.push(format!(
            "{n} {} wildcard receives (ANY_SOURCE / ANY_TAG); they were matched in one canonical \
             order (breadth-first execution, MPI's earliest-posted rule), other timings may \
             match differently",
            if n == 1 { "rank posts" } else { "ranks post" }
        ));
    }

    // 2. Executions. The eager one is the canonical execution: it matches wildcard receives
    // and carries the symbolic execution. Synchronous sends only add waits, so when neither is
    // needed and the run with synchronous sends completes, the eager one would too.
    let max = opts.max_problems;
    let halo_spec = halo::spec_of(s);
    let halo_elements = halo_spec.map_or(0, |h| halo::elements(s, &h));
    let halo_fits = halo_elements <= halo::MAX_ELEMENTS;
    let mut sym = (opts.semantics && data && halo_spec.is_none()).then(|| symbolic::Sym::new(s));
    let mut hsym = halo_spec
        .filter(|_| opts.semantics && data && halo_fits)
        .map(|h| halo::HaloSym::new(s, h));
    let (min_send, max_send) = links.send_bytes;
    let any_dynamic = links.any_dynamic;
    let limit = Protocol::Limit(opts.eager_limit);
    let sync_differs = max_send > opts.eager_limit;
    let mut eng = Engine::new(s, links, threads);
    let mut hard_deadlock = false;
    let mut completes = true;
    let mut clean = true;
    let mut unfired = None;
    let mut done = false;
    if sym.is_none() && hsym.is_none() && !any_dynamic && sync_differs {
        eng.run(limit, &mut NoExec, false, data, &mut col);
        let b = eng.analyse(None, max);
        if !b.stuck {
            unfired = Some(b.unfired);
            done = true;
        }
    }
    if !done {
        match (sym.as_mut(), hsym.as_mut()) {
            (Some(x), _) => eng.run(Protocol::Eager, x, true, data, &mut col),
            (None, Some(x)) => eng.run(Protocol::Eager, x, true, data, &mut col),
            (None, None) => eng.run(Protocol::Eager, &mut NoExec, true, data, &mut col),
        }
        eng.finish_dynamic(&mut col);
        let a = eng.analyse(None, max);
        for &(r, i) in &a.dyn_unmatched {
            let what = s.rank(r).op(i as usize);
            col.push(
                Cat::Matching,
                Problem::UnmatchedRecv(Unmatched::wildcard(r, i, what, s.elem_size())),
            );
        }
        hard_deadlock = !a.cycles.is_empty() || a.more > 0;
        for cycle in a.cycles {
            col.push(
                Cat::Deadlock,
                Problem::Deadlock {
                    cycle,
                    needs_rendezvous: false,
                },
            );
        }
        col.dropped[Cat::Deadlock as usize] += a.more;
        completes = !a.stuck;
        let mut prev = a.unfired;
        // 3. Sends above the eager limit synchronous: new cycles rely on buffering.
        if sync_differs {
            eng.run(limit, &mut NoExec, false, data, &mut col);
            let b = eng.analyse(Some(&prev), max);
            clean = b.cycles.is_empty() && b.more == 0;
            for cycle in b.cycles {
                col.push(
                    Cat::Deadlock,
                    Problem::Deadlock {
                        cycle,
                        needs_rendezvous: true,
                    },
                );
            }
            col.dropped[Cat::Deadlock as usize] += b.more;
            prev = b.unfired;
        }
        unfired = Some(prev);
    }
    // Every send synchronous: a note only, when the eager limit is what makes it run.
    if clean && !hard_deadlock && min_send <= opts.eager_limit && min_send != u64::MAX {
        eng.run(Protocol::Sync, &mut NoExec, false, data, &mut col);
        let c = eng.analyse(unfired.as_deref(), 1);
        if let Some(cycle) = c.cycles.first() {
            let p = Problem::Deadlock {
                cycle: cycle.clone(),
                needs_rendezvous: true,
            };
            notes.push(format!(
                "runs only because sends of at most {} bytes are delivered eagerly; with every send \
                 synchronous: {p}",
                opts.eager_limit
            ));
        }
    }

    // 4. Semantics.
    let mut semantics = None;
    if !opts.semantics {
        notes.push("semantics not checked: disabled".into());
    } else if !meta.collective.has_data() {
        notes.push(
            "semantics not checked: the schedule has no collective (sizes only); matching and \
             deadlock were checked"
                .into(),
        );
    } else if has_bytes {
        notes.push(format!(
            "semantics not checked: the {} schedule has size-only messages",
            meta.collective.name()
        ));
    } else if halo_spec.is_some() && !halo_fits {
        notes.push(format!(
            "semantics not checked: the halo check tracks every element of every local array \
             and scratch buffer, {halo_elements} here, above its limit of {}; verify a smaller \
             lattice (the exchange's regions and messages are the same for every subdomain of \
             at least 2 sites per axis)",
            halo::MAX_ELEMENTS
        ));
    } else if sym.is_some() || hsym.is_some() {
        if col.any(Cat::Matching) || hard_deadlock || !completes {
            notes.push(
                "semantics not checked: the schedule does not run to completion with matched \
                 messages"
                    .into(),
            );
        } else {
            if col.any(Cat::Race) {
                notes.push(
                    "the schedule has buffer races: its results were computed in one execution \
                     order and depend on timing"
                        .into(),
                );
            }
            let (sem, wrong, more_wrong, uninit) = match (sym, hsym) {
                (Some(x), _) => x.finish(max),
                (None, Some(x)) => x.finish(max),
                (None, None) => unreachable!("one of the two symbolic executions ran"),
            };
            for p in uninit {
                col.push(Cat::Uninit, p);
            }
            for p in wrong {
                col.push(Cat::Wrong, p);
            }
            col.dropped[Cat::Wrong as usize] += more_wrong;
            if !sem.exact {
                notes.push(
                    "some results were confirmed by a 128-bit fingerprint of their leaf multiset \
                     only (exact-walk budget exhausted)"
                        .into(),
                );
            }
            semantics = Some(sem);
        }
    }

    let stats = Stats {
        ranks: s.nranks(),
        ops: s.total_ops(),
        messages: eng.links.messages,
        bytes: eng.links.bytes,
    };
    let (problems, truncated) = col.finish();
    Report {
        name: meta.name.clone(),
        problems,
        truncated,
        semantics,
        stats,
        eager_limit: opts.eager_limit,
        notes,
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

impl fmt::Display for Semantics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.reduces {
            return write!(
                f,
                "result: {}",
                match (self.correct, self.meaning) {
                    (false, _) => "WRONG",
                    (true, Meaning::Halo) => {
                        "correct on every rank (every halo value the exchange fills holds the \
                         boundary site it mirrors, every other element is unchanged)"
                    }
                    (true, _) => {
                        "correct on every rank (rank j's output block i is rank i's input block \
                         j, for every i and j)"
                    }
                }
            );
        }
        writeln!(
            f,
            "result: {}",
            if self.correct {
                "correct on every rank (every input element reduced exactly once)"
            } else {
                "WRONG"
            }
        )?;
        writeln!(
            f,
            "same reduction order on every rank: commutative op {}, non-commutative op {}",
            yes(self.same_order_commutative),
            yes(self.same_order_noncommutative)
        )?;
        if let Some(d) = &self.commutative_difference {
            writeln!(
                f,
                "  element {}: rank {} computes {}, rank {} computes {}",
                d.a.element, d.a.rank, d.a.expr, d.b.rank, d.b.expr
            )?;
        } else if let Some(d) = &self.noncommutative_difference {
            writeln!(
                f,
                "  element {}: rank {} computes {}, rank {} computes {} (equal up to operand order)",
                d.a.element, d.a.rank, d.a.expr, d.b.rank, d.b.expr
            )?;
        }
        write!(
            f,
            "canonical order x0 ⊕ x1 ⊕ … (right for a non-commutative op): {}",
            yes(self.canonical_order)
        )?;
        if let Some(e) = &self.noncanonical {
            write!(
                f,
                "\n  rank {} element {} computes {}",
                e.rank, e.element, e.expr
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "schedule '{}': {} ranks, {} ops, {} messages ({} bytes)",
            self.name, self.stats.ranks, self.stats.ops, self.stats.messages, self.stats.bytes
        )?;
        if self.is_sound() {
            writeln!(
                f,
                "SOUND: every message matched; no deadlock with eager delivery or with sends \
                 above {} bytes synchronous",
                self.eager_limit
            )?;
        } else {
            let total = self.problems.len() + self.truncated;
            writeln!(
                f,
                "NOT SOUND: {} {}",
                total,
                if total == 1 { "problem" } else { "problems" }
            )?;
            for p in &self.problems {
                writeln!(f, "  - {p}")?;
            }
            if self.truncated > 0 {
                writeln!(
                    f,
                    "  … and {} more (raise max_problems to list them)",
                    self.truncated
                )?;
            }
        }
        if let Some(sem) = &self.semantics {
            for line in sem.to_string().lines() {
                writeln!(f, "{line}")?;
            }
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! Long programs, where reachability is computed in column chunks (the chunk budget is
    //! tiny under `cfg(test)`) and ambiguity falls back to a depth-first search.
    use super::*;
    use crate::schedule::{Combine, Dtype, Meta, Program, ReduceOp, Slice, Slot};

    const N: u32 = 300;

    fn slice(slot: Slot, off: u64) -> Slice {
        Slice::new(slot, off, 1)
    }

    #[test]
    fn races_in_long_programs() {
        // A chain of N copies walking along the output, op k writing element k mod 8, each
        // requiring the previous one.
        let mut p = Program::new();
        let mut prev = p.copy(slice(Slot::Input, 0), slice(Slot::Output, 0));
        for k in 1..N {
            let c = p.copy(slice(Slot::Input, 0), slice(Slot::Output, k as u64 % 8));
            p.requires(c, prev);
            prev = c;
        }
        let mut racy = p.clone();
        racy.deps.retain(|&(a, _)| a != 6);
        racy.irequires(6, 5);
        let meta = Meta::allreduce(8, Dtype::Float64, ReduceOp::Sum, "long");
        let s = Schedule::from_programs(meta.clone(), [p]).unwrap();
        let rep = verify(&s, &VerifyOptions::default());
        assert!(
            rep.problems.iter().all(|p| p.kind() != "buffer-race"),
            "{rep}"
        );
        let s = Schedule::from_programs(meta, [racy]).unwrap();
        let rep = verify(&s, &VerifyOptions::default());
        let races: Vec<String> = rep
            .problems
            .iter()
            .filter(|p| p.kind() == "buffer-race")
            .map(|p| p.to_string())
            .collect();
        // Op 6 now only waits for op 5 to start, so nothing orders op 5's completion before
        // op 13, the next writer of out[5:6]; every other pair stays ordered.
        assert_eq!(
            races,
            [
                "buffer race: rank 0 ops 5 (copy in[0:1] to out[5:6]) and 13 (copy in[0:1] to \
              out[5:6]) both touch out[5:6], one of them writes, and neither completes before \
              the other starts"
            ]
        );
    }

    #[test]
    fn ambiguity_in_long_programs() {
        // N local ops, then two unordered sends on one channel with different data, far apart.
        let mut p = Program::new();
        let mut prev = p.compute(1);
        for _ in 1..N {
            let c = p.compute(1);
            p.requires(c, prev);
            prev = c;
        }
        let a = p.send(1, 0, slice(Slot::Input, 0));
        let b = p.send(1, 0, slice(Slot::Input, 1));
        p.requires(a, 3);
        p.requires(b, N - 1);
        let mut q = Program::new();
        let r0 = q.recv(0, 0, slice(Slot::Output, 0));
        let r1 = q.recv(0, 0, slice(Slot::Output, 1));
        q.requires(r1, r0);
        let s = Schedule::from_programs(Meta::sizes_only("long"), [p.clone(), q.clone()]).unwrap();
        let rep = verify(&s, &VerifyOptions::default());
        assert_eq!(
            rep.problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            [format!(
                "ambiguous matching: rank 0 ops {N} (send in[0:1] to 1 tag 0) and {} (send \
                 in[1:2] to 1 tag 0) use channel 0→1 tag 0 but neither is ordered before the \
                 other, so which message meets which receive depends on timing",
                N + 1
            )]
        );
        p.requires(b, a);
        let s = Schedule::from_programs(Meta::sizes_only("long"), [p, q]).unwrap();
        assert!(verify(&s, &VerifyOptions::default()).is_sound());
    }

    #[test]
    fn reduce_in_place_overlap_is_not_a_race_with_itself() {
        let mut p = Program::new();
        let c = p.copy(
            Slice::new(Slot::Input, 0, 4),
            Slice::new(Slot::Output, 0, 4),
        );
        let r = p.reduce(
            Slice::new(Slot::Output, 0, 2),
            Slice::new(Slot::Output, 1, 2),
            Combine::After,
        );
        p.requires(r, c);
        let meta = Meta::allreduce(4, Dtype::Float64, ReduceOp::Sum, "t");
        let s = Schedule::from_programs(meta, [p]).unwrap();
        let rep = verify(&s, &VerifyOptions::default());
        assert!(
            rep.problems.iter().all(|p| p.kind() != "buffer-race"),
            "{rep}"
        );
    }
}

//! The discrete-event engine that runs a schedule on a cost model.
//!
//! [`simulate`] runs a [`Schedule`] on the model a [`ModelSpec`] names; [`simulate_with`] on any
//! [`CostModel`]. The result is the completion time, each rank's finish time and, on request, a
//! [`Trace`] of every op and message (exported by [`write_chrome_trace`]).
//!
//! # What the engine does (for every model)
//! - **Dependencies**: an op is *ready* when every op it `requires` has completed and every op
//!   it `irequires` has started. The model says when a ready op is first tried
//!   ([`CostModel::ready_time`]); noise, if any, is added to that time.
//! - **Issue order**: ops freed by one event are queued by rank, then sends before receives
//!   before local ops, each group in the order the ops were freed (program order for ops freed
//!   together), or in the permutation a stock LogGOPSim's `std::sort` leaves beyond 16 ops when
//!   the model asks for it ([`CostModel::tie_order`]; `loggops:...,order=gcc`). Events at equal
//!   times run in the order they were first queued; an op that finds its resources busy is
//!   queued again at their free time and keeps its place. These are LogGOPSim's rules (its
//!   `STRICT_ORDER` stamps and `gnp_op_comp_func`; with `std::stable_sort` by default).
//! - **Matching** follows MPI: per rank a posted-receive queue and an unexpected-message queue,
//!   each searched in order; a receive takes the first message from its source (or any, with
//!   [`crate::schedule::ANY_SOURCE`]) with its tag (or any, [`crate::schedule::ANY_TAG`]), and a
//!   message the first posted receive that accepts it. Messages of one (source, destination,
//!   tag) channel arrive in the order they were sent in every model here, so they are not
//!   overtaken.
//! - A **fused receive-reduce** whose reduction costs more than 0 runs that reduction on its
//!   CPU once matched, like a reduce op.
//! - **Deterministic**: no hash maps are iterated, ties are broken by stamps, and noise is a
//!   pure function of `(seed, rank, op)` (and of the run, with [`SimOptions::calls`]).
//! - **Errors instead of hangs**: when nothing is left to happen and ops are unfinished, the
//!   result is [`SimError::Deadlock`] naming stuck ops and what they wait for; messages sent but
//!   never received give [`SimError::Unreceived`].
//!
//! # Cost
//! Memory is 1 byte per op (a dependency counter with flags; an op with 31 or more dependencies
//! counts them in a side table while it waits), 48 bytes per op of each distinct program shape
//! (what the event loop reads of an op, decoded once) and 4 per `requires` dependency in it, a
//! 24-byte event per op in flight, the model's clocks and a 48-byte record per rank (its first
//! op's index, last completion, shape and matching queues: one entry inline and the ends of
//! two lists), plus 16 bytes per queue entry beyond a rank's inline one; work is amortised O(1)
//! per event (a radix heap keyed on time), plus the matching queue searches. A receive posted
//! into empty queues, as most collectives' are, takes no event of its own: it waits in its
//! rank's record, in its event's place, until the rank's queues are next looked at.

mod cxxsort;
mod engine;
mod error;
mod host;
mod matching;
mod network;
mod pages;
mod queue;
mod trace;

pub use engine::{
    PARALLEL_OPS, SIM_BYTES_PER_OP, SIM_BYTES_PER_RANK, SIM_BYTES_PER_SHAPE_OP,
    SIM_TRACE_BYTES_PER_OP,
};
pub use error::{SimError, StuckOp, Wait};
pub use host::network_host;
pub use network::{
    simulate_on_network, LinkLoad, LinkTimeline, NetworkRun, NetworkSetup, TIMELINE_LINKS,
};
pub use trace::{write_chrome_trace, write_chrome_trace_with, CounterTrack, Trace, TraceKind};

use crate::model::{CostModel, ModelSpec, NoiseSpec};
use crate::schedule::Schedule;
use crate::units::Time;

pub(crate) use crate::hint::{prefetch, written_zeros};

/// Options of a simulation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimOptions {
    /// Record a [`Trace`] of every op and message.
    pub trace: bool,
    /// Random delay added before every op starts (`None` or [`NoiseSpec::None`]: no noise).
    pub noise: Option<NoiseSpec>,
    /// Seed of the noise draws.
    pub seed: u64,
    /// Runs of the schedule, back to back (0 and 1: once). Each rank starts its next run as
    /// soon as its own ops of the previous one have completed (no barrier between runs), as
    /// an application calling the collective in a loop does; messages of a run match by
    /// (source, tag) in order, so a rank one run ahead of its peers queues its messages as
    /// unexpected until they post the receives. A trace is recorded of one run only.
    pub calls: u32,
    /// Threads to run the ranks on: 0 (the default) for every core when the schedule has at
    /// least [`PARALLEL_OPS`] ops, else one. The results are the same for any number. A run
    /// that cannot be split (a trace, repeated calls, a send the model may complete only
    /// when matched, a model without lookahead or one that simulates a network) runs on one
    /// thread, and so does, again, a run the threads stop: a message due before their
    /// window's end, windows too small to pay for their barriers, or a run that does not
    /// finish (so that its error is one thread's). See `sim/engine/lanes.rs`.
    pub threads: usize,
}

/// The outcome of a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    /// When the last rank finished.
    pub completion: Time,
    /// When each rank finished (see the model for what "finished" means).
    pub rank_finish: Vec<Time>,
    /// Ops executed (over every run, with [`SimOptions::calls`]).
    pub ops: u64,
    /// Messages sent.
    pub messages: u64,
    /// Every op and message, if [`SimOptions::trace`] was set.
    pub trace: Option<Trace>,
}

/// Runs `s` on the model `model` names.
pub fn simulate(s: &Schedule, model: &ModelSpec, opts: &SimOptions) -> Result<SimResult, SimError> {
    simulate_on_threads(s, model, opts).map(|(r, _)| r)
}

/// [`simulate`], and the threads the run was simulated on: [`threads_for`] when the run was
/// split across them, 1 when one thread ran it (see [`SimOptions::threads`] for the runs that
/// cannot be split and those the threads stop). The result is the same either way; the count
/// is what a benchmark reports beside its time.
pub fn simulate_on_threads(
    s: &Schedule,
    model: &ModelSpec,
    opts: &SimOptions,
) -> Result<(SimResult, usize), SimError> {
    match model {
        ModelSpec::Postal(m) | ModelSpec::Pipelined(m) => run_on_threads(s, m, opts),
        ModelSpec::LogGops(m) => run_on_threads(s, m, opts),
    }
}

/// The threads a run of `s` is given when [`SimOptions::threads`] is `asked`: `asked` unless
/// it is 0; for 0, every core this process may run on when `s` has at least [`PARALLEL_OPS`]
/// ops, else one.
pub fn threads_for(s: &Schedule, asked: usize) -> usize {
    crate::barrier::threads(asked, s.total_ops() >= PARALLEL_OPS)
}

/// Runs `s` on any [`CostModel`], on several threads when [`SimOptions::threads`] allows.
pub fn simulate_with<M>(s: &Schedule, model: &M, opts: &SimOptions) -> Result<SimResult, SimError>
where
    M: CostModel + Sync,
    M::State: Send,
{
    run_on_threads(s, model, opts).map(|(r, _)| r)
}

/// [`simulate_with`], and the threads the run was simulated on.
fn run_on_threads<M>(
    s: &Schedule,
    model: &M,
    opts: &SimOptions,
) -> Result<(SimResult, usize), SimError>
where
    M: CostModel + Sync,
    M::State: Send,
{
    if opts.threads > crate::resources::MAX_THREADS {
        return Err(SimError::Threads {
            value: opts.threads,
            limit: crate::resources::MAX_THREADS,
        });
    }
    let threads = threads_for(s, opts.threads);
    if let Ok(r) = engine::lanes_run(
        s,
        model,
        opts,
        threads,
        engine::MIN_WINDOW_EVENTS,
        &mut engine::LaneStats::default(),
    ) {
        return Ok((r, threads));
    }
    // (Lanes stopped by a request to stop: the run stops too.)
    crate::cancel::check()?;
    engine::run(s, model, opts).map(|(r, _)| (r, 1))
}

/// Runs `s` on any [`CostModel`] and returns the model's final state too (what a network
/// model measured).
pub fn simulate_with_state<M: CostModel>(
    s: &Schedule,
    model: &M,
    opts: &SimOptions,
) -> Result<(SimResult, M::State), SimError> {
    engine::run(s, model, opts)
}

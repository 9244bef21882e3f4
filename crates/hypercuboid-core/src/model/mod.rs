//! Cost models (postal, pipelined postal, LogGOPS) behind one trait, and noise.
//!
//! The discrete-event engine ([`crate::sim`]) owns the schedule: dependencies, message matching,
//! the event queue. A [`CostModel`] owns the machine: when an op may start given what its CPU,
//! NIC or send port is doing, when a message arrives, what a reduction costs. The engine calls
//! the model at a handful of points (an op is ready, a send tries to issue, a message reaches
//! its receiver, a rendezvous send is matched, local work tries to run); the model keeps any
//! state it likes in [`CostModel::State`], which is how a model whose timing depends on global
//! state (a network with contention) fits the same trait: it sees every send and delivery in
//! simulated-time order and may answer [`Attempt::Retry`] to have the engine try again later.
//!
//! # Models
//! - [`PostalModel`] covers the postal model (α + nβ per message, one message at a time) and
//!   the pipelined postal model of Ruefenacht, Bull and Booth (Parallel Computing 2017,
//!   section 3), where α splits into α_r (issue cost, serialised at the sender) and α_p
//!   (latency that overlaps with later sends). Postal is the case α_p = 0, α_r = α.
//! - [`LogGopsModel`] reproduces LogGOPSim (Hoefler, Schneider and Lumsdaine, HPDC 2010).
//!
//! Their exact semantics are documented on each type. Specs such as
//! `postal:alpha=1us,beta=0.4ns` are parsed by [`parse_model`] into a [`ModelSpec`], which holds
//! these model types; noise specs such as `exp:mean=100ns` by [`parse_noise`] into a
//! [`NoiseSpec`]. Both read the one spec grammar ([`crate::spec`]) against one table each
//! ([`MODELS`], [`NOISES`]).

mod error;
mod file;
mod loggops;
mod network;
mod node;
mod node_spec;
mod noise;
mod postal;
mod spec;

pub use error::ModelError;
pub use file::{
    parse_model_file, parse_model_file_full, read_model_file, read_model_file_full, ModelFile,
};
pub use loggops::{LogGopsModel, LogGopsState};
pub use network::{
    Level, Mapping, MappingForm, MessageRecord, MessageTotals, NetState, NetworkModel, LEVELS,
    MAPPINGS,
};
pub use node::{NodeModel, NodeState, NodeTotals};
pub use node_spec::{node_host, parse_node, NodeMap, NodeSpec, NODES, NODE_MAPS};
pub use noise::{parse_noise, NoiseEntry, NoiseSpec, NOISES};
pub use postal::{PostalModel, PostalState};
pub use spec::{parse_model, ModelEntry, ModelSpec, MODELS};

use crate::schedule::Rank;
use crate::units::Time;

/// What an op asks of the machine, for [`CostModel::ready_time`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activity {
    /// A send (CPU and NIC / send port).
    Send,
    /// Posting a receive.
    Recv,
    /// Local work on a CPU: reduce, copy, compute, or the reduction of a fused receive.
    Local,
    /// A sleep, which occupies nothing.
    Sleep,
}

/// The op the engine asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSite {
    /// Its rank.
    pub rank: Rank,
    /// What it does.
    pub activity: Activity,
    /// Its CPU index.
    pub cpu: u16,
    /// Its NIC index.
    pub nic: u16,
}

/// A message, as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Its name for the run: the send op, as `rank << 32 | op index` ([`Message::id_of`]).
    pub id: u64,
    /// Sending rank.
    pub src: Rank,
    /// Receiving rank.
    pub dst: Rank,
    /// Payload size in bytes.
    pub bytes: u64,
    /// Tag.
    pub tag: i32,
    /// CPU index of the send op.
    pub cpu: u16,
    /// NIC index of the send op.
    pub nic: u16,
}

impl Message {
    /// The id of the message of send op `op` of `rank`.
    #[inline]
    pub fn id_of(rank: Rank, op: u32) -> u64 {
        (rank as u64) << 32 | op as u64
    }

    /// `(rank, op)` of a message id.
    #[inline]
    pub fn send_of(id: u64) -> (Rank, u32) {
        ((id >> 32) as Rank, id as u32)
    }
}

/// What a model that announces arrivals ([`CostModel::ANNOUNCES`]) tells the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Message `id` reaches its receiver at `time` (its first delivery attempt).
    Arrival { time: Time, id: u64 },
    /// The data of rendezvous message `id` has arrived at `time`: its send and receive
    /// complete (see [`CostModel::rendezvous_matched`]).
    RendezvousDone { time: Time, id: u64 },
}

impl Notice {
    /// When it happens.
    #[inline]
    pub fn time(&self) -> Time {
        match *self {
            Notice::Arrival { time, .. } | Notice::RendezvousDone { time, .. } => time,
        }
    }
}

/// The answer to "may this start now?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempt<T> {
    /// Not now: try again at this time (which must be later than the time asked about).
    Retry(Time),
    /// Started.
    Go(T),
}

/// When a send completes (releases the ops that `require` it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendCompletion {
    /// At this time (eager protocol, or postal models).
    At(Time),
    /// When the receiver matches it (rendezvous).
    OnMatch,
}

/// A send that was issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendIssue {
    /// When the message reaches the receiver (its first delivery attempt); `None` when the
    /// model announces it later ([`Notice::Arrival`]).
    pub arrival: Option<Time>,
    /// When the send completes.
    pub completion: SendCompletion,
    /// When the resources it took at the sender are free again (for traces).
    pub busy_until: Time,
}

/// Local work that started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalRun {
    /// When the op completes (releases the ops that `require` it).
    pub done: Time,
    /// When its CPU is free again (for traces).
    pub busy_until: Time,
}

impl LocalRun {
    /// Local work of `cost` at `t` on a CPU whose clock is `cpu`: it waits for the CPU and
    /// occupies it for `cost`; it completes at its start (`done_at_start`, LogGOPSim's way) or
    /// at its end (the postal models' way).
    #[inline]
    pub(crate) fn on_cpu(
        cpu: &mut Time,
        t: Time,
        cost: Time,
        done_at_start: bool,
    ) -> Attempt<Self> {
        if *cpu > t {
            return Attempt::Retry(*cpu);
        }
        let end = t.saturating_add(cost);
        *cpu = end;
        Attempt::Go(LocalRun {
            done: if done_at_start { t } else { end },
            busy_until: end,
        })
    }
}

/// How ops of one rank freed by the same event are ordered among themselves after being grouped
/// sends, receives, local ops (see [`crate::sim`]).
///
/// Only the order *within* a group is at stake, and it matters: of two sends freed together to
/// one peer with one tag, the one issued first is the one the peer's first matching receive
/// takes (MPI's non-overtaking rule), and the issue order of many sends decides when each
/// receiver gets its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TieOrder {
    /// In the order they were freed, which for ops freed together is the order the program
    /// lists them: what an MPI program posting them in a loop does, and what LogGOPSim does
    /// when built with `std::stable_sort`. The `loggops` spec's `order=program` (its default).
    #[default]
    Stable,
    /// As GCC libstdc++'s `std::sort` by type leaves them, which is what a stock LogGOPSim
    /// build does: the order they were freed up to 16 ops, a fixed permutation of it beyond
    /// (sends among sends, receives among receives). The `loggops` spec's `order=gcc`.
    Libstdcxx,
}

/// A cost model: the machine's side of a simulation. See the [module docs](self).
///
/// All times are absolute simulated times in picoseconds. The engine calls the methods in
/// simulated-time order (except that [`LogGopsModel`] may, as LogGOPSim does, date an op before
/// the current time; see there), and never calls `send`, `deliver` or `local` with a time
/// earlier than a `Retry` it was given for the same op.
pub trait CostModel {
    /// Mutable per-simulation state (resource clocks, network state).
    type State;

    /// A fresh state for `nranks` ranks with `ncpus` CPUs and `nnics` NICs each.
    fn new_state(&self, nranks: u32, ncpus: u16, nnics: u16) -> Self::State;

    /// The time at which an op whose dependencies were satisfied at `now` is first tried.
    fn ready_time(&self, st: &Self::State, now: Time, op: OpSite) -> Time;

    /// Tries to issue a send of `m` at `t`.
    fn send(&self, st: &mut Self::State, t: Time, m: &Message) -> Attempt<SendIssue>;

    /// Message `m` reached its receiver at `t`: tries to take it in. `Go` carries the time the
    /// receiver's CPU is busy until (for traces).
    fn deliver(&self, st: &mut Self::State, t: Time, m: &Message) -> Attempt<Time>;

    /// A rendezvous send `m` was matched at `t`, either when its receive was posted
    /// (`recv_site` is that receive) or when the message reached a posted receive (`recv_site`
    /// is `None`). True when the send and the receive complete at `t`; false when the model
    /// transfers the data now and announces when it is done ([`Notice::RendezvousDone`]).
    fn rendezvous_matched(
        &self,
        st: &mut Self::State,
        t: Time,
        m: &Message,
        recv_site: Option<OpSite>,
    ) -> bool;

    /// Tries to run local work costing `cost` on `site` at `t`.
    fn local(&self, st: &mut Self::State, t: Time, site: OpSite, cost: Time) -> Attempt<LocalRun>;

    /// The cost of reducing `bytes` bytes (a reduce op, or the reduction of a fused receive).
    fn reduce_cost(&self, bytes: u64) -> Time;

    /// The cost of copying `bytes` bytes.
    fn copy_cost(&self, bytes: u64) -> Time;

    /// The finish time reported for `rank`, given the completion time of its last op.
    fn rank_finish(&self, st: &Self::State, rank: Rank, last_done: Time) -> Time;

    /// A hint that an event on `rank` comes soon: a model with per-rank state may ask the
    /// processor to bring it into the cache. No effect on results (the default does nothing).
    #[inline]
    fn prefetch(&self, st: &Self::State, rank: Rank) {
        let _ = (st, rank);
    }

    /// For the engine's lanes (`sim/engine/lanes.rs`): `Some(d)` when every send of `bytes`
    /// completes without waiting for its receive ([`SendCompletion::At`]), whatever the
    /// clocks, and its message arrives at least `d` after the time of the event that starts
    /// it (then no event of a receiver completes an op of its sender, and a lane can run `d`
    /// ahead of the others). `None` (the default) when unknown.
    fn lookahead(&self, bytes: u64) -> Option<Time> {
        let _ = bytes;
        None
    }

    /// How ops freed together are ordered ([`TieOrder::Stable`] unless overridden).
    fn tie_order(&self) -> TieOrder {
        TieOrder::Stable
    }

    /// True for a model whose message timing depends on global state it simulates itself (a
    /// network): its sends may leave the arrival open ([`SendIssue::arrival`] `None`) and
    /// the engine calls [`CostModel::advance`] before every event.
    const ANNOUNCES: bool = false;

    /// Brings the model's own simulation up to `until` (`None`: up to its next notice, the
    /// engine having nothing else to do) and appends what happened at or before that time.
    /// Called in simulated-time order, before the engine handles its events at `until`, so
    /// that what the model starts at `until` (a message, a rendezvous transfer) is in time.
    fn advance(
        &self,
        st: &mut Self::State,
        until: Option<Time>,
        out: &mut Vec<Notice>,
    ) -> Result<(), crate::network::NetworkError> {
        let _ = (st, until, out);
        Ok(())
    }
}

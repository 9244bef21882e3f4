//! The postal and pipelined postal models.

use super::{
    Activity, Attempt, CostModel, LocalRun, Message, ModelError, OpSite, SendCompletion, SendIssue,
};
use crate::schedule::Rank;
use crate::units::{per_byte, ByteRate, Time};

/// The pipelined postal model (Ruefenacht, Bull and Booth, "Generalisation of recursive
/// doubling for AllReduce", Parallel Computing 2017, section 3); the postal model is the case
/// `alpha_p = 0`, `alpha_r = α`.
///
/// # Semantics
/// - Each rank has one **send port** (whatever the ops' `nic`) and one **CPU** per `cpu` index.
/// - An op is tried as soon as its dependencies are satisfied (plus its noise delay, if any).
/// - **Send** of `n` bytes: issues at `s`, the first time the port is free; the port is then
///   busy for `alpha_r + n·beta`; the send completes at `s + alpha_r + n·beta` and the message
///   arrives at `s + alpha_r + n·beta + alpha_p`. Messages between two ranks therefore arrive in
///   the order they were issued.
/// - **Receive**: posted when ready, occupies nothing, completes at `max(arrival, post time)`.
///   A fused receive-reduce then runs its reduction on its CPU like a reduce op.
/// - **Reduce** of `n` bytes: `n·gamma + delta` on its CPU, which runs one op at a time, in the
///   order ops become ready. **Copy** costs 0, **compute** its `time` (both on the CPU).
/// - **Sleep** delays its dependents by its `time` without occupying anything (engine-level).
/// - A rank finishes when its last op completes.
///
/// With these rules the closed forms of the paper hold exactly when nothing contends: recursive
/// doubling `(α + nβ + nγ)·log2 N`, a `b`-way send stage `alpha_p + b·alpha_r`, ring rotation
/// `(P−1)(α + nβ)`, binomial reduce + broadcast `2·log2 P·(α + nβ)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PostalModel {
    /// α_p, latency that overlaps with later sends (0 for the postal model).
    pub alpha_p: Time,
    /// α_r, per-message issue cost serialised at the sender (α for the postal model).
    pub alpha_r: Time,
    /// β, ps per byte sent.
    pub beta: f64,
    /// γ, ps per byte reduced.
    pub gamma: f64,
    /// δ, fixed cost per reduction.
    pub delta: Time,
}

impl PostalModel {
    /// The postal model: `alpha + n·beta` per message.
    pub fn postal(alpha: Time, beta: f64, gamma: f64, delta: Time) -> PostalModel {
        PostalModel {
            alpha_p: 0,
            alpha_r: alpha,
            beta,
            gamma,
            delta,
        }
    }

    /// Checks what a model built in code may get wrong (a parsed spec is always valid): the
    /// per-byte times `beta` and `gamma` must be finite numbers of picoseconds `>= 0`.
    pub fn validate(&self) -> Result<(), ModelError> {
        for (name, v) in [("beta", self.beta), ("gamma", self.gamma)] {
            if !v.is_finite() || v < 0.0 {
                return Err(ModelError::Parameter {
                    name,
                    value: v.to_string(),
                    reason: "a per-byte time is a finite number of picoseconds >= 0",
                });
            }
        }
        Ok(())
    }
}

/// Per-simulation state of [`PostalModel`]: when each send port and CPU is next free, a rank's
/// clocks adjacent (its port's, then its CPUs'), so that an event on a rank reads one line.
#[derive(Clone, Debug)]
pub struct PostalState {
    clk: Vec<Time>,
    stride: usize,
    /// The model's β, prepared for the messages' sizes.
    beta: ByteRate,
}

impl PostalState {
    /// Index in `clk` of `rank`'s send port.
    #[inline]
    fn port(&self, rank: Rank) -> usize {
        rank as usize * self.stride
    }

    /// Index in `clk` of `rank`'s CPU `cpu`.
    #[inline]
    fn cpu(&self, rank: Rank, cpu: u16) -> usize {
        rank as usize * self.stride + 1 + cpu as usize
    }
}

impl CostModel for PostalModel {
    type State = PostalState;

    fn new_state(&self, nranks: u32, ncpus: u16, _nnics: u16) -> PostalState {
        let stride = 1 + ncpus as usize;
        PostalState {
            // Read (ready times) before written: each page written once now.
            clk: crate::hint::written_zeros(nranks as usize * stride),
            stride,
            beta: ByteRate::new(self.beta),
        }
    }

    #[inline]
    fn ready_time(&self, _st: &PostalState, now: Time, _op: OpSite) -> Time {
        now
    }

    #[inline]
    fn send(&self, st: &mut PostalState, t: Time, m: &Message) -> Attempt<SendIssue> {
        let (i, beta) = (st.port(m.src), st.beta);
        let port = &mut st.clk[i];
        if *port > t {
            return Attempt::Retry(*port);
        }
        let end = t
            .saturating_add(self.alpha_r)
            .saturating_add(beta.of(m.bytes));
        *port = end;
        Attempt::Go(SendIssue {
            arrival: Some(end.saturating_add(self.alpha_p)),
            completion: SendCompletion::At(end),
            busy_until: end,
        })
    }

    #[inline]
    fn deliver(&self, _st: &mut PostalState, t: Time, _m: &Message) -> Attempt<Time> {
        Attempt::Go(t)
    }

    fn rendezvous_matched(
        &self,
        _: &mut PostalState,
        _: Time,
        _: &Message,
        _: Option<OpSite>,
    ) -> bool {
        true
    }

    #[inline]
    fn local(&self, st: &mut PostalState, t: Time, site: OpSite, cost: Time) -> Attempt<LocalRun> {
        debug_assert_ne!(site.activity, Activity::Sleep);
        let i = st.cpu(site.rank, site.cpu);
        LocalRun::on_cpu(&mut st.clk[i], t, cost, false)
    }

    #[inline]
    fn reduce_cost(&self, bytes: u64) -> Time {
        per_byte(bytes, self.gamma).saturating_add(self.delta)
    }

    #[inline]
    fn copy_cost(&self, _bytes: u64) -> Time {
        0
    }

    fn lookahead(&self, _bytes: u64) -> Option<Time> {
        // A send starts at its event's time (else it is retried later) and its message
        // arrives at least α_r + α_p after.
        Some(self.alpha_r.saturating_add(self.alpha_p))
    }

    fn rank_finish(&self, _st: &PostalState, _rank: Rank, last_done: Time) -> Time {
        last_done
    }

    #[inline]
    fn prefetch(&self, st: &PostalState, rank: Rank) {
        if let Some(c) = st.clk.get(st.port(rank)) {
            crate::hint::prefetch(c);
        }
    }
}

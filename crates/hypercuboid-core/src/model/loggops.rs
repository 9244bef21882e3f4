//! The LogGOPS model with the semantics of LogGOPSim.
//!
//! Source studied (not copied): spcl/LogGOPSim, `src/LogGOPSim/LogGOPSim.cpp` at commit
//! d5bb14a851e082ceb97ce27c47a4693ea5d28134 (the event loop: `OP_LOCOP`, `OP_SEND`, `OP_RECV`,
//! `OP_MSG` cases and the loop that queues newly executable ops), `src/LogGOPSim/Parser.hpp`
//! (dependency bookkeeping), `LogGOPSim.hpp` (queue order).

use super::{
    Activity, Attempt, CostModel, LocalRun, Message, OpSite, SendCompletion, SendIssue, TieOrder,
};
use crate::schedule::Rank;
use crate::units::{per_byte, ByteRate, Time};

/// LogGOPS as LogGOPSim simulates it (Hoefler, Schneider and Lumsdaine, "LogGOPSim —
/// Simulating Large-Scale Applications in the LogGOPS Model", HPDC 2010).
///
/// # Semantics (those of LogGOPSim's event loop)
/// Each rank has a CPU clock per `cpu` index (`o`, `O` are charged there) and, per `nic`
/// index, a send and a receive NIC clock (`g`, `G`).
/// - An op whose dependencies are satisfied is queued at the time its resources are next free:
///   a send at `max(cpu, nic_send)`, a receive or a local op at `cpu`. This may be earlier than
///   the current time (an op on an idle second CPU); LogGOPSim does the same. When it comes up,
///   a send or local op whose resources have become busy meanwhile is queued again at their
///   new free time, keeping its place among equal times.
/// - **Send** of `s` bytes at `t`: `cpu = t + o + (s−1)·O`, `nic_send = t + g + (s−1)·G`;
///   the message reaches the receiver at `t + o + L` (`t + o + L + R` when `s > S`: `R` is the
///   rendezvous handshake's cost, 0 by default as in LogGOPSim; and `R2` more when `s > S2`, a
///   second protocol switch such as a library's inline-send limit, none by default; see
///   [`LogGopsModel::switch_latency`]); with `X` > 0 the sender's receive clock is held until
///   `X` after that arrival. If `s ≤ S` (eager) the send completes at
///   `t`; otherwise (rendezvous) when the receiver matches it, and the sender's clocks are then
///   moved up to the match time.
/// - **Message** reaching its receiver at `t`: waits until the receiver's clocks
///   `cpu[send's cpu]` and `nic_recv[send's nic]` are free (LogGOPSim charges the receiver on
///   the *sender's* cpu and nic indices), then `cpu = t + o + max((s−1)·O, (s−1)·G)`,
///   `nic_recv = t + g + (s−1)·G`, and it matches the first posted receive; the receive
///   completes then. Otherwise it waits in the unexpected queue.
/// - **Receive** posted at `t`: charges nothing; if a matching message is in the unexpected
///   queue it completes at `t` (its `o` was charged on arrival), else it waits.
/// - **Local** op (compute, reduce, copy) costing `c` at `t`: `cpu = t + c`; it completes, as
///   LogGOPSim's `calc` does, at its *start* `t` — ops that require it on the same CPU still
///   wait for the CPU, ops on another CPU do not. Reductions cost `n·gamma + delta` (0 by
///   default); copies 0. A fused receive-reduce whose reduction costs more than 0 behaves as a
///   receive followed by such a local op; with cost 0 it is a plain receive.
/// - A rank's finish time is the latest of its CPU clocks (what LogGOPSim prints per host).
/// - `(s−1)` is taken as 0 for zero-byte messages (LogGOPSim computes it in unsigned 64-bit
///   arithmetic, which wraps and yields a time before the send).
///
/// The engine ([`crate::sim`]) supplies the rest of LogGOPSim's rules: ops freed by one event
/// are queued by rank, sends first, then receives, then local ops; matching is in posting order
/// with `ANY_SOURCE` / `ANY_TAG`.
///
/// # Issue order of ops freed together ([`LogGopsModel::order`])
/// Within the sends (and within the receives, and the local ops) that one event frees on a rank,
/// the default is **program order** ([`TieOrder::Stable`], spec `order=program`): the order the
/// program lists them, as an MPI program posting them in a loop issues them, and as LogGOPSim
/// built with `std::stable_sort` does. A stock LogGOPSim sorts them with `std::sort`, which
/// keeps that order up to 16 ops and permutes it beyond (an alltoall on 10 or more ranks frees
/// more); [`TieOrder::Libstdcxx`] (spec `order=gcc`) reproduces that permutation for
/// bit-for-bit agreement with a stock build. Program order is the default because the
/// permutation breaks MPI's non-overtaking rule: two sends to one peer with one tag may leave
/// in the opposite order to the program's, and the peer's receives then take the wrong message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogGopsModel {
    /// `L`, wire latency.
    pub latency: Time,
    /// `o`, CPU overhead per message.
    pub overhead: Time,
    /// `g`, NIC gap per message.
    pub gap: Time,
    /// `G`, NIC gap per byte (ps/byte).
    pub gap_per_byte: f64,
    /// `O`, CPU overhead per byte (ps/byte).
    pub overhead_per_byte: f64,
    /// `S`, largest eager message (bytes).
    pub eager_limit: u64,
    /// `R`, the extra latency of a message above `S` (the rendezvous handshake); 0 in
    /// LogGOPSim, measured by `hypercuboid calibrate` as the jump of its piecewise segments.
    pub rendezvous: Time,
    /// `S2`, a second protocol switch (bytes): a message above it takes `R2` more latency
    /// (below `S`, a library's inline or short-message limit). `u64::MAX` (the default): none.
    pub switch2: u64,
    /// `R2`, the extra latency of a message above `S2` (added to `R` above `S` too); 0 unless
    /// given, measured by `hypercuboid calibrate` as the jump of its segments at `S2`.
    pub switch2_latency: Time,
    /// `X`, how much longer a message waits at a rank that is sending at the same time: a
    /// send holds its rank's receive clock (the NIC's, on the send's `nic` index) until its
    /// own message has arrived (`t + o + L`, and `R`, `R2` at the switches) plus `X`. 0 (the
    /// default, as in LogGOPSim): no hold. Measured by `hypercuboid calibrate` as what an
    /// exchange step costs beyond a lone message.
    pub crossing: Time,
    /// γ, ps per reduced byte.
    pub gamma: f64,
    /// δ, fixed cost per reduction.
    pub delta: Time,
    /// CPU time per copied byte (ps/byte): a copy, or a pack or unpack of a halo region.
    pub copy: f64,
    /// How the ops one event frees on a rank are ordered among the sends, among the receives
    /// and among the local ops: program order ([`TieOrder::Stable`], the default) or a stock
    /// LogGOPSim's ([`TieOrder::Libstdcxx`]). See the [type docs](LogGopsModel).
    pub order: TieOrder,
}

impl Default for LogGopsModel {
    /// LogGOPSim's defaults (its `simulator.ggo`): L = 2500 ns, o = 1500 ns, g = 1000 ns,
    /// G = 6 ns, O = 0, S = 65535 bytes; no reduction cost (γ = δ = 0) nor copy cost; program order
    /// ([`TieOrder::Stable`]).
    fn default() -> Self {
        LogGopsModel {
            latency: 2_500_000,
            overhead: 1_500_000,
            gap: 1_000_000,
            gap_per_byte: 6_000.0,
            overhead_per_byte: 0.0,
            eager_limit: 65_535,
            rendezvous: 0,
            switch2: u64::MAX,
            switch2_latency: 0,
            crossing: 0,
            gamma: 0.0,
            delta: 0,
            copy: 0.0,
            order: TieOrder::Stable,
        }
    }
}

/// Per-simulation state of [`LogGopsModel`]: LogGOPSim's `nexto`, `nextgs`, `nextgr` clocks.
/// A rank's clocks are adjacent (its CPUs', then its NICs' send and receive clocks, padded to
/// 32 bytes with one CPU and one NIC), so that an event on a rank reads one cache line.
#[derive(Clone, Debug)]
pub struct LogGopsState {
    pub(super) clk: Vec<Time>,
    stride: usize,
    pub(super) ncpus: usize,
    nnics: usize,
    /// The model's `O` and `G`, prepared for the messages' sizes.
    o_rate: ByteRate,
    g_rate: ByteRate,
}

impl LogGopsState {
    fn new(m: &LogGopsModel, nranks: u32, ncpus: u16, nnics: u16) -> LogGopsState {
        let (ncpus, nnics) = (ncpus as usize, nnics as usize);
        let stride = match ncpus + 2 * nnics {
            3 => 4,
            k => k,
        };
        LogGopsState {
            // Read (ready times) before written: each page written once now.
            clk: crate::hint::written_zeros(nranks as usize * stride),
            stride,
            ncpus,
            nnics,
            o_rate: ByteRate::new(m.overhead_per_byte),
            g_rate: ByteRate::new(m.gap_per_byte),
        }
    }

    /// Index in `clk` of `rank`'s CPU `cpu`.
    #[inline]
    pub(super) fn c(&self, rank: Rank, cpu: u16) -> usize {
        rank as usize * self.stride + cpu as usize
    }

    /// Index in `clk` of `rank`'s NIC `nic`'s send clock.
    #[inline]
    pub(super) fn ns(&self, rank: Rank, nic: u16) -> usize {
        rank as usize * self.stride + self.ncpus + nic as usize
    }

    /// Index in `clk` of `rank`'s NIC `nic`'s receive clock.
    #[inline]
    pub(super) fn nr(&self, rank: Rank, nic: u16) -> usize {
        self.ns(rank, nic) + self.nnics
    }

    /// `rank`'s CPU clocks.
    pub(super) fn cpus(&self, rank: Rank) -> &[Time] {
        let lo = self.c(rank, 0);
        &self.clk[lo..lo + self.ncpus]
    }
}

/// A rank's finish time, LogGOPSim's way: the latest of its CPU clocks in `st` (and of its
/// last op's completion).
pub(super) fn finish_of(st: &LogGopsState, rank: Rank, last_done: Time) -> Time {
    st.cpus(rank)
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(last_done)
}

impl LogGopsModel {
    /// The latency a message of `bytes` takes beyond `L` at the protocol switches: `R` above
    /// `S` (the rendezvous handshake) plus `R2` above `S2`; 0 with the defaults.
    #[inline]
    pub fn switch_latency(&self, bytes: u64) -> Time {
        let r = if bytes > self.eager_limit {
            self.rendezvous
        } else {
            0
        };
        if bytes > self.switch2 {
            r.saturating_add(self.switch2_latency)
        } else {
            r
        }
    }

    /// With `X` > 0, holds the receive clock (on NIC `nic`) of `rank`, a message's sender,
    /// until `X` after `arrival`, the time its message reaches the receiver (see
    /// [`LogGopsModel::crossing`]).
    #[inline]
    pub(super) fn hold_receive(&self, st: &mut LogGopsState, rank: Rank, nic: u16, arrival: Time) {
        if self.crossing > 0 {
            let n = st.nr(rank, nic);
            st.clk[n] = st.clk[n].max(arrival.saturating_add(self.crossing));
        }
    }

    #[inline]
    fn per_extra_byte(bytes: u64, rate: ByteRate) -> Time {
        rate.of(bytes.saturating_sub(1))
    }

    /// The sender's costs of `m` at `t` where something else moves its bytes (a network, a
    /// node's flows): when its CPU and NIC are free, CPU `o + (s−1)·O`, NIC `g`;
    /// `Go(CPU end)`, or `Retry` when they are busy.
    pub(super) fn charge_send(&self, st: &mut LogGopsState, t: Time, m: &Message) -> Attempt<Time> {
        let cpu = self
            .overhead
            .saturating_add(per_byte(m.bytes.saturating_sub(1), self.overhead_per_byte));
        let (c, n) = (st.c(m.src, m.cpu), st.ns(m.src, m.nic));
        occupy(st, c, n, t, cpu, self.gap)
    }

    /// The receiver's costs of `m` arriving at `t` where something else moved its bytes: when
    /// its CPU and NIC (the send's indices) are free, CPU `o + bytes`, NIC `g + nic_bytes`;
    /// `Go(CPU end)`, or `Retry` when they are busy.
    pub(super) fn charge_arrival(
        &self,
        st: &mut LogGopsState,
        t: Time,
        m: &Message,
        bytes: Time,
        nic_bytes: Time,
    ) -> Attempt<Time> {
        let (c, n) = (st.c(m.dst, m.cpu), st.nr(m.dst, m.nic));
        let (cpu, nic) = (
            self.overhead.saturating_add(bytes),
            self.gap.saturating_add(nic_bytes),
        );
        occupy(st, c, n, t, cpu, nic)
    }
}

/// Occupies clocks `c` until `t + cpu` and `n` until `t + nic` when both are free at `t`:
/// `Go(t + cpu)`, else `Retry` at the time they are.
fn occupy(
    st: &mut LogGopsState,
    c: usize,
    n: usize,
    t: Time,
    cpu: Time,
    nic: Time,
) -> Attempt<Time> {
    let busy = st.clk[c].max(st.clk[n]);
    if busy > t {
        return Attempt::Retry(busy);
    }
    let cpu_end = t.saturating_add(cpu);
    st.clk[c] = cpu_end;
    st.clk[n] = t.saturating_add(nic);
    Attempt::Go(cpu_end)
}

impl CostModel for LogGopsModel {
    type State = LogGopsState;

    fn new_state(&self, nranks: u32, ncpus: u16, nnics: u16) -> LogGopsState {
        LogGopsState::new(self, nranks, ncpus, nnics)
    }

    #[inline]
    fn ready_time(&self, st: &LogGopsState, now: Time, op: OpSite) -> Time {
        match op.activity {
            Activity::Send => st.clk[st.c(op.rank, op.cpu)].max(st.clk[st.ns(op.rank, op.nic)]),
            Activity::Recv | Activity::Local => st.clk[st.c(op.rank, op.cpu)],
            Activity::Sleep => now,
        }
    }

    #[inline]
    fn send(&self, st: &mut LogGopsState, t: Time, m: &Message) -> Attempt<SendIssue> {
        let (c, n) = (st.c(m.src, m.cpu), st.ns(m.src, m.nic));
        let busy = st.clk[c].max(st.clk[n]);
        if busy > t {
            return Attempt::Retry(busy);
        }
        let cpu_end = t
            .saturating_add(self.overhead)
            .saturating_add(Self::per_extra_byte(m.bytes, st.o_rate));
        st.clk[c] = cpu_end;
        st.clk[n] = t
            .saturating_add(self.gap)
            .saturating_add(Self::per_extra_byte(m.bytes, st.g_rate));
        let eager = m.bytes <= self.eager_limit;
        let arrival = t
            .saturating_add(self.overhead)
            .saturating_add(self.latency)
            .saturating_add(self.switch_latency(m.bytes));
        self.hold_receive(st, m.src, m.nic, arrival);
        Attempt::Go(SendIssue {
            arrival: Some(arrival),
            completion: if eager {
                SendCompletion::At(t)
            } else {
                SendCompletion::OnMatch
            },
            busy_until: cpu_end,
        })
    }

    #[inline]
    fn deliver(&self, st: &mut LogGopsState, t: Time, m: &Message) -> Attempt<Time> {
        // The receiver is charged on the send op's cpu and nic indices (LogGOPSim OP_MSG).
        let (c, n) = (st.c(m.dst, m.cpu), st.nr(m.dst, m.nic));
        let busy = st.clk[c].max(st.clk[n]);
        if busy > t {
            return Attempt::Retry(busy);
        }
        let by_o = Self::per_extra_byte(m.bytes, st.o_rate);
        let by_g = Self::per_extra_byte(m.bytes, st.g_rate);
        let cpu_end = t
            .saturating_add(self.overhead)
            .saturating_add(by_o.max(by_g));
        st.clk[c] = cpu_end;
        st.clk[n] = t.saturating_add(self.gap).saturating_add(by_g);
        Attempt::Go(cpu_end)
    }

    fn rendezvous_matched(
        &self,
        st: &mut LogGopsState,
        t: Time,
        m: &Message,
        recv_site: Option<OpSite>,
    ) -> bool {
        // LogGOPSim moves the sender's clocks up to the match time, indexing them with the
        // receive's cpu/nic when the receive was posted after the message arrived (OP_RECV) and
        // with the send's when the message found the receive posted (OP_MSG).
        let (cpu, nic) = match recv_site {
            Some(site) => (site.cpu, site.nic),
            None => (m.cpu, m.nic),
        };
        if (cpu as usize) < st.ncpus {
            let c = st.c(m.src, cpu);
            st.clk[c] = st.clk[c].max(t);
        }
        if (nic as usize) < st.nnics {
            let n = st.ns(m.src, nic);
            st.clk[n] = st.clk[n].max(t);
        }
        true
    }

    #[inline]
    fn local(&self, st: &mut LogGopsState, t: Time, site: OpSite, cost: Time) -> Attempt<LocalRun> {
        let c = st.c(site.rank, site.cpu);
        LocalRun::on_cpu(&mut st.clk[c], t, cost, true)
    }

    #[inline]
    fn reduce_cost(&self, bytes: u64) -> Time {
        per_byte(bytes, self.gamma).saturating_add(self.delta)
    }

    #[inline]
    fn copy_cost(&self, bytes: u64) -> Time {
        per_byte(bytes, self.copy)
    }

    fn lookahead(&self, bytes: u64) -> Option<Time> {
        // A send starts at its event's time (else it is retried later) and its message
        // arrives o + L after.
        (bytes <= self.eager_limit).then(|| self.overhead.saturating_add(self.latency))
    }

    fn rank_finish(&self, st: &LogGopsState, rank: Rank, last_done: Time) -> Time {
        finish_of(st, rank, last_done)
    }

    #[inline]
    fn prefetch(&self, st: &LogGopsState, rank: Rank) {
        if let Some(c) = st.clk.get(st.c(rank, 0)) {
            crate::hint::prefetch(c);
        }
    }

    fn tie_order(&self) -> TieOrder {
        self.order
    }
}

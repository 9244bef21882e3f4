//! What each event does: an op executes, a message arrives, a send and a receive match, an op finishes.

use super::*;

impl<M: CostModel, const P: bool> Engine<'_, M, P> {
    /// A FINISH event: the op completes; for a rendezvous send whose transfer the model
    /// announced done, its receive completes too.
    pub(super) fn finish_op(&mut self, e: Event) {
        let (rank, i, t) = (e.rank, e.what & OP_MASK, e.time);
        let f = self.off(rank) + i as usize;
        if self.state[f] & RDV != 0 {
            self.state[f] &= !RDV;
            self.rdv -= 1;
            self.complete(rank, i, t);
            if let Some((dst, recv_op)) = self.transfers.remove(&Message::id_of(rank, i)) {
                self.recv_done(dst, recv_op, t);
            }
            return;
        }
        self.complete(rank, i, t);
    }

    #[inline]
    pub(super) fn message(&self, src: Rank, i: u32) -> Message {
        let o = self.info(src, i);
        debug_assert_eq!(o.kind, K_SEND, "message of a non-send op");
        Message {
            id: Message::id_of(src, i),
            src,
            dst: self.peer(src, i),
            bytes: o.bytes,
            tag: o.tag,
            cpu: o.cpu,
            nic: o.nic,
        }
    }

    pub(super) fn exec(&mut self, e: Event) {
        let (rank, i, t) = (e.rank, e.what & OP_MASK, e.time);
        let o = *self.info(rank, i);
        match o.kind {
            K_SEND => {
                let m = self.message(rank, i);
                let lm = Message {
                    src: self.local(rank),
                    ..m
                };
                match self.m.send(&mut self.st, t, &lm) {
                    Attempt::Retry(t2) => self.requeue(e, t2),
                    Attempt::Go(issue) => {
                        self.start(rank, i, t, issue.busy_until);
                        self.messages += 1;
                        if let Some(tr) = &mut self.trace {
                            let row = tr.msgs.msg_src.len() as u32;
                            tr.msg_row[self.s.op_offset(rank) as usize + i as usize] = row;
                            let mt = &mut tr.msgs;
                            mt.msg_src.push(rank);
                            mt.msg_dst.push(m.dst);
                            mt.msg_src_op.push(i);
                            mt.msg_dst_op.push(u32::MAX);
                            mt.msg_start.push(t);
                            mt.msg_arrival.push(issue.arrival.unwrap_or(Time::MAX));
                            mt.msg_bytes.push(m.bytes);
                        }
                        if let Some(arrival) = issue.arrival {
                            self.push_new(arrival, rank, i, MSG);
                        }
                        match issue.completion {
                            SendCompletion::At(d) if d <= t => self.complete(rank, i, t),
                            SendCompletion::At(d) => self.push_new(d, rank, i, FINISH),
                            SendCompletion::OnMatch => {
                                let f = self.off(rank) + i as usize;
                                self.state[f] |= RDV;
                                self.rdv += 1;
                            }
                        }
                    }
                }
            }
            K_RECV => {
                self.settle(rank, false, None);
                let peer = self.peer(rank, i);
                self.start(rank, i, t, t);
                let lo = self.lo;
                match self.mq.take(
                    &mut self.ranks[(rank - lo) as usize].ends,
                    Queue::Unexpected,
                    peer,
                    o.tag,
                ) {
                    Some((src, _, send_op)) => {
                        let site = OpSite {
                            rank,
                            activity: Activity::Recv,
                            cpu: o.cpu,
                            nic: o.nic,
                        };
                        self.matched(src, send_op, rank, i, t, Some(site));
                    }
                    None => self.mq.push(
                        &mut self.ranks[(rank - lo) as usize].ends,
                        Queue::Posted,
                        peer,
                        o.tag,
                        i,
                    ),
                }
            }
            K_LOCAL => {
                if let Some(run) = self.try_local(e, &o) {
                    self.start(rank, i, t, run.busy_until);
                    self.done_at(rank, i, t, run.done);
                }
            }
            _ => {
                debug_assert_eq!(o.kind, K_SLEEP);
                let d = t.saturating_add(o.cost);
                self.start(rank, i, t, d);
                self.done_at(rank, i, t, d);
            }
        }
    }

    /// The message of send `i` of `e.rank` reaches its receiver.
    pub(super) fn arrive(&mut self, e: Event) {
        let (src, i, t) = (e.rank, e.what & OP_MASK, e.time);
        let m = self.message(src, i);
        let lm = Message {
            dst: self.local(m.dst),
            ..m
        };
        let lo = self.lo;
        match self.m.deliver(&mut self.st, t, &lm) {
            Attempt::Retry(t2) => self.requeue(e, t2),
            Attempt::Go(busy_until) => {
                match self.settle(m.dst, false, Some((src, m.tag))).or_else(|| {
                    self.mq
                        .take(
                            &mut self.ranks[(m.dst - lo) as usize].ends,
                            Queue::Posted,
                            src,
                            m.tag,
                        )
                        .map(|(_, _, op)| op)
                }) {
                    Some(recv_op) => {
                        if let Some(tr) = &mut self.trace {
                            let f = self.s.op_offset(m.dst) as usize + recv_op as usize;
                            tr.end[f] = tr.end[f].max(busy_until);
                        }
                        self.matched(src, i, m.dst, recv_op, t, None);
                    }
                    None => self.mq.push(
                        &mut self.ranks[(m.dst - lo) as usize].ends,
                        Queue::Unexpected,
                        src,
                        m.tag,
                        i,
                    ),
                }
            }
        }
    }

    /// Send `send_op` of `src` matched receive `recv_op` of `dst` at `t`: a rendezvous send
    /// completes (first, as in LogGOPSim), then the receive, after its reduction if it is a
    /// fused receive-reduce whose reduction costs something.
    pub(super) fn matched(
        &mut self,
        src: Rank,
        send_op: u32,
        dst: Rank,
        recv_op: u32,
        t: Time,
        recv_site: Option<OpSite>,
    ) {
        // (A lane does not hold every sender: it runs no trace and no rendezvous.)
        if !P {
            if let Some(tr) = &mut self.trace {
                let row = tr.msg_row[self.s.op_offset(src) as usize + send_op as usize];
                if row != u32::MAX {
                    tr.msgs.msg_dst_op[row as usize] = recv_op;
                }
            }
        }
        // (Without rendezvous sends under way, the sender's op state, a cache miss, is not read.)
        if !P && self.rdv > 0 && self.state[self.off(src) + send_op as usize] & RDV != 0 {
            let sf = self.off(src) + send_op as usize;
            let m = self.message(src, send_op);
            if self.m.rendezvous_matched(&mut self.st, t, &m, recv_site) {
                self.state[sf] &= !RDV;
                self.rdv -= 1;
                self.complete(src, send_op, t);
            } else {
                // The model transfers the data and announces when it is done.
                self.transfers.insert(m.id, (dst, recv_op));
                return;
            }
        }
        self.recv_done(dst, recv_op, t);
    }

    /// Receive `recv_op` of `dst` has its data at `t`: it completes, after its reduction if
    /// it is a fused receive-reduce whose reduction costs something.
    #[inline]
    pub(super) fn recv_done(&mut self, dst: Rank, recv_op: u32, t: Time) {
        if self.info(dst, recv_op).cost > 0 {
            self.freed.push(Freed {
                rank: dst,
                op: recv_op,
                class: CLASS_LOCAL,
                tail: true,
            });
        } else {
            self.complete(dst, recv_op, t);
        }
    }

    /// The reduction of a fused receive-reduce runs on the receive's CPU.
    pub(super) fn tail(&mut self, e: Event) {
        let (rank, i, t) = (e.rank, e.what & OP_MASK, e.time);
        let o = *self.info(rank, i);
        if let Some(run) = self.try_local(e, &o) {
            if let Some(tr) = &mut self.trace {
                let f = self.s.op_offset(rank) as usize + i as usize;
                tr.end[f] = tr.end[f].max(run.busy_until);
            }
            self.done_at(rank, i, t, run.done);
        }
    }

    /// Tries the local work `o` of event `e` on its CPU: what ran, or `None` when the CPU is
    /// busy and the event waits for it ([`super::wait`]).
    #[inline]
    fn try_local(&mut self, e: Event, o: &OpInfo) -> Option<LocalRun> {
        let site = OpSite {
            rank: self.local(e.rank),
            activity: Activity::Local,
            cpu: o.cpu,
            nic: o.nic,
        };
        match self.m.local(&mut self.st, e.time, site, o.cost) {
            Attempt::Retry(t2) => {
                self.wait_cpu(e, o.cpu, t2);
                None
            }
            Attempt::Go(run) => {
                self.went_cpu(&e, o.cpu, run.busy_until);
                Some(run)
            }
        }
    }

    /// Op `i` of `rank`, started at `t`, completes at `done`: now, or by a FINISH event.
    #[inline]
    fn done_at(&mut self, rank: Rank, i: u32, t: Time, done: Time) {
        if done <= t {
            self.complete(rank, i, t);
        } else {
            self.push_new(done, rank, i, FINISH);
        }
    }
}

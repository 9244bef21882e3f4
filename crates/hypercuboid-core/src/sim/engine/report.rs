//! The end of a run: its result, or why it could not finish.

use super::*;

impl<M: CostModel, const P: bool> Engine<'_, M, P> {
    pub(super) fn finish(mut self) -> Result<(SimResult, M::State), SimError> {
        let total = self.s.total_ops();
        if self.done_ops < total * self.calls as u64 {
            // The events of receives still deferred would have run by now.
            for r in 0..self.s.nranks() {
                self.settle(r, true, None);
            }
            return Err(self.deadlock());
        }
        if self.mq.live() > 0 {
            let mut examples = Vec::new();
            let mut messages = 0;
            for r in 0..self.s.nranks() {
                for (src, tag, op) in self
                    .mq
                    .entries(&self.ranks[r as usize].ends, Queue::Unexpected)
                {
                    messages += 1;
                    if examples.len() < 4 {
                        examples.push((src, op, r, tag));
                    }
                }
            }
            return Err(SimError::Unreceived { messages, examples });
        }
        let nranks = self.s.nranks();
        let rank_finish: Vec<Time> = (0..nranks)
            .map(|r| {
                self.m
                    .rank_finish(&self.st, r, self.ranks[r as usize].last_done)
            })
            .collect();
        let completion = rank_finish.iter().copied().max().unwrap_or(0);
        if completion == Time::MAX {
            return Err(SimError::TimeOverflow);
        }
        let trace = self.trace.map(|tb| {
            let mut t = tb.msgs;
            let n = total as usize;
            t.op_rank.reserve(n);
            t.op_index.reserve(n);
            t.op_kind.reserve(n);
            t.op_cpu.reserve(n);
            for r in 0..nranks {
                let v = self.s.rank(r);
                for i in 0..v.len() {
                    let op = &v.shape.ops[i];
                    t.op_rank.push(r);
                    t.op_index.push(i as u32);
                    t.op_kind.push(TraceKind::of(&op.kind));
                    t.op_cpu.push(op.cpu);
                }
            }
            t.op_start = tb.start;
            t.op_end = tb.end;
            t
        });
        Ok((
            SimResult {
                completion,
                rank_finish,
                ops: self.done_ops,
                messages: self.messages,
                trace,
            },
            self.st,
        ))
    }

    pub(super) fn deadlock(&self) -> SimError {
        let total = self.s.total_ops();
        let mut stuck = Vec::new();
        let mut stuck_ranks = 0;
        for r in 0..self.s.nranks() {
            let off = self.off(r);
            let v = self.s.rank(r);
            let first = (0..v.len()).find(|&i| self.state[off + i] & DONE == 0);
            let Some(i) = first else { continue };
            stuck_ranks += 1;
            if stuck.len() >= 4 {
                continue;
            }
            let w = self.state[off + i];
            let op = v.op(i);
            let wait = if w & STARTED != 0 {
                match op.kind {
                    OpKind::Recv { peer, tag, .. } => Wait::Message { from: peer, tag },
                    OpKind::Send { peer, tag, .. } => Wait::Receiver { to: peer, tag },
                    // Local ops and sleeps always complete once started.
                    _ => continue,
                }
            } else {
                let blocking = v.deps(i).iter().find(|d| {
                    let dw = self.state[off + d.on as usize];
                    match d.kind {
                        DepKind::Requires => dw & DONE == 0,
                        DepKind::IRequires => dw & STARTED == 0,
                    }
                });
                match blocking {
                    Some(d) => Wait::Dependency {
                        on: d.on,
                        kind: d.kind,
                    },
                    None => continue,
                }
            };
            stuck.push(StuckOp {
                rank: r,
                op: i as u32,
                text: op.to_string(),
                wait,
            });
        }
        SimError::Deadlock {
            unfinished_ops: total * u64::from(self.calls) - self.done_ops,
            stuck_ranks,
            stuck,
        }
    }
}

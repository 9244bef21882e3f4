//! Dependency release: the ops an event frees, in issue order, and receives deferred until something looks.

use super::*;

impl<M: CostModel, const P: bool> Engine<'_, M, P> {
    /// Queues the ops freed by the last event: by rank, then sends, receives, local ops, each
    /// in the order they were freed (LogGOPSim: `check_hosts` sorted, then `gnp_op_comp_func`).
    #[inline(always)]
    pub(super) fn flush(&mut self, now: Time) {
        if !self.freed.is_empty() {
            self.flush_freed(now);
        }
    }

    /// [`Engine::flush`] when some op was freed (out of line: an event that frees nothing,
    /// a third of them in recursive doubling, pays no call).
    #[inline(never)]
    pub(super) fn flush_freed(&mut self, now: Time) {
        let in_order = || {
            self.freed
                .windows(2)
                .all(|w| (w[0].rank, w[0].class) <= (w[1].rank, w[1].class))
        };
        // Already in issue order: a stable sort would not move anything, nor would libstdc++'s
        // `std::sort` up to 16 ops (its insertion sort; beyond, it may permute equal ops).
        let kept = match self.tie_order {
            TieOrder::Stable => true,
            TieOrder::Libstdcxx => self.freed.len() <= 16,
        };
        if self.freed.len() > 1 && !(kept && in_order()) {
            // By rank (stable: each rank's ops stay in the order they were freed), then each
            // rank's run by class.
            self.freed.sort_by_key(|f| f.rank);
            let mut lo = 0;
            while lo < self.freed.len() {
                let r = self.freed[lo].rank;
                let hi = lo + self.freed[lo..].partition_point(|f| f.rank == r);
                let run = &mut self.freed[lo..hi];
                match self.tie_order {
                    TieOrder::Stable => run.sort_by_key(|f| f.class),
                    TieOrder::Libstdcxx => {
                        cxxsort::sort(run, &|a: &Freed, b: &Freed| a.class < b.class)
                    }
                }
                lo = hi;
            }
        }
        for k in 0..self.freed.len() {
            let f = self.freed[k];
            let o = *self.info(f.rank, f.op);
            let activity = if f.tail {
                Activity::Local
            } else {
                o.activity()
            };
            let site = OpSite {
                rank: self.local(f.rank),
                activity,
                cpu: o.cpu,
                nic: o.nic,
            };
            let mut t = self.m.ready_time(&self.st, now, site);
            if !f.tail {
                if let Some(n) = &self.noise {
                    // each run of a repeated schedule draws its own delays (run 1: the seed's)
                    let run = match self.calls {
                        1 => 0,
                        _ => self.run_of[f.rank as usize] as u64 - 1,
                    };
                    let seed = self
                        .seed
                        .wrapping_add(run.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                    t = t.max(now).saturating_add(n.delay(seed, f.rank, f.op));
                }
            }
            if self.defer
                && o.deferrable()
                && !f.tail
                && t >= self.now()
                && self.rec(f.rank).ends.is_empty()
            {
                // Its event would post it into empty queues: kept in its rank's record
                // instead, with the event's time and stamp, until something looks.
                let ts = if P {
                    self.lane_defer()
                } else {
                    self.ts += 1;
                    self.ts - 1
                };
                self.rec_mut(f.rank).ends.defer(f.op, t, ts);
                continue;
            }
            self.push_new(t, f.rank, f.op, if f.tail { TAIL } else { EXEC });
        }
        self.freed.clear();
    }

    /// Settles the receive deferred on `rank`, if any, before the current event reads or
    /// changes `rank`'s matching queues (a message reaching `rank`, another receive of `rank`
    /// posted) or the run ends (`at_end`).
    ///
    /// A receive whose dependencies are satisfied is posted by an event at its ready time.
    /// When its rank's queues are empty as it becomes ready, and nothing `irequires` it, that
    /// event does nothing anyone sees but post it into empty queues, unless a message reaches
    /// the rank first; so `flush` keeps the receive in the rank's record instead, with the
    /// event's time and stamp (`Ends::defer`), and queues nothing. Here, at the next event
    /// that concerns the rank's queues, either that event would already have run (the event
    /// queue has passed its time and stamp: [`EventQueue::passed`]), and the receive is
    /// posted as it would have been, into the queues it would have found (empty: nothing
    /// touched them meanwhile), or it would not, and the event is queued now with its time
    /// and stamp, to run in its place. Either way every event runs in the same order, on the
    /// same state, as without deferral; recursive doubling's receives, posted before their
    /// messages arrive, take no event of their own.
    ///
    /// With `msg`, the `(source, tag)` of a message reaching `rank` now: when the deferred
    /// receive was posted and takes that message, it is not queued, and its op is returned
    /// (what the message's search of the posted queue would return).
    #[inline]
    pub(super) fn settle(
        &mut self,
        rank: Rank,
        at_end: bool,
        msg: Option<(Rank, i32)>,
    ) -> Option<u32> {
        let (op, time, ts) = self.rec_mut(rank).ends.take_deferred()?;
        let ts = if P { self.lane_settled(ts, time) } else { ts };
        if at_end || self.passed(time, ts) {
            self.start(rank, op, time, time);
            let (peer, tag) = (self.peer(rank, op), self.info(rank, op).tag);
            if let Some((src, msg_tag)) = msg {
                if agree(peer, tag, src, msg_tag) {
                    return Some(op);
                }
            }
            let lo = self.lo;
            self.mq.push(
                &mut self.ranks[(rank - lo) as usize].ends,
                Queue::Posted,
                peer,
                tag,
                op,
            );
        } else {
            let e = Event {
                time,
                ts,
                rank,
                what: op | EXEC << OP_BITS,
            };
            if P {
                self.lane_push(e);
            } else {
                self.q.push(e);
            }
        }
        None
    }

    #[inline(always)]
    pub(super) fn dec(&mut self, rank: Rank, off: usize, si: usize, j: u32) {
        let o = &self.info[si].ops[j as usize];
        let (ndeps, class) = (o.ndeps, o.class());
        let f = off + j as usize;
        let free = if ndeps < COUNT as u32 {
            let w = &mut self.state[f];
            *w += 1;
            (*w & COUNT) as u32 == ndeps
        } else {
            self.dec_many(f, ndeps)
        };
        if free {
            self.freed.push(Freed {
                rank,
                op: j,
                class,
                tail: false,
            });
        }
    }

    /// [`Engine::dec`] of an op with `COUNT` or more dependencies (counted in `many`): true
    /// when this was its last.
    #[cold]
    #[inline(never)]
    pub(super) fn dec_many(&mut self, f: usize, ndeps: u32) -> bool {
        let c = self.many.entry(f).or_insert(0);
        *c += 1;
        let all = *c == ndeps;
        if all {
            self.many.remove(&f);
        }
        all
    }

    /// Marks op `i` of `rank` started at `t` (its `irequires` dependents may go).
    #[inline(always)]
    pub(super) fn start(&mut self, rank: Rank, i: u32, t: Time, busy_until: Time) {
        let off = self.off(rank);
        self.state[off + i as usize] |= STARTED;
        if self.trace.is_some() {
            self.trace_start(off + i as usize, t, busy_until);
        }
        let si = self.shape_of(rank);
        if self.info[si].ops[i as usize].irequired {
            self.start_irequired(rank, off, si, i);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn trace_start(&mut self, f: usize, t: Time, busy_until: Time) {
        if let Some(tr) = &mut self.trace {
            tr.start[f] = t;
            tr.end[f] = busy_until.max(t);
        }
    }

    /// The `irequires` dependents of op `i` of `rank`, which has started.
    #[inline(never)]
    pub(super) fn start_irequired(&mut self, rank: Rank, off: usize, si: usize, i: u32) {
        let deps = self.s.shapes()[si].dependents(i as usize);
        for &(j, kind) in deps {
            if kind == DepKind::IRequires {
                self.dec(rank, off, si, j);
            }
        }
    }

    /// Marks op `i` of `rank` completed at `t` (its `requires` dependents may go).
    #[inline(always)]
    pub(super) fn complete(&mut self, rank: Rank, i: u32, t: Time) {
        let off = self.off(rank);
        self.state[off + i as usize] |= DONE;
        self.done_ops += 1;
        let ld = &mut self.rec_mut(rank).last_done;
        *ld = (*ld).max(t);
        if self.trace.is_some() {
            self.trace_end(off + i as usize, t);
        }
        let si = self.shape_of(rank);
        let o = &self.info[si].ops[i as usize];
        for k in o.after..o.after + o.n_after {
            let j = self.info[si].after[k as usize];
            self.dec(rank, off, si, j);
        }
        if self.calls > 1 {
            self.next_call(rank, off, si);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn trace_end(&mut self, f: usize, t: Time) {
        if let Some(tr) = &mut self.trace {
            let e = &mut tr.end[f];
            *e = (*e).max(t);
        }
    }

    /// A repeated schedule ([`SimOptions::calls`]): counts the op `complete` just finished
    /// on `rank`, and starts the rank's next run from its roots when this one is over.
    #[cold]
    #[inline(never)]
    pub(super) fn next_call(&mut self, rank: Rank, off: usize, si: usize) {
        let r = rank as usize;
        self.left[r] -= 1;
        if self.left[r] == 0 && self.run_of[r] < self.calls {
            // The rank's run is over: its next run starts now, from its roots.
            self.run_of[r] += 1;
            let n = self.info[si].ops.len();
            self.left[r] = n as u32;
            self.state[off..off + n].fill(0);
            for k in 0..self.info[si].roots.len() {
                let op = self.info[si].roots[k];
                self.freed.push(Freed {
                    rank,
                    op,
                    class: self.info[si].ops[op as usize].class(),
                    tail: false,
                });
            }
        }
    }
}

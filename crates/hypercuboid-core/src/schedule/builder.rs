//! [`ScheduleBuilder`]: builds a [`Schedule`] one rank (or one class of ranks) at a time,
//! sharing identical program shapes and finding each shape op's [`PeerRule`].

use super::shape::{hold_bit, peer_in_range, peers_in_range, shape_hash, Candidates};
use super::storage::UintColumn;
use super::{
    Collective, Meta, Op, PeerRule, Program, Rank, RankClass, Schedule, ScheduleError, Shape,
    ANY_SOURCE,
};
use std::collections::HashMap;

/// What [`ScheduleBuilder::push_classes`] knows of one class while it pushes its ranks.
#[derive(Clone, Copy, Debug)]
struct ClassState {
    /// The class's shape, once its first rank is pushed.
    shape: Option<u32>,
    /// Ops a rank of the class has.
    len: u64,
    /// Whether the class's ranks may stop being tracked once its rules settle: they are the
    /// schedule's last ranks and no other class of the same shape declares other rules.
    may_settle: bool,
    /// Settled: each op's rule in the finished schedule is the declared one whatever the
    /// remaining ranks of the class do, so they cost a shape index each.
    settled: bool,
    /// Whether the rules' peers are in range for every rank ([`RankClass::in_range_for_all`]).
    in_range: bool,
}

/// What the builder knows of a shape's peers: the rules that still hold per op, and, once some
/// op follows none, from which rank on the ranks of the shape keep their peers.
#[derive(Debug)]
struct ShapePeers {
    /// The shape's first rank.
    r0: Rank,
    cands: Vec<Candidates>,
    /// Set when an op of the shape first followed no rule, at rank `.0`: the candidates just
    /// before, which hold for every rank of the shape below it (their peers are not stored).
    stored_from: Option<(Rank, Vec<Candidates>)>,
}

/// Builds a [`Schedule`] one rank at a time, sharing identical program shapes and finding each
/// shape op's [`PeerRule`].
#[derive(Debug)]
pub struct ScheduleBuilder {
    nranks: u32,
    meta: Meta,
    shapes: Vec<Shape>,
    shape_peers: Vec<ShapePeers>,
    index: HashMap<u64, Vec<u32>, rustc_hash::FxBuildHasher>,
    rank_shape: UintColumn,
    /// Empty while every rank pushed has `uniform_len` ops.
    op_start: UintColumn,
    uniform_len: u64,
    total_ops: u64,
    /// Every peer of the ranks pushed after their shape's `stored_from`, rank by rank.
    rows: Vec<Rank>,
}

/// Largest number of ranks a schedule may have.
pub const MAX_RANKS: u64 = (u32::MAX - 1) as u64;

impl ScheduleBuilder {
    /// A builder for `nranks` ranks (1 ..= [`MAX_RANKS`]).
    pub fn new(nranks: u64, meta: Meta) -> Result<ScheduleBuilder, ScheduleError> {
        ScheduleError::check_nranks(nranks, "a schedule")?;
        if let Collective::Alltoall { block } = meta.collective {
            if block.checked_mul(nranks) != Some(meta.count) {
                return Err(ScheduleError::BadParameter {
                    name: "alltoall count".into(),
                    value: meta.count.to_string(),
                    reason: format!(
                        "an alltoall of {nranks} ranks with blocks of {block} elements has \
                         buffers of {nranks} x {block} elements"
                    ),
                });
            }
        }
        Ok(ScheduleBuilder {
            nranks: nranks as u32,
            meta,
            shapes: Vec::new(),
            shape_peers: Vec::new(),
            index: HashMap::default(),
            rank_shape: UintColumn::with_capacity(nranks as usize),
            op_start: UintColumn::default(),
            uniform_len: 0,
            total_ops: 0,
            rows: Vec::new(),
        })
    }

    /// A hint that about `ops` more ops come. Peers that follow rules take no room, so the
    /// builder reserves nothing ahead (kept for callers that size their input).
    pub fn reserve_ops(&mut self, ops: usize) {
        let _ = ops;
    }

    /// The rank whose program is pushed next.
    pub fn next_rank(&self) -> Rank {
        self.rank_shape.len() as Rank
    }

    /// Appends the program of the next rank. The program's dependencies are sorted in place.
    pub fn push(&mut self, program: &mut Program) -> Result<(), ScheduleError> {
        let rank = self.next_rank();
        if rank >= self.nranks {
            return Err(ScheduleError::RankOrder {
                expected: self.nranks,
                got: rank,
            });
        }
        program.normalize();
        let before = self.shapes.len();
        let last = self
            .rank_shape
            .last()
            .map(|l| l as u32)
            .filter(|&l| self.shapes[l as usize].matches(program, rank));
        let shape = match last {
            // Consecutive ranks usually share a shape, whose program was validated: only the
            // peers can be out of range (the full check then says which and how).
            Some(l) => {
                if !peers_in_range(program, self.nranks) {
                    program.validate(rank, self.nranks)?;
                }
                l
            }
            None => {
                program.validate(rank, self.nranks)?;
                self.intern(program, rank)
            }
        };
        self.rank_shape.push(shape as u64);
        self.count_ops(rank, program.ops.len() as u64);
        let peer = |o: &Op| o.peer().unwrap_or(ANY_SOURCE);
        if self.shapes.len() > before {
            self.shape_peers.push(ShapePeers {
                r0: rank,
                cands: program
                    .ops
                    .iter()
                    .map(|o| Candidates::new(peer(o)))
                    .collect(),
                stored_from: None,
            });
            return Ok(());
        }
        let ops = &program.ops;
        self.track(shape, rank, ops.len(), |i| peer(&ops[i]));
        Ok(())
    }

    /// Whether `program`, the program of `rank` (its dependencies are sorted in place), is the
    /// program of the last rank pushed up to its peers, op `i` talking to
    /// `rules[i].apply(rank)`: what [`ScheduleBuilder::push_repeated`] assumes of the ranks it
    /// pushes, checked on one rank by building it. Pushes nothing.
    pub fn follows(&self, program: &mut Program, rank: Rank, rules: &[PeerRule]) -> bool {
        let Some(last) = self.rank_shape.last() else {
            return false;
        };
        program.normalize();
        rules.len() == program.ops.len()
            && self.shapes[last as usize].matches(program, rank)
            && program.ops.iter().zip(rules).all(|(o, rule)| {
                rule.apply(rank, self.nranks) == Some(o.peer().unwrap_or(ANY_SOURCE))
            })
    }

    /// Appends the next `count` ranks, each running `template`, the program of the last rank
    /// pushed (as [`ScheduleBuilder::push`] left it), up to its peers: op `i` of rank `r`
    /// talks to `rules[i].apply(r, nranks)` (`Const(ANY_SOURCE)` for local ops). The caller
    /// vouches that each of these ranks' programs is that one (a generator that knows its
    /// ranks share one shape; [`ScheduleBuilder::follows`] checks a rank); the schedule is
    /// then identical to the one `push` builds rank by rank, errors included. The work per
    /// rank stops, when these are the schedule's last ranks, once every op's rule is the one
    /// the finished schedule will give it: from then on the remaining ranks cost one shape
    /// index each.
    pub fn push_repeated(
        &mut self,
        template: &Program,
        rules: &[PeerRule],
        count: u32,
    ) -> Result<(), ScheduleError> {
        let first = self.next_rank();
        let n = self.nranks;
        if first as u64 + count as u64 > n as u64 {
            return Err(ScheduleError::RankOrder {
                expected: n,
                got: n,
            });
        }
        let Some(shape) = self.rank_shape.last() else {
            return Err(ScheduleError::BadParameter {
                name: "repeated program".into(),
                value: format!("{count} ranks"),
                reason: "push the program it repeats first".into(),
            });
        };
        let len = template.ops.len();
        if rules.len() != len
            || rules.iter().any(|r| matches!(r, PeerRule::Column(_)))
            || !self.shapes[shape as usize].matches(template, first - 1)
        {
            return Err(ScheduleError::BadParameter {
                name: "repeated program".into(),
                value: format!("{} ops, {} peer rules", len, rules.len()),
                reason: "the template is the last program pushed and each of its ops has one \
                         rule (const, xor or shift)"
                    .into(),
            });
        }
        let class = RankClass::new(template.clone(), first - 1, rules.to_vec());
        self.push_classes(std::slice::from_ref(&class), |_, out| out.fill(0), count)
    }

    /// Appends the next `count` ranks, each running the program of its class in `classes` up
    /// to its peers (op `i` of rank `r` talks to `rules[i].apply(r, nranks)`, see
    /// [`RankClass`]); `class_of(first, out)` writes the classes (indices into `classes`) of
    /// ranks `first..first + out.len()` into `out`, asked for blocks of ranks in rank order.
    /// The caller vouches that every rank's program is its class's (a generator that knows its
    /// ranks' classes; [`RankClass::admits`] checks a rank); the schedule is then identical to
    /// the one [`ScheduleBuilder::push`] builds rank by rank, errors included: a class's shape
    /// is found or added at its first rank, in rank order, and each rank's peers update the
    /// candidate rules as `push` would. When these are the schedule's last ranks, that work
    /// stops for a class once each of its ops' rules is the one the finished schedule will
    /// give it (it still holds, none that `finish` prefers does, no peer of the shape is
    /// stored, and no other class of the same shape declares other rules): from then on a
    /// rank of the class costs a shape index and its op count, and a range check of its
    /// peers only where the rules cannot decide it for every rank. With one class, `class_of`
    /// is not asked for the ranks after it settles.
    pub fn push_classes(
        &mut self,
        classes: &[RankClass],
        mut class_of: impl FnMut(Rank, &mut [u32]),
        count: u32,
    ) -> Result<(), ScheduleError> {
        let first = self.next_rank();
        let n = self.nranks;
        let end = first as u64 + count as u64;
        if end > n as u64 {
            return Err(ScheduleError::RankOrder {
                expected: n,
                got: n,
            });
        }
        if let Some((c, k)) = classes.iter().enumerate().find(|(_, k)| {
            k.rules.len() != k.program.ops.len()
                || k.rules.iter().any(|r| matches!(r, PeerRule::Column(_)))
        }) {
            return Err(ScheduleError::BadParameter {
                name: "rank class".into(),
                value: format!(
                    "class {c}: {} ops, {} peer rules",
                    k.program.ops.len(),
                    k.rules.len()
                ),
                reason: "each op of a class has one rule (const, xor or shift)".into(),
            });
        }
        let mut state = self.class_states(classes, end == n as u64);
        // Per class: its shape once its ranks cost only that (settled, peers in range for
        // every rank), else `u32::MAX`; and its ops per rank.
        let mut fast = vec![u32::MAX; classes.len()];
        let lens: Vec<u64> = classes.iter().map(|k| k.program.ops.len() as u64).collect();
        const BLOCK: u32 = 4096;
        let end = end as Rank;
        let mut block = vec![0u32; BLOCK.min(count) as usize];
        let mut peers: Vec<Rank> = Vec::new();
        let mut from = first;
        while from < end {
            let m = BLOCK.min(end - from);
            let block = &mut block[..m as usize];
            class_of(from, block);
            let mut i = 0;
            while i < block.len() {
                // A run of ranks of settled classes, at a shape index and an op count each.
                let run = block[i..]
                    .iter()
                    .take_while(|&&c| fast.get(c as usize).is_some_and(|&s| s != u32::MAX))
                    .count();
                if run > 0 {
                    self.push_run(&block[i..i + run], from + i as Rank, &fast, &lens);
                    i += run;
                    continue;
                }
                let (r, c) = (from + i as Rank, block[i]);
                i += 1;
                let Some(k) = classes.get(c as usize) else {
                    return Err(ScheduleError::BadParameter {
                        name: "rank class".into(),
                        value: c.to_string(),
                        reason: format!(
                            "the class of rank {r} is one of the {} classes given, 0..{}",
                            classes.len(),
                            classes.len()
                        ),
                    });
                };
                let st = &mut state[c as usize];
                peers.clear();
                peers.extend(
                    k.rules
                        .iter()
                        .map(|rule| rule.apply(r, n).unwrap_or(ANY_SOURCE)),
                );
                let shape = match st.shape {
                    Some(shape) if st.settled => {
                        // Settled, but its peers' range depends on the rank.
                        self.check_repeated_peers(&k.program, r, &peers)?;
                        shape
                    }
                    Some(shape) => {
                        self.check_repeated_peers(&k.program, r, &peers)?;
                        self.track(shape, r, peers.len(), |i| peers[i]);
                        shape
                    }
                    None => {
                        // The class's first rank: checked and interned as `push` does.
                        let p = k.instantiate(r, &peers);
                        p.validate(r, n)?;
                        let before = self.shapes.len();
                        let shape = self.intern(&p, r);
                        if self.shapes.len() > before {
                            self.shape_peers.push(ShapePeers {
                                r0: r,
                                cands: peers.iter().map(|&p| Candidates::new(p)).collect(),
                                stored_from: None,
                            });
                        } else {
                            self.track(shape, r, peers.len(), |i| peers[i]);
                        }
                        st.shape = Some(shape);
                        shape
                    }
                };
                self.rank_shape.push(shape as u64);
                self.count_ops(r, st.len);
                st.settled = st.settled || st.may_settle && self.settled(shape, &k.rules);
                if st.settled && st.in_range {
                    if classes.len() == 1 {
                        // One class, settled: the remaining ranks are its, a shape index each.
                        self.push_settled(shape, st.len, r + 1, end);
                        return Ok(());
                    }
                    fast[c as usize] = shape;
                }
            }
            from += m;
        }
        Ok(())
    }

    /// The state [`ScheduleBuilder::push_classes`] starts from for each class; `last`: its
    /// ranks are the schedule's last. Classes of one shape that declare different rules are
    /// never settled (the shape's rules are then what holds for all of their ranks).
    fn class_states(&self, classes: &[RankClass], last: bool) -> Vec<ClassState> {
        // A program with a dependency out of range has no shape: its first rank gives
        // `push`'s error.
        let shapes: Vec<Option<Shape>> = classes
            .iter()
            .map(|k| {
                let len = k.program.ops.len() as u32;
                let ok = k.program.deps.iter().all(|&(a, d)| a < len && d.on < len);
                ok.then(|| Shape::from_program(&k.program, k.rank))
            })
            .collect();
        let mut by_hash: HashMap<u64, Vec<usize>, rustc_hash::FxBuildHasher> = HashMap::default();
        for (c, k) in classes.iter().enumerate() {
            by_hash
                .entry(shape_hash(&k.program, k.rank))
                .or_default()
                .push(c);
        }
        let mut state: Vec<ClassState> = classes
            .iter()
            .map(|k| ClassState {
                shape: None,
                len: k.program.ops.len() as u64,
                may_settle: last,
                settled: false,
                in_range: k.in_range_for_all(self.nranks),
            })
            .collect();
        for group in by_hash.values() {
            for &c in group {
                if shapes[c].is_none()
                    || group
                        .iter()
                        .any(|&d| shapes[d] == shapes[c] && classes[d].rules != classes[c].rules)
                {
                    state[c].may_settle = false;
                }
            }
        }
        state
    }

    /// Whether every op of `shape` ends with the declared rule in `rules` whatever further
    /// ranks following those rules do: it holds for every rank so far, no rule that
    /// [`Candidates::best`] prefers to it does, and no peer of the shape is stored.
    fn settled(&self, shape: u32, rules: &[PeerRule]) -> bool {
        let sp = &self.shape_peers[shape as usize];
        sp.stored_from.is_none()
            && sp.cands.iter().zip(rules).all(|(c, rule)| {
                // `best` prefers the lower bits to a rule's own bit `b`.
                let b = hold_bit(rule);
                c.hold & b != 0 && c.hold & (b - 1) == 0 && c.rule(sp.r0, self.nranks, b) == *rule
            })
    }

    /// Ranks `first..` of classes `run` (indices into `shapes` and `lens`, the classes' shapes and
    /// op counts), pushed at once: their peers need no tracking nor checking.
    fn push_run(&mut self, run: &[u32], first: Rank, shapes: &[u32], lens: &[u64]) {
        let n = self.shapes.len();
        match &mut self.rank_shape {
            UintColumn::U8(col) if n <= 1 << 8 => {
                col.extend(run.iter().map(|&c| shapes[c as usize] as u8))
            }
            UintColumn::U16(col) if n <= 1 << 16 => {
                col.extend(run.iter().map(|&c| shapes[c as usize] as u16))
            }
            UintColumn::U32(col) => col.extend(run.iter().map(|&c| shapes[c as usize])),
            col => {
                for &c in run {
                    col.push(shapes[c as usize] as u64);
                }
            }
        }
        let most = lens.iter().max().copied().unwrap_or(0);
        let mut total = self.total_ops;
        match &mut self.op_start {
            // Numbered ranks (so `first` > 0) whose offsets stay in 4 bytes.
            UintColumn::U32(col)
                if total.saturating_add(most.saturating_mul(run.len() as u64))
                    <= u32::MAX as u64 =>
            {
                col.extend(run.iter().map(|&c| {
                    total += lens[c as usize];
                    total as u32
                }));
                self.total_ops = total;
            }
            UintColumn::U64(col) => {
                col.extend(run.iter().map(|&c| {
                    total += lens[c as usize];
                    total
                }));
                self.total_ops = total;
            }
            _ => {
                for (r, &c) in (first..).zip(run) {
                    self.count_ops(r, lens[c as usize]);
                }
            }
        }
    }

    /// Ranks `from..end`, each of `shape` with `len` ops, pushed at once (their peers need no
    /// tracking nor checking).
    fn push_settled(&mut self, shape: u32, len: u64, from: Rank, end: Rank) {
        let cnt = (end - from) as usize;
        self.rank_shape.fill(cnt, shape as u64);
        if self.op_start.is_empty() && len == self.uniform_len {
            self.total_ops += len * cnt as u64;
        } else {
            for r in from..end {
                self.count_ops(r, len);
            }
        }
    }

    /// Updates the candidate rules of `shape` with the `len` peers of `rank` (`peer(i)`, op
    /// `i`'s), as one more rank of the shape, and keeps its peers once some op follows none.
    #[inline]
    fn track(&mut self, shape: u32, rank: Rank, len: usize, peer: impl Fn(usize) -> Rank) {
        let n = self.nranks;
        let sp = &mut self.shape_peers[shape as usize];
        for i in 0..len {
            let c = sp.cands[i];
            if c.hold == 0 {
                continue;
            }
            let hold = c.keep(sp.r0, n, rank, peer(i));
            if hold == 0 && sp.stored_from.is_none() {
                // The first op of the shape that follows no rule: every earlier rank of the
                // shape followed the rules that hold so far; from this rank on, peers are kept.
                sp.stored_from = Some((rank, sp.cands.clone()));
            }
            sp.cands[i].hold = hold;
        }
        if sp.stored_from.is_some() {
            self.rows.extend((0..len).map(peer));
        }
    }

    /// The error [`ScheduleBuilder::push`] gives `rank` running `template` with `peers`, if
    /// a peer is out of range.
    fn check_repeated_peers(
        &self,
        template: &Program,
        rank: Rank,
        peers: &[Rank],
    ) -> Result<(), ScheduleError> {
        let n = self.nranks;
        let ok = template
            .ops
            .iter()
            .zip(peers)
            .all(|(o, &p)| peer_in_range(o, p, n));
        if ok {
            return Ok(());
        }
        let mut p = Program {
            ops: template
                .ops
                .iter()
                .zip(peers)
                .map(|(o, &peer)| o.with_peer(peer))
                .collect(),
            deps: template.deps.clone(),
        };
        p.normalize();
        p.validate(rank, n)
    }

    #[inline(always)]
    fn count_ops(&mut self, rank: Rank, len: u64) {
        if rank == 0 {
            self.uniform_len = len;
        }
        if self.op_start.is_empty() && len != self.uniform_len {
            self.number_ranks(rank);
        }
        self.total_ops += len;
        if !self.op_start.is_empty() {
            self.op_start.push(self.total_ops);
        }
    }

    /// Rank `rank` is the first of another length than the ranks before: number every rank so
    /// far explicitly (room for every rank at once: no reallocation as the column grows).
    #[cold]
    fn number_ranks(&mut self, rank: Rank) {
        self.op_start.reserve_exact(self.nranks as usize + 1);
        for r in 0..=rank as u64 {
            self.op_start.push(r * self.uniform_len);
        }
    }

    /// The shape of `p` (of `rank`), found by hashing or added (the last rank's shape was
    /// tried already).
    fn intern(&mut self, p: &Program, rank: Rank) -> u32 {
        let h = shape_hash(p, rank);
        if let Some(ids) = self.index.get(&h) {
            for &id in ids {
                if self.shapes[id as usize].matches(p, rank) {
                    return id;
                }
            }
        }
        let id = self.shapes.len() as u32;
        self.shapes.push(Shape::from_program(p, rank));
        self.index.entry(h).or_default().push(id);
        id
    }

    /// The finished schedule; every rank must have a program.
    pub fn finish(self) -> Result<Schedule, ScheduleError> {
        if self.rank_shape.len() as u32 != self.nranks {
            return Err(ScheduleError::Incomplete {
                ranks_built: self.rank_shape.len() as u32,
                nranks: self.nranks,
            });
        }
        let n = self.nranks;
        let mut shapes = self.shapes;
        let mut columns = 0usize;
        for (shape, sp) in shapes.iter_mut().zip(&self.shape_peers) {
            let mut k = 0;
            shape.peers = sp
                .cands
                .iter()
                .map(|c| {
                    c.best(sp.r0, n).unwrap_or_else(|| {
                        k += 1;
                        PeerRule::Column(k - 1)
                    })
                })
                .collect();
            columns += k as usize;
        }
        let (mut peer_start, mut peers) = (Vec::new(), Vec::new());
        if columns > 0 {
            peer_start.reserve_exact(n as usize + 1);
            peer_start.push(0);
            let mut next = 0;
            for r in 0..n {
                let si = self.rank_shape.get(r as usize) as usize;
                let shape = &shapes[si];
                if let Some((from, before)) = &self.shape_peers[si].stored_from {
                    let r0 = self.shape_peers[si].r0;
                    let stored = r >= *from;
                    for (i, rule) in shape.peers.iter().enumerate() {
                        if let PeerRule::Column(_) = rule {
                            peers.push(if stored {
                                self.rows[next + i]
                            } else {
                                let rule = before[i].best(r0, n).expect("held before");
                                rule.apply(r, n).expect("a rule")
                            });
                        }
                    }
                    if stored {
                        next += shape.len();
                    }
                }
                peer_start.push(peers.len() as u64);
            }
            peers.shrink_to_fit();
        }
        let mut rank_shape = self.rank_shape;
        if shapes.len() == 1 {
            rank_shape = UintColumn::default();
        }
        Ok(Schedule {
            meta: self.meta,
            nranks: n,
            shapes,
            rank_shape,
            op_start: self.op_start,
            uniform_len: self.uniform_len,
            total_ops: self.total_ops,
            peer_start,
            peers,
        })
    }
}

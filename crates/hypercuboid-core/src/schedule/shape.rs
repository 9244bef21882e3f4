//! Program shapes and peer rules: a [`Shape`] is a program with its peers left out, shared by
//! every rank that runs it; each of its ops finds its peer from the rank by a [`PeerRule`]. A
//! [`RankClass`] is a set of ranks that run one program up to peers that follow rules, which
//! the builder pushes without building their programs.

use super::{Dep, DepKind, Op, OpKind, Program, Rank, ANY_SOURCE};
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// The form an op takes in a [`Shape`]: no peer, and a receive's [`Combine`] stated as if the
/// peer were above the rank, so that exchanges which put the lower rank's value on the left
/// (MPICH's order for non-commutative operators) share one shape across ranks.
pub(super) fn canonical(op: &Op, rank: Rank) -> Op {
    let mut c = op.with_peer(0);
    if let (OpKind::Recv { peer, .. }, OpKind::Recv { combine, .. }) = (&op.kind, &mut c.kind) {
        if *peer < rank {
            *combine = combine.flipped();
        }
    }
    c
}

/// How one op of a [`Shape`] finds its peer from the rank that runs it (the same for every rank
/// of the shape), found when the schedule is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerRule {
    /// The same peer for every rank ([`ANY_SOURCE`] for local ops and wildcard receives).
    Const(Rank),
    /// `rank XOR m`.
    Xor(Rank),
    /// `(rank + d) mod nranks`, `d` in `0..nranks`.
    Shift(Rank),
    /// No rule: entry `k` of the rank's row of explicit peers ([`RankView::peer`](super::RankView::peer) reads it).
    Column(u32),
}

impl PeerRule {
    /// The peer of `rank` in a schedule of `nranks` ranks; `None` for [`PeerRule::Column`],
    /// whose peer is stored.
    #[inline]
    pub fn apply(self, rank: Rank, nranks: u32) -> Option<Rank> {
        match self {
            PeerRule::Const(p) => Some(p),
            PeerRule::Xor(m) => Some(rank ^ m),
            PeerRule::Shift(d) => {
                // rank < nranks and d < nranks: one conditional subtraction, no division.
                let s = rank as u64 + d as u64;
                let n = nranks as u64;
                Some(if s >= n { s - n } else { s } as Rank)
            }
            PeerRule::Column(_) => None,
        }
    }
}

/// What the builder knows of one op's peer rule while ranks of its shape are pushed: the peer
/// of the shape's first rank, and which rules still hold for every rank seen so far.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidates {
    /// The peer of the shape's first rank.
    pub(super) first: Rank,
    /// `HOLD_CONST | HOLD_XOR | HOLD_SHIFT` bits of the rules that still hold; 0: none.
    pub(super) hold: u8,
}

// The bits in order of preference: `Candidates::best` takes the lowest that holds.
const HOLD_CONST: u8 = 1;
const HOLD_XOR: u8 = 2;
const HOLD_SHIFT: u8 = 4;

/// The `HOLD_*` bit of a rule (none for a column).
pub(super) fn hold_bit(rule: &PeerRule) -> u8 {
    match rule {
        PeerRule::Const(_) => HOLD_CONST,
        PeerRule::Xor(_) => HOLD_XOR,
        PeerRule::Shift(_) => HOLD_SHIFT,
        PeerRule::Column(_) => 0,
    }
}

impl Candidates {
    pub(super) fn new(peer: Rank) -> Candidates {
        Candidates {
            first: peer,
            hold: if peer == ANY_SOURCE {
                HOLD_CONST
            } else {
                HOLD_CONST | HOLD_XOR | HOLD_SHIFT
            },
        }
    }

    /// The rules (of a shape whose first rank is `r0`) that also hold for `rank`'s `peer`.
    #[inline]
    pub(super) fn keep(self, r0: Rank, nranks: u32, rank: Rank, peer: Rank) -> u8 {
        let mut hold = self.hold;
        if hold & HOLD_CONST != 0 && peer != self.first {
            hold &= !HOLD_CONST;
        }
        if hold & HOLD_XOR != 0 && rank ^ self.first ^ r0 != peer {
            hold &= !HOLD_XOR;
        }
        if hold & HOLD_SHIFT != 0
            && self.rule(r0, nranks, HOLD_SHIFT).apply(rank, nranks) != Some(peer)
        {
            hold &= !HOLD_SHIFT;
        }
        hold
    }

    /// The rule of bit `bit` (one of `HOLD_*`).
    pub(super) fn rule(self, r0: Rank, nranks: u32, bit: u8) -> PeerRule {
        match bit {
            HOLD_CONST => PeerRule::Const(self.first),
            HOLD_XOR => PeerRule::Xor(self.first ^ r0),
            _ => PeerRule::Shift(
                ((self.first as u64 + nranks as u64 - r0 as u64) % nranks as u64) as Rank,
            ),
        }
    }

    /// The cheapest rule that holds (a constant, then XOR, then a shift); `None` when none does.
    pub(super) fn best(self, r0: Rank, nranks: u32) -> Option<PeerRule> {
        // The lowest bit that holds: the preferred rule.
        let b = self.hold & self.hold.wrapping_neg();
        (b != 0).then(|| self.rule(r0, nranks, b))
    }
}

/// A distinct program, without peers. Shared by every rank that runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Ops in program order, in canonical form: send/recv peers are 0 here (each rank's peers
    /// are stored apart) and a receive's `combine` is stated as seen from a peer above the rank.
    /// Read ops through [`RankView::op`](super::RankView::op), which restores both.
    pub ops: Vec<Op>,
    /// Each op's peer rule, which holds for every rank of the shape.
    pub peers: Vec<PeerRule>,
    /// `deps[dep_start[i]..dep_start[i + 1]]` are the dependencies of op `i`, sorted.
    pub dep_start: Vec<u32>,
    /// Dependencies (CSR).
    pub deps: Vec<Dep>,
    /// `dependents[dependent_start[i]..dependent_start[i + 1]]`: ops that depend on op `i`.
    pub dependent_start: Vec<u32>,
    /// Reverse dependencies (CSR): `(op, kind)`.
    pub dependents: Vec<(u32, DepKind)>,
    /// Elements each scratch slot needs.
    pub scratch: Vec<u64>,
}

impl Shape {
    pub(super) fn from_program(p: &Program, rank: Rank) -> Shape {
        let n = p.ops.len();
        let ops = p.ops.iter().map(|o| canonical(o, rank)).collect();
        let mut dep_start = Vec::with_capacity(n + 1);
        let mut deps = Vec::with_capacity(p.deps.len());
        let mut counts = vec![0u32; n + 1];
        let mut j = 0;
        for i in 0..n as u32 {
            dep_start.push(deps.len() as u32);
            while j < p.deps.len() && p.deps[j].0 == i {
                deps.push(p.deps[j].1);
                counts[p.deps[j].1.on as usize] += 1;
                j += 1;
            }
        }
        dep_start.push(deps.len() as u32);
        let mut dependent_start = Vec::with_capacity(n + 1);
        let mut acc = 0;
        for c in &counts[..n] {
            dependent_start.push(acc);
            acc += c;
        }
        dependent_start.push(acc);
        let mut fill = dependent_start.clone();
        let mut dependents = vec![(0u32, DepKind::Requires); acc as usize];
        for &(a, d) in &p.deps {
            let slot = &mut fill[d.on as usize];
            dependents[*slot as usize] = (a, d.kind);
            *slot += 1;
        }
        Shape {
            ops,
            // Set when the schedule is finished, once every rank of the shape is known.
            peers: Vec::new(),
            dep_start,
            deps,
            dependent_start,
            dependents,
            scratch: p.scratch_extents(),
        }
    }

    /// Number of ops.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the shape has no ops.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Dependencies of op `i`.
    pub fn deps(&self, i: usize) -> &[Dep] {
        &self.deps[self.dep_start[i] as usize..self.dep_start[i + 1] as usize]
    }

    /// Ops that depend on op `i`.
    pub fn dependents(&self, i: usize) -> &[(u32, DepKind)] {
        &self.dependents[self.dependent_start[i] as usize..self.dependent_start[i + 1] as usize]
    }

    pub(super) fn matches(&self, p: &Program, rank: Rank) -> bool {
        if self.ops.len() != p.ops.len() || self.deps.len() != p.deps.len() {
            return false;
        }
        if !self
            .ops
            .iter()
            .zip(&p.ops)
            .all(|(a, b)| *a == canonical(b, rank))
        {
            return false;
        }
        // p.deps are sorted by op; the shape's CSR lists them in the same order.
        let mut k = 0;
        for i in 0..self.ops.len() {
            for d in self.deps(i) {
                if p.deps[k] != (i as u32, *d) {
                    return false;
                }
                k += 1;
            }
        }
        true
    }
}

/// Whether every send's peer is a rank below `nranks` and every receive's is one or
/// [`ANY_SOURCE`] (what [`Program::validate`] checks of peers).
pub(super) fn peers_in_range(p: &Program, nranks: u32) -> bool {
    p.ops
        .iter()
        .all(|o| peer_in_range(o, o.peer().unwrap_or(ANY_SOURCE), nranks))
}

/// Whether `peer` is a valid peer for op `o` (any value for a local op).
pub(super) fn peer_in_range(o: &Op, peer: Rank, nranks: u32) -> bool {
    match o.kind {
        OpKind::Send { .. } => peer < nranks,
        OpKind::Recv { .. } => peer < nranks || peer == ANY_SOURCE,
        _ => true,
    }
}

pub(super) fn shape_hash(p: &Program, rank: Rank) -> u64 {
    let mut h = FxHasher::default();
    p.ops.len().hash(&mut h);
    for o in &p.ops {
        canonical(o, rank).hash(&mut h);
    }
    p.deps.hash(&mut h);
    h.finish()
}

/// The program that every rank of one class runs up to its peers: the program of one of its
/// ranks, and each op's [`PeerRule`] (`Const(ANY_SOURCE)` for local ops), which gives that
/// op's peer for every rank of the class. [`ScheduleBuilder::push_classes`](super::ScheduleBuilder::push_classes) pushes the ranks
/// of several such classes without building their programs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankClass {
    pub(super) program: Program,
    pub(super) rank: Rank,
    pub(super) rules: Vec<PeerRule>,
}

impl RankClass {
    /// The class whose ranks run `program`, the program of `rank` (its dependencies are sorted
    /// here), up to their peers: op `i` of rank `r` talks to `rules[i].apply(r, nranks)`.
    pub fn new(mut program: Program, rank: Rank, rules: Vec<PeerRule>) -> RankClass {
        program.normalize();
        RankClass {
            program,
            rank,
            rules,
        }
    }

    /// The program it was made from.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The rank whose program it is.
    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// Each op's peer rule.
    pub fn rules(&self) -> &[PeerRule] {
        &self.rules
    }

    /// Whether `program`, the program of `rank` in a schedule of `nranks` ranks (its
    /// dependencies are sorted in place), is this class's program up to its peers and its
    /// peers are the rules': what [`ScheduleBuilder::push_classes`](super::ScheduleBuilder::push_classes) assumes of every rank of
    /// the class, checked on one rank by building it.
    pub fn admits(&self, program: &mut Program, rank: Rank, nranks: u32) -> bool {
        program.normalize();
        self.rules.len() == self.program.ops.len()
            && program.ops.len() == self.program.ops.len()
            && program.deps == self.program.deps
            && self
                .program
                .ops
                .iter()
                .zip(&program.ops)
                .zip(&self.rules)
                .all(|((t, o), rule)| {
                    canonical(t, self.rank) == canonical(o, rank)
                        && rule.apply(rank, nranks) == Some(o.peer().unwrap_or(ANY_SOURCE))
                })
    }

    /// The program of `rank` whose op `i` talks to `peers[i]`: this class's ops with those
    /// peers and each receive's operand order restored for `rank` (as [`RankView::op`](super::RankView::op) does).
    pub(super) fn instantiate(&self, rank: Rank, peers: &[Rank]) -> Program {
        let ops = self
            .program
            .ops
            .iter()
            .zip(peers)
            .map(|(o, &peer)| {
                let mut op = canonical(o, self.rank).with_peer(peer);
                if let OpKind::Recv { combine, .. } = &mut op.kind {
                    if peer < rank {
                        *combine = combine.flipped();
                    }
                }
                op
            })
            .collect();
        Program {
            ops,
            deps: self.program.deps.clone(),
        }
    }

    /// Whether the rules' peers are in range for every rank of a schedule of `nranks` ranks,
    /// decided from the rules alone; `false` where it depends on the rank (a XOR on a number
    /// of ranks that is not a power of two).
    pub(super) fn in_range_for_all(&self, nranks: u32) -> bool {
        self.program.ops.iter().zip(&self.rules).all(|(o, rule)| {
            let any_ok = matches!(o.kind, OpKind::Recv { .. });
            match *rule {
                PeerRule::Const(p) => {
                    p < nranks || (any_ok && p == ANY_SOURCE) || o.peer().is_none()
                }
                PeerRule::Xor(m) => nranks.is_power_of_two() && m < nranks,
                PeerRule::Shift(d) => d < nranks,
                PeerRule::Column(_) => false,
            }
        })
    }
}

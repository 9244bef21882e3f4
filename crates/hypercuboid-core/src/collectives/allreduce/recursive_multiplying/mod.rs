//! `recursive_multiplying:SCHEDULE`: the mixed-radix generalisation of recursive doubling of
//! Ruefenacht, Bull and Booth ("Generalisation of recursive doubling for AllReduce: now with
//! simulation", Parallel Computing 2017, sections 4 and 6), driven by a schedule string such as
//! `a8,a3,a4` ([`ScheduleString`], grammar in [`grammar`]).
//!
//! The seed's pseudocode (Algorithms 2–6) is damaged in extraction; the semantics below are
//! derived from its text and figures and checked by the verifier for every schedule the
//! enumerator of [`search`] produces on every N up to 256.
//!
//! # Stages
//! - **`aB`** with stride `m` (the product of the earlier factors): the ranks of the stage are
//!   numbered `0 .. n` (`n` the product of all factors) and read as mixed-radix numbers; a rank's
//!   group is the `B` ranks that differ from it only in this stage's digit,
//!   `block + (w mod m) + j·m` for `j = 0 .. B`, `block = ⌊w / (B·m)⌋·B·m` (Algorithm 2). Each
//!   rank sends its running value to the other `B − 1` members, in the paper's order
//!   `w + m, w + 2m, …` cyclically within the block (so every member receives one message per
//!   pipeline slot), and folds the `B` values of the group into a new running value.
//! - **`cTmB` / `eTmB`** (Algorithms 3 and 4, MPICH's fix generalised): the ranks below `T`
//!   form groups of `B` consecutive ranks; each group's last rank is its *leader*, the others
//!   send it their value and drop out. Leaders take the inner numbers `0 .. T/B`, the ranks from
//!   `T` up the numbers `T/B ..` (monotone in rank). The expand stage sends the result from each
//!   leader to the `B − 1` members of its group, in rank order. `c6m2` is exactly MPICH's fold
//!   on 7 ranks (seed Fig. 2 for 6 ranks is `c4m2`).
//! - **`mRgGaB` / `nRgGaB`** (Algorithms 5 and 6, Fig. 7): `R` *remainder* ranks take no part
//!   in the exchanges. In the first stage (the merge, factor `B₁`, `G₁ = n/B₁` groups of
//!   consecutive ranks) each remainder sends its value to every member of one group, which folds
//!   it in; in the last stage (the inverse merge, factor `B_k`, `G_k = n/B_k` groups) the members
//!   of one group also send their values from before the stage to the remainder, which folds
//!   those `B_k` values into the result. Remainder `q` (counted in rank order) serves
//!   first-stage group `q mod G₁` and is served by last-stage group `q mod G_k`, as Algorithms 5
//!   and 6 assign them.
//!
//!   **Layout (our choice)**: the remainders of first-stage group `g` are placed immediately
//!   before the ranks of group `g` (for `R = 1` that is rank 0, as in Algorithm 5, where the
//!   remainders are the ranks below `R`). With this layout every partial result is an ordered
//!   reduction of consecutive ranks, so the result is in rank order even when `R > 1`
//!   (`m3g2a2,n3g2a2` on 7 ranks puts ranks 0–1 before group 0 = ranks 2–3, and rank 4 before
//!   group 1 = ranks 5–6). With the remainders below `R` it would not be.
//!
//! Collapses nest (`c4m2,c2m2,a2,e2m2,e4m2`) and may surround a merge.
//!
//! # Reduction order
//! Every fold is a left fold in rank order: `((v₀ ⊕ v₁) ⊕ v₂) ⊕ …`, the same expression on every
//! rank of a group (a remainder folding the last stage's values uses the same one). Every
//! partial result is the ordered reduction of a contiguous range of ranks, so every rank ends
//! with the same expression `x₀ ⊕ x₁ ⊕ … ⊕ x_{N−1}` bracketed identically: bitwise-identical
//! results, right for a non-commutative operator (the verifier confirms `canonical_order` and
//! `same_order_noncommutative` for every enumerated schedule). MPICH's recursive multiplying
//! folds its main stage the same way (see [`super::mpich_recursive_multiplying`]).
//!
//! # Ops
//! A fold of `k` values is a chain of fused receives into the next buffer: the first two values
//! are combined by one receive-reduce-copy when the rank's own value is one of them (the
//! receive reads the own value as its local operand), otherwise the first value is received
//! plainly and the own value is reduced in by a `reduce` op at its place in the chain. So an
//! `aB` stage costs a rank `B − 1` sends and `B − 1` receives, plus one `reduce` when its digit
//! is 2 or more. Receives of a chain are posted one after the other, as the fold reaches them
//! (messages that come early wait in the unexpected queue, as MPICH's eager protocol keeps
//! them); every send is posted as soon as the value it reads exists.
//!
//! The running value alternates between `out` and `scratch0` (the last step writes `out`), so a
//! stage never writes the buffer its own sends read; a fold's first op waits for the sends of
//! two steps earlier, which read the buffer it overwrites. No send waits on a later receive of
//! its own rank, so the schedule is safe with synchronous sends (verified with
//! `eager_limit = 0`).
//!
//! # Tags
//! Stage `i` of the schedule (0-based, counting every stage of the string) uses tag `i`.

pub mod grammar;
pub mod search;

pub use grammar::{Plan, ScheduleString, ScheduleStringError, Stage};

use super::{unless_trivial, whole, Algorithm, Allreduce, AllreduceSpec, Prepared};
use crate::collectives::registry::{prepared_build, Context, Cost, Entry, Needs};
use crate::schedule::{Combine, OpId, PeerRule, Program, Rank, ScheduleError, Slice, Slot};
use crate::spec::{Form, Positional};
use grammar::Level;

/// The `recursive_multiplying` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Allreduce> = Entry {
    form: Form::named(
        "recursive_multiplying",
        "the mixed-radix recursive multiplying of Ruefenacht, Bull and Booth, driven by \
         a schedule of stages (also accepted bare: a8,a3,a4); 'hypercuboid tune \
         allreduce -n N' ranks the schedules of N ranks",
    )
    .with_positional(Positional::List("SCHEDULE"))
    .with_example("recursive_multiplying:a8,a3,a4"),
    parse: |spec| {
        let text = spec
            .positional
            .as_deref()
            .expect("the form requires a schedule");
        Ok(Algorithm::RecursiveMultiplying(ScheduleString::parse(
            text,
        )?))
    },
    needs: Needs::Nothing,
    prepare,
    build: prepared_build!(Prepared::Plan(plan) => unless_trivial(build, plan)),
    cost: Some(Cost {
        formula: "Σ (B_i - 1)(α + nβ + nγ) for a factored schedule aB_1,...,aB_s; exact",
        time: |a, spec, m| {
            let Algorithm::RecursiveMultiplying(s) = a else {
                unreachable!("a recursive_multiplying algorithm")
            };
            super::cost::recursive_multiplying(s, spec, m)
        },
    }),
    guarantees: &super::IN_RANK_ORDER,
    examples: &[
        "recursive_multiplying:a2,a3",
        "recursive_multiplying:a3,a2",
        "recursive_multiplying:c6m2,a2,a2,e6m2",
        "recursive_multiplying:m1g2a3,n1g3a2",
    ],
};

fn prepare(
    alg: &Algorithm,
    spec: &AllreduceSpec,
    _: &Context<'_>,
) -> Result<Prepared, ScheduleError> {
    let Algorithm::RecursiveMultiplying(s) = alg else {
        unreachable!("a recursive_multiplying algorithm")
    };
    Ok(Prepared::Plan(s.fit(spec.nranks)?))
}

/// Whether `text` looks like a bare schedule string (`a8,a3,a4`, `c6m2,a2,a2,e6m2`): a stage
/// letter followed by a digit.
pub fn looks_like_schedule(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 2 && b"acemn".contains(&b[0]) && b[1].is_ascii_digit()
}

impl ScheduleString {
    /// Checks that the schedule fits `nranks` ranks and returns its plan; the error says why
    /// not and suggests schedules that fit ([`search::suggest`]).
    pub fn fit(&self, nranks: u32) -> Result<Plan, ScheduleStringError> {
        self.fit_unsuggested(nranks).map_err(|e| match e {
            ScheduleStringError::DoesNotFit {
                text,
                nranks,
                reason,
                ..
            } => ScheduleStringError::DoesNotFit {
                text,
                nranks,
                reason,
                suggestions: search::suggest(nranks)
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            },
            e => e,
        })
    }
}

/// Where a rank of one numbering level goes in the next.
enum Down {
    /// Takes part with this number.
    Inner(u32),
    /// A collapse leader with this inner number; its group starts at `first`.
    Leader { inner: u32, first: u32 },
    /// A collapse member that sends to the leader `leader` (same level's numbering).
    Sender { leader: u32 },
    /// Merge remainder `q` (in rank order), serving first-stage group `group`.
    Remainder { q: u32, group: u32 },
}

/// The merge layout: first-stage group `g` is preceded by its `cnt(g)` remainders.
struct MergeLayout {
    base: u32,
    /// ⌊R / G₁⌋.
    q: u32,
    /// R mod G₁.
    s: u32,
}

impl MergeLayout {
    fn new(remainder: u32, groups: u32, base: u32) -> MergeLayout {
        MergeLayout {
            base,
            q: remainder / groups,
            s: remainder % groups,
        }
    }

    /// Remainders before group `g`.
    fn rem_before(&self, g: u32) -> u32 {
        g * self.q + g.min(self.s)
    }

    /// Remainders of group `g`.
    fn count(&self, g: u32) -> u32 {
        self.q + u32::from(g < self.s)
    }

    /// First rank (outer numbering) of group `g`'s remainders.
    fn start(&self, g: u32) -> u32 {
        g * self.base + self.rem_before(g)
    }

    /// The first-stage group of remainder `q`.
    fn group_of_remainder(&self, q: u32) -> u32 {
        let head = self.s * (self.q + 1);
        if q < head {
            q / (self.q + 1)
        } else {
            self.s + (q - head) / self.q
        }
    }

    /// Outer number of remainder `q`.
    fn remainder_rank(&self, q: u32) -> u32 {
        let g = self.group_of_remainder(q);
        self.start(g) + (q - self.rem_before(g))
    }

    /// Inner number `y` to the level's outer number ([`Level::up`]).
    fn up(&self, y: u32) -> u32 {
        y + self.rem_before(y / self.base + 1)
    }

    /// Outer number `x` to its role in the level ([`Level::down`]).
    fn down(&self, x: u32) -> Down {
        let big = self.base + self.q + 1;
        let g = if x < self.s * big {
            x / big
        } else {
            self.s + (x - self.s * big) / (self.base + self.q)
        };
        let off = x - self.start(g);
        let c = self.count(g);
        if off < c {
            Down::Remainder {
                q: self.rem_before(g) + off,
                group: g,
            }
        } else {
            Down::Inner(g * self.base + off - c)
        }
    }
}

impl Level {
    /// Inner number `y` to this level's outer number.
    fn up(&self, y: u32) -> u32 {
        match *self {
            Level::Collapse {
                threshold, base, ..
            } => {
                let groups = threshold / base;
                if y < groups {
                    y * base + base - 1
                } else {
                    y + threshold - groups
                }
            }
            Level::Merge {
                remainder,
                first_base,
                first_groups,
                ..
            } => MergeLayout::new(remainder, first_groups, first_base).up(y),
        }
    }

    /// Outer number `x` to its role in this level.
    fn down(&self, x: u32) -> Down {
        match *self {
            Level::Collapse {
                threshold, base, ..
            } => {
                if x < threshold {
                    if x % base == base - 1 {
                        Down::Leader {
                            inner: x / base,
                            first: x + 1 - base,
                        }
                    } else {
                        Down::Sender {
                            leader: x - x % base + base - 1,
                        }
                    }
                } else {
                    Down::Inner(x - threshold + threshold / base)
                }
            }
            Level::Merge {
                remainder,
                first_base,
                first_groups,
                ..
            } => MergeLayout::new(remainder, first_groups, first_base).down(x),
        }
    }
}

/// The real rank of number `x` in the numbering below `levels` (apply their `up` inside out).
fn real(levels: &[Level], x: u32) -> Rank {
    levels.iter().rev().fold(x, |x, l| l.up(x))
}

/// One value of a fold: a message or the rank's own running value.
#[derive(Clone, Copy, Debug)]
enum Item {
    Own,
    Remote { peer: Rank, tag: i32 },
}

/// The running value of a rank and the op that produced it (`None`: it is the input).
#[derive(Clone, Copy, Debug)]
struct Value {
    slice: Slice,
    producer: Option<OpId>,
}

/// The lists a rank's program is built with, kept across ranks (one set per thread) so that
/// building a rank allocates nothing once the first ranks have sized them.
#[derive(Debug, Default)]
struct Buffers {
    /// `(level, first member)` of the collapse levels where the rank leads.
    leader_of: Vec<(usize, u32)>,
    items: Vec<Item>,
    war_out: Vec<OpId>,
    war_scratch: Vec<OpId>,
}

thread_local! {
    static BUFFERS: std::cell::Cell<Buffers> = std::cell::Cell::new(Buffers::default());
}

/// Emits a rank's program step by step: alternating destination buffers, write-after-read
/// dependencies on the sends that read them.
struct Emitter<'a> {
    out: &'a mut Program,
    count: u64,
    /// Value-producing steps in total and done so far.
    steps: usize,
    done: usize,
    value: Value,
    /// Sends still reading `out` / `scratch0` that the next write there must wait for.
    war_out: Vec<OpId>,
    war_scratch: Vec<OpId>,
}

impl<'a> Emitter<'a> {
    /// An emitter whose write-after-read lists reuse `war_out` and `war_scratch` (cleared).
    fn new(
        out: &'a mut Program,
        count: u64,
        steps: usize,
        mut war_out: Vec<OpId>,
        mut war_scratch: Vec<OpId>,
    ) -> Emitter<'a> {
        war_out.clear();
        war_scratch.clear();
        Emitter {
            out,
            count,
            steps,
            done: 0,
            value: Value {
                slice: whole(Slot::Input, count),
                producer: None,
            },
            war_out,
            war_scratch,
        }
    }

    /// The buffer the next value-producing step writes (the last one writes `out`).
    fn next_dst(&self) -> Slice {
        debug_assert!(self.done < self.steps);
        if (self.steps - 1 - self.done).is_multiple_of(2) {
            whole(Slot::Output, self.count)
        } else {
            whole(Slot::Scratch(0), self.count)
        }
    }

    /// Makes `op`, the first write of `slot`, wait for the sends still reading it, which
    /// then no longer count.
    fn after_reads(out: &mut Program, war: &mut Vec<OpId>, op: OpId) {
        out.requires_all(op, war);
        war.clear();
    }

    /// The sends still reading `slot` (the next value-producing step's destination, never the
    /// input).
    fn war_of(&mut self, slot: Slot) -> &mut Vec<OpId> {
        match slot {
            Slot::Output => &mut self.war_out,
            _ => &mut self.war_scratch,
        }
    }

    /// Sends the running value to `peer`.
    fn send(&mut self, peer: Rank, tag: i32) {
        let v = self.value;
        let s = self.out.send(peer, tag, v.slice);
        if let Some(p) = v.producer {
            self.out.requires(s, p);
        }
        match v.slice.slot {
            Slot::Output => self.war_out.push(s),
            Slot::Scratch(_) => self.war_scratch.push(s),
            Slot::Input => {}
        }
    }

    /// Left fold of `items` (in order) into the next buffer, which becomes the running value.
    fn fold(&mut self, items: &[Item]) {
        debug_assert!(items.len() >= 2 || matches!(items, [Item::Remote { .. }]));
        let dst = self.next_dst();
        let own = self.value;
        let out = &mut *self.out;
        let needs_own = |out: &mut Program, op: OpId| {
            if let Some(p) = own.producer {
                out.requires(op, p);
            }
        };
        let (first, rest) = match items {
            [Item::Own, Item::Remote { peer, tag }, ..] => {
                let op = out.recv_reduce_into(*peer, *tag, own.slice, dst, Combine::After);
                needs_own(out, op);
                (op, &items[2..])
            }
            [Item::Remote { peer, tag }, Item::Own, ..] => {
                let op = out.recv_reduce_into(*peer, *tag, own.slice, dst, Combine::Before);
                needs_own(out, op);
                (op, &items[2..])
            }
            [Item::Remote { peer, tag }, ..] => {
                // Waits for the previous fold too: it read the buffer this one writes.
                let op = out.recv(*peer, *tag, dst);
                needs_own(out, op);
                (op, &items[1..])
            }
            _ => unreachable!("a fold starts with a message or with the own value and a message"),
        };
        let war = match dst.slot {
            Slot::Output => &mut self.war_out,
            _ => &mut self.war_scratch,
        };
        Self::after_reads(out, war, first);
        let mut last = first;
        for it in rest {
            let op = match *it {
                Item::Remote { peer, tag } => out.recv_reduce(peer, tag, dst, Combine::After),
                Item::Own => {
                    let op = out.reduce(own.slice, dst, Combine::After);
                    needs_own(out, op);
                    op
                }
            };
            out.requires(op, last);
            last = op;
        }
        self.value = Value {
            slice: dst,
            producer: Some(last),
        };
        self.done += 1;
    }

    /// Receives the final result from `peer` into `out` (a value-producing step).
    fn receive_result(&mut self, peer: Rank, tag: i32) {
        let dst = self.next_dst();
        debug_assert_eq!(dst.slot, Slot::Output);
        let r = self.out.recv(peer, tag, dst);
        let mut war = std::mem::take(self.war_of(dst.slot));
        Self::after_reads(self.out, &mut war, r);
        *self.war_of(dst.slot) = war;
        self.value = Value {
            slice: dst,
            producer: Some(r),
        };
        self.done += 1;
    }
}

/// The peer of each op of every rank's program when `plan` is radix-2 stages alone on a power
/// of two (no collapse or merge: all ranks then run one program up to peers): stage `s` of
/// stride `m` is a send to and a receive from `rank XOR m`. `None` for any other plan.
pub(super) fn radix2_rules(plan: &Plan) -> Option<Vec<PeerRule>> {
    if !plan.levels.is_empty() || plan.stages.iter().any(|s| s.factor != 2) {
        return None;
    }
    Some(
        plan.stages
            .iter()
            .flat_map(|s| [PeerRule::Xor(s.mask); 2])
            .collect(),
    )
}

/// Writes rank `rank`'s program (nranks ≥ 2, count ≥ 1, `plan` fits nranks).
pub(super) fn build(plan: &Plan, spec: &AllreduceSpec, rank: Rank, out: &mut Program) {
    let levels = &plan.levels;
    let mut bufs = BUFFERS.take();
    // Walk down the numbering levels.
    let mut x = rank;
    let leader_of = &mut bufs.leader_of;
    leader_of.clear();
    enum Role {
        Inner(u32),
        Sender { level: usize, leader: u32 },
        Remainder { level: usize, q: u32, group: u32 },
    }
    let mut role = None;
    for (i, l) in levels.iter().enumerate() {
        match l.down(x) {
            Down::Inner(y) => x = y,
            Down::Leader { inner, first } => {
                leader_of.push((i, first));
                x = inner;
            }
            Down::Sender { leader } => {
                role = Some(Role::Sender { level: i, leader });
                break;
            }
            Down::Remainder { q, group } => {
                role = Some(Role::Remainder { level: i, q, group });
                break;
            }
        }
    }
    let role = role.unwrap_or(Role::Inner(x));
    let steps = leader_of.len()
        + match role {
            Role::Inner(_) => plan.stages.len(),
            Role::Sender { .. } | Role::Remainder { .. } => 1,
        };
    let mut e = Emitter::new(
        out,
        spec.count,
        steps,
        std::mem::take(&mut bufs.war_out),
        std::mem::take(&mut bufs.war_scratch),
    );

    // Collapse stages where this rank leads: fold the group's values, own value last.
    let items = &mut bufs.items;
    for &(i, first) in leader_of.iter() {
        let Level::Collapse {
            base, collapse_tag, ..
        } = levels[i]
        else {
            unreachable!("leaders exist only at collapse levels")
        };
        items.clear();
        for m in first..first + base - 1 {
            items.push(Item::Remote {
                peer: real(&levels[..i], m),
                tag: collapse_tag,
            });
        }
        items.push(Item::Own);
        e.fold(items);
    }

    match role {
        Role::Sender { level, leader } => {
            let Level::Collapse {
                collapse_tag,
                expand_tag,
                ..
            } = levels[level]
            else {
                unreachable!("senders exist only at collapse levels")
            };
            let peer = real(&levels[..level], leader);
            e.send(peer, collapse_tag);
            e.receive_result(peer, expand_tag);
        }
        Role::Remainder { level, q, group } => {
            let Level::Merge {
                first_base,
                last_groups,
                merge_tag,
                inverse_tag,
                ..
            } = levels[level]
            else {
                unreachable!("remainders exist only at merge levels")
            };
            let inner = &levels[..=level];
            for j in 0..first_base {
                e.send(real(inner, group * first_base + j), merge_tag);
            }
            // The last stage's group `q mod G_k`: members h + j·m_k, in rank order.
            let last = plan.stages[plan.stages.len() - 1];
            let h = q % last_groups;
            items.clear();
            for j in 0..last.factor {
                items.push(Item::Remote {
                    peer: real(inner, h + j * last.mask),
                    tag: inverse_tag,
                });
            }
            e.fold(items);
        }
        Role::Inner(w) => body(plan, w, &mut e, items),
    }

    // Expand stages, innermost first: send the result to the group's other members.
    for &(i, first) in leader_of.iter().rev() {
        let Level::Collapse {
            base, expand_tag, ..
        } = levels[i]
        else {
            unreachable!("leaders exist only at collapse levels")
        };
        for m in first..first + base - 1 {
            e.send(real(&levels[..i], m), expand_tag);
        }
    }
    bufs.war_out = e.war_out;
    bufs.war_scratch = e.war_scratch;
    BUFFERS.set(bufs);
}

/// The exchange stages of inner rank `w`.
fn body(plan: &Plan, w: u32, e: &mut Emitter<'_>, items: &mut Vec<Item>) {
    let levels = &plan.levels[..];
    let merge = match levels.last() {
        Some(&Level::Merge {
            remainder,
            first_base,
            first_groups,
            last_groups,
            ..
        }) => Some((
            remainder,
            MergeLayout::new(remainder, first_groups, first_base),
            last_groups,
        )),
        _ => None,
    };
    // Numbering of the merge level's remainders (outer numbers of the merge level).
    let merge_outer = &levels[..levels.len().saturating_sub(1)];
    let nstages = plan.stages.len();
    for (s, st) in plan.stages.iter().enumerate() {
        let (b, m) = (st.factor, st.mask);
        let sbase = b * m;
        let block = w / sbase * sbase;
        let low = w % m;
        let digit = (w / m) % b;
        let member = |j: u32| real(levels, block + low + j * m);
        // Sends in the paper's order: w + m, w + 2m, ... cyclically within the block.
        for idx in 1..b {
            e.send(member((digit + idx) % b), st.tag);
        }
        if let (true, Some((remainder, layout, last_groups))) = (s + 1 == nstages, &merge) {
            // Inverse merge: this group (h = w mod m) also serves remainders h, h + G_k, ...
            let mut q = low;
            while q < *remainder {
                e.send(real(merge_outer, layout.remainder_rank(q)), st.tag);
                q += last_groups;
            }
        }
        items.clear();
        if let (0, Some((_, layout, _))) = (s, &merge) {
            // Merge: the remainders of this group come first (they precede it in rank order).
            let g = w / b;
            let first = layout.rem_before(g);
            for q in first..first + layout.count(g) {
                items.push(Item::Remote {
                    peer: real(merge_outer, layout.remainder_rank(q)),
                    tag: st.tag,
                });
            }
        }
        for j in 0..b {
            items.push(if j == digit {
                Item::Own
            } else {
                Item::Remote {
                    peer: member(j),
                    tag: st.tag,
                }
            });
        }
        e.fold(items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_layout_of_m3g2a2_on_7() {
        // Group 0 (members 0, 1) gets remainders 0 and 1, group 1 (members 2, 3) remainder 2:
        // ranks [r0 r1 m0 m1 r2 m2 m3].
        let l = Level::Merge {
            remainder: 3,
            size: 7,
            first_base: 2,
            first_groups: 2,
            last_groups: 2,
            merge_tag: 0,
            inverse_tag: 1,
        };
        let up: Vec<u32> = (0..4).map(|y| l.up(y)).collect();
        assert_eq!(up, [2, 3, 5, 6]);
        let roles: Vec<String> = (0..7)
            .map(|x| match l.down(x) {
                Down::Inner(y) => format!("m{y}"),
                Down::Remainder { q, group } => format!("r{q}g{group}"),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(roles, ["r0g0", "r1g0", "m0", "m1", "r2g1", "m2", "m3"]);
        let lay = MergeLayout::new(3, 2, 2);
        let r: Vec<u32> = (0..3).map(|q| lay.remainder_rank(q)).collect();
        assert_eq!(r, [0, 1, 4]);
    }

    #[test]
    fn collapse_numbering_matches_mpich() {
        // c6m2 on 7 ranks: odd ranks below 6 lead (inner 0, 1, 2), rank 6 is inner 3.
        let l = Level::Collapse {
            threshold: 6,
            base: 2,
            size: 7,
            collapse_tag: 0,
            expand_tag: 3,
        };
        let up: Vec<u32> = (0..4).map(|y| l.up(y)).collect();
        assert_eq!(up, [1, 3, 5, 6]);
        for x in 0..7 {
            match l.down(x) {
                Down::Inner(y) | Down::Leader { inner: y, .. } => assert_eq!(l.up(y), x),
                Down::Sender { leader } => assert_eq!(leader, x + 1),
                Down::Remainder { .. } => unreachable!(),
            }
        }
    }
}

//! What the verifier reports: one [`Problem`] per defect, each naming ranks, op indices, peers,
//! tags and bytes or slices.

use crate::schedule::{Op, OpKind, Rank, Slice, ANY_SOURCE};
use std::fmt;

/// One defect of a schedule. The `Display` of every variant is a single line that names the
/// ranks, op indices (positions in the rank's program), and what the ops do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A send that no receive matches.
    UnmatchedSend(Unmatched),
    /// A receive that no send matches: it blocks forever once posted.
    UnmatchedRecv(Unmatched),
    /// A matched pair whose sizes are not compatible: the send is larger than the receive
    /// (MPI_ERR_TRUNCATE), or, for a data-semantic schedule, the lengths differ at all.
    SizeMismatch {
        send_rank: Rank,
        send_op: u32,
        send: Op,
        send_bytes: u64,
        recv_rank: Rank,
        recv_op: u32,
        recv: Op,
        recv_bytes: u64,
    },
    /// Two sends (or two receives) of one rank on the same channel that are not ordered by
    /// dependencies and differ in size, data or combine mode: which message meets which receive
    /// depends on timing.
    AmbiguousMatch {
        rank: Rank,
        ops: [u32; 2],
        what: [Op; 2],
    },
    /// A cycle of waits: every op of the cycle waits for the next one, the last for the first.
    /// With `needs_rendezvous` the cycle exists only when sends above the eager limit are
    /// synchronous (they complete when the receive is posted); with eager delivery it runs.
    Deadlock {
        cycle: Vec<CycleStep>,
        needs_rendezvous: bool,
    },
    /// Two ops of one rank touch overlapping elements, at least one writes, and neither
    /// completes before the other starts. Found once per distinct program: `ranks` ranks run
    /// the program, `rank` is the first of them.
    BufferRace {
        rank: Rank,
        ops: [u32; 2],
        what: [Op; 2],
        overlap: Slice,
        ranks: u64,
    },
    /// An op names elements of `in` or `out` beyond the vector length `count`. Found once per
    /// distinct program, as for [`Problem::BufferRace`].
    OutOfBounds {
        rank: Rank,
        op: u32,
        what: Op,
        slice: Slice,
        count: u64,
        ranks: u64,
    },
    /// An op reads elements of `out` or a scratch buffer that nothing wrote before (in the
    /// execution order the verifier used).
    UninitializedRead {
        rank: Rank,
        op: u32,
        what: Op,
        slice: Slice,
    },
    /// A rank's output is not the reduction of every rank's input, each exactly once.
    /// `elements` is the first wrong range of `out`, `wrong` the number of wrong elements of the
    /// rank, `got` a rendering of the value of the first wrong element (leaves `xq` are rank q's
    /// input at the same element), `reason` what is wrong with it.
    WrongResult {
        rank: Rank,
        elements: (u64, u64),
        wrong: u64,
        got: String,
        reason: String,
    },
}

/// An op that nothing matches ([`Problem::UnmatchedSend`], [`Problem::UnmatchedRecv`]). Per
/// channel (source, destination, tag) the k-th send matches the k-th receive (MPI's
/// non-overtaking rule); this is op number `nth` (1-based) of its kind on a channel that has
/// `sends` sends and `recvs` receives. `wildcard` is true when the destination posts wildcard
/// receives and the op was left over in the canonical matching (`nth`, `sends` and `recvs`
/// are then 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmatched {
    /// The rank.
    pub rank: Rank,
    /// The op's index in the rank's program.
    pub op: u32,
    /// The op.
    pub what: Op,
    /// The bytes it moves.
    pub bytes: u64,
    /// Its number among the channel's ops of its kind (1-based; 0 with `wildcard`).
    pub nth: u32,
    /// The channel's sends (0 with `wildcard`).
    pub sends: u32,
    /// The channel's receives (0 with `wildcard`).
    pub recvs: u32,
    /// Left over in the canonical matching of wildcard receives.
    pub wildcard: bool,
}

impl Unmatched {
    /// Op `op` of `rank` (`what`, elements of `elem` bytes), left over in the canonical
    /// matching of wildcard receives.
    pub(crate) fn wildcard(rank: Rank, op: u32, what: Op, elem: u32) -> Unmatched {
        Unmatched {
            rank,
            op,
            what,
            bytes: what.bytes(elem),
            nth: 0,
            sends: 0,
            recvs: 0,
            wildcard: true,
        }
    }

    /// Writes the problem's line; `send` says which kind of op is unmatched.
    fn write(&self, f: &mut fmt::Formatter<'_>, send: bool) -> fmt::Result {
        let Unmatched {
            rank,
            op,
            what,
            bytes,
            nth,
            sends,
            recvs,
            wildcard,
        } = self;
        let (kind, fate, left_over) = if send {
            ("send", "is never received", "no receive took it")
        } else {
            ("receive", "blocks forever", "no message was left for it")
        };
        write!(
            f,
            "unmatched {kind}: rank {rank} op {op} ({what}, {bytes} bytes) {fate}: "
        )?;
        if *wildcard {
            write!(
                f,
                "{left_over} in the canonical matching of the wildcard receives"
            )
        } else {
            write!(
                f,
                "it is {kind} {nth} of channel {} which has {} and {}",
                channel(*rank, what),
                plural(*sends as u64, "send", "sends"),
                plural(*recvs as u64, "receive", "receives")
            )
        }
    }
}

/// One op of a deadlock cycle and what it waits for (the next step of the cycle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleStep {
    /// The rank.
    pub rank: Rank,
    /// The op's index in the rank's program.
    pub op: u32,
    /// The op (kind, peer, tag, payload).
    pub what: Op,
    /// How this op waits for the next step.
    pub waits: Wait,
}

/// How one op of a cycle waits for the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wait {
    /// It `requires` the next op: it cannot start before that op completes.
    Requires,
    /// It `irequires` the next op: it cannot start before that op starts.
    IRequires,
    /// A receive waits for the matching send (the next op) to start.
    Message,
    /// A synchronous send waits for the matching receive (the next op) to be posted.
    Rendezvous,
}

impl Problem {
    /// The rank the problem is reported on (the first rank of a cycle).
    pub fn rank(&self) -> Rank {
        match self {
            Problem::UnmatchedSend(Unmatched { rank, .. })
            | Problem::UnmatchedRecv(Unmatched { rank, .. })
            | Problem::AmbiguousMatch { rank, .. }
            | Problem::BufferRace { rank, .. }
            | Problem::OutOfBounds { rank, .. }
            | Problem::UninitializedRead { rank, .. }
            | Problem::WrongResult { rank, .. } => *rank,
            Problem::SizeMismatch { send_rank, .. } => *send_rank,
            Problem::Deadlock { cycle, .. } => cycle.first().map_or(0, |s| s.rank),
        }
    }

    /// A short name of the kind of problem: `unmatched-send`, `unmatched-recv`,
    /// `size-mismatch`, `ambiguous-match`, `deadlock`, `unsafe-deadlock`, `buffer-race`,
    /// `out-of-bounds`, `uninitialized-read`, `wrong-result`.
    pub fn kind(&self) -> &'static str {
        match self {
            Problem::UnmatchedSend(_) => "unmatched-send",
            Problem::UnmatchedRecv(_) => "unmatched-recv",
            Problem::SizeMismatch { .. } => "size-mismatch",
            Problem::AmbiguousMatch { .. } => "ambiguous-match",
            Problem::Deadlock {
                needs_rendezvous: false,
                ..
            } => "deadlock",
            Problem::Deadlock {
                needs_rendezvous: true,
                ..
            } => "unsafe-deadlock",
            Problem::BufferRace { .. } => "buffer-race",
            Problem::OutOfBounds { .. } => "out-of-bounds",
            Problem::UninitializedRead { .. } => "uninitialized-read",
            Problem::WrongResult { .. } => "wrong-result",
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `src→dst tag t` of the channel an op uses (`any` for wildcards).
/// ` (also on N other ranks running the same program)` where the problem stands on `ranks`
/// ranks, more than one.
fn also_on(f: &mut fmt::Formatter<'_>, ranks: u64) -> fmt::Result {
    if ranks > 1 {
        write!(
            f,
            " (also on {} running the same program)",
            plural(ranks - 1, "other rank", "other ranks")
        )?;
    }
    Ok(())
}

fn channel(rank: Rank, what: &Op) -> String {
    let show = |p: Rank| {
        if p == ANY_SOURCE {
            "any".to_string()
        } else {
            p.to_string()
        }
    };
    match what.kind {
        OpKind::Send { peer, tag, .. } => format!("{rank}→{} tag {tag}", show(peer)),
        OpKind::Recv { peer, tag, .. } => {
            let tag = if tag == crate::schedule::ANY_TAG {
                "any".to_string()
            } else {
                tag.to_string()
            };
            format!("{}→{rank} tag {tag}", show(peer))
        }
        _ => String::new(),
    }
}

/// Steps shown in full at each end of a long cycle.
const CYCLE_SHOWN: usize = 8;

impl fmt::Display for CycleStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {} op {} ({})", self.rank, self.op, self.what)
    }
}

impl Wait {
    fn phrase(self) -> &'static str {
        match self {
            Wait::Requires => "waits for the completion of",
            Wait::IRequires => "waits for the start of",
            Wait::Message => "waits for the message of",
            Wait::Rendezvous => "waits for the receive to be posted by",
        }
    }
}

fn write_cycle(f: &mut fmt::Formatter<'_>, cycle: &[CycleStep]) -> fmt::Result {
    let n = cycle.len();
    let Some(first) = cycle.first() else {
        return Ok(());
    };
    write!(f, "{first}")?;
    let long = n > 2 * CYCLE_SHOWN;
    for (k, step) in cycle.iter().enumerate() {
        if long && k == CYCLE_SHOWN {
            write!(f, ", … ({} more steps) …", n - 2 * CYCLE_SHOWN)?;
        }
        if long && k >= CYCLE_SHOWN && k < n - CYCLE_SHOWN {
            continue;
        }
        if k > 0 {
            write!(f, ", which")?;
        }
        write!(f, " {} ", step.waits.phrase())?;
        match cycle.get(k + 1) {
            Some(next) if !(long && k + 1 == CYCLE_SHOWN) => write!(f, "{next}")?,
            Some(next) => write!(f, "rank {} op {}", next.rank, next.op)?,
            None => write!(f, "rank {} op {}", first.rank, first.op)?,
        }
    }
    Ok(())
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::UnmatchedSend(u) => u.write(f, true),
            Problem::UnmatchedRecv(u) => u.write(f, false),
            Problem::SizeMismatch {
                send_rank,
                send_op,
                send,
                send_bytes,
                recv_rank,
                recv_op,
                recv,
                recv_bytes,
            } => {
                let why = if send_bytes > recv_bytes {
                    "the message does not fit (MPI_ERR_TRUNCATE)"
                } else {
                    "a data-semantic schedule needs equal lengths"
                };
                write!(
                    f,
                    "size mismatch: rank {send_rank} op {send_op} ({send}) sends {send_bytes} bytes \
                     to rank {recv_rank} op {recv_op} ({recv}) which receives {recv_bytes} bytes: {why}"
                )
            }
            Problem::AmbiguousMatch { rank, ops, what } => write!(
                f,
                "ambiguous matching: rank {rank} ops {} ({}) and {} ({}) use channel {} but neither \
                 is ordered before the other, so which message meets which receive depends on timing",
                ops[0],
                what[0],
                ops[1],
                what[1],
                channel(*rank, &what[0])
            ),
            Problem::Deadlock {
                cycle,
                needs_rendezvous,
            } => {
                let mut ranks: Vec<Rank> = cycle.iter().map(|s| s.rank).collect();
                ranks.sort_unstable();
                ranks.dedup();
                let shown: Vec<String> = ranks.iter().take(16).map(|r| r.to_string()).collect();
                let more = if ranks.len() > 16 {
                    format!(" and {} more", ranks.len() - 16)
                } else {
                    String::new()
                };
                if *needs_rendezvous {
                    write!(
                        f,
                        "unsafe: deadlocks when sends are synchronous (messages above the eager \
                         limit); relies on MPI buffering. Cycle of {} on {} {}{more}: ",
                        plural(cycle.len() as u64, "op", "ops"),
                        if ranks.len() == 1 { "rank" } else { "ranks" },
                        shown.join(", ")
                    )?;
                } else {
                    write!(
                        f,
                        "deadlock: cycle of {} on {} {}{more}: ",
                        plural(cycle.len() as u64, "op", "ops"),
                        if ranks.len() == 1 { "rank" } else { "ranks" },
                        shown.join(", ")
                    )?;
                }
                write_cycle(f, cycle)
            }
            Problem::BufferRace {
                rank,
                ops,
                what,
                overlap,
                ranks,
            } => {
                write!(
                    f,
                    "buffer race: rank {rank} ops {} ({}) and {} ({}) both touch {overlap}, one of \
                     them writes, and neither completes before the other starts",
                    ops[0], what[0], ops[1], what[1]
                )?;
                also_on(f, *ranks)
            }
            Problem::OutOfBounds {
                rank,
                op,
                what,
                slice,
                count,
                ranks,
            } => {
                write!(
                    f,
                    "out of bounds: rank {rank} op {op} ({what}) uses {slice} but the vectors have \
                     {}",
                    plural(*count, "element", "elements")
                )?;
                also_on(f, *ranks)
            }
            Problem::UninitializedRead {
                rank,
                op,
                what,
                slice,
            } => write!(
                f,
                "uninitialized read: rank {rank} op {op} ({what}) reads {slice} before anything \
                 wrote it"
            ),
            Problem::WrongResult {
                rank,
                elements,
                wrong,
                got,
                reason,
            } => write!(
                f,
                "wrong result: rank {rank} out[{}:{}] holds {got}: {reason} ({} of the output wrong)",
                elements.0,
                elements.1,
                plural(*wrong, "element", "elements")
            ),
        }
    }
}

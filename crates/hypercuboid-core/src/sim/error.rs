//! Errors of a simulation.

use crate::schedule::{DepKind, Rank, ANY_SOURCE, ANY_TAG};
use std::fmt;

/// What a stuck op waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wait {
    /// A posted receive that no message matched (`from` may be [`ANY_SOURCE`], `tag`
    /// [`ANY_TAG`]).
    Message { from: Rank, tag: i32 },
    /// A rendezvous send whose receiver never posted a matching receive.
    Receiver { to: Rank, tag: i32 },
    /// An op that never started because op `on` of the same rank never completed
    /// ([`DepKind::Requires`]) or started ([`DepKind::IRequires`]).
    Dependency { on: u32, kind: DepKind },
}

/// One op that never completed, with what it waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckOp {
    /// Its rank.
    pub rank: Rank,
    /// Its index in the rank's program.
    pub op: u32,
    /// The op, as text (`recv 8b from 1 tag 0`).
    pub text: String,
    /// What it waits for.
    pub wait: Wait,
}

impl StuckOp {
    /// What it waits for, in words (`waits for a message from rank 1 with tag 0`).
    pub fn waits_for(&self) -> String {
        let rank = |r: Rank| {
            if r == ANY_SOURCE {
                "any rank".to_string()
            } else {
                format!("rank {r}")
            }
        };
        let tag = |t: i32| {
            if t == ANY_TAG {
                "any tag".to_string()
            } else {
                format!("tag {t}")
            }
        };
        match &self.wait {
            Wait::Message { from, tag: t } => {
                format!("waits for a message from {} with {}", rank(*from), tag(*t))
            }
            Wait::Receiver { to, tag: t } => format!(
                "waits for {} to post a receive with {} (rendezvous)",
                rank(*to),
                tag(*t)
            ),
            Wait::Dependency { on, kind } => format!(
                "waits for op {on} to {}",
                match kind {
                    DepKind::Requires => "complete",
                    DepKind::IRequires => "start",
                }
            ),
        }
    }
}

impl fmt::Display for StuckOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rank {} op {} ({}) {}",
            self.rank,
            self.op,
            self.text,
            self.waits_for()
        )
    }
}

/// What can go wrong in a simulation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SimError {
    /// Nothing was left to happen but some ops never completed.
    Deadlock {
        /// Ops that never completed, over every call ([`SimOptions::calls`](super::SimOptions::calls)).
        unfinished_ops: u64,
        /// Ranks with such ops.
        stuck_ranks: u64,
        /// The first unfinished op of the first few stuck ranks.
        stuck: Vec<StuckOp>,
    },
    /// Every op completed but some messages were never received.
    Unreceived {
        /// Messages left in unexpected queues.
        messages: u64,
        /// A few of them: `(sender, send op index, receiver, tag)`.
        examples: Vec<(Rank, u32, Rank, i32)>,
    },
    /// The schedule needs more simulator state than allowed.
    TooLarge {
        /// What is too large.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// A thread count above the cap ([`SimOptions::threads`](super::SimOptions::threads)).
    Threads {
        /// The count given.
        value: usize,
        /// The largest accepted ([`crate::resources::MAX_THREADS`]).
        limit: usize,
    },
    /// Simulated time exceeded 2^64 picoseconds.
    TimeOverflow,
    /// The network of a network model was refused (a rank placement, a routing the level
    /// cannot serve) or failed (a deadlock of its packets).
    Network(Box<crate::network::NetworkError>),
    /// The run stopped because a stop was asked for ([`crate::cancel::request`], Ctrl-C).
    Interrupted,
    /// The request needs more memory than the limit ([`crate::resources::check`]).
    Memory(crate::resources::TooLarge),
}

crate::error_from::error_from!(SimError {
    crate::resources::TooLarge => SimError::Memory,
    crate::cancel::Interrupted => |_| SimError::Interrupted,
});

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Deadlock {
                unfinished_ops,
                stuck_ranks,
                stuck,
            } => {
                write!(
                    f,
                    "deadlock: {} on {} never completed",
                    count(*unfinished_ops, "op", "ops"),
                    count(*stuck_ranks, "rank", "ranks")
                )?;
                for (i, s) in stuck.iter().enumerate() {
                    write!(f, "{} {s}", if i == 0 { ":" } else { ";" })?;
                }
                if (stuck.len() as u64) < *stuck_ranks {
                    write!(f, "; ...")?;
                }
                Ok(())
            }
            SimError::Unreceived { messages, examples } => {
                write!(
                    f,
                    "{} sent but never received",
                    count(*messages, "message was", "messages were")
                )?;
                for (i, (src, op, dst, tag)) in examples.iter().enumerate() {
                    write!(
                        f,
                        "{} rank {src} op {op} (to rank {dst} tag {tag})",
                        if i == 0 { ":" } else { ";" }
                    )?;
                }
                if (examples.len() as u64) < *messages {
                    write!(f, "; ...")?;
                }
                Ok(())
            }
            SimError::TooLarge { what, limit } => {
                write!(f, "schedule too large to simulate: {what} (limit {limit})")
            }
            SimError::Threads { value, limit } => write!(
                f,
                "invalid threads {value}: accepted 0 (the engine's choice) to {limit}"
            ),
            SimError::TimeOverflow => {
                write!(f, "simulated time overflowed 2^64 ps (213 days)")
            }
            SimError::Network(e) => write!(f, "{e}"),
            SimError::Memory(e) => write!(f, "{e}"),
            SimError::Interrupted => write!(f, "simulation interrupted"),
        }
    }
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl std::error::Error for SimError {}

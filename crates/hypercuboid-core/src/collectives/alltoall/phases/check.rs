//! The three checks of a phase table (alltoall seed, section 4: the constraints "sufficient to
//! guarantee optimality"): every AAPC message exactly once ([`complete`]), no two messages of
//! one phase on one directed link ([`contention_free`]), as many phases as the lower bound
//! ([`optimal`]). Each returns a [`CheckResult`] naming the first violation found, in phase
//! order then message order.

use super::{LinkRoutes, PhaseTable};
use std::fmt;

/// The first thing found wrong with a phase table.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// A message names a machine outside `0..machines`.
    UnknownMachine {
        /// The phase.
        phase: u32,
        /// The message.
        message: (u32, u32),
        /// Machines of the topology.
        machines: u32,
    },
    /// A machine sends to itself.
    SelfMessage {
        /// The phase.
        phase: u32,
        /// The machine.
        machine: u32,
    },
    /// A message appears twice.
    Repeated {
        /// The message.
        message: (u32, u32),
        /// The phase of its first appearance.
        first: u32,
        /// The phase of its second.
        second: u32,
    },
    /// An AAPC message in no phase.
    Missing {
        /// The message.
        message: (u32, u32),
    },
    /// Two messages of one phase share a directed link.
    Contention {
        /// The phase.
        phase: u32,
        /// The directed link (see [`super::route`] for the numbering).
        link: u32,
        /// Its name, `from->to`, when known.
        link_name: String,
        /// The message that took the link first (in the phase's order).
        first: (u32, u32),
        /// The message that also needs it.
        second: (u32, u32),
    },
    /// More (or fewer) phases than the lower bound.
    PhaseCount {
        /// Phases in the table.
        phases: u64,
        /// The bound.
        bound: u64,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::UnknownMachine {
                phase,
                message: (s, d),
                machines,
            } => write!(
                f,
                "phase {phase}: message {s}->{d} names a machine outside 0..{machines}"
            ),
            Violation::SelfMessage { phase, machine } => {
                write!(f, "phase {phase}: machine {machine} sends to itself")
            }
            Violation::Repeated {
                message: (s, d),
                first,
                second,
            } => write!(
                f,
                "message {s}->{d} is in phase {first} and again in phase {second}"
            ),
            Violation::Missing { message: (s, d) } => write!(f, "message {s}->{d} is in no phase"),
            Violation::Contention {
                phase,
                link,
                link_name,
                first: (a, b),
                second: (c, d),
            } => {
                let name = if link_name.is_empty() {
                    format!("directed link {link}")
                } else {
                    format!("directed link {link} ({link_name})")
                };
                write!(
                    f,
                    "phase {phase}: messages {a}->{b} and {c}->{d} share {name}"
                )
            }
            Violation::PhaseCount { phases, bound } => {
                write!(f, "{phases} phases, and the lower bound is {bound}")
            }
        }
    }
}

/// Whether a check passed, and if not its first violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    /// True when the check passed.
    pub ok: bool,
    /// The first violation (`None` when `ok`).
    pub violation: Option<Violation>,
}

impl CheckResult {
    fn from(violation: Option<Violation>) -> CheckResult {
        CheckResult {
            ok: violation.is_none(),
            violation,
        }
    }
}

/// The three checks of one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checks {
    /// [`complete`].
    pub complete: CheckResult,
    /// [`contention_free`].
    pub contention_free: CheckResult,
    /// [`optimal`] (`None` when no bound was given).
    pub optimal: Option<CheckResult>,
}

impl Checks {
    /// True when every check that ran passed.
    pub fn ok(&self) -> bool {
        self.complete.ok && self.contention_free.ok && self.optimal.as_ref().is_none_or(|c| c.ok)
    }
}

/// Every check on `table`: complete, contention-free under `routes` (naming a contended link
/// with `name`), optimal against `bound`.
pub fn run(
    table: &PhaseTable,
    routes: &LinkRoutes,
    bound: Option<u64>,
    name: impl Fn(u32) -> String,
) -> Checks {
    Checks {
        complete: complete(table),
        contention_free: contention_free_named(table, routes, name),
        optimal: bound.map(|b| optimal(table, b)),
    }
}

/// Every AAPC message `s → d` (`s != d`, both below `table.machines()`) is in exactly one phase.
pub fn complete(table: &PhaseTable) -> CheckResult {
    let n = table.machines() as usize;
    let mut at = vec![u32::MAX; n * n];
    for (p, ms) in table.iter().enumerate() {
        for &(s, d) in ms {
            let phase = p as u32;
            if s as usize >= n || d as usize >= n {
                return CheckResult::from(Some(Violation::UnknownMachine {
                    phase,
                    message: (s, d),
                    machines: n as u32,
                }));
            }
            if s == d {
                return CheckResult::from(Some(Violation::SelfMessage { phase, machine: s }));
            }
            let slot = &mut at[s as usize * n + d as usize];
            if *slot != u32::MAX {
                return CheckResult::from(Some(Violation::Repeated {
                    message: (s, d),
                    first: *slot,
                    second: phase,
                }));
            }
            *slot = phase;
        }
    }
    let missing = (0..n * n).find(|&i| i / n != i % n && at[i] == u32::MAX);
    CheckResult::from(missing.map(|i| Violation::Missing {
        message: ((i / n) as u32, (i % n) as u32),
    }))
}

/// No two messages of one phase share a directed link under `routes`. Messages naming unknown
/// machines or a machine sending to itself are left to [`complete`] (skipped here).
pub fn contention_free(table: &PhaseTable, routes: &LinkRoutes) -> CheckResult {
    contention_free_named(table, routes, |_| String::new())
}

/// As [`contention_free`], naming the contended link with `name`.
pub fn contention_free_named(
    table: &PhaseTable,
    routes: &LinkRoutes,
    name: impl Fn(u32) -> String,
) -> CheckResult {
    let n = routes.num_endpoints() as u32;
    let links = routes.num_directed_links();
    // Per directed link: the phase that last used it (+1) and the message that did.
    let mut stamp = vec![0u32; links];
    let mut owner = vec![(0u32, 0u32); links];
    let mut path = Vec::new();
    for (p, ms) in table.iter().enumerate() {
        let mark = p as u32 + 1;
        for &(s, d) in ms {
            if s >= n || d >= n || s == d {
                continue;
            }
            routes.route_into(s, d, &mut path);
            for &l in &path {
                let li = l as usize;
                if stamp[li] == mark {
                    return CheckResult::from(Some(Violation::Contention {
                        phase: p as u32,
                        link: l,
                        link_name: name(l),
                        first: owner[li],
                        second: (s, d),
                    }));
                }
                stamp[li] = mark;
                owner[li] = (s, d);
            }
        }
    }
    CheckResult::from(None)
}

/// The table has exactly `bound` phases (on a tree, the bottleneck load
/// |M_0|·(|M| − |M_0|) = |M_u|·|M_v|).
pub fn optimal(table: &PhaseTable, bound: u64) -> CheckResult {
    let phases = table.num_phases() as u64;
    CheckResult::from((phases != bound).then_some(Violation::PhaseCount { phases, bound }))
}

/// Messages of the whole AAPC pattern on every directed link under `routes`.
pub fn link_loads(routes: &LinkRoutes) -> Vec<u64> {
    let n = routes.num_endpoints() as u32;
    let mut load = vec![0u64; routes.num_directed_links()];
    let mut path = Vec::new();
    for s in 0..n {
        for d in 0..n {
            if s != d {
                routes.route_into(s, d, &mut path);
                for &l in &path {
                    load[l as usize] += 1;
                }
            }
        }
    }
    load
}

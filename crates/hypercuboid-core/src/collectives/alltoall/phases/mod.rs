//! Contention-free phases of all-to-all personalized communication (AAPC): every machine sends
//! one message to every other, and the messages are split into phases in which no two share a
//! directed link.
//!
//! * On a tree of switches with machines as leaves, [`tree::faraj_yuan`] builds the optimal
//!   phases of Faraj and Yuan (alltoall seed, section 4: the root of 4.1, the extended ring
//!   scheduling of 4.2, the six steps of Figure 4): exactly |M_0|·(|M| − |M_0|) phases, the
//!   load of the bottleneck link, which no schedule can beat.
//! * On any other topology, under a deterministic minimal routing ([`route`]), [`greedy::greedy`]
//!   packs the messages first fit, most constrained first, and improves the packing by iterated
//!   greedy and tabu search (section 6 of issue 15); it reports the lower bound (the largest
//!   directed-link load) it is measured against.
//!
//! [`phases`] picks between them ([`Method`]). The result is a [`PhaseTable`]: phase → messages
//! `(src, dst)`, machine indices in the topology's endpoint order. The checks of [`check`]
//! ([`check::complete`], [`check::contention_free`], [`check::optimal`]) prove each table; their
//! results name the first violation.

pub mod check;
pub mod greedy;
pub mod occupancy;
pub mod random;
pub mod route;
pub mod tree;

use crate::spec::{Choice, Choices};
use crate::topology::{Topology, TopologyError};
use std::fmt;

pub use check::{CheckResult, Checks, Violation};
pub use occupancy::Occupancy;
pub use route::{DirectedLink, LinkRoutes, Routing, PHASE_ROUTINGS};

/// Most machines a phase table is built for (|M|·(|M| − 1) messages: 16,773,120 at 4096).
pub const MAX_MACHINES: usize = 4096;

/// Most machines the general heuristic schedules (it keeps every message's route).
pub const MAX_GREEDY_MACHINES: usize = 1024;

/// What can go wrong building phases. Every message names the bad value and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PhaseError {
    /// The topology could not be built or analysed.
    Topology(TopologyError),
    /// An unknown method name.
    Method {
        /// What was given.
        value: String,
        /// The accepted names.
        accepted: Vec<String>,
    },
    /// An unknown routing name.
    Routing {
        /// What was given.
        value: String,
        /// The accepted names.
        accepted: Vec<String>,
    },
    /// Fewer than two machines: there is nothing to exchange.
    TooFewMachines {
        /// The topology's name.
        topology: String,
        /// Its machines.
        machines: usize,
    },
    /// More machines than the method builds tables for.
    TooManyMachines {
        /// The topology's name.
        topology: String,
        /// Its machines.
        machines: usize,
        /// The method's limit.
        limit: usize,
        /// The method.
        method: &'static str,
    },
    /// The tree scheduler was asked for a topology that is not a tree.
    NotATree {
        /// The topology's name.
        topology: String,
        /// Why not.
        reason: String,
    },
    /// Two routers with machines are not connected.
    Disconnected {
        /// The topology's name.
        topology: String,
        /// One router.
        a: String,
        /// The other.
        b: String,
    },
    /// An occupancy matrix larger than the limit.
    TooLarge {
        /// What was asked for.
        what: String,
        /// The limit.
        limit: String,
    },
}

impl fmt::Display for PhaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhaseError::Topology(e) => write!(f, "{e}"),
            PhaseError::Method { value, accepted } => write!(
                f,
                "unknown alltoall phase method '{value}'; accepted: {}",
                accepted.join(", ")
            ),
            PhaseError::Routing { value, accepted } => write!(
                f,
                "unknown alltoall phase routing '{value}'; accepted: {}",
                accepted.join(", ")
            ),
            PhaseError::TooFewMachines { topology, machines } => write!(
                f,
                "alltoall phases need at least 2 machines, and {topology} has {machines}"
            ),
            PhaseError::TooManyMachines {
                topology,
                machines,
                limit,
                method,
            } => write!(
                f,
                "alltoall phases ({method}): {topology} has {machines} machines, more than the \
                 limit of {limit}"
            ),
            PhaseError::NotATree { topology, reason } => write!(
                f,
                "the Faraj-Yuan tree scheduler needs a tree of switches with machines as \
                 leaves, and {topology} is not one: {reason}; use method auto or greedy"
            ),
            PhaseError::Disconnected { topology, a, b } => write!(
                f,
                "{topology}: routers {a} and {b}, both with machines, are not connected"
            ),
            PhaseError::TooLarge { what, limit } => {
                write!(f, "too large: {what} (limit {limit})")
            }
        }
    }
}

impl std::error::Error for PhaseError {}

impl From<TopologyError> for PhaseError {
    fn from(e: TopologyError) -> Self {
        PhaseError::Topology(e)
    }
}

impl PhaseError {
    /// The accepted values a bad-name error lists (empty otherwise).
    pub fn accepted(&self) -> Vec<String> {
        match self {
            PhaseError::Method { accepted, .. } | PhaseError::Routing { accepted, .. } => {
                accepted.clone()
            }
            PhaseError::Topology(TopologyError::Spec(e)) => e.accepted(),
            _ => Vec::new(),
        }
    }
}

/// How the phases are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Faraj–Yuan on a tree, the greedy heuristic elsewhere.
    Auto,
    /// Faraj–Yuan (seed section 4); an error on a topology that is not a tree.
    FarajYuan,
    /// The first-fit heuristic (any topology, trees included).
    Greedy,
}

/// Every method [`Method::parse`] accepts, in the order errors and help list them.
pub const METHODS: Choices<Method> = Choices::new(
    "alltoall phase method",
    &[
        Choice::new(
            "auto",
            Method::Auto,
            "faraj-yuan on a tree, greedy elsewhere",
        ),
        Choice::aka(
            "faraj-yuan",
            &["tree", "faraj_yuan"],
            Method::FarajYuan,
            "the optimal phases of a switched tree (Faraj and Yuan, section 4)",
        ),
        Choice::aka(
            "greedy",
            &["first-fit"],
            Method::Greedy,
            "first fit, most constrained first, improved by iterated greedy and tabu search \
             (any topology)",
        ),
    ],
);

impl Method {
    /// The method named `text` (a name or alias of [`METHODS`], by the case rule of
    /// [`crate::spec::answers_to`]).
    pub fn parse(text: &str) -> Result<Method, PhaseError> {
        METHODS.parse(text).map_err(|e| PhaseError::Method {
            accepted: e.accepted(),
            value: e.value,
        })
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        METHODS.name(self)
    }
}

/// Phases of messages, stored as CSR: phase `p` holds `messages[offsets[p]..offsets[p + 1]]`.
/// Machine indices are the topology's endpoint order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PhaseTable {
    machines: u32,
    offsets: Vec<u32>,
    messages: Vec<(u32, u32)>,
}

impl PhaseTable {
    /// A table from explicit phases (for tests and callers that build their own).
    pub fn from_phases(machines: u32, phases: &[Vec<(u32, u32)>]) -> PhaseTable {
        let (offsets, messages) = crate::csr::flatten(phases);
        PhaseTable {
            machines,
            offsets,
            messages,
        }
    }

    /// From `(phase, src, dst)` sorted by phase, `phases` phases in all.
    pub(crate) fn from_sorted(
        machines: u32,
        phases: usize,
        sorted: impl Iterator<Item = (u32, u32, u32)>,
    ) -> PhaseTable {
        let mut offsets = vec![0u32; phases + 1];
        let mut messages = Vec::new();
        for (p, s, d) in sorted {
            offsets[p as usize + 1] += 1;
            messages.push((s, d));
        }
        for p in 0..phases {
            offsets[p + 1] += offsets[p];
        }
        PhaseTable {
            machines,
            offsets,
            messages,
        }
    }

    /// Number of machines the table is for.
    pub fn machines(&self) -> u32 {
        self.machines
    }

    /// Number of phases.
    pub fn num_phases(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of messages in all phases.
    pub fn num_messages(&self) -> usize {
        self.messages.len()
    }

    /// The messages `(src, dst)` of phase `p`.
    pub fn phase(&self, p: usize) -> &[(u32, u32)] {
        &self.messages[self.offsets[p] as usize..self.offsets[p + 1] as usize]
    }

    /// The phases in order.
    pub fn iter(&self) -> impl Iterator<Item = &[(u32, u32)]> + '_ {
        (0..self.num_phases()).map(|p| self.phase(p))
    }

    /// The CSR arrays: offsets (phases + 1) and messages.
    pub fn csr(&self) -> (&[u32], &[(u32, u32)]) {
        (&self.offsets, &self.messages)
    }

    /// The phase of every message, `machines × machines` row-major (`src * machines + dst`),
    /// `u32::MAX` where a message is in no phase (the diagonal); the last phase wins for a
    /// message listed twice.
    pub fn phase_of(&self) -> Vec<u32> {
        let n = self.machines as usize;
        let mut at = vec![u32::MAX; n * n];
        for (p, ms) in self.iter().enumerate() {
            for &(s, d) in ms {
                if (s as usize) < n && (d as usize) < n {
                    at[s as usize * n + d as usize] = p as u32;
                }
            }
        }
        at
    }
}

/// Phases for a topology, with the lower bound and the checks' results.
#[derive(Clone, Debug)]
pub struct AlltoallPhases {
    /// The topology's name.
    pub topology: String,
    /// The method that built the table ([`Method::FarajYuan`] or [`Method::Greedy`]).
    pub method: Method,
    /// The routing the table is contention-free under (off trees; a tree has one path).
    pub routing: Routing,
    /// The phases.
    pub table: PhaseTable,
    /// The AAPC load: the most messages of the whole exchange on one directed link under the
    /// routing, the lower bound on the number of phases (on a tree, |M_u|·|M_v| of the
    /// bottleneck).
    pub load: u64,
    /// On a tree, the root of section 4.1 (router index and name); `None` elsewhere.
    pub root: Option<(usize, String)>,
    /// On a tree scheduled by Faraj–Yuan, the machines of the root's subtrees t_0, t_1, …
    /// (most machines first; t_{i,j} is `subtrees[i][j]`); empty otherwise.
    pub subtrees: Vec<Vec<u32>>,
    /// The three checks.
    pub checks: Checks,
}

impl AlltoallPhases {
    /// Number of phases.
    pub fn num_phases(&self) -> usize {
        self.table.num_phases()
    }

    /// Phases above the lower bound.
    pub fn gap(&self) -> u64 {
        (self.num_phases() as u64).saturating_sub(self.load)
    }

    /// Phases over the lower bound (1 is optimal).
    pub fn ratio(&self) -> f64 {
        self.num_phases() as f64 / self.load as f64
    }
}

/// Builds the phases of `topo` by `method` under `routing` and runs the three checks on them.
pub fn phases(
    topo: &Topology,
    method: Method,
    routing: Routing,
) -> Result<AlltoallPhases, PhaseError> {
    let n = topo.num_endpoints();
    if n < 2 {
        return Err(PhaseError::TooFewMachines {
            topology: topo.name().to_string(),
            machines: n,
        });
    }
    let routes = LinkRoutes::new(topo, routing)?;
    let use_tree = match method {
        Method::FarajYuan => true,
        Method::Greedy => false,
        Method::Auto => routes.is_tree(),
    };
    if use_tree {
        let t = tree::faraj_yuan(topo)?;
        let checks = check::run(&t.table, &routes, Some(t.analysis.load), |l| {
            routes.name(topo, l)
        });
        Ok(AlltoallPhases {
            topology: topo.name().to_string(),
            method: Method::FarajYuan,
            routing,
            table: t.table,
            load: t.analysis.load,
            root: Some((t.analysis.root, t.analysis.root_name.clone())),
            subtrees: t.subtrees,
            checks,
        })
    } else {
        let g = greedy::greedy(topo, &routes)?;
        let checks = check::run(&g.table, &routes, Some(g.load), |l| routes.name(topo, l));
        let root = tree::tree_analysis(topo).map(|a| (a.root, a.root_name));
        Ok(AlltoallPhases {
            topology: topo.name().to_string(),
            method: Method::Greedy,
            routing,
            table: g.table,
            load: g.load,
            root,
            subtrees: Vec::new(),
            checks,
        })
    }
}

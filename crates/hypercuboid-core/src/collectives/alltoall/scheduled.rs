//! `scheduled:topo=SPEC[,sync=S][,mapping=FILE]`: the Faraj–Yuan contention-free phases
//! (alltoall seed, section 4; [`super::phases`]) as a schedule, the phases kept apart by
//! synchronisation (seed, section 5; [`super::sync`]).
//!
//! The ranks run on the machines (endpoints) of the topology `topo`: rank `r` on machine `r`
//! (linear), or on the machine the `r`-th line of the mapping file names (an endpoint name
//! such as `n3`, or an index), one line per rank, as a hostfile gives them. Fewer ranks than
//! machines is fine: the messages between machines without a rank are left out, which keeps
//! every phase contention-free. A topology spec with commas writes them as `;` inside the
//! algorithm spec (`topo=fattree:k=4;levels=3`).
//!
//! # Ops of rank `r`
//! The own block's copy, then phase by phase, in phase order, the phases where `r` has a
//! message: the receive and the send of the phase (at most one of each: a phase is
//! contention-free, so no two of its messages share a machine's link), each requiring every
//! op of the rank's previous phase. Data messages have tag 0 (one per pair of ranks).
//! * `sync=pairwise` / `pairwise-reduced` (default): for each synchronisation `m1 → m2`, the
//!   sender of `m1` sends a zero-byte message to the sender of `m2` after `m1`'s send
//!   completes, and `m2`'s send requires its receive. The `k`-th synchronisation from rank
//!   `a` to rank `c` (in the order of their phases) has tag `1 + k`. Synchronisation receives
//!   are posted at once (no dependencies), so a synchronous send never waits for a later phase.
//! * `sync=barrier`: between consecutive phases of the table, a dissemination barrier of
//!   ⌈log₂ N⌉ rounds of zero-byte messages (tags `1 + b·rounds + k`), every rank's first op of
//!   phase `b + 1` requiring the barrier's last round.
//! * `sync=none`: the phase order of each rank only.

use super::phases::{self, LinkRoutes, Method, PhaseTable, Routing};
use super::sync::{self, Message, Sync, MAX_PAIRWISE_SYNCS, SYNCS};
use super::{with_own_copy, Algorithm, Alltoall, AlltoallSpec, Prepared};
use crate::collectives::registry::{prepared_build, Context, Entry, Needs};
use crate::schedule::{OpId, Program, Rank, ScheduleError, Slice, Slot};
use crate::spec::{Form, Key};
use crate::topology::Topology;
use std::sync::Arc;

/// The `scheduled` entry of [`super::ALGORITHMS`].
pub static ENTRY: Entry<Alltoall> = Entry {
    form: Form::named(
        "scheduled",
        "the Faraj-Yuan contention-free phases of a tree of switches (any topology: \
         the phase heuristic), kept apart by synchronisation",
    )
    .with_keys(&[
        Key::new(
            "topo",
            "the topology the ranks run on (tree:fig1, tree:FILE, ...; ';' for the commas \
             of its spec); required unless the caller gives one",
        ),
        Key::new(
            "sync",
            "pairwise-reduced (default), pairwise, barrier or none",
        ),
        Key::new(
            "mapping",
            "a file with one machine (endpoint name or index) per rank; default: rank r on \
             machine r",
        ),
    ])
    .with_example("scheduled:topo=tree:fig1,sync=pairwise"),
    parse: |spec| {
        let sync = spec
            .value("sync", |v| SYNCS.read(v))?
            .unwrap_or(SYNCS.first());
        Ok(Algorithm::Scheduled {
            topo: spec.get("topo").map(|t| t.replace(';', ",")),
            sync,
            mapping: spec.get("mapping").map(str::to_string),
        })
    },
    needs: Needs::Nothing,
    prepare,
    build: prepared_build!(Prepared::Scheduled(plan) => with_own_copy(build, plan)),
    cost: None,
    guarantees: &[],
    examples: &[
        "scheduled:topo=tree:fig1",
        "scheduled:topo=tree:fig1,sync=pairwise",
        "scheduled:topo=tree:fig1,sync=barrier",
        "scheduled:topo=tree:fig1,sync=none",
    ],
};

/// One phase of one rank: what it receives and sends, and its synchronisations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// The phase of the table.
    pub phase: u32,
    /// The rank it receives from this phase.
    pub recv: Option<Rank>,
    /// The rank it sends to this phase.
    pub send: Option<Rank>,
    /// Synchronisations `(from rank, tag)` its send waits for.
    pub sync_in: Vec<(Rank, i32)>,
    /// Synchronisations `(to rank, tag)` it sends after its send completes.
    pub sync_out: Vec<(Rank, i32)>,
}

/// Everything every rank's program is built from.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The synchronisation.
    pub sync: Sync,
    /// The machine of every rank.
    pub machine_of: Vec<u32>,
    /// The topology's name.
    pub topology: String,
    /// The phase table of the whole topology.
    pub table: PhaseTable,
    /// The data messages between machines with ranks, in phase order.
    pub messages: Vec<Message>,
    /// The synchronisation messages `(m1, m2)` (indices into `messages`).
    pub syncs: Vec<(u32, u32)>,
    /// Phases of the table with at least one message between ranks, in order.
    pub active_phases: Vec<u32>,
    /// Every rank's steps, in phase order.
    pub steps: Vec<Vec<Step>>,
    /// Dissemination rounds of each barrier (`sync=barrier`; 0 otherwise).
    pub rounds: u32,
}

fn bad(name: &str, value: &str, reason: impl Into<String>) -> ScheduleError {
    ScheduleError::BadParameter {
        name: name.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

fn prepare(
    alg: &Algorithm,
    spec: &AlltoallSpec,
    ctx: &Context<'_>,
) -> Result<Prepared, ScheduleError> {
    let Algorithm::Scheduled {
        topo,
        sync,
        mapping,
    } = alg
    else {
        unreachable!("a scheduled algorithm")
    };
    let built;
    let topology: &Topology = match (ctx.topology, topo) {
        (Some(t), _) => t,
        (None, Some(text)) => {
            built =
                crate::topology::generate(text).map_err(|e| bad("topo", text, e.to_string()))?;
            &built
        }
        (None, None) => {
            return Err(bad(
                "alltoall algorithm",
                "scheduled",
                "scheduled places the ranks' messages on the links of a topology: give it as \
                 scheduled:topo=SPEC (tree:fig1, tree:FILE, ...)",
            ))
        }
    };
    let machine_of: Vec<u32> = match (ctx.mapping, mapping) {
        (Some(m), _) => m.to_vec(),
        (None, Some(path)) => read_mapping(path, topology)?,
        (None, None) => (0..spec.nranks).collect(),
    };
    Ok(Prepared::Scheduled(Arc::new(plan(
        topology,
        &machine_of,
        *sync,
        spec.nranks,
    )?)))
}

/// Reads a mapping file: one machine per line (an endpoint name of `topo`, or an index);
/// blank lines and `#` comments are skipped.
pub fn read_mapping(path: &str, topo: &Topology) -> Result<Vec<u32>, ScheduleError> {
    let text = crate::resources::read_text(path)
        .map_err(|e| bad("mapping", path, format!("cannot read it: {e}")))?;
    parse_mapping(&text, topo).map_err(|e| bad("mapping", path, e))
}

/// The machines of a mapping's text (see [`read_mapping`]).
pub fn parse_mapping(text: &str, topo: &Topology) -> Result<Vec<u32>, String> {
    let n = topo.num_endpoints();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let w = line.split('#').next().unwrap_or("").trim();
        if w.is_empty() {
            continue;
        }
        let w = w.split_whitespace().next().unwrap_or(w);
        let by_name = (0..n).find(|&e| topo.endpoint_name(e) == Some(w));
        let m = match by_name {
            Some(e) => e as u32,
            None => match w.parse::<u32>() {
                Ok(x) if (x as usize) < n => x,
                _ => {
                    let names: Vec<String> = (0..n)
                        .map(|e| topo.endpoint_name(e).map_or(e.to_string(), str::to_string))
                        .collect();
                    return Err(format!(
                        "line {}: '{w}' is not a machine of {}; accepted: {} or 0 ..= {}",
                        i + 1,
                        topo.name(),
                        names.join(", "),
                        n.saturating_sub(1)
                    ));
                }
            },
        };
        out.push(m);
    }
    Ok(out)
}

/// The plan of `nranks` ranks on the machines `machine_of` of `topo`, kept apart by `sync`.
pub fn plan(
    topo: &Topology,
    machine_of: &[u32],
    sync: Sync,
    nranks: u32,
) -> Result<Plan, ScheduleError> {
    let machines = topo.num_endpoints();
    if nranks as usize > machines {
        return Err(bad(
            "nranks",
            &nranks.to_string(),
            format!(
                "scheduled puts one rank on a machine, and {} has {machines} machines: 1 ..= \
                 {machines} ranks",
                topo.name()
            ),
        ));
    }
    if machine_of.len() != nranks as usize {
        return Err(bad(
            "mapping",
            &format!("{} machines", machine_of.len()),
            format!("the mapping lists one machine per rank, and the alltoall has {nranks} ranks"),
        ));
    }
    let mut rank_on = vec![u32::MAX; machines];
    for (r, &m) in machine_of.iter().enumerate() {
        if m as usize >= machines {
            return Err(bad(
                "mapping",
                &m.to_string(),
                format!("{} has machines 0 ..= {}", topo.name(), machines - 1),
            ));
        }
        if rank_on[m as usize] != u32::MAX {
            return Err(bad(
                "mapping",
                &m.to_string(),
                format!(
                    "ranks {} and {r} are both on machine {m}; scheduled puts one rank on a \
                     machine (at most {machines} ranks on {})",
                    rank_on[m as usize],
                    topo.name()
                ),
            ));
        }
        rank_on[m as usize] = r as u32;
    }
    let err = |e: phases::PhaseError| bad("topo", topo.name(), e.to_string());
    let routes = LinkRoutes::new(topo, Routing::default()).map_err(err)?;
    let table = if machines >= 2 {
        phases::phases(topo, Method::Auto, Routing::default())
            .map_err(err)?
            .table
    } else {
        PhaseTable::from_phases(machines as u32, &[])
    };
    let used: Vec<bool> = rank_on.iter().map(|&r| r != u32::MAX).collect();
    let messages = sync::messages(&table, &used);
    let syncs = match sync {
        Sync::Pairwise => {
            sync::pairwise_edges(&messages, &routes, MAX_PAIRWISE_SYNCS).ok_or_else(|| {
                bad(
                    "sync",
                    "pairwise",
                    format!(
                        "{} ranks on {} need more than {MAX_PAIRWISE_SYNCS} synchronisation \
                         messages; use sync=pairwise-reduced",
                        nranks,
                        topo.name()
                    ),
                )
            })?
        }
        Sync::PairwiseReduced => sync::reduced_edges(&messages, &routes),
        Sync::Barrier | Sync::None => Vec::new(),
    };
    let mut active_phases: Vec<u32> = messages.iter().map(|m| m.phase).collect();
    active_phases.dedup();
    let mut steps: Vec<Vec<Step>> = vec![Vec::new(); nranks as usize];
    let step_of = |steps: &mut Vec<Vec<Step>>, r: u32, phase: u32| -> usize {
        let v = &mut steps[r as usize];
        if v.last().is_none_or(|s| s.phase != phase) {
            v.push(Step {
                phase,
                ..Step::default()
            });
        }
        v.len() - 1
    };
    for m in &messages {
        let (a, b) = (rank_on[m.src as usize], rank_on[m.dst as usize]);
        let i = step_of(&mut steps, a, m.phase);
        steps[a as usize][i].send = Some(b);
        let j = step_of(&mut steps, b, m.phase);
        steps[b as usize][j].recv = Some(a);
    }
    // Synchronisations: the k-th from a to c (in the order of (phase of m1, phase of m2)) has
    // tag 1 + k. `syncs` is sorted by (m1, m2), which is that order for one pair of ranks.
    let mut next_tag: std::collections::HashMap<(u32, u32), i64> = Default::default();
    for &(i, j) in &syncs {
        let (m1, m2) = (messages[i as usize], messages[j as usize]);
        let (a, c) = (rank_on[m1.src as usize], rank_on[m2.src as usize]);
        let k = next_tag.entry((a, c)).or_insert(0);
        *k += 1;
        let tag = i32::try_from(*k).map_err(|_| {
            bad(
                "sync",
                sync.name(),
                "more than 2^31 - 1 synchronisations between two ranks",
            )
        })?;
        let si = steps[a as usize]
            .binary_search_by_key(&m1.phase, |s| s.phase)
            .expect("the sender has a step in its message's phase");
        steps[a as usize][si].sync_out.push((c, tag));
        let sj = steps[c as usize]
            .binary_search_by_key(&m2.phase, |s| s.phase)
            .expect("the sender has a step in its message's phase");
        steps[c as usize][sj].sync_in.push((a, tag));
    }
    let rounds = if sync == Sync::Barrier && nranks > 1 {
        32 - (nranks - 1).leading_zeros()
    } else {
        0
    };
    if rounds > 0 {
        let top = active_phases.len() as u64 * rounds as u64;
        if top >= i32::MAX as u64 {
            return Err(bad(
                "sync",
                "barrier",
                format!("{top} barrier rounds exceed the tags of MPI (2^31 - 1)"),
            ));
        }
    }
    Ok(Plan {
        sync,
        machine_of: machine_of.to_vec(),
        topology: topo.name().to_string(),
        table,
        messages,
        syncs,
        active_phases,
        steps,
        rounds,
    })
}

/// Writes rank `rank`'s phases (nranks ≥ 2, count ≥ 1).
fn build(plan: &Plan, spec: &AlltoallSpec, rank: Rank, out: &mut Program) {
    let empty_in = Slice::new(Slot::Input, 0, 0);
    let empty_out = Slice::new(Slot::Output, 0, 0);
    let mut prev: Vec<OpId> = Vec::new();
    let mut cur: Vec<OpId> = Vec::new();
    let steps = &plan.steps[rank as usize];
    if plan.sync == Sync::Barrier {
        let n = spec.nranks;
        let mut si = 0;
        for (b, &phase) in plan.active_phases.iter().enumerate() {
            if b > 0 {
                // The dissemination barrier between active phases b - 1 and b.
                for k in 0..plan.rounds {
                    let d = 1i64 << k;
                    let tag = 1 + ((b - 1) as u32 * plan.rounds + k) as i32;
                    let to = super::shift(rank, d, n);
                    let from = super::shift(rank, -d, n);
                    let r = out.recv(from, tag, empty_out);
                    let s = out.send(to, tag, empty_in);
                    out.requires_all(r, &prev);
                    out.requires_all(s, &prev);
                    prev.clear();
                    prev.extend([r, s]);
                }
            }
            if si < steps.len() && steps[si].phase == phase {
                let st = &steps[si];
                data_ops(st, spec, out, &prev, &mut cur);
                std::mem::swap(&mut prev, &mut cur);
                si += 1;
            }
        }
        return;
    }
    // Synchronisation receives first, posted at once.
    let mut sync_recvs: Vec<Vec<OpId>> = Vec::with_capacity(steps.len());
    for st in steps {
        sync_recvs.push(
            st.sync_in
                .iter()
                .map(|&(from, tag)| out.recv(from, tag, empty_out))
                .collect(),
        );
    }
    for (st, syncs) in steps.iter().zip(&sync_recvs) {
        let send = data_ops(st, spec, out, &prev, &mut cur);
        if let Some(s) = send {
            out.requires_all(s, syncs);
            for &(to, tag) in &st.sync_out {
                let x = out.send(to, tag, empty_in);
                out.requires(x, s);
            }
        }
        std::mem::swap(&mut prev, &mut cur);
    }
}

/// The receive and send of one step, each requiring `prev`; `cur` gets them. Returns the send.
fn data_ops(
    st: &Step,
    spec: &AlltoallSpec,
    out: &mut Program,
    prev: &[OpId],
    cur: &mut Vec<OpId>,
) -> Option<OpId> {
    cur.clear();
    if let Some(from) = st.recv {
        let r = out.recv(from, 0, spec.block(Slot::Output, from));
        out.requires_all(r, prev);
        cur.push(r);
    }
    let mut send = None;
    if let Some(to) = st.send {
        let s = out.send(to, 0, spec.block(Slot::Input, to));
        out.requires_all(s, prev);
        cur.push(s);
        send = Some(s);
    }
    send
}

/// Synchronisation messages of each variant for `nranks` ranks on `topo` (rank `r` on
/// machine `machine_of[r]`): `(pairwise, pairwise-reduced, barrier)`, the barrier's counted
/// as ⌈log₂ N⌉ · N zero-byte messages per boundary between phases.
pub fn sync_counts(topo: &Topology, machine_of: &[u32]) -> Result<SyncCounts, ScheduleError> {
    let n = machine_of.len() as u32;
    let p = plan(topo, machine_of, Sync::PairwiseReduced, n)?;
    let routes = LinkRoutes::new(topo, Routing::default())
        .map_err(|e| bad("topo", topo.name(), e.to_string()))?;
    let rounds = if n > 1 {
        32 - (n - 1).leading_zeros()
    } else {
        0
    } as u64;
    let work = sync::pairwise_work(&p.messages, &routes);
    if work > sync::MAX_PAIRWISE_WORK {
        return Err(bad(
            "topo",
            topo.name(),
            format!(
                "counting the pairwise synchronisations of {n} ranks visits {work} pairs of \
                 messages on shared links, more than {}: use fewer machines",
                sync::MAX_PAIRWISE_WORK
            ),
        ));
    }
    Ok(SyncCounts {
        messages: p.messages.len() as u64,
        phases: p.active_phases.len() as u64,
        pairwise: sync::pairwise_count(&p.messages, &routes),
        reduced: p.syncs.len() as u64,
        barrier: (p.active_phases.len() as u64).saturating_sub(1) * rounds * n as u64,
    })
}

/// What [`sync_counts`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncCounts {
    /// Data messages.
    pub messages: u64,
    /// Phases with at least one message.
    pub phases: u64,
    /// Synchronisation messages of `sync=pairwise` (before the reduction).
    pub pairwise: u64,
    /// Synchronisation messages of `sync=pairwise-reduced` (after it).
    pub reduced: u64,
    /// Zero-byte messages of `sync=barrier`.
    pub barrier: u64,
}

/// The happens-before check of [`sync::enforces_phases`] on the schedule of `plan`.
pub fn enforces_phases(
    s: &crate::schedule::Schedule,
    plan: &Plan,
    topo: &Topology,
) -> Result<sync::Enforcement, ScheduleError> {
    let routes = LinkRoutes::new(topo, Routing::default())
        .map_err(|e| bad("topo", topo.name(), e.to_string()))?;
    sync::enforces_phases(s, &plan.machine_of, &plan.messages, &routes)
        .map_err(|e| bad("schedule", "scheduled", e.to_string()))
}

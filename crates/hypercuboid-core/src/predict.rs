//! Predict: the time of every algorithm of a collective on a grid of message sizes and rank
//! counts under one cost model, and the best algorithm of each (rank count, size).
//!
//! Every grid point builds the algorithm's schedule through the registry and simulates it on
//! the model ([`crate::sim::simulate`], one thread per point); the points run in parallel, on
//! every core for a grid of more than one point unless asked otherwise, and give the same
//! result on any number of threads. `recursive_multiplying:auto` is resolved per point, as
//! the PMPI library resolves it for a communicator: the schedule the recursive-multiplying
//! search ranks first under the model's closed form for the point's vector
//! ([`crate::collectives::allreduce::recursive_multiplying::search::resolve`]; postal and
//! pipelined models only). `hypercuboid predict`, `hypercuboid tune` and the PMPI library's
//! decision table all read their choice from here.
//!
//! ```
//! use hypercuboid_core::model::parse_model;
//! use hypercuboid_core::predict::{predict, Collective, Grid};
//!
//! let model = parse_model("postal:alpha=1us,beta=1ns").unwrap();
//! let grid = Grid::new(Collective::Allreduce, &["recursive_doubling", "ring"], &[8, 1 << 20], &[4]);
//! let p = predict(&grid, &model, 1).unwrap();
//! assert_eq!(p.rows.len(), 4);
//! // Small vectors: recursive doubling (2 rounds of α) beats the ring (6 rounds).
//! assert_eq!(p.best(4, 8).unwrap().algorithm, "recursive_doubling");
//! assert_eq!(p.best(4, 1 << 20).unwrap().algorithm, "ring");
//! ```

use crate::collectives::allreduce::recursive_multiplying::search::{self, Params};
use crate::collectives::allreduce::recursive_multiplying::ENTRY as RM;
use crate::collectives::allreduce::{self, Allreduce, AllreduceSpec};
use crate::collectives::alltoall::{self, Alltoall, AlltoallSpec};
use crate::collectives::registry::{Family, Needs};
use crate::model::{node_host, ModelSpec, NodeModel, NodeSpec};
use crate::schedule::{Dtype, ReduceOp, Schedule, ScheduleError};
use crate::sim::{self, SimError, SimOptions};
use crate::units::Time;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The collectives predict knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// `allreduce`: every rank ends with the reduction (a sum) of every rank's vector.
    Allreduce,
    /// `alltoall`: a size is the bytes each rank sends to each rank.
    Alltoall,
}

impl Collective {
    /// Every collective, in the order lists give them.
    pub const ALL: [Collective; 2] = [Collective::Allreduce, Collective::Alltoall];

    /// Its name (`allreduce`).
    pub fn name(self) -> &'static str {
        match self {
            Collective::Allreduce => Allreduce::NAME,
            Collective::Alltoall => Alltoall::NAME,
        }
    }

    /// The collective named `name`; an error lists the accepted names.
    pub fn parse(name: &str) -> Result<Collective, ScheduleError> {
        Collective::ALL
            .into_iter()
            .find(|c| c.name() == name.trim())
            .ok_or_else(|| ScheduleError::UnknownName {
                what: "collective",
                name: name.to_string(),
                accepted: Collective::ALL.iter().map(|c| c.name().into()).collect(),
            })
    }

    /// The element type a grid uses unless told: float64 for an allreduce (summed), uint8
    /// for an alltoall (any size in bytes).
    pub fn default_dtype(self) -> Dtype {
        match self {
            Collective::Allreduce => Dtype::Float64,
            Collective::Alltoall => Dtype::Uint8,
        }
    }

    /// Every registered algorithm of the collective that runs from its name alone (no
    /// topology, no required argument), in registry order, with `recursive_multiplying:auto`
    /// in the place of `recursive_multiplying`: what a grid runs unless told.
    pub fn default_algorithms(self) -> Vec<String> {
        match self {
            Collective::Allreduce => runnable::<Allreduce>(
                |name| (name == RM.form.name).then(|| format!("{name}:{}", search::AUTO)),
                |name| {
                    let spec = AllreduceSpec::new(2, 1, Dtype::Float64, ReduceOp::Sum);
                    allreduce::Algorithm::parse(name)
                        .and_then(|a| allreduce::generate(&a, &spec))
                        .is_ok()
                },
            ),
            Collective::Alltoall => runnable::<Alltoall>(
                |_| None,
                |name| {
                    let spec = AlltoallSpec::new(2, 1, Dtype::Uint8);
                    alltoall::Algorithm::parse(name)
                        .and_then(|a| alltoall::generate(&a, &spec))
                        .is_ok()
                },
            ),
        }
    }

    /// The names an algorithm of the collective may be given by (for errors).
    pub fn accepted(self) -> Vec<String> {
        match self {
            Collective::Allreduce => {
                let mut a = allreduce::Algorithm::accepted();
                a.push(format!("{}:{}", RM.form.name, search::AUTO));
                a
            }
            Collective::Alltoall => alltoall::Algorithm::accepted(),
        }
    }

    /// Checks an algorithm's spec (a one-line error naming it and the accepted ones).
    pub fn check(self, algorithm: &str) -> Result<(), ScheduleError> {
        match self {
            Collective::Allreduce if search::is_auto(algorithm) => Ok(()),
            Collective::Allreduce => match allreduce::Algorithm::parse(algorithm) {
                Ok(_) => Ok(()),
                Err(e) if !e.accepted().is_empty() && !algorithm.contains(':') => {
                    Err(ScheduleError::UnknownName {
                        what: "allreduce algorithm",
                        name: algorithm.trim().to_string(),
                        accepted: self.accepted(),
                    })
                }
                Err(e) => Err(e),
            },
            Collective::Alltoall => alltoall::Algorithm::parse(algorithm).map(|_| ()),
        }
    }
}

/// The names of `F`'s algorithms that need nothing beyond the problem and build a small
/// problem from their bare name (`builds`); `instead` may replace one by another spec.
fn runnable<F: Family>(
    instead: impl Fn(&str) -> Option<String>,
    builds: impl Fn(&str) -> bool,
) -> Vec<String> {
    F::algorithms()
        .iter()
        .filter_map(|e| {
            let name = e.form.name;
            if let Some(other) = instead(name) {
                return Some(other);
            }
            (e.needs == Needs::Nothing && builds(name)).then(|| name.to_string())
        })
        .collect()
}

/// What to predict: a collective, its algorithms (specs as users type them), the sizes (bytes
/// of each rank's vector for an allreduce, per pair of ranks for an alltoall) and the rank
/// counts, with an element type.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// The collective.
    pub collective: Collective,
    /// Algorithm specs (`ring`, `recursive_multiplying:auto`, `k_bruck:k=4`).
    pub algorithms: Vec<String>,
    /// Sizes in bytes, each a positive multiple of the element size.
    pub sizes: Vec<u64>,
    /// Rank counts.
    pub ranks: Vec<u32>,
    /// Element type.
    pub dtype: Dtype,
    /// The model `recursive_multiplying:auto` is tuned under when the grid's model has no
    /// closed form to tune by (LogGOPS): a postal or pipelined model, such as a calibrated
    /// model file's `models.pipelined`. None: auto runs only under a postal or pipelined model.
    pub tuning: Option<ModelSpec>,
}

impl Grid {
    /// A grid with the collective's default element type.
    pub fn new(collective: Collective, algorithms: &[&str], sizes: &[u64], ranks: &[u32]) -> Grid {
        Grid {
            collective,
            algorithms: algorithms.iter().map(|a| a.to_string()).collect(),
            sizes: sizes.to_vec(),
            ranks: ranks.to_vec(),
            dtype: collective.default_dtype(),
            tuning: None,
        }
    }

    /// Checks the grid: at least one algorithm, size and rank count, every algorithm known,
    /// every size a positive multiple of the element size, every rank count at least 1.
    pub fn validate(&self) -> Result<(), ScheduleError> {
        let empty = |what: &str, accepted: String| ScheduleError::BadParameter {
            name: what.into(),
            value: String::new(),
            reason: format!("the grid is empty: give at least one ({accepted})"),
        };
        if self.algorithms.is_empty() {
            return Err(empty(
                "algorithms",
                format!("accepted: {}", self.collective.accepted().join(", ")),
            ));
        }
        if self.sizes.is_empty() {
            return Err(empty(
                "sizes",
                "sizes in bytes such as 8, 1KiB, 1MiB".into(),
            ));
        }
        if self.ranks.is_empty() {
            return Err(empty("ranks", "rank counts of 1 or more".into()));
        }
        for a in &self.algorithms {
            self.collective.check(a)?;
        }
        let elem = self.dtype.size() as u64;
        for &s in &self.sizes {
            if s == 0 || !s.is_multiple_of(elem) {
                return Err(ScheduleError::BadParameter {
                    name: "size".into(),
                    value: format!("{s} B"),
                    reason: format!(
                        "a size is a positive multiple of the element size ({} B of {})",
                        elem,
                        self.dtype.name()
                    ),
                });
            }
        }
        if let Some(&n) = self.ranks.iter().find(|&&n| n == 0) {
            return Err(ScheduleError::BadRankCount {
                nranks: n as u64,
                reason: "a grid's rank counts are 1 or more".into(),
            });
        }
        Ok(())
    }

    /// The number of grid points.
    pub fn len(&self) -> usize {
        self.algorithms.len() * self.sizes.len() * self.ranks.len()
    }

    /// Whether the grid has no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Point `i` in row order: rank counts outermost, then sizes, then algorithms.
    fn point(&self, i: usize) -> (u32, u64, usize) {
        let a = self.algorithms.len();
        let s = self.sizes.len();
        (self.ranks[i / (a * s)], self.sizes[(i / a) % s], i % a)
    }
}

/// One grid point's prediction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// Ranks.
    pub nranks: u32,
    /// Bytes (per rank's vector, or per pair of ranks for an alltoall).
    pub bytes: u64,
    /// The algorithm as the grid gave it.
    pub algorithm: String,
    /// The algorithm that ran, in canonical form (`recursive_multiplying:auto` resolved to
    /// its schedule), `None` if it could not be built.
    pub schedule: Option<String>,
    /// The simulated completion time, or why there is none (the algorithm does not fit the
    /// rank count, ...).
    pub time: Result<Time, String>,
    /// Whether it is the best of its (rank count, size): the least time, the first in the
    /// grid's algorithm order on a tie.
    pub best: bool,
}

/// A grid's predictions, one row per point in the grid's order ([`Grid`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predicted {
    /// The collective.
    pub collective: Collective,
    /// The model, in canonical form.
    pub model: String,
    /// One row per point.
    pub rows: Vec<Prediction>,
}

impl Predicted {
    /// The best row of `(nranks, bytes)`, if any algorithm ran there.
    pub fn best(&self, nranks: u32, bytes: u64) -> Option<&Prediction> {
        self.rows
            .iter()
            .find(|r| r.best && r.nranks == nranks && r.bytes == bytes)
    }
}

/// An error that stops the whole grid (the others are a row's).
fn fatal(e: &SimError) -> Option<ScheduleError> {
    match e {
        SimError::Interrupted => Some(ScheduleError::Interrupted),
        SimError::Memory(t) => Some(ScheduleError::Memory(t.clone())),
        _ => None,
    }
}

/// The schedule of `algorithm` at a point, and its canonical name.
fn build(
    grid: &Grid,
    algorithm: &str,
    nranks: u32,
    bytes: u64,
    model: &ModelSpec,
) -> Result<(Schedule, String), ScheduleError> {
    let count = bytes / grid.dtype.size() as u64;
    match grid.collective {
        Collective::Allreduce => {
            let alg = if search::is_auto(algorithm) {
                let model = match (model, &grid.tuning) {
                    (ModelSpec::LogGops(_), Some(tuning)) => tuning,
                    _ => model,
                };
                let p =
                    Params::from_model(model, bytes).map_err(|e| ScheduleError::BadParameter {
                        name: "model".into(),
                        value: model.name().into(),
                        reason: format!(
                            "{algorithm} is tuned under a postal or pipelined model: {e}"
                        ),
                    })?;
                search::resolve(algorithm, nranks, &p).map_err(|e| match e {
                    search::TuningError::Schedule(s) => s,
                    other => ScheduleError::BadParameter {
                        name: "algorithm".into(),
                        value: algorithm.into(),
                        reason: other.to_string(),
                    },
                })?
            } else {
                allreduce::Algorithm::parse(algorithm)?
            };
            let spec = AllreduceSpec::new(nranks, count, grid.dtype, ReduceOp::Sum);
            Ok((allreduce::generate(&alg, &spec)?, alg.name().into_owned()))
        }
        Collective::Alltoall => {
            let alg = alltoall::Algorithm::parse(algorithm)?;
            let spec = AlltoallSpec::new(nranks, count, grid.dtype);
            Ok((alltoall::generate(&alg, &spec)?, alg.name().into_owned()))
        }
    }
}

/// One point: its row, or an error that stops the grid.
fn point(
    grid: &Grid,
    i: usize,
    model: &ModelSpec,
    node: Option<&NodeSpec>,
) -> Result<Prediction, ScheduleError> {
    crate::cancel::check()?;
    let (nranks, bytes, a) = grid.point(i);
    let algorithm = grid.algorithms[a].clone();
    let (schedule, time) = match build(grid, &algorithm, nranks, bytes, model) {
        Err(e @ (ScheduleError::Interrupted | ScheduleError::Memory(_))) => return Err(e),
        Err(e) => (None, Err(e.to_string())),
        Ok((s, name)) => {
            let opts = SimOptions {
                threads: 1,
                ..SimOptions::default()
            };
            let run = match node {
                None => sim::simulate(&s, model, &opts),
                Some(n) => match NodeModel::from_specs(model, n, nranks) {
                    Ok(m) => sim::simulate_with(&s, &m, &opts),
                    Err(e) => return Err(bad_node_host(model, e)),
                },
            };
            match run {
                Ok(r) => (Some(name), Ok(r.completion)),
                Err(e) => match fatal(&e) {
                    Some(f) => return Err(f),
                    None => (Some(name), Err(e.to_string())),
                },
            }
        }
    };
    Ok(Prediction {
        nranks,
        bytes,
        algorithm,
        schedule,
        time,
        best: false,
    })
}

/// The error of a node level on a host model without CPU and NIC costs.
fn bad_node_host(model: &ModelSpec, e: crate::model::ModelError) -> ScheduleError {
    ScheduleError::BadParameter {
        name: "model".into(),
        value: model.to_string(),
        reason: e.to_string(),
    }
}

/// [`predict_on`] without a node level.
pub fn predict(grid: &Grid, model: &ModelSpec, threads: usize) -> Result<Predicted, ScheduleError> {
    predict_on(grid, model, None, threads)
}

/// Predicts every point of `grid` under `model` (with `node`, on the node level: `model` is
/// then the LogGOPS host model and the ranks of a node share its bandwidth,
/// [`crate::model::NodeModel`]) on `threads` threads (0: every core for a
/// grid of more than one point, else one; the result is the same for any number) and marks
/// the best algorithm of each (rank count, size). A bad grid ([`Grid::validate`]), Ctrl-C
/// ([`crate::cancel`]) and a schedule too large for the memory stop it; an algorithm that
/// cannot run at a point (a schedule string that does not fit its rank count) is that row's
/// error.
pub fn predict_on(
    grid: &Grid,
    model: &ModelSpec,
    node: Option<&NodeSpec>,
    threads: usize,
) -> Result<Predicted, ScheduleError> {
    grid.validate()?;
    if node.is_some() {
        node_host(model).map_err(|e| bad_node_host(model, e))?;
    }
    if threads > crate::resources::MAX_THREADS {
        return Err(ScheduleError::BadParameter {
            name: "threads".into(),
            value: threads.to_string(),
            reason: format!("0 ..= {} threads", crate::resources::MAX_THREADS),
        });
    }
    let n = grid.len();
    let workers = crate::barrier::threads(threads, n > 1).min(n).max(1);
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<Prediction>>> = Mutex::new(vec![None; n]);
    let first_err: Mutex<Option<(usize, ScheduleError)>> = Mutex::new(None);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            return;
        }
        match point(grid, i, model, node) {
            Ok(p) => slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(p),
            Err(e) => {
                let mut g = first_err.lock().unwrap_or_else(|e| e.into_inner());
                if g.as_ref().is_none_or(|(j, _)| i < *j) {
                    *g = Some((i, e));
                }
                next.store(n, Ordering::Relaxed);
                return;
            }
        }
    };
    if workers == 1 {
        work();
    } else {
        std::thread::scope(|sc| {
            for _ in 0..workers {
                sc.spawn(work);
            }
        });
    }
    if let Some((_, e)) = first_err.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let mut rows: Vec<Prediction> = slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|p| p.expect("every point ran"))
        .collect();
    for group in rows.chunks_mut(grid.algorithms.len()) {
        let best = group
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.time.as_ref().ok().map(|&t| (t, i)))
            .min();
        if let Some((_, i)) = best {
            group[i].best = true;
        }
    }
    Ok(Predicted {
        collective: grid.collective,
        model: match node {
            None => model.to_string(),
            Some(n) => format!("{model} + {n}"),
        },
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model;

    fn postal() -> ModelSpec {
        parse_model("postal:alpha=1us,beta=1ns").unwrap()
    }

    #[test]
    fn rows_follow_the_grid_and_equal_simulate() {
        let algs = ["ring", "recursive_doubling", "recursive_multiplying:auto"];
        let grid = Grid::new(Collective::Allreduce, &algs, &[8, 4096], &[2, 6]);
        let m = postal();
        let p = predict(&grid, &m, 1).unwrap();
        assert_eq!(p.rows.len(), 12);
        let mut i = 0;
        for n in [2, 6] {
            for b in [8, 4096] {
                for a in algs {
                    let r = &p.rows[i];
                    assert_eq!((r.nranks, r.bytes, r.algorithm.as_str()), (n, b, a));
                    let (s, name) = build(&grid, a, n, b, &m).unwrap();
                    assert_eq!(r.schedule.as_deref(), Some(name.as_str()));
                    let t = sim::simulate(&s, &m, &SimOptions::default())
                        .unwrap()
                        .completion;
                    assert_eq!(r.time, Ok(t));
                    i += 1;
                }
                let bests: Vec<_> = p.rows[i - 3..i].iter().filter(|r| r.best).collect();
                assert_eq!(bests.len(), 1);
                let least = p.rows[i - 3..i]
                    .iter()
                    .map(|r| r.time.clone().unwrap())
                    .min();
                assert_eq!(bests[0].time, Ok(least.unwrap()));
            }
        }
        // On 2 ranks, 8 B, recursive doubling is one exchange: α + 8β = 1.008 us.
        assert_eq!(p.rows[1].time, Ok(1_008_000));
        // auto resolved to the schedule the search ranks first: one stage of 2 on 2 ranks.
        assert_eq!(
            p.rows[2].schedule.as_deref(),
            Some("recursive_multiplying:a2")
        );
    }

    #[test]
    fn threads_do_not_change_the_result() {
        let grid = Grid::new(
            Collective::Alltoall,
            &["linear", "pairwise", "bruck"],
            &[1, 64, 65536],
            &[3, 8],
        );
        let m = postal();
        assert_eq!(
            predict(&grid, &m, 1).unwrap(),
            predict(&grid, &m, 4).unwrap()
        );
    }

    #[test]
    fn a_point_that_does_not_fit_is_its_rows_error() {
        let grid = Grid::new(
            Collective::Allreduce,
            &["recursive_multiplying:a2,a2", "ring"],
            &[8],
            &[4, 6],
        );
        let p = predict(&grid, &postal(), 0).unwrap();
        assert!(p.rows[0].time.is_ok());
        assert!(p.rows[2].time.as_ref().unwrap_err().contains("a2,a2"));
        assert!(p.rows[3].best);
        // auto under LogGOPS: no closed form to tune under.
        let l = parse_model("loggops:L=1us,o=1us,g=1us,G=1ns,O=0,S=0").unwrap();
        let g = Grid::new(
            Collective::Allreduce,
            &["recursive_multiplying:auto"],
            &[8],
            &[4],
        );
        let e = predict(&g, &l, 1).unwrap().rows[0]
            .time
            .clone()
            .unwrap_err();
        assert!(e.contains("postal or pipelined"), "{e}");
        // With a tuning model (a model file's models.pipelined), auto is tuned under it and
        // simulated under LogGOPS: the schedule the pipelined model picks, LogGOPS's time.
        let pipe = parse_model("pipelined:alpha_p=1us,alpha_r=100ns,beta=1ns").unwrap();
        let tuned = Grid {
            tuning: Some(pipe.clone()),
            ..g.clone()
        };
        let row = &predict(&tuned, &l, 1).unwrap().rows[0];
        let under_pipe = &predict(&g, &pipe, 1).unwrap().rows[0];
        let schedule = under_pipe.schedule.clone().unwrap();
        assert_eq!(row.schedule.as_deref(), Some(schedule.as_str()));
        let named = Grid::new(Collective::Allreduce, &[schedule.as_str()], &[8], &[4]);
        assert_eq!(row.time, predict(&named, &l, 1).unwrap().rows[0].time);
        // A tuning model is not used where the grid's own model has a closed form.
        let postal_tuned = Grid {
            tuning: Some(pipe),
            ..g.clone()
        };
        assert_eq!(
            predict(&postal_tuned, &postal(), 1).unwrap().rows[0].schedule,
            predict(&g, &postal(), 1).unwrap().rows[0].schedule
        );
    }

    #[test]
    fn a_node_of_one_rank_each_is_the_host_model() {
        let host = parse_model("loggops:L=1us,o=200ns,g=100ns,G=0.1ns,O=0,S=0").unwrap();
        let grid = Grid::new(
            Collective::Allreduce,
            &["ring", "recursive_doubling"],
            &[8, 65536],
            &[4],
        );
        let alone = predict(&grid, &host, 1).unwrap();
        let one = crate::model::parse_node("node:ranks=1,bw=10GB/s").unwrap();
        let on = predict_on(&grid, &host, Some(&one), 1).unwrap();
        assert_eq!(on.rows, alone.rows);
        assert_eq!(on.model, format!("{host} + {one}"));
        // Four ranks on one node sharing 1 GB/s: the 64 KiB ring is slower than alone.
        let shared = crate::model::parse_node("node:ranks=4,bw=1GB/s").unwrap();
        let on = predict_on(&grid, &host, Some(&shared), 1).unwrap();
        assert!(on.rows[2].time.clone().unwrap() > alone.rows[2].time.clone().unwrap());
        let e = predict_on(&grid, &postal(), Some(&one), 1)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("invalid model 'postal:"), "{e}");
    }

    #[test]
    fn bad_grids_are_one_line_errors() {
        let m = postal();
        let e = |g: Grid| predict(&g, &m, 1).unwrap_err().to_string();
        let msg = e(Grid::new(Collective::Allreduce, &[], &[8], &[2]));
        assert!(
            msg.starts_with("invalid algorithms '': the grid is empty"),
            "{msg}"
        );
        assert!(msg.contains("recursive_multiplying:auto"), "{msg}");
        let msg = e(Grid::new(Collective::Alltoall, &["nope"], &[8], &[2]));
        assert!(
            msg.starts_with("unknown alltoall algorithm 'nope'; accepted: linear"),
            "{msg}"
        );
        let msg = e(Grid::new(Collective::Allreduce, &["ring"], &[12], &[2]));
        assert!(
            msg.contains("'12 B'") && msg.contains("8 B of float64"),
            "{msg}"
        );
        assert!(e(Grid::new(Collective::Allreduce, &["ring"], &[], &[2])).contains("empty"));
        assert!(e(Grid::new(Collective::Allreduce, &["ring"], &[8], &[0])).contains("1 or more"));
        assert_eq!(
            Collective::parse("bcast").unwrap_err().to_string(),
            "unknown collective 'bcast'; accepted: allreduce, alltoall"
        );
    }

    #[test]
    fn default_algorithms_are_the_registrys() {
        let a = Collective::Allreduce.default_algorithms();
        assert!(a.contains(&"recursive_multiplying:auto".to_string()));
        assert!(!a.contains(&"recursive_multiplying".to_string()));
        assert_eq!(a.len(), allreduce::ALGORITHMS.len());
        let t = Collective::Alltoall.default_algorithms();
        assert!(!t.contains(&"scheduled".to_string()), "{t:?}");
        assert_eq!(t.len(), alltoall::ALGORITHMS.len() - 1);
        for c in Collective::ALL {
            for alg in c.default_algorithms() {
                c.check(&alg).unwrap();
            }
        }
    }
}

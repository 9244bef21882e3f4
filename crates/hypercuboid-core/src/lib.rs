//! hypercuboid-core: design, verify and simulate the communication of HPC programs.
//!
//! This crate has no Python dependency; `hypercuboid-py` wraps it as `hypercuboid._core` and
//! `hypercuboid-capi` as a C library. Everything here is usable from Rust alone.
//!
//! # The schedule
//!
//! One intermediate representation sits in the middle: the [`Schedule`](schedule::Schedule),
//! one program of ops per rank. An op sends, receives, reduces, copies, computes or sleeps
//! ([`schedule::OpKind`]); it names buffer slices (a slot, `input`, `output` or `scratch k`,
//! and an element range), so the same schedule is simulated (sizes only), verified
//! (symbolically) and executed (real data). Ops depend on earlier ops of their rank with GOAL's
//! semantics (`requires`: after the other completes; `irequires`: after it starts). The
//! schedule's [`Meta`](schedule::Meta) says what it computes (an allreduce with its operator,
//! an alltoall, a halo exchange, or nothing for sizes-only GOAL), which tells the verifier
//! what "correct" means.
//!
//! Storage is columnar: each distinct program *shape* is stored once and each op's peer
//! follows a rule of the rank ([`schedule::PeerRule`]), so recursive doubling on 2^20 ranks is
//! one shape of 40 ops and nothing per rank. A [`ScheduleBuilder`](schedule::ScheduleBuilder)
//! takes one rank's program at a time.
//!
//! # The rooms, and which way the data flows
//!
//! ```text
//!  units, spec ─────────── times, sizes, rates; the one NAME:key=value grammar
//!  topology ───────────── graphs of routers and endpoints, generators, analysis
//!  network ────────────── routing (with its channel dependency graphs), traffic, the packet
//!                          and flow engines
//!  schedule ───────────── the IR, its builder, verify/, goal/ (GOAL text), export (C, traces)
//!  model ──────────────── cost models behind one trait (postal, pipelined, LogGOPS, and the
//!                          network model, which drives the network engines)
//!  sim ────────────────── the discrete-event engine that runs a schedule on a model
//!  collectives ────────── generators (allreduce, alltoall, halo), their registry, tuning
//!  lbm, native ────────── the D3Q19 proxy application; the native runner's C sources
//! ```
//!
//! A room's code uses the rooms above it in this list and never one below (tests may: a
//! verifier test generates its schedules with [`collectives`]). The network engines know
//! nothing of schedules or cost models; [`model::NetworkModel`] is the cost model that puts a
//! schedule's messages on them. Generators ([`collectives`]) produce schedules, or GOAL text is
//! read ([`schedule::goal`]); the verifier ([`schedule::verify`]) checks them; the engine
//! ([`sim`]) runs them on a cost model ([`model`]), which may be a simulated network
//! ([`network`] over a [`topology`]); the exports write them as GOAL text, a C routine or a
//! Chrome trace. Below every room sit the helpers they share: [`arith`], [`lattice`],
//! [`cancel`], [`resources`] and the crate's private hints and thread barrier.
//!
//! # Errors
//!
//! Each room has one documented error type (a `#[non_exhaustive]` enum where it has several
//! kinds) whose messages name the bad value and what is accepted: [`spec::SpecError`], [`units::UnitError`],
//! [`topology::TopologyError`], [`schedule::ScheduleError`], [`model::ModelError`],
//! [`network::NetworkError`], [`sim::SimError`], and the generators' own
//! ([`collectives::allreduce::recursive_multiplying::search::TuningError`],
//! [`collectives::alltoall::phases::PhaseError`], [`lbm::LbmError`]). A verifier finding is
//! not an error: [`verify`](schedule::verify::verify) returns a
//! [`Report`](schedule::verify::Report) that lists the problems.
//!
//! # Cancel and resources
//!
//! Long runs poll one process-wide stop flag ([`cancel`]: `request`, `clear`, `check`), and
//! refuse before allocating what would not fit ([`resources::check`] against
//! [`resources::set_memory_limit`] or the machine's available memory). `ScheduleError`,
//! `SimError` and `NetworkError` carry both as their `Interrupted` and `Memory` variants.
//!
//! # Example
//!
//! Build a recursive-doubling allreduce on 8 ranks, verify it, and simulate it in the postal
//! model: three exchange steps of `α + nβ` each (eq. 1 of the seed with γ = 0).
//!
//! ```
//! use hypercuboid_core::collectives::allreduce::{self, cost, Algorithm, AllreduceSpec};
//! use hypercuboid_core::model::{parse_model, ModelSpec};
//! use hypercuboid_core::schedule::verify::{verify, VerifyOptions};
//! use hypercuboid_core::schedule::{Dtype, ReduceOp};
//! use hypercuboid_core::sim::{simulate, SimOptions};
//!
//! let spec = AllreduceSpec::new(8, 1024, Dtype::Float64, ReduceOp::Sum);
//! let schedule = allreduce::generate(&Algorithm::parse("recursive_doubling")?, &spec)?;
//! assert_eq!((schedule.nranks(), schedule.num_shapes()), (8, 1));
//!
//! let report = verify(&schedule, &VerifyOptions::default());
//! assert!(report.is_sound(), "{:?}", report.problems);
//!
//! let model = parse_model("postal:alpha=1us,beta=0.5ns")?;
//! let result = simulate(&schedule, &model, &SimOptions::default())?;
//! // Picoseconds: 3 × (1 µs + 8192 bytes × 0.5 ns).
//! assert_eq!(result.completion, 3 * (1_000_000 + 4_096_000));
//! let ModelSpec::Postal(postal) = model else { unreachable!() };
//! assert_eq!(result.completion, cost::recursive_doubling(&spec, &postal)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod apptrace;
pub mod arith;
mod barrier;
pub mod calibrate;
pub mod cancel;
pub mod collectives;
mod csr;
mod error_from;
mod hint;
pub mod lattice;
pub mod lbm;
pub mod model;
mod name_display;
pub mod native;
pub mod network;
pub mod predict;
pub mod resources;
pub mod schedule;
pub mod sim;
pub mod spec;
pub mod topology;
pub mod units;

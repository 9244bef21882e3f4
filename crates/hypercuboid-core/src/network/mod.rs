//! Network simulation: routing (MIN / Valiant / UGAL) with virtual channels, traffic patterns,
//! packet-level engine.
//!
//! Reproduces the methodology of the diameter-two seed (Kathareios, Minkenberg, Prisacari,
//! Rodriguez and Hoefler, "Cost-Effective Diameter-Two Topologies: Analysis and Evaluation",
//! SC15), sections 3 and 4, on every topology of [`crate::topology`]:
//!
//! * [`routing`] — MIN, INR (Valiant), UGAL-L and UGAL-L with a threshold, and the
//!   virtual-channel assignments that make them deadlock-free;
//! * [`cdg`] — the channel dependency graph of a routing, to prove it acyclic;
//! * [`traffic`] — uniform, worst-case, permutation and shift patterns, all-to-all and 3-D
//!   nearest-neighbour exchanges;
//! * [`packet`] — the packet-level, event-driven simulator (virtual cut-through, input-output
//!   buffered routers, credits) with a deadlock watchdog, run to its end or stepped by a
//!   caller that injects messages;
//! * [`flow`] — the flow-level engine: messages as flows sharing link bandwidth max–min
//!   fairly, for speed at large messages;
//! * [`stats`] — what a run measures.
//!
//! ```
//! use hypercuboid_core::network::{Network, NetParams, RoutingSpec, Synthetic, TrafficSpec, Workload};
//! use hypercuboid_core::topology::generate;
//! use hypercuboid_core::units;
//!
//! let topo = generate("mlfm:h=4").unwrap();
//! let net = Network::new(&topo, &RoutingSpec::parse("min").unwrap(), NetParams::default()).unwrap();
//! let pattern = TrafficSpec::Uniform.resolve(&topo, net.routes(), 1).unwrap();
//! let mut load = Synthetic::new(pattern, 0.3);
//! load.duration = units::us(20);
//! load.warmup = units::us(5);
//! let report = net.run(&Workload::Synthetic(load), "uniform").unwrap();
//! assert!((report.accepted - 0.3).abs() < 0.05);
//! ```

pub(crate) mod error;
mod exchange;
pub mod flow;
pub mod packet;
pub mod rng;
pub mod routing;
pub mod stats;
pub mod traffic;

pub use error::NetworkError;
pub use flow::FlowEngine;
pub use packet::{
    Delivery, Engine, Injection, NetParams, Network, NicOrder, Switching, Synthetic, Workload,
};
pub use routing::cdg::{self, Cdg};
pub use routing::{
    format_cycle, Algorithm, Channel, MinChoice, Routes, RoutingSpec, UgalCost, VcPolicy, VcScheme,
};
pub use stats::{Histogram, LinkUse, LinkUtilisation, Report};
pub use traffic::{fit_torus, ExchangePlan, ExchangeSpec, Pattern, TrafficSpec};

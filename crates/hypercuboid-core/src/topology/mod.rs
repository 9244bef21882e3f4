//! Topologies: generators, analysis and exports.
//!
//! A [`Topology`] is a graph of routers with endpoints attached to them and links with
//! bandwidth and latency. Generators, one module per family, build them from parameters or
//! from a spec string ([`generate`]`("slimfly:q=13,p=9")`); [`analyze`] computes the cost and
//! distance figures (sizes, radices, ports and links per endpoint, diameter, average hops,
//! minimal-path diversity, Moore-bound fraction, tree AAPC bottleneck);
//! [`bisection`] refines a router partition into an exact endpoint bisection; [`export`]
//! writes our JSON schema, GraphML, BookSim2 `anynet` and Graphviz dot; [`simgrid`] writes and
//! reads SimGrid platform XML.
//!
//! Families: [`slimfly`] (MMS graphs over GF(q)), [`polarfly`] (ER_q), [`mlfm`]
//! (Multi-Layer Full-Mesh), [`oft`] (two-level Orthogonal Fat-Tree), [`hyperx`],
//! [`fattree`] (full-bisection fat trees and k-ary n-trees), [`dragonfly`], [`torus`] (and
//! meshes), [`fullmesh`], [`tree`] (Ethernet switched trees from a description), and any graph
//! from our JSON or an edge list ([`export`]).

pub mod analysis;
pub mod bisection;
pub mod compare;
pub mod dragonfly;
mod error;
pub mod export;
pub mod fattree;
pub mod fullmesh;
pub mod galois;
mod graph;
pub mod hyperx;
pub mod mlfm;
pub mod oft;
pub mod polarfly;
pub mod simgrid;
pub mod slimfly;
pub mod spec;
pub mod switch;
pub mod torus;
pub mod tree;

pub use analysis::{
    analyze, router_distances, try_analyze, Analysis, DistanceMatrix, MAX_ANALYSIS_ROUTERS,
};
pub use bisection::{bisect, refine_bisection, Bisection};
pub use error::TopologyError;
pub use graph::{Link, LinkParams, Topology, TopologyParts, MAX_ELEMENTS};
pub use spec::{generate, graphml_source, parse_spec, Family, FAMILIES};
pub use switch::{Ethernet, SwitchModel};

/// Closed-form size of a generator's output (checked against the built graph in tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Routers R.
    pub routers: u64,
    /// Endpoints N.
    pub endpoints: u64,
    /// Router-to-router links.
    pub links: u64,
    /// Largest number of ports of a router (network + endpoint ports).
    pub router_radix: u32,
    /// Largest number of router-to-router ports of a router.
    pub network_radix: u32,
}

impl Size {
    /// Router ports (2 per router-to-router link, 1 per endpoint) per endpoint.
    pub fn ports_per_endpoint(&self) -> f64 {
        (2 * self.links + self.endpoints) as f64 / self.endpoints as f64
    }

    /// Links (router-to-router and endpoint links) per endpoint.
    pub fn links_per_endpoint(&self) -> f64 {
        (self.links + self.endpoints) as f64 / self.endpoints as f64
    }
}

//! Node specifications: `node:ranks=R,bw=BW[,nic=BW][,map=block|round_robin]`, read through the
//! one spec grammar ([`crate::spec`]) against one table ([`NODES`]), and printed back in
//! canonical form. The model that runs them is [`super::NodeModel`].

use super::error::ModelError;
use super::ModelSpec;
use crate::spec::{self, Choice, Choices, Form, Key, Spec, SpecError};
use std::fmt;

/// How ranks are placed on nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NodeMap {
    /// Ranks fill nodes in order: rank r on node ⌊r / R⌋ (the last node may be partial).
    #[default]
    Block,
    /// Ranks go round the ⌈N / R⌉ nodes: rank r on node r mod ⌈N / R⌉.
    RoundRobin,
}

/// The values of the node spec's `map` key, the default first.
pub const NODE_MAPS: Choices<NodeMap> = Choices::new(
    "map",
    &[
        Choice::new(
            "block",
            NodeMap::Block,
            "rank r on node floor(r / R); the last node may hold fewer",
        ),
        Choice::aka(
            "round_robin",
            &["round-robin"],
            NodeMap::RoundRobin,
            "rank r on node r mod ceil(N / R)",
        ),
    ],
);

const NODE: Form = Form::named(
    "node",
    "ranks of a node share its memory bandwidth (and its NIC) by max-min fair flows, \
     on top of a LogGOPS host model",
)
.with_keys(&[
    Key::new("ranks", "ranks per node, R >= 1 (required)"),
    Key::new(
        "bw",
        "bandwidth all concurrent transfers between ranks of one node share (memory \
         copies), such as 12GB/s (no limit when left out)",
    ),
    Key::new(
        "nic",
        "bandwidth a node's transfers to other nodes share, and its transfers from other \
         nodes share, such as 25GB/s (no limit when left out: LogGOPS between nodes)",
    ),
    Key::new(
        "map",
        "rank to node: block (rank r on node r / R; default) or round_robin (r mod the \
         node count)",
    ),
])
.with_example("node:ranks=16,bw=12GB/s");

/// The node specs [`parse_node`] accepts (one entry: `node`).
pub const NODES: &[Form] = &[NODE];

/// A node level: how many ranks share a node, the bandwidths they share and how ranks are
/// placed. Bandwidths are in Gb/s, as [`crate::units::parse_bandwidth`] reads them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeSpec {
    /// Ranks per node (R ≥ 1).
    pub ranks: u32,
    /// The bandwidth transfers between ranks of one node share (Gb/s), if limited.
    pub bw: Option<f64>,
    /// The bandwidth a node's inter-node transfers share, each direction (Gb/s), if limited.
    pub nic: Option<f64>,
    /// Rank → node.
    pub map: NodeMap,
}

impl NodeSpec {
    /// The nodes `nranks` ranks take: ⌈N / R⌉ (at least 1).
    pub fn nodes(&self, nranks: u32) -> u32 {
        nranks.div_ceil(self.ranks).max(1)
    }

    /// The node of `rank` among `nranks` ranks.
    pub fn node_of(&self, rank: u32, nranks: u32) -> u32 {
        match self.map {
            NodeMap::Block => rank / self.ranks,
            NodeMap::RoundRobin => rank % self.nodes(nranks),
        }
    }
}

fn build(s: &Spec) -> Result<NodeSpec, SpecError> {
    let ranks = s.required("ranks", |v| {
        spec::whole::<u32>(v)
            .ok()
            .filter(|&r| r >= 1)
            .ok_or_else(|| "accepted: a whole number of ranks per node, 1 or more".to_string())
    })?;
    let bw = s.value("bw", spec::bandwidth)?;
    let nic = s.value("nic", spec::bandwidth)?;
    if bw.is_none() && nic.is_none() {
        return Err(s.missing("bw (or nic)"));
    }
    let map = s
        .value("map", |v| NODE_MAPS.read(v))?
        .unwrap_or(NodeMap::Block);
    Ok(NodeSpec {
        ranks,
        bw,
        nic,
        map,
    })
}

/// Parses a node spec: `node:ranks=16,bw=12GB/s`, `node:ranks=8,bw=20GB/s,nic=12.5GB/s`,
/// `node:ranks=4,nic=100Gbps,map=round_robin`. `ranks` is required, and one of `bw` and `nic`
/// at least; bandwidths take the units of [`crate::units::parse_bandwidth`] (`12GB/s`,
/// `100Gbps`; a bare number is Gb/s).
pub fn parse_node(text: &str) -> Result<NodeSpec, ModelError> {
    let (form, s) = spec::parse("node", NODES, |f| f, text)?;
    debug_assert_eq!(form.name, "node");
    Ok(build(&s)?)
}

/// The host model of a node level: `model` if it is a LogGOPS model; a postal or pipelined
/// model (no CPU or NIC costs to put beside the node's shared bandwidth) is refused.
pub fn node_host(model: &ModelSpec) -> Result<super::LogGopsModel, ModelError> {
    match model {
        ModelSpec::LogGops(m) => Ok(*m),
        other => Err(ModelError::Parameter {
            name: "host model",
            value: other.to_string(),
            reason: "a node level needs a host model with CPU and NIC costs, \
                     loggops:o=...,O=...,g=...,G=...,S=... (its G is each rank's own limit); \
                     postal and pipelined have none",
        }),
    }
}

impl fmt::Display for NodeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node:ranks={}", self.ranks)?;
        if let Some(bw) = self.bw {
            write!(f, ",bw={bw}Gbps")?;
        }
        if let Some(nic) = self.nic {
            write!(f, ",nic={nic}Gbps")?;
        }
        if self.map != NodeMap::Block {
            write!(f, ",map={}", NODE_MAPS.name(self.map))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model;

    fn err(text: &str) -> String {
        parse_node(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_the_keys_and_prints_them_back() {
        let n = parse_node("node:ranks=16,bw=12GB/s").unwrap();
        assert_eq!(
            n,
            NodeSpec {
                ranks: 16,
                bw: Some(96.0),
                nic: None,
                map: NodeMap::Block
            }
        );
        assert_eq!(n.to_string(), "node:ranks=16,bw=96Gbps");
        let m = parse_node("node:ranks=4,nic=12.5GB/s,map=round-robin").unwrap();
        assert_eq!(m.nic, Some(100.0));
        assert_eq!(m.bw, None);
        assert_eq!(m.map, NodeMap::RoundRobin);
        assert_eq!(m.to_string(), "node:ranks=4,nic=100Gbps,map=round_robin");
        for spec in [n, m] {
            assert_eq!(parse_node(&spec.to_string()).unwrap(), spec);
        }
        assert_eq!(
            parse_node(NODE.example).unwrap().to_string(),
            "node:ranks=16,bw=96Gbps"
        );
    }

    #[test]
    fn maps_ranks_block_and_round_robin_with_a_partial_last_node() {
        let block = parse_node("node:ranks=4,bw=1GB/s").unwrap();
        let rr = parse_node("node:ranks=4,bw=1GB/s,map=round_robin").unwrap();
        // 10 ranks on 3 nodes: 4, 4 and 2 (block); 4, 3 and 3 (round robin).
        assert_eq!(block.nodes(10), 3);
        let b: Vec<u32> = (0..10).map(|r| block.node_of(r, 10)).collect();
        assert_eq!(b, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]);
        let r: Vec<u32> = (0..10).map(|x| rr.node_of(x, 10)).collect();
        assert_eq!(r, [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn bad_node_specs_name_the_value_and_what_is_accepted() {
        assert_eq!(
            err("node:ranks=16,bw=1GB/s,cores=4"),
            "invalid node spec 'node:ranks=16,bw=1GB/s,cores=4': unknown key 'cores' for \
             node; accepted: ranks, bw, nic, map"
        );
        assert_eq!(
            err("node:ranks=0,bw=1GB/s"),
            "invalid node spec 'node:ranks=0,bw=1GB/s': ranks=0: accepted: a whole number of \
             ranks per node, 1 or more"
        );
        assert_eq!(
            err("node:ranks=4,bw=0"),
            "invalid node spec 'node:ranks=4,bw=0': bw=0: a bandwidth must be > 0"
        );
        assert_eq!(
            err("node:ranks=4,bw=-1GB/s"),
            "invalid node spec 'node:ranks=4,bw=-1GB/s': bw=-1GB/s: negative; bandwidths must \
             be > 0"
        );
        assert_eq!(
            err("node:ranks=4,nic=fast"),
            format!(
                "invalid node spec 'node:ranks=4,nic=fast': nic=fast: {}",
                crate::units::parse_bandwidth("fast").unwrap_err().reason
            )
        );
        assert!(
            err("node:bw=1GB/s").contains("needs ranks"),
            "{}",
            err("node:bw=1GB/s")
        );
        assert!(
            err("node:ranks=4").contains("needs bw (or nic)"),
            "{}",
            err("node:ranks=4")
        );
        assert_eq!(
            err("node:ranks=4,bw=1GB/s,map=scatter"),
            "invalid node spec 'node:ranks=4,bw=1GB/s,map=scatter': map=scatter: accepted: \
             block, round_robin"
        );
        assert_eq!(
            err("socket:ranks=4"),
            "unknown node 'socket'; accepted: node"
        );
    }

    #[test]
    fn only_loggops_hosts_a_node_level() {
        let l = parse_model("loggops:o=1us").unwrap();
        assert!(node_host(&l).is_ok());
        for p in ["postal:alpha=1us", "pipelined:alpha_p=1us"] {
            let m = parse_model(p).unwrap();
            assert_eq!(
                node_host(&m).unwrap_err().to_string(),
                format!(
                    "invalid host model '{m}': a node level needs a host model with CPU and \
                     NIC costs, loggops:o=...,O=...,g=...,G=...,S=... (its G is each rank's \
                     own limit); postal and pipelined have none"
                )
            );
        }
    }
}

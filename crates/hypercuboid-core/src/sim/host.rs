//! What a run on a network takes from a front end's words, checked and read here rather than
//! in each front end: the host model ([`network_host`]: only LogGOPS has the CPU and NIC costs
//! a network needs), the rank mapping ([`Mapping::from_spec`]: a name, or `file:PATH` read
//! here), and the Chrome trace's link counters ([`NetworkRun::counter_tracks`]).

use crate::model::{LogGopsModel, Mapping, ModelError, ModelSpec};
use crate::network::NetworkError;

use super::{CounterTrack, NetworkRun};

/// The hosts' model of a run on a network: `model` if it is a LogGOPS model, LogGOPSim's
/// defaults without one; a postal or pipelined model (no CPU or NIC costs) is refused.
pub fn network_host(model: Option<&ModelSpec>) -> Result<LogGopsModel, ModelError> {
    match model {
        None => Ok(LogGopsModel::default()),
        Some(ModelSpec::LogGops(m)) => Ok(*m),
        Some(other) => Err(ModelError::Parameter {
            name: "host model",
            value: other.to_string(),
            reason: "a network needs a host model with CPU and NIC costs, \
                     loggops:o=...,O=...,g=...,S=... (its L and G apply only between ranks of \
                     one endpoint); postal and pipelined have none",
        }),
    }
}

impl Mapping {
    /// The mapping a front end names: `linear`, `round_robin`, `random[:seed=K]` (see
    /// [`Mapping::parse`]) or `file:PATH`, a file of one endpoint per rank (see
    /// [`Mapping::from_lines`]), read here.
    pub fn from_spec(text: &str) -> Result<Mapping, NetworkError> {
        match text.strip_prefix("file:") {
            None => Mapping::parse(text),
            Some(path) => {
                let text =
                    crate::resources::read_text(path).map_err(|e| NetworkError::Parameter {
                        name: "mapping file",
                        value: path.to_string(),
                        reason: format!("{e}; it lists one endpoint per rank"),
                    })?;
                Mapping::from_lines(&text, path)
            }
        }
    }
}

impl NetworkRun {
    /// The sampled links' utilisation as Chrome trace counter tracks (one per link, named
    /// `a -> b`, each value holding from the start of its interval); empty when the run did not
    /// sample its links.
    pub fn counter_tracks(&self) -> Vec<CounterTrack> {
        let Some(tl) = &self.timeline else {
            return Vec::new();
        };
        tl.links
            .iter()
            .map(|(i, u)| {
                let l = &self.links[*i];
                let mut starts = vec![0];
                starts.extend_from_slice(&tl.times[..tl.times.len().saturating_sub(1)]);
                CounterTrack {
                    name: format!("{} -> {}", l.a, l.b),
                    points: starts.into_iter().zip(u.iter().copied()).collect(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model;

    #[test]
    fn only_loggops_hosts_a_network() {
        assert_eq!(network_host(None), Ok(LogGopsModel::default()));
        let m = parse_model("loggops:o=1us").unwrap();
        assert!(network_host(Some(&m)).is_ok());
        let p = parse_model("postal:alpha=1us").unwrap();
        let e = network_host(Some(&p)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "invalid host model '{p}': a network needs a host model with CPU and NIC costs, \
                 loggops:o=...,O=...,g=...,S=... (its L and G apply only between ranks of one \
                 endpoint); postal and pipelined have none"
            )
        );
    }

    #[test]
    fn a_mapping_file_is_read_here() {
        let dir = std::env::temp_dir().join(format!("hc-host-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("map.txt");
        std::fs::write(&path, "3\n# a comment\n1\n").unwrap();
        let spec = format!("file:{}", path.display());
        assert_eq!(Mapping::from_spec(&spec), Ok(Mapping::Explicit(vec![3, 1])));
        assert_eq!(Mapping::from_spec("linear"), Ok(Mapping::Linear));
        let missing = dir.join("missing.txt");
        let e = Mapping::from_spec(&format!("file:{}", missing.display())).unwrap_err();
        assert!(e.to_string().starts_with(&format!(
            "invalid mapping file {}: No such file or directory",
            missing.display()
        )));
        assert!(e.to_string().ends_with("; it lists one endpoint per rank"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

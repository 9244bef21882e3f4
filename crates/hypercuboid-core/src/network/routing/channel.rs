//! Channels: one virtual channel of a directed router-to-router link, the unit of the channel
//! dependency graph ([`crate::network::cdg`]) and of the cycles the packet engine's deadlock
//! watchdog reports.

use std::fmt;

/// One virtual channel of a directed router-to-router link: `from -> to` on VC `vc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Channel {
    /// Router the link leaves.
    pub from: u32,
    /// Router the link enters.
    pub to: u32,
    /// Virtual channel.
    pub vc: u8,
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}->r{} vc{}", self.from, self.to, self.vc)
    }
}

/// Formats a cycle of channels as `a -> b -> ... -> a`.
pub fn format_cycle(cycle: &[Channel]) -> String {
    let mut s = String::new();
    for c in cycle {
        s.push_str(&c.to_string());
        s.push_str(" => ");
    }
    if let Some(c) = cycle.first() {
        s.push_str(&c.to_string());
    }
    s
}

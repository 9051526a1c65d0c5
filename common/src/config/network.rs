//! `[network]`: the bandwidths the launcher built, for reports and policies.

use super::*;

/// `[network]`: what the launcher built between the hosts. Benchmarks
/// record it beside their figures, because a locality rate means little
/// without the bandwidths it was measured on; and the master gives the
/// policies its rates as the bandwidths of a remote read
/// ([`NetworkConfig::bandwidths`]), as Hadoop gives them the rack topology.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub host_rate: String,
    #[serde(default)]
    pub uplink_rate: String,
}

impl NetworkConfig {
    /// Bytes per second of a read from another host of the rack (its host
    /// port) and from another rack (the slower of the port and the
    /// uplink), when the launcher wrote both rates.
    pub fn bandwidths(&self) -> Option<(f64, f64)> {
        let host = crate::units::parse_rate(&self.host_rate).ok()?;
        let up = crate::units::parse_rate(&self.uplink_rate).ok()?;
        Some((host, host.min(up)))
    }
}

//! `[dfs]`: blocks, replication and the block scanner.

use super::*;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DfsConfig {
    #[serde(deserialize_with = "de_size", default = "default_block_size")]
    pub block_size: u64,
    #[serde(default = "default_replication")]
    pub replication: u32,
    /// How often each worker re-verifies every stored block's checksum, so
    /// that rot is found before a reader needs the block (HDFS's block
    /// scanner re-verifies every 3 weeks; disks here are smaller).
    #[serde(deserialize_with = "de_duration", default = "default_scan_interval")]
    pub scan_interval: Duration,
    /// How long after a worker's start its first scan begins: minutes, not
    /// a whole `scan_interval`, so that rot on a worker that restarts often
    /// is still found. A `scan_interval` shorter than this wins.
    #[serde(deserialize_with = "de_duration", default = "default_scan_first_delay")]
    pub scan_first_delay: Duration,
    /// Bytes per second the scanner may read, so that a scan never competes
    /// with tasks for the disk (HDFS's `dfs.block.scanner.volume.bytes.per.second`,
    /// 1 MiB/s there, where a scan has three weeks). Between
    /// [`MIN_SCAN_RATE`] and [`MAX_SCAN_RATE`].
    #[serde(deserialize_with = "de_size", default = "default_scan_rate")]
    pub scan_rate: u64,
    /// How long a block stream may go without moving (no chunk taken by
    /// the next hop, no chunk or answer received) before the peer counts
    /// as failed: a slow or stalled target is then left out of the
    /// pipeline, or a reader goes on to the next replica, as for a dead
    /// one. HTTP/2 keep-alives only catch a peer that is gone, not one
    /// that answers pings and takes no data. HDFS's
    /// `dfs.client.socket-timeout`, whose default (60 s) this is.
    #[serde(deserialize_with = "de_duration", default = "default_stream_timeout")]
    pub stream_timeout: Duration,
}

pub(super) fn default_stream_timeout() -> Duration {
    Duration::from_secs(60)
}

/// Slowest scan accepted: 64 KiB/s still scans 5 GiB in a day.
pub const MIN_SCAN_RATE: u64 = 64 << 10;
/// Fastest scan accepted: beyond what one disk reads.
pub const MAX_SCAN_RATE: u64 = 10 << 30;

pub(super) fn default_scan_interval() -> Duration {
    Duration::from_secs(6 * 3600)
}
pub(super) fn default_scan_first_delay() -> Duration {
    Duration::from_secs(60)
}
pub(super) fn default_scan_rate() -> u64 {
    16 << 20
}

pub(super) fn default_block_size() -> u64 {
    64 << 20
}
pub(super) fn default_replication() -> u32 {
    3
}

impl Default for DfsConfig {
    fn default() -> Self {
        DfsConfig {
            block_size: default_block_size(),
            replication: default_replication(),
            scan_interval: default_scan_interval(),
            scan_first_delay: default_scan_first_delay(),
            scan_rate: default_scan_rate(),
            stream_timeout: default_stream_timeout(),
        }
    }
}

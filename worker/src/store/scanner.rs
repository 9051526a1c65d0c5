//! The block scanner: re-verifies every stored block's CRC32C, so that a
//! rotten replica is reported and replaced even if no reader touches it
//! (HDFS's `BlockScanner`).
//!
//! The first pass starts `dfs.scan_first_delay` after the worker starts
//! (a minute by default), not a whole `dfs.scan_interval` (6 h) later: a
//! worker that restarts more often than that would otherwise never scan.
//! Each pass reads at most `dfs.scan_rate` bytes a second, so that a scan
//! never takes the disk from the tasks. A corrupt replica is reported,
//! never deleted here: the master decides, since it may be the last copy.

use crate::edge::master_client::MasterLink;
use crate::store::blocks::Blocks;
use crate::store::disk::StoreError;
use std::sync::Arc;
use std::time::Duration;

pub async fn run(blocks: Arc<Blocks>, link: Arc<MasterLink>, dfs: common::config::DfsConfig) {
    let every = dfs.scan_interval;
    let mut wait = dfs.scan_first_delay.min(every);
    loop {
        tokio::time::sleep(wait).await;
        wait = every;
        let started = tokio::time::Instant::now();
        let (scanned, bad) = scan_once(&blocks, &link, dfs.scan_rate).await;
        tracing::info!(
            blocks = scanned,
            corrupt = bad,
            took_s = started.elapsed().as_secs_f64(),
            "block scan done"
        );
        if bad > 0 {
            tracing::warn!(corrupt = bad, "block scan found corrupt replicas");
        }
    }
}

/// One pass over every stored block, reading at most `rate` bytes a
/// second; returns the blocks scanned and the corrupt ones found (each
/// reported to the master).
pub async fn scan_once(blocks: &Arc<Blocks>, link: &MasterLink, rate: u64) -> (usize, usize) {
    let stored = blocks.store().report();
    let mut throttle = Throttle::new(rate, tokio::time::Instant::now());
    let mut bad = 0;
    for b in &stored {
        tokio::time::sleep_until(throttle.admit(b.len)).await;
        let owner = blocks.clone();
        let id = b.id;
        let res = tokio::task::spawn_blocking(move || owner.store().read(id).map(|_| ())).await;
        if let Ok(Err(StoreError::Corrupt { why, .. })) = res {
            bad += 1;
            blocks.report_bad_block(link, id, why).await;
        }
    }
    (stored.len(), bad)
}

/// Paces reads to `rate` bytes a second: each read of `n` bytes may start
/// once the reads before it have had their share of time.
#[derive(Debug)]
pub struct Throttle {
    rate: u64,
    next: tokio::time::Instant,
}

impl Throttle {
    pub fn new(rate: u64, now: tokio::time::Instant) -> Self {
        Throttle {
            rate: rate.max(1),
            next: now,
        }
    }

    /// When a read of `n` bytes may start; the next one waits `n / rate`
    /// seconds more.
    pub fn admit(&mut self, n: u64) -> tokio::time::Instant {
        let at = self.next;
        self.next += Duration::from_secs_f64(n as f64 / self.rate as f64);
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(tag: &str) -> (Arc<crate::node::Node>, std::path::PathBuf) {
        crate::node::test_node("scan", tag)
    }

    /// A scan finds a rotten replica and leaves it on disk (the master
    /// decides; it may be the last copy), and the good one beside it too.
    #[tokio::test]
    async fn a_scan_reports_rot_and_deletes_nothing() {
        let (n, dir) = node("rot");
        for (id, data) in [(1u64, &b"first block"[..]), (2, b"second block")] {
            let info = protocol::BlockInfo {
                id,
                len: data.len() as u64,
                crc32c: crc32c::crc32c(data),
                generation: 0,
            };
            n.blocks().store().put(info, data).unwrap();
        }
        let p = n.me().data_dir.join("blocks").join("blk_2");
        let mut b = std::fs::read(&p).unwrap();
        b[0] ^= 1;
        std::fs::write(&p, &b).unwrap();
        assert_eq!(scan_once(n.blocks(), n.link(), 1 << 20).await, (2, 1));
        assert!(n.blocks().store().contains(1) && n.blocks().store().contains(2));
        assert!(p.exists(), "the scanner deleted a replica");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// 10 MiB at 1 MiB/s takes ten seconds of reads, paced block by block.
    #[test]
    fn the_throttle_paces_reads_to_the_rate() {
        let t0 = tokio::time::Instant::now();
        let mut t = Throttle::new(1 << 20, t0);
        let starts: Vec<Duration> = (0..10).map(|_| t.admit(1 << 20) - t0).collect();
        assert_eq!(starts[0], Duration::ZERO);
        assert_eq!(starts[1], Duration::from_secs(1));
        assert_eq!(starts[9], Duration::from_secs(9));
        assert_eq!(t.admit(0) - t0, Duration::from_secs(10));
    }
}

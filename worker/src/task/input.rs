//! A map's input read: the worker's cache, else its disk, else a remote
//! replica (same rack first, cached copies first), recording the locality
//! level of the design and the bytes read at each tier.

use crate::task::runner::TaskRunner;
use bytes::Bytes;
use common::locality::Locality;
use protocol::{BlockLocation, WorkerAddr};
use std::sync::Arc;

/// Bytes read per tier by one task.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tiers {
    pub cache: u64,
    pub local: u64,
    pub remote_rack: u64,
    pub remote_off_rack: u64,
    /// Seconds spent in [`read`], all tiers together: a task reads its
    /// block and the few bytes of a record that runs into the next block,
    /// so this is the read cost of the task's own level.
    pub read_s: f64,
}

impl Tiers {
    fn add(&mut self, l: Locality, n: u64) {
        match l {
            Locality::CacheLocal => self.cache += n,
            Locality::NodeLocal => self.local += n,
            Locality::CacheRackLocal | Locality::RackLocal => self.remote_rack += n,
            Locality::OffRack => self.remote_off_rack += n,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("block {id} could not be read from any replica ({last})")]
    Unreadable { id: u64, last: String },
}

/// Reads one block for a task; every byte counts in `tiers`, and the block
/// lands in this worker's cache (a task read fills the cache, which is what
/// makes cache locality possible for the next job on the same data).
pub async fn read(
    runner: &Arc<TaskRunner>,
    loc: &BlockLocation,
    tiers: &mut Tiers,
) -> Result<(Bytes, Locality), InputError> {
    let t0 = std::time::Instant::now();
    let r = read_from(runner, loc, tiers).await;
    tiers.read_s += t0.elapsed().as_secs_f64();
    r
}

async fn read_from(
    runner: &Arc<TaskRunner>,
    loc: &BlockLocation,
    tiers: &mut Tiers,
) -> Result<(Bytes, Locality), InputError> {
    let info = loc.block;
    let me = &runner.me();
    let mut last = String::from("no replica");
    // Cache and disk, each checked against the CRC the namespace holds.
    if runner.blocks().cache().contains(info.id) || runner.blocks().store().contains(info.id) {
        match runner
            .blocks()
            .read_block_expecting(runner.link(), info.id, true, Some(info))
            .await
        {
            Ok((b, cached)) => {
                let level = if cached {
                    Locality::CacheLocal
                } else {
                    Locality::NodeLocal
                };
                tiers.add(level, b.len() as u64);
                return Ok((b, level));
            }
            Err(e) => last = e.to_string(),
        }
    }
    // Remote: same-rack cached, same-rack disk, then other racks.
    let mut order: Vec<(&WorkerAddr, Locality)> = Vec::new();
    let same = |w: &&WorkerAddr| w.rack == me.rack;
    for w in loc.cached_on.iter().filter(same) {
        order.push((w, Locality::CacheRackLocal));
    }
    for w in loc.replicas.iter().filter(same) {
        order.push((w, Locality::RackLocal));
    }
    for w in loc
        .cached_on
        .iter()
        .chain(loc.replicas.iter())
        .filter(|w| !same(w))
    {
        order.push((w, Locality::OffRack));
    }
    let mut seen = std::collections::HashSet::new();
    for (w, level) in order {
        if w.name == me.name || !seen.insert(w.name.clone()) {
            continue;
        }
        let mut conn = match runner.dfs().worker(&w.addr) {
            Ok(c) => c,
            Err(e) => {
                last = e.to_string();
                continue;
            }
        };
        match crate::edge::peers::read_block(&mut conn, &info, false, &w.name).await {
            Ok((b, _)) => {
                tiers.add(level, b.len() as u64);
                // Checked against `info` by the read.
                runner
                    .blocks()
                    .cache()
                    .insert_verified(info.id, &b, info.crc32c);
                return Ok((b, level));
            }
            Err(e) => {
                tracing::warn!(block = info.id, from = %w.name, "remote read failed, trying the next replica: {e}");
                if let rpc::dfs::DfsError::Corrupt { .. } = e {
                    runner
                        .dfs()
                        .report_bad_replica(&w.name, info.id, &e, &Default::default())
                        .await;
                }
                last = format!("{}: {e}", w.name);
            }
        }
    }
    Err(InputError::Unreadable { id: info.id, last })
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::BlockInfo;

    fn node(tag: &str) -> (Arc<TaskRunner>, std::path::PathBuf) {
        let (n, dir) = crate::node::test_node("input", tag);
        (n.tasks().clone(), dir)
    }

    fn info(id: u64, data: &[u8]) -> BlockInfo {
        BlockInfo {
            id,
            len: data.len() as u64,
            crc32c: crc32c::crc32c(data),
            generation: 0,
        }
    }

    fn at(b: BlockInfo) -> BlockLocation {
        BlockLocation {
            block: b,
            replicas: vec![],
            cached_on: vec![],
        }
    }

    /// A cached copy and a local replica are checked against the CRC the
    /// namespace holds, not only this worker's own metadata: a stale copy
    /// under the same id is never returned as the block (issue 28), and
    /// the replica is kept for the master to decide.
    #[tokio::test]
    async fn cache_hits_and_local_reads_are_checked_against_the_namespace() {
        let (n, dir) = node("stale");
        n.blocks()
            .store()
            .put(info(8, b"old bytes"), b"old bytes")
            .unwrap();
        let mut tiers = Tiers::default();
        // Cached by a read that matched.
        let (b, l) = read(&n, &at(info(8, b"old bytes")), &mut tiers)
            .await
            .unwrap();
        assert_eq!((&b[..], l), (&b"old bytes"[..], Locality::NodeLocal));
        assert!(n.blocks().cache().contains(8));
        // The namespace now says block 8 holds other bytes.
        let e = read(&n, &at(info(8, b"new bytes")), &mut tiers)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("namespace"), "{e}");
        assert!(
            !n.blocks().cache().contains(8),
            "the stale cached copy stays"
        );
        assert!(
            n.blocks().store().contains(8),
            "the replica was deleted by its worker"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

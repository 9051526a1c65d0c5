//! `mr admin fsck`: the blocks that need an operator's eye, each with the
//! files it belongs to, as HDFS's `fsck` lists them: missing (no live good
//! replica), corrupt (a replica failed its checksum) and under-replicated.

use super::Blocks;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FsckBlock {
    pub block_id: u64,
    /// Every file holding this block (one, unless a commit shares it).
    pub files: Vec<String>,
    /// Live workers holding a good replica.
    pub live: u32,
    /// The file's replication factor.
    pub want: u32,
    /// Workers holding a replica reported corrupt.
    pub corrupt_on: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FsckReport {
    pub total_blocks: u64,
    pub safe_mode: bool,
    pub missing: Vec<FsckBlock>,
    pub corrupt: Vec<FsckBlock>,
    pub under_replicated: Vec<FsckBlock>,
}

impl FsckReport {
    pub fn is_healthy(&self) -> bool {
        self.missing.is_empty() && self.corrupt.is_empty() && self.under_replicated.is_empty()
    }
}

impl Blocks {
    /// Lists the unhealthy blocks; a block is listed once, in the first of
    /// missing, corrupt, under-replicated that applies.
    pub fn fsck(&self) -> FsckReport {
        let mut files: HashMap<u64, Vec<String>> = HashMap::new();
        for (path, f) in &self.ns.files {
            for b in &f.blocks {
                files.entry(b.id).or_default().push(path.clone());
            }
        }
        let mut ids: Vec<u64> = self.owners.keys().copied().collect();
        ids.sort_unstable();
        let mut report = FsckReport {
            total_blocks: ids.len() as u64,
            safe_mode: self.safe.is_on(),
            missing: vec![],
            corrupt: vec![],
            under_replicated: vec![],
        };
        for id in ids {
            let want = self.owners[&id].replication;
            let live = self.locations.count(id) as u32;
            let corrupt_on: Vec<String> = self
                .corrupt
                .get(&id)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default();
            let entry = FsckBlock {
                block_id: id,
                files: files.remove(&id).unwrap_or_default(),
                live,
                want,
                corrupt_on,
            };
            if live == 0 {
                report.missing.push(entry);
            } else if !entry.corrupt_on.is_empty() {
                report.corrupt.push(entry);
            } else if live < want {
                report.under_replicated.push(entry);
            }
        }
        report
    }
}

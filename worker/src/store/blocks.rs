//! The block side of a worker as one owner: the stored replicas and the
//! cache in front of them, which every read, write, command and scan goes
//! through together (a delete drops both, a read fills the cache), so the
//! other groups hold this handle, not the node.

use crate::store::cache::BlockCache;
use crate::store::disk::BlockStore;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Blocks {
    store: BlockStore,
    cache: BlockCache,
    /// The worker's data directory, where the quarantine lives.
    data_dir: PathBuf,
    /// `[master] quarantine_grace`: how long a quarantined block is kept.
    quarantine_grace: Duration,
}

impl Blocks {
    pub fn new(
        store: BlockStore,
        cache: BlockCache,
        data_dir: &Path,
        quarantine_grace: Duration,
    ) -> Blocks {
        Blocks {
            store,
            cache,
            data_dir: data_dir.to_path_buf(),
            quarantine_grace,
        }
    }

    pub fn store(&self) -> &BlockStore {
        &self.store
    }

    pub fn cache(&self) -> &BlockCache {
        &self.cache
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn quarantine_grace(&self) -> Duration {
        self.quarantine_grace
    }

    /// Drops the block, cached copy first, so that no read finds it cached
    /// once its file is gone.
    pub fn delete(&self, id: u64) {
        self.cache.remove(id);
        self.store.delete(id);
    }
}

//! A stored block read for a task, a peer or a command: from the cache
//! when it is there, else from disk (verified); a corrupt replica is
//! reported to the master before the error returns, over the link the
//! caller passes (`edge/master_client.rs`).

use crate::edge::master_client::{self, MasterLink};
use crate::store::blocks::Blocks;
use crate::store::disk::StoreError;
use bytes::Bytes;
use protocol::BlockInfo;
use std::sync::Arc;

impl Blocks {
    /// Reads a stored block: from the cache when it is there, else from
    /// disk (verified). Returns the bytes and whether the cache served them.
    /// A corrupt replica is reported to the master before the error returns.
    pub async fn read_block(
        self: &Arc<Self>,
        link: &MasterLink,
        id: u64,
        fill_cache: bool,
    ) -> Result<(Bytes, bool), StoreError> {
        self.read_block_expecting(link, id, fill_cache, None).await
    }

    /// [`Blocks::read_block`], checked against `want`, the length and CRC32C
    /// the master's namespace holds, when the caller knows them: a cached
    /// copy is verified too (it was checked only against this worker's own
    /// metadata when it was cached), and one that differs is dropped and
    /// the disk tried.
    pub async fn read_block_expecting(
        self: &Arc<Self>,
        link: &MasterLink,
        id: u64,
        fill_cache: bool,
        want: Option<BlockInfo>,
    ) -> Result<(Bytes, bool), StoreError> {
        if let Some((b, crc)) = self.cache().get_verified(id) {
            match want.and_then(|w| crate::store::disk::mismatch(&w, b.len() as u64, crc)) {
                None => return Ok((b, true)),
                Some(why) => {
                    tracing::error!(block = id, %why, "cached copy differs from the namespace: dropped");
                    self.cache().remove(id);
                }
            }
        }
        let blocks = self.clone();
        let res = tokio::task::spawn_blocking(move || {
            if !fill_cache {
                return blocks.store().read_expecting(id, want.as_ref(), false);
            }
            let data = blocks.store().read_expecting(id, want.as_ref(), true)?;
            // Read checked against the store's CRC, which is `want`'s.
            match want
                .map(|w| w.crc32c)
                .or_else(|| blocks.store().info(id).map(|i| i.crc32c))
            {
                Some(crc) => blocks.cache().insert_verified(id, &data, crc),
                None => blocks.cache().insert(id, &data),
            };
            Ok(data)
        })
        .await
        .unwrap_or_else(|e| Err(StoreError::Io(std::io::Error::other(e))));
        if let Err(StoreError::Corrupt { why, .. }) = &res {
            self.report_bad_block(link, id, why.clone()).await;
        }
        res.map(|d| (d, false))
    }

    /// Drops the block from the cache and tells the master this replica is
    /// corrupt.
    pub async fn report_bad_block(&self, link: &MasterLink, id: u64, reason: String) {
        self.cache().remove(id);
        if let Err(e) = master_client::report_bad_block(link, id, reason).await {
            // The next block report corrects the master anyway.
            tracing::warn!(block = id, "could not report a corrupt block: {e}");
        }
    }
}

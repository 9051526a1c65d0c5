//! A task's output part, written into the block store through the DFS
//! client from blocking task code. Blocks are cut at record boundaries, so
//! every part can be read by maps of a later job without straddling records.

use bytes::{Bytes, BytesMut};
use common::dfs::{Dfs, FileWriter, PutOptions};
use tokio::runtime::Handle;

pub struct OutputWriter<'a> {
    dfs: &'a Dfs,
    rt: Handle,
    file: Option<FileWriter>,
    buf: BytesMut,
    block_size: usize,
    pub records: u64,
}

impl<'a> OutputWriter<'a> {
    /// Creates the part; call from a blocking thread (it waits on the runtime).
    pub fn create(
        dfs: &'a Dfs,
        rt: Handle,
        path: &str,
        opts: &PutOptions,
    ) -> Result<Self, common::dfs::DfsError> {
        let file = rt.block_on(dfs.create(path, opts))?;
        let block_size = file.block_size as usize;
        Ok(OutputWriter {
            dfs,
            rt,
            file: Some(file),
            buf: BytesMut::with_capacity(block_size.min(64 << 20)),
            block_size,
            records: 0,
        })
    }

    /// Appends one encoded record, flushing a block first if it would not fit.
    pub fn write(&mut self, rec: &[u8]) -> Result<(), common::dfs::DfsError> {
        if !self.buf.is_empty() && self.buf.len() + rec.len() > self.block_size {
            self.flush_block()?;
        }
        if rec.len() > self.block_size {
            return Err(common::dfs::DfsError::Invalid(format!(
                "an output record of {} bytes is larger than the output block size {}",
                rec.len(),
                self.block_size
            )));
        }
        self.buf.extend_from_slice(rec);
        self.records += 1;
        Ok(())
    }

    fn flush_block(&mut self) -> Result<(), common::dfs::DfsError> {
        let data: Bytes = self.buf.split().freeze();
        // The next block gets its whole buffer at once rather than growing
        // (and copying) from nothing.
        self.buf.reserve(self.block_size.min(64 << 20));
        let f = self.file.as_mut().expect("open until finish");
        self.rt.block_on(self.dfs.write_block_of(f, data))
    }

    /// Completes the part; returns its size.
    pub fn finish(mut self) -> Result<u64, common::dfs::DfsError> {
        if !self.buf.is_empty() {
            self.flush_block()?;
        }
        let f = self.file.take().expect("open until finish");
        self.rt.block_on(self.dfs.complete(f))
    }
}

impl Drop for OutputWriter<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.file.take() {
            // Not finished: a failed attempt leaves nothing behind.
            self.rt.block_on(self.dfs.abandon(f));
        }
    }
}

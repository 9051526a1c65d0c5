//! A task's output part, written into the block store through the DFS
//! client from blocking task code. Blocks are cut at record boundaries, so
//! every part can be read by maps of a later job without straddling records.
//!
//! One block is in flight while the next fills: the task goes on
//! producing records while the previous block is sent and fsynced on its
//! targets, so a reduce's merge and its output's durability overlap
//! instead of taking turns. At most two blocks of a part are in memory.

use crate::node::Node;
use bytes::{Bytes, BytesMut};
use rpc::dfs::{DfsError, FileWriter, PutOptions};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

type InFlight = JoinHandle<Result<proto::CompletedBlock, DfsError>>;

pub struct OutputWriter {
    node: Arc<Node>,
    rt: Handle,
    file: Option<FileWriter>,
    buf: BytesMut,
    block_size: usize,
    /// The block being written, and its length.
    in_flight: Option<(InFlight, u64)>,
    /// Seconds the task has waited on block writes, shared so that a task
    /// timing its own code can leave these waits out.
    blocked_s: Rc<Cell<f64>>,
    pub records: u64,
}

impl OutputWriter {
    /// Creates the part; call from a blocking thread (it waits on the runtime).
    pub fn create(
        node: Arc<Node>,
        rt: Handle,
        path: &str,
        opts: &PutOptions,
    ) -> Result<Self, DfsError> {
        let file = rt.block_on(node.dfs.create(path, opts))?;
        let block_size = file.block_size as usize;
        Ok(OutputWriter {
            node,
            rt,
            file: Some(file),
            buf: BytesMut::with_capacity(block_size.min(64 << 20)),
            block_size,
            in_flight: None,
            blocked_s: Rc::default(),
            records: 0,
        })
    }

    /// The seconds spent waiting on block writes so far, kept current.
    pub fn blocked_clock(&self) -> Rc<Cell<f64>> {
        self.blocked_s.clone()
    }

    /// Appends one encoded record, flushing a block first if it would not fit.
    pub fn write(&mut self, rec: &[u8]) -> Result<(), DfsError> {
        if !self.buf.is_empty() && self.buf.len() + rec.len() > self.block_size {
            self.flush_block()?;
        }
        if rec.len() > self.block_size {
            return Err(DfsError::Invalid(format!(
                "an output record of {} bytes is larger than the output block size {}",
                rec.len(),
                self.block_size
            )));
        }
        self.buf.extend_from_slice(rec);
        self.records += 1;
        Ok(())
    }

    /// Waits for the block in flight, if any, and records it.
    fn land(&mut self) -> Result<(), DfsError> {
        if let Some((h, len)) = self.in_flight.take() {
            let t = std::time::Instant::now();
            let b = self.rt.block_on(h);
            self.blocked_s
                .set(self.blocked_s.get() + t.elapsed().as_secs_f64());
            let b = b.map_err(|e| DfsError::Invalid(format!("block write task failed: {e}")))??;
            let f = self.file.as_mut().expect("open until finish");
            f.push_block(b, len);
        }
        Ok(())
    }

    /// Sends the buffered block once the previous one has landed.
    fn flush_block(&mut self) -> Result<(), DfsError> {
        self.land()?;
        let data: Bytes = self.buf.split().freeze();
        // The next block gets its whole buffer at once rather than growing
        // (and copying) from nothing.
        self.buf.reserve(self.block_size.min(64 << 20));
        let f = self.file.as_ref().expect("open until finish");
        let (path, lease, len) = (f.path.clone(), f.lease(), data.len() as u64);
        let node = self.node.clone();
        let h = self
            .rt
            .spawn(async move { node.dfs.write_block_detached(&path, lease, data).await });
        self.in_flight = Some((h, len));
        Ok(())
    }

    /// Completes the part once every block is durable; returns its size.
    pub fn finish(mut self) -> Result<u64, DfsError> {
        if !self.buf.is_empty() {
            self.flush_block()?;
        }
        self.land()?;
        let f = self.file.take().expect("open until finish");
        self.rt.block_on(self.node.dfs.complete(f))
    }
}

impl Drop for OutputWriter {
    fn drop(&mut self) {
        if let Some((h, _)) = self.in_flight.take() {
            // Let the block in flight settle before the abandon deletes
            // what the write stored.
            let _ = self.rt.block_on(h);
        }
        if let Some(f) = self.file.take() {
            // Not finished: a failed attempt leaves nothing behind.
            self.rt.block_on(self.node.dfs.abandon(f));
        }
    }
}

//! A task's output part, written into the block store through the DFS
//! client from blocking task code. Blocks are cut at record boundaries, so
//! every part can be read by maps of a later job without straddling records.
//!
//! A block whose first target is this worker is handed to its store in
//! process ([`crate::edge::service::Local`]); the targets after it get it
//! through the pipeline as from any writer.
//!
//! One block is in flight while the next fills: the task goes on
//! producing records while the previous block is sent and fsynced on its
//! targets, so a reduce's merge and its output's durability overlap
//! instead of taking turns. At most two blocks of a part are in memory.

use crate::mem::spares::Spares;
use crate::store::pipeline::Target;
use bytes::Bytes;
use protocol::OutputSpec;
use rpc::dfs::{Dfs, DfsError, FileWriter, PutOptions, WrittenBlock};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// The part's write options, its first replica on `writer` (this worker,
/// so that the part's first copy never crosses the network).
pub fn put_options(output: &OutputSpec, writer: &str) -> PutOptions {
    PutOptions {
        replication: output.replication,
        block_size: output.block_size,
        overwrite: false,
        writer: writer.to_string(),
    }
}

type InFlight = JoinHandle<Result<WrittenBlock, DfsError>>;

pub struct OutputWriter {
    dfs: Arc<Dfs>,
    /// This worker's pipeline, the first target of every block.
    head: Arc<Target>,
    rt: Handle,
    file: Option<FileWriter>,
    /// The block being filled: records are encoded straight into it, and
    /// it goes to the store as it is (`Bytes::from` a `Vec` moves it).
    buf: Vec<u8>,
    block_size: usize,
    /// The block being written, its length, and its bytes: once the write
    /// lands nothing else holds them, and their buffer takes the next
    /// block: a fresh one's pages are each faulted in and zeroed by the
    /// kernel (`clear_page_erms`, 7 % of a TeraSort's CPU in
    /// `scripts/profile.sh` when every block had a new buffer).
    in_flight: Option<(InFlight, u64, Bytes)>,
    /// The landed block's buffer, emptied, for the next block.
    spare: Option<Vec<u8>>,
    /// Seconds the task has waited on block writes, shared so that a task
    /// timing its own code can leave these waits out.
    blocked_s: Rc<Cell<f64>>,
    records: u64,
}

/// A block buffer's room: the block (up to 64 MiB; a larger one grows)
/// and 2 MiB more for the record that crosses the block's end, which is
/// moved to the next block. Without that room every block's buffer grew
/// (a reallocation, and its pages faulted in again) when the record
/// crossing its end arrived: 15 % of a 1 GiB Sort's CPU samples in
/// scripts/profile.sh (2026-11-26).
fn buffer_capacity(block_size: usize) -> usize {
    block_size.min(64 << 20) + (2 << 20)
}

/// Block buffers of parts that finished, for the next parts this worker
/// writes (`crate::mem::spares`): fresh ones were 768 MiB of fresh memory
/// for the six reduces of a 1 GiB sort, as much as its output. Two are
/// kept for each reduce slot (the two a part has in use,
/// [`keep_buffers_for`]): with two kept a worker, one that ran two of a
/// TeraSort's six reduces at once faulted in two fresh 66 MiB buffers,
/// 6 % of the job's CPU samples (`clear_page_erms`, 2026-11-30).
static SPARE_BUFFERS: Spares<u8> = Spares::new(2);

/// Sizes the kept block buffers for `reduce_slots` parts written at once.
pub fn keep_buffers_for(reduce_slots: u32) {
    SPARE_BUFFERS.keep_at_most(2 * reduce_slots.max(1) as usize);
}

impl OutputWriter {
    /// Creates the part; call from a blocking thread (it waits on the runtime).
    pub fn create(
        dfs: &Arc<Dfs>,
        head: &Arc<Target>,
        rt: Handle,
        path: &str,
        opts: &PutOptions,
    ) -> Result<Self, DfsError> {
        let file = rt.block_on(dfs.create(path, opts))?;
        let block_size = file.block_size as usize;
        Ok(OutputWriter {
            dfs: dfs.clone(),
            head: head.clone(),
            rt,
            file: Some(file),
            buf: SPARE_BUFFERS.take(buffer_capacity(block_size)),
            block_size,
            in_flight: None,
            spare: None,
            blocked_s: Rc::default(),
            records: 0,
        })
    }

    /// The records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The seconds spent waiting on block writes so far, kept current.
    pub fn blocked_clock(&self) -> Rc<Cell<f64>> {
        self.blocked_s.clone()
    }

    /// Appends the record `encode` appends to the block buffer: encoded in
    /// place, not in a buffer of its own and copied. A record that overruns
    /// the block is moved to the next one, so blocks end on records.
    pub fn write_with(&mut self, encode: impl FnOnce(&mut Vec<u8>)) -> Result<(), DfsError> {
        let start = self.buf.len();
        encode(&mut self.buf);
        let len = self.buf.len() - start;
        if len > self.block_size {
            self.buf.truncate(start);
            return Err(DfsError::Invalid(format!(
                "an output record of {len} bytes is larger than the output block size {}",
                self.block_size
            )));
        }
        if self.buf.len() > self.block_size {
            let rec = self.buf.split_off(start);
            self.flush_block()?;
            self.buf.extend_from_slice(&rec);
        }
        self.records += 1;
        if self
            .records
            .is_multiple_of(crate::task::progress::EVERY_RECORDS)
        {
            crate::task::progress::bump();
        }
        Ok(())
    }

    /// Waits for the block in flight, if any, and records it.
    fn land(&mut self) -> Result<(), DfsError> {
        if let Some((h, len, data)) = self.in_flight.take() {
            let t = std::time::Instant::now();
            let b = self.rt.block_on(h);
            self.blocked_s
                .set(self.blocked_s.get() + t.elapsed().as_secs_f64());
            let b = b.map_err(|e| DfsError::Invalid(format!("block write task failed: {e}")))??;
            let f = self.file.as_mut().expect("open until finish");
            f.push_block(b, len);
            // Emptied before it becomes a `Vec`, which would copy its bytes.
            self.spare = data.try_into_mut().ok().map(|mut b| {
                b.clear();
                Vec::from(b)
            });
        }
        Ok(())
    }

    /// Sends the buffered block once the previous one has landed.
    fn flush_block(&mut self) -> Result<(), DfsError> {
        crate::task::progress::bump();
        self.land()?;
        // The next block gets its whole buffer at once rather than growing
        // (and copying) from nothing: the landed block's if it came back.
        let want = buffer_capacity(self.block_size);
        let next = match self.spare.take() {
            Some(v) if v.capacity() >= want => v,
            _ => SPARE_BUFFERS.take(want),
        };
        let data = Bytes::from(std::mem::replace(&mut self.buf, next));
        let f = self.file.as_ref().expect("open until finish");
        let (path, lease, len) = (f.path.clone(), f.lease(), data.len() as u64);
        let data_ref = data.clone();
        let (dfs, head) = (self.dfs.clone(), self.head.clone());
        let h = self.rt.spawn(async move {
            let local = crate::edge::service::Local::new(head);
            dfs.write_block_detached(&path, lease, data, Some(&local))
                .await
        });
        self.in_flight = Some((h, len, data_ref));
        Ok(())
    }

    /// Completes the part once every block is durable; returns its size.
    pub fn finish(mut self) -> Result<u64, DfsError> {
        if !self.buf.is_empty() {
            self.flush_block()?;
        }
        self.land()?;
        let f = self.file.take().expect("open until finish");
        self.rt.block_on(self.dfs.complete(f))
    }

    /// The buffers back to the worker's spares: the part is done with them.
    fn keep_buffers(&mut self) {
        SPARE_BUFFERS.keep(std::mem::take(&mut self.buf));
        if let Some(v) = self.spare.take() {
            SPARE_BUFFERS.keep(v);
        }
        if let Some((_, _, data)) = self.in_flight.take() {
            if let Ok(b) = data.try_into_mut() {
                SPARE_BUFFERS.keep(Vec::from(b));
            }
        }
    }
}

impl Drop for OutputWriter {
    fn drop(&mut self) {
        if let Some((h, _, _)) = self.in_flight.take() {
            // Let the block in flight settle before the abandon deletes
            // what the write stored.
            let _ = self.rt.block_on(h);
        }
        self.keep_buffers();
        if let Some(f) = self.file.take() {
            // Not finished: a failed attempt leaves nothing behind.
            self.rt.block_on(self.dfs.abandon(f));
        }
    }
}

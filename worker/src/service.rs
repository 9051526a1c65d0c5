//! Thin gRPC handlers of the worker: block writes (`pipeline.rs`) and reads.

use crate::node::Node;
use crate::status::to_status;
use common::CHUNK;
use proto::worker_server::Worker;
use proto::*;
use std::pin::Pin;
use std::sync::Arc;
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

pub struct WorkerService {
    pub node: Arc<Node>,
}

/// The bytes of a `block_len`-byte block a read of `len` bytes (0: to the
/// end) at `offset` returns, clamped to the block whatever the numbers (a
/// `len` near `u64::MAX` once overflowed into a reversed range: a panic).
pub fn read_range(block_len: usize, offset: u64, len: u64) -> std::ops::Range<usize> {
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(block_len);
    let end = if len == 0 {
        block_len
    } else {
        start
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
            .min(block_len)
    };
    start..end
}

type ChunkStream = Pin<Box<dyn Stream<Item = Result<DataChunk, Status>> + Send>>;

#[tonic::async_trait]
impl Worker for WorkerService {
    #[tracing::instrument(level = "debug", skip_all, fields(worker = %self.node.me.name))]
    async fn write_block(
        &self,
        req: Request<Streaming<WriteBlockChunk>>,
    ) -> Result<Response<WriteBlockResponse>, Status> {
        crate::pipeline::receive(self.node.clone(), req.into_inner())
            .await
            .map(Response::new)
    }

    type FetchPartitionStream = ChunkStream;

    #[tracing::instrument(level = "debug", skip_all, fields(job = req.get_ref().job_id, map = req.get_ref().map_index, part = req.get_ref().partition))]
    async fn fetch_partition(
        &self,
        req: Request<FetchPartitionRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        let rx = crate::shuffle::serve(&self.node, req.get_ref())?;
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(job = req.get_ref().job_id, map = req.get_ref().map_index, part = req.get_ref().partition))]
    async fn locate_partition(
        &self,
        req: Request<FetchPartitionRequest>,
    ) -> Result<Response<PartitionFile>, Status> {
        crate::shuffle::locate_file(&self.node, req.get_ref()).map(Response::new)
    }

    type ReadBlockStream = ChunkStream;

    #[tracing::instrument(level = "debug", skip_all, fields(worker = %self.node.me.name, block = req.get_ref().block_id))]
    async fn read_block(
        &self,
        req: Request<ReadBlockRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        let r = req.into_inner();
        let (data, from_cache) = self
            .node
            .read_block_expecting(r.block_id, r.fill_cache, r.expect)
            .await
            .map_err(to_status)?;
        let data = data.slice(read_range(data.len(), r.offset, r.len));
        let chunks: Vec<Result<DataChunk, Status>> = (0..data.len().div_ceil(CHUNK).max(1))
            .map(|i| {
                let s = i * CHUNK;
                Ok(DataChunk {
                    data: data.slice(s..(s + CHUNK).min(data.len())),
                    from_cache: i == 0 && from_cache,
                    crc32c: None,
                })
            })
            .collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ranges_stay_inside_the_block() {
        assert_eq!(read_range(10, 0, 0), 0..10);
        assert_eq!(read_range(10, 3, 4), 3..7);
        assert_eq!(read_range(10, 3, 100), 3..10);
        assert_eq!(read_range(10, 30, 4), 10..10);
        // offset + len near u64::MAX used to wrap into a reversed range.
        assert_eq!(read_range(10, 5, u64::MAX), 5..10);
        assert_eq!(read_range(10, u64::MAX, u64::MAX), 10..10);
    }
}

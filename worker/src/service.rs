//! Thin gRPC handlers of the worker: block writes and reads.

use crate::node::Node;
use crate::store::StoreError;
use common::config::MAX_BLOCK_SIZE;
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

fn to_status(e: StoreError) -> Status {
    match e {
        StoreError::Missing(_) => Status::not_found(e.to_string()),
        StoreError::Corrupt { .. } => Status::data_loss(e.to_string()),
        StoreError::BadWrite { .. } => Status::data_loss(e.to_string()),
        StoreError::Io(_) => Status::internal(e.to_string()),
    }
}

type ChunkStream = Pin<Box<dyn Stream<Item = Result<DataChunk, Status>> + Send>>;

#[tonic::async_trait]
impl Worker for WorkerService {
    #[tracing::instrument(level = "debug", skip_all, fields(worker = %self.node.me.name))]
    async fn write_block(
        &self,
        req: Request<Streaming<WriteBlockChunk>>,
    ) -> Result<Response<WriteBlockResponse>, Status> {
        let mut stream = req.into_inner();
        let first = stream
            .message()
            .await?
            .ok_or_else(|| Status::invalid_argument("empty block write"))?;
        let info = first.block.ok_or_else(|| {
            Status::invalid_argument("the first chunk of a block write must carry the block info")
        })?;
        if info.len == 0 || info.len > MAX_BLOCK_SIZE {
            return Err(Status::invalid_argument(format!(
                "block {} has length {}, outside 1..={MAX_BLOCK_SIZE}",
                info.id, info.len
            )));
        }
        // Chunks go to a blocking writer thread as they arrive: the block is
        // never whole in memory here.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(4);
        let node = self.node.clone();
        let writer = tokio::task::spawn_blocking(move || -> Result<(), StoreError> {
            let mut w = node.store.begin(info)?;
            while let Some(chunk) = rx.blocking_recv() {
                w.write(&chunk)?;
            }
            w.commit(&node.store)
        });
        let mut received = first.data.len() as u64;
        let mut send_err = tx.send(first.data).await.is_err();
        while !send_err {
            let Some(c) = stream.message().await? else {
                break;
            };
            received += c.data.len() as u64;
            if received > info.len {
                return Err(Status::invalid_argument(format!(
                    "block {} is longer than its declared {} bytes",
                    info.id, info.len
                )));
            }
            send_err = tx.send(c.data).await.is_err();
        }
        drop(tx);
        writer
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .map_err(to_status)?;
        tracing::debug!(block = info.id, len = info.len, "block stored");
        Ok(Response::new(WriteBlockResponse {
            worker: self.node.me.name.clone(),
        }))
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

    type ReadBlockStream = ChunkStream;

    #[tracing::instrument(level = "debug", skip_all, fields(worker = %self.node.me.name, block = req.get_ref().block_id))]
    async fn read_block(
        &self,
        req: Request<ReadBlockRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        let r = req.into_inner();
        let (data, from_cache) = self
            .node
            .read_block(r.block_id, r.fill_cache)
            .await
            .map_err(to_status)?;
        let start = (r.offset as usize).min(data.len());
        let end = if r.len == 0 {
            data.len()
        } else {
            (start + r.len as usize).min(data.len())
        };
        let data = data.slice(start..end);
        let chunks: Vec<Result<DataChunk, Status>> = (0..data.len().div_ceil(CHUNK).max(1))
            .map(|i| {
                let s = i * CHUNK;
                Ok(DataChunk {
                    data: data.slice(s..(s + CHUNK).min(data.len())),
                    from_cache: i == 0 && from_cache,
                })
            })
            .collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }
}

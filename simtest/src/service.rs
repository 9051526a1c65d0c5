//! The worker's gRPC service (`mr.v1.Worker`), served by each model worker
//! over simulated TCP behind the real token interceptor: block writes and
//! reads against the in-memory disk, and the shuffle's partition fetches.

use crate::node::Node;
use futures::Stream;
use proto::worker_server::Worker;
use proto::*;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status, Streaming};

pub struct ModelWorker(pub Arc<Node>);

type Chunks = Pin<Box<dyn Stream<Item = Result<DataChunk, Status>> + Send>>;

fn one_chunk(data: bytes::Bytes) -> Chunks {
    Box::pin(futures::stream::iter([Ok(DataChunk {
        data,
        from_cache: false,
        crc32c: None,
    })]))
}

#[tonic::async_trait]
impl Worker for ModelWorker {
    /// A pipeline target as the real worker is one (`worker/src/store/pipeline.rs`),
    /// simplified: the block is checked whole, then forwarded whole to the
    /// next target, then stored; a failure downstream is answered as the
    /// real worker answers it, without a copy here.
    async fn write_block(
        &self,
        req: Request<Streaming<WriteBlockChunk>>,
    ) -> Result<Response<WriteBlockResponse>, Status> {
        let mut s = req.into_inner();
        let mut info = None;
        let mut downstream = Vec::new();
        let mut token = bytes::Bytes::new();
        let mut buf = Vec::new();
        while let Some(c) = s.message().await? {
            if info.is_none() {
                info = c.block;
                downstream = c.downstream;
                token = c.access_token;
            }
            if c.crc32c.is_some_and(|crc| crc != crc32c::crc32c(&c.data)) {
                return Err(Status::data_loss("a chunk does not match its checksum"));
            }
            buf.extend_from_slice(&c.data);
        }
        let info = info.ok_or_else(|| Status::invalid_argument("no block header"))?;
        if buf.len() as u64 != info.len || crc32c::crc32c(&buf) != info.crc32c {
            return Err(Status::data_loss("block does not match its checksum"));
        }
        let data = bytes::Bytes::from(buf);
        let mut stored = vec![self.0.name.clone()];
        if let Some((next, rest)) = downstream.split_first() {
            let answer = async {
                let mut conn = self.0.dfs.worker(&next.addr)?;
                let (crcs, _) = rpc::dfs::chunk_crcs(&data);
                rpc::dfs::write_pipeline(&mut conn, info, &data, &crcs, rest.to_vec(), &token).await
            }
            .await;
            match answer {
                Ok(a) if a.failed.is_none() => stored.extend(a.stored),
                Ok(a) => {
                    return Ok(Response::new(WriteBlockResponse {
                        worker: self.0.name.clone(),
                        stored: Vec::new(),
                        failed: a.failed,
                    }))
                }
                Err(e) => {
                    return Ok(Response::new(WriteBlockResponse {
                        worker: self.0.name.clone(),
                        stored: Vec::new(),
                        failed: Some(PipelineFailure {
                            worker: next.name.clone(),
                            error: e.to_string(),
                        }),
                    }))
                }
            }
        }
        self.0.store(info.into(), data);
        Ok(Response::new(WriteBlockResponse {
            worker: self.0.name.clone(),
            stored,
            failed: None,
        }))
    }

    type ReadBlockStream = Chunks;

    async fn read_block(&self, req: Request<ReadBlockRequest>) -> Result<Response<Chunks>, Status> {
        let r = req.into_inner();
        let (_, data) = self
            .0
            .read(r.block_id)
            .ok_or_else(|| Status::not_found(format!("no block {}", r.block_id)))?;
        let start = (r.offset as usize).min(data.len());
        let end = if r.len == 0 {
            data.len()
        } else {
            (start + r.len as usize).min(data.len())
        };
        Ok(Response::new(one_chunk(data.slice(start..end))))
    }

    type FetchPartitionStream = Chunks;

    async fn fetch_partition(
        &self,
        req: Request<FetchPartitionRequest>,
    ) -> Result<Response<Chunks>, Status> {
        let r = req.into_inner();
        let outputs = self.0.map_outputs.lock().unwrap();
        let parts = outputs
            .get(&(r.job_id, r.map_index, r.attempt))
            .ok_or_else(|| {
                Status::not_found(format!(
                    "no output of map {} attempt {}",
                    r.map_index, r.attempt
                ))
            })?;
        let p = parts
            .get(r.partition as usize)
            .cloned()
            .ok_or_else(|| Status::invalid_argument("no such partition"))?;
        Ok(Response::new(one_chunk(p)))
    }

    /// The model keeps map outputs in memory: nothing to read in place, so
    /// reducers stream every segment.
    async fn locate_partition(
        &self,
        _req: Request<FetchPartitionRequest>,
    ) -> Result<Response<PartitionFile>, Status> {
        Err(Status::unimplemented("map outputs are held in memory"))
    }
}

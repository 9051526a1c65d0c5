//! The worker's gRPC edge: thin handlers that convert each request to the
//! worker's own types (`edge/convert.rs`), call one function (block writes in
//! `store/pipeline.rs`, reads in `store/reads.rs`, the shuffle in `edge/shuffle.rs`), and
//! convert the answer back; every failure is a [`WorkerError`], whose one
//! map to a status is in `error.rs`. [`Local`] is the same way in for the
//! blocks this process's own tasks write.

use crate::edge::error::WorkerError;
use crate::edge::master_client::MasterLink;
use crate::node::Node;
use crate::store::block::BlockChunk;
use crate::store::block::PipelineError;
use crate::store::blocks::Blocks;
use crate::store::pipeline::Target;
use crate::task::runner::TaskRunner;
use common::blocktoken::Access;
use common::CHUNK;
use proto::worker_server::{Worker, WorkerServer};
use proto::*;
use rpc::auth::{identity, Identity};
use std::pin::Pin;
use std::sync::Arc;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};

/// Largest message a worker accepts: one data chunk plus framing.
const MAX_MESSAGE: usize = 2 * CHUNK + 4096;

/// The peer server: the owners its handlers call, each its own handle,
/// not the node.
pub struct WorkerService {
    blocks: Arc<Blocks>,
    link: Arc<MasterLink>,
    tasks: Arc<TaskRunner>,
    pipeline: Arc<Target>,
}

/// This worker as the head of its own tasks' block writes: a task's
/// output goes into the store beside it without a socket, through the
/// same pipeline a remote writer's chunks go through
/// ([`crate::store::pipeline::receive_in_process`]).
pub struct Local(Arc<Target>);

impl Local {
    pub fn new(target: Arc<Target>) -> Local {
        Local(target)
    }
}

impl rpc::dfs::LocalHead for Local {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn receive(
        &self,
        chunks: Vec<WriteBlockChunk>,
    ) -> futures::future::BoxFuture<'static, Result<WriteBlockResponse, Status>> {
        let chunks = tokio_stream::iter(chunks.into_iter().map(|c| Ok(BlockChunk::from(c))));
        let target = self.0.clone();
        Box::pin(async move {
            let answer = crate::store::pipeline::receive_in_process(target, chunks).await?;
            Ok(answer.into())
        })
    }
}

/// Serves the worker's port on `listener` until `stop` resolves: TLS only
/// when `tls` is given, every token of `tokens` accepted, and Nagle's
/// algorithm off, as on the master (see `master::no_delay`): shuffle
/// fetches and block writes are answered in small writes too.
pub async fn serve(
    node: &Node,
    listener: tokio::net::TcpListener,
    tls: Option<tonic::transport::ServerTlsConfig>,
    tokens: rpc::auth::Tokens,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let mut builder = tonic::transport::Server::builder()
        .initial_stream_window_size(rpc::dfs::STREAM_WINDOW)
        .initial_connection_window_size(rpc::dfs::CONNECTION_WINDOW);
    if let Some(t) = tls {
        tracing::info!(worker = %node.me().name, "gRPC over TLS only");
        builder = builder.tls_config(t)?;
    }
    let incoming = tokio_stream::StreamExt::map(
        tokio_stream::wrappers::TcpListenerStream::new(listener),
        |s| {
            let s = s?;
            let _ = s.set_nodelay(true);
            Ok::<_, std::io::Error>(s)
        },
    );
    builder
        .add_service(tonic::service::interceptor::InterceptedService::new(
            server(node),
            rpc::auth::TokenCheck::with_tokens(tokens),
        ))
        .serve_with_incoming_shutdown(incoming, stop)
        .await?;
    Ok(())
}

/// The worker's gRPC service over `node`'s owners, without the token
/// check the caller wraps it in.
pub fn server(node: &Node) -> WorkerServer<WorkerService> {
    let service = WorkerService {
        blocks: node.blocks().clone(),
        link: node.link().clone(),
        tasks: node.tasks().clone(),
        pipeline: node.pipeline().clone(),
    };
    WorkerServer::from_arc(Arc::new(service))
        .max_decoding_message_size(MAX_MESSAGE)
        .max_encoding_message_size(MAX_MESSAGE)
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

impl WorkerService {
    /// A read needs the master's read token for the block, issued to the
    /// caller, unless the caller is a worker (which holds the keys that
    /// sign tokens, as a DataNode does, so a token would prove nothing).
    fn may_read(&self, caller: &Identity, r: &ReadBlockRequest) -> Result<(), WorkerError> {
        if caller.worker {
            return Ok(());
        }
        let generation = self.blocks.store().info(r.block_id).map(|i| i.generation);
        self.link
            .keys()
            .check_block(
                &r.access_token,
                r.block_id,
                generation,
                Access::Read,
                Some(&caller.name),
                common::now_ms(),
            )
            .inspect_err(|e| {
                tracing::warn!(block = r.block_id, user = %caller.name, "block read refused: {e}")
            })?;
        Ok(())
    }

    /// A map's output goes only to another worker (its reduces run
    /// there), and only with the job's shuffle token, from the reduce's
    /// launch (Hadoop's job token).
    fn shuffle_request(
        &self,
        req: Request<FetchPartitionRequest>,
    ) -> Result<crate::task::partition::PartitionRef, WorkerError> {
        let caller = identity(&req);
        let r = req.into_inner();
        if !caller.worker {
            tracing::warn!(user = %caller.name, job = r.job_id, "shuffle fetch refused: not a worker");
            return Err(WorkerError::NotAWorker {
                user: caller.name,
                action: "fetch map outputs",
            });
        }
        self.link.keys().check_shuffle(&r.shuffle_token, r.job_id)?;
        Ok(r.into())
    }
}

#[tonic::async_trait]
impl Worker for WorkerService {
    #[tracing::instrument(level = "debug", skip_all, fields(worker = %self.link.name()))]
    async fn write_block(
        &self,
        req: Request<Streaming<WriteBlockChunk>>,
    ) -> Result<Response<WriteBlockResponse>, Status> {
        let caller = identity(&req);
        let chunks = req.into_inner().map(|c| {
            c.map(BlockChunk::from)
                .map_err(|s| PipelineError::Received(Box::new(s)))
        });
        let answer =
            crate::store::pipeline::receive(self.pipeline.clone(), chunks, &caller).await?;
        Ok(Response::new(answer.into()))
    }

    type FetchPartitionStream = ChunkStream;

    #[tracing::instrument(level = "debug", skip_all, fields(job = req.get_ref().job_id, map = req.get_ref().map_index, part = req.get_ref().partition))]
    async fn fetch_partition(
        &self,
        req: Request<FetchPartitionRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        let r = self.shuffle_request(req)?;
        let rx = crate::edge::shuffle::serve(&self.tasks, &r)?;
        let chunks = tokio_stream::wrappers::ReceiverStream::new(rx)
            .map(|c| c.map(DataChunk::from).map_err(Status::from));
        Ok(Response::new(Box::pin(chunks)))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(job = req.get_ref().job_id, map = req.get_ref().map_index, part = req.get_ref().partition))]
    async fn locate_partition(
        &self,
        req: Request<FetchPartitionRequest>,
    ) -> Result<Response<PartitionFile>, Status> {
        let r = self.shuffle_request(req)?;
        let file = crate::edge::shuffle::locate_file(&self.tasks, &r)?;
        Ok(Response::new(file.into()))
    }

    type ReadBlockStream = ChunkStream;

    #[tracing::instrument(level = "debug", skip_all, fields(worker = %self.link.name(), block = req.get_ref().block_id))]
    async fn read_block(
        &self,
        req: Request<ReadBlockRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        let caller = identity(&req);
        let r = req.into_inner();
        self.may_read(&caller, &r)?;
        let (data, from_cache) = self
            .blocks
            .read_block_expecting(
                &self.link,
                r.block_id,
                r.fill_cache,
                r.expect.map(Into::into),
            )
            .await
            .map_err(WorkerError::from)?;
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

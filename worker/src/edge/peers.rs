//! This worker as a client of the others, and the edge where its own
//! types become their protobuf messages (`edge/convert.rs`): the next hop of a
//! block write pipeline, a replica's block read and write, and a map
//! output's partition, located or streamed.

use crate::store::block::{BlockChunk, PipelineAnswer};
use crate::task::partition::{PartitionFile, PartitionRef, ShuffleChunk};
use bytes::Bytes;
use futures::{Future, Stream, StreamExt};
use protocol::BlockInfo;
use rpc::dfs::{Dfs, DfsError, WorkerConn};

/// Streams `chunks` as a block write to the worker at `addr`; its answer,
/// once the stream ends. The connection is taken at once, so the call may
/// outlive `dfs`'s borrow.
pub fn forward(
    dfs: &Dfs,
    addr: &str,
    chunks: impl Stream<Item = BlockChunk> + Send + 'static,
) -> impl Future<Output = Result<PipelineAnswer, DfsError>> + Send + 'static {
    let conn = dfs.worker(addr);
    async move {
        let mut conn = conn?;
        let answer = conn
            .write_block(chunks.map(proto::WriteBlockChunk::from))
            .await?;
        Ok(answer.into_inner().into())
    }
}

/// Reads a whole block from the worker behind `conn` (see
/// `rpc::dfs::read_block`), checked against `info`.
pub async fn read_block(
    conn: &mut WorkerConn,
    info: &BlockInfo,
    fill_cache: bool,
    from: &str,
) -> Result<(Bytes, bool), DfsError> {
    // A worker reads without a block token: it holds the keys that sign
    // them, as a DataNode does, so one would prove nothing.
    rpc::dfs::read_block(conn, &(*info).into(), fill_cache, from, &Bytes::new()).await
}

/// Sends a whole block to the worker behind `conn` under the master's
/// `token`; done once it is fsynced there.
pub async fn write_block(
    conn: &mut WorkerConn,
    info: BlockInfo,
    data: Bytes,
    token: &Bytes,
) -> Result<(), DfsError> {
    rpc::dfs::write_block(conn, info.into(), data, token).await
}

/// The request for partition `r`, carrying its job's shuffle `token`.
fn partition_request(r: &PartitionRef, token: &Bytes) -> proto::FetchPartitionRequest {
    let mut req = proto::FetchPartitionRequest::from(*r);
    req.shuffle_token = token.clone();
    req
}

/// Where the worker at `addr` keeps partition `r`; `None` when it cannot
/// say (a worker of an older version, without `LocatePartition`).
pub async fn locate_partition(
    dfs: &Dfs,
    addr: &str,
    r: &PartitionRef,
    token: &Bytes,
) -> Result<Option<PartitionFile>, DfsError> {
    match dfs
        .worker(addr)?
        .locate_partition(partition_request(r, token))
        .await
    {
        Ok(f) => Ok(Some(f.into_inner().into())),
        Err(s) if s.code() == tonic::Code::Unimplemented => Ok(None),
        Err(s) => Err(s.into()),
    }
}

/// Partition `r` streamed from the worker at `addr`.
pub async fn fetch_partition(
    dfs: &Dfs,
    addr: &str,
    r: &PartitionRef,
    token: &Bytes,
) -> Result<PartitionStream, DfsError> {
    let mut conn = dfs.worker(addr)?;
    let s = conn.fetch_partition(partition_request(r, token)).await?;
    Ok(PartitionStream(s.into_inner()))
}

/// A partition as it arrives.
pub struct PartitionStream(tonic::Streaming<proto::DataChunk>);

impl PartitionStream {
    /// The next chunk; `None` at the end.
    pub async fn next(&mut self) -> Result<Option<ShuffleChunk>, DfsError> {
        Ok(self.0.message().await?.map(ShuffleChunk::from))
    }
}

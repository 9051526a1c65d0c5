//! One target of a block write pipeline, as an HDFS DataNode is in a
//! write pipeline: chunks arrive from the writer or from the target
//! before this one, each checked against its CRC32C, and go at once both
//! to this worker's block store and on to the next target. The ack goes
//! back only when this worker's copy is fsynced and the rest of the
//! pipeline has acknowledged theirs, so an acknowledged block is durable
//! on every target.
//!
//! Why a pipeline rather than the writer sending every copy itself: the
//! writer's uplink (and, on one machine, its CPU) carries a block once
//! instead of once per replica, and every target receives while it
//! forwards, so the copies are written at the same time. A target that
//! fails anywhere downstream stops the pipeline at once: this worker drops
//! its own partial copy and answers with the failed target's name, which
//! the writer excludes before it tries the block again (`rpc::dfs`).

use crate::node::Node;
use crate::status::to_status;
use crate::store::StoreError;
use bytes::Bytes;
use common::config::MAX_BLOCK_SIZE;
use futures::{Stream, StreamExt};
use proto::{BlockInfo, PipelineFailure, WorkerAddr, WriteBlockChunk, WriteBlockResponse};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tonic::Status;

/// Chunks queued for the local writer and for the next target: a short
/// stall of either does not stop the other, and neither holds the block.
const QUEUE: usize = 4;

/// The block a write is for, from its first chunk: refused unless the
/// write has a first chunk carrying a block of 1..=`MAX_BLOCK_SIZE` bytes.
pub fn block_header(first: Option<&WriteBlockChunk>) -> Result<proto::BlockInfo, Status> {
    let first = first.ok_or_else(|| Status::invalid_argument("empty block write"))?;
    let info = first.block.ok_or_else(|| {
        Status::invalid_argument("the first chunk of a block write must carry the block info")
    })?;
    if info.len == 0 || info.len > MAX_BLOCK_SIZE {
        return Err(Status::invalid_argument(format!(
            "block {} has length {}, outside 1..={MAX_BLOCK_SIZE}",
            info.id, info.len
        )));
    }
    Ok(info)
}

/// Receives one block from `chunks` (the first carries the header and the
/// targets after this one), stores it and forwards it; see the module
/// comment. An `Err` means this worker failed (the writer excludes it);
/// an answer with `failed` set, that a target after it did.
pub async fn receive(
    node: Arc<Node>,
    chunks: impl Stream<Item = Result<WriteBlockChunk, Status>> + Unpin,
) -> Result<WriteBlockResponse, Status> {
    receive_from(node, chunks, Sender::Remote).await
}

/// Where a block's chunks come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sender {
    /// Over a wire: every chunk is checked against the CRC32C it carries.
    Remote,
    /// This process ([`Local`]): the CRC32Cs were computed from these very
    /// bytes, nothing came over a wire to damage them; they are used as
    /// they are (the store still checks the block's length and CRC).
    InProcess,
}

async fn receive_from(
    node: Arc<Node>,
    mut chunks: impl Stream<Item = Result<WriteBlockChunk, Status>> + Unpin,
    sender: Sender,
) -> Result<WriteBlockResponse, Status> {
    let first = chunks.next().await.transpose()?;
    let info = block_header(first.as_ref())?;
    let mut first = first.expect("checked by block_header");
    let downstream = std::mem::take(&mut first.downstream);
    // A copy this worker already held is not this write's to drop.
    let held = node.store.info(info.id) == Some(info);
    // Chunks go to a blocking writer thread as they arrive: the block is
    // never whole in memory here.
    let (tx, mut rx) = mpsc::channel::<(Bytes, u32)>(QUEUE);
    let writer = {
        let node = node.clone();
        tokio::task::spawn_blocking(move || -> Result<(), StoreError> {
            let mut w = node.store.begin(info)?;
            while let Some((chunk, crc)) = rx.blocking_recv() {
                w.write_checked(&chunk, crc)?;
            }
            w.commit(&node.store)
        })
    };
    let mut next = downstream
        .split_first()
        .map(|(n, rest)| Forward::start(&node, info, n.clone(), rest.to_vec()));
    let mut received = 0u64;
    let mut chunk = Some(first);
    while let Some(c) = chunk.take() {
        let crc = match (sender, c.crc32c) {
            (Sender::InProcess, Some(crc)) => crc,
            _ => check_chunk(&info, received, &c)?,
        };
        received += c.data.len() as u64;
        if received > info.len {
            return Err(Status::invalid_argument(format!(
                "block {} is longer than its declared {} bytes",
                info.id, info.len
            )));
        }
        if let Some(f) = &mut next {
            if !f.send(c.data.clone(), crc).await {
                // The next target is gone: stop here, drop the partial
                // copy (the writer's retry gets a new block id).
                drop(tx);
                let _ = writer.await;
                let failed = f.failure().await;
                tracing::warn!(block = info.id, worker = %failed.worker, "pipeline broken downstream: {}", failed.error);
                return Ok(WriteBlockResponse {
                    worker: node.me.name.clone(),
                    stored: Vec::new(),
                    failed: Some(failed),
                });
            }
        }
        if tx.send((c.data, crc)).await.is_err() {
            break; // the writer failed: its error comes out of `writer` below
        }
        chunk = chunks.next().await.transpose()?;
    }
    drop(tx);
    // The next target learns the block is whole before this one fsyncs,
    // so that the copies are made durable at the same time.
    if let Some(f) = &mut next {
        f.close();
    }
    writer
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(to_status)?;
    let mut stored = vec![node.me.name.clone()];
    let mut failed = None;
    if let Some(f) = next {
        match f.answer().await {
            Ok(r) if r.failed.is_none() => stored.extend(r.stored),
            Ok(r) => failed = r.failed,
            Err(f) => failed = Some(f),
        }
    }
    if let Some(f) = &failed {
        tracing::warn!(block = info.id, worker = %f.worker, "pipeline broken downstream: {}", f.error);
        stored.clear();
        // The writer tries again under a new block id: this copy would be
        // an orphan until a block report had it deleted.
        if !held {
            node.store.delete(info.id);
        }
    }
    tracing::debug!(block = info.id, len = info.len, ?stored, "block stored");
    Ok(WriteBlockResponse {
        worker: node.me.name.clone(),
        stored,
        failed,
    })
}

/// This worker as the head of its own tasks' block writes: a task's
/// output goes into the store beside it without a socket, through the
/// same [`receive`] a remote writer's chunks go through.
pub struct Local(pub Arc<Node>);

impl rpc::dfs::LocalHead for Local {
    fn name(&self) -> &str {
        &self.0.me.name
    }

    fn receive(
        &self,
        chunks: Vec<WriteBlockChunk>,
    ) -> futures::future::BoxFuture<'static, Result<WriteBlockResponse, Status>> {
        let chunks = tokio_stream::iter(chunks.into_iter().map(Ok));
        Box::pin(receive_from(self.0.clone(), chunks, Sender::InProcess))
    }
}

/// The CRC32C of chunk `c` at byte `at` of `info`: the one it carries,
/// once checked, or computed when the sender gave none.
pub fn check_chunk(info: &BlockInfo, at: u64, c: &WriteBlockChunk) -> Result<u32, Status> {
    let crc = crc32c::crc32c(&c.data);
    match c.crc32c {
        Some(want) if want != crc => Err(Status::data_loss(format!(
            "block {}: the chunk at byte {at} arrived with CRC32C {crc:#010x}, sent with {want:#010x}: damaged on the way here",
            info.id
        ))),
        _ => Ok(crc),
    }
}

/// The call to the next target of the pipeline.
struct Forward {
    next: WorkerAddr,
    /// The header and the targets after `next`, sent with the first chunk.
    header: Option<(BlockInfo, Vec<WorkerAddr>)>,
    /// None once the block is whole.
    tx: Option<mpsc::Sender<WriteBlockChunk>>,
    call: JoinHandle<Result<WriteBlockResponse, String>>,
}

impl Forward {
    fn start(node: &Arc<Node>, info: BlockInfo, next: WorkerAddr, rest: Vec<WorkerAddr>) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let conn = node.dfs.worker(&next.addr);
        let call = tokio::spawn(async move {
            let mut conn = conn.map_err(|e| e.to_string())?;
            conn.write_block(tokio_stream::wrappers::ReceiverStream::new(rx))
                .await
                .map(|r| r.into_inner())
                .map_err(|s| rpc::dfs::status_text(&s))
        });
        Forward {
            next,
            header: Some((info, rest)),
            tx: Some(tx),
            call,
        }
    }

    /// Queues a chunk for the next target; false once that call has ended.
    async fn send(&mut self, data: Bytes, crc: u32) -> bool {
        let (block, downstream) = match self.header.take() {
            Some((info, rest)) => (Some(info), rest),
            None => (None, Vec::new()),
        };
        let c = WriteBlockChunk {
            block,
            data,
            crc32c: Some(crc),
            downstream,
        };
        match &self.tx {
            Some(tx) => tx.send(c).await.is_ok(),
            None => false,
        }
    }

    /// Why the call ended before the block did.
    async fn failure(&mut self) -> PipelineFailure {
        let error = match (&mut self.call).await {
            Ok(Ok(r)) => match r.failed {
                Some(f) => return f,
                None => "it answered before the block was whole".to_string(),
            },
            Ok(Err(e)) => e,
            Err(e) => e.to_string(),
        };
        self.failed(error)
    }

    /// Ends the stream to the next target: the block is whole.
    fn close(&mut self) {
        self.tx = None;
    }

    /// The rest of the pipeline's answer, once [`Forward::close`]d.
    async fn answer(mut self) -> Result<WriteBlockResponse, PipelineFailure> {
        self.tx = None;
        match (&mut self.call).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(error)) => Err(self.failed(error)),
            Err(e) => Err(self.failed(e.to_string())),
        }
    }

    fn failed(&self, error: String) -> PipelineFailure {
        PipelineFailure {
            worker: self.next.name.clone(),
            error,
        }
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        // A write abandoned upstream (an error, the writer gone) must not
        // leave the next target waiting for the rest of the block.
        self.call.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::WorkerService;
    use common::config::ClusterConfig;

    /// Workers w1 and w2 of one config over fresh directories; w2 serves
    /// its real gRPC service on an OS-chosen port, w1 is driven directly.
    async fn two_nodes(tag: &str) -> (Arc<Node>, Arc<Node>, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("mr-pipeline-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let text = format!(
            "token = \"t\"\n[master]\naddr = \"127.0.0.1:1\"\ndata_dir = \"{0}/m\"\n\
             [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:2\"\ndata_dir = \"{0}/w1\"\n\
             [[workers]]\nname = \"w2\"\naddr = \"{addr}\"\ndata_dir = \"{0}/w2\"\n",
            dir.display()
        );
        let cfg = ClusterConfig::parse(&text).unwrap();
        let w1 = Node::open(cfg.clone(), "w1").unwrap();
        let w2 = Node::open(cfg, "w2").unwrap();
        let svc = proto::worker_server::WorkerServer::from_arc(Arc::new(WorkerService {
            node: w2.clone(),
        }))
        .max_decoding_message_size(2 * common::CHUNK + 4096);
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(svc)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l)),
        );
        (w1, w2, dir)
    }

    fn target(name: &str, addr: &str) -> WorkerAddr {
        WorkerAddr {
            name: name.into(),
            addr: addr.into(),
            rack: String::new(),
        }
    }

    /// The chunks a writer sends for `data` as block `id`, 1 KiB each.
    fn chunks(id: u64, data: &[u8], downstream: Vec<WorkerAddr>) -> Vec<WriteBlockChunk> {
        let info = BlockInfo {
            id,
            len: data.len() as u64,
            crc32c: crc32c::crc32c(data),
            generation: 3,
        };
        let mut downstream = Some(downstream);
        data.chunks(1024)
            .enumerate()
            .map(|(i, c)| WriteBlockChunk {
                block: (i == 0).then_some(info),
                data: Bytes::copy_from_slice(c),
                crc32c: Some(crc32c::crc32c(c)),
                downstream: downstream.take().unwrap_or_default(),
            })
            .collect()
    }

    fn feed(
        c: Vec<WriteBlockChunk>,
    ) -> impl Stream<Item = Result<WriteBlockChunk, Status>> + Unpin {
        futures::stream::iter(c.into_iter().map(Ok))
    }

    #[tokio::test]
    async fn the_head_stores_and_forwards_and_answers_for_both() {
        let (w1, w2, dir) = two_nodes("both").await;
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let next = target("w2", &w2.me.addr);
        let a = receive(w1.clone(), feed(chunks(11, &data, vec![next])))
            .await
            .unwrap();
        assert_eq!(a.stored, ["w1", "w2"]);
        assert!(a.failed.is_none());
        for n in [&w1, &w2] {
            assert_eq!(&n.store.read(11).unwrap()[..], &data[..]);
            assert_eq!(n.store.info(11).unwrap().generation, 3);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A task's block handed to its own worker ([`Local`]) is stored there
    /// and forwarded down the pipeline as a remote writer's would be; a
    /// block whose chunk CRCs do not make its CRC is still refused.
    #[tokio::test]
    async fn a_local_head_stores_and_forwards_without_a_socket() {
        use rpc::dfs::LocalHead;
        let (w1, w2, dir) = two_nodes("local").await;
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 3) as u8).collect();
        let next = target("w2", &w2.me.addr);
        let a = Local(w1.clone())
            .receive(chunks(12, &data, vec![next]))
            .await
            .unwrap();
        assert_eq!(a.stored, ["w1", "w2"]);
        for n in [&w1, &w2] {
            assert_eq!(&n.store.read(12).unwrap()[..], &data[..]);
        }
        let mut bad = chunks(13, &data, Vec::new());
        bad[1].crc32c = Some(bad[1].crc32c.unwrap() ^ 1);
        assert!(Local(w1.clone()).receive(bad).await.is_err());
        assert!(w1.store.info(13).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The second target is down: the head names it, keeps no copy, and
    /// answers rather than failing itself (the writer must not exclude it).
    #[tokio::test]
    async fn a_dead_next_target_is_named_and_the_head_keeps_nothing() {
        let (w1, _w2, dir) = two_nodes("dead").await;
        let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = gone.local_addr().unwrap().to_string();
        drop(gone);
        let data = vec![5u8; 64 * 1024];
        let a = receive(
            w1.clone(),
            feed(chunks(12, &data, vec![target("w9", &addr)])),
        )
        .await
        .unwrap();
        assert!(a.stored.is_empty(), "{a:?}");
        let f = a.failed.expect("a failure");
        assert_eq!(f.worker, "w9");
        assert!(!f.error.is_empty());
        assert!(!w1.store.contains(12));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The second target fails only once the head holds the whole block
    /// (it cannot store it: its temp directory is gone): the head, which
    /// had already fsynced its copy, drops it and names w2.
    #[tokio::test]
    async fn a_next_target_failing_at_the_end_leaves_no_copy_on_the_head() {
        let (w1, w2, dir) = two_nodes("late").await;
        std::fs::remove_dir_all(dir.join("w2/blocks/tmp")).unwrap();
        // One chunk: queued for w2 before w2 can answer, so the head gets
        // to its commit and learns of the failure from the answer.
        let data = vec![7u8; 512];
        let a = receive(
            w1.clone(),
            feed(chunks(14, &data, vec![target("w2", &w2.me.addr)])),
        )
        .await
        .unwrap();
        assert!(a.stored.is_empty(), "{a:?}");
        assert_eq!(a.failed.expect("a failure").worker, "w2");
        assert!(!w1.store.contains(14));
        assert!(!w2.store.contains(14));
        assert!(w1.store.take_delta().0.is_empty(), "reported as added");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A chunk damaged on its way to the second target is refused there;
    /// the head answers that w2 failed, and neither keeps the block.
    #[tokio::test]
    async fn a_chunk_damaged_between_targets_is_caught_on_the_hop() {
        let (w1, w2, dir) = two_nodes("damaged").await;
        let data = vec![9u8; 8 * 1024];
        let mut c = chunks(13, &data, vec![target("w2", &w2.me.addr)]);
        // w1 checks the chunk against this CRC and forwards it with it:
        // what w2 sees is a chunk whose bytes changed after it was sent.
        let w2conn = rpc::dfs::worker_conn(&w2.me.addr, "t").unwrap();
        let mut bad = c.clone();
        bad[3].data = Bytes::from(vec![8u8; 1024]);
        bad[0].downstream.clear();
        let e = w2conn
            .clone()
            .write_block(futures::stream::iter(bad))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::DataLoss, "{e}");
        assert!(e.message().contains("damaged on the way"), "{e}");
        assert!(!w2.store.contains(13));
        // Damaged before the head: the head itself refuses it.
        c[2].crc32c = Some(c[2].crc32c.unwrap() ^ 1);
        let e = receive(w1.clone(), feed(c)).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::DataLoss, "{e}");
        assert!(!w1.store.contains(13));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn block_header_refuses_what_the_handler_refuses() {
        assert!(block_header(None).is_err());
        let mut c = WriteBlockChunk::default();
        assert!(block_header(Some(&c)).is_err());
        c.block = Some(proto::BlockInfo {
            id: 1,
            len: 0,
            crc32c: 0,
            generation: 0,
        });
        assert!(block_header(Some(&c)).is_err());
        c.block = Some(proto::BlockInfo {
            id: 1,
            len: 5,
            crc32c: 0,
            generation: 0,
        });
        assert_eq!(block_header(Some(&c)).unwrap().len, 5);
    }
}

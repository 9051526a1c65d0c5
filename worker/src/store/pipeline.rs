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

use crate::edge::master_client::MasterLink;
use crate::store::block::{BlockChunk, PipelineAnswer, PipelineError, PipelineFailure};
use crate::store::blocks::Blocks;
use crate::store::disk::StoreError;
use bytes::Bytes;
use common::blocktoken::{Access, TokenError};
use common::config::MAX_BLOCK_SIZE;
use futures::{Stream, StreamExt};
use protocol::{BlockInfo, WorkerAddr};
use rpc::auth::Identity;
use rpc::dfs::Dfs;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// This worker as a pipeline target: the owners a block write goes
/// through (the store, the master's keys that check its token, the client
/// that reaches the next target) and how long a stalled stream is waited
/// for, held apart from the node so that the gRPC service and the tasks'
/// in-process writes hand a write this, not the node.
pub struct Target {
    blocks: Arc<Blocks>,
    link: Arc<MasterLink>,
    dfs: Arc<Dfs>,
    /// `[dfs] stream_timeout`.
    stream_timeout: Duration,
}

impl Target {
    pub fn new(
        blocks: Arc<Blocks>,
        link: Arc<MasterLink>,
        dfs: Arc<Dfs>,
        stream_timeout: Duration,
    ) -> Target {
        Target {
            blocks,
            link,
            dfs,
            stream_timeout,
        }
    }

    /// The worker's name, as answers carry it.
    pub fn name(&self) -> &str {
        self.link.name()
    }
}

/// Chunks queued for the local writer and for the next target: a short
/// stall of either does not stop the other, and neither holds the block.
const QUEUE: usize = 4;

/// The block a write is for, from its first chunk: refused unless the
/// write has a first chunk carrying a block of 1..=`MAX_BLOCK_SIZE` bytes.
pub fn block_header(first: Option<&BlockChunk>) -> Result<BlockInfo, PipelineError> {
    let first = first.ok_or(PipelineError::EmptyWrite)?;
    let info = first.block.ok_or(PipelineError::NoBlockInfo)?;
    if info.len == 0 || info.len > MAX_BLOCK_SIZE {
        return Err(PipelineError::BadBlockLength {
            id: info.id,
            len: info.len,
        });
    }
    Ok(info)
}

/// Receives one block from `chunks` (the first carries the header and the
/// targets after this one), stores it and forwards it; see the module
/// comment. An `Err` means this worker failed (the writer excludes it);
/// an answer with `failed` set, that a target after it did. `caller` is
/// who the port's token check found: the write's block access token must
/// be for it (a worker forwarding a pipeline may carry anyone's).
pub async fn receive(
    target: Arc<Target>,
    chunks: impl Stream<Item = Result<BlockChunk, PipelineError>> + Unpin,
    caller: &Identity,
) -> Result<PipelineAnswer, PipelineError> {
    receive_from(target, chunks, Sender::Remote(caller)).await
}

/// [`receive`] of a block this process wrote: a task's output handed to
/// its own worker without a socket (`service::Local`).
pub async fn receive_in_process(
    target: Arc<Target>,
    chunks: impl Stream<Item = Result<BlockChunk, PipelineError>> + Unpin,
) -> Result<PipelineAnswer, PipelineError> {
    receive_from(target, chunks, Sender::InProcess).await
}

/// Where a block's chunks come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sender<'a> {
    /// Over a wire, from this caller: the write's token is checked, and
    /// every chunk against the CRC32C it carries.
    Remote(&'a Identity),
    /// This process ([`receive_in_process`]): the CRC32Cs were computed
    /// from these very bytes, nothing came over a wire to damage them;
    /// they are used as they are (the store still checks the block's
    /// length and CRC).
    InProcess,
}

async fn receive_from(
    target: Arc<Target>,
    mut chunks: impl Stream<Item = Result<BlockChunk, PipelineError>> + Unpin,
    sender: Sender<'_>,
) -> Result<PipelineAnswer, PipelineError> {
    let first = chunks.next().await.transpose()?;
    let info = block_header(first.as_ref())?;
    let mut first = first.expect("checked by block_header");
    if let Sender::Remote(caller) = sender {
        authorize(&target, &first, &info, caller)?;
    }
    // Refused before a byte is forwarded (the store checks again at
    // `begin`, for a write that raced this one).
    if target.blocks.store().contains(info.id) {
        return Err(StoreError::Exists(info.id).into());
    }
    let downstream = std::mem::take(&mut first.downstream);
    let token = std::mem::take(&mut first.access_token);
    // Chunks go to a blocking writer thread as they arrive: the block is
    // never whole in memory here.
    let (tx, mut rx) = mpsc::channel::<(Bytes, u32)>(QUEUE);
    let writer = {
        let blocks = target.blocks.clone();
        tokio::task::spawn_blocking(move || -> Result<(), StoreError> {
            let mut w = blocks.store().begin(info)?;
            while let Some((chunk, crc)) = rx.blocking_recv() {
                w.write_checked(&chunk, crc)?;
            }
            w.commit(blocks.store())
        })
    };
    let mut next = downstream
        .split_first()
        .map(|(n, rest)| Forward::start(&target.dfs, info, n.clone(), rest.to_vec(), token));
    let mut received = 0u64;
    let mut chunk = Some(first);
    let timeout = target.stream_timeout;
    while let Some(c) = chunk.take() {
        let crc = match (sender, c.crc32c) {
            (Sender::InProcess, Some(crc)) => crc,
            _ => check_chunk(&info, received, &c)?,
        };
        received += c.data.len() as u64;
        if received > info.len {
            return Err(PipelineError::LongerThanDeclared {
                id: info.id,
                len: info.len,
            });
        }
        if let Some(f) = &mut next {
            if !f.send(c.data.clone(), crc, timeout).await {
                // The next target is gone: stop here, drop the partial
                // copy (the writer's retry gets a new block id).
                drop(tx);
                let _ = writer.await;
                let failed = f.failure().await;
                tracing::warn!(block = info.id, worker = %failed.worker, "pipeline broken downstream: {}", failed.error);
                return Ok(PipelineAnswer {
                    worker: target.name().to_string(),
                    stored: Vec::new(),
                    failed: Some(failed),
                });
            }
        }
        if tx.send((c.data, crc)).await.is_err() {
            break; // the writer failed: its error comes out of `writer` below
        }
        chunk = match tokio::time::timeout(timeout, chunks.next()).await {
            Ok(c) => c.transpose()?,
            Err(_) => {
                tracing::warn!(
                    block = info.id,
                    "the sender stalled: no chunk for {timeout:?}"
                );
                return Err(PipelineError::Stalled {
                    what: "the sender sent no chunk",
                    timeout,
                });
            }
        };
    }
    drop(tx);
    // The next target learns the block is whole before this one fsyncs,
    // so that the copies are made durable at the same time.
    if let Some(f) = &mut next {
        f.close();
    }
    writer
        .await
        .map_err(|e| PipelineError::Writer(e.to_string()))??;
    let mut stored = vec![target.name().to_string()];
    let mut failed = None;
    if let Some(f) = next {
        match f.answer(timeout).await {
            Ok(r) if r.failed.is_none() => stored.extend(r.stored),
            Ok(r) => failed = r.failed,
            Err(f) => failed = Some(f),
        }
    }
    if let Some(f) = &failed {
        tracing::warn!(block = info.id, worker = %f.worker, "pipeline broken downstream: {}", f.error);
        stored.clear();
        // The writer tries again under a new block id: this copy would be
        // an orphan until a block report had it deleted. (It is this
        // write's own: a block held already was refused at `begin`.)
        target.blocks.store().delete(info.id);
    }
    tracing::debug!(block = info.id, len = info.len, ?stored, "block stored");
    Ok(PipelineAnswer {
        worker: target.name().to_string(),
        stored,
        failed,
    })
}

/// Whether the write whose first chunk is `first` may be stored here and
/// forwarded: the master's token for this block and generation, with
/// write (or replicate) access, issued to `caller` unless a worker
/// forwards it, naming every address the block is to go on to. The last
/// check is what keeps this worker, which dials the next target with its
/// own credential, from sending that credential to an address a caller
/// chose.
fn authorize(
    target: &Target,
    first: &BlockChunk,
    info: &BlockInfo,
    caller: &Identity,
) -> Result<(), PipelineError> {
    let user = (!caller.worker).then_some(caller.name.as_str());
    let grant = target.link.keys().check_block(
        &first.access_token,
        info.id,
        Some(info.generation),
        Access::Write,
        user,
        common::now_ms(),
    );
    let grant = grant.inspect_err(|e| {
        tracing::warn!(block = info.id, user = %caller.name, "block write refused: {e}");
    })?;
    for d in &first.downstream {
        if !grant.targets.contains(&d.addr) {
            tracing::warn!(block = info.id, user = %caller.name, target = %d.addr,
                "block write refused: a target its token does not name");
            return Err(TokenError::WrongTarget(d.addr.clone()).into());
        }
    }
    Ok(())
}

/// The CRC32C of chunk `c` at byte `at` of `info`: the one it carries,
/// once checked, or computed when the sender gave none.
pub fn check_chunk(info: &BlockInfo, at: u64, c: &BlockChunk) -> Result<u32, PipelineError> {
    let crc = crc32c::crc32c(&c.data);
    match c.crc32c {
        Some(sent) if sent != crc => Err(PipelineError::DamagedChunk {
            id: info.id,
            at,
            crc,
            sent,
        }),
        _ => Ok(crc),
    }
}

/// The call to the next target of the pipeline.
struct Forward {
    next: WorkerAddr,
    /// The header, the targets after `next` and the token, sent with the
    /// first chunk.
    header: Option<(BlockInfo, Vec<WorkerAddr>, Bytes)>,
    /// None once the block is whole.
    tx: Option<mpsc::Sender<BlockChunk>>,
    /// Set when the next target took no chunk within the stream timeout.
    stalled: Option<std::time::Duration>,
    call: JoinHandle<Result<PipelineAnswer, String>>,
}

impl Forward {
    fn start(
        dfs: &Dfs,
        info: BlockInfo,
        next: WorkerAddr,
        rest: Vec<WorkerAddr>,
        token: Bytes,
    ) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let call = crate::edge::peers::forward(
            dfs,
            &next.addr,
            tokio_stream::wrappers::ReceiverStream::new(rx),
        );
        let call = tokio::spawn(async move { call.await.map_err(|e| e.to_string()) });
        Forward {
            next,
            header: Some((info, rest, token)),
            tx: Some(tx),
            stalled: None,
            call,
        }
    }

    /// Queues a chunk for the next target; false once that call has ended,
    /// or when the target took nothing for `timeout` (a slow or stalled
    /// target is left out of the next attempt as a dead one is).
    async fn send(&mut self, data: Bytes, crc: u32, timeout: std::time::Duration) -> bool {
        let (block, downstream, access_token) = match self.header.take() {
            Some((info, rest, token)) => (Some(info), rest, token),
            None => (None, Vec::new(), Bytes::new()),
        };
        let c = BlockChunk {
            block,
            data,
            crc32c: Some(crc),
            downstream,
            access_token,
        };
        let Some(tx) = &self.tx else {
            return false;
        };
        match tokio::time::timeout(timeout, tx.send(c)).await {
            Ok(r) => r.is_ok(),
            Err(_) => {
                self.stalled = Some(timeout);
                self.call.abort();
                false
            }
        }
    }

    /// Why the call ended before the block did.
    async fn failure(&mut self) -> PipelineFailure {
        if let Some(t) = self.stalled {
            return self.failed(format!(
                "took no data for {t:?} ([dfs] stream_timeout): a slow or stalled target"
            ));
        }
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

    /// The rest of the pipeline's answer, once [`Forward::close`]d, within
    /// `timeout`.
    async fn answer(
        mut self,
        timeout: std::time::Duration,
    ) -> Result<PipelineAnswer, PipelineFailure> {
        self.tx = None;
        match tokio::time::timeout(timeout, &mut self.call).await {
            Ok(Ok(Ok(r))) => Ok(r),
            Ok(Ok(Err(error))) => Err(self.failed(error)),
            Ok(Err(e)) => Err(self.failed(e.to_string())),
            Err(_) => Err(self.failed(format!(
                "no answer within {timeout:?} of the block's end ([dfs] stream_timeout)"
            ))),
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
    use crate::node::Node;
    use common::blocktoken::{Grant, Minter};
    use common::config::ClusterConfig;
    use rpc::auth::Role;
    use rpc::dfs::DfsError;
    use tonic::{Code, Status};

    /// The master's side of the tests' tokens.
    fn minter() -> &'static Minter {
        static M: std::sync::OnceLock<Minter> = std::sync::OnceLock::new();
        M.get_or_init(|| Minter::new(common::now_ms()))
    }

    fn give_keys(n: &Node) {
        let (k, s) = minter().export(common::now_ms());
        n.link().keys().update(k, s, common::now_ms());
    }

    /// A caller of the worker's port: a worker, or user `name`.
    fn caller(name: &str, worker: bool) -> Identity {
        Identity {
            name: name.into(),
            role: if worker { Role::Admin } else { Role::User },
            worker,
        }
    }

    fn write_token(id: u64, user: &str, targets: &[&str]) -> Bytes {
        let g = Grant {
            block_id: id,
            generation: 3,
            modes: Access::Write as u8,
            user: user.into(),
            targets: targets.iter().map(|t| t.to_string()).collect(),
            expires_ms: 0,
        };
        minter().sign(g, common::now_ms()).into()
    }

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
        give_keys(&w1);
        give_keys(&w2);
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(tonic::service::interceptor::InterceptedService::new(
                    crate::edge::service::server(&w2),
                    rpc::auth::TokenCheck::new("t"),
                ))
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

    /// The chunks a writer sends for `data` as block `id`, 1 KiB each,
    /// with a token naming the downstream targets.
    fn chunks(id: u64, data: &[u8], downstream: Vec<WorkerAddr>) -> Vec<BlockChunk> {
        let addrs: Vec<&str> = downstream.iter().map(|d| d.addr.as_str()).collect();
        let token = write_token(id, "", &addrs);
        signed_chunks(id, data, downstream, token)
    }

    fn signed_chunks(
        id: u64,
        data: &[u8],
        downstream: Vec<WorkerAddr>,
        token: Bytes,
    ) -> Vec<BlockChunk> {
        let info = BlockInfo {
            id,
            len: data.len() as u64,
            crc32c: crc32c::crc32c(data),
            generation: 3,
        };
        let mut downstream = Some(downstream);
        data.chunks(1024)
            .enumerate()
            .map(|(i, c)| BlockChunk {
                block: (i == 0).then_some(info),
                data: Bytes::copy_from_slice(c),
                crc32c: Some(crc32c::crc32c(c)),
                downstream: downstream.take().unwrap_or_default(),
                access_token: if i == 0 { token.clone() } else { Bytes::new() },
            })
            .collect()
    }

    fn as_worker() -> Identity {
        caller("worker", true)
    }

    fn feed(c: Vec<BlockChunk>) -> impl Stream<Item = Result<BlockChunk, PipelineError>> + Unpin {
        futures::stream::iter(c.into_iter().map(Ok))
    }

    #[tokio::test]
    async fn the_head_stores_and_forwards_and_answers_for_both() {
        let (w1, w2, dir) = two_nodes("both").await;
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let next = target("w2", &w2.me().addr);
        let a = receive(
            w1.pipeline().clone(),
            feed(chunks(11, &data, vec![next])),
            &as_worker(),
        )
        .await
        .unwrap();
        assert_eq!(a.stored, ["w1", "w2"]);
        assert!(a.failed.is_none());
        for n in [&w1, &w2] {
            assert_eq!(&n.blocks().store().read(11).unwrap()[..], &data[..]);
            assert_eq!(n.blocks().store().info(11).unwrap().generation, 3);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A task's block handed to its own worker (`service::Local`, the
    /// DFS client's way in) is stored there and forwarded down the
    /// pipeline as a remote writer's would be; a block whose chunk CRCs do
    /// not make its CRC is still refused.
    #[tokio::test]
    async fn a_local_head_stores_and_forwards_without_a_socket() {
        use rpc::dfs::LocalHead;
        let local = |n: &Arc<Node>, c: Vec<BlockChunk>| {
            crate::edge::service::Local::new(n.pipeline().clone())
                .receive(c.into_iter().map(Into::into).collect())
        };
        let (w1, w2, dir) = two_nodes("local").await;
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 3) as u8).collect();
        let next = target("w2", &w2.me().addr);
        let a = local(&w1, chunks(12, &data, vec![next])).await.unwrap();
        assert_eq!(a.stored, ["w1", "w2"]);
        for n in [&w1, &w2] {
            assert_eq!(&n.blocks().store().read(12).unwrap()[..], &data[..]);
        }
        let mut bad = chunks(13, &data, Vec::new());
        bad[1].crc32c = Some(bad[1].crc32c.unwrap() ^ 1);
        assert!(local(&w1, bad).await.is_err());
        assert!(w1.blocks().store().info(13).is_none());
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
            w1.pipeline().clone(),
            feed(chunks(12, &data, vec![target("w9", &addr)])),
            &as_worker(),
        )
        .await
        .unwrap();
        assert!(a.stored.is_empty(), "{a:?}");
        let f = a.failed.expect("a failure");
        assert_eq!(f.worker, "w9");
        assert!(!f.error.is_empty());
        assert!(!w1.blocks().store().contains(12));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The second target accepts the connection and then takes nothing (a
    /// hung disk, a stalled host that still answers the kernel): the head
    /// names it at the stream timeout, keeps nothing, and answers rather
    /// than hanging, so the writer rebuilds the pipeline without it.
    #[tokio::test]
    async fn a_stalled_next_target_is_named_at_the_stream_timeout() {
        let (w1, _w2, dir) = two_nodes("stalled").await;
        let mut cfg = w1.cluster().clone();
        cfg.dfs.stream_timeout = std::time::Duration::from_millis(500);
        let w1 = Node::open(cfg, "w1").unwrap();
        give_keys(&w1);
        // Accepts, holds the socket, never speaks.
        let stall = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = stall.local_addr().unwrap().to_string();
        let held = tokio::spawn(async move {
            let (s, _) = stall.accept().await.unwrap();
            std::future::pending::<()>().await;
            drop(s);
        });
        let data = vec![5u8; 256 * 1024];
        let a = receive(
            w1.pipeline().clone(),
            feed(chunks(15, &data, vec![target("w9", &addr)])),
            &as_worker(),
        )
        .await
        .unwrap();
        assert!(a.stored.is_empty(), "{a:?}");
        let f = a.failed.expect("a failure");
        assert_eq!(f.worker, "w9");
        assert!(f.error.contains("stream_timeout"), "{}", f.error);
        assert!(!w1.blocks().store().contains(15));
        held.abort();
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
            w1.pipeline().clone(),
            feed(chunks(14, &data, vec![target("w2", &w2.me().addr)])),
            &as_worker(),
        )
        .await
        .unwrap();
        assert!(a.stored.is_empty(), "{a:?}");
        assert_eq!(a.failed.expect("a failure").worker, "w2");
        assert!(!w1.blocks().store().contains(14));
        assert!(!w2.blocks().store().contains(14));
        assert!(
            w1.blocks().store().take_delta().0.is_empty(),
            "reported as added"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A chunk damaged on its way to the second target is refused there;
    /// the head answers that w2 failed, and neither keeps the block.
    #[tokio::test]
    async fn a_chunk_damaged_between_targets_is_caught_on_the_hop() {
        let (w1, w2, dir) = two_nodes("damaged").await;
        let data = vec![9u8; 8 * 1024];
        let mut c = chunks(13, &data, vec![target("w2", &w2.me().addr)]);
        // w1 checks the chunk against this CRC and forwards it with it:
        // what w2 sees is a chunk whose bytes changed after it was sent.
        let mut bad = c.clone();
        bad[3].data = Bytes::from(vec![8u8; 1024]);
        bad[0].downstream.clear();
        let e =
            match crate::edge::peers::forward(w1.dfs(), &w2.me().addr, futures::stream::iter(bad))
                .await
            {
                Err(DfsError::Rpc(s)) => s,
                other => panic!("not refused by w2: {other:?}"),
            };
        assert_eq!(e.code(), Code::DataLoss, "{e}");
        assert!(e.message().contains("damaged on the way"), "{e}");
        assert!(!w2.blocks().store().contains(13));
        // Damaged before the head: the head itself refuses it.
        c[2].crc32c = Some(c[2].crc32c.unwrap() ^ 1);
        let e = Status::from(
            receive(w1.pipeline().clone(), feed(c), &as_worker())
                .await
                .unwrap_err(),
        );
        assert_eq!(e.code(), Code::DataLoss, "{e}");
        assert!(!w1.blocks().store().contains(13));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A user's write needs the master's token for that block, issued to
    /// that user, naming every target the block is to go on to; a block
    /// held already is never written again. A refused write stores
    /// nothing and dials nobody (issue 39).
    #[tokio::test]
    async fn a_write_without_the_masters_token_is_refused_and_dials_nobody() {
        let (w1, w2, dir) = two_nodes("auth").await;
        let data = vec![1u8; 4096];
        let ann = caller("ann", false);
        let trap = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let trap_addr = trap.local_addr().unwrap().to_string();
        let refused = |r: Result<PipelineAnswer, PipelineError>| match r {
            Err(e) => Status::from(e).code(),
            Ok(a) => panic!("not refused: {a:?}"),
        };
        let to_trap = || vec![target("evil", &trap_addr)];
        let cases = [
            ("no token", signed_chunks(20, &data, vec![], Bytes::new())),
            (
                "bob's",
                signed_chunks(20, &data, vec![], write_token(20, "bob", &[])),
            ),
            (
                "another block's",
                signed_chunks(20, &data, vec![], write_token(21, "ann", &[])),
            ),
            ("a forged one", {
                let mut t = write_token(20, "ann", &[]).to_vec();
                let n = t.len();
                t[n - 1] ^= 1;
                signed_chunks(20, &data, vec![], t.into())
            }),
            (
                "a target it does not name",
                signed_chunks(20, &data, to_trap(), write_token(20, "ann", &[])),
            ),
        ];
        for (what, c) in cases {
            let code = refused(receive(w1.pipeline().clone(), feed(c), &ann).await);
            assert_eq!(code, Code::PermissionDenied, "{what}");
        }
        assert!(!w1.blocks().store().contains(20));
        assert!(
            futures::FutureExt::now_or_never(trap.accept()).is_none(),
            "the worker dialed an address its token does not name"
        );
        // Ann's own token stores the block, on w1 and w2.
        let next = target("w2", &w2.me().addr);
        let good = signed_chunks(
            20,
            &data,
            vec![next.clone()],
            write_token(20, "ann", &[&w2.me().addr]),
        );
        let a = receive(w1.pipeline().clone(), feed(good.clone()), &ann)
            .await
            .unwrap();
        assert_eq!(a.stored, ["w1", "w2"]);
        // Written again, even with a valid token, even by a worker: refused
        // before a byte is forwarded, the replica intact.
        let other = vec![2u8; 4096];
        let again = signed_chunks(20, &other, vec![], write_token(20, "ann", &[]));
        assert_eq!(
            refused(receive(w1.pipeline().clone(), feed(again), &as_worker()).await),
            Code::AlreadyExists
        );
        assert_eq!(&w1.blocks().store().read(20).unwrap()[..], &data[..]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn block_header_refuses_what_the_handler_refuses() {
        assert!(block_header(None).is_err());
        let mut c = BlockChunk::default();
        assert!(block_header(Some(&c)).is_err());
        c.block = Some(BlockInfo {
            id: 1,
            len: 0,
            crc32c: 0,
            generation: 0,
        });
        assert!(block_header(Some(&c)).is_err());
        c.block = Some(BlockInfo {
            id: 1,
            len: 5,
            crc32c: 0,
            generation: 0,
        });
        assert_eq!(block_header(Some(&c)).unwrap().len, 5);
    }
}

//! The DFS client, used by the `mr` CLI, by workers replicating blocks and,
//! later, by tasks reading input and writing output.
//!
//! A block goes to its targets through a pipeline, as in HDFS: the writer
//! streams it to the first target, which writes it and forwards it to the
//! next while it receives (`worker/src/pipeline.rs`); every chunk carries
//! its CRC32C, checked on each hop. The writer sends each block once
//! instead of once per replica, and a put returns only after every target
//! acknowledged an fsynced copy. A target that fails, first or further
//! down, is left out of the block's next attempt.
//! Reads prefer a replica in some worker's cache, then the caller's rack, and
//! fall through to the next replica on any error; every read is checked
//! against the block's CRC32C.

use crate::auth::TokenAttach;
use bytes::{Bytes, BytesMut};
use common::config::ClusterConfig;
use common::CHUNK;
use proto::master_client::MasterClient;
use proto::worker_client::WorkerClient;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

pub type MasterConn = MasterClient<InterceptedService<Channel, TokenAttach>>;
pub type WorkerConn = WorkerClient<InterceptedService<Channel, TokenAttach>>;

/// Large enough for a whole chunk plus framing; both sides use the same limit.
const MAX_MESSAGE: usize = 2 * CHUNK + 4096;
/// Blocks of one put being written at once.
const PUT_IN_FLIGHT: usize = 2;
/// Attempts at writing one block before a put fails.
const WRITE_ATTEMPTS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum DfsError {
    /// Not a `#[source]`: the status's own Display would repeat the message.
    #[error("{}", status_text(.0))]
    Rpc(tonic::Status),
    #[error("cannot reach {addr}: {msg}")]
    Connect { addr: String, msg: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("block {id} could not be read from any replica: {last}")]
    NoReplica { id: u64, last: String },
    #[error(
        "block {id} failed its checksum when read from {from}: its bytes are not the ones written"
    )]
    Corrupt { id: u64, from: String },
    #[error("{0}")]
    Invalid(String),
    /// A worker that took or sent nothing for `[dfs] stream_timeout`.
    #[error("{from} sent or took nothing for {timeout:?} ([dfs] stream_timeout)")]
    Stalled {
        from: String,
        timeout: std::time::Duration,
    },
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
}

impl From<tonic::Status> for DfsError {
    fn from(s: tonic::Status) -> Self {
        DfsError::Rpc(s)
    }
}

/// A status as a person wants to read it: the message, and the code only
/// when the message alone would not say what happened.
pub fn status_text(s: &tonic::Status) -> String {
    match s.code() {
        tonic::Code::Unavailable => format!("unavailable: {}", s.message()),
        tonic::Code::Unknown | tonic::Code::Internal => {
            format!("{:?}: {}", s.code(), s.message())
        }
        _ => s.message().to_string(),
    }
}

pub type Result<T> = std::result::Result<T, DfsError>;

/// The endpoint of `addr` (`IP:port` or a URL): with `tls`, `https` and
/// the server verified against the cluster CA; else plain `http`.
pub fn endpoint(addr: &str, tls: Option<&ClientTlsConfig>) -> Result<Endpoint> {
    let bad = |e: &dyn std::fmt::Display| DfsError::Connect {
        addr: addr.into(),
        msg: e.to_string(),
    };
    let host = addr
        .strip_prefix("http://")
        .or_else(|| addr.strip_prefix("https://"))
        .unwrap_or(addr);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let ep = Endpoint::from_shared(format!("{scheme}://{host}")).map_err(|e| bad(&e))?;
    match tls {
        Some(t) => ep.tls_config(t.clone()).map_err(|e| bad(&e)),
        None => Ok(ep),
    }
}

fn channel(addr: &str, tls: Option<&ClientTlsConfig>) -> Result<Channel> {
    Ok(endpoint(addr, tls)?
        .connect_timeout(std::time::Duration::from_secs(5))
        // A peer cut off without a reset (a partition, a paused host) must
        // not hang calls on an established connection forever: HTTP/2 pings
        // find it dead in KEEPALIVE + KEEPALIVE_TIMEOUT and fail the calls,
        // so that readers and writers go on to another replica.
        .http2_keep_alive_interval(KEEPALIVE)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true)
        .tcp_nodelay(true)
        .connect_lazy())
}

/// HTTP/2 flow-control windows, bytes, of the workers' gRPC servers: what
/// a writer may have in flight to a worker before it waits for a window
/// update. The protocol's default (64 KiB) makes a sender of 1 MiB chunks
/// stop 16 times a chunk. Measured on a 6-worker loopback cluster of this
/// project's 2-core machine, `mr fs put` of 1 GiB at replication 2, medians
/// of 3: 6.54 s without them, 3.30 s and 4.91 s with them in two runs (157
/// against 310 and 209 MiB/s); Sort and TeraSort of 1 GiB were unchanged
/// within the runs' spread (their reduces write faster, their shuffles
/// compete for the same two cores). Clients keep the default window for
/// what they receive: larger ones made the shuffle slower, not faster.
pub const STREAM_WINDOW: u32 = 8 << 20;
pub const CONNECTION_WINDOW: u32 = 32 << 20;

/// HTTP/2 ping interval on every client channel.
pub const KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(2);
/// A ping unanswered this long closes the connection.
pub const KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(4);

/// Makes the channel to one address. The daemons and the CLI use TCP
/// ([`Dfs::connect`]); the deterministic simulation (`simtest/`) passes one
/// that dials turmoil's simulated sockets ([`Dfs::connect_with`]).
pub type ChannelMaker = std::sync::Arc<dyn Fn(&str) -> Result<Channel> + Send + Sync>;

/// A master client over plain TCP (tests; the daemons and the CLI go
/// through [`Dfs::connect`], which follows `[tls]`).
pub fn master_conn(addr: &str, token: &str) -> Result<MasterConn> {
    master_conn_on(channel(addr, None)?, token)
}

/// A master client over an existing channel.
pub fn master_conn_on(ch: Channel, token: &str) -> Result<MasterConn> {
    let attach = TokenAttach::new(token)?;
    Ok(MasterClient::with_interceptor(ch, attach)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20))
}

/// A worker client over plain TCP (see [`master_conn`]).
pub fn worker_conn(addr: &str, token: &str) -> Result<WorkerConn> {
    worker_conn_on(channel(addr, None)?, token)
}

/// A worker client over an existing channel.
pub fn worker_conn_on(ch: Channel, token: &str) -> Result<WorkerConn> {
    let attach = TokenAttach::new(token)?;
    Ok(WorkerClient::with_interceptor(ch, attach)
        .max_decoding_message_size(MAX_MESSAGE)
        .max_encoding_message_size(MAX_MESSAGE))
}

/// The CRC32C of each `CHUNK` of `data`, and of the whole: one pass over
/// the bytes gives both (the whole is combined from the chunks').
pub fn chunk_crcs(data: &[u8]) -> (Vec<u32>, u32) {
    let mut whole = 0;
    let crcs = data
        .chunks(CHUNK)
        .map(|c| {
            let crc = crc32c::crc32c(c);
            whole = crc32c::crc32c_combine(whole, crc, c.len());
            crc
        })
        .collect();
    (crcs, whole)
}

/// The chunks of block `info` as a pipeline's head receives them: the
/// first carries the block and `downstream` (the targets after the head,
/// in order) and the block access token, each its CRC32C (`crcs`, from
/// [`chunk_crcs`]).
pub fn pipeline_chunks(
    info: proto::BlockInfo,
    data: &Bytes,
    crcs: &[u32],
    downstream: Vec<proto::WorkerAddr>,
    token: &Bytes,
) -> Vec<proto::WriteBlockChunk> {
    let mut downstream = Some(downstream);
    (0..data.len().div_ceil(CHUNK).max(1))
        .map(|i| {
            let off = i * CHUNK;
            proto::WriteBlockChunk {
                block: (i == 0).then_some(info),
                data: data.slice(off..(off + CHUNK).min(data.len())),
                crc32c: crcs.get(i).copied(),
                downstream: downstream.take().unwrap_or_default(),
                access_token: if i == 0 { token.clone() } else { Bytes::new() },
            }
        })
        .collect()
}

/// Streams `data` as block `info` to the head of a pipeline, which
/// forwards it to `downstream` (the targets after it, in order); returns
/// the head's answer: which targets stored the block durably, and which
/// one failed if one did. `crcs` are the chunks' CRC32Cs ([`chunk_crcs`]);
/// `token` is the master's block access token for the write.
pub async fn write_pipeline(
    conn: &mut WorkerConn,
    info: proto::BlockInfo,
    data: &Bytes,
    crcs: &[u32],
    downstream: Vec<proto::WorkerAddr>,
    token: &Bytes,
) -> Result<proto::WriteBlockResponse> {
    write_pipeline_within(
        conn,
        info,
        data,
        crcs,
        downstream,
        token,
        DEFAULT_STREAM_TIMEOUT,
    )
    .await
}

/// [`write_pipeline`], failing when the head takes no chunk, or sends no
/// answer after the last, for `timeout`: a stalled head is then left out
/// of the block's next attempt as a dead one is.
pub async fn write_pipeline_within(
    conn: &mut WorkerConn,
    info: proto::BlockInfo,
    data: &Bytes,
    crcs: &[u32],
    downstream: Vec<proto::WorkerAddr>,
    token: &Bytes,
    timeout: std::time::Duration,
) -> Result<proto::WriteBlockResponse> {
    let chunks = pipeline_chunks(info, data, crcs, downstream, token);
    let moved = std::sync::Arc::new(Mutex::new(std::time::Instant::now()));
    let seen = moved.clone();
    let stream = futures::StreamExt::inspect(tokio_stream::iter(chunks), move |_| {
        *common::sync::lock(&seen) = std::time::Instant::now();
    });
    let call = conn.write_block(stream);
    let watchdog = async {
        loop {
            tokio::time::sleep(timeout / 4).await;
            if common::sync::lock(&moved).elapsed() >= timeout {
                return;
            }
        }
    };
    tokio::select! {
        r = call => Ok(r?.into_inner()),
        () = watchdog => Err(DfsError::Stalled { from: "the pipeline's head".into(), timeout }),
    }
}

/// The block store of the process that writes, when it is a worker's: a
/// pipeline whose head is this worker starts here, without a socket. The
/// chunks, their checks, the forwarding and the answer are a remote
/// head's; what goes is the encoding, the loopback's two copies and the
/// decoding of every byte a task writes to its own worker.
pub trait LocalHead: Send + Sync {
    /// The worker's name, as the master names the targets.
    fn name(&self) -> &str;
    /// Receives the chunks of one block as the pipeline's head.
    fn receive(
        &self,
        chunks: Vec<proto::WriteBlockChunk>,
    ) -> futures::future::BoxFuture<
        'static,
        std::result::Result<proto::WriteBlockResponse, tonic::Status>,
    >;
}

/// Streams `data` to one worker as block `info` under the master's
/// `token`; returns once that worker has fsynced it.
pub async fn write_block(
    conn: &mut WorkerConn,
    info: proto::BlockInfo,
    data: Bytes,
    token: &Bytes,
) -> Result<()> {
    let (crcs, _) = chunk_crcs(&data);
    write_pipeline(conn, info, &data, &crcs, Vec::new(), token).await?;
    Ok(())
}

/// Whether a pipeline's answer covers every target: `None` if so, else
/// the target to leave out of the next attempt and why: the one the
/// pipeline names as failed, or the first that did not store the block.
pub fn pipeline_outcome(
    targets: &[proto::WorkerAddr],
    answer: &proto::WriteBlockResponse,
) -> Option<(String, String)> {
    if let Some(f) = &answer.failed {
        return Some((f.worker.clone(), f.error.clone()));
    }
    targets
        .iter()
        .find(|t| !answer.stored.contains(&t.name))
        .map(|t| {
            (
                t.name.clone(),
                "the pipeline answered without its copy".to_string(),
            )
        })
}

/// Reads a whole block from one worker and checks it against `info`.
/// Returns the bytes and whether the worker served them from its cache.
/// `token` is the master's read token (workers need none).
pub async fn read_block(
    conn: &mut WorkerConn,
    info: &proto::BlockInfo,
    fill_cache: bool,
    from: &str,
    token: &Bytes,
) -> Result<(Bytes, bool)> {
    read_block_within(conn, info, fill_cache, from, token, DEFAULT_STREAM_TIMEOUT).await
}

/// `[dfs] stream_timeout`'s default, for callers without a config.
pub const DEFAULT_STREAM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// [`read_block`], failing when the worker sends nothing for `timeout`
/// (a stalled worker that still answers HTTP/2 pings), so that the reader
/// goes on to the next replica.
pub async fn read_block_within(
    conn: &mut WorkerConn,
    info: &proto::BlockInfo,
    fill_cache: bool,
    from: &str,
    token: &Bytes,
    timeout: std::time::Duration,
) -> Result<(Bytes, bool)> {
    let stalled = || DfsError::Stalled {
        from: from.to_string(),
        timeout,
    };
    let call = conn.read_block(proto::ReadBlockRequest {
        block_id: info.id,
        offset: 0,
        len: 0,
        fill_cache,
        expect: Some(*info),
        access_token: token.clone(),
    });
    let mut stream = tokio::time::timeout(timeout, call)
        .await
        .map_err(|_| stalled())??
        .into_inner();
    let mut buf = BytesMut::with_capacity(info.len as usize);
    let mut from_cache = false;
    let mut first = true;
    while let Some(chunk) = tokio::time::timeout(timeout, stream.message())
        .await
        .map_err(|_| stalled())??
    {
        if first {
            from_cache = chunk.from_cache;
            first = false;
        }
        if buf.len() + chunk.data.len() > info.len as usize {
            return Err(DfsError::Corrupt {
                id: info.id,
                from: from.into(),
            });
        }
        buf.extend_from_slice(&chunk.data);
    }
    let data = buf.freeze();
    if data.len() as u64 != info.len || crc32c::crc32c(&data) != info.crc32c {
        return Err(DfsError::Corrupt {
            id: info.id,
            from: from.into(),
        });
    }
    Ok((data, from_cache))
}

/// Options of one file write.
#[derive(Debug, Clone, Default)]
pub struct PutOptions {
    /// 0: the cluster default.
    pub replication: u32,
    /// 0: the cluster default.
    pub block_size: u64,
    pub overwrite: bool,
    /// Worker name of the writer, so the first replica lands there.
    pub writer: String,
}

/// A block of a file written by [`Dfs::write_block_detached`], for
/// [`FileWriter::push_block`] to record.
#[derive(Debug)]
pub struct WrittenBlock(proto::CompletedBlock);

/// A file being written.
pub struct FileWriter {
    pub path: String,
    lease: u64,
    pub block_size: u64,
    blocks: Vec<proto::CompletedBlock>,
    pub written: u64,
    /// How often the master wants the lease renewed (0: never).
    renew_every: std::time::Duration,
}

/// Aborts a background task when dropped: a writer's lease renewal ends
/// with its write, however the write ends.
pub struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl FileWriter {
    /// The lease the master granted this write.
    pub fn lease(&self) -> u64 {
        self.lease
    }

    /// Records a block written by [`Dfs::write_block_detached`], of `len`
    /// bytes; blocks must be pushed in file order.
    pub fn push_block(&mut self, b: WrittenBlock, len: u64) {
        self.blocks.push(b.0);
        self.written += len;
    }
}

/// A connection to the cluster's file system.
pub struct Dfs {
    master: MasterConn,
    token: String,
    /// Worker connections by address, reused across blocks.
    workers: Mutex<HashMap<String, WorkerConn>>,
    /// The reader's rack, to prefer close replicas.
    pub rack: Option<String>,
    /// How worker channels are made: TCP unless [`Dfs::connect_with`] says.
    make: Option<ChannelMaker>,
    /// TLS of every channel, with `[tls]` in the config.
    tls: Option<ClientTlsConfig>,
    /// `[dfs] stream_timeout`: how long a block read or write may go
    /// without moving before its worker counts as failed.
    stream_timeout: std::time::Duration,
}

impl Dfs {
    /// Over TCP, and TLS when the config has `[tls]`: the client then
    /// presents the certificate of `cfg.tls.me`.
    pub fn connect(cfg: &ClusterConfig) -> Result<Self> {
        let tls = crate::tls::client_config(cfg)?;
        Ok(Dfs {
            master: master_conn_on(channel(&cfg.master.addr, tls.as_ref())?, &cfg.token)?,
            token: cfg.token.clone(),
            workers: Mutex::new(HashMap::new()),
            rack: None,
            make: None,
            tls,
            stream_timeout: cfg.dfs.stream_timeout,
        })
    }

    /// Like [`Dfs::connect`], with every channel made by `make`.
    pub fn connect_with(cfg: &ClusterConfig, make: ChannelMaker) -> Result<Self> {
        Ok(Dfs {
            master: master_conn_on(make(&cfg.master.addr)?, &cfg.token)?,
            token: cfg.token.clone(),
            workers: Mutex::new(HashMap::new()),
            rack: None,
            make: Some(make),
            tls: None,
            stream_timeout: cfg.dfs.stream_timeout,
        })
    }

    pub fn master(&self) -> MasterConn {
        self.master.clone()
    }

    pub fn worker(&self, addr: &str) -> Result<WorkerConn> {
        let mut map = common::sync::lock(&self.workers);
        if let Some(c) = map.get(addr) {
            return Ok(c.clone());
        }
        let c = match &self.make {
            Some(make) => worker_conn_on(make(addr)?, &self.token)?,
            None => worker_conn_on(channel(addr, self.tls.as_ref())?, &self.token)?,
        };
        map.insert(addr.to_string(), c.clone());
        Ok(c)
    }

    pub async fn stat(&self, path: &str) -> Result<proto::FileStatus> {
        Ok(self
            .master()
            .get_file(proto::PathRequest { path: path.into() })
            .await?
            .into_inner())
    }

    /// A directory's entries, or the one entry of a file.
    pub async fn list(&self, path: &str) -> Result<Vec<proto::ListEntry>> {
        Ok(self
            .master()
            .list_files(proto::PathRequest { path: path.into() })
            .await?
            .into_inner()
            .entries)
    }

    /// Opens a file for writing; it stays invisible until [`Dfs::complete`].
    pub async fn create(&self, path: &str, opts: &PutOptions) -> Result<FileWriter> {
        let created = self
            .master()
            .create_file(proto::CreateFileRequest {
                path: path.into(),
                replication: opts.replication,
                block_size: opts.block_size,
                writer: opts.writer.clone(),
                overwrite: opts.overwrite,
            })
            .await?
            .into_inner();
        Ok(FileWriter {
            path: path.to_string(),
            lease: created.lease,
            block_size: created.block_size,
            blocks: Vec::new(),
            written: 0,
            renew_every: std::time::Duration::from_millis(created.renew_every_ms),
        })
    }

    /// Keeps `w`'s lease while the returned guard lives (HDFS's
    /// LeaseRenewer): a writer whose source is slower than the soft limit
    /// per block would otherwise lose its path to the next writer.
    pub fn renew_while_writing(&self, w: &FileWriter) -> Option<AbortOnDrop> {
        if w.renew_every.is_zero() {
            return None;
        }
        let (master, every) = (self.master(), w.renew_every);
        let req = proto::AbandonFileRequest {
            path: w.path.clone(),
            lease: w.lease,
        };
        Some(AbortOnDrop(tokio::spawn(async move {
            let mut master = master;
            loop {
                tokio::time::sleep(every).await;
                if let Err(s) = master.renew_lease(req.clone()).await {
                    tracing::warn!(path = %req.path, "lease renewal failed: {}", s.message());
                    if s.code() == tonic::Code::FailedPrecondition {
                        return; // the write is gone: the next block says why
                    }
                }
            }
        })))
    }

    /// Writes one block of `w` (at most its block size); callers choose the
    /// boundaries, so record formats can keep every block record-aligned.
    pub async fn write_block_of(&self, w: &mut FileWriter, data: Bytes) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        if data.len() as u64 > w.block_size {
            return Err(DfsError::Invalid(format!(
                "a block of {} bytes exceeds the block size {}",
                data.len(),
                w.block_size
            )));
        }
        let n = data.len() as u64;
        let b = self
            .write_one_block(&w.path, w.lease, data, None, Some(w.written))
            .await?;
        w.blocks.push(b);
        w.written += n;
        Ok(())
    }

    /// One block of the file `w` writes, as [`Dfs::write_block_of`] but
    /// without borrowing `w`, so that a writer can keep this block in
    /// flight while it fills the next; [`FileWriter::push_block`] records
    /// the result, in order.
    /// `local`, when given, receives the block itself when the master puts
    /// its worker first ([`LocalHead`]).
    pub async fn write_block_detached(
        &self,
        path: &str,
        lease: u64,
        data: Bytes,
        local: Option<&dyn LocalHead>,
    ) -> Result<WrittenBlock> {
        self.write_one_block(path, lease, data, local, None)
            .await
            .map(WrittenBlock)
    }

    /// Makes the file visible, all blocks durable.
    pub async fn complete(&self, w: FileWriter) -> Result<u64> {
        self.master()
            .complete_file(proto::CompleteFileRequest {
                path: w.path.clone(),
                lease: w.lease,
                blocks: w.blocks,
            })
            .await?;
        Ok(w.written)
    }

    /// Gives up a write: nothing becomes visible, its blocks are deleted.
    pub async fn abandon(&self, w: FileWriter) {
        let _ = self
            .master()
            .abandon_file(proto::AbandonFileRequest {
                path: w.path,
                lease: w.lease,
            })
            .await;
    }

    /// Writes everything `reader` yields as file `path`. The file becomes
    /// visible only when every block is durable on its targets; on any
    /// failure the partial file is abandoned. Returns the size written.
    pub async fn put(
        &self,
        path: &str,
        mut reader: impl AsyncRead + Unpin,
        opts: &PutOptions,
        mut progress: impl FnMut(u64),
    ) -> Result<u64> {
        let mut w = self.create(path, opts).await?;
        let _renewer = self.renew_while_writing(&w);
        let bs = w.block_size as usize;
        // Where the next block goes: the master orders a dead writer's
        // blocks by it (blocks in flight are allocated in any order).
        let mut offset = 0;
        // Two blocks in flight: the next block is read (and sent) while the
        // previous one is still being fsynced on its targets.
        let result = async {
            let mut pending = futures::stream::FuturesOrdered::new();
            loop {
                let data = read_full(&mut reader, bs).await?;
                let done = data.is_empty();
                if !done {
                    let n = data.len() as u64;
                    let lease = w.lease;
                    let at = offset;
                    offset += n;
                    pending.push_back(async move {
                        self.write_one_block(path, lease, data, None, Some(at))
                            .await
                            .map(|b| (b, n))
                    });
                }
                while pending.len() >= if done { 1 } else { PUT_IN_FLIGHT } {
                    let (b, n) = futures::StreamExt::next(&mut pending)
                        .await
                        .expect("non-empty")?;
                    w.blocks.push(b);
                    w.written += n;
                    progress(w.written);
                }
                if done {
                    return Ok::<_, DfsError>(());
                }
            }
        }
        .await;
        match result {
            Ok(()) => self.complete(w).await,
            Err(e) => {
                self.abandon(w).await;
                Err(e)
            }
        }
    }

    /// Puts an in-memory buffer (small outputs, tests).
    pub async fn put_bytes(&self, path: &str, data: Bytes, opts: &PutOptions) -> Result<u64> {
        self.put(path, &data[..], opts, |_| {}).await
    }

    async fn write_one_block(
        &self,
        path: &str,
        lease: u64,
        data: Bytes,
        local: Option<&dyn LocalHead>,
        // The block's place in the file, when the caller knows it.
        offset: Option<u64>,
    ) -> Result<proto::CompletedBlock> {
        let (crcs, crc) = chunk_crcs(&data);
        let mut exclude: Vec<String> = Vec::new();
        let mut last = String::new();
        for _ in 0..WRITE_ATTEMPTS {
            let alloc = self
                .master()
                .add_block(proto::AddBlockRequest {
                    path: path.into(),
                    lease,
                    exclude: exclude.clone(),
                    count: 0,
                    offset,
                })
                .await?
                .into_inner();
            let info = proto::BlockInfo {
                id: alloc.block_id,
                len: data.len() as u64,
                crc32c: crc,
                // Stored in each replica's meta and reported: a replica
                // of another generation never passes for this block.
                generation: alloc.generation,
            };
            let Some((head, rest)) = alloc.targets.split_first() else {
                return Err(DfsError::Invalid(format!(
                    "the master gave block {} no targets",
                    info.id
                )));
            };
            // One pipeline, in the master's order (the writer's own worker
            // first when it is one): the head forwards to the rest.
            let answer = async {
                match local {
                    Some(l) if l.name() == head.name => {
                        let chunks =
                            pipeline_chunks(info, &data, &crcs, rest.to_vec(), &alloc.access_token);
                        Ok(l.receive(chunks).await?)
                    }
                    _ => {
                        let mut conn = self.worker(&head.addr)?;
                        write_pipeline_within(
                            &mut conn,
                            info,
                            &data,
                            &crcs,
                            rest.to_vec(),
                            &alloc.access_token,
                            self.stream_timeout,
                        )
                        .await
                    }
                }
            }
            .await;
            let (bad, why) = match answer {
                Ok(a) => match pipeline_outcome(&alloc.targets, &a) {
                    None => {
                        return Ok(proto::CompletedBlock {
                            block: Some(info),
                            stored_on: alloc.targets.iter().map(|t| t.name.clone()).collect(),
                        })
                    }
                    Some(bad) => bad,
                },
                Err(e) => (head.name.clone(), e.to_string()),
            };
            tracing::warn!(worker = %bad, block = info.id, "block write failed: {why}");
            last = format!("{bad}: {why}");
            exclude.push(bad);
        }
        Err(DfsError::Invalid(format!(
            "could not store a block on all its targets after {WRITE_ATTEMPTS} attempts (last: {last})"
        )))
    }

    /// Reads one block, trying replicas in order of preference: cached,
    /// same rack, any. Returns the bytes and the replica's worker name.
    pub async fn read_block(
        &self,
        b: &proto::BlockStatus,
        fill_cache: bool,
    ) -> Result<(Bytes, String)> {
        let info = b
            .block
            .ok_or_else(|| DfsError::Invalid("block status without block info".into()))?;
        let mut order: Vec<&proto::WorkerAddr> = Vec::new();
        for w in b
            .cached_on
            .iter()
            .chain(self.rack_first(&b.replicas).iter().copied())
        {
            if !order.iter().any(|o| o.name == w.name) {
                order.push(w);
            }
        }
        let mut last = "no live good replica (missing or corrupt: see `mr admin fsck`)".to_string();
        for w in order {
            let mut conn = self.worker(&w.addr)?;
            let read = read_block_within(
                &mut conn,
                &info,
                fill_cache,
                &w.name,
                &b.access_token,
                self.stream_timeout,
            );
            match read.await {
                Ok((data, _)) => return Ok((data, w.name.clone())),
                Err(e) => {
                    tracing::warn!(worker = %w.name, block = info.id, "replica read failed, trying the next: {e}");
                    if let DfsError::Corrupt { .. } = e {
                        self.report_bad_replica(&w.name, info.id, &e, &b.access_token)
                            .await;
                    }
                    last = format!("{}: {e}", w.name);
                }
            }
        }
        Err(DfsError::NoReplica { id: info.id, last })
    }

    /// Tells the master that `worker`'s replica of block `id` failed its
    /// checksum at this reader, as an HDFS client's `reportBadBlocks`: the
    /// master stops handing it out and re-replicates from a good copy.
    /// Best effort: a reader that cannot reach the master still goes on to
    /// the next replica, and the block scanner finds the rot later.
    /// `token` is the read token the master gave with the block (a worker
    /// reading for its task has none and needs none).
    pub async fn report_bad_replica(&self, worker: &str, id: u64, why: &DfsError, token: &Bytes) {
        let r = self
            .master()
            .report_bad_block(proto::ReportBadBlockRequest {
                worker: worker.to_string(),
                block_id: id,
                reason: format!("read by a client: {why}"),
                access_token: token.clone(),
            })
            .await;
        if let Err(e) = r {
            tracing::warn!(
                worker,
                block = id,
                "could not report a corrupt replica: {e}"
            );
        }
    }

    fn rack_first<'a>(&self, replicas: &'a [proto::WorkerAddr]) -> Vec<&'a proto::WorkerAddr> {
        let mut v: Vec<&proto::WorkerAddr> = replicas.iter().collect();
        // Spread readers over replicas, then move the caller's rack first.
        fastrand::shuffle(&mut v);
        if let Some(r) = &self.rack {
            v.sort_by_key(|w| &w.rack != r);
        }
        v
    }

    /// Copies a whole file into `out`, block after block, each verified.
    pub async fn get(
        &self,
        path: &str,
        mut out: impl AsyncWrite + Unpin,
        mut progress: impl FnMut(u64),
    ) -> Result<u64> {
        let st = self.stat(path).await?;
        let mut total = 0;
        // The next block is fetched while the previous one is written out.
        // A reader fills the serving worker's cache, as a task does.
        let mut blocks = futures::StreamExt::buffered(
            futures::stream::iter(st.blocks.iter().map(|b| self.read_block(b, true))),
            PUT_IN_FLIGHT,
        );
        while let Some(r) = futures::StreamExt::next(&mut blocks).await {
            let (data, _) = r?;
            out.write_all(&data).await?;
            total += data.len() as u64;
            progress(total);
        }
        out.flush().await?;
        Ok(total)
    }
}

/// Reads until `n` bytes or end of input.
async fn read_full(r: &mut (impl AsyncRead + Unpin), n: usize) -> std::io::Result<Bytes> {
    let mut buf = BytesMut::with_capacity(n);
    while buf.len() < n {
        let want = (n - buf.len()).min(8 << 20);
        let mut chunk = (&mut *r).take(want as u64);
        let got = chunk.read_buf(&mut buf).await?;
        if got == 0 {
            break;
        }
    }
    Ok(buf.freeze())
}

#[cfg(test)]
mod keepalive_tests {
    use super::*;

    /// A peer that accepts the connection and then never answers (a host
    /// partitioned mid-connection looks like this): the call must fail
    /// within the keep-alive bound instead of hanging forever, as reduces
    /// writing to a cut rack did (scripts/faults.sh rack-partition).
    #[tokio::test]
    async fn a_silent_peer_fails_the_call_instead_of_hanging() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let held = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            std::thread::sleep(std::time::Duration::from_secs(20));
            drop(s);
        });
        let mut c = master_conn(&addr, "t").unwrap();
        let bound = KEEPALIVE + KEEPALIVE_TIMEOUT + std::time::Duration::from_secs(6);
        let r = tokio::time::timeout(bound, c.cluster_status(proto::Empty {})).await;
        assert!(matches!(r, Ok(Err(_))), "the call hung past {bound:?}");
        drop(held);
    }
}

#[cfg(test)]
mod pipeline_tests {
    use super::*;

    /// The chunks' CRCs are each chunk's, and the combined one is the
    /// whole block's: what a target checks per chunk and at the end.
    #[test]
    fn chunk_crcs_are_per_chunk_and_combine_to_the_whole() {
        let data: Vec<u8> = (0..(2 * CHUNK + 1000) as u32)
            .map(|i| ((i * 31) >> 3) as u8)
            .collect();
        let (crcs, whole) = chunk_crcs(&data);
        assert_eq!(crcs.len(), 3);
        for (c, crc) in data.chunks(CHUNK).zip(&crcs) {
            assert_eq!(crc32c::crc32c(c), *crc);
        }
        assert_eq!(whole, crc32c::crc32c(&data));
        assert_eq!(chunk_crcs(&[]), (Vec::new(), 0));
    }

    fn t(name: &str) -> proto::WorkerAddr {
        proto::WorkerAddr {
            name: name.into(),
            addr: String::new(),
            rack: String::new(),
        }
    }

    /// The target the writer leaves out next: the one the pipeline names,
    /// else the first whose copy is missing from the answer.
    #[test]
    fn pipeline_outcome_names_the_target_to_exclude() {
        let targets = [t("a"), t("b"), t("c")];
        let answer = |stored: &[&str], failed: Option<&str>| proto::WriteBlockResponse {
            worker: "a".into(),
            stored: stored.iter().map(|s| s.to_string()).collect(),
            failed: failed.map(|w| proto::PipelineFailure {
                worker: w.into(),
                error: "down".into(),
            }),
        };
        assert_eq!(
            pipeline_outcome(&targets, &answer(&["a", "b", "c"], None)),
            None
        );
        assert_eq!(
            pipeline_outcome(&targets, &answer(&[], Some("c"))),
            Some(("c".into(), "down".into()))
        );
        let (bad, _) = pipeline_outcome(&targets, &answer(&["a", "c"], None)).unwrap();
        assert_eq!(bad, "b");
    }
}

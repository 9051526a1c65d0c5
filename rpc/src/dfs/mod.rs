//! The DFS client, used by the `mr` CLI, by workers replicating blocks and,
//! later, by tasks reading input and writing output.
//!
//! A block goes to its targets through a pipeline, as in HDFS: the writer
//! streams it to the first target, which writes it and forwards it to the
//! next while it receives (`worker/src/store/pipeline.rs`); every chunk carries
//! its CRC32C, checked on each hop. The writer sends each block once
//! instead of once per replica, and a put returns only after every target
//! acknowledged an fsynced copy. A target that fails, first or further
//! down, is left out of the block's next attempt.
//! Reads prefer a replica in some worker's cache, then the caller's rack, and
//! fall through to the next replica on any error; every read is checked
//! against the block's CRC32C.

mod blocks;
mod conn;

use crate::auth::TokenAttach;
pub use blocks::*;
use bytes::{Bytes, BytesMut};
use common::config::ClusterConfig;
use conn::channel;
pub use conn::*;
use proto::master_client::MasterClient;
use proto::worker_client::WorkerClient;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig};

pub type MasterConn = MasterClient<InterceptedService<Channel, TokenAttach>>;
pub type WorkerConn = WorkerClient<InterceptedService<Channel, TokenAttach>>;

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

//! One block over the wire: its chunks with their CRC32Cs, the write
//! pipeline through its targets, and a whole-block read checked against
//! its CRC.

use super::{DfsError, Result, WorkerConn};
use bytes::{Bytes, BytesMut};
use common::CHUNK;
use std::sync::Mutex;

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

#[cfg(test)]
mod tests {
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

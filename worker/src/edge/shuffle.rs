//! The shuffle's serving side: one partition of one map attempt's output,
//! read from the indexed map-output file and streamed in chunks, or, for a
//! reducer on the same host, located so that it reads the file itself.
//! Either way the reducer is given the partition's CRC32C from the map's
//! index, and checks the bytes it got against it. A map output by
//! reference (`crate::task::mapout::refs`) is located as its references
//! and its block, and streamed encoded.

use crate::edge::error::WorkerError;
use crate::task::mapout::{index_path, refs, MapOutputIndex, PartInfo};
use crate::task::partition::{PartitionFile, PartitionRef, ShuffleChunk};
use crate::task::runner::TaskRunner;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use tokio::sync::mpsc;

/// Where a requested partition lies: in a map output file of records, or
/// as references into a block (`crate::task::mapout::refs`), in the
/// references file `path` at `part`, pointing into `source`.
pub struct Located {
    pub path: PathBuf,
    pub part: PartInfo,
    pub source: Option<PathBuf>,
}

/// The map output that holds the requested partition, and where in it.
pub fn locate(tasks: &TaskRunner, r: &PartitionRef) -> Result<Located, WorkerError> {
    let dir = tasks.job_dir(r.job_id);
    let out = crate::task::mapout::output_path(&dir, r.map_index, r.attempt);
    let idx = MapOutputIndex::read(&index_path(&out)).map_err(|e| WorkerError::NoMapOutput {
        job: r.job_id,
        map: r.map_index,
        attempt: r.attempt,
        why: e.to_string(),
    })?;
    let part = *idx
        .parts
        .get(r.partition as usize)
        .ok_or(WorkerError::NoPartition(r.partition))?;
    // The index is written last: a references output has both its files.
    let by_ref = refs::refs_path(&out);
    Ok(if by_ref.exists() {
        Located {
            path: by_ref,
            part,
            source: Some(refs::source_path(&out)),
        }
    } else {
        Located {
            path: out,
            part,
            source: None,
        }
    })
}

fn absolute(p: &std::path::Path) -> Result<PathBuf, WorkerError> {
    std::path::absolute(p).map_err(|err| WorkerError::Path {
        path: p.display().to_string(),
        err,
    })
}

/// `LocatePartition`: the file's absolute path, offset and length (and
/// the block's, for references).
pub fn locate_file(tasks: &TaskRunner, r: &PartitionRef) -> Result<PartitionFile, WorkerError> {
    let l = locate(tasks, r)?;
    Ok(PartitionFile {
        path: absolute(&l.path)?,
        offset: l.part.offset,
        len: l.part.len,
        crc32c: Some(l.part.crc32c),
        source: l.source.as_deref().map(absolute).transpose()?,
    })
}

/// Maps a whole file, read-only.
fn map_file(path: &std::path::Path) -> std::io::Result<memmap2::Mmap> {
    let f = std::fs::File::open(path)?;
    // SAFETY: map outputs and the block files they link are written once
    // and never modified; the job's cleanup may unlink them, which leaves
    // the mapping valid.
    unsafe { memmap2::MmapOptions::new().populate().map(&f) }
}

/// `FetchPartition`: the partition's bytes in chunks of at most
/// `common::CHUNK`, read on a blocking thread as the reducer takes them.
/// A partition by reference is encoded from the block as it goes; its
/// CRC32C, of what was sent, comes with the last chunk, after the
/// references were checked against the map's.
pub fn serve(
    tasks: &TaskRunner,
    r: &PartitionRef,
) -> Result<mpsc::Receiver<Result<ShuffleChunk, WorkerError>>, WorkerError> {
    let Located { path, part, source } = locate(tasks, r)?;
    let (tx, rx) = mpsc::channel(4);
    tokio::task::spawn_blocking(move || {
        let res = match source {
            Some(block) => serve_refs(&tx, &path, &block, part),
            None => serve_file(&tx, &path, part),
        };
        if let Err(e) = res {
            let _ = tx.blocking_send(Err(WorkerError::MapOutputRead(e)));
        }
    });
    Ok(rx)
}

type Chunks = mpsc::Sender<Result<ShuffleChunk, WorkerError>>;

fn serve_file(tx: &Chunks, out: &std::path::Path, part: PartInfo) -> std::io::Result<()> {
    let mut f = std::fs::File::open(out)?;
    f.seek(SeekFrom::Start(part.offset))?;
    let mut left = part.len;
    let mut first = true;
    // One message at least: the first carries the CRC32C, even of an
    // empty partition.
    while first || left > 0 {
        let n = left.min(common::CHUNK as u64) as usize;
        let mut buf = vec![0u8; n];
        f.read_exact(&mut buf)?;
        left -= n as u64;
        if tx
            .blocking_send(Ok(ShuffleChunk {
                data: buf.into(),
                crc32c: first.then_some(part.crc32c),
            }))
            .is_err()
        {
            return Ok(()); // the reducer went away
        }
        first = false;
    }
    Ok(())
}

fn serve_refs(
    tx: &Chunks,
    refs_file: &std::path::Path,
    block: &std::path::Path,
    part: PartInfo,
) -> std::io::Result<()> {
    let file = map_file(refs_file)?;
    let block = map_file(block)?;
    let source = refs::Source::of_file(&block, &file)?;
    let torn = || std::io::Error::new(std::io::ErrorKind::InvalidData, "references file is torn");
    let at = usize::try_from(part.offset).map_err(|_| torn())?;
    let len = usize::try_from(part.len).map_err(|_| torn())?;
    let these = file
        .get(at..at.checked_add(len).ok_or_else(torn)?)
        .ok_or_else(torn)?;
    let mut gone = false;
    let crc = refs::encode(source, these, part.crc32c, common::CHUNK, |data| {
        gone = tx
            .blocking_send(Ok(ShuffleChunk {
                data: data.into(),
                crc32c: None,
            }))
            .is_err();
        !gone
    })?;
    if !gone {
        let _ = tx.blocking_send(Ok(ShuffleChunk {
            data: bytes::Bytes::new(),
            crc32c: Some(crc),
        }));
    }
    Ok(())
}

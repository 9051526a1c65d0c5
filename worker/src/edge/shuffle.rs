//! The shuffle's serving side: one partition of one map attempt's output,
//! read from the indexed map-output file and streamed in chunks, or, for a
//! reducer on the same host, located so that it reads the file itself.
//! Either way the reducer is given the partition's CRC32C from the map's
//! index, and checks the bytes it got against it.

use crate::edge::error::WorkerError;
use crate::task::mapout::{MapOutputIndex, PartInfo};
use crate::task::partition::{PartitionFile, PartitionRef, ShuffleChunk};
use crate::task::runner::TaskRunner;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use tokio::sync::mpsc;

/// The map output file that holds the requested partition, and where in it.
pub fn locate(tasks: &TaskRunner, r: &PartitionRef) -> Result<(PathBuf, PartInfo), WorkerError> {
    let dir = tasks.job_dir(r.job_id);
    let out = crate::task::mapout::output_path(&dir, r.map_index, r.attempt);
    let idx_path = {
        let mut p = out.clone().into_os_string();
        p.push(".index");
        PathBuf::from(p)
    };
    let idx = MapOutputIndex::read(&idx_path).map_err(|e| WorkerError::NoMapOutput {
        job: r.job_id,
        map: r.map_index,
        attempt: r.attempt,
        why: e.to_string(),
    })?;
    let part = *idx
        .parts
        .get(r.partition as usize)
        .ok_or(WorkerError::NoPartition(r.partition))?;
    Ok((out, part))
}

/// `LocatePartition`: the file's absolute path, offset and length.
pub fn locate_file(tasks: &TaskRunner, r: &PartitionRef) -> Result<PartitionFile, WorkerError> {
    let (out, part) = locate(tasks, r)?;
    let path = std::path::absolute(&out).map_err(|err| WorkerError::Path {
        path: out.display().to_string(),
        err,
    })?;
    Ok(PartitionFile {
        path,
        offset: part.offset,
        len: part.len,
        crc32c: Some(part.crc32c),
    })
}

/// `FetchPartition`: the partition's bytes in chunks of at most
/// `common::CHUNK`, read on a blocking thread as the reducer takes them.
pub fn serve(
    tasks: &TaskRunner,
    r: &PartitionRef,
) -> Result<mpsc::Receiver<Result<ShuffleChunk, WorkerError>>, WorkerError> {
    let (out, part) = locate(tasks, r)?;
    let (tx, rx) = mpsc::channel(4);
    tokio::task::spawn_blocking(move || {
        let res = (|| -> std::io::Result<()> {
            let mut f = std::fs::File::open(&out)?;
            f.seek(SeekFrom::Start(part.offset))?;
            let mut left = part.len;
            let mut first = true;
            // One message at least: the first carries the CRC32C, even of
            // an empty partition.
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
        })();
        if let Err(e) = res {
            let _ = tx.blocking_send(Err(WorkerError::MapOutputRead(e)));
        }
    });
    Ok(rx)
}

//! The shuffle's serving side: one partition of one map attempt's output,
//! read from the indexed map-output file and streamed in chunks, or, for a
//! reducer on the same host, located so that it reads the file itself.
//! Either way the reducer is given the partition's CRC32C from the map's
//! index, and checks the bytes it got against it.

use crate::mapout::{MapOutputIndex, PartInfo};
use crate::node::Node;
use proto::{DataChunk, FetchPartitionRequest, PartitionFile};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use tokio::sync::mpsc;
use tonic::Status;

/// The map output file that holds the requested partition, and where in it.
pub fn locate(node: &Node, r: &FetchPartitionRequest) -> Result<(PathBuf, PartInfo), Status> {
    let dir = node.job_dir(r.job_id);
    let out = crate::maptask::output_path(&dir, r.map_index, r.attempt);
    let idx_path = {
        let mut p = out.clone().into_os_string();
        p.push(".index");
        PathBuf::from(p)
    };
    let idx = MapOutputIndex::read(&idx_path).map_err(|e| {
        Status::not_found(format!(
            "no output of map {} attempt {} of job {} here: {e}",
            r.map_index, r.attempt, r.job_id
        ))
    })?;
    let part = *idx
        .parts
        .get(r.partition as usize)
        .ok_or_else(|| Status::invalid_argument(format!("no partition {}", r.partition)))?;
    Ok((out, part))
}

/// `LocatePartition`: the file's absolute path, offset and length.
pub fn locate_file(node: &Node, r: &FetchPartitionRequest) -> Result<PartitionFile, Status> {
    let (out, part) = locate(node, r)?;
    let path = std::path::absolute(&out)
        .map_err(|e| Status::internal(format!("{}: {e}", out.display())))?;
    Ok(PartitionFile {
        path: path.to_string_lossy().into_owned(),
        offset: part.offset,
        len: part.len,
        crc32c: Some(part.crc32c),
    })
}

pub fn serve(
    node: &Node,
    r: &FetchPartitionRequest,
) -> Result<mpsc::Receiver<Result<DataChunk, Status>>, Status> {
    let (out, part) = locate(node, r)?;
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
                    .blocking_send(Ok(DataChunk {
                        data: buf.into(),
                        from_cache: false,
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
            let _ = tx.blocking_send(Err(Status::internal(format!(
                "map output read failed: {e}"
            ))));
        }
    });
    Ok(rx)
}

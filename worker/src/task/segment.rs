//! A shuffle segment (one map's partition) as a reduce holds it, and as
//! its merge reads it: a byte range of a file (a map output on this host,
//! or a spool), bytes fetched into memory, or references into a map's
//! block on this host (`crate::task::mapout::refs`).

use crate::task::mapout::refs::{RefRun, Source};
use crate::task::merge::{merge_grouped_slices, GroupFn, Run};
use crate::task::outcome::Failure;
use rpc::dfs::DfsError;
use std::path::{Path, PathBuf};

/// One map's partition, as the merge reads it.
pub enum Segment {
    /// A byte range of a file: a map's output on this host, or a spool.
    File {
        path: PathBuf,
        offset: u64,
        len: u64,
    },
    /// Fetched into memory under the budget.
    Mem(Vec<u8>),
    /// Map `map`'s output by reference on this host: references in a
    /// file (`path`, at `offset`, `len` bytes) into the map's `block`,
    /// whose records' CRC32Cs sum to `sum`.
    Refs {
        map: u32,
        path: PathBuf,
        offset: u64,
        len: u64,
        block: PathBuf,
        sum: u32,
        /// The records' bytes encoded: what the shuffle counts.
        encoded: u64,
    },
}

impl Segment {
    /// The bytes the shuffle counts for it.
    pub fn shuffled(&self) -> u64 {
        match self {
            Segment::File { len, .. } => *len,
            Segment::Mem(v) => v.len() as u64,
            Segment::Refs { encoded, .. } => *encoded,
        }
    }

    /// The segment's bytes in memory for the merge: a file segment mapped
    /// (file pages, not the worker's heap), a fetched one as it is.
    pub fn map(&self) -> std::io::Result<Mapped<'_>> {
        match self {
            Segment::File { len: 0, .. } => Ok(Mapped::Mem(&[])),
            Segment::File { path, offset, len } => {
                let f = std::fs::File::open(path)?;
                if f.metadata()?.len() < offset + len {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("{} is shorter than its segment", path.display()),
                    ));
                }
                // Only the segment's pages, mapped all at once
                // (`populate`): the merge reads every byte, and faulting
                // them in 4 KiB at a time as it went cost more than the
                // merge's own compares.
                let skip = (*offset % page_size()) as usize;
                // SAFETY: map outputs and spools are written once, before
                // their map reports or their fetch returns, and never
                // modified; the job's cleanup may unlink one, which leaves
                // this mapping valid.
                let m = unsafe {
                    memmap2::MmapOptions::new()
                        .offset(offset - skip as u64)
                        .len(skip + *len as usize)
                        .populate()
                        .map(&f)
                }?;
                Ok(Mapped::File(m, skip..skip + *len as usize))
            }
            Segment::Mem(v) => Ok(Mapped::Mem(v)),
            Segment::Refs {
                map,
                path,
                offset,
                len,
                block,
                sum,
                ..
            } => {
                let file = map_whole(path)?;
                let range = usize::try_from(*offset)
                    .ok()
                    .zip(usize::try_from(*len).ok())
                    .and_then(|(o, n)| Some(o..o.checked_add(n)?))
                    .filter(|r| r.end <= file.len())
                    .ok_or_else(|| {
                        std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            format!("{} is shorter than its segment", path.display()),
                        )
                    })?;
                Ok(Mapped::Refs {
                    map: *map,
                    file,
                    block: map_whole(block)?,
                    range,
                    sum: *sum,
                })
            }
        }
    }
}

/// A whole file mapped and populated (a map's references file, the block
/// they point into: the merge reads all of it).
fn map_whole(path: &Path) -> std::io::Result<memmap2::Mmap> {
    let f = std::fs::File::open(path)?;
    // SAFETY: as for a segment's file: written once, never modified.
    unsafe { memmap2::MmapOptions::new().populate().map(&f) }
}

/// The granularity of a mapping's file offset.
fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as u64
    } else {
        4096
    }
}

/// A segment as the merge reads it.
pub enum Mapped<'a> {
    File(memmap2::Mmap, std::ops::Range<usize>),
    Mem(&'a [u8]),
    Refs {
        map: u32,
        file: memmap2::Mmap,
        block: memmap2::Mmap,
        range: std::ops::Range<usize>,
        sum: u32,
    },
}

impl Mapped<'_> {
    fn run(&self) -> std::io::Result<Run<'_>> {
        Ok(match self {
            Mapped::File(m, r) => Run::encoded(&m[r.clone()]),
            Mapped::Mem(b) => Run::encoded(b),
            Mapped::Refs {
                file,
                block,
                range,
                sum,
                ..
            } => Run::Refs(RefRun::new(
                Source::of_file(block, file)?,
                &file[range.clone()],
                *sum,
            )?),
        })
    }
}

/// Merges the segments into `f`, then checks each one by reference
/// against its map's sum (its records were read by the merge, and summed
/// as they went by): a rotten one fails the reduce, naming its map, so
/// the master re-runs that map, and what the merge wrote is not kept.
pub fn merge_segments(mapped: &[Mapped<'_>], f: &mut GroupFn<'_>) -> Result<u64, Failure> {
    let mut runs = mapped
        .iter()
        .map(Mapped::run)
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(Failure::from_err)?;
    let n = merge_grouped_slices(&mut runs, f).map_err(Failure::from_err)?;
    for (m, r) in mapped.iter().zip(&runs) {
        if let (Mapped::Refs { map, .. }, Run::Refs(r)) = (m, r) {
            r.verify().map_err(|e| Failure {
                msg: format!("map {map}'s output: {e}"),
                fetch_failed_map: Some(*map),
            })?;
        }
    }
    Ok(n)
}

/// Whether a fetched segment of `len` bytes whose CRC32C is `got` is the
/// one the map wrote, whose index says `want`. A map's worker always sends
/// the CRC; a segment without one is refused unless it is empty.
pub fn check_segment(got: u32, len: u64, want: Option<u32>) -> Result<(), DfsError> {
    match want {
        Some(w) if w == got => Ok(()),
        None if len == 0 => Ok(()),
        Some(w) => Err(DfsError::Invalid(format!(
            "segment of {len} bytes has CRC32C {got:#010x}, the map wrote {w:#010x}"
        ))),
        None => Err(DfsError::Invalid(format!(
            "segment of {len} bytes came without the map's checksum"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A segment whose bytes differ from the map's CRC32C is refused, as is
    /// a non-empty one with no CRC at all; a matching one passes.
    #[test]
    fn a_segment_is_checked_against_the_maps_crc() {
        let data = b"key\x00value";
        let crc = crc32c::crc32c(data);
        assert!(check_segment(crc, data.len() as u64, Some(crc)).is_ok());
        let e = check_segment(crc ^ 1, data.len() as u64, Some(crc)).unwrap_err();
        assert!(e.to_string().contains("CRC32C"), "{e}");
        assert!(check_segment(crc, data.len() as u64, None).is_err());
        assert!(check_segment(0, 0, None).is_ok());
    }
}

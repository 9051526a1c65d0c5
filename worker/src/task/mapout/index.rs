//! A map output's index file: where each partition of the output file
//! lies, how many records it holds and its CRC32C, which the shuffle serves
//! and the reduce checks its fetched bytes against.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Where attempt `attempt` of map `index` keeps its output in the job's
/// directory `dir` (its index beside it, `.index` appended).
pub fn output_path(dir: &Path, index: u32, attempt: u32) -> PathBuf {
    dir.join(format!("map-{index}-{attempt}.out"))
}

/// The index file of the map output `out` (`.index` appended).
pub fn index_path(out: &Path) -> PathBuf {
    let mut p = out.as_os_str().to_owned();
    p.push(".index");
    PathBuf::from(p)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PartInfo {
    pub offset: u64,
    pub len: u64,
    pub records: u64,
    /// CRC32C of the partition's `len` bytes.
    pub crc32c: u32,
}

/// Bytes per partition in an index file: offset, length, records, CRC32C
/// (as a u64).
pub const INDEX_ENTRY: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MapOutputIndex {
    pub parts: Vec<PartInfo>,
}

impl MapOutputIndex {
    pub fn write(&self, path: &Path) -> io::Result<()> {
        let mut b = Vec::with_capacity(self.parts.len() * INDEX_ENTRY);
        for p in &self.parts {
            b.extend_from_slice(&p.offset.to_le_bytes());
            b.extend_from_slice(&p.len.to_le_bytes());
            b.extend_from_slice(&p.records.to_le_bytes());
            b.extend_from_slice(&u64::from(p.crc32c).to_le_bytes());
        }
        fs::write(path, b)
    }

    pub fn read(path: &Path) -> io::Result<Self> {
        Self::parse(&fs::read(path)?)
    }

    /// Decodes an index file's bytes: 32 bytes (offset, length, records,
    /// CRC32C) per partition.
    pub fn parse(b: &[u8]) -> io::Result<Self> {
        if !b.len().is_multiple_of(INDEX_ENTRY) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "map output index has a bad length",
            ));
        }
        let u = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
        Ok(MapOutputIndex {
            parts: b
                .chunks(INDEX_ENTRY)
                .map(|c| PartInfo {
                    offset: u(&c[..8]),
                    len: u(&c[8..16]),
                    records: u(&c[16..24]),
                    crc32c: u(&c[24..]) as u32,
                })
                .collect(),
        })
    }
}

//! An external job's combiner: run once over a map's finished, sorted
//! output, partition after partition, by one child (Streaming's
//! `--combiner`, or a job program whose plan has a combiner); its output
//! is partitioned and sorted again into the map's output file. Hadoop runs
//! a Streaming combiner per spill; once per map gives the shuffle the same
//! savings for one more pass over the map's output, and a combiner may run
//! any number of times, so the job's result is the same.

use super::child::{self, Child, Killer};
use crate::task::mapout::MapOutputBuffer;
use crate::task::outcome::Failure;
use joblib::jobs::{formats, Partitioning};
use std::path::{Path, PathBuf};

/// How the combined records are partitioned again.
pub struct Repartition<'a> {
    pub reducers: u32,
    pub partitioning: Partitioning,
    pub splits: &'a formats::RangePartitioner,
    pub sort_buffer: usize,
}

/// What combining did: records in and out.
pub struct Combined {
    pub records_in: u64,
    pub records_out: u64,
}

/// Combines map output `out` (with its index) in place.
pub fn combine(
    c: Child,
    killer: &Killer,
    out: &Path,
    index: &crate::task::mapout::MapOutputIndex,
    how: Repartition<'_>,
) -> Result<Combined, Failure> {
    let file = std::fs::File::open(out).map_err(Failure::from_err)?;
    // SAFETY: the map's output is written once, before this, and not
    // modified while mapped (the combined output goes to another file).
    let data = unsafe { memmap2::Mmap::map(&file) }.map_err(Failure::from_err)?;
    let data = &data[..];
    let tmp = PathBuf::from(format!("{}.combined", out.display()));
    let mut buf = MapOutputBuffer::new(
        PathBuf::from(format!("{}.combine-spill", out.display())),
        how.reducers,
        how.sort_buffer,
        None,
    );
    let mut records_out = 0;
    let mut put = |k: &[u8], v: &[u8]| {
        records_out += 1;
        let p = match how.partitioning {
            Partitioning::Hash => formats::hash_partition(k, how.reducers),
            Partitioning::TotalOrder => how.splits.partition(k),
        };
        buf.add(p, k, v)
    };
    let feed = |emit: &mut dyn FnMut(&[u8], &[u8])| -> Result<u64, formats::FormatError> {
        let mut n = 0;
        for p in &index.parts {
            let seg = &data[p.offset as usize..(p.offset + p.len) as usize];
            for r in formats::kv_iter(seg) {
                let (k, v) = r?;
                emit(k, v);
                n += 1;
            }
        }
        Ok(n)
    };
    let ran = child::run(c, killer, feed, &mut put)?;
    let records_in = ran.fed.map_err(Failure::from_err)?;
    buf.finish(&tmp).map_err(Failure::from_err)?;
    let index_of = |p: &Path| PathBuf::from(format!("{}.index", p.display()));
    std::fs::rename(index_of(&tmp), index_of(out)).map_err(Failure::from_err)?;
    std::fs::rename(&tmp, out).map_err(Failure::from_err)?;
    Ok(Combined {
        records_in,
        records_out,
    })
}

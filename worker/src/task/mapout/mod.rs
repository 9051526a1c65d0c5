//! The map side's sort buffer (Hadoop's `MapOutputBuffer`): emitted records
//! go into one arena with a compact index; when arena and index reach the
//! memory bound they are sorted by (partition, key), combined, and spilled;
//! `finish` merges the spills into one file with a per-partition index that
//! the shuffle serves. Memory stays bounded whatever the input size; a
//! record larger than the bound is spilled alone rather than refused.
//!
//! Records an identity map emits as slices of its input block (TeraSort's,
//! Sort's) are not copied into the arena: their index entry points into
//! the block, which the buffer holds until it spills. Only the index then
//! counts against the memory bound.
//!
//! Each partition's CRC32C is computed as it is written and kept in the
//! index, so that the reducer checks the bytes it fetched against what the
//! map wrote (a disk or a network that flips a bit must fail the fetch, not
//! change a job's output), as Hadoop's `IFile` checksums each segment.

mod entry;
pub use entry::keep_buffers_for as keep_index_buffers_for;
mod index;
mod out;
pub mod recycle;
pub mod refs;

use crate::task::merge::{key_prefix, merge_grouped, merge_records};
use bytes::Bytes;
use entry::*;
pub use index::{index_path, output_path, MapOutputIndex, PartInfo, INDEX_ENTRY};
use joblib::jobs::formats::kv_encode;
use out::{close_out, create_out, cut, put_record, Out};
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Below this many entries the index is sorted by comparison.
const RADIX_MIN: usize = 512;
/// How many records ahead of the copy [`MapOutputBuffer::prefetch`] asks for.
const PREFETCH_AHEAD: usize = 16;
/// The size of the writes of sorted output: the `BufWriter`'s capacity, so
/// that each goes straight through it.
const WRITE_CHUNK: usize = 1 << 20;

/// A combiner: a key and its values in, records out.
pub type Combiner =
    Arc<dyn Fn(&[u8], &mut dyn Iterator<Item = &[u8]>, &mut dyn FnMut(&[u8], &[u8])) + Send + Sync>;

struct Spill {
    path: PathBuf,
    parts: Vec<PartInfo>,
}

pub struct MapOutputBuffer {
    dir: PathBuf,
    partitions: u32,
    mem_limit: usize,
    combiner: Option<Combiner>,
    arena: Vec<u8>,
    index: Vec<Entry>,
    spills: Vec<Spill>,
    /// The map's input block, whose records are indexed in place.
    source: Bytes,
    /// The offset in `source` of the last record placed there, plus one:
    /// a record is placed there only past it, so that the order of
    /// offsets is the order of emission.
    source_next: usize,
    /// The store's file of the source block, if it is one: the output
    /// may then be references into it ([`refs`]).
    source_file: Option<PathBuf>,
    /// The smallest average record referenced rather than copied.
    min_record: usize,
    /// The most entries the index held: whether its buffer may be kept
    /// for the next map ([`give_back`]).
    index_high: usize,
}

impl Drop for MapOutputBuffer {
    fn drop(&mut self) {
        let high = self.index_high.max(self.index.len());
        give_back(std::mem::take(&mut self.index), high);
    }
}

impl MapOutputBuffer {
    pub fn new(
        dir: PathBuf,
        partitions: u32,
        mem_limit: usize,
        combiner: Option<Combiner>,
    ) -> Self {
        // The arena's offsets are u32: stay below 4 GiB.
        let mem_limit = mem_limit.clamp(1 << 16, u32::MAX as usize / 2);
        MapOutputBuffer {
            dir,
            partitions: partitions.max(1),
            mem_limit,
            combiner,
            // Reserved, not touched: pages become resident as records
            // arrive, and the buffers never double (and copy) as they grow.
            arena: crate::mem::hugepages::with_capacity(mem_limit),
            index: buffer(mem_limit / std::mem::size_of::<Entry>()),
            spills: Vec::new(),
            source: Bytes::new(),
            source_next: 0,
            source_file: None,
            index_high: 0,
            min_record: refs::MIN_RECORD,
        }
    }

    /// Names the file whose bytes the source block is (a block file of
    /// the store, immutable): if every record turns out to lie in the
    /// source, [`MapOutputBuffer::finish`] writes references into it
    /// rather than the records ([`refs`]).
    /// Only if the records average at least `min_record` bytes
    /// ([`refs::MIN_RECORD`] by default).
    pub fn with_source_file(mut self, file: PathBuf, min_record: usize) -> Self {
        if !self.source.is_empty() {
            self.source_file = Some(file);
            self.min_record = min_record;
        }
        self
    }

    /// Indexes the records [`MapOutputBuffer::add`] is given as slices of
    /// `block` where they lie, instead of copying them into the arena.
    pub fn with_source(mut self, block: Bytes) -> Self {
        if block.len() < IN_SOURCE as usize {
            self.source = block;
        }
        self
    }

    /// Where `key` and `value` lie in the source block, if they can be
    /// indexed there: the value after the key within [`SOURCE_GAP`] bytes
    /// (or empty), past the last record placed there, and before any
    /// record was copied into the arena (so that every record in the
    /// source was emitted before every record in the arena, in the order
    /// of their offsets, which is what keeps equal keys in emission order).
    /// Returns the offset and the entry's `klen` (with the gap).
    fn in_source(&self, key: &[u8], value: &[u8]) -> Option<(u32, u32)> {
        if key.is_empty() || key.len() > SOURCE_KEY || !self.arena.is_empty() {
            return None;
        }
        let base = self.source.as_ptr() as usize;
        let k = key.as_ptr() as usize;
        let v = if value.is_empty() {
            k + key.len()
        } else {
            value.as_ptr() as usize
        };
        let gap = v.checked_sub(k + key.len()).filter(|g| *g <= SOURCE_GAP)?;
        let fits = k >= base + self.source_next && v + value.len() <= base + self.source.len();
        fits.then(|| ((k - base) as u32, (key.len() | gap << 24) as u32))
    }

    pub fn spills(&self) -> usize {
        self.spills.len()
    }

    fn used(&self) -> usize {
        self.arena.len() + self.index.len() * std::mem::size_of::<Entry>()
    }

    pub fn add(&mut self, partition: u32, key: &[u8], value: &[u8]) -> io::Result<()> {
        let partition = partition.min(self.partitions - 1);
        let placed = self.in_source(key, value);
        let size = std::mem::size_of::<Entry>()
            + if placed.is_some() {
                0
            } else {
                key.len() + value.len()
            };
        if !self.index.is_empty() && self.used() + size > self.mem_limit {
            self.spill()?;
        }
        let (partition, offset, klen) = match placed {
            Some((offset, klen)) => {
                self.source_next = offset as usize + 1;
                (partition | IN_SOURCE, offset, klen)
            }
            None => {
                let offset = self.arena.len() as u32;
                self.arena.extend_from_slice(key);
                self.arena.extend_from_slice(value);
                (partition, offset, key.len() as u32)
            }
        };
        self.index.push(Entry {
            prefix: key_prefix(key),
            partition,
            klen,
            offset,
            vlen: value.len() as u32,
        });
        if (self.index.len() as u64).is_multiple_of(crate::task::progress::EVERY_RECORDS) {
            crate::task::progress::bump();
        }
        if size > self.mem_limit {
            // An oversized record goes out alone.
            self.spill()?;
        }
        Ok(())
    }

    /// The bytes the buffered records take written out, uncombined.
    fn encoded_len(&self) -> u64 {
        if self.combiner.is_some() {
            return 0;
        }
        self.index
            .iter()
            .map(|e| 8 + e.layout().2 as u64 + u64::from(e.vlen))
            .sum()
    }

    /// The bytes `e`'s record lies in.
    fn home(&self, e: &Entry) -> &[u8] {
        if e.in_source() {
            &self.source
        } else {
            &self.arena
        }
    }

    fn key(&self, e: &Entry) -> &[u8] {
        let (k, _, klen) = e.layout();
        &self.home(e)[k..k + klen]
    }

    fn value(&self, e: &Entry) -> &[u8] {
        let (_, v, _) = e.layout();
        &self.home(e)[v..v + e.vlen as usize]
    }

    /// Sorts the index by (partition, key), equal keys in emission order.
    ///
    /// The index is already in emission order: the offset grows with
    /// emission in the arena and in the source, and every record in the
    /// source was emitted before any in the arena ([`Self::in_source`]).
    /// So a stable sort by (partition, key) is the order the merge needs.
    /// It is done as a least-significant-digit radix sort on (partition,
    /// the key's 8-byte prefix), which settles random keys (TeraSort's)
    /// with no comparison, then a stable sort by the whole key of each run
    /// of equal prefixes. On 670,000 entries (a 64 MiB TeraSort block) it
    /// took 20 ms against 25 ms for `sort_unstable_by` on the same order,
    /// and it keeps the comparison chain off the common case.
    fn sort(&mut self) {
        self.index_high = self.index_high.max(self.index.len());
        let mut index = std::mem::take(&mut self.index);
        if index.len() < RADIX_MIN {
            index.sort_by(|a, b| {
                a.part()
                    .cmp(&b.part())
                    .then(a.prefix.cmp(&b.prefix))
                    .then_with(|| self.key(a).cmp(self.key(b)))
            });
        } else {
            radix_sort(&mut index);
            let mut i = 0;
            while i < index.len() {
                let (p, x) = (index[i].part(), index[i].prefix);
                let mut j = i + 1;
                while j < index.len() && index[j].part() == p && index[j].prefix == x {
                    j += 1;
                }
                if j - i > 1 {
                    index[i..j].sort_by(|a, b| self.key(a).cmp(self.key(b)));
                }
                i = j;
            }
        }
        self.index = index;
    }

    /// Hints the CPU to load `e`'s record: the records of a sorted index
    /// lie all over the source block, and copying them in key order was
    /// a cache miss (and a TLB miss) per record.
    #[inline]
    fn prefetch(&self, e: &Entry) {
        let (k, v, _) = e.layout();
        let home = self.home(e);
        let end = (v + e.vlen as usize).min(home.len()).max(k + 1) - 1;
        if k < home.len() {
            prefetch(&home[k]);
            prefetch(&home[end]);
        }
    }

    /// Writes the sorted buffer, partition by partition (combined), to `w`.
    fn write_sorted(&self, w: &mut Out) -> io::Result<Vec<PartInfo>> {
        let mut parts = vec![PartInfo::default(); self.partitions as usize];
        let mut pos = 0u64;
        let mut chunk = Vec::with_capacity(if self.combiner.is_none() {
            WRITE_CHUNK + 4096
        } else {
            0
        });
        let mut i = 0;
        while i < self.index.len() {
            let p = self.index[i].part() as usize;
            parts[p].offset = pos;
            cut(w)?;
            let mut j = i;
            while j < self.index.len() && self.index[j].part() as usize == p {
                j += 1;
            }
            let (len, recs) = match &self.combiner {
                None => {
                    // Encoded into `chunk` and written in large writes:
                    // four small writes per record into the `BufWriter`
                    // cost more than the copy they made.
                    let mut len = 0;
                    let run = &self.index[i..j];
                    for (n, e) in run.iter().enumerate() {
                        if let Some(a) = run.get(n + PREFETCH_AHEAD) {
                            self.prefetch(a);
                        }
                        kv_encode(self.key(e), self.value(e), &mut chunk);
                        if chunk.len() >= WRITE_CHUNK {
                            w.write_all(&chunk)?;
                            len += chunk.len() as u64;
                            chunk.clear();
                        }
                    }
                    w.write_all(&chunk)?;
                    len += chunk.len() as u64;
                    chunk.clear();
                    (len, (j - i) as u64)
                }
                Some(c) => {
                    let mut len = 0;
                    let mut recs = 0;
                    let mut err = None;
                    let mut g = i;
                    while g < j {
                        let k = self.key(&self.index[g]);
                        let mut h = g;
                        while h < j && self.key(&self.index[h]) == k {
                            h += 1;
                        }
                        let mut vals = self.index[g..h].iter().map(|e| self.value(e));
                        c(k, &mut vals, &mut |ok: &[u8], ov: &[u8]| {
                            if err.is_none() {
                                match put_record(w, ok, ov) {
                                    Ok(n) => {
                                        len += n;
                                        recs += 1;
                                    }
                                    Err(e) => err = Some(e),
                                }
                            }
                        });
                        g = h;
                    }
                    if let Some(e) = err {
                        return Err(e);
                    }
                    (len, recs)
                }
            };
            parts[p].len = len;
            parts[p].records = recs;
            parts[p].crc32c = cut(w)?.1;
            pos += len;
            i = j;
        }
        // Empty partitions point at the end of the data before them.
        let mut end = 0;
        for p in parts.iter_mut() {
            if p.len == 0 {
                p.offset = end;
            }
            end = p.offset + p.len;
        }
        Ok(parts)
    }

    fn spill(&mut self) -> io::Result<()> {
        crate::task::progress::bump();
        if self.index.is_empty() {
            return Ok(());
        }
        fs::create_dir_all(&self.dir)?;
        self.sort();
        let path = self.dir.join(format!("spill-{}", self.spills.len()));
        let mut w = create_out(&path, self.encoded_len())?;
        let parts = self.write_sorted(&mut w)?;
        close_out(&mut w)?;
        self.spills.push(Spill { path, parts });
        self.arena.clear();
        self.index.clear();
        // What is left of the source may still be indexed in place.
        Ok(())
    }

    /// Writes the final sorted output `out` and its index (`out.index`):
    /// the records, or references to them in the source block
    /// ([`refs`]).
    pub fn finish(mut self, out: &Path) -> io::Result<MapOutputIndex> {
        let index_path = index_path(out);
        if let Some(idx) = self.finish_by_ref(out)? {
            idx.write(&index_path)?;
            let _ = fs::remove_dir(&self.dir);
            return Ok(idx);
        }
        let expected = if self.combiner.is_some() {
            0
        } else {
            self.encoded_len()
                + self
                    .spills
                    .iter()
                    .flat_map(|s| &s.parts)
                    .map(|p| p.len)
                    .sum::<u64>()
        };
        let mut w = create_out(out, expected)?;
        let idx = if self.spills.is_empty() {
            self.sort();
            MapOutputIndex {
                parts: self.write_sorted(&mut w)?,
            }
        } else {
            self.spill()?;
            let mut parts = Vec::with_capacity(self.partitions as usize);
            for p in 0..self.partitions as usize {
                let start = cut(&mut w)?.0;
                let runs = self
                    .spills
                    .iter()
                    .map(|s| -> io::Result<_> {
                        let mut f = File::open(&s.path)?;
                        f.seek(SeekFrom::Start(s.parts[p].offset))?;
                        Ok(BufReader::with_capacity(256 << 10, f.take(s.parts[p].len)))
                    })
                    .collect::<io::Result<Vec<_>>>()?;
                let mut records = 0u64;
                match &self.combiner {
                    None => {
                        records =
                            merge_records(runs, &mut |k, v| put_record(&mut w, k, v).map(|_| ()))?;
                    }
                    Some(c) => {
                        merge_grouped(runs, &mut |k, vals| {
                            let mut err = None;
                            c(k, vals, &mut |ok: &[u8], ov: &[u8]| {
                                if err.is_none() {
                                    match put_record(&mut w, ok, ov) {
                                        Ok(_) => records += 1,
                                        Err(e) => err = Some(e),
                                    }
                                }
                            });
                            err.map_or(Ok(()), Err)
                        })?;
                    }
                }
                let (end, crc32c) = cut(&mut w)?;
                parts.push(PartInfo {
                    offset: start,
                    len: end - start,
                    records,
                    crc32c,
                });
            }
            for s in &self.spills {
                let _ = fs::remove_file(&s.path);
            }
            MapOutputIndex { parts }
        };
        close_out(&mut w)?;
        idx.write(&index_path)?;
        let _ = fs::remove_dir(&self.dir);
        Ok(idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mr-mapout-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// The records of partition `p`, whose bytes must match its CRC32C.
    fn read_part(out: &Path, p: PartInfo) -> Vec<(Vec<u8>, Vec<u8>)> {
        let all = fs::read(out).unwrap();
        let bytes = &all[p.offset as usize..(p.offset + p.len) as usize];
        assert_eq!(crc32c::crc32c(bytes), p.crc32c, "partition CRC32C");
        let mut f = File::open(out).unwrap();
        f.seek(SeekFrom::Start(p.offset)).unwrap();
        let mut v = Vec::new();
        merge_records(vec![BufReader::new(f.take(p.len))], &mut |k, val| {
            v.push((k.to_vec(), val.to_vec()));
            Ok(())
        })
        .unwrap();
        v
    }

    /// What partition `p` must hold: its records, stably sorted by key.
    fn sorted_part(recs: &[(u32, Vec<u8>, Vec<u8>)], p: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut want: Vec<(Vec<u8>, Vec<u8>)> = recs
            .iter()
            .filter(|r| r.0 == p)
            .map(|r| (r.1.clone(), r.2.clone()))
            .collect();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        want
    }

    fn records(n: usize, seed: u64) -> Vec<(u32, Vec<u8>, Vec<u8>)> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|i| {
                let k = format!("k{:03}", next() % 300).into_bytes();
                let v = format!("{i}").into_bytes();
                ((next() % 3) as u32, k, v)
            })
            .collect()
    }

    #[test]
    fn spills_and_merges_to_a_stable_sort() {
        let d = tmp("sort");
        let recs = records(20_000, 42);
        let mut b = MapOutputBuffer::new(d.join("spills"), 3, 1 << 16, None);
        for (p, k, v) in &recs {
            b.add(*p, k, v).unwrap();
        }
        assert!(b.spills() > 1);
        let out = d.join("out");
        let idx = b.finish(&out).unwrap();
        assert_eq!(MapOutputIndex::read(&d.join("out.index")).unwrap(), idx);
        for p in 0..3u32 {
            assert_eq!(
                read_part(&out, idx.parts[p as usize]),
                sorted_part(&recs, p)
            );
        }
        fs::remove_dir_all(&d).unwrap();
    }

    /// The radix sort by (partition, 8-byte prefix) and the sort of each
    /// run of equal prefixes give the stable order by (partition, key):
    /// keys that share their first 8 bytes and differ after, keys that are
    /// a zero-padded prefix of others, empty keys, and partitions past 255
    /// (a second partition digit).
    #[test]
    fn the_radix_sort_is_a_stable_sort_by_partition_and_key() {
        let d = tmp("radix");
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let recs: Vec<(u32, Vec<u8>, Vec<u8>)> = (0..6000u32)
            .map(|i| {
                let len = (next() % 14) as usize;
                let k = (0..len)
                    .map(|_| [0u8, 1, b'a'][(next() % 3) as usize])
                    .collect();
                ((next() % 300) as u32, k, i.to_be_bytes().to_vec())
            })
            .collect();
        let mut b = MapOutputBuffer::new(d.join("spills"), 300, 64 << 20, None);
        for (p, k, v) in &recs {
            b.add(*p, k, v).unwrap();
        }
        assert_eq!(b.spills(), 0);
        let out = d.join("out");
        let idx = b.finish(&out).unwrap();
        for p in 0..300u32 {
            assert_eq!(
                read_part(&out, idx.parts[p as usize]),
                sorted_part(&recs, p),
                "partition {p}"
            );
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn combiner_sums() {
        let d = tmp("combine");
        let c: Combiner = Arc::new(|k, vals, emit| {
            let s: u64 = vals
                .map(|v| std::str::from_utf8(v).unwrap().parse::<u64>().unwrap())
                .sum();
            emit(k, s.to_string().as_bytes());
        });
        let recs = records(4000, 7);
        let mut b = MapOutputBuffer::new(d.join("spills"), 3, 1 << 16, Some(c));
        let mut want: HashMap<(u32, Vec<u8>), u64> = HashMap::new();
        for (p, k, _) in &recs {
            b.add(*p, k, b"2").unwrap();
            *want.entry((*p, k.clone())).or_default() += 2;
        }
        let out = d.join("out");
        let idx = b.finish(&out).unwrap();
        let mut got = HashMap::new();
        for p in 0..3u32 {
            for (k, v) in read_part(&out, idx.parts[p as usize]) {
                let n: u64 = std::str::from_utf8(&v).unwrap().parse().unwrap();
                assert!(
                    got.insert((p, k), n).is_none(),
                    "a key twice after combining"
                );
            }
        }
        assert_eq!(got, want);
        fs::remove_dir_all(&d).unwrap();
    }

    /// Records emitted as slices of the source block are indexed where
    /// they lie (the arena stays empty), with the value right after the key
    /// or a few bytes on (a key-value record's length field); mixed with
    /// copied ones they still come out sorted with equal keys in emission
    /// order, through spills as without.
    #[test]
    fn records_of_the_source_are_indexed_in_place_in_emission_order() {
        let d = tmp("source");
        for gap in [0usize, 4] {
            // A 2-byte key from a small set, `gap` bytes, a 4-byte value
            // that numbers the record.
            let len = 6 + gap;
            let block: Vec<u8> = (0..3000u32)
                .flat_map(|i| {
                    let mut r = format!("k{}", i % 7).into_bytes();
                    r.extend_from_slice(&vec![b'|'; gap]);
                    r.extend_from_slice(&i.to_be_bytes());
                    r
                })
                .collect();
            let block = Bytes::from(block);
            for (limit, tag) in [(1 << 20, "one"), (1 << 16, "spilled")] {
                let tag = format!("{tag}-{gap}");
                let mut b =
                    MapOutputBuffer::new(d.join(&tag), 2, limit, None).with_source(block.clone());
                let mut want: Vec<(u32, Vec<u8>, Vec<u8>)> = Vec::new();
                for r in block.chunks(len) {
                    let (k, v) = (&r[..2], &r[2 + gap..]);
                    let p = u32::from(k[1] % 2);
                    b.add(p, k, v).unwrap();
                    want.push((p, k.to_vec(), v.to_vec()));
                }
                if limit == 1 << 20 {
                    assert!(b.arena.is_empty(), "records of the source were copied");
                    assert_eq!(b.used(), 3000 * std::mem::size_of::<Entry>());
                } else {
                    assert!(b.spills() > 0);
                }
                // The tail is copied, and sorts after the source's equal keys.
                b.add(1, b"k1", b"tail").unwrap();
                want.push((1, b"k1".to_vec(), b"tail".to_vec()));
                // A slice of the source behind the last one placed is copied.
                b.add(1, &block[..2], &block[2 + gap..len]).unwrap();
                want.push((1, block[..2].to_vec(), block[2 + gap..len].to_vec()));
                let out = d.join(format!("{tag}.out"));
                let idx = b.finish(&out).unwrap();
                for p in 0..2u32 {
                    assert_eq!(
                        read_part(&out, idx.parts[p as usize]),
                        sorted_part(&want, p),
                        "{tag} partition {p}"
                    );
                }
            }
        }
        fs::remove_dir_all(&d).unwrap();
    }

    /// An identity map over a block file writes references, not records:
    /// each partition read back through them is its records stably sorted,
    /// the one record copied (as the record running into the next block
    /// is) included from the tail, and the block is linked, not copied.
    /// Without the block's file, the records are written as before.
    #[test]
    fn an_identity_maps_output_is_references_into_its_block() {
        let d = tmp("byref");
        let block: Vec<u8> = (0..3000u32)
            .flat_map(|i| {
                let mut r = format!("k{:02}", (i * 7919) % 53).into_bytes();
                r.extend_from_slice(&i.to_be_bytes());
                r
            })
            .collect();
        let file = d.join("blk_1");
        fs::write(&file, &block).unwrap();
        let data = Bytes::from(fs::read(&file).unwrap());
        for (linked, tag) in [(true, "linked"), (false, "copied")] {
            let src_file = if linked { file.clone() } else { d.join("none") };
            let mut b = MapOutputBuffer::new(d.join(tag), 3, 1 << 20, None)
                .with_source(data.clone())
                .with_source_file(src_file, 0);
            let mut want = Vec::new();
            for r in data.chunks(7) {
                let p = u32::from(r[2] % 3);
                b.add(p, &r[..3], &r[3..]).unwrap();
                want.push((p, r[..3].to_vec(), r[3..].to_vec()));
            }
            b.add(1, b"k17", b"tail").unwrap();
            want.push((1, b"k17".to_vec(), b"tail".to_vec()));
            let out = d.join(format!("{tag}.out"));
            let idx = b.finish(&out).unwrap();
            assert_eq!(MapOutputIndex::read(&index_path(&out)).unwrap(), idx);
            assert_eq!(out.exists(), !linked, "{tag}");
            assert_eq!(refs::refs_path(&out).exists(), linked, "{tag}");
            for p in 0..3u32 {
                let part = idx.parts[p as usize];
                let got = if linked {
                    let src = fs::read(refs::source_path(&out)).unwrap();
                    assert_eq!(src, block);
                    let f = fs::read(refs::refs_path(&out)).unwrap();
                    let source = refs::Source::of_file(&src, &f).unwrap();
                    let these = &f[part.offset as usize..(part.offset + part.len) as usize];
                    let c = refs::check(source, these).unwrap();
                    assert_eq!((c.crc32c, c.records), (part.crc32c, part.records));
                    let mut run = refs::RefRun::new(source, these, part.crc32c).unwrap();
                    let mut v = Vec::new();
                    while let Some((k, val)) = run.next_record().unwrap() {
                        v.push((k.to_vec(), val.to_vec()));
                    }
                    run.verify().unwrap();
                    v
                } else {
                    read_part(&out, part)
                };
                assert_eq!(got, sorted_part(&want, p), "{tag} partition {p}");
            }
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn oversized_record_is_spilled_alone() {
        let d = tmp("big");
        let mut b = MapOutputBuffer::new(d.join("spills"), 1, 1 << 16, None);
        b.add(0, b"b", &vec![7u8; 200_000]).unwrap();
        b.add(0, b"a", b"x").unwrap();
        let out = d.join("out");
        let idx = b.finish(&out).unwrap();
        let got = read_part(&out, idx.parts[0]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, b"a");
        assert_eq!(got[1].1.len(), 200_000);
        fs::remove_dir_all(&d).unwrap();
    }
}

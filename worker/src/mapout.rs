//! The map side's sort buffer (Hadoop's `MapOutputBuffer`): emitted records
//! go into one arena with a compact index; when arena and index reach the
//! memory bound they are sorted by (partition, key), combined, and spilled;
//! `finish` merges the spills into one file with a per-partition index that
//! the shuffle serves. Memory stays bounded whatever the input size; a
//! record larger than the bound is spilled alone rather than refused.
//!
//! Each partition's CRC32C is computed as it is written and kept in the
//! index, so that the reducer checks the bytes it fetched against what the
//! map wrote (a disk or a network that flips a bit must fail the fetch, not
//! change a job's output), as Hadoop's `IFile` checksums each segment.

use crate::merge::{key_prefix, merge_grouped, merge_records};
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A combiner: a key and its values in, records out.
pub type Combiner =
    Arc<dyn Fn(&[u8], &mut dyn Iterator<Item = &[u8]>, &mut dyn FnMut(&[u8], &[u8])) + Send + Sync>;

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

/// Index entry of one buffered record: 24 bytes, so the index costs little
/// next to the data it sorts. `prefix` holds the key's first 8 bytes
/// big-endian: comparing it settles almost every comparison of random keys
/// (TeraSort's) without touching the arena.
#[derive(Clone, Copy)]
struct Entry {
    prefix: u64,
    partition: u32,
    klen: u32,
    offset: u32,
    vlen: u32,
}

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
}

fn put_record(w: &mut impl Write, k: &[u8], v: &[u8]) -> io::Result<u64> {
    w.write_all(&(k.len() as u32).to_le_bytes())?;
    w.write_all(k)?;
    w.write_all(&(v.len() as u32).to_le_bytes())?;
    w.write_all(v)?;
    Ok(8 + k.len() as u64 + v.len() as u64)
}

/// Counts the bytes written through it, and their CRC32C since the last
/// [`Counting::take_crc`].
struct Counting<W: Write> {
    inner: W,
    bytes: u64,
    crc: u32,
}

impl<W: Write> Counting<W> {
    fn new(inner: W) -> Self {
        Counting {
            inner,
            bytes: 0,
            crc: 0,
        }
    }

    /// The CRC32C of what was written since the last call.
    fn take_crc(&mut self) -> u32 {
        std::mem::take(&mut self.crc)
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(b)?;
        self.bytes += n as u64;
        self.crc = crc32c::crc32c_append(self.crc, &b[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
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
            arena: Vec::with_capacity(mem_limit),
            index: Vec::with_capacity(mem_limit / std::mem::size_of::<Entry>()),
            spills: Vec::new(),
        }
    }

    pub fn spills(&self) -> usize {
        self.spills.len()
    }

    fn used(&self) -> usize {
        self.arena.len() + self.index.len() * std::mem::size_of::<Entry>()
    }

    pub fn add(&mut self, partition: u32, key: &[u8], value: &[u8]) -> io::Result<()> {
        let size = key.len() + value.len() + std::mem::size_of::<Entry>();
        if !self.index.is_empty() && self.used() + size > self.mem_limit {
            self.spill()?;
        }
        let offset = self.arena.len() as u32;
        self.arena.extend_from_slice(key);
        self.arena.extend_from_slice(value);
        self.index.push(Entry {
            prefix: key_prefix(key),
            partition: partition.min(self.partitions - 1),
            klen: key.len() as u32,
            offset,
            vlen: value.len() as u32,
        });
        if size > self.mem_limit {
            // An oversized record goes out alone.
            self.spill()?;
        }
        Ok(())
    }

    fn key(&self, e: &Entry) -> &[u8] {
        &self.arena[e.offset as usize..(e.offset + e.klen) as usize]
    }

    fn value(&self, e: &Entry) -> &[u8] {
        let s = (e.offset + e.klen) as usize;
        &self.arena[s..s + e.vlen as usize]
    }

    fn sort(&mut self) {
        let mut index = std::mem::take(&mut self.index);
        // Equal keys keep emission order (the offset grows with it), as a
        // stable sort would, without a stable sort's scratch buffer.
        index.sort_unstable_by(|a, b| {
            a.partition
                .cmp(&b.partition)
                .then(a.prefix.cmp(&b.prefix))
                .then_with(|| self.key(a).cmp(self.key(b)))
                .then(a.offset.cmp(&b.offset))
        });
        self.index = index;
    }

    /// Writes the sorted buffer, partition by partition (combined), to `w`.
    fn write_sorted<W: Write>(&self, w: &mut Counting<W>) -> io::Result<Vec<PartInfo>> {
        let mut parts = vec![PartInfo::default(); self.partitions as usize];
        let mut pos = 0u64;
        let mut i = 0;
        while i < self.index.len() {
            let p = self.index[i].partition as usize;
            parts[p].offset = pos;
            w.take_crc();
            let mut j = i;
            while j < self.index.len() && self.index[j].partition as usize == p {
                j += 1;
            }
            let (len, recs) = match &self.combiner {
                None => {
                    let mut len = 0;
                    for e in &self.index[i..j] {
                        len += put_record(w, self.key(e), self.value(e))?;
                    }
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
            parts[p].crc32c = w.take_crc();
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
        if self.index.is_empty() {
            return Ok(());
        }
        fs::create_dir_all(&self.dir)?;
        self.sort();
        let path = self.dir.join(format!("spill-{}", self.spills.len()));
        let mut w = Counting::new(BufWriter::with_capacity(1 << 20, File::create(&path)?));
        let parts = self.write_sorted(&mut w)?;
        w.flush()?;
        self.spills.push(Spill { path, parts });
        self.arena.clear();
        self.index.clear();
        Ok(())
    }

    /// Writes the final sorted output `out` and its index (`out.index`).
    pub fn finish(mut self, out: &Path) -> io::Result<MapOutputIndex> {
        let index_path = {
            let mut p = out.as_os_str().to_owned();
            p.push(".index");
            PathBuf::from(p)
        };
        let mut w = Counting::new(BufWriter::with_capacity(1 << 20, File::create(out)?));
        let idx = if self.spills.is_empty() {
            self.sort();
            MapOutputIndex {
                parts: self.write_sorted(&mut w)?,
            }
        } else {
            self.spill()?;
            let mut parts = Vec::with_capacity(self.partitions as usize);
            for p in 0..self.partitions as usize {
                let start = w.bytes;
                w.take_crc();
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
                parts.push(PartInfo {
                    offset: start,
                    len: w.bytes - start,
                    records,
                    crc32c: w.take_crc(),
                });
            }
            for s in &self.spills {
                let _ = fs::remove_file(&s.path);
            }
            MapOutputIndex { parts }
        };
        w.flush()?;
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
            let mut want: Vec<(Vec<u8>, Vec<u8>)> = recs
                .iter()
                .filter(|r| r.0 == p)
                .map(|r| (r.1.clone(), r.2.clone()))
                .collect();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(read_part(&out, idx.parts[p as usize]), want);
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

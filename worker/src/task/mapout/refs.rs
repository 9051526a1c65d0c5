//! Map output by reference: when every record a map emitted is a slice of
//! its input block (an identity map: TeraSort's, Sort's) and that block is
//! a file of this worker's store, the map's sorted output is not a copy of
//! its records but the sorted index into the block. The map hard-links the
//! block file into the job's directory (`map-I-A.src`: the output survives
//! the block's deletion, and a block file is never rewritten in place) and
//! writes 12 bytes a record (`map-I-A.refs`) where it would have written
//! the record itself: on a 1 GiB TeraSort, 120 MiB instead of 1 GiB
//! written into the page cache between map and reduce.
//!
//! A record the map copied rather than found in the block (the one that
//! runs into the next block, read from there) is kept in the references
//! file's tail: `u64 LE` tail length, the tail's records (key, value), then
//! the references, partition after partition; a reference into the tail
//! has [`IN_TAIL`] set in its offset. A map whose copied records pass
//! [`MAX_TAIL`] writes its records as before.
//!
//! A partition's checksum (in the index's CRC32C field) is the wrapping sum
//! of its records' CRC32Cs, each over the bytes its reference points at
//! (key, gap, value) seeded with where the key ends ([`Ref::crc`]): a
//! flipped bit in either file changes it. A sum rather than one CRC32C
//! over the partition in key order, so that it costs no pass of its own:
//! the map sums in the block's order, reading the block front to back (a
//! pass in key order jumps all over it, a TLB miss a record), and the
//! reducer as its merge reads each record anyway ([`RefRun::verify`]
//! after the merge). What a sum misses and a CRC would not, whole
//! references swapped, no flipped bit does.
//! The reducer on the same host merges through the references where they
//! lie ([`RefRun`]); a remote reducer is sent the records encoded as any
//! map output's ([`encode`]), with the CRC32C of what was sent, after the
//! sender checked the map's sum.

use super::entry::SOURCE_KEY;
use super::entry::{prefetch, Entry};
use super::{MapOutputIndex, PartInfo};
use std::fs;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

/// Bytes per reference: offset, key length (the gap to the value in its
/// high byte), value length, each a little-endian u32.
pub const REF_BYTES: usize = 12;
/// The smallest average record (bytes) a map's output is referenced for
/// unless the job says otherwise (`map_output_by_reference`); smaller
/// records are copied. A reference saves writing the record and costs the
/// merge a read of it where it lies in the block, a cache and TLB miss a
/// record whatever its size: for TeraSort's 100-byte records the two came
/// out even (3.77 s [3.75-4.27] by reference against 3.81 s [3.81-3.88]
/// copied, 1 GiB), for Sort's records of kilobytes the reference took 45 %
/// off the job (2.09 s against 3.83 s; docs/benchmarks.md).
pub const MIN_RECORD: usize = 256;
/// The flag of a reference into the tail rather than the block.
pub const IN_TAIL: u32 = 1 << 31;
/// The most bytes of copied records a map output by reference keeps.
pub const MAX_TAIL: usize = 1 << 20;
/// How many references ahead a reader asks the CPU to load the record:
/// sorted references point all over the block.
const AHEAD: usize = 16;

/// The references file of the map output `out` (`.refs` appended).
pub fn refs_path(out: &Path) -> PathBuf {
    with_suffix(out, ".refs")
}

/// The link to the block the references of `out` point into.
pub fn source_path(out: &Path) -> PathBuf {
    with_suffix(out, ".src")
}

fn with_suffix(p: &Path, s: &str) -> PathBuf {
    let mut o = p.as_os_str().to_owned();
    o.push(s);
    PathBuf::from(o)
}

/// What references point into: the block, and the tail of copied records.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub block: &'a [u8],
    pub tail: &'a [u8],
}

impl<'a> Source<'a> {
    /// The tail and references of a references file's bytes `file`, whose
    /// block is `block`; the references of a partition are then
    /// `file[offset..offset + len]` as the map's index gives them.
    pub fn of_file(block: &'a [u8], file: &'a [u8]) -> io::Result<Source<'a>> {
        let torn = || io::Error::new(ErrorKind::InvalidData, "map output references file is torn");
        let n = u64::from_le_bytes(file.get(..8).ok_or_else(torn)?.try_into().expect("8 bytes"));
        let tail = usize::try_from(n)
            .ok()
            .and_then(|n| file.get(8..8 + n))
            .ok_or_else(torn)?;
        Ok(Source { block, tail })
    }

    fn home(&self, offset: u32) -> (&'a [u8], usize) {
        if offset & IN_TAIL != 0 {
            (self.tail, (offset & !IN_TAIL) as usize)
        } else {
            (self.block, offset as usize)
        }
    }
}

/// The bytes before the first reference of a references file whose tail
/// is `tail` bytes long.
pub fn header_len(tail: usize) -> usize {
    8 + tail
}

/// One record's place in the source block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ref {
    offset: u32,
    /// The key's length in the low 24 bits, the gap before the value in
    /// the high 8.
    klen: u32,
    vlen: u32,
}

impl Ref {
    /// The reference of a sort buffer's entry, into the block or (copied)
    /// into the tail, where the arena's bytes go.
    pub(super) fn of(e: &Entry) -> Ref {
        Ref {
            offset: if e.in_source() {
                e.offset
            } else {
                e.offset | IN_TAIL
            },
            klen: e.klen,
            vlen: e.vlen,
        }
    }

    pub(super) fn put(&self, b: &mut Vec<u8>) {
        b.extend_from_slice(&self.bytes());
    }

    fn bytes(&self) -> [u8; REF_BYTES] {
        let mut b = [0u8; REF_BYTES];
        b[..4].copy_from_slice(&self.offset.to_le_bytes());
        b[4..8].copy_from_slice(&self.klen.to_le_bytes());
        b[8..].copy_from_slice(&self.vlen.to_le_bytes());
        b
    }

    /// The record's CRC32C, over the bytes it points at in `src` with the
    /// key length word (where the key ends and the value starts) as its
    /// seed: what a partition's sum adds up. One call over the record: a
    /// second over the reference's 12 bytes cost a third more. A flipped
    /// bit in the offset or the value length points at other bytes (whose
    /// CRC differs unless they are the same record), one in the key
    /// length changes the seed.
    pub(super) fn crc(&self, src: Source<'_>) -> io::Result<u32> {
        let (span, _) = self.span(src)?;
        Ok(crc32c::crc32c_append(self.klen, span))
    }

    fn get(b: &[u8]) -> Ref {
        let u = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Ref {
            offset: u(0),
            klen: u(4),
            vlen: u(8),
        }
    }

    /// The record's whole span in `src` (key, gap, value) and where the
    /// value starts in it, checked against the block's length.
    fn span<'a>(&self, src: Source<'a>) -> io::Result<(&'a [u8], usize)> {
        let (src, k) = src.home(self.offset);
        let key = self.klen as usize & SOURCE_KEY;
        let v = k + key + (self.klen >> 24) as usize;
        let end = v + self.vlen as usize;
        match src.get(k..end) {
            Some(span) => Ok((span, v - k)),
            None => Err(io::Error::new(
                ErrorKind::InvalidData,
                format!(
                    "a map output reference ends at byte {end} of {} bytes",
                    src.len()
                ),
            )),
        }
    }

    /// The key and the value in `src`.
    fn record<'a>(&self, src: Source<'a>) -> io::Result<(&'a [u8], &'a [u8])> {
        let (rec, v) = self.span(src)?;
        let key = self.klen as usize & SOURCE_KEY;
        Ok((&rec[..key], &rec[v..]))
    }

    /// The bytes of the record encoded as a map output's.
    fn encoded(&self) -> u64 {
        8 + u64::from(self.klen & SOURCE_KEY as u32) + u64::from(self.vlen)
    }

    fn prefetch(&self, src: Source<'_>) {
        let (src, k) = src.home(self.offset);
        if let Some(b) = src.get(k) {
            prefetch(b);
        }
        let end = k + (self.klen as usize & SOURCE_KEY) + self.vlen as usize;
        if let Some(b) = src.get(end) {
            prefetch(b);
        }
    }
}

fn bad_len(n: usize) -> io::Error {
    io::Error::new(
        ErrorKind::InvalidData,
        format!(
            "map output references of {n} bytes: not a whole number of {REF_BYTES}-byte references"
        ),
    )
}

/// One partition's references, as the merge reads them: each record a
/// pair of slices of the block, nothing copied, and its CRC32C added to
/// the partition's sum as it goes by.
pub struct RefRun<'a> {
    src: Source<'a>,
    refs: &'a [u8],
    at: usize,
    sum: u32,
    want: u32,
}

impl<'a> RefRun<'a> {
    /// The run of `refs` into `src`, whose sum the map's index gives as
    /// `want`.
    pub fn new(src: Source<'a>, refs: &'a [u8], want: u32) -> io::Result<Self> {
        if !refs.len().is_multiple_of(REF_BYTES) {
            return Err(bad_len(refs.len()));
        }
        Ok(RefRun {
            src,
            refs,
            at: 0,
            sum: 0,
            want,
        })
    }

    /// The next record; `None` at the end of the partition.
    #[inline]
    pub fn next_record(&mut self) -> io::Result<Option<(&'a [u8], &'a [u8])>> {
        let Some(b) = self.refs.get(self.at..self.at + REF_BYTES) else {
            return Ok(None);
        };
        let ahead = self.at + AHEAD * REF_BYTES;
        if let Some(a) = self.refs.get(ahead..ahead + REF_BYTES) {
            Ref::get(a).prefetch(self.src);
        }
        self.at += REF_BYTES;
        let r = Ref::get(b);
        self.sum = self.sum.wrapping_add(r.crc(self.src)?);
        r.record(self.src).map(Some)
    }

    /// Whether every record was read and they add up to the map's sum:
    /// the merge's records were the ones the map wrote. The merge's output
    /// must not be kept otherwise.
    pub fn verify(&self) -> io::Result<()> {
        if self.at < self.refs.len() {
            return Err(io::Error::other("map output references not all read"));
        }
        if self.sum != self.want {
            return Err(io::Error::new(
                ErrorKind::InvalidData,
                format!(
                    "map output by reference sums to CRC32C {:#010x}, the map wrote {:#010x}",
                    self.sum, self.want
                ),
            ));
        }
        Ok(())
    }
}

/// The records of a partition's references and their bytes encoded as a
/// map output's, read from the references alone (the shuffle's count).
pub fn encoded_len(refs: &[u8]) -> io::Result<(u64, u64)> {
    if !refs.len().is_multiple_of(REF_BYTES) {
        return Err(bad_len(refs.len()));
    }
    let n = refs
        .chunks_exact(REF_BYTES)
        .map(|b| Ref::get(b).encoded())
        .sum();
    Ok(((refs.len() / REF_BYTES) as u64, n))
}

/// What a pass over one partition's references found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// The sum of the records' CRC32Cs: what the map's index holds.
    pub crc32c: u32,
    pub records: u64,
    /// The bytes of the records encoded as a map output's (each a length,
    /// the key, a length, the value): what the shuffle moves.
    pub encoded: u64,
}

/// The partition's sum, records and encoded bytes, in one pass in the
/// references' order.
pub fn check(src: Source<'_>, refs: &[u8]) -> io::Result<Checked> {
    walk(src, refs, |_, _| Ok(()))
}

/// Runs `f` on every record of the partition, in order, while summing up
/// what [`check`] returns.
fn walk(
    src: Source<'_>,
    refs: &[u8],
    mut f: impl FnMut(&[u8], &[u8]) -> io::Result<()>,
) -> io::Result<Checked> {
    if !refs.len().is_multiple_of(REF_BYTES) {
        return Err(bad_len(refs.len()));
    }
    let mut c = Checked {
        crc32c: 0,
        records: 0,
        encoded: 0,
    };
    for (i, b) in refs.chunks_exact(REF_BYTES).enumerate() {
        if let Some(a) = refs.get((i + AHEAD) * REF_BYTES..(i + AHEAD + 1) * REF_BYTES) {
            Ref::get(a).prefetch(src);
        }
        let r = Ref::get(b);
        c.crc32c = c.crc32c.wrapping_add(r.crc(src)?);
        c.records += 1;
        c.encoded += r.encoded();
        let (k, v) = r.record(src)?;
        f(k, v)?;
    }
    Ok(c)
}

/// Encodes the partition as any map output's records, in pieces of about
/// `chunk` bytes handed to `send` (which returns false to stop), and
/// checks it against `want`, the sum in the map's index. Returns the
/// CRC32C of the encoded bytes sent. A partition that fails the check is
/// an error after its bytes were sent: the receiver must drop them.
pub fn encode(
    src: Source<'_>,
    refs: &[u8],
    want: u32,
    chunk: usize,
    mut send: impl FnMut(Vec<u8>) -> bool,
) -> io::Result<u32> {
    let mut buf = Vec::with_capacity(chunk + 4096);
    let mut sent_crc = 0u32;
    let mut stopped = false;
    let c = walk(src, refs, |k, v| {
        if stopped {
            return Ok(());
        }
        joblib::jobs::formats::kv_encode(k, v, &mut buf);
        if buf.len() >= chunk {
            sent_crc = crc32c::crc32c_append(sent_crc, &buf);
            let full = std::mem::replace(&mut buf, Vec::with_capacity(chunk + 4096));
            stopped = !send(full);
        }
        Ok(())
    })?;
    if stopped {
        return Ok(sent_crc);
    }
    if c.crc32c != want {
        return Err(io::Error::new(
            ErrorKind::InvalidData,
            format!(
                "map output by reference sums to CRC32C {:#010x}, the map wrote {want:#010x}",
                c.crc32c
            ),
        ));
    }
    if !buf.is_empty() {
        sent_crc = crc32c::crc32c_append(sent_crc, &buf);
        send(buf);
    }
    Ok(sent_crc)
}

impl super::MapOutputBuffer {
    /// Writes the references output of `out` (`out.refs`, `out.src`, as
    /// this module's doc says) if the buffer can be one: nothing spilled, no
    /// combiner, at most [`MAX_TAIL`] bytes of records copied into
    /// the arena (the one running into the next block), and the source's
    /// file linked into place. `None`: write the records.
    pub(super) fn finish_by_ref(&mut self, out: &Path) -> io::Result<Option<MapOutputIndex>> {
        let Some(file) = &self.source_file else {
            return Ok(None);
        };
        if !self.spills.is_empty() || self.combiner.is_some() || self.arena.len() > MAX_TAIL {
            return Ok(None);
        }
        let spans: usize = self
            .index
            .iter()
            .map(|e| {
                let (k, v, _) = e.layout();
                v + e.vlen as usize - k
            })
            .sum();
        if spans < self.index.len() * self.min_record {
            return Ok(None);
        }
        let src = source_path(out);
        let _ = fs::remove_file(&src);
        if let Err(e) = fs::hard_link(file, &src) {
            // Another file system, or links not allowed: copy the records.
            tracing::debug!(from = %file.display(), "map output by reference refused: {e}");
            return Ok(None);
        }
        let source = Source {
            block: &self.source,
            tail: &self.arena,
        };
        // Each partition's sum, in emission order: the block front to back.
        let mut sums = vec![0u32; self.partitions as usize];
        for e in &self.index {
            let r = Ref::of(e);
            let s = &mut sums[e.part() as usize];
            *s = s.wrapping_add(r.crc(source)?);
        }
        self.sort();
        let head = header_len(self.arena.len());
        let mut bytes = Vec::with_capacity(head + self.index.len() * REF_BYTES);
        bytes.extend_from_slice(&(self.arena.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&self.arena);
        let mut parts = vec![PartInfo::default(); self.partitions as usize];
        let mut i = 0;
        while i < self.index.len() {
            let p = self.index[i].part() as usize;
            let start = bytes.len();
            while i < self.index.len() && self.index[i].part() as usize == p {
                Ref::of(&self.index[i]).put(&mut bytes);
                i += 1;
            }
            parts[p] = PartInfo {
                offset: start as u64,
                len: (bytes.len() - start) as u64,
                records: ((bytes.len() - start) / REF_BYTES) as u64,
                crc32c: sums[p],
            };
        }
        let mut end = head as u64;
        for p in parts.iter_mut() {
            if p.len == 0 {
                p.offset = end;
            }
            end = p.offset + p.len;
        }
        fs::write(refs_path(out), &bytes)?;
        Ok(Some(MapOutputIndex { parts }))
    }
}

/// A block of `records` (key, a 2-byte gap, value) and the references to
/// them in order, for tests of the readers.
#[cfg(test)]
pub fn for_records(records: &[(Vec<u8>, Vec<u8>)]) -> (Vec<u8>, Vec<u8>) {
    let (mut block, mut refs) = (Vec::new(), Vec::new());
    for (k, v) in records {
        Ref {
            offset: block.len() as u32,
            klen: k.len() as u32 | 2 << 24,
            vlen: v.len() as u32,
        }
        .put(&mut refs);
        block.extend_from_slice(k);
        block.extend_from_slice(b"--");
        block.extend_from_slice(v);
    }
    (block, refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of `key|value` (a 1-byte gap) in a block, one more record
    /// in the tail, and the references to them: the tail's first, then
    /// the block's in reverse order.
    fn block() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut src = Vec::new();
        let tail = b"tailkeytailvalue".to_vec();
        let mut refs = Vec::new();
        Ref {
            offset: IN_TAIL,
            klen: 7,
            vlen: 9,
        }
        .put(&mut refs);
        let mut at = Vec::new();
        for i in 0..100u32 {
            let k = format!("key{i:03}");
            let v = format!("value-{}", i * 7);
            at.push(Ref {
                offset: src.len() as u32,
                klen: k.len() as u32 | 1 << 24,
                vlen: v.len() as u32,
            });
            src.extend_from_slice(k.as_bytes());
            src.push(b'|');
            src.extend_from_slice(v.as_bytes());
        }
        for r in at.iter().rev() {
            r.put(&mut refs);
        }
        (src, tail, refs)
    }

    #[test]
    fn a_run_reads_the_records_its_references_point_at() {
        let (src, tail, refs) = block();
        let s = Source {
            block: &src,
            tail: &tail,
        };
        let mut run = RefRun::new(s, &refs, check(s, &refs).unwrap().crc32c).unwrap();
        assert_eq!(
            run.next_record().unwrap(),
            Some((&b"tailkey"[..], &b"tailvalue"[..]))
        );
        let mut n: u32 = 99;
        while let Some((k, v)) = run.next_record().unwrap() {
            assert_eq!(k, format!("key{n:03}").as_bytes());
            assert_eq!(v, format!("value-{}", n * 7).as_bytes());
            n = n.wrapping_sub(1);
        }
        assert_eq!(n, u32::MAX);
        run.verify().unwrap();
        // Read to the end, a wrong sum fails; a run not read to its end
        // fails whatever the sum.
        let mut wrong = RefRun::new(s, &refs, 7).unwrap();
        while wrong.next_record().unwrap().is_some() {}
        assert!(wrong.verify().unwrap_err().to_string().contains("CRC32C"));
        let want = check(s, &refs).unwrap().crc32c;
        let mut half = RefRun::new(s, &refs, want).unwrap();
        half.next_record().unwrap();
        assert!(half.verify().is_err());
    }

    #[test]
    fn a_files_tail_is_read_back_and_a_torn_one_refused() {
        let mut file = 3u64.to_le_bytes().to_vec();
        file.extend_from_slice(b"abcREFS");
        let s = Source::of_file(b"block", &file).unwrap();
        assert_eq!(s.tail, b"abc");
        assert_eq!(header_len(3), 11);
        assert!(Source::of_file(b"block", &file[..9]).is_err());
        assert!(Source::of_file(b"block", &file[..5]).is_err());
    }

    /// What is sent is what an encoded map output of the same records
    /// would hold, and its CRC is the CRC of what was sent; a flipped bit
    /// in the block, the tail or a reference fails the check.
    #[test]
    fn encoding_sends_the_records_and_a_flipped_bit_fails() {
        let (src, tail, refs) = block();
        let s = Source {
            block: &src,
            tail: &tail,
        };
        let c = check(s, &refs).unwrap();
        assert_eq!(c.records, 101);
        assert_eq!(encoded_len(&refs).unwrap(), (c.records, c.encoded));
        let mut want = Vec::new();
        let mut run = RefRun::new(s, &refs, c.crc32c).unwrap();
        while let Some((k, v)) = run.next_record().unwrap() {
            joblib::jobs::formats::kv_encode(k, v, &mut want);
        }
        assert_eq!(c.encoded, want.len() as u64);
        let mut got = Vec::new();
        let crc = encode(s, &refs, c.crc32c, 64, |b| {
            got.extend_from_slice(&b);
            true
        })
        .unwrap();
        assert_eq!(got, want);
        assert_eq!(crc, crc32c::crc32c(&want));

        let mut rotten = src.clone();
        rotten[250] ^= 1;
        let r = Source {
            block: &rotten,
            tail: &tail,
        };
        assert_ne!(check(r, &refs).unwrap().crc32c, c.crc32c);
        assert!(encode(r, &refs, c.crc32c, 64, |_| true).is_err());
        let mut rotten_tail = tail.clone();
        rotten_tail[3] ^= 1;
        let t = Source {
            block: &src,
            tail: &rotten_tail,
        };
        assert_ne!(check(t, &refs).unwrap().crc32c, c.crc32c);
        let mut moved = refs.clone();
        moved[50 * REF_BYTES] ^= 1;
        assert_ne!(check(s, &moved).unwrap().crc32c, c.crc32c);
        // The same bytes split elsewhere between key and value: the key one
        // byte longer, no gap.
        let mut split = refs.clone();
        let at = 50 * REF_BYTES + 4;
        let w = u32::from_le_bytes(split[at..at + 4].try_into().unwrap());
        assert_eq!(w >> 24, 1);
        let w = (w & SOURCE_KEY as u32) + 1;
        split[at..at + 4].copy_from_slice(&w.to_le_bytes());
        assert_ne!(check(s, &split).unwrap().crc32c, c.crc32c);
    }

    #[test]
    fn a_reference_past_its_bytes_or_a_torn_file_is_invalid_data() {
        let (src, tail, refs) = block();
        let short = Source {
            block: &src[..src.len() - 1],
            tail: &tail,
        };
        assert!(check(short, &refs).is_err());
        let s = Source {
            block: &src,
            tail: &tail[..3],
        };
        assert!(check(s, &refs).is_err());
        assert!(RefRun::new(short, &refs[..refs.len() - 1], 0).is_err());
        assert!(encoded_len(&refs[..refs.len() - 1]).is_err());
        let mut run = RefRun::new(short, &refs[REF_BYTES..2 * REF_BYTES], 0).unwrap();
        assert_eq!(
            run.next_record().unwrap_err().kind(),
            ErrorKind::InvalidData
        );
    }
}

//! Record formats: how a map's input block is cut into records, how output
//! records become bytes, and how keys are assigned to reducers.
//!
//! # Which map reads which record
//!
//! Every record is read by exactly one map, though the maps see only their own
//! block (plus, lazily, the blocks after it for the one record that straddles
//! the block's end). The rules, for a block covering file bytes `[s, e)`:
//!
//! - [`InputFormat::Lines`], as Hadoop's `LineRecordReader`: the map owns the
//!   lines whose start `p` satisfies `s < p <= e`, and also the line at `p = 0`
//!   when `s == 0`. A map cannot see byte `s - 1`, so it cannot tell whether a
//!   line starts exactly at `s`; it therefore skips through the first `\n` of
//!   its block and leaves that line to the previous map, which in turn reads
//!   the line starting exactly at its end `e` (fetching the next block for it).
//!   A line starting at the end of the file does not exist: a trailing `\n`
//!   does not make an empty last line, and a last line without `\n` is a line.
//! - [`InputFormat::Fixed`]: records start at file offsets that are multiples
//!   of `len`; a map owns those with `s <= p < e`.
//! - [`InputFormat::KvRecords`]: the block must hold whole records.

mod lines;

use super::{InputFormat, OutputFormat};
use bytes::Bytes;
use lines::read_lines;
pub use lines::{read_split_runs, RUN_BYTES};

/// What reading one split cost, for the task's report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SplitStats {
    pub records: u64,
    /// Bytes taken from the following blocks to finish the last record: the
    /// remote-read price of records that straddle block boundaries.
    pub bytes_read_past_end: u64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FormatError {
    #[error(
        "the input ends with a partial record of {bytes} bytes, where records are {len} bytes: the file length must be a multiple of {len}"
    )]
    PartialRecord { bytes: u64, len: usize },
    #[error("fixed-length records of {len} bytes cannot have a {key_len}-byte key")]
    BadFixedLayout { len: usize, key_len: usize },
    /// Also what corrupt lengths look like: the framing cannot tell a
    /// record cut by a block boundary from a length that was garbled.
    #[error(
        "record straddles a block boundary: write KvRecords files with record-aligned blocks (mr gen randomwriter does); the record at byte {offset} needs {need} bytes or more, only {have} are left"
    )]
    Straddle { offset: u64, need: u64, have: u64 },
}

/// Cuts `block` (at file offset `offset`) into the records this map owns and
/// passes each to `f(key, value)`. `next` yields the file's following blocks in
/// order (`None` at the end of the file); it is called only when the last
/// owned record runs past the end of `block`.
pub fn read_split(
    format: InputFormat,
    block: &[u8],
    offset: u64,
    next: &mut dyn FnMut() -> Option<Bytes>,
    f: &mut dyn FnMut(&[u8], &[u8]),
) -> Result<SplitStats, FormatError> {
    match format {
        InputFormat::Lines => Ok(read_lines(block, offset, next, f)),
        InputFormat::Fixed { len, key_len } => read_fixed(block, offset, len, key_len, next, f),
        InputFormat::KvRecords => read_kv_block(block, f),
        InputFormat::Generated => Ok(SplitStats::default()),
    }
}

fn read_fixed(
    block: &[u8],
    offset: u64,
    len: usize,
    key_len: usize,
    next: &mut dyn FnMut() -> Option<Bytes>,
    f: &mut dyn FnMut(&[u8], &[u8]),
) -> Result<SplitStats, FormatError> {
    if len == 0 || key_len > len {
        return Err(FormatError::BadFixedLayout { len, key_len });
    }
    let mut st = SplitStats::default();
    let l = len as u64;
    let first = ((l - offset % l) % l) as usize;
    if first >= block.len() {
        return Ok(st);
    }
    let mut recs = block[first..].chunks_exact(len);
    for r in &mut recs {
        f(&r[..key_len], &r[key_len..]);
        st.records += 1;
    }
    let rest = recs.remainder();
    if !rest.is_empty() {
        let mut rec = Vec::with_capacity(len);
        rec.extend_from_slice(rest);
        while rec.len() < len {
            let Some(b) = next() else {
                return Err(FormatError::PartialRecord {
                    bytes: rec.len() as u64,
                    len,
                });
            };
            let take = b.len().min(len - rec.len());
            rec.extend_from_slice(&b[..take]);
            st.bytes_read_past_end += take as u64;
        }
        f(&rec[..key_len], &rec[key_len..]);
        st.records += 1;
    }
    Ok(st)
}

fn read_kv_block(block: &[u8], f: &mut dyn FnMut(&[u8], &[u8])) -> Result<SplitStats, FormatError> {
    let mut st = SplitStats::default();
    for r in kv_iter(block) {
        let (k, v) = r?;
        f(k, v);
        st.records += 1;
    }
    Ok(st)
}

/// Appends one record in the `u32 LE klen, key, u32 LE vlen, value` layout.
pub fn kv_encode(key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.reserve(8 + key.len() + value.len());
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

/// Decodes the record at the start of `buf`: `(key, value, bytes used)`.
pub fn kv_decode(buf: &[u8]) -> Result<(&[u8], &[u8], usize), FormatError> {
    kv_decode_at(buf, 0)
}

fn kv_decode_at(buf: &[u8], base: u64) -> Result<(&[u8], &[u8], usize), FormatError> {
    let have = buf.len() as u64;
    let short = |need: u64| FormatError::Straddle {
        offset: base,
        need,
        have,
    };
    let u32_at = |at: usize| -> Option<u64> {
        let b = buf.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64)
    };
    let klen = u32_at(0).ok_or_else(|| short(4))?;
    let kend = 4 + klen;
    let vlen = u32_at(kend as usize).ok_or_else(|| short(kend + 4))?;
    let end = kend + 4 + vlen;
    if end > have {
        return Err(short(end));
    }
    let (kend, end) = (kend as usize, end as usize);
    Ok((&buf[4..kend], &buf[kend + 4..end], end))
}

/// Iterates over the KvRecords in `buf`, which must end on a record boundary.
pub fn kv_iter(buf: &[u8]) -> KvIter<'_> {
    KvIter { buf, pos: 0 }
}

pub struct KvIter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for KvIter<'a> {
    type Item = Result<(&'a [u8], &'a [u8]), FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        match kv_decode_at(&self.buf[self.pos..], self.pos as u64) {
            Ok((k, v, n)) => {
                self.pos += n;
                Some(Ok((k, v)))
            }
            Err(e) => {
                // One error ends the iteration: nothing after it can be framed.
                self.pos = self.buf.len();
                Some(Err(e))
            }
        }
    }
}

/// Appends one output record in `format`.
pub fn write_record(format: OutputFormat, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    match format {
        OutputFormat::TabLines => {
            out.reserve(key.len() + value.len() + 2);
            out.extend_from_slice(key);
            out.push(b'\t');
            out.extend_from_slice(value);
            out.push(b'\n');
        }
        OutputFormat::KeyLines => {
            out.reserve(key.len() + 1);
            out.extend_from_slice(key);
            out.push(b'\n');
        }
        OutputFormat::Lines => {
            out.reserve(key.len() + value.len() + 2);
            out.extend_from_slice(key);
            if !value.is_empty() {
                out.push(b'\t');
                out.extend_from_slice(value);
            }
            out.push(b'\n');
        }
        OutputFormat::KvRecords => kv_encode(key, value, out),
        OutputFormat::Raw => {
            out.reserve(key.len() + value.len());
            out.extend_from_slice(key);
            out.extend_from_slice(value);
        }
    }
}

/// CRC32C rather than a std hasher because every worker (and every build)
/// must send a key to the same reducer.
pub fn hash_partition(key: &[u8], reducers: u32) -> u32 {
    if reducers <= 1 {
        return 0;
    }
    crc32c::crc32c(key) % reducers
}

/// Partition `i` holds keys in `[splits[i-1], splits[i])`, so concatenating
/// the parts in order gives one sorted output. `splits` must be sorted.
pub fn range_partition(key: &[u8], splits: &[Vec<u8>]) -> u32 {
    splits.partition_point(|s| s.as_slice() <= key) as u32
}

/// [`range_partition`] with each split's first 8 bytes kept beside it as
/// a big-endian number: a key's own prefix settles its place against
/// almost every split without comparing bytes (TeraSort's maps spent 3 %
/// of the job's CPU in `memcmp` here, scripts/profile.sh, 2026-11-26).
#[derive(Debug, Clone, Default)]
pub struct RangePartitioner {
    splits: Vec<(u64, Vec<u8>)>,
}

/// The first 8 bytes of `key`, zero-padded, big-endian: ordered as the
/// bytes are wherever two prefixes differ.
fn prefix8(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

impl RangePartitioner {
    /// `splits` must be sorted, as for [`range_partition`].
    pub fn new(splits: Vec<Vec<u8>>) -> Self {
        RangePartitioner {
            splits: splits.into_iter().map(|s| (prefix8(&s), s)).collect(),
        }
    }

    /// The same partition as [`range_partition`] gives.
    pub fn partition(&self, key: &[u8]) -> u32 {
        let p = prefix8(key);
        self.splits.partition_point(|(sp, s)| {
            if *sp != p {
                *sp < p
            } else {
                s.as_slice() <= key
            }
        }) as u32
    }
}

/// Picks `reducers - 1` split points at even ranks of the sorted sample.
/// Duplicate split points are kept (the range between them is just empty) so
/// the count always matches the reducers; an empty sample yields empty split
/// points, which send every key to the last reducer rather than failing.
pub fn choose_splits(mut sample: Vec<Vec<u8>>, reducers: u32) -> Vec<Vec<u8>> {
    let r = reducers.max(1) as usize;
    if sample.is_empty() {
        return vec![Vec::new(); r - 1];
    }
    sample.sort_unstable();
    let n = sample.len();
    (1..r)
        .map(|i| sample[(i * n / r).min(n - 1)].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Records = Vec<(Vec<u8>, Vec<u8>)>;

    /// Runs every map of `file` cut into `bs`-byte blocks and concatenates
    /// what they read, in block order.
    fn read_all(format: InputFormat, file: &[u8], bs: usize) -> Result<Records, FormatError> {
        let mut out = Vec::new();
        let blocks: Vec<&[u8]> = file.chunks(bs).collect();
        for (i, b) in blocks.iter().enumerate() {
            let mut rest = blocks[i + 1..].iter().map(|b| Bytes::copy_from_slice(b));
            let mut next = || rest.next();
            let st = read_split(format, b, (i * bs) as u64, &mut next, &mut |k, v| {
                out.push((k.to_vec(), v.to_vec()))
            })?;
            let _ = st;
        }
        Ok(out)
    }

    fn lines_of(file: &[u8]) -> Vec<Vec<u8>> {
        if file.is_empty() {
            return vec![];
        }
        let body = file.strip_suffix(b"\n").unwrap_or(file);
        body.split(|&c| c == b'\n').map(|l| l.to_vec()).collect()
    }

    #[test]
    fn lines_every_block_size() {
        let texts: [&[u8]; 8] = [
            b"hello world\nsecond line\n\nfourth, after an empty one\nx\n",
            b"no trailing newline\nlast",
            b"\n\n\n",
            b"a",
            b"\n",
            b"ab\ncd\nef",
            b"one very long line that spans many small blocks without a break\nshort\n",
            b"x\n\ny\n\n\nz",
        ];
        for t in texts {
            let want = lines_of(t);
            for bs in 1..=t.len() {
                let got: Vec<Vec<u8>> = read_all(InputFormat::Lines, t, bs)
                    .unwrap()
                    .into_iter()
                    .map(|(k, v)| {
                        assert!(v.is_empty());
                        k
                    })
                    .collect();
                assert_eq!(
                    got,
                    want,
                    "text {:?} block size {bs}",
                    String::from_utf8_lossy(t)
                );
            }
        }
    }

    /// Every map of `file` cut into `bs`-byte blocks, read line by line or
    /// in runs: what each call got, each ended by `\n`, in block order,
    /// and each map's stats.
    fn read_joined(runs: bool, file: &[u8], bs: usize) -> (Vec<u8>, Vec<SplitStats>) {
        let read = if runs { read_split_runs } else { read_split };
        let (mut text, mut stats) = (Vec::new(), Vec::new());
        let blocks: Vec<&[u8]> = file.chunks(bs).collect();
        for (i, b) in blocks.iter().enumerate() {
            let mut rest = blocks[i + 1..].iter().map(|b| Bytes::copy_from_slice(b));
            let mut next = || rest.next();
            let mut f = |k: &[u8], _: &[u8]| {
                text.extend_from_slice(k);
                text.push(b'\n');
            };
            let st = read(InputFormat::Lines, b, (i * bs) as u64, &mut next, &mut f);
            stats.push(st.unwrap());
        }
        (text, stats)
    }

    #[test]
    fn runs_hold_the_lines_of_every_block_size() {
        let mut long = b"a\n".repeat(RUN_BYTES / 3);
        long.extend_from_slice(&[b'x'; RUN_BYTES + 7]);
        long.extend_from_slice(b"\nend");
        let texts: [&[u8]; 9] = [
            b"hello world\nsecond line\n\nfourth, after an empty one\nx\n",
            b"no trailing newline\nlast",
            b"\n\n\n",
            b"a",
            b"\n",
            b"ab\ncd\nef",
            b"one very long line that spans many small blocks without a break\nshort\n",
            b"x\n\ny\n\n\nz",
            &long,
        ];
        for t in texts {
            let sizes: Vec<usize> = match t.len() {
                n if n > 1000 => vec![n / 3, n / 2, n, RUN_BYTES - 1, RUN_BYTES, RUN_BYTES + 1],
                n => (1..=n).collect(),
            };
            for bs in sizes {
                let (runs, lines) = (read_joined(true, t, bs), read_joined(false, t, bs));
                assert!(runs.0 == lines.0, "block size {bs}");
                assert_eq!(runs.1, lines.1, "block size {bs}");
            }
        }
    }

    #[test]
    fn lines_tail_is_read_lazily() {
        let mut calls = 0;
        let mut next = || {
            calls += 1;
            Some(Bytes::from_static(b"tail\nmore\n"))
        };
        let mut got = vec![];
        let st = read_split(InputFormat::Lines, b"a\nb\n", 0, &mut next, &mut |k, _| {
            got.push(k.to_vec())
        })
        .unwrap();
        assert_eq!(got, vec![b"a".to_vec(), b"b".to_vec(), b"tail".to_vec()]);
        assert_eq!(
            st,
            SplitStats {
                records: 3,
                bytes_read_past_end: 5
            }
        );
        assert_eq!(calls, 1);
        // A non-first block with no `\n` lies inside an earlier line.
        let mut next = || -> Option<Bytes> { panic!("not needed") };
        let st = read_split(InputFormat::Lines, b"abc", 4, &mut next, &mut |_, _| {
            panic!("not ours")
        })
        .unwrap();
        assert_eq!(st, SplitStats::default());
        // Fixed records that end on the block's end need no tail.
        let fmt = InputFormat::Fixed { len: 4, key_len: 1 };
        let st = read_split(fmt, b"..abcdefgh", 6, &mut next, &mut |_, _| {}).unwrap();
        assert_eq!(st.records, 2);
    }

    #[test]
    fn fixed_every_block_size() {
        let fmt = InputFormat::Fixed {
            len: 100,
            key_len: 10,
        };
        let file: Vec<u8> = (0..700u32).map(|i| (i * 7 % 251) as u8).collect();
        let want: Vec<(Vec<u8>, Vec<u8>)> = file
            .chunks(100)
            .map(|r| (r[..10].to_vec(), r[10..].to_vec()))
            .collect();
        for bs in 1..=file.len() {
            assert_eq!(read_all(fmt, &file, bs).unwrap(), want, "block size {bs}");
        }
    }

    #[test]
    fn fixed_partial_record_is_an_error() {
        let fmt = InputFormat::Fixed {
            len: 100,
            key_len: 10,
        };
        let file = vec![1u8; 250];
        for bs in [1, 30, 100, 128, 250] {
            let e = read_all(fmt, &file, bs).unwrap_err();
            assert_eq!(
                e,
                FormatError::PartialRecord {
                    bytes: 50,
                    len: 100
                }
            );
            assert!(e.to_string().contains("50 bytes"), "{e}");
        }
        let e = read_all(InputFormat::Fixed { len: 4, key_len: 5 }, &file, 10).unwrap_err();
        assert!(matches!(e, FormatError::BadFixedLayout { .. }));
    }

    #[test]
    fn kv_round_trip_and_straddle() {
        let mut buf = Vec::new();
        let recs: Vec<(Vec<u8>, Vec<u8>)> = (0..20u8)
            .map(|i| (vec![i; i as usize], vec![b'v'; (i * 3) as usize]))
            .collect();
        let mut ends = vec![];
        for (k, v) in &recs {
            kv_encode(k, v, &mut buf);
            ends.push(buf.len());
        }
        assert_eq!(
            read_all(InputFormat::KvRecords, &buf, buf.len()).unwrap(),
            recs
        );
        // Record-aligned blocks read every record once.
        let mut got = vec![];
        let mut start = 0;
        for &e in ends.iter().step_by(3).chain(std::iter::once(&buf.len())) {
            let mut next = || -> Option<Bytes> { panic!("aligned blocks need no tail") };
            read_split(
                InputFormat::KvRecords,
                &buf[start..e],
                start as u64,
                &mut next,
                &mut |k, v| got.push((k.to_vec(), v.to_vec())),
            )
            .unwrap();
            start = e;
        }
        assert_eq!(got, recs);
        // Any cut that is not on a record boundary is refused clearly.
        for cut in 1..buf.len() {
            if ends.contains(&cut) {
                continue;
            }
            let e = read_all(InputFormat::KvRecords, &buf[..cut], cut).unwrap_err();
            assert!(matches!(e, FormatError::Straddle { .. }), "{cut}: {e}");
        }
        let e = read_split(
            InputFormat::KvRecords,
            &buf[..ends[5] + 3],
            0,
            &mut || None,
            &mut |_, _| {},
        )
        .unwrap_err();
        assert!(e.to_string().contains("record straddles a block boundary: write KvRecords files with record-aligned blocks (mr gen randomwriter does)"));
    }

    #[test]
    fn kv_lengths_are_validated() {
        let mut buf = Vec::new();
        buf.extend_from_slice(&1000u32.to_le_bytes());
        buf.extend_from_slice(b"short");
        let e = kv_decode(&buf).unwrap_err();
        assert_eq!(
            e,
            FormatError::Straddle {
                offset: 0,
                need: 1008,
                have: 9
            }
        );
        let mut buf = Vec::new();
        kv_encode(b"k", b"", &mut buf);
        let n = buf.len();
        buf[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        buf.extend_from_slice(b"abc");
        let e = kv_decode(&buf).unwrap_err();
        assert_eq!(
            e,
            FormatError::Straddle {
                offset: 0,
                need: 9 + u32::MAX as u64,
                have: 12
            }
        );
        let mut two = Vec::new();
        kv_encode(b"a", b"b", &mut two);
        two.extend_from_slice(&[1, 0]);
        let errs: Vec<_> = kv_iter(&two).collect();
        assert_eq!(errs.len(), 2);
        assert_eq!(
            errs[1],
            Err(FormatError::Straddle {
                offset: 10,
                need: 4,
                have: 2
            })
        );
    }

    #[test]
    fn write_record_layouts() {
        let mut o = vec![];
        write_record(OutputFormat::TabLines, b"k", b"v", &mut o);
        write_record(OutputFormat::KeyLines, b"k", b"ignored", &mut o);
        write_record(OutputFormat::Lines, b"a", b"", &mut o);
        write_record(OutputFormat::Lines, b"b", b"c", &mut o);
        write_record(OutputFormat::Raw, b"ab", b"cd", &mut o);
        assert_eq!(o, b"k\tv\nk\na\nb\tc\nabcd");
        let mut o = vec![];
        write_record(OutputFormat::KvRecords, b"key", b"value", &mut o);
        assert_eq!(
            kv_decode(&o).unwrap(),
            (&b"key"[..], &b"value"[..], o.len())
        );
    }

    #[test]
    fn the_range_partitioner_agrees_with_range_partition() {
        let keys: Vec<Vec<u8>> = [
            &b""[..],
            b"a",
            b"ab",
            b"ab\0",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghi",
            b"abcdefgi",
            b"b",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        ]
        .iter()
        .map(|k| k.to_vec())
        .collect();
        for splits in [
            vec![],
            vec![b"ab".to_vec()],
            vec![b"ab".to_vec(), b"ab\0".to_vec(), b"abcdefgh".to_vec()],
            vec![b"abcdefgh".to_vec(), b"abcdefghi".to_vec(), b"b".to_vec()],
            vec![b"a".to_vec(), b"a".to_vec(), b"abcdefgi".to_vec()],
        ] {
            let r = RangePartitioner::new(splits.clone());
            for k in &keys {
                assert_eq!(
                    r.partition(k),
                    range_partition(k, &splits),
                    "{k:?} {splits:?}"
                );
            }
        }
    }

    #[test]
    fn range_partition_boundaries() {
        let splits = vec![b"b".to_vec(), b"d".to_vec(), b"d".to_vec(), b"f".to_vec()];
        assert_eq!(range_partition(b"", &splits), 0);
        assert_eq!(range_partition(b"a", &splits), 0);
        assert_eq!(range_partition(b"azzz", &splits), 0);
        assert_eq!(range_partition(b"b", &splits), 1);
        assert_eq!(range_partition(b"b\0", &splits), 1);
        assert_eq!(range_partition(b"c", &splits), 1);
        // Equal split points leave an empty partition between them.
        assert_eq!(range_partition(b"d", &splits), 3);
        assert_eq!(range_partition(b"e", &splits), 3);
        assert_eq!(range_partition(b"f", &splits), 4);
        assert_eq!(range_partition(b"\xff", &splits), 4);
        assert_eq!(range_partition(b"x", &[]), 0);
    }

    #[test]
    fn splits_are_even_and_counted() {
        let sample: Vec<Vec<u8>> = (0..100u8).rev().map(|i| vec![i]).collect();
        let s = choose_splits(sample, 4);
        assert_eq!(s, vec![vec![25], vec![50], vec![75]]);
        let dup = choose_splits(vec![b"x".to_vec(); 10], 3);
        assert_eq!(dup, vec![b"x".to_vec(), b"x".to_vec()]);
        assert_eq!(choose_splits(vec![], 3).len(), 2);
        assert!(choose_splits(vec![b"a".to_vec()], 1).is_empty());
        let tiny = choose_splits(vec![b"a".to_vec(), b"b".to_vec()], 5);
        assert_eq!(tiny.len(), 4);
        assert!(tiny.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn hash_partition_is_stable_and_in_range() {
        assert_eq!(hash_partition(b"anything", 1), 0);
        assert_eq!(hash_partition(b"hello", 7), crc32c::crc32c(b"hello") % 7);
        for i in 0..100u32 {
            assert!(hash_partition(&i.to_le_bytes(), 3) < 3);
        }
    }
}

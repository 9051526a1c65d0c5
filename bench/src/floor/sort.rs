//! The sorts' floor: an index entry per record (the key's leading bytes and
//! where the record lies), sorted by two threads, then the records copied
//! out in that order.
//!
//! The two threads first cut the entries at a sampled median key, so that
//! thread 0 sorts every key below it and thread 1 the rest: their outputs
//! are then the first and second halves of the sorted file, written side by
//! side with no merge. Each thread sorts with one radix pass on the key's
//! first 16 bits (65 536 buckets, a few hundred entries each at 1 GiB of
//! uniform keys) and a comparison sort within each bucket.

use super::{FloorError, THREADS};
use joblib::jobs::formats::kv_iter;
use joblib::jobs::terasort::{KEY_LEN, RECORD_LEN};
use std::cmp::Ordering;
use std::ops::Range;
use std::path::PathBuf;

/// Sorts `entries` by `cmp` with two threads; the parts returned, in order,
/// are one sorted sequence. `top16` must agree with `cmp`: `a < b` implies
/// `top16(a) <= top16(b)`.
pub fn sort_parts<E, T, C>(entries: Vec<E>, top16: T, cmp: C) -> Vec<Vec<E>>
where
    E: Copy + Send + Sync,
    T: Fn(&E) -> u16 + Sync,
    C: Fn(&E, &E) -> Ordering + Sync,
{
    if entries.len() < 2 {
        return vec![entries];
    }
    let pivot = median_of_sample(&entries, &cmp);
    // Each thread cuts its half of the entries at the pivot.
    let halves: Vec<(Vec<E>, Vec<E>)> = std::thread::scope(|s| {
        let handles: Vec<_> = entries
            .chunks(entries.len().div_ceil(THREADS))
            .map(|half| {
                let cmp = &cmp;
                s.spawn(move || {
                    let mut below = Vec::with_capacity(half.len() / 2 + 16);
                    let mut rest = Vec::with_capacity(half.len() / 2 + 16);
                    for e in half {
                        if cmp(e, &pivot) == Ordering::Less {
                            below.push(*e);
                        } else {
                            rest.push(*e);
                        }
                    }
                    (below, rest)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a partitioning thread panicked"))
            .collect()
    });
    drop(entries);
    let below: Vec<&[E]> = halves.iter().map(|(b, _)| b.as_slice()).collect();
    let rest: Vec<&[E]> = halves.iter().map(|(_, r)| r.as_slice()).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = [below, rest]
            .into_iter()
            .map(|sources| {
                let (top16, cmp) = (&top16, &cmp);
                s.spawn(move || radix_then_compare(&sources, top16, cmp))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a sorting thread panicked"))
            .collect()
    })
}

/// The median of up to 1023 entries spread evenly over `entries`.
fn median_of_sample<E: Copy>(entries: &[E], cmp: &impl Fn(&E, &E) -> Ordering) -> E {
    let step = (entries.len() / 1023).max(1);
    let mut sample: Vec<E> = entries.iter().step_by(step).copied().collect();
    sample.sort_unstable_by(cmp);
    sample[sample.len() / 2]
}

/// One counting pass on `top16` scatters the sources' entries into buckets;
/// each bucket is then sorted by `cmp`.
fn radix_then_compare<E: Copy>(
    sources: &[&[E]],
    top16: &impl Fn(&E) -> u16,
    cmp: &impl Fn(&E, &E) -> Ordering,
) -> Vec<E> {
    let n: usize = sources.iter().map(|s| s.len()).sum();
    let Some(&first) = sources.iter().find_map(|s| s.first()) else {
        return Vec::new();
    };
    let mut starts = vec![0usize; 1 << 16];
    for e in sources.iter().flat_map(|s| s.iter()) {
        starts[top16(e) as usize] += 1;
    }
    let mut at = 0;
    for c in starts.iter_mut() {
        let n = *c;
        *c = at;
        at += n;
    }
    let mut next = starts.clone();
    let mut out = vec![first; n];
    for e in sources.iter().flat_map(|s| s.iter()) {
        let k = top16(e) as usize;
        out[next[k]] = *e;
        next[k] += 1;
    }
    for (k, &start) in starts.iter().enumerate() {
        let end = next[k];
        if end - start > 1 {
            out[start..end].sort_unstable_by(cmp);
        }
    }
    out
}

/// A TeraSort record's entry: its 10-byte key in the top 80 bits, its
/// byte offset in the input in the low 48, so that comparing entries
/// compares keys (and, for equal keys, keeps the input order).
pub type TeraEntry = u128;

const OFFSET_BITS: u32 = 48;

/// The entries of the 100-byte records of each file's range of `buf`,
/// built by two threads. Every file must hold whole records, as
/// TeraSort's reader demands.
pub fn tera_entries(
    buf: &[u8],
    files: &[(PathBuf, Range<usize>)],
) -> Result<Vec<TeraEntry>, FloorError> {
    // Each file's first entry: entry i of file f is the record at
    // range.start + (i - first[f]) * RECORD_LEN.
    let mut first = Vec::with_capacity(files.len() + 1);
    first.push(0usize);
    for (path, r) in files {
        if r.len() % RECORD_LEN != 0 {
            return Err(FloorError::PartialRecord {
                path: path.clone(),
                bytes: (r.len() % RECORD_LEN) as u64,
                len: RECORD_LEN,
            });
        }
        if r.end as u64 >= 1 << OFFSET_BITS {
            return Err(FloorError::TooManyRecords((r.end / RECORD_LEN) as u64));
        }
        first.push(first.last().expect("one at least") + r.len() / RECORD_LEN);
    }
    let mut entries = vec![0u128; *first.last().expect("one at least")];
    let per = entries.len().div_ceil(THREADS).max(1);
    let first = &first;
    std::thread::scope(|s| {
        for (t, chunk) in entries.chunks_mut(per).enumerate() {
            s.spawn(move || {
                let lo = t * per;
                // The file holding entry `lo`: the last one starting at or before it.
                let mut f = first.partition_point(|&x| x <= lo) - 1;
                for (i, e) in (lo..).zip(chunk.iter_mut()) {
                    while i >= first[f + 1] {
                        f += 1;
                    }
                    let at = files[f].1.start + (i - first[f]) * RECORD_LEN;
                    let mut k = [0u8; 16];
                    k[..KEY_LEN].copy_from_slice(&buf[at..at + KEY_LEN]);
                    *e = u128::from_be_bytes(k) | at as u128;
                }
            });
        }
    });
    Ok(entries)
}

pub fn tera_top16(e: &TeraEntry) -> u16 {
    (e >> 112) as u16
}

/// The record an entry stands for.
pub fn tera_record<'a>(buf: &'a [u8], e: &TeraEntry) -> &'a [u8] {
    let at = (e & ((1 << OFFSET_BITS) - 1)) as usize;
    &buf[at..at + RECORD_LEN]
}

/// A Sort record's entry: the key's first 8 bytes (big-endian, zero-padded:
/// comparing them never contradicts comparing the keys), where the key
/// lies in the input, and the key's and value's lengths.
#[derive(Debug, Clone, Copy)]
pub struct KeyEntry {
    prefix: u64,
    key_at: u64,
    key_len: u32,
    value_len: u32,
}

impl KeyEntry {
    fn new(buf: &[u8], key: &[u8], value_len: usize) -> KeyEntry {
        let mut p = [0u8; 8];
        let n = key.len().min(8);
        p[..n].copy_from_slice(&key[..n]);
        KeyEntry {
            prefix: u64::from_be_bytes(p),
            key_at: (key.as_ptr() as usize - buf.as_ptr() as usize) as u64,
            key_len: key.len() as u32,
            value_len: value_len as u32,
        }
    }

    pub fn key<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.key_at as usize..self.key_at as usize + self.key_len as usize]
    }

    pub fn top16(&self) -> u16 {
        (self.prefix >> 48) as u16
    }

    /// By key; equal keys keep the input order.
    pub fn order(&self, other: &KeyEntry, buf: &[u8]) -> Ordering {
        self.prefix
            .cmp(&other.prefix)
            .then_with(|| self.key(buf).cmp(other.key(buf)))
            .then(self.key_at.cmp(&other.key_at))
    }

    /// The whole KvRecord (`u32 LE klen, key, u32 LE vlen, value`).
    pub fn kv_record<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        let at = self.key_at as usize;
        &buf[at - 4..at + self.key_len as usize + 4 + self.value_len as usize]
    }

    /// Appends the job's TabLines output of a text line: `KEY<TAB>VALUE\n`.
    pub fn push_tab_line(&self, buf: &[u8], out: &mut Vec<u8>) {
        let at = self.key_at as usize + self.key_len as usize;
        out.extend_from_slice(self.key(buf));
        out.push(b'\t');
        if self.value_len > 0 {
            out.extend_from_slice(&buf[at + 1..at + 1 + self.value_len as usize]);
        }
        out.push(b'\n');
    }
}

/// The entries of the KvRecords files in `buf`; a file must hold whole
/// records, as the job's reader demands.
pub fn kv_entries(
    buf: &[u8],
    files: &[(PathBuf, Range<usize>)],
) -> Result<Vec<KeyEntry>, FloorError> {
    let mut entries = Vec::new();
    for (path, r) in files {
        for rec in kv_iter(&buf[r.clone()]) {
            let (k, v) = rec.map_err(|source| FloorError::Kv {
                path: path.clone(),
                source,
            })?;
            entries.push(KeyEntry::new(buf, k, v.len()));
        }
    }
    Ok(entries)
}

/// The entries of the text lines in `buf` (every file ending in `\n`, as
/// [`super::input::load`] leaves text), two threads each framing half of
/// the lines: the key is what precedes the first TAB, the value the rest
/// (the job's `split_tab`).
pub fn line_entries(buf: &[u8]) -> Vec<KeyEntry> {
    let mut cut = buf.len() / 2;
    cut = match memchr::memchr(b'\n', &buf[cut..]) {
        Some(i) => cut + i + 1,
        None => buf.len(),
    };
    let halves = [&buf[..cut], &buf[cut..]];
    let framed: Vec<Vec<KeyEntry>> = std::thread::scope(|s| {
        let handles: Vec<_> = halves
            .into_iter()
            .map(|half| {
                s.spawn(move || {
                    let mut out = Vec::new();
                    let mut start = 0;
                    for end in memchr::memchr_iter(b'\n', half) {
                        let line = &half[start..end];
                        let (key, value_len) = match memchr::memchr(b'\t', line) {
                            Some(t) => (&line[..t], line.len() - t - 1),
                            None => (line, 0),
                        };
                        out.push(KeyEntry::new(buf, key, value_len));
                        start = end + 1;
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a framing thread panicked"))
            .collect()
    });
    framed.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_one_sorted_sequence() {
        let mut x = 1u64;
        for n in [0usize, 1, 2, 3, 100, 5000] {
            let v: Vec<u64> = (0..n)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    // Few distinct values: ties and crowded buckets.
                    x >> 61 << 50 | (x >> 20) & 0xFF
                })
                .collect();
            let parts = sort_parts(v.clone(), |e| (e >> 48) as u16, |a, b| a.cmp(b));
            assert!(parts.len() <= THREADS);
            let mut want = v;
            want.sort();
            assert_eq!(parts.concat(), want, "n {n}");
        }
    }

    #[test]
    fn key_entries_order_as_the_keys() {
        let buf = b"b\x00\tx\na\tyy\nab\nabcdefgh1\tz\nabcdefgh0\tw\nb\tv\n".to_vec();
        let e = line_entries(&buf);
        assert_eq!(e.len(), 6);
        let parts = sort_parts(e, KeyEntry::top16, |a, b| a.order(b, &buf));
        let mut out = Vec::new();
        for en in parts.iter().flatten() {
            en.push_tab_line(&buf, &mut out);
        }
        assert_eq!(
            out,
            b"a\tyy\nab\t\nabcdefgh0\tw\nabcdefgh1\tz\nb\tv\nb\x00\tx\n".to_vec()
        );
    }
}

//! The reduce side's merge (Hadoop's `Merger`): k sorted runs of
//! `u32 LE klen, key, u32 LE vlen, value` records become one sorted stream,
//! grouped by key. Runs are read through buffered readers, one record each
//! at a time, so memory is bounded by the number of runs, not their size.

use crate::task::mapout::refs::RefRun;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io::{self, BufRead, ErrorKind, Read};

/// The first 8 bytes of `key`, zero-padded, as a big-endian number: ordered
/// as the bytes are.
pub fn key_prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// Receives each record of a merge.
pub type RecordFn<'a> = dyn FnMut(&[u8], &[u8]) -> io::Result<()> + 'a;
/// Receives each key of a grouped merge with all its values.
pub type GroupFn<'a> = dyn FnMut(&[u8], &mut dyn Iterator<Item = &[u8]>) -> io::Result<()> + 'a;

/// One sorted run, read record by record into reused buffers.
pub struct RunReader<R: BufRead> {
    inner: R,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

fn read_len<R: Read>(r: &mut R) -> io::Result<Option<u32>> {
    let mut b = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut b[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => {
                return Err(io::Error::new(
                    ErrorKind::InvalidData,
                    "truncated record length in a sorted run",
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some(u32::from_le_bytes(b)))
}

fn read_exact_into<R: Read>(r: &mut R, n: usize, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    // `take` + `read_to_end` fills without zeroing the buffer first.
    let got = r.take(n as u64).read_to_end(buf)?;
    if got < n {
        return Err(io::Error::new(
            ErrorKind::InvalidData,
            "truncated record in a sorted run",
        ));
    }
    Ok(())
}

impl<R: BufRead> RunReader<R> {
    pub fn new(inner: R) -> Self {
        RunReader {
            inner,
            key: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Advances to the next record; false at the end of the run.
    pub fn advance(&mut self) -> io::Result<bool> {
        let Some(kl) = read_len(&mut self.inner)? else {
            return Ok(false);
        };
        read_exact_into(&mut self.inner, kl as usize, &mut self.key)?;
        let vl = read_len(&mut self.inner)?.ok_or_else(|| {
            io::Error::new(ErrorKind::InvalidData, "record without a value length")
        })?;
        read_exact_into(&mut self.inner, vl as usize, &mut self.value)?;
        Ok(true)
    }
}

/// Heap entry: the run index; ordering looks at the run's current key, with
/// the run index as tie-break so equal keys keep run order (stability).
struct Head {
    /// The key's first 8 bytes, big-endian: most comparisons end here.
    prefix: u64,
    key: Vec<u8>,
    run: usize,
}

impl Head {
    fn new(key: Vec<u8>, run: usize) -> Self {
        Head {
            prefix: key_prefix(&key),
            key,
            run,
        }
    }
}

impl PartialEq for Head {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key && self.run == o.run
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Head {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse for smallest first.
        o.prefix
            .cmp(&self.prefix)
            .then_with(|| o.key.cmp(&self.key))
            .then(o.run.cmp(&self.run))
    }
}

/// Calls `f` for every record of the runs in merged order; returns the count.
pub fn merge_records<R: BufRead>(runs: Vec<R>, f: &mut RecordFn<'_>) -> io::Result<u64> {
    let mut readers: Vec<RunReader<R>> = runs.into_iter().map(RunReader::new).collect();
    let mut heap = BinaryHeap::with_capacity(readers.len());
    for (i, r) in readers.iter_mut().enumerate() {
        if r.advance()? {
            heap.push(Head::new(std::mem::take(&mut r.key), i));
        }
    }
    let mut n = 0;
    while let Some(Head { key, run, .. }) = heap.pop() {
        let r = &mut readers[run];
        f(&key, &r.value)?;
        n += 1;
        r.key = key;
        if r.advance()? {
            heap.push(Head::new(std::mem::take(&mut r.key), run));
        }
    }
    Ok(n)
}

/// Calls `f` once per distinct key, keys ascending, with all of its values
/// (run order, then record order). One key's values are held in memory.
pub fn merge_grouped<R: BufRead>(runs: Vec<R>, f: &mut GroupFn<'_>) -> io::Result<u64> {
    let mut cur_key: Option<Vec<u8>> = None;
    let mut arena: Vec<u8> = Vec::new();
    let mut ends: Vec<usize> = Vec::new();
    let flush = |key: &[u8], arena: &[u8], ends: &[usize], f: &mut GroupFn<'_>| {
        let mut start = 0;
        let mut it = ends.iter().map(|&e| {
            let s = &arena[start..e];
            start = e;
            s
        });
        f(key, &mut it)
    };
    let n = merge_records(runs, &mut |k, v| {
        if cur_key.as_deref() != Some(k) {
            if let Some(ck) = cur_key.take() {
                flush(&ck, &arena, &ends, f)?;
            }
            arena.clear();
            ends.clear();
            cur_key = Some(k.to_vec());
        }
        arena.extend_from_slice(v);
        ends.push(arena.len());
        Ok(())
    })?;
    if let Some(ck) = cur_key {
        flush(&ck, &arena, &ends, f)?;
    }
    Ok(n)
}

/// The record of `data` at `*pos`, which then moves past it; `None` at the
/// end of the run. The key and value are slices of `data`: nothing copied.
fn next_in<'a>(data: &'a [u8], pos: &mut usize) -> io::Result<Option<(&'a [u8], &'a [u8])>> {
    if *pos >= data.len() {
        return Ok(None);
    }
    let bad = || io::Error::new(ErrorKind::InvalidData, "truncated record in a sorted run");
    let len_at = |p: usize| -> io::Result<usize> {
        let b = data
            .get(p..p.checked_add(4).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    let ks = *pos + 4;
    let ke = ks.checked_add(len_at(*pos)?).ok_or_else(bad)?;
    let vs = ke.checked_add(4).ok_or_else(bad)?;
    let ve = vs.checked_add(len_at(ke)?).ok_or_else(bad)?;
    if ve > data.len() {
        return Err(bad());
    }
    *pos = ve;
    Ok(Some((&data[ks..ke], &data[vs..ve])))
}

/// A run's current record, for the tree of [`merge_grouped_slices`].
#[derive(Clone, Copy)]
struct SliceHead<'a> {
    prefix: u64,
    key: &'a [u8],
    value: &'a [u8],
}

/// The runs' current records as a tree of losers (Knuth's "tree of
/// losers", as Hadoop's and most external sorts merge): each internal node
/// keeps the run that lost the match played there, the root's winner is
/// the smallest record, and replacing it replays only the matches on its
/// leaf's path, one comparison per level. A binary heap's sift-down takes
/// two per level: it was 5.6 % of a 1 GiB TeraSort's CPU samples, against
/// 4.8 % for everything else the merge does (scripts/profile.sh,
/// 2026-11-26). Order: smallest key first, ties by run (the stability the
/// merge promises); an exhausted run is larger than any record.
struct LoserTree<'a> {
    heads: Vec<Option<SliceHead<'a>>>,
    /// `tree[0]`: the winner; `tree[1..k]`: the losers. Node `i`'s
    /// children are `2i` and `2i + 1`, and run `r` is leaf `k + r`.
    tree: Vec<usize>,
}

impl<'a> LoserTree<'a> {
    fn new(heads: Vec<Option<SliceHead<'a>>>) -> Self {
        let k = heads.len();
        let mut t = LoserTree {
            heads,
            tree: vec![0; k.max(1)],
        };
        if k > 0 {
            t.tree[0] = t.build(1);
        }
        t
    }

    /// Plays the matches under `node`; returns their winner.
    fn build(&mut self, node: usize) -> usize {
        let k = self.heads.len();
        if node >= k {
            return node - k;
        }
        let (a, b) = (self.build(2 * node), self.build(2 * node + 1));
        let (win, lose) = if self.less(a, b) { (a, b) } else { (b, a) };
        self.tree[node] = lose;
        win
    }

    /// Whether run `a`'s record comes before run `b`'s.
    #[inline]
    fn less(&self, a: usize, b: usize) -> bool {
        match (&self.heads[a], &self.heads[b]) {
            (Some(x), Some(y)) => x
                .prefix
                .cmp(&y.prefix)
                .then_with(|| x.key.cmp(y.key))
                .then(a.cmp(&b))
                .is_lt(),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => a < b,
        }
    }

    /// The smallest record and its run; `None` once every run is done.
    fn top(&self) -> Option<(SliceHead<'a>, usize)> {
        let w = *self.tree.first()?;
        self.heads.get(w).copied().flatten().map(|h| (h, w))
    }

    /// Puts `head` (or the end) in place of the winner's record and
    /// replays its path to the root.
    fn replace_top(&mut self, head: Option<SliceHead<'a>>) {
        let k = self.heads.len();
        let mut win = self.tree[0];
        self.heads[win] = head;
        let mut node = (win + k) / 2;
        while node >= 1 {
            if self.less(self.tree[node], win) {
                std::mem::swap(&mut self.tree[node], &mut win);
            }
            node /= 2;
        }
        self.tree[0] = win;
    }
}

fn slice_head<'a>(rec: Option<(&'a [u8], &'a [u8])>) -> Option<SliceHead<'a>> {
    rec.map(|(key, value)| SliceHead {
        prefix: key_prefix(key),
        key,
        value,
    })
}

/// A sorted run held in memory, as [`merge_grouped_slices`] reads it.
pub enum Run<'a> {
    /// Encoded records (a map output file, a fetched segment).
    Encoded(&'a [u8], usize),
    /// References into a map's block (a map output by reference).
    Refs(RefRun<'a>),
}

impl<'a> Run<'a> {
    pub fn encoded(data: &'a [u8]) -> Self {
        Run::Encoded(data, 0)
    }

    #[inline]
    fn next_record(&mut self) -> io::Result<Option<(&'a [u8], &'a [u8])>> {
        match self {
            Run::Encoded(data, pos) => next_in(data, pos),
            Run::Refs(r) => r.next_record(),
        }
    }
}

/// [`merge_grouped`] over runs held in memory (mapped files, fetched
/// buffers, references into mapped blocks): each record is parsed where
/// it lies and handed on as slices, with no copy of a key or a value and
/// no read call per field, through a [`LoserTree`]. The same order and
/// grouping as `merge_grouped`, so the same output.
pub fn merge_grouped_slices(runs: &mut [Run<'_>], f: &mut GroupFn<'_>) -> io::Result<u64> {
    let mut heads = Vec::with_capacity(runs.len());
    for run in runs.iter_mut() {
        heads.push(slice_head(run.next_record()?));
    }
    let mut tree = LoserTree::new(heads);
    let mut n = 0;
    let mut cur: Option<&[u8]> = None;
    let mut vals: Vec<&[u8]> = Vec::new();
    while let Some((SliceHead { key, value, .. }, run)) = tree.top() {
        n += 1;
        if cur != Some(key) {
            if let Some(k) = cur {
                f(k, &mut vals.drain(..))?;
            }
            cur = Some(key);
        }
        vals.push(value);
        tree.replace_top(slice_head(runs[run].next_record()?));
    }
    if let Some(k) = cur {
        f(k, &mut vals.drain(..))?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(recs: &[(&str, &str)]) -> Vec<u8> {
        let mut v = Vec::new();
        for (k, val) in recs {
            v.extend_from_slice(&(k.len() as u32).to_le_bytes());
            v.extend_from_slice(k.as_bytes());
            v.extend_from_slice(&(val.len() as u32).to_le_bytes());
            v.extend_from_slice(val.as_bytes());
        }
        v
    }

    #[test]
    fn groups_across_runs_stably() {
        let a = run(&[("a", "1"), ("c", "2")]);
        let b = run(&[("a", "3"), ("b", "4"), ("c", "5")]);
        let mut got = Vec::new();
        let n = merge_grouped(vec![&a[..], &b[..]], &mut |k, vals| {
            let vs: Vec<String> = vals
                .map(|v| String::from_utf8(v.to_vec()).unwrap())
                .collect();
            got.push((String::from_utf8(k.to_vec()).unwrap(), vs.join(",")));
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 5);
        assert_eq!(
            got,
            vec![
                ("a".into(), "1,3".into()),
                ("b".into(), "4".into()),
                ("c".into(), "2,5".into())
            ]
        );
    }

    /// The in-memory merge gives what the streaming one gives, key groups
    /// and value order alike, on random runs with repeated keys.
    #[test]
    fn slice_merge_matches_the_streaming_merge() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..100 {
            // Up to 20 runs (loser trees of every shape), keys that share
            // their 8-byte prefix and differ after it.
            let runs: Vec<Vec<u8>> = (0..(next() % 21))
                .map(|r| {
                    let mut keys: Vec<String> = (0..(next() % 40))
                        .map(|_| match next() % 2 {
                            0 => format!("k{}", next() % 30),
                            _ => format!("prefix--{}", next() % 30),
                        })
                        .collect();
                    keys.sort();
                    let recs: Vec<(String, String)> = keys
                        .into_iter()
                        .enumerate()
                        .map(|(i, k)| (k, format!("r{r}v{i}")))
                        .collect();
                    let refs: Vec<(&str, &str)> =
                        recs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                    run(&refs)
                })
                .collect();
            type Groups = Vec<(Vec<u8>, Vec<Vec<u8>>)>;
            let (mut a, mut b): (Groups, Groups) = (Vec::new(), Vec::new());
            let na = merge_grouped(runs.iter().map(|r| &r[..]).collect(), &mut |k, vals| {
                a.push((k.to_vec(), vals.map(<[u8]>::to_vec).collect()));
                Ok(())
            })
            .unwrap();
            // Every other run as references into a block of its records.
            let as_refs: Vec<Option<(Vec<u8>, Vec<u8>)>> = runs
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let mut recs = Vec::new();
                    merge_records(vec![&r[..]], &mut |k, v| {
                        recs.push((k.to_vec(), v.to_vec()));
                        Ok(())
                    })
                    .unwrap();
                    (i % 2 == 1).then(|| crate::task::mapout::refs::for_records(&recs))
                })
                .collect();
            let mut slices: Vec<Run> = runs
                .iter()
                .zip(&as_refs)
                .map(|(r, b)| match b {
                    None => Run::encoded(r),
                    Some((block, refs)) => {
                        let src = crate::task::mapout::refs::Source { block, tail: &[] };
                        let sum = crate::task::mapout::refs::check(src, refs).unwrap().crc32c;
                        Run::Refs(RefRun::new(src, refs, sum).unwrap())
                    }
                })
                .collect();
            let nb = merge_grouped_slices(&mut slices, &mut |k, vals| {
                b.push((k.to_vec(), vals.map(<[u8]>::to_vec).collect()));
                Ok(())
            })
            .unwrap();
            assert_eq!((na, &a), (nb, &b));
            for r in &slices {
                if let Run::Refs(r) = r {
                    r.verify().unwrap();
                }
            }
        }
    }

    #[test]
    fn truncated_run_is_invalid_data() {
        let mut a = run(&[("abc", "def")]);
        a.truncate(a.len() - 1);
        let e = merge_records(vec![&a[..]], &mut |_, _| Ok(())).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidData);
        let e = merge_grouped_slices(&mut [Run::encoded(&a)], &mut |_, _| Ok(())).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidData);
    }
}

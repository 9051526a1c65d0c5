//! WordCount, the MapReduce "hello world" and the combiner's showcase: the
//! map counts words, the combiner and reducer add the counts up.
//!
//! The map combines in memory before it emits (the "in-mapper combining" of
//! Lin and Dyer, what Spark's map-side aggregation does): emitting
//! `(word, "1")` per occurrence would make the sort buffer order every word
//! of the input only for the combiner to add them up again. The held counts
//! are bounded ([`MAX_HELD_WORDS`]) and flushed through `emit` when full, so
//! memory stays bounded on any vocabulary; they are held in a [`Tally`],
//! whose short words cost a multiply and a compare each.

use super::lock;
use super::tally::Tally;
use super::{Builtin, Emit, Job, OutputFormat, TaskCtx};
use std::collections::HashMap;
use std::sync::Mutex;

/// Distinct words a map holds before flushing its counts.
pub const MAX_HELD_WORDS: usize = 1 << 18;

type Counts = Tally;

#[derive(Debug, Default)]
pub struct WordCount {
    /// Counts held per map task (by task index): one job object may serve
    /// several maps at once in `mr local`.
    held: Mutex<HashMap<u32, Counts>>,
}

fn emit_counts(counts: Counts, out: &mut dyn Emit) {
    let mut buf = [0u8; 20];
    counts.for_each(|w, n| out.emit(w, fmt_u64(n, &mut buf)));
}

/// ASCII whitespace as C's `isspace` (which includes `\x0b`, unlike
/// `u8::is_ascii_whitespace`): words are whatever lies between.
pub fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Bit `i` set when `b[i]` is whitespace: `\t` to `\r` are 9..=13, one
/// unsigned range check, and the space one compare, 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn space_mask(b: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86_64; the loads read 4 x 16 bytes of `b`.
    unsafe {
        let (sp, nine, four) = (
            _mm_set1_epi8(b' ' as i8),
            _mm_set1_epi8(9),
            _mm_set1_epi8(4),
        );
        let mut m = 0u64;
        for k in 0..4 {
            let v = _mm_loadu_si128(b.as_ptr().add(16 * k) as *const __m128i);
            let t = _mm_sub_epi8(v, nine);
            let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(t, four), t);
            let s = _mm_or_si128(ctrl, _mm_cmpeq_epi8(v, sp));
            m |= (_mm_movemask_epi8(s) as u32 as u64) << (16 * k);
        }
        m
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn space_mask(b: &[u8; 64]) -> u64 {
    b.iter()
        .enumerate()
        .fold(0, |m, (i, &c)| m | (is_space(c) as u64) << i)
}

/// Splits `line` into words and calls `f` on each.
pub fn for_each_word(line: &[u8], mut f: impl FnMut(&[u8])) {
    for_each_word_at(line, |s, e| f(&line[s..e]))
}

/// Calls `f(start, end)` on each word `line[start..end]`. Whitespace is
/// found 64 bytes at a time (a byte-by-byte loop was most of WordCount's
/// map): the edges of the whitespace mask, where a byte differs from the
/// one before it, alternate between a word's first byte and the byte past
/// its end. The engine benchmark's floor splits with it too.
#[inline(always)]
pub fn for_each_word_at(line: &[u8], mut f: impl FnMut(usize, usize)) {
    const NONE: usize = usize::MAX;
    let n = line.len();
    let (mut base, mut start, mut before) = (0usize, NONE, 1u64);
    while base < n {
        let s = match line.get(base..base + 64) {
            Some(b) => space_mask(b.try_into().expect("64 bytes")),
            None => {
                // Past the end counts as whitespace: it ends the last word.
                let mut b = [b' '; 64];
                b[..n - base].copy_from_slice(&line[base..]);
                space_mask(&b)
            }
        };
        let mut edges = s ^ ((s << 1) | before);
        before = s >> 63;
        while edges != 0 {
            let i = base + edges.trailing_zeros() as usize;
            edges &= edges - 1;
            if start == NONE {
                start = i;
            } else {
                f(start, i);
                start = NONE;
            }
        }
        base += 64;
    }
    // A word running to the end of a whole last block of 64.
    if start != NONE {
        f(start, n);
    }
}

/// Counts are decimal ASCII so the output is readable as-is; anything that is
/// not a digit is ignored rather than failing a reduce over foreign data.
fn parse_count(v: &[u8]) -> u64 {
    v.iter().filter(|c| c.is_ascii_digit()).fold(0u64, |n, &c| {
        n.wrapping_mul(10).wrapping_add((c - b'0') as u64)
    })
}

fn sum_counts(key: &[u8], values: &mut dyn Iterator<Item = &[u8]>, out: &mut dyn Emit) {
    let total: u64 = values.map(parse_count).fold(0, u64::wrapping_add);
    let mut buf = [0u8; 20];
    out.emit(key, fmt_u64(total, &mut buf));
}

fn fmt_u64(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

impl Job for WordCount {
    fn name(&self) -> &'static str {
        "wordcount"
    }
    fn output_format(&self, _p: &super::JobParams) -> OutputFormat {
        OutputFormat::TabLines
    }
    fn has_combiner(&self) -> bool {
        true
    }
    /// Words never span a `\n`, so a run of lines splits as its lines do.
    fn maps_runs_of_lines(&self) -> bool {
        true
    }
    fn map(&self, ctx: &mut TaskCtx, key: &[u8], _value: &[u8], out: &mut dyn Emit) {
        let full = {
            let mut held = lock(&self.held);
            let counts = held.entry(ctx.index).or_default();
            for_each_word_at(key, |s, e| counts.add_at(key, s, e));
            if counts.len() >= MAX_HELD_WORDS {
                held.remove(&ctx.index)
            } else {
                None
            }
        };
        if let Some(c) = full {
            emit_counts(c, out);
        }
    }
    fn map_finish(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        let held = lock(&self.held).remove(&ctx.index);
        if let Some(c) = held {
            emit_counts(c, out);
        }
    }
    fn reduce(
        &self,
        _ctx: &mut TaskCtx,
        key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        sum_counts(key, values, out)
    }
    fn combine(
        &self,
        _ctx: &mut TaskCtx,
        key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        sum_counts(key, values, out)
    }
}

impl Builtin for WordCount {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashMap};

    #[test]
    fn words_split_on_ascii_whitespace() {
        let mut w = vec![];
        for_each_word(b"  a\tbb\r\n\x0bccc\x0cd  e", |x| w.push(x.to_vec()));
        assert_eq!(
            w,
            vec![
                b"a".to_vec(),
                b"bb".to_vec(),
                b"ccc".to_vec(),
                b"d".to_vec(),
                b"e".to_vec()
            ]
        );
        let mut n = 0;
        for_each_word(b" \t ", |_| n += 1);
        for_each_word(b"", |_| n += 1);
        assert_eq!(n, 0);
    }

    /// The rule as it reads: a byte at a time.
    fn naive_words(line: &[u8]) -> Vec<Vec<u8>> {
        line.split(|&c| is_space(c))
            .filter(|w| !w.is_empty())
            .map(|w| w.to_vec())
            .collect()
    }

    #[test]
    fn every_byte_is_told_apart_and_every_length_split() {
        let mut line = Vec::new();
        for c in 0..=255u8 {
            line.extend_from_slice(b"ab");
            line.push(c);
            line.extend_from_slice(&[c; 70]);
            line.extend_from_slice(b"cd ");
        }
        for len in (0..200).chain([line.len() - 1, line.len()]) {
            for l in [&line[..len], &line[len..]] {
                let mut got = vec![];
                for_each_word(l, |w| got.push(w.to_vec()));
                assert_eq!(got, naive_words(l), "{len}");
            }
        }
    }

    #[test]
    fn counts_match_a_hashmap() {
        let text = "the quick brown fox\njumps over the lazy dog\n\nthe  end, the END\tfox\n";
        let mut want: HashMap<&str, u64> = HashMap::new();
        for w in text.split_ascii_whitespace() {
            *want.entry(w).or_default() += 1;
        }
        // map, then a combine on half of the pairs, then sort and reduce.
        let job = WordCount::default();
        let mut ctx = TaskCtx::default();
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = vec![];
        for line in text.lines() {
            job.map(&mut ctx, line.as_bytes(), b"", &mut |k: &[u8], v: &[u8]| {
                pairs.push((k.to_vec(), v.to_vec()))
            });
        }
        job.map_finish(&mut ctx, &mut |k: &[u8], v: &[u8]| {
            pairs.push((k.to_vec(), v.to_vec()))
        });
        let half = pairs.split_off(pairs.len() / 2);
        let mut groups: BTreeMap<Vec<u8>, Vec<Vec<u8>>> = BTreeMap::new();
        for (k, v) in pairs {
            groups.entry(k).or_default().push(v);
        }
        let mut combined: BTreeMap<Vec<u8>, Vec<Vec<u8>>> = BTreeMap::new();
        for (k, vs) in &groups {
            job.combine(
                &mut ctx,
                k,
                &mut vs.iter().map(|v| v.as_slice()),
                &mut |k: &[u8], v: &[u8]| combined.entry(k.to_vec()).or_default().push(v.to_vec()),
            );
        }
        for (k, v) in half {
            combined.entry(k).or_default().push(v);
        }
        let mut got: HashMap<String, u64> = HashMap::new();
        for (k, vs) in &combined {
            job.reduce(
                &mut ctx,
                k,
                &mut vs.iter().map(|v| v.as_slice()),
                &mut |k: &[u8], v: &[u8]| {
                    got.insert(
                        String::from_utf8(k.to_vec()).unwrap(),
                        std::str::from_utf8(v).unwrap().parse().unwrap(),
                    );
                },
            );
        }
        let want: HashMap<String, u64> =
            want.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        assert_eq!(got, want);
        assert_eq!(got["the"], 4);
    }

    #[test]
    fn decimal_round_trip() {
        let mut b = [0u8; 20];
        for n in [0, 1, 9, 10, 12345, u64::MAX] {
            assert_eq!(fmt_u64(n, &mut b), n.to_string().as_bytes());
            assert_eq!(parse_count(n.to_string().as_bytes()), n);
        }
    }
}

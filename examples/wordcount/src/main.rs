//! WordCount as a job program: the same counts as `mr job run wordcount`,
//! so the two can be benchmarked against each other and the difference is
//! the pipes between the worker and the program, not the job.
//!
//! The map combines in memory before it emits (Lin and Dyer's in-mapper
//! combining): emitting `(word, "1")` per occurrence would push every word
//! of the input through the pipe and the sort buffer only for the combiner
//! to add them up again. The held counts are bounded and flushed when full,
//! so memory stays bounded on any vocabulary.

use mrjob::{Emit, Job, TaskCtx};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Distinct words a map holds before it flushes its counts.
const MAX_HELD_WORDS: usize = 1 << 18;

/// FNV-1a: words are short, and SipHash's DoS resistance buys nothing for
/// a task counting its own input.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
    /// A slice's length prefix in one step rather than eight bytes' worth.
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
}

type Counts = HashMap<Vec<u8>, u64, BuildHasherDefault<Fnv>>;

struct WordCount {
    /// The map's held counts. A Mutex only because `Job` is `Sync`: one
    /// process runs one task, so it is never contended.
    held: Mutex<Counts>,
    /// [`MAX_HELD_WORDS`]; the tests make it small to exercise the flush.
    max_held: usize,
}

impl Default for WordCount {
    fn default() -> Self {
        WordCount {
            held: Mutex::default(),
            max_held: MAX_HELD_WORDS,
        }
    }
}

impl WordCount {
    /// A panic while the lock was held leaves nothing half-done that a
    /// later call would trip on, so a poisoned lock is still usable.
    fn held(&self) -> MutexGuard<'_, Counts> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The built-in WordCount's whitespace, C's `isspace` in the C locale
/// (which includes `\x0b`, unlike `u8::is_ascii_whitespace`): words are
/// whatever lies between, bytes and not characters, so any encoding counts.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn for_each_word(line: &[u8], mut f: impl FnMut(&[u8])) {
    let mut start = None;
    for (i, &c) in line.iter().enumerate() {
        match (is_space(c), start) {
            (true, Some(s)) => {
                f(&line[s..i]);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        f(&line[s..]);
    }
}

/// Drains rather than replaces the map, so its table is allocated once.
fn emit_counts(counts: &mut Counts, out: &mut dyn Emit) {
    let mut buf = [0u8; 20];
    for (w, n) in counts.drain() {
        out.emit(&w, fmt_u64(n, &mut buf));
    }
}

/// Decimal into a stack buffer: one count per output record, no allocation.
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

/// As the built-in: a byte that is not a digit is skipped rather than
/// failing a reduce over foreign data.
fn parse_count(v: &[u8]) -> u64 {
    v.iter().filter(|c| c.is_ascii_digit()).fold(0u64, |n, &c| {
        n.wrapping_mul(10).wrapping_add((c - b'0') as u64)
    })
}

fn sum_counts(key: &[u8], values: &mut dyn Iterator<Item = &[u8]>, out: &mut dyn Emit) {
    let total = values.map(parse_count).fold(0, u64::wrapping_add);
    let mut buf = [0u8; 20];
    out.emit(key, fmt_u64(total, &mut buf));
}

impl Job for WordCount {
    fn name(&self) -> &'static str {
        "example-wordcount"
    }
    fn has_combiner(&self) -> bool {
        true
    }
    fn map(&self, _ctx: &mut TaskCtx, line: &[u8], _value: &[u8], out: &mut dyn Emit) {
        let mut held = self.held();
        for_each_word(line, |w| match held.get_mut(w) {
            Some(n) => *n += 1,
            None => {
                held.insert(w.to_vec(), 1);
            }
        });
        if held.len() > self.max_held {
            emit_counts(&mut held, out);
        }
    }
    fn map_finish(&self, _ctx: &mut TaskCtx, out: &mut dyn Emit) {
        emit_counts(&mut self.held(), out);
    }
    fn reduce(
        &self,
        _ctx: &mut TaskCtx,
        word: &[u8],
        counts: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        sum_counts(word, counts, out)
    }
    fn combine(
        &self,
        _ctx: &mut TaskCtx,
        word: &[u8],
        counts: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        sum_counts(word, counts, out)
    }
}

fn main() {
    mrjob::run(WordCount::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mrjob::{run_records, Records, TaskMode};
    use std::collections::BTreeMap;

    /// xorshift64: seeded input without a crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// One task of `job` over `input`; the output sorted by key (stably,
    /// as the shuffle hands a reduce its input) unless it is a reduce's.
    fn task(job: &WordCount, mode: TaskMode, input: &Records) -> Records {
        let mut ctx = TaskCtx::default();
        let mut recs = run_records(job, mode, &mut ctx, input).unwrap();
        if mode != TaskMode::Reduce {
            recs.sort_by(|a, b| a.0.cmp(&b.0));
        }
        recs
    }

    /// Lines of words from a small vocabulary (so words repeat), a few
    /// random bytes (non-ASCII included), and every whitespace byte.
    fn text(seed: u64, lines: usize) -> Vec<Vec<u8>> {
        const VOCAB: &[&[u8]] = &[
            b"the",
            b"fox",
            b"a",
            b"1",
            b"01",
            b"\xc3\xa9t\xc3\xa9",
            b"\xc2\xa0",
            b"x\x00y",
        ];
        const SPACE: &[u8] = b" \t\r\x0b\x0c\n";
        let mut rng = Rng(seed);
        (0..lines)
            .map(|_| {
                let mut l = Vec::new();
                for _ in 0..rng.below(12) {
                    match rng.below(4) {
                        0 => l.push(SPACE[rng.below(SPACE.len())]),
                        1 => l.push(rng.next() as u8),
                        _ => l.extend_from_slice(VOCAB[rng.below(VOCAB.len())]),
                    }
                    if rng.below(2) == 0 {
                        l.push(SPACE[rng.below(SPACE.len())]);
                    }
                }
                l
            })
            .collect()
    }

    fn naive(lines: &[Vec<u8>]) -> BTreeMap<Vec<u8>, u64> {
        let mut want = BTreeMap::new();
        for l in lines {
            for w in l.split(|c| b" \t\n\r\x0b\x0c".contains(c)) {
                if !w.is_empty() {
                    *want.entry(w.to_vec()).or_default() += 1;
                }
            }
        }
        want
    }

    fn as_counts(out: Records) -> BTreeMap<Vec<u8>, u64> {
        let n = out.len();
        let got: BTreeMap<Vec<u8>, u64> = out
            .into_iter()
            .map(|(w, c)| (w, std::str::from_utf8(&c).unwrap().parse().unwrap()))
            .collect();
        assert_eq!(got.len(), n, "one record per word");
        got
    }

    #[test]
    fn counts_match_a_plain_count_with_and_without_flushes() {
        for (seed, max_held) in [(1, MAX_HELD_WORDS), (2, MAX_HELD_WORDS), (3, 4), (4, 0)] {
            let lines = text(seed, 500);
            let input: Records = lines.iter().map(|l| (l.clone(), vec![])).collect();
            let job = WordCount {
                max_held,
                ..Default::default()
            };
            let mapped = task(&job, TaskMode::Map, &input);
            if max_held == MAX_HELD_WORDS {
                // Nothing flushed early: one record per word of the map.
                assert!(mapped.windows(2).all(|w| w[0].0 != w[1].0));
            } else {
                assert!(mapped.windows(2).any(|w| w[0].0 == w[1].0));
            }
            let want = naive(&lines);
            assert_eq!(as_counts(task(&job, TaskMode::Reduce, &mapped)), want);
            // A combiner over the map's output changes nothing.
            let combined = task(&job, TaskMode::Combine, &mapped);
            assert_eq!(as_counts(task(&job, TaskMode::Reduce, &combined)), want);
        }
    }

    #[test]
    fn words_split_on_the_six_whitespace_bytes_only() {
        let job = WordCount::default();
        let input: Records = [
            &b""[..],
            b" \t ",
            b"  a\tbb\r\n\x0bccc\x0cd  a",
            b"\xc2\xa0nbsp\xc2\xa0",
            b"\x00",
        ]
        .iter()
        .map(|l| (l.to_vec(), vec![]))
        .collect();
        let out = task(&job, TaskMode::Reduce, &task(&job, TaskMode::Map, &input));
        let want: Records = [
            (&b"\x00"[..], &b"1"[..]),
            (b"a", b"2"),
            (b"bb", b"1"),
            (b"ccc", b"1"),
            (b"d", b"1"),
            (b"\xc2\xa0nbsp\xc2\xa0", b"1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();
        assert_eq!(out, want);
        assert!(task(&job, TaskMode::Map, &vec![]).is_empty());
    }

    #[test]
    fn counts_in_decimal_and_foreign_bytes_are_skipped() {
        let mut b = [0u8; 20];
        for n in [0, 1, 9, 10, 12345, u64::MAX] {
            assert_eq!(fmt_u64(n, &mut b), n.to_string().as_bytes());
            assert_eq!(parse_count(n.to_string().as_bytes()), n);
        }
        assert_eq!(parse_count(b" 1x2\n"), 12);
        assert_eq!(parse_count(b""), 0);
    }
}

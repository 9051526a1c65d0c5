//! WordCount's floor: each of two threads counts the words of half of the
//! mapped input, and the two tallies are added up and written as the job
//! writes them (`word<TAB>count` lines; here sorted by word, where the
//! job's parts are hash-partitioned and each sorted).
//!
//! The floor must be the tighter program, so it does no more than count:
//! whitespace is found 64 bytes at a time (a bit mask from SSE2 compares,
//! words are the runs between its edges), and a word of at most 8 bytes,
//! all of `mr gen randomtextwriter`'s, is one `u64` looked up in an open
//! table of its own (a multiply to hash it, one compare to find it, no
//! `memcmp`, no copy); longer words go to a hash map of byte slices
//! borrowing the input.

use super::THREADS;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// ASCII whitespace as C's `isspace`, the job's rule
/// (`joblib::jobs::wordcount::for_each_word`): words are what lies between.
const SPACE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = matches!(i as u8, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
        i += 1;
    }
    t
};

/// Bit `i` set when `b[i]` is whitespace: `\t` to `\r` are 9..=13, one
/// unsigned range check, and the space one compare, 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn space_mask(b: &[u8; 64]) -> u64 {
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
fn space_mask(b: &[u8; 64]) -> u64 {
    b.iter()
        .enumerate()
        .fold(0, |m, (i, &c)| m | (SPACE[c as usize] as u64) << i)
}

/// FxHash's step over 8 bytes at a time, for the words longer than 8
/// bytes: the map is private, so a multiply per 8 bytes beats SipHash.
#[derive(Default)]
pub struct WordHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl WordHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(SEED);
    }
}

impl Hasher for WordHasher {
    /// Folds the high bits down: a product's low bits depend only on the
    /// word's first bytes, and the table indexes buckets by the low bits.
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

type LongWords<'a> = HashMap<&'a [u8], u64, BuildHasherDefault<WordHasher>>;

/// One slot of [`ShortWords`]: a word of `len` bytes (0: empty) as a
/// little-endian `u64`, zero past its end.
#[derive(Clone, Copy, Default)]
struct Slot {
    word: u64,
    len: u64,
    count: u64,
}

/// Words of 1 to 8 bytes, linear probing, at most half full.
struct ShortWords {
    slots: Vec<Slot>,
    shift: u32,
    used: usize,
}

impl ShortWords {
    fn new() -> ShortWords {
        ShortWords {
            slots: vec![Slot::default(); 1 << 12],
            shift: 64 - 12,
            used: 0,
        }
    }

    #[inline(always)]
    fn add(&mut self, word: u64, len: u64, n: u64) {
        let mask = self.slots.len() - 1;
        let mut i = ((word ^ len).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize;
        loop {
            let s = &mut self.slots[i];
            if s.word == word && s.len == len {
                s.count += n;
                return;
            }
            if s.len == 0 {
                *s = Slot {
                    word,
                    len,
                    count: n,
                };
                self.used += 1;
                if self.used * 2 > self.slots.len() {
                    self.grow();
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let bigger = vec![Slot::default(); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        self.shift -= 1;
        self.used = 0;
        for s in old.into_iter().filter(|s| s.len != 0) {
            self.add(s.word, s.len, s.count);
        }
    }

    fn iter(&self) -> impl Iterator<Item = (Vec<u8>, u64)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.len != 0)
            .map(|s| (s.word.to_le_bytes()[..s.len as usize].to_vec(), s.count))
    }
}

/// One thread's tally.
pub struct Counter<'a> {
    short: ShortWords,
    long: LongWords<'a>,
}

impl Default for Counter<'_> {
    fn default() -> Self {
        Counter {
            short: ShortWords::new(),
            long: LongWords::default(),
        }
    }
}

impl<'a> Counter<'a> {
    /// Counts `text[start..end]`, a word.
    #[inline(always)]
    fn word(&mut self, text: &'a [u8], start: usize, end: usize) {
        let len = end - start;
        if len > 8 {
            *self.long.entry(&text[start..end]).or_insert(0) += 1;
            return;
        }
        let w = match text.get(start..start + 8) {
            Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")),
            None => {
                let mut b = [0u8; 8];
                b[..len].copy_from_slice(&text[start..end]);
                u64::from_le_bytes(b)
            }
        };
        self.short
            .add(w & (u64::MAX >> (64 - 8 * len)), len as u64, 1);
    }

    /// Every word counted, with its bytes.
    fn into_counts(self) -> impl Iterator<Item = (Vec<u8>, u64)> + 'a {
        let short: Vec<_> = self.short.iter().collect();
        short
            .into_iter()
            .chain(self.long.into_iter().map(|(w, n)| (w.to_vec(), n)))
    }
}

/// Adds the words of `text` to `c`: a word is a maximal run of
/// non-whitespace bytes, so the edges of the whitespace mask (a byte whose
/// whitespace-ness differs from the one before it) alternate between a
/// word's first byte and the byte just past its end.
pub fn count_words<'a>(text: &'a [u8], c: &mut Counter<'a>) {
    const NONE: usize = usize::MAX;
    let n = text.len();
    let (mut base, mut start, mut before) = (0usize, NONE, 1u64);
    while base < n {
        let s = match text.get(base..base + 64) {
            Some(b) => space_mask(b.try_into().expect("64 bytes")),
            None => {
                // Past the end counts as whitespace: it ends the last word.
                let mut b = [b' '; 64];
                b[..n - base].copy_from_slice(&text[base..]);
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
                c.word(text, start, i);
                start = NONE;
            }
        }
        base += 64;
    }
    // A word running to the end of a whole last block of 64.
    if start != NONE {
        c.word(text, start, n);
    }
}

/// Cuts `files` into `THREADS` shares of about equal bytes, cutting a file
/// only before a whitespace byte, so that no word is split (a file's end
/// ends its last word, as the job's record reader ends it).
fn split_at_spaces<'a>(files: &[&'a [u8]]) -> Vec<Vec<&'a [u8]>> {
    let total: usize = files.iter().map(|f| f.len()).sum();
    let per = total.div_ceil(THREADS).max(1);
    let mut shares = vec![Vec::new()];
    let mut room = per;
    for &f in files {
        let mut rest = f;
        while !rest.is_empty() {
            let last = shares.len() == THREADS;
            if room == 0 && !last {
                shares.push(Vec::new());
                room = per;
            }
            let mut cut = if shares.len() == THREADS {
                rest.len()
            } else {
                rest.len().min(room)
            };
            while cut < rest.len() && !SPACE[rest[cut] as usize] {
                cut += 1;
            }
            let (a, b) = rest.split_at(cut);
            shares.last_mut().expect("one share at least").push(a);
            room = room.saturating_sub(cut);
            rest = b;
        }
    }
    shares.resize_with(THREADS, Vec::new);
    shares
}

/// Counts every word of `files` (each ending its last word) with two
/// threads: the distinct words sorted by bytes with their counts, and the
/// number of words read.
pub fn count(files: &[&[u8]]) -> (Vec<(Vec<u8>, u64)>, u64) {
    let shares = split_at_spaces(files);
    let counted: Vec<Counter<'_>> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                s.spawn(move || {
                    let mut c = Counter::default();
                    for text in share {
                        count_words(text, &mut c);
                    }
                    c
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a counting thread panicked"))
            .collect()
    });
    let mut all: HashMap<Vec<u8>, u64, BuildHasherDefault<WordHasher>> = HashMap::default();
    for c in counted {
        for (w, n) in c.into_counts() {
            *all.entry(w).or_insert(0) += n;
        }
    }
    let words = all.values().sum();
    let mut sorted: Vec<(Vec<u8>, u64)> = all.into_iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    (sorted, words)
}

/// The job's output lines for `counts`: `word<TAB>count\n`.
pub fn render(counts: &[(Vec<u8>, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(counts.iter().map(|(w, _)| w.len() + 12).sum());
    for (w, n) in counts {
        out.extend_from_slice(w);
        out.push(b'\t');
        out.extend_from_slice(n.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use joblib::jobs::wordcount::for_each_word;
    use std::collections::BTreeMap;

    /// The job's own word splitter, counted naively, each file apart.
    fn naive(files: &[&[u8]]) -> BTreeMap<Vec<u8>, u64> {
        let mut m = BTreeMap::new();
        for text in files {
            for line in text.split(|&c| c == b'\n') {
                for_each_word(line, |w| *m.entry(w.to_vec()).or_insert(0) += 1);
            }
        }
        m
    }

    fn check(files: &[&[u8]]) {
        let (got, n) = count(files);
        let want = naive(files);
        let got_map: BTreeMap<Vec<u8>, u64> = got.iter().cloned().collect();
        assert_eq!(
            got_map,
            want,
            "{:?}",
            files.iter().map(|f| f.len()).collect::<Vec<_>>()
        );
        assert_eq!(n, want.values().sum::<u64>());
        assert!(got.windows(2).all(|p| p[0].0 < p[1].0), "sorted by word");
    }

    #[test]
    fn every_byte_is_told_apart_as_the_job_does() {
        let all: Vec<u8> = (0..=255u8).collect();
        let mut b = [0u8; 64];
        for chunk in all.chunks(64) {
            b.copy_from_slice(chunk);
            let m = space_mask(&b);
            for (i, &c) in chunk.iter().enumerate() {
                assert_eq!(m >> i & 1 == 1, SPACE[c as usize], "byte {c:#x}");
            }
        }
        // Every byte as a word's neighbour, in runs crossing 64-byte blocks.
        let mut text = Vec::new();
        for c in 0..=255u8 {
            text.extend_from_slice(b"ab");
            text.push(c);
            text.extend_from_slice(&[c; 70]);
            text.extend_from_slice(b"cd ");
        }
        check(&[&text]);
    }

    #[test]
    fn counts_equal_a_naive_count() {
        let mut text =
            b"the quick\tbrown fox\r\njumps\x0bover the\x0clazy dog\n\n  the END end \n".to_vec();
        // Long words, and words holding bytes that are not text.
        text.extend_from_slice(b"abcdefgh abcdefghi abcdefgh\x00 abcdefgh\x00 a\x00 a \x80\xff\n");
        // Generated lines as the benchmark's input (randomtextwriter's vocabulary).
        let words = joblib::jobs::gen::vocabulary();
        let mut x = 7u64;
        for i in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.extend_from_slice(&words[(x >> 33) as usize % words.len()]);
            text.push(if i % 17 == 0 { b'\n' } else { b' ' });
        }
        // Every cut point: a split must never cut a word in two, nor a
        // word at a buffer's end be read past it.
        for len in [0, 1, 3, 4, 9, 10, 40, 63, 64, 65, 127, 128, 129, text.len()] {
            check(&[&text[..len]]);
            check(&[&text[len..]]);
        }
        // A file's end ends a word: "fox" and "jumps" stay two words.
        for cut in [0, 1, 19, 200, text.len() / 2, text.len() - 1] {
            check(&[&text[..cut], b"", &text[cut..]]);
        }
        let (got, _) = count(&[&text]);
        assert_eq!(got.iter().find(|(w, _)| w == b"the").unwrap().1, 3);
    }

    #[test]
    fn the_short_table_grows() {
        let mut text = Vec::new();
        for i in 0..20_000u32 {
            text.extend_from_slice(format!("w{i} x{} ", i % 7).as_bytes());
        }
        check(&[&text]);
    }

    #[test]
    fn shares_end_at_whitespace() {
        for files in [
            vec![&b"aaaa bbbb"[..]],
            vec![b"aaaaaaaaa"],
            vec![b""],
            vec![],
            vec![b"a b"],
            vec![b"  ab  "],
            vec![b"ab", b"cd", b"ef gh"],
        ] {
            let shares = split_at_spaces(&files);
            assert_eq!(shares.len(), THREADS);
            assert_eq!(shares.concat().concat(), files.concat());
            for s in &shares[1..] {
                assert!(
                    s.first().is_none_or(
                        |p| p.first().is_none_or(|&c| SPACE[c as usize]) || files.contains(p)
                    ),
                    "{shares:?}"
                );
            }
        }
    }

    #[test]
    fn renders_the_jobs_lines() {
        assert_eq!(
            render(&[(b"a".to_vec(), 2), (b"bc".to_vec(), 10)]),
            b"a\t2\nbc\t10\n"
        );
    }
}

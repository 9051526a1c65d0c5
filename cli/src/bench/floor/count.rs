//! WordCount's floor: each of two threads counts the words of half of the
//! text in a hash map of byte slices borrowing the input (no copy of a
//! word, no allocation per word), the two maps are added up, and the counts
//! written as the job writes them (`word<TAB>count` lines; here sorted by
//! word, where the job's parts are hash-partitioned and each sorted).

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

/// FxHash's step over 8 bytes at a time: the words are short and the map
/// private, so a multiply per word beats SipHash (and the job's FNV, which
/// takes a multiply per byte).
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

pub type Counts<'a> = HashMap<&'a [u8], u64, BuildHasherDefault<WordHasher>>;

/// Adds the words of `text` to `counts`; returns how many there were.
pub fn count_words<'a>(text: &'a [u8], counts: &mut Counts<'a>) -> u64 {
    let (mut i, n, mut words) = (0, text.len(), 0);
    while i < n {
        while i < n && SPACE[text[i] as usize] {
            i += 1;
        }
        let start = i;
        while i < n && !SPACE[text[i] as usize] {
            i += 1;
        }
        if start < i {
            *counts.entry(&text[start..i]).or_insert(0) += 1;
            words += 1;
        }
    }
    words
}

/// Cuts `text` into `THREADS` pieces at whitespace, so no word is split.
fn split_at_spaces(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(THREADS);
    let mut rest = text;
    for t in (1..=THREADS).rev() {
        let mut cut = rest.len() / t;
        while cut < rest.len() && !SPACE[rest[cut] as usize] {
            cut += 1;
        }
        let (a, b) = rest.split_at(cut);
        out.push(a);
        rest = b;
    }
    out
}

/// Counts every word of `text` with two threads: the distinct words sorted
/// by bytes with their counts, and the number of words read.
pub fn count(text: &[u8]) -> (Vec<(&[u8], u64)>, u64) {
    let parts = split_at_spaces(text);
    let counted: Vec<(Counts<'_>, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| {
                s.spawn(move || {
                    let mut c = Counts::default();
                    let n = count_words(part, &mut c);
                    (c, n)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a counting thread panicked"))
            .collect()
    });
    let mut it = counted.into_iter();
    let (mut all, mut words) = it.next().unwrap_or_default();
    for (c, n) in it {
        words += n;
        for (w, k) in c {
            *all.entry(w).or_insert(0) += k;
        }
    }
    let mut sorted: Vec<(&[u8], u64)> = all.into_iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    (sorted, words)
}

/// The job's output lines for `counts`: `word<TAB>count\n`.
pub fn render(counts: &[(&[u8], u64)]) -> Vec<u8> {
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

    /// The job's own word splitter, counted naively.
    fn naive(text: &[u8]) -> BTreeMap<Vec<u8>, u64> {
        let mut m = BTreeMap::new();
        for line in text.split(|&c| c == b'\n') {
            for_each_word(line, |w| *m.entry(w.to_vec()).or_insert(0) += 1);
        }
        m
    }

    #[test]
    fn counts_equal_a_naive_count() {
        let mut text =
            b"the quick\tbrown fox\r\njumps\x0bover the\x0clazy dog\n\n  the END end \n".to_vec();
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
        // Every cut point: a split must never cut a word in two.
        for len in [0, 1, 3, 4, 9, 10, 40, text.len()] {
            let t = &text[..len];
            let (got, n) = count(t);
            let want = naive(t);
            let got_map: BTreeMap<Vec<u8>, u64> =
                got.iter().map(|(w, k)| (w.to_vec(), *k)).collect();
            assert_eq!(got_map, want, "first {len} bytes");
            assert_eq!(n, want.values().sum::<u64>());
            assert!(got.windows(2).all(|p| p[0].0 < p[1].0), "sorted by word");
        }
        let (got, _) = count(&text);
        assert_eq!(got.iter().find(|(w, _)| *w == b"the").unwrap().1, 3);
    }

    #[test]
    fn halves_end_at_whitespace() {
        for text in [&b"aaaa bbbb"[..], b"aaaaaaaaa", b"", b"a b", b"  ab  "] {
            let parts = split_at_spaces(text);
            assert_eq!(parts.len(), THREADS);
            assert_eq!(parts.concat(), text);
            for p in &parts[1..] {
                assert!(p.first().is_none_or(|&c| SPACE[c as usize]), "{parts:?}");
            }
        }
    }

    #[test]
    fn renders_the_jobs_lines() {
        assert_eq!(render(&[(b"a", 2), (b"bc", 10)]), b"a\t2\nbc\t10\n");
    }
}

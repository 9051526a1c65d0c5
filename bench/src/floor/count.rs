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

//!
//! The splitting and the short words' table are the job's own
//! (`joblib::jobs::wordcount::for_each_word_at`, `joblib::jobs::tally`):
//! the floor differs from the job only in what a job adds around them.

use super::THREADS;
use joblib::jobs::tally::{short_word, ShortWords, WordHasher};
use joblib::jobs::wordcount::{for_each_word_at, is_space};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

type LongWords<'a> = HashMap<&'a [u8], u64, BuildHasherDefault<WordHasher>>;

/// One thread's tally.
#[derive(Default)]
pub struct Counter<'a> {
    short: ShortWords,
    long: LongWords<'a>,
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
        self.short.add(short_word(text, start, end), len as u64, 1);
    }

    /// Every word counted, with its bytes.
    fn into_counts(self) -> impl Iterator<Item = (Vec<u8>, u64)> + 'a {
        let mut short = Vec::with_capacity(self.short.len());
        self.short.for_each(|w, n| short.push((w.to_vec(), n)));
        short
            .into_iter()
            .chain(self.long.into_iter().map(|(w, n)| (w.to_vec(), n)))
    }
}

/// Adds the words of `text` (maximal runs of non-whitespace bytes, split
/// as the job splits them) to `c`. The closure is inlined by force: left
/// to LLVM, it stayed a call per word in this crate (where the job's map,
/// the same two functions, has it inlined), and the floor ran slower
/// than the job it bounds (1.19-1.37 s against 0.97-0.99 s on 1 GiB,
/// 2026-11-29).
pub fn count_words<'a>(text: &'a [u8], c: &mut Counter<'a>) {
    for_each_word_at(
        text,
        #[inline(always)]
        |start, end| c.word(text, start, end),
    );
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
            while cut < rest.len() && !is_space(rest[cut]) {
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
    use joblib::jobs::wordcount::space_mask;
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
                assert_eq!(m >> i & 1 == 1, is_space(c), "byte {c:#x}");
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
                        |p| p.first().is_none_or(|&c| is_space(c)) || files.contains(p)
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

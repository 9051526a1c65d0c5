//! WordCount's held counts. Most words are short (all of `mr gen
//! randomtextwriter`'s are 4 or 6 bytes), and a hash map of byte vectors
//! pays for each one a hash over a length and a tail, a `memcmp` and, for
//! a new word, an allocation. A word of at most 8 bytes is instead one
//! `u64` in an open table of its own: a multiply to place it and one
//! compare to find it. Longer words go to a map keyed by their bytes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash's step, 8 bytes at a time, for the long words: SipHash's DoS
/// resistance buys nothing for a task counting its own input.
#[derive(Default)]
pub struct WordHasher(u64);

impl WordHasher {
    #[inline(always)]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for WordHasher {
    /// Folds the high bits down: a product's low bits depend only on the
    /// word's first bytes, and the map picks buckets by the low bits.
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

/// One slot of the short words' table: a word of `len` bytes (0: an empty
/// slot) as a little-endian `u64`, zero past its end.
#[derive(Clone, Copy, Default)]
struct Slot {
    word: u64,
    len: u64,
    count: u64,
}

/// The words of 1 to 8 bytes, each one `u64`: an open table, linear
/// probing, at most half full. The engine benchmark's floor counts with it
/// too.
pub struct ShortWords {
    slots: Vec<Slot>,
    shift: u32,
    used: usize,
}

impl Default for ShortWords {
    fn default() -> Self {
        ShortWords {
            slots: vec![Slot::default(); 1 << 12],
            shift: 64 - 12,
            used: 0,
        }
    }
}

impl ShortWords {
    /// Distinct words held.
    pub fn len(&self) -> usize {
        self.used
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// Adds `n` to the word `word` of `len` bytes (see [`short_word`]).
    #[inline(always)]
    pub fn add(&mut self, word: u64, len: u64, n: u64) {
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

    /// Doubles the table, at most half full after.
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

    /// Calls `f` on every word held with its count, in no order.
    pub fn for_each(&self, mut f: impl FnMut(&[u8], u64)) {
        for s in self.slots.iter().filter(|s| s.len != 0) {
            f(&s.word.to_le_bytes()[..s.len as usize], s.count);
        }
    }
}

/// The word `text[start..end]` of 1 to 8 bytes as [`ShortWords`] keys it:
/// little-endian, zero past its end. Read as the 8 bytes from `start`
/// where `text` has them, so pass the whole line.
#[inline(always)]
pub fn short_word(text: &[u8], start: usize, end: usize) -> u64 {
    let len = end - start;
    let w = match text.get(start..start + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")),
        None => {
            let mut b = [0u8; 8];
            b[..len].copy_from_slice(&text[start..end]);
            u64::from_le_bytes(b)
        }
    };
    w & (u64::MAX >> (64 - 8 * len))
}

/// Word counts, short words apart (see the module's comment).
#[derive(Default)]
pub struct Tally {
    short: ShortWords,
    long: HashMap<Vec<u8>, u64, BuildHasherDefault<WordHasher>>,
}

impl std::fmt::Debug for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tally").field("words", &self.len()).finish()
    }
}

impl Tally {
    /// Distinct words held.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counts the word `text[start..end]` once. The word is read as the 8
    /// bytes from `start` where `text` has them, so pass the whole line.
    #[inline(always)]
    pub fn add_at(&mut self, text: &[u8], start: usize, end: usize) {
        let len = end - start;
        if len > 8 || len == 0 {
            self.add_long(&text[start..end]);
            return;
        }
        self.short.add(short_word(text, start, end), len as u64, 1);
    }

    #[cold]
    fn add_long(&mut self, w: &[u8]) {
        match self.long.get_mut(w) {
            Some(n) => *n += 1,
            None => {
                self.long.insert(w.to_vec(), 1);
            }
        }
    }

    /// Calls `f` on every word held with its count, in no order.
    pub fn for_each(&self, mut f: impl FnMut(&[u8], u64)) {
        self.short.for_each(&mut f);
        for (w, &n) in &self.long {
            f(w, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn counts_short_and_long_words_apart_and_grows() {
        let mut text = Vec::new();
        for i in 0..30_000u32 {
            text.extend_from_slice(
                format!("w{i} x{} averyverylongword{} ", i % 7, i % 3).as_bytes(),
            );
        }
        text.extend_from_slice(b"a\x00 a abcdefgh abcdefgh\x00 ab");
        let mut t = Tally::default();
        let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut at = 0;
        for w in text.split(|&c| c == b' ') {
            if !w.is_empty() {
                t.add_at(&text, at, at + w.len());
                *want.entry(w.to_vec()).or_default() += 1;
            }
            at += w.len() + 1;
        }
        let mut got = BTreeMap::new();
        t.for_each(|w, n| {
            assert!(got.insert(w.to_vec(), n).is_none(), "{w:?} twice");
        });
        assert_eq!(got, want);
        assert_eq!(t.len(), want.len());
        assert_eq!(got[&b"ab"[..]], 1, "the last word, read short of 8 bytes");
    }
}

//! Independent checks of a benchmark job's output: no cell's figure is kept
//! unless its output is exactly what the input implies.
//!
//! The oracle of an input is computed once, on the client, from the input's
//! bytes read back from the cluster (without filling caches):
//! - WordCount: the count of every word, compared with the output parts
//!   word for word.
//! - Sort and TeraSort: the record count and the sum of per-record CRCs,
//!   handed to the cluster's validator (`sortvalidate`, `teravalidate`),
//!   which checks the order and that the output holds the same multiset.

use anyhow::{bail, Context};
use joblib::jobs::formats::kv_iter;
use joblib::jobs::terasort::{record_crc, KEY_LEN as TERA_KEY, RECORD_LEN as TERA_RECORD};
use joblib::jobs::wordcount::for_each_word;
use std::collections::HashMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordCounts(pub HashMap<Vec<u8>, u64>);

impl WordCounts {
    pub fn of_text(text: &[u8]) -> Self {
        let mut m: HashMap<Vec<u8>, u64> = HashMap::new();
        for_each_word(text, |w| {
            if let Some(n) = m.get_mut(w) {
                *n += 1;
            } else {
                m.insert(w.to_vec(), 1);
            }
        });
        WordCounts(m)
    }

    pub fn add(&mut self, other: &WordCounts) {
        for (w, n) in &other.0 {
            *self.0.entry(w.clone()).or_default() += n;
        }
    }

    /// Parses WordCount output (`word<TAB>count` lines), refusing a word
    /// that appears twice across the parts.
    pub fn of_output(parts: &[bytes::Bytes]) -> anyhow::Result<Self> {
        let mut m = HashMap::new();
        for part in parts {
            for line in part.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
                let tab = line
                    .iter()
                    .rposition(|&c| c == b'\t')
                    .with_context(|| format!("output line without a tab: {:?}", lossy(line)))?;
                let n: u64 = std::str::from_utf8(&line[tab + 1..])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .with_context(|| format!("output line with a bad count: {:?}", lossy(line)))?;
                if m.insert(line[..tab].to_vec(), n).is_some() {
                    bail!(
                        "word {:?} appears in more than one output line",
                        lossy(&line[..tab])
                    );
                }
            }
        }
        Ok(WordCounts(m))
    }

    /// The first differences between `self` (expected) and `got`, or None.
    pub fn diff(&self, got: &WordCounts) -> Option<String> {
        let mut out = Vec::new();
        for (w, n) in &self.0 {
            match got.0.get(w) {
                Some(g) if g == n => {}
                Some(g) => out.push(format!("{:?}: expected {n}, got {g}", lossy(w))),
                None => out.push(format!("{:?}: expected {n}, missing", lossy(w))),
            }
        }
        for w in got.0.keys().filter(|w| !self.0.contains_key(*w)) {
            out.push(format!("{:?}: not in the input", lossy(w)));
        }
        if out.is_empty() {
            return None;
        }
        out.sort();
        let n = out.len();
        out.truncate(5);
        Some(format!("{n} word(s) differ: {}", out.join("; ")))
    }

    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }
}

/// Record count and checksum of a sort input, as the validators sum them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordSum {
    pub records: u64,
    pub checksum: u64,
}

impl RecordSum {
    /// Over length-prefixed records (RandomWriter, the Sort input).
    pub fn of_kv(data: &[u8]) -> anyhow::Result<Self> {
        let mut s = RecordSum::default();
        for r in kv_iter(data) {
            let (k, v) = r.context("the sort input holds a malformed record")?;
            s.add(k, v);
        }
        Ok(s)
    }

    /// Over 100-byte TeraGen records.
    pub fn of_tera(data: &[u8]) -> anyhow::Result<Self> {
        if !data.len().is_multiple_of(TERA_RECORD) {
            bail!(
                "the terasort input is {} bytes, not a whole number of {TERA_RECORD}-byte records",
                data.len()
            );
        }
        let mut s = RecordSum::default();
        for r in data.chunks_exact(TERA_RECORD) {
            s.add(&r[..TERA_KEY], &r[TERA_KEY..]);
        }
        Ok(s)
    }

    fn add(&mut self, k: &[u8], v: &[u8]) {
        self.records += 1;
        self.checksum = self.checksum.wrapping_add(record_crc(k, v) as u64);
    }

    pub fn merge(&mut self, o: RecordSum) {
        self.records += o.records;
        self.checksum = self.checksum.wrapping_add(o.checksum);
    }

    /// The validator parameters that make it compare with this sum.
    pub fn params(&self) -> [(String, String); 2] {
        [
            ("expect_records".into(), self.records.to_string()),
            ("expect_checksum".into(), self.checksum.to_string()),
        ]
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(40)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use joblib::jobs::formats::kv_encode;

    #[test]
    fn word_counts_match_output_and_name_differences() {
        let want = WordCounts::of_text(b"a b  a\nc\ta\n");
        assert_eq!(want.total(), 5);
        let good = WordCounts::of_output(&["a\t3\nc\t1\n".into(), "b\t1\n".into()]).unwrap();
        assert_eq!(want.diff(&good), None);
        let bad = WordCounts::of_output(&["a\t2\nc\t1\nz\t1\n".into()]).unwrap();
        let d = want.diff(&bad).unwrap();
        assert!(d.starts_with("3 word(s) differ"), "{d}");
        assert!(d.contains("\"a\": expected 3, got 2") && d.contains("\"b\": expected 1, missing"));
        assert!(d.contains("\"z\": not in the input"));
    }

    #[test]
    fn malformed_or_duplicate_output_is_refused() {
        assert!(WordCounts::of_output(&["a 3\n".into()]).is_err());
        assert!(WordCounts::of_output(&["a\tx\n".into()]).is_err());
        assert!(WordCounts::of_output(&["a\t1\n".into(), "a\t2\n".into()]).is_err());
    }

    #[test]
    fn record_sums_add_up_across_pieces() {
        let mut kv = Vec::new();
        kv_encode(b"k1", b"v1", &mut kv);
        let mid = kv.len();
        kv_encode(b"k2", b"value two", &mut kv);
        let all = RecordSum::of_kv(&kv).unwrap();
        let mut parts = RecordSum::of_kv(&kv[..mid]).unwrap();
        parts.merge(RecordSum::of_kv(&kv[mid..]).unwrap());
        assert_eq!(all, parts);
        assert_eq!(all.records, 2);
        assert!(RecordSum::of_kv(&kv[..mid + 3]).is_err());

        let tera: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        assert_eq!(RecordSum::of_tera(&tera).unwrap().records, 3);
        assert!(RecordSum::of_tera(&tera[..150]).is_err());
    }
}

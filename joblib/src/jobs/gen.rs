//! Data generators, as Hadoop's RandomTextWriter and RandomWriter: map-only
//! jobs whose maps each produce their share of `params.size` bytes.
//!
//! Output depends only on `(seed, map index, maps, size)`, never on which
//! worker runs the map or how often it is retried, so a re-run map writes the
//! same part and benchmark inputs can be regenerated instead of stored.

use super::{Builtin, Emit, InputFormat, Job, JobParams, OutputFormat, TaskCtx};
use std::sync::OnceLock;

/// The splitmix64 finaliser: a bijection on u64 with good avalanche, so that
/// consecutive row numbers or seeds give unrelated outputs.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A local PRNG (splitmix64 stream) rather than a crate's: the generated
/// data must not change when a dependency changes its algorithm.
pub(crate) struct Rng(u64);

impl Rng {
    /// One independent stream per (seed, map index).
    pub(crate) fn for_task(seed: u64, index: u32) -> Rng {
        Rng(splitmix64(
            seed ^ splitmix64(0x5EED_0000_0000_0000 | index as u64),
        ))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix64(self.0)
    }

    /// Uniform in `lo..=hi` (multiply-shift: no modulo bias worth noting).
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let n = hi - lo + 1;
        lo + ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    pub(crate) fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let b = self.next_u64().to_le_bytes();
            let n = rest.len();
            rest.copy_from_slice(&b[..n]);
        }
    }
}

/// Bytes (or rows) map `index` of `maps` produces out of `total`: the shares
/// differ by at most one and add up to `total` exactly.
pub(crate) fn share(total: u64, maps: u32, index: u32) -> (u64, u64) {
    let maps = maps.max(1) as u128;
    let at = |i: u128| (i * total as u128 / maps) as u64;
    (at(index as u128), at(index as u128 + 1))
}

/// The 1000-word vocabulary, built from syllables rather than copied from
/// Hadoop: what WordCount and Sort need is a fixed set of short words drawn
/// uniformly, not any particular words.
pub fn vocabulary() -> &'static [Vec<u8>] {
    static WORDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let cons = b"bcdfghjklmnprstvwxyz";
        let vows = b"aeiou";
        let syl = |i: usize| [cons[i / 5], vows[i % 5]];
        (0..1000usize)
            .map(|i| {
                let (q, b) = (i / 100, i % 100);
                // For a fixed second syllable `b`, the first is distinct for
                // every `q`, so every word is distinct.
                let mut w = syl((10 * q + 7 * b) % 100).to_vec();
                w.extend_from_slice(&syl(b));
                if i % 3 == 0 {
                    w.extend_from_slice(&syl((i * 37) % 100));
                }
                w
            })
            .collect()
    })
}

/// Hadoop's RandomTextWriter: lines of a 5-10 word "key" sentence, a TAB and
/// a 20-100 word "value" sentence, so the output suits both WordCount and
/// `sort --format lines`.
#[derive(Debug, Default)]
pub struct RandomTextWriter;

impl Job for RandomTextWriter {
    fn name(&self) -> &'static str {
        "randomtextwriter"
    }
    fn input_format(&self, _p: &JobParams) -> InputFormat {
        InputFormat::Generated
    }
    fn output_format(&self, _p: &JobParams) -> OutputFormat {
        OutputFormat::KeyLines
    }
    fn map_only(&self) -> bool {
        true
    }
    fn map(&self, _ctx: &mut TaskCtx, _key: &[u8], _value: &[u8], _out: &mut dyn Emit) {}

    fn generate(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        let (lo, hi) = share(ctx.params.size, ctx.params.maps, ctx.index);
        let target = hi - lo;
        let words = vocabulary();
        let mut rng = Rng::for_task(ctx.params.seed, ctx.index);
        let mut line = Vec::with_capacity(1024);
        let (mut produced, mut records) = (0u64, 0u64);
        while produced < target {
            line.clear();
            let n = rng.range(5, 10);
            push_sentence(&mut line, &mut rng, words, n);
            line.push(b'\t');
            let n = rng.range(20, 100);
            push_sentence(&mut line, &mut rng, words, n);
            out.emit(&line, b"");
            produced += line.len() as u64 + 1;
            records += 1;
        }
        ctx.count("records", records);
        ctx.count("bytes", produced);
    }
}

impl Builtin for RandomTextWriter {}

fn push_sentence(line: &mut Vec<u8>, rng: &mut Rng, words: &[Vec<u8>], n: u64) {
    for i in 0..n {
        if i > 0 {
            line.push(b' ');
        }
        line.extend_from_slice(&words[rng.range(0, words.len() as u64 - 1) as usize]);
    }
}

/// Hadoop's RandomWriter: KvRecords with random 10-1000 byte keys and
/// 0-20000 byte values, until the map's share of bytes is written.
#[derive(Debug, Default)]
pub struct RandomWriter;

impl Job for RandomWriter {
    fn name(&self) -> &'static str {
        "randomwriter"
    }
    fn input_format(&self, _p: &JobParams) -> InputFormat {
        InputFormat::Generated
    }
    fn output_format(&self, _p: &JobParams) -> OutputFormat {
        OutputFormat::KvRecords
    }
    fn map_only(&self) -> bool {
        true
    }
    fn map(&self, _ctx: &mut TaskCtx, _key: &[u8], _value: &[u8], _out: &mut dyn Emit) {}

    fn generate(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        let (lo, hi) = share(ctx.params.size, ctx.params.maps, ctx.index);
        let target = hi - lo;
        let mut rng = Rng::for_task(ctx.params.seed, ctx.index);
        let mut key = vec![0u8; 1000];
        let mut value = vec![0u8; 20000];
        let (mut produced, mut records) = (0u64, 0u64);
        while produced < target {
            let k = rng.range(10, 1000) as usize;
            let v = rng.range(0, 20000) as usize;
            rng.fill(&mut key[..k]);
            rng.fill(&mut value[..v]);
            out.emit(&key[..k], &value[..v]);
            // Counted as encoded, so `size` is the size of the files.
            produced += 8 + k as u64 + v as u64;
            records += 1;
        }
        ctx.count("records", records);
        ctx.count("bytes", produced);
    }
}

impl Builtin for RandomWriter {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::formats::{kv_iter, write_record};

    fn run(job: &dyn Job, size: u64, maps: u32, seed: u64) -> Vec<Vec<u8>> {
        (0..maps)
            .map(|i| {
                let mut ctx = TaskCtx {
                    params: JobParams {
                        size,
                        seed,
                        maps,
                        ..Default::default()
                    },
                    index: i,
                    ..Default::default()
                };
                let mut part = Vec::new();
                let f = job.output_format(&ctx.params);
                job.generate(&mut ctx, &mut |k: &[u8], v: &[u8]| {
                    write_record(f, k, v, &mut part)
                });
                assert_eq!(ctx.counters["bytes"], part.len() as u64);
                part
            })
            .collect()
    }

    #[test]
    fn vocabulary_is_1000_distinct_words() {
        let v = vocabulary();
        assert_eq!(v.len(), 1000);
        let set: std::collections::HashSet<_> = v.iter().collect();
        assert_eq!(set.len(), 1000);
        assert!(v.iter().all(|w| w.iter().all(u8::is_ascii_lowercase)));
    }

    #[test]
    fn random_text_is_deterministic_and_sized() {
        let a = run(&RandomTextWriter, 100_000, 3, 7);
        assert_eq!(a, run(&RandomTextWriter, 100_000, 3, 7));
        assert_ne!(a, run(&RandomTextWriter, 100_000, 3, 8));
        for p in &a {
            let share = 100_000 / 3;
            assert!(
                p.len() as u64 >= share && (p.len() as u64) < share + 2000,
                "{}",
                p.len()
            );
            for line in p.strip_suffix(b"\n").unwrap().split(|&c| c == b'\n') {
                let (k, v) = line.split_at(line.iter().position(|&c| c == b'\t').unwrap());
                let nk = k.split(|&c| c == b' ').count();
                let nv = v[1..].split(|&c| c == b' ').count();
                assert!(
                    (5..=10).contains(&nk) && (20..=100).contains(&nv),
                    "{nk} {nv}"
                );
            }
        }
    }

    #[test]
    fn random_writer_records_are_in_range() {
        let parts = run(&RandomWriter, 300_000, 2, 1);
        for p in &parts {
            assert!(p.len() >= 150_000);
            for r in kv_iter(p) {
                let (k, v) = r.unwrap();
                assert!((10..=1000).contains(&k.len()) && v.len() <= 20000);
            }
        }
        assert_eq!(parts, run(&RandomWriter, 300_000, 2, 1));
    }

    #[test]
    fn shares_add_up() {
        let total: u64 = (0..7).map(|i| share(1000, 7, i)).map(|(a, b)| b - a).sum();
        assert_eq!(total, 1000);
        assert_eq!(share(1000, 7, 0).0, 0);
        assert_eq!(share(1000, 7, 6).1, 1000);
    }
}

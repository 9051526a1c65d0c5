//! The synthetic job of a SWIM trace replay, as SWIM's `WorkGen` does it:
//! a job that reads its input and writes as much shuffle and output as one
//! trace row says, so that a replay moves the bytes the traced job moved
//! without knowing what that job computed.
//!
//! Input: TeraGen's 100-byte records (the pool `mr bench trace` reads).
//! The map emits each record `copies(shuffle_ratio, record, MAP_SALT)`
//! times, the reduce emits each value it gets `copies(output_ratio, ...,
//! REDUCE_SALT)` times. A ratio's fraction is taken per record from a hash
//! of its bytes, not from a running credit, so the output depends only on
//! the input records and never on how they were split into maps or spread
//! over reduces: that is what lets the harness compute the expected output
//! (records and checksum) from the input alone and validate every job.

use super::{Builtin, Emit, InputFormat, Job, JobParams, OutputFormat, TaskCtx};

/// TeraGen's record and key lengths.
pub const RECORD: usize = 100;
pub const KEY: usize = 10;

/// Salts that make the map's and the reduce's choices independent.
pub const MAP_SALT: u32 = 0x6d61_7000;
pub const REDUCE_SALT: u32 = 0x7265_6400;

/// The largest ratio a job accepts: a row whose shuffle is a thousand times
/// its input would make a thousand copies of every record, which the
/// harness caps before it gets here (see `bench::trace`).
pub const MAX_RATIO: f64 = 64.0;

#[derive(Debug, Default)]
pub struct Swim;

/// How many copies of a record (key and value) a stage with `ratio` emits:
/// the whole part of the ratio, plus one when the record's salted hash,
/// read as a fraction of 2^32, falls under the ratio's fractional part.
/// Summed over many records this is `ratio` times their count.
pub fn copies(ratio: f64, key: &[u8], value: &[u8], salt: u32) -> u64 {
    let whole = ratio.floor();
    let frac = ratio - whole;
    // CRC32C is affine in its initial value, so salting the CRC alone would
    // tie the map's choice to the reduce's; splitmix64's finaliser over the
    // CRC and the salt makes them independent.
    let mut z = (crc32c::crc32c_append(crc32c::crc32c(key), value) as u64) ^ ((salt as u64) << 32);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    whole as u64 + u64::from(((z >> 11) as f64) < frac * (1u64 << 53) as f64)
}

/// A ratio parameter: absent means 1. Clients check it with
/// [`check_params`] before submitting; a task that still gets a bad one
/// clamps it into `[0, MAX_RATIO]` (unreadable: 1) rather than fail.
pub fn ratio(p: &JobParams, name: &str) -> f64 {
    match p.extra.get(name).and_then(|v| v.parse::<f64>().ok()) {
        Some(r) if r.is_finite() => r.clamp(0.0, MAX_RATIO),
        _ => 1.0,
    }
}

/// The clear error a client gets for a bad ratio, before any task runs.
pub fn check_params(p: &JobParams) -> Result<(), String> {
    for name in ["shuffle_ratio", "output_ratio"] {
        if let Some(v) = p.extra.get(name) {
            match v.parse::<f64>() {
                Ok(r) if r.is_finite() && (0.0..=MAX_RATIO).contains(&r) => {}
                _ => {
                    return Err(format!(
                        "{name} must be a number from 0 to {MAX_RATIO}, not {v:?}"
                    ))
                }
            }
        }
    }
    Ok(())
}

impl Job for Swim {
    fn name(&self) -> &'static str {
        "swim"
    }
    fn input_format(&self, _p: &JobParams) -> InputFormat {
        InputFormat::Fixed {
            len: RECORD,
            key_len: KEY,
        }
    }
    fn output_format(&self, _p: &JobParams) -> OutputFormat {
        OutputFormat::Raw
    }
    fn map(&self, ctx: &mut TaskCtx, key: &[u8], value: &[u8], out: &mut dyn Emit) {
        let n = copies(ratio(&ctx.params, "shuffle_ratio"), key, value, MAP_SALT);
        for _ in 0..n {
            out.emit(key, value);
        }
    }
    fn reduce(
        &self,
        ctx: &mut TaskCtx,
        key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        let r = ratio(&ctx.params, "output_ratio");
        for v in values {
            for _ in 0..copies(r, key, v, REDUCE_SALT) {
                out.emit(key, v);
            }
        }
    }
}

impl Builtin for Swim {}

/// What a job over `input` (whole 100-byte records) must write with these
/// ratios: (records, the wrapping sum of each record's CRC32C over key then
/// value), the figures `bench::oracle::RecordSum` computes from the
/// output.
pub fn expected(input: &[u8], shuffle_ratio: f64, output_ratio: f64) -> (u64, u64) {
    let (mut records, mut sum) = (0u64, 0u64);
    for r in input.chunks_exact(RECORD) {
        let (k, v) = r.split_at(KEY);
        let n = copies(shuffle_ratio, k, v, MAP_SALT) * copies(output_ratio, k, v, REDUCE_SALT);
        let crc = crc32c::crc32c_append(crc32c::crc32c(k), v) as u64;
        records += n;
        sum = sum.wrapping_add(crc.wrapping_mul(n));
    }
    (records, sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(n: usize, seed: u64) -> Vec<u8> {
        // A 64-bit LCG: enough for distinct records, and no dependency.
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n * RECORD)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (x >> 56) as u8
            })
            .collect()
    }

    fn run(input: &[u8], p: &JobParams, split: usize) -> Vec<Vec<u8>> {
        // Maps over `split`-record pieces, then one reduce over all keys in
        // order, as the executor would.
        let mut ctx = TaskCtx {
            params: p.clone(),
            ..Default::default()
        };
        let mut mid: Vec<(Vec<u8>, Vec<u8>)> = vec![];
        for piece in input.chunks(split * RECORD) {
            for r in piece.chunks_exact(RECORD) {
                Swim.map(&mut ctx, &r[..KEY], &r[KEY..], &mut |k: &[u8], v: &[u8]| {
                    mid.push((k.to_vec(), v.to_vec()))
                });
            }
        }
        mid.sort();
        let mut out = vec![];
        let mut i = 0;
        while i < mid.len() {
            let j = (i..mid.len())
                .find(|&j| mid[j].0 != mid[i].0)
                .unwrap_or(mid.len());
            let key = mid[i].0.clone();
            let mut vals = mid[i..j].iter().map(|x| x.1.as_slice());
            Swim.reduce(&mut ctx, &key, &mut vals, &mut |k: &[u8], v: &[u8]| {
                out.push([k, v].concat())
            });
            i = j;
        }
        out
    }

    #[test]
    fn ratios_hold_on_average_and_the_output_matches_the_expected_sum_whatever_the_split() {
        let input = records(4000, 3);
        let mut p = JobParams::default();
        p.extra.insert("shuffle_ratio".into(), "2.5".into());
        p.extra.insert("output_ratio".into(), "0.2".into());
        let a = run(&input, &p, 7);
        let b = run(&input, &p, 1000);
        let mut sa = a.clone();
        let mut sb = b.clone();
        sa.sort();
        sb.sort();
        assert_eq!(sa, sb, "the output must not depend on the split");
        // 4000 records x 2.5 x 0.2 = 2000, within a few percent.
        assert!((a.len() as f64 - 2000.0).abs() < 150.0, "{}", a.len());
        let (n, sum) = expected(&input, 2.5, 0.2);
        assert_eq!(n, a.len() as u64);
        let got = a.iter().fold(0u64, |s, r| {
            s.wrapping_add(crc32c::crc32c_append(crc32c::crc32c(&r[..KEY]), &r[KEY..]) as u64)
        });
        assert_eq!(got, sum);
    }

    #[test]
    fn whole_ratios_are_exact_and_zero_writes_nothing() {
        let input = records(100, 4);
        assert_eq!(expected(&input, 3.0, 1.0).0, 300);
        assert_eq!(expected(&input, 0.0, 5.0).0, 0);
        let mut p = JobParams::default();
        p.extra.insert("shuffle_ratio".into(), "0".into());
        assert!(run(&input, &p, 10).is_empty());
    }

    #[test]
    fn bad_ratios_are_refused_with_their_name() {
        let mut p = JobParams::default();
        assert!(check_params(&p).is_ok());
        p.extra.insert("output_ratio".into(), "-1".into());
        assert!(check_params(&p).unwrap_err().contains("output_ratio"));
        p.extra.insert("output_ratio".into(), "1e9".into());
        assert!(check_params(&p).is_err());
        p.extra.insert("output_ratio".into(), "x".into());
        assert!(check_params(&p).is_err());
    }
}

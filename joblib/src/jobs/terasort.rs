//! The TeraSort suite: TeraGen writes gensort-layout records, TeraSort sorts
//! them into totally ordered parts, TeraValidate checks the result (and, with
//! SortValidate, the output of `sort`).
//!
//! Both validators work as Hadoop's TeraValidate: each map summarises its
//! block as one record (first key, last key, count, checksum, whether it saw
//! keys out of order), and a single reducer, receiving the summaries in map
//! order, checks that every block starts at or after where the previous one
//! ended. The map output is thus a few bytes per block whatever the data size.

use super::gen::{share, splitmix64};
use super::lock;
use super::sort::{split_tab, total_order};
use super::{Builtin, Emit, InputFormat, Job, JobParams, OutputFormat, Partitioning, TaskCtx};
use std::collections::HashMap;
use std::sync::Mutex;

/// gensort's record: 100 bytes, the first 10 the key.
pub const RECORD_LEN: usize = 100;
pub const KEY_LEN: usize = 10;
const TERA_FORMAT: InputFormat = InputFormat::Fixed {
    len: RECORD_LEN,
    key_len: KEY_LEN,
};

/// The checksum both TeraSort (on its input) and TeraValidate (on the sorted
/// output) sum: equal sums mean no record was lost, duplicated or altered.
/// It is the CRC32C of the record (key then value). The sort pays it on
/// every record, where the `crc32c` crate's entry and tail handling for
/// short slices cost three times the CRC itself: 10.7 M records of 100
/// bytes took 208 ms through the crate, 67 ms by the SSE4.2 instruction
/// straight (2026-11-26, this project's 2-core test VM); the crate's
/// function was 7.7 % of a 1 GiB TeraSort's CPU samples
/// (`scripts/profile.sh --job terasort`).
pub fn record_crc(key: &[u8], value: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sse4.2") {
        // SAFETY: the CPU has SSE4.2, checked just above.
        return unsafe { record_crc_sse42(key, value) };
    }
    crc32c::crc32c_append(crc32c::crc32c(key), value)
}

/// CRC32C of `key` then `value`, eight bytes per instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn record_crc_sse42(key: &[u8], value: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    let mut crc = !0u32;
    for part in [key, value] {
        let words = part.chunks_exact(8);
        let tail = words.remainder();
        let mut c = u64::from(crc);
        for w in words {
            c = _mm_crc32_u64(c, u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        crc = c as u32;
        for &b in tail {
            crc = _mm_crc32_u8(crc, b);
        }
    }
    !crc
}

#[derive(Debug, Default)]
pub struct TeraSort;

impl Job for TeraSort {
    fn name(&self) -> &'static str {
        "terasort"
    }
    fn input_format(&self, _p: &JobParams) -> InputFormat {
        TERA_FORMAT
    }
    fn output_format(&self, _p: &JobParams) -> OutputFormat {
        OutputFormat::Raw
    }
    fn partitioning(&self, _p: &JobParams) -> Partitioning {
        Partitioning::TotalOrder
    }
    fn map(&self, ctx: &mut TaskCtx, key: &[u8], value: &[u8], out: &mut dyn Emit) {
        ctx.count("input_records", 1);
        ctx.count("input_checksum", record_crc(key, value) as u64);
        out.emit(key, value);
    }
}

impl Builtin for TeraSort {
    fn validator(&self) -> Option<&'static str> {
        Some("teravalidate")
    }
}

#[derive(Debug, Default)]
pub struct TeraGen;

/// Row `row`'s record. The key depends on `(seed, row)` only, so the data is
/// the same whatever the number of maps.
pub fn tera_record(seed: u64, row: u64, rec: &mut [u8; RECORD_LEN]) {
    let k = splitmix64(seed ^ 0x7E4A_9E11_D00D_F00D);
    let a = splitmix64(row ^ k);
    let b = splitmix64(a ^ k.rotate_left(17));
    rec[..8].copy_from_slice(&a.to_be_bytes());
    rec[8..10].copy_from_slice(&b.to_be_bytes()[..2]);
    rec[10..12].copy_from_slice(&[0x00, 0x11]);
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let r = row as u128;
    for (i, c) in rec[12..44].iter_mut().enumerate() {
        *c = HEX[((r >> (4 * (31 - i))) & 0xF) as usize];
    }
    rec[44..48].copy_from_slice(&[0x88, 0x99, 0xAA, 0xBB]);
    // As gensort: 12 groups of 4 equal letters, from nibbles of the row.
    for i in 0..12 {
        let c = b'A' + ((row >> (44 - 4 * i)) & 0xF) as u8;
        rec[48 + 4 * i..52 + 4 * i].fill(c);
    }
    rec[96..100].copy_from_slice(&[0xCC, 0xDD, 0xEE, 0xFF]);
}

impl Job for TeraGen {
    fn name(&self) -> &'static str {
        "teragen"
    }
    fn input_format(&self, _p: &JobParams) -> InputFormat {
        InputFormat::Generated
    }
    fn output_format(&self, _p: &JobParams) -> OutputFormat {
        OutputFormat::Raw
    }
    fn map_only(&self) -> bool {
        true
    }
    fn map(&self, _ctx: &mut TaskCtx, _key: &[u8], _value: &[u8], _out: &mut dyn Emit) {}
    fn generate(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        let rows = ctx.params.size / RECORD_LEN as u64;
        let (lo, hi) = share(rows, ctx.params.maps, ctx.index);
        let mut rec = [0u8; RECORD_LEN];
        for r in lo..hi {
            tera_record(ctx.params.seed, r, &mut rec);
            out.emit(&rec[..KEY_LEN], &rec[KEY_LEN..]);
        }
        ctx.count("records", hi - lo);
    }
}

impl Builtin for TeraGen {}

/// A run of records in input order, encoded as one byte string so that it can
/// travel as a map output value: `records u64, checksum u64, first unsorted
/// position u64 (MAX: none), first key length u32` (all LE), the first key,
/// then the last key.
struct Summary<'a> {
    records: u64,
    checksum: u64,
    unsorted: Option<u64>,
    first: &'a [u8],
    last: &'a [u8],
}

const HEADER: usize = 28;

impl<'a> Summary<'a> {
    fn decode(b: &'a [u8]) -> Option<Summary<'a>> {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if b.len() < HEADER {
            return None;
        }
        let flen = u32::from_le_bytes(b[24..28].try_into().expect("4 bytes")) as usize;
        let rest = &b[HEADER..];
        if flen > rest.len() {
            return None;
        }
        let u = u64_at(16);
        Some(Summary {
            records: u64_at(0),
            checksum: u64_at(8),
            unsorted: (u != u64::MAX).then_some(u),
            first: &rest[..flen],
            last: &rest[flen..],
        })
    }

    /// Appends `s` (the records that follow) to the summary encoded in `acc`.
    /// `across`: whether `s.first` must not sort before the last key so far
    /// (false where runs are sorted separately, as hash-partitioned parts).
    fn merge_into(acc: &mut Vec<u8>, s: &Summary<'_>, across: bool) {
        if acc.is_empty() {
            acc.extend_from_slice(&s.records.to_le_bytes());
            acc.extend_from_slice(&s.checksum.to_le_bytes());
            acc.extend_from_slice(&s.unsorted.unwrap_or(u64::MAX).to_le_bytes());
            acc.extend_from_slice(&(s.first.len() as u32).to_le_bytes());
            acc.extend_from_slice(s.first);
            acc.extend_from_slice(s.last);
            return;
        }
        let a = Summary::decode(acc).expect("encoded here");
        let (records, flen) = (a.records, a.first.len());
        let unsorted = a.unsorted.or_else(|| {
            if across && s.first < a.last {
                Some(records)
            } else {
                s.unsorted.map(|u| records + u)
            }
        });
        let checksum = a.checksum.wrapping_add(s.checksum);
        acc[0..8].copy_from_slice(&(records + s.records).to_le_bytes());
        acc[8..16].copy_from_slice(&checksum.to_le_bytes());
        acc[16..24].copy_from_slice(&unsorted.unwrap_or(u64::MAX).to_le_bytes());
        acc.truncate(HEADER + flen);
        acc.extend_from_slice(s.last);
    }
}

/// What the two validators share. The running summaries live here, keyed by
/// task, because `map` and `reduce` are called per record and [`TaskCtx`]
/// has no room for them; the registry makes a fresh job per lookup, and the
/// key keeps tasks that share one instance (as `mr local` does) apart.
#[derive(Debug, Default)]
struct Validator {
    running: Mutex<HashMap<(bool, u32), Vec<u8>>>,
}

impl Validator {
    fn add_record(&self, ctx: &TaskCtx, key: &[u8], value: &[u8]) {
        let s = Summary {
            records: 1,
            checksum: record_crc(key, value) as u64,
            unsorted: None,
            first: key,
            last: key,
        };
        let mut m = lock(&self.running);
        Summary::merge_into(m.entry((true, ctx.index)).or_default(), &s, true);
    }

    fn finish_map(&self, ctx: &TaskCtx, out: &mut dyn Emit) {
        let s = lock(&self.running).remove(&(true, ctx.index));
        if let Some(s) = s {
            out.emit(&(ctx.index as u64).to_be_bytes(), &s);
        }
    }

    fn add_summaries(
        &self,
        ctx: &mut TaskCtx,
        values: &mut dyn Iterator<Item = &[u8]>,
        across: bool,
    ) {
        let mut m = lock(&self.running);
        let acc = m.entry((false, ctx.index)).or_default();
        for v in values {
            match Summary::decode(v) {
                Some(s) => Summary::merge_into(acc, &s, across),
                None => ctx.count("bad_summaries", 1),
            }
        }
    }

    fn finish_reduce(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        let acc = lock(&self.running)
            .remove(&(false, ctx.index))
            .unwrap_or_default();
        let (records, checksum, unsorted) = match Summary::decode(&acc) {
            Some(s) => (s.records, s.checksum, s.unsorted),
            None => (0, 0, None),
        };
        let mut line = |s: String| out.emit(s.as_bytes(), b"");
        line(format!("records {records}"));
        line(format!("checksum {checksum:x}"));
        line(format!("sorted {}", unsorted.is_none()));
        if let Some(u) = unsorted {
            line(format!("first unsorted record {u}"));
        }
        ctx.count("records", records);
        ctx.count("checksum", checksum);
        ctx.count("unsorted", unsorted.is_some() as u64);
        // The master passes what the sort counted on its input, if it knows.
        let expect = |k: &str| ctx.params.extra.get(k).and_then(|v| v.parse::<u64>().ok());
        let (er, ec) = (expect("expect_records"), expect("expect_checksum"));
        let mut mismatch = false;
        if let Some(e) = er {
            if e != records {
                mismatch = true;
                line(format!(
                    "records mismatch: the sort read {e}, its output holds {records}"
                ));
            }
        }
        if let Some(e) = ec {
            if e != checksum {
                mismatch = true;
                line(format!(
                    "checksum mismatch: the sort read {e:x}, its output sums to {checksum:x}"
                ));
            }
        }
        if er.is_some() || ec.is_some() {
            ctx.count("mismatch", mismatch as u64);
        }
    }
}

/// Checks TeraSort output: sorted across all blocks in map order (the input
/// parts taken in path order), plus the record count and checksum.
#[derive(Debug, Default)]
pub struct TeraValidate(Validator);

impl Job for TeraValidate {
    fn name(&self) -> &'static str {
        "teravalidate"
    }
    fn input_format(&self, _p: &JobParams) -> InputFormat {
        TERA_FORMAT
    }
    fn output_format(&self, _p: &JobParams) -> OutputFormat {
        OutputFormat::KeyLines
    }
    fn map(&self, ctx: &mut TaskCtx, key: &[u8], value: &[u8], _out: &mut dyn Emit) {
        self.0.add_record(ctx, key, value);
    }
    fn map_finish(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        self.0.finish_map(ctx, out);
    }
    fn reduce(
        &self,
        ctx: &mut TaskCtx,
        _key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        _out: &mut dyn Emit,
    ) {
        self.0.add_summaries(ctx, values, true);
    }
    fn reduce_finish(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        self.0.finish_reduce(ctx, out);
    }
}

impl Builtin for TeraValidate {
    fn is_validator(&self) -> bool {
        true
    }
    fn fixed_reducers(&self) -> Option<u32> {
        Some(1)
    }
    fn inherited_counters(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("input_records", "expect_records"),
            ("input_checksum", "expect_checksum"),
        ]
    }
}

/// Checks `sort` output (KvRecords, or TAB lines with `format_lines`). Each
/// block must be sorted; the order across blocks is checked only with
/// `total_order=true`, since hash-partitioned parts are sorted separately and
/// a map does not know where one part ends.
#[derive(Debug, Default)]
pub struct SortValidate(Validator);

impl Job for SortValidate {
    fn name(&self) -> &'static str {
        "sortvalidate"
    }
    fn input_format(&self, p: &JobParams) -> InputFormat {
        if p.format_lines {
            InputFormat::Lines
        } else {
            InputFormat::KvRecords
        }
    }
    fn output_format(&self, _p: &JobParams) -> OutputFormat {
        OutputFormat::KeyLines
    }
    fn map(&self, ctx: &mut TaskCtx, key: &[u8], value: &[u8], _out: &mut dyn Emit) {
        if ctx.params.format_lines {
            let (k, v) = split_tab(key);
            self.0.add_record(ctx, k, v);
        } else {
            self.0.add_record(ctx, key, value);
        }
    }
    fn map_finish(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        self.0.finish_map(ctx, out);
    }
    fn reduce(
        &self,
        ctx: &mut TaskCtx,
        _key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        _out: &mut dyn Emit,
    ) {
        let across = total_order(&ctx.params);
        self.0.add_summaries(ctx, values, across);
    }
    fn reduce_finish(&self, ctx: &mut TaskCtx, out: &mut dyn Emit) {
        self.0.finish_reduce(ctx, out);
    }
}

impl Builtin for SortValidate {
    fn is_validator(&self) -> bool {
        true
    }
    fn fixed_reducers(&self) -> Option<u32> {
        Some(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::formats::read_split;

    /// The fast path is the CRC32C of key then value at every length
    /// (whole words, tails, empty parts).
    #[test]
    fn record_crc_is_the_crc32c_of_key_then_value() {
        let bytes: Vec<u8> = (0..200u32).map(|i| (i * 37 + i / 7) as u8).collect();
        for k in [0, 1, 7, 8, 10, 17] {
            for v in [0, 3, 8, 90, 101] {
                let (key, value) = (&bytes[..k], &bytes[k..k + v]);
                assert_eq!(
                    record_crc(key, value),
                    crc32c::crc32c(&bytes[..k + v]),
                    "key {k} bytes, value {v}"
                );
            }
        }
    }

    fn teragen(size: u64, maps: u32, seed: u64) -> Vec<u8> {
        let mut all = vec![];
        for i in 0..maps {
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
            TeraGen.generate(&mut ctx, &mut |k: &[u8], v: &[u8]| {
                assert_eq!((k.len(), v.len()), (10, 90));
                all.extend_from_slice(k);
                all.extend_from_slice(v);
            });
        }
        all
    }

    #[test]
    fn record_layout() {
        let mut rec = [0u8; 100];
        tera_record(1, 0x1234_ABCD, &mut rec);
        assert_eq!(&rec[10..12], &[0x00, 0x11]);
        assert_eq!(&rec[12..44], b"0000000000000000000000001234ABCD");
        assert_eq!(&rec[44..48], &[0x88, 0x99, 0xAA, 0xBB]);
        assert!(rec[48..96].iter().all(|c| (b'A'..=b'P').contains(c)));
        assert!(rec[48..96].chunks(4).all(|g| g.iter().all(|&c| c == g[0])));
        assert_eq!(&rec[96..], &[0xCC, 0xDD, 0xEE, 0xFF]);
        let mut other = [0u8; 100];
        tera_record(1, 0x1234_ABCE, &mut other);
        assert_ne!(rec[..10], other[..10]);
        tera_record(2, 0x1234_ABCD, &mut other);
        assert_ne!(rec[..10], other[..10]);
    }

    #[test]
    fn teragen_is_independent_of_maps() {
        let one = teragen(100 * 1000 + 37, 1, 9);
        assert_eq!(one.len(), 100 * 1000);
        assert_eq!(one, teragen(100 * 1000 + 37, 3, 9));
        assert_eq!(one, teragen(100 * 1000 + 37, 7, 9));
        assert_ne!(one, teragen(100 * 1000, 1, 10));
    }

    #[test]
    fn terasort_map_counts_and_splits_the_key() {
        let data = teragen(1000, 1, 3);
        let mut ctx = TaskCtx::default();
        let mut got = vec![];
        read_split(
            TeraSort.input_format(&ctx.params),
            &data,
            0,
            &mut || None,
            &mut |k, v| {
                TeraSort.map(&mut ctx, k, v, &mut |k: &[u8], v: &[u8]| {
                    got.push((k.to_vec(), v.to_vec()))
                })
            },
        )
        .unwrap();
        assert_eq!(got.len(), 10);
        assert_eq!(got[3].0, data[300..310].to_vec());
        assert_eq!(got[3].1, data[310..400].to_vec());
        let sum: u64 = data.chunks(100).map(|r| crc32c::crc32c(r) as u64).sum();
        assert_eq!(ctx.counters["input_records"], 10);
        assert_eq!(ctx.counters["input_checksum"], sum);
    }

    /// Runs `job` over `data` cut into blocks of `bs`, one map per block, then
    /// the single reducer over the summaries in map order.
    fn validate(
        job: &dyn Job,
        params: JobParams,
        data: &[u8],
        bs: usize,
    ) -> (Vec<String>, TaskCtx) {
        let format = job.input_format(&params);
        let mut summaries = vec![];
        let blocks: Vec<&[u8]> = data.chunks(bs).collect();
        for (i, b) in blocks.iter().enumerate() {
            let mut ctx = TaskCtx {
                params: params.clone(),
                index: i as u32,
                ..Default::default()
            };
            let mut rest = blocks[i + 1..]
                .iter()
                .map(|b| bytes::Bytes::copy_from_slice(b));
            let mut emit = |k: &[u8], v: &[u8]| summaries.push((k.to_vec(), v.to_vec()));
            read_split(
                format,
                b,
                (i * bs) as u64,
                &mut || rest.next(),
                &mut |k, v| job.map(&mut ctx, k, v, &mut emit),
            )
            .unwrap();
            job.map_finish(&mut ctx, &mut emit);
        }
        summaries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut ctx = TaskCtx {
            params,
            ..Default::default()
        };
        let mut lines = vec![];
        let mut emit = |k: &[u8], _: &[u8]| lines.push(String::from_utf8(k.to_vec()).unwrap());
        for (k, v) in &summaries {
            job.reduce(&mut ctx, k, &mut std::iter::once(v.as_slice()), &mut emit);
        }
        job.reduce_finish(&mut ctx, &mut emit);
        (lines, ctx)
    }

    fn sorted_tera(n: u64) -> Vec<u8> {
        let data = teragen(n * 100, 1, 5);
        let mut recs: Vec<&[u8]> = data.chunks(100).collect();
        recs.sort();
        recs.concat()
    }

    #[test]
    fn teravalidate_accepts_sorted_output() {
        let data = sorted_tera(50);
        let sum: u64 = data.chunks(100).map(|r| crc32c::crc32c(r) as u64).sum();
        for bs in [100, 130, 1000, 5000] {
            let mut p = JobParams::default();
            p.extra.insert("expect_records".into(), "50".into());
            p.extra.insert("expect_checksum".into(), sum.to_string());
            let (lines, ctx) = validate(&TeraValidate::default(), p, &data, bs);
            assert_eq!(
                lines,
                vec![
                    "records 50".to_string(),
                    format!("checksum {sum:x}"),
                    "sorted true".into()
                ]
            );
            assert_eq!(ctx.counters["unsorted"], 0);
            assert_eq!(ctx.counters["mismatch"], 0);
            assert_eq!(ctx.counters["records"], 50);
            assert_eq!(ctx.counters["checksum"], sum);
        }
    }

    #[test]
    fn teravalidate_detects_an_unsorted_pair() {
        let mut data = sorted_tera(50);
        // Swap records 20 and 21: inside a block or across a boundary.
        let (a, b) = data.split_at_mut(2100);
        a[2000..2100].swap_with_slice(&mut b[..100]);
        for bs in [100, 1000, 2100, 2000, 5000] {
            let (lines, ctx) = validate(&TeraValidate::default(), JobParams::default(), &data, bs);
            assert_eq!(lines[2], "sorted false", "block size {bs}");
            assert_eq!(lines[3], "first unsorted record 21", "block size {bs}");
            assert_eq!(ctx.counters["unsorted"], 1);
        }
        let mut p = JobParams::default();
        p.extra.insert("expect_records".into(), "51".into());
        let (lines, ctx) = validate(&TeraValidate::default(), p, &sorted_tera(50), 1000);
        assert!(lines.iter().any(|l| l.starts_with("records mismatch")));
        assert_eq!(ctx.counters["mismatch"], 1);
    }

    #[test]
    fn sortvalidate_checks_blocks() {
        let mut data = vec![];
        let mut ends = vec![];
        for i in 0..40u32 {
            crate::jobs::formats::kv_encode(&(i % 20).to_be_bytes(), b"v", &mut data);
            ends.push(data.len());
        }
        // Two sorted runs of 20 records (as two hash-partitioned parts).
        let half = ends[19];
        let (lines, ctx) = validate(&SortValidate::default(), JobParams::default(), &data, half);
        assert_eq!(
            lines[..3],
            [
                "records 40".to_string(),
                lines[1].clone(),
                "sorted true".into()
            ]
        );
        assert_eq!(ctx.counters["unsorted"], 0);
        let mut p = JobParams::default();
        p.extra.insert("total_order".into(), "true".into());
        let (lines, _) = validate(&SortValidate::default(), p, &data, half);
        assert_eq!(
            lines[2..],
            [
                "sorted false".to_string(),
                "first unsorted record 20".into()
            ]
        );
        let (lines, _) = validate(
            &SortValidate::default(),
            JobParams::default(),
            &data,
            data.len(),
        );
        assert_eq!(lines[3], "first unsorted record 20");
    }
}

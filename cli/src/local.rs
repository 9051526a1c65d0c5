//! `mr local`: a job in one process over an in-memory input, with no cluster,
//! no disk spills and no network. It is the speed baseline the distributed
//! runs are compared with, so it avoids per-record allocation: map output goes
//! into one byte arena per map thread, indexed by small fixed-size entries
//! that are what gets sorted and merged.
//!
//! The input is cut into one chunk per thread (at any byte for lines and
//! fixed records, whose readers settle the boundaries exactly as between
//! blocks; at record boundaries for KvRecords); each chunk is a map with its
//! own index, so validators see chunks as they would see blocks.

use bytes::Bytes;
use joblib::jobs::formats::{self, read_split, write_record, FormatError};
use joblib::jobs::{Emit, InputFormat, Job, JobParams, OutputFormat, Partitioning, TaskCtx};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The output parts (in partition order, or map order for map-only jobs) and
/// the job counters summed over all tasks.
#[derive(Debug, Default)]
pub struct LocalRun {
    pub parts: Vec<Vec<u8>>,
    pub counters: BTreeMap<String, u64>,
}

/// Tuning that tests shrink to exercise the multi-chunk and combine paths on
/// small inputs.
#[derive(Debug, Clone, Copy)]
pub struct LocalOptions {
    pub threads: usize,
    /// Inputs smaller than this per thread use fewer chunks.
    pub min_chunk: usize,
    /// Arena bytes per map at which the combiner compacts the map output
    /// (what Hadoop does at each spill).
    pub combine_at: usize,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(8),
            min_chunk: 1 << 20,
            combine_at: 64 << 20,
        }
    }
}

/// Runs `job` over `input` (one file) and returns the output parts' bytes.
/// `splits` are the total-order split points; if they do not match
/// `reducers`, they are chosen from a sample of the map output instead.
///
/// Panics on malformed input (say a TeraSort input that is not a multiple of
/// 100 bytes); [`try_run_local`] returns the error instead.
pub fn run_local(
    job: &dyn Job,
    params: &JobParams,
    input: &[u8],
    reducers: u32,
    splits: &[Vec<u8>],
) -> Vec<Vec<u8>> {
    match try_run_local(
        job,
        params,
        input,
        reducers,
        splits,
        LocalOptions::default(),
    ) {
        Ok(r) => r.parts,
        Err(e) => panic!("{} over the local input: {e}", job.name()),
    }
}

pub fn try_run_local(
    job: &dyn Job,
    params: &JobParams,
    input: &[u8],
    reducers: u32,
    splits: &[Vec<u8>],
    opts: LocalOptions,
) -> Result<LocalRun, FormatError> {
    let threads = opts.threads.max(1);
    let format = job.input_format(params);
    let oformat = job.output_format(params);
    let mut counters = BTreeMap::new();
    let new_ctx = |index: usize| task_ctx(params, index);

    if format == InputFormat::Generated {
        return Ok(generate(job, params, threads, oformat));
    }

    let chunks = cut(format, input, threads, opts.min_chunk)?;
    let map_chunk = |c: usize, emit: &mut dyn Emit, ctx: &mut TaskCtx| -> Result<(), FormatError> {
        let (s, e) = (chunks[c], chunks[c + 1]);
        let mut pos = e;
        let mut next = || -> Option<Bytes> {
            if pos >= input.len() {
                return None;
            }
            let end = (pos + (64 << 10)).min(input.len());
            let b = Bytes::copy_from_slice(&input[pos..end]);
            pos = end;
            Some(b)
        };
        read_split(format, &input[s..e], s as u64, &mut next, &mut |k, v| {
            job.map(ctx, k, v, emit)
        })?;
        job.map_finish(ctx, emit);
        Ok(())
    };
    let nchunks = chunks.len() - 1;

    if job.map_only() {
        return map_only(params, nchunks, threads, oformat, &map_chunk);
    }

    let reducers = reducers.max(1) as usize;
    let total_order = job.partitioning(params) == Partitioning::TotalOrder && reducers > 1;
    // Without usable split points, collect everything in one partition and
    // split it by sampled ranges once the map output is known.
    let deferred = total_order && splits.len() + 1 != reducers;
    let nparts = if deferred { 1 } else { reducers };
    let part_of = |k: &[u8]| -> usize {
        if nparts == 1 {
            0
        } else if total_order {
            formats::range_partition(k, splits) as usize
        } else {
            formats::hash_partition(k, reducers as u32) as usize
        }
    };
    let combine = job.has_combiner();
    let res = par_map(nchunks, threads, |c| {
        let mut ctx = new_ctx(c);
        let mut cctx = new_ctx(c);
        let mut run = Run::new(nparts);
        let mut limit = opts.combine_at.max(1);
        let r = map_chunk(
            c,
            &mut |k: &[u8], v: &[u8]| {
                run.push(part_of(k), k, v);
                if combine && run.arena.len() > limit {
                    run.compact(job, &mut cctx);
                    if run.arena.len() > limit / 2 {
                        limit = limit.saturating_mul(2);
                    }
                }
            },
            &mut ctx,
        );
        if combine {
            run.compact(job, &mut cctx);
        }
        add_counters(&mut ctx.counters, cctx.counters);
        r.map(|()| (run, ctx.counters))
    });
    let mut runs = Vec::with_capacity(nchunks);
    for r in res {
        let (run, c) = r?;
        runs.push(run);
        add_counters(&mut counters, c);
    }

    if deferred {
        split_by_sample(&mut runs, reducers);
    }
    sort_runs(&mut runs, threads);
    let res = par_map(reducers, threads, |p| {
        let mut ctx = new_ctx(p);
        let mut out = Vec::new();
        let srcs: Vec<Sorted> = runs
            .iter()
            .map(|r| (r.arena.as_slice(), r.parts[p].as_slice()))
            .collect();
        let mut emit = |k: &[u8], v: &[u8]| write_record(oformat, k, v, &mut out);
        merge_groups(&srcs, |k, vals| {
            job.reduce(&mut ctx, k, &mut vals.iter().copied(), &mut emit);
        });
        job.reduce_finish(&mut ctx, &mut emit);
        (out, ctx.counters)
    });
    let mut parts = Vec::with_capacity(reducers);
    for (p, c) in res {
        parts.push(p);
        add_counters(&mut counters, c);
    }
    Ok(LocalRun { parts, counters })
}

/// A map-only job: each chunk's map output is a part.
fn map_only<F>(
    params: &JobParams,
    nchunks: usize,
    threads: usize,
    oformat: OutputFormat,
    map_chunk: &F,
) -> Result<LocalRun, FormatError>
where
    F: Fn(usize, &mut dyn Emit, &mut TaskCtx) -> Result<(), FormatError> + Sync,
{
    let res = par_map(nchunks, threads, |c| {
        let mut ctx = task_ctx(params, c);
        let mut part = Vec::new();
        let r = map_chunk(
            c,
            &mut |k: &[u8], v: &[u8]| write_record(oformat, k, v, &mut part),
            &mut ctx,
        );
        r.map(|()| (part, ctx.counters))
    });
    let mut counters = BTreeMap::new();
    let mut parts = Vec::with_capacity(nchunks);
    for r in res {
        let (p, c) = r?;
        parts.push(p);
        add_counters(&mut counters, c);
    }
    Ok(LocalRun { parts, counters })
}

/// A task's context: the job's parameters, its index, no counters yet.
fn task_ctx(params: &JobParams, index: usize) -> TaskCtx {
    TaskCtx {
        params: params.clone(),
        index: index as u32,
        counters: BTreeMap::new(),
    }
}

/// A generator job (no input): `params.maps` parts, in parallel.
fn generate(job: &dyn Job, params: &JobParams, threads: usize, oformat: OutputFormat) -> LocalRun {
    let maps = params.maps.max(1) as usize;
    let res = par_map(maps, threads, |i| {
        let mut ctx = task_ctx(params, i);
        let mut part = Vec::new();
        job.generate(&mut ctx, &mut |k: &[u8], v: &[u8]| {
            write_record(oformat, k, v, &mut part)
        });
        (part, ctx.counters)
    });
    let mut counters = BTreeMap::new();
    let mut parts = Vec::with_capacity(maps);
    for (p, c) in res {
        parts.push(p);
        add_counters(&mut counters, c);
    }
    LocalRun { parts, counters }
}

/// Total order without usable split points: the map output went to one
/// partition; split points are chosen from a sample of it, and every run
/// split by them into `reducers` partitions.
fn split_by_sample(runs: &mut [Run], reducers: usize) {
    let per_run = (100_000 / runs.len()).max(1);
    let mut sample = Vec::new();
    for r in runs.iter() {
        let es = &r.parts[0];
        let step = (es.len() / per_run).max(1);
        sample.extend(es.iter().step_by(step).map(|e| r.key(e).to_vec()));
    }
    let splits = formats::choose_splits(sample, reducers as u32);
    for r in runs.iter_mut() {
        let old = std::mem::take(&mut r.parts[0]);
        let mut parts = vec![Vec::new(); reducers];
        for e in old {
            parts[formats::range_partition(r.key(&e), &splits) as usize].push(e);
        }
        r.parts = parts;
    }
}

/// Sorts every (map, partition) run in parallel, biggest first.
fn sort_runs(runs: &mut [Run], threads: usize) {
    let mut work: Vec<(&[u8], &mut Vec<Entry>)> = Vec::new();
    for Run { arena, parts } in runs.iter_mut() {
        for p in parts.iter_mut() {
            work.push((arena.as_slice(), p));
        }
    }
    work.sort_by_key(|w| std::cmp::Reverse(w.1.len()));
    let queue = Mutex::new(work.into_iter());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((arena, es)) = next else { break };
                sort_entries(arena, es);
            });
        }
    });
}

fn add_counters(into: &mut BTreeMap<String, u64>, from: BTreeMap<String, u64>) {
    for (k, v) in from {
        let c = into.entry(k).or_default();
        *c = c.wrapping_add(v);
    }
}

/// Runs `f(0..n)` on up to `threads` threads; results in index order.
fn par_map<T: Send>(n: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if n <= 1 || threads <= 1 {
        return (0..n).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::with_capacity(n));
    std::thread::scope(|s| {
        for _ in 0..threads.min(n) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = f(i);
                out.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
            });
        }
    });
    let mut v = out.into_inner().unwrap_or_else(|e| e.into_inner());
    v.sort_unstable_by_key(|(i, _)| *i);
    v.into_iter().map(|(_, r)| r).collect()
}

/// Chunk boundaries `[0, .., input.len()]`, one chunk per thread when the
/// input is big enough.
fn cut(
    format: InputFormat,
    input: &[u8],
    threads: usize,
    min_chunk: usize,
) -> Result<Vec<usize>, FormatError> {
    let n = threads.min(input.len() / min_chunk.max(1)).max(1);
    let mut b = vec![0];
    if n > 1 {
        let target = |i: usize| i * input.len() / n;
        match format {
            InputFormat::KvRecords => {
                // Walk the record headers to cut on record boundaries.
                let mut pos = 0;
                let mut i = 1;
                while pos < input.len() && i < n {
                    let (_, _, len) = formats::kv_decode(&input[pos..])?;
                    pos += len;
                    if pos >= target(i) && pos < input.len() {
                        b.push(pos);
                        while i < n && target(i) <= pos {
                            i += 1;
                        }
                    }
                }
            }
            InputFormat::Fixed { len, .. } if len > 0 => {
                for i in 1..n {
                    let t = target(i) / len * len;
                    if t > *b.last().expect("non-empty") {
                        b.push(t);
                    }
                }
            }
            _ => b.extend((1..n).map(target)),
        }
    }
    b.push(input.len());
    Ok(b)
}

/// One map output record: where its key and value sit in the arena, and the
/// key's first 8 bytes big-endian (zero-padded), which decide most
/// comparisons without touching the arena.
#[derive(Debug, Clone, Copy)]
struct Entry {
    prefix: u64,
    off: u64,
    klen: u32,
    vlen: u32,
}

fn prefix_of(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

fn key_in<'a>(arena: &'a [u8], e: &Entry) -> &'a [u8] {
    &arena[e.off as usize..e.off as usize + e.klen as usize]
}

fn value_in<'a>(arena: &'a [u8], e: &Entry) -> &'a [u8] {
    let s = e.off as usize + e.klen as usize;
    &arena[s..s + e.vlen as usize]
}

fn cmp_entries(aa: &[u8], a: &Entry, ba: &[u8], b: &Entry) -> std::cmp::Ordering {
    a.prefix
        .cmp(&b.prefix)
        .then_with(|| key_in(aa, a).cmp(key_in(ba, b)))
}

/// Unstable sort with the arena offset as the last tie-break: the order is
/// that of a stable sort (offsets grow in emit order), without its buffer.
fn sort_entries(arena: &[u8], es: &mut [Entry]) {
    es.sort_unstable_by(|a, b| cmp_entries(arena, a, arena, b).then(a.off.cmp(&b.off)));
}

/// One map's output: keys and values back to back in `arena`, the entries
/// per partition.
struct Run {
    arena: Vec<u8>,
    parts: Vec<Vec<Entry>>,
}

impl Run {
    fn new(nparts: usize) -> Run {
        Run {
            arena: Vec::new(),
            parts: vec![Vec::new(); nparts],
        }
    }

    fn key(&self, e: &Entry) -> &[u8] {
        key_in(&self.arena, e)
    }

    fn push(&mut self, part: usize, k: &[u8], v: &[u8]) {
        let e = Entry {
            prefix: prefix_of(k),
            off: self.arena.len() as u64,
            klen: k.len() as u32,
            vlen: v.len() as u32,
        };
        self.arena.extend_from_slice(k);
        self.arena.extend_from_slice(v);
        self.parts[part].push(e);
    }

    /// Sorts and combines every partition into a fresh arena.
    fn compact(&mut self, job: &dyn Job, ctx: &mut TaskCtx) {
        let mut new = Run::new(self.parts.len());
        new.arena.reserve(self.arena.len() / 4);
        let mut vals: Vec<&[u8]> = Vec::new();
        for p in 0..self.parts.len() {
            let mut es = std::mem::take(&mut self.parts[p]);
            sort_entries(&self.arena, &mut es);
            let arena = &self.arena;
            let mut i = 0;
            while i < es.len() {
                let k = key_in(arena, &es[i]);
                vals.clear();
                let mut j = i;
                while j < es.len() && es[j].prefix == es[i].prefix && key_in(arena, &es[j]) == k {
                    vals.push(value_in(arena, &es[j]));
                    j += 1;
                }
                job.combine(
                    ctx,
                    k,
                    &mut vals.iter().copied(),
                    &mut |k: &[u8], v: &[u8]| new.push(p, k, v),
                );
                i = j;
            }
        }
        *self = new;
    }
}

/// A run's arena and one partition's entries, sorted.
type Sorted<'a> = (&'a [u8], &'a [Entry]);

/// Merges sorted runs, calling `f(key, values)` once per key in order; among
/// equal keys, earlier runs (maps) come first.
fn merge_groups<'a>(srcs: &[Sorted<'a>], mut f: impl FnMut(&'a [u8], &[&'a [u8]])) {
    let mut heads = vec![0usize; srcs.len()];
    let mut vals: Vec<&'a [u8]> = Vec::new();
    let mut cur: Option<(&'a [u8], u64)> = None;
    loop {
        let mut best: Option<usize> = None;
        for (c, &(arena, es)) in srcs.iter().enumerate() {
            let Some(e) = es.get(heads[c]) else { continue };
            best = match best {
                Some(b) => {
                    let (ba, bes) = srcs[b];
                    if cmp_entries(arena, e, ba, &bes[heads[b]]).is_lt() {
                        Some(c)
                    } else {
                        Some(b)
                    }
                }
                None => Some(c),
            };
        }
        let Some(c) = best else { break };
        let (arena, es) = srcs[c];
        let e = &es[heads[c]];
        heads[c] += 1;
        let k = key_in(arena, e);
        match cur {
            Some((ck, cp)) if cp == e.prefix && ck == k => {}
            _ => {
                if let Some((ck, _)) = cur {
                    f(ck, &vals);
                }
                vals.clear();
                cur = Some((k, e.prefix));
            }
        }
        vals.push(value_in(arena, e));
    }
    if let Some((ck, _)) = cur {
        f(ck, &vals);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use joblib::jobs::formats::{kv_encode, kv_iter};
    use joblib::jobs::registry::lookup;
    use std::collections::HashMap;

    fn small() -> LocalOptions {
        LocalOptions {
            threads: 3,
            min_chunk: 1,
            combine_at: 256,
        }
    }

    fn run(
        name: &str,
        p: &JobParams,
        input: &[u8],
        reducers: u32,
        splits: &[Vec<u8>],
        o: LocalOptions,
    ) -> LocalRun {
        try_run_local(&*lookup(name).unwrap(), p, input, reducers, splits, o).unwrap()
    }

    fn text() -> Vec<u8> {
        let p = JobParams {
            size: 20_000,
            seed: 4,
            maps: 2,
            ..Default::default()
        };
        run("randomtextwriter", &p, b"", 1, &[], small())
            .parts
            .concat()
    }

    #[test]
    fn wordcount_matches_a_hashmap() {
        let input = text();
        let mut want: HashMap<String, u64> = HashMap::new();
        for w in std::str::from_utf8(&input)
            .unwrap()
            .split_ascii_whitespace()
        {
            *want.entry(w.to_string()).or_default() += 1;
        }
        for o in [LocalOptions::default(), small()] {
            let r = run("wordcount", &JobParams::default(), &input, 3, &[], o);
            assert_eq!(r.parts.len(), 3);
            let mut got = HashMap::new();
            for part in &r.parts {
                let s = std::str::from_utf8(part).unwrap();
                let words: Vec<&str> = s.lines().map(|l| l.split('\t').next().unwrap()).collect();
                assert!(
                    words.windows(2).all(|w| w[0] < w[1]),
                    "each part is sorted, keys unique"
                );
                for l in s.lines() {
                    let (w, n) = l.split_once('\t').unwrap();
                    got.insert(w.to_string(), n.parse::<u64>().unwrap());
                }
            }
            assert_eq!(got, want);
        }
    }

    #[test]
    fn total_order_sort_with_and_without_splits() {
        let p = JobParams {
            size: 200_000,
            seed: 1,
            maps: 3,
            ..Default::default()
        };
        let input = run("randomwriter", &p, b"", 1, &[], small()).parts.concat();
        let mut want: Vec<(&[u8], &[u8])> = kv_iter(&input).map(|r| r.unwrap()).collect();
        want.sort_by(|a, b| a.0.cmp(b.0));
        let mut sp = JobParams::default();
        sp.extra.insert("total_order".into(), "true".into());
        let given = formats::choose_splits(want.iter().map(|r| r.0.to_vec()).collect(), 4);
        for (splits, o) in [
            (vec![], small()),
            (given.clone(), small()),
            (given, LocalOptions::default()),
        ] {
            let r = run("sort", &sp, &input, 4, &splits, o);
            assert_eq!(r.parts.len(), 4);
            let all = r.parts.concat();
            let got: Vec<(&[u8], &[u8])> = kv_iter(&all).map(|r| r.unwrap()).collect();
            assert_eq!(got, want);
            assert_eq!(r.counters["input_records"], want.len() as u64);
        }
    }

    #[test]
    fn sort_lines_keeps_duplicates_in_input_order() {
        let input = b"b\t1\na\t2\nb\t3\na\t4\nc\n";
        let p = JobParams {
            format_lines: true,
            ..Default::default()
        };
        let r = run("sort", &p, input, 1, &[], small());
        assert_eq!(r.parts, vec![b"a\t2\na\t4\nb\t1\nb\t3\nc\t\n".to_vec()]);
    }

    #[test]
    fn terasort_then_teravalidate() {
        let p = JobParams {
            size: 100 * 3000,
            seed: 2,
            maps: 4,
            ..Default::default()
        };
        let input = run("teragen", &p, b"", 1, &[], small()).parts.concat();
        assert_eq!(input.len(), 300_000);
        let sorted = run("terasort", &JobParams::default(), &input, 3, &[], small());
        let out = sorted.parts.concat();
        assert_eq!(out.len(), input.len());
        let mut v = JobParams::default();
        v.extra.insert(
            "expect_records".into(),
            sorted.counters["input_records"].to_string(),
        );
        v.extra.insert(
            "expect_checksum".into(),
            sorted.counters["input_checksum"].to_string(),
        );
        for o in [small(), LocalOptions::default()] {
            let r = run("teravalidate", &v, &out, 1, &[], o);
            let report = String::from_utf8(r.parts.concat()).unwrap();
            assert!(report.starts_with("records 3000\n"), "{report}");
            assert!(report.contains("sorted true\n"), "{report}");
            assert_eq!((r.counters["unsorted"], r.counters["mismatch"]), (0, 0));
            let r = run("teravalidate", &v, &input, 1, &[], o);
            assert_eq!(r.counters["unsorted"], 1);
        }
        let e = try_run_local(
            &*lookup("terasort").unwrap(),
            &JobParams::default(),
            &input[..250],
            1,
            &[],
            small(),
        );
        assert!(matches!(
            e,
            Err(FormatError::PartialRecord { bytes: 50, .. })
        ));
    }

    #[test]
    fn kv_cut_points_are_record_aligned() {
        let mut input = vec![];
        for i in 0..100u32 {
            kv_encode(&i.to_be_bytes(), &vec![1; (i % 17) as usize], &mut input);
        }
        let b = cut(InputFormat::KvRecords, &input, 5, 1).unwrap();
        assert!(b.len() >= 3 && b[0] == 0 && *b.last().unwrap() == input.len());
        for w in b.windows(2) {
            assert!(w[0] < w[1]);
            assert!(kv_iter(&input[w[0]..w[1]]).all(|r| r.is_ok()));
        }
    }

    #[test]
    fn generators_make_one_part_per_map() {
        let p = JobParams {
            size: 1000,
            seed: 2,
            maps: 4,
            ..Default::default()
        };
        let r = run("teragen", &p, b"", 1, &[], LocalOptions::default());
        assert_eq!(
            r.parts.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![200, 300, 200, 300]
        );
        assert_eq!(r.counters["records"], 10);
    }
}

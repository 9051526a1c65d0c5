//! A reduce attempt: gather this partition from every map's output, merge
//! the sorted segments, reduce each key group and write the output part
//! into the block store.
//!
//! A segment comes one of three ways. A map whose worker shares this host
//! (the same address host, as on a loopback cluster, or this worker
//! itself) is asked only where the partition lies (`LocatePartition`),
//! and the merge reads that file in place: no copy through gRPC, no spool.
//! Otherwise the segment is streamed over gRPC (a few at a time) into
//! memory while the reduce's memory budget lasts, and spooled to local
//! disk past it, so memory stays bounded whatever the partition's size.
//!
//! Every segment is checked against the CRC32C the map wrote in its index
//! ([`check_segment`]); one that differs is retried and then reported as a
//! fetch failure naming its map, never merged. A map's output by reference
//! on this host is checked by the merge that reads it ([`merge_segments`]),
//! and fails the attempt the same way.

use crate::task::code::{Code, TaskCode};
use crate::task::external::{child, Attempt};
use crate::task::feeds::Feed;
use crate::task::mapout::refs;
use crate::task::outcome::{Failure, Outcome};
use crate::task::part::put_options;
use crate::task::part::OutputWriter;
use crate::task::partition::PartitionRef;
use crate::task::runner::TaskRunner;
use crate::task::segment::{check_segment, merge_segments, Mapped, Segment};
use common::config::WorkerConfig;
use futures::StreamExt;
use joblib::jobs::{formats, TaskCtx};
use mrjob::TaskMode;
use protocol::{MapOutputLocation, OutputSpec, ReduceLaunch, TaskRef};
use rpc::dfs::DfsError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Fetches in flight at once per reduce, as Hadoop's
/// `mapreduce.reduce.shuffle.parallelcopies` bounds them.
const PARALLEL_FETCHES: usize = 4;
/// Tries per segment before the reduce reports a fetch failure.
const FETCH_TRIES: u32 = 3;
/// Bytes of fetched segments one reduce holds in memory; the rest is
/// spooled to disk (Hadoop's shuffle buffer, `shuffle.input.buffer.percent`
/// of the reduce's heap, as a fixed bound).
pub const SHUFFLE_MEMORY: u64 = 32 << 20;

/// The job's shuffle settings: `shuffle_memory=SIZE` bounds the
/// in-memory segments of each reduce (default [`SHUFFLE_MEMORY`]);
/// `shuffle_in_place=false` streams even the segments on this host, which
/// is how a one-machine test exercises the streamed path.
fn shuffle_settings(p: &joblib::jobs::JobParams) -> Result<(u64, bool), Failure> {
    let memory = match p.extra.get("shuffle_memory") {
        None => SHUFFLE_MEMORY,
        Some(v) => common::config::parse_shuffle_memory(v).map_err(Failure::msg)?,
    };
    let in_place = match p.extra.get("shuffle_in_place").map(String::as_str) {
        None | Some("true") => true,
        Some("false") => false,
        Some(v) => {
            return Err(Failure::msg(format!(
                "bad shuffle_in_place {v:?}: true or false"
            )))
        }
    };
    Ok((memory, in_place))
}

/// Bytes left of a reduce's in-memory shuffle budget.
struct Budget(AtomicU64);

impl Budget {
    fn take(&self, n: u64) -> bool {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                left.checked_sub(n)
            })
            .is_ok()
    }
}
pub async fn run(
    runner: Arc<TaskRunner>,
    spec: TaskCode,
    t: TaskRef,
    r: ReduceLaunch,
    feed: Option<Feed>,
    output: OutputSpec,
    dir: PathBuf,
) -> Result<Outcome, Failure> {
    let TaskCode {
        code,
        params,
        output_format: oformat,
        ..
    } = spec;
    // An external job's working directory and children; the guard stays
    // in this future, so a killed attempt kills its children.
    let (ext, _guard) = Attempt::for_code(&runner, &code, &params, t, &dir).await?;
    let mut ctx = TaskCtx {
        params,
        index: t.index,
        counters: Default::default(),
    };
    let seg_dir = dir.join(format!("reduce-{}-{}", t.index, t.attempt));
    tokio::fs::create_dir_all(&seg_dir)
        .await
        .map_err(Failure::from_err)?;
    let shuffle_start = std::time::Instant::now();
    let segments = shuffle(&runner, &t, r, feed, &seg_dir, &mut ctx).await?;
    let shuffle_s = shuffle_start.elapsed().as_secs_f64();
    let shuffled = segments.iter().map(Segment::shuffled).sum();
    let opts = put_options(&output, &runner.me().name);
    let rt = tokio::runtime::Handle::current();
    let (written, records_in, records_out, ctx, phases) =
        crate::task::progress::spawn_blocking(move || -> Result<_, Failure> {
            let merge_start = std::time::Instant::now();
            let mut w =
                OutputWriter::create(runner.dfs(), runner.pipeline(), rt, &output.path, &opts)
                    .map_err(Failure::from_err)?;
            let mapped = segments
                .iter()
                .map(Segment::map)
                .collect::<std::io::Result<Vec<_>>>()
                .map_err(Failure::from_err)?;
            let (records_in, merge_s, reduce_s) = match (&code, &ext) {
                (Code::Builtin(job), _) => reduce_builtin(
                    job.as_ref(),
                    &mut ctx,
                    &mapped,
                    &mut w,
                    oformat,
                    merge_start,
                )?,
                (Code::External(_), Some(a)) => {
                    reduce_external(a, &mut ctx, &mapped, &mut w, oformat)?
                }
                (Code::External(_), None) => unreachable!("prepared above"),
            };
            let records_out = w.records();
            let commit_start = std::time::Instant::now();
            let n = w.finish().map_err(Failure::from_err)?;
            let commit_s = commit_start.elapsed().as_secs_f64();
            let _ = std::fs::remove_dir_all(&seg_dir);
            Ok((
                n,
                records_in,
                records_out,
                ctx,
                (merge_s, reduce_s, commit_s),
            ))
        })
        .await
        .map_err(Failure::from_err)??;
    Ok(Outcome {
        locality: String::new(),
        bytes_shuffle: shuffled,
        shuffle_s,
        merge_s: phases.0,
        reduce_s: phases.1,
        commit_s: phases.2,
        bytes_output: written,
        records_in,
        records_out,
        counters: ctx.counters,
        ..Default::default()
    })
}

/// The shuffle: this reduce's partition of every map's output, in map
/// order, each segment counted in `ctx` by how it came (read in place,
/// fetched into memory, or spooled to `seg_dir`).
async fn shuffle(
    runner: &Arc<TaskRunner>,
    t: &TaskRef,
    r: ReduceLaunch,
    feed: Option<Feed>,
    seg_dir: &Path,
    ctx: &mut TaskCtx,
) -> Result<Vec<Segment>, Failure> {
    let total = match r.maps_total {
        0 => r.map_outputs.len(),
        n => n as usize,
    };
    let (memory, in_place) = shuffle_settings(&ctx.params)?;
    let budget = Arc::new(Budget(AtomicU64::new(memory)));
    let want = Arc::new(Want {
        job_id: t.job_id,
        part: t.index,
        token: r.shuffle_token.clone(),
    });
    let fetch = |m: MapOutputLocation| {
        let runner = runner.clone();
        let want = want.clone();
        let budget = budget.clone();
        let path = seg_dir.join(format!("seg-{}", m.map_index));
        let local = in_place && same_host(runner.me(), &m);
        async move {
            let seg = fetch_segment(&runner, &want, &m, &path, &budget, local).await;
            crate::task::progress::bump();
            seg.map(|s| (m.map_index, s))
        }
    };
    let segments = gather(r.map_outputs, feed, total, fetch).await?;
    for seg in &segments {
        let kind = match seg {
            Segment::File { path, .. } if path.starts_with(seg_dir) => "spooled",
            Segment::File { .. } | Segment::Refs { .. } => "in_place",
            Segment::Mem(_) => "in_memory",
        };
        ctx.count(&format!("shuffle_segments_{kind}"), 1);
    }
    Ok(segments)
}

/// A built-in job's reduce over the merged `runs`, written to `w`: the
/// records read, and the merge and reduce phases' seconds.
fn reduce_builtin(
    job: &dyn mrjob::Job,
    ctx: &mut TaskCtx,
    mapped: &[Mapped<'_>],
    w: &mut OutputWriter,
    oformat: mrjob::OutputFormat,
    merge_start: std::time::Instant,
) -> Result<(u64, f64, f64), Failure> {
    let blocked = w.blocked_clock();
    let mut err = None;
    let mut emit = |k: &[u8], v: &[u8]| {
        if err.is_some() {
            return;
        }
        if let Err(e) = w.write_with(|b| formats::write_record(oformat, k, v, b)) {
            err = Some(e);
        }
    };
    // The reduce phase is the reduce function's time, timed on one key
    // group in REDUCE_SAMPLE and scaled (two clock reads per group cost
    // TeraSort, one record a group, 4 % of its CPU; one group in 8 still
    // cost 2.4 %), plus every wait on the output's block writes, counted
    // whole.
    const REDUCE_SAMPLE: u64 = 32;
    let mut groups = 0u64;
    let mut sampled_s = 0.0;
    let records_in = merge_segments(mapped, &mut |k, vals| {
        groups += 1;
        if groups % REDUCE_SAMPLE == 1 {
            crate::task::progress::bump();
            let (t, b0) = (std::time::Instant::now(), blocked.get());
            job.reduce(ctx, k, vals, &mut emit);
            sampled_s += t.elapsed().as_secs_f64() - (blocked.get() - b0);
        } else {
            job.reduce(ctx, k, vals, &mut emit);
        }
        Ok(())
    })?;
    let (t, b0) = (std::time::Instant::now(), blocked.get());
    job.reduce_finish(ctx, &mut emit);
    let whole_s = (t.elapsed().as_secs_f64() - (blocked.get() - b0)).max(0.0) + blocked.get();
    if let Some(e) = err {
        return Err(Failure::from_err(e));
    }
    let (merge_s, reduce_s) = split_phases(
        merge_start.elapsed().as_secs_f64(),
        sampled_s,
        groups.div_ceil(REDUCE_SAMPLE),
        groups,
        whole_s,
    );
    Ok((records_in, merge_s, reduce_s))
}

/// An external job's reduce: the merge feeds the child on its own thread,
/// and the child's time is the reduce's. The two overlap, so the whole
/// loop is counted as the reduce phase (merge 0).
fn reduce_external(
    a: &Attempt,
    ctx: &mut TaskCtx,
    mapped: &[Mapped<'_>],
    w: &mut OutputWriter,
    oformat: mrjob::OutputFormat,
) -> Result<(u64, f64, f64), Failure> {
    let start = std::time::Instant::now();
    let feed = |put: &mut dyn FnMut(&[u8], &[u8])| {
        merge_segments(mapped, &mut |k, vals| {
            for v in vals {
                put(k, v);
            }
            Ok(())
        })
    };
    let mut put = |k: &[u8], v: &[u8]| {
        w.write_with(|b| formats::write_record(oformat, k, v, b))
            .map_err(std::io::Error::other)
    };
    let records_in = match a.child(TaskMode::Reduce) {
        Some(c) => {
            let ran = child::run(c, &a.killer, feed, &mut put)?;
            crate::task::external::add_counters(ctx, ran.counters);
            ran.fed
        }
        // Streaming without a reducer: the identity reduce.
        None => {
            let mut e = None;
            let n = feed(&mut |k: &[u8], v: &[u8]| {
                if e.is_none() {
                    e = put(k, v).err();
                }
            });
            if let Some(e) = e {
                return Err(Failure::from_err(e));
            }
            n
        }
    }?;
    Ok((records_in, 0.0, start.elapsed().as_secs_f64()))
}

/// Fetches this partition of all `total` maps' outputs, at most
/// [`PARALLEL_FETCHES`] at once: those `known` at the launch first, in map
/// order, then those the `feed` brings as their maps finish (reduce
/// slow-start: the master launched this reduce before every map was done).
/// Returns the segments in map order, the order the merge keeps equal keys
/// in. A newer attempt's output replaces an older one not yet fetched.
async fn gather<F, Fut>(
    mut known: Vec<MapOutputLocation>,
    mut feed: Option<Feed>,
    total: usize,
    fetch: F,
) -> Result<Vec<Segment>, Failure>
where
    F: Fn(MapOutputLocation) -> Fut,
    Fut: std::future::Future<Output = Result<(u32, Segment), Failure>>,
{
    known.sort_by_key(|m| m.map_index);
    let mut queue = std::collections::VecDeque::new();
    let mut seen = std::collections::HashSet::new();
    let mut add = |queue: &mut std::collections::VecDeque<MapOutputLocation>,
                   outs: Vec<MapOutputLocation>| {
        for m in outs {
            if seen.insert(m.map_index) {
                queue.push_back(m);
            } else if let Some(q) = queue.iter_mut().find(|q| q.map_index == m.map_index) {
                if m.attempt > q.attempt {
                    *q = m;
                }
            }
        }
    };
    add(&mut queue, known);
    let mut got = std::collections::BTreeMap::new();
    let mut inflight = futures::stream::FuturesUnordered::new();
    while got.len() < total {
        while inflight.len() < PARALLEL_FETCHES {
            let Some(m) = queue.pop_front() else { break };
            inflight.push(fetch(m));
        }
        if inflight.is_empty() {
            // Every known output is in: wait for the maps still running.
            match next_outputs(&mut feed).await {
                Some(outs) => add(&mut queue, outs),
                None => {
                    return Err(Failure::msg(format!(
                        "{} of {total} map outputs fetched and no more are coming",
                        got.len()
                    )))
                }
            }
            continue;
        }
        tokio::select! {
            Some(r) = inflight.next() => {
                let (i, seg) = r?;
                got.insert(i, seg);
            }
            Some(outs) = next_outputs(&mut feed) => add(&mut queue, outs),
        }
    }
    Ok(got.into_values().collect())
}

/// The next map outputs the feed brings; `None` without a feed or once it
/// closed.
async fn next_outputs(feed: &mut Option<Feed>) -> Option<Vec<MapOutputLocation>> {
    feed.as_mut()?.recv().await
}

/// Whether map output `m` is on this host: this worker's own, or a worker
/// advertising the same host.
fn same_host(me: &WorkerConfig, m: &MapOutputLocation) -> bool {
    let host = |a: &str| a.rsplit_once(':').map_or(a, |(h, _)| h).to_string();
    m.worker == me.name || (!m.addr.is_empty() && host(&m.addr) == host(&me.addr))
}

/// The partition a reduce fetches of every map, and its job's shuffle
/// token.
struct Want {
    job_id: u64,
    part: u32,
    token: bytes::Bytes,
}

/// Gets one map's partition: located and read in place on this host,
/// else streamed into memory or `spool`; retried, then reported as a
/// fetch failure naming the map so the master re-runs it.
async fn fetch_segment(
    runner: &Arc<TaskRunner>,
    want: &Want,
    m: &MapOutputLocation,
    spool: &Path,
    budget: &Budget,
    local: bool,
) -> Result<Segment, Failure> {
    let req = PartitionRef {
        job_id: want.job_id,
        map_index: m.map_index,
        attempt: m.attempt,
        partition: want.part,
    };
    let mut last = String::new();
    for attempt in 0..FETCH_TRIES {
        if attempt > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(200 * attempt as u64)).await;
        }
        let res = async {
            if local {
                if let Some(seg) = locate(runner, m, &req, &want.token).await? {
                    return Ok(seg);
                }
            }
            stream_segment(runner, m, &req, &want.token, spool, budget).await
        }
        .await;
        match res {
            Ok(seg) => return Ok(seg),
            Err(e) => {
                tracing::warn!(map = m.map_index, from = %m.worker, "shuffle fetch failed: {e}");
                last = e.to_string();
            }
        }
    }
    Err(Failure {
        msg: format!("cannot fetch map {} from {}: {last}", m.map_index, m.worker),
        fetch_failed_map: Some(m.map_index),
    })
}

/// The partition in place, when its file is readable here with the length
/// the map's worker gives; `None` when this host cannot read it (another
/// machine behind the same address, an older worker), so the caller
/// streams it. The map's worker is asked even when the file is in reach,
/// so that a dead worker's output fails as a fetch would.
async fn locate(
    runner: &Arc<TaskRunner>,
    m: &MapOutputLocation,
    req: &PartitionRef,
    token: &bytes::Bytes,
) -> Result<Option<Segment>, DfsError> {
    let (path, offset, len, crc, block) = if m.worker == runner.me().name {
        let l = crate::edge::shuffle::locate(runner, req)
            .map_err(|e| DfsError::Invalid(e.to_string()))?;
        (
            l.path,
            l.part.offset,
            l.part.len,
            Some(l.part.crc32c),
            l.source,
        )
    } else {
        match crate::edge::peers::locate_partition(runner.dfs(), &m.addr, req, token).await? {
            Some(f) => (f.path, f.offset, f.len, f.crc32c, f.source),
            None => return Ok(None),
        }
    };
    let fits = std::fs::metadata(&path).is_ok_and(|md| md.is_file() && md.len() >= offset + len)
        && block
            .as_ref()
            .is_none_or(|b| std::fs::metadata(b).is_ok_and(|md| md.is_file()));
    if !fits {
        return Ok(None);
    }
    let Some(block) = block else {
        // The file is read here once (from the page cache the map just
        // filled) so that a bad segment fails the fetch, where it can be
        // retried and reported, rather than the merge.
        let seg = Segment::File { path, offset, len };
        return tokio::task::spawn_blocking(move || {
            let got = seg.map().map(|m| match &m {
                Mapped::File(f, r) => crc32c::crc32c(&f[r.clone()]),
                Mapped::Mem(b) => crc32c::crc32c(b),
                Mapped::Refs { .. } => unreachable!("a file segment maps to bytes"),
            })?;
            check_segment(got, len, crc)?;
            Ok::<_, DfsError>(Some(seg))
        })
        .await
        .map_err(|e| DfsError::Invalid(e.to_string()))?;
    };
    // By reference: the merge checks the records as it reads them
    // (`merge_segments`); here only that the references are whole, and
    // what they will move.
    let sum =
        crc.ok_or_else(|| DfsError::Invalid("references came without the map's sum".into()))?;
    let refs = path.clone();
    let (_, encoded) = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(&refs)?;
        f.seek(SeekFrom::Start(offset))?;
        let mut b = Vec::new();
        f.take(len).read_to_end(&mut b)?;
        refs::encoded_len(&b)
    })
    .await
    .map_err(|e| DfsError::Invalid(e.to_string()))??;
    Ok(Some(Segment::Refs {
        map: m.map_index,
        path,
        offset,
        len,
        block,
        sum,
        encoded,
    }))
}

/// Streams the partition over gRPC: into memory while `budget` lasts,
/// then into `spool`.
async fn stream_segment(
    runner: &Arc<TaskRunner>,
    m: &MapOutputLocation,
    req: &PartitionRef,
    token: &bytes::Bytes,
    spool: &Path,
    budget: &Budget,
) -> Result<Segment, DfsError> {
    let mut stream = crate::edge::peers::fetch_partition(runner.dfs(), &m.addr, req, token).await?;
    let mut mem = Vec::new();
    let mut held = 0u64;
    let mut file: Option<std::io::BufWriter<std::fs::File>> = None;
    let mut n = 0u64;
    let mut crc = 0u32;
    let mut want = None;
    let res = async {
        while let Some(c) = stream.next().await? {
            n += c.data.len() as u64;
            crc = crc32c::crc32c_append(crc, &c.data);
            want = want.or(c.crc32c);
            match &mut file {
                Some(f) => f.write_all(&c.data)?,
                None if budget.take(c.data.len() as u64) => {
                    held += c.data.len() as u64;
                    mem.extend_from_slice(&c.data);
                }
                None => {
                    let mut f =
                        std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(spool)?);
                    f.write_all(&mem)?;
                    f.write_all(&c.data)?;
                    mem = Vec::new();
                    file = Some(f);
                }
            }
        }
        check_segment(crc, n, want)
    }
    .await;
    if file.is_some() || res.is_err() {
        // Spooled or failed: what it held goes back to the budget.
        budget.0.fetch_add(held, Ordering::AcqRel);
    }
    res?;
    Ok(match file {
        Some(mut f) => {
            f.flush()?;
            Segment::File {
                path: spool.to_path_buf(),
                offset: 0,
                len: n,
            }
        }
        None => Segment::Mem(mem),
    })
}

/// Splits `total`, the wall time of the merge and the reduce together,
/// into (merge, reduce). The reduce function was timed on `timed` of the
/// `groups` key groups (`sampled` seconds) and is scaled up; `whole` is what
/// was timed whole (the job's finish, the waits on block writes). A sample
/// descheduled mid-group is scaled up with the rest, and once made the
/// reduce longer than the job: the estimate is capped at the wall time it
/// is part of, so the two phases always add up to `total`.
fn split_phases(total: f64, sampled: f64, timed: u64, groups: u64, whole: f64) -> (f64, f64) {
    let scaled = if timed > 0 {
        sampled.max(0.0) * groups as f64 / timed as f64
    } else {
        0.0
    };
    let reduce = (scaled + whole).min(total.max(0.0));
    (total.max(0.0) - reduce, reduce)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::mapout::MapOutputBuffer;

    #[test]
    fn the_reduce_estimate_scales_its_sample_and_never_passes_the_wall_time() {
        // 1 group in 4 timed: 0.1 s over 25 of 100 groups is 0.4 s.
        let (m, r) = split_phases(1.0, 0.1, 25, 100, 0.1);
        assert!((r - 0.5).abs() < 1e-9 && (m - 0.5).abs() < 1e-9, "{m} {r}");
        // One sample descheduled for 0.2 s scales to 0.8 s: capped.
        let (m, r) = split_phases(0.6, 0.2, 25, 100, 0.05);
        assert_eq!((m, r), (0.0, 0.6));
        // No group at all: only what was timed whole.
        let (m, r) = split_phases(0.3, 0.0, 0, 0, 0.1);
        assert!((m - 0.2).abs() < 1e-9 && r == 0.1, "{m} {r}");
    }

    fn loc(map_index: u32, attempt: u32) -> MapOutputLocation {
        MapOutputLocation {
            map_index,
            attempt,
            ..Default::default()
        }
    }

    /// Slow-start: one output known at launch, the others fed later (one
    /// twice, a newer attempt replacing the older before its fetch); the
    /// segments come back in map order, each fetched once, at the newest
    /// attempt known when its fetch started.
    #[tokio::test]
    async fn gather_waits_for_fed_outputs_and_keeps_map_order() {
        let fetched = std::sync::Mutex::new(Vec::new());
        let fetch = |m: MapOutputLocation| {
            fetched.lock().unwrap().push((m.map_index, m.attempt));
            async move { Ok((m.map_index, Segment::Mem(vec![m.map_index as u8; 3]))) }
        };
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tx.send(vec![loc(2, 0), loc(1, 0)]).unwrap();
        tx.send(vec![loc(1, 1), loc(0, 5)]).unwrap();
        let segs = gather(vec![loc(0, 0)], Some(rx), 3, fetch).await.unwrap();
        let firsts: Vec<u8> = segs
            .iter()
            .map(|s| match s {
                Segment::Mem(b) => b[0],
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(firsts, vec![0, 1, 2]);
        let f = fetched.lock().unwrap();
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f.contains(&(0, 0)), "map 0 was fetched at launch: {f:?}");
    }

    /// Without a feed, outputs missing at launch are an error, not a hang.
    #[tokio::test]
    async fn gather_without_the_outputs_it_needs_fails() {
        let fetch = |m: MapOutputLocation| async move { Ok((m.map_index, Segment::Mem(vec![]))) };
        let e = gather(vec![loc(0, 0)], None, 2, fetch).await.err().unwrap();
        assert!(e.msg.contains("1 of 2"), "{}", e.msg);
    }

    fn node(tag: &str) -> (Arc<TaskRunner>, std::path::PathBuf) {
        let (n, dir) = crate::node::test_node("reduce", tag);
        (n.tasks().clone(), dir)
    }

    fn want(job_id: u64, part: u32) -> Want {
        Want {
            job_id,
            part,
            token: Default::default(),
        }
    }

    /// A map output whose bytes rotted on disk after the map wrote them is
    /// not merged: the fetch fails, naming the map, so the master can count
    /// it against that map (issue 28: map output carried no checksum).
    #[tokio::test]
    async fn a_rotten_map_output_fails_the_fetch_naming_its_map() {
        let (n, dir) = node("rot");
        let jd = n.job_dir(3);
        std::fs::create_dir_all(&jd).unwrap();
        let mut b = MapOutputBuffer::new(jd.join("spills"), 2, 1 << 16, None);
        for i in 0..100u32 {
            b.add(i % 2, format!("k{i:03}").as_bytes(), b"v").unwrap();
        }
        let out = crate::task::mapout::output_path(&jd, 5, 0);
        b.finish(&out).unwrap();
        let m = MapOutputLocation {
            map_index: 5,
            attempt: 0,
            worker: "w1".into(),
            addr: "127.0.0.1:2".into(),
        };
        let budget = Budget(AtomicU64::new(1 << 20));
        let spool = dir.join("spool");
        let good = fetch_segment(&n, &want(3, 1), &m, &spool, &budget, true).await;
        assert!(good.is_ok(), "{:?}", good.err());
        let mut bytes = std::fs::read(&out).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0x20;
        std::fs::write(&out, bytes).unwrap();
        let f = match fetch_segment(&n, &want(3, 1), &m, &spool, &budget, true).await {
            Ok(_) => panic!("a rotten segment was accepted"),
            Err(f) => f,
        };
        assert_eq!(f.fetch_failed_map, Some(5));
        assert!(f.msg.contains("CRC32C"), "{}", f.msg);
        // The other partition is intact and still fetched.
        assert!(fetch_segment(&n, &want(3, 0), &m, &spool, &budget, true)
            .await
            .is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A map output by reference is read in place through its references;
    /// a bit that rots in the block it points into fails the merge that
    /// read it, naming the map, as a rotten output file fails its fetch.
    #[tokio::test]
    async fn a_rotten_block_under_references_fails_the_merge_naming_its_map() {
        let (n, dir) = node("refrot");
        let jd = n.job_dir(4);
        std::fs::create_dir_all(&jd).unwrap();
        let block: Vec<u8> = (0..200u32)
            .flat_map(|i| format!("k{:03}v", (i * 37) % 200).into_bytes())
            .collect();
        let file = dir.join("blk_9");
        std::fs::write(&file, &block).unwrap();
        let data = bytes::Bytes::from(block.clone());
        let mut b = MapOutputBuffer::new(jd.join("spills"), 2, 1 << 16, None)
            .with_source(data.clone())
            .with_source_file(file.clone(), 0);
        for r in data.chunks(5) {
            b.add(u32::from(r[3] % 2), &r[..4], &r[4..]).unwrap();
        }
        let out = crate::task::mapout::output_path(&jd, 6, 0);
        b.finish(&out).unwrap();
        let m = MapOutputLocation {
            map_index: 6,
            attempt: 0,
            worker: "w1".into(),
            addr: "127.0.0.1:2".into(),
        };
        let budget = Budget(AtomicU64::new(1 << 20));
        let spool = dir.join("spool");
        let merged = |seg: &Segment| {
            let mut keys = Vec::new();
            let mapped = [seg.map().unwrap()];
            merge_segments(&mapped, &mut |k, vals| {
                keys.extend(vals.map(|_| k.to_vec()));
                Ok(())
            })
            .map(|_| keys)
        };
        let seg = fetch_segment(&n, &want(4, 1), &m, &spool, &budget, true)
            .await
            .unwrap();
        assert!(matches!(seg, Segment::Refs { .. }));
        let keys = merged(&seg).unwrap();
        assert_eq!(seg.shuffled(), keys.len() as u64 * 13);
        assert!(keys.len() > 50 && keys.windows(2).all(|w| w[0] <= w[1]));
        let mut rotten = block.clone();
        let at = block.len() - 1 - 5 * usize::from(block[block.len() - 2].is_multiple_of(2));
        rotten[at] ^= 0x20;
        // Rewritten in place: the link in the job's directory is the same file.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &rotten))
            .unwrap();
        let seg = fetch_segment(&n, &want(4, 1), &m, &spool, &budget, true)
            .await
            .unwrap();
        let f = merged(&seg).expect_err("a rotten block was merged");
        assert_eq!(f.fetch_failed_map, Some(6));
        assert!(f.msg.contains("CRC32C"), "{}", f.msg);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

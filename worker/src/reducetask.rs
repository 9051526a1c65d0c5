//! A reduce attempt: fetch this partition from every map's worker over gRPC
//! streams (a few at a time), spooling each segment to local disk so memory
//! stays bounded, then merge the sorted segments, reduce each key group and
//! write the output part into the block store.

use crate::merge::merge_grouped;
use crate::node::Node;
use crate::outcome::{Failure, Outcome};
use crate::output::OutputWriter;
use common::dfs::PutOptions;
use examples::jobs::{formats, ResolvedJob, TaskCtx};
use futures::StreamExt;
use proto::LaunchTask;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// Fetches in flight at once per reduce, as Hadoop's
/// `mapreduce.reduce.shuffle.parallelcopies` bounds them.
const PARALLEL_FETCHES: usize = 4;
/// Tries per segment before the reduce reports a fetch failure.
const FETCH_TRIES: u32 = 3;

pub async fn run(
    node: Arc<Node>,
    spec: ResolvedJob,
    l: LaunchTask,
    dir: PathBuf,
) -> Result<Outcome, Failure> {
    let t = l
        .task
        .ok_or_else(|| Failure::msg("reduce without a task ref"))?;
    let ResolvedJob {
        job,
        params,
        output_format: oformat,
        ..
    } = spec;
    let mut ctx = TaskCtx {
        params,
        index: t.index,
        counters: Default::default(),
    };
    let part = t.index;
    let seg_dir = dir.join(format!("reduce-{part}-{}", t.attempt));
    tokio::fs::create_dir_all(&seg_dir)
        .await
        .map_err(Failure::from_err)?;
    let mut outs = l.map_outputs.clone();
    outs.sort_by_key(|m| m.map_index);
    let jobs: Vec<_> = outs
        .into_iter()
        .map(|m| {
            let node = node.clone();
            let path = seg_dir.join(format!("seg-{}", m.map_index));
            async move {
                fetch_segment(&node, t.job_id, part, &m, &path)
                    .await
                    .map(|n| (path, n))
            }
        })
        .collect();
    let shuffle_start = std::time::Instant::now();
    let fetches = futures::stream::iter(jobs)
        .buffered(PARALLEL_FETCHES)
        .collect::<Vec<_>>()
        .await;
    let mut segments = Vec::new();
    let mut shuffled = 0;
    for f in fetches {
        let (p, n) = f?;
        shuffled += n;
        segments.push(p);
    }
    let shuffle_s = shuffle_start.elapsed().as_secs_f64();
    let opts = PutOptions {
        replication: l.output_replication,
        block_size: l.output_block_size,
        overwrite: false,
        writer: node.me.name.clone(),
    };
    let path = l.output_path.clone();
    let rt = tokio::runtime::Handle::current();
    let n2 = node.clone();
    let seg_dir2 = seg_dir.clone();
    let (written, records_in, records_out, ctx, phases) =
        tokio::task::spawn_blocking(move || -> Result<_, Failure> {
            let merge_start = std::time::Instant::now();
            let mut reduce_s = 0.0;
            let mut w =
                OutputWriter::create(&n2.dfs, rt, &path, &opts).map_err(Failure::from_err)?;
            let runs = segments
                .iter()
                .map(|p| std::fs::File::open(p).map(|f| BufReader::with_capacity(256 << 10, f)))
                .collect::<std::io::Result<Vec<_>>>()
                .map_err(Failure::from_err)?;
            let mut rec = Vec::new();
            let mut err = None;
            let mut emit = |k: &[u8], v: &[u8]| {
                if err.is_some() {
                    return;
                }
                rec.clear();
                formats::write_record(oformat, k, v, &mut rec);
                if let Err(e) = w.write(&rec) {
                    err = Some(e);
                }
            };
            let records_in = merge_grouped(runs, &mut |k, vals| {
                let t = std::time::Instant::now();
                job.reduce(&mut ctx, k, vals, &mut emit);
                reduce_s += t.elapsed().as_secs_f64();
                Ok(())
            })
            .map_err(Failure::from_err)?;
            let t = std::time::Instant::now();
            job.reduce_finish(&mut ctx, &mut emit);
            reduce_s += t.elapsed().as_secs_f64();
            if let Some(e) = err {
                return Err(Failure::from_err(e));
            }
            let merge_s = (merge_start.elapsed().as_secs_f64() - reduce_s).max(0.0);
            let records_out = w.records;
            let commit_start = std::time::Instant::now();
            let n = w.finish().map_err(Failure::from_err)?;
            let commit_s = commit_start.elapsed().as_secs_f64();
            let _ = std::fs::remove_dir_all(&seg_dir2);
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

/// Streams one map's partition into `path`; retried, then reported as a
/// fetch failure naming the map so the master re-runs it.
async fn fetch_segment(
    node: &Arc<Node>,
    job_id: u64,
    part: u32,
    m: &proto::MapOutputLocation,
    path: &std::path::Path,
) -> Result<u64, Failure> {
    let mut last = String::new();
    for attempt in 0..FETCH_TRIES {
        if attempt > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(200 * attempt as u64)).await;
        }
        let res = async {
            let mut conn = node.dfs.worker(&m.addr)?;
            let mut stream = conn
                .fetch_partition(proto::FetchPartitionRequest {
                    job_id,
                    map_index: m.map_index,
                    attempt: m.attempt,
                    partition: part,
                })
                .await?
                .into_inner();
            let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
            let mut n = 0u64;
            while let Some(c) = stream.message().await? {
                n += c.data.len() as u64;
                f.write_all(&c.data)?;
            }
            f.flush()?;
            Ok::<u64, common::dfs::DfsError>(n)
        }
        .await;
        match res {
            Ok(n) => return Ok(n),
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

//! A map attempt: read the input block (cache, disk or remote), cut it into
//! records, run the job's map, partition, and sort/spill through the bounded
//! map-output buffer into one indexed file the shuffle serves. A generator's
//! map instead writes its share straight into its output part.

use crate::input::{self, Tiers};
use crate::launch::{MapTask, OutputSpec, TaskRef};
use crate::mapout::{output_path, Combiner, MapOutputBuffer};
use crate::node::Node;
use crate::outcome::{Failure, Outcome};
use crate::output::OutputWriter;
use joblib::jobs::{formats, InputFormat, Partitioning, ResolvedJob, TaskCtx};
use std::path::PathBuf;
use std::sync::Arc;

pub async fn run(
    node: Arc<Node>,
    spec: ResolvedJob,
    t: TaskRef,
    m: MapTask,
    output: OutputSpec,
    dir: PathBuf,
) -> Result<Outcome, Failure> {
    let ResolvedJob {
        job,
        params,
        input_format: format,
        output_format: oformat,
        partitioning,
    } = spec;
    let mut ctx = TaskCtx {
        params,
        index: t.index,
        counters: Default::default(),
    };
    let mut out = Outcome::default();
    let mut tiers = Tiers::default();
    let rt = tokio::runtime::Handle::current();
    if format == InputFormat::Generated {
        out.locality = "node_local".into();
        let opts = output.put_options(&node.me.name);
        let path = output.path;
        let n2 = node.clone();
        let (written, records, ctx) = tokio::task::spawn_blocking(move || -> Result<_, Failure> {
            let mut w =
                OutputWriter::create(n2.clone(), rt, &path, &opts).map_err(Failure::from_err)?;
            let mut err = None;
            job.generate(&mut ctx, &mut |k: &[u8], v: &[u8]| {
                if err.is_some() {
                    return;
                }
                if let Err(e) = w.write_with(|b| formats::write_record(oformat, k, v, b)) {
                    err = Some(e);
                }
            });
            if let Some(e) = err {
                return Err(Failure::from_err(e));
            }
            let records = w.records;
            let n = w.finish().map_err(Failure::from_err)?;
            Ok((n, records, ctx))
        })
        .await
        .map_err(Failure::from_err)??;
        out.bytes_output = written;
        out.records_out = records;
        out.counters = ctx.counters;
        return Ok(out);
    }

    let input = m
        .input
        .ok_or_else(|| Failure::msg("map launched without an input block"))?;
    let (data, level) = input::read(&node, &input, &mut tiers)
        .await
        .map_err(Failure::from_err)?;
    out.locality = level.as_str().to_string();
    let reducers = m.reducers.max(1);
    let splits = formats::RangePartitioner::new(m.splits);
    let combiner: Option<Combiner> = if job.has_combiner() {
        let j = job.clone();
        let params = ctx.params.clone();
        Some(Arc::new(
            move |k: &[u8],
                  vals: &mut dyn Iterator<Item = &[u8]>,
                  emit: &mut dyn FnMut(&[u8], &[u8])| {
                let mut c = TaskCtx {
                    params: params.clone(),
                    ..Default::default()
                };
                j.combine(&mut c, k, vals, &mut |a: &[u8], b: &[u8]| emit(a, b));
            },
        ))
    } else {
        None
    };
    let following = m.following;
    let offset = m.input_offset;
    let (index, attempt) = (t.index, t.attempt);
    let sort_buffer = m.sort_buffer_bytes as usize;
    let n2 = node.clone();
    let (idx, stats, ctx, tiers, records_out, spills) =
        tokio::task::spawn_blocking(move || -> Result<_, Failure> {
            std::fs::create_dir_all(&dir).map_err(Failure::from_err)?;
            let mut buf = MapOutputBuffer::new(
                dir.join(format!("spill-{index}-{attempt}")),
                reducers,
                sort_buffer,
                combiner,
            )
            .with_source(data.clone());
            let mut next_i = 0;
            let mut tiers = tiers;
            let mut fetch_err = None;
            let mut next = || -> Option<bytes::Bytes> {
                let loc = following.get(next_i)?;
                next_i += 1;
                match rt.block_on(input::read(&n2, loc, &mut tiers)) {
                    Ok((b, _)) => Some(b),
                    Err(e) => {
                        fetch_err = Some(e);
                        None
                    }
                }
            };
            let mut io_err = None;
            let mut records_out = 0u64;
            let stats = {
                let mut emit = |k: &[u8], v: &[u8]| {
                    if io_err.is_some() {
                        return;
                    }
                    let p = match partitioning {
                        Partitioning::Hash => formats::hash_partition(k, reducers),
                        Partitioning::TotalOrder => splits.partition(k),
                    };
                    records_out += 1;
                    if let Err(e) = buf.add(p, k, v) {
                        io_err = Some(e);
                    }
                };
                let stats = {
                    let mut on_record = |k: &[u8], v: &[u8]| job.map(&mut ctx, k, v, &mut emit);
                    formats::read_split(format, &data, offset, &mut next, &mut on_record)
                };
                // Jobs that summarise a whole block (the validators) emit here.
                job.map_finish(&mut ctx, &mut emit);
                stats
            };
            if let Some(e) = fetch_err {
                return Err(Failure::from_err(e));
            }
            let stats = stats.map_err(Failure::from_err)?;
            if let Some(e) = io_err {
                return Err(Failure::from_err(e));
            }
            let spills = buf.spills();
            let idx = buf
                .finish(&output_path(&dir, index, attempt))
                .map_err(Failure::from_err)?;
            Ok((idx, stats, ctx, tiers, records_out, spills))
        })
        .await
        .map_err(Failure::from_err)??;
    out.bytes_cache = tiers.cache;
    out.bytes_local = tiers.local;
    out.bytes_remote_rack = tiers.remote_rack;
    out.bytes_remote_off_rack = tiers.remote_off_rack;
    out.read_s = tiers.read_s;
    out.records_in = stats.records;
    out.records_out = records_out;
    out.spills = spills as u32;
    out.counters = ctx.counters;
    let _ = idx;
    Ok(out)
}

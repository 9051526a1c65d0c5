//! A map attempt: read the input block (cache, disk or remote), cut it into
//! records, run the job's map (its code, or its command or program as a
//! child process), partition, and sort/spill through the bounded map-output
//! buffer into one indexed file the shuffle serves. A generator's map, and
//! any map of a map-only job, writes its output part instead.

use crate::code::{Code, TaskCode};
use crate::external::{self, child, combine, Attempt};
use crate::input::{self, Tiers};
use crate::launch::{MapTask, OutputSpec, TaskRef};
use crate::mapout::{output_path, Combiner, MapOutputBuffer};
use crate::node::Node;
use crate::outcome::{Failure, Outcome};
use crate::output::OutputWriter;
use joblib::jobs::{formats, InputFormat, Partitioning, TaskCtx};
use mrjob::TaskMode;
use std::path::PathBuf;
use std::sync::Arc;

pub async fn run(
    node: Arc<Node>,
    spec: TaskCode,
    t: TaskRef,
    m: MapTask,
    output: OutputSpec,
    dir: PathBuf,
) -> Result<Outcome, Failure> {
    let TaskCode {
        code,
        mut params,
        input_format: format,
        output_format: oformat,
        partitioning,
        map_only,
    } = spec;
    // An external job's working directory and children; the guard stays
    // in this future, so a killed attempt kills its children.
    if !m.input_path.is_empty() {
        let key = mrjob::spec::keys::INPUT_FILE;
        params.extra.insert(key.into(), m.input_path.clone());
    }
    let (ext, _guard) = Attempt::for_code(&node, &code, &params, t, &dir).await?;
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
        let (written, records, ctx) =
            crate::progress::spawn_blocking(move || -> Result<_, Failure> {
                let mut w = OutputWriter::create(n2.clone(), rt, &path, &opts)
                    .map_err(Failure::from_err)?;
                let mut err = None;
                let mut put = |k: &[u8], v: &[u8]| {
                    w.write_with(|b| formats::write_record(oformat, k, v, b))
                        .map_err(std::io::Error::other)
                };
                match (&code, &ext) {
                    (Code::Builtin(job), _) => job.generate(&mut ctx, &mut |k: &[u8], v: &[u8]| {
                        if err.is_none() {
                            err = put(k, v).err();
                        }
                    }),
                    (Code::External(_), Some(a)) => {
                        let c = a.child(TaskMode::Map).expect("every job has a map");
                        let ran = child::run(c, &a.killer, |_| (), &mut put)?;
                        external::add_counters(&mut ctx, ran.counters);
                    }
                    (Code::External(_), None) => unreachable!("prepared above"),
                }
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
    crate::progress::bump();
    out.locality = level.as_str().to_string();
    let reducers = m.reducers.max(1);
    let splits = formats::RangePartitioner::new(m.splits);
    let combiner: Option<Combiner> = match &code {
        Code::Builtin(job) if job.has_combiner() => {
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
        }
        _ => None,
    };
    let following = m.following;
    let offset = m.input_offset;
    let (index, attempt) = (t.index, t.attempt);
    let sort_buffer = m.sort_buffer_bytes as usize;
    let n2 = node.clone();
    let (written, stats, ctx, tiers, records_out, spills) =
        crate::progress::spawn_blocking(move || -> Result<_, Failure> {
            std::fs::create_dir_all(&dir).map_err(Failure::from_err)?;
            // A map-only job's records go straight into its output part.
            let mut part = None;
            let mut buf = None;
            if map_only {
                let opts = output.put_options(&n2.me.name);
                part = Some(
                    OutputWriter::create(n2.clone(), rt.clone(), &output.path, &opts)
                        .map_err(Failure::from_err)?,
                );
            } else {
                buf = Some(
                    MapOutputBuffer::new(
                        dir.join(format!("spill-{index}-{attempt}")),
                        reducers,
                        sort_buffer,
                        combiner,
                    )
                    .with_source(data.clone()),
                );
            }
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
            let mut records_out = 0u64;
            let mut put = |k: &[u8], v: &[u8]| -> std::io::Result<()> {
                records_out += 1;
                match (&mut part, &mut buf) {
                    (Some(w), _) => w
                        .write_with(|b| formats::write_record(oformat, k, v, b))
                        .map_err(std::io::Error::other),
                    (None, Some(buf)) => {
                        let p = match partitioning {
                            Partitioning::Hash => formats::hash_partition(k, reducers),
                            Partitioning::TotalOrder => splits.partition(k),
                        };
                        buf.add(p, k, v)
                    }
                    (None, None) => unreachable!("one of the two is made above"),
                }
            };
            let stats = match (&code, &ext) {
                (Code::Builtin(job), _) => {
                    let mut io_err = None;
                    let mut emit = |k: &[u8], v: &[u8]| {
                        if io_err.is_none() {
                            io_err = put(k, v).err();
                        }
                    };
                    let stats = {
                        let mut on_record = |k: &[u8], v: &[u8]| job.map(&mut ctx, k, v, &mut emit);
                        let read = match job.maps_runs_of_lines() {
                            true => formats::read_split_runs,
                            false => formats::read_split,
                        };
                        read(format, &data, offset, &mut next, &mut on_record)
                    };
                    // Jobs that summarise a whole block (the validators) emit here.
                    job.map_finish(&mut ctx, &mut emit);
                    if let Some(e) = io_err {
                        return Err(Failure::from_err(e));
                    }
                    stats
                }
                (Code::External(_), Some(a)) => {
                    let c = a.child(TaskMode::Map).expect("every job has a map");
                    let data = &data;
                    let ran = child::run(
                        c,
                        &a.killer,
                        |feed| {
                            formats::read_split(format, data, offset, &mut next, &mut |k, v| {
                                feed(k, v)
                            })
                        },
                        &mut put,
                    )?;
                    external::add_counters(&mut ctx, ran.counters);
                    ran.fed
                }
                (Code::External(_), None) => unreachable!("prepared above"),
            };
            if let Some(e) = fetch_err {
                return Err(Failure::from_err(e));
            }
            let stats = stats.map_err(Failure::from_err)?;
            let (written, spills) = match (part, buf) {
                (Some(w), _) => (w.finish().map_err(Failure::from_err)?, 0),
                (None, Some(buf)) => {
                    let spills = buf.spills();
                    let path = output_path(&dir, index, attempt);
                    let idx = buf.finish(&path).map_err(Failure::from_err)?;
                    if let Some((a, c)) = ext
                        .as_ref()
                        .and_then(|a| Some((a, a.child(TaskMode::Combine)?)))
                    {
                        let how = combine::Repartition {
                            reducers,
                            partitioning,
                            splits: &splits,
                            sort_buffer,
                        };
                        let done = combine::combine(c, &a.killer, &path, &idx, how)?;
                        ctx.count("combine_input_records", done.records_in);
                        ctx.count("combine_output_records", done.records_out);
                    }
                    (0, spills)
                }
                (None, None) => unreachable!("one of the two is made above"),
            };
            Ok((written, stats, ctx, tiers, records_out, spills))
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
    out.bytes_output = written;
    out.spills = spills as u32;
    out.counters = ctx.counters;
    Ok(out)
}

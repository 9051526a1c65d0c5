//! A map attempt: read the input block (cache, disk or remote), cut it into
//! records, run the job's map (its code, or its command or program as a
//! child process), partition, and sort/spill through the bounded map-output
//! buffer into one indexed file the shuffle serves. A generator's map, and
//! any map of a map-only job, writes its output part instead.

use crate::task::code::{Code, TaskCode};
use crate::task::external::{self, child, combine, Attempt};
use crate::task::input::{self, InputError, Tiers};
use crate::task::mapout::{output_path, refs, Combiner, MapOutputBuffer};
use crate::task::outcome::{Failure, Outcome};
use crate::task::part::put_options;
use crate::task::part::OutputWriter;
use crate::task::runner::TaskRunner;
use joblib::jobs::{formats, InputFormat, JobParams, OutputFormat, Partitioning, TaskCtx};
use mrjob::TaskMode;
use protocol::BlockLocation;
use protocol::{MapLaunch, OutputSpec, TaskRef};
use std::path::PathBuf;
use std::sync::Arc;

pub async fn run(
    runner: Arc<TaskRunner>,
    spec: TaskCode,
    t: TaskRef,
    m: MapLaunch,
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
    let (ext, _guard) = Attempt::for_code(&runner, &code, &params, t, &dir).await?;
    let ctx = TaskCtx {
        params,
        index: t.index,
        counters: Default::default(),
    };
    if format == InputFormat::Generated {
        return generate(runner, code, ext, ctx, output, oformat).await;
    }
    let mut out = Outcome::default();
    let mut tiers = Tiers::default();
    let input = m
        .input
        .ok_or_else(|| Failure::msg("map launched without an input block"))?;
    let (data, level) = input::read(&runner, &input, &mut tiers)
        .await
        .map_err(Failure::from_err)?;
    crate::task::progress::bump();
    out.locality = level.as_str().to_string();
    let combiner = combiner_of(&code, &ctx.params);
    // A built-in map's records may be slices of the block: its output can
    // then point into the block's file rather than copy them.
    let source_file = match &code {
        Code::Builtin(_) if data.len() as u64 == input.block.len => {
            runner.blocks().store().file_of(&input.block)
        }
        _ => None,
    };
    let work = MapWork {
        runner,
        rt: tokio::runtime::Handle::current(),
        code,
        ext,
        ctx,
        data,
        source_file,
        following: m.following,
        offset: m.input_offset,
        format,
        oformat,
        partitioning,
        splits: formats::RangePartitioner::new(m.splits),
        reducers: m.reducers.max(1),
        sort_buffer: m.sort_buffer_bytes as usize,
        combiner,
        map_only,
        output,
        dir,
        task: t,
        tiers,
    };
    let done = crate::task::progress::spawn_blocking(move || work.run())
        .await
        .map_err(Failure::from_err)??;
    out.bytes_cache = done.tiers.cache;
    out.bytes_local = done.tiers.local;
    out.bytes_remote_rack = done.tiers.remote_rack;
    out.bytes_remote_off_rack = done.tiers.remote_off_rack;
    out.read_s = done.tiers.read_s;
    out.records_in = done.stats.records;
    out.records_out = done.records_out;
    out.bytes_output = done.written;
    out.spills = done.spills as u32;
    out.counters = done.ctx.counters;
    Ok(out)
}

/// A generator's map: its records go straight into its output part.
async fn generate(
    runner: Arc<TaskRunner>,
    code: Code,
    ext: Option<Attempt>,
    mut ctx: TaskCtx,
    output: OutputSpec,
    oformat: OutputFormat,
) -> Result<Outcome, Failure> {
    let rt = tokio::runtime::Handle::current();
    let opts = put_options(&output, &runner.me().name);
    let path = output.path;
    let (written, records, ctx) =
        crate::task::progress::spawn_blocking(move || -> Result<_, Failure> {
            let mut w = OutputWriter::create(runner.dfs(), runner.pipeline(), rt, &path, &opts)
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
            let records = w.records();
            let n = w.finish().map_err(Failure::from_err)?;
            Ok((n, records, ctx))
        })
        .await
        .map_err(Failure::from_err)??;
    Ok(Outcome {
        locality: "node_local".into(),
        bytes_output: written,
        records_out: records,
        counters: ctx.counters,
        ..Default::default()
    })
}

/// A built-in job's combiner, run on the sort buffer's spills; an external
/// job's runs as its own child after the map (see [`MapWork::finish`]).
fn combiner_of(code: &Code, params: &JobParams) -> Option<Combiner> {
    let Code::Builtin(job) = code else {
        return None;
    };
    if !job.has_combiner() {
        return None;
    }
    let j = job.clone();
    let params = params.clone();
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

/// The job's `map_output_by_reference`: `auto` (the default) references
/// an identity map's records in its block when they average
/// [`refs::MIN_RECORD`] bytes or more, `always` whatever their size,
/// `never` copies them. Returns the smallest average record referenced,
/// `None` for never.
fn by_reference(p: &JobParams) -> Result<Option<usize>, Failure> {
    match p.extra.get("map_output_by_reference").map(String::as_str) {
        None | Some("auto") => Ok(Some(refs::MIN_RECORD)),
        Some("always") => Ok(Some(0)),
        Some("never") => Ok(None),
        Some(v) => Err(Failure::msg(format!(
            "bad map_output_by_reference {v:?}: auto, always or never"
        ))),
    }
}

/// Everything the blocking part of a map needs.
struct MapWork {
    runner: Arc<TaskRunner>,
    rt: tokio::runtime::Handle,
    code: Code,
    ext: Option<Attempt>,
    ctx: TaskCtx,
    data: bytes::Bytes,
    /// The store's file of `data`, when it is one.
    source_file: Option<PathBuf>,
    /// The blocks after this one, for the record that straddles its end.
    following: Vec<BlockLocation>,
    offset: u64,
    format: InputFormat,
    oformat: OutputFormat,
    partitioning: Partitioning,
    splits: formats::RangePartitioner,
    reducers: u32,
    sort_buffer: usize,
    combiner: Option<Combiner>,
    map_only: bool,
    output: OutputSpec,
    dir: PathBuf,
    task: TaskRef,
    tiers: Tiers,
}

/// Where a map's records go: a map-only job's output part, or the sort
/// buffer the shuffle's file is made from.
enum Sink {
    Part(OutputWriter),
    Buffer(MapOutputBuffer),
}

/// What a map did, for its report.
struct MapDone {
    written: u64,
    stats: formats::SplitStats,
    ctx: TaskCtx,
    tiers: Tiers,
    records_out: u64,
    spills: usize,
}

impl MapWork {
    fn run(mut self) -> Result<MapDone, Failure> {
        std::fs::create_dir_all(&self.dir).map_err(Failure::from_err)?;
        let (index, attempt) = (self.task.index, self.task.attempt);
        let mut sink = if self.map_only {
            let opts = put_options(&self.output, &self.runner.me().name);
            let w = OutputWriter::create(
                self.runner.dfs(),
                self.runner.pipeline(),
                self.rt.clone(),
                &self.output.path,
                &opts,
            )
            .map_err(Failure::from_err)?;
            Sink::Part(w)
        } else {
            let spill = self.dir.join(format!("spill-{index}-{attempt}"));
            let buf =
                MapOutputBuffer::new(spill, self.reducers, self.sort_buffer, self.combiner.take());
            let buf = buf.with_source(self.data.clone());
            Sink::Buffer(
                match (self.source_file.take(), by_reference(&self.ctx.params)?) {
                    (Some(f), Some(min)) => buf.with_source_file(f, min),
                    _ => buf,
                },
            )
        };
        let mut records_out = 0u64;
        // Out of `self` while `put` reads it and `feed` borrows `self`.
        let splits = std::mem::take(&mut self.splits);
        let (stats, fetch_err) = {
            let (oformat, partitioning, reducers) =
                (self.oformat, self.partitioning, self.reducers);
            let splits = &splits;
            let mut put = |k: &[u8], v: &[u8]| -> std::io::Result<()> {
                records_out += 1;
                match &mut sink {
                    Sink::Part(w) => w
                        .write_with(|b| formats::write_record(oformat, k, v, b))
                        .map_err(std::io::Error::other),
                    Sink::Buffer(buf) => {
                        let p = match partitioning {
                            Partitioning::Hash => formats::hash_partition(k, reducers),
                            Partitioning::TotalOrder => splits.partition(k),
                        };
                        buf.add(p, k, v)
                    }
                }
            };
            self.feed(&mut put)?
        };
        self.splits = splits;
        if let Some(e) = fetch_err {
            return Err(Failure::from_err(e));
        }
        let stats = stats.map_err(Failure::from_err)?;
        let (written, spills) = self.finish(sink)?;
        Ok(MapDone {
            written,
            stats,
            ctx: self.ctx,
            tiers: self.tiers,
            records_out,
            spills,
        })
    }

    /// Reads this map's records and runs the map on them, its output going
    /// to `put`. Returns what the reader counted, and the error of a
    /// following block that could not be read, if one.
    #[allow(clippy::type_complexity)]
    fn feed(
        &mut self,
        put: &mut dyn FnMut(&[u8], &[u8]) -> std::io::Result<()>,
    ) -> Result<
        (
            Result<formats::SplitStats, formats::FormatError>,
            Option<InputError>,
        ),
        Failure,
    > {
        let (runner, rt, following) = (&self.runner, &self.rt, &self.following);
        let tiers = &mut self.tiers;
        let mut next_i = 0;
        let mut fetch_err = None;
        let mut next = || -> Option<bytes::Bytes> {
            let loc = following.get(next_i)?;
            next_i += 1;
            match rt.block_on(input::read(runner, loc, tiers)) {
                Ok((b, _)) => Some(b),
                Err(e) => {
                    fetch_err = Some(e);
                    None
                }
            }
        };
        let (format, offset, data, ctx) = (self.format, self.offset, &self.data, &mut self.ctx);
        let stats = match (&self.code, &self.ext) {
            (Code::Builtin(job), _) => {
                let mut io_err = None;
                let mut emit = |k: &[u8], v: &[u8]| {
                    if io_err.is_none() {
                        io_err = put(k, v).err();
                    }
                };
                let stats = {
                    let mut on_record = |k: &[u8], v: &[u8]| job.map(ctx, k, v, &mut emit);
                    let read = match job.maps_runs_of_lines() {
                        true => formats::read_split_runs,
                        false => formats::read_split,
                    };
                    read(format, data, offset, &mut next, &mut on_record)
                };
                // Jobs that summarise a whole block (the validators) emit here.
                job.map_finish(ctx, &mut emit);
                if let Some(e) = io_err {
                    return Err(Failure::from_err(e));
                }
                stats
            }
            (Code::External(_), Some(a)) => {
                let c = a.child(TaskMode::Map).expect("every job has a map");
                let feed = |feed: &mut dyn FnMut(&[u8], &[u8])| {
                    formats::read_split(format, data, offset, &mut next, &mut |k, v| feed(k, v))
                };
                let ran = child::run(c, &a.killer, feed, put)?;
                external::add_counters(ctx, ran.counters);
                ran.fed
            }
            (Code::External(_), None) => unreachable!("prepared above"),
        };
        Ok((stats, fetch_err))
    }

    /// Closes the map's output: a map-only job's part, or the sort
    /// buffer's spills merged into the file the shuffle serves (then
    /// combined by an external job's combiner). Returns the part's bytes
    /// and the spills.
    fn finish(&mut self, sink: Sink) -> Result<(u64, usize), Failure> {
        let buf = match sink {
            Sink::Part(w) => return Ok((w.finish().map_err(Failure::from_err)?, 0)),
            Sink::Buffer(buf) => buf,
        };
        let spills = buf.spills();
        let path = output_path(&self.dir, self.task.index, self.task.attempt);
        let idx = buf.finish(&path).map_err(Failure::from_err)?;
        if refs::refs_path(&path).exists() {
            self.ctx.count("map_outputs_by_reference", 1);
        }
        if let Some((a, c)) = self
            .ext
            .as_ref()
            .and_then(|a| Some((a, a.child(TaskMode::Combine)?)))
        {
            let how = combine::Repartition {
                reducers: self.reducers,
                partitioning: self.partitioning,
                splits: &self.splits,
                sort_buffer: self.sort_buffer,
            };
            let done = combine::combine(c, &a.killer, &path, &idx, how)?;
            self.ctx.count("combine_input_records", done.records_in);
            self.ctx.count("combine_output_records", done.records_out);
        }
        Ok((0, spills))
    }
}

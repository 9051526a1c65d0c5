//! `mr local JOB FILE`: the same map and reduce code in one process with no
//! cluster, the baseline every cluster figure is compared against.

use super::RecordFormat;
use crate::local::{try_run_local, LocalOptions};
use anyhow::Context;
use joblib::jobs::{registry, JobParams};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct LocalArgs {
    /// wordcount, sort or terasort.
    name: String,
    /// A local input file.
    file: PathBuf,
    #[arg(long, short = 'r', default_value_t = 4)]
    reducers: u32,
    /// Sort's record format: `kv` (length-prefixed records) or `lines`
    /// (KEY<TAB>VALUE).
    #[arg(long, value_enum, default_value_t = RecordFormat::Kv)]
    format: RecordFormat,
    /// Threads for the map phase.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Write the output parts here.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Sort: range-partition by split points sampled from the map
    /// output, so that the parts in order are one sorted sequence (as
    /// `mr job run sort --total-order`).
    #[arg(long)]
    total_order: bool,
    #[arg(long)]
    json: bool,
}

/// Runs `mr local`.
pub fn dispatch(a: LocalArgs) -> anyhow::Result<()> {
    let mut params = JobParams {
        format_lines: a.format == RecordFormat::Lines,
        reducers: a.reducers,
        ..Default::default()
    };
    if a.total_order {
        params.extra.insert("total_order".into(), "true".into());
    }
    tokio::task::block_in_place(|| {
        run(
            &a.name,
            &a.file,
            a.reducers,
            params,
            a.threads,
            a.output.as_deref(),
            a.json,
        )
    })
}

pub fn run(
    name: &str,
    file: &Path,
    reducers: u32,
    params: JobParams,
    threads: usize,
    out_dir: Option<&Path>,
    as_json: bool,
) -> anyhow::Result<()> {
    let job = registry::lookup(name).with_context(|| {
        format!(
            "unknown job {name:?}; known jobs: {}",
            registry::NAMES.join(", ")
        )
    })?;
    if reducers == 0 {
        anyhow::bail!("--reducers must be at least 1");
    }
    let t0 = Instant::now();
    let input = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let read_s = t0.elapsed().as_secs_f64();
    let opts = LocalOptions {
        threads: threads.max(1),
        ..LocalOptions::default()
    };
    let t1 = Instant::now();
    // Split points come from the data itself (the local run samples its map output).
    let run = try_run_local(job.as_ref(), &params, &input, reducers, &[], opts)?;
    let compute_s = t1.elapsed().as_secs_f64();
    let out_bytes: usize = run.parts.iter().map(Vec::len).sum();
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir)?;
        for (i, p) in run.parts.iter().enumerate() {
            std::fs::write(dir.join(format!("part-{i:05}")), p)?;
        }
    }
    let total = t0.elapsed().as_secs_f64();
    let mib = input.len() as f64 / (1 << 20) as f64;
    if as_json {
        println!(
            "{}",
            serde_json::json!({"job": name, "input_bytes": input.len(), "output_bytes": out_bytes,
                "read_s": read_s, "compute_s": compute_s, "exec_time_s": total,
                "throughput_mib_s": mib / total.max(1e-9), "threads": threads, "counters": run.counters})
        );
    } else {
        println!(
            "local {name}: {mib:.0} MiB in {total:.2}s ({:.1} MiB/s; read {read_s:.2}s, compute {compute_s:.2}s), output {}",
            mib / total.max(1e-9),
            common::units::format_size(out_bytes as u64)
        );
    }
    Ok(())
}

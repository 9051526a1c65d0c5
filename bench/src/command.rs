//! `mr bench` on the command line: its arguments (clap) and the dispatch to
//! the harness's modules. Only the subcommands that run jobs load the
//! cluster file.

use crate::args::{parse_duration, parse_size, RecordFormat};
use clap::Subcommand;
use std::path::{Path, PathBuf};

/// With no subcommand: runs every workload under every scheduler, `--reps`
/// times, against the cluster the config names; validates each job against
/// an oracle; writes results.csv, hibench.report, summary.md and PNG plots
/// into `--out`. Inputs are generated once under /bench/input and reused.
///
/// Example, on the emulated LAN:
///   scripts/lan.sh up --dir /tmp/lan --workers 6 --racks 2 --host-rate 200mbit --uplink-rate 50mbit
///   mr -c /tmp/lan/cluster.toml bench --schedulers fifo,delay,lsap --out /tmp/bench
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    cmd: Option<BenchCmd>,
    /// wordcount, sort, terasort and/or mixed (the seeds' multi-job
    /// schedule), comma-separated.
    #[arg(long, default_value = "wordcount,sort,terasort,mixed")]
    workloads: String,
    /// Before each run: `cold` drops the input's blocks from every block
    /// cache (the OS page cache keeps them, so a node-local read may still
    /// be a memory read); `cold-os` also drops the OS page cache (root
    /// only; this machine's kernel); `warm` pins the input in the caches.
    #[arg(long, default_value = "cold")]
    cache: String,
    /// Mixed: jobs per run.
    #[arg(long, default_value_t = 20)]
    jobs: u32,
    /// Mixed: mean of the exponential inter-arrival times (the paper's 14s,
    /// scaled to a small cluster).
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    mean_interarrival: std::time::Duration,
    /// Mixed: factor on Table 4's map counts (default: pool blocks / 200).
    #[arg(long)]
    map_scale: Option<f64>,
    #[command(flatten)]
    common: BenchCommon,
}

/// What every cluster benchmark takes.
#[derive(clap::Args, Clone)]
pub(crate) struct BenchCommon {
    /// Policies to compare, comma-separated (`mr admin scheduler list`).
    #[arg(long, default_value = "fifo,delay,lsap", value_delimiter = ',')]
    schedulers: Vec<String>,
    /// Input per workload (the mixed workload's block pool).
    #[arg(long, default_value = "256MiB", value_parser = parse_size)]
    size: u64,
    /// Block size of the generated inputs.
    #[arg(long, default_value = "16MiB", value_parser = parse_size)]
    block_size: u64,
    /// Runs per cell (5: the default of a comparison, so intervals
    /// resample five runs); figures are medians over them.
    #[arg(long, default_value_t = 5)]
    reps: u32,
    /// Reducers per job.
    #[arg(long, short = 'r', default_value_t = 4)]
    reducers: u32,
    /// Seeds the generated inputs and the mixed schedule.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where results go (created if missing).
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
}

#[derive(Subcommand)]
pub(crate) enum BenchCmd {
    /// Decision latency of each policy, per heartbeat and per batch, on
    /// synthetic clusters (4 slots per node, half idle, 2 tasks per node).
    Sched {
        /// Cluster sizes, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "100,1000")]
        nodes: Vec<usize>,
        /// Policies (default: every registered one).
        #[arg(long, value_delimiter = ',')]
        scheduler: Vec<String>,
        /// Also time the batch policies' (lsap, lsap-fair) first
        /// decision on 5000 nodes with 100 000 pending maps (use a release
        /// build).
        #[arg(long)]
        at_scale: bool,
        #[arg(long)]
        json: bool,
    },
    /// The CLQLMRS paper's sweeps on the cluster: cache-size (cache
    /// locality vs cache size, Fig. 5), block-size (local-task rate vs block
    /// size, Fig. 6) or maps (vs number of map tasks, Fig. 7). Writes
    /// sweep-KIND.csv, .md and .png into --out.
    Sweep {
        /// cache-size, block-size or maps.
        kind: String,
        /// The swept values, comma-separated: sizes (cache-size,
        /// block-size) or map counts (default per kind: cache-size
        /// 16MiB..256MiB, block-size 4MiB..64MiB, maps 6,12,24,48).
        #[arg(long)]
        values: Option<String>,
        /// wordcount, sort or terasort.
        #[arg(long, default_value = "wordcount")]
        workload: String,
        #[command(flatten)]
        common: BenchCommon,
    },
    /// The time `mr job run` takes as its user sees it, for one-block
    /// WordCount jobs on this cluster: p50 and p99 over --runs jobs, each
    /// the real `mr job run` in a child process, beside the master's
    /// exec_time_s. scripts/bench-latency.sh runs it at several heartbeat
    /// intervals.
    Latency {
        /// Timed jobs (after one untimed warm-up job).
        #[arg(long, default_value_t = 40)]
        runs: u32,
        /// Bytes of text in the one input block.
        #[arg(long, default_value = "1300KB", value_parser = parse_size)]
        size: u64,
        #[arg(long, short = 'r', default_value_t = 4)]
        reducers: u32,
        /// Seeds the input's words.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// A job's floor: its work done by a tight program in this process
    /// with two threads, timed. The program maps the input files (from the
    /// page cache once they have been read), counts the words or sorts the
    /// records in memory, and writes the output the job would
    /// (WordCount's `word<TAB>count` lines, the sorts' records in total
    /// order) into the directory --out, one part per thread
    /// (`part-00000`, ...), each fsynced. scripts/bench.sh runs it on each
    /// job's input in the same run as the job and divides the job's time by
    /// it: the cost of the runtime on a machine whose speed moves between
    /// runs. No cluster needed.
    ///
    /// Example: mr fs get '/in/part-*' /tmp/in && mr bench floor --job
    /// terasort --input /tmp/in/part-* --out /tmp/floor-out --json
    Floor {
        /// wordcount, sort (total order) or terasort.
        #[arg(long, value_enum)]
        job: FloorJobArg,
        /// The input files, read in the order given (the job's input parts
        /// in path order, as `mr fs get '/in/part-*' DIR` writes them).
        #[arg(long, num_args = 1.., required = true)]
        input: Vec<PathBuf>,
        /// The output directory (created if missing; `part-*` files already
        /// in it replaced): the output's parts, read in name order the job's
        /// output parts in order.
        #[arg(long)]
        out: PathBuf,
        /// Sort only: `kv` (length-prefixed records, `mr gen
        /// randomwriter`'s) or `lines` (KEY<TAB>VALUE), as `mr local`.
        #[arg(long, value_enum)]
        format: Option<RecordFormat>,
        /// One JSON object with the timings (read_s, work_s, write_s,
        /// exec_time_s) and the record counts.
        #[arg(long)]
        json: bool,
    },
    /// A line chart from a CSV of `series,x,y` rows (a header row is
    /// skipped): one line per series. scripts/scaling.sh draws the engine's
    /// time per GiB against the input size with it.
    ///
    /// Example: mr bench plot scaling.csv --out scaling.png --title
    /// "TeraSort" --x-label "input, GiB" --y-label "s per GiB"
    Plot {
        csv: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value = "")]
        title: String,
        #[arg(long, default_value = "x")]
        x_label: String,
        #[arg(long, default_value = "y")]
        y_label: String,
        /// A log2 x axis (for sizes that double).
        #[arg(long)]
        x_log2: bool,
    },
    /// Write the summary.md, report.json's figures and plots of an `mr
    /// bench trace --out DIR` directory again from its CSVs and
    /// report.json, running nothing (for a report whose definitions or
    /// format changed after a long run, or a run that was interrupted:
    /// every finished cell is in the CSVs). The report names the commit of
    /// the runs and its own.
    ///
    /// Example: mr bench trace-report docs/bench/load
    TraceReport {
        /// The directory `mr bench trace --out` wrote.
        dir: PathBuf,
    },
    /// Replay a SWIM trace (traces/swim/: Facebook 2009 and 2010) onto the
    /// cluster: each row a synthetic job (`swim`) with the row's input,
    /// shuffle and output scaled to this cluster, its output validated. A
    /// solo pass times every job alone; then, for each --load, every policy
    /// replays the slice --reps times (the policies of a repetition in
    /// turn, interleaved) with the arrivals compressed until the busier of
    /// the map and reduce slots has that offered load. Writes
    /// trace-jobs.csv, trace-runs.csv, solo.csv, report.json (every figure,
    /// stable names) and summary.md into --out after every run: per load,
    /// the load of each resource and whether it was sustained, each
    /// policy's mean job time with a 95 % t interval over runs and a
    /// bootstrap over trace rows, slowdown by size class, slot use, the
    /// --compare comparisons (paired per run, Holm-corrected) and the lab's
    /// split-half repeatability (the ceiling). With two loads or more, also
    /// job-time-vs-load.png and p99-vs-load.png. A claim needs at least 10
    /// runs: prefer several short slices (--slices) of 10 or more runs to
    /// one long slice of 5. Definitions:
    /// docs/bench/comparing-policies.md.
    ///
    /// Example: mr bench trace traces/swim/FB-2009_samples_24_times_1hr_0.tsv
    /// --jobs 20 --load 0.5 --reps 10 --schedulers fifo,delay,atlas
    /// --compare atlas:all --out /tmp/t (add --slices 4 for rows 0-79 as
    /// four slices of 20)
    Trace {
        /// A SWIM trace file (tab-separated: name, submit s, gap s, input,
        /// shuffle, output bytes).
        file: PathBuf,
        /// The slice: rows FROM..FROM+JOBS of the trace.
        #[arg(long, default_value_t = 0)]
        from: usize,
        #[arg(long, default_value_t = 40)]
        jobs: usize,
        /// Replay this many consecutive slices of --jobs rows (from --from,
        /// then --from + --jobs, ...), each a complete experiment of its
        /// own in OUT/slice-FROM (solo pass, runs, report), then
        /// OUT/slices.md: every slice's verdict on each comparison, and
        /// whether every slice makes it.
        #[arg(long, default_value_t = 1)]
        slices: u32,
        /// The traced cluster's nodes (known for the FB-2009 and FB-2010
        /// samples: 600 and 3000).
        #[arg(long)]
        traced_nodes: Option<u32>,
        /// The factor on every byte count, instead of our workers over the
        /// traced nodes (e.g. 1: the traced bytes as they are, so that jobs
        /// have more maps and longer tasks).
        #[arg(long)]
        byte_scale: Option<f64>,
        /// Offered loads, comma-separated, each a separate experiment: the
        /// arrivals compressed so that the jobs' task-seconds alone fill this
        /// share of the bottleneck's slot-seconds (map task-seconds over map
        /// slot-seconds, reduce over reduce: the larger of the two). Keep
        /// the arrivals at least three times the longest job alone (the
        /// report warns otherwise). Without it: --compression.
        #[arg(long, value_delimiter = ',')]
        load: Vec<f64>,
        /// Trace seconds per replayed second when no --load is given.
        #[arg(long, default_value_t = 60.0)]
        compression: f64,
        /// Policies, comma-separated.
        #[arg(long, default_value = "fifo,delay,lsap", value_delimiter = ',')]
        schedulers: Vec<String>,
        /// The policy the others are paired with when no --compare is given
        /// (default: the first).
        #[arg(long)]
        baseline: Option<String>,
        /// A comparison named before the runs, POLICY:COMPARATOR
        /// (repeatable): POLICY minus COMPARATOR, paired by trace row and
        /// run; COMPARATOR `all` is each other policy. Several are
        /// Holm-corrected together. Example: --compare atlas:all.
        #[arg(long = "compare")]
        compare: Vec<String>,
        /// The policy of the solo pass.
        #[arg(long, default_value = "fifo")]
        solo_policy: String,
        /// Runs of every (load, policy): a claim needs at least 10.
        #[arg(long, default_value_t = 10)]
        reps: u32,
        /// The pool's block size: a job reads whole blocks.
        #[arg(long, default_value = "1MiB", value_parser = parse_size)]
        block_size: u64,
        /// Blocks in the pool the jobs draw their input from.
        #[arg(long, default_value_t = 48)]
        pool_blocks: u32,
        /// Caps on a job's maps and reduces (the few huge rows).
        #[arg(long, default_value_t = 24)]
        max_maps: u32,
        #[arg(long, default_value_t = 4)]
        max_reduces: u32,
        /// Multiplies every row's shuffle bytes (over its input). Below 1,
        /// a map-bound shape: small shuffles, so that the maps' reads and
        /// their placement decide job time (with more maps a job, e.g.
        /// --max-maps 16, and a pool larger than the workers' caches);
        /// 1, the trace as it is, where the reduces hold most of the
        /// task-seconds.
        #[arg(long, default_value_t = 1.0)]
        shuffle_scale: f64,
        /// Seeds the pool and the blocks each row reads.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "bench-trace")]
        out: PathBuf,
        /// A job program a share of the rows run instead of the synthetic
        /// job, on the row's input and reducers: PATH[:K=V,...], e.g.
        /// target/release/example-grep:pattern=AB (repeatable; each user
        /// row draws one).
        #[arg(long = "user-job")]
        user_jobs: Vec<super::usermix::UserJob>,
        /// The share of rows that run a --user-job (a seeded draw per row,
        /// the same under every policy).
        #[arg(long, default_value_t = 0.5)]
        user_share: f64,
    },
    /// Rerun a seed paper's headline experiment with real jobs on the
    /// cluster (the emulated LAN of scripts/lan.sh is the reference) and
    /// write DIR/NAME.md (our figures beside the paper's, the setup, where
    /// ours differs), DIR/NAME.csv and a PNG. NAME: clqlmrs (job time and
    /// cache locality, FIFO/Delay/ACL/CLQLMRS), hybsmrp (locality and job
    /// time by maps per job, WordCount and TeraSort, FIFO/Fair/HybSMRP FCFS
    /// and SJF), matchmaking (locality and map response time on the
    /// Facebook-bin workload), lsap (local tasks with 3 replicas, fifo vs
    /// lsap), compat-nb (runtime of CPU- and I/O-bound batches vs Capacity
    /// with 3 queues), simulator (every policy on the cluster and in the
    /// simulator calibrated on those runs, ranked both ways, written as
    /// DIR/simulator-vs-lan.md), or all.
    ///
    /// Example: mr bench paper all --out docs/bench/papers (about an hour
    /// on the emulated LAN with --reps 3, the default being 5; --quick: a
    /// smoke run of a few minutes).
    Paper {
        name: String,
        /// Where the reports go (created if missing).
        #[arg(long, default_value = "bench-papers")]
        out: PathBuf,
        /// Runs per policy and point (5: the default of a comparison).
        #[arg(long, default_value_t = 5)]
        reps: u32,
        /// Tiny inputs and one run of each cell: checks the harness, not
        /// the papers.
        #[arg(long)]
        quick: bool,
        /// Seeds the inputs and the schedules.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Make the reports again from the CSVs (and the simulator's
        /// history) an earlier run left in --out, running no job: after a
        /// change to the simulator or to the reports (give --quick if the
        /// run had it: the experiments' points depend on it).
        #[arg(long)]
        reuse: bool,
    },
    Master(super::master::MasterArgs),
}

/// The jobs `mr bench floor` has a tight program for.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FloorJobArg {
    Wordcount,
    Sort,
    Terasort,
}

fn bench_opts(c: &BenchCommon, workloads: &str, cache: &str) -> anyhow::Result<super::Opts> {
    let quiet = crate::client::quiet();
    Ok(super::Opts {
        workloads: super::parse_workloads(workloads)?,
        schedulers: c.schedulers.clone(),
        size: c.size,
        block_size: c.block_size,
        reps: c.reps,
        cache: super::CacheMode::parse(cache)?,
        out: c.out.clone(),
        reducers: c.reducers,
        jobs: 0,
        mean_interarrival: std::time::Duration::ZERO,
        map_scale: None,
        seed: c.seed,
        quiet,
    })
}

/// Runs `mr bench` or one of its subcommands; loads the cluster file
/// `config` only for those that run jobs on the cluster.
pub async fn dispatch(config: &Path, b: BenchArgs) -> anyhow::Result<()> {
    if let Some(r) = without_cluster(&b.cmd).await {
        return r;
    }
    let cfg = crate::client::client().load_config(config)?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    match b.cmd {
        None => {
            let mut o = bench_opts(&b.common, &b.workloads, &b.cache)?;
            o.jobs = b.jobs;
            o.mean_interarrival = b.mean_interarrival;
            o.map_scale = b.map_scale;
            super::matrix::run(cfg, &o, command).await
        }
        Some(BenchCmd::Sweep {
            kind,
            values,
            workload,
            common,
        }) => {
            let kind = super::sweep::Kind::parse(&kind)?;
            let values = kind.values(values.as_deref().unwrap_or(kind.default_values()))?;
            let o = bench_opts(&common, &workload, "cold")?;
            super::sweep::run(cfg, kind, &values, &o).await
        }
        Some(BenchCmd::Paper {
            name,
            out,
            reps,
            quick,
            seed,
            reuse,
        }) => {
            let o = super::paper::PaperOpts {
                out,
                reps,
                quick,
                seed,
                quiet: crate::client::quiet(),
                reuse,
            };
            super::paper::run(cfg, &name, &o, command).await
        }
        Some(BenchCmd::Latency {
            runs,
            size,
            reducers,
            seed,
            json,
        }) => {
            let o = super::latency::LatencyOpts {
                runs,
                size,
                reducers,
                seed,
                json,
            };
            super::latency::run(config, &o).await
        }
        Some(cmd @ BenchCmd::Trace { slices, .. }) => {
            super::trace_slices::run(cfg, &trace_opts(cmd), slices, command).await
        }
        Some(BenchCmd::Sched { .. })
        | Some(BenchCmd::Plot { .. })
        | Some(BenchCmd::TraceReport { .. })
        | Some(BenchCmd::Master(_))
        | Some(BenchCmd::Floor { .. }) => {
            unreachable!("handled before loading the config")
        }
    }
}

/// The subcommands that run nothing on the cluster, run; `None` for the
/// others.
async fn without_cluster(cmd: &Option<BenchCmd>) -> Option<anyhow::Result<()>> {
    Some(match cmd {
        Some(BenchCmd::Sched {
            nodes,
            scheduler,
            at_scale,
            json,
        }) => crate::schedbench::run(nodes, scheduler, *at_scale, *json),
        Some(BenchCmd::Floor {
            job,
            input,
            out,
            format,
            json,
        }) => floor(*job, input, out, *format, *json),
        Some(BenchCmd::Plot {
            csv,
            out,
            title,
            x_label,
            y_label,
            x_log2,
        }) => super::plot::lines_from_csv(csv, out, title, x_label, y_label, *x_log2),
        Some(BenchCmd::TraceReport { dir }) => super::trace_reread::rewrite(dir),
        // Starts a master of its own: no cluster file.
        Some(BenchCmd::Master(a)) => super::master::run(a).await,
        _ => return None,
    })
}

/// `mr bench floor`: the tight program of a job over local files.
fn floor(
    job: FloorJobArg,
    input: &[PathBuf],
    out: &Path,
    format: Option<RecordFormat>,
    json: bool,
) -> anyhow::Result<()> {
    use super::floor::{self, FloorJob};
    let job = match (job, format) {
        (FloorJobArg::Sort, f) => FloorJob::Sort {
            lines: f == Some(RecordFormat::Lines),
        },
        (_, Some(_)) => anyhow::bail!(
            "--format is Sort's only: wordcount reads lines and terasort 100-byte records"
        ),
        (FloorJobArg::Wordcount, None) => FloorJob::WordCount,
        (FloorJobArg::Terasort, None) => FloorJob::TeraSort,
    };
    let r = tokio::task::block_in_place(|| floor::run(job, input, out))?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!("{}", r.summary());
    }
    Ok(())
}

/// `mr bench trace`'s options from its flags.
fn trace_opts(cmd: BenchCmd) -> super::replay::TraceOpts {
    let BenchCmd::Trace {
        file,
        from,
        jobs,
        slices: _,
        traced_nodes,
        byte_scale,
        load,
        compression,
        schedulers,
        baseline,
        compare,
        solo_policy,
        reps,
        block_size,
        pool_blocks,
        max_maps,
        max_reduces,
        shuffle_scale,
        seed,
        out,
        user_jobs,
        user_share,
    } = cmd
    else {
        unreachable!("called for `mr bench trace` only")
    };
    super::replay::TraceOpts {
        trace: file,
        from,
        jobs,
        traced_nodes,
        byte_scale,
        loads: load,
        compression,
        schedulers,
        baseline,
        compare,
        solo_policy,
        reps,
        block_size,
        pool_blocks,
        max_maps,
        max_reduces,
        shuffle_scale,
        seed,
        out,
        quiet: crate::client::quiet(),
        user_jobs,
        user_share,
    }
}

//! `mr`: the client of a mini-MapReduce cluster.

use clap::{Parser, Subcommand};
use cli::cmd;
use std::path::PathBuf;

/// Client of a mini-MapReduce cluster: files, caches, jobs and cluster state.
///
/// Every command reads the cluster file (`cluster.toml`) for the master's
/// address and the cluster token. `scripts/cluster.sh up` writes one.
#[derive(Parser)]
#[command(version, propagate_version = true)]
struct Cli {
    /// The cluster file.
    #[arg(
        long,
        short = 'c',
        env = "MR_CONFIG",
        default_value = "cluster.toml",
        global = true
    )]
    config: PathBuf,
    /// More log lines on stderr: -v info, -vv debug (default: warnings).
    #[arg(long, short = 'v', action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// No progress display and no log lines on stderr (for scripts);
    /// errors are still printed.
    #[arg(long, short = 'q', global = true, conflicts_with = "verbose")]
    quiet: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Files in the cluster's block store.
    #[command(subcommand)]
    Fs(FsCmd),
    /// Pin files in the workers' block caches (never evicted), or unpin them.
    #[command(subcommand)]
    Cache(CacheCmd),
    /// The cluster's workers and their state.
    #[command(subcommand)]
    Cluster(ClusterCmd),
    /// Run and follow MapReduce jobs (wordcount, sort, terasort, validators).
    #[command(subcommand)]
    Job(JobCmd),
    /// Generate benchmark input with a distributed map-only job.
    Gen {
        /// randomtextwriter, randomwriter or teragen.
        generator: String,
        #[command(flatten)]
        g: GenArgs,
    },
    /// Cluster administration.
    #[command(subcommand)]
    Admin(AdminCmd),
    /// The cluster file.
    #[command(subcommand)]
    Config(ConfigCmd),
    /// Benchmarks: a matrix of workloads × schedulers on the cluster, the
    /// CLQLMRS sweeps, and scheduler decision latency (no cluster needed).
    Bench(BenchArgs),
    /// Simulate a cluster of up to thousands of nodes running the real
    /// placement policies (discrete events, seeded: no cluster needed).
    Sim(SimArgs),
    /// Run a job's map and reduce code in this process, with no cluster:
    /// the single-process baseline for benchmarks.
    Local {
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
    },
}

/// The simulated cluster and workload. Defaults follow the LSAP paper's
/// section 4.2: 4 slots per node, replication 3, half the slots idle,
/// 20 nodes per rack, as many tasks as idle slots.
///
/// Example: mr sim --nodes 300 --scheduler fifo,lsap --seed 1 --json
#[derive(clap::Args, Clone)]
#[command(args_conflicts_with_subcommands = true)]
struct SimArgs {
    #[command(subcommand)]
    cmd: Option<SimCmd>,
    #[arg(long, default_value_t = 100)]
    nodes: usize,
    /// Racks (default: one per 20 nodes).
    #[arg(long)]
    racks: Option<usize>,
    /// Map slots per node.
    #[arg(long, default_value_t = 4)]
    slots: u32,
    /// Reduce slots per node (the trace's jobs have reduces).
    #[arg(long, default_value_t = 1)]
    reduce_slots: u32,
    #[arg(long, default_value_t = 3)]
    replication: usize,
    /// Fraction of slots free at the start (the rest run other work).
    #[arg(long, default_value_t = 0.5)]
    idle_ratio: f64,
    /// Map tasks (default: the idle slots at the start).
    #[arg(long)]
    tasks: Option<usize>,
    /// Jobs the tasks are split over (with --workload mixed: jobs in the
    /// schedule).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Seconds between job arrivals (0: all at once); with --workload
    /// mixed, the mean of the exponential inter-arrival times (0: the
    /// paper's 14 s).
    #[arg(long, default_value_t = 0.0)]
    interarrival: f64,
    /// `equal`: --tasks split over --jobs in equal shares; `mixed`: the
    /// matchmaking paper's Facebook bins (1 to 200 maps a job, times
    /// --map-scale), each map reading a block drawn from --blocks, as
    /// `mr bench --workloads mixed` runs on a cluster.
    #[arg(long, default_value = "equal", value_parser = ["equal", "mixed"])]
    workload: String,
    /// Mixed: factor on the bins' map counts.
    #[arg(long, default_value_t = 1.0)]
    map_scale: f64,
    /// Replay a SWIM trace's rows (as `mr bench trace` does: bytes scaled
    /// to --nodes, whole blocks of --block-size, at most --max-maps maps,
    /// arrivals compressed by --compression or to --load, at most
    /// --max-reduces reduces fetching the row's scaled shuffle); replaces
    /// --workload.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// The trace slice: rows FROM..FROM+N.
    #[arg(long, default_value_t = 0)]
    trace_from: usize,
    #[arg(long, default_value_t = 40)]
    trace_jobs: usize,
    /// The traced cluster's nodes (known for the FB-2009 and FB-2010 samples).
    #[arg(long)]
    traced_nodes: Option<u32>,
    /// The factor on the trace's bytes (default: --nodes over the traced nodes).
    #[arg(long)]
    byte_scale: Option<f64>,
    #[arg(long, default_value_t = 24)]
    max_maps: u32,
    #[arg(long, default_value_t = 4)]
    max_reduces: u32,
    /// Trace seconds per simulated second.
    #[arg(long, default_value_t = 60.0)]
    compression: f64,
    /// The offered load to compress the arrivals to instead, with the
    /// task model's node-local map times as the task-seconds.
    #[arg(long)]
    load: Option<f64>,
    /// Block cache per node (0: none).
    #[arg(long, default_value = "0", value_parser = parse_size)]
    cache_size: u64,
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    block_size: u64,
    /// Distinct blocks read in turn (default: one per task).
    #[arg(long)]
    blocks: Option<usize>,
    /// Heartbeat interval, seconds.
    #[arg(long, default_value_t = 3.0)]
    heartbeat: f64,
    /// When launches happen: `offer` (this project's master: at once on
    /// any node, idle nodes offered when work appears) or `heartbeat`
    /// (Hadoop's, the papers': a node gets work on its own heartbeat).
    #[arg(long, default_value = "offer", value_parser = ["offer", "heartbeat"])]
    launch: String,
    /// Remote reads and shuffle fetches share node ports and rack uplinks
    /// (max-min fair, re-evaluated as transfers start and end), whatever
    /// --model says.
    #[arg(long)]
    shared_network: bool,
    /// Task model from `mr sim calibrate` (default: this project's LAN
    /// measurements).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Policies, comma-separated; each runs on the same cluster and seed.
    #[arg(long, value_delimiter = ',', default_value = "fifo,delay,lsap")]
    scheduler: Vec<String>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Clone)]
enum SimCmd {
    /// Rerun a paper's experiment and print our figures beside the
    /// paper's (`list` names them, `all` runs every one); with --out, a
    /// markdown report and a PNG per scenario.
    Scenario {
        name: String,
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The figures as a JSON array (name, title, axes, xs, and per
        /// column our values and the paper's) instead of markdown.
        #[arg(long)]
        json: bool,
    },
    /// Fit the task model (compute s/MiB, read bandwidth per locality
    /// level) to job history: JSON lines from `mr job history ID`, or the
    /// `history/` directory `mr bench` writes.
    Calibrate {
        #[arg(long)]
        history: PathBuf,
        /// Write the model here (for `mr sim --model FILE`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Score the simulator on runs it was not fitted on, from finished
    /// `mr bench trace --out` directories alone (no cluster): fit on one
    /// run of the first directory, simulate every policy at every load of
    /// every directory, and write held-out Spearman and per-policy errors
    /// beside the rate-from-config control (default: the first
    /// directory's simulator-heldout.md).
    ///
    /// Example: mr sim heldout bench-load-fb09 bench-load-fb09-seed2 bench-load-fb10
    Heldout {
        /// `mr bench trace --out` directories; the first holds the fitted run.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// The fitted run's load (default: the first directory's first).
        #[arg(long)]
        fit_load: Option<String>,
        /// The fitted run's policy (default: the first directory's first).
        #[arg(long)]
        fit_policy: Option<String>,
        /// The fitted run's repetition.
        #[arg(long, default_value_t = 1)]
        fit_rep: u32,
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(clap::Args, Clone)]
struct GenArgs {
    /// Total bytes to generate, e.g. 256MiB.
    #[arg(long, value_parser = parse_size)]
    size: u64,
    #[arg(long)]
    output: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Block size of the generated files (default: the cluster's).
    #[arg(long, value_parser = parse_size)]
    block_size: Option<u64>,
    /// Number of maps (default: one per block of output).
    #[arg(long)]
    maps: Option<u32>,
    /// Replicas of the generated files (default: the cluster's).
    #[arg(long)]
    replication: Option<u32>,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Clone)]
struct JobArgs {
    /// wordcount, sort, terasort, teravalidate, sortvalidate, ...
    name: String,
    /// Input file or directory (repeatable).
    #[arg(long, required = true)]
    input: Vec<String>,
    /// Output directory; must not exist.
    #[arg(long)]
    output: String,
    #[arg(long, short = 'r', default_value_t = 4)]
    reducers: u32,
    /// Replicas of the output parts (default: the cluster's).
    #[arg(long)]
    output_replication: Option<u32>,
    /// Sort: make the concatenation of the parts sorted (sampled ranges).
    #[arg(long)]
    total_order: bool,
    /// Sort: `kv` (length-prefixed records) or `lines` (KEY<TAB>VALUE).
    #[arg(long, value_enum, default_value_t = RecordFormat::Kv)]
    format: RecordFormat,
    /// Queue (capacity) or pool (fair) of the job.
    #[arg(long, default_value = "default")]
    queue: String,
    /// Map-side sort buffer per task, e.g. 64MiB [default: 100MiB].
    #[arg(long, value_parser = parse_size)]
    sort_buffer: Option<u64>,
    /// Extra job parameters, key=value.
    #[arg(long = "param")]
    params: Vec<String>,
    /// `run`: the job summary as JSON; `submit`: `{"job_id": N}`.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum JobCmd {
    /// Run a job to its end, showing progress; prints the summary.
    Run(JobArgs),
    /// Queue a job and print its id at once.
    Submit(JobArgs),
    /// A job's summary.
    Status {
        id: u64,
        #[arg(long)]
        json: bool,
    },
    /// Every job the master knows.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Wait for a job to end; exits non-zero unless it succeeded.
    Wait {
        id: u64,
        #[arg(long)]
        json: bool,
    },
    /// Stop a job and every attempt of it.
    Kill {
        id: u64,
        /// The killed job's summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Per-task records of a finished job, as JSON lines.
    History { id: u64 },
}

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
struct BenchArgs {
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
struct BenchCommon {
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
enum BenchCmd {
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
    /// with two threads, timed. The program reads the input files into
    /// memory (from the page cache once they have been read), counts the
    /// words or sorts the records there, and writes the output the job
    /// would (WordCount's `word<TAB>count` lines, the sorts' records in total
    /// order) to one file with an fsync. scripts/bench.sh runs it on each
    /// job's input in the same run as the job and divides the job's time by
    /// it: the cost of the runtime on a machine whose speed moves between
    /// runs. No cluster needed.
    ///
    /// Example: mr fs get '/in/part-*' /tmp/in && mr bench floor --job
    /// terasort --input /tmp/in/part-* --out /tmp/floor.out --json
    Floor {
        /// wordcount, sort (total order) or terasort.
        #[arg(long, value_enum)]
        job: FloorJobArg,
        /// The input files, read in the order given (the job's input parts
        /// in path order, as `mr fs get '/in/part-*' DIR` writes them).
        #[arg(long, num_args = 1.., required = true)]
        input: Vec<PathBuf>,
        /// The output file (created or truncated): the job's output parts
        /// as one file.
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
    /// Write the summary.md and plots of an `mr bench trace --out DIR`
    /// directory again from its CSVs and report.json, running nothing (for
    /// a report whose format changed after a long run, or a run that was
    /// interrupted: every finished cell is in the CSVs).
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
    /// replays the slice --reps times with the arrivals compressed to that
    /// offered load. Writes trace-jobs.csv, trace-runs.csv, solo.csv,
    /// report.json, summary.md (means with 95 % intervals, slot use, paired
    /// differences with --baseline and with the best other policy) and,
    /// with two loads or more, job-time-vs-load.png and p99-vs-load.png
    /// into --out, after every run. Definitions:
    /// docs/bench/comparing-policies.md.
    ///
    /// Example: mr bench trace traces/swim/FB-2009_samples_24_times_1hr_0.tsv
    /// --jobs 40 --load 0.3,0.6,0.9 --schedulers fifo,delay,atlas --out /tmp/t
    Trace {
        /// A SWIM trace file (tab-separated: name, submit s, gap s, input,
        /// shuffle, output bytes).
        file: PathBuf,
        /// The slice: rows FROM..FROM+JOBS of the trace.
        #[arg(long, default_value_t = 0)]
        from: usize,
        #[arg(long, default_value_t = 40)]
        jobs: usize,
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
        /// share of the slot-seconds. Without it: --compression.
        #[arg(long, value_delimiter = ',')]
        load: Vec<f64>,
        /// Trace seconds per replayed second when no --load is given.
        #[arg(long, default_value_t = 60.0)]
        compression: f64,
        /// Policies, comma-separated.
        #[arg(long, default_value = "fifo,delay,lsap", value_delimiter = ',')]
        schedulers: Vec<String>,
        /// The policy the others are paired with (default: the first).
        #[arg(long)]
        baseline: Option<String>,
        /// The policy of the solo pass.
        #[arg(long, default_value = "fifo")]
        solo_policy: String,
        /// Repetitions of every (load, policy).
        #[arg(long, default_value_t = 5)]
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
        /// Seeds the pool and the blocks each row reads.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "bench-trace")]
        out: PathBuf,
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
}

fn bench_opts(c: &BenchCommon, workloads: &str, cache: &str) -> anyhow::Result<cli::bench::Opts> {
    let quiet = cli::output::quiet();
    Ok(cli::bench::Opts {
        workloads: cli::bench::parse_workloads(workloads)?,
        schedulers: c.schedulers.clone(),
        size: c.size,
        block_size: c.block_size,
        reps: c.reps,
        cache: cli::bench::CacheMode::parse(cache)?,
        out: c.out.clone(),
        reducers: c.reducers,
        jobs: 0,
        mean_interarrival: std::time::Duration::ZERO,
        map_scale: None,
        seed: c.seed,
        quiet,
    })
}

#[derive(Subcommand)]
enum AdminCmd {
    /// The placement policy.
    #[command(subcommand)]
    Scheduler(SchedCmd),
    /// Safe mode: after a start the master deletes and re-replicates
    /// nothing until enough blocks are reported (`[master]
    /// safemode_threshold`, default 0.999) or an operator leaves it.
    Safemode {
        #[arg(value_enum)]
        action: SafemodeAction,
        #[arg(long)]
        json: bool,
    },
    /// Missing, corrupt and under-replicated blocks, with the files they
    /// belong to; exits non-zero when a block is missing or corrupt.
    Fsck {
        #[arg(long)]
        json: bool,
    },
    /// Debug: call every gRPC method of the master and of each listed worker
    /// with no token and with a wrong one; each must be refused
    /// (Unauthenticated). Exits non-zero otherwise.
    AuthProbe {
        /// Worker addresses to probe (default: every worker in the cluster file).
        #[arg(long = "worker")]
        workers: Vec<String>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SafemodeAction {
    /// Show whether the master is in safe mode and how many blocks are reported.
    Get,
    /// Enter safe mode by hand (only `leave` ends it).
    Enter,
    /// Leave safe mode now.
    Leave,
}

#[derive(Subcommand)]
enum ConfigCmd {
    /// With --master: write the cluster file (to --out, else --config)
    /// from flags, as the launchers in scripts/ do; it refuses to replace
    /// a file without --force. Without --master: check the existing
    /// cluster file. With --tls (after writing, or on the existing file):
    /// make the cluster CA and a certificate per process (master, each
    /// worker, the client) carrying the addresses they are reached by, and
    /// add a [tls] section: from then on every port speaks TLS only.
    /// Again: new certificates under the same CA.
    ///
    /// Examples:
    ///   mr config init --out D/cluster.toml --master 127.0.0.1:7070
    ///     --master-dir D/master --workers-dir D
    ///     --worker name=w1,addr=127.0.0.1:7101,rack=r1
    ///     --worker name=w2,addr=127.0.0.1:7102,rack=r2
    ///   mr -c D/cluster.toml config init --tls
    Init {
        #[arg(long)]
        tls: bool,
        /// Where the certificates go (default: `tls` beside the cluster file).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// A further name or IP for every server certificate (repeatable).
        #[arg(long = "san")]
        sans: Vec<String>,
        #[command(flatten)]
        write: InitWrite,
    },
}

/// The fields of a new cluster file (`mr config init --master ...`).
#[derive(clap::Args)]
struct InitWrite {
    /// Write here (default: the --config path).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace an existing file.
    #[arg(long, short = 'f')]
    force: bool,
    /// A comment line at the top of the file (repeatable).
    #[arg(long)]
    comment: Vec<String>,
    /// The cluster token (default: 16 random bytes in hex).
    #[arg(long)]
    token: Option<String>,
    /// The master's gRPC address, IP:PORT; makes `init` write a file.
    #[arg(long)]
    master: Option<String>,
    /// The master's web UI, REST API and /metrics address, IP:PORT.
    #[arg(long)]
    http: Option<String>,
    /// The master's data directory (edit log, snapshots).
    #[arg(long)]
    master_dir: Option<PathBuf>,
    #[arg(long, default_value = "64MiB")]
    block_size: String,
    #[arg(long, default_value_t = 3)]
    replication: u32,
    /// How often each worker re-verifies its blocks (default: 6h).
    #[arg(long)]
    scan_interval: Option<String>,
    /// Heartbeat interval.
    #[arg(long, default_value = "1s")]
    heartbeat: String,
    /// Heartbeats missed before a worker is dead (default: 5).
    #[arg(long)]
    dead_after: Option<u32>,
    /// The placement policy (`mr admin scheduler list`; default: fifo).
    #[arg(long)]
    scheduler: Option<String>,
    /// A parameter of --scheduler, key=value (repeatable).
    #[arg(long = "scheduler-param")]
    scheduler_params: Vec<String>,
    /// Speculative execution of straggling tasks.
    #[arg(long)]
    speculative: bool,
    /// [network] kind: what the launcher built (loopback, emulated-lan,
    /// docker, lan).
    #[arg(long)]
    network: Option<String>,
    /// A comment line just above [network].
    #[arg(long)]
    network_comment: Option<String>,
    /// [network] host_rate, e.g. 200mbit.
    #[arg(long)]
    host_rate: Option<String>,
    /// [network] uplink_rate, e.g. 50mbit.
    #[arg(long)]
    uplink_rate: Option<String>,
    /// A worker, repeatable: name=NAME,addr=IP:PORT,rack=RACK and
    /// optionally slots=N (map and reduce), map_slots=N, reduce_slots=N,
    /// cache=SIZE, data_dir=PATH.
    #[arg(long = "worker")]
    workers: Vec<String>,
    /// Map and reduce slots of a worker that does not say.
    #[arg(long, default_value_t = 2)]
    slots: u32,
    /// Block cache of a worker that does not say.
    #[arg(long, default_value = "256MiB")]
    cache: String,
    /// A worker's data_dir, when it does not say, is DIR/NAME.
    #[arg(long)]
    workers_dir: Option<PathBuf>,
}

impl InitWrite {
    /// The layout to write, or `None` without --master (check mode).
    fn layout(&self) -> anyhow::Result<Option<cmd::config::Layout>> {
        let Some(master) = &self.master else {
            let given = [
                (self.out.is_some(), "--out"),
                (self.master_dir.is_some(), "--master-dir"),
                (!self.workers.is_empty(), "--worker"),
                (self.http.is_some(), "--http"),
                (self.token.is_some(), "--token"),
            ];
            if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
                anyhow::bail!("{flag} writes a new cluster file: it needs --master IP:PORT too");
            }
            return Ok(None);
        };
        let master_dir = self
            .master_dir
            .clone()
            .ok_or_else(|| anyhow::anyhow!("a new cluster file needs --master-dir DIR"))?;
        if self.slots > 256 {
            anyhow::bail!("--slots must be at most 256, not {}", self.slots);
        }
        let d = cmd::config::WorkerDefaults {
            slots: self.slots,
            cache: self.cache.clone(),
            data_dir: self.workers_dir.clone(),
        };
        let workers = self
            .workers
            .iter()
            .map(|w| cmd::config::parse_worker(w, &d))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let scheduler_params = self
            .scheduler_params
            .iter()
            .map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .ok_or_else(|| anyhow::anyhow!("--scheduler-param {kv:?} is not key=value"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Some(cmd::config::Layout {
            comments: self.comment.clone(),
            token: self.token.clone(),
            master: master.clone(),
            http: self.http.clone(),
            master_dir,
            block_size: self.block_size.clone(),
            replication: self.replication,
            scan_interval: self.scan_interval.clone(),
            heartbeat: self.heartbeat.clone(),
            dead_after: self.dead_after,
            scheduler: self.scheduler.clone(),
            scheduler_params,
            speculative: self.speculative,
            network: self.network.clone(),
            network_comment: self.network_comment.clone(),
            host_rate: self.host_rate.clone(),
            uplink_rate: self.uplink_rate.clone(),
            workers,
        }))
    }
}

#[derive(Subcommand)]
enum SchedCmd {
    /// Switch policy: new decisions use it; running tasks are untouched.
    Set {
        name: String,
        /// Parameters, key=value.
        params: Vec<String>,
        /// `{"name": ..., "params": {...}}`, as `GET /api/scheduler`.
        #[arg(long)]
        json: bool,
    },
    /// The active policy and its parameters.
    Show {
        /// `{"name": ..., "params": {...}}`, as `GET /api/scheduler`.
        #[arg(long)]
        json: bool,
    },
    /// Every policy name `set` accepts with default parameters (no cluster
    /// needed); `ORDER+TECHNIQUE` composes the others.
    List {
        /// A JSON array of the names.
        #[arg(long)]
        json: bool,
    },
}

fn job_submit(a: &JobArgs) -> anyhow::Result<cmd::job::Submit> {
    let mut params = examples::jobs::JobParams {
        format_lines: a.format == RecordFormat::Lines,
        ..Default::default()
    };
    if a.total_order {
        params.extra.insert("total_order".into(), "true".into());
    }
    for kv in &a.params {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--param {kv:?} is not key=value"))?;
        params.extra.insert(k.into(), v.into());
    }
    if a.reducers == 0 {
        anyhow::bail!("--reducers must be at least 1");
    }
    // 0 on the wire means "the default": a typed 0 is refused, not defaulted.
    if a.sort_buffer == Some(0) {
        anyhow::bail!("--sort-buffer must be between 1MiB and 4GiB (got 0)");
    }
    Ok(cmd::job::Submit {
        job: a.name.clone(),
        inputs: a.input.clone(),
        output: a.output.clone(),
        reducers: a.reducers,
        params,
        output_replication: a.output_replication.unwrap_or(0),
        output_block_size: 0,
        queue: a.queue.clone(),
        sort_buffer: a.sort_buffer.unwrap_or(0),
    })
}

#[derive(Subcommand)]
enum FsCmd {
    /// Copy a local file into the cluster; returns once every replica is durable.
    Put {
        local: PathBuf,
        path: String,
        /// Replicas per block (default: the cluster's).
        #[arg(long, short = 'r')]
        replication: Option<u32>,
        /// Block size, e.g. 64MiB (default: the cluster's).
        #[arg(long, value_parser = parse_size)]
        block_size: Option<u64>,
        /// Replace an existing file.
        #[arg(long, short = 'f')]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Copy a file out of the cluster; with a glob (`'/out/part-*'`), every
    /// match into the existing directory LOCAL.
    Get {
        path: String,
        local: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Print files to standard output: a file, a glob (`'/out/part-*'`,
    /// matches in name order), or a directory's `part-*` files in order.
    Cat { path: String },
    /// List a directory (default: the root), or what a glob matches.
    Ls {
        #[arg(default_value = "/")]
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a file, or a directory and everything under it; a glob
    /// deletes every match.
    Rm {
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// A file's blocks, their replicas and where they are cached.
    Stat {
        path: String,
        #[arg(long)]
        json: bool,
    },
}

/// The jobs `mr bench floor` has a tight program for.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FloorJobArg {
    Wordcount,
    Sort,
    Terasort,
}

/// How Sort's records are framed; clap refuses any other word.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RecordFormat {
    /// Length-prefixed key and value (what `mr gen randomwriter` writes).
    Kv,
    /// Text lines, KEY<TAB>VALUE.
    Lines,
}

#[derive(Subcommand)]
enum CacheCmd {
    /// Pin every block of PATH (a file or a directory) in the cache of one
    /// worker storing it, as an HDFS cache directive: pinned blocks are never
    /// evicted by the LRU, count against the cache's capacity, and come back
    /// when their worker restarts (the master sends them again). All or
    /// nothing: a block that fits in no storing worker's cache beside its
    /// other pins is refused with an error and nothing is pinned.
    Add {
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Unpin every block of PATH and drop it from every cache.
    Rm {
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Bound the workers' caches at SIZE (e.g. 128MiB), evicting least
    /// recently used blocks; lasts until the worker restarts.
    Resize {
        #[arg(value_parser = parse_size)]
        size: u64,
        /// Only this worker (default: every live one).
        #[arg(long)]
        worker: Option<String>,
    },
}

#[derive(Subcommand)]
enum ClusterCmd {
    /// Workers: state, slots, blocks, cache and resource vectors.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Exits 0 when the master answers (and, with --worker, when that worker
    /// is registered and alive), 1 otherwise: for container health checks
    /// and scripts waiting for a cluster.
    Health {
        /// Also require this worker to be alive.
        #[arg(long)]
        worker: Option<String>,
        /// Give up after this long.
        #[arg(long, default_value = "3s", value_parser = parse_duration)]
        timeout: std::time::Duration,
        /// Also require at least this many workers alive.
        #[arg(long)]
        workers: Option<usize>,
        /// Keep asking (every 200 ms) until healthy or this long has
        /// passed, as launch scripts wait for a new cluster: e.g.
        /// `mr cluster health --workers 6 --wait 60s`.
        #[arg(long, value_parser = parse_duration)]
        wait: Option<std::time::Duration>,
        /// `{"master", "up", "workers_alive"}` (and `worker`), when healthy.
        #[arg(long)]
        json: bool,
    },
}

fn parse_size(s: &str) -> Result<u64, String> {
    common::units::parse_size(s).map_err(|e| e.to_string())
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    common::units::parse_duration(s).map_err(|e| e.to_string())
}

/// Log lines (`tracing`) on stderr: warnings by default, `-v` info, `-vv`
/// debug, `-q` none; `RUST_LOG` (e.g. `common=debug`) wins over `-v`.
fn init_logging(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    // -vv: this project's crates at debug, not the gRPC stack's frames
    // (-vvv, or RUST_LOG, for those).
    let level = match (quiet, verbose) {
        (true, _) => "off",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "info,mr=debug,cli=debug,common=debug,examples=debug,proto=debug,sim=debug",
        (false, _) => "debug",
    };
    let filter = match std::env::var("RUST_LOG") {
        Ok(s) if !quiet && !s.is_empty() => EnvFilter::try_new(s),
        _ => EnvFilter::try_new(level),
    }
    .unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    cli::output::set_quiet(cli.quiet);
    init_logging(cli.verbose, cli.quiet);
    if let Err(e) = run(cli).await {
        eprintln!("mr: error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Cmd::Local {
        name,
        file,
        reducers,
        format,
        threads,
        output,
        total_order,
        json,
    } = &cli.cmd
    {
        let mut params = examples::jobs::JobParams {
            format_lines: *format == RecordFormat::Lines,
            reducers: *reducers,
            ..Default::default()
        };
        if *total_order {
            params.extra.insert("total_order".into(), "true".into());
        }
        return tokio::task::block_in_place(|| {
            cmd::local::run(
                name,
                file,
                *reducers,
                params,
                *threads,
                output.as_deref(),
                *json,
            )
        });
    }
    if let Cmd::Bench(BenchArgs {
        cmd:
            Some(BenchCmd::Sched {
                nodes,
                scheduler,
                at_scale,
                json,
            }),
        ..
    }) = &cli.cmd
    {
        return cmd::schedbench::run(nodes, scheduler, *at_scale, *json);
    }
    if let Cmd::Bench(BenchArgs {
        cmd:
            Some(BenchCmd::Floor {
                job,
                input,
                out,
                format,
                json,
            }),
        ..
    }) = &cli.cmd
    {
        use cli::bench::floor::{self, FloorJob};
        let job = match (job, format) {
            (FloorJobArg::Sort, f) => FloorJob::Sort {
                lines: *f == Some(RecordFormat::Lines),
            },
            (_, Some(_)) => anyhow::bail!(
                "--format is Sort's only: wordcount reads lines and terasort 100-byte records"
            ),
            (FloorJobArg::Wordcount, None) => FloorJob::WordCount,
            (FloorJobArg::Terasort, None) => FloorJob::TeraSort,
        };
        let r = tokio::task::block_in_place(|| floor::run(job, input, out))?;
        if *json {
            println!("{}", serde_json::to_string(&r)?);
        } else {
            println!("{}", r.summary());
        }
        return Ok(());
    }
    if let Cmd::Bench(BenchArgs {
        cmd:
            Some(BenchCmd::Plot {
                csv,
                out,
                title,
                x_label,
                y_label,
                x_log2,
            }),
        ..
    }) = &cli.cmd
    {
        return cli::bench::plot::lines_from_csv(csv, out, title, x_label, y_label, *x_log2);
    }
    if let Cmd::Bench(BenchArgs {
        cmd: Some(BenchCmd::TraceReport { dir }),
        ..
    }) = &cli.cmd
    {
        return cli::bench::trace_reread::rewrite(dir);
    }
    if let Cmd::Sim(SimArgs {
        cmd:
            Some(SimCmd::Scenario {
                name,
                out,
                seed,
                json,
            }),
        ..
    }) = &cli.cmd
    {
        return cmd::sim::scenario(name, out.as_deref(), *seed, *json);
    }
    if let Cmd::Sim(SimArgs {
        cmd: Some(SimCmd::Calibrate { history, out }),
        ..
    }) = &cli.cmd
    {
        return cmd::sim::calibrate(history, out.as_deref());
    }
    if let Cmd::Sim(SimArgs {
        cmd:
            Some(SimCmd::Heldout {
                dirs,
                fit_load,
                fit_policy,
                fit_rep,
                out,
            }),
        ..
    }) = &cli.cmd
    {
        let fit = cli::bench::heldout::FitChoice {
            load: fit_load.clone(),
            policy: fit_policy.clone(),
            rep: *fit_rep,
        };
        let path = cli::bench::heldout::run(dirs, &fit, out.as_deref())?;
        eprintln!("report: {}", path.display());
        return Ok(());
    }
    if let Cmd::Sim(a) = &cli.cmd {
        let cfg = sim::SimConfig {
            nodes: a.nodes,
            racks: a.racks.unwrap_or(sim::SimConfig::default_racks(a.nodes)),
            slots: a.slots,
            reduce_slots: a.reduce_slots,
            replication: a.replication,
            idle_ratio: a.idle_ratio,
            tasks: a.tasks,
            jobs: a.jobs,
            interarrival_s: a.interarrival,
            cache_size: a.cache_size,
            block_size: a.block_size,
            blocks: a.blocks,
            heartbeat_s: a.heartbeat,
            offers: a.launch == "offer",
            pools: 3,
            seed: a.seed,
            model: {
                let mut m = match &a.model {
                    Some(p) => {
                        sim::calibrate::from_json(&std::fs::read_to_string(p).map_err(|e| {
                            anyhow::anyhow!("cannot read the model {}: {e}", p.display())
                        })?)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
                    }
                    None => sim::model::TaskModel::default(),
                };
                m.shared_reads |= a.shared_network;
                m
            },
            workload: if let Some(t) = &a.trace {
                cmd::sim::trace_workload(&cmd::sim::TraceArgs {
                    file: t.clone(),
                    from: a.trace_from,
                    jobs: a.trace_jobs,
                    traced_nodes: a.traced_nodes,
                    byte_scale: a.byte_scale,
                    nodes: a.nodes,
                    slots: a.slots,
                    block_size: a.block_size,
                    max_maps: a.max_maps,
                    max_reduces: a.max_reduces,
                    compression: a.compression,
                    load: a.load,
                })?
            } else if a.workload == "mixed" {
                if !(a.map_scale.is_finite() && a.map_scale > 0.0) {
                    anyhow::bail!("--map-scale must be a number > 0, not {}", a.map_scale);
                }
                let mean = if a.interarrival > 0.0 {
                    a.interarrival
                } else {
                    14.0
                };
                sim::config::facebook_mixed(a.jobs, mean, a.map_scale, a.seed)
            } else {
                vec![]
            },
        };
        return cmd::sim::run(&cfg, &a.scheduler, a.json);
    }
    if let Cmd::Admin(AdminCmd::Scheduler(SchedCmd::List { json })) = &cli.cmd {
        if *json {
            println!("{}", serde_json::json!(common::sched::registry::NAMES));
        } else {
            for name in common::sched::registry::NAMES {
                println!("{name}");
            }
        }
        return Ok(());
    }
    if let Cmd::Config(ConfigCmd::Init {
        tls,
        dir,
        sans,
        write,
    }) = &cli.cmd
    {
        let Some(layout) = write.layout()? else {
            return cmd::config::init(&cli.config, *tls, dir.as_deref(), sans);
        };
        let out = write.out.as_deref().unwrap_or(&cli.config);
        cmd::config::write(out, &layout, write.force)?;
        if *tls {
            cmd::config::init(out, true, dir.as_deref(), sans)?;
        }
        return Ok(());
    }
    let cfg = cmd::load_config(&cli.config)?;
    match cli.cmd {
        Cmd::Fs(c) => match c {
            FsCmd::Put {
                local,
                path,
                replication,
                block_size,
                force,
                json,
            } => cmd::fs::put(&cfg, &local, &path, replication, block_size, force, json).await,
            FsCmd::Get { path, local, json } => cmd::fs::get(&cfg, &path, &local, json).await,
            FsCmd::Cat { path } => cmd::fs::cat(&cfg, &path).await,
            FsCmd::Ls { path, json } => cmd::fs::ls(&cfg, &path, json).await,
            FsCmd::Rm { path, json } => cmd::fs::rm(&cfg, &path, json).await,
            FsCmd::Stat { path, json } => cmd::fs::stat(&cfg, &path, json).await,
        },
        Cmd::Cache(c) => match c {
            CacheCmd::Add { path, json } => cmd::cache::set(&cfg, &path, true, json).await,
            CacheCmd::Rm { path, json } => cmd::cache::set(&cfg, &path, false, json).await,
            CacheCmd::Resize { size, worker } => {
                let told = cmd::cache::resize(&cfg, size, worker.as_deref()).await?;
                println!(
                    "cache bound {} on {}",
                    common::units::format_size(size),
                    told.join(", ")
                );
                Ok(())
            }
        },
        Cmd::Cluster(ClusterCmd::Status { json }) => cmd::cluster::status(&cfg, json).await,
        Cmd::Cluster(ClusterCmd::Health {
            worker,
            timeout,
            workers,
            wait,
            json,
        }) => {
            let (what, v) =
                cmd::cluster::wait_healthy(&cfg, worker.as_deref(), workers, timeout, wait).await?;
            if json {
                println!("{v}");
            } else {
                println!("{what}");
            }
            Ok(())
        }
        Cmd::Job(c) => match c {
            JobCmd::Run(a) => {
                let id = cmd::job::submit(&cfg, job_submit(&a)?).await?;
                let v = cmd::job::wait(&cfg, id).await?;
                cmd::job::finish(&v, a.json)
            }
            JobCmd::Submit(a) => {
                let id = cmd::job::submit(&cfg, job_submit(&a)?).await?;
                if a.json {
                    println!("{}", serde_json::json!({ "job_id": id }));
                } else {
                    println!("{id}");
                }
                Ok(())
            }
            JobCmd::Status { id, json } => cmd::job::status(&cfg, id, json).await,
            JobCmd::List { json } => cmd::job::list(&cfg, json).await,
            JobCmd::Wait { id, json } => {
                let v = cmd::job::wait(&cfg, id).await?;
                cmd::job::finish(&v, json)
            }
            JobCmd::Kill { id, json } => cmd::job::kill(&cfg, id, json).await,
            JobCmd::History { id } => cmd::job::history(&cfg, id).await,
        },
        Cmd::Gen { generator, g } => {
            // Each map's share is a little under one block: output blocks are
            // cut at record boundaries, so a share of exactly one block would
            // spill a sliver into a second block (and a second, tiny map).
            let block = g.block_size.unwrap_or(cfg.dfs.block_size);
            let maps = g
                .maps
                .unwrap_or_else(|| g.size.div_ceil(block - block / 32).clamp(1, 10_000) as u32);
            let params = examples::jobs::JobParams {
                size: g.size,
                seed: g.seed,
                maps,
                ..Default::default()
            };
            let s = cmd::job::Submit {
                job: generator,
                inputs: vec![],
                output: g.output.clone(),
                reducers: 0,
                params,
                output_replication: g.replication.unwrap_or(0),
                output_block_size: g.block_size.unwrap_or(0),
                queue: "default".into(),
                sort_buffer: 0,
            };
            let id = cmd::job::submit(&cfg, s).await?;
            let v = cmd::job::wait(&cfg, id).await?;
            cmd::job::finish(&v, g.json)
        }
        Cmd::Bench(b) => {
            let command = std::env::args().collect::<Vec<_>>().join(" ");
            match b.cmd {
                None => {
                    let mut o = bench_opts(&b.common, &b.workloads, &b.cache)?;
                    o.jobs = b.jobs;
                    o.mean_interarrival = b.mean_interarrival;
                    o.map_scale = b.map_scale;
                    cli::bench::matrix::run(cfg, &o, command).await
                }
                Some(BenchCmd::Sweep {
                    kind,
                    values,
                    workload,
                    common,
                }) => {
                    let kind = cli::bench::sweep::Kind::parse(&kind)?;
                    let values = kind.values(values.as_deref().unwrap_or(kind.default_values()))?;
                    let o = bench_opts(&common, &workload, "cold")?;
                    cli::bench::sweep::run(cfg, kind, &values, &o).await
                }
                Some(BenchCmd::Paper {
                    name,
                    out,
                    reps,
                    quick,
                    seed,
                    reuse,
                }) => {
                    let o = cli::bench::paper::PaperOpts {
                        out,
                        reps,
                        quick,
                        seed,
                        quiet: cli::output::quiet(),
                        reuse,
                    };
                    cli::bench::paper::run(cfg, &name, &o, command).await
                }
                Some(BenchCmd::Latency {
                    runs,
                    size,
                    reducers,
                    seed,
                    json,
                }) => {
                    let o = cli::bench::latency::LatencyOpts {
                        runs,
                        size,
                        reducers,
                        seed,
                        json,
                    };
                    cli::bench::latency::run(&cli.config, &o).await
                }
                Some(BenchCmd::Trace {
                    file,
                    from,
                    jobs,
                    traced_nodes,
                    byte_scale,
                    load,
                    compression,
                    schedulers,
                    baseline,
                    solo_policy,
                    reps,
                    block_size,
                    pool_blocks,
                    max_maps,
                    max_reduces,
                    seed,
                    out,
                }) => {
                    let o = cli::bench::replay::TraceOpts {
                        trace: file,
                        from,
                        jobs,
                        traced_nodes,
                        byte_scale,
                        loads: load,
                        compression,
                        schedulers,
                        baseline,
                        solo_policy,
                        reps,
                        block_size,
                        pool_blocks,
                        max_maps,
                        max_reduces,
                        seed,
                        out,
                        quiet: cli::output::quiet(),
                    };
                    cli::bench::replay::run(cfg, &o, command).await
                }
                Some(BenchCmd::Sched { .. })
                | Some(BenchCmd::Plot { .. })
                | Some(BenchCmd::TraceReport { .. })
                | Some(BenchCmd::Floor { .. }) => {
                    unreachable!("handled before loading the config")
                }
            }
        }
        Cmd::Local { .. } | Cmd::Sim(_) | Cmd::Config(_) => {
            unreachable!("handled before loading the config")
        }
        Cmd::Admin(AdminCmd::Scheduler(c)) => match c {
            SchedCmd::Set { name, params, json } => {
                cmd::admin::scheduler_set(&cfg, &name, &params, json).await
            }
            SchedCmd::Show { json } => cmd::admin::scheduler_show(&cfg, json).await,
            SchedCmd::List { .. } => unreachable!("handled before loading the config"),
        },
        Cmd::Admin(AdminCmd::Safemode { action, json }) => {
            let action = match action {
                SafemodeAction::Get => "get",
                SafemodeAction::Enter => "enter",
                SafemodeAction::Leave => "leave",
            };
            cmd::admin::safemode(&cfg, action, json).await
        }
        Cmd::Admin(AdminCmd::Fsck { json }) => cmd::admin::fsck(&cfg, json).await,
        Cmd::Admin(AdminCmd::AuthProbe { workers }) => cmd::admin::auth_probe(&cfg, &workers).await,
    }
}

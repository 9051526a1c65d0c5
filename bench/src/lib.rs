//! `mr bench`: the benchmark harness, a crate of its own under the `mr` CLI,
//! which calls [`run`] with the parsed arguments and its [`client::Client`]. It runs a matrix of workloads ×
//! schedulers × repetitions against whatever cluster the config names
//! (loopback, the emulated LAN, containers, a real LAN), validates every
//! job's output against an independent oracle, and writes `results.csv`,
//! `hibench.report`, `summary.md` and PNG plots. `mr bench sweep` reruns the
//! CLQLMRS paper's sweeps (cache size, block size, number of maps).
//!
//! Honest measurement: caches are dropped before each run unless `--cache
//! warm` is asked; within a repetition every scheduler runs once, in turn,
//! so slow drift of the machine spreads over all of them; a run that fails
//! or does not validate is reported and never becomes a figure; summaries
//! give medians with the spread, the machine's cores and the shaping rates.

pub mod args;
pub mod bootstrap;
pub mod client;
pub mod cluster;
pub mod command;
pub mod compare;
pub mod csv_table;
pub mod floor;
pub mod heldout;
pub mod heldout_cells;
pub mod heldout_fit;
pub mod holm;
pub mod intervals;
pub mod latency;
pub mod load;
pub mod master;
pub mod matrix;
pub mod mixed;
pub mod oracle;
pub mod over_runs;
pub mod paper;
pub mod plot;
pub mod progress;
pub mod repeatability;
pub mod replay;
pub mod report;
pub mod results;
pub mod rowboot;
pub mod runner;
pub mod schedbench;
pub mod sizeclass;
pub mod sweep;
pub mod table;
pub mod tdist;
pub mod trace;
pub mod trace_figures;
pub mod trace_plot;
pub mod trace_report;
pub mod trace_reread;
pub mod trace_slices;
pub mod trace_summary;
pub mod usermix;

use anyhow::bail;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use command::BenchArgs;

/// Runs `mr bench` or one of its subcommands, with `client` for what the
/// harness borrows from the `mr` CLI; reads the cluster file `config` only
/// for the subcommands that run jobs on the cluster.
pub async fn run(
    config: &Path,
    args: BenchArgs,
    client: &'static dyn client::Client,
) -> anyhow::Result<()> {
    client::install(client);
    command::dispatch(config, args).await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Workload {
    #[default]
    WordCount,
    Sort,
    TeraSort,
    /// The seeds' multi-job experiment ([`mixed`]).
    Mixed,
}

impl Workload {
    pub const ALL: [Workload; 4] = [
        Workload::WordCount,
        Workload::Sort,
        Workload::TeraSort,
        Workload::Mixed,
    ];

    pub fn parse(s: &str) -> anyhow::Result<Self> {
        Ok(match s {
            "wordcount" => Workload::WordCount,
            "sort" => Workload::Sort,
            "terasort" => Workload::TeraSort,
            "mixed" => Workload::Mixed,
            _ => bail!("unknown workload {s:?}: use wordcount, sort, terasort or mixed"),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::WordCount => "wordcount",
            Workload::Sort => "sort",
            Workload::TeraSort => "terasort",
            Workload::Mixed => "mixed",
        }
    }

    /// The generator of its input.
    pub fn generator(self) -> &'static str {
        match self {
            Workload::WordCount | Workload::Mixed => "randomtextwriter",
            Workload::Sort => "randomwriter",
            Workload::TeraSort => "teragen",
        }
    }

    /// The job each of its runs submits.
    pub fn job(self) -> &'static str {
        match self {
            Workload::WordCount | Workload::Mixed => "wordcount",
            Workload::Sort => "sort",
            Workload::TeraSort => "terasort",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheMode {
    #[default]
    /// Every block of the input dropped from every block cache before each
    /// run. The OS page cache keeps what it holds, so a "cold" node-local
    /// read may still come from memory.
    Cold,
    /// Cold, and the OS page cache dropped too (`sync`, then 3 into
    /// `/proc/sys/vm/drop_caches`: root only, and only this machine's
    /// kernel, which is every worker's on a loopback or emulated LAN).
    ColdOs,
    /// Dropped, then every block cached on one worker storing it.
    Warm,
    /// As the previous run left them: the cache-size sweep's second pass.
    AsLeft,
}

impl CacheMode {
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        match s {
            "cold" => Ok(CacheMode::Cold),
            "cold-os" => {
                drop_os_page_cache()?;
                Ok(CacheMode::ColdOs)
            }
            "warm" => Ok(CacheMode::Warm),
            _ => bail!("--cache is cold, cold-os or warm, not {s:?}"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Cold => "cold",
            CacheMode::ColdOs => "cold-os",
            CacheMode::Warm => "warm",
            CacheMode::AsLeft => "as-left",
        }
    }
}

/// Empties this machine's page cache, so that a cold read is a disk read.
pub fn drop_os_page_cache() -> anyhow::Result<()> {
    // Dirty pages are written first, or dropping leaves them.
    let _ = std::process::Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", b"3\n").map_err(|e| {
        anyhow::anyhow!(
            "--cache cold-os drops the OS page cache, which needs root (writing /proc/sys/vm/drop_caches: {e})"
        )
    })
}

/// Everything a matrix run needs to know.
#[derive(Debug, Clone)]
pub struct Opts {
    pub workloads: Vec<Workload>,
    pub schedulers: Vec<String>,
    /// Input bytes per workload (the mixed workload's block pool).
    pub size: u64,
    pub block_size: u64,
    pub reps: u32,
    pub cache: CacheMode,
    pub out: PathBuf,
    /// Reducers of the single-job workloads (mixed jobs use fewer).
    pub reducers: u32,
    /// Mixed: jobs per run, their mean inter-arrival time, and the factor
    /// applied to Table 4's map counts (default: pool blocks / 200).
    pub jobs: u32,
    pub mean_interarrival: Duration,
    pub map_scale: Option<f64>,
    /// Seeds the inputs and the mixed schedule.
    pub seed: u64,
    pub quiet: bool,
}

impl Opts {
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.workloads.is_empty() {
            bail!("--workloads names no workload");
        }
        if self.schedulers.is_empty() {
            bail!("--schedulers names no scheduler");
        }
        for s in &self.schedulers {
            sched::registry::build(&sched::SchedulerSpec::new(s))
                .map_err(|e| anyhow::anyhow!("--schedulers: {e}"))?;
        }
        if self.reps == 0 {
            bail!("--reps must be at least 1");
        }
        if self.size == 0 {
            bail!("--size must be more than 0");
        }
        if self.block_size < common::config::MIN_BLOCK_SIZE
            || self.block_size > common::config::MAX_BLOCK_SIZE
        {
            bail!(
                "--block-size must be between {} and {}",
                common::units::format_size(common::config::MIN_BLOCK_SIZE),
                common::units::format_size(common::config::MAX_BLOCK_SIZE)
            );
        }
        if self.reducers == 0 {
            bail!("--reducers must be at least 1");
        }
        if self.workloads.contains(&Workload::Mixed) && self.jobs == 0 {
            bail!("--jobs must be at least 1 for the mixed workload");
        }
        if self.map_scale.is_some_and(|s| !(s > 0.0 && s.is_finite())) {
            bail!("--map-scale must be a positive number");
        }
        Ok(())
    }
}

/// Parses a comma-separated list of workloads.
pub fn parse_workloads(s: &str) -> anyhow::Result<Vec<Workload>> {
    let mut v = Vec::new();
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let w = Workload::parse(w)?;
        if !v.contains(&w) {
            v.push(w);
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Opts {
        Opts {
            workloads: vec![Workload::WordCount],
            schedulers: vec!["fifo".into(), "lsap".into()],
            size: 1 << 20,
            block_size: 1 << 20,
            reps: 1,
            cache: CacheMode::Cold,
            out: "/tmp/x".into(),
            reducers: 2,
            jobs: 4,
            mean_interarrival: Duration::from_secs(1),
            map_scale: None,
            seed: 1,
            quiet: true,
        }
    }

    #[test]
    fn workloads_and_options_are_checked() {
        assert_eq!(
            parse_workloads("wordcount,mixed,wordcount").unwrap(),
            vec![Workload::WordCount, Workload::Mixed]
        );
        assert!(parse_workloads("wordcount,grep")
            .unwrap_err()
            .to_string()
            .contains("grep"));
        assert!(opts().validate().is_ok());
        let bad = |f: &dyn Fn(&mut Opts)| {
            let mut o = opts();
            f(&mut o);
            o.validate().unwrap_err().to_string()
        };
        assert!(bad(&|o| o.schedulers = vec!["nope".into()]).contains("nope"));
        assert!(bad(&|o| o.reps = 0).contains("--reps"));
        assert!(bad(&|o| o.block_size = 1).contains("--block-size"));
        assert!(bad(&|o| o.map_scale = Some(-1.0)).contains("--map-scale"));
        assert_eq!(CacheMode::parse("warm").unwrap(), CacheMode::Warm);
        assert!(CacheMode::parse("hot").is_err());
    }
}

#[cfg(test)]
mod cache_mode_tests {
    use super::CacheMode;

    #[test]
    fn cache_modes_parse_and_cold_os_drops_the_page_cache_or_says_why_not() {
        assert!(CacheMode::parse("cold").unwrap() == CacheMode::Cold);
        let e = CacheMode::parse("frozen").unwrap_err().to_string();
        assert!(e.contains("cold, cold-os or warm"), "{e}");
        // As root the page cache is dropped; otherwise the error says why.
        match CacheMode::parse("cold-os") {
            Ok(m) => assert!(m == CacheMode::ColdOs && m.name() == "cold-os"),
            Err(e) => assert!(e.to_string().contains("needs root"), "{e}"),
        }
    }
}

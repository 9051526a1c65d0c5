//! `mr bench sweep cache-size|block-size|maps`: the CLQLMRS paper's sweeps
//! on the real cluster, one line per scheduler.
//!
//! - `cache-size` (its Fig. 5, cache locality vs cache size): every worker's
//!   cache is bounded at each value in turn (`mr cache resize`); per run the
//!   input's caches are dropped, the job runs once to fill them (validated,
//!   not counted), and the figure is the cache-local share of the maps of a
//!   second run. The workers' configured sizes are put back at the end.
//! - `block-size` (Fig. 6, local-task rate vs block size): the same input
//!   size stored in blocks of each value.
//! - `maps` (Fig. 7, local-task rate vs number of map tasks): inputs of
//!   each value's number of blocks.
//!
//! Rows go to `sweep-KIND.csv` (the `results.csv` columns, with `sweep` and
//! `sweep_value` set), a table to `sweep-KIND.md`, the plot to
//! `sweep-KIND.png`.

use super::cluster::Cluster;
use super::matrix::{configured_caches, restore_caches, restore_scheduler, run_cells};
use super::plot::{self, Series};
use super::results::{median, CsvWriter, Row};
use super::runner::{Cell, Runner};
use super::{CacheMode, Opts};
use crate::progress::MatrixProgress;
use anyhow::{bail, Context};
use common::config::ClusterConfig;
use common::units::{format_size, parse_size};
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    CacheSize,
    BlockSize,
    Maps,
}

impl Kind {
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        Ok(match s {
            "cache-size" => Kind::CacheSize,
            "block-size" => Kind::BlockSize,
            "maps" => Kind::Maps,
            _ => bail!("unknown sweep {s:?}: use cache-size, block-size or maps"),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::CacheSize => "cache-size",
            Kind::BlockSize => "block-size",
            Kind::Maps => "maps",
        }
    }

    pub fn default_values(self) -> &'static str {
        match self {
            Kind::CacheSize => "16MiB,32MiB,64MiB,128MiB,256MiB",
            Kind::BlockSize => "4MiB,8MiB,16MiB,32MiB,64MiB",
            Kind::Maps => "6,12,24,48",
        }
    }

    /// Parses the swept values: sizes, or map counts.
    pub fn values(self, list: &str) -> anyhow::Result<Vec<u64>> {
        let mut v = Vec::new();
        for x in list.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let n = match self {
                Kind::Maps => x
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| (1..=10_000).contains(&n))
                    .with_context(|| format!("--values: {x:?} is not a map count in 1..=10000"))?,
                _ => parse_size(x).with_context(|| format!("--values: {x:?} is not a size"))?,
            };
            if self == Kind::BlockSize
                && !(common::config::MIN_BLOCK_SIZE..=common::config::MAX_BLOCK_SIZE).contains(&n)
            {
                bail!("--values: block size {x} is out of range");
            }
            v.push(n);
        }
        if v.is_empty() {
            bail!("--values names no value");
        }
        Ok(v)
    }

    fn show(self, v: u64) -> String {
        match self {
            Kind::Maps => v.to_string(),
            _ => format_size(v),
        }
    }

    /// The figure a run gives: cache-local share for the cache sweep, the
    /// local-task rate for the others.
    fn metric(self, r: &Row) -> f64 {
        match self {
            Kind::CacheSize => r.locality[0] as f64 / r.locality.iter().sum::<u64>().max(1) as f64,
            _ => r.local_rate(),
        }
    }

    fn y_label(self) -> &'static str {
        match self {
            Kind::CacheSize => "cache-local map rate",
            _ => "local map rate (node + cache)",
        }
    }
}

pub async fn run(
    cfg: ClusterConfig,
    kind: Kind,
    values: &[u64],
    opts: &Opts,
) -> anyhow::Result<()> {
    opts.validate()?;
    let workload = *opts.workloads.first().expect("validated");
    if workload == super::Workload::Mixed {
        bail!("sweeps run one job at a time: pick wordcount, sort or terasort");
    }
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create the output directory {}", opts.out.display()))?;
    let configured = configured_caches(&cfg);
    let mut runner = Runner::new(Cluster::connect(cfg)?).await?;
    runner.history_dir = Some(opts.out.join("history"));
    let before = runner.cluster.scheduler().await?;
    let name = kind.name();
    let mut csv = CsvWriter::create(&opts.out.join(format!("sweep-{name}.csv")))?;
    let per_value =
        opts.reps as usize * opts.schedulers.len() * if kind == Kind::CacheSize { 2 } else { 1 };
    let mut progress = MatrixProgress::new(values.len() * per_value, opts.quiet);
    let (mut rows, mut failures) = (Vec::new(), Vec::new());
    // An error mid-sweep still puts the caches and the policy back first.
    let mut aborted = None;
    for &v in values {
        let mut cells = Vec::new();
        for rep in 1..=opts.reps {
            for s in &opts.schedulers {
                let mut c = Cell {
                    workload,
                    scheduler: s.clone(),
                    rep,
                    size: opts.size,
                    block_size: opts.block_size,
                    cache: CacheMode::Cold,
                    reducers: opts.reducers,
                    jobs: 0,
                    mean_interarrival: Default::default(),
                    map_scale: None,
                    seed: opts.seed,
                    ..Cell::default()
                };
                match kind {
                    Kind::BlockSize => c.block_size = v,
                    // One block per share of a little under a block, as
                    // the generators cut them: exactly v maps.
                    Kind::Maps => c.size = v * (opts.block_size - opts.block_size / 32),
                    Kind::CacheSize => {}
                }
                if kind == Kind::CacheSize {
                    cells.push(c.clone());
                    c.cache = CacheMode::AsLeft;
                }
                cells.push(c);
            }
        }
        if kind == Kind::CacheSize {
            if let Err(e) = runner.cluster.resize_caches(v, "").await {
                aborted = Some(e.context(format!("cannot bound the caches at {}", format_size(v))));
                break;
            }
            progress.note(&format!("caches bounded at {}", format_size(v)));
        }
        // Rows are written below, once they carry their sweep value.
        let (rs, fs) = run_cells(&mut runner, &cells, opts.reps, None, &mut progress).await;
        failures.extend(
            fs.into_iter()
                .map(|f| format!("{name}={}: {f}", kind.show(v))),
        );
        for mut r in rs {
            // The cache sweep's first pass only fills the caches.
            if kind == Kind::CacheSize && r.cache == CacheMode::Cold.name() {
                continue;
            }
            r.sweep = name.into();
            r.sweep_value = kind.show(v);
            rows.push(r);
        }
    }
    progress.end();
    if kind == Kind::CacheSize {
        restore_caches(&runner, &configured).await;
    }
    restore_scheduler(&runner, &before).await;
    if let Some(e) = aborted {
        return Err(e);
    }
    for r in &rows {
        csv.append(r)?;
    }
    let plot_result = plot_sweep(kind, values, &rows, opts);
    std::fs::write(
        opts.out.join(format!("sweep-{name}.md")),
        table(
            kind,
            values,
            &rows,
            opts,
            &failures,
            &runner.base_config,
            plot_result,
        ),
    )?;
    if !opts.quiet {
        eprintln!(
            "sweep {name}: {} counted run(s) in {}: sweep-{name}.csv, sweep-{name}.md, sweep-{name}.png",
            rows.len(),
            opts.out.display()
        );
    }
    if !failures.is_empty() {
        bail!(
            "{} run(s) of the sweep failed; see sweep-{name}.md",
            failures.len()
        );
    }
    Ok(())
}

fn medians(kind: Kind, values: &[u64], rows: &[Row], sched: &str) -> Vec<Option<f64>> {
    values
        .iter()
        .map(|&v| {
            let xs: Vec<f64> = rows
                .iter()
                .filter(|r| r.scheduler == sched && r.sweep_value == kind.show(v))
                .map(|r| kind.metric(r))
                .collect();
            (!xs.is_empty()).then(|| median(&xs))
        })
        .collect()
}

fn plot_sweep(kind: Kind, values: &[u64], rows: &[Row], opts: &Opts) -> anyhow::Result<()> {
    let series: Vec<Series> = opts
        .schedulers
        .iter()
        .map(|s| Series {
            label: s.clone(),
            points: values
                .iter()
                .zip(medians(kind, values, rows, s))
                .filter_map(|(&v, m)| m.map(|m| (v as f64, m)))
                .collect(),
        })
        .collect();
    let title = match kind {
        Kind::CacheSize => "Cache locality vs cache size per worker (CLQLMRS Fig. 5)",
        Kind::BlockSize => "Local map rate vs block size (CLQLMRS Fig. 6)",
        Kind::Maps => "Local map rate vs number of map tasks (CLQLMRS Fig. 7)",
    };
    let x_label = match kind {
        Kind::CacheSize => "cache size per worker",
        Kind::BlockSize => "block size",
        Kind::Maps => "map tasks",
    };
    let fmt = move |x: f64| kind.show(x.round() as u64);
    plot::lines(
        &opts.out.join(format!("sweep-{}.png", kind.name())),
        title,
        x_label,
        kind.y_label(),
        &series,
        kind != Kind::Maps,
        &fmt,
    )
}

fn table(
    kind: Kind,
    values: &[u64],
    rows: &[Row],
    opts: &Opts,
    failures: &[String],
    config: &str,
    plot: anyhow::Result<()>,
) -> String {
    let name = kind.name();
    let mut s = format!("# Sweep: {name}\n\n");
    let _ = writeln!(
        s,
        "- workload: {}, input {} in blocks of {} (unless swept), caches cold, {} repetition(s)",
        opts.workloads[0].name(),
        format_size(opts.size),
        format_size(opts.block_size),
        opts.reps
    );
    let _ = writeln!(s, "- cluster: {config}");
    let _ = writeln!(
        s,
        "- machine: {} cores",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let _ = writeln!(s, "- figure: median {} over repetitions\n", kind.y_label());
    let _ = write!(s, "| scheduler |");
    for &v in values {
        let _ = write!(s, " {} |", kind.show(v));
    }
    let _ = write!(s, "\n|---|");
    for _ in values {
        s += "---:|";
    }
    s.push('\n');
    for sched in &opts.schedulers {
        let _ = write!(s, "| {sched} |");
        for m in medians(kind, values, rows, sched) {
            match m {
                Some(m) => {
                    let _ = write!(s, " {:.0}% |", 100.0 * m);
                }
                None => s += " — |",
            }
        }
        s.push('\n');
    }
    match plot {
        Ok(()) => {
            let _ = writeln!(s, "\n![sweep-{name}.png](sweep-{name}.png)");
        }
        Err(e) => {
            let _ = writeln!(s, "\n(the plot could not be drawn: {e:#})");
        }
    }
    if !failures.is_empty() {
        s += "\n## Failed runs (not counted)\n\n";
        for f in failures {
            let _ = writeln!(s, "- {f}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_per_kind() {
        assert_eq!(Kind::parse("maps").unwrap(), Kind::Maps);
        assert!(Kind::parse("racks").is_err());
        assert_eq!(Kind::Maps.values("6, 12").unwrap(), vec![6, 12]);
        assert!(Kind::Maps.values("0").is_err());
        assert_eq!(Kind::CacheSize.values("0,1MiB").unwrap(), vec![0, 1 << 20]);
        assert!(Kind::BlockSize.values("1KiB").is_err());
        assert!(Kind::CacheSize.values("").is_err());
        for k in [Kind::CacheSize, Kind::BlockSize, Kind::Maps] {
            assert!(k.values(k.default_values()).is_ok());
        }
    }

    #[test]
    fn the_table_has_one_median_per_scheduler_and_value() {
        let row = |s: &str, v: &str, loc: [u64; 5]| Row {
            scheduler: s.into(),
            sweep_value: v.into(),
            locality: loc,
            ..Default::default()
        };
        let rows = vec![
            row("fifo", "6", [0, 3, 0, 3, 0]),
            row("lsap", "6", [0, 6, 0, 0, 0]),
            row("lsap", "12", [1, 11, 0, 0, 0]),
        ];
        let opts = Opts {
            workloads: vec![super::super::Workload::WordCount],
            schedulers: vec!["fifo".into(), "lsap".into()],
            size: 1 << 20,
            block_size: 1 << 20,
            reps: 1,
            cache: CacheMode::Cold,
            out: "/tmp".into(),
            reducers: 1,
            jobs: 0,
            mean_interarrival: Default::default(),
            map_scale: None,
            seed: 1,
            quiet: true,
        };
        let t = table(Kind::Maps, &[6, 12], &rows, &opts, &[], "x", Ok(()));
        assert!(t.contains("| fifo | 50% | — |"), "{t}");
        assert!(t.contains("| lsap | 100% | 100% |"), "{t}");
    }
}

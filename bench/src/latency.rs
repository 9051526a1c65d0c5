//! `mr bench latency`: how long a small job takes as its user sees it. On
//! the cluster the config names, it puts one block of text, then runs
//! `--runs` one-block WordCount jobs one after another, each as the real
//! `mr job run` in a child process timed from spawn to exit (the client's
//! start, the submit, the job, the end reaching the client, the summary
//! printed), and reports p50 and p99 of that time beside the master's own
//! `exec_time_s` (submit to commit). A first, untimed job warms the
//! connections and page caches. The heartbeat interval is the cluster's:
//! `scripts/bench-latency.sh` starts clusters at several intervals and
//! calls this on each.

use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub struct LatencyOpts {
    /// Timed jobs.
    pub runs: u32,
    /// Bytes of text in the one input block.
    pub size: u64,
    /// Reducers per job (`mr job run`'s default unless asked).
    pub reducers: u32,
    /// Seeds the input's words.
    pub seed: u64,
    pub json: bool,
}

/// Where the input and the outputs go in the cluster's namespace.
const DIR: &str = "/bench/latency";

/// Runs the jobs on the cluster of `config` and prints the figures.
pub async fn run(config: &Path, o: &LatencyOpts) -> anyhow::Result<()> {
    if o.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let mr = std::env::current_exe().context("cannot find the mr binary")?;
    let cli = Cli { mr, config };
    let local = std::env::temp_dir().join(format!("mr-latency-{}.txt", std::process::id()));
    std::fs::write(&local, text(o.size, o.seed))?;
    let _ = cli.run(&["fs", "rm", DIR]);
    let input = format!("{DIR}/input.txt");
    // One block, whatever the cluster's block size.
    if o.size == 0 || o.size > 64 << 20 {
        bail!("--size must be between 1 byte and 64MiB: the input is one block");
    }
    let block = "64MiB";
    let put = cli.run(&[
        "fs",
        "put",
        &local.to_string_lossy(),
        &input,
        "--block-size",
        block,
    ]);
    let _ = std::fs::remove_file(&local);
    put?;
    let mut client = Vec::new();
    let mut master = Vec::new();
    for i in 0..=o.runs {
        let out = format!("{DIR}/out-{i}");
        let reducers = o.reducers.to_string();
        let args = [
            "-q",
            "job",
            "run",
            "wordcount",
            "--input",
            &input,
            "--output",
            &out,
            "--reducers",
            &reducers,
            "--json",
        ];
        let t = Instant::now();
        let stdout = cli.run(&args)?;
        let secs = t.elapsed().as_secs_f64();
        let v: Value =
            serde_json::from_str(&stdout).context("mr job run --json printed no summary")?;
        if v["state"] != "succeeded" {
            bail!("job {} did not succeed: {v}", v["job_id"]);
        }
        if i == 0 {
            continue; // the warm-up
        }
        client.push(secs);
        master.push(v["exec_time_s"].as_f64().unwrap_or(0.0));
    }
    let _ = cli.run(&["fs", "rm", DIR]);
    let report = json!({
        "runs": o.runs,
        "input_bytes": o.size,
        "reducers": o.reducers,
        "client_s": stats(&mut client),
        "exec_time_s": stats(&mut master),
    });
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for (what, k) in [
            ("client (mr job run)", "client_s"),
            ("master (exec_time_s)", "exec_time_s"),
        ] {
            let s = &report[k];
            println!(
                "{what:<22} p50 {:.3}s  p99 {:.3}s  min {:.3}s  max {:.3}s  mean {:.3}s  ({} runs)",
                s["p50"].as_f64().unwrap_or(0.0),
                s["p99"].as_f64().unwrap_or(0.0),
                s["min"].as_f64().unwrap_or(0.0),
                s["max"].as_f64().unwrap_or(0.0),
                s["mean"].as_f64().unwrap_or(0.0),
                o.runs
            );
        }
    }
    Ok(())
}

struct Cli<'a> {
    mr: PathBuf,
    config: &'a Path,
}

impl Cli<'_> {
    /// Runs `mr` on the cluster; its stdout, or its stderr as the error.
    fn run(&self, args: &[&str]) -> anyhow::Result<String> {
        let out = std::process::Command::new(&self.mr)
            .arg("--config")
            .arg(self.config)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()?;
        if !out.status.success() {
            bail!(
                "mr {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8(out.stdout)?)
    }
}

/// About `size` bytes of lines of words from a small vocabulary, seeded.
fn text(size: u64, seed: u64) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "map",
        "reduce",
        "block",
        "cache",
        "shuffle",
        "merge",
        "sort",
        "worker",
        "master",
        "heartbeat",
        "replica",
        "rack",
        "slot",
        "task",
        "job",
        "locality",
        "spill",
        "partition",
    ];
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut v = Vec::with_capacity(size as usize + 16);
    while (v.len() as u64) < size {
        for i in 0..10 {
            if i > 0 {
                v.push(b' ');
            }
            v.extend_from_slice(WORDS[rng.usize(..WORDS.len())].as_bytes());
        }
        v.push(b'\n');
    }
    v.truncate(size as usize);
    if let Some(last) = v.last_mut() {
        *last = b'\n';
    }
    v
}

/// p50 and p99 (nearest rank), min, max and mean of `xs`.
fn stats(xs: &mut [f64]) -> Value {
    xs.sort_by(f64::total_cmp);
    let rank = |q: f64| xs[((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1];
    json!({
        "p50": rank(0.50),
        "p99": rank(0.99),
        "min": xs[0],
        "max": xs[xs.len() - 1],
        "mean": xs.iter().sum::<f64>() / xs.len() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut xs: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = stats(&mut xs);
        assert_eq!(s["p50"], 50.0);
        assert_eq!(s["p99"], 99.0);
        assert_eq!(s["min"], 1.0);
        assert_eq!(s["max"], 100.0);
        let s = stats(&mut [0.2, 0.1]);
        assert_eq!(s["p50"], 0.1);
        assert_eq!(s["p99"], 0.2);
    }

    #[test]
    fn the_input_is_the_size_asked_and_ends_a_line() {
        let t = text(1000, 1);
        assert_eq!(t.len(), 1000);
        assert_eq!(t.last(), Some(&b'\n'));
        assert_eq!(t, text(1000, 1));
    }
}

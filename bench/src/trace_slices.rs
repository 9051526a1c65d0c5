//! `mr bench trace --slices N`: several short slices of the trace rather
//! than one long one. A slice replayed again and again says how the same
//! rows behave; a claim about the trace needs other rows (issue 41). Each
//! slice is a complete experiment of its own (solo pass, runs, report) in
//! `OUT/slice-FROM/`, and `OUT/slices.md` sets the named comparisons of
//! every slice side by side: a claim is one every slice makes.

use super::replay::{self, TraceOpts};
use common::config::ClusterConfig;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The slices' directories under `out`, for slices of `jobs` rows from
/// row `from`.
pub fn slice_dirs(out: &Path, from: usize, jobs: usize, slices: u32) -> Vec<(usize, PathBuf)> {
    (0..slices as usize)
        .map(|k| {
            let f = from + k * jobs;
            (f, out.join(format!("slice-{f}")))
        })
        .collect()
}

/// Replays every slice in turn, each into its own directory, then writes
/// `slices.md`; a slice whose runs failed does not stop the others.
pub async fn run(
    cfg: ClusterConfig,
    o: &TraceOpts,
    slices: u32,
    command: String,
) -> anyhow::Result<()> {
    if slices <= 1 {
        return replay::run(cfg, o, command).await;
    }
    // Refused once, before the first slice, not once per slice.
    o.validate()?;
    let mut failed = Vec::new();
    let dirs = slice_dirs(&o.out, o.from, o.jobs, slices);
    for (from, dir) in &dirs {
        let mut s = o.clone();
        s.from = *from;
        s.out = dir.clone();
        if let Err(e) = replay::run(cfg.clone(), &s, command.clone()).await {
            failed.push(format!("{}: {e:#}", dir.display()));
        }
    }
    let found: Vec<PathBuf> = dirs
        .into_iter()
        .map(|d| d.1)
        .filter(|d| d.join("report.json").exists())
        .collect();
    write(&o.out, &found)?;
    if !failed.is_empty() {
        anyhow::bail!("{} slice(s) failed: {}", failed.len(), failed.join("; "));
    }
    Ok(())
}

/// The `slice-*` directories of a `--slices` run's `out`, in row order.
pub fn found(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(usize, PathBuf)> = std::fs::read_dir(out)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let from = name.strip_prefix("slice-")?.parse().ok()?;
            e.path()
                .join("report.json")
                .exists()
                .then(|| (from, e.path()))
        })
        .collect();
    v.sort();
    v.into_iter().map(|x| x.1).collect()
}

/// `slices.md` from the slices' `report.json`s.
pub fn write(out: &Path, dirs: &[PathBuf]) -> anyhow::Result<()> {
    let mut reports = Vec::new();
    for d in dirs {
        let v: Value = serde_json::from_slice(&std::fs::read(d.join("report.json"))?)?;
        let name = d
            .file_name()
            .map_or(d.display().to_string(), |n| n.to_string_lossy().into());
        reports.push((name, v));
    }
    std::fs::write(out.join("slices.md"), combined(&reports))?;
    Ok(())
}

/// The comparison `cmp` at load `load` in one slice's report.
fn find<'a>(v: &'a Value, load: &str, cmp: &str) -> Option<&'a Value> {
    let l = v["figures"]["loads"]
        .as_array()?
        .iter()
        .find(|l| l["load"] == load)?;
    l["comparisons"].as_array()?.iter().find(|c| {
        format!(
            "{}:{}",
            c["policy"].as_str().unwrap_or(""),
            c["comparator"].as_str().unwrap_or("")
        ) == cmp
    })
}

/// Every slice's verdict on every comparison, and whether all make it.
pub fn combined(reports: &[(String, Value)]) -> String {
    let mut s = String::from("# Trace replay over several slices\n\n");
    for (name, v) in reports {
        let m = &v["meta"];
        let _ = writeln!(
            s,
            "- {name}: rows {}..{}, {} runs per load and policy, commit {}",
            m["from"],
            m["from"].as_u64().unwrap_or(0) + m["rows"].as_u64().unwrap_or(0),
            m["reps"],
            v["figures"]["runs_commit"].as_str().unwrap_or("?")
        );
    }
    s += "\nEach slice is a report of its own (its summary.md); a claim is one every slice makes. A cell: the paired difference in s [95 % t over runs], and the slice's verdict after Holm's correction.\n";
    let Some((_, first)) = reports.first() else {
        return s;
    };
    let loads: Vec<&str> = first["figures"]["loads"].as_array().map_or(vec![], |a| {
        a.iter().filter_map(|l| l["load"].as_str()).collect()
    });
    let cmps: Vec<&str> = first["figures"]["comparisons"]
        .as_array()
        .map_or(vec![], |a| a.iter().filter_map(|c| c.as_str()).collect());
    for load in loads {
        let _ = writeln!(s, "\n## Load {load}\n");
        s += "| comparison |";
        for (name, _) in reports {
            let _ = write!(s, " {name} |");
        }
        s += " every slice |\n|---|";
        s += &"---|".repeat(reports.len() + 1);
        s += "\n";
        for cmp in &cmps {
            let _ = write!(s, "| {cmp} |");
            let mut verdicts = Vec::new();
            for (_, v) in reports {
                let c = find(v, load, cmp);
                let verdict = c.and_then(|c| c["verdict"].as_str()).unwrap_or("not run");
                let t = c.map(|c| &c["diff_s_t"]).filter(|t| t.is_object());
                let cell = t.map_or("-".into(), |t| {
                    let f = |k: &str| t[k].as_f64().unwrap_or(f64::NAN);
                    format!("{:.3} [{:.3}, {:.3}]", f("mean"), f("lo"), f("hi"))
                });
                let _ = write!(s, " {cell}: {verdict} |");
                verdicts.push(verdict);
            }
            let all = match verdicts.first() {
                Some(&v @ ("lower" | "higher")) if verdicts.iter().all(|x| *x == v) => {
                    format!("{v} in every slice")
                }
                _ => "no claim".into(),
            };
            let _ = writeln!(s, " {all} |");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(from: u64, verdicts: [&str; 2]) -> Value {
        let cmp = |p: &str, v: &str| {
            json!({"policy": p, "comparator": "fifo", "verdict": v,
                   "diff_s_t": {"mean": -1.0, "lo": -1.5, "hi": -0.5}})
        };
        json!({
            "meta": {"from": from, "rows": 20, "reps": 10},
            "figures": {
                "runs_commit": "abc (clean tree)",
                "comparisons": ["atlas:fifo", "delay:fifo"],
                "loads": [{"load": "0.5", "comparisons": [
                    cmp("atlas", verdicts[0]), cmp("delay", verdicts[1])
                ]}]
            }
        })
    }

    #[test]
    fn a_claim_is_one_every_slice_makes() {
        let r = vec![
            ("slice-0".to_string(), report(0, ["lower", "lower"])),
            (
                "slice-20".to_string(),
                report(20, ["lower", "not distinguishable"]),
            ),
        ];
        let s = combined(&r);
        assert!(
            s.contains("- slice-20: rows 20..40, 10 runs per load and policy, commit abc"),
            "{s}"
        );
        assert!(
            s.contains("| atlas:fifo | -1.000 [-1.500, -0.500]: lower | -1.000 [-1.500, -0.500]: lower | lower in every slice |"),
            "{s}"
        );
        assert!(s.contains(": not distinguishable | no claim |"), "{s}");
        assert_eq!(
            slice_dirs(Path::new("o"), 100, 20, 2),
            vec![
                (100, PathBuf::from("o/slice-100")),
                (120, PathBuf::from("o/slice-120"))
            ]
        );
    }
}

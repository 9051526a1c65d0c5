//! `mr sim calibrate --history DIR`: fits the task model to a real
//! cluster's job history (the JSON lines `mr job history ID` prints, which
//! `mr bench` keeps under `OUT/history/`), so the simulator's durations are
//! this cluster's, not the defaults.
//!
//! The fit, per level, uses medians (robust to a straggler or two):
//! - compute seconds per MiB: over node- and cache-local maps, whose read
//!   time is negligible next to their compute;
//! - read bandwidth of each remote level: input bytes over what the map
//!   took beyond its compute time, times the remote maps running into the
//!   same node meanwhile (on average over its run): the rate the port would
//!   give one read alone, since the simulator shares it again
//!   (`TaskModel::shared_reads`);
//! - a reduce's time after its fetches: its runtime less its shuffle bytes
//!   at the fitted rack rate, as a line in its shuffle MiB (least squares);
//! - the job's tail: from its last task's end to its own, as a line in its
//!   shuffle MiB.
//!
//! A level with no sample keeps the default, and the fit says so.

use crate::model::TaskModel;
use sched::Locality;
use serde_json::Value;
use std::path::Path;

const MIB: f64 = (1 << 20) as f64;

/// One successful map attempt of the history.
#[derive(Debug, Clone, PartialEq)]
pub struct MapSample {
    pub level: Locality,
    pub bytes: u64,
    /// What it emitted: its job's shuffle bytes over its maps (0 where
    /// the file holds no job record).
    pub out_bytes: u64,
    pub runtime_s: f64,
    /// Where and when it ran (0 where the history does not say), to count
    /// the remote reads sharing its node's port.
    pub node: String,
    pub start_ms: u64,
    pub end_ms: u64,
}

/// The map samples in one history file's text; other lines are skipped.
pub fn samples(text: &str) -> Vec<MapSample> {
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let out_of: std::collections::HashMap<u64, u64> = lines
        .iter()
        .filter(|v| v["type"] == "job")
        .filter_map(|v| {
            let maps = v["maps"].as_u64()?.max(1);
            Some((
                v["job_id"].as_u64()?,
                v["bytes"]["shuffle"].as_u64()? / maps,
            ))
        })
        .collect();
    lines
        .into_iter()
        .filter(|v| v["type"] == "task" && v["kind"] == "map" && v["state"] == "succeeded")
        .filter_map(|v| {
            let level = Locality::parse(v["locality"].as_str()?)?;
            let b = &v["bytes"];
            let bytes = ["cache", "local", "remote_rack", "remote_off_rack"]
                .iter()
                .map(|k| b[k].as_u64().unwrap_or(0))
                .sum::<u64>();
            let runtime_s = v["runtime_s"].as_f64()?;
            let out_bytes = v["job_id"]
                .as_u64()
                .and_then(|j| out_of.get(&j).copied())
                .unwrap_or(0);
            (bytes > 0 && runtime_s > 0.0).then(|| MapSample {
                level,
                bytes,
                out_bytes,
                runtime_s,
                node: v["node"].as_str().unwrap_or("").to_string(),
                start_ms: v["start_ms"].as_u64().unwrap_or(0),
                end_ms: v["end_ms"].as_u64().unwrap_or(0),
            })
        })
        .collect()
}

/// Every `*.jsonl` file under `dir` (recursively).
pub fn load(dir: &Path) -> Result<Vec<MapSample>, String> {
    load_with(dir, samples)
}

/// `parse` applied to every `*.jsonl` file under `dir` (recursively).
fn load_with<T>(dir: &Path, parse: impl Fn(&str) -> Vec<T>) -> Result<Vec<T>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                let text = std::fs::read_to_string(&p)
                    .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
                out.extend(parse(&text));
            }
        }
    }
    Ok(out)
}

/// One job of a history file: (shuffle MiB, seconds from its last
/// task's end to its own end), if the file holds its final record and a
/// task.
pub fn tail_point(text: &str) -> Option<(f64, f64)> {
    let mut last_task = 0u64;
    let mut job = None;
    for v in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        if v["state"] == "succeeded" && (v["kind"] == "map" || v["kind"] == "reduce") {
            last_task = last_task.max(v["end_ms"].as_u64().unwrap_or(0));
        } else if v["type"] == "job" {
            job = Some((
                v["bytes"]["shuffle"].as_u64().unwrap_or(0),
                v["end_ms"].as_u64().unwrap_or(0),
            ));
        }
    }
    let (shuffle, end) = job?;
    (last_task > 0 && end >= last_task)
        .then(|| (shuffle as f64 / MIB, (end - last_task) as f64 / 1e3))
}

/// Every job's tail point under `dir` (recursively).
pub fn load_tails(dir: &Path) -> Result<Vec<(f64, f64)>, String> {
    load_with(dir, |t| tail_point(t).into_iter().collect())
}

/// The successful reduces of a history file: (shuffle bytes, runtime s).
pub fn reduce_points(text: &str) -> Vec<(u64, f64)> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "task" && v["kind"] == "reduce" && v["state"] == "succeeded")
        .filter_map(|v| {
            Some((
                v["bytes"]["shuffle"].as_u64().unwrap_or(0),
                v["runtime_s"].as_f64()?,
            ))
        })
        .collect()
}

/// Every successful reduce under `dir` (recursively).
pub fn load_reduces(dir: &Path) -> Result<Vec<(u64, f64)>, String> {
    load_with(dir, reduce_points)
}

/// Least squares `y = fixed + slope * x`, both kept at 0 or more (a
/// negative slope becomes the points' mean as a fixed part).
fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    ((my - slope * mx).max(0.0), slope)
}

/// Fits the reduce's time after its fetches: each runtime less its
/// shuffle bytes at the model's rack rate (the fetches alone), as a line
/// in the shuffle MiB. Says where it came from.
pub fn fit_reduce(m: &mut TaskModel, points: &[(u64, f64)]) -> String {
    if points.is_empty() {
        return format!(
            "reduce {:.3} s + {:.4} s/MiB: default (no reduce in the history)",
            m.reduce_fixed_s, m.reduce_s_per_mib
        );
    }
    let pts: Vec<(f64, f64)> = points
        .iter()
        .map(|&(b, t)| (b as f64 / MIB, (t - b as f64 / m.bandwidth[3]).max(0.0)))
        .collect();
    (m.reduce_fixed_s, m.reduce_s_per_mib) = fit_line(&pts);
    format!(
        "reduce {:.3} s + {:.4} s per shuffle MiB after its fetches, from {} reduces",
        m.reduce_fixed_s,
        m.reduce_s_per_mib,
        points.len()
    )
}

/// Fits the model's tail, `fixed + s_per_mib * shuffle MiB`, to the
/// points by least squares, both kept at 0 or more (a negative slope
/// becomes the points' mean as a fixed tail). Says where it came from.
pub fn fit_tail(m: &mut TaskModel, points: &[(f64, f64)]) -> String {
    if points.is_empty() {
        return "tail 0 s: no job in the history".into();
    }
    (m.tail_fixed_s, m.tail_s_per_shuffle_mib) = fit_line(points);
    format!(
        "tail {:.3} s + {:.4} s per shuffle MiB from {} jobs",
        m.tail_fixed_s,
        m.tail_s_per_shuffle_mib,
        points.len()
    )
}

/// The mean number of remote reads into `s`'s node while it ran, itself
/// included: the time-weighted overlap of the other remote maps there.
fn sharing(s: &MapSample, all: &[MapSample]) -> f64 {
    let len = s.end_ms.saturating_sub(s.start_ms);
    if len == 0 || s.node.is_empty() {
        return 1.0;
    }
    let overlap: u64 = all
        .iter()
        .filter(|o| !o.level.is_local() && o.node == s.node && !std::ptr::eq(*o, s))
        .map(|o| {
            o.end_ms
                .min(s.end_ms)
                .saturating_sub(o.start_ms.max(s.start_ms))
        })
        .sum();
    1.0 + overlap as f64 / len as f64
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Some(v[v.len() / 2])
}

/// Fits a map's compute, `fixed + in MiB * a + out MiB * b`, to the local
/// maps' runtimes by least squares, each part kept at 0 or more. A part
/// the samples cannot tell apart from the fixed one (inputs or outputs
/// all of one size) is left out: one-block maps charge their compute to
/// the fixed part, so a model fitted on 4 MiB blocks does not scale it by
/// four on 16 MiB ones. No map is dropped as an outlier: the slow ones
/// are a job's big outputs (on the reduce-bound matrix a job's maps
/// emitting 12.9 MiB each take 1.0-1.2 s, four median residuals off), and
/// dropping them sized that run's maps 15 % short. Says where it came
/// from.
pub fn fit_compute(m: &mut TaskModel, local: &[&MapSample]) -> String {
    let cols = |s: &MapSample| [1.0, s.bytes as f64 / MIB, s.out_bytes as f64 / MIB];
    let varies = |k: usize| {
        let xs: Vec<f64> = local.iter().map(|s| cols(s)[k]).collect();
        let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
        let sd =
            (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len().max(1) as f64).sqrt();
        mean > 0.0 && sd > 0.05 * mean
    };
    let mut use_col = [true, varies(1), varies(2)];
    let coef = loop {
        let c = least_squares(local, &use_col, cols);
        let negative = (0..3)
            .filter(|&k| use_col[k] && c[k] < 0.0)
            .min_by(|&a, &b| c[a].total_cmp(&c[b]));
        match negative {
            Some(k) => use_col[k] = false,
            None => break c,
        }
    };
    if local.is_empty() {
        return format!(
            "compute {:.4} s/MiB: the prior's (no local map in the history)",
            m.compute_s_per_mib
        );
    }
    [m.map_fixed_s, m.compute_s_per_mib, m.compute_s_per_out_mib] = coef;
    format!(
        "map compute {:.4} s + {:.4} s per input MiB + {:.4} s per output MiB from {} local maps",
        coef[0],
        coef[1],
        coef[2],
        local.len()
    )
}

/// Least squares over the columns in use (the others 0), by the normal
/// equations; a singular system leaves its columns at 0.
fn least_squares(
    pts: &[&MapSample],
    use_col: &[bool; 3],
    cols: impl Fn(&MapSample) -> [f64; 3],
) -> [f64; 3] {
    let idx: Vec<usize> = (0..3).filter(|&k| use_col[k]).collect();
    let n = idx.len();
    let mut a = vec![vec![0.0; n + 1]; n];
    for s in pts {
        let x = cols(s);
        for (i, &p) in idx.iter().enumerate() {
            for (j, &q) in idx.iter().enumerate() {
                a[i][j] += x[p] * x[q];
            }
            a[i][n] += x[p] * s.runtime_s;
        }
    }
    // Gauss-Jordan with partial pivoting.
    for c in 0..n {
        let Some(p) = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())) else {
            break;
        };
        if a[p][c].abs() < 1e-12 {
            return [0.0; 3];
        }
        a.swap(c, p);
        let pivot = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, y) in row.iter_mut().zip(&pivot).skip(c) {
                    *x -= f * y;
                }
            }
        }
    }
    let mut out = [0.0; 3];
    for (i, &p) in idx.iter().enumerate() {
        out[p] = a[i][n] / a[i][i];
    }
    out
}

/// The fitted model, and a line per parameter saying where it came from.
pub fn fit(samples: &[MapSample]) -> Result<(TaskModel, Vec<String>), String> {
    fit_over(samples, TaskModel::default())
}

/// [`fit`] starting from `prior`: a parameter no sample speaks to keeps the
/// prior's value. A run on a shaped network whose maps never read across
/// racks then keeps the uplink's configured rate for off-rack reads, not
/// the default's gigabit figure, which is several times the real link.
pub fn fit_over(
    samples: &[MapSample],
    prior: TaskModel,
) -> Result<(TaskModel, Vec<String>), String> {
    if samples.is_empty() {
        return Err("the history holds no successful map task".into());
    }
    let mut m = prior;
    let mut said = Vec::new();
    let local: Vec<&MapSample> = samples.iter().filter(|s| s.level.is_local()).collect();
    said.push(fit_compute(&mut m, &local));
    for (i, level) in Locality::ALL.iter().enumerate().skip(2) {
        let bw: Vec<f64> = samples
            .iter()
            .filter(|s| s.level == *level)
            .filter_map(|s| {
                let read = s.runtime_s - m.map_compute_s(s.bytes, s.out_bytes);
                (read > 1e-3).then(|| s.bytes as f64 / read * sharing(s, samples))
            })
            .collect();
        let n = bw.len();
        match median(bw) {
            Some(b) => {
                m.bandwidth[i] = b;
                said.push(format!(
                    "{} {:.1} MB/s from {n} maps",
                    level.as_str(),
                    b / 1e6
                ));
            }
            None => said.push(format!(
                "{} {:.1} MB/s: the prior's (no usable sample)",
                level.as_str(),
                m.bandwidth[i] / 1e6
            )),
        }
    }
    // The rates are each read's alone (the sharing divided out), so the
    // simulator shares them again.
    m.shared_reads = true;
    m.validate()?;
    Ok((m, said))
}

/// The model as JSON, the form `mr sim --model FILE` reads.
pub fn to_json(m: &TaskModel) -> Value {
    serde_json::json!({
        "compute_s_per_mib": m.compute_s_per_mib,
        "map_fixed_s": m.map_fixed_s,
        "compute_s_per_out_mib": m.compute_s_per_out_mib,
        "bandwidth": m.bandwidth,
        "jitter": m.jitter,
        "tail_fixed_s": m.tail_fixed_s,
        "tail_s_per_shuffle_mib": m.tail_s_per_shuffle_mib,
        "reduce_fixed_s": m.reduce_fixed_s,
        "reduce_s_per_mib": m.reduce_s_per_mib,
        "shared_reads": m.shared_reads,
    })
}

pub fn from_json(text: &str) -> Result<TaskModel, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not a model file: {e}"))?;
    let mut m = TaskModel::default();
    if let Some(c) = v["compute_s_per_mib"].as_f64() {
        m.compute_s_per_mib = c;
    }
    if let Some(c) = v["map_fixed_s"].as_f64() {
        m.map_fixed_s = c;
    }
    if let Some(c) = v["compute_s_per_out_mib"].as_f64() {
        m.compute_s_per_out_mib = c;
    }
    if let Some(b) = v["bandwidth"].as_array() {
        if b.len() != 5 {
            return Err("bandwidth must list 5 levels".into());
        }
        for (i, x) in b.iter().enumerate() {
            m.bandwidth[i] = x.as_f64().ok_or("bandwidths must be numbers")?;
        }
    }
    if let Some(j) = v["jitter"].as_f64() {
        m.jitter = j;
    }
    if let Some(t) = v["tail_fixed_s"].as_f64() {
        m.tail_fixed_s = t;
    }
    if let Some(t) = v["tail_s_per_shuffle_mib"].as_f64() {
        m.tail_s_per_shuffle_mib = t;
    }
    if let Some(t) = v["reduce_fixed_s"].as_f64() {
        m.reduce_fixed_s = t;
    }
    if let Some(t) = v["reduce_s_per_mib"].as_f64() {
        m.reduce_s_per_mib = t;
    }
    if let Some(b) = v["shared_reads"].as_bool() {
        m.shared_reads = b;
    }
    m.validate()?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(level: &str, bytes: u64, runtime: f64) -> String {
        let key = match level {
            "cache_local" => "cache",
            "node_local" => "local",
            "rack_local" | "cache_rack_local" => "remote_rack",
            _ => "remote_off_rack",
        };
        serde_json::json!({"type": "task", "kind": "map", "state": "succeeded", "locality": level,
            "runtime_s": runtime, "bytes": {key: bytes}})
        .to_string()
    }

    #[test]
    fn fits_compute_and_bandwidths_from_a_history() {
        let mib = 1 << 20;
        // 0.02 s/MiB compute; rack reads at 64 MiB/s; off-rack at 16 MiB/s.
        let mut text = String::new();
        for _ in 0..5 {
            text += &line("node_local", 64 * mib, 1.28);
            text += "\n";
            text += &line("node_local", 32 * mib, 0.64);
            text += "\n";
            text += &line("rack_local", 64 * mib, 1.28 + 1.0);
            text += "\n";
            text += &line("off_rack", 32 * mib, 0.64 + 2.0);
            text += "\n";
        }
        text += "{\"type\":\"job\"}\nnot json\n";
        let s = samples(&text);
        assert_eq!(s.len(), 20);
        let (m, said) = fit(&s).unwrap();
        assert!((m.compute_s_per_mib - 0.02).abs() < 1e-9, "{m:?}");
        assert!(m.map_fixed_s.abs() < 1e-9, "{m:?}");
        assert!((m.bandwidth[3] - 64.0 * MIB).abs() < 1.0);
        assert!((m.bandwidth[4] - 16.0 * MIB).abs() < 1.0);
        assert!(said
            .iter()
            .any(|l| l.contains("cache_rack_local") && l.contains("prior")));
        let back = from_json(&to_json(&m).to_string()).unwrap();
        assert_eq!(back, m);
        assert!(fit(&[]).is_err());
        // A level without a sample keeps the prior's rate; one with
        // samples does not.
        let no_off_rack: Vec<MapSample> = s
            .iter()
            .filter(|x| x.level != Locality::OffRack)
            .cloned()
            .collect();
        let mut prior = TaskModel::default();
        prior.bandwidth[3] = 1.0e6;
        prior.bandwidth[4] = 6.25e6;
        let (m, said) = fit_over(&no_off_rack, prior).unwrap();
        assert_eq!(m.bandwidth[4], 6.25e6);
        assert!((m.bandwidth[3] - 64.0 * MIB).abs() < 1.0);
        assert!(
            said.iter()
                .any(|l| l.contains("off_rack") && l.contains("prior")),
            "{said:?}"
        );
        assert!(from_json("{\"bandwidth\": [1, 2]}").is_err());
    }

    /// One-block maps whose time follows what they emit (0.05 s + 0.06 s
    /// per output MiB), each job's output read from its job record: the
    /// fit finds both parts and charges no compute per input MiB (every
    /// input is one size).
    #[test]
    fn a_maps_compute_follows_its_output() {
        let mib = 1u64 << 20;
        let mut text = String::new();
        for (job, out_mib) in [(1u64, 0u64), (2, 1), (3, 4), (4, 10)] {
            for i in 0..4u64 {
                let t = 0.05 + 0.06 * out_mib as f64 + 0.001 * i as f64 - 0.0015;
                text += &serde_json::json!({"type": "task", "kind": "map", "state": "succeeded",
                    "locality": "node_local", "job_id": job, "runtime_s": t,
                    "bytes": {"local": 16 * mib}})
                .to_string();
                text += "\n";
            }
            text += &serde_json::json!({"type": "job", "job_id": job, "maps": 4,
                "bytes": {"shuffle": 4 * out_mib * mib}})
            .to_string();
            text += "\n";
        }
        let s = samples(&text);
        assert_eq!(s.len(), 16);
        assert_eq!(s[4].out_bytes, mib);
        let (m, said) = fit(&s).unwrap();
        assert!((m.map_fixed_s - 0.05).abs() < 1e-9, "{m:?}");
        assert!((m.compute_s_per_out_mib - 0.06).abs() < 1e-9, "{m:?}");
        assert_eq!(m.compute_s_per_mib, 0.0);
        assert!(said[0].contains("from 16 local maps"), "{said:?}");
        let back = from_json(&to_json(&m).to_string()).unwrap();
        assert_eq!(back, m);
        assert!(
            (m.mean_duration(Locality::NodeLocal, 16 * mib, 2 * mib)
                - 0.17
                - 16.0 * MIB / m.bandwidth[1])
                .abs()
                < 1e-9
        );
    }

    #[test]
    fn the_tail_is_fitted_from_job_ends_after_their_last_map() {
        let file = |shuffle_mib: u64, tail_ms: u64| {
            format!(
                "{{\"kind\":\"map\",\"state\":\"succeeded\",\"end_ms\":1000}}\n\
                 {{\"kind\":\"map\",\"state\":\"succeeded\",\"end_ms\":2000}}\n\
                 {{\"type\":\"job\",\"end_ms\":{},\"bytes\":{{\"shuffle\":{}}}}}\n",
                2000 + tail_ms,
                shuffle_mib << 20
            )
        };
        // Tails of 0.5 s + 0.1 s per MiB: 0.5, 0.7, 1.5 s.
        let pts: Vec<(f64, f64)> = [(0, 500), (2, 700), (10, 1500)]
            .iter()
            .map(|&(s, t)| tail_point(&file(s, t)).unwrap())
            .collect();
        assert_eq!(pts[1], (2.0, 0.7));
        let mut m = TaskModel::default();
        fit_tail(&mut m, &pts);
        assert!((m.tail_fixed_s - 0.5).abs() < 1e-9, "{m:?}");
        assert!((m.tail_s_per_shuffle_mib - 0.1).abs() < 1e-9, "{m:?}");
        assert!((m.tail_s(4 << 20) - 0.9).abs() < 1e-9);
        let back = from_json(&to_json(&m).to_string()).unwrap();
        assert_eq!(back, m);
        // No map or no final record: no point.
        assert!(tail_point("{\"type\":\"job\",\"end_ms\":5}").is_none());
    }

    /// Two remote reads into one node that overlap for their whole run
    /// each got half the port: the fit gives the rate one read alone gets,
    /// twice what each measured. A reduce's fetches at the fitted rack rate
    /// come off its runtime before the line is fitted.
    #[test]
    fn concurrent_reads_are_divided_out_and_fetches_off_reduces() {
        let mib = 1u64 << 20;
        let rec = |node: &str, start: u64| {
            serde_json::json!({"type": "task", "kind": "map", "state": "succeeded",
                "locality": "rack_local", "node": node, "start_ms": start, "end_ms": start + 1000,
                "runtime_s": 1.0, "bytes": {"remote_rack": 8 * mib}})
            .to_string()
        };
        let local = line("node_local", 8 * mib, 0.5);
        // 0.0625 s/MiB compute: 0.5 s of each 1 s map is the read, 8 MiB
        // in 0.5 s shared by two: 32 MiB/s alone.
        let text = [local, rec("w1", 0), rec("w1", 0), rec("w2", 5000)].join("\n");
        let s = samples(&text);
        let (m, _) = fit(&s).unwrap();
        assert!(m.shared_reads);
        // Two samples at 2 x 16 MiB/s and one alone at 16 MiB/s: median 32.
        assert!(
            (m.bandwidth[3] - 32.0 * MIB).abs() < 1.0,
            "{}",
            m.bandwidth[3]
        );
        let mut m = TaskModel::default();
        m.bandwidth[3] = 10.0 * MIB;
        // Reduces of 10 and 30 MiB: fetches 1 and 3 s; after them 0.5 s +
        // 0.1 s/MiB: runtimes 2.5 and 6.5 s.
        fit_reduce(&mut m, &[(10 * mib, 2.5), (30 * mib, 6.5)]);
        assert!((m.reduce_fixed_s - 0.5).abs() < 1e-9, "{m:?}");
        assert!((m.reduce_s_per_mib - 0.1).abs() < 1e-9, "{m:?}");
    }
}

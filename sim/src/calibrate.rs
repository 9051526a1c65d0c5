//! `mr sim calibrate --history DIR`: fits the task model to a real
//! cluster's job history (the JSON lines `mr job history ID` prints, which
//! `mr bench` keeps under `OUT/history/`), so the simulator's durations are
//! this cluster's, not the defaults.
//!
//! The fit, per level, uses medians (robust to a straggler or two):
//! - compute seconds per MiB: over node- and cache-local maps, whose read
//!   time is negligible next to their compute;
//! - read bandwidth of each remote level: input bytes over what the map
//!   took beyond its compute time.
//!
//! A level with no sample keeps the default, and the fit says so.

use crate::model::TaskModel;
use common::sched::Locality;
use serde_json::Value;
use std::path::Path;

const MIB: f64 = (1 << 20) as f64;

/// One successful map attempt of the history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapSample {
    pub level: Locality,
    pub bytes: u64,
    pub runtime_s: f64,
}

/// The map samples in one history file's text; other lines are skipped.
pub fn samples(text: &str) -> Vec<MapSample> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "task" && v["kind"] == "map" && v["state"] == "succeeded")
        .filter_map(|v| {
            let level = Locality::parse(v["locality"].as_str()?)?;
            let b = &v["bytes"];
            let bytes = ["cache", "local", "remote_rack", "remote_off_rack"]
                .iter()
                .map(|k| b[k].as_u64().unwrap_or(0))
                .sum::<u64>();
            let runtime_s = v["runtime_s"].as_f64()?;
            (bytes > 0 && runtime_s > 0.0).then_some(MapSample {
                level,
                bytes,
                runtime_s,
            })
        })
        .collect()
}

/// Every `*.jsonl` file under `dir` (recursively).
pub fn load(dir: &Path) -> Result<Vec<MapSample>, String> {
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
                out.extend(samples(&text));
            }
        }
    }
    Ok(out)
}

/// One job of a history file: (shuffle MiB, seconds from its last map's
/// end to its own end), if the file holds its final record and a map.
pub fn tail_point(text: &str) -> Option<(f64, f64)> {
    let mut last_map = 0u64;
    let mut job = None;
    for v in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        if v["kind"] == "map" && v["state"] == "succeeded" {
            last_map = last_map.max(v["end_ms"].as_u64().unwrap_or(0));
        } else if v["type"] == "job" {
            job = Some((
                v["bytes"]["shuffle"].as_u64().unwrap_or(0),
                v["end_ms"].as_u64().unwrap_or(0),
            ));
        }
    }
    let (shuffle, end) = job?;
    (last_map > 0 && end >= last_map).then(|| (shuffle as f64 / MIB, (end - last_map) as f64 / 1e3))
}

/// Every job's tail point under `dir` (recursively).
pub fn load_tails(dir: &Path) -> Result<Vec<(f64, f64)>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?;
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                let text = std::fs::read_to_string(&p)
                    .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
                out.extend(tail_point(&text));
            }
        }
    }
    Ok(out)
}

/// Fits the model's tail, `fixed + s_per_mib * shuffle MiB`, to the
/// points by least squares, both kept at 0 or more (a negative slope
/// becomes the points' mean as a fixed tail). Says where it came from.
pub fn fit_tail(m: &mut TaskModel, points: &[(f64, f64)]) -> String {
    let n = points.len() as f64;
    if points.is_empty() {
        return "tail 0 s: no job in the history".into();
    }
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    m.tail_s_per_shuffle_mib = slope;
    m.tail_fixed_s = (my - slope * mx).max(0.0);
    format!(
        "tail {:.3} s + {:.4} s per shuffle MiB from {} jobs",
        m.tail_fixed_s,
        m.tail_s_per_shuffle_mib,
        points.len()
    )
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Some(v[v.len() / 2])
}

/// The fitted model, and a line per parameter saying where it came from.
pub fn fit(samples: &[MapSample]) -> Result<(TaskModel, Vec<String>), String> {
    if samples.is_empty() {
        return Err("the history holds no successful map task".into());
    }
    let mut m = TaskModel::default();
    let mut said = Vec::new();
    let local: Vec<f64> = samples
        .iter()
        .filter(|s| s.level.is_local())
        .map(|s| s.runtime_s / (s.bytes as f64 / MIB))
        .collect();
    let n = local.len();
    match median(local) {
        Some(c) => {
            m.compute_s_per_mib = c;
            said.push(format!("compute {c:.4} s/MiB from {n} local maps"));
        }
        None => said.push(format!(
            "compute {:.4} s/MiB: default (no local map in the history)",
            m.compute_s_per_mib
        )),
    }
    for (i, level) in Locality::ALL.iter().enumerate().skip(2) {
        let bw: Vec<f64> = samples
            .iter()
            .filter(|s| s.level == *level)
            .filter_map(|s| {
                let read = s.runtime_s - s.bytes as f64 / MIB * m.compute_s_per_mib;
                (read > 1e-3).then(|| s.bytes as f64 / read)
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
                "{} {:.1} MB/s: default (no usable sample)",
                level.as_str(),
                m.bandwidth[i] / 1e6
            )),
        }
    }
    m.validate()?;
    Ok((m, said))
}

/// The model as JSON, the form `mr sim --model FILE` reads.
pub fn to_json(m: &TaskModel) -> Value {
    serde_json::json!({
        "compute_s_per_mib": m.compute_s_per_mib,
        "bandwidth": m.bandwidth,
        "jitter": m.jitter,
        "tail_fixed_s": m.tail_fixed_s,
        "tail_s_per_shuffle_mib": m.tail_s_per_shuffle_mib,
        "shared_reads": m.shared_reads,
    })
}

pub fn from_json(text: &str) -> Result<TaskModel, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not a model file: {e}"))?;
    let mut m = TaskModel::default();
    if let Some(c) = v["compute_s_per_mib"].as_f64() {
        m.compute_s_per_mib = c;
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
            text += &line("rack_local", 64 * mib, 1.28 + 1.0);
            text += "\n";
            text += &line("off_rack", 32 * mib, 0.64 + 2.0);
            text += "\n";
        }
        text += "{\"type\":\"job\"}\nnot json\n";
        let s = samples(&text);
        assert_eq!(s.len(), 15);
        let (m, said) = fit(&s).unwrap();
        assert!((m.compute_s_per_mib - 0.02).abs() < 1e-9);
        assert!((m.bandwidth[3] - 64.0 * MIB).abs() < 1.0);
        assert!((m.bandwidth[4] - 16.0 * MIB).abs() < 1.0);
        assert!(said
            .iter()
            .any(|l| l.contains("cache_rack_local") && l.contains("default")));
        let back = from_json(&to_json(&m).to_string()).unwrap();
        assert_eq!(back, m);
        assert!(fit(&[]).is_err());
        assert!(from_json("{\"bandwidth\": [1, 2]}").is_err());
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
}

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
}

//! One row per validated job run, and `results.csv`.
//!
//! A row is built from the master's job summary (the object `mr job status
//! --json` prints) plus what the harness knows about the cell; the CSV keeps
//! every column a reader needs to redo the analysis without the cluster.

use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// The five locality levels, best first (`sched::Locality` order).
pub const LEVELS: [&str; 5] = [
    "cache_local",
    "node_local",
    "cache_rack_local",
    "rack_local",
    "off_rack",
];

pub const HEADER: &[&str] = &[
    "workload",
    "scheduler",
    "rep",
    "job_id",
    "job",
    "input_bytes",
    "maps",
    "reduces",
    "exec_time_s",
    "cache_local",
    "node_local",
    "cache_rack_local",
    "rack_local",
    "off_rack",
    "local_rate",
    "bytes_cache",
    "bytes_local",
    "bytes_remote",
    "bytes_remote_rack",
    "bytes_remote_off_rack",
    "bytes_shuffle",
    "map_response_mean_s",
    "map_response_p95_s",
    "submit_offset_s",
    "end_ms",
    "workers",
    "block_size",
    "cache",
    "sweep",
    "sweep_value",
    "config",
];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub workload: String,
    pub scheduler: String,
    pub rep: u32,
    pub job_id: u64,
    pub job: String,
    pub input_bytes: u64,
    pub maps: u64,
    pub reduces: u64,
    pub exec_time_s: f64,
    /// Map tasks per level, in [`LEVELS`] order.
    pub locality: [u64; 5],
    pub bytes_cache: u64,
    pub bytes_local: u64,
    pub bytes_remote_rack: u64,
    pub bytes_remote_off_rack: u64,
    pub bytes_shuffle: u64,
    pub map_response_mean_s: f64,
    pub map_response_p95_s: f64,
    /// When the job was submitted, from the start of its cell (the mixed
    /// workload's arrival time; 0 for single jobs).
    pub submit_offset_s: f64,
    /// When the job ended (ms since the Unix epoch, the master's clock).
    pub end_ms: u64,
    pub workers: u32,
    pub block_size: u64,
    /// `cold` or `warm`.
    pub cache: String,
    /// Which sweep the row belongs to (`cache-size`, `block-size`, `maps`),
    /// and the swept value; empty in a matrix run.
    pub sweep: String,
    pub sweep_value: String,
    /// The effective configuration: cluster, network and policy parameters.
    pub config: String,
}

impl Row {
    /// The job's own figures from its summary; the caller fills the cell's.
    pub fn from_summary(v: &Value) -> Row {
        let u = |x: &Value| x.as_u64().unwrap_or(0);
        let f = |x: &Value| x.as_f64().unwrap_or(0.0);
        let mut locality = [0; 5];
        for (i, l) in LEVELS.iter().enumerate() {
            locality[i] = u(&v["locality"][l]);
        }
        let b = &v["bytes"];
        Row {
            scheduler: v["scheduler"].as_str().unwrap_or("").to_string(),
            job_id: u(&v["job_id"]),
            job: v["job"].as_str().unwrap_or("").to_string(),
            maps: u(&v["maps"]),
            reduces: u(&v["reduces"]),
            exec_time_s: f(&v["exec_time_s"]),
            locality,
            bytes_cache: u(&b["cache"]),
            bytes_local: u(&b["local"]),
            bytes_remote_rack: u(&b["remote_rack"]),
            bytes_remote_off_rack: u(&b["remote_off_rack"]),
            bytes_shuffle: u(&b["shuffle"]),
            map_response_mean_s: f(&v["map_response_time_s"]["mean"]),
            map_response_p95_s: f(&v["map_response_time_s"]["p95"]),
            end_ms: u(&v["end_ms"]),
            ..Default::default()
        }
    }

    /// Node- or cache-local maps over all maps: the papers' "data locality".
    pub fn local_rate(&self) -> f64 {
        let maps: u64 = self.locality.iter().sum();
        if maps == 0 {
            return 0.0;
        }
        (self.locality[0] + self.locality[1]) as f64 / maps as f64
    }

    pub fn bytes_remote(&self) -> u64 {
        self.bytes_remote_rack + self.bytes_remote_off_rack
    }

    fn fields(&self) -> Vec<String> {
        let mut v = vec![
            self.workload.clone(),
            self.scheduler.clone(),
            self.rep.to_string(),
            self.job_id.to_string(),
            self.job.clone(),
            self.input_bytes.to_string(),
            self.maps.to_string(),
            self.reduces.to_string(),
            format!("{:.3}", self.exec_time_s),
        ];
        v.extend(self.locality.iter().map(|n| n.to_string()));
        v.extend([
            format!("{:.4}", self.local_rate()),
            self.bytes_cache.to_string(),
            self.bytes_local.to_string(),
            self.bytes_remote().to_string(),
            self.bytes_remote_rack.to_string(),
            self.bytes_remote_off_rack.to_string(),
            self.bytes_shuffle.to_string(),
            format!("{:.3}", self.map_response_mean_s),
            format!("{:.3}", self.map_response_p95_s),
            format!("{:.3}", self.submit_offset_s),
            self.end_ms.to_string(),
            self.workers.to_string(),
            self.block_size.to_string(),
            self.cache.clone(),
            self.sweep.clone(),
            self.sweep_value.clone(),
            self.config.clone(),
        ]);
        v
    }
}

/// RFC 4180 quoting where a field needs it.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn csv_line(fields: &[String]) -> String {
    let v: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
    v.join(",") + "\n"
}

/// Appends rows to a CSV file as they come, writing the header first when
/// the file is new, so an interrupted run keeps every finished row.
pub struct CsvWriter {
    file: std::fs::File,
}

impl CsvWriter {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let mut file = std::fs::File::create(path)?;
        let header: Vec<String> = HEADER.iter().map(|s| s.to_string()).collect();
        file.write_all(csv_line(&header).as_bytes())?;
        Ok(CsvWriter { file })
    }

    pub fn append(&mut self, row: &Row) -> std::io::Result<()> {
        self.file.write_all(csv_line(&row.fields()).as_bytes())?;
        self.file.flush()
    }
}

/// The rows of a CSV this module wrote (the inverse of [`CsvWriter`]), so
/// a report can be made again from an earlier run's figures.
pub fn read_csv(path: &Path) -> anyhow::Result<Vec<Row>> {
    use anyhow::Context;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    anyhow::ensure!(
        header == HEADER,
        "{}: not a results CSV of this version (its header differs)",
        path.display()
    );
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.is_empty()) {
        // Only the last field (config) is ever quoted.
        let f: Vec<&str> = line.splitn(HEADER.len(), ',').collect();
        let bad = || anyhow::anyhow!("{} line {}: malformed row", path.display(), i + 2);
        if f.len() != HEADER.len() {
            return Err(bad());
        }
        let u = |k: usize| f[k].parse::<u64>().map_err(|_| bad());
        let x = |k: usize| f[k].parse::<f64>().map_err(|_| bad());
        let config = f[30];
        let config = match config.strip_prefix('"').and_then(|c| c.strip_suffix('"')) {
            Some(q) => q.replace("\"\"", "\""),
            None => config.to_string(),
        };
        rows.push(Row {
            workload: f[0].into(),
            scheduler: f[1].into(),
            rep: u(2)? as u32,
            job_id: u(3)?,
            job: f[4].into(),
            input_bytes: u(5)?,
            maps: u(6)?,
            reduces: u(7)?,
            exec_time_s: x(8)?,
            locality: [u(9)?, u(10)?, u(11)?, u(12)?, u(13)?],
            bytes_cache: u(15)?,
            bytes_local: u(16)?,
            bytes_remote_rack: u(18)?,
            bytes_remote_off_rack: u(19)?,
            bytes_shuffle: u(20)?,
            map_response_mean_s: x(21)?,
            map_response_p95_s: x(22)?,
            submit_offset_s: x(23)?,
            end_ms: u(24)?,
            workers: u(25)? as u32,
            block_size: u(26)?,
            cache: f[27].into(),
            sweep: f[28].into(),
            sweep_value: f[29].into(),
            config,
        });
    }
    Ok(rows)
}

/// Median of a non-empty slice (mean of the middle two for even lengths).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary() -> Value {
        json!({"job_id": 7, "job": "wordcount", "scheduler": "lsap", "state": "succeeded",
               "exec_time_s": 12.5, "maps": 10, "reduces": 2,
               "locality": {"cache_local": 1, "node_local": 6, "cache_rack_local": 0, "rack_local": 2, "off_rack": 1},
               "bytes": {"cache": 10, "local": 60, "remote_rack": 20, "remote_off_rack": 10, "shuffle": 5, "output": 3},
               "map_response_time_s": {"mean": 0.5, "p50": 0.4, "p95": 1.5}})
    }

    #[test]
    fn a_row_carries_every_column_of_the_summary() {
        let mut r = Row::from_summary(&summary());
        r.workload = "wordcount".into();
        r.config = "heartbeat=250ms, network=emulated \"lan\"".into();
        assert_eq!(r.locality, [1, 6, 0, 2, 1]);
        assert!((r.local_rate() - 0.7).abs() < 1e-12);
        assert_eq!(r.bytes_remote(), 30);
        let f = r.fields();
        assert_eq!(f.len(), HEADER.len());
        let line = csv_line(&f);
        // The config field is quoted, its quotes doubled.
        assert!(
            line.ends_with(",\"heartbeat=250ms, network=emulated \"\"lan\"\"\"\n"),
            "{line}"
        );
        assert!(line.starts_with("wordcount,lsap,0,7,wordcount,0,10,2,12.500,1,6,0,2,1,0.7000,10,60,30,20,10,5,0.500,1.500,"));
    }

    #[test]
    fn the_csv_starts_with_the_header() {
        let p = std::env::temp_dir().join(format!("mr-results-{}.csv", std::process::id()));
        let mut w = CsvWriter::create(&p).unwrap();
        w.append(&Row::from_summary(&summary())).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), HEADER.join(","));
        assert_eq!(lines.next().unwrap().split(',').count(), HEADER.len());
    }

    #[test]
    fn rows_read_back_as_written() {
        let p = std::env::temp_dir().join(format!("mr-results-rt-{}.csv", std::process::id()));
        let mut r = Row::from_summary(&summary());
        r.rep = 2;
        r.end_ms = 1_700_000_000_123;
        r.sweep = "clqlmrs".into();
        r.sweep_value = "mixed".into();
        r.config = "a=1, b=\"two\"".into();
        let mut w = CsvWriter::create(&p).unwrap();
        w.append(&r).unwrap();
        drop(w);
        let back = read_csv(&p).unwrap();
        std::fs::write(&p, "not,a,header\n").unwrap();
        assert!(read_csv(&p).is_err());
        std::fs::remove_file(&p).unwrap();
        assert_eq!(back, vec![r]);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}

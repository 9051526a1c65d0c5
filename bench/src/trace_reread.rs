//! `mr bench trace-report DIR`: the summary and plots of a finished (or
//! interrupted) `mr bench trace` directory written again from its CSVs and
//! `report.json`, running nothing. A report's format can then improve
//! without a two-hour matrix being run again, and the figures stay the
//! measured ones. (The CSVs keep times to the millisecond, so a slowdown
//! of a job that took a few milliseconds alone can move in its third
//! digit; job times, intervals of job times and slot use do not.) The
//! report names the runs' commit and its own, so figures of old runs
//! computed by newer definitions say so.

use super::trace_report::{
    self, JobRow, RunRow, Sidecar, SoloRow, JOB_HEADER, RUN_HEADER, SOLO_HEADER,
};
use anyhow::{bail, Context};
use std::path::Path;

/// Reads DIR and writes its `summary.md` and plots again; for the
/// directory of a `--slices` run, every slice's and `slices.md`.
pub fn rewrite(dir: &Path) -> anyhow::Result<()> {
    let slices = super::trace_slices::found(dir);
    if !dir.join("report.json").exists() && !slices.is_empty() {
        for s in &slices {
            rewrite(s)?;
        }
        return super::trace_slices::write(dir, &slices);
    }
    let sidecar: Sidecar = serde_json::from_slice(
        &std::fs::read(dir.join("report.json"))
            .with_context(|| format!("{} is not an `mr bench trace` directory", dir.display()))?,
    )
    .context("report.json")?;
    let jobs = read_jobs(&std::fs::read_to_string(dir.join("trace-jobs.csv"))?)?;
    let runs = read_runs(&std::fs::read_to_string(dir.join("trace-runs.csv"))?)?;
    let solo = read_solo(&std::fs::read_to_string(dir.join("solo.csv"))?)?;
    trace_report::write_summary(dir, &sidecar.meta, &solo, &jobs, &runs, &sidecar.failures)
}

/// The rows under a header that must be `want`, each split into fields.
fn rows<'a>(file: &str, text: &'a str, want: &[&str]) -> anyhow::Result<Vec<Vec<&'a str>>> {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    if head != want {
        bail!("{file}: the header is not the one `mr bench trace` writes: {head:?}");
    }
    lines
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split(',').collect();
            if f.len() != want.len() {
                bail!(
                    "{file} line {}: {} fields, want {}",
                    i + 2,
                    f.len(),
                    want.len()
                );
            }
            Ok(f)
        })
        .collect()
}

fn num<T: std::str::FromStr>(file: &str, f: &str) -> anyhow::Result<T> {
    f.parse()
        .map_err(|_| anyhow::anyhow!("{file}: {f:?} is not a number"))
}

pub fn read_jobs(text: &str) -> anyhow::Result<Vec<JobRow>> {
    let file = "trace-jobs.csv";
    rows(file, text, JOB_HEADER)?
        .into_iter()
        .map(|f| {
            Ok(JobRow {
                load: f[0].into(),
                policy: f[1].into(),
                rep: num(file, f[2])?,
                row: num(file, f[3])?,
                name: f[4].into(),
                job_id: num(file, f[5])?,
                maps: num(file, f[6])?,
                reduces: num(file, f[7])?,
                input_bytes: num(file, f[8])?,
                shuffle_bytes: num(file, f[9])?,
                output_bytes: num(file, f[10])?,
                want_input: num(file, f[11])?,
                want_shuffle: num(file, f[12])?,
                want_output: num(file, f[13])?,
                at_s: num(file, f[14])?,
                submit_ms: num(file, f[15])?,
                end_ms: num(file, f[16])?,
                exec_time_s: num(file, f[17])?,
                alone_s: num(file, f[18])?,
                // f[19], the slowdown, follows from the two before it.
                local_maps: num(file, f[20])?,
            })
        })
        .collect()
}

pub fn read_runs(text: &str) -> anyhow::Result<Vec<RunRow>> {
    let file = "trace-runs.csv";
    rows(file, text, RUN_HEADER)?
        .into_iter()
        .map(|f| {
            Ok(RunRow {
                load: f[0].into(),
                compression: num(file, f[1])?,
                offered: num(file, f[2])?,
                policy: f[3].into(),
                rep: num(file, f[4])?,
                jobs: num(file, f[5])?,
                makespan_s: num(file, f[6])?,
                map_slot_use: num(file, f[7])?,
                reduce_slot_use: num(file, f[8])?,
            })
        })
        .collect()
}

pub fn read_solo(text: &str) -> anyhow::Result<Vec<SoloRow>> {
    let file = "solo.csv";
    rows(file, text, SOLO_HEADER)?
        .into_iter()
        .map(|f| {
            Ok(SoloRow {
                row: num(file, f[0])?,
                name: f[1].into(),
                maps: num(file, f[2])?,
                reduces: num(file, f[3])?,
                shuffle_ratio: num(file, f[4])?,
                output_ratio: num(file, f[5])?,
                capped: num(file, f[6])?,
                alone_s: num(file, f[7])?,
                map_task_s: num(file, f[8])?,
                reduce_task_s: num(file, f[9])?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_written_read_back_the_same() {
        let j = JobRow {
            load: "0.6".into(),
            policy: "atlas".into(),
            rep: 2,
            row: 7,
            name: "job7".into(),
            job_id: 99,
            maps: 3,
            reduces: 2,
            input_bytes: 12,
            shuffle_bytes: 13,
            output_bytes: 14,
            want_input: 15,
            want_shuffle: 16,
            want_output: 17,
            at_s: 1.25,
            submit_ms: 1000,
            end_ms: 2500,
            exec_time_s: 1.5,
            alone_s: 0.5,
            local_maps: 3,
        };
        let text = trace_report::jobs_csv(std::slice::from_ref(&j));
        assert_eq!(read_jobs(&text).unwrap(), vec![j]);
        let r = RunRow {
            load: "0.6".into(),
            compression: 12.5,
            offered: 0.6,
            policy: "fifo".into(),
            rep: 1,
            jobs: 40,
            makespan_s: 20.125,
            map_slot_use: 0.25,
            reduce_slot_use: 0.5,
        };
        let text = trace_report::runs_csv(std::slice::from_ref(&r));
        assert_eq!(read_runs(&text).unwrap(), vec![r]);
        let s = SoloRow {
            row: 7,
            name: "job7".into(),
            maps: 3,
            reduces: 2,
            shuffle_ratio: 1.25,
            output_ratio: 0.5,
            capped: true,
            alone_s: 0.75,
            map_task_s: 1.5,
            reduce_task_s: 2.25,
        };
        let text = trace_report::solo_csv(std::slice::from_ref(&s));
        assert_eq!(read_solo(&text).unwrap(), vec![s]);
    }

    #[test]
    fn a_foreign_csv_is_refused_with_its_name() {
        let e = read_runs("a,b\n1,2\n").unwrap_err().to_string();
        assert!(e.contains("trace-runs.csv") && e.contains("header"), "{e}");
        let mut text = trace_report::runs_csv(&[]);
        text += "0.6,1,0.6,fifo,1,40,2\n";
        let e = read_runs(&text).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("7 fields"), "{e}");
    }
}

//! What the CLI shows people: progress on a terminal, aligned tables.
//!
//! Every progress display of `mr` (put, get, gen, job run/wait, bench) is
//! here, on [`indicatif`]: a bar with the percentage, the rate and the time
//! left, redrawn in place on stderr. Nothing is drawn when stderr is not a
//! terminal (scripts, CI logs, tests) or under `mr -q`, so what a script
//! reads (stdout, `--json`) never changes.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

static QUIET: AtomicBool = AtomicBool::new(false);

/// `mr -q`: no progress and no log lines on stderr (errors still are).
pub fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Whether progress is drawn: stderr is a terminal and `-q` was not given.
pub fn drawing() -> bool {
    !quiet() && std::io::stderr().is_terminal()
}

fn target() -> ProgressDrawTarget {
    if drawing() {
        ProgressDrawTarget::stderr_with_hz(10)
    } else {
        ProgressDrawTarget::hidden()
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("the progress templates are constants")
        .progress_chars("#>-")
}

/// A transfer (`mr fs put`, `mr fs get`): bytes done of the total, the
/// percentage, the rate and the time left.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
}

impl Progress {
    pub fn new(label: &str, total: Option<u64>) -> Self {
        let bar = ProgressBar::with_draw_target(total, target());
        bar.set_style(style(if total.is_some() {
            "{prefix}: [{bar:24}] {bytes}/{total_bytes} ({percent}%) at {bytes_per_sec}, {eta} left"
        } else {
            "{prefix}: {bytes} at {bytes_per_sec}"
        }));
        bar.set_prefix(label.to_string());
        Progress {
            bar,
            start: Instant::now(),
        }
    }

    pub fn bytes(&mut self, done: u64) {
        self.bar.set_position(done);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// The line that says where a job is, from its summary (`mr job status
/// --json`): `job 3 wordcount [running]: map 5/8 reduce 0/4`.
pub fn job_line(v: &Value) -> String {
    let p = &v["progress"];
    format!(
        "job {} {} [{}]: map {}/{} reduce {}/{}",
        v["job_id"],
        v["job"].as_str().unwrap_or(""),
        v["state"].as_str().unwrap_or(""),
        p["maps_done"],
        v["maps"],
        p["reduces_done"],
        v["reduces"]
    )
}

/// Tasks done and all tasks of a job summary (maps and reduces).
fn job_tasks(v: &Value) -> (u64, u64) {
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let p = &v["progress"];
    (
        n(&p["maps_done"]) + n(&p["reduces_done"]),
        n(&v["maps"]) + n(&v["reduces"]),
    )
}

/// A job followed to its end (`mr job run`, `mr job wait`, `mr gen`): the
/// tasks done, the percentage, the tasks per second and the time left. In
/// a log (stderr not a terminal) a line each time the job's line changes,
/// as before; nothing under `-q`.
pub struct JobProgress {
    bar: ProgressBar,
    last: String,
}

impl JobProgress {
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), target());
        bar.set_style(style(
            "{msg} [{bar:24}] {percent}% at {per_sec}, {eta} left ({elapsed})",
        ));
        JobProgress {
            bar,
            last: String::new(),
        }
    }

    /// The job's latest summary.
    pub fn update(&mut self, v: &Value) {
        let line = job_line(v);
        let (done, all) = job_tasks(v);
        if line != self.last {
            if !drawing() && !quiet() {
                eprintln!("{line}");
            }
            self.bar.set_message(line.clone());
            self.last = line;
        }
        self.bar.set_length(all.max(1));
        self.bar.set_position(done);
    }

    /// Whether any summary came yet.
    pub fn started(&self) -> bool {
        !self.last.is_empty()
    }

    /// A line above the display (a master that stops answering, ...).
    pub fn note(&self, msg: &str) {
        if !quiet() {
            self.bar.suspend(|| eprintln!("{msg}"));
        }
    }

    /// Removes the bar and leaves the job's last line on the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
        if drawing() {
            eprintln!("{} ({:.1}s)", self.last, self.bar.elapsed().as_secs_f64());
        }
    }
}

impl Drop for JobProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl Default for JobProgress {
    fn default() -> Self {
        Self::new()
    }
}

/// The aligned tables are the harness's too (`mr bench sched`), so they
/// live in the crate below.
pub use bench::table::table;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_summary_gives_its_line_and_its_tasks() {
        let v = serde_json::json!({"job_id": 3, "job": "wordcount", "state": "running",
            "maps": 8, "reduces": 4, "progress": {"maps_done": 5, "reduces_done": 1}});
        assert_eq!(
            job_line(&v),
            "job 3 wordcount [running]: map 5/8 reduce 1/4"
        );
        assert_eq!(job_tasks(&v), (6, 12));
        let mut p = JobProgress::new();
        assert!(!p.started());
        p.update(&v);
        assert!(p.started());
        p.finish();
    }
}

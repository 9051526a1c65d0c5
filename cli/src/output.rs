//! What the CLI shows people: progress on a terminal, aligned tables.
//!
//! Every progress display of `mr` (put, get, gen, job run/wait, bench) is
//! here, on [`indicatif`]: a bar with the percentage, the rate and the time
//! left, redrawn in place on stderr. Nothing is drawn when stderr is not a
//! terminal (scripts, CI logs, tests) or under `mr -q`, so what a script
//! reads (stdout, `--json`) never changes.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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

/// Progress over a benchmark's cells: a bar over the cells with the
/// current one and the time left, and the running job's progress on the
/// line below. On a terminal both are redrawn in place; in a log each cell
/// gets a start and an end line; `quiet` prints nothing.
pub struct MatrixProgress {
    mode: Mode,
    total: usize,
    done: usize,
    start: Instant,
    cell: String,
    cell_start: Instant,
    multi: MultiProgress,
    cells: ProgressBar,
    job: ProgressBar,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Terminal,
    Log,
    Quiet,
}

impl MatrixProgress {
    pub fn new(total: usize, quiet: bool) -> Self {
        let mode = if quiet || self::quiet() {
            Mode::Quiet
        } else if drawing() {
            Mode::Terminal
        } else {
            Mode::Log
        };
        let multi = MultiProgress::with_draw_target(if mode == Mode::Terminal {
            ProgressDrawTarget::stderr_with_hz(10)
        } else {
            ProgressDrawTarget::hidden()
        });
        let cells = multi.add(ProgressBar::new(total.max(1) as u64));
        cells.set_style(style(
            "[{bar:24}] {pos}/{len} cells ({percent}%) | {msg} | {elapsed} elapsed, ~{eta} left",
        ));
        let job = multi.add(ProgressBar::new(0));
        job.set_style(style("  {msg}"));
        let now = Instant::now();
        MatrixProgress {
            mode,
            total: total.max(1),
            done: 0,
            start: now,
            cell: String::new(),
            cell_start: now,
            multi,
            cells,
            job,
        }
    }

    /// Time left, extrapolated from the cells done so far.
    pub fn eta(&self) -> Option<Duration> {
        (self.done > 0).then(|| {
            self.start
                .elapsed()
                .mul_f64((self.total - self.done.min(self.total)) as f64 / self.done as f64)
        })
    }

    pub fn start_cell(&mut self, label: &str) {
        self.cell = label.to_string();
        self.cell_start = Instant::now();
        self.job.set_message("");
        match self.mode {
            Mode::Terminal => self.cells.set_message(label.to_string()),
            Mode::Log => eprintln!("[{}/{}] {label}", self.done + 1, self.total),
            Mode::Quiet => {}
        }
    }

    /// A line printed above the bar (input generation, a failed run, ...).
    pub fn note(&mut self, msg: &str) {
        match self.mode {
            Mode::Terminal => self.multi.suspend(|| eprintln!("{msg}")),
            Mode::Log => eprintln!("  {msg}"),
            Mode::Quiet => {}
        }
    }

    /// The running job's latest summary.
    pub fn job(&mut self, v: &Value) {
        let p = &v["progress"];
        self.job_line(format!(
            "job {} {}: map {}/{} reduce {}/{} ({:.1}s)",
            v["job_id"],
            v["job"].as_str().unwrap_or(""),
            p["maps_done"],
            v["maps"],
            p["reduces_done"],
            v["reduces"],
            v["exec_time_s"].as_f64().unwrap_or(0.0)
        ));
    }

    /// The line under the bar: what runs now.
    pub fn job_line(&mut self, line: String) {
        if self.mode == Mode::Terminal {
            self.job.set_message(line);
        }
    }

    pub fn finish_cell(&mut self, outcome: &str) {
        self.done += 1;
        match self.mode {
            Mode::Terminal => {
                let line = format!(
                    "  {} — {outcome} ({:.1}s)",
                    self.cell,
                    self.cell_start.elapsed().as_secs_f64()
                );
                self.multi.suspend(|| eprintln!("{line}"));
                self.job.set_message("");
                self.cells.inc(1);
            }
            Mode::Log => eprintln!(
                "  {outcome} ({:.1}s){}",
                self.cell_start.elapsed().as_secs_f64(),
                self.eta()
                    .map(|d| format!(", about {} left", fmt_duration(d)))
                    .unwrap_or_default()
            ),
            Mode::Quiet => {}
        }
    }

    /// Removes the display, leaving the terminal to whatever follows.
    pub fn end(&mut self) {
        self.job.finish_and_clear();
        self.cells.finish_and_clear();
        let _ = self.multi.clear();
    }
}

impl Drop for MatrixProgress {
    fn drop(&mut self) {
        self.end();
    }
}

pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Prints rows as left-aligned columns under a header.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{:<w$}  ", c, w = widths[i]));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(header.to_vec());
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.iter().map(|s| s.as_str()).collect()));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cells_bar_counts_cells_and_estimates_time_left() {
        let mut p = MatrixProgress::new(4, true);
        assert!(p.eta().is_none());
        p.start_cell("wordcount × fifo, rep 1/2");
        p.finish_cell("ok");
        assert_eq!(p.done, 1);
        // Three cells left at the pace of the first one: three times the
        // time so far, which is at least what it was just before the call
        // (measured after it, it may have grown past any bound under load).
        let before = p.start.elapsed();
        let eta = p.eta().unwrap();
        // (1 µs for `mul_f64`'s rounding through seconds as f64.)
        assert!(
            eta + Duration::from_micros(1) >= before * 3,
            "{eta:?} < 3 × {before:?}"
        );
        assert_eq!(fmt_duration(Duration::from_secs(3725)), "1h02m");
        assert_eq!(fmt_duration(Duration::from_secs(75)), "1m15s");
        p.end();
    }

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

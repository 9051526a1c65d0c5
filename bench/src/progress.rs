//! Progress over a benchmark's cells, on stderr: what every `mr bench`
//! run that takes minutes shows while it runs.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The bars' look, as the `mr` CLI's own progress bars.
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("the progress templates are constants")
        .progress_chars("#>-")
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
        let mode = if quiet || crate::client::quiet() {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
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
}

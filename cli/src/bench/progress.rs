//! Progress over a benchmark matrix: a bar over the cells with the current
//! one and an estimate of the time left, and the running job's progress on
//! the line below. On a terminal both lines are redrawn in place; in a log
//! each cell gets a start and an end line; `--quiet` prints nothing.

use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Terminal,
    Log,
    Quiet,
}

pub struct MatrixProgress {
    mode: Mode,
    total: usize,
    done: usize,
    start: Instant,
    cell: String,
    cell_start: Instant,
    job: String,
    /// Lines of the display currently on screen (terminal mode).
    drawn: usize,
    last_draw: Instant,
}

const BAR: usize = 24;

impl MatrixProgress {
    pub fn new(total: usize, quiet: bool) -> Self {
        let mode = if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Terminal
        } else {
            Mode::Log
        };
        let now = Instant::now();
        MatrixProgress {
            mode,
            total: total.max(1),
            done: 0,
            start: now,
            cell: String::new(),
            cell_start: now,
            job: String::new(),
            drawn: 0,
            last_draw: now - Duration::from_secs(1),
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
        self.job.clear();
        match self.mode {
            Mode::Terminal => self.draw(true),
            Mode::Log => eprintln!("[{}/{}] {label}", self.done + 1, self.total),
            Mode::Quiet => {}
        }
    }

    /// A line printed above the bar (input generation, a failed run, ...).
    pub fn note(&mut self, msg: &str) {
        match self.mode {
            Mode::Terminal => {
                self.clear();
                eprintln!("{msg}");
                self.draw(true);
            }
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
        self.job = line;
        if self.mode == Mode::Terminal {
            self.draw(false);
        }
    }

    pub fn finish_cell(&mut self, outcome: &str) {
        self.done += 1;
        match self.mode {
            Mode::Terminal => {
                self.clear();
                eprintln!(
                    "  {} — {outcome} ({:.1}s)",
                    self.cell,
                    self.cell_start.elapsed().as_secs_f64()
                );
                self.job.clear();
                self.draw(true);
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
        if self.mode == Mode::Terminal {
            self.clear();
        }
    }

    fn clear(&mut self) {
        let mut e = std::io::stderr().lock();
        for i in 0..self.drawn {
            let _ = write!(e, "\r\x1b[2K");
            if i + 1 < self.drawn {
                let _ = write!(e, "\x1b[1A");
            }
        }
        let _ = e.flush();
        self.drawn = 0;
    }

    fn draw(&mut self, force: bool) {
        if !force && self.last_draw.elapsed() < Duration::from_millis(100) {
            return;
        }
        self.last_draw = Instant::now();
        self.clear();
        let mut lines = vec![self.bar_line()];
        if !self.job.is_empty() {
            lines.push(format!("  {}", self.job));
        }
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "{}", lines.join("\n"));
        let _ = e.flush();
        self.drawn = lines.len();
    }

    pub fn bar_line(&self) -> String {
        let filled = BAR * self.done.min(self.total) / self.total;
        let eta = self
            .eta()
            .map(|d| format!(", ~{} left", fmt_duration(d)))
            .unwrap_or_default();
        format!(
            "[{}{}] {}/{} cells | {} | {} elapsed{eta}",
            "#".repeat(filled),
            "-".repeat(BAR - filled),
            self.done,
            self.total,
            self.cell,
            fmt_duration(self.start.elapsed()),
        )
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
    fn the_bar_counts_cells_and_estimates_time_left() {
        let mut p = MatrixProgress::new(4, true);
        assert!(p.eta().is_none());
        p.start_cell("wordcount × fifo, rep 1/2");
        p.finish_cell("ok");
        let line = p.bar_line();
        assert!(
            line.starts_with("[######------------------] 1/4 cells | wordcount × fifo, rep 1/2 |"),
            "{line}"
        );
        // Three cells left at the pace of the first one.
        let eta = p.eta().unwrap();
        assert!(eta >= p.start.elapsed() * 2, "{eta:?}");
        assert_eq!(fmt_duration(Duration::from_secs(3725)), "1h02m");
        assert_eq!(fmt_duration(Duration::from_secs(75)), "1m15s");
    }
}

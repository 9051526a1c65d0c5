//! What the CLI shows people: progress lines on a terminal, aligned tables.

use std::io::{IsTerminal, Write};
use std::time::Instant;

/// A one-line progress display on stderr, redrawn at most 10 times a second,
/// and silent when stderr is not a terminal (scripts, CI logs).
pub struct Progress {
    label: String,
    total: Option<u64>,
    start: Instant,
    last: Instant,
    enabled: bool,
}

impl Progress {
    pub fn new(label: &str, total: Option<u64>) -> Self {
        let now = Instant::now();
        Progress {
            label: label.to_string(),
            total,
            start: now,
            last: now,
            enabled: std::io::stderr().is_terminal(),
        }
    }

    pub fn bytes(&mut self, done: u64) {
        if !self.enabled || self.last.elapsed().as_millis() < 100 {
            return;
        }
        self.last = Instant::now();
        let rate = done as f64 / self.start.elapsed().as_secs_f64().max(1e-3);
        let pct = self
            .total
            .filter(|t| *t > 0)
            .map(|t| format!(" ({:.0}%)", 100.0 * done as f64 / t as f64))
            .unwrap_or_default();
        eprint!(
            "\r{}: {}{} at {}/s   ",
            self.label,
            common::units::format_size(done),
            pct,
            common::units::format_size(rate as u64)
        );
        let _ = std::io::stderr().flush();
    }

    pub fn finish(&self) {
        if self.enabled {
            eprint!("\r\x1b[2K");
        }
    }

    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
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

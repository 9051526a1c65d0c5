//! A SWIM trace (the Facebook 2009 and 2010 samples in `traces/swim/`) and
//! how its rows become jobs on a small cluster.
//!
//! A row: job name, submit time (s), gap since the previous submission
//! (s), map input bytes, shuffle bytes, output bytes. The traced clusters
//! had about 600 (2009) and 3,000 (2010) nodes; ours has a handful, so a
//! replay scales three things, each a documented choice
//! (`docs/bench/comparing-policies.md`):
//!
//! - **bytes per node**: every byte count is multiplied by our workers over
//!   the traced cluster's nodes, so that each of our nodes holds the share
//!   of work one of theirs did. The scaled input maps onto whole blocks of
//!   the pool (at least one: a 19 KB job still reads a block, as a Hadoop
//!   job reads at least one split), and at most `max_maps` of them: the cap
//!   for the few huge jobs (FB-2009's largest reads 10 GB, 0.1 % of its
//!   rows, and would otherwise be the whole replay).
//! - **ratios**: the job reproduces the row's shuffle/input and
//!   output/shuffle ratios (as SWIM's WorkGen does), each capped at
//!   [`MAX_RATIO`]; a row with no input has no shuffle, one with no shuffle
//!   no output.
//! - **time**: submit times, relative to the slice's first, are divided by
//!   a compression factor, chosen either directly or from a target offered
//!   load ([`super::load`]).

use std::fmt;
use std::time::Duration;

/// The cap on a row's shuffle/input and output/shuffle ratios. FB-2009 has
/// rows whose shuffle is hundreds of times their input (a join that
/// explodes); at our block sizes such a row would write gigabytes from one
/// block. 8 leaves 99 % of FB-2009's shuffle ratios and 98 % of its
/// output ratios as they are (FB-2010: 97 % and 92 %).
pub const MAX_RATIO: f64 = 8.0;

/// One line of a SWIM trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRow {
    pub name: String,
    pub submit_s: f64,
    pub gap_s: f64,
    pub input_bytes: u64,
    pub shuffle_bytes: u64,
    pub output_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file} line {line}: {msg}")]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

/// Parses a SWIM trace: tab-separated, six columns, no header; blank lines
/// are skipped. Any other line that is not six readable columns is an error
/// naming its line, so a wrong file is refused before anything runs.
pub fn parse(file: &str, text: &str) -> Result<Vec<TraceRow>, TraceError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let err = |msg: String| TraceError {
            file: file.into(),
            line: i + 1,
            msg,
        };
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.trim_end_matches('\r').split('\t').collect();
        if f.len() < 6 {
            return Err(err(format!(
                "{} columns, not 6 (name, submit s, gap s, input, shuffle, output bytes, tab-separated)",
                f.len()
            )));
        }
        let secs = |j: usize, what: &str| {
            f[j].trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| err(format!("{what} {:?} is not a number of seconds", f[j])))
        };
        let bytes = |j: usize, what: &str| {
            f[j].trim()
                .parse::<u64>()
                .map_err(|_| err(format!("{what} {:?} is not a byte count", f[j])))
        };
        rows.push(TraceRow {
            name: f[0].trim().to_string(),
            submit_s: secs(1, "submit time")?,
            gap_s: secs(2, "gap")?,
            input_bytes: bytes(3, "input")?,
            shuffle_bytes: bytes(4, "shuffle")?,
            output_bytes: bytes(5, "output")?,
        });
    }
    if rows.is_empty() {
        return Err(TraceError {
            file: file.into(),
            line: 0,
            msg: "no rows".into(),
        });
    }
    Ok(rows)
}

/// The traced cluster's size, from the file name of the two samples we
/// ship (SWIM's README gives about 600 and 3,000 nodes), or `None`.
pub fn traced_nodes(file: &str) -> Option<u32> {
    let name = file.rsplit('/').next().unwrap_or(file);
    if name.contains("FB-2009") {
        Some(600)
    } else if name.contains("FB-2010") {
        Some(3000)
    } else {
        None
    }
}

/// Rows `from .. from + jobs` of the trace (fewer at its end).
pub fn slice(rows: &[TraceRow], from: usize, jobs: usize) -> Vec<TraceRow> {
    rows.iter().skip(from).take(jobs).cloned().collect()
}

/// How rows become jobs on this cluster.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Scale {
    /// Our workers over the traced cluster's nodes.
    pub bytes: f64,
    /// The pool's block size: a job reads whole blocks.
    pub block: u64,
    /// The cap on a job's maps (and the pool must hold at least this many
    /// blocks, so that a job's blocks are distinct).
    pub max_maps: u32,
    /// The cap on a job's reduces.
    pub max_reduces: u32,
    /// Multiplies every row's shuffle bytes over its input: below 1 a
    /// map-bound shape (small shuffles, so that the maps' reads and their
    /// placement decide job time), 1 the trace as it is. Absent (1) in the
    /// reports of runs made before it existed.
    #[serde(default = "one")]
    pub shuffle: f64,
}

fn one() -> f64 {
    1.0
}

impl Scale {
    pub fn new(
        workers: u32,
        traced_nodes: u32,
        block: u64,
        max_maps: u32,
        max_reduces: u32,
    ) -> Self {
        Scale {
            bytes: workers as f64 / traced_nodes.max(1) as f64,
            block,
            max_maps: max_maps.max(1),
            max_reduces: max_reduces.max(1),
            shuffle: 1.0,
        }
    }
}

/// One row as this cluster runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaledJob {
    /// The row's index in the whole trace (the pairing key with the seed).
    pub row: usize,
    pub name: String,
    /// Since the slice's first submission, compressed.
    pub at: Duration,
    pub maps: u32,
    pub reduces: u32,
    pub shuffle_ratio: f64,
    pub output_ratio: f64,
    /// The row's input times `Scale::bytes`, before rounding onto blocks.
    pub scaled_input: u64,
    /// Whether `max_maps` cut the job down.
    pub capped: bool,
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        (num as f64 / den as f64).min(MAX_RATIO)
    }
}

/// Scales `rows` (a slice, `first_row` the index of its first row in the
/// trace) with submit times divided by `compression` (> 0).
pub fn scale(rows: &[TraceRow], first_row: usize, s: &Scale, compression: f64) -> Vec<ScaledJob> {
    let t0 = rows.first().map_or(0.0, |r| r.submit_s);
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            let scaled_input = (r.input_bytes as f64 * s.bytes).round() as u64;
            let want = scaled_input.div_ceil(s.block.max(1)).max(1);
            let maps = want.min(s.max_maps as u64) as u32;
            let shuffle_ratio = ratio(r.shuffle_bytes, r.input_bytes) * s.shuffle;
            let output_ratio = ratio(r.output_bytes, r.shuffle_bytes);
            let shuffle = maps as f64 * s.block as f64 * shuffle_ratio;
            let reduces = ((shuffle / s.block.max(1) as f64).ceil() as u32).clamp(1, s.max_reduces);
            ScaledJob {
                row: first_row + i,
                name: r.name.clone(),
                at: Duration::from_secs_f64(((r.submit_s - t0) / compression).max(0.0)),
                maps,
                reduces,
                shuffle_ratio,
                output_ratio,
                scaled_input,
                capped: want > s.max_maps as u64,
            }
        })
        .collect()
}

/// The slice's span of arrivals in trace seconds (first to last submit).
pub fn span_s(rows: &[TraceRow]) -> f64 {
    match (rows.first(), rows.last()) {
        (Some(a), Some(b)) => (b.submit_s - a.submit_s).max(0.0),
        _ => 0.0,
    }
}

/// The `maps` distinct pool blocks job `row` reads in repetition `seed`:
/// drawn uniformly (seeded by the seed and the row, so every policy of a
/// repetition reads the same blocks for the same row, and rows overlap as
/// reads repeat in a real cluster), sorted.
pub fn blocks(row: usize, maps: u32, pool: usize, seed: u64) -> Vec<usize> {
    let mut rng = fastrand::Rng::with_seed(seed ^ (row as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut all: Vec<usize> = (0..pool).collect();
    rng.shuffle(&mut all);
    let mut v = all[..(maps as usize).min(pool)].to_vec();
    v.sort_unstable();
    v
}

impl fmt::Display for ScaledJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (row {}): at {:.2}s, {} maps{}, {} reduces, shuffle x{:.3}, output x{:.3}",
            self.name,
            self.row,
            self.at.as_secs_f64(),
            self.maps,
            if self.capped { " (capped)" } else { "" },
            self.reduces,
            self.shuffle_ratio,
            self.output_ratio
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "job0\t49\t49\t740773\t2339561\t627471\n\
                        job1\t101\t52\t736346\t0\t0\n\
                        \n\
                        job2\t122\t21\t10274791099\t13024975762\t100\n\
                        job3\t130\t8\t0\t0\t0\n";

    #[test]
    fn rows_parse_and_bad_lines_name_their_line() {
        let r = parse("t.tsv", TEXT).unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].name, "job0");
        assert_eq!(r[2].input_bytes, 10_274_791_099);
        assert_eq!(r[3].submit_s, 130.0);
        let e = parse("t.tsv", "job0\t1\t1\t5\t5\njob1\t2\t1\t5\t5\t5\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.to_string().contains("5 columns"), "{e}");
        let e = parse("t.tsv", "job0\t1\t1\t5\t5\t5\njob1\tx\t1\t5\t5\t5\n").unwrap_err();
        assert!(e.line == 2 && e.msg.contains("submit time"), "{e}");
        assert!(parse("t.tsv", "job0\t1\t1\t-5\t5\t5\n").is_err());
        assert!(parse("t.tsv", "\n\n").is_err());
    }

    #[test]
    fn the_shipped_samples_parse_whole() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/swim/");
        for (f, n) in [
            ("FB-2009_samples_24_times_1hr_0.tsv", 5894),
            ("FB-2010_samples_24_times_1hr_0.tsv", 24442),
        ] {
            let text = std::fs::read_to_string(format!("{root}{f}")).unwrap();
            assert_eq!(parse(f, &text).unwrap().len(), n, "{f}");
            assert!(traced_nodes(f).is_some());
        }
    }

    #[test]
    fn bytes_scale_onto_whole_blocks_with_a_cap_and_ratios_are_kept() {
        let rows = parse("t.tsv", TEXT).unwrap();
        // 6 workers for 600 nodes: bytes / 100; 4 KiB blocks, at most 8 maps.
        let s = Scale::new(6, 600, 4096, 8, 3);
        assert_eq!(s.bytes, 0.01);
        let j = scale(&rows, 10, &s, 2.0);
        // 740773 B / 100 = 7408 B: two 4 KiB blocks.
        assert_eq!(
            (j[0].scaled_input, j[0].maps, j[0].capped),
            (7408, 2, false)
        );
        assert!((j[0].shuffle_ratio - 2339561.0 / 740773.0).abs() < 1e-12);
        assert!((j[0].output_ratio - 627471.0 / 2339561.0).abs() < 1e-12);
        // Shuffle 2 x 4096 x 3.158 = 25.9 KB: 7 blocks' worth, capped to 3 reduces.
        assert_eq!(j[0].reduces, 3);
        // No shuffle: ratios 0, one reduce.
        assert_eq!(
            (j[1].shuffle_ratio, j[1].output_ratio, j[1].reduces),
            (0.0, 0.0, 1)
        );
        // The 10 GB job: 102.7 MB scaled, capped at 8 maps; ratio 1.27 kept,
        // output/shuffle tiny.
        assert_eq!((j[2].maps, j[2].capped), (8, true));
        assert!((j[2].shuffle_ratio - 1.2676).abs() < 1e-3);
        // No input still reads one block.
        assert_eq!((j[3].maps, j[3].shuffle_ratio), (1, 0.0));
        // Rows keep their trace index; times from the first, halved.
        assert_eq!(
            j.iter().map(|x| x.row).collect::<Vec<_>>(),
            vec![10, 11, 12, 13]
        );
        assert_eq!(j[0].at, Duration::ZERO);
        assert_eq!(j[1].at, Duration::from_secs(26));
        assert_eq!(j[3].at, Duration::from_secs_f64(40.5));
        assert_eq!(span_s(&rows), 81.0);
    }

    /// A map-bound shape: the shuffle scaled down, the output over it kept,
    /// and fewer reduces for the smaller shuffle.
    #[test]
    fn a_shuffle_scale_shrinks_each_rows_shuffle_and_its_reduces() {
        let rows = parse("t.tsv", TEXT).unwrap();
        let mut s = Scale::new(6, 600, 4096, 8, 3);
        let whole = scale(&rows, 0, &s, 1.0);
        s.shuffle = 0.05;
        let small = scale(&rows, 0, &s, 1.0);
        for (a, b) in whole.iter().zip(&small) {
            assert!((b.shuffle_ratio - a.shuffle_ratio * 0.05).abs() < 1e-12);
            assert_eq!((b.output_ratio, b.maps), (a.output_ratio, a.maps));
        }
        // Row 0: 2 x 4096 x 3.158 x 0.05 = 1.3 KB, one reduce where it had 3.
        assert_eq!((whole[0].reduces, small[0].reduces), (3, 1));
        // Reports of older runs read the factor as 1.
        let old: Scale =
            serde_json::from_str(r#"{"bytes":0.01,"block":4096,"max_maps":8,"max_reduces":3}"#)
                .unwrap();
        assert_eq!(old.shuffle, 1.0);
    }

    #[test]
    fn ratios_are_capped() {
        let rows = parse("t.tsv", "a\t0\t0\t100\t100000\t1000000000\n").unwrap();
        let j = scale(&rows, 0, &Scale::new(1, 1, 4096, 4, 4), 1.0);
        assert_eq!(
            (j[0].shuffle_ratio, j[0].output_ratio),
            (MAX_RATIO, MAX_RATIO)
        );
    }

    #[test]
    fn blocks_are_distinct_seeded_per_row_and_repeat_across_rows() {
        let a = blocks(3, 5, 20, 1);
        assert_eq!(a, blocks(3, 5, 20, 1));
        assert_ne!(a, blocks(3, 5, 20, 2));
        assert!(a.windows(2).all(|w| w[0] < w[1]) && a.len() == 5);
        assert_eq!(blocks(0, 50, 20, 1).len(), 20);
        // Over 40 rows of 5 blocks from 20, blocks are read again.
        let reads: usize = (0..40).map(|r| blocks(r, 5, 20, 1).len()).sum();
        assert!(reads > 20);
    }
}

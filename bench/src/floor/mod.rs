//! `mr bench floor`: each benchmark job's work done by a tight program in
//! one process with two threads, the floor `scripts/bench.sh` divides the
//! cluster's job times by (issue 27). The machine's speed moves between
//! runs, so a job time alone says little; its ratio to a floor measured in
//! the same run on the same input says how much the runtime costs.
//!
//! The floor is purpose-written, not the job's map and reduce code (that is
//! `mr local`): it maps the input files (from the page cache, as the
//! workers map their blocks), does the job's work in memory, and writes
//! the output the job would write into a directory of parts, each part
//! fsynced by the thread that wrote it ([`write`]):
//! - WordCount ([`count`]): the files mapped ([`region`]), whitespace found
//!   64 bytes at a time, a table of short words per thread, merged.
//! - Sort and TeraSort ([`sort`]): the files mapped into one range
//!   ([`region`]; Sort's text lines are read into a buffer, [`input`]), an
//!   index entry per record sorted with a radix pass on the key's first 16
//!   bits, the two threads each sorting one side of a sampled median, then
//!   the records copied out in order, each thread into its own part.
//!
//! Its output is the job's, byte for byte for the sorts once the parts are
//! read in order (whose keys in the generated inputs are distinct; equal
//! keys keep the input order here) and as a set of `word<TAB>count` lines
//! for WordCount; bench.sh checks that on every run, and the tests below
//! against the job's own code.

pub mod count;
pub mod input;
pub mod region;
pub mod sort;
pub mod write;

use joblib::jobs::formats::FormatError;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The floor's threads: the "one process with two threads", the
/// cores of the machine kind the benchmark targets.
pub const THREADS: usize = 2;

/// The job whose work the floor does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloorJob {
    WordCount,
    /// Sort, total order: KvRecords (`mr gen randomwriter`) or, with
    /// `lines`, `KEY<TAB>VALUE` text lines (`sort --format lines`).
    Sort {
        lines: bool,
    },
    TeraSort,
}

impl FloorJob {
    pub fn name(self) -> &'static str {
        match self {
            FloorJob::WordCount => "wordcount",
            FloorJob::Sort { .. } => "sort",
            FloorJob::TeraSort => "terasort",
        }
    }

    /// The input's record format, as `mr local --format` names it.
    pub fn format(self) -> &'static str {
        match self {
            FloorJob::WordCount | FloorJob::Sort { lines: true } => "lines",
            FloorJob::Sort { lines: false } => "kv",
            FloorJob::TeraSort => "fixed-100",
        }
    }

    fn text(self) -> bool {
        self.format() == "lines"
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FloorError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: exists and is not a directory (--out names the directory the output's parts go to)", .0.display())]
    OutNotADir(PathBuf),
    #[error("no input file: give one or more with --input")]
    NoInput,
    #[error("{}: not a regular file (give the input's part files)", .0.display())]
    NotAFile(PathBuf),
    #[error("{}: too large to hold in this process's memory", .0.display())]
    TooLarge(PathBuf),
    #[error(
        "{}: ends with a partial record of {bytes} bytes, where TeraSort's records are {len} bytes: each input file's length must be a multiple of {len} (as `mr gen teragen` writes them)",
        path.display()
    )]
    PartialRecord {
        path: PathBuf,
        bytes: u64,
        len: usize,
    },
    #[error("{}: not KvRecords (as `mr gen randomwriter` writes; use --format lines for text): {source}", path.display())]
    Kv { path: PathBuf, source: FormatError },
    #[error("{0} records: more than the floor's 48-bit record index holds")]
    TooManyRecords(u64),
}

/// What one floor run did and how long each step took (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct FloorReport {
    pub job: &'static str,
    pub format: &'static str,
    pub threads: usize,
    pub input_files: usize,
    pub input_bytes: u64,
    /// Words (WordCount) or records read.
    pub records: u64,
    /// Distinct words (WordCount) or records written.
    pub output_records: u64,
    pub output_bytes: u64,
    pub output: PathBuf,
    /// Mapping the files (reading them into memory for Sort's text lines).
    pub read_s: f64,
    /// Counting or sorting, in memory.
    pub work_s: f64,
    /// Writing the output's parts and their fsyncs.
    pub write_s: f64,
    /// All of it, from the first open to the end of the fsync: the figure
    /// a job's `exec_time_s` is divided by.
    pub exec_time_s: f64,
}

impl FloorReport {
    /// One line for a terminal.
    pub fn summary(&self) -> String {
        let mib = self.input_bytes as f64 / (1 << 20) as f64;
        format!(
            "floor {} ({} threads): {mib:.0} MiB in {:.2}s ({:.1} MiB/s; read {:.2}s, {} {:.2}s, write+fsync {:.2}s), {} records in, {} out, {} bytes to {}",
            self.job,
            self.threads,
            self.exec_time_s,
            mib / self.exec_time_s.max(1e-9),
            self.read_s,
            if self.job == "wordcount" { "count" } else { "sort" },
            self.work_s,
            self.write_s,
            self.records,
            self.output_records,
            self.output_bytes,
            self.output.display()
        )
    }
}

/// Does `job`'s work on `inputs` (read in the order given, as the job's
/// parts in path order) and writes its output's parts into the directory
/// `out`.
pub fn run(job: FloorJob, inputs: &[PathBuf], out: &Path) -> Result<FloorReport, FloorError> {
    if job == FloorJob::WordCount {
        return run_wordcount(inputs, out);
    }
    let t0 = Instant::now();
    let (read, mapped);
    let (buf, files): (&[u8], &[(PathBuf, std::ops::Range<usize>)]) = if job.text() {
        read = input::load(inputs, true)?;
        (read.buf.as_slice(), &read.files)
    } else {
        mapped = region::Region::open(inputs)?;
        (mapped.bytes(), &mapped.files)
    };
    let input_bytes = files.iter().map(|(_, r)| r.len() as u64).sum();
    let read_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let (records, output_records, output_bytes, work_s);
    match job {
        FloorJob::WordCount => unreachable!("counted from the mapped files above"),
        FloorJob::TeraSort => {
            let entries = sort::tera_entries(buf, files)?;
            records = entries.len() as u64;
            let parts = sort::sort_parts(entries, sort::tera_top16, |a, b| a.cmp(b));
            work_s = t1.elapsed().as_secs_f64();
            output_records = records;
            output_bytes = write::write_parts(out, &parts, |e, o| {
                o.extend_from_slice(sort::tera_record(buf, e))
            })?;
        }
        FloorJob::Sort { lines } => {
            let entries = if lines {
                sort::line_entries(buf)
            } else {
                sort::kv_entries(buf, files)?
            };
            records = entries.len() as u64;
            let parts = sort::sort_parts(entries, sort::KeyEntry::top16, |a, b| a.order(b, buf));
            work_s = t1.elapsed().as_secs_f64();
            output_records = records;
            output_bytes = if lines {
                write::write_parts(out, &parts, |e, o| e.push_tab_line(buf, o))?
            } else {
                write::write_parts(out, &parts, |e, o| o.extend_from_slice(e.kv_record(buf)))?
            };
        }
    }
    let exec_time_s = t0.elapsed().as_secs_f64();
    Ok(FloorReport {
        job: job.name(),
        format: job.format(),
        threads: THREADS,
        input_files: inputs.len(),
        input_bytes,
        records,
        output_records,
        output_bytes,
        output: out.to_path_buf(),
        read_s,
        work_s,
        write_s: exec_time_s - read_s - work_s,
        exec_time_s,
    })
}

/// WordCount counts from the mapped files (see [`region`]): its `read_s`
/// is only the mapping, the page-cache reads happen while counting.
fn run_wordcount(inputs: &[PathBuf], out: &Path) -> Result<FloorReport, FloorError> {
    let t0 = Instant::now();
    let input = region::Region::open(inputs)?;
    let read_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let (counts, words) = count::count(&input.slices());
    let text = count::render(&counts);
    let work_s = t1.elapsed().as_secs_f64();
    let output_bytes = write::write_parts(out, &[text], |b, o| o.push(*b))?;
    let exec_time_s = t0.elapsed().as_secs_f64();
    Ok(FloorReport {
        job: FloorJob::WordCount.name(),
        format: FloorJob::WordCount.format(),
        threads: THREADS,
        input_files: inputs.len(),
        input_bytes: input.files.iter().map(|(_, r)| r.len() as u64).sum(),
        records: words,
        output_records: counts.len() as u64,
        output_bytes,
        output: out.to_path_buf(),
        read_s,
        work_s,
        write_s: exec_time_s - read_s - work_s,
        exec_time_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cli::local::{try_run_local, LocalOptions};
    use joblib::jobs::{registry, JobParams};
    use std::collections::BTreeMap;

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let d = std::env::temp_dir().join(format!("mr-floor-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn opts() -> LocalOptions {
        LocalOptions {
            threads: 3,
            min_chunk: 1 << 10,
            combine_at: 1 << 14,
        }
    }

    /// The generator's parts (`maps` of them, seeded), written as files.
    fn generate(dir: &Path, generator: &str, size: u64, maps: u32) -> Vec<PathBuf> {
        let params = JobParams {
            size,
            seed: 11,
            maps,
            ..Default::default()
        };
        let job = registry::lookup(generator).unwrap();
        let run = try_run_local(job.as_ref(), &params, &[], 1, &[], opts()).unwrap();
        run.parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let path = dir.join(format!("part-{i:05}"));
                std::fs::write(&path, p).unwrap();
                path
            })
            .collect()
    }

    /// The floor's output: its parts read in order.
    fn parts(dir: &Path) -> Vec<u8> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        concat(&names)
    }

    fn concat(paths: &[PathBuf]) -> Vec<u8> {
        paths
            .iter()
            .flat_map(|p| std::fs::read(p).unwrap())
            .collect()
    }

    /// The job's own map and reduce code (`mr local`) on the same input.
    fn job_output(
        name: &str,
        params: &JobParams,
        input: &[u8],
    ) -> (Vec<u8>, BTreeMap<String, u64>) {
        let job = registry::lookup(name).unwrap();
        let reducers = job.fixed_reducers().unwrap_or(3);
        let run = try_run_local(job.as_ref(), params, input, reducers, &[], opts()).unwrap();
        (run.parts.concat(), run.counters)
    }

    /// The validator's verdict lines on `data`, told what the sort counted.
    fn validate(
        name: &str,
        mut params: JobParams,
        data: &[u8],
        counters: &BTreeMap<String, u64>,
    ) -> String {
        for (c, p) in [
            ("input_records", "expect_records"),
            ("input_checksum", "expect_checksum"),
        ] {
            if let Some(v) = counters.get(c) {
                params.extra.insert(p.into(), v.to_string());
            }
        }
        let (out, _) = job_output(name, &params, data);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn terasort_floor_is_the_jobs_output_and_validates() {
        let d = Dir::new("tera");
        let inputs = generate(&d.0, "teragen", 100 * 3000, 4);
        let out = d.0.join("out");
        let r = run(FloorJob::TeraSort, &inputs, &out).unwrap();
        assert_eq!(
            (r.records, r.output_bytes, r.input_files),
            (3000, 300_000, 4)
        );
        let got = parts(&out);
        let (want, counters) = job_output("terasort", &JobParams::default(), &concat(&inputs));
        assert_eq!(got, want, "the same bytes as TeraSort's parts in order");
        let verdict = validate("teravalidate", JobParams::default(), &got, &counters);
        assert!(verdict.contains("records 3000\n"), "{verdict}");
        assert!(verdict.contains("sorted true\n"), "{verdict}");
        assert!(!verdict.contains("mismatch"), "{verdict}");
    }

    #[test]
    fn sort_floor_is_the_jobs_output_and_validates() {
        let d = Dir::new("sort");
        let inputs = generate(&d.0, "randomwriter", 400 << 10, 3);
        let out = d.0.join("out");
        let r = run(FloorJob::Sort { lines: false }, &inputs, &out).unwrap();
        let got = parts(&out);
        let mut params = JobParams::default();
        params.extra.insert("total_order".into(), "true".into());
        let (want, counters) = job_output("sort", &params, &concat(&inputs));
        assert_eq!(r.records, counters["input_records"]);
        assert_eq!(got, want, "the same bytes as Sort's parts in order");
        let verdict = validate("sortvalidate", params, &got, &counters);
        assert!(verdict.contains("sorted true\n"), "{verdict}");
        assert!(!verdict.contains("mismatch"), "{verdict}");
    }

    #[test]
    fn sort_lines_floor_is_the_jobs_output() {
        let d = Dir::new("lines");
        let inputs = generate(&d.0, "randomtextwriter", 200 << 10, 3);
        let out = d.0.join("out");
        run(FloorJob::Sort { lines: true }, &inputs, &out).unwrap();
        let got = parts(&out);
        let mut params = JobParams {
            format_lines: true,
            ..Default::default()
        };
        params.extra.insert("total_order".into(), "true".into());
        let (want, _) = job_output("sort", &params, &concat(&inputs));
        assert_eq!(got, want);
        let verdict = validate("sortvalidate", params, &got, &BTreeMap::new());
        assert!(verdict.contains("sorted true\n"), "{verdict}");
    }

    #[test]
    fn wordcount_floor_counts_as_the_job() {
        let d = Dir::new("wc");
        let mut inputs = generate(&d.0, "randomtextwriter", 300 << 10, 3);
        // A last line without `\n` must not run into the next file's words.
        let odd = d.0.join("odd");
        std::fs::write(&odd, b"zz top\nend").unwrap();
        inputs.insert(1, odd.clone());
        let extra = d.0.join("extra");
        std::fs::write(&extra, b"end\n").unwrap();
        inputs.insert(2, extra);
        let out = d.0.join("out");
        let r = run(FloorJob::WordCount, &inputs, &out).unwrap();
        let lines = |b: &[u8]| -> BTreeMap<String, u64> {
            String::from_utf8(b.to_vec())
                .unwrap()
                .lines()
                .map(|l| {
                    let (w, n) = l.split_once('\t').unwrap();
                    (w.to_string(), n.parse().unwrap())
                })
                .collect()
        };
        let got = lines(&parts(&out));
        let mut all = concat(&inputs[..2]);
        all.push(b'\n');
        all.extend(concat(&inputs[2..]));
        let (want, _) = job_output("wordcount", &JobParams::default(), &all);
        assert_eq!(got, lines(&want));
        assert_eq!(got["end"], 2);
        assert_eq!(r.records, got.values().sum::<u64>());
        assert_eq!(r.output_records, got.len() as u64);
    }

    #[test]
    fn bad_input_gets_a_clear_error() {
        let d = Dir::new("bad");
        let short = d.0.join("short");
        std::fs::write(&short, [7u8; 150]).unwrap();
        let err = run(
            FloorJob::TeraSort,
            std::slice::from_ref(&short),
            &d.0.join("out"),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("partial record of 50 bytes") && msg.contains("short"),
            "{msg}"
        );
        let err = run(FloorJob::Sort { lines: false }, &[short], &d.0.join("out")).unwrap_err();
        assert!(err.to_string().contains("not KvRecords"), "{err}");
    }
}

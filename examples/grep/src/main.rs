//! HiBench's grep (Hadoop's `Grep` example) as a job program: how often
//! each string matching a regular expression occurs in the input. The map
//! emits `(match, 1)` for every non-overlapping match of each line; the
//! combiner and the reducer add them up.
//!
//! The pattern comes from `--param pattern=REGEX`. `Job::map` cannot
//! return an error, so a missing or bad pattern ends the process with the
//! reason on stderr: at submission, where the client asks the program for
//! its plan (see `input_format`), and in any task, which then fails with
//! the message shown to the user.

use mrjob::{Emit, InputFormat, Job, JobParams, TaskCtx};
use regex::bytes::Regex;
use std::sync::OnceLock;

/// The parameter holding the regular expression.
const PATTERN: &str = "pattern";

#[derive(Default)]
struct Grep {
    /// Compiled on the first record: one process runs one task, so this is
    /// once per task.
    re: OnceLock<Regex>,
}

/// The job's regular expression, over bytes so that input in any encoding
/// is searched rather than rejected.
fn compile(p: &JobParams) -> Result<Regex, String> {
    match p.extra.get(PATTERN).map(String::as_str) {
        None | Some("") => Err(format!(
            "needs a regular expression: --param {PATTERN}=REGEX"
        )),
        Some(s) => {
            Regex::new(s).map_err(|e| format!("--param {PATTERN}={s:?} does not compile: {e}"))
        }
    }
}

/// A job program's way to fail with a message: the runner shows a task's
/// stderr to the user.
fn or_exit<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("example-grep: {e}");
        std::process::exit(1)
    })
}

fn sum_counts(key: &[u8], values: &mut dyn Iterator<Item = &[u8]>, out: &mut dyn Emit) {
    let total = values
        .filter_map(|v| std::str::from_utf8(v).ok()?.parse::<u64>().ok())
        .fold(0, u64::wrapping_add);
    out.emit(key, total.to_string().as_bytes());
}

impl Job for Grep {
    fn name(&self) -> &'static str {
        "example-grep"
    }
    /// Asked once at submission with the job's parameters: the place to
    /// refuse a bad pattern before any task is scheduled.
    fn input_format(&self, p: &JobParams) -> InputFormat {
        or_exit(compile(p));
        InputFormat::Lines
    }
    fn has_combiner(&self) -> bool {
        true
    }
    fn map(&self, ctx: &mut TaskCtx, line: &[u8], _value: &[u8], out: &mut dyn Emit) {
        let re = self.re.get_or_init(|| or_exit(compile(&ctx.params)));
        // An empty match (`x*` between two y's) found no text: counting
        // it would only count positions.
        for m in re.find_iter(line).filter(|m| !m.is_empty()) {
            out.emit(m.as_bytes(), b"1");
        }
    }
    fn reduce(
        &self,
        _ctx: &mut TaskCtx,
        key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        sum_counts(key, values, out)
    }
    fn combine(
        &self,
        _ctx: &mut TaskCtx,
        key: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        sum_counts(key, values, out)
    }
}

fn main() {
    mrjob::run(Grep::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mrjob::{run_records, Records, TaskMode};
    use std::collections::BTreeMap;

    /// xorshift64: seeded input without a crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn params(pattern: Option<&str>) -> JobParams {
        let mut p = JobParams::default();
        if let Some(s) = pattern {
            p.extra.insert(PATTERN.into(), s.into());
        }
        p
    }

    fn task(job: &Grep, mode: TaskMode, p: &JobParams, input: &Records) -> Records {
        let mut ctx = TaskCtx {
            params: p.clone(),
            ..Default::default()
        };
        let mut recs = run_records(job, mode, &mut ctx, input).unwrap();
        if mode != TaskMode::Reduce {
            recs.sort_by(|a, b| a.0.cmp(&b.0));
        }
        recs
    }

    /// Map (with a combine over half the maps, as the worker may), shuffle,
    /// reduce: the counts by match.
    fn grep(pattern: &str, lines: &[Vec<u8>]) -> BTreeMap<Vec<u8>, u64> {
        let p = params(Some(pattern));
        let mut shuffled = Records::new();
        for (i, chunk) in lines.chunks(50).enumerate() {
            let job = Grep::default();
            let input: Records = chunk.iter().map(|l| (l.clone(), vec![])).collect();
            let mut mapped = task(&job, TaskMode::Map, &p, &input);
            if i % 2 == 0 {
                mapped = task(&job, TaskMode::Combine, &p, &mapped);
            }
            shuffled.extend(mapped);
        }
        shuffled.sort_by(|a, b| a.0.cmp(&b.0));
        let out = task(&Grep::default(), TaskMode::Reduce, &p, &shuffled);
        let n = out.len();
        let got: BTreeMap<Vec<u8>, u64> = out
            .into_iter()
            .map(|(k, v)| (k, std::str::from_utf8(&v).unwrap().parse().unwrap()))
            .collect();
        assert_eq!(got.len(), n, "one record per match");
        got
    }

    fn text(seed: u64, lines: usize, alphabet: &[u8]) -> Vec<Vec<u8>> {
        let mut rng = Rng(seed);
        (0..lines)
            .map(|_| {
                (0..rng.below(40))
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn digit_runs_match_a_plain_scan() {
        let lines = text(7, 400, b"0123456789ab \t\xff");
        let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for l in &lines {
            for run in l.split(|c| !c.is_ascii_digit()).filter(|r| !r.is_empty()) {
                *want.entry(run.to_vec()).or_default() += 1;
            }
        }
        assert!(!want.is_empty());
        assert_eq!(grep("[0-9]+", &lines), want);
    }

    #[test]
    fn literal_matches_do_not_overlap() {
        let lines = text(11, 400, b"ab");
        let mut n = 0;
        for l in &lines {
            let mut i = 0;
            while i + 3 <= l.len() {
                if &l[i..i + 3] == b"aba" {
                    n += 1;
                    i += 3;
                } else {
                    i += 1;
                }
            }
        }
        assert!(n > 0);
        let want = BTreeMap::from([(b"aba".to_vec(), n)]);
        assert_eq!(grep("aba", &lines), want);
        let want = BTreeMap::from([(b"aba".to_vec(), 1)]);
        assert_eq!(grep("aba", &[b"ababa".to_vec()]), want);
    }

    #[test]
    fn empty_lines_and_empty_matches_count_nothing() {
        let lines = vec![vec![], b"yyy".to_vec(), b"xyx".to_vec()];
        let want = BTreeMap::from([(b"x".to_vec(), 2)]);
        assert_eq!(grep("x*", &lines), want);
        assert!(grep("z", &lines).is_empty());
    }

    #[test]
    fn a_missing_or_bad_pattern_is_an_error_naming_the_parameter() {
        for p in [None, Some(""), Some("a("), Some("[z-a]")] {
            let e = compile(&params(p)).unwrap_err();
            assert!(e.contains("--param pattern="), "{e}");
        }
        assert!(compile(&params(Some("(?i)the"))).is_ok());
    }
}

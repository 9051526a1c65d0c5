//! The classic reduce-side equi-join (Hadoop's "repartition join") as a job
//! program: both inputs are `key<TAB>rest` lines; the map tags each row
//! with its side, the shuffle brings every row of a key to one reduce, and
//! the reduce pairs each left row with each right row (an inner join).
//!
//! A map knows its side from the file its block is of
//! (`mapreduce.map.input.file`, set by the worker) against `--param
//! left=PATH`: no row carries its origin, so the two inputs need no
//! common format beyond the key.

use mrjob::spec::keys::INPUT_FILE;
use mrjob::{Emit, InputFormat, Job, JobParams, TaskCtx};

/// The parameter naming the left input, a file or a directory.
const LEFT: &str = "left";

/// A map's rows are tagged with the first byte of their value: a byte, not
/// a field, so the reduce needs no parsing to tell the sides apart.
const LEFT_TAG: u8 = b'L';
const RIGHT_TAG: u8 = b'R';

struct Join;

/// The left input from the parameters, without a trailing `/` so that
/// `/in/left/` and `/in/left` name the same directory.
fn left_input(p: &JobParams) -> Result<&str, String> {
    match p.extra.get(LEFT) {
        Some(l) if !l.is_empty() => Ok(l.trim_end_matches('/')),
        _ => Err(format!(
            "needs the left input: --param {LEFT}=PATH (a file or directory among the --input)"
        )),
    }
}

/// Whether `file` is the left input or lies under it. A plain prefix would
/// make `/in/left2` part of `/in/left`.
fn is_left(left: &str, file: &str) -> bool {
    file == left
        || file
            .strip_prefix(left)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// This map's side; an error when the worker did not say which file the
/// map reads, as then every row would silently land on one side.
fn side(p: &JobParams) -> Result<u8, String> {
    let left = left_input(p)?;
    let Some(file) = p.extra.get(INPUT_FILE) else {
        return Err(format!(
            "the map's parameters lack {INPUT_FILE}: this worker does not say which file a map reads"
        ));
    };
    Ok(if is_left(left, file) {
        LEFT_TAG
    } else {
        RIGHT_TAG
    })
}

/// A job program's way to fail with a message: the runner shows a task's
/// stderr to the user.
fn or_exit<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("example-join: {e}");
        std::process::exit(1)
    })
}

/// `key<TAB>rest`; a line without a tab is a key with nothing else, as
/// Hadoop Streaming reads it.
fn split_tab(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&c| c == b'\t') {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => (line, &[]),
    }
}

impl Job for Join {
    fn name(&self) -> &'static str {
        "example-join"
    }
    /// Asked once at submission with the job's parameters: the place to
    /// refuse a missing `left` before any task is scheduled.
    fn input_format(&self, p: &JobParams) -> InputFormat {
        or_exit(left_input(p));
        InputFormat::Lines
    }
    fn map(&self, ctx: &mut TaskCtx, line: &[u8], _value: &[u8], out: &mut dyn Emit) {
        // A blank line (a file's trailing one, say) is no row: as a row
        // with an empty key it would join with the other side's blanks.
        if line.is_empty() {
            return;
        }
        // Per record rather than cached: two map lookups, and a job object
        // that serves several maps (tests, `mr local`) stays correct.
        let tag = or_exit(side(&ctx.params));
        ctx.count(
            if tag == LEFT_TAG {
                "left_rows"
            } else {
                "right_rows"
            },
            1,
        );
        let (key, rest) = split_tab(line);
        let mut v = Vec::with_capacity(1 + rest.len());
        v.push(tag);
        v.extend_from_slice(rest);
        out.emit(key, &v);
    }
    fn reduce(
        &self,
        ctx: &mut TaskCtx,
        key: &[u8],
        rows: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        // Both sides held (the runner holds the key's rows anyway), so
        // each keeps its arrival order whatever order the sides interleave.
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for r in rows {
            match r.split_first() {
                Some((&LEFT_TAG, rest)) => left.push(rest),
                Some((&RIGHT_TAG, rest)) => right.push(rest),
                _ => {}
            }
        }
        let mut v = Vec::new();
        for l in &left {
            for r in &right {
                v.clear();
                v.extend_from_slice(l);
                v.push(b'\t');
                v.extend_from_slice(r);
                out.emit(key, &v);
            }
        }
        ctx.count("joined", (left.len() * right.len()) as u64);
    }
}

fn main() {
    mrjob::run(Join)
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

    fn params(left: &str, file: Option<&str>) -> JobParams {
        let mut p = JobParams::default();
        p.extra.insert(LEFT.into(), left.into());
        if let Some(f) = file {
            p.extra.insert(INPUT_FILE.into(), f.into());
        }
        p
    }

    /// The job over `files` (path, lines), one map per file in order, the
    /// map outputs concatenated and stably sorted by key: the reduce's
    /// records and the counters summed over all tasks.
    fn join(left: &str, files: &[(&str, Vec<Vec<u8>>)]) -> (Records, BTreeMap<String, u64>) {
        let mut counters = BTreeMap::new();
        let mut add = |c: BTreeMap<String, u64>| {
            for (k, n) in c {
                *counters.entry(k).or_default() += n;
            }
        };
        let mut shuffled = Records::new();
        for (file, lines) in files {
            let mut ctx = TaskCtx {
                params: params(left, Some(file)),
                ..Default::default()
            };
            let input: Records = lines.iter().map(|l| (l.clone(), vec![])).collect();
            let out = run_records(&Join, TaskMode::Map, &mut ctx, &input).unwrap();
            shuffled.extend(out);
            add(ctx.counters);
        }
        shuffled.sort_by(|a, b| a.0.cmp(&b.0));
        let mut ctx = TaskCtx::default();
        let out = run_records(&Join, TaskMode::Reduce, &mut ctx, &shuffled).unwrap();
        add(ctx.counters);
        (out, counters)
    }

    fn split(line: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let (k, r) = split_tab(line);
        (k.to_vec(), r.to_vec())
    }

    /// Nested loops over the two sides, keys in order: what the join's
    /// output must be.
    fn nested_loops(left: &[Vec<u8>], right: &[Vec<u8>]) -> Records {
        let mut keys: Vec<Vec<u8>> = left.iter().map(|l| split(l).0).collect();
        keys.sort();
        keys.dedup();
        let mut want = Records::new();
        for k in keys {
            for l in left.iter().map(|l| split(l)).filter(|l| l.0 == k) {
                for r in right.iter().map(|r| split(r)).filter(|r| r.0 == k) {
                    let mut v = l.1.clone();
                    v.push(b'\t');
                    v.extend_from_slice(&r.1);
                    want.push((k.clone(), v));
                }
            }
        }
        want
    }

    /// Rows with keys from a range that overlaps the other side's only in
    /// part, values that may hold tabs, and lines without any.
    fn rows(rng: &mut Rng, n: usize, keys: std::ops::Range<usize>, side: &str) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let key = format!("k{}", keys.start + rng.below(keys.len()));
                match rng.below(6) {
                    0 => key.into_bytes(),
                    1 => format!("{key}\t").into_bytes(),
                    2 => format!("{key}\t{side}{i}\tmore").into_bytes(),
                    _ => format!("{key}\t{side}{i}").into_bytes(),
                }
            })
            .collect()
    }

    #[test]
    fn matches_nested_loops_on_random_inputs() {
        for seed in [3, 5, 8] {
            let mut rng = Rng(seed);
            let left = rows(&mut rng, 120, 0..40, "l");
            let (r1, r2) = (
                rows(&mut rng, 70, 20..60, "r"),
                rows(&mut rng, 70, 20..60, "s"),
            );
            let files = [
                ("/in/right/part-0", r1.clone()),
                ("/in/left/part-0", left[..60].to_vec()),
                ("/in/left/part-1", left[60..].to_vec()),
                ("/in/left-2", r2.clone()),
            ];
            let (got, counters) = join("/in/left/", &files);
            let right: Vec<Vec<u8>> = r1.into_iter().chain(r2).collect();
            let want = nested_loops(&left, &right);
            assert!(!want.is_empty());
            assert_eq!(got, want);
            assert_eq!(counters["left_rows"], 120);
            assert_eq!(counters["right_rows"], 140);
            assert_eq!(counters["joined"], want.len() as u64);
        }
    }

    #[test]
    fn keys_on_one_side_only_and_empty_lines() {
        let files = [
            (
                "/l",
                vec![b"a\t1".to_vec(), b"b\t2".to_vec(), vec![], b"e".to_vec()],
            ),
            (
                "/r",
                vec![
                    b"c\t3".to_vec(),
                    vec![],
                    b"e\tx\ty".to_vec(),
                    b"e\t".to_vec(),
                ],
            ),
        ];
        let (got, counters) = join("/l", &files);
        // `e` alone is a key with an empty rest; blank lines are no rows.
        let want: Records = vec![
            (b"e".to_vec(), b"\tx\ty".to_vec()),
            (b"e".to_vec(), b"\t".to_vec()),
        ];
        assert_eq!(got, want);
        let n = |k: &str| counters.get(k).copied();
        assert_eq!(
            (n("left_rows"), n("right_rows"), n("joined")),
            (Some(3), Some(3), Some(2))
        );
        let (got, counters) = join("/nowhere", &files);
        assert!(got.is_empty());
        assert_eq!((counters["right_rows"], counters["joined"]), (6, 0));
        assert!(!counters.contains_key("left_rows"));
    }

    #[test]
    fn sides_by_path() {
        assert!(is_left("/in/l", "/in/l"));
        assert!(is_left("/in/l", "/in/l/part-0"));
        assert!(!is_left("/in/l", "/in/l2"));
        assert!(!is_left("/in/l", "/in"));
        assert!(is_left("", "/anything"));
        assert_eq!(side(&params("/in/l/", Some("/in/l/x"))), Ok(LEFT_TAG));
        assert_eq!(side(&params("/in/l", Some("/in/r"))), Ok(RIGHT_TAG));
        assert!(side(&params("/in/l", None))
            .unwrap_err()
            .contains(INPUT_FILE));
        assert!(left_input(&params("", None)).is_err());
        assert!(left_input(&JobParams::default()).is_err());
        assert_eq!(left_input(&params("/", None)), Ok(""));
    }
}

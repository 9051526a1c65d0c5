//! PageRank as a chain of jobs, one iteration each (the textbook MapReduce
//! formulation): every line is `node<TAB>rank<TAB>n1,n2,...`, in the input
//! and in the output, so an iteration's output is the next one's input.
//! `run.sh` runs the chain until the ranks settle.
//!
//! The map sends each out-link its share of the node's rank and the node
//! its own line (the graph is not kept anywhere else between iterations);
//! the reduce adds up the shares. A dangling node (no out-links) spreads
//! nothing, so the ranks' sum leaks below 1 when the graph has any: kept
//! simple on purpose, as in most MapReduce write-ups.
//!
//! Counter `delta_micro` is the L1 change of the ranks in millionths, for
//! the driver's stopping rule; `malformed` counts input lines skipped.

use mrjob::{Emit, InputFormat, Job, JobParams, TaskCtx};
use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock, PoisonError};

const NODES: &str = "nodes";
const DAMPING: &str = "damping";
const DEFAULT_DAMPING: f64 = 0.85;

/// What the map sends a node: its own line (`G<old rank>|<adjacency>`), so
/// the reduce can write it back and measure the change, or a contribution
/// (`C<share>`). One tag byte, as there is no other way to tell them apart.
const GRAPH_TAG: u8 = b'G';
const CONTRIB_TAG: u8 = b'C';

#[derive(Debug, Clone, Copy, PartialEq)]
struct Params {
    nodes: f64,
    damping: f64,
}

fn params(p: &JobParams) -> Result<Params, String> {
    let nodes = match p.extra.get(NODES).map(|s| s.parse::<u64>()) {
        Some(Ok(n)) if n > 0 => n as f64,
        Some(_) => {
            return Err(format!(
                "--param {NODES}={:?} is not a node count above 0",
                p.extra[NODES]
            ))
        }
        None => return Err(format!("needs the graph's node count: --param {NODES}=N")),
    };
    let damping = match p.extra.get(DAMPING).map(|s| s.parse::<f64>()) {
        None => DEFAULT_DAMPING,
        Some(Ok(d)) if (0.0..=1.0).contains(&d) => d,
        Some(_) => {
            return Err(format!(
                "--param {DAMPING}={:?} is not a number between 0 and 1",
                p.extra[DAMPING]
            ))
        }
    };
    Ok(Params { nodes, damping })
}

/// A job program's way to fail with a message: the runner shows a task's
/// stderr to the user.
fn or_exit<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("example-pagerank: {e}");
        std::process::exit(1)
    })
}

/// One input line.
struct Line<'a> {
    node: &'a [u8],
    /// Carried as written, so that nothing is lost to reprinting.
    rank_text: &'a [u8],
    rank: f64,
    adjacency: &'a [u8],
}

/// `node<TAB>rank[<TAB>adjacency]` with a finite rank; `None` for
/// anything else.
fn parse_line(line: &[u8]) -> Option<Line<'_>> {
    let mut fields = line.splitn(3, |&c| c == b'\t');
    let node = fields.next().filter(|n| !n.is_empty())?;
    let rank_text = fields.next()?;
    let rank = parse_f64(rank_text).filter(|r| r.is_finite())?;
    Some(Line {
        node,
        rank_text,
        rank,
        adjacency: fields.next().unwrap_or(&[]),
    })
}

fn parse_f64(b: &[u8]) -> Option<f64> {
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// The out-links; empty entries (`a,,b`, a trailing comma) are no links.
fn links(adjacency: &[u8]) -> impl Iterator<Item = &[u8]> {
    adjacency.split(|&c| c == b',').filter(|n| !n.is_empty())
}

#[derive(Default)]
struct PageRank {
    /// Checked once per task, in its first reduce.
    params: OnceLock<Params>,
    /// The task's L1 change so far, rounded only once, in
    /// `reduce_finish`, as a per-node rounding would drop every change
    /// under half a millionth, all of them on a large graph.
    delta: Mutex<f64>,
}

impl Job for PageRank {
    fn name(&self) -> &'static str {
        "example-pagerank"
    }
    /// Asked once at submission with the job's parameters: the place to
    /// refuse a missing node count before any task is scheduled.
    fn input_format(&self, p: &JobParams) -> InputFormat {
        or_exit(params(p));
        InputFormat::Lines
    }
    fn map(&self, ctx: &mut TaskCtx, line: &[u8], _value: &[u8], out: &mut dyn Emit) {
        let Some(l) = parse_line(line) else {
            if !line.is_empty() {
                ctx.count("malformed", 1);
            }
            return;
        };
        let mut v = Vec::with_capacity(2 + l.rank_text.len() + l.adjacency.len());
        v.push(GRAPH_TAG);
        v.extend_from_slice(l.rank_text);
        v.push(b'|');
        v.extend_from_slice(l.adjacency);
        out.emit(l.node, &v);
        let degree = links(l.adjacency).count();
        if degree > 0 {
            let mut share = String::new();
            write!(share, "{}{}", CONTRIB_TAG as char, l.rank / degree as f64).unwrap();
            for n in links(l.adjacency) {
                out.emit(n, share.as_bytes());
            }
        }
    }
    fn reduce(
        &self,
        ctx: &mut TaskCtx,
        node: &[u8],
        values: &mut dyn Iterator<Item = &[u8]>,
        out: &mut dyn Emit,
    ) {
        let p = *self.params.get_or_init(|| or_exit(params(&ctx.params)));
        let mut sum = 0.0;
        // A node that is only linked to has no line yet: it gets one, with
        // no out-links and an old rank of 0.
        let mut graph: Option<(&[u8], &[u8])> = None;
        for v in values {
            match v.split_first() {
                Some((&CONTRIB_TAG, share)) => sum += parse_f64(share).unwrap_or(0.0),
                Some((&GRAPH_TAG, g)) if graph.is_none() => {
                    let bar = g.iter().position(|&c| c == b'|').unwrap_or(g.len());
                    graph = Some((&g[..bar], g.get(bar + 1..).unwrap_or(&[])));
                }
                _ => {}
            }
        }
        let (old, adjacency) = match graph {
            Some((rank, adjacency)) => (parse_f64(rank).unwrap_or(0.0), adjacency),
            None => (0.0, &[][..]),
        };
        let rank = (1.0 - p.damping) / p.nodes + p.damping * sum;
        *self.delta.lock().unwrap_or_else(PoisonError::into_inner) += (rank - old).abs();
        let mut line = format!("{rank}\t").into_bytes();
        line.extend_from_slice(adjacency);
        out.emit(node, &line);
    }
    fn reduce_finish(&self, ctx: &mut TaskCtx, _out: &mut dyn Emit) {
        let delta = std::mem::take(&mut *self.delta.lock().unwrap_or_else(PoisonError::into_inner));
        // Counted even when 0, so that the driver reads a number.
        ctx.count("delta_micro", (delta * 1e6).round() as u64);
    }
}

fn main() {
    mrjob::run(PageRank::default())
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

    fn job_params(nodes: usize, damping: Option<&str>) -> JobParams {
        let mut p = JobParams::default();
        p.extra.insert(NODES.into(), nodes.to_string());
        if let Some(d) = damping {
            p.extra.insert(DAMPING.into(), d.into());
        }
        p
    }

    /// One iteration: two maps over the lines (split in half), a stable
    /// sort by key, two reduces by key parity; the output lines in key
    /// order and the summed counters.
    fn iteration(p: &JobParams, lines: &[Vec<u8>]) -> (Vec<Vec<u8>>, BTreeMap<String, u64>) {
        let mut counters: BTreeMap<String, u64> = BTreeMap::new();
        let mut add = |c: BTreeMap<String, u64>| {
            for (k, n) in c {
                *counters.entry(k).or_default() += n;
            }
        };
        let mut shuffled = Records::new();
        let (a, b) = lines.split_at(lines.len() / 2);
        for half in [a, b] {
            let mut ctx = TaskCtx {
                params: p.clone(),
                ..Default::default()
            };
            let input: Records = half.iter().map(|l| (l.clone(), vec![])).collect();
            let job = PageRank::default();
            let out = run_records(&job, TaskMode::Map, &mut ctx, &input).unwrap();
            shuffled.extend(out);
            add(ctx.counters);
        }
        shuffled.sort_by(|a, b| a.0.cmp(&b.0));
        let mut lines = Vec::new();
        for part in 0..2 {
            let input: Records = shuffled
                .iter()
                .filter(|(k, _)| k.len() % 2 == part)
                .cloned()
                .collect();
            let mut ctx = TaskCtx {
                params: p.clone(),
                ..Default::default()
            };
            let job = PageRank::default();
            let out = run_records(&job, TaskMode::Reduce, &mut ctx, &input).unwrap();
            for (k, v) in out {
                let mut l = k;
                l.push(b'\t');
                l.extend_from_slice(&v);
                lines.push(l);
            }
            add(ctx.counters);
        }
        lines.sort();
        (lines, counters)
    }

    /// A node's rank and out-links, by name.
    type Graph = BTreeMap<String, (f64, Vec<String>)>;

    fn parse_graph(lines: &[Vec<u8>]) -> Graph {
        lines
            .iter()
            .map(|l| {
                let l = String::from_utf8(l.clone()).unwrap();
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(f.len(), 3, "{l:?}");
                let adj = f[2].split(',').filter(|n| !n.is_empty()).map(String::from);
                (f[0].to_string(), (f[1].parse().unwrap(), adj.collect()))
            })
            .collect()
    }

    /// The iteration written plainly over a map of nodes: the new graph
    /// and the L1 change.
    fn reference(g: &Graph, nodes: f64, d: f64) -> (Graph, f64) {
        let mut sums: BTreeMap<&str, f64> = BTreeMap::new();
        for (rank, adj) in g.values() {
            for n in adj {
                *sums.entry(n).or_default() += rank / adj.len() as f64;
            }
        }
        let mut next = Graph::new();
        let mut delta = 0.0;
        let names: Vec<&str> = g
            .keys()
            .map(String::as_str)
            .chain(sums.keys().copied())
            .collect();
        for n in names {
            let (old, adj) = g.get(n).cloned().unwrap_or_default();
            let rank = (1.0 - d) / nodes + d * sums.get(n).copied().unwrap_or(0.0);
            if next.insert(n.to_string(), (rank, adj)).is_none() {
                delta += (rank - old).abs();
            }
        }
        (next, delta)
    }

    fn assert_close(got: &Graph, want: &Graph) {
        assert_eq!(got.len(), want.len());
        for ((n, (r, adj)), (wn, (wr, wadj))) in got.iter().zip(want) {
            assert_eq!((n, adj), (wn, wadj));
            assert!(
                (r - wr).abs() <= 1e-12 * wr.abs().max(1e-3),
                "{n}: {r} vs {wr}"
            );
        }
    }

    /// Nodes `n0..`, each with up to four out-links (some none: dangling,
    /// some repeated, some to a node without a line), ranks 1/N.
    fn graph(seed: u64, nodes: usize) -> Vec<Vec<u8>> {
        let mut rng = Rng(seed);
        (0..nodes)
            .map(|i| {
                let adj: Vec<String> = (0..rng.below(5))
                    .map(|_| format!("n{}", rng.below(nodes + 3)))
                    .collect();
                format!("n{i}\t{}\t{}", 1.0 / nodes as f64, adj.join(",")).into_bytes()
            })
            .collect()
    }

    #[test]
    fn iterations_match_a_plain_implementation() {
        for (seed, nodes, damping) in [(1, 50, None), (9, 200, Some("0.5")), (4, 7, Some("1"))] {
            let p = job_params(nodes, damping);
            let d = damping.map_or(DEFAULT_DAMPING, |d| d.parse().unwrap());
            let mut lines = graph(seed, nodes);
            let mut want = parse_graph(&lines);
            assert!(
                want.values().any(|(_, adj)| adj.is_empty()),
                "some node dangles"
            );
            for _ in 0..10 {
                let (next, counters) = iteration(&p, &lines);
                let (next_want, delta) = reference(&want, nodes as f64, d);
                assert_close(&parse_graph(&next), &next_want);
                let micro = counters["delta_micro"] as f64;
                // Rounded once per reduce task, two of them here.
                assert!((micro - delta * 1e6).abs() <= 1.0, "{micro} vs {delta}");
                assert!(!counters.contains_key("malformed"));
                (lines, want) = (next, next_want);
            }
            // Nodes only linked to got lines of their own.
            assert!(want.len() > nodes);
        }
    }

    #[test]
    fn odd_lines_and_the_line_format() {
        let p = job_params(4, None);
        let lines: Vec<Vec<u8>> = [
            &b"a\t0.25\tb,,c,"[..],
            b"b\t0.25",
            b"c\t2.5e-1\t",
            b"d\t0.25\tb,b",
            b"",
            b"no rank",
            b"e\tx\tb",
            b"\t0.1\ta",
            b"f\tinf\ta",
        ]
        .iter()
        .map(|l| l.to_vec())
        .collect();
        let (got, counters) = iteration(&p, &lines);
        assert_eq!(counters["malformed"], 4);
        let base = (1.0 - DEFAULT_DAMPING) / 4.0;
        let want = [
            ("a", base, "b,,c,"),
            ("b", base + 0.85 * (0.125 + 0.25), ""),
            ("c", base + 0.85 * 0.125, ""),
            ("d", base, "b,b"),
        ];
        let want: Vec<Vec<u8>> = want
            .iter()
            .map(|(n, r, adj)| format!("{n}\t{r}\t{adj}").into_bytes())
            .collect();
        assert_eq!(got, want);
        let delta: f64 =
            (0.25 - base) * 2.0 + (base + 0.85 * 0.375 - 0.25) + (0.25 - base - 0.85 * 0.125);
        assert_eq!(counters["delta_micro"], (delta * 1e6).round() as u64);
    }

    #[test]
    fn parameters_are_checked() {
        let p = params(&job_params(10, None)).unwrap();
        assert_eq!((p.nodes, p.damping), (10.0, DEFAULT_DAMPING));
        assert_eq!(params(&job_params(3, Some("0"))).unwrap().damping, 0.0);
        for bad in [Some("1.5"), Some("-0.1"), Some("x"), Some("NaN")] {
            let e = params(&job_params(10, bad)).unwrap_err();
            assert!(e.contains("--param damping="), "{e}");
        }
        let e = params(&JobParams::default()).unwrap_err();
        assert!(e.contains("--param nodes=N"), "{e}");
        for bad in ["0", "-3", "1e3", ""] {
            let mut p = JobParams::default();
            p.extra.insert(NODES.into(), bad.into());
            assert!(params(&p).unwrap_err().contains("--param nodes="));
        }
    }
}

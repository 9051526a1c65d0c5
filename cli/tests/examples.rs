//! The jobs of `examples/` on a real loopback cluster, each checked against
//! a plain implementation computed here: the job programs (built by
//! `cargo build --workspace --bins`, as scripts/test.sh does) and the
//! Streaming scripts, as a user runs them.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::{write_file, Cluster, Opts};

fn opts() -> Opts {
    Opts {
        workers: 4,
        racks: 2,
        block_size: "256KiB",
        replication: 2,
        ..Opts::default()
    }
}

/// A job program of examples/, built beside `mr`.
fn example(name: &str) -> PathBuf {
    let mr = PathBuf::from(env!("CARGO_BIN_EXE_mr"));
    let p = mr.parent().unwrap().join(format!("example-{name}"));
    assert!(
        p.exists(),
        "{} is missing: `cargo build --workspace --bins` builds it (scripts/test.sh does)",
        p.display()
    );
    p
}

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(lines: usize, seed: u64) -> Vec<u8> {
    let words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "gammadelta",
    ];
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = Vec::new();
    for _ in 0..lines {
        for i in 0..rng.usize(0..10) {
            if i > 0 {
                out.push(match rng.u8(0..10) {
                    0 => b'\t',
                    1 => 0x0b,
                    _ => b' ',
                });
            }
            out.extend_from_slice(words[rng.usize(..words.len())].as_bytes());
        }
        out.push(b'\n');
    }
    out
}

/// `key<TAB>count` lines as a map; a key twice is an error.
fn counts(b: &[u8]) -> BTreeMap<Vec<u8>, u64> {
    let mut m = BTreeMap::new();
    for l in b.split(|c| *c == b'\n').filter(|l| !l.is_empty()) {
        let tab = l.iter().rposition(|c| *c == b'\t').expect("key<TAB>count");
        let n = std::str::from_utf8(&l[tab + 1..]).unwrap().parse().unwrap();
        assert!(m.insert(l[..tab].to_vec(), n).is_none(), "a key twice");
    }
    m
}

/// WordCount's words: runs of bytes other than C's isspace.
fn word_counts(data: &[u8]) -> BTreeMap<Vec<u8>, u64> {
    let mut m = BTreeMap::new();
    for w in data
        .split(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        .filter(|w| !w.is_empty())
    {
        *m.entry(w.to_vec()).or_insert(0) += 1;
    }
    m
}

#[test]
fn wordcount_program_and_streaming_scripts_count_as_the_builtin() {
    let c = Cluster::start("ex-wordcount", opts());
    let data = text(40_000, 21);
    let local = write_file(&c.dir, "text", &data);
    c.mr_ok(&["fs", "put", s(&local), "/text"]);
    let want = word_counts(&data);
    c.mr_ok(&[
        "job",
        "run",
        "wordcount",
        "--input",
        "/text",
        "--output",
        "/builtin",
    ]);
    assert_eq!(counts(&c.output("/builtin")), want);
    let v = c.json(&[
        "job",
        "run",
        "program",
        "--program",
        s(&example("wordcount")),
        "--input",
        "/text",
        "--output",
        "/program",
        "--reducers",
        "3",
        "--json",
    ]);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert!(v["maps"].as_u64().unwrap() >= 3, "{v}");
    assert_eq!(counts(&c.output("/program")), want);
    let ex = examples_dir().join("streaming");
    for (lang, m, r) in [
        ("python", "python3 mapper.py", "python3 reducer.py"),
        ("shell", "sh mapper.sh", "sh reducer.sh"),
    ] {
        let (mf, rf) = match lang {
            "python" => (ex.join("mapper.py"), ex.join("reducer.py")),
            _ => (ex.join("mapper.sh"), ex.join("reducer.sh")),
        };
        let out = format!("/streaming-{lang}");
        c.mr_ok(&[
            "job",
            "run",
            "streaming",
            "--input",
            "/text",
            "--output",
            &out,
            "--mapper",
            m,
            "--reducer",
            r,
            "--file",
            s(&mf),
            "--file",
            s(&rf),
        ]);
        assert_eq!(counts(&c.output(&out)), want, "{lang}");
    }
}

#[test]
fn grep_counts_each_match() {
    let c = Cluster::start("ex-grep", opts());
    let data = text(30_000, 22);
    let local = write_file(&c.dir, "text", &data);
    c.mr_ok(&["fs", "put", s(&local), "/text"]);
    c.mr_ok(&[
        "job",
        "run",
        "program",
        "--program",
        s(&example("grep")),
        "--input",
        "/text",
        "--output",
        "/grep",
        "--param",
        "pattern=gamma|delta",
    ]);
    // Plain: leftmost, non-overlapping matches of either word, per line.
    let mut want = BTreeMap::new();
    for line in data.split(|c| *c == b'\n') {
        let mut i = 0;
        while i < line.len() {
            let hit = [&b"gamma"[..], b"delta"]
                .into_iter()
                .find(|w| line[i..].starts_with(w));
            match hit {
                Some(w) => {
                    *want.entry(w.to_vec()).or_insert(0u64) += 1;
                    i += w.len();
                }
                None => i += 1,
            }
        }
    }
    assert_eq!(counts(&c.output("/grep")), want);
    // No pattern: the job fails and says why.
    let out = c.mr(&[
        "job",
        "run",
        "program",
        "--program",
        s(&example("grep")),
        "--input",
        "/text",
        "--output",
        "/grep2",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("pattern"));
}

#[test]
fn join_pairs_every_left_row_with_every_right_row() {
    let c = Cluster::start("ex-join", opts());
    let mut rng = fastrand::Rng::with_seed(23);
    let (mut left, mut right) = (Vec::new(), Vec::new());
    for i in 0..20_000 {
        left.extend(format!("k{}\tuser{i}\n", rng.u32(0..3000)).bytes());
        right.extend(format!("k{}\torder{i}\t{}\n", rng.u32(1000..5000), rng.u32(..)).bytes());
    }
    c.mr_ok(&[
        "fs",
        "put",
        s(&write_file(&c.dir, "l", &left)),
        "/users/part-0",
    ]);
    c.mr_ok(&["fs", "put", s(&write_file(&c.dir, "r", &right)), "/orders"]);
    let v = c.json(&[
        "job",
        "run",
        "program",
        "--program",
        s(&example("join")),
        "--input",
        "/users",
        "--input",
        "/orders",
        "--output",
        "/joined",
        "--param",
        "left=/users",
        "--json",
    ]);
    assert_eq!(v["state"], "succeeded", "{v}");
    let rows = |b: &[u8]| -> Vec<(String, String)> {
        String::from_utf8(b.to_vec())
            .unwrap()
            .lines()
            .map(|l| {
                let (k, r) = l.split_once('\t').unwrap();
                (k.to_string(), r.to_string())
            })
            .collect()
    };
    let (l, r) = (rows(&left), rows(&right));
    let mut by_key: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, rr) in &r {
        by_key.entry(k).or_default().push(rr);
    }
    let mut want = Vec::new();
    for (k, lr) in &l {
        for rr in by_key.get(k.as_str()).into_iter().flatten() {
            want.push(format!("{k}\t{lr}\t{rr}"));
        }
    }
    let mut got: Vec<String> = String::from_utf8(c.output("/joined"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    want.sort();
    got.sort();
    assert!(!want.is_empty());
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    assert_eq!(
        v["counters"]["joined"].as_u64(),
        Some(want.len() as u64),
        "{v}"
    );
}

#[test]
fn pagerank_iterates_as_chained_jobs_until_the_ranks_settle() {
    let c = Cluster::start("ex-pagerank", opts());
    let (nodes, edges) = (2_000usize, 4);
    let ex = examples_dir().join("pagerank");
    let gen = std::process::Command::new("python3")
        .arg(ex.join("gen.py"))
        .args([nodes.to_string(), edges.to_string(), "7".into()])
        .output()
        .unwrap();
    assert!(gen.status.success());
    let graph = gen.stdout;
    c.mr_ok(&[
        "fs",
        "put",
        s(&write_file(&c.dir, "graph", &graph)),
        "/graph",
    ]);
    let mr = PathBuf::from(env!("CARGO_BIN_EXE_mr"));
    let run = std::process::Command::new("bash")
        .arg(ex.join("run.sh"))
        .args([
            "--config",
            s(&c.config),
            "--input",
            "/graph",
            "--output-prefix",
            "/pr",
        ])
        .args(["--nodes", &nodes.to_string(), "--threshold", "0.001"])
        .args(["--program", s(&example("pagerank"))])
        .env("MR", &mr)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{log}");
    let last = String::from_utf8(run.stdout).unwrap().trim().to_string();
    let iterations: usize = log
        .split("converged after ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("did not converge: {log}"));
    assert!((2..20).contains(&iterations), "{log}");
    assert_eq!(last, format!("/pr/iter-{iterations}"));

    // Plain power iteration, the same number of times.
    let mut rank = vec![1.0 / nodes as f64; nodes];
    let adj: Vec<Vec<usize>> = String::from_utf8(graph)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            f[2].split(',')
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().unwrap())
                .collect()
        })
        .collect();
    for _ in 0..iterations {
        let mut next = vec![0.15 / nodes as f64; nodes];
        for (u, out) in adj.iter().enumerate() {
            for &v in out {
                next[v] += 0.85 * rank[u] / out.len() as f64;
            }
        }
        rank = next;
    }
    let got = String::from_utf8(c.output(&last)).unwrap();
    let mut seen = 0;
    for l in got.lines() {
        let f: Vec<&str> = l.split('\t').collect();
        let (n, r): (usize, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        assert!(
            (r - rank[n]).abs() < 1e-12,
            "node {n}: {r} against {}",
            rank[n]
        );
        seen += 1;
    }
    assert_eq!(seen, nodes);
}

//! Hadoop Streaming on a real loopback cluster: the commands are real
//! processes on the workers, their output checked against the built-in
//! WordCount and against the input itself; failures, timeouts, kills and
//! roles as a user meets them.

mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use support::{write_file, Cluster, Opts};

const READER_TOKEN: &str = "reader-secret-streaming";

fn opts() -> Opts {
    Opts {
        workers: 4,
        racks: 2,
        block_size: "256KiB",
        replication: 2,
        extra_toml:
            "[[users]]\nname = \"rita\"\ntoken = \"reader-secret-streaming\"\nrole = \"reader\"\n",
        ..Opts::default()
    }
}

fn text(lines: usize, seed: u64) -> Vec<u8> {
    let words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"];
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut s = Vec::new();
    for _ in 0..lines {
        for i in 0..rng.usize(0..10) {
            if i > 0 {
                s.push(if rng.bool() { b' ' } else { b'\t' });
            }
            s.extend_from_slice(words[rng.usize(..words.len())].as_bytes());
        }
        s.push(b'\n');
    }
    s
}

fn sorted_lines(b: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = b
        .split(|c| *c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    v.sort();
    v
}

fn counts(b: &[u8]) -> BTreeMap<String, u64> {
    sorted_lines(b)
        .iter()
        .map(|l| {
            let l = String::from_utf8(l.clone()).unwrap();
            let (w, n) = l.split_once('\t').expect("word<TAB>count");
            (w.to_string(), n.parse().unwrap())
        })
        .collect()
}

const MAPPER: &str = r#"import sys
for line in sys.stdin:
    for w in line.split():
        print(w + "\t1")
"#;

/// Sums runs of equal words, and says so once per non-empty partition
/// through a Hadoop counter line.
const REDUCER: &str = r#"import sys
cur, n = None, 0
for line in sys.stdin:
    w, c = line.rstrip("\n").split("\t", 1)
    if w != cur:
        if cur is not None:
            print(cur + "\t" + str(n))
        cur, n = w, 0
    n += int(c)
if cur is not None:
    print(cur + "\t" + str(n))
    sys.stderr.write("reporter:counter:wc,groups_seen,1\n")
"#;

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn python_streaming_wordcount_matches_the_builtin_and_map_only_keeps_lines() {
    let c = Cluster::start("streaming-wc", opts());
    let data = text(60_000, 11);
    let local = write_file(&c.dir, "text", &data);
    c.mr_ok(&["fs", "put", path(&local), "/text"]);
    let m = write_file(&c.dir, "m.py", MAPPER.as_bytes());
    let r = write_file(&c.dir, "r.py", REDUCER.as_bytes());
    let v: Value = c.json(&[
        "job",
        "run",
        "streaming",
        "--input",
        "/text",
        "--output",
        "/wc",
        "--mapper",
        "python3 m.py",
        "--reducer",
        "python3 r.py",
        "--file",
        path(&m),
        "--file",
        path(&r),
        "--reducers",
        "3",
        "--json",
    ]);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert!(v["maps"].as_u64().unwrap() >= 4, "several blocks: {v}");
    // One reporter line per non-empty reducer.
    let groups = v["counters"]["wc.groups_seen"].as_u64().unwrap_or(0);
    assert!((1..=3).contains(&groups), "{v}");
    c.mr_ok(&[
        "job",
        "run",
        "wordcount",
        "--input",
        "/text",
        "--output",
        "/wc-builtin",
        "--reducers",
        "2",
    ]);
    let got = counts(&c.output("/wc"));
    assert_eq!(got, counts(&c.output("/wc-builtin")));
    assert_eq!(got.len(), 7);
    the_reducer_combines_too(&c, &m, &r, &got);
    map_only_keeps_the_mappers_lines(&c, &data);
    no_reducer_sorts_the_map_output(&c, &m);
}

/// The reducer as the combiner too: the same counts as `got`, fewer
/// records shuffled.
fn the_reducer_combines_too(c: &Cluster, m: &Path, r: &Path, got: &BTreeMap<String, u64>) {
    let v: Value = c.json(&[
        "job",
        "run",
        "streaming",
        "--input",
        "/text",
        "--output",
        "/wc-comb",
        "--mapper",
        "python3 m.py",
        "--combiner",
        "python3 r.py",
        "--reducer",
        "python3 r.py",
        "--file",
        path(m),
        "--file",
        path(r),
        "--reducers",
        "2",
        "--json",
    ]);
    assert_eq!(v["state"], "succeeded", "{v}");
    let (cin, cout) = (
        v["counters"]["combine_input_records"].as_u64().unwrap(),
        v["counters"]["combine_output_records"].as_u64().unwrap(),
    );
    assert!(cout < cin / 100, "combined {cin} into {cout}: {v}");
    assert_eq!(&counts(&c.output("/wc-comb")), got);
}

/// Map-only: the mapper's lines as they are, tabs and all.
fn map_only_keeps_the_mappers_lines(c: &Cluster, data: &[u8]) {
    let v: Value = c.json(&[
        "job",
        "run",
        "streaming",
        "--input",
        "/text",
        "--output",
        "/upper",
        "--mapper",
        "tr a-z A-Z",
        "--reducers",
        "0",
        "--json",
    ]);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["reduces"].as_u64(), Some(0), "{v}");
    let want: Vec<u8> = data.to_ascii_uppercase();
    assert_eq!(sorted_lines(&c.output("/upper")), sorted_lines(&want));
}

/// No reducer: the identity reduce writes the sorted map output.
fn no_reducer_sorts_the_map_output(c: &Cluster, m: &Path) {
    c.mr_ok(&[
        "job",
        "run",
        "streaming",
        "--input",
        "/text",
        "--output",
        "/ident",
        "--mapper",
        "python3 m.py",
        "--file",
        path(m),
        "--reducers",
        "1",
    ]);
    let out = c.output("/ident");
    let lines: Vec<&[u8]> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert!(
        lines.windows(2).all(|w| w[0] <= w[1]),
        "one reducer's output is sorted"
    );
    let total: u64 = counts(&c.output("/wc-builtin")).values().sum();
    assert_eq!(lines.len() as u64, total);
}

#[test]
fn a_failing_command_fails_the_job_with_its_status_and_stderr() {
    let c = Cluster::start("streaming-fail", opts());
    let local = write_file(&c.dir, "text", &text(2_000, 3));
    c.mr_ok(&["fs", "put", path(&local), "/text"]);
    let out = c.mr(&[
        "job",
        "run",
        "streaming",
        "--input",
        "/text",
        "--output",
        "/f",
        "--mapper",
        "echo MARKER-7f3a >&2; exit 3",
        "--json",
    ]);
    assert!(!out.status.success(), "a failed job fails `mr job run`");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"], "failed", "{v}");
    let err = v["error"].as_str().unwrap();
    assert!(err.contains("exited with status 3"), "{err}");
    assert!(err.contains("MARKER-7f3a"), "{err}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MARKER-7f3a"), "{stderr}");

    let out = c.mr(&[
        "job",
        "run",
        "streaming",
        "--input",
        "/text",
        "--output",
        "/g",
        "--mapper",
        "no-such-command-9b2",
        "--json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = v["error"].as_str().unwrap();
    assert!(
        err.contains("command not found") && err.contains("no-such-command-9b2"),
        "{err}"
    );

    // Bad specs are refused before anything runs.
    for args in [
        vec!["--mapper", "cat", "--cmdenv", "NOEQUALS"],
        vec!["--mapper", "cat", "--file", "/no/such/file.py"],
        vec!["--reducer", "cat"],
    ] {
        let mut a = vec![
            "job",
            "run",
            "streaming",
            "--input",
            "/text",
            "--output",
            "/h",
        ];
        a.extend(args.iter());
        let out = c.mr(&a);
        assert!(!out.status.success(), "{args:?}");
    }
}

/// The command lines of live (not zombie) processes that contain `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let p = e.path();
        let Ok(cmd) = std::fs::read(p.join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let zombie = std::fs::read_to_string(p.join("stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true);
        if cmd.contains(needle) && !zombie {
            found.push(cmd);
        }
    }
    found
}

#[test]
fn a_silent_command_times_out_and_a_killed_job_leaves_no_process() {
    let c = Cluster::start("streaming-kill", opts());
    let local = write_file(&c.dir, "text", &text(500, 5));
    c.mr_ok(&["fs", "put", path(&local), "/text"]);
    // A mapper that never reads nor writes: killed at its timeout, with
    // the background child it started.
    let v: Value = serde_json::from_slice(
        &c.mr(&[
            "job",
            "run",
            "streaming",
            "--input",
            "/text",
            "--output",
            "/t",
            "--mapper",
            "sleep 4242 & sleep 4243",
            "--task-timeout",
            "0.5",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(v["state"], "failed", "{v}");
    assert!(v["error"].as_str().unwrap().contains("task_timeout"), "{v}");
    c.wait_for(
        "the timed-out mappers gone",
        Duration::from_secs(20),
        |_| processes_with("sleep 424").is_empty(),
    );

    // A job killed while its mappers run takes them with it.
    let id = c.mr_ok(&[
        "job",
        "submit",
        "streaming",
        "--input",
        "/text",
        "--output",
        "/k",
        "--mapper",
        "sleep 4343 & sleep 4344",
    ]);
    let id = id.trim();
    c.wait_for("the mappers running", Duration::from_secs(30), |_| {
        !processes_with("sleep 434").is_empty()
    });
    c.mr_ok(&["job", "kill", id]);
    c.wait_for(
        "the killed job's mappers gone",
        Duration::from_secs(20),
        |_| processes_with("sleep 434").is_empty(),
    );
}

#[test]
fn a_reader_may_not_run_commands_on_the_workers() {
    let c = Cluster::start("streaming-roles", opts());
    let local = write_file(&c.dir, "text", &text(100, 1));
    c.mr_ok(&["fs", "put", path(&local), "/text"]);
    let m = write_file(&c.dir, "m.py", MAPPER.as_bytes());
    for args in [
        vec!["--mapper", "touch /tmp/pwned-by-reader"],
        vec!["--mapper", "python3 m.py", "--file", path(&m)],
    ] {
        let mut a = vec![
            "job",
            "run",
            "streaming",
            "--input",
            "/text",
            "--output",
            "/r",
        ];
        a.extend(args.iter());
        let out = c.mr_as(READER_TOKEN, &a);
        assert!(!out.status.success(), "a reader ran {args:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("ermission") || e.contains("role"), "{e}");
    }
    assert!(c
        .json(&["job", "list", "--json"])
        .as_array()
        .unwrap()
        .is_empty());
}

//! The MapReduce engine end to end on a real loopback cluster: outputs
//! checked against oracles computed here, independently of the engine.

mod support;

use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;
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

/// Concatenated bytes of every part-* file under `dir`, in part order.
fn parts(c: &Cluster, dir: &str) -> Vec<Vec<u8>> {
    c.part_paths(dir)
        .iter()
        .map(|p| {
            let out = c.mr(&["fs", "cat", p]);
            assert!(out.status.success());
            out.stdout
        })
        .collect()
}

fn text(lines: usize, seed: u64) -> Vec<u8> {
    let words = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    ];
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut s = Vec::new();
    for _ in 0..lines {
        let n = rng.usize(1..12);
        for i in 0..n {
            if i > 0 {
                s.push(if rng.bool() { b' ' } else { b'\t' });
            }
            s.extend_from_slice(words[rng.usize(..words.len())].as_bytes());
            if rng.u8(..) < 8 {
                s.extend_from_slice(format!("{}", rng.u32(..50)).as_bytes());
            }
        }
        s.push(b'\n');
    }
    s
}

fn wordcount_oracle(data: &[u8]) -> HashMap<Vec<u8>, u64> {
    let mut m = HashMap::new();
    for w in data
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
    {
        *m.entry(w.to_vec()).or_insert(0) += 1;
    }
    m
}

fn run_json(c: &Cluster, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    c.json(&a)
}

#[test]
fn wordcount_matches_an_independent_count() {
    let c = Cluster::start("wordcount", opts());
    let data = text(60_000, 7);
    let local = write_file(&c.dir, "text", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/in/text"]);
    let v = run_json(
        &c,
        &[
            "job",
            "run",
            "wordcount",
            "--input",
            "/in",
            "--output",
            "/wc",
            "--reducers",
            "3",
        ],
    );
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["scheduler"], "fifo");
    let maps = v["maps"].as_u64().unwrap();
    assert!(maps >= 5, "{v}");
    let loc = &v["locality"];
    let sum: u64 = [
        "cache_local",
        "node_local",
        "cache_rack_local",
        "rack_local",
        "off_rack",
    ]
    .iter()
    .map(|k| loc[k].as_u64().unwrap())
    .sum();
    assert_eq!(sum, maps);
    // Where the time went: every phase present, the map span and the last
    // reduce's phases within the job's time.
    let ph = &v["phases_s"];
    let exec = v["exec_time_s"].as_f64().unwrap();
    for k in ["map", "shuffle", "merge", "reduce", "commit"] {
        let x = ph[k].as_f64().unwrap_or(-1.0);
        assert!((0.0..=exec).contains(&x), "phases_s.{k} = {x}: {v}");
    }
    assert!(ph["map"].as_f64().unwrap() > 0.0, "{v}");
    let reduce_side: f64 = ["shuffle", "merge", "reduce", "commit"]
        .iter()
        .map(|k| ph[k].as_f64().unwrap())
        .sum();
    assert!(reduce_side > 0.0 && reduce_side <= exec, "{v}");
    let mut got: HashMap<Vec<u8>, u64> = HashMap::new();
    for part in parts(&c, "/wc") {
        for line in part.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let tab = line
                .iter()
                .position(|b| *b == b'\t')
                .expect("word<TAB>count");
            let n: u64 = std::str::from_utf8(&line[tab + 1..])
                .unwrap()
                .parse()
                .unwrap();
            assert!(
                got.insert(line[..tab].to_vec(), n).is_none(),
                "a word in two parts"
            );
        }
    }
    assert_eq!(got, wordcount_oracle(&data));
    assert!(c.mr(&["fs", "stat", "/wc/_SUCCESS"]).status.success());
    let hist = c.mr_ok(&["job", "history", &v["job_id"].to_string()]);
    assert!(hist.lines().count() as u64 > maps);
}

#[test]
fn terasort_output_is_sorted_and_a_permutation() {
    let c = Cluster::start("terasort", opts());
    c.mr_ok(&[
        "gen", "teragen", "--size", "2MiB", "--output", "/tera", "--maps", "3",
    ]);
    let v = run_json(
        &c,
        &[
            "job",
            "run",
            "terasort",
            "--input",
            "/tera",
            "--output",
            "/sorted",
            "--reducers",
            "3",
            "--param",
            "map_output_by_reference=always",
        ],
    );
    assert_eq!(v["state"], "succeeded", "{v}");
    let val = run_json(
        &c,
        &[
            "job",
            "run",
            "teravalidate",
            "--input",
            "/sorted",
            "--output",
            "/report",
        ],
    );
    assert_eq!(val["state"], "succeeded", "{val}");
    a_sorted_permutation_of(&c, "/sorted", "/tera");
    // Every worker here shares the host: the reduces read every segment
    // (one per map and reduce) in place.
    let segments = v["maps"].as_u64().unwrap() * 3;
    assert_eq!(count(&v, "shuffle_segments_in_place"), segments, "{v}");
    // With map_output_by_reference=always, a map that read its block from
    // its own store wrote references into it rather than the records; one
    // that read a cached copy may have.
    let by_ref = count(&v, "map_outputs_by_reference");
    let loc = |k: &str| v["locality"][k].as_u64().unwrap();
    assert!(
        by_ref >= loc("node_local") && by_ref <= loc("node_local") + loc("cache_local"),
        "{v}"
    );
    streamed_spools_what_memory_cannot_hold(&c, segments);
    slow_start_pushes_each_map_output(&c);
}

/// A job counter, 0 when absent.
fn count(v: &Value, k: &str) -> u64 {
    v["counters"][k].as_u64().unwrap_or(0)
}

/// Independent check: the parts of `out` in order are sorted by the
/// 10-byte key, and hold exactly `input`'s records.
fn a_sorted_permutation_of(c: &Cluster, out: &str, input: &str) {
    let out: Vec<u8> = parts(c, out).concat();
    let input: Vec<u8> = parts(c, input).concat();
    assert_eq!(out.len(), input.len());
    assert_eq!(out.len() % 100, 0);
    let recs: Vec<&[u8]> = out.chunks(100).collect();
    assert!(
        recs.windows(2).all(|w| w[0][..10] <= w[1][..10]),
        "not globally sorted"
    );
    let mut a: Vec<&[u8]> = input.chunks(100).collect();
    let mut b = recs.clone();
    a.sort();
    b.sort();
    assert!(a == b, "output is not a permutation of the input");
}

/// Streamed instead, with room in memory for about one segment: the rest
/// is spooled, and the output is the same bytes.
fn streamed_spools_what_memory_cannot_hold(c: &Cluster, segments: u64) {
    let streamed = run_json(
        c,
        &[
            "job",
            "run",
            "terasort",
            "--input",
            "/tera",
            "--output",
            "/sorted-streamed",
            "--reducers",
            "3",
            "--param",
            "shuffle_in_place=false",
            "--param",
            "shuffle_memory=300KiB",
            "--param",
            "map_output_by_reference=always",
        ],
    );
    assert_eq!(streamed["state"], "succeeded", "{streamed}");
    assert_eq!(count(&streamed, "shuffle_segments_in_place"), 0);
    let (mem, spooled) = (
        count(&streamed, "shuffle_segments_in_memory"),
        count(&streamed, "shuffle_segments_spooled"),
    );
    assert!(
        mem >= 1 && spooled >= 1 && mem + spooled == segments,
        "{streamed}"
    );
    assert_eq!(parts(c, "/sorted-streamed"), parts(c, "/sorted"));
}

/// Reduce slow-start: with `slowstart=0` the reduces start at once. The
/// maps are held until all three reduces run, so every map output reaches
/// them pushed as its map finishes (over gRPC, not in place); the output
/// is the same bytes.
fn slow_start_pushes_each_map_output(c: &Cluster) {
    let release = c.dir.join("release-maps");
    let hold = format!("hold_maps={}", release.display());
    let id = c.mr_ok(&[
        "job",
        "submit",
        "terasort",
        "--input",
        "/tera",
        "--output",
        "/sorted-early",
        "--reducers",
        "3",
        "--param",
        "slowstart=0",
        "--param",
        &hold,
        "--param",
        "shuffle_in_place=false",
    ]);
    let id = id.trim().to_string();
    c.wait_for("the reduces to start", Duration::from_secs(30), |c| {
        let v = c.json(&["job", "status", &id, "--json"]);
        v["progress"]["reduces_running"].as_u64() == Some(3)
    });
    let v = c.json(&["job", "status", &id, "--json"]);
    assert_eq!(v["progress"]["maps_done"], 0, "{v}");
    std::fs::write(&release, b"").unwrap();
    let done = c.json(&["job", "wait", &id, "--json"]);
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(count(&done, "shuffle_segments_in_place"), 0, "{done}");
    assert_eq!(parts(c, "/sorted-early"), parts(c, "/sorted"));
}

#[test]
fn sort_total_order_and_validator() {
    let c = Cluster::start("sort", opts());
    c.mr_ok(&[
        "gen",
        "randomwriter",
        "--size",
        "3MiB",
        "--output",
        "/kv",
        "--maps",
        "2",
    ]);
    let v = run_json(
        &c,
        &[
            "job",
            "run",
            "sort",
            "--input",
            "/kv",
            "--output",
            "/kvs",
            "--reducers",
            "3",
            "--total-order",
        ],
    );
    assert_eq!(v["state"], "succeeded", "{v}");
    // randomwriter's records average kilobytes: by default (`auto`) a map
    // that read its block from its own store references them in it.
    let by_ref = count(&v, "map_outputs_by_reference");
    let loc = |k: &str| v["locality"][k].as_u64().unwrap();
    assert!(
        by_ref >= loc("node_local") && by_ref <= loc("node_local") + loc("cache_local"),
        "{v}"
    );
    let val = run_json(
        &c,
        &[
            "job",
            "run",
            "sortvalidate",
            "--input",
            "/kvs",
            "--output",
            "/kvr",
            "--total-order",
        ],
    );
    assert_eq!(val["state"], "succeeded", "{val}");
    let decode = |buf: &[u8]| -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut v = Vec::new();
        let mut i = 0;
        while i < buf.len() {
            let kl = u32::from_le_bytes(buf[i..i + 4].try_into().unwrap()) as usize;
            let k = buf[i + 4..i + 4 + kl].to_vec();
            i += 4 + kl;
            let vl = u32::from_le_bytes(buf[i..i + 4].try_into().unwrap()) as usize;
            v.push((k, buf[i + 4..i + 4 + vl].to_vec()));
            i += 4 + vl;
        }
        v
    };
    let out: Vec<(Vec<u8>, Vec<u8>)> = parts(&c, "/kvs").iter().flat_map(|p| decode(p)).collect();
    assert!(
        out.windows(2).all(|w| w[0].0 <= w[1].0),
        "not totally ordered"
    );
    let mut input: Vec<(Vec<u8>, Vec<u8>)> =
        parts(&c, "/kv").iter().flat_map(|p| decode(p)).collect();
    let mut sorted = out.clone();
    input.sort();
    sorted.sort();
    assert!(input == sorted, "sort lost or changed records");
}

#[test]
fn a_worker_killed_mid_job_does_not_change_the_output() {
    let mut c = Cluster::start(
        "killmid",
        Opts {
            workers: 4,
            block_size: "128KiB",
            replication: 2,
            dead_after: 5,
            ..Opts::default()
        },
    );
    let data = text(120_000, 9);
    let local = write_file(&c.dir, "text", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/in/text"]);
    let id = c.mr_ok(&[
        "job",
        "submit",
        "wordcount",
        "--input",
        "/in",
        "--output",
        "/wc",
        "--reducers",
        "2",
    ]);
    let id = id.trim().to_string();
    c.wait_for("maps to run", Duration::from_secs(30), |c| {
        let v = c.json(&["job", "status", &id, "--json"]);
        v["progress"]["maps_done"].as_u64().unwrap() >= 2
            || v["state"] != "queued" && v["state"] != "running"
    });
    c.kill("w2");
    let out = c.mr(&["job", "wait", &id, "--json"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        c.logs_tail()
    );
    let mut got: HashMap<Vec<u8>, u64> = HashMap::new();
    for part in parts(&c, "/wc") {
        for line in part.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let tab = line.iter().position(|b| *b == b'\t').unwrap();
            let n: u64 = std::str::from_utf8(&line[tab + 1..])
                .unwrap()
                .parse()
                .unwrap();
            got.insert(line[..tab].to_vec(), n);
        }
    }
    assert_eq!(got, wordcount_oracle(&data));
}

#[test]
fn bad_job_specs_are_refused_before_anything_runs() {
    let c = Cluster::start(
        "badjobs",
        Opts {
            workers: 2,
            replication: 1,
            ..opts()
        },
    );
    let local = write_file(&c.dir, "t", b"hello world\n");
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/in/t"]);
    let odd = write_file(&c.dir, "odd", &[7u8; 150]);
    c.mr_ok(&["fs", "put", odd.to_str().unwrap(), "/odd"]);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/exists/part-00000"]);
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "job",
                "run",
                "wordcount",
                "--input",
                "/missing",
                "--output",
                "/o1",
            ],
            "does not exist",
        ),
        (
            &[
                "job",
                "run",
                "wordcount",
                "--input",
                "/in",
                "--output",
                "/o-slow",
                "--param",
                "slowstart=1.5",
            ],
            "bad slowstart",
        ),
        (
            &[
                "job",
                "run",
                "wordcount",
                "--input",
                "/in",
                "--output",
                "/exists",
            ],
            "already exists",
        ),
        (
            &[
                "job", "run", "terasort", "--input", "/odd", "--output", "/o2",
            ],
            "multiple of",
        ),
        (
            &[
                "job",
                "run",
                "wordcount",
                "--input",
                "/in",
                "--output",
                "/o3",
                "--reducers",
                "0",
            ],
            "reducers",
        ),
        (
            &[
                "job",
                "run",
                "nosuchjob",
                "--input",
                "/in",
                "--output",
                "/o4",
            ],
            "unknown job",
        ),
    ];
    for (args, want) in cases {
        let out = c.mr(args);
        assert!(!out.status.success(), "{args:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // Nothing ran and nothing was overwritten.
    let jobs = c.json(&["job", "list", "--json"]);
    assert_eq!(jobs.as_array().unwrap().len(), 0);
    assert_eq!(
        c.mr_ok(&["fs", "cat", "/exists/part-00000"]),
        "hello world\n"
    );
}

#[test]
fn every_scheduler_runs_a_job_to_a_correct_end_and_can_be_switched_live() {
    let c = Cluster::start("schedulers", opts());
    let data = text(20_000, 11);
    let local = write_file(&c.dir, "text", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/in/text"]);
    let want = wordcount_oracle(&data);
    let out = c.mr(&["admin", "scheduler", "set", "nosuch"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown scheduler"));
    let out = c.mr(&["admin", "scheduler", "set", "delay", "bogus=1"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));
    for name in sched::registry::NAMES {
        c.mr_ok(&["admin", "scheduler", "set", name]);
        assert!(c.mr_ok(&["admin", "scheduler", "show"]).contains(name));
        let output = format!("/wc-{}", name.replace('+', "-"));
        let v = run_json(
            &c,
            &[
                "job",
                "run",
                "wordcount",
                "--input",
                "/in",
                "--output",
                &output,
                "--reducers",
                "2",
            ],
        );
        assert_eq!(v["state"], "succeeded", "{name}: {v}");
        assert_eq!(v["scheduler"], *name);
        let mut got: HashMap<Vec<u8>, u64> = HashMap::new();
        for part in parts(&c, &output) {
            for line in part.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let tab = line.iter().position(|b| *b == b'\t').unwrap();
                got.insert(
                    line[..tab].to_vec(),
                    std::str::from_utf8(&line[tab + 1..])
                        .unwrap()
                        .parse()
                        .unwrap(),
                );
            }
        }
        assert_eq!(got, want, "{name}");
    }
}

/// A job over only empty files succeeds with empty parts (Hadoop and Spark
/// do; a pipeline whose earlier stage produced nothing needs it); `submit
/// --json` and `kill --json` print JSON.
#[test]
fn an_empty_input_gives_empty_parts() {
    let c = Cluster::start("empty-input", opts());
    let empty = c.dir.join("empty.txt");
    std::fs::write(&empty, b"").unwrap();
    c.mr_ok(&["fs", "put", empty.to_str().unwrap(), "/in/empty"]);
    let v = run_json(
        &c,
        &[
            "job",
            "run",
            "wordcount",
            "--input",
            "/in/empty",
            "--output",
            "/out/wc",
            "--reducers",
            "2",
        ],
    );
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["maps"], 0);
    let p = parts(&c, "/out/wc");
    assert_eq!(p.len(), 2);
    assert!(p.iter().all(|b| b.is_empty()));
    let v = run_json(
        &c,
        &[
            "job",
            "run",
            "sort",
            "--input",
            "/in/empty",
            "--output",
            "/out/sort",
            "--reducers",
            "3",
            "--total-order",
        ],
    );
    assert_eq!(v["state"], "succeeded", "{v}");
    assert!(parts(&c, "/out/sort").iter().all(|b| b.is_empty()));

    let out = c.mr_ok(&[
        "job",
        "submit",
        "wordcount",
        "--input",
        "/in/empty",
        "--output",
        "/out/wc2",
        "--json",
    ]);
    let id = serde_json::from_str::<Value>(&out).unwrap()["job_id"]
        .as_u64()
        .unwrap();
    let killed: Value =
        serde_json::from_str(&c.mr_ok(&["job", "kill", &id.to_string(), "--json"])).unwrap();
    assert_eq!(killed["job_id"], id);
}

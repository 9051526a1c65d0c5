//! `mr bench trace` end to end on a real loopback cluster: a small slice of
//! a SWIM-format trace replayed under two policies, every job's output
//! validated by the harness, the job count, the scaled sizes and the
//! measured slot use checked from the CSVs; and a bad trace refused before
//! anything runs.

mod support;

use std::collections::HashMap;
use support::{Cluster, Opts};

fn read_csv(path: &std::path::Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

/// Four rows: (submit s, input, shuffle, output). With 4 workers for 4
/// traced nodes and a byte scale of 1, blocks of 256 KiB and at most 4 maps
/// and 2 reduces: 1 map (shuffle x2, output x0.5), 3 maps (x0.5, x2), 4
/// maps (capped; no shuffle), 1 map (no input).
const TRACE: &str = "job0\t100\t100\t100\t200\t100\n\
                     job1\t110\t10\t600000\t300000\t600000\n\
                     job2\t120\t10\t5000000\t0\t0\n\
                     job3\t125\t5\t0\t0\t0\n";

#[test]
fn a_small_slice_replays_validated_with_its_scaled_sizes_and_slot_use() {
    let c = Cluster::start(
        "trace-replay",
        Opts {
            workers: 4,
            racks: 2,
            block_size: "256KiB",
            replication: 2,
            ..Opts::default()
        },
    );
    let trace = c.dir.join("slice.tsv");
    std::fs::write(&trace, TRACE).unwrap();
    let out = c.dir.join("out");
    let o = out.to_str().unwrap();
    c.mr_ok(&[
        "bench",
        "trace",
        trace.to_str().unwrap(),
        "--traced-nodes",
        "4",
        "--byte-scale",
        "1",
        "--block-size",
        "256KiB",
        "--pool-blocks",
        "8",
        "--max-maps",
        "4",
        "--max-reduces",
        "2",
        "--schedulers",
        "fifo,delay",
        "--reps",
        "1",
        "--load",
        "0.5",
        "--out",
        o,
    ]);
    let jobs = read_csv(&out.join("trace-jobs.csv"));
    // Every row under both policies, each validated (a job whose output
    // differs from what its input implies fails the command).
    assert_eq!(jobs.len(), 8, "{jobs:?}");
    let f = |r: &HashMap<String, String>, k: &str| r[k].parse::<f64>().unwrap();
    for r in &jobs {
        let (maps, reduces) = (f(r, "maps"), f(r, "reduces"));
        let want_maps = [1.0, 3.0, 4.0, 1.0][f(r, "row") as usize];
        assert_eq!(maps, want_maps, "{r:?}");
        assert!((1.0..=2.0).contains(&reduces), "{r:?}");
        // The input is the job's whole pool blocks, each a little under
        // 256 KiB, and all of it is read.
        let input = f(r, "input_bytes");
        assert_eq!(input, f(r, "want_input"), "{r:?}");
        assert!(
            input <= maps * 262144.0 && input >= maps * 240000.0,
            "{r:?}"
        );
        // Shuffle and output follow the row's ratios (the measured shuffle
        // carries the records' framing; the per-record rounding is small).
        for (got, want) in [
            ("shuffle_bytes", "want_shuffle"),
            ("output_bytes", "want_output"),
        ] {
            let (g, w) = (f(r, got), f(r, want));
            if w == 0.0 {
                assert_eq!(g, 0.0, "{got} {r:?}");
            } else {
                assert!(g >= 0.85 * w && g <= 1.3 * w, "{got} {g} vs {w}: {r:?}");
            }
        }
        assert!(f(r, "exec_time_s") > 0.0 && f(r, "alone_s") > 0.0);
    }
    let runs = read_csv(&out.join("trace-runs.csv"));
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert!((f(r, "offered_load") - 0.5).abs() < 1e-3, "{r:?}");
        let m = f(r, "map_slot_use");
        assert!(m > 0.0 && m <= 1.0, "{r:?}");
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("## Load 0.5"), "{summary}");
    // delay paired with the first policy over its 4 jobs of 1 run: shown,
    // no claim made.
    assert!(summary.contains("| delay | fifo | 1 | 4 |"), "{summary}");
    assert!(
        summary.contains("[95 % t over runs]")
            && summary.contains("commit ")
            && summary.contains("Too few runs for a claim")
            && summary.contains("on the reduce slots"),
        "{summary}"
    );
    assert_eq!(read_csv(&out.join("solo.csv")).len(), 4);
    // The header `mr sim heldout` rebuilds the cluster from, as written.
    let meta = bench::heldout::parse_summary(&summary).unwrap();
    assert_eq!(
        (
            meta.shape.nodes,
            meta.shape.racks,
            meta.shape.replication,
            meta.block_size,
            meta.pool_blocks
        ),
        (4, 2, 2, 256 << 10, 8),
        "{summary}"
    );
    assert!(meta.trace.ends_with("slice.tsv"), "{}", meta.trace);
    the_report_is_made_again(&c, &out);
    // The report is made again from the directory alone.
    let again = c.dir.join("heldout.md");
    c.mr_ok(&["sim", "heldout", o, "--out", again.to_str().unwrap()]);
    let md = std::fs::read_to_string(&again).unwrap();
    assert!(md.contains("load 0.5, fifo, repetition 1"), "{md}");
    assert!(md.contains("| delay | 1 |"), "{md}");
}

/// report.json carries the figures, and `mr bench trace-report` makes
/// them again from the directory alone.
fn the_report_is_made_again(c: &Cluster, out: &std::path::Path) {
    let o = out.to_str().unwrap();
    let json = || -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
    };
    let before = json();
    assert_eq!(
        before["figures"]["loads"][0]["policies"][1]["policy"],
        "delay"
    );
    std::fs::remove_file(out.join("summary.md")).unwrap();
    c.mr_ok(&["bench", "trace-report", o]);
    // (The CSVs round times to the millisecond: counts compare exactly.)
    let (a, b) = (
        &json()["figures"]["loads"][0],
        &before["figures"]["loads"][0],
    );
    assert_eq!(a["comparisons"][0]["pairs"], b["comparisons"][0]["pairs"]);
    assert_eq!(a["policies"][0]["jobs"], b["policies"][0]["jobs"]);
    let again = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(again.contains("| delay | fifo | 1 | 4 |"), "{again}");
}

/// `--slices 2` of 2 rows: each slice a report of its own, and
/// `slices.md` with both side by side, made again by `trace-report`.
#[test]
fn slices_are_reported_apart_and_side_by_side() {
    let c = Cluster::start(
        "trace-slices",
        Opts {
            workers: 2,
            block_size: "256KiB",
            ..Opts::default()
        },
    );
    let trace = c.dir.join("slice.tsv");
    std::fs::write(&trace, TRACE).unwrap();
    let out = c.dir.join("out");
    let o = out.to_str().unwrap();
    #[rustfmt::skip]
    c.mr_ok(&[
        "bench", "trace", trace.to_str().unwrap(), "--traced-nodes", "2",
        "--byte-scale", "1", "--block-size", "256KiB", "--pool-blocks", "8",
        "--max-maps", "4", "--max-reduces", "2", "--schedulers", "fifo,delay",
        "--reps", "1", "--load", "0.5", "--jobs", "2", "--slices", "2", "--out", o,
        "--shuffle-scale", "0.5",
    ]);
    for d in ["slice-0", "slice-2"] {
        // Validated against the shuffle as scaled, and the header says so.
        assert_eq!(
            read_csv(&out.join(d).join("trace-jobs.csv")).len(),
            4,
            "{d}"
        );
        let summary = std::fs::read_to_string(out.join(d).join("summary.md")).unwrap();
        assert!(
            summary.contains("; shuffles x0.5 (--shuffle-scale)"),
            "{summary}"
        );
    }
    let md = std::fs::read_to_string(out.join("slices.md")).unwrap();
    assert!(md.contains("- slice-2: rows 2..4"), "{md}");
    assert!(
        md.contains("| delay:fifo |") && md.contains("no claim"),
        "{md}"
    );
    std::fs::remove_file(out.join("slices.md")).unwrap();
    c.mr_ok(&["bench", "trace-report", o]);
    assert!(out.join("slices.md").exists());
}

#[test]
fn a_bad_trace_or_load_is_refused_before_anything_runs() {
    let dir = std::env::temp_dir().join(format!("mr-trace-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("none.toml");
    let bad = dir.join("bad.tsv");
    std::fs::write(&bad, "job0\t1\t1\t5\t5\t5\njob1\tsoon\t1\t5\t5\t5\n").unwrap();
    let mr = env!("CARGO_BIN_EXE_mr");
    // A config that names no reachable cluster: the checks come first.
    std::fs::write(
        &cfg,
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:1\"\ndata_dir = \"/tmp/none-m\"\n\
         [dfs]\nblock_size = \"1MiB\"\nreplication = 1\n\
         [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:2\"\nrack = \"r1\"\nmap_slots = 1\n\
         reduce_slots = 1\ncache = \"1MiB\"\ndata_dir = \"/tmp/none-w\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let o = std::process::Command::new(mr)
            .arg("--config")
            .arg(&cfg)
            .args(args)
            .output()
            .unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let e = run(&[
        "bench",
        "trace",
        bad.to_str().unwrap(),
        "--traced-nodes",
        "6",
    ]);
    assert!(e.contains("line 2") && e.contains("submit time"), "{e}");
    let e = run(&["bench", "trace", bad.to_str().unwrap(), "--load", "0"]);
    assert!(e.contains("--load"), "{e}");
    let e = run(&[
        "bench",
        "trace",
        bad.to_str().unwrap(),
        "--pool-blocks",
        "2",
    ]);
    assert!(e.contains("--pool-blocks"), "{e}");
    // Comparisons are named among the policies, before anything runs.
    let e = run(&[
        "bench",
        "trace",
        bad.to_str().unwrap(),
        "--compare",
        "atlas:all",
    ]);
    assert!(e.contains("--compare") && e.contains("atlas"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// User jobs in the mix: with `--user-share 1` every row runs the job
/// program (examples/grep) on the row's blocks instead of the synthetic
/// job, under every policy, and the replay completes with their rows.
#[test]
fn a_replay_runs_user_job_programs_in_its_mix() {
    let c = Cluster::start(
        "trace-user",
        Opts {
            workers: 4,
            racks: 2,
            block_size: "256KiB",
            replication: 2,
            ..Opts::default()
        },
    );
    let trace = c.dir.join("slice.tsv");
    std::fs::write(&trace, TRACE).unwrap();
    let out = c.dir.join("out");
    let grep = std::path::Path::new(env!("CARGO_BIN_EXE_mr"))
        .parent()
        .unwrap()
        .join("example-grep");
    assert!(
        grep.exists(),
        "cargo build --workspace --bins builds {}",
        grep.display()
    );
    let user_job = format!("{}:pattern=[A-F]{{2}}", grep.display());
    c.mr_ok(&[
        "bench",
        "trace",
        trace.to_str().unwrap(),
        "--traced-nodes",
        "4",
        "--byte-scale",
        "1",
        "--block-size",
        "256KiB",
        "--pool-blocks",
        "8",
        "--max-maps",
        "4",
        "--max-reduces",
        "2",
        "--schedulers",
        "fifo,delay",
        "--reps",
        "1",
        "--load",
        "0.5",
        "--user-job",
        &user_job,
        "--user-share",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(read_csv(&out.join("trace-jobs.csv")).len(), 8);
    let jobs = c.json(&["job", "list", "--json"]);
    let names: Vec<&str> = jobs
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job"].as_str().unwrap())
        .collect();
    // The pool's generation, then the solo pass and two replays of 4 rows.
    assert_eq!(
        names.iter().filter(|n| **n == "example-grep").count(),
        12,
        "{names:?}"
    );
    assert!(!names.contains(&"swim"), "{names:?}");
}

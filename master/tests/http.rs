//! The REST API and `/metrics` against a real loopback cluster: auth,
//! every endpoint's shape (the same as the CLI's `--json` where they
//! overlap), job kill and the scheduler switch.

mod support;

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use support::{request, request_with, Cluster, Opts};

const LEVELS: [&str; 5] = [
    "cache_local",
    "node_local",
    "cache_rack_local",
    "rack_local",
    "off_rack",
];

/// Every protected route, as `(method, path)`.
const PROTECTED: &[(&str, &str)] = &[
    ("GET", "/api/workers"),
    ("GET", "/api/jobs"),
    ("GET", "/api/jobs/1"),
    ("POST", "/api/jobs/1/kill"),
    ("GET", "/api/files"),
    ("GET", "/api/file?path=/x"),
    ("GET", "/api/blocks/1"),
    ("GET", "/api/cache"),
    ("GET", "/api/fsck"),
    ("GET", "/api/scheduler"),
    ("PUT", "/api/scheduler"),
    ("POST", "/api/scheduler"),
    ("GET", "/api/nothing-here"),
    ("GET", "/metrics"),
];

/// A master with two configured workers and none running: enough for auth,
/// kill and the scheduler switch, and a submitted job stays queued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_kill_and_scheduler_switch() {
    let c = Cluster::start(
        "auth",
        Opts {
            workers: 2,
            start: 0,
            racks: 1,
        },
    )
    .await;
    auth_is_required(&c).await;
    the_ui_is_open_and_errors_are_json(&c).await;
    dead_workers_and_empty_metrics(&c).await;
    scheduler_switch(&c).await;
    kill_a_queued_job(&c).await;
}

/// Auth: every protected route refuses a missing or wrong token.
async fn auth_is_required(c: &Cluster) {
    for (method, path) in PROTECTED {
        let body = (*method != "GET").then_some("{}");
        let none = request(c.http, method, path, None, body).await;
        assert_eq!(
            none.status, 401,
            "{method} {path} without a token: {}",
            none.body
        );
        assert!(none.json()["error"].as_str().unwrap().contains("missing"));
        assert_eq!(none.header("www-authenticate"), Some("Bearer realm=\"mr\""));
        let wrong = request(c.http, method, path, Some("not-the-token"), body).await;
        assert_eq!(wrong.status, 401, "{method} {path} with a wrong token");
        assert!(wrong.json()["error"].as_str().unwrap().contains("wrong"));
        for auth in [
            c.token.clone(),
            format!("Basic {}", c.token),
            format!("bearer {}", c.token),
        ] {
            let r = request_with(c.http, method, path, Some(&auth), body).await;
            assert_eq!(r.status, 401, "{method} {path} with Authorization: {auth}");
        }
    }
}

async fn the_ui_is_open_and_errors_are_json(c: &Cluster) {
    // The UI's files are open: they hold no data.
    for (path, kind) in [
        ("/", "text/html"),
        ("/index.html", "text/html"),
        ("/app.js", "text/javascript"),
        ("/style.css", "text/css"),
    ] {
        let r = request(c.http, "GET", path, None, None).await;
        assert_eq!(r.status, 200, "{path}");
        assert!(
            r.header("content-type").unwrap().starts_with(kind),
            "{path}"
        );
    }
    let page = request(c.http, "GET", "/", None, None).await.body;
    assert!(page.contains("app.js") && page.contains("style.css"));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "no CDN"
    );
    assert_eq!(
        request(c.http, "GET", "/nowhere", None, None).await.status,
        404
    );
    let r = c.get("/api/nothing-here").await;
    assert_eq!(r.status, 404);
    assert!(r.json()["error"]
        .as_str()
        .unwrap()
        .contains("/api/nothing-here"));

    // --- errors are JSON with the right statuses
    assert_eq!(c.get("/api/jobs/7").await.status, 404);
    let r = c.get("/api/jobs/seven").await;
    assert_eq!(r.status, 400);
    assert!(r.json()["error"].as_str().unwrap().contains("seven"));
    assert_eq!(c.get("/api/blocks/12345").await.status, 404);
    assert_eq!(c.get("/api/file").await.status, 400);
    assert_eq!(c.get("/api/file?path=/none").await.status, 404);
    assert_eq!(c.get("/api/files?path=/none").await.status, 404);
    assert_eq!(c.get("/api/files?path=../x").await.status, 400);
    assert_eq!(c.api("/api/files").await, json!([]));
    let fsck = c.api("/api/fsck").await;
    assert_eq!(fsck["total_blocks"], 0);
    assert_eq!(fsck["missing"], json!([]));
    assert_eq!(c.send("POST", "/api/jobs/7/kill", None).await.status, 404);
    assert_eq!(c.get("/api/jobs/7/kill").await.status, 405);
}

/// Dead workers are shown, and the empty cluster's metrics parse.
async fn dead_workers_and_empty_metrics(c: &Cluster) {
    let w = c.api("/api/workers").await;
    assert_eq!(w["ui"], format!("http://{}/", c.http));
    assert!(w["workers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["state"] == "dead"));
    let cache = c.api("/api/cache").await;
    assert_eq!(cache["workers"].as_array().unwrap().len(), 2);
    assert_eq!(cache["used_bytes"], 0);
    let m = metrics(c).await;
    assert_eq!(
        m[&sample("mr_worker_up", &[("worker", "w1"), ("rack", "r1")])],
        0.0
    );
    assert_eq!(m[&sample("mr_jobs", &[("state", "queued")])], 0.0);
}

/// Scheduler: read, switch, refuse what is invalid.
async fn scheduler_switch(c: &Cluster) {
    let s = c.api("/api/scheduler").await;
    assert_eq!(s["name"], "fifo");
    assert_eq!(s["params"], json!({}));
    let available: Vec<&str> = s["available"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(available.contains(&"delay") && available.contains(&"lsap"));
    let r = c
        .send(
            "PUT",
            "/api/scheduler",
            Some(r#"{"name": "delay", "params": {"node_wait": 2, "rack_wait": "1"}}"#),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["name"], "delay");
    assert_eq!(
        r.json()["params"],
        json!({"node_wait": "2", "rack_wait": "1"})
    );
    assert_eq!(c.api("/api/scheduler").await["name"], "delay");
    // The gRPC side (what `mr admin scheduler show` reads) agrees.
    let shown = c.mr(&["admin", "scheduler", "show"]).await;
    assert!(
        shown.contains("delay") && shown.contains("node_wait=2"),
        "{shown}"
    );
    let r = c
        .send("POST", "/api/scheduler", Some(r#"{"name": "lsap"}"#))
        .await;
    assert_eq!((r.status, r.json()["name"].clone()), (200, json!("lsap")));
    for (body, why) in [
        (r#"{"name": "nope"}"#, "unknown scheduler"),
        (r#"{"name": "delay", "params": {"bogus": 1}}"#, "bogus"),
        (
            r#"{"name": "delay", "params": {"node_wait": [1]}}"#,
            "string or a number",
        ),
        (r#"{"nom": "fifo"}"#, "the body must be"),
        ("not json", "the body must be"),
    ] {
        let r = c.send("PUT", "/api/scheduler", Some(body)).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(
            r.json()["error"].as_str().unwrap().contains(why),
            "{body}: {}",
            r.body
        );
    }
    assert_eq!(
        c.api("/api/scheduler").await["name"],
        "lsap",
        "a refused switch changes nothing"
    );
}

/// Kill: a generator job stays queued without workers.
async fn kill_a_queued_job(c: &Cluster) {
    let mut conn = rpc::dfs::master_conn(&c.grpc.to_string(), &c.token).unwrap();
    let params = mrjob::JobParams {
        size: 1 << 20,
        maps: 3,
        ..Default::default()
    };
    let id = conn
        .submit_job(proto::SubmitJobRequest {
            job: "randomtextwriter".into(),
            output: "/gen/out".into(),
            params_json: mrjob::spec::params_to_json(&params),
            // A generator: the master plans its maps from this alone.
            plan_json: mrjob::JobPlan {
                input_format: mrjob::InputFormat::Generated,
                output_format: mrjob::OutputFormat::KeyLines,
                map_only: true,
                ..Default::default()
            }
            .to_json(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let j = c.api(&format!("/api/jobs/{id}")).await;
    assert_eq!(j["state"], "queued");
    assert_eq!(j["scheduler"], "lsap");
    assert_eq!(j["tasks"], json!([]));
    assert_eq!(
        metrics(c).await[&sample("mr_jobs", &[("state", "queued")])],
        1.0
    );
    let r = c.send("POST", &format!("/api/jobs/{id}/kill"), None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["state"], "killed");
    assert_eq!(r.json()["job_id"], id);
    assert_eq!(c.api(&format!("/api/jobs/{id}")).await["state"], "killed");
    assert_eq!(c.api("/api/jobs").await[0]["state"], "killed");
    // Killing a finished job is a no-op that answers its summary.
    let again = c.send("POST", &format!("/api/jobs/{id}/kill"), None).await;
    assert_eq!(
        (again.status, again.json()["state"].clone()),
        (200, json!("killed"))
    );
    let status = c
        .mr_json(&["job", "status", &id.to_string(), "--json"])
        .await;
    assert_eq!(status["state"], "killed");
    let m = metrics(c).await;
    assert_eq!(m[&sample("mr_jobs", &[("state", "killed")])], 1.0);
    assert_eq!(
        m[&sample("mr_scheduler_active", &[("policy", "lsap")])],
        1.0
    );
    // The lock's holds by site: the submission, the kill and the
    // job page all took it, each held a while and at most its total.
    for site in ["submit_job", "admit_job", "http_kill_job", "http_job"] {
        let count = m[&sample("mr_master_lock_holds_total", &[("site", site)])];
        let max = m[&sample("mr_master_lock_hold_max_seconds", &[("site", site)])];
        let total = m[&sample("mr_master_lock_hold_seconds_total", &[("site", site)])];
        assert!(count >= 1.0, "{site}: {count} holds");
        assert!(
            max > 0.0 && max <= total,
            "{site}: max {max}, total {total}"
        );
    }
}

/// Four workers on two racks, a file, a cache directive and two WordCount
/// runs: every endpoint against the CLI's `--json`, and the metrics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_match_the_cli_and_metrics_count_the_work() {
    let c = Cluster::start(
        "shapes",
        Opts {
            workers: 4,
            start: 4,
            racks: 2,
        },
    )
    .await;
    let (first, second) = run_two_wordcounts(&c).await;
    let maps = (first["maps"].as_u64().unwrap() + second["maps"].as_u64().unwrap()) as f64;
    let cli = workers_match_cluster_status(&c).await;
    jobs_match_job_status(&c, &first, &second).await;
    let stat = files_match_fs(&c).await;
    cache_counts_the_maps(&c, &stat, maps).await;
    metrics_count_the_work(&c, &first, &second, &cli, maps).await;
}

/// A file of several blocks and two WordCount runs over it, the second
/// after every block is cached; their `--json` summaries.
async fn run_two_wordcounts(c: &Cluster) -> (Value, Value) {
    c.put_text("/in/text", 20_000).await; // about 1 MiB: 4 blocks of 256 KiB
    let stat = c.mr_json(&["fs", "stat", "/in/text", "--json"]).await;
    let nblocks = stat["blocks"].as_array().unwrap().len();
    assert!(nblocks >= 3, "{stat}");

    let first = c
        .mr_json(&[
            "job",
            "run",
            "wordcount",
            "--input",
            "/in/text",
            "--output",
            "/out/wc1",
            "--reducers",
            "2",
            "--json",
        ])
        .await;
    assert_eq!(first["state"], "succeeded");
    // Cache every block, then read it again: some maps can hit.
    c.mr(&["cache", "add", "/in/text"]).await;
    c.wait_for("every block cached", Duration::from_secs(30), || async {
        let s = c.api("/api/file?path=/in/text").await;
        s["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| !b["cached_on"].as_array().unwrap().is_empty())
    })
    .await;
    let second = c
        .mr_json(&[
            "job",
            "run",
            "wordcount",
            "--input",
            "/in/text",
            "--output",
            "/out/wc2",
            "--reducers",
            "2",
            "--json",
        ])
        .await;
    assert_eq!(second["state"], "succeeded");
    (first, second)
}

/// /api/workers is `mr cluster status --json` plus a history.
async fn workers_match_cluster_status(c: &Cluster) -> Value {
    let cli = c.mr_json(&["cluster", "status", "--json"]).await;
    assert_eq!(cli["ui"], format!("http://{}/", c.http));
    let text = c.mr(&["cluster", "status"]).await;
    assert!(text.contains(&format!("http://{}/", c.http)), "{text}");
    c.wait_for("resource history", Duration::from_secs(10), || async {
        c.api("/api/workers").await["workers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| !w["history"]["t_ms"].as_array().unwrap().is_empty())
    })
    .await;
    let api = c.api("/api/workers").await;
    same_keys(&cli, &api, "cluster status");
    for k in ["master", "ui", "files", "blocks", "under_replicated_blocks"] {
        assert_eq!(cli[k], api[k], "{k}");
    }
    let (cw, aw) = (
        cli["workers"].as_array().unwrap(),
        api["workers"].as_array().unwrap(),
    );
    assert_eq!(cw.len(), 4);
    for (a, b) in cw.iter().zip(aw) {
        same_keys(a, b, "worker");
        same_keys(&a["resources"], &b["resources"], "resources");
        for k in [
            "name",
            "addr",
            "rack",
            "state",
            "map_slots",
            "reduce_slots",
            "cache_capacity_bytes",
        ] {
            assert_eq!(a[k], b[k], "worker {k}");
        }
        let h = &b["history"];
        let n = h["t_ms"].as_array().unwrap().len();
        for k in [
            "cpu_pct",
            "mem_used_bytes",
            "disk_read_bps",
            "disk_write_bps",
            "net_rx_bps",
            "net_tx_bps",
        ] {
            assert_eq!(h[k].as_array().unwrap().len(), n, "history {k}");
        }
    }
    cli
}

/// /api/jobs is `mr job list --json`; /api/jobs/{id} is `job status` plus tasks.
async fn jobs_match_job_status(c: &Cluster, first: &Value, second: &Value) {
    assert_eq!(
        c.api("/api/jobs").await,
        c.mr_json(&["job", "list", "--json"]).await
    );
    let names: BTreeSet<&str> = ["w1", "w2", "w3", "w4"].into();
    for summary in [first, second] {
        let id = summary["job_id"].as_u64().unwrap();
        let mut detail = c.api(&format!("/api/jobs/{id}")).await;
        let tasks = detail.as_object_mut().unwrap().remove("tasks").unwrap();
        assert_eq!(
            &detail, summary,
            "job {id} without its tasks is its summary"
        );
        let tasks = tasks.as_array().unwrap();
        let ok: Vec<&Value> = tasks.iter().filter(|t| t["state"] == "succeeded").collect();
        let kinds = |k: &str| ok.iter().filter(|t| t["kind"] == k).count() as u64;
        assert_eq!(kinds("map"), summary["maps"].as_u64().unwrap());
        assert_eq!(kinds("reduce"), summary["reduces"].as_u64().unwrap());
        let mut loc: BTreeMap<&str, u64> = BTreeMap::new();
        for t in &ok {
            assert!(names.contains(t["node"].as_str().unwrap()), "{t}");
            assert!(
                t["start_ms"].as_u64().unwrap() <= t["end_ms"].as_u64().unwrap(),
                "{t}"
            );
            for k in [
                "cache",
                "local",
                "remote_rack",
                "remote_off_rack",
                "shuffle",
                "output",
            ] {
                assert!(t["bytes"][k].is_u64(), "{t}");
            }
            if t["kind"] == "map" {
                let l = t["locality"].as_str().unwrap();
                assert!(LEVELS.contains(&l), "{t}");
                *loc.entry(l).or_default() += 1;
            }
        }
        for l in LEVELS {
            assert_eq!(
                loc.get(l).copied().unwrap_or(0),
                summary["locality"][l].as_u64().unwrap()
            );
        }
    }
}

/// Files, a file, a block.
async fn files_match_fs(c: &Cluster) -> Value {
    for path in ["/", "/in", "/out", "/out/wc1"] {
        let q = format!("/api/files?path={path}");
        assert_eq!(
            c.api(&q).await,
            c.mr_json(&["fs", "ls", path, "--json"]).await,
            "{q}"
        );
    }
    let stat = c.mr_json(&["fs", "stat", "/in/text", "--json"]).await;
    assert_eq!(c.api("/api/file?path=/in/text").await, stat);
    for b in stat["blocks"].as_array().unwrap() {
        let v = c.api(&format!("/api/blocks/{}", b["id"])).await;
        for k in ["id", "len", "crc32c", "replicas", "cached_on"] {
            assert_eq!(v[k], b[k], "block {k}");
        }
        assert_eq!(v["file"], "/in/text");
        assert_eq!(v["replication"], 2);
        assert_eq!(v["replicas"].as_array().unwrap().len(), 2);
    }
    stat
}

/// The cache: what the cache reports said, and the maps' outcomes.
async fn cache_counts_the_maps(c: &Cluster, stat: &Value, maps: f64) {
    let cache = c.api("/api/cache").await;
    let ws = cache["workers"].as_array().unwrap();
    let cached: u64 = ws
        .iter()
        .map(|w| w["cached_blocks"].as_u64().unwrap())
        .sum();
    let listed: u64 = stat["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["cached_on"].as_array().unwrap().len() as u64)
        .sum();
    assert_eq!(cached, listed);
    assert!(cache["used_bytes"].as_u64().unwrap() > 0);
    let outcomes: u64 = ws
        .iter()
        .map(|w| w["hits"].as_u64().unwrap() + w["misses"].as_u64().unwrap())
        .sum();
    assert_eq!(
        outcomes as f64, maps,
        "every WordCount map read its block once"
    );
}

/// /metrics.
async fn metrics_count_the_work(
    c: &Cluster,
    first: &Value,
    second: &Value,
    cli: &Value,
    maps: f64,
) {
    let r = c.get("/metrics").await;
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let m = metrics(c).await;
    for w in ["w1", "w2", "w3", "w4"] {
        let rack = if w == "w1" || w == "w3" { "r1" } else { "r2" };
        let l = [("worker", w), ("rack", rack)];
        assert_eq!(m[&sample("mr_worker_up", &l)], 1.0);
        assert!(m[&sample("mr_worker_heartbeat_age_seconds", &l)] < 5.0);
        assert!(m[&sample("mr_worker_memory_total_bytes", &l)] > 0.0);
        assert_eq!(
            m[&sample("mr_worker_cache_capacity_bytes", &l)],
            (8u64 << 20) as f64
        );
        for k in [
            "mr_worker_cpu_percent",
            "mr_worker_load1",
            "mr_worker_disk_read_bytes_per_second",
            "mr_worker_disk_write_bytes_per_second",
            "mr_worker_network_receive_bytes_per_second",
            "mr_worker_network_transmit_bytes_per_second",
            "mr_worker_cache_used_bytes",
            "mr_worker_blocks",
        ] {
            assert!(m.contains_key(&sample(k, &l)), "{k}");
        }
    }
    let sum = |prefix: &str| -> f64 {
        m.iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
            .sum()
    };
    assert_eq!(sum("mr_map_tasks_total{"), maps);
    assert_eq!(
        sum("mr_worker_cache_hits_total{") + sum("mr_worker_cache_misses_total{"),
        maps
    );
    let cache_local = first["locality"]["cache_local"].as_u64().unwrap()
        + second["locality"]["cache_local"].as_u64().unwrap();
    assert_eq!(sum("mr_worker_cache_hits_total{"), cache_local as f64);
    assert_eq!(m[&sample("mr_jobs", &[("state", "succeeded")])], 2.0);
    assert_eq!(m["mr_job_exec_time_seconds_count{scheduler=\"fifo\"}"], 2.0);
    assert_eq!(
        m["mr_job_exec_time_seconds_bucket{scheduler=\"fifo\",le=\"+Inf\"}"],
        2.0
    );
    let exec = first["exec_time_s"].as_f64().unwrap() + second["exec_time_s"].as_f64().unwrap();
    assert!((m["mr_job_exec_time_seconds_sum{scheduler=\"fifo\"}"] - exec).abs() < 1e-6);
    assert!(m["mr_scheduler_decision_seconds_count{policy=\"fifo\"}"] > 0.0);
    assert_eq!(m["mr_dfs_blocks"], cli["blocks"].as_f64().unwrap());
}

/// The same top-level keys, but for the ones only the API adds.
fn same_keys(cli: &Value, api: &Value, what: &str) {
    let keys = |v: &Value| -> BTreeSet<String> {
        v.as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "history")
            .cloned()
            .collect()
    };
    assert_eq!(
        keys(cli),
        keys(api),
        "{what}: the API and the CLI have the same fields"
    );
}

fn sample(name: &str, labels: &[(&str, &str)]) -> String {
    let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{name}{{{}}}", l.join(","))
}

/// `/metrics` as `series → value`, checking the text format on the way:
/// every family declared once with HELP and TYPE before its samples, every
/// sample of a declared family, histogram buckets cumulative.
async fn metrics(c: &Cluster) -> BTreeMap<String, f64> {
    let r = c.get("/metrics").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut helped: BTreeSet<String> = BTreeSet::new();
    let mut out = BTreeMap::new();
    let mut last_bucket: Option<(String, f64)> = None;
    for line in r.body.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap().to_string();
            assert!(helped.insert(name), "HELP twice: {line}");
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut p = rest.split(' ');
            let (name, kind) = (p.next().unwrap(), p.next().unwrap());
            assert!(["gauge", "counter", "histogram"].contains(&kind), "{line}");
            assert!(helped.contains(name), "TYPE before HELP: {line}");
            assert!(types.insert(name.into(), kind.into()).is_none(), "{line}");
        } else {
            let (series, value) = line.rsplit_once(' ').unwrap();
            let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {line}"));
            let name = series.split('{').next().unwrap();
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| {
                    name.strip_suffix(s)
                        .filter(|f| types.get(*f).is_some_and(|t| t == "histogram"))
                })
                .unwrap_or(name);
            assert!(
                types.contains_key(family),
                "sample of an undeclared family: {line}"
            );
            if name.ends_with("_bucket") {
                let key = series.split(",le=").next().unwrap().to_string();
                if let Some((k, prev)) = &last_bucket {
                    if *k == key {
                        assert!(value >= *prev, "buckets not cumulative: {line}");
                    }
                }
                last_bucket = Some((key, value));
            }
            assert!(
                out.insert(series.to_string(), value).is_none(),
                "twice: {line}"
            );
        }
    }
    out
}

/// A browser keeps its connection open between polls: the master still
/// stops at once, closing it, and flushes its edit log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_master_stops_with_a_browser_connected() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut c = Cluster::start(
        "stop",
        Opts {
            workers: 1,
            start: 0,
            racks: 1,
        },
    )
    .await;
    let mut s = tokio::net::TcpStream::connect(c.http).await.unwrap();
    let req = format!(
        "GET /api/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n",
        c.token
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = s.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    // The connection stays open (keep-alive) while the master stops.
    let (r, took) = c.stop_master().await;
    r.unwrap();
    assert!(took < Duration::from_secs(3), "shutdown took {took:?}");
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
        .await
        .expect("the connection is closed")
        .unwrap_or(0);
    assert_eq!(n, 0, "closed, not answered");
    assert!(refused(c.http).await, "nothing listens any more");
}

/// True when a connection to `addr` is refused.
async fn refused(addr: std::net::SocketAddr) -> bool {
    tokio::net::TcpStream::connect(addr).await.is_err()
}

//! The web UI in a real browser: headless Chromium loads the page from a
//! live loopback cluster that has run a job and is running another, and
//! the test checks what the page's JavaScript drew: the workers by rack,
//! the jobs' progress, the task timeline, and what a `reader` gets instead
//! of others' jobs: their summaries, and a refusal on a job's page.
//! Screenshots are kept under `target/ui-test/`. Skipped, saying why,
//! where Chromium is missing or
//! cannot start (`scripts/install-deps.sh` installs Debian's `chromium`);
//! a failure under `CI=true`.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use support::{Cluster, Opts};
use tokio::process::Command;

/// Virtual time the page gets to fetch and draw: several polls.
const BUDGET_MS: u64 = 5000;

/// The browser to drive: `MR_CHROMIUM`, else the first of the usual names
/// that answers `--version`.
async fn chromium() -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = match std::env::var_os("MR_CHROMIUM") {
        Some(p) => vec![p.into()],
        None => [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ]
        .iter()
        .map(PathBuf::from)
        .collect(),
    };
    for c in &candidates {
        let ok = Command::new(c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .is_ok_and(|s| s.success());
        if ok {
            return Ok(c.clone());
        }
    }
    Err(format!(
        "none of {candidates:?} runs; install Debian's `chromium` (scripts/install-deps.sh does, as root) or set MR_CHROMIUM"
    ))
}

/// Runs headless Chromium on `url` with `extra` flags; returns stdout.
async fn browse(bin: &Path, profile: &Path, url: &str, extra: &[String]) -> String {
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox", // as root in CI containers
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        "--window-size=1400,1100",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--virtual-time-budget={BUDGET_MS}"))
    .args(extra)
    .arg(url)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(90), cmd.output())
        .await
        .expect("chromium finishes within 90 s")
        .unwrap();
    assert!(
        out.status.success(),
        "chromium {url} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The browser, its profile, the UI's address and where pages are kept:
/// what every page check opens pages with.
struct Ui {
    bin: PathBuf,
    profile: PathBuf,
    base: String,
    artifacts: PathBuf,
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_shows_workers_jobs_and_the_task_timeline() {
    let bin = match chromium().await {
        Ok(b) => b,
        Err(why) => {
            // Under CI a skipped test is a failed test.
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "the browser test cannot run under CI=true: {why}"
            );
            eprintln!("SKIPPED the browser test: {why}");
            return;
        }
    };
    let c = Cluster::start(
        "browser",
        Opts {
            workers: 4,
            start: 4,
            racks: 2,
        },
    )
    .await;
    c.put_text("/in/text", 20_000).await;
    let done = c
        .mr_json(&[
            "job",
            "run",
            "wordcount",
            "--input",
            "/in/text",
            "--output",
            "/out/wc",
            "--reducers",
            "2",
            "--json",
        ])
        .await;
    assert_eq!(done["state"], "succeeded");
    let (maps, reduces) = (
        done["maps"].as_u64().unwrap(),
        done["reduces"].as_u64().unwrap(),
    );
    // A second job, running (or done) while the page loads.
    let second = c
        .mr(&[
            "job",
            "submit",
            "wordcount",
            "--input",
            "/in/text",
            "--output",
            "/out/wc2",
            "--reducers",
            "2",
        ])
        .await;
    let second: u64 = second.trim().parse().unwrap();

    let profile = c.dir.join("chromium-profile");
    let base = format!("http://{}/", c.http);
    let artifacts = Cluster::artifacts();
    let ui = Ui {
        bin,
        profile,
        base,
        artifacts,
    };
    login_form_without_a_token(&ui).await;
    overview(&c, &ui, (maps, reduces), second).await;
    job_page(&c, &ui, &done).await;
    reader_sees_summaries(&c, &ui, maps).await;
    screenshots(&c, &ui).await;
}

/// Without a token: the login form, nothing fetched.
async fn login_form_without_a_token(ui: &Ui) {
    let Ui {
        bin, profile, base, ..
    } = ui;
    let dom = browse(bin, profile, base, &["--dump-dom".into()]).await;
    assert!(
        dom.contains("<section id=\"login\">"),
        "the login form shows:\n{dom}"
    );
    assert!(
        !dom.contains("data-loaded="),
        "nothing loads without a token"
    );
}

/// The overview: racks, workers, both jobs with progress.
async fn overview(c: &Cluster, ui: &Ui, (maps, reduces): (u64, u64), second: u64) {
    let Ui {
        bin,
        profile,
        base,
        artifacts,
    } = ui;
    let url = format!("{base}#/?token={}", c.token);
    let dom = browse(bin, profile, &url, &["--dump-dom".into()]).await;
    std::fs::write(artifacts.join("overview.html"), &dom).unwrap();
    assert!(
        dom.contains("data-loaded=\"overview\""),
        "the page did not render:\n{dom}"
    );
    for rack in ["r1", "r2"] {
        assert!(
            dom.contains(&format!("data-rack=\"{rack}\"")),
            "rack {rack}"
        );
    }
    for w in ["w1", "w2", "w3", "w4"] {
        assert!(
            dom.contains(&format!("class=\"worker alive\" data-name=\"{w}\"")),
            "worker {w}"
        );
    }
    assert!(
        count(&dom, "<polyline") >= 4 * 4,
        "sparklines for every worker"
    );
    assert!(
        dom.contains("id=\"job-row-1\" data-state=\"succeeded\""),
        "job 1's row"
    );
    assert!(
        dom.contains(&format!("maps {maps}/{maps}")),
        "job 1's progress"
    );
    assert!(
        dom.contains(&format!("reduces {reduces}/{reduces}")),
        "job 1's progress"
    );
    assert!(
        dom.contains(&format!("id=\"job-row-{second}\"")),
        "the second job's row"
    );
    assert!(dom.contains("data-active=\"fifo\""), "the active scheduler");
    assert!(!dom.contains("cannot reach the master"));
}

/// The job page: summary, locality mix, one timeline row per worker.
async fn job_page(c: &Cluster, ui: &Ui, done: &serde_json::Value) {
    let Ui {
        bin,
        profile,
        base,
        artifacts,
    } = ui;
    let (maps, reduces) = (
        done["maps"].as_u64().unwrap(),
        done["reduces"].as_u64().unwrap(),
    );
    let url = format!("{base}#/job/1?token={}", c.token);
    let dom = browse(bin, profile, &url, &["--dump-dom".into()]).await;
    std::fs::write(artifacts.join("job.html"), &dom).unwrap();
    assert!(
        dom.contains("data-loaded=\"job\""),
        "the job page did not render:\n{dom}"
    );
    assert!(dom.contains("id=\"timeline-svg\""));
    for w in ["w1", "w2", "w3", "w4"] {
        assert!(dom.contains(&format!(">{w}</text>")), "timeline row {w}");
    }
    let map_rects = count(&dom, "class=\"task map l-");
    let reduce_rects = count(&dom, "class=\"task reduce l-reduce");
    assert!(
        map_rects >= maps as usize,
        "{map_rects} map rectangles for {maps} maps"
    );
    assert!(
        reduce_rects >= reduces as usize,
        "{reduce_rects} reduce rectangles"
    );
    let levels = [
        "cache_local",
        "node_local",
        "cache_rack_local",
        "rack_local",
        "off_rack",
    ];
    let coloured: usize = levels
        .iter()
        .map(|l| count(&dom, &format!("class=\"task map l-{l} \"")))
        .sum();
    assert_eq!(
        coloured, maps as usize,
        "every map coloured by its locality level"
    );
    for l in levels {
        let n = done["locality"][l].as_u64().unwrap();
        assert!(
            dom.contains(&format!("{l}: <b>{n}</b>")),
            "locality mix {l} = {n}"
        );
    }
    assert!(dom.contains(&format!("maps {maps}/{maps}")));
}

/// A reader: every job (all the admin's) in summary, with neither a
/// link nor a kill button; a job's page shows the refusal and the summary.
async fn reader_sees_summaries(c: &Cluster, ui: &Ui, maps: u64) {
    let Ui {
        bin,
        profile,
        base,
        artifacts,
    } = ui;
    let url = format!("{base}#/?token={}", c.reader_token);
    let dom = browse(bin, profile, &url, &["--dump-dom".into()]).await;
    std::fs::write(artifacts.join("overview-reader.html"), &dom).unwrap();
    assert!(
        dom.contains("data-loaded=\"overview\""),
        "the reader's page did not render:\n{dom}"
    );
    assert!(
        dom.contains("id=\"job-row-1\" data-state=\"succeeded\" data-view=\"summary\""),
        "job 1 in summary"
    );
    assert!(
        !dom.contains("href=\"#/job/1\""),
        "no link to another's job"
    );
    assert_eq!(count(&dom, "class=\"kill\""), 0, "no kill button");
    assert!(
        dom.contains(&format!("maps {maps}/{maps}")),
        "the summary's progress"
    );
    assert!(!dom.contains("/out/wc"), "no output path");
    let url = format!("{base}#/job/1?token={}", c.reader_token);
    let dom = browse(bin, profile, &url, &["--dump-dom".into()]).await;
    std::fs::write(artifacts.join("job-reader.html"), &dom).unwrap();
    assert!(
        dom.contains("data-loaded=\"job\""),
        "the reader's job page did not render:\n{dom}"
    );
    assert!(
        dom.contains("id=\"job-refused\"") && dom.contains("permission denied: job 1 belongs to"),
        "the refusal:\n{dom}"
    );
    assert!(!dom.contains("id=\"timeline-svg\""), "no timeline");
    assert!(
        dom.contains(&format!("maps {maps}/{maps}")),
        "the summary's progress"
    );
}

/// Screenshots, kept as test artifacts.
async fn screenshots(c: &Cluster, ui: &Ui) {
    let Ui {
        bin,
        profile,
        base,
        artifacts,
    } = ui;
    for (name, url) in [
        ("overview.png", format!("{base}#/?token={}", c.token)),
        ("job.png", format!("{base}#/job/1?token={}", c.token)),
    ] {
        let png = artifacts.join(name);
        let _ = std::fs::remove_file(&png);
        browse(
            bin,
            profile,
            &url,
            &[format!("--screenshot={}", png.display())],
        )
        .await;
        let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "{} is {size} bytes", png.display());
        eprintln!("screenshot: {}", png.display());
    }
}

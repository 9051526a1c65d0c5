//! TLS on every port: a cluster whose certificates `mr config init --tls`
//! made runs puts and jobs end to end, and refuses whoever does not hold a
//! certificate of its CA. (That the token never crosses the wire in clear
//! is shown on a packet capture by scripts/tls-test.sh.)

mod support;

use rpc::tls::rustls::pki_types::ServerName;
use rpc::tls::tokio_rustls::TlsConnector;
use std::path::Path;
use support::{write_file, Cluster, Opts};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn opts() -> Opts {
    Opts {
        workers: 3,
        racks: 2,
        block_size: "256KiB",
        replication: 2,
        ..Opts::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The cluster file without its `[tls]` section (`mr config init` appends it).
fn without_tls(config: &Path) -> String {
    let text = std::fs::read_to_string(config).unwrap();
    let at = text.find("\n[tls]").expect("a [tls] section");
    text[..at].to_string() + "\n"
}

/// Runs `mr` with another cluster file; returns (success, stderr).
fn mr_with(config: &Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// GET over HTTPS trusting only `ca`: the response's text, or the error.
async fn https_get(addr: &str, ca: &[u8], path: &str, token: &str) -> std::io::Result<String> {
    let cfg = rpc::tls::https_client(ca).map_err(std::io::Error::other)?;
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    let host = addr.rsplit_once(':').unwrap().0.to_string();
    let name = ServerName::try_from(host).map_err(std::io::Error::other)?;
    let mut s = TlsConnector::from(cfg).connect(name, tcp).await?;
    s.write_all(
        format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
             Connection: close\r\n\r\n"
        )
        .as_bytes(),
    )
    .await?;
    let mut out = Vec::new();
    // The server closes after the response; what came before counts.
    let _ = s.read_to_end(&mut out).await;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The same GET in clear text: what a TLS-only port must not answer.
async fn http_get(addr: &str, path: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _ = s
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_tls_cluster_runs_puts_and_jobs_end_to_end() {
    let c = Cluster::start_tls("tls-e2e", opts());
    let text = std::fs::read_to_string(&c.config).unwrap();
    assert!(text.contains("[tls]"), "{text}");
    // A put (client to master, client to two workers per block) and a get.
    let data = support::random_bytes(700 << 10, 3);
    let local = write_file(&c.dir, "blob", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/in/blob"]);
    let back = c.dir.join("back");
    c.mr_ok(&["fs", "get", "/in/blob", back.to_str().unwrap()]);
    assert_eq!(std::fs::read(&back).unwrap(), data);
    // A job: workers to the master, maps reading blocks, reducers fetching
    // map output from the other workers, output replicated worker to worker.
    let words = "alpha beta gamma\n".repeat(40_000);
    let local = write_file(&c.dir, "words", words.as_bytes());
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/wc-in/words"]);
    let v = c.json(&[
        "job",
        "run",
        "wordcount",
        "--input",
        "/wc-in",
        "--output",
        "/wc",
        "--reducers",
        "3",
        "--json",
    ]);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert!(v["maps"].as_u64().unwrap() >= 2, "{v}");
    let mut counts = Vec::new();
    for e in c.json(&["fs", "ls", "/wc", "--json"]).as_array().unwrap() {
        let p = e["path"].as_str().unwrap();
        if p.rsplit('/').next().unwrap().starts_with("part-") {
            counts.push(c.mr_ok(&["fs", "cat", p]));
        }
    }
    let mut lines: Vec<String> = counts.concat().lines().map(str::to_string).collect();
    lines.sort();
    assert_eq!(lines, ["alpha\t40000", "beta\t40000", "gamma\t40000"]);
    // Every call of every service still needs the token, over TLS too.
    let probe = c.mr_ok(&["admin", "auth-probe"]);
    assert!(probe.contains("every call refused"), "{probe}");
    // The web UI answers HTTPS with the CA, and only that.
    let http = c.http.clone().unwrap();
    let ca = std::fs::read(c.dir.join("tls/ca.pem")).unwrap();
    let rt = runtime();
    let page = rt
        .block_on(https_get(&http, &ca, "/api/workers", &c.token))
        .unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("\"w1\""), "{page}");
    let clear = rt.block_on(http_get(&http, "/api/workers"));
    assert!(
        !clear.starts_with("HTTP/"),
        "answered in clear text: {clear}"
    );
    let status = c.json(&["cluster", "status", "--json"]);
    assert!(status.to_string().contains("https://"), "{status}");
}

#[test]
fn clients_without_the_cluster_ca_are_refused() {
    let c = Cluster::start_tls("tls-refuse", opts());
    // (1) In clear text: no [tls], so a plain gRPC client.
    let plain = c.dir.join("plain.toml");
    std::fs::write(&plain, without_tls(&c.config)).unwrap();
    let (ok, err) = mr_with(&plain, &["cluster", "status"]);
    assert!(!ok, "a clear-text client was served");
    assert!(!err.is_empty());
    // (2) Another cluster's CA: its own certificates, which the servers do
    // not chain to and which the servers do not trust.
    let other = c.dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let other_cfg = other.join("cluster.toml");
    std::fs::write(&other_cfg, without_tls(&c.config)).unwrap();
    let (ok, err) = mr_with(&other_cfg, &["config", "init", "--tls"]);
    assert!(ok, "{err}");
    assert_ne!(
        std::fs::read(other.join("tls/ca.pem")).unwrap(),
        std::fs::read(c.dir.join("tls/ca.pem")).unwrap()
    );
    let (ok, err) = mr_with(&other_cfg, &["cluster", "status"]);
    assert!(!ok, "a client of another CA was served");
    assert!(
        err.to_lowercase().contains("certificate") || err.contains("unavailable"),
        "{err}"
    );
    let (ok, _) = mr_with(&other_cfg, &["fs", "ls", "/"]);
    assert!(!ok);
    // (3) The right CA but no certificate of its own: gRPC is mutual TLS.
    let rt = runtime();
    let ca = std::fs::read(c.dir.join("tls/ca.pem")).unwrap();
    let master = std::fs::read_to_string(&c.config).unwrap();
    let addr = master
        .lines()
        .find_map(|l| l.strip_prefix("addr = \""))
        .unwrap()
        .trim_end_matches('"')
        .to_string();
    let r = rt.block_on(async {
        let tls = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(&ca));
        let ch = rpc::dfs::endpoint(&addr, Some(&tls))?
            .connect_timeout(std::time::Duration::from_secs(5))
            .connect_lazy();
        let mut m = rpc::dfs::master_conn_on(ch, &c.token)?;
        m.cluster_status(proto::Empty {}).await?;
        Ok::<_, rpc::dfs::DfsError>(())
    });
    assert!(r.is_err(), "a client without a certificate was served");
    // (4) The web UI with another CA: the handshake fails.
    let other_ca = std::fs::read(other.join("tls/ca.pem")).unwrap();
    let r = rt.block_on(https_get(
        c.http.as_deref().unwrap(),
        &other_ca,
        "/api/workers",
        &c.token,
    ));
    assert!(r.is_err(), "the web UI was trusted under another CA: {r:?}");
    // And the cluster still serves its own clients after all that.
    c.mr_ok(&["cluster", "status"]);
}

//! The master's own account of where its time goes, read from its
//! Prometheus `/metrics` (the cluster token as a bearer token, as the REST
//! API wants it): how long each site held the coordinator's lock
//! (`mr_master_lock_hold_*{site}`) and how long the policy took per
//! decision (`mr_scheduler_decision_seconds`). A plain HTTP/1.1 GET: the
//! CLI has no HTTP client, and one request does not need one.

use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One lock site's figures since the master started.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Site {
    pub max_s: f64,
    pub total_s: f64,
    pub count: f64,
}

/// What one scrape says.
#[derive(Debug, Clone, Default)]
pub struct Scrape {
    pub sites: BTreeMap<String, Site>,
    /// Per policy: the sum of decision seconds and the number of decisions.
    pub decisions: BTreeMap<String, (f64, f64)>,
}

impl Scrape {
    /// Decisions and their mean time, milliseconds, between `before` and
    /// this scrape, over every policy.
    pub fn decisions_since(&self, before: &Scrape) -> (u64, Option<f64>) {
        let sum = |s: &Scrape| {
            s.decisions
                .values()
                .fold((0.0, 0.0), |a, &(t, n)| (a.0 + t, a.1 + n))
        };
        let (t1, n1) = sum(self);
        let (t0, n0) = sum(before);
        let n = (n1 - n0).max(0.0);
        let mean = (n > 0.0).then(|| (t1 - t0) / n * 1e3);
        (n as u64, mean)
    }

    /// The `n` sites that held the lock longest at once, milliseconds.
    pub fn top_max_ms(&self, n: usize) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = (self.sites.iter())
            .map(|(k, s)| (k.clone(), s.max_s * 1e3))
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }

    /// Per site, seconds held and holds between `before` and this scrape,
    /// longest total first.
    pub fn held_since(&self, before: &Scrape) -> Vec<(String, f64, u64)> {
        let mut v: Vec<(String, f64, u64)> = (self.sites.iter())
            .map(|(k, s)| {
                let b = before.sites.get(k).copied().unwrap_or_default();
                (
                    k.clone(),
                    (s.total_s - b.total_s).max(0.0),
                    (s.count - b.count).max(0.0) as u64,
                )
            })
            .filter(|(_, _, n)| *n > 0)
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// GETs `/metrics` from `http_addr` and parses the families above.
pub async fn scrape(http_addr: &str, token: &str) -> anyhow::Result<Scrape> {
    let body = tokio::time::timeout(Duration::from_secs(30), get(http_addr, "/metrics", token))
        .await
        .with_context(|| format!("GET http://{http_addr}/metrics timed out"))??;
    Ok(parse(&body))
}

async fn get(addr: &str, path: &str, token: &str) -> anyhow::Result<String> {
    let mut s = tokio::net::TcpStream::connect(addr)
        .await
        .with_context(|| format!("cannot connect to the master's http_addr {addr}"))?;
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await?;
    let text = String::from_utf8_lossy(&buf);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .context("the master's HTTP answer has no header end")?;
    let status = head.lines().next().unwrap_or("");
    if !status.contains(" 200 ") {
        bail!("GET {path} from the master: {status}");
    }
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    Ok(if chunked {
        dechunk(body)
    } else {
        body.to_string()
    })
}

/// The body of a `Transfer-Encoding: chunked` answer.
fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// `name{label="value"} number` lines of the families we read.
pub fn parse(text: &str) -> Scrape {
    let mut s = Scrape::default();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(v) = value.parse::<f64>() else {
            continue;
        };
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => (n, l.trim_end_matches('}')),
            None => (series, ""),
        };
        let label = |k: &str| {
            let pat = format!("{k}=\"");
            let at = labels.find(&pat)? + pat.len();
            let end = labels[at..].find('"')?;
            Some(labels[at..at + end].to_string())
        };
        match name {
            "mr_master_lock_hold_max_seconds" => {
                if let Some(site) = label("site") {
                    s.sites.entry(site).or_default().max_s = v;
                }
            }
            "mr_master_lock_hold_seconds_total" => {
                if let Some(site) = label("site") {
                    s.sites.entry(site).or_default().total_s = v;
                }
            }
            "mr_master_lock_holds_total" => {
                if let Some(site) = label("site") {
                    s.sites.entry(site).or_default().count = v;
                }
            }
            "mr_scheduler_decision_seconds_sum" => {
                if let Some(p) = label("policy") {
                    s.decisions.entry(p).or_default().0 = v;
                }
            }
            "mr_scheduler_decision_seconds_count" => {
                if let Some(p) = label("policy") {
                    s.decisions.entry(p).or_default().1 = v;
                }
            }
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_sites_and_decisions_are_read_and_differenced() {
        let before = parse(
            "# HELP x\nmr_master_lock_hold_max_seconds{site=\"heartbeat\"} 0.001\n\
             mr_master_lock_hold_seconds_total{site=\"heartbeat\"} 1\n\
             mr_master_lock_holds_total{site=\"heartbeat\"} 100\n\
             mr_scheduler_decision_seconds_sum{policy=\"fifo\"} 0.5\n\
             mr_scheduler_decision_seconds_count{policy=\"fifo\"} 1000\n",
        );
        let after = parse(
            "mr_master_lock_hold_max_seconds{site=\"heartbeat\"} 0.004\n\
             mr_master_lock_hold_max_seconds{site=\"register\"} 0.002\n\
             mr_master_lock_hold_seconds_total{site=\"heartbeat\"} 3\n\
             mr_master_lock_holds_total{site=\"heartbeat\"} 300\n\
             mr_master_lock_holds_total{site=\"register\"} 5\n\
             mr_scheduler_decision_seconds_bucket{policy=\"fifo\",le=\"0.001\"} 3000\n\
             mr_scheduler_decision_seconds_sum{policy=\"fifo\"} 2.5\n\
             mr_scheduler_decision_seconds_count{policy=\"fifo\"} 3000\n",
        );
        assert_eq!(after.top_max_ms(1), vec![("heartbeat".to_string(), 4.0)]);
        let (n, mean) = after.decisions_since(&before);
        assert_eq!(n, 2000);
        assert!((mean.unwrap() - 1.0).abs() < 1e-9);
        let held = after.held_since(&before);
        assert_eq!(held[0].0, "heartbeat");
        assert!((held[0].1 - 2.0).abs() < 1e-9);
        assert_eq!(held[0].2, 200);
        assert_eq!(dechunk("5\r\nhello\r\n3\r\n th\r\n0\r\n\r\n"), "hello th");
    }
}

//! A plain-HTTP health endpoint for an orchestrator's probes (Kubernetes
//! `httpGet`, `--health-addr`).
//!
//! Why a second port: the worker's image is `FROM scratch` (no shell, no
//! curl for an exec probe), its gRPC port asks every caller for the token
//! (and, with `[tls]`, a client certificate), and a TCP probe only proves
//! that the kernel accepts connections, not that the process answers.
//!
//! - `GET /healthz`: 200 while the worker's runtime answers (liveness).
//! - `GET /readyz`: 200 once the worker has registered with the master,
//!   503 before, while draining, and while the master says it holds
//!   replicas no one else has enough of (it is being decommissioned and not
//!   yet done, or holds the only counted replica of a block that wants
//!   more: see `edge::safety::Safety`). That last one is what makes a Kubernetes
//!   PodDisruptionBudget wait: an unready worker uses up the budget, so no
//!   other worker is evicted until its blocks are safe.
//!
//! Neither says anything a stranger could use, so neither asks for the
//! token. Anything else is a 404.

use crate::edge::master_client::MasterLink;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A probe that connects and sends nothing is dropped after this long: a
/// kubelet sends its request at once, and no probe may hold a task.
const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// Answers probes on `listener` until the task is aborted.
pub async fn serve(link: Arc<MasterLink>, listener: TcpListener) {
    loop {
        let Ok((conn, _)) = listener.accept().await else {
            continue;
        };
        let link = link.clone();
        tokio::spawn(async move {
            if let Err(e) = answer(&link, conn).await {
                tracing::debug!("health probe: {e}");
            }
        });
    }
}

async fn answer(link: &MasterLink, mut conn: TcpStream) -> std::io::Result<()> {
    let mut buf = [0u8; 1024];
    let n = tokio::time::timeout(READ_TIMEOUT, conn.read(&mut buf))
        .await
        .map_err(|_| std::io::Error::other("no request in time"))??;
    let head = String::from_utf8_lossy(&buf[..n]);
    let path = head.split_whitespace().nth(1).unwrap_or("");
    let registered = link.epoch() != 0;
    let draining = link.is_draining();
    let holding = link.safety().unsafe_to_stop();
    let (status, body) = match (head.starts_with("GET "), path) {
        (true, "/healthz") => ("200 OK", "ok\n"),
        (true, "/readyz") if registered && !draining && !holding => ("200 OK", "ready\n"),
        (true, "/readyz") if draining => ("503 Service Unavailable", "draining\n"),
        (true, "/readyz") if registered => (
            "503 Service Unavailable",
            "holds replicas not yet safe elsewhere\n",
        ),
        (true, "/readyz") => ("503 Service Unavailable", "not registered\n"),
        _ => ("404 Not Found", "not found\n"),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(reply.as_bytes()).await?;
    conn.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::config::ClusterConfig;

    async fn get(addr: std::net::SocketAddr, path: &str) -> String {
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn live_at_once_ready_once_registered_and_not_while_draining_or_holding() {
        let dir = std::env::temp_dir().join(format!("mr-health-{}", std::process::id()));
        let text = format!(
            "token = \"t\"\n[master]\naddr = \"127.0.0.1:1\"\ndata_dir = \"{0}/m\"\n\
             [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:2\"\ndata_dir = \"{0}/w1\"\n",
            dir.display()
        );
        let node = crate::node::Node::open(ClusterConfig::parse(&text).unwrap(), "w1").unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(serve(node.link().clone(), listener));

        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        let r = get(addr, "/readyz").await;
        assert!(
            r.starts_with("HTTP/1.1 503") && r.ends_with("not registered\n"),
            "{r}"
        );
        node.link().set_epoch(3);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        // The master says it holds the last replica of something.
        let stop = protocol::StopAnswer {
            unsafe_to_stop: true,
            blocks_to_copy: 0,
        };
        node.link().safety().heard(false, stop);
        let r = get(addr, "/readyz").await;
        assert!(
            r.starts_with("HTTP/1.1 503") && r.ends_with("not yet safe elsewhere\n"),
            "{r}"
        );
        node.link().safety().heard(false, Default::default());
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        node.link().start_draining();
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 503"));
        assert!(get(addr, "/metrics").await.starts_with("HTTP/1.1 404"));
        // A probe that says nothing does not stop the others.
        let _silent = TcpStream::connect(addr).await.unwrap();
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        server.abort();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

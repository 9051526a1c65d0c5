//! `/healthz`, the orchestrators' probe: open (no token) and answering
//! while the master serves.

mod support;

use support::{request, Cluster, Opts};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_without_a_token() {
    let c = Cluster::start(
        "health",
        Opts {
            workers: 1,
            start: 0,
            racks: 1,
        },
    )
    .await;
    let r = request(c.http, "GET", "/healthz", None, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, "ok\n");
    // Only the probe is open: the API still asks for the token.
    assert_eq!(
        request(c.http, "GET", "/api/workers", None, None)
            .await
            .status,
        401
    );
}

/// A metadata disk below `[master] reserved_space` makes `/healthz` answer
/// 503 with the reason (the process answers, but takes no namespace
/// change), and 200 again once space is back: both found by the master's
/// own tick. The free space is injected; no disk is filled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_is_unhealthy_while_the_metadata_disk_is_below_its_reserve() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let dir = std::env::temp_dir().join(format!("mr-health-disk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let grpc_l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http_l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http = http_l.local_addr().unwrap();
    let toml = format!(
        "token = \"t\"\n[master]\naddr = \"{}\"\ndata_dir = {:?}\nreserved_space = \"1GiB\"\n\
         [heartbeat]\ninterval = \"100ms\"\n",
        grpc_l.local_addr().unwrap(),
        dir.join("m"),
    );
    let cfg = common::config::ClusterConfig::parse(&toml).unwrap();
    let state = master::open(cfg).unwrap();
    let free = Arc::new(AtomicU64::new(2 << 30));
    let f = free.clone();
    state
        .lock()
        .unwrap()
        .set_free_space_probe(Box::new(move |_| Ok(f.load(Ordering::SeqCst))));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (web_stop, web_stopped) = tokio::sync::oneshot::channel::<()>();
    let web = tokio::spawn(master::http::serve(state.clone(), http_l, async {
        let _ = web_stopped.await;
    }));
    let served = tokio::spawn(master::serve(
        state.clone(),
        master::no_delay(grpc_l),
        async {
            let _ = stopped.await;
        },
    ));
    let wait_for = |want: u16| async move {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let r = request(http, "GET", "/healthz", None, None).await;
            if r.status == want || std::time::Instant::now() > deadline {
                return r;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    let r = wait_for(200).await;
    assert_eq!((r.status, r.body.as_str()), (200, "ok\n"));

    free.store(10 << 20, Ordering::SeqCst);
    let r = wait_for(503).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body.starts_with("unhealthy\n"), "{}", r.body);
    assert!(
        r.body
            .contains("has 10.0 MiB free, below reserved_space 1.0 GiB"),
        "{}",
        r.body
    );

    free.store(2 << 30, Ordering::SeqCst);
    let r = wait_for(200).await;
    assert_eq!((r.status, r.body.as_str()), (200, "ok\n"));

    drop(stop);
    served.await.unwrap().unwrap();
    drop(web_stop);
    master::http::join(web).await;
    let _ = std::fs::remove_dir_all(&dir);
}

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

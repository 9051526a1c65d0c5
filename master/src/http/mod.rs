//! The master's web face on `http_addr`: a REST API over its state, a web
//! UI embedded in the binary, and Prometheus `/metrics`.
//!
//! # Layout
//! - [`auth`]: the bearer-token check every `/api` route and `/metrics` pass.
//! - [`api`]: thin REST handlers over plain functions on `MasterState`.
//! - [`metrics`]: the Prometheus text format, written by hand.
//! - [`ui`]: the embedded HTML, CSS and JavaScript (no build step).
//! - [`error`]: the one place that turns master errors into HTTP statuses.
//! - [`tls`]: HTTPS, when the cluster file has `[tls]`.
//!
//! Handlers take the master's lock as the gRPC handlers do (a std
//! `Mutex`: nothing awaits while it is held) and build their JSON under it.

pub mod api;
pub mod auth;
pub mod error;
pub mod metrics;
pub mod tls;
pub mod ui;
pub mod views;

use crate::cluster::history::HISTORY_EVERY;
use crate::core::Shared;
use axum::routing::{get, post};
use axum::Router;
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Serves the web UI, the REST API and `/metrics` on `listener` until
/// `shutdown` resolves. The caller binds the socket (`http_addr`, or port 0
/// in tests). While it runs, each live worker's resource vector is sampled
/// into the history the UI draws sparklines from.
pub async fn serve(
    state: Shared,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // The certificate files are read off the lock: the gRPC side may
    // already be serving on the state.
    let cfg = lock(&state, "http_start").cfg().clone();
    let tls = rpc::tls::web_config(&cfg, "master").map_err(std::io::Error::other)?;
    let token = rpc::auth::Tokens::from_config(&cfg);
    tracing::info!(addr = %listener.local_addr()?, tls = tls.is_some(),
        "web UI, REST API and /metrics listening");
    let sampler = tokio::spawn(sample(state.clone()));
    let app = router(state, token);
    let served = match tls {
        Some(config) => {
            axum::serve(tls::TlsListener::new(listener, config)?, app)
                .with_graceful_shutdown(shutdown)
                .await
        }
        None => {
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
        }
    };
    sampler.abort();
    served
}

/// Every route. Only the three static files of the UI and `/healthz` are
/// open: they hold no data, and the page asks for the token before it asks
/// for anything.
pub fn router(state: Shared, tokens: rpc::auth::Tokens) -> Router {
    let check = Arc::new(auth::Bearer::new(tokens));
    let protected = Router::new()
        .route("/api/workers", get(api::workers))
        .route("/api/jobs", get(api::jobs))
        .route("/api/jobs/{id}", get(api::job))
        .route("/api/jobs/{id}/kill", post(api::kill_job))
        .route("/api/files", get(api::files))
        .route("/api/file", get(api::file))
        .route("/api/blocks/{id}", get(api::block))
        .route("/api/cache", get(api::cache))
        .route("/api/fsck", get(api::fsck))
        .route(
            "/api/scheduler",
            get(api::scheduler)
                .put(api::set_scheduler)
                .post(api::set_scheduler),
        )
        .route("/api/{*rest}", get(api::not_found))
        .route("/metrics", get(metrics::handler))
        .route_layer(axum::middleware::from_fn_with_state(check, auth::require));
    Router::new()
        .merge(protected)
        .route("/", get(ui::index))
        .route("/index.html", get(ui::index))
        .route("/app.js", get(ui::script))
        .route("/style.css", get(ui::style))
        .route("/healthz", get(healthz))
        .fallback(api::not_found)
        .with_state(state)
}

/// An orchestrator's liveness and readiness probe (Kubernetes `httpGet`):
/// 200 once the master's state lock can be taken, so a master wedged under
/// its lock stops answering and is restarted. 503, one reason a line, while
/// the master cannot take namespace changes for want of its disk: a failed
/// edit log, or a metadata disk below `reserved_space` (HDFS's
/// NameNodeResourceChecker), which a monitor must see although the process
/// answers. No token: it says nothing about the data.
async fn healthz(
    axum::extract::State(state): axum::extract::State<Shared>,
) -> (axum::http::StatusCode, String) {
    let problems = lock(&state, "http_healthz").health();
    if problems.is_empty() {
        return (axum::http::StatusCode::OK, "ok\n".to_string());
    }
    let mut body = String::from("unhealthy\n");
    for p in problems {
        body.push_str(&p);
        body.push('\n');
    }
    (axum::http::StatusCode::SERVICE_UNAVAILABLE, body)
}

/// How long the master waits at shutdown for the web server to finish its
/// requests: a browser's request ends in milliseconds; a client stuck
/// mid-request must not keep the master from exiting.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits for the web server [`serve`] runs in `web` to stop (after its
/// shutdown future resolved), at most [`STOP_GRACE`].
pub async fn join(web: tokio::task::JoinHandle<std::io::Result<()>>) {
    match tokio::time::timeout(STOP_GRACE, web).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(e))) => tracing::warn!("web server failed: {e}"),
        Ok(Err(e)) => tracing::warn!("web server panicked: {e}"),
        Err(_) => tracing::warn!("web server still busy after {STOP_GRACE:?}: left behind"),
    }
}

pub(crate) fn lock<'a>(state: &'a Shared, site: &'static str) -> crate::core::lock::Held<'a> {
    crate::core::lock::lock(state, site)
}

/// Samples every live worker's resource vector each [`HISTORY_EVERY`].
async fn sample(state: Shared) {
    let mut tick = tokio::time::interval(HISTORY_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        lock(&state, "http_sample").sample_resources(common::now_ms());
    }
}

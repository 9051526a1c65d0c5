//! The web UI: three files compiled into the binary, so the master needs no
//! asset directory and the page always matches the API it calls. Plain
//! HTML, CSS and JavaScript: no build step, nothing fetched from a CDN.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX: &str = include_str!("../../assets/index.html");
const SCRIPT: &str = include_str!("../../assets/app.js");
const STYLE: &str = include_str!("../../assets/style.css");

/// `no-cache`: a browser revalidates, so a master upgraded in place serves
/// the new page, never a stale script against a newer API.
fn file(kind: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
}

pub async fn index() -> impl IntoResponse {
    file("text/html; charset=utf-8", INDEX)
}

pub async fn script() -> impl IntoResponse {
    file("text/javascript; charset=utf-8", SCRIPT)
}

pub async fn style() -> impl IntoResponse {
    file("text/css; charset=utf-8", STYLE)
}

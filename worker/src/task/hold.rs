//! A hold for fault tests: a job submitted with `--param hold_maps=PATH`
//! (or `hold_reduces=PATH`) keeps each of its map (reduce) attempts in its
//! slot, before it reads anything, until PATH exists on the worker's file
//! system. With `hold_workers=w2,w3` only the attempts that run on those
//! workers are held (a straggler that makes no progress until released).
//!
//! Why: a fault scenario must land its fault in a phase (a worker killed
//! while it runs maps, a map-output holder killed while the reduces still
//! need it). Catching the phase by timing fails with fast release binaries,
//! which leave the phase before the fault lands; a held attempt stays in it
//! until the harness has injected the fault and creates PATH. The attempt is
//! a normal running attempt meanwhile: it holds its slot, can be killed, and
//! is fenced like any other. A hold ends anyway after [`MAX_HOLD`], so a
//! forgotten release file delays a job but never wedges it.

use joblib::jobs::JobParams;
use std::path::Path;
use std::time::{Duration, Instant};

/// The longest an attempt waits for its release file.
pub const MAX_HOLD: Duration = Duration::from_secs(300);
const POLL: Duration = Duration::from_millis(20);

/// The release file of this kind of attempt on `worker`, if the job asks
/// for a hold.
pub fn release_file<'a>(params: &'a JobParams, is_map: bool, worker: &str) -> Option<&'a str> {
    let key = if is_map { "hold_maps" } else { "hold_reduces" };
    if let Some(only) = params.extra.get("hold_workers") {
        if !only.split(',').any(|w| w.trim() == worker) {
            return None;
        }
    }
    params
        .extra
        .get(key)
        .map(String::as_str)
        .filter(|p| !p.is_empty())
}

/// Waits until `path` exists or [`MAX_HOLD`] has passed.
pub async fn wait_for(path: &Path) {
    let start = Instant::now();
    tracing::info!(release = %path.display(), "attempt held until its release file exists");
    while !path.exists() {
        if start.elapsed() >= MAX_HOLD {
            tracing::warn!(release = %path.display(), "hold ended without its release file");
            return;
        }
        tokio::time::sleep(POLL).await;
    }
    tracing::info!(held_s = start.elapsed().as_secs_f64(), "attempt released");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_kind_is_held() {
        let mut p = JobParams::default();
        assert_eq!(release_file(&p, true, "w1"), None);
        p.extra.insert("hold_maps".into(), "/tmp/go".into());
        assert_eq!(release_file(&p, true, "w1"), Some("/tmp/go"));
        assert_eq!(release_file(&p, false, "w1"), None);
        p.extra.insert("hold_reduces".into(), String::new());
        assert_eq!(
            release_file(&p, false, "w1"),
            None,
            "an empty path holds nothing"
        );
    }

    #[test]
    fn hold_workers_limits_the_hold_to_those_workers() {
        let mut p = JobParams::default();
        p.extra.insert("hold_maps".into(), "/tmp/go".into());
        p.extra.insert("hold_workers".into(), "w2, w3".into());
        assert_eq!(release_file(&p, true, "w2"), Some("/tmp/go"));
        assert_eq!(release_file(&p, true, "w3"), Some("/tmp/go"));
        assert_eq!(release_file(&p, true, "w1"), None);
        assert_eq!(release_file(&p, true, "w22"), None);
    }

    #[tokio::test]
    async fn released_when_the_file_appears() {
        let dir = std::env::temp_dir().join(format!("mr-hold-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let go = dir.join("go");
        let waiter = tokio::spawn({
            let go = go.clone();
            async move { wait_for(&go).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "released before the file exists");
        std::fs::write(&go, b"").unwrap();
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("not released after the file appeared")
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

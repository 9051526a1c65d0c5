//! `mr sim`: a discrete-event simulation of a MapReduce cluster that runs
//! the real placement policies of `sched`, unchanged, through the
//! `Scheduler` trait and the real `ClusterView`, on clusters far larger
//! than one machine can host (hundreds to thousands of nodes).
//!
//! # Layout
//! - [`config`]: the cluster, workload and model a run is asked for.
//! - [`model`]: task durations by locality level.
//! - [`network`]: transfers sharing ports and uplinks, max-min fair.
//! - [`cluster`]: block placement (HDFS's rule) and per-node LRU caches.
//! - [`engine`]: the event loop.
//! - [`metrics`]: what a run measured, and its JSON.
//! - [`calibrate`]: the task model fitted to a real cluster's job history.
//! - [`scenario`]: the papers' experiments, our figures beside theirs.

pub mod calibrate;
pub mod cluster;
pub mod config;
pub mod engine;
pub mod metrics;
pub mod model;
pub mod network;
pub mod scenario;

pub use config::{ConfigError, SimConfig};
pub use metrics::SimResult;

use sched::{build, SchedulerSpec};

/// Runs one policy on the configured cluster. The same config and seed
/// give the same history, whatever the policy's own speed.
pub fn run(cfg: &SimConfig, spec: &SchedulerSpec) -> Result<SimResult, String> {
    cfg.validate().map_err(|e| e.to_string())?;
    let sched = build(spec).map_err(|e| e.to_string())?;
    let mut r = engine::Engine::new(cfg.clone(), sched).run()?;
    r.scheduler = spec.name.clone();
    Ok(r)
}

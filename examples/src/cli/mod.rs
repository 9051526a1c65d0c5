//! The `mr` command groups. Each takes the parsed arguments and the cluster
//! config and prints its result; errors travel up to `main` as `anyhow`.

pub mod admin;
pub mod cache;
pub mod cluster;
pub mod config;
pub mod fs;
pub mod job;
pub mod local;
pub mod schedbench;
pub mod sim;

use anyhow::Context;
use common::config::ClusterConfig;
use std::path::Path;

pub fn load_config(path: &Path) -> anyhow::Result<ClusterConfig> {
    let mut cfg = ClusterConfig::load(path).with_context(|| {
        "the client needs the cluster file: pass --config FILE or set MR_CONFIG".to_string()
    })?;
    // The certificate the CLI shows under TLS: `client`, or another
    // process's where only that one is at hand (a container's health check).
    if let (Some(t), Ok(me)) = (&mut cfg.tls, std::env::var("MR_TLS_NAME")) {
        if !me.is_empty() {
            t.me = me;
        }
    }
    Ok(cfg)
}

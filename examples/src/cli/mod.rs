//! The `mr` command groups. Each takes the parsed arguments and the cluster
//! config and prints its result; errors travel up to `main` as `anyhow`.

pub mod admin;
pub mod cache;
pub mod cluster;
pub mod fs;
pub mod job;
pub mod local;
pub mod schedbench;
pub mod sim;

use anyhow::Context;
use common::config::ClusterConfig;
use std::path::Path;

pub fn load_config(path: &Path) -> anyhow::Result<ClusterConfig> {
    ClusterConfig::load(path).with_context(|| {
        "the client needs the cluster file: pass --config FILE or set MR_CONFIG".to_string()
    })
}

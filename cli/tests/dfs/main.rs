//! Cluster core, end to end: real master and worker processes on loopback.

#[path = "../support/mod.rs"]
mod support;

mod admin;
mod cache;
mod corruption;
mod leases;
mod replication;
mod reporting;

use serde_json::Value;
use std::collections::HashSet;
use std::io::Write;
use std::process::{ChildStdin, Command, Stdio};
use std::time::Duration;
use support::{random_bytes, write_file, Cluster, Opts};

pub fn replicas(b: &Value) -> Vec<String> {
    b["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

pub fn all_blocks_have(c: &Cluster, path: &str, n: usize, excluded: &str) -> bool {
    let st = c.stat(path);
    st["blocks"].as_array().unwrap().iter().all(|b| {
        let r = replicas(b);
        r.len() == n && !r.iter().any(|w| w == excluded)
    })
}

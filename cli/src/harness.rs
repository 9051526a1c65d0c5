//! The CLI's side of `mr bench`: the harness (the `bench` crate) runs its
//! jobs through the same submission, waiting and shipping as `mr job run`,
//! and this is where it finds them.

use crate::cmd::{self, job, userjob};
use bench::client::{Client, Submit};
use common::config::ClusterConfig;
use futures::future::BoxFuture;
use joblib::jobs::JobParams;
use rpc::dfs::Dfs;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `mr` client, as the harness sees it.
pub struct Mr;

impl Client for Mr {
    fn quiet(&self) -> bool {
        crate::output::quiet()
    }

    fn load_config(&self, path: &Path) -> anyhow::Result<ClusterConfig> {
        cmd::load_config(path)
    }

    fn submit<'a>(
        &'a self,
        cfg: &'a ClusterConfig,
        s: Submit,
    ) -> BoxFuture<'a, anyhow::Result<u64>> {
        Box::pin(job::submit(cfg, s))
    }

    fn get<'a>(&'a self, dfs: &'a Dfs, id: u64) -> BoxFuture<'a, anyhow::Result<Value>> {
        Box::pin(job::get(dfs, id))
    }

    fn wait_end<'a>(
        &'a self,
        dfs: &'a Dfs,
        id: u64,
        step: Duration,
    ) -> BoxFuture<'a, anyhow::Result<Value>> {
        Box::pin(job::wait_end(dfs, id, step))
    }

    fn describe<'a>(
        &'a self,
        path: &'a Path,
        params: &'a JobParams,
    ) -> BoxFuture<'a, anyhow::Result<(mrjob::JobPlan, String)>> {
        Box::pin(userjob::describe(path, params))
    }

    fn ship_all<'a>(
        &'a self,
        dfs: &'a Dfs,
        program: bool,
        files: &'a [PathBuf],
        params: &'a mut JobParams,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(userjob::ship_all(dfs, program, files, params))
    }
}

/// `mr bench`: the harness, with the CLI as its client.
pub async fn run(config: &Path, args: bench::BenchArgs) -> anyhow::Result<()> {
    bench::run(config, args, &Mr).await
}

//! What the harness borrows from the `mr` client: loading the cluster file,
//! submitting and following jobs, shipping job programs. The `mr` CLI
//! implements [`Client`] and hands it to [`crate::run`]; the harness calls
//! the very code `mr job run` does, so a benchmark measures what a user
//! gets, while the CLI, which is the crate above, stays the only owner of it.

use futures::future::BoxFuture;
use joblib::jobs::JobParams;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use common::config::ClusterConfig;
use rpc::dfs::Dfs;
use serde_json::Value;

/// Everything `job run`/`job submit`/`gen` can say about a job. Here, below
/// the CLI, so the harness and the CLI name the same request.
#[derive(Debug, Clone, Default)]
pub struct Submit {
    pub job: String,
    pub inputs: Vec<String>,
    pub output: String,
    pub reducers: u32,
    pub params: JobParams,
    pub output_replication: u32,
    pub output_block_size: u64,
    pub queue: String,
    pub sort_buffer: u64,
    /// The declared plan of a job that is not built in (streaming, a
    /// program); `None`: the built-in job `job`'s.
    pub plan: Option<mrjob::JobPlan>,
    /// Local files to ship with the job (a program's binary first).
    pub ship: Vec<std::path::PathBuf>,
    /// The first shipped file is the job's program.
    pub program: bool,
}

/// The client calls the harness makes; each as the `mr` command of the same
/// name does it.
pub trait Client: Send + Sync {
    /// `mr -q`: no progress and no log lines on stderr.
    fn quiet(&self) -> bool;
    /// The cluster file, checked as every `mr` command checks it.
    fn load_config(&self, path: &Path) -> anyhow::Result<ClusterConfig>;
    /// Submits a job (`mr job submit`); returns its id.
    fn submit<'a>(
        &'a self,
        cfg: &'a ClusterConfig,
        s: Submit,
    ) -> BoxFuture<'a, anyhow::Result<u64>>;
    /// A job's summary object, as the master builds it.
    fn get<'a>(&'a self, dfs: &'a Dfs, id: u64) -> BoxFuture<'a, anyhow::Result<Value>>;
    /// The job's summary once it has ended, or after `step` its summary so
    /// far.
    fn wait_end<'a>(
        &'a self,
        dfs: &'a Dfs,
        id: u64,
        step: Duration,
    ) -> BoxFuture<'a, anyhow::Result<Value>>;
    /// Asks job program `path` for its plan: the plan and the job's name.
    fn describe<'a>(
        &'a self,
        path: &'a Path,
        params: &'a JobParams,
    ) -> BoxFuture<'a, anyhow::Result<(mrjob::JobPlan, String)>>;
    /// Ships the files and records their paths in `params`; with
    /// `program`, the first file's path also as the program.
    fn ship_all<'a>(
        &'a self,
        dfs: &'a Dfs,
        program: bool,
        files: &'a [PathBuf],
        params: &'a mut JobParams,
    ) -> BoxFuture<'a, anyhow::Result<()>>;
}

static CLIENT: OnceLock<&'static dyn Client> = OnceLock::new();

/// Installs the client for the process: [`crate::run`] does, once.
pub fn install(c: &'static dyn Client) {
    let _ = CLIENT.set(c);
}

/// The client [`install`]ed. A harness entry that runs jobs without one is
/// a bug of the caller, not a condition to handle.
pub fn client() -> &'static dyn Client {
    *CLIENT
        .get()
        .expect("the bench harness runs jobs only through bench::run, which installs the client")
}

/// Whether `mr -q` was given; false before [`install`].
pub fn quiet() -> bool {
    CLIENT.get().is_some_and(|c| c.quiet())
}

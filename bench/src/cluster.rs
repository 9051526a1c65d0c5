//! What the harness asks of the cluster under test: files, caches, the
//! scheduler and jobs, through the same RPCs as the `mr` commands, but
//! returning values instead of printing, so a matrix of runs can be driven
//! from one process.

use crate::client::{client, Submit};
use anyhow::{bail, Context};
use bytes::{Bytes, BytesMut};
use common::config::ClusterConfig;
use joblib::jobs::JobParams;
use rpc::dfs::{Dfs, DfsError};
use serde_json::Value;
use std::time::{Duration, Instant};

/// How often job state and cache maps are polled.
const POLL: Duration = Duration::from_millis(200);

pub struct Cluster {
    pub cfg: ClusterConfig,
    pub(crate) dfs: Dfs,
}

/// One file of the namespace, as `ls` lists it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: String,
    pub size: u64,
}

impl Cluster {
    pub fn connect(cfg: ClusterConfig) -> anyhow::Result<Self> {
        let dfs = Dfs::connect(&cfg)?;
        Ok(Cluster { cfg, dfs })
    }

    /// Names and racks of the workers the master holds alive.
    pub async fn alive_workers(&self) -> anyhow::Result<Vec<(String, String)>> {
        let r = self
            .dfs
            .master()
            .cluster_status(proto::Empty {})
            .await
            .map_err(DfsError::from)?
            .into_inner();
        Ok(r.workers
            .into_iter()
            .filter(|w| w.alive)
            .map(|w| (w.name, w.rack))
            .collect())
    }

    /// Switches policy, with the registry's default parameters.
    pub async fn set_scheduler(&self, name: &str) -> anyhow::Result<()> {
        self.set_scheduler_with(name, Default::default()).await
    }

    pub async fn set_scheduler_with(
        &self,
        name: &str,
        params: std::collections::HashMap<String, String>,
    ) -> anyhow::Result<()> {
        self.dfs
            .master()
            .set_scheduler(proto::SchedulerRequest {
                name: name.into(),
                params,
            })
            .await
            .map_err(DfsError::from)
            .with_context(|| format!("switching to scheduler {name}"))?;
        Ok(())
    }

    /// The active policy and its parameters.
    pub async fn scheduler(&self) -> anyhow::Result<proto::SchedulerResponse> {
        Ok(self
            .dfs
            .master()
            .get_scheduler(proto::Empty {})
            .await
            .map_err(DfsError::from)?
            .into_inner())
    }

    /// The data files under `path` (a file or a directory), in path order,
    /// leaving out `_SUCCESS`-style markers; empty when nothing is there.
    pub async fn data_files(&self, path: &str) -> anyhow::Result<Vec<Entry>> {
        let r = self
            .dfs
            .master()
            .list_files(proto::PathRequest { path: path.into() })
            .await;
        let entries = match r {
            Ok(r) => r.into_inner().entries,
            Err(s) if s.code() == tonic::Code::NotFound => return Ok(vec![]),
            Err(s) => return Err(DfsError::from(s).into()),
        };
        let mut v: Vec<Entry> = entries
            .into_iter()
            .filter(|e| !e.is_dir)
            .filter(|e| {
                let name = e.path.rsplit('/').next().unwrap_or("");
                !name.starts_with('_') && !name.starts_with('.')
            })
            .map(|e| Entry {
                path: e.path,
                size: e.size,
            })
            .collect();
        v.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(v)
    }

    /// Deletes a file or directory; nothing there is not an error.
    pub async fn remove(&self, path: &str) -> anyhow::Result<()> {
        match self
            .dfs
            .master()
            .delete_file(proto::PathRequest { path: path.into() })
            .await
        {
            Ok(_) => Ok(()),
            Err(s) if s.code() == tonic::Code::NotFound => Ok(()),
            Err(s) => Err(DfsError::from(s).into()),
        }
    }

    /// Runs a generator (`randomtextwriter`, `randomwriter`, `teragen`)
    /// writing `size` bytes in blocks of `block`, with `replication`
    /// replicas (0: the cluster's default), into `out`.
    pub async fn generate(
        &self,
        generator: &str,
        out: &str,
        size: u64,
        block: u64,
        seed: u64,
        replication: u32,
    ) -> anyhow::Result<Value> {
        // A share a little under one block per map, as `mr gen` does, so no
        // map spills a sliver into a second block.
        let maps = size.div_ceil(block - block / 32).clamp(1, 10_000) as u32;
        let s = Submit {
            job: generator.into(),
            output: out.into(),
            params: JobParams {
                size,
                seed,
                maps,
                ..Default::default()
            },
            output_block_size: block,
            output_replication: replication,
            queue: "default".into(),
            ..Default::default()
        };
        let v = self.run(s, &mut |_| {}).await?;
        ensure_succeeded(&v)?;
        Ok(v)
    }

    /// Submits a job and follows it to its end, calling `progress` with each
    /// polled summary. The summary of a failed job is returned, not an error.
    pub async fn run(&self, s: Submit, progress: &mut dyn FnMut(&Value)) -> anyhow::Result<Value> {
        let id = self.submit(s).await?;
        self.wait(id, progress).await
    }

    pub async fn submit(&self, s: Submit) -> anyhow::Result<u64> {
        client().submit(&self.cfg, s).await
    }

    pub async fn job(&self, id: u64) -> anyhow::Result<Value> {
        client().get(&self.dfs, id).await
    }

    /// The job's per-task records (JSON lines), as `mr job history` prints.
    pub async fn history(&self, id: u64) -> anyhow::Result<Vec<String>> {
        Ok(self
            .dfs
            .master()
            .job_history(proto::JobRequest { job_id: id })
            .await
            .map_err(DfsError::from)?
            .into_inner()
            .json)
    }

    /// Follows a job to its end: the master pushes the end (`WaitJob`)
    /// and answers every [`POLL`] with the progress so far.
    pub async fn wait(&self, id: u64, progress: &mut dyn FnMut(&Value)) -> anyhow::Result<Value> {
        loop {
            let v = client().wait_end(&self.dfs, id, POLL).await?;
            progress(&v);
            if matches!(v["state"].as_str(), Some("succeeded" | "failed" | "killed")) {
                return Ok(v);
            }
        }
    }

    /// Reads a whole file without filling any cache, so that computing an
    /// oracle does not warm the caches the benchmark is about to measure.
    pub async fn read(&self, path: &str) -> anyhow::Result<Bytes> {
        let st = self.dfs.stat(path).await?;
        let mut out = BytesMut::with_capacity(st.size as usize);
        let mut blocks = futures::StreamExt::buffered(
            futures::stream::iter(st.blocks.iter().map(|b| self.dfs.read_block(b, false))),
            4,
        );
        while let Some(r) = futures::StreamExt::next(&mut blocks).await {
            out.extend_from_slice(&r?.0);
        }
        Ok(out.freeze())
    }

    /// Asks for every block of `paths` to be cached (`warm`) or dropped from
    /// every cache, then waits until the master's cache map says so.
    /// Cache commands travel with heartbeats and take effect with the next
    /// cache report, hence the wait. Warming settles early when the caches
    /// are too small to hold it all (the count stops moving for 2 s).
    pub async fn set_cached(&self, paths: &[String], warm: bool) -> anyhow::Result<()> {
        if !warm {
            for p in paths {
                self.cache_request(p, false).await?;
            }
            return self.wait_cached(paths, false).await;
        }
        // Cold first, so every run starts from the same state.
        Box::pin(self.set_cached(paths, false)).await?;
        for p in paths {
            self.cache_request(p, true).await?;
        }
        self.wait_cached(paths, true).await
    }

    async fn cache_request(&self, path: &str, cache: bool) -> anyhow::Result<()> {
        self.dfs
            .master()
            .cache_file(proto::CacheFileRequest {
                path: path.into(),
                cache,
            })
            .await
            .map_err(DfsError::from)?;
        Ok(())
    }

    async fn wait_cached(&self, paths: &[String], want: bool) -> anyhow::Result<()> {
        let limit = Duration::from_secs(60);
        let t = Instant::now();
        let (mut last, mut since) = (usize::MAX, Instant::now());
        loop {
            let (cached, total) = self.cached_blocks(paths).await?;
            if (want && cached == total) || (!want && cached == 0) {
                return Ok(());
            }
            if cached != last {
                (last, since) = (cached, Instant::now());
            } else if want && since.elapsed() > Duration::from_secs(2) {
                tracing::info!(cached, total, "caches full before every block fit");
                return Ok(());
            } else if !want && since.elapsed() > Duration::from_secs(2) {
                // A command can be lost with a heartbeat reply that never
                // arrived (a worker cut off, then back): ask again.
                for p in paths {
                    self.cache_request(p, false).await?;
                }
                since = Instant::now();
            }
            if t.elapsed() > limit {
                bail!(
                    "caches did not reach the asked state in {}s: {cached} of {total} blocks cached",
                    limit.as_secs()
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// (blocks cached somewhere, blocks) over the files under `paths`.
    pub async fn cached_blocks(&self, paths: &[String]) -> anyhow::Result<(usize, usize)> {
        let (mut cached, mut total) = (0, 0);
        for p in paths {
            for f in self.data_files(p).await? {
                for b in self.dfs.stat(&f.path).await?.blocks {
                    total += 1;
                    cached += !b.cached_on.is_empty() as usize;
                }
            }
        }
        Ok((cached, total))
    }

    /// Bounds one worker's cache (every live worker's when `worker` is
    /// empty); returns the workers told.
    pub async fn resize_caches(&self, bytes: u64, worker: &str) -> anyhow::Result<Vec<String>> {
        let r = self
            .dfs
            .master()
            .set_cache_capacity(proto::CacheCapacityRequest {
                bytes,
                worker: worker.into(),
            })
            .await
            .map_err(DfsError::from)?
            .into_inner();
        Ok(r.workers)
    }
}

/// A policy and its parameters as one line of `k=v` text.
pub fn policy_text(r: &proto::SchedulerResponse) -> String {
    let mut p: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    p.sort();
    format!("{} {}", r.name, p.join(" ")).trim().to_string()
}

/// Turns a failed job's summary into an error naming the job and its reason.
pub fn ensure_succeeded(v: &Value) -> anyhow::Result<()> {
    match v["state"].as_str() {
        Some("succeeded") => Ok(()),
        s => bail!(
            "job {} ({}) {}: {}",
            v["job_id"],
            v["job"].as_str().unwrap_or("?"),
            s.unwrap_or("in an unknown state"),
            v["error"].as_str().unwrap_or("no reason given")
        ),
    }
}

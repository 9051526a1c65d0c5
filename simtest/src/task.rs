//! Task attempts on a model worker, as `worker/src/task/executor.rs` runs them:
//! launched into the running set, run, reported (the report carries the
//! launch's epoch and is retried a few times), killed by attempt, and a
//! finished job's local files (here: map outputs) cleaned up. Maps read
//! their block from the local disk or a replica over the real `ReadBlock`;
//! reduces fetch partitions over the real `FetchPartition` and write their
//! part through the real DFS client (create, add block, write to every
//! target, complete), as the real output writer does.

use crate::history::{self, Report, TaskKey};
use crate::node::Node;
use crate::wordcount;
use bytes::Bytes;
use protocol::attempts::{self, Abort};
use protocol::{
    BlockInfo, BlockLocation, Command, Launch, LaunchKind, Refused, TaskRef, TaskReport,
};
use rpc::dfs::{FileWriter, PutOptions};
use std::sync::Arc;

struct Failure {
    msg: String,
    fetch_failed_map: Option<u32>,
}

impl Failure {
    fn msg(m: impl Into<String>) -> Self {
        Failure {
            msg: m.into(),
            fetch_failed_map: None,
        }
    }
}

/// The model's handle on a running attempt: its tokio task.
pub struct Attempt(tokio::task::AbortHandle);

impl Abort for Attempt {
    fn abort(&self) {
        self.0.abort();
    }
}

/// What to do with the commands in a task report's answer: the worker's
/// `handle`, passed in so that this module does not import the one that
/// calls it (as the real worker's executor takes its `OnCommands`).
pub type OnCommands = fn(&Arc<Node>, Vec<Command>);

pub fn launch(node: &Arc<Node>, l: Launch, on_commands: OnCommands) {
    let t = l.task;
    let key: TaskKey = (t.job_id, t.is_map, t.index);
    {
        let mut h = node.history.lock().unwrap();
        h.launches.entry(key).or_default().push(history::Launch {
            attempt: t.attempt,
            worker: node.name.clone(),
            epoch: l.epoch,
        });
        h.note(format!(
            "{} launch {key:?} attempt {} epoch {}",
            node.name, t.attempt, l.epoch
        ));
    }
    let n = node.clone();
    let handle = tokio::spawn(async move {
        let res = run(&n, &l).await;
        report(&n, l.epoch, t, res, on_commands).await;
        n.tasks.finish(&t);
        cleanup_if_pending(&n, key.0);
    });
    node.tasks.start(&t, Attempt(handle.abort_handle()));
}

/// A launch that came unrunnable: reported failed at once, as the real
/// executor does.
pub fn refuse(node: &Arc<Node>, r: Refused, on_commands: OnCommands) {
    let n = node.clone();
    tokio::spawn(async move {
        report(&n, r.epoch, r.task, Err(Failure::msg(r.why)), on_commands).await;
    });
}

pub fn kill(node: &Node, t: TaskRef) {
    if node.tasks.kill(&t) {
        node.history.lock().unwrap().note(format!(
            "{} killed {:?} attempt {}",
            node.name,
            attempts::key(&t),
            t.attempt
        ));
    }
    cleanup_if_pending(node, t.job_id);
}

fn cleanup_if_pending(node: &Node, job: u64) {
    if node.tasks.cleanup_pending(job) {
        cleanup(node, job);
    }
}

/// As the real executor: a job's files go once no attempt of it runs; while
/// one does (the attempt whose report brought the command, a late one), the
/// cleanup waits for it to end.
pub fn cleanup(node: &Node, job: u64) {
    if node.tasks.defer_cleanup(job) {
        return;
    }
    node.tasks.cleanup_done(job);
    node.map_outputs.lock().unwrap().retain(|k, _| k.0 != job);
}

async fn run(node: &Arc<Node>, l: &Launch) -> Result<Vec<(String, u64)>, Failure> {
    let t = l.task;
    // The work itself takes a while: long enough for faults to land mid-task.
    tokio::time::sleep(node.rand_ms(20, 250)).await;
    match &l.kind {
        LaunchKind::Map(m) => {
            let loc = m.input.as_ref().ok_or_else(|| Failure::msg("no input"))?;
            let info = loc.block;
            let data = match node.read(info.id) {
                Some((_, d)) => d,
                None => read_remote(node, loc, &info).await?,
            };
            let parts = wordcount::map(&data, m.reducers.max(1));
            node.map_outputs
                .lock()
                .unwrap()
                .insert((t.job_id, t.index, t.attempt), parts);
            Ok(vec![("map_input_bytes".into(), data.len() as u64)])
        }
        LaunchKind::Reduce(r) => {
            let mut inputs = Vec::new();
            for m in &r.map_outputs {
                let got = async {
                    let mut conn = node.dfs.worker(&m.addr)?;
                    let mut s = conn
                        .fetch_partition(proto::FetchPartitionRequest {
                            job_id: t.job_id,
                            map_index: m.map_index,
                            attempt: m.attempt,
                            partition: t.index,
                            shuffle_token: r.shuffle_token.clone(),
                        })
                        .await?
                        .into_inner();
                    let mut buf = Vec::new();
                    while let Some(c) = s.message().await? {
                        buf.extend_from_slice(&c.data);
                    }
                    Ok::<_, rpc::dfs::DfsError>(Bytes::from(buf))
                }
                .await;
                match got {
                    Ok(b) => inputs.push(b),
                    Err(e) => {
                        return Err(Failure {
                            msg: format!("fetch of map {} from {}: {e}", m.map_index, m.worker),
                            fetch_failed_map: Some(m.map_index),
                        })
                    }
                }
            }
            let counts = wordcount::reduce(&inputs).map_err(Failure::msg)?;
            let body =
                wordcount::header(t.job_id, t.index, t.attempt) + &wordcount::render(&counts);
            write_part(node, l, Bytes::from(body)).await?;
            Ok(vec![("reduce_output_words".into(), counts.len() as u64)])
        }
    }
}

async fn read_remote(
    node: &Arc<Node>,
    loc: &BlockLocation,
    info: &BlockInfo,
) -> Result<Bytes, Failure> {
    let mut last = "no replica".to_string();
    for w in &loc.replicas {
        if w.name == node.name {
            continue;
        }
        let r = async {
            let mut conn = node.dfs.worker(&w.addr)?;
            let wire = proto::BlockInfo::from(*info);
            rpc::dfs::read_block(&mut conn, &wire, false, &w.name, &Default::default()).await
        }
        .await;
        match r {
            Ok((b, _)) => return Ok(b),
            Err(e) => last = format!("{}: {e}", w.name),
        }
    }
    Err(Failure::msg(format!(
        "block {} unreadable: {last}",
        info.id
    )))
}

/// Abandons an unfinished part when its attempt is dropped (killed), as the
/// real output writer's `Drop` does. A crashed host abandons nothing.
struct Unfinished(Option<(Arc<rpc::dfs::Dfs>, FileWriter)>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some((dfs, w)) = self.0.take() {
            tokio::spawn(async move { dfs.abandon(w).await });
        }
    }
}

async fn write_part(node: &Arc<Node>, l: &Launch, data: Bytes) -> Result<(), Failure> {
    let opts = PutOptions {
        replication: l.output.replication,
        block_size: l.output.block_size,
        overwrite: false,
        writer: node.name.clone(),
    };
    let err = |e: rpc::dfs::DfsError| Failure::msg(format!("output: {e}"));
    let w = node.dfs.create(&l.output.path, &opts).await.map_err(err)?;
    let mut guard = Unfinished(Some((node.dfs.clone(), w)));
    let res = {
        let (_, w) = guard.0.as_mut().expect("just set");
        node.dfs.write_block_of(w, data).await
    };
    let (_, w) = guard.0.take().expect("still set");
    if let Err(e) = res {
        node.dfs.abandon(w).await;
        return Err(err(e));
    }
    node.dfs.complete(w).await.map_err(err)?;
    Ok(())
}

async fn report(
    node: &Arc<Node>,
    epoch: u64,
    t: TaskRef,
    res: Result<Vec<(String, u64)>, Failure>,
    on_commands: OnCommands,
) {
    let key: TaskKey = (t.job_id, t.is_map, t.index);
    let mut r = TaskReport {
        worker: node.name.clone(),
        epoch,
        task: t,
        metrics: protocol::TaskMetrics {
            locality: "node_local".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    match res {
        Ok(counters) => {
            r.succeeded = true;
            r.counters = counters.into_iter().collect();
        }
        Err(f) => {
            r.error = f.msg;
            if let Some(m) = f.fetch_failed_map {
                r.fetch_failure = true;
                r.failed_map = m;
            }
        }
    }
    for i in 0..5u64 {
        {
            let mut h = node.history.lock().unwrap();
            let stale = h.is_stale(key, t.attempt, &node.name, epoch);
            h.reports.push(Report {
                task: key,
                attempt: t.attempt,
                worker: node.name.clone(),
                epoch,
                succeeded: r.succeeded,
                stale,
            });
            h.note(format!(
                "{} report {key:?} attempt {} ok={} stale={stale} {}",
                node.name, t.attempt, r.succeeded, r.error
            ));
        }
        let req = proto::TaskUpdateRequest::from(r.clone());
        match node.dfs.master().task_update(req).await {
            Ok(resp) => {
                if r.succeeded {
                    node.sent.lock().unwrap().push(r.clone());
                }
                on_commands(node, protocol::Reply::from(resp.into_inner()).commands);
                return;
            }
            Err(e) => {
                node.history
                    .lock()
                    .unwrap()
                    .note(format!("{} report failed: {e}", node.name));
                tokio::time::sleep(std::time::Duration::from_millis(200 * (i + 1))).await;
            }
        }
    }
}

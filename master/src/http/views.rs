//! Read-only views of the master's state for the REST API and the web UI,
//! as JSON built with the same builders as the CLI's `--json`
//! (`rpc::json`, which reads the protobuf messages the CLI receives),
//! so the shapes cannot drift apart.

use crate::core::MasterState;
use crate::error::{MasterError, Result};
use crate::jobs::history::History;
use crate::jobs::{Job, TaskStatus};
use sched::TaskKind;
use serde_json::{json, Value};
use std::time::Instant;

/// `GET /api/workers`: the `mr cluster status --json` object, each worker
/// with its recent resource samples (`history`, one array per field).
pub fn workers(s: &MasterState) -> Value {
    let st = proto::ClusterStatusResponse::from(s.cluster_status());
    let ui = s.cfg().ui_url();
    let mut v = rpc::json::cluster_status(&st, &s.cfg().master.addr, ui.as_deref());
    if let Some(ws) = v["workers"].as_array_mut() {
        for w in ws {
            let name = w["name"].as_str().unwrap_or_default().to_string();
            w["history"] = s.resource_history().json(&name);
        }
    }
    v
}

/// `GET /api/jobs/{id}`: the job summary (as `mr job status --json`)
/// with `tasks`: every finished attempt as the job history records it
/// (node, locality, start and end, bytes) and every running one
/// (`state` "running", `end_ms` 0, no locality yet). A job of an earlier
/// master run has its attempts in its history file only: then `tasks` is
/// left to the caller, which reads the file ([`History`]) once the lock
/// is released and calls [`with_history`].
pub fn job_detail(s: &MasterState, id: u64, now: Instant) -> Result<(Value, Option<History>)> {
    let jobs = s.jobs();
    let mut v = jobs.job_json(id)?;
    let Some(j) = jobs.get(id) else {
        v["tasks"] = Value::Array(vec![]);
        return Ok((v, Some(jobs.job_history(id)?)));
    };
    let mut tasks = j.records().to_vec();
    tasks.extend(running_tasks(j, now));
    v["tasks"] = Value::Array(tasks);
    Ok((v, None))
}

/// Fills a [`job_detail`] of an earlier run's job with the attempts its
/// history `lines` record.
pub fn with_history(mut v: Value, lines: &[String]) -> Value {
    v["tasks"] = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["type"] == "task")
        .collect();
    v
}

/// `GET /api/files?path=`: the `mr fs ls --json` array.
pub fn files(s: &MasterState, path: &str) -> Result<Value> {
    Ok(s.blocks()
        .list(path)?
        .iter()
        .map(|e| rpc::json::list_entry(&e.clone().into()))
        .collect())
}

/// `GET /api/file?path=`: the `mr fs stat --json` object.
pub fn file(s: &MasterState, path: &str) -> Result<Value> {
    let st = s.blocks().file_status(path, s.cluster())?;
    Ok(rpc::json::file_status(&st.into()))
}

/// `GET /api/blocks/{id}`: a block as `mr fs stat --json` lists it, with
/// the file it belongs to and its replication factor.
pub fn block(s: &MasterState, id: u64) -> Result<Value> {
    let blocks = s.blocks();
    let owner = blocks
        .owner(id)
        .ok_or_else(|| MasterError::NotFound(format!("no block {id}")))?;
    let file = blocks
        .ns()
        .files
        .iter()
        .find(|(_, f)| f.blocks.iter().any(|b| b.id == id))
        .map(|(p, _)| p.clone());
    let status = blocks.block_status(&owner.meta, s.cluster());
    let mut v = rpc::json::block_status(&status.into());
    v["file"] = json!(file);
    v["replication"] = json!(owner.replication);
    Ok(v)
}

/// `GET /api/cache`: per worker, the bytes its LRU holds, the blocks it
/// reported cached, and the hits and misses of the maps it ran.
pub fn cache(s: &MasterState) -> Value {
    let st = s.cluster_status();
    let workers: Vec<Value> = st
        .workers
        .iter()
        .map(|w| {
            let c = s.stats().cache.get(&w.name).copied().unwrap_or_default();
            json!({
                "name": w.name,
                "rack": w.rack,
                "state": if w.alive { "alive" } else { "dead" },
                "cache_used_bytes": w.cache_used_bytes,
                "cache_capacity_bytes": w.cache_capacity_bytes,
                "cache_pinned_bytes": w.cache_pinned_bytes,
                "cached_blocks": s.blocks().cached_count_at(&w.name),
                "hits": c.hits,
                "misses": c.misses,
            })
        })
        .collect();
    let live = st.workers.iter().filter(|w| w.alive);
    json!({
        "used_bytes": live.clone().map(|w| w.cache_used_bytes).sum::<u64>(),
        "capacity_bytes": live.map(|w| w.cache_capacity_bytes).sum::<u64>(),
        "cached_blocks": s.blocks().cached_blocks(),
        "workers": workers,
    })
}

/// `GET /api/scheduler`: the active policy, its parameters, and every
/// name `set_scheduler` accepts.
pub fn scheduler(s: &MasterState) -> Value {
    let spec = s.jobs().scheduler_spec();
    json!({
        "name": spec.name,
        "params": spec.params,
        "available": sched::registry::NAMES,
    })
}

/// The running attempts of a job in the shape of the history's task
/// records, times from the master's clock.
fn running_tasks(j: &Job, now: Instant) -> Vec<Value> {
    let now_ms = common::now_ms();
    let mut v = Vec::new();
    for (kind, tasks) in [(TaskKind::Map, j.maps()), (TaskKind::Reduce, j.reduces())] {
        for (i, t) in tasks.iter().enumerate() {
            if let TaskStatus::Running {
                attempt,
                worker,
                started,
                ..
            } = &t.status
            {
                let ran = now.saturating_duration_since(*started);
                v.push(json!({
                    "type": "task",
                    "job_id": j.id(),
                    "kind": if kind == TaskKind::Map { "map" } else { "reduce" },
                    "index": i,
                    "attempt": attempt,
                    "node": worker,
                    "state": "running",
                    "locality": null,
                    "start_ms": now_ms.saturating_sub(ran.as_millis() as u64),
                    "end_ms": 0,
                    "runtime_s": ran.as_secs_f64(),
                }));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::JobSpec;
    use std::time::Duration;

    #[test]
    fn running_attempts_look_like_history_records() {
        let spec = JobSpec::wordcount_for_tests(1);
        let t0 = Instant::now();
        let mut j = Job::new(7, 7, spec, vec![], 2, "fifo", t0);
        j.launch(TaskKind::Map, 1, "w3", 1, t0);
        let now = t0 + Duration::from_millis(1500);
        let before = common::now_ms();
        let v = running_tasks(&j, now);
        assert_eq!(v.len(), 1);
        let t = &v[0];
        assert_eq!(
            (
                &t["kind"],
                &t["index"],
                &t["node"],
                &t["state"],
                &t["end_ms"]
            ),
            (
                &json!("map"),
                &json!(1),
                &json!("w3"),
                &json!("running"),
                &json!(0)
            )
        );
        assert_eq!(t["runtime_s"], 1.5);
        let start = t["start_ms"].as_u64().unwrap();
        // Started 1.5 s before the (wall-clock) moment of the call.
        assert!(
            (before - 1500..before - 1500 + 100).contains(&start),
            "{start} vs {before}"
        );
    }
}

//! Fixture builders shared by the policies' unit tests.
//!
//! Every policy's tests need the same few things: nodes, map tasks, jobs
//! and a view over them. Each test module used to declare its own nearly
//! identical copies; these are the one set of plain defaults. A test that
//! relies on some other value (slot counts, input size, pool, submit time)
//! sets that field on what a builder returns, with struct update syntax or
//! by assignment, so the detail it depends on stays in sight in the test.

use super::view::*;
use std::collections::HashSet;

/// The input size [`map`] gives a task: one 64 MiB block.
pub const MAP_INPUT_BYTES: u64 = 64 << 20;

/// Node `name` in `rack` with `free_map_slots` idle map slots and one free
/// reduce slot. It has `free_map_slots` map slots in all, at least one: a
/// node with none free is busy, not slotless.
pub fn node(name: &str, rack: &str, free_map_slots: u32) -> NodeView {
    NodeView {
        name: name.into(),
        rack: rack.into(),
        map_slots: free_map_slots.max(1),
        reduce_slots: 1,
        free_map_slots,
        free_reduce_slots: 1,
        resources: Resources::default(),
        cached_blocks: HashSet::new(),
        running: vec![],
    }
}

/// Map `index` of `job`, reading `block` ([`MAP_INPUT_BYTES`] of it),
/// stored on `replicas` and cached on `cached`; runnable since time 0.
pub fn map(job: u64, index: u32, block: u64, replicas: &[&str], cached: &[&str]) -> PendingTask {
    PendingTask {
        id: TaskId {
            job,
            kind: TaskKind::Map,
            index,
        },
        job,
        kind: TaskKind::Map,
        block: Some(block),
        replicas: replicas.iter().map(|s| s.to_string()).collect(),
        cached_on: cached.iter().map(|s| s.to_string()).collect(),
        input_bytes: MAP_INPUT_BYTES,
        avoid: vec![],
        runnable_since: 0.0,
    }
}

/// Job `id` ("j", pool "default"), submitted at time `id` and `id`-th in
/// the queue, with `maps` maps all pending, no reduces, nothing run yet.
pub fn job(id: u64, maps: u32) -> JobView {
    JobView {
        id,
        name: "j".into(),
        submit_time: id as f64,
        pool: "default".into(),
        order: id,
        maps_total: maps,
        reduces_total: 0,
        done: 0,
        running: 0,
        pending: maps,
        running_maps: 0,
        pending_maps: maps,
        avg_map_time: 0.0,
    }
}

/// A [`job`] of ten maps in `pool`, `running_maps` of them running, for
/// the pool-aware policies.
pub fn pooled_job(id: u64, pool: &str, running_maps: u32) -> JobView {
    JobView {
        pool: pool.into(),
        running: running_maps,
        running_maps,
        ..job(id, 10)
    }
}

/// The view at time 0 with a one-second heartbeat, 125 MB/s within a rack
/// and 37.5 MB/s across racks; indexed, so a test that adds or removes
/// nodes afterwards calls [`ClusterView::index`] again.
pub fn view(nodes: Vec<NodeView>, jobs: Vec<JobView>, pending: Vec<PendingTask>) -> ClusterView {
    ClusterView::new(0.0, 1.0, nodes, jobs, pending, DEFAULT_BANDWIDTHS)
}

/// How many of the assignments `a` put their task where its input is
/// (cached or on disk).
pub fn local_count(v: &ClusterView, a: &[Assignment]) -> usize {
    a.iter()
        .filter(|x| {
            let t = v.pending.iter().find(|t| t.id == x.task).unwrap();
            v.locality(t, v.node(&x.node).unwrap()).is_local()
        })
        .count()
}

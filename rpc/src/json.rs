//! The JSON shapes shared by the CLI's `--json` output and the master's REST
//! API, built from the wire types both see. One builder per shape, so that
//! `mr cluster status --json` and `GET /api/workers` cannot drift apart.

use serde_json::{json, Value};

/// One worker of `cluster status`: state, slots, cache and its latest
/// atop-like resource vector.
pub fn worker_status(w: &proto::WorkerStatus) -> Value {
    json!({
        "name": w.name,
        "addr": w.addr,
        "rack": w.rack,
        "state": if w.alive { "alive" } else { "dead" },
        "last_heartbeat_ms": w.last_heartbeat_ms,
        "map_slots": w.map_slots,
        "reduce_slots": w.reduce_slots,
        "free_map_slots": w.free_map_slots,
        "free_reduce_slots": w.free_reduce_slots,
        "cache_used_bytes": w.cache_used_bytes,
        "cache_capacity_bytes": w.cache_capacity_bytes,
        "cache_pinned_bytes": w.cache_pinned_bytes,
        "blocks": w.blocks,
        "resources": resources(&w.resources.clone().unwrap_or_default()),
        // "normal", "draining", "decommissioning" or "decommissioned", and
        // while leaving, its blocks not yet safe elsewhere.
        "admin_state": if w.admin_state.is_empty() { "normal" } else { w.admin_state.as_str() },
        "blocks_under_replicated": w.blocks_under_replicated,
    })
}

/// A resource vector as users read it (the shape
/// [`common::resources::ResourceVector`] serializes to).
pub fn resources(r: &proto::ResourceVector) -> Value {
    common::resources::ResourceVector::from(r).json()
}

/// The whole `cluster status` object: `master` is the gRPC address, `ui`
/// the web UI's URL (null when the master serves none).
pub fn cluster_status(st: &proto::ClusterStatusResponse, master: &str, ui: Option<&str>) -> Value {
    json!({
        "master": master,
        "ui": ui,
        "files": st.files,
        "blocks": st.blocks,
        "under_replicated_blocks": st.under_replicated_blocks,
        "workers": st.workers.iter().map(worker_status).collect::<Vec<_>>(),
    })
}

/// One entry of `fs ls`.
pub fn list_entry(e: &proto::ListEntry) -> Value {
    json!({"path": e.path, "dir": e.is_dir, "size": e.size,
           "replication": e.replication, "blocks": e.blocks, "mtime_ms": e.mtime_ms,
           "owner": e.owner, "permission": format!("{:o}", e.mode)})
}

/// `drwxr-xr-x`, as `ls -l` shows an entry's type and mode.
pub fn mode_string(is_dir: bool, mode: u32) -> String {
    let mut s = String::with_capacity(10);
    s.push(if is_dir { 'd' } else { '-' });
    for shift in [6, 3, 0] {
        let b = (mode >> shift) & 7;
        s.push(if b & 4 != 0 { 'r' } else { '-' });
        s.push(if b & 2 != 0 { 'w' } else { '-' });
        s.push(if b & 1 != 0 { 'x' } else { '-' });
    }
    s
}

fn names(v: &[proto::WorkerAddr]) -> Vec<String> {
    v.iter().map(|w| w.name.clone()).collect()
}

/// One block of `fs stat`: where it is stored, cached and pinned.
pub fn block_status(b: &proto::BlockStatus) -> Value {
    let i = b.block.unwrap_or_default();
    json!({"id": i.id, "len": i.len, "crc32c": i.crc32c,
           "replicas": names(&b.replicas), "cached_on": names(&b.cached_on),
           "pinned_on": names(&b.pinned_on)})
}

/// `fs stat`: a file and every block of it.
pub fn file_status(st: &proto::FileStatus) -> Value {
    json!({"path": st.path, "size": st.size, "replication": st.replication,
           "block_size": st.block_size, "mtime_ms": st.mtime_ms, "owner": st.owner,
           "permission": format!("{:o}", st.mode),
           "blocks": st.blocks.iter().map(block_status).collect::<Vec<_>>()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_show_as_ls_shows_them() {
        assert_eq!(mode_string(true, 0o755), "drwxr-xr-x");
        assert_eq!(mode_string(false, 0o640), "-rw-r-----");
    }

    #[test]
    fn worker_without_resources_has_zeros() {
        let v = worker_status(&proto::WorkerStatus {
            name: "w1".into(),
            alive: true,
            ..Default::default()
        });
        assert_eq!(v["state"], "alive");
        assert_eq!(v["admin_state"], "normal");
        assert_eq!(v["resources"]["cpu_pct"], 0.0);
    }

    #[test]
    fn block_names_its_holders() {
        let w = |n: &str| proto::WorkerAddr {
            name: n.into(),
            ..Default::default()
        };
        let v = block_status(&proto::BlockStatus {
            block: Some(proto::BlockInfo {
                id: 7,
                len: 10,
                crc32c: 1,
                generation: 0,
            }),
            replicas: vec![w("w1"), w("w2")],
            cached_on: vec![w("w2")],
            pinned_on: vec![w("w2")],
            ..Default::default()
        });
        assert_eq!(v["id"], 7);
        assert_eq!(v["replicas"], json!(["w1", "w2"]));
        assert_eq!(v["cached_on"], json!(["w2"]));
        assert_eq!(v["pinned_on"], json!(["w2"]));
    }
}

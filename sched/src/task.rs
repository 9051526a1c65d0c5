//! What a task is to a policy: its id, its kind, where its input is and the
//! locality levels a placement can have. The view (`view.rs`) and the
//! locality index (`index.rs`) both build on these, so the view can own an
//! index without the index importing the view back.

/// Identifies one task of one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TaskId {
    pub job: u64,
    pub kind: TaskKind,
    pub index: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum TaskKind {
    #[default]
    Map,
    Reduce,
}

// In the base crate, so that the worker names the levels without linking
// a policy.
pub use common::locality::Locality;

/// A task waiting for a slot.
#[derive(Debug, Clone)]
pub struct PendingTask {
    pub id: TaskId,
    pub job: u64,
    pub kind: TaskKind,
    /// The map's input block; `None` for reduces and generators.
    pub block: Option<u64>,
    /// Nodes storing the block on disk.
    pub replicas: Vec<String>,
    /// Nodes holding the block in their cache.
    pub cached_on: Vec<String>,
    pub input_bytes: u64,
    /// Nodes where an attempt of this task failed: retries go elsewhere
    /// where possible.
    pub avoid: Vec<String>,
    /// When the task became runnable (seconds, the view's clock).
    pub runnable_since: f64,
}

impl PendingTask {
    /// Whether this task must not go to `node` of `nodes`: it failed
    /// there, and some live node remains where it has not failed. A task
    /// that failed on every live node may go anywhere again (Hadoop stops
    /// honouring a job's node blacklist past a share of the cluster, for
    /// the same reason): otherwise it would wait for a new node for ever.
    pub fn avoids(&self, node: &str, nodes: &[crate::view::NodeView]) -> bool {
        !self.avoid.is_empty()
            && self.avoid.iter().any(|a| a == node)
            && nodes.iter().any(|n| !self.avoid.contains(&n.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::NodeView;

    #[test]
    fn a_task_avoids_its_failed_nodes_until_it_failed_on_every_one() {
        let nodes: Vec<NodeView> = ["w1", "w2"]
            .iter()
            .map(|n| NodeView {
                name: n.to_string(),
                ..Default::default()
            })
            .collect();
        let mut t = PendingTask {
            id: TaskId {
                job: 1,
                kind: TaskKind::Map,
                index: 0,
            },
            job: 1,
            kind: TaskKind::Map,
            block: None,
            replicas: vec![],
            cached_on: vec![],
            input_bytes: 0,
            avoid: vec![],
            runnable_since: 0.0,
        };
        assert!(!t.avoids("w1", &nodes));
        t.avoid.push("w1".into());
        assert!(t.avoids("w1", &nodes) && !t.avoids("w2", &nodes));
        // Failed everywhere (a task timeout on every node, say): it may go
        // anywhere again rather than wait for ever.
        t.avoid.push("w2".into());
        assert!(!t.avoids("w1", &nodes) && !t.avoids("w2", &nodes));
    }
}

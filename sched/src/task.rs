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

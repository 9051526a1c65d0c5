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

/// The five locality levels of the CLQLMRS paper, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Locality {
    CacheLocal,
    NodeLocal,
    CacheRackLocal,
    RackLocal,
    #[default]
    OffRack,
}

impl Locality {
    pub const ALL: [Locality; 5] = [
        Locality::CacheLocal,
        Locality::NodeLocal,
        Locality::CacheRackLocal,
        Locality::RackLocal,
        Locality::OffRack,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Locality::CacheLocal => "cache_local",
            Locality::NodeLocal => "node_local",
            Locality::CacheRackLocal => "cache_rack_local",
            Locality::RackLocal => "rack_local",
            Locality::OffRack => "off_rack",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Locality::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// Local in the papers' sense: the input is on the node (cache or disk).
    pub fn is_local(self) -> bool {
        matches!(self, Locality::CacheLocal | Locality::NodeLocal)
    }
}

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

//! The five locality levels of a placement, best first: what a policy
//! weighs (`sched`) and what a worker reports of each map's read. Here, in
//! the base crate, so that the worker names them without linking a policy.

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

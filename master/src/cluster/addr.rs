//! A worker's name and where to reach it: what block locations and
//! placement answers carry.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerAddr {
    pub name: String,
    pub addr: String,
    pub rack: String,
}

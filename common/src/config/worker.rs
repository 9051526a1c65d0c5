//! `[[workers]]`: one worker's address, rack, slots and cache.

use super::*;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerConfig {
    pub name: String,
    /// Address the worker listens on and advertises to others.
    pub addr: String,
    #[serde(default = "default_rack")]
    pub rack: String,
    #[serde(default = "default_slots")]
    pub map_slots: u32,
    #[serde(default = "default_slots")]
    pub reduce_slots: u32,
    /// Byte bound of the block LRU cache.
    #[serde(deserialize_with = "de_size", default = "default_cache")]
    pub cache: u64,
    pub data_dir: PathBuf,
}

pub(super) fn default_rack() -> String {
    "default".into()
}
pub(super) fn default_slots() -> u32 {
    2
}
pub(super) fn default_cache() -> u64 {
    256 << 20
}

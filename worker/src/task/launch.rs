//! A task launch as this worker runs it: which attempt of which job, what
//! it reads and where its output goes. The master's launch command becomes
//! one at the edge (`edge/convert.rs`); the executor and the two kinds of
//! attempt read nothing else.

use crate::store::block::BlockLocation;
use rpc::dfs::PutOptions;

/// One attempt of one task: what a report, a kill or a hand-back names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TaskRef {
    pub job_id: u64,
    pub is_map: bool,
    pub index: u32,
    pub attempt: u32,
}

impl TaskRef {
    /// The task's key in the table of running attempts.
    pub fn key(&self) -> crate::task::table::TaskKey {
        (self.job_id, self.is_map, self.index)
    }
}

/// Everything an attempt needs.
#[derive(Debug, Clone)]
pub struct TaskSpec {
    pub task: TaskRef,
    /// The worker's epoch the launch was issued for: the report carries it,
    /// and the master ignores reports of an older incarnation.
    pub epoch: u64,
    pub job_name: String,
    /// The job's parameters (`mrjob::JobParams`) as JSON.
    pub params_json: String,
    /// The job's plan (`mrjob::JobPlan`) as JSON: how to cut and write the
    /// records of a job whose code is not built in.
    pub plan_json: String,
    /// Where the attempt's output part goes (reduces and map-only maps).
    pub output: OutputSpec,
    /// A map's or a reduce's own inputs; matches `task.is_map`.
    pub kind: TaskKind,
}

#[derive(Debug, Clone)]
pub enum TaskKind {
    Map(MapTask),
    Reduce(ReduceTask),
}

/// What a map reads and how it partitions.
#[derive(Debug, Clone, Default)]
pub struct MapTask {
    /// The input block; none for a generator, which reads nothing.
    pub input: Option<BlockLocation>,
    /// Where the input block starts in its file, and the file.
    pub input_offset: u64,
    pub input_path: String,
    /// The blocks after the input in the same file, read only when a
    /// record straddles the input block's end.
    pub following: Vec<BlockLocation>,
    pub reducers: u32,
    /// A total-order job's partition boundaries.
    pub splits: Vec<Vec<u8>>,
    pub sort_buffer_bytes: u64,
}

/// What a reduce reads: every map's output, those finished at its launch
/// here, the others told of as they finish (slow-start, `task/feeds.rs`).
#[derive(Debug, Clone, Default)]
pub struct ReduceTask {
    pub map_outputs: Vec<MapOutputLocation>,
    /// How many maps the job has; 0 from an older master: every output is
    /// in `map_outputs`.
    pub maps_total: u32,
    /// The job's shuffle token: the maps' workers serve its outputs only
    /// to a fetch that carries it.
    pub shuffle_token: bytes::Bytes,
}

/// Where a finished map's output is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MapOutputLocation {
    pub map_index: u32,
    pub attempt: u32,
    pub worker: String,
    pub addr: String,
}

/// The staging path of an attempt's output part, and how it is written
/// (0: the cluster's default).
#[derive(Debug, Clone, Default)]
pub struct OutputSpec {
    pub path: String,
    pub replication: u32,
    pub block_size: u64,
}

impl OutputSpec {
    /// The part's write options, its first replica on `writer`.
    pub fn put_options(&self, writer: &str) -> PutOptions {
        PutOptions {
            replication: self.replication,
            block_size: self.block_size,
            overwrite: false,
            writer: writer.to_string(),
        }
    }
}

/// A launch this worker cannot run as it came (a block location without
/// its block): the attempt is reported failed with `why` at once.
#[derive(Debug, Clone)]
pub struct Refused {
    pub task: TaskRef,
    pub epoch: u64,
    pub why: String,
}

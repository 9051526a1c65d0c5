//! A task launch: which attempt of which job, what it reads and where its
//! output goes. The master builds one from the job and its block tables;
//! the worker runs it and reads nothing else.

use crate::block::BlockLocation;
use bytes::Bytes;

/// One attempt of one task: what a launch, a report, a kill and a
/// progress counter name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct TaskRef {
    pub job_id: u64,
    pub is_map: bool,
    pub index: u32,
    pub attempt: u32,
}

/// Everything an attempt needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub task: TaskRef,
    /// The worker's epoch the launch was issued for: the report carries
    /// it, and the master ignores reports of an older incarnation.
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
    pub kind: LaunchKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LaunchKind {
    Map(MapLaunch),
    Reduce(ReduceLaunch),
}

/// What a map reads and how it partitions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MapLaunch {
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
/// in `map_outputs`, the others told of as they finish
/// ([`crate::Command::MapOutputs`], reduce slow-start).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReduceLaunch {
    pub map_outputs: Vec<MapOutputLocation>,
    /// How many maps the job has; 0 from an older master: every output is
    /// in `map_outputs`.
    pub maps_total: u32,
    /// The job's shuffle token, signed at the master's edge: the maps'
    /// workers serve its outputs only to a fetch that carries it.
    pub shuffle_token: Bytes,
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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutputSpec {
    pub path: String,
    pub replication: u32,
    pub block_size: u64,
}

/// A launch that came unrunnable off the wire (a block location without
/// its block): the worker reports the attempt failed with `why` at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub task: TaskRef,
    pub epoch: u64,
    pub why: String,
}

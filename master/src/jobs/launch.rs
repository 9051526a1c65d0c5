//! The launch command of one attempt: everything the worker needs to run
//! it, built from the job, the block tables and the finished maps.

use super::job::{staging_part, Job};
use super::report::AttemptRef;
use crate::cluster::addr::WorkerAddr;
use protocol::BlockInfo;
use sched::{TaskId, TaskKind};

/// A block and who holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockLocation {
    pub block: BlockInfo,
    pub replicas: Vec<WorkerAddr>,
    pub cached_on: Vec<WorkerAddr>,
}

pub use super::task::MapOutputLocation;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launch {
    pub task: AttemptRef,
    pub job_name: String,
    pub params_json: String,
    /// The job's plan (`mrjob::JobPlan` as JSON).
    pub plan_json: String,
    pub reducers: u32,
    pub splits: Vec<Vec<u8>>,
    /// Maps: the input block, its offset in its file, and the blocks after
    /// it (read only when a record straddles the block's end).
    pub input: Option<BlockLocation>,
    pub input_offset: u64,
    /// The file the input block is of.
    pub input_path: String,
    pub following: Vec<BlockLocation>,
    /// Reduces: where every finished map's output is; with slow-start the
    /// others follow in `MapOutputs` commands as the maps finish.
    pub map_outputs: Vec<MapOutputLocation>,
    /// Reduces: how many maps the job has.
    pub maps_total: u32,
    /// Reduces and map-only maps: the staging path of this attempt's part.
    pub output_path: String,
    pub output_replication: u32,
    pub output_block_size: u64,
    pub sort_buffer_bytes: u64,
    /// The worker's epoch this launch was issued for.
    pub epoch: u64,
}

impl Launch {
    /// The launch of `attempt` of task `id` of `job`, on a worker of
    /// `epoch`; `locate` says where a block is.
    pub fn new(
        job: &Job,
        id: TaskId,
        attempt: u32,
        epoch: u64,
        locate: &dyn Fn(&BlockInfo) -> BlockLocation,
    ) -> Launch {
        let mut l = Launch {
            task: AttemptRef {
                job_id: job.id(),
                is_map: id.kind == TaskKind::Map,
                index: id.index,
                attempt,
            },
            job_name: job.spec().job.clone(),
            params_json: job.spec().params_json.clone(),
            plan_json: job.spec().plan_json.clone(),
            reducers: job.spec().reducers,
            splits: job.spec().splits.clone(),
            output_replication: job.spec().output_replication,
            output_block_size: job.spec().output_block_size,
            sort_buffer_bytes: job.spec().sort_buffer_bytes,
            epoch,
            ..Default::default()
        };
        match id.kind {
            TaskKind::Map => {
                if let Some(mi) = job.map_inputs().get(id.index as usize) {
                    l.input = Some(locate(&mi.block));
                    l.input_offset = mi.offset;
                    l.input_path = mi.path.to_string();
                    l.following = mi.following.iter().map(locate).collect();
                }
                if job.spec().map_only {
                    l.output_path = staging_part(job.id(), id.index, attempt);
                }
            }
            TaskKind::Reduce => {
                l.output_path = staging_part(job.id(), id.index, attempt);
                l.maps_total = job.maps().len() as u32;
                l.map_outputs = job
                    .maps()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| t.output_location(i as u32))
                    .collect();
            }
        }
        l
    }
}

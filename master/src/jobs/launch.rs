//! The launch command of one attempt: everything the worker needs to run
//! it, built from the job, the block tables and the finished maps.

use super::job::{staging_part, Job};
use protocol::{
    BlockInfo, BlockLocation, Launch, LaunchKind, MapLaunch, OutputSpec, ReduceLaunch, TaskRef,
};
use sched::{TaskId, TaskKind};

/// The launch of `attempt` of task `id` of `job`, on a worker of `epoch`;
/// `locate` says where a block is. A reduce's shuffle token is left empty:
/// the edge signs it (`grpc/tokens.rs`), after the lock.
pub fn launch(
    job: &Job,
    id: TaskId,
    attempt: u32,
    epoch: u64,
    locate: &dyn Fn(&BlockInfo) -> BlockLocation,
) -> Launch {
    let spec = job.spec();
    let part = || staging_part(job.id(), id.index, attempt);
    let (kind, path) = match id.kind {
        TaskKind::Map => {
            let mut m = MapLaunch {
                reducers: spec.reducers,
                splits: spec.splits.clone(),
                sort_buffer_bytes: spec.sort_buffer_bytes,
                ..Default::default()
            };
            if let Some(mi) = job.map_inputs().get(id.index as usize) {
                m.input = Some(locate(&mi.block));
                m.input_offset = mi.offset;
                m.input_path = mi.path.to_string();
                m.following = mi.following.iter().map(locate).collect();
            }
            let path = if spec.map_only { part() } else { String::new() };
            (LaunchKind::Map(m), path)
        }
        TaskKind::Reduce => {
            let r = ReduceLaunch {
                map_outputs: job
                    .maps()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| t.output_location(i as u32))
                    .collect(),
                maps_total: job.maps().len() as u32,
                shuffle_token: Default::default(),
            };
            (LaunchKind::Reduce(r), part())
        }
    };
    Launch {
        task: TaskRef {
            job_id: job.id(),
            is_map: id.kind == TaskKind::Map,
            index: id.index,
            attempt,
        },
        epoch,
        job_name: spec.job.clone(),
        params_json: spec.params_json.clone(),
        plan_json: spec.plan_json.clone(),
        output: OutputSpec {
            path,
            replication: spec.output_replication,
            block_size: spec.output_block_size,
        },
        kind,
    }
}

//! The protocol's plain types to protobuf and back: the one place that
//! knows the wire's shapes (optional sub-messages, `bytes`, maps, oneofs).
//! Both directions of every message are here, so the master's edge and
//! the worker's use the same conversion and a round trip is tested once.
//!
//! Conversions from the wire never fail on a field that may be absent:
//! an absent sub-message is its default. What cannot be made sense of is
//! refused with [`WireError`] (a task report naming no task) or, for a
//! command, dropped or turned into [`Command::Refuse`] so that the attempt
//! it names is reported failed rather than lost.

use crate::block::{BlockInfo, BlockLocation, WorkerAddr};
use crate::command::Command;
use crate::heartbeat::{Heartbeat, Poll, Registered, Registration, Reply, StopAnswer};
use crate::report::{TaskMetrics, TaskReport};
use crate::task::{
    Launch, LaunchKind, MapLaunch, MapOutputLocation, OutputSpec, ReduceLaunch, Refused, TaskRef,
};
use proto::command::Kind;

/// A message from the wire that names nothing to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub &'static str);

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for WireError {}

fn all<A, B: From<A>>(v: Vec<A>) -> Vec<B> {
    v.into_iter().map(B::from).collect()
}

// ------------------------------------------------------------ blocks

impl From<proto::BlockInfo> for BlockInfo {
    fn from(b: proto::BlockInfo) -> Self {
        BlockInfo {
            id: b.id,
            len: b.len,
            crc32c: b.crc32c,
            generation: b.generation,
        }
    }
}

impl From<BlockInfo> for proto::BlockInfo {
    fn from(b: BlockInfo) -> Self {
        proto::BlockInfo {
            id: b.id,
            len: b.len,
            crc32c: b.crc32c,
            generation: b.generation,
        }
    }
}

impl From<proto::WorkerAddr> for WorkerAddr {
    fn from(w: proto::WorkerAddr) -> Self {
        WorkerAddr {
            name: w.name,
            addr: w.addr,
            rack: w.rack,
        }
    }
}

impl From<WorkerAddr> for proto::WorkerAddr {
    fn from(w: WorkerAddr) -> Self {
        proto::WorkerAddr {
            name: w.name,
            addr: w.addr,
            rack: w.rack,
        }
    }
}

impl From<BlockLocation> for proto::BlockLocation {
    fn from(l: BlockLocation) -> Self {
        proto::BlockLocation {
            block: Some(l.block.into()),
            replicas: all(l.replicas),
            cached_on: all(l.cached_on),
        }
    }
}

/// A block location off the wire; none when it lacks its block.
pub fn location(l: proto::BlockLocation) -> Option<BlockLocation> {
    Some(BlockLocation {
        block: l.block?.into(),
        replicas: all(l.replicas),
        cached_on: all(l.cached_on),
    })
}

// ------------------------------------------------------------ tasks

impl From<proto::TaskRef> for TaskRef {
    fn from(t: proto::TaskRef) -> Self {
        TaskRef {
            job_id: t.job_id,
            is_map: t.is_map,
            index: t.index,
            attempt: t.attempt,
        }
    }
}

impl From<TaskRef> for proto::TaskRef {
    fn from(t: TaskRef) -> Self {
        proto::TaskRef {
            job_id: t.job_id,
            is_map: t.is_map,
            index: t.index,
            attempt: t.attempt,
        }
    }
}

impl From<proto::MapOutputLocation> for MapOutputLocation {
    fn from(m: proto::MapOutputLocation) -> Self {
        MapOutputLocation {
            map_index: m.map_index,
            attempt: m.attempt,
            worker: m.worker,
            addr: m.addr,
        }
    }
}

impl From<MapOutputLocation> for proto::MapOutputLocation {
    fn from(m: MapOutputLocation) -> Self {
        proto::MapOutputLocation {
            map_index: m.map_index,
            attempt: m.attempt,
            worker: m.worker,
            addr: m.addr,
        }
    }
}

impl From<Launch> for proto::LaunchTask {
    fn from(l: Launch) -> Self {
        let mut t = proto::LaunchTask {
            task: Some(l.task.into()),
            job_name: l.job_name,
            params_json: l.params_json,
            plan_json: l.plan_json,
            output_path: l.output.path,
            output_replication: l.output.replication,
            output_block_size: l.output.block_size,
            epoch: l.epoch,
            ..Default::default()
        };
        match l.kind {
            LaunchKind::Map(m) => {
                t.input = m.input.map(Into::into);
                t.input_offset = m.input_offset;
                t.input_path = m.input_path;
                t.following = all(m.following);
                t.reducers = m.reducers;
                t.splits = m.splits.into_iter().map(Into::into).collect();
                t.sort_buffer_bytes = m.sort_buffer_bytes;
            }
            LaunchKind::Reduce(r) => {
                t.map_outputs = all(r.map_outputs);
                t.maps_total = r.maps_total;
                t.shuffle_token = r.shuffle_token;
            }
        }
        t
    }
}

/// A launch off the wire: `None` when it names no task (nothing to run or
/// to report), refused when a block location of a map's lacks its block.
/// A map reads only the map fields, a reduce only its own.
pub fn launch(l: proto::LaunchTask) -> Option<Result<Launch, Refused>> {
    let task = TaskRef::from(l.task?);
    let refused = || Refused {
        task,
        epoch: l.epoch,
        why: "bad input location: no block info".into(),
    };
    let kind = if task.is_map {
        let input = match l.input {
            Some(b) => match location(b) {
                Some(b) => Some(b),
                None => return Some(Err(refused())),
            },
            None => None,
        };
        let Some(following) = l.following.into_iter().map(location).collect() else {
            return Some(Err(refused()));
        };
        LaunchKind::Map(MapLaunch {
            input,
            input_offset: l.input_offset,
            input_path: l.input_path,
            following,
            reducers: l.reducers,
            splits: l.splits.iter().map(|s| s.to_vec()).collect(),
            sort_buffer_bytes: l.sort_buffer_bytes,
        })
    } else {
        LaunchKind::Reduce(ReduceLaunch {
            map_outputs: all(l.map_outputs),
            maps_total: l.maps_total,
            shuffle_token: l.shuffle_token,
        })
    };
    Some(Ok(Launch {
        task,
        epoch: l.epoch,
        job_name: l.job_name,
        params_json: l.params_json,
        plan_json: l.plan_json,
        output: OutputSpec {
            path: l.output_path,
            replication: l.output_replication,
            block_size: l.output_block_size,
        },
        kind,
    }))
}

// ------------------------------------------------------------ commands

/// A command off the wire; `None` for one with nothing to carry out (no
/// kind, a launch naming no task, a replication naming no block).
pub fn command(c: proto::Command) -> Option<Command> {
    Some(match c.kind? {
        Kind::Launch(l) => match launch(l)? {
            Ok(spec) => Command::Launch(Box::new(spec)),
            Err(r) => Command::Refuse(r),
        },
        Kind::KillTask(t) => Command::KillTask(t.into()),
        Kind::CleanupJob(j) => Command::CleanupJob(j),
        Kind::DeleteBlock(id) => Command::DeleteBlock(id),
        Kind::QuarantineBlock(id) => Command::QuarantineBlock(id),
        Kind::CacheBlock(id) => Command::CacheBlock(id),
        Kind::PinBlock(id) => Command::PinBlock(id),
        Kind::UncacheBlock(id) => Command::UncacheBlock(id),
        Kind::SetCacheCapacity(b) => Command::SetCacheCapacity(b),
        Kind::MapOutputs(m) => Command::MapOutputs {
            job: m.job_id,
            outputs: all(m.outputs),
        },
        Kind::Replicate(r) => Command::Replicate {
            block: r.block?.into(),
            targets: r.targets,
            token: r.access_token,
        },
    })
}

/// A command for the wire. [`Command::Refuse`] is the worker's own and
/// never sent: it has no wire form.
impl From<Command> for proto::Command {
    fn from(c: Command) -> Self {
        let kind = match c {
            Command::Launch(l) => Some(Kind::Launch((*l).into())),
            Command::Refuse(_) => None,
            Command::KillTask(t) => Some(Kind::KillTask(t.into())),
            Command::CleanupJob(j) => Some(Kind::CleanupJob(j)),
            Command::DeleteBlock(id) => Some(Kind::DeleteBlock(id)),
            Command::QuarantineBlock(id) => Some(Kind::QuarantineBlock(id)),
            Command::CacheBlock(id) => Some(Kind::CacheBlock(id)),
            Command::PinBlock(id) => Some(Kind::PinBlock(id)),
            Command::UncacheBlock(id) => Some(Kind::UncacheBlock(id)),
            Command::SetCacheCapacity(b) => Some(Kind::SetCacheCapacity(b)),
            Command::MapOutputs { job, outputs } => Some(Kind::MapOutputs(proto::MapOutputs {
                job_id: job,
                outputs: all(outputs),
            })),
            Command::Replicate {
                block,
                targets,
                token,
            } => Some(Kind::Replicate(proto::ReplicateBlock {
                block: Some(block.into()),
                targets,
                access_token: token,
            })),
        };
        proto::Command { kind }
    }
}

// ------------------------------------------------------------ registration and heartbeats

impl From<proto::RegisterRequest> for Registration {
    fn from(r: proto::RegisterRequest) -> Self {
        Registration {
            protocol_version: r.protocol_version,
            name: r.name,
            addr: r.addr,
            rack: r.rack,
            map_slots: r.map_slots,
            reduce_slots: r.reduce_slots,
            cache_capacity_bytes: r.cache_capacity_bytes,
            blocks: all(r.blocks),
            cached: r.cached,
            cache_used_bytes: r.cache_used_bytes,
            resources: r.resources.map(Into::into).unwrap_or_default(),
            job_dirs: r.job_dirs,
        }
    }
}

impl From<Registration> for proto::RegisterRequest {
    fn from(r: Registration) -> Self {
        proto::RegisterRequest {
            protocol_version: r.protocol_version,
            name: r.name,
            addr: r.addr,
            rack: r.rack,
            map_slots: r.map_slots,
            reduce_slots: r.reduce_slots,
            cache_capacity_bytes: r.cache_capacity_bytes,
            blocks: all(r.blocks),
            cached: r.cached,
            cache_used_bytes: r.cache_used_bytes,
            resources: Some(r.resources.into()),
            job_dirs: r.job_dirs,
        }
    }
}

/// The keys are not here: the master's edge adds them to the wire answer.
impl From<Registered> for proto::RegisterResponse {
    fn from(r: Registered) -> Self {
        proto::RegisterResponse {
            epoch: r.epoch,
            heartbeat_interval_ms: r.heartbeat_interval_ms,
            delete_blocks: r.delete_blocks,
            keys: None,
        }
    }
}

impl From<proto::RegisterResponse> for Registered {
    fn from(r: proto::RegisterResponse) -> Self {
        Registered {
            epoch: r.epoch,
            heartbeat_interval_ms: r.heartbeat_interval_ms,
            delete_blocks: r.delete_blocks,
        }
    }
}

impl From<proto::HeartbeatRequest> for Heartbeat {
    fn from(h: proto::HeartbeatRequest) -> Self {
        Heartbeat {
            name: h.name,
            epoch: h.epoch,
            free_map_slots: h.free_map_slots,
            free_reduce_slots: h.free_reduce_slots,
            resources: h.resources.map(Into::into),
            blocks_added: all(h.blocks_added),
            blocks_removed: h.blocks_removed,
            cache_added: h.cache_added,
            cache_removed: h.cache_removed,
            cache_used_bytes: h.cache_used_bytes,
            draining: h.draining,
            leaving: h.leaving,
            progress: h
                .progress
                .into_iter()
                .filter_map(|p| Some((p.task?.into(), p.progress)))
                .collect(),
        }
    }
}

impl From<Heartbeat> for proto::HeartbeatRequest {
    fn from(h: Heartbeat) -> Self {
        proto::HeartbeatRequest {
            name: h.name,
            epoch: h.epoch,
            free_map_slots: h.free_map_slots,
            free_reduce_slots: h.free_reduce_slots,
            resources: h.resources.map(Into::into),
            blocks_added: all(h.blocks_added),
            blocks_removed: h.blocks_removed,
            cache_added: h.cache_added,
            cache_removed: h.cache_removed,
            cache_used_bytes: h.cache_used_bytes,
            draining: h.draining,
            leaving: h.leaving,
            progress: h
                .progress
                .into_iter()
                .map(|(t, progress)| proto::TaskProgress {
                    task: Some(t.into()),
                    progress,
                })
                .collect(),
        }
    }
}

/// The keys are not here: the master's edge signs the answer's tokens and
/// adds its keys to the wire answer ([`proto::HeartbeatResponse::keys`]).
impl From<Reply> for proto::HeartbeatResponse {
    fn from(r: Reply) -> Self {
        proto::HeartbeatResponse {
            reregister: r.reregister,
            commands: r
                .commands
                .into_iter()
                .filter(|c| !matches!(c, Command::Refuse(_)))
                .map(Into::into)
                .collect(),
            keys: None,
            unsafe_to_stop: r.stop.unsafe_to_stop,
            blocks_to_copy: r.stop.blocks_to_copy,
        }
    }
}

impl From<proto::HeartbeatResponse> for Reply {
    fn from(r: proto::HeartbeatResponse) -> Self {
        Reply {
            reregister: r.reregister,
            commands: r.commands.into_iter().filter_map(command).collect(),
            stop: StopAnswer {
                unsafe_to_stop: r.unsafe_to_stop,
                blocks_to_copy: r.blocks_to_copy,
            },
        }
    }
}

impl From<proto::CommandsReady> for Poll {
    fn from(r: proto::CommandsReady) -> Self {
        if r.ready {
            Poll::Ready
        } else if r.reregister {
            Poll::Reregister
        } else {
            Poll::Idle
        }
    }
}

/// [`Poll::Unsupported`] is the worker's own (an `UNIMPLEMENTED` status):
/// on the wire it is an idle answer.
impl From<Poll> for proto::CommandsReady {
    fn from(p: Poll) -> Self {
        proto::CommandsReady {
            ready: p == Poll::Ready,
            reregister: p == Poll::Reregister,
        }
    }
}

// ------------------------------------------------------------ task reports

impl From<proto::TaskMetrics> for TaskMetrics {
    fn from(m: proto::TaskMetrics) -> Self {
        TaskMetrics {
            locality: m.locality,
            bytes_cache: m.bytes_cache,
            bytes_local: m.bytes_local,
            bytes_remote_rack: m.bytes_remote_rack,
            bytes_remote_off_rack: m.bytes_remote_off_rack,
            bytes_shuffle: m.bytes_shuffle,
            bytes_output: m.bytes_output,
            cpu_s: m.cpu_s,
            peak_mem_bytes: m.peak_mem_bytes,
            start_ms: m.start_ms,
            end_ms: m.end_ms,
            records_in: m.records_in,
            records_out: m.records_out,
            spills: m.spills,
            read_s: m.read_s,
            shuffle_s: m.shuffle_s,
            merge_s: m.merge_s,
            reduce_s: m.reduce_s,
            commit_s: m.commit_s,
        }
    }
}

impl From<TaskMetrics> for proto::TaskMetrics {
    fn from(m: TaskMetrics) -> Self {
        proto::TaskMetrics {
            locality: m.locality,
            bytes_cache: m.bytes_cache,
            bytes_local: m.bytes_local,
            bytes_remote_rack: m.bytes_remote_rack,
            bytes_remote_off_rack: m.bytes_remote_off_rack,
            bytes_shuffle: m.bytes_shuffle,
            bytes_output: m.bytes_output,
            cpu_s: m.cpu_s,
            peak_mem_bytes: m.peak_mem_bytes,
            start_ms: m.start_ms,
            end_ms: m.end_ms,
            records_in: m.records_in,
            records_out: m.records_out,
            spills: m.spills,
            read_s: m.read_s,
            shuffle_s: m.shuffle_s,
            merge_s: m.merge_s,
            reduce_s: m.reduce_s,
            commit_s: m.commit_s,
        }
    }
}

/// A report naming no task has nothing to commit or fail: refused.
impl TryFrom<proto::TaskUpdateRequest> for TaskReport {
    type Error = WireError;

    fn try_from(r: proto::TaskUpdateRequest) -> Result<Self, WireError> {
        Ok(TaskReport {
            worker: r.worker,
            epoch: r.epoch,
            task: r
                .task
                .ok_or(WireError("a task report names no task"))?
                .into(),
            succeeded: r.succeeded,
            error: r.error,
            fetch_failure: r.fetch_failure,
            failed_map: r.failed_map,
            metrics: r.metrics.map(Into::into).unwrap_or_default(),
            counters: r.counters.into_iter().collect(),
            handed_back: r.handed_back,
        })
    }
}

impl From<TaskReport> for proto::TaskUpdateRequest {
    fn from(r: TaskReport) -> Self {
        proto::TaskUpdateRequest {
            worker: r.worker,
            epoch: r.epoch,
            task: Some(r.task.into()),
            succeeded: r.succeeded,
            error: r.error,
            fetch_failure: r.fetch_failure,
            failed_map: r.failed_map,
            metrics: Some(r.metrics.into()),
            counters: r.counters.into_iter().collect(),
            handed_back: r.handed_back,
        }
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;

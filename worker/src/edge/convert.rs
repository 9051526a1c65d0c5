//! Protobuf to the worker's own types and back: the one place that knows
//! the wire format's shapes (optional sub-messages, `oneof`s, `bytes`,
//! maps). The edges (`edge/service.rs`, `edge/master_client.rs`, `edge/peers.rs`) call these;
//! nothing past them sees a protobuf type.

use crate::control::command::Command;
use crate::control::messages::{Heartbeat, Poll, Registered, Registration, Reply};
use crate::store::block::{BlockChunk, PipelineAnswer, PipelineFailure};
use crate::store::block::{BlockInfo, BlockLocation, WorkerAddr};
use crate::task::launch::{
    MapOutputLocation, MapTask, OutputSpec, ReduceTask, Refused, TaskKind, TaskRef, TaskSpec,
};
use crate::task::outcome::{End, TaskReport, HANDED_BACK};
use crate::task::partition::{PartitionFile, PartitionRef, ShuffleChunk};
use proto::command::Kind;

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

/// A block location; `None` without the block itself.
fn location(l: proto::BlockLocation) -> Option<BlockLocation> {
    Some(BlockLocation {
        block: l.block?.into(),
        replicas: all(l.replicas),
        cached_on: all(l.cached_on),
    })
}

// ------------------------------------------------------------ the master

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

/// A launch as the worker runs it: `None` when it names no task (nothing
/// to run or to report), refused when a block location of a map's lacks
/// its block. A map reads only the map fields, a reduce only its own.
pub fn launch(l: proto::LaunchTask) -> Option<Result<TaskSpec, Refused>> {
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
        TaskKind::Map(MapTask {
            input,
            input_offset: l.input_offset,
            input_path: l.input_path,
            following,
            reducers: l.reducers,
            splits: l.splits.iter().map(|s| s.to_vec()).collect(),
            sort_buffer_bytes: l.sort_buffer_bytes,
        })
    } else {
        TaskKind::Reduce(ReduceTask {
            map_outputs: all(l.map_outputs),
            maps_total: l.maps_total,
            shuffle_token: l.shuffle_token,
        })
    };
    Some(Ok(TaskSpec {
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

/// A command as the worker carries it out; `None` for one with nothing
/// to carry out (no kind, a launch naming no task, a replication naming
/// no block).
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

impl From<proto::HeartbeatResponse> for Reply {
    fn from(r: proto::HeartbeatResponse) -> Self {
        Reply {
            reregister: r.reregister,
            commands: r.commands.into_iter().filter_map(command).collect(),
            unsafe_to_stop: r.unsafe_to_stop,
            blocks_to_copy: r.blocks_to_copy,
        }
    }
}

impl From<proto::RegisterResponse> for Registered {
    fn from(r: proto::RegisterResponse) -> Self {
        Registered {
            epoch: r.epoch,
            delete_blocks: r.delete_blocks,
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

impl From<Registration> for proto::RegisterRequest {
    fn from(r: Registration) -> Self {
        proto::RegisterRequest {
            protocol_version: common::PROTOCOL_VERSION,
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

impl From<Heartbeat> for proto::HeartbeatRequest {
    fn from(h: Heartbeat) -> Self {
        proto::HeartbeatRequest {
            name: h.name,
            epoch: h.epoch,
            free_map_slots: h.free_map_slots,
            free_reduce_slots: h.free_reduce_slots,
            resources: Some(h.resources.into()),
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

/// Worker `worker`'s report of an attempt. A handed-back attempt carries
/// no metrics; one that ran carries its usage, and its outcome's figures
/// when it succeeded.
pub fn task_update(worker: &str, r: TaskReport) -> proto::TaskUpdateRequest {
    let mut req = proto::TaskUpdateRequest {
        worker: worker.to_string(),
        epoch: r.epoch,
        task: Some(r.task.into()),
        ..Default::default()
    };
    let (result, usage) = match r.end {
        End::HandedBack => {
            req.error = HANDED_BACK.into();
            req.handed_back = true;
            return req;
        }
        End::Ran { result, usage } => (result, usage),
    };
    let mut m = proto::TaskMetrics {
        start_ms: usage.start_ms,
        end_ms: usage.end_ms,
        cpu_s: usage.cpu_s,
        peak_mem_bytes: usage.peak_mem_bytes,
        ..Default::default()
    };
    match result {
        Ok(o) => {
            req.succeeded = true;
            m.locality = o.locality;
            m.bytes_cache = o.bytes_cache;
            m.bytes_local = o.bytes_local;
            m.bytes_remote_rack = o.bytes_remote_rack;
            m.read_s = o.read_s;
            m.shuffle_s = o.shuffle_s;
            m.merge_s = o.merge_s;
            m.reduce_s = o.reduce_s;
            m.commit_s = o.commit_s;
            m.bytes_remote_off_rack = o.bytes_remote_off_rack;
            m.bytes_shuffle = o.bytes_shuffle;
            m.bytes_output = o.bytes_output;
            m.records_in = o.records_in;
            m.records_out = o.records_out;
            m.spills = o.spills;
            req.counters = o.counters.into_iter().collect();
        }
        Err(f) => {
            req.error = f.msg;
            if let Some(map) = f.fetch_failed_map {
                req.fetch_failure = true;
                req.failed_map = map;
            }
        }
    }
    req.metrics = Some(m);
    req
}

// ------------------------------------------------------------ workers

impl From<proto::WriteBlockChunk> for BlockChunk {
    fn from(c: proto::WriteBlockChunk) -> Self {
        BlockChunk {
            block: c.block.map(Into::into),
            data: c.data,
            crc32c: c.crc32c,
            downstream: all(c.downstream),
            access_token: c.access_token,
        }
    }
}

impl From<BlockChunk> for proto::WriteBlockChunk {
    fn from(c: BlockChunk) -> Self {
        proto::WriteBlockChunk {
            block: c.block.map(Into::into),
            data: c.data,
            crc32c: c.crc32c,
            downstream: all(c.downstream),
            access_token: c.access_token,
        }
    }
}

impl From<proto::PipelineFailure> for PipelineFailure {
    fn from(f: proto::PipelineFailure) -> Self {
        PipelineFailure {
            worker: f.worker,
            error: f.error,
        }
    }
}

impl From<PipelineFailure> for proto::PipelineFailure {
    fn from(f: PipelineFailure) -> Self {
        proto::PipelineFailure {
            worker: f.worker,
            error: f.error,
        }
    }
}

impl From<proto::WriteBlockResponse> for PipelineAnswer {
    fn from(r: proto::WriteBlockResponse) -> Self {
        PipelineAnswer {
            worker: r.worker,
            stored: r.stored,
            failed: r.failed.map(Into::into),
        }
    }
}

impl From<PipelineAnswer> for proto::WriteBlockResponse {
    fn from(a: PipelineAnswer) -> Self {
        proto::WriteBlockResponse {
            worker: a.worker,
            stored: a.stored,
            failed: a.failed.map(Into::into),
        }
    }
}

impl From<proto::FetchPartitionRequest> for PartitionRef {
    fn from(r: proto::FetchPartitionRequest) -> Self {
        PartitionRef {
            job_id: r.job_id,
            map_index: r.map_index,
            attempt: r.attempt,
            partition: r.partition,
        }
    }
}

impl From<PartitionRef> for proto::FetchPartitionRequest {
    fn from(r: PartitionRef) -> Self {
        proto::FetchPartitionRequest {
            job_id: r.job_id,
            map_index: r.map_index,
            attempt: r.attempt,
            partition: r.partition,
            shuffle_token: Default::default(),
        }
    }
}

impl From<proto::PartitionFile> for PartitionFile {
    fn from(f: proto::PartitionFile) -> Self {
        PartitionFile {
            path: f.path.into(),
            offset: f.offset,
            len: f.len,
            crc32c: f.crc32c,
        }
    }
}

impl From<PartitionFile> for proto::PartitionFile {
    fn from(f: PartitionFile) -> Self {
        proto::PartitionFile {
            path: f.path.to_string_lossy().into_owned(),
            offset: f.offset,
            len: f.len,
            crc32c: f.crc32c,
        }
    }
}

impl From<proto::DataChunk> for ShuffleChunk {
    fn from(c: proto::DataChunk) -> Self {
        ShuffleChunk {
            data: c.data,
            crc32c: c.crc32c,
        }
    }
}

impl From<ShuffleChunk> for proto::DataChunk {
    fn from(c: ShuffleChunk) -> Self {
        proto::DataChunk {
            data: c.data,
            from_cache: false,
            crc32c: c.crc32c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::outcome::{Failure, Usage};

    fn at(id: u64) -> proto::BlockLocation {
        proto::BlockLocation {
            block: Some(proto::BlockInfo {
                id,
                len: 10,
                crc32c: 7,
                generation: 2,
            }),
            replicas: vec![proto::WorkerAddr {
                name: "w1".into(),
                addr: "h:1".into(),
                rack: "r".into(),
            }],
            cached_on: vec![],
        }
    }

    fn map_launch() -> proto::LaunchTask {
        proto::LaunchTask {
            task: Some(proto::TaskRef {
                job_id: 4,
                is_map: true,
                index: 2,
                attempt: 1,
            }),
            job_name: "wordcount".into(),
            input: Some(at(8)),
            following: vec![at(9)],
            splits: vec![bytes::Bytes::from_static(b"m")],
            reducers: 3,
            output_path: "/out".into(),
            epoch: 6,
            ..Default::default()
        }
    }

    #[test]
    fn a_map_launch_keeps_what_the_map_reads() {
        let s = launch(map_launch()).unwrap().unwrap();
        assert_eq!(
            (s.task.job_id, s.task.index, s.task.attempt, s.epoch),
            (4, 2, 1, 6)
        );
        assert_eq!(s.output.path, "/out");
        let TaskKind::Map(m) = s.kind else {
            panic!("a map launch became a reduce")
        };
        let input = m.input.unwrap();
        assert_eq!((input.block.id, input.block.generation), (8, 2));
        assert_eq!(input.replicas[0].name, "w1");
        assert_eq!(m.following[0].block.id, 9);
        assert_eq!((m.reducers, m.splits), (3, vec![b"m".to_vec()]));
    }

    /// A launch without a task names nothing to report on; one whose block
    /// location lacks its block is refused, naming the attempt, so that the
    /// master hears of it.
    #[test]
    fn a_launch_without_its_parts_is_dropped_or_refused() {
        let mut l = map_launch();
        l.task = None;
        assert!(launch(l).is_none());
        let mut l = map_launch();
        l.following[0].block = None;
        let r = launch(l).unwrap().unwrap_err();
        assert_eq!((r.task.index, r.epoch), (2, 6));
        assert!(r.why.contains("no block info"), "{}", r.why);
        // A reduce never reads the map fields.
        let mut l = map_launch();
        l.task.as_mut().unwrap().is_map = false;
        l.input.as_mut().unwrap().block = None;
        assert!(matches!(
            launch(l).unwrap().unwrap().kind,
            TaskKind::Reduce(_)
        ));
    }

    #[test]
    fn reports_carry_their_metrics_or_none() {
        let task = TaskRef {
            job_id: 1,
            is_map: false,
            index: 0,
            attempt: 3,
        };
        let usage = Usage {
            start_ms: 10,
            end_ms: 20,
            cpu_s: 0.5,
            peak_mem_bytes: 99,
        };
        let failed = TaskReport {
            task,
            epoch: 2,
            end: End::Ran {
                result: Err(Failure {
                    msg: "cannot fetch".into(),
                    fetch_failed_map: Some(7),
                }),
                usage,
            },
        };
        let r = task_update("w1", failed);
        assert!(!r.succeeded && r.fetch_failure);
        assert_eq!((r.failed_map, r.error.as_str()), (7, "cannot fetch"));
        assert_eq!(r.metrics.unwrap().end_ms, 20);
        let back = TaskReport {
            task,
            epoch: 2,
            end: End::HandedBack,
        };
        let r = task_update("w1", back);
        assert!(r.handed_back && r.metrics.is_none());
        assert_eq!(r.error, HANDED_BACK);
        assert_eq!(r.task.unwrap().attempt, 3);
    }
}

//! Protobuf to the master's domain types and back: the one place that
//! knows the wire format's shapes (optional sub-messages, `bytes`, maps).

use crate::blocks::files::{
    AddBlock, BlockStatus, CompleteFile, CompletedBlock, CreateFile, Created, FileStatus,
    ListEntry, NewBlock,
};
use crate::blocks::pins::CacheChange;
use crate::cluster::status::{ClusterStatus, WorkerStatus};
use crate::cluster::{Command, Heartbeat, Registered, Registration, Reply, WorkerAddr};
use crate::error::MasterError;
use crate::jobs::launch::{BlockLocation, Launch, MapOutputLocation};
use crate::jobs::report::{AttemptRef, AttemptReport, TaskMetrics};
use crate::jobs::submit::SubmitJob;
use proto::command::Kind;
use protocol::BlockInfo;

fn all<A, B: From<A>>(v: Vec<A>) -> Vec<B> {
    v.into_iter().map(B::from).collect()
}

// ------------------------------------------------------------ in

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

impl From<proto::CreateFileRequest> for CreateFile {
    fn from(r: proto::CreateFileRequest) -> Self {
        CreateFile {
            path: r.path,
            replication: r.replication,
            block_size: r.block_size,
            writer: r.writer,
            overwrite: r.overwrite,
            owner: String::new(),
        }
    }
}

impl From<proto::AddBlockRequest> for AddBlock {
    fn from(r: proto::AddBlockRequest) -> Self {
        AddBlock {
            path: r.path,
            lease: r.lease,
            exclude: r.exclude,
            count: r.count,
            offset: r.offset,
        }
    }
}

impl From<proto::CompleteFileRequest> for CompleteFile {
    fn from(r: proto::CompleteFileRequest) -> Self {
        CompleteFile {
            path: r.path,
            lease: r.lease,
            blocks: r
                .blocks
                .into_iter()
                .map(|b| CompletedBlock {
                    block: b.block.map(BlockInfo::from),
                    stored_on: b.stored_on,
                })
                .collect(),
        }
    }
}

impl From<proto::SubmitJobRequest> for SubmitJob {
    fn from(r: proto::SubmitJobRequest) -> Self {
        SubmitJob {
            job: r.job,
            inputs: r.inputs,
            output: r.output,
            reducers: r.reducers,
            params_json: r.params_json,
            output_replication: r.output_replication,
            splits: r.splits.into_iter().map(|b| b.to_vec()).collect(),
            queue: r.queue,
            sort_buffer_bytes: r.sort_buffer_bytes,
            output_block_size: r.output_block_size,
            plan_json: r.plan_json,
            owner: String::new(),
        }
    }
}

impl From<proto::TaskRef> for AttemptRef {
    fn from(t: proto::TaskRef) -> Self {
        AttemptRef {
            job_id: t.job_id,
            is_map: t.is_map,
            index: t.index,
            attempt: t.attempt,
        }
    }
}

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

impl From<proto::TaskUpdateRequest> for AttemptReport {
    fn from(r: proto::TaskUpdateRequest) -> Self {
        AttemptReport {
            worker: r.worker,
            epoch: r.epoch,
            task: r.task.map(AttemptRef::from),
            succeeded: r.succeeded,
            error: r.error,
            fetch_failure: r.fetch_failure,
            failed_map: r.failed_map,
            metrics: r.metrics.map(TaskMetrics::from).unwrap_or_default(),
            counters: r.counters.into_iter().collect(),
            handed_back: r.handed_back,
        }
    }
}

// ------------------------------------------------------------ out

impl From<WorkerAddr> for proto::WorkerAddr {
    fn from(w: WorkerAddr) -> Self {
        proto::WorkerAddr {
            name: w.name,
            addr: w.addr,
            rack: w.rack,
        }
    }
}

impl From<Registered> for proto::RegisterResponse {
    fn from(r: Registered) -> Self {
        proto::RegisterResponse {
            keys: None,
            epoch: r.epoch,
            heartbeat_interval_ms: r.heartbeat_interval_ms,
            delete_blocks: r.delete_blocks,
        }
    }
}

impl From<Reply> for proto::HeartbeatResponse {
    fn from(r: Reply) -> Self {
        proto::HeartbeatResponse {
            keys: None,
            reregister: r.reregister,
            commands: all(r.commands),
            unsafe_to_stop: r.stop.unsafe_to_stop,
            blocks_to_copy: r.stop.blocks_to_copy,
        }
    }
}

impl From<Command> for proto::Command {
    fn from(c: Command) -> Self {
        let kind = match c {
            Command::Replicate { block, targets } => Kind::Replicate(proto::ReplicateBlock {
                block: Some(block.into()),
                targets,
                // Signed at the edge (`tokens.rs`), after the lock.
                access_token: Default::default(),
            }),
            Command::DeleteBlock(id) => Kind::DeleteBlock(id),
            Command::QuarantineBlock(id) => Kind::QuarantineBlock(id),
            Command::UncacheBlock(id) => Kind::UncacheBlock(id),
            Command::Launch(l) => Kind::Launch((*l).into()),
            Command::KillTask(t) => Kind::KillTask(t.into()),
            Command::CleanupJob(id) => Kind::CleanupJob(id),
            Command::SetCacheCapacity(b) => Kind::SetCacheCapacity(b),
            Command::PinBlock(id) => Kind::PinBlock(id),
            Command::MapOutputs { job, outputs } => Kind::MapOutputs(proto::MapOutputs {
                job_id: job,
                outputs: all(outputs),
            }),
        };
        proto::Command { kind: Some(kind) }
    }
}

impl From<AttemptRef> for proto::TaskRef {
    fn from(t: AttemptRef) -> Self {
        proto::TaskRef {
            job_id: t.job_id,
            is_map: t.is_map,
            index: t.index,
            attempt: t.attempt,
        }
    }
}

impl From<BlockLocation> for proto::BlockLocation {
    fn from(b: BlockLocation) -> Self {
        proto::BlockLocation {
            block: Some(b.block.into()),
            replicas: all(b.replicas),
            cached_on: all(b.cached_on),
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
        proto::LaunchTask {
            // Signed at the edge (`tokens.rs`), after the lock.
            shuffle_token: Default::default(),
            task: Some(l.task.into()),
            job_name: l.job_name,
            params_json: l.params_json,
            plan_json: l.plan_json,
            reducers: l.reducers,
            splits: l.splits.into_iter().map(Into::into).collect(),
            input: l.input.map(Into::into),
            input_offset: l.input_offset,
            input_path: l.input_path,
            following: all(l.following),
            map_outputs: all(l.map_outputs),
            output_path: l.output_path,
            output_replication: l.output_replication,
            output_block_size: l.output_block_size,
            sort_buffer_bytes: l.sort_buffer_bytes,
            epoch: l.epoch,
            maps_total: l.maps_total,
        }
    }
}

impl From<Created> for proto::CreateFileResponse {
    fn from(c: Created) -> Self {
        proto::CreateFileResponse {
            lease: c.lease,
            replication: c.replication,
            block_size: c.block_size,
            renew_every_ms: c.renew_every.as_millis() as u64,
        }
    }
}

impl From<crate::blocks::lease::Recovered> for proto::RecoverLeaseResponse {
    fn from(r: crate::blocks::lease::Recovered) -> Self {
        use crate::blocks::lease::Outcome;
        let (outcome, bytes, blocks) = match r.outcome {
            Outcome::Closed { bytes, blocks } => ("closed", bytes, blocks as u64),
            Outcome::Removed => ("removed", 0, 0),
            Outcome::NoOpenWrite => ("none", 0, 0),
        };
        proto::RecoverLeaseResponse {
            outcome: outcome.into(),
            bytes,
            blocks,
            holder: r.holder,
            silent_ms: r.silent.as_millis() as u64,
        }
    }
}

impl From<NewBlock> for proto::AddBlockResponse {
    fn from(b: NewBlock) -> Self {
        proto::AddBlockResponse {
            access_token: Default::default(),
            block_id: b.block_id,
            targets: all(b.targets),
            generation: b.generation,
        }
    }
}

impl From<BlockStatus> for proto::BlockStatus {
    fn from(b: BlockStatus) -> Self {
        proto::BlockStatus {
            access_token: Default::default(),
            block: Some(b.block.into()),
            replicas: all(b.replicas),
            cached_on: all(b.cached_on),
            pinned_on: all(b.pinned_on),
        }
    }
}

impl From<FileStatus> for proto::FileStatus {
    fn from(f: FileStatus) -> Self {
        proto::FileStatus {
            path: f.path,
            size: f.size,
            replication: f.replication,
            block_size: f.block_size,
            blocks: all(f.blocks),
            mtime_ms: f.mtime_ms,
            owner: f.owner,
            mode: f.mode,
        }
    }
}

impl From<ListEntry> for proto::ListEntry {
    fn from(e: ListEntry) -> Self {
        proto::ListEntry {
            path: e.path,
            is_dir: e.is_dir,
            size: e.size,
            replication: e.replication,
            blocks: e.blocks,
            mtime_ms: e.mtime_ms,
            owner: e.owner,
            mode: e.mode,
        }
    }
}

impl From<CacheChange> for proto::CacheFileResponse {
    fn from(c: CacheChange) -> Self {
        proto::CacheFileResponse {
            blocks: c.blocks,
            bytes: c.bytes,
            workers: c.workers,
        }
    }
}

impl From<WorkerStatus> for proto::WorkerStatus {
    fn from(w: WorkerStatus) -> Self {
        proto::WorkerStatus {
            name: w.name,
            addr: w.addr,
            rack: w.rack,
            alive: w.alive,
            last_heartbeat_ms: w.last_heartbeat_ms,
            map_slots: w.map_slots,
            reduce_slots: w.reduce_slots,
            free_map_slots: w.free_map_slots,
            free_reduce_slots: w.free_reduce_slots,
            cache_used_bytes: w.cache_used_bytes,
            cache_capacity_bytes: w.cache_capacity_bytes,
            blocks: w.blocks,
            resources: Some(w.resources.into()),
            epoch: w.epoch,
            cache_pinned_bytes: w.cache_pinned_bytes,
            admin_state: w.admin_state.as_str().to_string(),
            blocks_under_replicated: w.blocks_under_replicated,
        }
    }
}

impl From<ClusterStatus> for proto::ClusterStatusResponse {
    fn from(s: ClusterStatus) -> Self {
        proto::ClusterStatusResponse {
            workers: all(s.workers),
            files: s.files,
            blocks: s.blocks,
            under_replicated_blocks: s.under_replicated_blocks,
        }
    }
}

impl TryFrom<proto::SafeModeRequest> for crate::core::SafeModeAction {
    type Error = MasterError;
    fn try_from(r: proto::SafeModeRequest) -> Result<Self, MasterError> {
        use crate::core::SafeModeAction::*;
        match r.action.as_str() {
            "get" | "" => Ok(Get),
            "enter" => Ok(Enter),
            "leave" => Ok(Leave),
            other => Err(MasterError::InvalidArgument(format!(
                "safe mode action {other:?}: expected get, enter or leave"
            ))),
        }
    }
}

impl From<crate::blocks::safemode::SafeModeStatus> for proto::SafeModeResponse {
    fn from(s: crate::blocks::safemode::SafeModeStatus) -> Self {
        proto::SafeModeResponse {
            on: s.on,
            manual: s.manual,
            threshold: s.threshold,
            reported_blocks: s.reported_blocks,
            total_blocks: s.total_blocks,
            low_resources: s.low_resources.unwrap_or_default(),
        }
    }
}

impl From<crate::blocks::fsck::FsckBlock> for proto::FsckBlock {
    fn from(b: crate::blocks::fsck::FsckBlock) -> Self {
        proto::FsckBlock {
            block_id: b.block_id,
            files: b.files,
            live: b.live,
            want: b.want,
            corrupt_on: b.corrupt_on,
        }
    }
}

impl From<crate::blocks::fsck::FsckReport> for proto::FsckResponse {
    fn from(r: crate::blocks::fsck::FsckReport) -> Self {
        proto::FsckResponse {
            total_blocks: r.total_blocks,
            safe_mode: r.safe_mode,
            missing: all(r.missing),
            corrupt: all(r.corrupt),
            under_replicated: all(r.under_replicated),
        }
    }
}

impl From<crate::core::Decommission> for proto::DecommissionResponse {
    fn from(d: crate::core::Decommission) -> Self {
        proto::DecommissionResponse {
            worker: d.worker,
            admin_state: d.state.as_str().to_string(),
            blocks_under_replicated: d.blocks_under_replicated,
        }
    }
}

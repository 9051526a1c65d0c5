//! Protobuf to the master's own types and back: files, jobs and the
//! admin calls. The master-worker messages (registration, heartbeats,
//! commands, launches, task reports), and the blocks and workers the
//! answers here name, convert in `protocol::wire`: once, for every side of
//! the protocol.

use crate::blocks::files::{
    AddBlock, BlockStatus, CompleteFile, CompletedBlock, CreateFile, Created, FileStatus,
    ListEntry, NewBlock,
};
use crate::blocks::pins::CacheChange;
use crate::cluster::status::{ClusterStatus, WorkerStatus};
use crate::error::MasterError;
use crate::jobs::submit::SubmitJob;
use protocol::BlockInfo;

fn all<A, B: From<A>>(v: Vec<A>) -> Vec<B> {
    v.into_iter().map(B::from).collect()
}

// ------------------------------------------------------------ in

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

// ------------------------------------------------------------ out

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

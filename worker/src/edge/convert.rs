//! Protobuf to the worker's own types and back, between workers: the
//! pipeline's chunks and answers, the shuffle's partitions. What the
//! master and the worker tell each other converts in `protocol::wire`,
//! shared with the master. The edges (`edge/service.rs`, `edge/peers.rs`)
//! call these; nothing past them sees a protobuf type.

use crate::store::block::{BlockChunk, PipelineAnswer, PipelineFailure};
use crate::task::partition::{PartitionFile, PartitionRef, ShuffleChunk};

fn all<A, B: From<A>>(v: Vec<A>) -> Vec<B> {
    v.into_iter().map(B::from).collect()
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
            source: f.source.filter(|s| !s.is_empty()).map(Into::into),
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
            source: f.source.map(|s| s.to_string_lossy().into_owned()),
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

//! Every request a worker's gRPC service accepts, and every command it
//! takes from the master, decoded from fuzzed protobuf bytes, converted to
//! the worker's own types as its gRPC edge converts them, and put through
//! the worker's own validation: a block write's header and chunks
//! against a real block store (length, each chunk's and the block's
//! CRC32C checked, nothing half written left visible), a read's byte
//! range, a shuffle fetch against a fuzzed map-output index, and a
//! launch's job and parameters. Never a panic; a refused write stores
//! nothing.
//!
//! Input: `[kind, body...]`; block writes are a sequence of
//! length-delimited `WriteBlockChunk`s.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use proto::*;

fn store() -> (worker::store::disk::BlockStore, std::path::PathBuf) {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("mr-fuzz-worker-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    (
        worker::store::disk::BlockStore::open(&dir).expect("an empty store opens"),
        dir,
    )
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    match kind % 5 {
        0 => {
            // WriteBlock: the handler's header check, then the store's
            // streaming writer, chunk by chunk, as the handler feeds it.
            let mut buf = body;
            let mut chunks = Vec::new();
            while !buf.is_empty() && chunks.len() < 64 {
                match WriteBlockChunk::decode_length_delimited(&mut buf) {
                    Ok(c) => chunks.push(worker::store::block::BlockChunk::from(c)),
                    Err(_) => break,
                }
            }
            let Ok(info) = worker::store::pipeline::block_header(chunks.first()) else {
                return;
            };
            // Keep the fuzzer from writing gigabytes of zeros.
            if info.len > 1 << 20 {
                return;
            }
            let (st, dir) = store();
            let stored = (|| {
                let mut w = st.begin(info).ok()?;
                let mut received = 0u64;
                for c in &chunks {
                    // Each chunk's own CRC32C, when it carries one, as a
                    // pipeline target checks it on receipt.
                    let crc = worker::store::pipeline::check_chunk(&info, received, c).ok()?;
                    received += c.data.len() as u64;
                    if received > info.len {
                        return None;
                    }
                    w.write_checked(&c.data, crc).ok()?;
                }
                w.commit(&st).ok()
            })();
            match stored {
                Some(()) => {
                    assert!(chunks
                        .iter()
                        .all(|c| c.crc32c.is_none_or(|crc| crc == crc32c::crc32c(&c.data))));
                    let all: Vec<u8> = chunks.iter().flat_map(|c| c.data.to_vec()).collect();
                    assert_eq!(all.len() as u64, info.len);
                    assert_eq!(crc32c::crc32c(&all), info.crc32c);
                    assert_eq!(&st.read(info.id).expect("stored block reads")[..], &all[..]);
                }
                None => assert!(!st.contains(info.id), "a refused write left a block"),
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
        1 => {
            if let Ok(r) = ReadBlockRequest::decode(body) {
                let block_len = (r.block_id % (1 << 20)) as usize;
                let range = worker::edge::service::read_range(block_len, r.offset, r.len);
                assert!(range.start <= range.end && range.end <= block_len);
            }
        }
        2 => {
            // FetchPartition: the request, then the index it is served from.
            let (head, index) = body.split_at(body.len().min(16));
            if let Ok(r) = FetchPartitionRequest::decode(head) {
                if let Ok(idx) = worker::task::mapout::MapOutputIndex::parse(index) {
                    assert_eq!(idx.parts.len(), index.len() / worker::task::mapout::INDEX_ENTRY);
                    let _ = idx.parts.get(r.partition as usize);
                }
            }
        }
        3 => {
            // What comes back from the master: heartbeat answers and the
            // launches in them.
            if let Ok(resp) = HeartbeatResponse::decode(body) {
                let reply = protocol::Reply::from(resp);
                for c in reply.commands {
                    if let protocol::Command::Launch(l) = c {
                        // A built-in job, a Streaming command or a program:
                        // decoded or refused, never a panic.
                        let _ = worker::task::code::TaskCode::decode(
                            &joblib::jobs::registry::Registry::builtins(),
                            &l.job_name,
                            &l.params_json,
                            &l.plan_json,
                        );
                        if let protocol::LaunchKind::Map(m) = &l.kind {
                            let part = joblib::jobs::formats::range_partition(b"key", &m.splits);
                            assert!(part as usize <= m.splits.len());
                        }
                    }
                }
            }
        }
        _ => {
            let _ = RegisterResponse::decode(body);
            let _ = LaunchTask::decode(body);
            let _ = DataChunk::decode(body);
        }
    }
});

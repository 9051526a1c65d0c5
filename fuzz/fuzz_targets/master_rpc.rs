//! Every request the master's gRPC service accepts, decoded from fuzzed
//! protobuf bytes converted as the gRPC edge converts it and handed to the same plain
//! function its handler calls,
//! as a sequence on one fresh master (a data directory per input): decoding
//! and the handlers' validation never panic, whatever the bytes and the
//! order; a refused job spec has no side effect (RELIABILITY.md scenario 9).
//!
//! Input: records of `[method, len_lo, len_hi, body...]`. Leases, block ids
//! and epochs are 64-bit numbers the master draws; the fuzzer cannot guess
//! them, so a request's value picks one the master handed out earlier in the
//! sequence (`value % count`), and the write and heartbeat paths run deep.
#![no_main]

use libfuzzer_sys::fuzz_target;
use master::core::MasterState;
use prost::Message;
use proto::*;
use std::time::{Duration, Instant};

/// One data directory per fuzzing process, emptied for every input.
fn fresh_master() -> MasterState {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("mr-fuzz-master-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let text = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = \"{}\"\n\
         [dfs]\nblock_size = \"64KiB\"\nreplication = 2\n\
         [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:7101\"\nrack = \"r1\"\ndata_dir = \"/nonexistent/w1\"\n\
         [[workers]]\nname = \"w2\"\naddr = \"127.0.0.1:7102\"\nrack = \"r2\"\ndata_dir = \"/nonexistent/w2\"\n",
        dir.display()
    );
    let cfg = common::config::ClusterConfig::parse(&text).expect("valid config");
    MasterState::open(cfg, Instant::now()).expect("a master opens on an empty directory")
}

fuzz_target!(|data: &[u8]| {
    let mut st = fresh_master();
    let mut now = Instant::now();
    let mut leases: Vec<u64> = Vec::new();
    let mut blocks: Vec<u64> = Vec::new();
    let mut epochs: Vec<u64> = Vec::new();
    let pick = |v: u64, from: &[u64]| -> u64 {
        if from.is_empty() {
            v
        } else {
            from[(v % from.len() as u64) as usize]
        }
    };
    let mut rest = data;
    while rest.len() >= 3 {
        let method = rest[0];
        let len = (u16::from_le_bytes([rest[1], rest[2]]) as usize).min(rest.len() - 3);
        let body = &rest[3..3 + len];
        rest = &rest[3 + len..];
        // Time goes on between calls: expiry and re-replication get a say.
        now += Duration::from_millis(method as u64 * 37);
        match method % 23 {
            0 => {
                if let Ok(r) = RegisterRequest::decode(body) {
                    if let Ok(resp) = st.on_register(r.into(), now) {
                        epochs.push(resp.epoch);
                    }
                }
            }
            1 => {
                if let Ok(mut r) = HeartbeatRequest::decode(body) {
                    r.epoch = pick(r.epoch, &epochs);
                    let _ = st.on_heartbeat(r.into(), now);
                }
            }
            2 => {
                if let Ok(r) = ReportBadBlockRequest::decode(body) {
                    st.report_bad_block(&r.worker, pick(r.block_id, &blocks), &r.reason);
                }
            }
            3 => {
                if let Ok(r) = CreateFileRequest::decode(body) {
                    if let Ok(resp) = st.create_file(r.into(), now) {
                        leases.push(resp.lease);
                    }
                }
            }
            4 => {
                if let Ok(mut r) = AddBlockRequest::decode(body) {
                    r.lease = pick(r.lease, &leases);
                    if let Ok(resp) = st.add_block(r.into(), now) {
                        blocks.push(resp.block_id);
                    }
                }
            }
            5 => {
                if let Ok(mut r) = CompleteFileRequest::decode(body) {
                    r.lease = pick(r.lease, &leases);
                    for b in r.blocks.iter_mut().filter_map(|c| c.block.as_mut()) {
                        b.id = pick(b.id, &blocks);
                    }
                    let _ = st.complete_file(r.into());
                }
            }
            6 => {
                if let Ok(mut r) = AbandonFileRequest::decode(body) {
                    r.lease = pick(r.lease, &leases);
                    let _ = st.abandon_file(&r.path, r.lease);
                }
            }
            7 => {
                if let Ok(r) = PathRequest::decode(body) {
                    let _ = st.blocks().file_status(&r.path, st.cluster());
                }
            }
            8 => {
                if let Ok(r) = PathRequest::decode(body) {
                    let _ = st.blocks().list(&r.path);
                }
            }
            9 => {
                if let Ok(r) = PathRequest::decode(body) {
                    let _ = st.delete(&r.path);
                }
            }
            10 => {
                if let Ok(r) = CacheFileRequest::decode(body) {
                    let _ = st.cache_file(&r.path, r.cache);
                }
            }
            11 => {
                if let Ok(r) = CacheCapacityRequest::decode(body) {
                    let _ = st.set_cache_capacity(r.bytes, &r.worker);
                }
            }
            12 => {
                if let Ok(r) = SubmitJobRequest::decode(body) {
                    let (jobs, next) = (st.jobs().len(), st.jobs().next_id());
                    match st.on_submit(r.into(), now) {
                        Err(_) => {
                            assert_eq!(st.jobs().len(), jobs, "a refused job left a job behind");
                            assert_eq!(st.jobs().next_id(), next, "a refused job used an id");
                        }
                        // As `core::offlock::submit_job` does, with no lock
                        // to let go of first.
                        Ok((id, record)) => {
                            st.jobs().disk().drain();
                            match record.outcome() {
                                Ok(()) => st.admit_job(id, now),
                                Err(_) => st.refuse_job(id),
                            }
                        }
                    }
                }
            }
            13 => {
                if let Ok(r) = JobRequest::decode(body) {
                    let _ = st.jobs().job_json(r.job_id);
                }
            }
            14 => {
                let _ = st.jobs().list_jobs();
            }
            15 => {
                if let Ok(r) = JobRequest::decode(body) {
                    let _ = st.kill_job(r.job_id);
                }
            }
            16 => {
                if let Ok(r) = JobRequest::decode(body) {
                    let _ = st.jobs().job_history(r.job_id);
                }
            }
            17 => {
                if let Ok(r) = SchedulerRequest::decode(body) {
                    let spec = sched::SchedulerSpec {
                        name: r.name,
                        params: r.params.into_iter().collect(),
                    };
                    // As `core::offlock::set_scheduler` does, without the
                    // saved state it reads off the lock.
                    if let Ok(policy) = sched::build(&spec) {
                        st.set_scheduler(spec, policy);
                    }
                }
            }
            18 => {
                if let Ok(mut r) = TaskUpdateRequest::decode(body) {
                    r.epoch = pick(r.epoch, &epochs);
                    // A report naming no task is refused at the edge.
                    if let Ok(r) = r.try_into() {
                        let _ = st.on_task_report(r, now);
                    }
                }
            }
            19 => {
                let _ = st.cluster_status();
            }
            20 => {
                st.expire_workers(now);
            }
            21 => {
                if let Ok(r) = PathRequest::decode(body) {
                    let _ = st.recover_lease(&r.path, now);
                }
            }
            _ => {
                st.replication_scan(now);
            }
        }
    }
});

//! Every message through the wire and back comes out as it went in, with
//! every field set to something other than its default.

use super::*;
use common::resources::ResourceVector;

fn block(id: u64) -> BlockInfo {
    BlockInfo {
        id,
        len: 10 * id + 1,
        crc32c: 7 + id as u32,
        generation: 3,
    }
}

fn addr(n: &str) -> WorkerAddr {
    WorkerAddr {
        name: n.into(),
        addr: format!("{n}:7001"),
        rack: "r1".into(),
    }
}

fn located(id: u64) -> BlockLocation {
    BlockLocation {
        block: block(id),
        replicas: vec![addr("w1"), addr("w2")],
        cached_on: vec![addr("w3")],
    }
}

fn task(is_map: bool) -> TaskRef {
    TaskRef {
        job_id: 4,
        is_map,
        index: 5,
        attempt: 2,
    }
}

fn output() -> MapOutputLocation {
    MapOutputLocation {
        map_index: 1,
        attempt: 1,
        worker: "w2".into(),
        addr: "w2:7001".into(),
    }
}

fn launch_of(kind: LaunchKind) -> Launch {
    Launch {
        task: task(matches!(kind, LaunchKind::Map(_))),
        epoch: 9,
        job_name: "wordcount".into(),
        params_json: "{\"a\":1}".into(),
        plan_json: "{}".into(),
        output: OutputSpec {
            path: "/out/_staging/part".into(),
            replication: 2,
            block_size: 1 << 20,
        },
        kind,
    }
}

fn map_launch() -> Launch {
    launch_of(LaunchKind::Map(MapLaunch {
        input: Some(located(1)),
        input_offset: 64,
        input_path: "/in/a".into(),
        following: vec![located(2)],
        reducers: 3,
        splits: vec![b"m".to_vec()],
        sort_buffer_bytes: 1 << 16,
    }))
}

fn reduce_launch() -> Launch {
    launch_of(LaunchKind::Reduce(ReduceLaunch {
        map_outputs: vec![output()],
        maps_total: 4,
        shuffle_token: bytes::Bytes::from_static(b"tok"),
    }))
}

fn commands() -> Vec<Command> {
    vec![
        Command::Launch(Box::new(map_launch())),
        Command::Launch(Box::new(reduce_launch())),
        Command::KillTask(task(true)),
        Command::CleanupJob(4),
        Command::DeleteBlock(1),
        Command::QuarantineBlock(2),
        Command::CacheBlock(3),
        Command::PinBlock(4),
        Command::UncacheBlock(5),
        Command::SetCacheCapacity(1 << 30),
        Command::MapOutputs {
            job: 4,
            outputs: vec![output()],
        },
        Command::Replicate {
            block: block(6),
            targets: vec!["w2:7001".into()],
            token: bytes::Bytes::from_static(b"t"),
        },
    ]
}

fn resources() -> ResourceVector {
    ResourceVector {
        cpu_pct: 50.0,
        ..Default::default()
    }
}

#[test]
fn every_command_round_trips() {
    for c in commands() {
        let back = command(proto::Command::from(c.clone()));
        assert_eq!(back, Some(c));
    }
}

#[test]
fn registration_and_its_answer_round_trip() {
    let r = Registration {
        protocol_version: common::PROTOCOL_VERSION,
        name: "w1".into(),
        addr: "w1:7001".into(),
        rack: "r1".into(),
        map_slots: 2,
        reduce_slots: 1,
        cache_capacity_bytes: 1 << 20,
        blocks: vec![block(1), block(2)],
        cached: vec![1],
        cache_used_bytes: 11,
        resources: resources(),
        job_dirs: vec![4],
    };
    assert_eq!(
        Registration::from(proto::RegisterRequest::from(r.clone())),
        r
    );
    let a = Registered {
        epoch: 12,
        heartbeat_interval_ms: 250,
        delete_blocks: vec![8],
    };
    assert_eq!(
        Registered::from(proto::RegisterResponse::from(a.clone())),
        a
    );
}

#[test]
fn heartbeat_and_reply_round_trip() {
    let h = Heartbeat {
        name: "w1".into(),
        epoch: 12,
        free_map_slots: 1,
        free_reduce_slots: 2,
        resources: Some(resources()),
        blocks_added: vec![block(3)],
        blocks_removed: vec![4],
        cache_added: vec![5],
        cache_removed: vec![6],
        cache_used_bytes: 7,
        draining: true,
        leaving: true,
        progress: vec![(task(true), 99)],
    };
    assert_eq!(Heartbeat::from(proto::HeartbeatRequest::from(h.clone())), h);
    let r = Reply {
        reregister: true,
        commands: commands(),
        stop: StopAnswer {
            unsafe_to_stop: true,
            blocks_to_copy: 3,
        },
    };
    assert_eq!(Reply::from(proto::HeartbeatResponse::from(r.clone())), r);
}

#[test]
fn a_task_report_round_trips_and_one_naming_no_task_is_refused() {
    let r = TaskReport {
        worker: "w1".into(),
        epoch: 12,
        task: task(false),
        succeeded: false,
        error: "fetch failed".into(),
        fetch_failure: true,
        failed_map: 3,
        metrics: TaskMetrics {
            locality: "node_local".into(),
            bytes_cache: 1,
            bytes_local: 2,
            bytes_remote_rack: 3,
            bytes_remote_off_rack: 4,
            bytes_shuffle: 5,
            bytes_output: 6,
            cpu_s: 0.5,
            peak_mem_bytes: 7,
            start_ms: 8,
            end_ms: 9,
            records_in: 10,
            records_out: 11,
            spills: 12,
            read_s: 0.25,
            shuffle_s: 0.125,
            merge_s: 1.5,
            reduce_s: 2.5,
            commit_s: 3.5,
        },
        counters: [("words".to_string(), 3)].into(),
        handed_back: true,
    };
    let wire = proto::TaskUpdateRequest::from(r.clone());
    assert_eq!(TaskReport::try_from(wire.clone()), Ok(r));
    let none = proto::TaskUpdateRequest { task: None, ..wire };
    assert!(TaskReport::try_from(none).is_err());
}

#[test]
fn polls_round_trip_and_unsupported_is_idle_on_the_wire() {
    for p in [Poll::Ready, Poll::Reregister, Poll::Idle] {
        assert_eq!(Poll::from(proto::CommandsReady::from(p)), p);
    }
    assert_eq!(
        Poll::from(proto::CommandsReady::from(Poll::Unsupported)),
        Poll::Idle
    );
}

#[test]
fn a_map_launch_with_a_blockless_location_is_refused_and_a_taskless_one_dropped() {
    let mut wire = proto::LaunchTask::from(map_launch());
    wire.following.push(proto::BlockLocation::default());
    match launch(wire.clone()) {
        Some(Err(r)) => {
            assert_eq!(r.task, task(true));
            assert_eq!(r.epoch, 9);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    wire.task = None;
    assert!(launch(wire).is_none());
    // A refusal is the worker's own: it never goes on the wire.
    let refuse = Command::Refuse(Refused {
        task: task(true),
        epoch: 1,
        why: "x".into(),
    });
    let reply = Reply {
        commands: vec![refuse],
        ..Default::default()
    };
    assert!(proto::HeartbeatResponse::from(reply).commands.is_empty());
}

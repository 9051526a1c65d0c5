//! Unit tests of [`super::Job`]: attempts, fencing, speculation, worker loss.
use super::*;
use crate::cluster::Outbox;
use protocol::{Command, TaskMetrics};
use std::time::Duration;

#[test]
fn phases_are_the_map_span_and_the_last_reduce() {
    let mut p = Phases::default();
    assert_eq!(p.to_json()["map"], 0.0);
    let m = |start_ms, end_ms| TaskMetrics {
        start_ms,
        end_ms,
        ..Default::default()
    };
    p.record(true, &m(2_000, 3_500));
    p.record(true, &m(1_000, 2_500));
    let r = |end_ms, s: f64| TaskMetrics {
        end_ms,
        shuffle_s: s,
        merge_s: 0.25,
        reduce_s: 0.5,
        commit_s: 0.125,
        ..Default::default()
    };
    p.record(false, &r(6_000, 2.0));
    p.record(false, &r(5_000, 9.0));
    let j = p.to_json();
    assert_eq!(j["map"], 2.5);
    // The reduce that ended last, not the longest shuffle.
    assert_eq!(
        (
            j["shuffle"].as_f64(),
            j["merge"].as_f64(),
            j["reduce"].as_f64(),
            j["commit"].as_f64()
        ),
        (Some(2.0), Some(0.25), Some(0.5), Some(0.125))
    );
}

fn job(maps: u32, reducers: u32, t0: Instant) -> Job {
    Job::new(
        1,
        1,
        JobSpec::wordcount_for_tests(reducers),
        vec![],
        maps,
        "fifo",
        t0,
    )
}

fn report(is_map: bool, index: u32, attempt: u32, worker: &str, ok: bool) -> TaskReport {
    TaskReport {
        worker: worker.into(),
        epoch: 1,
        task: TaskRef {
            job_id: 1,
            is_map,
            index,
            attempt,
        },
        succeeded: ok,
        error: if ok { String::new() } else { "boom".into() },
        ..Default::default()
    }
}

/// Applies a report; the commands it decides (kills) are returned beside
/// the outcome.
fn apply(j: &mut Job, r: &TaskReport, now: Instant) -> (Outcome, Vec<(String, Command)>) {
    let mut out = Outbox::default();
    let o = j.update(r, "a", now, &mut out);
    (o, out.into_commands())
}

fn upd(j: &mut Job, r: &TaskReport, now: Instant) -> Outcome {
    apply(j, r, now).0
}

/// A worker lost; returns the kills it decided.
fn lost(j: &mut Job, worker: &str, now: Instant) -> Vec<(String, Command)> {
    let mut out = Outbox::default();
    j.worker_lost(worker, now, &mut out);
    out.into_commands()
}

fn secs(t0: Instant, s: f64) -> Instant {
    t0 + Duration::from_secs_f64(s)
}

/// Four maps on w1..w4; maps 0..done finish after 2 s.
fn four_maps(done: u32, t0: Instant) -> Job {
    let mut j = job(4, 1, t0);
    for i in 0..4 {
        j.launch(TaskKind::Map, i, &format!("w{}", i + 1), 1, t0);
    }
    for i in 0..done {
        let w = format!("w{}", i + 1);
        assert_eq!(
            upd(&mut j, &report(true, i, 0, &w, true), secs(t0, 2.0)),
            Outcome::Progress
        );
    }
    j
}

#[test]
fn the_views_mean_runtime_counts_maps_only() {
    let t0 = Instant::now();
    // Maps 0 and 1 take 2 s; the reduce, launched at 2 s, takes 30 s.
    let mut j = four_maps(2, t0);
    assert_eq!(j.view(t0).avg_map_time, 2.0);
    j.launch(TaskKind::Reduce, 0, "w1", 1, secs(t0, 2.0));
    upd(&mut j, &report(false, 0, 0, "w1", true), secs(t0, 32.0));
    assert!(j.reduces[0].is_done());
    assert_eq!(j.view(t0).avg_map_time, 2.0, "HybSMRP's r is maps only");
}

#[test]
fn backup_only_past_75_percent_and_the_slowness_threshold() {
    let t0 = Instant::now();
    // 2 of 4 done (50 %): never, however slow.
    let j = four_maps(2, t0);
    assert!(j.speculation_candidates(secs(t0, 100.0)).is_empty());
    // 3 of 4 (75 %), median 2 s: threshold max(4 s, 3 s) = 4 s.
    let j = four_maps(3, t0);
    assert!(j.speculation_candidates(secs(t0, 3.9)).is_empty());
    let c = j.speculation_candidates(secs(t0, 4.1));
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].0.kind, c[0].0.index), (TaskKind::Map, 3));
    assert_eq!(c[0].1, vec!["w4".to_string()], "not on its own worker");
    // Median + 1 s wins for short tasks: 0.5 s median -> 1.5 s.
    let mut j = job(4, 1, t0);
    for i in 0..4 {
        j.launch(TaskKind::Map, i, "w1", 1, t0);
    }
    for i in 0..3 {
        upd(&mut j, &report(true, i, 0, "w1", true), secs(t0, 0.5));
    }
    assert!(j.speculation_candidates(secs(t0, 1.4)).is_empty());
    assert_eq!(j.speculation_candidates(secs(t0, 1.6)).len(), 1);
}

#[test]
fn one_backup_per_task_never_on_its_own_worker_nor_avoided_nodes() {
    let t0 = Instant::now();
    let mut j = four_maps(3, t0);
    j.task_mut(TaskKind::Map, 3)
        .unwrap()
        .avoid
        .push("w2".into());
    let now = secs(t0, 5.0);
    assert_eq!(j.launch_backup(TaskKind::Map, 3, "w4", 1, now), None);
    assert_eq!(j.launch_backup(TaskKind::Map, 3, "w2", 1, now), None);
    assert_eq!(j.launch_backup(TaskKind::Map, 3, "w1", 1, now), Some(1));
    assert_eq!(j.launch_backup(TaskKind::Map, 3, "w3", 1, now), None);
    assert!(j.speculation_candidates(secs(t0, 50.0)).is_empty());
    // Both attempts hold a slot.
    let mut r: Vec<_> = j
        .running()
        .into_iter()
        .map(|a| (a.worker, a.attempt))
        .collect();
    r.sort();
    assert_eq!(r, vec![("w1".into(), 1), ("w4".into(), 0)]);
    assert_eq!(j.summary()["speculative_launched"], 1);
}

/// Three reduces done by 2 s; reduce 3 runs on w4 (attempt 0) with a
/// backup on w1 (attempt 1).
fn speculated_reduce(t0: Instant) -> Job {
    let mut j = job(0, 4, t0);
    for i in 0..4 {
        j.launch(TaskKind::Reduce, i, &format!("w{}", i + 1), 1, t0);
    }
    for i in 0..3 {
        upd(
            &mut j,
            &report(false, i, 0, &format!("w{}", i + 1), true),
            secs(t0, 2.0),
        );
    }
    assert_eq!(j.speculation_candidates(secs(t0, 5.0)).len(), 1);
    assert_eq!(
        j.launch_backup(TaskKind::Reduce, 3, "w1", 1, secs(t0, 5.0)),
        Some(1)
    );
    j
}

#[test]
fn first_finisher_wins_and_the_loser_is_killed_and_fenced() {
    let t0 = Instant::now();
    let mut j = speculated_reduce(t0);
    let (out, kills) = apply(&mut j, &report(false, 3, 1, "w1", true), secs(t0, 6.0));
    assert_eq!(out, Outcome::ReadyToCommit);
    let t = j.task(TaskKind::Reduce, 3).unwrap();
    // Only the winner's staging part is committed.
    assert_eq!(t.output.as_deref(), Some(staging_part(1, 3, 1).as_str()));
    assert!(matches!(t.status, TaskStatus::Done { attempt: 1, .. }));
    assert_eq!(
        kills,
        vec![(
            "w4".to_string(),
            Command::KillTask(TaskRef {
                job_id: 1,
                is_map: false,
                index: 3,
                attempt: 0
            })
        )]
    );
    assert!(j.running().is_empty());
    // The loser's late report, success or not, is ignored.
    assert_eq!(
        upd(&mut j, &report(false, 3, 0, "w4", true), secs(t0, 7.0)),
        Outcome::Ignored
    );
    assert_eq!(
        upd(&mut j, &report(false, 3, 0, "w4", false), secs(t0, 7.0)),
        Outcome::Ignored
    );
    let t = j.task(TaskKind::Reduce, 3).unwrap();
    assert_eq!(t.output.as_deref(), Some(staging_part(1, 3, 1).as_str()));
    let s = j.summary();
    assert_eq!(
        (
            s["speculative_launched"].clone(),
            s["speculative_won"].clone()
        ),
        (json!(1), json!(1))
    );
    let rec = j.records.iter().find(|r| r["index"] == 3).unwrap();
    assert_eq!(
        (rec["attempt"].clone(), rec["speculative"].clone()),
        (json!(1), json!(true))
    );
}

#[test]
fn the_primary_may_win_too() {
    let t0 = Instant::now();
    let mut j = speculated_reduce(t0);
    let (out, kills) = apply(&mut j, &report(false, 3, 0, "w4", true), secs(t0, 6.0));
    assert_eq!(out, Outcome::ReadyToCommit);
    assert!(
        matches!(&kills[..], [(w, Command::KillTask(t))] if w == "w1" && t.attempt == 1),
        "{kills:?}"
    );
    assert_eq!(
        j.task(TaskKind::Reduce, 3).unwrap().output.as_deref(),
        Some(staging_part(1, 3, 0).as_str())
    );
    assert_eq!(
        upd(&mut j, &report(false, 3, 1, "w1", true), secs(t0, 7.0)),
        Outcome::Ignored
    );
    assert_eq!(j.speculative_won, 0);
}

#[test]
fn a_failure_beside_a_running_attempt_only_drops_it() {
    let t0 = Instant::now();
    let mut j = speculated_reduce(t0);
    assert_eq!(
        upd(&mut j, &report(false, 3, 1, "w1", false), secs(t0, 6.0)),
        Outcome::Progress
    );
    let t = j.task(TaskKind::Reduce, 3).unwrap();
    assert_eq!(t.failures, 0);
    assert!(t.backup.is_none());
    assert!(matches!(&t.status, TaskStatus::Running { attempt: 0, worker, .. } if worker == "w4"));
    // The last one running failing counts as usual.
    assert_eq!(
        upd(&mut j, &report(false, 3, 0, "w4", false), secs(t0, 7.0)),
        Outcome::Progress
    );
    let t = j.task(TaskKind::Reduce, 3).unwrap();
    assert_eq!(t.failures, 1);
    assert!(t.is_pending());
    // No second backup for the task.
    j.launch(TaskKind::Reduce, 3, "w2", 1, secs(t0, 8.0));
    assert!(j.speculation_candidates(secs(t0, 100.0)).is_empty());
}

#[test]
fn worker_loss_with_a_backup_running() {
    let t0 = Instant::now();
    // Losing the backup's worker: the primary runs on.
    let mut j = speculated_reduce(t0);
    lost(&mut j, "w1", secs(t0, 6.0));
    let t = j.task(TaskKind::Reduce, 3).unwrap();
    assert!(t.backup.is_none());
    assert!(matches!(&t.status, TaskStatus::Running { attempt: 0, worker, .. } if worker == "w4"));
    // Losing the primary's worker: the backup runs on, not re-queued.
    let mut j = speculated_reduce(t0);
    lost(&mut j, "w4", secs(t0, 6.0));
    let t = j.task(TaskKind::Reduce, 3).unwrap();
    assert!(t.backup.is_none());
    assert!(matches!(&t.status, TaskStatus::Running { attempt: 1, worker, .. } if worker == "w1"));
    assert_eq!(
        upd(&mut j, &report(false, 3, 1, "w1", true), secs(t0, 7.0)),
        Outcome::ReadyToCommit
    );
    // Then the one left lost too: re-queued.
    let mut j = speculated_reduce(t0);
    lost(&mut j, "w4", secs(t0, 6.0));
    lost(&mut j, "w1", secs(t0, 6.0));
    assert!(j.task(TaskKind::Reduce, 3).unwrap().is_pending());
    assert_eq!(j.task(TaskKind::Reduce, 3).unwrap().failures, 0);
}

/// A reduce's report that it could not fetch `map`'s output.
fn fetch_failure(reduce: u32, attempt: u32, worker: &str, map: u32) -> TaskReport {
    TaskReport {
        fetch_failure: true,
        failed_map: map,
        error: format!("cannot fetch map {map}"),
        ..report(false, reduce, attempt, worker, false)
    }
}

/// `n` maps, each done on `w{i+1}`, and `reducers` reduces.
fn maps_done(n: u32, reducers: u32, t0: Instant) -> Job {
    let mut j = job(n, reducers, t0);
    for i in 0..n {
        let w = format!("w{}", i + 1);
        j.launch(TaskKind::Map, i, &w, 1, t0);
        assert_eq!(
            upd(&mut j, &report(true, i, 0, &w, true), secs(t0, 1.0)),
            Outcome::Progress
        );
    }
    j
}

/// One reducer on a broken host reports every map it tries: no map is
/// re-run (issue 28: one report re-ran the map at once), and the reduce is
/// the one that moves, avoiding that host.
#[test]
fn one_reducer_on_a_broken_host_moves_and_reruns_no_map() {
    let t0 = Instant::now();
    let mut j = maps_done(4, 4, t0);
    for (attempt, map) in [(0, 1), (1, 2), (2, 1)] {
        j.launch(TaskKind::Reduce, 0, "bad", 1, t0);
        let out = upd(
            &mut j,
            &fetch_failure(0, attempt, "bad", map),
            secs(t0, 2.0),
        );
        assert_eq!(out, Outcome::Progress);
        assert!(j.maps_done(), "a map re-ran on one reducer's reports");
        assert!(j.reduces[0].is_pending());
        assert_eq!(j.reduces[0].avoid, vec!["bad".to_string()]);
        assert_eq!(j.reduces[0].failures, 0, "fetch failures are not its own");
    }
}

/// Hadoop's rule: three reports from at least half of the unfinished
/// reduces declare the map faulty; it re-runs, away from its worker.
#[test]
fn a_map_reported_by_enough_reducers_reruns_elsewhere() {
    let t0 = Instant::now();
    let mut j = maps_done(2, 4, t0);
    for (r, w) in [(0, "w7"), (1, "w8")] {
        j.launch(TaskKind::Reduce, r, w, 1, t0);
        upd(&mut j, &fetch_failure(r, 0, w, 1), secs(t0, 2.0));
    }
    assert!(j.maps[1].is_done(), "two reports are not enough");
    j.launch(TaskKind::Reduce, 0, "w9", 1, t0);
    upd(&mut j, &fetch_failure(0, 1, "w9", 1), secs(t0, 3.0));
    assert!(
        j.maps[1].is_pending(),
        "3 reports from 2 of 4 reduces re-run it"
    );
    assert_eq!(j.maps[1].failures, 1);
    assert_eq!(j.maps[1].avoid, vec!["w2".to_string()]);
    assert!(j.maps[0].is_done(), "only the reported map re-runs");
    // Its new output starts with a clean record.
    j.launch(TaskKind::Map, 1, "w3", 1, t0);
    upd(&mut j, &report(true, 1, 1, "w3", true), secs(t0, 4.0));
    assert!(j.maps[1].fetch_reports.is_empty());
}

/// A map whose output can never be fetched ends its job with a clear error
/// after a bounded number of re-runs (issue 28: the map and the reduce
/// re-ran for ever).
#[test]
fn output_that_can_never_be_fetched_fails_the_job_clearly() {
    let t0 = Instant::now();
    let mut j = maps_done(1, 1, t0);
    let mut runs = 0;
    let mut reduce_attempt = 0;
    let mut map_attempt = 1;
    while !j.state.is_final() {
        runs += 1;
        assert!(runs < 100, "the job re-runs for ever");
        if j.maps[0].is_pending() {
            j.launch(TaskKind::Map, 0, "w1", 1, t0);
            upd(&mut j, &report(true, 0, map_attempt, "w1", true), t0);
            map_attempt += 1;
        }
        let w = format!("r{runs}");
        j.launch(TaskKind::Reduce, 0, &w, 1, t0);
        upd(&mut j, &fetch_failure(0, reduce_attempt, &w, 0), t0);
        reduce_attempt += 1;
    }
    assert_eq!(j.state, JobState::Failed);
    let e = j.error.clone().unwrap();
    assert!(
        e.contains("map task 0") && e.contains("could not be fetched"),
        "{e}"
    );
}

/// A reduce that keeps failing its fetches without ever condemning a map
/// (each report against another map, too few for the rule) is bounded too.
#[test]
fn a_reduce_relaunched_without_end_fails_the_job_clearly() {
    let t0 = Instant::now();
    let mut j = maps_done(MAX_LAUNCHES, 4, t0);
    for a in 0..MAX_LAUNCHES {
        assert!(!j.state.is_final(), "failed after {a} attempts");
        j.launch(TaskKind::Reduce, 0, &format!("r{a}"), 1, t0);
        upd(&mut j, &fetch_failure(0, a, &format!("r{a}"), a), t0);
    }
    assert_eq!(j.state, JobState::Failed);
    let e = j.error.clone().unwrap();
    assert!(e.contains("reduce task 0 was launched 16 times"), "{e}");
}

/// Reduce slow-start (Hadoop's `slowstart.completedmaps`): with 0.5 of 4
/// maps, the reduces wait for two maps (`ceil(0.5 × 4)`), not all four;
/// a map finishing after a reduce launched is pushed to that reduce's
/// worker, once per worker, and to no one when no reduce runs.
#[test]
fn slow_start_reduces_start_early_and_hear_of_later_maps() {
    let t0 = Instant::now();
    let mut spec = JobSpec::wordcount_for_tests(2);
    spec.slowstart = 0.5;
    let mut j = Job::new(1, 1, spec, vec![], 4, "fifo", t0);
    let reduces = |j: &Job| {
        j.runnable()
            .iter()
            .filter(|t| t.kind == TaskKind::Reduce)
            .count()
    };
    for i in 0..4 {
        j.launch(TaskKind::Map, i, &format!("w{}", i + 1), 1, t0);
    }
    let (_, cmds) = apply(&mut j, &report(true, 0, 0, "w1", true), secs(t0, 1.0));
    assert_eq!(reduces(&j), 0, "one map of four is less than half");
    assert!(cmds.is_empty(), "{cmds:?}");
    apply(&mut j, &report(true, 1, 0, "w2", true), secs(t0, 1.0));
    assert_eq!(reduces(&j), 2);
    assert!(!j.maps_done());
    // Both reduces on w5: the third map's output goes there once.
    j.launch(TaskKind::Reduce, 0, "w5", 1, t0);
    j.launch(TaskKind::Reduce, 1, "w5", 1, t0);
    let (_, cmds) = apply(&mut j, &report(true, 2, 0, "w3", true), secs(t0, 2.0));
    let pushed: Vec<_> = cmds
        .iter()
        .filter_map(|(w, c)| match c {
            Command::MapOutputs { job, outputs } => Some((w.as_str(), *job, outputs.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(pushed.len(), 1, "{cmds:?}");
    assert_eq!((pushed[0].0, pushed[0].1), ("w5", 1));
    assert_eq!(pushed[0].2.len(), 1);
    assert_eq!(
        (pushed[0].2[0].map_index, pushed[0].2[0].worker.as_str()),
        (2, "w3")
    );
    // The launch of a reduce names the maps done and the total.
    let l = crate::jobs::launch::launch(
        &j,
        TaskId {
            job: 1,
            kind: TaskKind::Reduce,
            index: 0,
        },
        1,
        1,
        &|_| unreachable!("a reduce reads no block"),
    );
    let protocol::LaunchKind::Reduce(r) = l.kind else {
        panic!("a reduce launched as a map: {l:?}")
    };
    assert_eq!(r.maps_total, 4);
    let known: Vec<u32> = r.map_outputs.iter().map(|m| m.map_index).collect();
    assert_eq!(known, vec![0, 1, 2]);
}

/// By default (slowstart 1) the reduces wait for every map.
#[test]
fn without_slow_start_reduces_wait_for_every_map() {
    let t0 = Instant::now();
    let mut j = four_maps(3, t0);
    assert!(j.runnable().iter().all(|t| t.kind == TaskKind::Map));
    upd(&mut j, &report(true, 3, 0, "w4", true), secs(t0, 3.0));
    assert!(j.runnable().iter().any(|t| t.kind == TaskKind::Reduce));
}

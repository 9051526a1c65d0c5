//! The fault invariants (the same that scripts/faults.sh checks), judged at the end of a run
//! against the recorded history, the master's state and the workers':
//! nothing acknowledged lost, every output part committed exactly once by a
//! current attempt, stale attempts fenced, the job ended cleanly, nothing
//! leaked (open writes, staging files, running tasks, map outputs, orphan
//! blocks).

use crate::client::output_dir;
use crate::cluster::Layout;
use crate::history::{History, JobEnd};
use crate::node::{SharedDisk, Snapshot};
use crate::wordcount;
use master::core::MasterState;
use master::jobs::TaskStatus;
use std::collections::BTreeSet;

/// What the checks read besides the history.
pub struct World<'a> {
    pub layout: &'a Layout,
    pub reducers: u32,
    pub master: Option<&'a MasterState>,
    /// Per worker: whether its host runs, its disk, its last snapshot.
    pub workers: Vec<(bool, SharedDisk, Snapshot)>,
}

pub fn all(h: &History, w: &World) -> Vec<String> {
    let mut bad = Vec::new();
    acknowledged_files(h, &mut bad);
    job_outcome(h, w, &mut bad);
    if let Some(m) = w.master {
        leaks(h, w, m, &mut bad);
    } else {
        bad.push("the master is not running at the end".into());
    }
    bad
}

/// Every acknowledged put reads back byte for byte; an unacknowledged one
/// is either absent or whole, never half-present.
fn acknowledged_files(h: &History, bad: &mut Vec<String>) {
    for (path, want) in &h.intended {
        let acked = h.acked.contains(path);
        match h.read_back.get(path) {
            Some(Ok(got)) if got == want => {}
            Some(Ok(got)) => bad.push(format!(
                "{path} reads back {} bytes that differ from the {} written (acknowledged: {acked})",
                got.len(),
                want.len()
            )),
            Some(Err(e)) if acked => {
                bad.push(format!("acknowledged file {path} is lost: {e}"))
            }
            Some(Err(e)) if !e.contains("no such file") => {
                bad.push(format!("unacknowledged file {path} is half-present: {e}"))
            }
            Some(Err(_)) => {}
            None => bad.push(format!("{path} was not read back")),
        }
    }
}

fn job_outcome(h: &History, w: &World, bad: &mut Vec<String>) {
    let Some(end) = &h.job_end else {
        bad.push("the job never ended".into());
        return;
    };
    let parts: Vec<String> = (0..w.reducers)
        .map(|i| format!("{}/part-{i:05}", output_dir()))
        .collect();
    match end {
        JobEnd::Succeeded { id } => {
            let mut want: BTreeSet<String> = parts.iter().cloned().collect();
            want.insert(format!("{}/_SUCCESS", output_dir()));
            let got: BTreeSet<String> = h.output_listing.iter().cloned().collect();
            if got != want {
                bad.push(format!(
                    "job {id} succeeded but its output holds {got:?}, not {want:?}"
                ));
            }
            let inputs: Vec<&bytes::Bytes> =
                h.acked.iter().filter_map(|p| h.intended.get(p)).collect();
            let expected = wordcount::expected(&inputs, w.reducers);
            for (i, path) in parts.iter().enumerate() {
                let Some(Ok(b)) = h.read_back.get(path) else {
                    bad.push(format!("{path} of a succeeded job cannot be read"));
                    continue;
                };
                let Some((attempt, body)) = wordcount::parse_part(b) else {
                    bad.push(format!("{path} has no attempt header"));
                    continue;
                };
                if body != expected[i] {
                    bad.push(format!(
                        "{path} (attempt {attempt}) differs from the oracle:\n  got  {body:?}\n  want {:?}",
                        expected[i]
                    ));
                }
                let key = (*id, false, i as u32);
                let reports: Vec<_> = h
                    .reports
                    .iter()
                    .filter(|r| r.task == key && r.attempt == attempt && r.succeeded)
                    .collect();
                if !reports.is_empty() && reports.iter().all(|r| r.stale) {
                    bad.push(format!(
                        "{path} was committed from attempt {attempt}, whose every report was stale: fencing failed"
                    ));
                }
                if let Some(m) = w.master {
                    if let Some(TaskStatus::Done { attempt: a, .. }) = m
                        .jobs()
                        .get(*id)
                        .and_then(|j| j.reduces().get(i))
                        .map(|t| &t.status)
                    {
                        if *a != attempt {
                            bad.push(format!(
                                "{path} holds attempt {attempt} but the master committed attempt {a}"
                            ));
                        }
                    }
                }
            }
        }
        JobEnd::Failed { id, error } => {
            if error.is_empty() {
                bad.push(format!("job {id} failed without a reason"));
            }
            if !h.output_listing.is_empty() {
                bad.push(format!(
                    "job {id} failed ({error}) but left output: {:?}",
                    h.output_listing
                ));
            }
        }
        JobEnd::Vanished { id, status } => bad.push(format!(
            "job {id} vanished after a master restart instead of ending failed: {status}"
        )),
    }
}

/// After the job ended and the healed cluster settled, nothing is left
/// behind.
fn leaks(h: &History, w: &World, m: &MasterState, bad: &mut Vec<String>) {
    let open = m.blocks().open_writes();
    if !open.is_empty() {
        bad.push(format!("writes left open at the master: {open:?}"));
    }
    let files = all_files(m);
    let staging: Vec<&String> = files
        .iter()
        .filter(|p| p.starts_with("/_staging"))
        .collect();
    if !staging.is_empty() {
        bad.push(format!("staging files left behind: {staging:?}"));
    }
    for j in m.jobs().iter() {
        if j.state().is_final() && !j.running().is_empty() {
            bad.push(format!(
                "job {} ended with tasks still running at the master",
                j.id()
            ));
        }
    }
    let ended: BTreeSet<u64> = m
        .jobs()
        .iter()
        .filter(|j| j.state().is_final())
        .map(|j| j.id())
        .collect();
    let mut known = BTreeSet::new();
    for f in &files {
        if let Ok(st) = m.blocks().file_status(f, m.cluster()) {
            for b in st.blocks {
                let id = b.block.id;
                known.insert(id);
                let want = st.replication as usize;
                let alive = w.workers.iter().filter(|x| x.0).count();
                if b.replicas.is_empty() {
                    bad.push(format!("block {id} of {f} has no live replica"));
                } else if b.replicas.len() < want.min(alive) {
                    bad.push(format!(
                        "block {id} of {f} has {} replicas, not {want}, after the cluster settled",
                        b.replicas.len()
                    ));
                }
            }
        }
    }
    for (i, (running, disk, snap)) in w.workers.iter().enumerate() {
        if !running {
            continue;
        }
        let name = w.layout.worker(i);
        if !snap.running.is_empty() && h.job_end.is_some() {
            let live: Vec<_> = snap
                .running
                .iter()
                .filter(|k| ended.contains(&k.0))
                .collect();
            if !live.is_empty() {
                bad.push(format!("{name} still runs tasks of ended jobs: {live:?}"));
            }
        }
        let leftover: Vec<&u64> = snap.map_output_jobs.intersection(&ended).collect();
        if !leftover.is_empty() {
            bad.push(format!(
                "{name} keeps map outputs of ended jobs {leftover:?}"
            ));
        }
        let orphans: Vec<u64> = disk
            .lock()
            .unwrap()
            .blocks
            .keys()
            .filter(|id| !known.contains(id))
            .copied()
            .collect();
        if !orphans.is_empty() {
            bad.push(format!("{name} stores blocks no file owns: {orphans:?}"));
        }
    }
}

/// Every file of the namespace, by walking `list`.
fn all_files(m: &MasterState) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec!["/".to_string()];
    while let Some(d) = dirs.pop() {
        for e in m.blocks().list(&d).unwrap_or_default() {
            if e.is_dir {
                dirs.push(e.path);
            } else {
                out.push(e.path);
            }
        }
    }
    out.sort();
    out
}

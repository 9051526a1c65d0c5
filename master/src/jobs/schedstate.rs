//! What learning policies have learnt, kept across master restarts: one
//! file per policy name under `data_dir/sched/`, written whole to a temp
//! file and renamed, so a crash mid-write leaves the previous copy.

use common::sched::Scheduler;
use std::path::{Path, PathBuf};

/// Completed-task reports between two saves: a Q-table or a classifier
/// learns a little from each, so losing the last few to a crash costs
/// little, while saving on every report would write on every task.
pub const SAVE_EVERY: u64 = 20;

fn path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join("sched").join(format!("{name}.state"))
}

/// Loads the saved state of `sched`, if any; a bad file is logged and
/// ignored (the policy starts from what it knows by default).
pub fn load(data_dir: &Path, sched: &mut dyn Scheduler) {
    let p = path(data_dir, sched.name());
    let Ok(text) = std::fs::read_to_string(&p) else {
        return;
    };
    match sched.load_state(&text) {
        Ok(()) => {
            tracing::info!(scheduler = sched.name(), path = %p.display(), "scheduler state restored")
        }
        Err(e) => {
            tracing::warn!(scheduler = sched.name(), path = %p.display(), error = %e, "saved scheduler state ignored")
        }
    }
}

/// Saves the state of `sched` if it has one worth keeping.
pub fn save(data_dir: &Path, sched: &dyn Scheduler) {
    let Some(text) = sched.save_state() else {
        return;
    };
    let p = path(data_dir, sched.name());
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(p.parent().expect("has a parent"))?;
        let tmp = p.with_extension("state.tmp");
        std::fs::write(&tmp, text.as_bytes())?;
        std::fs::File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, &p)
    };
    if let Err(e) = write() {
        tracing::warn!(scheduler = sched.name(), path = %p.display(), error = %e, "could not save scheduler state");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::sched::{build, Locality, SchedulerSpec, TaskReport};

    #[test]
    fn a_policy_gets_back_what_it_learnt_and_ignores_a_bad_file() {
        let dir = std::env::temp_dir().join(format!("mr-schedstate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let spec = SchedulerSpec::new("atlas");
        let mut s = build(&spec).unwrap();
        assert!(s.save_state().is_some());
        for _ in 0..5 {
            let r = TaskReport {
                locality: Locality::RackLocal,
                runtime_s: 2.0,
                bytes_read: 1 << 20,
                succeeded: true,
                ..Default::default()
            };
            s.on_task_finished(&Default::default(), &r);
        }
        save(&dir, s.as_ref());
        let mut fresh = build(&spec).unwrap();
        assert_ne!(fresh.save_state(), s.save_state());
        load(&dir, fresh.as_mut());
        assert_eq!(fresh.save_state(), s.save_state());
        // A corrupt file: the policy keeps its defaults.
        std::fs::write(path(&dir, "atlas"), b"{not json").unwrap();
        let mut again = build(&spec).unwrap();
        load(&dir, again.as_mut());
        assert_eq!(again.save_state(), build(&spec).unwrap().save_state());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

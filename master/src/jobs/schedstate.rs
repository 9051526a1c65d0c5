//! What learning policies have learnt, kept across master restarts: one
//! file per policy name under `data_dir/sched/`, written whole to a temp
//! file, fsynced, renamed, and the directory fsynced, so a crash mid-write
//! leaves the previous copy and a finished save survives a crash.
//!
//! The file is a header line `mr-sched-state crc32c=<8 hex digits>
//! len=<bytes>` and then the policy's text: a flipped byte that still
//! parses (a digit in a Q-value) is noticed rather than learnt from.

use sched::Scheduler;
use std::path::{Path, PathBuf};

/// Completed-task reports between two saves: a Q-table or a classifier
/// learns a little from each, so losing the last few to a crash costs
/// little, while saving on every report would write on every task.
pub const SAVE_EVERY: u64 = 20;

const HEADER: &str = "mr-sched-state";

fn path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join("sched").join(format!("{name}.state"))
}

fn encode(text: &str) -> String {
    format!(
        "{HEADER} crc32c={:08x} len={}\n{text}",
        crc32c::crc32c(text.as_bytes()),
        text.len()
    )
}

/// The policy's text, if the header's checksum and length match it.
fn decode(file: &str) -> Result<&str, String> {
    let (head, text) = file
        .split_once('\n')
        .ok_or_else(|| "no header line".to_string())?;
    let mut parts = head.split(' ');
    if parts.next() != Some(HEADER) {
        return Err(format!("the header does not start with {HEADER:?}"));
    }
    let field = |p: Option<&str>, k: &str| {
        p.and_then(|p| p.strip_prefix(k))
            .ok_or_else(|| format!("the header has no {k}"))
            .map(str::to_string)
    };
    let crc = u32::from_str_radix(&field(parts.next(), "crc32c=")?, 16)
        .map_err(|e| format!("bad checksum field: {e}"))?;
    let len: usize = field(parts.next(), "len=")?
        .parse()
        .map_err(|e| format!("bad length field: {e}"))?;
    if text.len() != len {
        return Err(format!("{} bytes, the header says {len}", text.len()));
    }
    let actual = crc32c::crc32c(text.as_bytes());
    if actual != crc {
        return Err(format!(
            "checksum mismatch (stored {crc:08x}, computed {actual:08x})"
        ));
    }
    Ok(text)
}

/// The saved state of policy `name`, if a file holds one whose header's
/// checksum and length match it; a bad file is logged and ignored (the
/// policy starts from what it knows by default).
pub fn read(data_dir: &Path, name: &str) -> Option<String> {
    crate::lockmark::assert_unlocked("a scheduler state read");
    let p = path(data_dir, name);
    let file = std::fs::read_to_string(&p).ok()?;
    match decode(&file) {
        Ok(t) => Some(t.to_string()),
        Err(e) => {
            tracing::warn!(scheduler = name, path = %p.display(), error = %e, "saved scheduler state is corrupt; ignored");
            None
        }
    }
}

/// Gives `sched` the state [`read`] found, if any.
pub fn apply(sched: &mut dyn Scheduler, text: Option<String>) {
    let Some(text) = text else {
        return;
    };
    match sched.load_state(&text) {
        Ok(()) => tracing::info!(scheduler = sched.name(), "scheduler state restored"),
        Err(e) => {
            tracing::warn!(scheduler = sched.name(), error = %e, "saved scheduler state ignored")
        }
    }
}

/// Loads the saved state of `sched`, if any.
pub fn load(data_dir: &Path, sched: &mut dyn Scheduler) {
    let text = read(data_dir, sched.name());
    apply(sched, text);
}

/// Writes `text` as policy `name`'s state (queued by `disk.rs`, written
/// off the lock).
pub fn write(data_dir: &Path, name: &str, text: &str) {
    crate::lockmark::assert_unlocked("a scheduler state write");
    let p = path(data_dir, name);
    let write = || -> std::io::Result<()> {
        let dir = p.parent().expect("has a parent");
        std::fs::create_dir_all(dir)?;
        let tmp = p.with_extension("state.tmp");
        std::fs::write(&tmp, encode(text).as_bytes())?;
        std::fs::File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, &p)?;
        // The rename itself must survive a crash.
        std::fs::File::open(dir)?.sync_all()
    };
    if let Err(e) = write() {
        tracing::warn!(scheduler = name, path = %p.display(), error = %e, "could not save scheduler state");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sched::{build, Locality, Scheduler, SchedulerSpec, TaskReport};

    /// Saves the state of `sched` at once, if it has one worth keeping.
    fn save(data_dir: &Path, sched: &dyn Scheduler) {
        if let Some(text) = sched.save_state() {
            write(data_dir, sched.name(), &text);
        }
    }

    /// Five rack-local reports: enough to move atlas's state off its
    /// defaults.
    fn learn(s: &mut dyn Scheduler) {
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
    }

    #[test]
    fn a_policy_gets_back_what_it_learnt_and_ignores_a_bad_file() {
        let dir = std::env::temp_dir().join(format!("mr-schedstate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let spec = SchedulerSpec::new("atlas");
        let mut s = build(&spec).unwrap();
        assert!(s.save_state().is_some());
        learn(s.as_mut());
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

    /// A flipped digit still parses as a policy's state: only the checksum
    /// tells it from what was saved.
    #[test]
    fn a_flipped_byte_that_still_parses_is_ignored() {
        let dir = std::env::temp_dir().join(format!("mr-schedstate-crc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let spec = SchedulerSpec::new("atlas");
        let mut s = build(&spec).unwrap();
        learn(s.as_mut());
        save(&dir, s.as_ref());
        let p = path(&dir, "atlas");
        let mut b = std::fs::read(&p).unwrap();
        // A digit of the learnt values (not the version, which is checked).
        let body = b.windows(8).position(|w| w == b"\"levels\"").unwrap();
        let at = body
            + b[body..]
                .iter()
                .position(|c| (b'1'..=b'8').contains(c))
                .expect("a digit");
        b[at] += 1;
        std::fs::write(&p, &b).unwrap();
        let mut fresh = build(&spec).unwrap();
        load(&dir, fresh.as_mut());
        assert_eq!(fresh.save_state(), build(&spec).unwrap().save_state());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

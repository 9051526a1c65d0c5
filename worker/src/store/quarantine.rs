//! The quarantine: blocks the master's namespace does not know are moved
//! here, `data_dir/quarantine/blk_<id>.q<unix-secs>` (and its `.meta`),
//! rather than deleted, and deleted by the sweeper only after `[master]
//! quarantine_grace` (24 h by default). A master started on an older or
//! lost fsimage does not know the blocks of files it once acknowledged;
//! the grace period is the operator's time to restore the fsimage and move
//! the blocks back into `data_dir/blocks/`.
//!
//! The grace is measured on the monotonic clock ([`GraceClock`]): the wall
//! clock is read once per process and then only advanced by
//! [`Instant`]s, so an NTP step or a mis-set date during a run neither
//! deletes blocks early nor keeps them for ever. The file names keep their
//! unix seconds, the one reference that survives a restart (a monotonic
//! reading does not outlive the boot): files quarantined before a restart
//! age by the wall clock across it, and by the monotonic clock after.

use crate::store::blocks::Blocks;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("quarantine")
}

/// Unix seconds as the quarantine counts them: the wall clock at the
/// anchor, plus the monotonic time since. Only a restart reads the wall
/// clock again; a step of it in between changes nothing here. A step
/// backwards across a restart keeps files longer (the safe side); only a
/// step forwards across one can shorten a grace.
#[derive(Debug, Clone, Copy)]
pub struct GraceClock {
    wall: u64,
    at: Instant,
}

impl GraceClock {
    pub fn anchored(wall_secs: u64, at: Instant) -> Self {
        GraceClock {
            wall: wall_secs,
            at,
        }
    }

    /// The process's clock, anchored at its first use.
    pub fn process() -> GraceClock {
        static CLOCK: OnceLock<GraceClock> = OnceLock::new();
        *CLOCK.get_or_init(|| {
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            GraceClock::anchored(wall, Instant::now())
        })
    }

    /// Unix seconds at `now`.
    pub fn secs_at(&self, now: Instant) -> u64 {
        self.wall + now.saturating_duration_since(self.at).as_secs()
    }
}

fn now_secs() -> u64 {
    GraceClock::process().secs_at(Instant::now())
}

/// Carries out the master's `QuarantineBlock`.
pub fn quarantine(blocks: &Blocks, id: u64) {
    blocks.cache().remove(id);
    match blocks
        .store()
        .move_out(id, &dir(blocks.data_dir()), now_secs())
    {
        Ok(true) => tracing::warn!(
            block = id,
            grace_s = blocks.quarantine_grace().as_secs(),
            "block unknown to the master's namespace moved to the quarantine"
        ),
        Ok(false) => {}
        Err(e) => tracing::error!(
            block = id,
            "cannot quarantine the block (kept in place): {e}"
        ),
    }
}

/// When a quarantined file was put there, from its name.
fn quarantined_at(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("blk_")?;
    let (_, tag) = rest.split_once(".q")?;
    let digits = tag.strip_suffix(".meta").unwrap_or(tag);
    digits.parse().ok()
}

/// Deletes every quarantined file older than `grace` at `now_secs`;
/// returns how many went. Files it cannot date are kept.
pub fn sweep(dir: &Path, grace: Duration, now_secs: u64) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut gone = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(at) = name.to_str().and_then(quarantined_at) else {
            continue;
        };
        if now_secs >= at.saturating_add(grace.as_secs()) && std::fs::remove_file(e.path()).is_ok()
        {
            gone += 1;
        }
    }
    gone
}

/// The sweeper: at start, then every quarter of the grace period (at
/// most hourly), so a file outlives its grace by little.
pub async fn run(blocks: Arc<Blocks>) {
    let grace = blocks.quarantine_grace();
    let every = (grace / 4).clamp(Duration::from_secs(1), Duration::from_secs(3600));
    let dir = dir(blocks.data_dir());
    loop {
        let gone = sweep(&dir, grace, now_secs());
        if gone > 0 {
            tracing::info!(
                files = gone,
                "quarantined blocks past their grace period deleted"
            );
        }
        tokio::time::sleep(every).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::disk::BlockStore;
    use protocol::BlockInfo;

    #[test]
    fn a_quarantined_block_leaves_the_store_and_goes_only_after_its_grace() {
        let d = std::env::temp_dir().join(format!("mr-quarantine-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let store = BlockStore::open(&d).unwrap();
        let data = b"acknowledged once";
        let info = BlockInfo {
            id: 8,
            len: data.len() as u64,
            crc32c: crc32c::crc32c(data),
            generation: 0,
        };
        store.put(info, data).unwrap();
        store.take_delta();
        let q = dir(&d);
        assert!(store.move_out(8, &q, 1000).unwrap());
        assert!(!store.contains(8));
        assert_eq!(store.take_delta().1, vec![8]);
        assert_eq!(std::fs::read(q.join("blk_8.q1000")).unwrap(), data);
        assert!(!store.move_out(8, &q, 1001).unwrap());
        let grace = Duration::from_secs(24 * 3600);
        assert_eq!(sweep(&q, grace, 1000 + grace.as_secs() - 1), 0);
        assert!(q.join("blk_8.q1000").exists());
        let n = sweep(&q, grace, 1000 + grace.as_secs());
        assert!(n >= 1, "{n}");
        assert!(!q.join("blk_8.q1000").exists());
        // A reopened store does not pick quarantined blocks back up.
        assert!(!BlockStore::open(&d).unwrap().contains(8));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// The grace runs on the monotonic clock from the anchor, whatever the
    /// wall clock does after it: a block quarantined at (wall) 1000 goes
    /// only once 24 h of `Instant` time have passed.
    #[test]
    fn the_grace_is_measured_on_the_monotonic_clock() {
        let d = std::env::temp_dir().join(format!("mr-quarantine-mono-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let t0 = Instant::now();
        let clock = GraceClock::anchored(1000, t0);
        let tag = clock.secs_at(t0);
        std::fs::write(d.join(format!("blk_3.q{tag}")), b"x").unwrap();
        let grace = Duration::from_secs(24 * 3600);
        let almost = clock.secs_at(t0 + grace - Duration::from_secs(1));
        assert_eq!(sweep(&d, grace, almost), 0);
        assert_eq!(sweep(&d, grace, clock.secs_at(t0 + grace)), 1);
        // The process's own clock never goes back, and follows Instant.
        let p = GraceClock::process();
        let now = Instant::now();
        assert!(p.secs_at(now + Duration::from_secs(90)) >= p.secs_at(now) + 89);
        std::fs::remove_dir_all(&d).unwrap();
    }
}

//! The metadata disks' free space, as HDFS's NameNodeResourceChecker
//! watches the name directories against `dfs.namenode.resource.du.reserved`:
//! a full disk fails an edit-log write, and a master that finds out that
//! way has already refused an edit it was asked for (or, with several
//! metadata directories, lost a copy). Checked at every tick, the reserve
//! puts the master in safe mode (`safemode.rs`) while there is still room,
//! and lets it out once space is back. Every metadata directory is checked
//! (`[master] data_dir` and `data_dirs`): each is meant to hold every edit,
//! so one of them low is reason enough.

use common::units::format_size;
use std::io;
use std::path::{Path, PathBuf};

/// Reads the space left to an unprivileged writer at a path. Injected so
/// that tests need not fill a real disk.
pub type FreeSpace = Box<dyn Fn(&Path) -> io::Result<u64> + Send>;

pub struct ResourceChecker {
    /// Every metadata directory, `data_dir` first.
    dirs: Vec<PathBuf>,
    /// `[master] reserved_space`.
    reserved: u64,
    free: FreeSpace,
}

/// A metadata directory below the reserve, and the reason, naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Low {
    pub dir: PathBuf,
    pub reason: String,
}

impl ResourceChecker {
    pub fn new(dirs: Vec<PathBuf>, reserved: u64) -> Self {
        ResourceChecker {
            dirs,
            reserved,
            free: Box::new(statvfs_free),
        }
    }

    /// Replaces how free space is read (tests; the simulation).
    pub fn set_probe(&mut self, free: FreeSpace) {
        self.free = free;
    }

    /// The directories whose disk is below the reserve. A disk whose free
    /// space cannot be read counts as low: the master cannot tell that its
    /// next edit will fit, which is what the reserve is for.
    pub fn check(&self) -> Vec<Low> {
        self.dirs
            .iter()
            .filter_map(|dir| {
                let reason = match (self.free)(dir) {
                    Ok(free) if free >= self.reserved => return None,
                    Ok(free) => format!(
                        "the master's metadata disk ({}) has {} free, below reserved_space {}",
                        dir.display(),
                        format_size(free),
                        format_size(self.reserved)
                    ),
                    Err(e) => format!(
                        "the free space of the master's metadata disk ({}) cannot be read: {e}",
                        dir.display()
                    ),
                };
                Some(Low {
                    dir: dir.clone(),
                    reason,
                })
            })
            .collect()
    }
}

/// What safe mode says while any directory is low: every one of them.
pub fn reason(low: &[Low]) -> Option<String> {
    match low {
        [] => None,
        _ => Some(
            low.iter()
                .map(|l| l.reason.as_str())
                .collect::<Vec<_>>()
                .join("; "),
        ),
    }
}

/// Bytes available to a non-root writer on the file system holding `path`
/// (`f_bavail`, not `f_bfree`: the root-only reserve is no use to the
/// master unless it runs as root, and it should not).
pub fn statvfs_free(path: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_the_reserve_is_low_and_says_how_low() {
        let mut c = ResourceChecker::new(vec!["/m".into()], 100 << 20);
        c.set_probe(Box::new(|_| Ok(5 << 20)));
        let r = reason(&c.check()).expect("5 MiB free is below 100 MiB");
        assert!(
            r.contains("has 5.0 MiB free, below reserved_space 100.0 MiB"),
            "{r}"
        );
        c.set_probe(Box::new(|_| Ok(100 << 20)));
        assert_eq!(reason(&c.check()), None);
        c.set_probe(Box::new(|_| Err(io::Error::other("gone"))));
        assert!(reason(&c.check()).unwrap().contains("cannot be read: gone"));
    }

    /// Every metadata directory is checked, not only `data_dir`: the
    /// second one low is low, and the reason names it alone.
    #[test]
    fn any_metadata_directory_below_the_reserve_is_low() {
        let mut c = ResourceChecker::new(vec!["/m".into(), "/copy".into()], 100 << 20);
        c.set_probe(Box::new(|d| {
            Ok(if d == Path::new("/copy") { 1 } else { 1 << 30 })
        }));
        let low = c.check();
        assert_eq!(low.len(), 1, "{low:?}");
        assert_eq!(low[0].dir, Path::new("/copy"));
        let r = reason(&low).unwrap();
        assert!(r.contains("(/copy) has 1 B free"), "{r}");
        assert!(!r.contains("(/m)"), "{r}");
        c.set_probe(Box::new(|_| Ok(1)));
        let r = reason(&c.check()).unwrap();
        assert!(r.contains("(/m)") && r.contains("(/copy)"), "{r}");
    }

    #[test]
    fn statvfs_reads_a_real_disk() {
        assert!(statvfs_free(Path::new("/")).is_ok());
    }
}

//! The metadata disk's free space, as HDFS's NameNodeResourceChecker
//! watches the name directories against `dfs.namenode.resource.du.reserved`:
//! a full disk fails an edit-log write, and a master that finds out that
//! way has already refused an edit it was asked for. Checked at every tick,
//! the reserve puts the master in safe mode (`safemode.rs`) while there is
//! still room, and lets it out once space is back.

use common::units::format_size;
use std::io;
use std::path::{Path, PathBuf};

/// Reads the space left to an unprivileged writer at a path. Injected so
/// that tests need not fill a real disk.
pub type FreeSpace = Box<dyn Fn(&Path) -> io::Result<u64> + Send>;

pub struct ResourceChecker {
    dir: PathBuf,
    /// `[master] reserved_space`.
    reserved: u64,
    free: FreeSpace,
}

impl ResourceChecker {
    pub fn new(dir: &Path, reserved: u64) -> Self {
        ResourceChecker {
            dir: dir.to_path_buf(),
            reserved,
            free: Box::new(statvfs_free),
        }
    }

    /// Replaces how free space is read (tests; the simulation).
    pub fn set_probe(&mut self, free: FreeSpace) {
        self.free = free;
    }

    /// `Some(reason)` while the disk is below the reserve. A disk whose free
    /// space cannot be read counts as low: the master cannot tell that its
    /// next edit will fit, which is what the reserve is for.
    pub fn check(&self) -> Option<String> {
        match (self.free)(&self.dir) {
            Ok(free) if free >= self.reserved => None,
            Ok(free) => Some(format!(
                "the master's metadata disk ({}) has {} free, below reserved_space {}",
                self.dir.display(),
                format_size(free),
                format_size(self.reserved)
            )),
            Err(e) => Some(format!(
                "the free space of the master's metadata disk ({}) cannot be read: {e}",
                self.dir.display()
            )),
        }
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
        let mut c = ResourceChecker::new(Path::new("/m"), 100 << 20);
        c.set_probe(Box::new(|_| Ok(5 << 20)));
        let r = c.check().expect("5 MiB free is below 100 MiB");
        assert!(
            r.contains("has 5.0 MiB free, below reserved_space 100.0 MiB"),
            "{r}"
        );
        c.set_probe(Box::new(|_| Ok(100 << 20)));
        assert_eq!(c.check(), None);
        c.set_probe(Box::new(|_| Err(io::Error::other("gone"))));
        assert!(c.check().unwrap().contains("cannot be read: gone"));
    }

    #[test]
    fn statvfs_reads_a_real_disk() {
        assert!(statvfs_free(Path::new("/")).is_ok());
    }
}

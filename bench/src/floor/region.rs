//! The floor's input: every file mapped into one address range, each
//! at a page boundary, so that the sorts' index entries can keep one byte
//! offset per record as they did over a buffer, without the buffer. Reading
//! 1 GiB into a buffer faulted in fresh memory and copied every byte once
//! more (0.65-1.02 s of a TeraSort floor of 5.8-6.1 s, 2026-11-29), work
//! the job's workers do not do: they map their blocks.
//!
//! Each file's mapping covers its bytes rounded up to a page; the bytes
//! after a file's end in its last page read as zeros and belong to no
//! file's range, so the records seen are the files' records and nothing
//! else. Sort's `--format lines` keeps [`super::input::load`]: a file
//! that does not end with `\n` gets one there, which a read-only mapping
//! cannot add.

use super::FloorError;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// The files mapped back to back, each from a page boundary.
pub struct Region {
    base: *mut u8,
    len: usize,
    /// Where each file's bytes lie in the range, in the order given.
    pub files: Vec<(PathBuf, std::ops::Range<usize>)>,
}

// SAFETY: the range is mapped read-only and lives as long as the `Region`;
// shared references to its bytes are as thread-safe as a `&[u8]`.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

impl Region {
    pub fn open(paths: &[PathBuf]) -> Result<Region, FloorError> {
        if paths.is_empty() {
            return Err(FloorError::NoInput);
        }
        let page = page();
        let mut opened = Vec::with_capacity(paths.len());
        let mut files = Vec::with_capacity(paths.len());
        let mut at = 0usize;
        for p in paths {
            let io = |source| FloorError::Io {
                path: p.clone(),
                source,
            };
            let f = File::open(p).map_err(io)?;
            let meta = f.metadata().map_err(io)?;
            if !meta.is_file() {
                return Err(FloorError::NotAFile(p.clone()));
            }
            let len = usize::try_from(meta.len()).map_err(|_| FloorError::TooLarge(p.clone()))?;
            files.push((p.clone(), at..at + len));
            at = at
                .checked_add(len.next_multiple_of(page))
                .ok_or_else(|| FloorError::TooLarge(p.clone()))?;
            opened.push((f, len));
        }
        let total = at.max(page);
        // SAFETY: a fresh anonymous reservation, no address asked for; it
        // holds no memory until the files are mapped over it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(FloorError::Io {
                path: paths[0].clone(),
                source: std::io::Error::last_os_error(),
            });
        }
        let region = Region {
            base: base.cast(),
            len: total,
            files,
        };
        for ((f, len), (path, range)) in opened.iter().zip(&region.files) {
            if *len == 0 {
                continue;
            }
            // SAFETY: the address lies inside the reservation above, at a
            // page boundary, and the mapping ends inside it too (`at` grew
            // by the length rounded up to a page); MAP_FIXED replaces only
            // that part of our own reservation. The benchmark's input files
            // are not written while the floor runs.
            let m = unsafe {
                libc::mmap(
                    region.base.add(range.start).cast(),
                    *len,
                    libc::PROT_READ,
                    libc::MAP_SHARED | libc::MAP_FIXED,
                    f.as_raw_fd(),
                    0,
                )
            };
            if m == libc::MAP_FAILED {
                return Err(FloorError::Io {
                    path: path.clone(),
                    source: std::io::Error::last_os_error(),
                });
            }
        }
        Ok(region)
    }

    /// Each file's bytes, in the order given (empty files too).
    pub fn slices(&self) -> Vec<&[u8]> {
        let b = self.bytes();
        self.files.iter().map(|(_, r)| &b[r.clone()]).collect()
    }

    /// The whole range: the files' bytes at their ranges, zeros between.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: every page of the range is mapped readable (each file's
        // mapping covers its pages, rounded up) unless every file is empty,
        // in which case no range of any file reaches into it; the mapping
        // lives as long as `self`.
        if self.files.iter().all(|(_, r)| r.is_empty()) {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(self.base, self.len) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the reservation made in `open`, unmapped once, with the
        // files mapped over it.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_lie_at_their_ranges_with_zeros_between() {
        let dir = std::env::temp_dir().join(format!("mr-floor-region-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = vec![7u8; page() + 5];
        let texts: [&[u8]; 4] = [b"alpha", b"", &big, b"omega"];
        let paths: Vec<PathBuf> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let p = dir.join(format!("part-{i}"));
                std::fs::write(&p, t).unwrap();
                p
            })
            .collect();
        let r = Region::open(&paths).unwrap();
        let b = r.bytes();
        assert_eq!(r.slices(), texts.to_vec());
        for ((_, range), want) in r.files.iter().zip(texts) {
            assert_eq!(range.start % page(), 0);
            assert_eq!(&b[range.clone()], want);
        }
        assert_eq!(r.files[1].1, page()..page());
        assert!(b[5..page()].iter().all(|&x| x == 0));
        let err = Region::open(&[dir.join("missing")]).err().unwrap();
        assert!(err.to_string().contains("missing"), "{err}");
        assert!(matches!(Region::open(&[]), Err(FloorError::NoInput)));
        let empty = Region::open(&[paths[1].clone()]).unwrap();
        assert!(empty.bytes().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Map-output files kept between jobs. A finished job's map outputs are
//! moved into the worker's `jobs/spare/` directory (at most [`KEEP_PER_SLOT`]
//! a map slot) instead of being deleted, and a new map output takes one of
//! them and writes over it: its pages are already in the page cache, so the
//! write copies into them rather than into freshly allocated ones.
//!
//! Why: on a VM whose host takes freed memory back (virtio balloon's free
//! page reporting), a page the guest allocates again is faulted in from the
//! host, and a deleted map output frees its pages. TeraSort's map outputs
//! (1 GiB for 1 GiB of input) were written into fresh page cache every job:
//! the kernel's copy into the page cache (`copy_folio_from_iter_atomic`,
//! map outputs and output parts together) was 45 % of a 1 GiB TeraSort's
//! CPU samples (`scripts/profile.sh --job terasort`, 2026-11-30).
//!
//! The cost moves rather than vanishes where memory is cheap to allocate:
//! a kept file's dirty pages are written back to disk (a deleted file's
//! never are), and it holds disk space until a later map output reuses it.
//! Hence the bound.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Map-output files kept per map slot.
pub const KEEP_PER_SLOT: usize = 4;

/// The spare directory beside the job directory `job`
/// (`<data>/jobs/job-N` → `<data>/jobs/spare`); none for a directory laid
/// out otherwise (a spill's, a test's).
fn spare_dir_of(job: &Path) -> Option<PathBuf> {
    let jobs = job.parent()?;
    let named =
        |p: &Path, f: &dyn Fn(&str) -> bool| p.file_name().and_then(|n| n.to_str()).is_some_and(f);
    (named(job, &|n| n.starts_with("job-")) && named(jobs, &|n| n == "jobs"))
        .then(|| jobs.join("spare"))
}

/// Opens `path` for writing from its start: a kept file renamed into place
/// when there is one (its old bytes past what is written are cut off by
/// [`truncate_to`]), else a new file.
pub fn open_for_output(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().and_then(spare_dir_of) {
        if let Ok(rd) = fs::read_dir(&dir) {
            for e in rd.flatten() {
                // Another map may take the same one first: the rename of a
                // name already gone fails, and the next is tried.
                if fs::rename(e.path(), path).is_ok() {
                    return OpenOptions::new().write(true).open(path);
                }
            }
        }
    }
    File::create(path)
}

/// Cuts `f` to the `len` bytes written into it: a kept file may have been
/// longer.
pub fn truncate_to(f: &File, len: u64) -> io::Result<()> {
    if f.metadata()?.len() > len {
        f.set_len(len)?;
    }
    Ok(())
}

/// Moves the map outputs of the job directory `job_dir` into the spare
/// directory, until it holds `keep` files; the rest go with the directory.
pub fn keep_outputs(job_dir: &Path, keep: usize) {
    if keep == 0 {
        return;
    }
    let Some(dir) = spare_dir_of(job_dir) else {
        return;
    };
    if fs::create_dir_all(&dir).is_err() {
        return;
    }
    let mut held = fs::read_dir(&dir).map(|rd| rd.count()).unwrap_or(keep);
    let Ok(rd) = fs::read_dir(job_dir) else {
        return;
    };
    for e in rd.flatten() {
        if held >= keep {
            break;
        }
        let name = e.file_name();
        let is_output = name
            .to_str()
            .is_some_and(|n| n.starts_with("map-") && n.ends_with(".out"));
        if !is_output || !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let to = dir.join(format!(
            "{}-{}",
            job_dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("job"),
            name.to_string_lossy()
        ));
        if fs::rename(e.path(), to).is_ok() {
            held += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mr-recycle-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("jobs/job-1")).unwrap();
        fs::create_dir_all(d.join("jobs/job-2")).unwrap();
        d
    }

    #[test]
    fn a_kept_output_is_written_over_and_cut_to_its_new_length() {
        let d = tmp("reuse");
        let old = d.join("jobs/job-1/map-0-0.out");
        fs::write(&old, vec![7u8; 10_000]).unwrap();
        fs::write(d.join("jobs/job-1/map-0-0.out.index"), b"idx").unwrap();
        keep_outputs(&d.join("jobs/job-1"), 8);
        fs::remove_dir_all(d.join("jobs/job-1")).unwrap();
        // Only the output was kept, not its index.
        let spare: Vec<_> = fs::read_dir(d.join("jobs/spare")).unwrap().collect();
        assert_eq!(spare.len(), 1);

        let new = d.join("jobs/job-2/map-3-0.out");
        let mut f = open_for_output(&new).unwrap();
        f.write_all(b"fresh bytes").unwrap();
        truncate_to(&f, 11).unwrap();
        drop(f);
        assert_eq!(fs::read(&new).unwrap(), b"fresh bytes");
        assert_eq!(fs::read_dir(d.join("jobs/spare")).unwrap().count(), 0);
        // With nothing kept, a new file.
        let other = d.join("jobs/job-2/map-4-0.out");
        let mut f = open_for_output(&other).unwrap();
        f.write_all(b"x").unwrap();
        assert_eq!(fs::read(&other).unwrap(), b"x");
        // Only a job directory's files take kept ones.
        keep_outputs(&d.join("jobs/job-2"), 8);
        assert_eq!(spare_dir_of(&d.join("jobs/job-2/spill-1-0")), None);
        assert_eq!(spare_dir_of(&d.join("elsewhere")), None);
        assert_eq!(fs::read_dir(d.join("jobs/spare")).unwrap().count(), 2);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn keeps_at_most_the_bound() {
        let d = tmp("bound");
        for i in 0..5 {
            fs::write(d.join(format!("jobs/job-1/map-{i}-0.out")), b"o").unwrap();
        }
        keep_outputs(&d.join("jobs/job-1"), 3);
        assert_eq!(fs::read_dir(d.join("jobs/spare")).unwrap().count(), 3);
        keep_outputs(&d.join("jobs/job-1"), 3);
        assert_eq!(fs::read_dir(d.join("jobs/spare")).unwrap().count(), 3);
        keep_outputs(&d.join("jobs/job-1"), 0);
        fs::remove_dir_all(&d).unwrap();
    }
}

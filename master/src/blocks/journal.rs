//! The namespace metadata written alike to several directories
//! (`[master] data_dir` and `data_dirs`), as HDFS's FSEditLog writes every
//! `dfs.namenode.name.dir`: one disk lost or full must neither lose an
//! acknowledged edit nor stop the master.
//!
//! Each directory holds its own `fsimage` and `edits.log` ([`EditLog`]).
//! An edit is acknowledged once one directory took it; a directory whose
//! write failed is skipped from then on, and `/healthz` names it, until a
//! fresh snapshot and log can be written there (HDFS's
//! `dfs.namenode.name.dir.restore`), which the master's tick tries while
//! the directory's disk is above its reserve. Edits are refused only when
//! every directory has failed.
//!
//! At start every directory is read before any is written. The copy with
//! the highest txid wins (a directory that failed while the others went on
//! is behind; one found empty is new or a replaced disk), and every
//! directory is rewritten from it. A copy that cannot be read is never
//! passed over: the start is refused naming it, since the operator, not
//! the master, must judge whether the others are the copies to keep.

use crate::blocks::editlog::{self, EditLog, EditLogError, Loaded, Recovered};
use crate::blocks::namespace::{Edit, Namespace};
use std::cmp::Reverse;
use std::io;
use std::path::{Path, PathBuf};

pub struct Journal {
    /// In the order configured: `data_dir` first.
    dirs: Vec<Dir>,
    /// Txid of the last acknowledged edit: what a restored directory's
    /// snapshot covers, since the namespace is applied only once an edit
    /// is acknowledged.
    txid: u64,
    snapshot_every: u64,
}

enum Dir {
    Up(EditLog),
    /// Takes no edit until restored. Nothing is appended after a failed
    /// write, so what it left there does not matter: a restore replaces
    /// both files whole, and a start finds the directory behind.
    Failed {
        dir: PathBuf,
        why: String,
    },
}

impl Dir {
    fn path(&self) -> &Path {
        match self {
            Dir::Up(log) => log.dir(),
            Dir::Failed { dir, .. } => dir,
        }
    }

    /// Moves a log that failed (a write, or putting a fresh log in place)
    /// out of the rotation.
    fn demote_if_failed(&mut self) {
        if let Dir::Up(log) = self {
            if let Some(why) = log.failure() {
                *self = Dir::Failed {
                    dir: log.dir().to_path_buf(),
                    why: why.to_string(),
                };
            }
        }
    }
}

impl Journal {
    /// Loads every directory, takes the newest copy and rewrites every
    /// directory from it (see the module doc). A directory that cannot be
    /// written now starts failed and is restored later, as long as one
    /// could be written.
    pub fn open(dirs: &[PathBuf], snapshot_every: u64) -> Result<(Self, Namespace), EditLogError> {
        assert!(!dirs.is_empty(), "the config always names data_dir");
        let mut copies: Vec<Loaded> = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let loaded = editlog::load(dir).map_err(|e| match dirs.len() {
                1 => e,
                _ => EditLogError::Copy {
                    dir: dir.clone(),
                    others: dirs.iter().filter(|d| *d != dir).cloned().collect(),
                    source: Box::new(e),
                },
            })?;
            copies.push(loaded);
        }
        // Each start raises the generation and writes it at the same txid,
        // so of two copies at one txid the later start's is the newer;
        // then the first configured.
        let best = (0..copies.len())
            .max_by_key(|&i| (copies[i].txid, copies[i].ns.generation, Reverse(i)))
            .expect("at least one directory");
        let txid = copies[best].txid;
        let from = &dirs[best];
        for (dir, c) in dirs.iter().zip(&copies) {
            if c.empty && txid > 0 {
                tracing::info!(
                    dir = %dir.display(),
                    from = %from.display(),
                    txid,
                    "metadata directory is empty (new, or a replaced disk): filled from the newest copy"
                );
            } else if c.txid < txid {
                tracing::warn!(
                    dir = %dir.display(),
                    behind_at = c.txid,
                    from = %from.display(),
                    txid,
                    "metadata directory was behind (it failed, or was restored from an older \
                     copy): rewritten from the newest copy"
                );
            }
        }
        let mut ns = copies.swap_remove(best).ns;
        drop(copies);
        ns.after_restart();
        let mut out = Vec::with_capacity(dirs.len());
        let mut first_err = None;
        for dir in dirs {
            match EditLog::start(dir, txid, &ns, snapshot_every) {
                Ok(log) => out.push(Dir::Up(log)),
                Err(e) => {
                    tracing::error!(
                        dir = %dir.display(),
                        "cannot write the start snapshot and log to the metadata directory: {e}; \
                         it takes no edits until it can be restored"
                    );
                    out.push(Dir::Failed {
                        dir: dir.clone(),
                        why: e.to_string(),
                    });
                    first_err.get_or_insert(e);
                }
            }
        }
        if !out.iter().any(|d| matches!(d, Dir::Up(_))) {
            return Err(first_err.expect("every directory failed"));
        }
        let journal = Journal {
            dirs: out,
            txid,
            snapshot_every,
        };
        Ok((journal, ns))
    }

    /// Writes and fsyncs the edit to every directory that takes edits; it
    /// is acknowledged once one did. A directory whose write failed is
    /// skipped until restored; when none took it, the edit is refused.
    pub fn append(&mut self, edit: &Edit) -> io::Result<()> {
        let mut took = Vec::new();
        let mut failed = Vec::new();
        for d in &mut self.dirs {
            let Dir::Up(log) = d else { continue };
            debug_assert_eq!(log.txid(), self.txid, "{}", log.dir().display());
            match log.append(edit) {
                Ok(()) => took.push(log.dir().to_path_buf()),
                Err(e) => failed.push(format!("{}: {e}", log.dir().display())),
            }
            d.demote_if_failed();
        }
        if took.is_empty() {
            let why = self.failure_list();
            tracing::error!(
                txid = self.txid + 1,
                "the edit is refused: no metadata directory took it ({why})"
            );
            return Err(io::Error::other(format!(
                "the edit is refused: no metadata directory took it ({why}); namespace changes \
                 resume once a fresh snapshot and log can be written to one"
            )));
        }
        self.txid += 1;
        if !failed.is_empty() {
            tracing::error!(
                txid = self.txid,
                took = ?took,
                "metadata directory write failed ({}); the edit stands on the others, and the \
                 failed directory is skipped until it can be restored",
                failed.join("; ")
            );
        }
        Ok(())
    }

    /// Call after applying an edit: snapshots each directory whose log has
    /// grown enough. An error says which directories could not; the edit
    /// stands either way.
    pub fn maybe_checkpoint(&mut self, ns: &Namespace) -> io::Result<()> {
        self.each_up(|log| log.maybe_checkpoint(ns))
    }

    /// Snapshots every directory that takes edits.
    pub fn checkpoint(&mut self, ns: &Namespace) -> io::Result<()> {
        self.each_up(|log| log.checkpoint(ns))
    }

    fn each_up(&mut self, mut f: impl FnMut(&mut EditLog) -> io::Result<()>) -> io::Result<()> {
        let mut errors = Vec::new();
        for d in &mut self.dirs {
            let Dir::Up(log) = d else { continue };
            if let Err(e) = f(log) {
                errors.push(format!("{}: {e}", log.dir().display()));
            }
            d.demote_if_failed();
        }
        match errors.is_empty() {
            true => Ok(()),
            false => Err(io::Error::other(errors.join("; "))),
        }
    }

    /// Every failed directory, with why it failed.
    pub fn failures(&self) -> Vec<(&Path, &str)> {
        self.dirs
            .iter()
            .filter_map(|d| match d {
                Dir::Failed { dir, why } => Some((dir.as_path(), why.as_str())),
                Dir::Up(_) => None,
            })
            .collect()
    }

    /// No directory takes edits: namespace changes are refused.
    pub fn all_failed(&self) -> bool {
        self.dirs.iter().all(|d| matches!(d, Dir::Failed { .. }))
    }

    /// Brings a failed directory back: `ns` (every acknowledged edit and
    /// nothing else) goes to a fresh snapshot at the last acknowledged
    /// txid and an empty log is put in place, so what the failed write
    /// left there does not matter. Fails, and the directory stays failed,
    /// while its disk still cannot take the snapshot. A directory that is
    /// not failed is left alone.
    pub fn restore(&mut self, dir: &Path, ns: &Namespace) -> io::Result<()> {
        let Some(d) = self.dirs.iter_mut().find(|d| d.path() == dir) else {
            return Err(io::Error::other(format!(
                "{} is not a metadata directory",
                dir.display()
            )));
        };
        let Dir::Failed { dir, why } = d else {
            return Ok(());
        };
        let log =
            EditLog::start(dir, self.txid, ns, self.snapshot_every).map_err(io::Error::other)?;
        tracing::warn!(
            dir = %dir.display(),
            txid = self.txid,
            "metadata directory restored on a fresh snapshot and log (it failed: {why})"
        );
        *d = Dir::Up(log);
        Ok(())
    }

    /// Tries to restore every failed directory. Succeeds when at least one
    /// directory takes edits afterwards: what an edit needs.
    pub fn recover(&mut self, ns: &Namespace) -> io::Result<()> {
        let failed: Vec<PathBuf> = self
            .failures()
            .iter()
            .map(|(d, _)| d.to_path_buf())
            .collect();
        let mut errors = Vec::new();
        for dir in failed {
            if let Err(e) = self.restore(&dir, ns) {
                errors.push(format!("{}: {e}", dir.display()));
            }
        }
        if self.all_failed() {
            return Err(io::Error::other(format!(
                "no metadata directory takes edits: {}",
                errors.join("; ")
            )));
        }
        Ok(())
    }

    /// Flushes every directory (graceful shutdown). Every edit was fsynced
    /// when appended, so one directory failing here loses nothing the
    /// others hold: an error only when none could.
    pub fn sync(&mut self) -> io::Result<()> {
        let mut last = None;
        let mut synced = false;
        for d in &mut self.dirs {
            let Dir::Up(log) = d else { continue };
            match log.sync() {
                Ok(()) => synced = true,
                Err(e) => {
                    tracing::error!(dir = %log.dir().display(), "edit-log sync failed: {e}");
                    last = Some(e);
                }
            }
        }
        match (synced, last) {
            (false, Some(e)) => Err(e),
            _ => Ok(()),
        }
    }

    fn failure_list(&self) -> String {
        self.failures()
            .iter()
            .map(|(d, why)| format!("{}: {why}", d.display()))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// `mr-master --recover truncate` over every metadata directory: each log
/// corrupt in the middle is cut before its first corrupt record. The first
/// directory that cannot be recovered (a corrupt snapshot) stops it.
pub fn recover_truncate(dirs: &[PathBuf]) -> Result<Vec<Recovered>, EditLogError> {
    dirs.iter().map(|d| editlog::recover_truncate(d)).collect()
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;

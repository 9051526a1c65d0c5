//! Directories and attributes: `mr fs mkdir`, the parents a new file
//! needs, `mr fs chmod` and `mr fs chown`. Who may is `perm.rs`'s to say;
//! this only changes the namespace, through the edit log.

use super::namespace::{Edit, DIR_MODE};
use super::Blocks;
use crate::blocks::namespace::is_staging;
use crate::cluster::Outbox;
use crate::error::{MasterError, Result};
use common::path::DfsPath;

impl Blocks {
    /// Makes `raw` and its missing parents (`mkdir -p`): the parents with
    /// the default mode, `raw` itself with `mode`. An existing directory is
    /// no error; a file there, or above it, is.
    pub fn mkdir(&mut self, raw: &str, owner: &str, mode: u32) -> Result<()> {
        let path = DfsPath::parse_file(raw)?;
        if self.ns.files.contains_key(path.as_str()) {
            return Err(MasterError::AlreadyExists(format!("{path} is a file")));
        }
        if let Some(a) = self.ns.file_ancestor(path.as_str()) {
            return Err(MasterError::FailedPrecondition(format!(
                "cannot make {path}: its parent {a} is a file"
            )));
        }
        if self.ns.is_dir(path.as_str()) {
            return Ok(());
        }
        let (_, parents) = self.ns.existing_ancestor(path.as_str());
        self.make_parents(parents, owner)?;
        self.commit(Edit::Mkdirs {
            dirs: vec![path.to_string()],
            owner: owner.to_string(),
            mode,
        })?;
        tracing::info!(path = %path, owner, mode = format!("{mode:o}"), "directory made");
        Ok(())
    }

    /// Records the directories a new file at `path` lacks, owned by its
    /// writer, as HDFS's `create` with `createParent` does. Job staging is
    /// left implied: it is the runtime's, and removed with its files.
    pub(super) fn make_parents_of(&mut self, path: &str, owner: &str) -> Result<()> {
        if is_staging(path) {
            return Ok(());
        }
        let (_, parents) = self.ns.existing_ancestor(path);
        self.make_parents(parents, owner)
    }

    fn make_parents(&mut self, dirs: Vec<String>, owner: &str) -> Result<()> {
        if dirs.is_empty() {
            return Ok(());
        }
        self.commit(Edit::Mkdirs {
            dirs,
            owner: owner.to_string(),
            mode: DIR_MODE,
        })
    }

    /// Removes a job's output directory if it is still what the job's
    /// admission made: `owner`'s, with nothing in it. A job that did not
    /// succeed (or that a master restart ended) leaves no output behind,
    /// so that the same output can be given again.
    pub fn remove_empty_output(&mut self, output: &str, owner: &str, out: &mut Outbox) {
        let ns = &self.ns;
        let untouched = ns.dirs.get(output).is_some_and(|d| d.owner == owner)
            && ns.matching(output).is_empty()
            && ns.dirs_under(output).len() == 1;
        if untouched {
            if let Err(e) = self.delete(output, out) {
                tracing::warn!(output, "could not remove the empty output directory: {e}");
            }
        }
    }

    /// `mr fs chmod` / `chown` of a file or directory that exists.
    pub fn set_attr(&mut self, raw: &str, owner: Option<String>, mode: Option<u32>) -> Result<()> {
        let path = DfsPath::parse_file(raw)?;
        if !self.ns.files.contains_key(path.as_str()) && !self.ns.is_dir(path.as_str()) {
            return Err(MasterError::NotFound(format!(
                "{path}: no such file or directory"
            )));
        }
        if let Some(m) = mode {
            if m > 0o777 {
                return Err(MasterError::InvalidArgument(format!(
                    "mode {m:o}: at most 777"
                )));
            }
        }
        tracing::info!(path = %path, ?owner, ?mode, "attributes changed");
        self.commit(Edit::SetAttr {
            path: path.to_string(),
            owner,
            mode,
        })
    }
}

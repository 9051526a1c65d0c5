//! The namespace: files and their ordered blocks. Pure data; the edit log
//! makes it durable, the block map says where the blocks are.

use protocol::BlockInfo;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// `/_staging` or a path under it: the runtime's job staging, removed at
/// every start. Here, below every owner, because the namespace's rules
/// (`dirs.rs`, `lease.rs`), job submission and the edge all refuse it.
pub fn is_staging(path: &str) -> bool {
    path == "/_staging" || path.starts_with("/_staging/")
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMeta {
    pub replication: u32,
    pub block_size: u64,
    pub blocks: Vec<BlockInfo>,
    pub mtime_ms: u64,
    /// The user who wrote it (`auth`); empty in logs from before owners
    /// were recorded, which makes it the admin's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub owner: String,
    /// Permission bits, `rwx` for the owner and for others as in POSIX
    /// (`0o644` by default; group bits are kept but not checked, there are
    /// no groups). Files of logs from before modes read as `0o644`.
    #[serde(default = "default_file_mode")]
    pub mode: u32,
}

/// A file's mode unless its writer chose: the owner writes, anyone reads.
pub const FILE_MODE: u32 = 0o644;
/// A directory's mode unless its creator chose: only the owner adds to it.
pub const DIR_MODE: u32 = 0o755;

fn default_file_mode() -> u32 {
    FILE_MODE
}

/// A directory's owner and mode. Directories made before they were
/// recorded (implied by the files under them) have none: they read as the
/// admin's with mode `0o777`, open to all as every path was then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirMeta {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub owner: String,
    pub mode: u32,
}

impl DirMeta {
    /// What a directory implied by files alone is taken to be.
    pub fn implied() -> DirMeta {
        DirMeta {
            owner: String::new(),
            mode: 0o777,
        }
    }
}

impl FileMeta {
    pub fn size(&self) -> u64 {
        self.blocks.iter().map(|b| b.len).sum()
    }
}

/// One durable change. The edit log is a sequence of these; replaying them
/// over the last snapshot rebuilds the namespace exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Edit {
    /// A completed file appears whole (replacing any file of that path).
    AddFile {
        path: String,
        file: FileMeta,
    },
    Delete {
        paths: Vec<String>,
        /// Recorded directories at or under the deleted path.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        dirs: Vec<String>,
    },
    /// Directories come into being, each owned by `owner` with `mode`: an
    /// `mr fs mkdir`, the missing parents of a new file, a job's output.
    Mkdirs {
        dirs: Vec<String>,
        owner: String,
        mode: u32,
    },
    /// `mr fs chmod` / `mr fs chown` of a file or a directory.
    SetAttr {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// Block ids below `upto` may have been handed out: never reuse them, or
    /// an orphan replica left on a worker could pass for a new block.
    ReserveBlockIds {
        upto: u64,
    },
    /// `worker`'s replica of `block` failed its checksum (`ReportBadBlock`):
    /// never counted good again, across master restarts too, until the
    /// worker reports it gone or replaced ([`Edit::ClearCorrupt`]).
    MarkCorrupt {
        block: u64,
        worker: String,
    },
    ClearCorrupt {
        block: u64,
        worker: String,
    },
    /// A job's commit: every part moves from staging to the output at once,
    /// with the `_SUCCESS` marker, and staging leftovers go (Hadoop's
    /// FileOutputCommitter, as one atomic record).
    Commit {
        renames: Vec<(String, String)>,
        add: Vec<(String, FileMeta)>,
        delete: Vec<String>,
        /// The job's owner, who then owns the renamed parts (written by
        /// workers); absent in older logs.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        owner: String,
    },
    /// `mr admin decommission` (`on`) or `recommission` of a worker: kept
    /// in the log, as HDFS keeps its excludes file beside the namesystem,
    /// so that a master restart does not hand a half-drained worker new
    /// blocks and tasks again.
    Decommission {
        worker: String,
        on: bool,
    },
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Namespace {
    pub files: BTreeMap<String, FileMeta>,
    /// Recorded directories (never `/`, which is the admin's and open to
    /// all, as HDFS's `/tmp`). A directory may also exist only by the files
    /// under it (see [`DirMeta::implied`]). Absent in older snapshots.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dirs: BTreeMap<String, DirMeta>,
    /// The next block id to hand out.
    pub next_block_id: u64,
    /// Ids below this are reserved durably.
    pub reserved_block_ids: u64,
    /// Raised at every open and made durable by the start snapshot before
    /// any block is allocated: every block allocated in this run carries it.
    #[serde(default)]
    pub generation: u64,
    /// Block → workers whose replica was reported corrupt, as HDFS's
    /// `CorruptReplicasMap`, but durable: HDFS rebuilds it from the
    /// DataNodes' reports after a restart, whereas here a worker forgets
    /// what its reads found when it restarts (`worker/src/store/disk.rs`), and
    /// a corrupt replica found by a client or a stale copy found by a
    /// read is known to the master alone. A master that forgot would count
    /// a corrupt replica good again: hand it to readers, and trim the good
    /// copy as an excess one. Absent from snapshots of earlier versions,
    /// and from new ones while empty, so that they read as before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub corrupt: BTreeMap<u64, BTreeSet<String>>,
    /// Workers an operator decommissioned (and did not recommission):
    /// see `blocks/decommission.rs`. Absent in older snapshots.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub decommissioned: BTreeSet<String>,
}

impl Namespace {
    pub fn apply(&mut self, edit: &Edit) {
        match edit {
            Edit::AddFile { path, file } => {
                self.saw_blocks(&file.blocks);
                self.files.insert(path.clone(), file.clone());
            }
            Edit::Delete { paths, dirs } => {
                for p in paths {
                    self.files.remove(p);
                }
                for d in dirs {
                    self.dirs.remove(d);
                }
            }
            Edit::Mkdirs { dirs, owner, mode } => {
                for d in dirs {
                    self.dirs.insert(
                        d.clone(),
                        DirMeta {
                            owner: owner.clone(),
                            mode: *mode,
                        },
                    );
                }
            }
            Edit::SetAttr { path, owner, mode } => {
                if let Some(f) = self.files.get_mut(path) {
                    if let Some(o) = owner {
                        f.owner = o.clone();
                    }
                    if let Some(m) = mode {
                        f.mode = *m;
                    }
                } else {
                    let d = self
                        .dirs
                        .entry(path.clone())
                        .or_insert_with(DirMeta::implied);
                    if let Some(o) = owner {
                        d.owner = o.clone();
                    }
                    if let Some(m) = mode {
                        d.mode = *m;
                    }
                }
            }
            Edit::Commit {
                renames,
                add,
                delete,
                owner,
            } => {
                for (from, to) in renames {
                    if let Some(mut f) = self.files.remove(from) {
                        if !owner.is_empty() {
                            f.owner = owner.clone();
                        }
                        self.files.insert(to.clone(), f);
                    }
                }
                for (p, f) in add {
                    self.saw_blocks(&f.blocks);
                    self.files.insert(p.clone(), f.clone());
                }
                for p in delete {
                    self.files.remove(p);
                }
            }
            Edit::ReserveBlockIds { upto } => {
                self.reserved_block_ids = self.reserved_block_ids.max(*upto);
                // After a restart everything reserved counts as used.
                self.next_block_id = self.next_block_id.max(self.reserved_block_ids);
            }
            Edit::MarkCorrupt { block, worker } => {
                self.corrupt
                    .entry(*block)
                    .or_default()
                    .insert(worker.clone());
            }
            Edit::ClearCorrupt { block, worker } => {
                if let Some(s) = self.corrupt.get_mut(block) {
                    s.remove(worker);
                    if s.is_empty() {
                        self.corrupt.remove(block);
                    }
                }
            }
            Edit::Decommission { worker, on } => {
                if *on {
                    self.decommissioned.insert(worker.clone());
                } else {
                    self.decommissioned.remove(worker);
                }
            }
        }
    }

    /// No block id in the namespace is ever handed out again, whatever the
    /// reservations say (a second guard beside [`Self::after_restart`]).
    fn saw_blocks(&mut self, blocks: &[BlockInfo]) {
        if let Some(max) = blocks.iter().map(|b| b.id).max() {
            self.next_block_id = self.next_block_id.max(max + 1);
        }
    }

    /// After loading a snapshot and replaying the log: every id reserved
    /// counts as used, and a new generation begins. A snapshot saves the in-memory `next_block_id`, and
    /// the ids handed out after it are logged by no edit that would raise
    /// it (their reservation came before the snapshot), so resuming from
    /// the saved value would hand them out again.
    ///
    /// Corrupt marks of blocks no file holds any more (deleted, or of a
    /// write that never completed) go too: ids are never reused, so such a
    /// mark can never apply again, and this keeps deletes free of them.
    pub fn after_restart(&mut self) {
        self.next_block_id = self.next_block_id.max(self.reserved_block_ids);
        self.generation += 1;
        if !self.corrupt.is_empty() {
            let held: HashSet<u64> = self
                .files
                .values()
                .flat_map(|f| f.blocks.iter().map(|b| b.id))
                .collect();
            self.corrupt.retain(|id, _| held.contains(id));
        }
    }

    /// Files at or under `path` (a file itself, or every file of a directory).
    pub fn matching(&self, path: &str) -> Vec<String> {
        if self.files.contains_key(path) {
            return vec![path.to_string()];
        }
        let prefix = if path == "/" {
            "/".to_string()
        } else {
            format!("{path}/")
        };
        self.files
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// True if `path` is a directory: recorded, or some file lives under it.
    pub fn is_dir(&self, path: &str) -> bool {
        let prefix = if path == "/" {
            return true;
        } else {
            format!("{path}/")
        };
        self.dirs.contains_key(path)
            || self
                .files
                .range(prefix.clone()..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&prefix))
    }

    /// A directory's owner and mode, if it is one.
    pub fn dir(&self, path: &str) -> Option<DirMeta> {
        if let Some(d) = self.dirs.get(path) {
            return Some(d.clone());
        }
        self.is_dir(path).then(DirMeta::implied)
    }

    /// Recorded directories at or under `path`.
    pub fn dirs_under(&self, path: &str) -> Vec<String> {
        let prefix = format!("{}/", path.trim_end_matches('/'));
        self.dirs
            .keys()
            .filter(|d| d.as_str() == path || d.starts_with(&prefix))
            .cloned()
            .collect()
    }

    /// The nearest existing directory at or above `path`'s parent, and the
    /// directories missing below it, outermost first: what creating `path`
    /// (or, for a `mkdir`, `path` itself among them) has to make.
    pub fn existing_ancestor(&self, path: &str) -> (String, Vec<String>) {
        let mut missing = Vec::new();
        let mut cur = path;
        while let Some(i) = cur.rfind('/') {
            let parent = if i == 0 { "/" } else { &cur[..i] };
            if parent == "/" || self.is_dir(parent) {
                missing.reverse();
                return (parent.to_string(), missing);
            }
            missing.push(parent.to_string());
            cur = parent;
        }
        missing.reverse();
        ("/".to_string(), missing)
    }

    /// The first proper ancestor of `path` that is a file, if any.
    pub fn file_ancestor(&self, path: &str) -> Option<String> {
        let mut end = path.len();
        while let Some(i) = path[..end].rfind('/') {
            if i == 0 {
                break;
            }
            if self.files.contains_key(&path[..i]) {
                return Some(path[..i].to_string());
            }
            end = i;
        }
        None
    }

    pub fn block_count(&self) -> usize {
        self.files.values().map(|f| f.blocks.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(ids: &[u64]) -> FileMeta {
        FileMeta {
            mode: FILE_MODE,
            owner: String::new(),
            replication: 1,
            block_size: 10,
            blocks: ids
                .iter()
                .map(|&id| BlockInfo {
                    id,
                    len: 10,
                    crc32c: 0,
                    generation: 0,
                })
                .collect(),
            mtime_ms: 0,
        }
    }

    /// Edit logs and fsimages written before generation stamps existed
    /// still load: their blocks and namespaces are generation 0.
    #[test]
    fn records_without_a_generation_read_as_zero() {
        let e: Edit = serde_json::from_str(
            r#"{"op":"add_file","path":"/a","file":{"replication":1,"block_size":10,
            "blocks":[{"id":3,"len":10,"crc32c":9}],"mtime_ms":0}}"#,
        )
        .unwrap();
        let Edit::AddFile { file, .. } = e else {
            panic!("{e:?}")
        };
        assert_eq!(file.blocks[0].generation, 0);
        let ns: Namespace =
            serde_json::from_str(r#"{"files":{},"next_block_id":4,"reserved_block_ids":1024}"#)
                .unwrap();
        assert_eq!(ns.generation, 0);
        assert!(ns.corrupt.is_empty());
    }

    /// Corrupt marks replay, survive a snapshot's JSON round trip, and
    /// leave no trace in a snapshot while there are none (an earlier
    /// version reads it); a restart drops those of blocks no file holds.
    #[test]
    fn corrupt_marks_replay_and_round_trip() {
        let mut ns = Namespace::default();
        let plain = serde_json::to_string(&ns).unwrap();
        assert!(!plain.contains("corrupt"), "{plain}");
        ns.apply(&Edit::AddFile {
            path: "/a".into(),
            file: file(&[1, 2]),
        });
        let mark = |block, worker: &str| Edit::MarkCorrupt {
            block,
            worker: worker.into(),
        };
        ns.apply(&mark(1, "w1"));
        ns.apply(&mark(1, "w2"));
        ns.apply(&mark(9, "w1"));
        ns.apply(&Edit::ClearCorrupt {
            block: 1,
            worker: "w2".into(),
        });
        let back: Namespace = serde_json::from_str(&serde_json::to_string(&ns).unwrap()).unwrap();
        assert_eq!(back.corrupt, ns.corrupt);
        assert_eq!(ns.corrupt[&1], BTreeSet::from(["w1".to_string()]));
        ns.after_restart();
        assert_eq!(ns.corrupt.keys().copied().collect::<Vec<_>>(), vec![1]);
        let e: Edit =
            serde_json::from_str(r#"{"op":"mark_corrupt","block":3,"worker":"w4"}"#).unwrap();
        assert_eq!(e, mark(3, "w4"));
    }

    #[test]
    fn dirs_are_prefixes() {
        let mut ns = Namespace::default();
        ns.apply(&Edit::AddFile {
            path: "/a/b".into(),
            file: file(&[1, 2]),
        });
        ns.apply(&Edit::AddFile {
            path: "/a/c/d".into(),
            file: file(&[3]),
        });
        ns.apply(&Edit::AddFile {
            path: "/ab".into(),
            file: file(&[4]),
        });
        assert!(ns.is_dir("/a"));
        assert!(!ns.is_dir("/a/b"));
        assert_eq!(ns.matching("/a"), vec!["/a/b", "/a/c/d"]);
        assert_eq!(ns.file_ancestor("/a/b/x"), Some("/a/b".into()));
        assert_eq!(ns.file_ancestor("/a/x"), None);
        assert_eq!(ns.files["/a/b"].size(), 20);
        ns.apply(&Edit::Delete {
            paths: ns.matching("/a"),
            dirs: vec![],
        });
        assert_eq!(ns.files.len(), 1);
    }

    /// Directories are recorded with their owner and mode, replay and
    /// round-trip; those implied by files alone (older namespaces) are the
    /// admin's and open to all; deleting a directory drops its records.
    #[test]
    fn recorded_dirs_replay_and_implied_ones_are_open() {
        let mut ns = Namespace::default();
        ns.apply(&Edit::AddFile {
            path: "/old/f".into(),
            file: file(&[1]),
        });
        assert_eq!(ns.dir("/old"), Some(DirMeta::implied()));
        assert_eq!(ns.dir("/nothing"), None);
        ns.apply(&Edit::Mkdirs {
            dirs: vec!["/a".into(), "/a/b".into()],
            owner: "ann".into(),
            mode: DIR_MODE,
        });
        assert!(ns.is_dir("/a/b"));
        assert_eq!(
            ns.existing_ancestor("/a/b/c/d"),
            ("/a/b".to_string(), vec!["/a/b/c".to_string()])
        );
        assert_eq!(
            ns.existing_ancestor("/x/y"),
            ("/".to_string(), vec!["/x".to_string()])
        );
        assert_eq!(ns.existing_ancestor("/x"), ("/".to_string(), vec![]));
        ns.apply(&Edit::SetAttr {
            path: "/a/b".into(),
            owner: Some("bob".into()),
            mode: Some(0o700),
        });
        ns.apply(&Edit::SetAttr {
            path: "/old/f".into(),
            owner: None,
            mode: Some(0o600),
        });
        assert_eq!(ns.files["/old/f"].mode, 0o600);
        let back: Namespace = serde_json::from_str(&serde_json::to_string(&ns).unwrap()).unwrap();
        assert_eq!(back.dirs, ns.dirs);
        assert_eq!(
            back.dirs["/a/b"],
            DirMeta {
                owner: "bob".into(),
                mode: 0o700
            }
        );
        assert_eq!(ns.dirs_under("/a"), vec!["/a", "/a/b"]);
        ns.apply(&Edit::Delete {
            paths: vec![],
            dirs: ns.dirs_under("/a"),
        });
        assert!(!ns.is_dir("/a"));
        // A file of an older log has the default mode.
        let e: Edit = serde_json::from_str(
            r#"{"op":"add_file","path":"/a","file":{"replication":1,"block_size":10,
            "blocks":[],"mtime_ms":0}}"#,
        )
        .unwrap();
        let Edit::AddFile { file, .. } = e else {
            panic!("{e:?}")
        };
        assert_eq!(file.mode, FILE_MODE);
    }
}

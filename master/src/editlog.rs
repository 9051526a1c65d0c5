//! Durability of the namespace, as an HDFS NameNode does it: an append-only
//! edit log, each record fsynced before the change is acknowledged, plus a
//! snapshot (the fsimage) taken every `snapshot_every` edits and at start.
//!
//! Records are JSON lines `{"txid":N,"edit":{...}}`. A crash can tear only the
//! last line; recovery drops a torn tail and keeps everything before it. The
//! snapshot holds the txid it covers, so a crash between writing a snapshot
//! and truncating the log replays nothing twice.

use crate::namespace::{Edit, Namespace};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize)]
struct Record {
    txid: u64,
    edit: Edit,
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    txid: u64,
    namespace: Namespace,
}

pub struct EditLog {
    dir: PathBuf,
    file: File,
    /// Txid of the last durable edit.
    txid: u64,
    since_snapshot: u64,
    snapshot_every: u64,
}

impl EditLog {
    /// Loads the snapshot, replays the log over it and checkpoints, so that
    /// every start begins with a short log.
    pub fn open(dir: &Path, snapshot_every: u64) -> io::Result<(Self, Namespace)> {
        fs::create_dir_all(dir)?;
        let snap_path = dir.join("snapshot.json");
        let (mut txid, mut ns) = match fs::read(&snap_path) {
            Ok(bytes) => {
                let s: Snapshot = serde_json::from_slice(&bytes).map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("corrupt snapshot {}: {e}", snap_path.display()),
                    )
                })?;
                (s.txid, s.namespace)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => (0, Namespace::default()),
            Err(e) => return Err(e),
        };
        let log_path = dir.join("edits.log");
        let mut replayed = 0u64;
        if let Ok(f) = File::open(&log_path) {
            for line in BufReader::new(f).lines() {
                let line = line?;
                let Ok(rec) = serde_json::from_str::<Record>(&line) else {
                    tracing::warn!("dropping a torn edit-log tail after txid {txid}");
                    break;
                };
                if rec.txid <= txid {
                    continue;
                }
                ns.apply(&rec.edit);
                txid = rec.txid;
                replayed += 1;
            }
        }
        tracing::info!(
            txid,
            replayed,
            files = ns.files.len(),
            "namespace loaded from {}",
            dir.display()
        );
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)?;
        let mut log = EditLog {
            dir: dir.to_path_buf(),
            file,
            txid,
            since_snapshot: 0,
            snapshot_every: snapshot_every.max(1),
        };
        log.checkpoint(&ns)?;
        Ok((log, ns))
    }

    /// Appends and fsyncs one edit; only then may the caller apply it and
    /// acknowledge.
    pub fn append(&mut self, edit: &Edit) -> io::Result<()> {
        let rec = Record {
            txid: self.txid + 1,
            edit: edit.clone(),
        };
        let mut line = serde_json::to_vec(&rec).map_err(io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.sync_data()?;
        self.txid += 1;
        self.since_snapshot += 1;
        Ok(())
    }

    /// Call after applying an edit: snapshots when the log has grown enough.
    pub fn maybe_checkpoint(&mut self, ns: &Namespace) -> io::Result<()> {
        if self.since_snapshot >= self.snapshot_every {
            self.checkpoint(ns)?;
        }
        Ok(())
    }

    /// Writes the snapshot atomically (temp, fsync, rename, fsync dir), then
    /// starts an empty log.
    pub fn checkpoint(&mut self, ns: &Namespace) -> io::Result<()> {
        let tmp = self.dir.join("snapshot.json.tmp");
        let snap = Snapshot {
            txid: self.txid,
            namespace: ns.clone(),
        };
        {
            let mut f = File::create(&tmp)?;
            serde_json::to_writer(&mut f, &snap).map_err(io::Error::other)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, self.dir.join("snapshot.json"))?;
        File::open(&self.dir)?.sync_all()?;
        self.file = File::create(self.dir.join("edits.log"))?;
        self.file.sync_all()?;
        self.since_snapshot = 0;
        Ok(())
    }

    /// Flushes everything to disk (graceful shutdown).
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::{BlockMeta, FileMeta};

    fn add(path: &str, id: u64) -> Edit {
        Edit::AddFile {
            path: path.into(),
            file: FileMeta {
                replication: 3,
                block_size: 64,
                blocks: vec![BlockMeta {
                    id,
                    len: 5,
                    crc32c: 9,
                }],
                mtime_ms: 1,
            },
        }
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mr-editlog-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn replays_and_snapshots() {
        let dir = tmpdir("replay");
        {
            let (mut log, mut ns) = EditLog::open(&dir, 3).unwrap();
            for (i, p) in ["/a", "/b", "/c", "/d", "/e"].iter().enumerate() {
                let e = add(p, i as u64);
                log.append(&e).unwrap();
                ns.apply(&e);
                log.maybe_checkpoint(&ns).unwrap();
            }
            let e = Edit::Delete {
                paths: vec!["/b".into()],
            };
            log.append(&e).unwrap();
        }
        let (_, ns) = EditLog::open(&dir, 3).unwrap();
        let names: Vec<_> = ns.files.keys().cloned().collect();
        assert_eq!(names, vec!["/a", "/c", "/d", "/e"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn torn_tail_is_dropped() {
        let dir = tmpdir("torn");
        {
            let (mut log, _) = EditLog::open(&dir, 100).unwrap();
            log.append(&add("/a", 1)).unwrap();
            log.append(&add("/b", 2)).unwrap();
        }
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join("edits.log"))
            .unwrap();
        f.write_all(b"{\"txid\":3,\"edit\":{\"op\":\"add_f")
            .unwrap();
        drop(f);
        let (_, ns) = EditLog::open(&dir, 100).unwrap();
        assert_eq!(ns.files.len(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }
}

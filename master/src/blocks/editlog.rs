//! Durability of the namespace, as an HDFS NameNode does it: an append-only
//! edit log, each record fsynced before the change is acknowledged, plus a
//! snapshot (the fsimage) taken every `snapshot_every` edits and at start.
//! The snapshot holds the txid it covers, so a crash between writing a
//! snapshot and resetting the log replays nothing twice.
//!
//! # On-disk format
//!
//! Both files are checksummed so that a flipped byte is noticed, never
//! mistaken for the end of the data. All integers are little-endian.
//!
//! `edits.log`: the 8-byte magic `MREDIT01`, then records, each
//!
//! | bytes  | field                                          |
//! |--------|------------------------------------------------|
//! | 4      | `len`: payload length, u32, never 0            |
//! | 4      | CRC32C (Castagnoli) of the payload, u32        |
//! | `len`  | payload: JSON `{"txid":N,"edit":{...}}`        |
//!
//! Txids are consecutive. Records at or below the snapshot's txid (left by a
//! crash between writing a snapshot and resetting the log) are skipped.
//!
//! `fsimage`: the 8-byte magic `MRFSIMG1`, the payload length (u64), the
//! CRC32C of the payload (u32), then the payload, JSON
//! `{"txid":N,"namespace":{...}}`; the file is exactly that long. It is
//! written to `fsimage.tmp`, fsynced, renamed over `fsimage`, and the
//! directory fsynced; a new `edits.log` is put in place the same way, so
//! neither file is ever seen half-written.
//!
//! # Torn tail or corruption
//!
//! Every record is fsynced before the next is written, so a crash can damage
//! only the last record, and only by cutting it short (or, on some file
//! systems, leaving zeros where its unwritten blocks were). Anything else is
//! the disk or a person changing acknowledged edits, and must not be dropped
//! quietly. Replay reads records until the first bad one (header cut short,
//! zero length, length running past the end of the file, checksum mismatch,
//! unreadable JSON). That bad record at offset `o` is a **torn tail** iff
//! both hold:
//!
//! 1. no valid record (length within the file, checksum matching, JSON
//!    readable) starts at any byte offset after `o`, and
//! 2. the record may be a write cut short: its header is incomplete, its
//!    length is 0 or runs past the end of the file, or its checksum fails
//!    and it ends exactly at the end of the file. A record that ends before
//!    the end of the file, or whose checksum matches over unreadable JSON
//!    (say, an edit of a newer version), was written whole.
//!
//! A torn tail is dropped with a warning naming the file, the offset and the
//! txid it would have had, after the original log is copied to
//! `edits.log.corrupt-<unix-ts>`. Anything else, and any intact record whose
//! txid does not follow on, is **mid-log corruption**: the master refuses to
//! start, naming the file, the offset and the last good txid. A flipped byte
//! in the last record's payload or checksum is thus dropped (it cannot be
//! told from a torn write), while one that shortens its length is refused
//! (a crash never does that).
//!
//! [`recover_truncate`] (`mr-master --recover truncate`, HDFS's NameNode
//! recovery mode) then keeps every record before the corrupt one, copies
//! the original log aside and cuts it there. A corrupt snapshot cannot be
//! recovered that way: the log only holds edits made after it, so there is
//! no earlier state to fall back to; the snapshot must be restored.
//!
//! Logs and snapshots of earlier versions (unframed JSON lines,
//! `snapshot.json`) are refused with an error, never read as empty.
//!
//! This is one directory's pair of files. With `[master] data_dirs`, each
//! metadata directory holds its own, and `journal.rs` writes them alike.

use crate::blocks::namespace::{Edit, Namespace};
use frames::{encode_record, frame_at, salvageable, scan, End, Frame};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const LOG: &str = "edits.log";
const LOG_MAGIC: &[u8; 8] = b"MREDIT01";
const SNAPSHOT: &str = "fsimage";
const SNAPSHOT_MAGIC: &[u8; 8] = b"MRFSIMG1";
/// The unchecksummed snapshot of earlier versions.
const OLD_SNAPSHOT: &str = "snapshot.json";
/// Every record's payload starts so (serde writes fields in order); a cheap
/// filter before the checksum when looking for valid records past a bad one.
const PAYLOAD_START: &[u8] = b"{\"txid\":";
const HEADER: usize = 8;

#[derive(Serialize, Deserialize)]
struct Record {
    txid: u64,
    edit: Edit,
}

#[derive(Serialize)]
struct SnapshotRef<'a> {
    txid: u64,
    namespace: &'a Namespace,
}

#[derive(Deserialize)]
struct Snapshot {
    txid: u64,
    namespace: Namespace,
}

/// Why the master's metadata could not be loaded. Each says which file and
/// what the operator can do, since it ends up on the master's stderr.
#[derive(Debug, thiserror::Error)]
pub enum EditLogError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "edit log {} is corrupt at byte offset {offset}: {reason}; the last good txid is \
         {last_good_txid}. This is not a torn write from a crash, so the master refuses to start rather than silently drop acknowledged edits. Restore \
         the data directory from a backup, or start once with `mr-master --recover truncate` \
         to keep every record before offset {offset} (up to txid {last_good_txid}) and drop \
         the rest; the original file is kept as edits.log.corrupt-<unix-ts>",
        path.display()
    )]
    CorruptLog {
        path: PathBuf,
        offset: u64,
        last_good_txid: u64,
        reason: String,
    },
    #[error(
        "snapshot {} is corrupt: {reason}. The master refuses to start. `--recover truncate` \
         cannot repair a snapshot: the edit log only holds the edits made after it, so there \
         is no earlier state to fall back to; restore {} from a backup",
        path.display(),
        path.display()
    )]
    CorruptSnapshot { path: PathBuf, reason: String },
    #[error(
        "the snapshot {} is missing but the edit log {} holds edits made after one: the log \
         only holds the edits made after the last snapshot, so without it the namespace cannot be rebuilt. \
         The master refuses to start rather than start with an empty namespace (which would \
         then treat every stored block as garbage). Restore {} from a backup; the edit log \
         is left untouched",
        snapshot.display(),
        log.display(),
        snapshot.display()
    )]
    MissingSnapshot { snapshot: PathBuf, log: PathBuf },
    #[error(
        "{} is not in this version's format: {reason}. The master refuses to start rather \
         than start empty; `--recover truncate` does not apply (it would drop every edit). \
         Move the file aside only if losing what it holds is acceptable",
        path.display()
    )]
    Format { path: PathBuf, reason: String },
    #[error(
        "metadata directory {} cannot be loaded: {source}. The master refuses to start \
         rather than choose between copies by itself. The other metadata directories ({}) \
         hold copies of the namespace: to start from them, move {} aside (a metadata \
         directory found empty is filled from the others at start); or start once with \
         `mr-master --recover truncate`, which applies to every metadata directory",
        dir.display(),
        others.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
        dir.display()
    )]
    Copy {
        dir: PathBuf,
        others: Vec<PathBuf>,
        #[source]
        source: Box<EditLogError>,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> EditLogError + '_ {
    move |source| EditLogError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub struct EditLog {
    dir: PathBuf,
    file: File,
    /// Length of the log up to the end of the last durable record.
    len: u64,
    /// Txid of the last durable edit.
    txid: u64,
    since_snapshot: u64,
    snapshot_every: u64,
    /// Why the last write failed, while it has not been recovered from.
    /// After a failed fsync the kernel may have dropped the dirty pages, so
    /// nothing more is appended to this file: [`EditLog::recover`] rolls
    /// to a fresh snapshot and log instead. HDFS's NameNode aborts when its
    /// last edit-log directory fails; a master with one directory would
    /// then need an operator for every full disk, so it waits for space
    /// instead, taking no namespace change meanwhile.
    failed: Option<String>,
}

impl EditLog {
    /// Loads the snapshot, replays the log over it and checkpoints, so that
    /// every start begins with a short log. Refuses to start on mid-log
    /// corruption (see the module doc); drops only a torn tail.
    pub fn open(dir: &Path, snapshot_every: u64) -> Result<(Self, Namespace), EditLogError> {
        let Loaded { txid, mut ns, .. } = load(dir)?;
        ns.after_restart();
        let log = EditLog::start(dir, txid, &ns, snapshot_every)?;
        Ok((log, ns))
    }

    /// Puts a fresh snapshot of `ns` at `txid` and an empty log in `dir`:
    /// how every start ends, and how a journal (`journal.rs`) fills a
    /// metadata directory that is new, behind, or failed. Whatever `dir`
    /// held is replaced whole, never appended to.
    pub fn start(
        dir: &Path,
        txid: u64,
        ns: &Namespace,
        snapshot_every: u64,
    ) -> Result<Self, EditLogError> {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        write_snapshot(dir, txid, ns).map_err(io_err(&dir.join(SNAPSHOT)))?;
        let log_path = dir.join(LOG);
        let file = fresh_log(dir).map_err(io_err(&log_path))?;
        Ok(EditLog {
            dir: dir.to_path_buf(),
            file,
            len: LOG_MAGIC.len() as u64,
            txid,
            since_snapshot: 0,
            snapshot_every: snapshot_every.max(1),
            failed: None,
        })
    }

    /// The directory this log and its snapshot are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Txid of the last durable edit.
    pub fn txid(&self) -> u64 {
        self.txid
    }

    /// Appends and fsyncs one edit; only then may the caller apply it and
    /// acknowledge. A failure refuses the edit and leaves the log failed
    /// (see `failed`) until [`EditLog::recover`], after cutting off what was
    /// partly written so that the file still ends on a record boundary.
    pub fn append(&mut self, edit: &Edit) -> io::Result<()> {
        if let Some(why) = &self.failed {
            return Err(io::Error::other(format!(
                "the edit log is failed since a write of it failed ({why}); it resumes once \
                 a fresh snapshot and log can be written to {}",
                self.dir.display()
            )));
        }
        let rec = Record {
            txid: self.txid + 1,
            edit: edit.clone(),
        };
        let frame = encode_record(&rec)?;
        let written =
            write_all(&self.dir, &mut self.file, &frame).and_then(|_| self.file.sync_data());
        if let Err(e) = written {
            tracing::error!(
                dir = %self.dir.display(),
                txid = rec.txid,
                "edit-log write failed: {e}; this log takes no more edits until a fresh \
                 snapshot and log can be written to its directory"
            );
            self.failed = Some(e.to_string());
            let _ = self
                .file
                .set_len(self.len)
                .and_then(|_| self.file.sync_data());
            return Err(e);
        }
        self.len += frame.len() as u64;
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

    /// Writes the snapshot atomically, then puts an empty log in place.
    ///
    /// When putting the new log in place fails, the rename may have
    /// happened: the handle would then point at the unlinked old log and
    /// every later append would vanish at the next start. So the log is
    /// marked failed and refuses appends until a restart (whose replay sees
    /// the snapshot just written, so nothing acknowledged is lost).
    pub fn checkpoint(&mut self, ns: &Namespace) -> io::Result<()> {
        write_snapshot(&self.dir, self.txid, ns)?;
        self.file = match fresh_log(&self.dir) {
            Ok(f) => f,
            Err(e) => {
                tracing::error!(
                    dir = %self.dir.display(),
                    "putting a fresh edit log in place failed: {e}; the log stops until it can be"
                );
                self.failed = Some(e.to_string());
                return Err(e);
            }
        };
        self.len = LOG_MAGIC.len() as u64;
        self.since_snapshot = 0;
        Ok(())
    }

    /// Why the log takes no edits, while it is failed.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Resumes a failed log by rolling to a new one: `ns` (every durable
    /// edit and nothing else, since a refused edit is never applied) goes to
    /// a fresh snapshot at the last durable txid, and an empty log is put in
    /// place. The old file is never written again, so whatever a failed
    /// fsync left in it does not matter; a record torn by the failure that
    /// its truncation did not remove is covered by the snapshot (its txid
    /// is above the snapshot's, and the old log is replaced whole). Fails,
    /// and stays failed, while the disk still cannot take the snapshot.
    pub fn recover(&mut self, ns: &Namespace) -> io::Result<()> {
        let Some(why) = self.failed.clone() else {
            return Ok(());
        };
        write_snapshot(&self.dir, self.txid, ns)?;
        self.file = fresh_log(&self.dir)?;
        self.len = LOG_MAGIC.len() as u64;
        self.since_snapshot = 0;
        self.failed = None;
        tracing::warn!(
            dir = %self.dir.display(),
            txid = self.txid,
            "edit log resumed on a fresh snapshot and log (it failed: {why})"
        );
        Ok(())
    }

    /// Flushes everything to disk (graceful shutdown).
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }
}

/// What one metadata directory holds, read and replayed but not written
/// to: a journal compares every copy before it writes any.
pub struct Loaded {
    /// Txid of the last edit the copy holds.
    pub txid: u64,
    /// The namespace at `txid`, before [`Namespace::after_restart`].
    pub ns: Namespace,
    /// Neither a snapshot nor an edit: a new directory, or a replaced disk.
    pub empty: bool,
}

/// Loads the snapshot and replays the log over it, writing nothing but
/// the backup of a torn tail. Refuses mid-log corruption (see the module
/// doc).
pub fn load(dir: &Path) -> Result<Loaded, EditLogError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let (snap_txid, mut ns) = load_snapshot(dir)?;
    let has_snapshot = dir.join(SNAPSHOT).exists();
    let log_path = dir.join(LOG);
    let bytes = read_log(&log_path)?;
    check_snapshot_present(dir, &bytes)?;
    let scan = scan(&bytes, snap_txid);
    match &scan.end {
        End::Clean => {}
        End::Corrupt { offset, reason } => {
            return Err(EditLogError::CorruptLog {
                path: log_path,
                offset: *offset as u64,
                last_good_txid: scan.last_good_txid,
                reason: reason.clone(),
            })
        }
        End::Tail { offset, reason } => {
            let backup = backup(&log_path, &bytes)?;
            tracing::warn!(
                file = %log_path.display(),
                offset,
                txid = scan.last_good_txid + 1,
                dropped_bytes = bytes.len() - offset,
                backup = %backup.display(),
                "dropping the torn or corrupt last record of the edit log ({reason}): \
                 torn by a crash, it was never acknowledged; without a crash, the disk \
                 corrupted an acknowledged edit (the backup holds it)"
            );
        }
    }
    let empty = !has_snapshot && scan.records.is_empty();
    let mut txid = snap_txid;
    let mut replayed = 0u64;
    for rec in scan.records.iter().filter(|r| r.txid > snap_txid) {
        ns.apply(&rec.edit);
        txid = rec.txid;
        replayed += 1;
    }
    tracing::info!(
        txid,
        replayed,
        files = ns.files.len(),
        "namespace loaded from {}",
        dir.display()
    );
    Ok(Loaded { txid, ns, empty })
}

/// What [`recover_truncate`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Recovered {
    /// Nothing was corrupt in the middle; a torn tail, if any, is left to
    /// the normal start.
    Nothing,
    /// The log was cut at `offset`.
    Truncated {
        offset: u64,
        last_good_txid: u64,
        dropped_bytes: u64,
        /// Intact records found in the dropped part.
        dropped_records: u64,
        backup: PathBuf,
    },
}

/// `mr-master --recover truncate`: when the log is corrupt in the middle,
/// keeps every record before the corrupt one and cuts the log there, after
/// copying the original aside, so the normal start that follows succeeds.
/// A corrupt snapshot, or a log of another format, is still an error: there
/// is nothing safe to cut.
pub fn recover_truncate(dir: &Path) -> Result<Recovered, EditLogError> {
    let (snap_txid, _) = load_snapshot(dir)?;
    let log_path = dir.join(LOG);
    let bytes = read_log(&log_path)?;
    check_snapshot_present(dir, &bytes)?;
    let scan = scan(&bytes, snap_txid);
    let End::Corrupt { offset, reason } = scan.end else {
        tracing::info!(file = %log_path.display(), "recovery: no mid-log corruption, nothing to truncate");
        return Ok(Recovered::Nothing);
    };
    let (dropped_records, txids) = salvageable(&bytes, offset);
    let backup = backup(&log_path, &bytes)?;
    let f = OpenOptions::new()
        .write(true)
        .open(&log_path)
        .map_err(io_err(&log_path))?;
    f.set_len(offset as u64)
        .and_then(|_| f.sync_all())
        .map_err(io_err(&log_path))?;
    let dropped_bytes = (bytes.len() - offset) as u64;
    let txids = match txids {
        Some((a, b)) => format!("txids {a}..={b}"),
        None => "no txids".to_string(),
    };
    tracing::warn!(
        file = %log_path.display(),
        offset,
        reason = %reason,
        last_good_txid = scan.last_good_txid,
        dropped_bytes,
        dropped_records,
        backup = %backup.display(),
        "recovery: edit log truncated before its first corrupt record; dropped the corrupt \
         record onwards, {dropped_bytes} bytes holding {dropped_records} intact record(s) \
         ({txids}); the namespace resumes at txid {}",
        scan.last_good_txid
    );
    Ok(Recovered::Truncated {
        offset: offset as u64,
        last_good_txid: scan.last_good_txid,
        dropped_bytes,
        dropped_records,
        backup,
    })
}

/// The log's bytes, magic included; empty when there is no log. A file
/// that does not start with the magic is refused whole.
fn read_log(path: &Path) -> Result<Vec<u8>, EditLogError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(path)(e)),
    };
    if bytes.is_empty() || bytes.starts_with(LOG_MAGIC) {
        return Ok(bytes);
    }
    let reason = if bytes.starts_with(b"{") {
        "it is an unframed JSON-lines edit log of an earlier version, which this version does \
         not read"
            .to_string()
    } else {
        format!(
            "it does not start with the edit-log magic {:?}",
            String::from_utf8_lossy(LOG_MAGIC)
        )
    };
    Err(EditLogError::Format {
        path: path.to_path_buf(),
        reason,
    })
}

fn load_snapshot(dir: &Path) -> Result<(u64, Namespace), EditLogError> {
    let path = dir.join(SNAPSHOT);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let old = dir.join(OLD_SNAPSHOT);
            if old.exists() {
                return Err(EditLogError::Format {
                    path: old,
                    reason: "it is the unchecksummed snapshot of an earlier version, which \
                             this version does not read"
                        .into(),
                });
            }
            return Ok((0, Namespace::default()));
        }
        Err(e) => return Err(io_err(&path)(e)),
    };
    let corrupt = |reason: String| EditLogError::CorruptSnapshot {
        path: path.clone(),
        reason,
    };
    const FIXED: usize = 8 + 8 + 4;
    if bytes.len() < FIXED {
        return Err(corrupt(format!(
            "{} bytes, shorter than its {FIXED}-byte header",
            bytes.len()
        )));
    }
    if &bytes[..8] != SNAPSHOT_MAGIC {
        return Err(corrupt("bad magic".into()));
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
    let crc = u32::from_le_bytes(bytes[16..20].try_into().unwrap());
    let payload = &bytes[FIXED..];
    if payload.len() as u64 != len {
        return Err(corrupt(format!(
            "the header says {len} bytes of payload, the file holds {}",
            payload.len()
        )));
    }
    let actual = crc32c::crc32c(payload);
    if actual != crc {
        return Err(corrupt(format!(
            "checksum mismatch (stored {crc:#010x}, computed {actual:#010x})"
        )));
    }
    let s: Snapshot =
        serde_json::from_slice(payload).map_err(|e| corrupt(format!("unreadable payload: {e}")))?;
    Ok((s.txid, s.namespace))
}

/// Without a snapshot, the log must hold the whole history, from txid 1.
/// Every start writes a snapshot before it creates a log, and a checkpoint
/// empties the log, so a log whose first record comes later and no
/// snapshot means the snapshot was lost: not corruption of the log, and
/// never a reason to start empty.
fn check_snapshot_present(dir: &Path, log_bytes: &[u8]) -> Result<(), EditLogError> {
    let snapshot = dir.join(SNAPSHOT);
    if log_bytes.len() <= LOG_MAGIC.len() || snapshot.exists() {
        return Ok(());
    }
    match frame_at(log_bytes, LOG_MAGIC.len()) {
        Frame::Ok { rec, .. } if rec.txid > 1 => Err(EditLogError::MissingSnapshot {
            snapshot,
            log: dir.join(LOG),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
thread_local! {
    /// Makes the next `replace_atomically` fail after its rename, as a
    /// failed directory fsync would (tests only).
    pub(crate) static FAIL_AFTER_RENAME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// While set, every write of the edit log and snapshot stops halfway
    /// with ENOSPC, as on a full disk (tests only).
    pub(crate) static DISK_FULL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// As `DISK_FULL`, for the directories listed only: one metadata
    /// directory's disk full while the others have room (tests only).
    pub(crate) static FULL_DIRS: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `write_all` of a file in `dir`, where tests can make the disk full.
fn write_all(dir: &Path, f: &mut File, bytes: &[u8]) -> io::Result<()> {
    #[cfg(not(test))]
    let _ = dir;
    #[cfg(test)]
    if DISK_FULL.with(|d| d.get()) || FULL_DIRS.with(|d| d.borrow().iter().any(|p| p == dir)) {
        f.write_all(&bytes[..bytes.len() / 2])?;
        return Err(io::Error::from_raw_os_error(libc::ENOSPC));
    }
    f.write_all(bytes)
}

/// Writes `bytes` to `dir/name` so that `name` is either the old or the
/// whole new file after a crash; returns the new file, open for appending.
/// A temporary file that could not be written whole is removed: on a full
/// disk it holds the very space the next try needs.
fn replace_atomically(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<File> {
    let tmp = dir.join(format!("{name}.tmp"));
    let written = File::create(&tmp).and_then(|mut f| {
        write_all(dir, &mut f, bytes)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, dir.join(name))?;
    #[cfg(test)]
    if FAIL_AFTER_RENAME.with(|f| f.replace(false)) {
        return Err(io::Error::other("injected failure after the rename"));
    }
    File::open(dir)?.sync_all()?;
    OpenOptions::new().append(true).open(dir.join(name))
}

fn write_snapshot(dir: &Path, txid: u64, ns: &Namespace) -> io::Result<()> {
    let payload = serde_json::to_vec(&SnapshotRef {
        txid,
        namespace: ns,
    })
    .map_err(io::Error::other)?;
    let mut bytes = Vec::with_capacity(20 + payload.len());
    bytes.extend_from_slice(SNAPSHOT_MAGIC);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    replace_atomically(dir, SNAPSHOT, &bytes)?;
    Ok(())
}

fn fresh_log(dir: &Path) -> io::Result<File> {
    replace_atomically(dir, LOG, LOG_MAGIC)
}

/// Copies the log aside before anything of it is dropped: nothing the
/// master once acknowledged is destroyed by a start.
fn backup(log_path: &Path, bytes: &[u8]) -> Result<PathBuf, EditLogError> {
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let name = log_path.file_name().unwrap_or_default().to_string_lossy();
    let dir = log_path.parent().unwrap_or(Path::new("."));
    for n in 0u32.. {
        let path = if n == 0 {
            dir.join(format!("{name}.corrupt-{ts}"))
        } else {
            dir.join(format!("{name}.corrupt-{ts}-{n}"))
        };
        let mut f = match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(&path)(e)),
        };
        f.write_all(bytes)
            .and_then(|_| f.sync_all())
            .and_then(|_| File::open(dir)?.sync_all())
            .map_err(io_err(&path))?;
        return Ok(path);
    }
    unreachable!("some backup name is free")
}

#[path = "editlog_frames.rs"]
mod frames;

#[cfg(test)]
#[path = "editlog_tests.rs"]
mod tests;

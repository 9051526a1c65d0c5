//! The block store: one file per block plus a small meta file holding its
//! length, CRC32C and generation stamp, read back through `memmap2` and verified on every read,
//! as an HDFS DataNode verifies its checksums.
//!
//! A block is written to `tmp/`, fsynced, and renamed into place with its
//! meta file, so that a crash never leaves a half-written block that looks
//! complete: at start, a data file without a matching meta file is removed.

use bytes::Bytes;
use common::sync::lock;
use memmap2::MmapOptions;
use protocol::BlockInfo;
use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("block {0} is not stored here")]
    Missing(u64),
    #[error("block {id} is corrupt on disk: {why}")]
    Corrupt { id: u64, why: String },
    #[error("block {id}: received {got} bytes with CRC32C {crc:#010x}, expected {want_len} bytes with {want_crc:#010x}")]
    BadWrite {
        id: u64,
        got: usize,
        crc: u32,
        want_len: u64,
        want_crc: u32,
    },
    /// A write of a block held finalized: replicas are never re-created.
    #[error("block {0} is already stored here: a finalized replica is never written again")]
    Exists(u64),
    #[error("block store I/O: {0}")]
    Io(#[from] io::Error),
}

/// Changes not yet reported to the master.
#[derive(Default)]
struct Delta {
    added: HashMap<u64, BlockInfo>,
    removed: Vec<u64>,
}

pub struct BlockStore {
    dir: PathBuf,
    blocks: Mutex<HashMap<u64, BlockInfo>>,
    delta: Mutex<Delta>,
    /// Blocks whose last read failed its checksum. They stay on disk until
    /// the master says otherwise; a good copy sent here replaces one.
    corrupt: Mutex<std::collections::HashSet<u64>>,
}

/// A meta file: length (u64), CRC32C (u32), generation stamp (u64), little
/// endian. Meta files of blocks written before generations existed hold the
/// first two only ([`OLD_META_LEN`]) and read as generation 0, as the
/// namespace's records of those blocks do.
const META_LEN: usize = 20;
const OLD_META_LEN: usize = 12;

impl BlockStore {
    /// Opens `data_dir/blocks`, dropping leftovers of interrupted writes.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        let dir = data_dir.join("blocks");
        let tmp = dir.join("tmp");
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp)?;
        let mut blocks = HashMap::new();
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(id) = name
                .strip_prefix("blk_")
                .and_then(|s| s.strip_suffix(".meta"))
                .and_then(|s| s.parse::<u64>().ok())
            else {
                continue;
            };
            match read_meta(&entry.path()) {
                Ok((len, crc, generation)) if data_len(&dir, id) == Some(len) => {
                    blocks.insert(
                        id,
                        BlockInfo {
                            id,
                            len,
                            crc32c: crc,
                            generation,
                        },
                    );
                }
                _ => {
                    tracing::warn!(block = id, "dropping an incomplete block at start");
                    let _ = fs::remove_file(entry.path());
                    let _ = fs::remove_file(dir.join(format!("blk_{id}")));
                }
            }
        }
        // Data files with no meta: interrupted before the meta rename.
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            if let Some(id) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("blk_"))
                .and_then(|s| s.parse::<u64>().ok())
            {
                if !blocks.contains_key(&id) {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        tracing::info!(blocks = blocks.len(), dir = %dir.display(), "block store opened");
        Ok(BlockStore {
            dir,
            blocks: Mutex::new(blocks),
            delta: Mutex::new(Delta::default()),
            corrupt: Mutex::default(),
        })
    }

    fn data_path(&self, id: u64) -> PathBuf {
        self.dir.join(format!("blk_{id}"))
    }

    fn meta_path(&self, id: u64) -> PathBuf {
        self.dir.join(format!("blk_{id}.meta"))
    }

    /// Every stored block: the full block report.
    pub fn report(&self) -> Vec<BlockInfo> {
        lock(&self.blocks).values().copied().collect()
    }

    pub fn contains(&self, id: u64) -> bool {
        lock(&self.blocks).contains_key(&id)
    }

    pub fn info(&self, id: u64) -> Option<BlockInfo> {
        lock(&self.blocks).get(&id).copied()
    }

    /// The file holding block `want`, if this store holds that very block
    /// (length, CRC32C and generation): what a map output by reference
    /// links to. Block files are never rewritten once in place.
    pub fn file_of(&self, want: &BlockInfo) -> Option<PathBuf> {
        let have = self.info(want.id)?;
        let same = have.len == want.len
            && have.crc32c == want.crc32c
            && have.generation == want.generation;
        (same && !self.is_corrupt(want.id)).then(|| self.data_path(want.id))
    }

    pub fn len(&self) -> usize {
        lock(&self.blocks).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stores a block durably after checking it against `info`. Blocking:
    /// call from `spawn_blocking`. A block already held is refused.
    pub fn put(&self, info: BlockInfo, data: &[u8]) -> Result<(), StoreError> {
        let mut w = self.begin(info)?;
        w.write(data)?;
        w.commit(self)
    }

    /// Starts a streamed write of `info`: chunks go straight to a temp file
    /// (so a worker receiving a block holds one chunk, not the block), and
    /// the block appears only at [`BlockWrite::commit`], checked and fsynced.
    /// Refused for a block held already: the caller learns it before it
    /// sends a byte.
    pub fn begin(&self, info: BlockInfo) -> Result<BlockWrite, StoreError> {
        if self.contains(info.id) {
            return Err(StoreError::Exists(info.id));
        }
        let nonce = next_nonce();
        let tmp = self.dir.join("tmp");
        let tmp_data = tmp.join(format!("blk_{}.{nonce}", info.id));
        let tmp_meta = tmp.join(format!("blk_{}.{nonce}.meta", info.id));
        let file = File::create(&tmp_data)?;
        Ok(BlockWrite {
            info,
            file: Some(io::BufWriter::with_capacity(1 << 20, file)),
            tmp_data,
            tmp_meta,
            crc: 0,
            len: 0,
            kicked: 0,
            reserved: 0,
        })
    }

    /// Maps a block and verifies its checksum against this worker's meta
    /// file. A corrupt block is kept: the error goes back to the caller,
    /// which reports it, and the master decides which replica to delete (a
    /// worker deleting on its own could destroy the last copy of a block).
    /// Blocking (it reads the whole block): call from `spawn_blocking`.
    pub fn read(&self, id: u64) -> Result<Bytes, StoreError> {
        self.read_mapped(id, None, false)
    }

    /// [`BlockStore::read`], with the mapping locked in memory (mlock) for
    /// as long as the bytes live: what the block cache holds. Without the
    /// privilege to lock (a container without `CAP_IPC_LOCK`), the mapping
    /// is returned unlocked, with one warning per process.
    pub fn read_locked(&self, id: u64) -> Result<Bytes, StoreError> {
        self.read_mapped(id, None, true)
    }

    /// [`BlockStore::read`] or [`BlockStore::read_locked`] (`lock`), and
    /// also checked against `want`, the length and CRC32C the master's
    /// namespace holds: a replica whose own meta file agrees with its bytes
    /// but not with the namespace (a stale copy under a reused id) is as
    /// corrupt as a rotten one.
    pub fn read_expecting(
        &self,
        id: u64,
        want: Option<&BlockInfo>,
        lock: bool,
    ) -> Result<Bytes, StoreError> {
        self.read_mapped(id, want, lock)
    }

    fn read_mapped(
        &self,
        id: u64,
        want: Option<&BlockInfo>,
        lock: bool,
    ) -> Result<Bytes, StoreError> {
        let info = self.info(id).ok_or(StoreError::Missing(id))?;
        if let Some(why) = want.and_then(|w| {
            mismatch(w, info.len, info.crc32c).or_else(|| {
                (w.generation != info.generation).then(|| {
                    format!(
                        "generation {} (a stale replica), the namespace has generation {}",
                        info.generation, w.generation
                    )
                })
            })
        }) {
            tracing::error!(block = id, %why, "replica differs from the namespace");
            return Err(StoreError::Corrupt { id, why });
        }
        let checked = || -> Result<Bytes, String> {
            let f = File::open(self.data_path(id)).map_err(|e| e.to_string())?;
            // Populated at once: the CRC below reads every page, and a
            // fault per 4 KiB cost more than the CRC.
            // SAFETY: block files are immutable once renamed into place; the
            // store never rewrites one (a corrupt one is kept or deleted, never fixed).
            let map =
                unsafe { MmapOptions::new().populate().map(&f) }.map_err(|e| e.to_string())?;
            if map.len() as u64 != info.len {
                return Err(format!("length {} instead of {}", map.len(), info.len));
            }
            let crc = crc32c::crc32c(&map);
            if crc != info.crc32c {
                return Err(format!(
                    "CRC32C {crc:#010x} instead of {:#010x}",
                    info.crc32c
                ));
            }
            if lock {
                if let Err(e) = map.lock() {
                    static WARNED: std::sync::Once = std::sync::Once::new();
                    WARNED.call_once(|| {
                        tracing::warn!(
                            "cannot lock cached blocks in memory ({e}): the OS may page them out"
                        );
                    });
                }
            }
            Ok(Bytes::from_owner(map))
        };
        let res = checked();
        let mut corrupt = common::sync::lock(&self.corrupt);
        match res {
            Ok(b) => {
                corrupt.remove(&id);
                Ok(b)
            }
            Err(why) => {
                tracing::error!(block = id, %why, "corrupt replica: kept for the master to decide");
                corrupt.insert(id);
                // An "added" not yet sent would reach the master after the
                // corrupt report and read as a fresh good copy.
                common::sync::lock(&self.delta).added.remove(&id);
                Err(StoreError::Corrupt { id, why })
            }
        }
    }

    /// Whether the last read of `id` failed its checksum.
    pub fn is_corrupt(&self, id: u64) -> bool {
        lock(&self.corrupt).contains(&id)
    }

    pub fn delete(&self, id: u64) -> bool {
        lock(&self.corrupt).remove(&id);
        let had = lock(&self.blocks).remove(&id).is_some();
        let _ = fs::remove_file(self.meta_path(id));
        let _ = fs::remove_file(self.data_path(id));
        if had {
            let mut d = lock(&self.delta);
            if d.added.remove(&id).is_none() {
                d.removed.push(id);
            }
        }
        had
    }

    /// Moves a block's files to `dest` under `blk_<id>.q<tag>` instead of
    /// deleting them (the quarantine, see `quarantine.rs`); reported to
    /// the master as removed, like a delete. False if the block is not here.
    pub fn move_out(&self, id: u64, dest: &Path, tag: u64) -> io::Result<bool> {
        if !lock(&self.blocks).contains_key(&id) {
            return Ok(false);
        }
        fs::create_dir_all(dest)?;
        let to = dest.join(format!("blk_{id}.q{tag}"));
        fs::rename(self.data_path(id), &to)?;
        let _ = fs::rename(
            self.meta_path(id),
            to.with_extension(format!("q{tag}.meta")),
        );
        File::open(dest)?.sync_all()?;
        lock(&self.blocks).remove(&id);
        let mut d = lock(&self.delta);
        if d.added.remove(&id).is_none() {
            d.removed.push(id);
        }
        Ok(true)
    }

    /// Takes the changes since the last call, for a heartbeat.
    pub fn take_delta(&self) -> (Vec<BlockInfo>, Vec<u64>) {
        let mut d = lock(&self.delta);
        let d = std::mem::take(&mut *d);
        (d.added.into_values().collect(), d.removed)
    }

    /// Forgets pending changes: a full report is about to replace them.
    pub fn clear_delta(&self) {
        *lock(&self.delta) = Delta::default();
    }
}

/// A block being received; see [`BlockStore::begin`]. Dropped without a
/// commit, it leaves nothing behind.
pub struct BlockWrite {
    info: BlockInfo,
    file: Option<io::BufWriter<File>>,
    tmp_data: PathBuf,
    tmp_meta: PathBuf,
    crc: u32,
    len: u64,
    /// Bytes of the file whose writeback has been started.
    kicked: u64,
    /// Bytes of the file reserved on disk ([`RESERVE_AHEAD`]).
    reserved: u64,
}

/// Disk space a block write reserves ahead of the bytes that arrived
/// (`prealloc::reserve`), never more than the block's declared length:
/// reserving the whole declared length from the header let one write
/// claim 2 GiB of disk before it sent a byte. 8 MiB windows keep the
/// saving of one `fallocate` per file (see `prealloc.rs`) at a cost of
/// one call per window.
const RESERVE_AHEAD: u64 = 8 << 20;

/// Bytes a block write lets pile up in the page cache before it asks the
/// kernel to start writing them out (`sync_file_range`,
/// `SYNC_FILE_RANGE_WRITE`: it starts the writes and does not wait for
/// them), so that the fsync at commit finds part of the block already on
/// its way to disk while its chunks still arrive. Measured on puts
/// (`scripts/bench-put.sh --size 1GiB --reps 4 --against` the binaries
/// without it, 2026-11-26): 446 MiB/s [432-474] against 423 [400-432],
/// 1.06x; the jobs' commit phase, whose blocks arrive whole, did not move
/// beyond the run-to-run noise.
const WRITEBACK_EVERY: u64 = 8 << 20;

impl BlockWrite {
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), StoreError> {
        self.len += chunk.len() as u64;
        if self.len > self.info.len {
            return Err(self.bad());
        }
        self.reserve();
        self.crc = crc32c::crc32c_append(self.crc, chunk);
        self.file
            .as_mut()
            .expect("open until commit")
            .write_all(chunk)?;
        self.start_writeback();
        Ok(())
    }

    /// Starts the writeback of what reached the file since the last call,
    /// once that is [`WRITEBACK_EVERY`] bytes. A refusal changes nothing
    /// but the timing: the fsync at commit writes whatever is left.
    fn start_writeback(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let Some(f) = self.file.as_ref() else {
                return;
            };
            let in_file = self.len - f.buffer().len() as u64;
            if in_file - self.kicked < WRITEBACK_EVERY {
                return;
            }
            // SAFETY: the descriptor is the open file this write owns; the
            // call reads and writes no memory of the process.
            let r = unsafe {
                libc::sync_file_range(
                    f.get_ref().as_raw_fd(),
                    self.kicked as libc::off64_t,
                    (in_file - self.kicked) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                )
            };
            if r == 0 {
                self.kicked = in_file;
            }
        }
    }

    /// [`BlockWrite::write`] of a chunk whose CRC32C the caller already
    /// computed (a pipeline target checks each chunk as it arrives): the
    /// block's CRC is combined from the chunks' instead of a second pass
    /// over the bytes.
    pub fn write_checked(&mut self, chunk: &[u8], crc: u32) -> Result<(), StoreError> {
        self.len += chunk.len() as u64;
        if self.len > self.info.len {
            return Err(self.bad());
        }
        self.reserve();
        self.crc = crc32c::crc32c_combine(self.crc, crc, chunk.len());
        self.file
            .as_mut()
            .expect("open until commit")
            .write_all(chunk)?;
        self.start_writeback();
        Ok(())
    }

    /// Extends the file's reservation once the bytes received pass it.
    fn reserve(&mut self) {
        if self.len <= self.reserved {
            return;
        }
        let to = (self.len + RESERVE_AHEAD).min(self.info.len);
        if let Some(f) = self.file.as_ref() {
            crate::store::prealloc::reserve(f.get_ref(), to);
        }
        self.reserved = to;
    }

    fn bad(&self) -> StoreError {
        StoreError::BadWrite {
            id: self.info.id,
            got: self.len as usize,
            crc: self.crc,
            want_len: self.info.len,
            want_crc: self.info.crc32c,
        }
    }

    /// Checks length and CRC32C, fsyncs, renames into place, records the block.
    pub fn commit(mut self, store: &BlockStore) -> Result<(), StoreError> {
        let info = self.info;
        if self.len != info.len || self.crc != info.crc32c {
            return Err(self.bad());
        }
        let f = self.file.take().expect("open until commit");
        match store.info(info.id) {
            None => {}
            // Stored meanwhile, the same bytes: nothing to do (Drop
            // removes the temp file).
            Some(held) if held == info && !store.is_corrupt(info.id) => return Ok(()),
            Some(_) => return Err(StoreError::Exists(info.id)),
        }
        let write = || -> io::Result<()> {
            f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            let mut m = File::create(&self.tmp_meta)?;
            let mut meta = [0u8; META_LEN];
            meta[..8].copy_from_slice(&info.len.to_le_bytes());
            meta[8..12].copy_from_slice(&info.crc32c.to_le_bytes());
            meta[12..].copy_from_slice(&info.generation.to_le_bytes());
            m.write_all(&meta)?;
            m.sync_all()?;
            fs::rename(&self.tmp_data, store.data_path(info.id))?;
            fs::rename(&self.tmp_meta, store.meta_path(info.id))?;
            File::open(&store.dir)?.sync_all()
        };
        write()?;
        lock(&store.corrupt).remove(&info.id);
        lock(&store.blocks).insert(info.id, info);
        let mut d = lock(&store.delta);
        d.removed.retain(|r| *r != info.id);
        d.added.insert(info.id, info);
        Ok(())
    }
}

impl Drop for BlockWrite {
    fn drop(&mut self) {
        // After a commit the temp files were renamed away: these fail quietly.
        let _ = fs::remove_file(&self.tmp_data);
        let _ = fs::remove_file(&self.tmp_meta);
    }
}

/// Why bytes of `len` with `crc` are not the block `want` describes, if
/// they are not.
pub fn mismatch(want: &BlockInfo, len: u64, crc: u32) -> Option<String> {
    (want.len != len || want.crc32c != crc).then(|| {
        format!(
            "{len} bytes with CRC32C {crc:#010x}, the namespace has {} bytes with {:#010x}",
            want.len, want.crc32c
        )
    })
}

/// Length, CRC32C and generation stamp from a meta file of either format.
fn read_meta(path: &Path) -> io::Result<(u64, u32, u64)> {
    let b = fs::read(path)?;
    let generation = match b.len() {
        META_LEN => u64::from_le_bytes(b[12..].try_into().unwrap()),
        OLD_META_LEN => 0,
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "bad meta length",
            ))
        }
    };
    Ok((
        u64::from_le_bytes(b[..8].try_into().unwrap()),
        u32::from_le_bytes(b[8..12].try_into().unwrap()),
        generation,
    ))
}

fn data_len(dir: &Path, id: u64) -> Option<u64> {
    fs::metadata(dir.join(format!("blk_{id}")))
        .ok()
        .map(|m| m.len())
}

/// Distinguishes concurrent writes of one block id in `tmp/`.
fn next_nonce() -> u64 {
    static NONCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NONCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mr-store-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn info(id: u64, data: &[u8]) -> BlockInfo {
        BlockInfo {
            id,
            len: data.len() as u64,
            crc32c: crc32c::crc32c(data),
            generation: 0,
        }
    }

    #[test]
    fn put_read_reopen() {
        let dir = tmp("roundtrip");
        let s = BlockStore::open(&dir).unwrap();
        s.put(info(7, b"hello"), b"hello").unwrap();
        assert_eq!(&s.read(7).unwrap()[..], b"hello");
        let (added, removed) = s.take_delta();
        assert_eq!(added.len(), 1);
        assert!(removed.is_empty());
        drop(s);
        let s = BlockStore::open(&dir).unwrap();
        assert_eq!(s.report(), vec![info(7, b"hello")]);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A block written as chunks with their CRCs (as a pipeline target
    /// writes it) is checked as strictly as one written whole: a chunk
    /// whose CRC does not match its bytes fails the commit.
    #[test]
    fn chunks_with_their_crcs_make_the_block_crc() {
        let dir = tmp("checked");
        let s = BlockStore::open(&dir).unwrap();
        let data = b"the quick brown fox jumps over the lazy dog";
        let mut w = s.begin(info(4, data)).unwrap();
        for c in data.chunks(7) {
            w.write_checked(c, crc32c::crc32c(c)).unwrap();
        }
        w.commit(&s).unwrap();
        assert_eq!(&s.read(4).unwrap()[..], data);
        let mut w = s.begin(info(5, data)).unwrap();
        for (i, c) in data.chunks(7).enumerate() {
            let crc = crc32c::crc32c(c) ^ u32::from(i == 2);
            w.write_checked(c, crc).unwrap();
        }
        assert!(matches!(w.commit(&s), Err(StoreError::BadWrite { .. })));
        assert!(!s.contains(5));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_bad_write() {
        let dir = tmp("badwrite");
        let s = BlockStore::open(&dir).unwrap();
        let mut i = info(1, b"abc");
        i.crc32c ^= 1;
        assert!(matches!(s.put(i, b"abc"), Err(StoreError::BadWrite { .. })));
        assert!(s.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A rotten replica fails its read with a clear error, and is kept:
    /// it may be the last copy, and only the master knows (issue 28).
    #[test]
    fn corrupt_block_fails_its_read_and_is_kept() {
        let dir = tmp("corrupt");
        let s = BlockStore::open(&dir).unwrap();
        s.put(info(3, b"0123456789"), b"0123456789").unwrap();
        let p = dir.join("blocks").join("blk_3");
        let mut bytes = fs::read(&p).unwrap();
        bytes[4] ^= 0x40;
        fs::write(&p, bytes).unwrap();
        let e = s.read(3).unwrap_err();
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("CRC32C"), "{e}");
        assert!(s.contains(3));
        assert!(p.exists());
        // The put's "added", not yet sent, is withdrawn: sent after the
        // corrupt report it would tell the master the copy is good.
        assert_eq!(s.take_delta(), (vec![], vec![]));
        // Still refused the next time: never wrong bytes.
        assert!(matches!(s.read(3), Err(StoreError::Corrupt { .. })));
        // A write never replaces it, not even with good bytes: the master
        // deletes a corrupt replica and copies the block elsewhere
        // (`master/src/blocks/replication.rs`).
        let e = s.put(info(3, b"0123456789"), b"0123456789").unwrap_err();
        assert!(matches!(e, StoreError::Exists(3)), "{e}");
        assert!(s.delete(3));
        s.put(info(3, b"0123456789"), b"0123456789").unwrap();
        assert_eq!(&s.read(3).unwrap()[..], b"0123456789");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A replica whose own meta agrees with its bytes but not with the
    /// namespace (a stale copy under a reused id) is refused when the
    /// reader says what the namespace holds.
    #[test]
    fn a_replica_that_differs_from_the_namespace_is_refused() {
        let dir = tmp("stale");
        let s = BlockStore::open(&dir).unwrap();
        s.put(info(8, b"old bytes"), b"old bytes").unwrap();
        assert_eq!(&s.read(8).unwrap()[..], b"old bytes");
        let want = info(8, b"new bytes");
        let e = s.read_expecting(8, Some(&want), false).unwrap_err();
        assert!(e.to_string().contains("namespace"), "{e}");
        let same = info(8, b"old bytes");
        assert_eq!(
            &s.read_expecting(8, Some(&same), true).unwrap()[..],
            b"old bytes"
        );
        assert!(s.contains(8));
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A replica with the right id, length and CRC but another generation
    /// stamp (a stale copy) is never served when the reader says what the
    /// namespace holds; its stamp survives a reopen (issue 28).
    #[test]
    fn a_replica_of_another_generation_is_refused() {
        let dir = tmp("generation");
        let s = BlockStore::open(&dir).unwrap();
        let stale = BlockInfo {
            generation: 4,
            ..info(9, b"same bytes")
        };
        s.put(stale, b"same bytes").unwrap();
        drop(s);
        let s = BlockStore::open(&dir).unwrap();
        assert_eq!(s.report(), vec![stale]);
        let want = BlockInfo {
            generation: 5,
            ..stale
        };
        let e = s.read_expecting(9, Some(&want), false).unwrap_err();
        assert!(e.to_string().contains("generation 4"), "{e}");
        assert_eq!(
            &s.read_expecting(9, Some(&stale), false).unwrap()[..],
            b"same bytes"
        );
        // Nor is it written over by the current generation: a finalized
        // replica is never re-created (issue 39).
        assert!(matches!(
            s.put(want, b"same bytes"),
            Err(StoreError::Exists(9))
        ));
        assert_eq!(s.info(9), Some(stale));
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Meta files written before generation stamps (length and CRC, 12
    /// bytes) still load, as generation 0, the namespace's stamp for
    /// blocks written then.
    #[test]
    fn an_old_meta_file_reads_as_generation_zero() {
        let dir = tmp("oldmeta");
        let blocks = dir.join("blocks");
        fs::create_dir_all(&blocks).unwrap();
        fs::write(blocks.join("blk_5"), b"old block").unwrap();
        let mut meta = 9u64.to_le_bytes().to_vec();
        meta.extend_from_slice(&crc32c::crc32c(b"old block").to_le_bytes());
        fs::write(blocks.join("blk_5.meta"), meta).unwrap();
        let s = BlockStore::open(&dir).unwrap();
        assert_eq!(s.report(), vec![info(5, b"old block")]);
        assert_eq!(s.info(5).unwrap().generation, 0);
        let want = info(5, b"old block");
        assert_eq!(
            &s.read_expecting(5, Some(&want), false).unwrap()[..],
            b"old block"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

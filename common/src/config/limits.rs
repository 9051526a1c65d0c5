//! The bounds of the values a cluster file, a flag or a job parameter may
//! hold, and the checks that refuse what lies outside them.

use super::*;

/// Smallest block size accepted: HDFS's `fs-limits.min-block-size` is 1 MiB;
/// we allow 64 KiB so that tests can make many blocks out of little data.
pub const MIN_BLOCK_SIZE: u64 = 64 << 10;
/// Largest block size: a block is read whole into memory by a map task.
pub const MAX_BLOCK_SIZE: u64 = 2 << 30;
/// Largest replication factor accepted from outside.
pub const MAX_REPLICATION: u32 = 32;
/// Most slots of one kind a worker may have: the master refuses a
/// registration above it, since every slot is a task's worth of memory.
pub const MAX_SLOTS: u32 = 256;
/// Bounds of a map's sort buffer, bytes: the buffer's record offsets are
/// 32-bit, so it must stay below 4 GiB.
pub const MIN_SORT_BUFFER: u64 = 1 << 20;
pub const MAX_SORT_BUFFER: u64 = (4 << 30) - 1;
/// Bounds of a reduce's in-memory shuffle (`shuffle_memory=`), bytes: the
/// reduce holds this much of fetched segments in memory, beyond it they
/// spool to disk; more than 4 GiB per reduce slot is a typo, not a plan.
pub const MIN_SHUFFLE_MEMORY: u64 = 64 << 10;
pub const MAX_SHUFFLE_MEMORY: u64 = 4 << 30;

/// An address a process listens on and others dial: `IP:port`, or
/// `host:port` with a DNS name, because an orchestrator (Kubernetes,
/// Docker Swarm) gives a restarted process a new IP but keeps its name.
pub fn is_host_port(s: &str) -> bool {
    if s.parse::<SocketAddr>().is_ok() {
        return true;
    }
    let Some((host, port)) = s.rsplit_once(':') else {
        return false;
    };
    let label = |l: &str| {
        (1..=63).contains(&l.len())
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    port.parse::<u16>().is_ok()
        && (1..=253).contains(&host.len())
        && host.split('.').all(label)
        // All digits and dots is a mistyped IP, not a name.
        && !host.chars().all(|c| c.is_ascii_digit() || c == '.')
}

pub fn validate_block_size(n: u64) -> Result<(), String> {
    if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&n) {
        return Err(format!(
            "block size {n} is out of range: it must be between 64KiB and 2GiB"
        ));
    }
    Ok(())
}

/// A map's sort buffer, refused with a message naming its bounds.
pub fn validate_sort_buffer(n: u64) -> Result<(), String> {
    if !(MIN_SORT_BUFFER..=MAX_SORT_BUFFER).contains(&n) {
        return Err(format!(
            "sort buffer {n} bytes is out of range: it must be at least 1MiB and below 4GiB"
        ));
    }
    Ok(())
}

/// A reduce's `shuffle_memory`, as the job's parameter spells it: a size
/// within its bounds, or a message saying why not.
pub fn parse_shuffle_memory(v: &str) -> Result<u64, String> {
    let n = crate::units::parse_size(v).map_err(|e| format!("bad shuffle_memory {v:?}: {e}"))?;
    if !(MIN_SHUFFLE_MEMORY..=MAX_SHUFFLE_MEMORY).contains(&n) {
        return Err(format!(
            "shuffle_memory {v} is out of range: it must be between 64KiB and 4GiB"
        ));
    }
    Ok(n)
}

pub fn validate_replication(n: u32) -> Result<(), String> {
    if n == 0 || n > MAX_REPLICATION {
        return Err(format!(
            "replication {n} is out of range: it must be between 1 and {MAX_REPLICATION}"
        ));
    }
    Ok(())
}

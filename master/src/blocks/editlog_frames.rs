//! The framing of `edits.log` records and the scan that reads them back,
//! telling a torn tail from mid-log corruption (the rule is in
//! `editlog.rs`'s module doc). Apart from the files and their lifecycle
//! because this is the part the corruption tests drive byte by byte.

use super::{Record, HEADER, LOG_MAGIC, PAYLOAD_START};
use std::io;

pub(super) fn encode_record(rec: &Record) -> io::Result<Vec<u8>> {
    let payload = serde_json::to_vec(rec).map_err(io::Error::other)?;
    let len = u32::try_from(payload.len())
        .map_err(|_| io::Error::other("edit-log record larger than 4 GiB"))?;
    let mut frame = Vec::with_capacity(HEADER + payload.len());
    frame.extend_from_slice(&len.to_le_bytes());
    frame.extend_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
    frame.extend_from_slice(&payload);
    Ok(frame)
}

/// How a scan of the log ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum End {
    Clean,
    /// A torn or corrupt last record at `offset`, safe to drop.
    Tail {
        offset: usize,
        reason: String,
    },
    /// Corruption with intact data after it: refuse (or recover).
    Corrupt {
        offset: usize,
        reason: String,
    },
}

pub(super) struct Scan {
    /// The intact records before `end`, in order.
    pub records: Vec<Record>,
    /// The txid the namespace reaches with `records` over the snapshot.
    pub last_good_txid: u64,
    pub end: End,
}

/// One record read at an offset.
pub(super) enum Frame {
    Ok {
        rec: Record,
        end: usize,
    },
    Bad {
        reason: String,
        /// The record was certainly written whole (it ends before the end
        /// of the file, or its checksum matches): a crash did not tear it.
        whole: bool,
    },
}

pub(super) fn frame_at(bytes: &[u8], o: usize) -> Frame {
    let rest = bytes.len() - o;
    if rest < HEADER {
        return Frame::Bad {
            reason: format!("record header cut short ({rest} of {HEADER} bytes)"),
            whole: false,
        };
    }
    let len = u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(bytes[o + 4..o + 8].try_into().unwrap());
    if len == 0 {
        return Frame::Bad {
            reason: "zero record length".into(),
            whole: false,
        };
    }
    let end = o + HEADER + len;
    if end > bytes.len() {
        return Frame::Bad {
            reason: format!(
                "record length {len} runs past the end of the file ({} bytes left)",
                rest - HEADER
            ),
            whole: false,
        };
    }
    let payload = &bytes[o + HEADER..end];
    let actual = crc32c::crc32c(payload);
    if actual != crc {
        return Frame::Bad {
            reason: format!("checksum mismatch (stored {crc:#010x}, computed {actual:#010x})"),
            whole: end < bytes.len(),
        };
    }
    match serde_json::from_slice::<Record>(payload) {
        Ok(rec) => Frame::Ok { rec, end },
        Err(e) => Frame::Bad {
            reason: format!("unreadable record: {e}"),
            whole: true,
        },
    }
}

/// The first offset at or after `from` where an intact record starts.
fn next_valid(bytes: &[u8], from: usize) -> Option<usize> {
    (from..bytes.len().saturating_sub(HEADER)).find(|&p| {
        let len = u32::from_le_bytes(bytes[p..p + 4].try_into().unwrap()) as usize;
        let start = p + HEADER;
        len >= PAYLOAD_START.len()
            && len <= bytes.len() - start
            && bytes[start..].starts_with(PAYLOAD_START)
            && matches!(frame_at(bytes, p), Frame::Ok { .. })
    })
}

/// The intact records found from `offset` on (resynchronising after each
/// bad stretch), and their lowest and highest txids: what truncating at
/// `offset` drops.
pub(super) fn salvageable(bytes: &[u8], offset: usize) -> (u64, Option<(u64, u64)>) {
    let mut n = 0;
    let mut range: Option<(u64, u64)> = None;
    let mut o = offset;
    while let Some(p) = next_valid(bytes, o) {
        let Frame::Ok { rec, end } = frame_at(bytes, p) else {
            unreachable!("next_valid checked it")
        };
        n += 1;
        range = Some(match range {
            Some((a, b)) => (a.min(rec.txid), b.max(rec.txid)),
            None => (rec.txid, rec.txid),
        });
        o = end;
    }
    (n, range)
}

/// Reads every intact record and classifies what stops the reading (see
/// the module doc for the rule). `bytes` is the whole file, magic included.
pub(super) fn scan(bytes: &[u8], snap_txid: u64) -> Scan {
    let mut records: Vec<Record> = Vec::new();
    let mut last_good_txid = snap_txid;
    let mut o = if bytes.is_empty() { 0 } else { LOG_MAGIC.len() };
    let end = loop {
        if o == bytes.len() {
            break End::Clean;
        }
        match frame_at(bytes, o) {
            Frame::Ok { rec, end } => {
                let follows = match records.last() {
                    Some(prev) => rec.txid == prev.txid + 1,
                    None => rec.txid <= snap_txid + 1,
                };
                if !follows {
                    let after = match records.last() {
                        Some(prev) => format!("txid {}", prev.txid),
                        None => format!("the snapshot's txid {snap_txid}"),
                    };
                    break End::Corrupt {
                        offset: o,
                        reason: format!("record txid {} does not follow {after}", rec.txid),
                    };
                }
                last_good_txid = last_good_txid.max(rec.txid);
                records.push(rec);
                o = end;
            }
            Frame::Bad { reason, whole } => {
                break match next_valid(bytes, o + 1) {
                    Some(p) => End::Corrupt {
                        offset: o,
                        reason: format!("{reason}; an intact record follows at byte offset {p}"),
                    },
                    None if whole => End::Corrupt {
                        offset: o,
                        reason: format!("{reason}; the record was written whole, not torn"),
                    },
                    None => End::Tail { offset: o, reason },
                };
            }
        }
    };
    Scan {
        records,
        last_good_txid,
        end,
    }
}
